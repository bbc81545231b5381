//! Fetch, scheduling and issue on the GPGPU-Sim-like pipeline (instruction buffers, GTO or
//! loose round-robin), and the issue steps both pipelines share: decoding, occupying the
//! functional unit, the barrier or exit that follows.

use super::*;

impl Sm {
    /// Fetch and issue of one cycle of the GPGPU-Sim-like pipeline: each scheduler refills
    /// one warp's instruction buffer and issues at most one warp-instruction. Returns whether
    /// the SM has something to do next cycle without a wake (an issue, or warps left to fetch:
    /// a refilled buffer is seen by this cycle's scan, which keeps its scheduler's next time).
    pub(super) fn inorder_cycle(&mut self, now: u64, mem: &mut MemSys) -> Result<bool, SmFault> {
        let mut active = false;
        for s in 0..self.scheds.len() {
            // Fetch: refill one warp's instruction buffer.
            while let Some(slot) = self.scheds[s].fetch.pop_front() {
                let Some(w) = self.warps[slot as usize].as_mut() else {
                    continue;
                };
                w.in_fetch = false;
                match w.w.state {
                    WarpState::Ready => {
                        w.ibuf = self.cfg.ibuffer;
                        self.scheds[s].wake = self.scheds[s].wake.min(now);
                        break;
                    }
                    // Barrier release queues it again; a finished warp needs nothing.
                    WarpState::AtBarrier | WarpState::Done => {}
                }
            }
            active |= !self.scheds[s].fetch.is_empty();
            if now >= self.scheds[s].wake || !self.lazy {
                let issued = self.schedule(now, s, mem)?;
                active |= issued;
            }
        }
        Ok(active)
    }

    /// The part of issue both pipelines share, once the instruction's control flow is done:
    /// it is counted, a data instruction gets its record, it occupies its unit (`unit`: the
    /// ALU's index) and its writeback or shared-memory access is scheduled. Returns its record.
    pub(super) fn execute(&mut self, now: u64, unit: usize, slot: u32, d: &Decoded, plan: &MemPlan, mem: &mut MemSys) -> Option<u32> {
        self.stats.warp_insts += 1;
        self.stats.thread_insts += d.active_lanes;
        if let Some(b) = self.blocks[d.bslot as usize].as_ref() {
            // (the GPU sizes it for its processes; an SM used on its own grows it)
            let p = b.info.process as usize;
            if p >= self.insts_by_process.len() {
                self.insts_by_process.resize(p + 1, 0);
            }
            self.insts_by_process[p] += 1;
        }
        let data = d.exec_mask != 0 && exec::is_data(&d.inst.op);
        if data && !self.units && self.zorua.is_none() && exec::space_of(&d.inst.op).is_none() {
            // (executed now, written back at its time: `Sm::compute_at_issue`)
            self.compute_at_issue(slot, d);
            let t = self.occupy_unit(now, unit, None, d, plan, mem).expect("an ALU or SFU instruction has a fixed latency");
            self.events.push(t, SmEv::Release(slot, d.write));
            return None;
        }
        let rec = data.then(|| self.new_rec(slot, d, plan));
        let done_at = self.occupy_unit(now, unit, rec, d, plan, mem);
        if let (Some(id), Some(t)) = (rec, done_at) {
            let ev = if plan.space == Some(Space::Shared) { SmEv::Shared(id) } else { SmEv::Writeback(id) };
            self.events.push(t, ev);
        }
        rec
    }

    /// Caches the scoreboard mask and class of the warp's next instruction.
    pub(super) fn refresh_next(w: &mut HwWarp, info: &LaunchInfo) {
        if let Some(pc) = w.w.pc() {
            w.next_touch = info.timing.touches[pc as usize];
            w.next_class = info.timing.class[pc as usize];
        }
    }

    /// Whether the warp can issue now; if not, why, and the earliest cycle that could change
    /// by itself (`u64::MAX`: only an event can change it).
    fn eligible(&self, now: u64, slot: u32, s: usize) -> Result<(), (Stall, u64)> {
        let w = self.warps[slot as usize].as_ref().unwrap();
        if w.frozen {
            return Err((Stall::Idle, u64::MAX));
        }
        match w.w.state {
            WarpState::Done => return Err((Stall::Idle, u64::MAX)),
            WarpState::AtBarrier => return Err((Stall::Barrier, u64::MAX)),
            WarpState::Ready => {}
        }
        if self.z_swap_waiting(slot) {
            // (reading its next instruction's sets from swap)
            return Err((Stall::Memory, u64::MAX));
        }
        if w.next_issue > now || w.ibuf == 0 {
            let t = if w.ibuf == 0 { now + 1 } else { w.next_issue };
            return Err((Stall::Fetch, t.max(w.next_issue)));
        }
        let t = &w.next_touch;
        if any(&w.pending, t) {
            return Err((if any(&w.pending_mem, t) { Stall::Memory } else { Stall::Dependency }, u64::MAX));
        }
        if w.next_class == Class::Fence && !w.mem_recs.is_empty() {
            // A fence waits for the warp's loads, stores and atomics to complete.
            return Err((Stall::Memory, u64::MAX));
        }
        if let Some(need) = w.mshr_need {
            if self.mshrs_refuse(need) {
                // Refused for lack of MSHRs: a response frees one and wakes the scheduler.
                return Err((Stall::Unit, u64::MAX));
            }
        }
        let free = match w.next_class {
            Class::Sfu => self.sfu_free,
            Class::Mem(Space::Param) => self.alu_free[s],
            Class::Mem(_) | Class::Atomic => self.ldst_free,
            _ => self.alu_free[s],
        };
        if free > now {
            return Err((Stall::Unit, free));
        }
        Ok(())
    }

    /// [`Sm::eligible`], from the slot's known verdict while it holds: a warp that cannot
    /// issue for a reason of its own (frozen, finished, at a barrier, its instruction buffer
    /// empty or its next issue cycle ahead, a dependence, a fence) keeps that verdict, with the
    /// same time, until the warp changes ([`Warps`] forgets it) or the time comes; one refused
    /// for lack of MSHRs keeps it while the MSHRs in use still refuse the MSHRs it needs. A
    /// busy unit's verdict (another warp's issue moves it) is not kept, and under Zorua none
    /// is (the swap wait comes before the warp's own tests). (Over the default workload's
    /// first 2 M instructions, 15.1 M of 20.1 M looks at a warp are MSHR refusals.)
    #[inline(always)]
    fn verdict(&self, now: u64, slot: u32, s: usize) -> Result<(), (Stall, u64)> {
        let (until, r, need) = self.warps.verdict[slot as usize].get();
        if until > now && (r != Stall::Unit || self.mshrs_refuse(need)) {
            #[cfg(debug_assertions)]
            assert_eq!(self.eligible(now, slot, s), Err((r, until)), "SM {}: warp slot {slot}'s kept verdict is stale at cycle {now}", self.id);
            return Err((r, until));
        }
        self.look(now, slot, s)
    }

    /// The full test of [`Sm::verdict`], keeping the verdict where it holds (out of line: the
    /// scan's common case is a kept verdict).
    #[inline(never)]
    fn look(&self, now: u64, slot: u32, s: usize) -> Result<(), (Stall, u64)> {
        let known = &self.warps.verdict[slot as usize];
        let v = self.eligible(now, slot, s);
        if let Err((r, t)) = v {
            // (a busy unit's verdict has a time; an MSHR refusal has none)
            if (r != Stall::Unit || t == u64::MAX) && self.zorua.is_none() && t > now {
                let need = self.warps[slot as usize].as_ref().and_then(|w| w.mshr_need).unwrap_or(0);
                known.set((t, r, need));
            }
        }
        v
    }

    /// The scheduler's look at one warp in its scan: whether it can issue; if not, the scan
    /// notes why (the first reason met that is not an idle warp's) and its time.
    #[inline(always)]
    fn consider(&self, now: u64, slot: u32, s: usize, scan: &mut Scan) -> bool {
        match self.verdict(now, slot, s) {
            Ok(()) => true,
            Err((r, t)) => {
                // (a finished warp waiting for its block says nothing about the stall)
                if r != Stall::Idle && scan.first.is_none() {
                    scan.first = Some(r);
                }
                if t == u64::MAX && r == Stall::Unit {
                    // (a refusal for lack of MSHRs: under Zorua no verdict is kept, and any
                    // freed MSHR wakes the scheduler)
                    let need = if self.zorua.is_none() { self.warps.verdict[slot as usize].get().2 } else { 0 };
                    scan.need = scan.need.min(need);
                }
                scan.wake = scan.wake.min(t);
                false
            }
        }
    }

    /// A load that needs `need` MSHRs is refused for lack of them.
    #[inline(always)]
    pub(super) fn mshrs_refuse(&self, need: u32) -> bool {
        self.mshrs_used + need > self.lat.l1_mshrs && self.mshrs_used > 0
    }

    fn schedule(&mut self, now: u64, s: usize, mem: &mut MemSys) -> Result<bool, SmFault> {
        let n = self.scheds[s].warps.len();
        if n == 0 {
            self.scheds[s].reason = Stall::Idle;
            self.scheds[s].wake = u64::MAX;
            return Ok(false);
        }
        let last = self.scheds[s].last;
        let mut scan = Scan { first: None, wake: u64::MAX, need: u32::MAX };
        let list = &self.scheds[s].warps;
        let grouped = self.cfg.group_warps != 0;
        let pick = if grouped {
            self.pick_in_group(now, s, &mut scan)
        } else {
            match self.cfg.scheduler {
                SchedPolicy::Gto => match last {
                    Some(l) if self.consider(now, l, s, &mut scan) => Some(l),
                    _ => list.iter().copied().find(|&slot| Some(slot) != last && self.consider(now, slot, s, &mut scan)),
                },
                SchedPolicy::Lrr => {
                    let start = last.and_then(|l| list.iter().position(|&w| w == l)).map_or(0, |p| p + 1);
                    (0..n).map(|k| list[(start + k) % n]).find(|&slot| self.consider(now, slot, s, &mut scan))
                }
            }
        };
        if pick.is_none() && grouped && self.switch_group(now, s, &mut scan) {
            return Ok(true);
        }
        let Some(slot) = pick else {
            self.scheds[s].reason = scan.first.unwrap_or(Stall::Idle);
            self.scheds[s].wake = scan.wake;
            self.scheds[s].mshr_need = scan.need;
            return Ok(false);
        };
        self.scheds[s].mshr_need = 0;
        let d = self.decode(slot);
        if self.zorua.is_some() {
            // (only a warp the coordinator has schedulable issues)
            assert!(self.scheds[s].warps.contains(&slot), "SM {}: warp slot {slot} picked while not schedulable", self.id);
            if self.z_swap_before_issue(now, slot, &d, mem) {
                // (the instruction's sets in swap are read first: the warp waits for them)
                self.scheds[s].reason = Stall::Memory;
                self.scheds[s].wake = now + 1;
                return Ok(true);
            }
        }
        if !self.issue(now, s, slot, &d, mem)? {
            // MSHRs exhausted: the cycle is lost; look again next cycle, when that warp is no
            // longer eligible (until an MSHR frees) and another may issue. Counted as activity
            // so that the SM stays awake for it.
            self.scheds[s].reason = Stall::Unit;
            self.scheds[s].wake = now + 1;
            return Ok(true);
        }
        // (the warp may have exited and been freed by its last instruction; under Zorua it may
        // have left its scheduler for the coordinator)
        let stays = self.warps[slot as usize].is_some() && (self.zorua.is_none() || self.scheds[s].warps.contains(&slot));
        self.scheds[s].last = stays.then_some(slot);
        self.scheds[s].reason = Stall::Issued;
        self.scheds[s].wake = now + 1;
        Ok(true)
    }

    /// The group of warp slots `slot` is in under the two-group scheduler (0: the first).
    #[inline]
    fn group_of(&self, slot: u32) -> u8 {
        (slot / self.cfg.schedulers >= self.cfg.group_warps) as u8
    }

    /// The two-group scheduler's pick (HeteroCore's big SM, §3.2): GTO or loose round-robin
    /// over the warps of the scheduler's current group only.
    #[inline(never)]
    fn pick_in_group(&self, now: u64, s: usize, scan: &mut Scan) -> Option<u32> {
        let (list, last, g) = (&self.scheds[s].warps, self.scheds[s].last, self.scheds[s].group);
        let mine = |slot: u32| self.group_of(slot) == g;
        match self.cfg.scheduler {
            SchedPolicy::Gto => match last {
                Some(l) if mine(l) && self.consider(now, l, s, scan) => Some(l),
                _ => list.iter().copied().find(|&slot| Some(slot) != last && mine(slot) && self.consider(now, slot, s, scan)),
            },
            SchedPolicy::Lrr => {
                let n = list.len();
                let start = last.and_then(|l| list.iter().position(|&w| w == l)).map_or(0, |p| p + 1);
                (0..n).map(|k| list[(start + k) % n]).find(|&slot| mine(slot) && self.consider(now, slot, s, scan))
            }
        }
    }

    /// The two-group scheduler found no ready warp in its group: if the other group has one,
    /// it moves there, and this cycle issues nothing (the lost cycle; true). Otherwise the
    /// scan also covers the other group's warps, for the stall, the next look and the MSHRs
    /// a refused load needs (false). Moving only to a group with a ready warp is our reading
    /// of §3.2 ("if the warp scheduler cannot find a ready warp, it will consider the other
    /// group in the next cycle"): the move costs the cycle the paper counts, and a scheduler
    /// with no ready warp anywhere stays where it is (docs/heterocore.md, "The big SM's
    /// scheduler").
    #[cold]
    fn switch_group(&mut self, now: u64, s: usize, scan: &mut Scan) -> bool {
        let g = self.scheds[s].group;
        let mut other = Scan { first: None, wake: u64::MAX, need: u32::MAX };
        let ready = self.scheds[s].warps.iter().copied().any(|slot| self.group_of(slot) != g && self.consider(now, slot, s, &mut other));
        if ready {
            let sc = &mut self.scheds[s];
            sc.group = g ^ 1;
            sc.last = None;
            sc.reason = scan.first.unwrap_or(Stall::Idle);
            sc.wake = now + 1;
            sc.mshr_need = 0;
            self.stats.group_switches += 1;
            return true;
        }
        scan.first = scan.first.or(other.first);
        scan.wake = scan.wake.min(other.wake);
        scan.need = scan.need.min(other.need);
        false
    }

    /// Issues the warp's next instruction. Returns false (and changes nothing) if the memory
    /// stage cannot take it this cycle (MSHRs exhausted).
    ///
    /// The stages, in order: [`Sm::decode`] has read the instruction (`d`); [`Sm::plan_memory`]
    /// works out a memory access's lines from the address registers (the values the
    /// operand-read stage will read: the scoreboard keeps them from changing in between) and
    /// refuses a load the MSHRs cannot take; [`exec::issue`] does the instruction's control
    /// flow and moves the pc; a data instruction gets its record ([`Sm::new_rec`], which marks
    /// its result pending and queues it for operand read); [`Sm::occupy_unit`] times it on its
    /// functional unit and sends its memory traffic, and its writeback (or shared-memory
    /// access) is scheduled; [`Sm::advance_flow`] updates the instruction buffer and fetch
    /// queue; [`Sm::block_event`] handles an arrival at a barrier or an exit.
    fn issue(&mut self, now: u64, s: usize, slot: u32, d: &Decoded, mem: &mut MemSys) -> Result<bool, SmFault> {
        let mut plan = self.plan.take().unwrap_or_else(|| Box::new(MemPlan::new()));
        plan.reset();
        let r = self.issue_planned(now, s, slot, d, &mut plan, mem);
        self.plan = Some(plan);
        r
    }

    fn issue_planned(&mut self, now: u64, s: usize, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<bool, SmFault> {
        match self.prepare_memory(now, slot, d, plan, mem)? {
            Prep::Go => {}
            Prep::Refused => return Ok(false),
            Prep::Squashed(r) => {
                self.warps[slot as usize].as_mut().unwrap().next_issue = r + 2;
                return Ok(true);
            }
            Prep::Faulting(..) => unreachable!("the replay-queue schemes run on the thesis's pipeline (checked by the configuration)"),
        }
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.mshr_need = None;
        let ev = exec::issue(&mut hw.w, &d.inst, d.exec_mask);
        let seq_next = hw.w.pc() == Some(d.pc as u32 + 1);
        let rec = self.execute(now, s, slot, d, plan, mem);
        self.advance_flow(now, s, slot, d, seq_next);
        self.z_issued(now, s, slot, d.pc, &d.inst, ev);
        if plan.space == Some(Space::Global) && self.scheme != FaultScheme::Stall {
            // Warp Disable: the warp fetches nothing more until this instruction commits, or
            // until its last TLB check (then fetch the cycle after, issue the next).
            let hw = self.warps[slot as usize].as_mut().unwrap();
            match (self.scheme, rec) {
                (FaultScheme::WdCommit, Some(id)) => {
                    hw.wd_wait = Some(id);
                    hw.next_issue = u64::MAX;
                }
                _ => hw.next_issue = hw.next_issue.max(plan.last_check + 2),
            }
        }
        self.block_event(now, s, slot, d.bslot, ev);
        Ok(true)
    }

    /// Reads the warp's next instruction and what the issue stages need to know about it,
    /// before it executes.
    fn decode(&self, slot: u32) -> Decoded {
        let hw = self.warps[slot as usize].as_ref().unwrap();
        let bslot = hw.block;
        let info = self.info(bslot);
        let pc = hw.w.pc().unwrap() as usize;
        let inst = info.launch.kernel.code[pc];
        let exec_mask = exec::exec_mask(&hw.w, &inst);
        Decoded {
            bslot,
            pc,
            inst,
            class: info.timing.class[pc],
            exec_mask,
            active_lanes: hw.w.active_mask().count_ones() as u64,
            write: info.timing.writes[pc].filter(|_| exec_mask != 0),
            addr_ops: None,
        }
    }

    /// Occupies the instruction's functional unit for its initiation interval: the
    /// scheduler's ALU (arithmetic, control, barriers, fences, parameter loads), the SM's SFU,
    /// or the load/store path ([`Sm::memory_timing`]). Returns the writeback cycle of a
    /// fixed-latency result (`None`: nothing to write back at a fixed time).
    #[inline(always)]
    fn occupy_unit(&mut self, now: u64, s: usize, rec: Option<u32>, d: &Decoded, plan: &MemPlan, mem: &mut MemSys) -> Option<u64> {
        let cfg = self.lat;
        let or = now + 1; // operand read
        match d.class {
            Class::Alu | Class::Phase | Class::Fence | Class::Control | Class::Barrier | Class::Mem(Space::Param) => {
                self.alu_free[s] = now + cfg.alu_interval as u64;
                Some(or + cfg.alu_latency as u64)
            }
            Class::Sfu => {
                self.sfu_free = now + cfg.sfu_interval as u64;
                Some(or + cfg.sfu_latency as u64)
            }
            Class::Mem(_) | Class::Atomic => self.memory_timing(now, rec, plan, mem),
        }
    }

    /// Instruction buffer and fetch after issue. A warp going on in sequence uses one buffered
    /// instruction and may issue next cycle; a change of flow (a control instruction, or a
    /// step that did not go on to the next instruction) empties the buffer, and the warp waits
    /// for the branch to resolve at execute. Then caches the next instruction's scoreboard
    /// facts and queues the warp for fetch if it still runs.
    fn advance_flow(&mut self, now: u64, s: usize, slot: u32, d: &Decoded, seq_next: bool) {
        let info = &*self.blocks[d.bslot as usize].as_ref().unwrap().info;
        let hw = self.warps.again_mut(slot as usize).as_mut().unwrap();
        if seq_next && d.class != Class::Control {
            hw.ibuf -= 1;
            hw.next_issue = now + 1;
        } else {
            hw.ibuf = 0;
            hw.next_issue = now + self.lat.alu_latency as u64;
        }
        Self::refresh_next(hw, info);
        if !hw.in_fetch && hw.w.state != WarpState::Done {
            hw.in_fetch = true;
            self.scheds[s].fetch.push_back(slot);
        }
    }

    /// The block-level effect of the step's event: a warp arriving at a barrier counts
    /// towards its release; a warp that exited leaves its scheduler (it keeps its slot until
    /// the block ends). Either may release the barrier or end the block ([`Sm::check_block`]).
    /// (Inline: a step that goes on has none.)
    #[inline]
    pub(super) fn block_event(&mut self, now: u64, s: usize, slot: u32, bslot: u32, ev: Event) {
        if ev != Event::Continue {
            self.block_arrival(now, s, slot, bslot, ev);
        }
    }

    #[inline(never)] // ([`Sm::block_event`] at a barrier or exit)
    fn block_arrival(&mut self, now: u64, s: usize, slot: u32, bslot: u32, ev: Event) {
        // (a warp at a barrier or done may complete a block's wait for thread-block switching)
        self.tb_check = true;
        match ev {
            Event::Continue => {}
            Event::Barrier => {
                let blk = self.blocks[bslot as usize].as_mut().unwrap();
                blk.at_barrier += 1;
                self.barrier_warps += 1;
                self.check_block(now, bslot);
            }
            Event::Done => {
                let sched = &mut self.scheds[s];
                sched.warps.retain(|&w| w != slot);
                sched.fetch.retain(|&w| w != slot);
                if sched.last == Some(slot) {
                    sched.last = None;
                }
                let blk = self.blocks[bslot as usize].as_mut().unwrap();
                blk.running -= 1;
                self.check_block(now, bslot);
            }
        }
    }
}

/// What a scheduler's scan found among the warps that cannot issue: the first reason, the
/// earliest time one of them could, and the fewest MSHRs one refused for lack of them needs.
struct Scan {
    first: Option<Stall>,
    wake: u64,
    need: u32,
}
