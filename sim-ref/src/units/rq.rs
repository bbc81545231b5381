//! The replay queue as a unit (interface `mpgpu_spec::units::rq`, RTL `rtl/src/rq.rs`): one
//! slot per issued global memory instruction from issue to commit, kept across a fault; the
//! lowest free slot is taken; a replay names its slot, which must be faulted and its warp's
//! oldest faulted one (docs/faults.md O6-O8, "The replay queue in RTL").

use mpgpu_spec::units::rq::{older, pack_info, unpack_info, In, Out, State, MAX_SLOTS};
use mpgpu_spec::Unit;

/// One SM's replay queue.
#[derive(Clone, Debug)]
pub struct Rq {
    /// The slots the configuration has (the lowest `slots` of [`MAX_SLOTS`]).
    present: u128,
    valid: u128,
    faulted: u128,
    warp: [u8; MAX_SLOTS],
    age: [u16; MAX_SLOTS],
    exec: [u32; MAX_SLOTS],
    info: [u64; MAX_SLOTS],
    /// A replay out of its warp's age order (the SM's issue queue broke O7): the run stops.
    order_error: Option<String>,
}

impl Rq {
    /// A replay queue of `slots` slots (1..=[`MAX_SLOTS`]).
    pub fn new(slots: u32) -> Rq {
        assert!((1..=MAX_SLOTS).contains(&(slots as usize)), "a replay queue of {slots} slots (1..={MAX_SLOTS})");
        let present = if slots as usize == MAX_SLOTS { u128::MAX } else { (1u128 << slots) - 1 };
        Rq { present, valid: 0, faulted: 0, warp: [0; MAX_SLOTS], age: [0; MAX_SLOTS], exec: [0; MAX_SLOTS], info: [0; MAX_SLOTS], order_error: None }
    }

    pub fn state(&self) -> State {
        let halves = |m: u128| vec![m as u64, (m >> 64) as u64];
        State {
            valid: halves(self.valid),
            faulted: halves(self.faulted),
            warp: self.warp.iter().map(|&x| x as u64).collect(),
            age: self.age.iter().map(|&x| x as u64).collect(),
            exec: self.exec.iter().map(|&x| x as u64).collect(),
            info: self.info.to_vec(),
        }
    }

    /// Slots in use.
    pub fn used(&self) -> u32 {
        self.valid.count_ones()
    }

    /// Warp slot `warp`'s oldest faulted slot (ages modulo 2^16, a tie to the lower slot).
    fn oldest_faulted(&self, warp: u8) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut m = self.faulted;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.warp[s] == warp && best.is_none_or(|b| older(self.age[s], self.age[b])) {
                best = Some(s);
            }
        }
        best
    }
}

impl Unit for Rq {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Rq { present: self.present, ..Rq::new(1) };
    }

    fn outputs(&self, i: &In) -> Out {
        let free = self.present & !self.valid;
        let r = i.rd_idx as usize % MAX_SLOTS;
        let (rd_pc, rd_nlog, rd_log) = unpack_info(self.info[r]);
        Out {
            full: free == 0,
            alloc_idx: if free == 0 { 0 } else { free.trailing_zeros() as u8 },
            replay_ok: self.faulted >> (i.replay_idx as usize % MAX_SLOTS) & 1 != 0,
            rd_warp: self.warp[r],
            rd_pc,
            rd_exec: self.exec[r],
            rd_age: self.age[r],
            rd_log,
            rd_nlog,
        }
    }

    fn clock(&mut self, i: &In) {
        let free = self.present & !self.valid;
        let mut set = 0u128;
        if i.issue && free != 0 {
            let s = free.trailing_zeros() as usize;
            set = 1 << s;
            self.warp[s] = i.warp & 63;
            self.age[s] = i.age;
            self.exec[s] = i.exec;
            self.info[s] = pack_info(i.pc, i.nlog, i.log);
        }
        let mut replayed = 0u128;
        if i.replay {
            let q = i.replay_idx as usize % MAX_SLOTS;
            replayed = 1 << q;
            let w = self.warp[q];
            match self.oldest_faulted(w) {
                Some(h) if h != q && self.order_error.is_none() => {
                    self.order_error = Some(format!("replayed slot {q} (age {}) of warp slot {w} before the warp's older faulted slot {h} (age {})", self.age[q], self.age[h]));
                }
                _ => {}
            }
        }
        self.valid = (self.valid & !i.free) | set;
        self.faulted = ((self.faulted & !replayed) | i.fault) & !i.free;
    }
}

impl crate::slots::Hosted for Rq {
    fn halted(&self) -> Option<String> {
        self.order_error.clone()
    }
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::Hosted;

    /// Two instructions of warp 3 issued with ages `a0`, `a1` (slots 0 and 1), both squashed.
    fn two_faulted(a0: u16, a1: u16) -> Rq {
        let mut q = Rq::new(8);
        for age in [a0, a1] {
            q.clock(&In { issue: true, warp: 3, age, ..Default::default() });
        }
        q.clock(&In { fault: 0b11, ..Default::default() });
        q
    }

    fn replay(q: &mut Rq, slot: u8) -> bool {
        let i = In { replay: true, replay_idx: slot, ..Default::default() };
        let ok = q.outputs(&i).replay_ok;
        q.clock(&i);
        ok
    }

    #[test]
    fn replays_in_age_order_pass_and_out_of_order_stop_the_run() {
        let mut q = two_faulted(10, 11);
        assert!(replay(&mut q, 0) && replay(&mut q, 1));
        assert_eq!(q.halted(), None);
        assert!(!replay(&mut q, 1), "slot 1 is no longer faulted");
        // (ages modulo 2^16: 0xffff is older than 1)
        let mut q = two_faulted(1, 0xffff);
        assert!(replay(&mut q, 0));
        let e = q.halted().expect("a replay out of age order stops the run");
        assert!(e.contains("slot 0 (age 1)") && e.contains("older faulted slot 1 (age 65535)"), "{e}");
    }
}
