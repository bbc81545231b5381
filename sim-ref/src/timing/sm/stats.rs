//! The SM's counters ([`SmStats`]), its timeline of resident and faulted warps
//! ([`Timeline`]), their accounting over cycles it slept through, and the watchdog's report of
//! what holds its warps up.

use super::*;

/// Counters of one SM.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[repr(C)]
pub struct SmStats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    /// Scheduler-cycles by outcome, indexed by [`Stall`].
    pub stalls: [u64; 7],
    /// Sum over cycles of resident warps (achieved occupancy = this / cycles / warp slots).
    pub warp_cycles: u64,
    /// Of which warps waiting at a barrier (resident warps not at a barrier are the block
    /// allocation's schedulable warps, Zorua §6.4).
    pub barrier_warp_cycles: u64,
    pub blocks_done: u64,
    pub l1_hits: u64,
    pub l1_misses: u64,
    /// Cycles the SM was stepped (awake); the others it slept through.
    pub awake_cycles: u64,
    /// Most different launches (kernels) resident at once (intra-SM sharing when above 1).
    pub max_kernels_resident: u32,
    pub shared_conflict_cycles: u64,
    /// Register writebacks that overwrote a source register of an older load, store or atomic
    /// of the same warp still in flight: the write-after-read hazard that early source release
    /// allows (Tanasić's thesis, §6.2, Fig. 6.3), harmless unless that instruction is replayed.
    pub war_overwrites: u64,
    /// Global memory instructions whose translation faulted (a line's page was in host
    /// memory), and under Warp Disable those squashed (each is replayed once its page is in).
    pub faulted_insts: u64,
    pub squashed: u64,
    /// Warp-cycles with a faulted instruction outstanding (a warp counts once however many).
    pub faulted_warp_cycles: u64,
    /// Replay queue and operand log: instructions issued again from the replay queue, and
    /// issue attempts of global memory instructions refused because the replay queue was full
    /// or their block's log partition had too few free entries.
    pub replayed: u64,
    pub rq_full: u64,
    pub log_full: u64,
    /// The operand log's data array (`docs/faults.md` O11): entries written and read through
    /// its ports, issue attempts refused because its write queue had too few places left
    /// (also counted in `log_full`), and cycles a replay waited at issue for its entries.
    pub ol_writes: u64,
    pub ol_reads: u64,
    /// (of which for context saves)
    pub ol_save_reads: u64,
    pub ol_queue_full: u64,
    pub ol_replay_wait: u64,
    /// Queued instructions saved with a block's context (replay-queue contents).
    pub saved_queued: u64,
    /// Thread-block switching on a fault: blocks switched out, and back in.
    pub switched_out: u64,
    pub switched_in: u64,
    /// HeteroCore's two-group warp scheduler (`SmConfig::group_warps`): moves from one group
    /// of warp slots to the other, each an issue cycle lost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub group_switches: u64,
    /// The admission unit: placements whose register-file or shared-memory range needed the
    /// live ranges packed first (the free room was there, but in pieces), and the bytes of
    /// registers and shared memory those packings moved (counted, not charged time).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub admit_packs: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub admit_moved: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Resident and faulted warp-cycles of one SM over time, in bins (for the active-warp
/// timeline of Tanasić's thesis, Fig. 6.2). A bin is `width` cycles; the width doubles when
/// the run outgrows `MAX_BINS`, so memory stays bounded.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Timeline {
    pub width: u64,
    /// (resident, faulted) warp-cycles per bin.
    pub bins: Vec<(u64, u64)>,
}

const MAX_BINS: usize = 1024;

impl Timeline {
    pub fn new() -> Timeline {
        Timeline { width: 1000, bins: Vec::new() }
    }

    /// Merges bins until they are `width` cycles wide (a power-of-two multiple of the current).
    pub fn widen(&mut self, width: u64) {
        while self.width < width {
            self.width *= 2;
            self.bins = self.bins.chunks(2).map(|c| c.iter().fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))).collect();
        }
    }

    /// Adds `w` warps over cycles `[a, b)` to the resident (`faulted` false) or faulted count.
    pub(super) fn add(&mut self, a: u64, b: u64, w: u64, faulted: bool) {
        if b <= a || w == 0 {
            return;
        }
        while (b - 1) / self.width >= MAX_BINS as u64 {
            self.widen(self.width * 2);
        }
        let last = ((b - 1) / self.width) as usize;
        if self.bins.len() <= last {
            self.bins.resize(last + 1, (0, 0));
        }
        let mut t = a;
        while t < b {
            let k = (t / self.width) as usize;
            let end = ((k as u64 + 1) * self.width).min(b);
            let v = (end - t) * w;
            if faulted {
                self.bins[k].1 += v;
            } else {
                self.bins[k].0 += v;
            }
            t = end;
        }
    }
}

impl Sm {
    /// The resident warps waiting at a barrier.
    /// (kept as a count, [`Sm::barrier_warps`]: reading every block's count touched a cache
    /// line a block every cycle)
    pub(super) fn warps_at_barrier(&self) -> u64 {
        debug_assert_eq!(self.barrier_warps as u64, self.blocks.iter().flatten().map(|b| b.at_barrier as u64).sum::<u64>(), "SM {}: warps at a barrier", self.id);
        self.barrier_warps as u64
    }

    /// Brings stall and occupancy accounting up to `now` (for cycles the SM slept through, the
    /// reasons of its last awake cycle hold).
    pub fn account(&mut self, now: u64) {
        if now > self.accounted {
            let d = now - self.accounted;
            for s in &self.scheds {
                self.stats.stalls[s.reason as usize] += d;
            }
            self.z_account(d);
            self.stats.warp_cycles += d * self.used_warps as u64;
            self.stats.barrier_warp_cycles += d * self.warps_at_barrier();
            if let Some(tl) = &mut self.timeline {
                tl.add(self.accounted, now, self.used_warps as u64, false);
            }
            self.accounted = now;
        }
    }

    /// This cycle (or, asleep, the last awake one) is a long-memory stall: no scheduler
    /// issued, and one waited for a load or atomic (Warped-Slicer's phi_mem, §IV-A).
    pub fn memory_stalled(&self) -> bool {
        self.scheds.iter().all(|s| s.reason != Stall::Issued) && self.scheds.iter().any(|s| s.reason == Stall::Memory)
    }

    /// What holds up this SM's warps, for a watchdog report (`None`: nothing resident).
    pub fn stuck_report(&self, now: u64) -> Option<String> {
        if self.used_warps == 0 {
            return None;
        }
        let mut r = format!("{} warps resident, issue queue {}/{}", self.used_warps, self.iq_used, self.cfg.iq_entries);
        if self.scheme.replays() {
            r += &format!(", replay-queue slots free {}/{}", self.cfg.rq_entries - self.rq_used, self.cfg.rq_entries);
            if let Some(p) = &self.ol {
                let p = p.borrow();
                let o = p.unit.outputs(&p.pending);
                let room: Vec<u8> = (0..self.cfg.blocks).map(|b| o.room_of(b)).collect();
                r += &format!(", operand log: {} entries unclaimed, quota left per block slot (at most 3 shown) {room:?}{}", o.pool_free, if o.busy { ", settling" } else { "" });
                r += &format!(
                    ", data array: {} writes queued, {} places reserved, loading {}",
                    self.ol_wq.len(),
                    self.ol_wq_res,
                    self.ol_rbuf.as_ref().map_or("no replay".to_string(), |b| format!("warp slot {}'s replay of age {} ({} of {} entries read)", b.slot, b.age, b.got, b.nlog))
                );
            }
        }
        let mut shown = 0;
        for (slot, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            // (and the warp whose replay is loaded)
            let loading = self.ol_rbuf.as_ref().is_some_and(|b| b.slot == slot as u32);
            if shown >= 4 && !loading {
                if shown == 4 {
                    r += "; ...";
                    shown += 1;
                }
                continue;
            }
            shown += 1;
            let b = self.blocks[w.block as usize].as_ref().unwrap();
            let state = match w.w.state {
                crate::exec::WarpState::Ready => "ready",
                crate::exec::WarpState::AtBarrier => "at a barrier",
                crate::exec::WarpState::Done => "done",
            };
            let queue: Vec<String> = w
                .iq
                .iter()
                .map(|e| format!("pc {} ready in {}{}{}", e.pc, e.ready_at.saturating_sub(now), e.replay.map_or(String::new(), |q| format!(", a replay in slot {q}")), if e.fixed { ", fixed" } else { "" }))
                .collect();
            r += &format!(
                "; warp slot {slot}: kernel `{}`, block ({},{},{}), warp {}, {state}{}{}, {}, {} in flight, issue queue [{}], {} registers awaiting writeback{}",
                b.info.launch.kernel.name,
                b.ctaid[0],
                b.ctaid[1],
                b.ctaid[2],
                w.w.id,
                if w.frozen { ", frozen" } else { "" },
                if b.restoring { ", restoring" } else { "" },
                w.w.pc().map_or("exited".to_string(), |pc| format!("pc {pc}")),
                w.inflight,
                queue.join("; "),
                w.pending.iter().map(|m| m.count_ones()).sum::<u32>(),
                if w.resume_at > now { format!(", faulted until {}", w.resume_at) } else { String::new() }
            );
        }
        Some(r)
    }
}
