//! Thread-block contexts in global memory: what a context switch saves and restores
//! (thesis §5.2.2: every thread's registers, the block's shared memory, and the execution state
//! — reconvergence stacks and barrier state).
//!
//! A captured block is written as 32-bit words into a region of global memory and read back
//! from there on restore, so a context that is lost or corrupted on the way shows up as a wrong
//! kernel output. The cost follows the thesis's model (§5.2.2 and Table 5.2, whose save times
//! it reproduces; `docs/timing.md`): `4 × registers per block + shared bytes per block`, moved
//! at the SM's share of the DRAM bandwidth.
//!
//! Layout (words): magic, warp count, shared words; the shared memory; then per warp: id,
//! register count, local words, valid mask, exited mask, state, stack depth, the predicates,
//! the stack entries (pc, reconvergence pc, mask), the registers (`r * 32 + lane`), the local
//! memory. Thread indices are rebuilt from the launch.

use super::sm::BlockContext;
use crate::exec::{StackEntry, Warp, WarpState};
use crate::mem::{GlobalMem, MemFault};
use mpgpu_spec::isa::NUM_PREDS;

const MAGIC: u32 = 0x6d70_4358; // "mpCX"

/// Serialises a block context into words.
pub fn to_words(ctx: &BlockContext) -> Vec<u32> {
    let mut v = vec![MAGIC, ctx.warps.len() as u32, ctx.shared.len() as u32];
    v.extend_from_slice(&ctx.shared);
    for w in &ctx.warps {
        let state = match w.state {
            WarpState::Ready => 0,
            WarpState::AtBarrier => 1,
            WarpState::Done => 2,
        };
        v.extend_from_slice(&[w.id, w.nregs, (w.local.len() / 32) as u32, w.valid, w.exited, state, w.stack.len() as u32]);
        v.extend_from_slice(&w.preds);
        for e in &w.stack {
            v.extend_from_slice(&[e.pc, e.rpc, e.mask]);
        }
        v.extend_from_slice(&w.regs);
        v.extend_from_slice(&w.local);
    }
    v
}

/// Rebuilds a block context from words written by [`to_words`]; `template` supplies the launch
/// and the block index (the parts the hardware keeps in the PTBQ entry and the KSR).
pub fn from_words(words: &[u32], template: &BlockContext) -> Result<BlockContext, String> {
    let mut at = 0;
    let mut take = |n: usize| -> Result<&[u32], String> {
        let s = words.get(at..at + n).ok_or_else(|| format!("context truncated at word {at}"))?;
        at += n;
        Ok(s)
    };
    let head = take(3)?;
    if head[0] != MAGIC {
        return Err(format!("bad context magic {:#x}", head[0]));
    }
    let (nwarps, nshared) = (head[1] as usize, head[2] as usize);
    let shared = take(nshared)?.to_vec();
    let l = &template.info.launch;
    let mut warps = Vec::with_capacity(nwarps);
    for _ in 0..nwarps {
        let h = take(7)?.to_vec();
        let mut w = Warp::new(&l.kernel, h[0], l.block);
        w.nregs = h[1];
        let local_words = h[2] as usize;
        w.valid = h[3];
        w.exited = h[4];
        w.state = match h[5] {
            0 => WarpState::Ready,
            1 => WarpState::AtBarrier,
            2 => WarpState::Done,
            s => return Err(format!("bad warp state {s}")),
        };
        let depth = h[6] as usize;
        w.preds.copy_from_slice(take(NUM_PREDS as usize)?);
        w.stack.clear();
        for _ in 0..depth {
            let e = take(3)?;
            w.stack.push(StackEntry { pc: e[0], rpc: e[1], mask: e[2] });
        }
        w.regs = take(w.nregs as usize * 32)?.to_vec();
        w.local = take(local_words * 32)?.to_vec();
        warps.push(w);
    }
    Ok(BlockContext { info: template.info.clone(), ctaid: template.ctaid, shared, warps })
}

/// Writes a context to a fresh region of global memory; returns its address and length.
pub fn store(mem: &mut GlobalMem, ctx: &BlockContext) -> (u32, usize) {
    let words = to_words(ctx);
    let addr = mem.alloc(4 * words.len() as u32);
    mem.write_u32s(addr, &words);
    (addr, words.len())
}

/// Reads a context back from global memory.
pub fn load(mem: &GlobalMem, addr: u32, len: usize, template: &BlockContext) -> Result<BlockContext, String> {
    let words: Result<Vec<u32>, MemFault> = (0..len).map(|i| mem.read(addr + 4 * i as u32)).collect();
    let words = words.map_err(|e| format!("context region unreadable: {e:?}"))?;
    from_words(&words, template)
}

/// Bytes the thesis's cost model charges for one block: 4 × registers per block + shared bytes.
pub fn charged_bytes(regs_per_block: u64, shared_per_block: u64) -> u64 {
    4 * regs_per_block + shared_per_block
}

/// Cycles to move `bytes` at one SM's share of the DRAM bandwidth (`dram_bytes_per_cycle /
/// sms`), rounded up.
pub fn move_cycles(bytes: u64, dram_bytes_per_cycle: f64, sms: u32) -> u64 {
    (bytes as f64 / (dram_bytes_per_cycle / sms as f64)).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GpuConfig;

    #[test]
    fn the_cost_model_reproduces_thesis_table_5_2() {
        // (kernel, TBs/SM, regs/TB, shmem/TB, save cycles at 706 MHz in Table 5.2 [D])
        let rows = [("StreamCollide", 15u64, 4320u64, 0u64, 11437u64), ("mysgemmNT", 14, 4480, 512, 11388), ("histo main", 1, 16896, 24576, 4067), ("mbsadcalc", 7, 2135, 2224, 3325)];
        let k20c = GpuConfig::preset("k20c").unwrap();
        for (name, tbs, regs, shmem, cycles) in rows {
            let bytes = tbs * charged_bytes(regs, shmem);
            let got = move_cycles(bytes, k20c.dram_bytes_per_cycle(), k20c.num_sms());
            assert!(got.abs_diff(cycles) <= 1, "{name}: {got} cycles for {bytes} B, Table 5.2 gives {cycles}");
        }
    }
}

/// Position of register `reg` of `lane` of warp `warp` in the words of [`to_words`] (for tests
/// that corrupt a saved context on purpose).
pub fn register_word(ctx: &BlockContext, warp: usize, reg: usize, lane: usize) -> usize {
    let mut at = 3 + ctx.shared.len();
    for w in &ctx.warps[..warp] {
        at += 7 + NUM_PREDS as usize + 3 * w.stack.len() + w.regs.len() + w.local.len();
    }
    let w = &ctx.warps[warp];
    at + 7 + NUM_PREDS as usize + 3 * w.stack.len() + reg * 32 + lane
}
