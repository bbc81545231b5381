//! One cycle of the SM (its stages in order), and the next cycle at which it has something to
//! do by itself (it sleeps until then).

use super::*;

impl Sm {
    /// The SM and its schedulers look again in cycle `now`.
    pub(super) fn wake_all(&mut self, now: u64) {
        self.wake_at = self.wake_at.min(now);
        for sc in &mut self.scheds {
            sc.wake = sc.wake.min(now);
        }
    }

    /// Cycle of the next thing this SM would do by itself (a writeback, a unit or warp
    /// becoming free); memory responses and new blocks wake it from outside.
    pub fn next_wake(&self, now: u64) -> u64 {
        let mut t = u64::MAX;
        if !self.oread.is_empty() || self.ol_more || !self.ol_wq.is_empty() {
            t = now + 1;
        }
        // (a block to be saved whose logged operands are still to be read out of the array: one
        // a cycle, from the next)
        if self.units && self.od.is_some() && (0..self.blocks.len() as u32).any(|b| self.ol_save_wanted(now, b) && self.ol_save_entries(b).any(|l| self.ol_saved[l as usize].is_none())) {
            t = now + 1;
        }
        if let Some(c) = self.events.next_time() {
            t = t.min(c);
        }
        if !self.ooo {
            // (the in-order pipeline: a warp changes by itself only in what its scheduler's
            // issue test reads, and the scheduler's last scan kept the earliest time any of its
            // warps' verdicts can turn (a unit coming free, the next issue cycle); what else
            // can let a warp issue sooner lowers the scheduler's time when it happens. The
            // issue stage scans no scheduler before its time, so a cycle before every
            // scheduler's time changes nothing the warps do: `skipping_idle_cycles_changes_nothing`.)
            for sc in &self.scheds {
                t = t.min(sc.wake.max(now + 1));
            }
            return t.min(self.z_wake(now));
        }
        // (the thesis pipeline: a known time is read without touching the warp; an empty
        // slot's is `u64::MAX` until a warp comes into it, which forgets it; and their
        // earliest, while it lies ahead and no slot changed)
        let mut m = self.warps.wake_min.get();
        if m <= now {
            m = u64::MAX;
            for (slot, known) in self.warps.wake.iter().enumerate() {
                if known.get() <= now {
                    known.set(self.warps[slot].as_ref().map_or(u64::MAX, |w| self.warp_wake(w, now)));
                }
                m = m.min(known.get());
            }
            self.warps.wake_min.set(m);
        }
        debug_assert!(m == self.warps.wake.iter().map(|k| k.get()).min().unwrap_or(u64::MAX), "SM {}: the warps' earliest wake", self.id);
        t = t.min(m);
        for &f in self.alu_free.iter().chain([&self.sfu_free, &self.ldst_free]) {
            if f > now {
                t = t.min(f);
            }
        }
        t.min(self.z_wake(now))
    }

    /// The warp's next self-timed change after `now` (`u64::MAX`: none): the earliest of its
    /// times later than `now`, so a value found at one cycle holds at every later cycle before
    /// it, as long as the warp does not change ([`Warps`]).
    fn warp_wake(&self, w: &HwWarp, now: u64) -> u64 {
        let mut t = u64::MAX;
        if w.w.state == WarpState::Ready && w.next_issue > now {
            t = t.min(w.next_issue);
        }
        if self.ooo {
            if w.w.state == WarpState::Ready && !w.fetch_gated && !w.frozen && w.fetch_at > now {
                t = t.min(w.fetch_at);
            }
            for e in &w.iq {
                if e.ready_at > now {
                    t = t.min(e.ready_at);
                }
                // (a replay's logged operands are read out from two cycles before it may
                // issue)
                if e.replay.is_some() && e.nlog > 0 && self.od.is_some() {
                    let at = ol_load_from(w, e);
                    if at > now {
                        t = t.min(at);
                    }
                }
            }
            for &(c, _) in &w.src_hold {
                if c + 2 > now {
                    t = t.min(c + 2);
                }
            }
            for &(c, _) in &w.mem_hold {
                if c + 1 > now {
                    t = t.min(c + 1);
                }
            }
            if w.resume_at > now {
                t = t.min(w.resume_at);
            }
            if w.check_until + 1 > now {
                t = t.min(w.check_until + 1);
            }
            if w.store_check + 1 > now {
                t = t.min(w.store_check + 1);
            }
        }
        t
    }

    /// One cycle. Returns whether the SM steps the next cycle too, whatever its next wake (on
    /// the in-order pipeline an issue or warps left to fetch, on the thesis pipeline anything
    /// fetched or issued).
    pub fn cycle(&mut self, now: u64, gmem: &mut GlobalMem, mem: &mut MemSys) -> Result<bool, SmFault> {
        self.account(now);
        self.z_write_backs(now, mem);
        self.stats.awake_cycles += 1;
        self.ol_more = false;
        self.ol_deliver(now);
        // Operand read of the instructions issued in the previous cycle.
        let mut reads = std::mem::take(&mut self.oread);
        for &id in &reads {
            self.operand_read(id, gmem)?;
        }
        if self.zorua.is_some() {
            // (a warp's event that waited for these reads goes now: `z_flush`)
            for &id in &reads {
                self.z_flush(now, self.recs[id as usize].warp);
            }
        }
        reads.clear();
        self.oread = reads;
        self.ol_step(now);
        // Accesses and writebacks due.
        let mut due = std::mem::take(&mut self.drained);
        self.events.drain_into(now, &mut due);
        for &e in &due {
            match e {
                SmEv::Writeback(id) => self.write_back(now, id),
                SmEv::Release(slot, write) => self.write_back_early(now, slot, write),
                SmEv::Access(id, line) => self.perform_access(id, line, gmem)?,
                SmEv::Shared(id) => {
                    if self.zorua.is_some() {
                        // (under Zorua the words live where the block's scratchpad row says)
                        let r = &self.recs[id as usize];
                        let (b, ad, lanes) = (r.bslot, r.f.addr, r.f.exec);
                        self.z_shared(b, &ad, lanes, true, gmem);
                        self.perform(id, u32::MAX, gmem)?;
                        self.z_shared(b, &ad, lanes, false, gmem);
                    } else {
                        self.perform(id, u32::MAX, gmem)?;
                    }
                    self.write_back(now, id);
                }
                SmEv::Line(id, line, kind) => self.late_line(now, id, line, kind, gmem, mem)?,
                SmEv::LineDone(id) => self.line_done(now, id),
                SmEv::Fault(id) => self.fault(now, id),
                SmEv::LogFree(l) => {
                    self.ol_request(now, |i| i.free |= 1 << l);
                }
                SmEv::SwapHit(slot) => self.z_swap_arrived(now, slot),
            }
        }
        due.clear();
        self.drained = due;
        self.z_cycle(now, gmem);
        let active = if self.ooo { self.ooo_cycle(now, mem)? } else { self.inorder_cycle(now, mem)? };
        self.accounted = self.accounted.max(now + 1);
        if self.units {
            // (refusals for the replay queue's or the operand log's room: none without them)
            self.stats.rq_full += self.rq_full.take();
            self.stats.log_full += self.log_full.take();
            self.stats.ol_queue_full += self.ol_queue_full.take();
            self.stats.ol_replay_wait += self.ol_wait.take();
        }
        debug_assert!(self.units || self.rq_full.get() + self.log_full.get() + self.ol_queue_full.get() + self.ol_wait.get() == 0);
        self.stats.warp_cycles += self.used_warps as u64;
        self.stats.barrier_warp_cycles += self.warps_at_barrier();
        if let Some(tl) = &mut self.timeline {
            tl.add(now, now + 1, self.used_warps as u64, false);
        }
        for sc in &self.scheds {
            self.stats.stalls[sc.reason as usize] += 1;
        }
        self.z_account(1);
        Ok(active)
    }
}
