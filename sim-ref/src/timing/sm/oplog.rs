//! The operand log's data array as the SM drives it (`docs/faults.md` O11): the staging store
//! of restored logged operands, the write queue, and the one read a cycle, for a context save
//! or the replay being loaded.

use super::*;

impl Sm {
    /// Puts a restored logged operand in the staging store; returns where.
    pub(super) fn ol_stage(&mut self, data: [u32; WARP_SIZE]) -> u16 {
        match self.ol_staged.iter().position(Option::is_none) {
            Some(k) => {
                self.ol_staged[k] = Some(data);
                k as u16
            }
            None => {
                self.ol_staged.push(Some(data));
                (self.ol_staged.len() - 1) as u16
            }
        }
    }

    /// Takes a restored logged operand out of the staging store.
    pub(super) fn ol_unstage(&mut self, k: u16) -> [u32; WARP_SIZE] {
        self.ol_staged[k as usize].take().expect("a staged logged operand")
    }

    /// Places of the data array's write queue neither taken nor reserved (3, as many as an
    /// instruction needs, without a data array).
    pub(super) fn ol_wq_free(&self) -> u8 {
        if self.od.is_none() {
            return 3;
        }
        (mpgpu_spec::units::oldata::WRITE_QUEUE - self.ol_wq.len()) as u8 - self.ol_wq_res
    }

    /// Queues a write of entry `l` (what a save read of it before is no longer its word).
    pub(super) fn ol_push(&mut self, l: u16, data: [u32; WARP_SIZE]) {
        self.ol_saved[l as usize] = None;
        self.ol_wq.push_back((l as u8, data));
    }

    /// Whether the replay of the warp in `slot` with age `age` has its logged operands read out
    /// of the array.
    pub(super) fn ol_loaded(&self, slot: u32, age: u32) -> bool {
        self.ol_rbuf.as_ref().is_some_and(|b| b.slot == slot && b.age == age && b.got == b.nlog)
    }

    /// The entries a context save of block slot `b` reads out of the array: those of its warps'
    /// queued replays (a restored one's are in the staging store).
    pub(super) fn ol_save_entries(&self, b: u32) -> impl Iterator<Item = u16> + '_ {
        let blk = self.blocks[b as usize].as_ref();
        blk.into_iter().flat_map(move |blk| {
            blk.warp_slots.iter().flat_map(move |&s| {
                let w = self.warps[s as usize].as_ref().unwrap();
                w.iq.iter().filter(|e| !e.staged).flat_map(|e| e.log[..e.nlog as usize].iter().copied())
            })
        })
    }

    /// Whether block slot `b`'s logged operands have been read for its context save (always
    /// without a data array).
    pub(super) fn ol_log_saved(&self, b: u32) -> bool {
        self.od.is_none() || self.ol_save_entries(b).all(|l| self.ol_saved[l as usize].is_some())
    }

    /// Whether block slot `b` may be saved soon, so that its logged operands are read out for
    /// it: nothing of it in flight, and it is frozen (a context switch) or every warp has
    /// exited, waits at a barrier or waits for a fault (thread-block switching,
    /// [`Sm::switch_candidate`]).
    pub(super) fn ol_save_wanted(&self, now: u64, b: u32) -> bool {
        let Some(blk) = self.blocks[b as usize].as_ref() else { return false };
        if blk.restoring {
            return false;
        }
        if blk.frozen {
            return blk.warp_slots.iter().all(|&s| self.warps[s as usize].as_ref().unwrap().inflight == 0);
        }
        self.tb_switch_wait.is_some_and(|m| self.faults_wait(now, blk).is_some_and(|until| until >= now + m))
    }

    /// The data array's part of a cycle, before the operand reads: the entry read in the last
    /// cycle arrives (at a context save's store, or the replay being loaded).
    pub(super) fn ol_deliver(&mut self, now: u64) {
        let Some((l, dest)) = self.ol_rd.take() else { return };
        let data = {
            let p = self.od.as_ref().expect("the data array's unit").borrow();
            p.unit.outputs(&p.pending).rdata
        };
        match dest {
            OlRead::Save => {
                self.ol_saved[l as usize] = Some(data);
                // (a block may now be ready to switch out)
                self.tb_check = true;
            }
            OlRead::Replay(j) => {
                if let Some(b) = self.ol_rbuf.as_mut().filter(|b| b.got == j && b.log[j as usize] == l as u16) {
                    b.data[j as usize] = data;
                    b.got += 1;
                    if b.got == b.nlog {
                        b.loaded_at = now;
                    }
                }
            }
        }
        self.ol_more = true;
    }

    /// The first warp slot from `from` on, in round robin, other than `skip`, whose oldest
    /// replay has logged operands and may issue within two cycles (its entries are read out
    /// from then); and the earliest cycle at which one of the others may.
    fn ol_due(&self, now: u64, from: u32, skip: Option<u32>) -> (Option<u32>, u64) {
        let n = self.warps.len() as u32;
        let mut next = u64::MAX;
        for i in 0..n {
            let slot = (from + i) % n;
            if Some(slot) == skip {
                continue;
            }
            let Some(w) = self.warps[slot as usize].as_ref() else { continue };
            if w.frozen {
                continue;
            }
            if let Some(e) = oldest_replay(w) {
                if e.nlog == 0 {
                    continue;
                }
                let at = ol_load_from(w, e);
                if at <= now {
                    return (Some(slot), now);
                }
                next = next.min(at);
            }
        }
        (None, next)
    }

    /// The data array's part of a cycle, after the operand reads: the write queue's head is
    /// written, and one entry is read: a context save's first, then the next entry of the
    /// replay being loaded (a replay is loaded once its page is in, from two cycles before it
    /// may issue). An entry with a write waiting in the queue is not read.
    pub(super) fn ol_step(&mut self, now: u64) {
        if self.od.is_none() {
            return;
        }
        let queued = |sm: &Sm, l: u16| sm.ol_wq.iter().any(|&(e, _)| e as u16 == l);
        let mut read = None;
        for b in 0..self.blocks.len() as u32 {
            if read.is_none() && self.ol_save_wanted(now, b) {
                read = self.ol_save_entries(b).find(|&l| self.ol_saved[l as usize].is_none() && !queued(self, l)).map(|l| (l, OlRead::Save));
            }
        }
        // (the replay being loaded, while it can still issue soon: its warp's oldest replay, as
        // an older one faulting again goes back into the queue before it; a loaded one that has
        // not issued `OL_HOLD` cycles after its entries arrived gives the buffer up to another
        // that is due, so that a replay kept from issuing, by a busy load/store unit or its
        // warp's dependences, does not keep every other replay of the SM waiting)
        if let Some(b) = &self.ol_rbuf {
            let live = self.warps[b.slot as usize].as_ref().is_some_and(|w| {
                !w.frozen && oldest_replay(w).is_some_and(|e| e.age == b.age && ol_load_from(w, e) <= now)
            });
            let held = b.got == b.nlog && now >= b.loaded_at + OL_HOLD;
            let other = held && self.ol_due(now, b.slot + 1, Some(b.slot)).0.is_some();
            if !live || other {
                self.ol_rbuf = None;
                self.ol_load_at = now;
            } else if b.got == b.nlog {
                // (looked at again next cycle while it waits)
                self.ol_more = true;
            }
        }
        if self.ol_rbuf.is_none() && now >= self.ol_load_at {
            // (the next warp slot in round robin whose oldest replay may issue within two cycles;
            // the scan is skipped until the earliest of the others may)
            let (due, next) = self.ol_due(now, self.ol_rr, None);
            if let Some(slot) = due {
                let w = self.warps[slot as usize].as_ref().unwrap();
                let e = oldest_replay(w).unwrap();
                self.ol_rbuf = Some(ReplayLoad { slot, age: e.age, log: e.log, nlog: e.nlog, got: 0, loaded_at: u64::MAX, data: [[0; WARP_SIZE]; 3] });
                self.ol_rr = (slot + 1) % self.warps.len() as u32;
            }
            self.ol_load_at = if due.is_some() { now } else { next };
        }
        if read.is_none() {
            if let Some(b) = self.ol_rbuf.as_ref().filter(|b| b.got < b.nlog) {
                let l = b.log[b.got as usize];
                if !queued(self, l) {
                    read = Some((l, OlRead::Replay(b.got)));
                }
            }
        }
        let write = self.ol_wq.pop_front();
        if read.is_none() && write.is_none() {
            return;
        }
        self.ol_rd = read.map(|(l, d)| (l as u8, d));
        self.stats.ol_reads += read.is_some() as u64;
        self.stats.ol_save_reads += matches!(read, Some((_, OlRead::Save))) as u64;
        self.stats.ol_writes += write.is_some() as u64;
        self.ol_more = true;
        self.od.as_ref().expect("the data array's unit").borrow_mut().request(&|| format!("SM {}: operand-log data", self.id), now, |i| {
            if let Some((l, _)) = read {
                i.re = true;
                i.raddr = l as u8;
            }
            if let Some((l, data)) = write {
                i.we = true;
                i.waddr = l;
                i.wdata = data;
            }
        });
    }
}
