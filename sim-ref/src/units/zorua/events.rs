//! The SM's events applied to the coordinator (a block's start and end, a warp's phase
//! change, barrier arrival and end, an epoch's counters), barriers released, and sets freed
//! one at a time.

use super::*;

impl Coord {
    pub(super) fn fail(&mut self, what: String) {
        self.error.get_or_insert(what);
    }

    /// Opens the barrier of block `b` when every warp of it that has not ended waits there.
    /// Its warps kept their slots and sets, so they are released: schedulable together
    /// (`Out::release` the next cycle). A block that gives its slots up leaves them in the
    /// thread/barrier queue, to be examined. Whether warps were released.
    fn check_barrier(&mut self, b: u8) -> bool {
        let bi = b as usize;
        if self.narr[bi] > 0 && self.narr[bi] >= self.nwarps[bi] {
            let m = bits(self.bar).filter(|&w| self.wblock[w] == b).fold(0u64, |m, w| m | 1 << w);
            self.bar &= !m;
            self.narr[bi] = 0;
            if !self.bgive[bi] {
                self.release(m, b);
                return true;
            }
        }
        false
    }

    /// Released warps `m` become schedulable, out of the thread/barrier and scratchpad queues.
    pub(super) fn make_schedulable(&mut self, m: u64) {
        self.sched |= m;
        self.tq &= !m;
        self.sq &= !m;
    }

    /// Warps `m` of block `b` become schedulable on what they hold (`Out::release`): at once
    /// (single-cycle), or in the release step that follows the event (pipelined).
    fn release(&mut self, m: u64, b: u8) {
        if !self.g.pipelined {
            self.make_schedulable(m);
        }
        self.rel = m;
        self.rel_b = b;
        self.releases += m.count_ones() as u64;
    }

    fn free_slot(&mut self, w: usize) {
        if let Some(s) = self.slot[w].take() {
            self.slot_map.set(s as usize, true);
        }
    }

    /// An event, taken in an idle cycle.
    pub(super) fn event(&mut self, i: &In) {
        let scan = self.scan_start();
        let w = i.warp as usize;
        let bit = 1u64.checked_shl(i.warp as u32).unwrap_or(0);
        // (a warp's event names its block too: the RTL reads the block's fields while it reads
        // the warp's)
        let warp_ok = w < self.g.lwarps as usize && self.live & bit != 0 && i.block == self.wblock[w.min(MAX_LWARPS - 1)];
        match i.ev {
            Ev::None => {}
            Ev::BlockStart => {
                let b = i.block as usize;
                let lw_mask = if self.g.lwarps == 64 { u64::MAX } else { (1u64 << self.g.lwarps) - 1 };
                if b >= self.g.lblocks as usize || self.blocks >> b & 1 != 0 || i.warps == 0 || i.warps & !lw_mask != 0 || i.warps & self.live != 0 || i.warps.count_ones() != i.nwarps as u32 {
                    return self.fail(format!("block start of logical block {b} with warps {:#x} ({} counted): the block or a warp is in use or out of range, or the count is wrong", i.warps, i.nwarps));
                }
                if i.regs.max(i.peak) as usize > REG_SETS * SET_REGS as usize || smem_sets(i.smem) > SMEM_SETS as u32 {
                    return self.fail(format!("block start with {} registers and {} scratchpad bytes: at most {} and {}", i.regs, i.smem, REG_SETS * 4, SMEM_SETS * 1024));
                }
                self.blocks |= 1 << b;
                self.order.push(b as u8);
                self.live |= i.warps;
                self.tq |= i.warps;
                for w in bits(i.warps) {
                    self.wblock[w] = b as u8;
                    self.rneed[w] = reg_sets(i.regs as u32) as u8;
                    self.rheld[w] = 0;
                    self.slot[w] = None;
                }
                self.sneed[b] = smem_sets(i.smem) as u8;
                self.bpeak[b] = reg_sets(i.peak as u32) as u8;
                self.bgive[b] = i.nwarps as u32 > self.g.slots;
                self.sheld[b] = 0;
                self.nwarps[b] = i.warps.count_ones() as u8;
                self.narr[b] = 0;
                self.step = scan;
            }
            Ev::Phase => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("phase change of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                if i.regs as usize > REG_SETS * SET_REGS as usize || smem_sets(i.smem) > SMEM_SETS as u32 {
                    return self.fail(format!("phase change of logical warp {w} to {} registers and {} scratchpad bytes: at most {} and {}", i.regs, i.smem, REG_SETS * 4, SMEM_SETS * 1024));
                }
                let b = self.wblock[w] as usize;
                self.sneed[b] = self.sneed[b].max(smem_sets(i.smem) as u8);
                let to = reg_sets(i.regs as u32) as u8;
                self.rneed[w] = to;
                // (a warp that holds what its new phase needs, its block the scratchpad, is
                // released, on what it holds: it leaves the schedulable set for the scratchpad
                // queue, and the release takes it back; the sets above its need are then freed)
                let held = self.rheld[w] >= to && self.sheld[b] >= self.sneed[b];
                self.sched &= !bit;
                self.sq |= bit;
                if held {
                    self.release(bit, b as u8);
                }
                self.step = if self.rheld[w] > to {
                    self.free_step(Free::Regs { w: w as u8, to }, None)
                } else if held {
                    Step::Idle
                } else {
                    scan
                };
            }
            Ev::Barrier => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("barrier arrival of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                let others = self.sched & !bit != 0;
                self.sched &= !bit;
                self.tq |= bit;
                self.bar |= bit;
                let b = self.wblock[w];
                let gives = self.bgive[b as usize];
                if gives {
                    self.free_slot(w);
                }
                self.narr[b as usize] += 1;
                let released = self.check_barrier(b);
                // (a warp that keeps its slot frees nothing: no scan, unless no warp is left
                // schedulable, when the forward-progress rule may let a waiting warp pass)
                if gives || !others && !released {
                    self.step = scan;
                }
            }
            Ev::WarpEnd => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("end of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                self.sched &= !bit;
                self.live &= !bit;
                self.free_slot(w);
                let b = self.wblock[w];
                if self.started & bit != 0 {
                    self.started &= !bit;
                    self.reg_resv -= self.bpeak[b as usize] as u32;
                }
                self.nwarps[b as usize] -= 1;
                self.check_barrier(b);
                self.rneed[w] = 0;
                let smem = (self.broken.smem_at_warp_end && self.sheld[b as usize] > 0).then_some(Free::Smem { b, end: false });
                self.step = match (self.rheld[w] > 0, smem) {
                    (true, then) => self.free_step(Free::Regs { w: w as u8, to: 0 }, then),
                    (false, Some(f)) => self.free_step(f, None),
                    (false, None) => scan,
                };
            }
            Ev::BlockEnd => {
                let b = i.block as usize;
                if b >= self.g.lblocks as usize || self.blocks >> b & 1 == 0 || self.nwarps[b] != 0 {
                    return self.fail(format!("end of logical block {b}, which is not resident or has warps left"));
                }
                self.step = if self.sheld[b] > 0 {
                    self.free_step(Free::Smem { b: b as u8, end: true }, None)
                } else {
                    self.blocks &= !(1 << b);
                    self.order.retain(|&x| x as usize != b);
                    scan
                };
            }
            Ev::Epoch => {
                self.th.epoch(i.idle as u64, i.mem as u64);
            }
        }
    }

    /// Frees one set; whether that was the last.
    pub(super) fn free_one(&mut self, f: Free) -> bool {
        match f {
            Free::Regs { w, to } => {
                let w = w as usize;
                let s = self.rheld[w] as usize - 1;
                let e = std::mem::take(&mut self.rtab[w][s]);
                if e & REG_VALID != 0 {
                    self.reg_map.set((e & !REG_VALID) as usize, true);
                    self.reg_free += 1;
                } else {
                    self.reg_swap -= 1;
                }
                self.rheld[w] -= 1;
                self.rheld[w] == to
            }
            Free::Smem { b, end } => {
                let b = b as usize;
                let s = self.sheld[b] as usize - 1;
                let e = std::mem::take(&mut self.stab[b][s]);
                if e & SMEM_VALID != 0 {
                    self.smem_map.set((e & !SMEM_VALID) as usize, true);
                    self.smem_free += 1;
                } else {
                    self.smem_swap -= 1;
                }
                self.sheld[b] -= 1;
                let last = self.sheld[b] == 0;
                if last && end {
                    self.blocks &= !(1 << b);
                    self.order.retain(|&x| x as usize != b);
                }
                last
            }
        }
    }
}
