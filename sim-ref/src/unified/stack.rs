//! The paper's Moving Stack (§3.2.1), by itself: the ISA has no calls, so a kernel is one
//! procedure and the allocator never needs it; this is the slot arithmetic of its three
//! schemes on a chain of calls, for the paper's A -> B -> C example (`docs/unified.md`).

/// One procedure's frame in a chain of calls: its spill slots, and those live when it calls
/// the next (slot indices within the frame).
#[derive(Clone, Debug)]
pub struct Frame {
    pub slots: u32,
    pub live_at_call: Vec<u32>,
}

/// The slots a chain of frames takes under each scheme, and the moves the Moving Stack adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stacked {
    /// Every frame whole, one after another (a CPU's stack).
    pub traditional: u32,
    /// The callee starting after the caller's last live slot (a register-stack machine).
    pub register_stack: u32,
    /// The caller's live slots moved to its lowest slots before the call, the callee starting
    /// after them.
    pub moving: u32,
    /// The moves that takes: live slots at or above the count of live slots.
    pub moves: u32,
}

/// The slots `chain` (caller first) takes under each scheme.
pub fn stacked(chain: &[Frame]) -> Stacked {
    let (mut reg_base, mut mov_base) = (0u32, 0u32);
    let (mut reg_top, mut mov_top, mut moves) = (0u32, 0u32, 0u32);
    for f in chain {
        reg_top = reg_top.max(reg_base + f.slots);
        mov_top = mov_top.max(mov_base + f.slots);
        let live = f.live_at_call.len() as u32;
        reg_base += f.live_at_call.iter().map(|&s| s + 1).max().unwrap_or(0);
        mov_base += live;
        moves += f.live_at_call.iter().filter(|&&s| s >= live).count() as u32;
    }
    Stacked { traditional: chain.iter().map(|f| f.slots).sum(), register_stack: reg_top, moving: mov_top, moves }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's example: A calls B, B calls C, four slots each; La1 and La3 live at A's call,
    /// Lb2 and Lb3 at B's: 12, 10 and 8 slots, a third saved for two moves (La3 to La2, Lb3 to
    /// Lb1).
    #[test]
    fn the_moving_stack_takes_the_papers_a_b_c_chain_in_8_slots_not_12_or_10() {
        let chain = [Frame { slots: 4, live_at_call: vec![0, 2] }, Frame { slots: 4, live_at_call: vec![1, 2] }, Frame { slots: 4, live_at_call: vec![] }];
        let s = stacked(&chain);
        println!("traditional {}, register stack {}, moving stack {} ({} moves)", s.traditional, s.register_stack, s.moving, s.moves);
        assert_eq!(s, Stacked { traditional: 12, register_stack: 10, moving: 8, moves: 2 });
        // (a caller whose live slots are already lowest needs no move)
        assert_eq!(stacked(&[Frame { slots: 4, live_at_call: vec![0, 1] }, Frame { slots: 3, live_at_call: vec![] }]).moves, 0);
    }
}
