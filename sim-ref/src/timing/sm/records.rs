//! An issued instruction's record (`Rec`), from issue to completion: its creation, the
//! operand-read stage, the memory stage's perform, writeback and completion.

use super::*;

/// What an instruction of block `blk` on SM `smid` executes in: its kernel, parameters and
/// shared memory.
fn block_ctx(blk: &mut Block, smid: u32) -> BlockCtx<'_> {
    let info = &*blk.info;
    BlockCtx {
        kernel: &info.launch.kernel,
        params: &info.launch.params,
        grid: info.launch.grid,
        block: info.launch.block,
        ctaid: blk.ctaid,
        smid,
        shared: &mut blk.shared,
    }
}

impl Sm {
    /// What a pipeline stage of record `id` works on: the record, its warp and its block's
    /// context.
    fn stage(&mut self, id: u32) -> (&mut Rec, &mut Warp, BlockCtx<'_>) {
        let r = &mut self.recs[id as usize];
        // (the stages move data: registers, predicates, local memory)
        let hw = self.warps.data_mut(r.warp as usize).as_mut().unwrap();
        let blk = self.blocks[r.bslot as usize].as_mut().unwrap();
        (r, &mut hw.w, block_ctx(blk, self.id))
    }

    /// Record `id`'s fault, with where it is (launch, block, warp).
    #[cold]
    fn fault_of(&self, id: u32, fault: exec::Fault) -> SmFault {
        let r = &self.recs[id as usize];
        let blk = self.blocks[r.bslot as usize].as_ref().unwrap();
        let warp = self.warps[r.warp as usize].as_ref().unwrap().w.id;
        SmFault { launch: blk.info.id, ctaid: blk.ctaid, warp, fault }
    }

    /// The memory stage of record `id` for `lanes`.
    pub(super) fn perform(&mut self, id: u32, lanes: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let (r, w, mut ctx) = self.stage(id);
        let done = exec::perform(&mut r.f, lanes, w, &mut ctx, gmem);
        done.map_err(|fault| self.fault_of(id, fault))
    }

    /// The operand-read stage of record `id`: its sources are read; an arithmetic result is
    /// computed; a memory instruction's addresses are checked (a bad one is the instruction's
    /// fault) and a parameter load reads the constant cache.
    pub(super) fn operand_read(&mut self, id: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let r = &mut self.recs[id as usize];
        let (from_log, log) = (r.from_log, r.log);
        let nlog = r.nlog as usize;
        // (a replay under the operand log has its operands from the log, not the registers (a
        // younger instruction may have overwritten them): read out of the array before it
        // issued, they came with it, `Sm::track_global`)
        let (r, w, mut ctx) = self.stage(id);
        if !from_log {
            exec::read_operands(w, &ctx, &mut r.f);
        }
        let done = match r.space {
            None => {
                exec::compute(&mut r.f);
                Ok(())
            }
            Some(space) => exec::check_addresses(&r.f, &ctx, gmem).and_then(|()| {
                if space == Space::Param {
                    let lanes = r.f.exec;
                    exec::perform(&mut r.f, lanes, w, &mut ctx, gmem)?;
                }
                Ok(())
            }),
        };
        done.map_err(|fault| self.fault_of(id, fault))?;
        if !from_log && nlog > 0 {
            // The log is written as the registers are read: into the places its issue
            // reserved in the array's write queue.
            if self.od.is_some() {
                self.ol_wq_res -= nlog as u8;
            }
            for (j, &l) in log[..nlog].iter().enumerate() {
                let data = *logged_operand(&mut self.recs[id as usize].f, j);
                self.ol_push(l, data);
            }
        }
        Ok(())
    }

    /// The writeback of record `id`: the result goes to the register or predicate, the
    /// scoreboard is released (counting an overwritten source of an older memory instruction
    /// in flight), and the instruction completes.
    pub(super) fn write_back(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        exec::writeback(&mut hw.w, &r.f);
        if self.zorua.is_some() {
            // (a warp whose event was sent has its registers at home: the value follows them)
            let (slot, write, lanes) = (r.warp, r.write, r.f.exec);
            if let Some(b) = write.filter(|&b| b < 256) {
                self.z_late_write(slot, b as usize, lanes);
            }
        }
        let r = &self.recs[id as usize];
        self.release_write(r.warp, r.write, id);
        if self.zorua.is_some() {
            let slot = self.recs[id as usize].warp;
            self.z_flush(now, slot);
        }
        self.complete(now, id);
    }

    /// The scoreboard release of a writeback of `write` by the warp in `slot` (`id`: the
    /// writing instruction's record, `u32::MAX` for one without), counting an overwritten
    /// source of an older memory instruction in flight.
    fn release_write(&mut self, slot: u32, write: Option<u16>, id: u32) {
        let Some(b) = write else { return };
        let hw = self.warps[slot as usize].as_mut().unwrap();
        let (i, m) = (b as usize / 64, 1u64 << (b % 64));
        hw.pending[i] &= !m;
        hw.pending_mem[i] &= !m;
        if b < 256 {
            for &o in &hw.mem_recs {
                if o != id && self.recs[o as usize].reads[i] & m != 0 {
                    self.stats.war_overwrites += 1;
                }
            }
        }
    }

    /// An instruction of the warp in `slot` executed at issue ([`Sm::compute_at_issue`])
    /// reaches its writeback: its scoreboard bit is released and it completes (it has no
    /// record).
    pub(super) fn write_back_early(&mut self, now: u64, slot: u32, write: Option<u16>) {
        self.release_write(slot, write, u32::MAX);
        self.retire(now, slot);
    }

    /// The data stages of an instruction that touches no memory, at its issue: an SM without
    /// units (no replay queue, operand log or Zorua), on either pipeline, reads its sources,
    /// computes it and writes its result into the warp's registers at once, and the
    /// writeback only releases the scoreboard ([`Sm::write_back_early`]). Nothing can tell
    /// the difference: the scoreboard holds back every reader and writer of the destination
    /// until the writeback, and every older instruction of the warp has read its sources (the
    /// cycle after its issue, before this cycle's issue; on the thesis pipeline its
    /// write-after-read check holds back a writer). Marks its result pending.
    pub(super) fn compute_at_issue(&mut self, slot: u32, d: &Decoded) {
        let hw = self.warps.again_mut(slot as usize).as_mut().unwrap();
        let ctx = block_ctx(self.blocks[d.bslot as usize].as_mut().unwrap(), self.id);
        let f = &mut self.scratch;
        (f.pc, f.inst, f.exec) = (d.pc as u32, d.inst, d.exec_mask);
        exec::compute_now(f, &mut hw.w, &ctx);
        hw.inflight += 1;
        if let Some(b) = d.write {
            bit(&mut hw.pending, b as usize);
        }
    }

    /// Instruction `id` has completed: its record is freed, its scheduler looks again, and a
    /// finished warp's block may end.
    pub(super) fn complete(&mut self, now: u64, id: u32) {
        // (the SM steps this cycle: a completion outside its cycle is a memory response)
        self.wake_at = self.wake_at.min(now);
        let r = &self.recs[id as usize];
        assert!(r.unperformed == 0, "SM {}: pc {} ({}) completed with {} lines not performed", self.id, r.f.pc, r.f.inst, r.unperformed);
        let slot = r.warp;
        if let Some(q) = r.rq {
            self.rq_free(now, q);
        }
        self.free_recs.push(id);
        let w = self.warps[slot as usize].as_mut().unwrap();
        if let Some(p) = w.mem_recs.iter().position(|&x| x == id) {
            w.mem_recs.swap_remove(p);
        }
        if w.wd_wait == Some(id) {
            // Warp Disable (commit): fetch restarts the cycle after the commit, issue the next.
            w.wd_wait = None;
            w.next_issue = now + 2;
            w.fetch_gated = false;
            w.fetch_at = now + 1;
            self.wake_at = self.wake_at.min(now + 1);
        }
        self.retire(now, slot);
    }

    /// An instruction of the warp in `slot` has completed: its scheduler looks again, and a
    /// finished warp's block may end.
    fn retire(&mut self, now: u64, slot: u32) {
        self.tb_check = true;
        let sc = self.sched_of(slot);
        let sc = &mut self.scheds[sc];
        sc.wake = sc.wake.min(now);
        // (the count of instructions in flight is read by no kept verdict or time)
        let w = self.warps.data_mut(slot as usize).as_mut().unwrap();
        w.inflight -= 1;
        let (done, blk) = (w.w.state == WarpState::Done, w.block);
        if w.inflight == 0 && self.zorua.is_some() {
            self.z_flush(now, slot);
        }
        if done {
            self.check_block(now, blk);
        }
    }

    /// A record for the data instruction the warp in `slot` issues now (its scoreboard bit is
    /// marked pending), queued for operand read in the next cycle.
    pub(super) fn new_rec(&mut self, slot: u32, d: &Decoded, plan: &MemPlan) -> u32 {
        let id = match self.free_recs.pop() {
            Some(i) => i,
            None => {
                self.recs.push(Rec { warp: 0, bslot: 0, f: Flight::new(0, d.inst, 0), write: None, space: None, store: false, outstanding: 0, unperformed: 0, ready_at: 0, lane_line: [0; WARP_SIZE], rq: None, log: [0; 3], nlog: 0, from_log: false, age: 0, reads: [0; 4] });
                self.recs.len() as u32 - 1
            }
        };
        let space = exec::space_of(&d.inst.op);
        let reads = self.info(d.bslot).timing.reads[d.pc];
        let r = &mut self.recs[id as usize];
        r.reads = [reads[0], reads[1], reads[2], reads[3]];
        r.warp = slot;
        r.bslot = d.bslot;
        r.f.pc = d.pc as u32;
        r.f.inst = d.inst;
        r.f.exec = d.exec_mask;
        r.write = d.write;
        r.space = space;
        r.store = plan.store;
        r.outstanding = 0;
        r.unperformed = 0;
        r.ready_at = 0;
        r.rq = None;
        r.nlog = 0;
        r.from_log = false;
        if matches!(space, Some(Space::Global | Space::Local)) {
            // (only a global or local access performs by line)
            r.lane_line = plan.lane_line;
        }
        let hw = self.warps.again_mut(slot as usize).as_mut().unwrap();
        hw.inflight += 1;
        if matches!(space, Some(Space::Global | Space::Local)) {
            hw.mem_recs.push(id);
        }
        if let Some(b) = d.write {
            bit(&mut hw.pending, b as usize);
            if matches!(d.class, Class::Mem(Space::Global | Space::Local | Space::Shared) | Class::Atomic) {
                bit(&mut hw.pending_mem, b as usize);
            }
        }
        self.oread.push(id);
        id
    }
}
