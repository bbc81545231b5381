//! An issued instruction's record (`Rec`), from issue to completion: its creation, the
//! operand-read stage, the memory stage's perform, writeback and completion.

use super::*;

impl Sm {
    /// What a pipeline stage of record `id` works on: the record, its warp, its block's
    /// context, and where a fault is (launch, block, warp).
    fn stage(&mut self, id: u32) -> (&mut Rec, &mut Warp, BlockCtx<'_>, (usize, [u32; 3], u32)) {
        let r = &mut self.recs[id as usize];
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        let blk = self.blocks[r.bslot as usize].as_mut().unwrap();
        let info = &*blk.info;
        let at = (info.id, blk.ctaid, hw.w.id);
        let ctx = BlockCtx {
            kernel: &info.launch.kernel,
            params: &info.launch.params,
            grid: info.launch.grid,
            block: info.launch.block,
            ctaid: blk.ctaid,
            smid: self.id,
            shared: &mut blk.shared,
        };
        (r, &mut hw.w, ctx, at)
    }

    /// The memory stage of record `id` for `lanes`.
    pub(super) fn perform(&mut self, id: u32, lanes: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let (r, w, mut ctx, (launch, ctaid, warp)) = self.stage(id);
        exec::perform(&mut r.f, lanes, w, &mut ctx, gmem).map_err(|fault| SmFault { launch, ctaid, warp, fault })
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
        let (r, w, mut ctx, (launch, ctaid, warp)) = self.stage(id);
        if !from_log {
            exec::read_operands(w, &ctx, &mut r.f);
        }
        let fault = |fault| SmFault { launch, ctaid, warp, fault };
        match r.space {
            None => exec::compute(&mut r.f),
            Some(space) => {
                exec::check_addresses(&r.f, &ctx, gmem).map_err(fault)?;
                if space == Space::Param {
                    let lanes = r.f.exec;
                    exec::perform(&mut r.f, lanes, w, &mut ctx, gmem).map_err(fault)?;
                }
            }
        }
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
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        if let Some(b) = r.write {
            let (i, m) = (b as usize / 64, 1u64 << (b % 64));
            hw.pending[i] &= !m;
            hw.pending_mem[i] &= !m;
            if b < 256 {
                for &o in &hw.mem_recs {
                    if o != id && self.recs[o as usize].f.inst.src_regs().any(|s| s as u16 == b) {
                        self.stats.war_overwrites += 1;
                    }
                }
            }
        }
        if self.zorua.is_some() {
            let slot = self.recs[id as usize].warp;
            self.z_flush(now, slot);
        }
        self.complete(now, id);
    }

    /// Instruction `id` has completed: its record is freed, its scheduler looks again, and a
    /// finished warp's block may end.
    pub(super) fn complete(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        assert!(r.unperformed == 0, "SM {}: pc {} ({}) completed with {} lines not performed", self.id, r.f.pc, r.f.inst, r.unperformed);
        let slot = r.warp;
        if let Some(q) = r.rq {
            self.rq_free(now, q);
        }
        self.tb_check = true;
        self.free_recs.push(id);
        let sc = self.sched_of(slot);
        let sc = &mut self.scheds[sc];
        sc.wake = sc.wake.min(now);
        let w = self.warps[slot as usize].as_mut().unwrap();
        w.inflight -= 1;
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
                self.recs.push(Rec { warp: 0, bslot: 0, f: Flight::new(0, d.inst, 0), write: None, space: None, store: false, outstanding: 0, unperformed: 0, ready_at: 0, lane_line: [0; WARP_SIZE], rq: None, log: [0; 3], nlog: 0, from_log: false, age: 0 });
                self.recs.len() as u32 - 1
            }
        };
        let space = exec::space_of(&d.inst.op);
        let r = &mut self.recs[id as usize];
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
        let hw = self.warps[slot as usize].as_mut().unwrap();
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
