//! The coordinator's scan of the waiting warps: the next candidate (the queues in scan order),
//! admission against the virtual space, the threshold's split into physical and swap, the
//! examination of a warp and the allocation of its sets.

use super::*;

impl Coord {
    /// The next warp to examine: the first queue in scan order with a warp not yet seen, its
    /// lowest.
    pub(super) fn candidate(&self, seen: u64) -> Option<usize> {
        if self.wlm {
            // (the oldest block's lowest waiting warp)
            let waiting = (self.tq | self.sq | self.rq) & !seen;
            return self.order.iter().find_map(|&b| {
                let m = bits(waiting).filter(|&w| self.wblock[w] == b).map(|w| 1u64 << w).fold(0, |a, x| a | x);
                (m != 0).then(|| m.trailing_zeros() as usize)
            });
        }
        // (a warp at a barrier its block has not all reached cannot pass, nor can one in the
        // thread/barrier queue while no physical slot is free, nor one not started whose
        // block's peak does not fit: the scan skips them)
        let tq = if self.slot_map.any() { self.tq & !self.bar & (self.started | self.fitting()) } else { 0 };
        let order = if self.broken.rescan_from_thread { [tq, self.sq, self.rq] } else { [self.rq, self.sq, tq] };
        order.iter().map(|q| q & !seen).find(|&q| q != 0).map(|q| q.trailing_zeros() as usize)
    }

    /// Of the warps in the thread/barrier queue not started yet, those whose block's peak fits
    /// the virtual space with the reservations made (all, with no warp schedulable: the
    /// forward-progress rule): only these may start (docs/zorua.md, "Admission").
    fn fitting(&self) -> u64 {
        if self.wlm || self.sched == 0 {
            return u64::MAX;
        }
        let blocks = (0..self.g.lblocks as usize).filter(|&b| self.fits(self.bpeak[b] as u32)).fold(0u32, |m, b| m | 1 << b);
        bits(self.tq & !self.started).filter(|&w| blocks >> self.wblock[w] & 1 != 0).fold(0, |m, w| m | 1 << w)
    }

    /// Splits `need` sets into physical and swap: `Some((physical, swap))` when allowed.
    fn split(&self, need: u32, free: u32, physical: u32, swapped: u32, valve: bool) -> Option<(u32, u32)> {
        let phys = need.min(free);
        let swap = need - phys;
        (swap == 0 || !self.wlm && (valve || self.th.may_swap(physical, swapped, swap))).then_some((phys, swap))
    }

    /// A scan's first step.
    pub(super) fn scan_start(&self) -> Step {
        if self.g.pipelined {
            Step::Scan { stage: 0 }
        } else {
            Step::Pick { seen: 0 }
        }
    }

    /// The first step freeing `f`, then `then`.
    pub(super) fn free_step(&self, f: Free, then: Option<Free>) -> Step {
        Step::Free(f, then, !self.g.pipelined)
    }

    /// The step after an examination, an allocation or a grant: examining `next` (pipelined:
    /// picked meanwhile; the scan's end if none), or picking it.
    pub(super) fn after(&self, next: Option<u8>, seen: u64) -> Step {
        match (self.g.pipelined, next) {
            (false, _) => Step::Pick { seen },
            (true, Some(w)) => Step::Exam { w, seen: seen | 1 << w, stage: 0 },
            (true, None) => Step::Idle,
        }
    }

    /// Whether a warp not started, of a block whose warps reserve `peak` register sets, fits
    /// the virtual space with the reservations made.
    fn fits(&self, peak: u32) -> bool {
        let total = self.reg_resv + peak;
        total <= self.g.reg_sets || self.th.may_swap(self.g.reg_sets, 0, total - self.g.reg_sets)
    }

    /// Examines warp `w` (in a queue): it passes what it can. The scan's next warp is picked
    /// first, from the state before (as the RTL picks it while it examines this one).
    pub(super) fn examine(&mut self, w: usize, seen: u64) {
        let next = if self.g.pipelined { self.candidate(seen).map(|n| n as u8) } else { None };
        let bit = 1u64 << w;
        let b = self.wblock[w] as usize;
        let valve = self.sched == 0;
        let from_t = self.tq & bit != 0;
        let mut moved = false;
        let (mut smem, mut smem_phys, mut regs, mut regs_phys, mut grant) = (0, 0, 0, 0, false);
        let mut at_t = from_t;
        // (a warp not started yet reserves its peak in the virtual space, and starts only if
        // that fits: docs/zorua.md, "Admission"; the scan picked it before the last decision,
        // which may have taken the room)
        let peak = self.bpeak[b] as u32;
        let fresh = from_t && self.started & bit == 0;
        if from_t && self.bar & bit == 0 && (!fresh || valve || self.wlm || self.fits(peak)) {
            if let Some(s) = self.slot_map.first_one() {
                self.slot_map.set(s, false);
                self.slot[w] = Some(s as u8);
                moved = true;
                at_t = false;
                if fresh {
                    self.started |= bit;
                    self.reg_resv += peak;
                }
            }
        }
        let mut at_s = !at_t && self.rq & bit == 0;
        if at_s {
            let need = self.sneed[b].saturating_sub(self.sheld[b]) as u32;
            if let Some((p, s)) = self.split(need, self.smem_free, self.g.smem_sets, self.smem_swap, valve) {
                self.smem_free -= p;
                self.smem_swap += s;
                (smem, smem_phys) = (need as u8, p as u8);
                moved |= need > 0 || self.sq & bit != 0;
                at_s = false;
            }
        }
        let mut at_r = false;
        if !at_t && !at_s {
            let need = self.rneed[w].saturating_sub(self.rheld[w]) as u32;
            if let Some((p, s)) = self.split(need, self.reg_free, self.g.reg_sets, self.reg_swap, valve) {
                self.reg_free -= p;
                self.reg_swap += s;
                (regs, regs_phys) = (need as u8, p as u8);
                moved = true;
                grant = true;
                if valve && s > 0 {
                    self.valve_grants += 1;
                }
            } else {
                at_r = true;
            }
        }
        self.tq &= !bit;
        self.sq &= !bit;
        self.rq &= !bit;
        if at_t {
            self.tq |= bit;
        } else if at_s {
            self.sq |= bit;
        } else if at_r {
            self.rq |= bit;
        }
        // (WLM: a warp that is not granted ends the scan)
        let (next, seen) = if self.wlm && !grant { (None, u64::MAX) } else { (next, seen) };
        let p = self.g.pipelined;
        self.step = if !moved {
            self.after(next, seen)
        } else if smem + regs > 0 {
            Step::Alloc { w: w as u8, smem, smem_phys, regs, regs_phys, grant, seen, late: !p, next }
        } else if grant && p {
            // (its rows were read while it was examined)
            Step::Finish { w: w as u8, seen, next }
        } else if grant {
            Step::Read { w: w as u8, seen, next }
        } else {
            self.after(next, seen)
        };
    }

    /// Allocates one set of an `Alloc` step.
    pub(super) fn alloc_one(&mut self) {
        let Step::Alloc { w, mut smem, mut smem_phys, mut regs, mut regs_phys, grant, seen, next, .. } = self.step else { unreachable!() };
        let wi = w as usize;
        if smem > 0 {
            let b = self.wblock[wi] as usize;
            let s = self.sheld[b] as usize;
            self.stab[b][s] = if smem_phys > 0 {
                let p = self.smem_map.first_one().expect("a free scratchpad set was counted");
                self.smem_map.set(p, false);
                smem_phys -= 1;
                self.smem_allocs[0] += 1;
                SMEM_VALID | p as u8
            } else {
                self.smem_allocs[1] += 1;
                0
            };
            self.sheld[b] += 1;
            smem -= 1;
        } else {
            let s = self.rheld[wi] as usize;
            self.rtab[wi][s] = if regs_phys > 0 {
                let p = self.reg_map.first_one().expect("a free register set was counted");
                self.reg_map.set(p, false);
                regs_phys -= 1;
                self.reg_allocs[0] += 1;
                REG_VALID | p as u16
            } else {
                self.reg_allocs[1] += 1;
                0
            };
            self.rheld[wi] += 1;
            regs -= 1;
        }
        self.step = if smem + regs > 0 {
            Step::Alloc { w, smem, smem_phys, regs, regs_phys, grant, seen, late: true, next }
        } else if grant {
            Step::Read { w, seen, next }
        } else {
            self.after(next, seen)
        };
    }
}
