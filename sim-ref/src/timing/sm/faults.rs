//! Address translation and page faults: the lines' TLB checks, fault injection, Warp
//! Disable's squash, and under the replay-queue schemes a global memory instruction's replay
//! slot and operand-log entries, its squash at the fault and its replay.

use super::*;

impl Sm {
    /// Replay-queue schemes: whether a new global memory instruction of block slot `bslot`
    /// needing `need` log entries finds a replay-queue slot and (operand log) its entries; a
    /// refusal is counted.
    pub(super) fn log_room(&self, bslot: u32, need: u8) -> bool {
        if self.rq_is_full() {
            self.rq_full.set(self.rq_full.get() + 1);
            return false;
        }
        if self.ol.is_some() && (self.ol_room(bslot) < need || self.ol_wq_free() < need) {
            self.log_full.set(self.log_full.get() + 1);
            if self.ol_room(bslot) >= need {
                self.ol_queue_full.set(self.ol_queue_full.get() + 1);
            }
            // (`hold`: it issues without a log, holding its sources as under the replay queue)
            return self.cfg.oplog_full == crate::config::OplogFull::Hold;
        }
        true
    }

    /// Replay-queue schemes: a global memory instruction issued now (record `id`) takes its
    /// replay-queue slot (a replay keeps its own) and its operand-log entries (a replay keeps
    /// its logged operands); under the replay queue its sources stay held until its last TLB
    /// check; under the operand log its entries are freed then. A barrier or exit of its warp
    /// waits past that check.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn track_global(&mut self, now: u64, id: u32, slot: u32, d: &Decoded, e: &IqEntry, last_check: u64, fault: Option<u64>) {
        let bslot = d.bslot;
        let need = self.info(bslot).timing.log_need[d.pc];
        // (the logged operands a replay issues with)
        let mut ops = [[0u32; WARP_SIZE]; 3];
        let (rq, log, nlog, from_log) = match e.replay {
            Some(q) => {
                // (the entry names its slot; it is the warp's oldest faulted instruction, the
                // oldest waiting memory instruction of an issue queue sorted by age, O7)
                let o = self.rq_request(now, |i| {
                    i.replay = true;
                    i.replay_idx = q as u8;
                });
                if !o.replay_ok {
                    self.rq_broken(now, format!("does not hold slot {q}, which warp slot {slot} replays, as faulted"));
                }
                if e.nlog > 0 {
                    ops = self.ol_rbuf.take().expect("a replay's logged operands read out before it issues").data;
                }
                // (the warp's next replay, which the load scan passed over while this one was
                // its oldest, may be loaded from now on)
                self.ol_load_at = now;
                (Some(q), e.log, e.nlog, e.nlog > 0)
            }
            None if self.scheme == FaultScheme::Naive => (None, [0; 3], 0, false),
            None => {
                // (a new instruction, or a replay restored with its block's context, which
                // takes a slot again and keeps its own log)
                let (log, nlog) = if e.staged {
                    // (its entries from its block's reservation; its operands were written
                    // into them at issue)
                    let o = self.ol_request(now, |i| {
                        i.alloc = true;
                        i.alloc_block = bslot as u8;
                        i.alloc_need = e.nlog;
                        i.alloc_res = true;
                    });
                    let mut log = [0u16; 3];
                    for j in 0..e.nlog as usize {
                        ops[j] = self.ol_unstage(e.log[j]);
                        log[j] = o.alloc_idx[j] as u16;
                        // (through the write queue, whose places its issue found free)
                        self.ol_push(log[j], ops[j]);
                    }
                    (log, e.nlog)
                } else if e.fixed {
                    (e.log, e.nlog)
                } else {
                    let mut log = [0u16; 3];
                    let nlog = if self.ol.is_some() && self.ol_room(bslot) >= need && self.ol_wq_free() >= need { need } else { 0 };
                    if nlog > 0 {
                        // (its places in the array's write queue, filled at its operand read)
                        if self.od.is_some() {
                            self.ol_wq_res += nlog;
                        }
                        let o = self.ol_request(now, |i| {
                            i.alloc = true;
                            i.alloc_block = bslot as u8;
                            i.alloc_need = nlog;
                        });
                        for (l, &x) in log.iter_mut().zip(&o.alloc_idx).take(nlog as usize) {
                            *l = x as u16;
                        }
                    }
                    (log, nlog)
                };
                let o = self.rq_request(now, |i| {
                    i.issue = true;
                    i.warp = slot as u8;
                    i.pc = d.pc as u16;
                    i.exec = d.exec_mask;
                    i.age = e.age as u16;
                    i.log = log.map(|l| l as u8);
                    i.nlog = nlog;
                });
                self.rq_used += 1;
                if o.full {
                    self.rq_broken(now, format!("it was full when warp slot {slot}'s memory instruction (pc {}) issued, after it had room in that cycle", d.pc));
                }
                (Some(o.alloc_idx as u16), log, nlog, e.fixed && nlog > 0)
            }
        };
        let r = &mut self.recs[id as usize];
        r.rq = rq;
        r.log = log;
        r.nlog = nlog;
        r.from_log = from_log;
        if from_log {
            for (j, o) in ops.iter().enumerate().take(nlog as usize) {
                *logged_operand(&mut r.f, j) = *o;
            }
        }
        r.age = e.age;
        let reads = self.info(bslot).timing.reads[d.pc];
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if need > 1 {
            hw.store_check = hw.store_check.max(fault.unwrap_or(last_check));
        }
        match fault {
            None => {
                hw.check_until = hw.check_until.max(last_check);
                if nlog == 0 && self.scheme != FaultScheme::Naive {
                    hw.mem_hold.retain(|&(c, _)| c >= now);
                    hw.mem_hold.push((last_check, reads));
                }
                for &l in &log[..nlog as usize] {
                    self.events.push(last_check, SmEv::LogFree(l));
                }
            }
            Some(f) => {
                hw.check_until = hw.check_until.max(f);
                if nlog == 0 && self.scheme != FaultScheme::Naive {
                    hw.mem_hold.retain(|&(c, _)| c >= now);
                    hw.mem_hold.push((f, reads));
                }
                self.events.push(f, SmEv::Fault(id));
            }
        }
    }

    /// Replay-queue schemes: issues a global memory instruction whose translation will fault
    /// at `f` (its page in at `r`). It takes its record, its slot and log entries, occupies the
    /// load/store unit for its lines, reads its operands (and logs them), and sends nothing
    /// (docs/faults.md O1-O3); at `f` it is squashed ([`Sm::fault`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn issue_faulting(&mut self, now: u64, slot: u32, d: &Decoded, e: &IqEntry, plan: &MemPlan, f: u64, r: u64) -> bool {
        self.ldst_free = now + plan.nlines as u64;
        let id = self.new_rec(slot, d, plan);
        // (a squashed record never writes back: its ready cycle carries its page's arrival)
        self.recs[id as usize].ready_at = r;
        self.track_global(now, id, slot, d, e, plan.last_check, Some(f));
        // Its sources are released at operand read (under the replay queue also held to its fault).
        self.hold_sources(now, slot, d.bslot, d.pc);
        let gated_behind = self.gated_behind(slot);
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if !gated_behind {
            hw.fetch_gated = false;
            hw.fetch_at = now;
        }
        true
    }

    /// Replay-queue schemes: instruction `id`'s translation faults now. It is squashed: its
    /// record is freed and its destination released (nothing was written or sent). Under the
    /// replay queue and the operand log it goes back into its warp's queue in age order, as
    /// the replay queue's faulted entry; the warp's fetched, unissued instructions stay behind
    /// it (they are the replay queue's part of the issue queue, docs/faults.md O6, O7), and
    /// the warp issues and fetches nothing until the page is in; the warp's other in-flight
    /// instructions drain meanwhile. The naive recovery instead restarts the warp at the
    /// faulted instruction's pc and throws its fetched instructions away.
    pub(super) fn fault(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        let (slot, pc, age, rq, write) = (r.warp, r.f.pc, r.age, r.rq, r.write);
        // It issues again, and its warp fetches, from two cycles after its page is in.
        let resume = r.ready_at + 2;
        self.free_recs.push(id);
        self.stats.squashed += 1;
        let naive = self.scheme == FaultScheme::Naive;
        // (under the replay queue its slot is marked faulted, and the entry that goes back to
        // its warp is read from the slot: pc, lanes and log entries; the age stays the SM's)
        let replay = match (naive, rq) {
            (false, Some(q)) => {
                let o = self.rq_request(now, |i| {
                    i.fault |= 1 << q;
                    i.rd_idx = q as u8;
                });
                if o.rd_warp as u32 != slot {
                    self.rq_broken(now, format!("holds warp slot {} in slot {q}, whose instruction is warp slot {slot}'s", o.rd_warp));
                }
                // (its logged operands are loaded from two cycles before it may issue)
                self.ol_load_at = self.ol_load_at.min(resume.saturating_sub(2));
                Some(IqEntry {
                    pc: o.rd_pc as u32,
                    active: o.rd_exec,
                    ready_at: resume,
                    age,
                    replay: Some(q),
                    fixed: true,
                    log: o.rd_log.map(u16::from),
                    nlog: o.rd_nlog,
                    staged: false,
                })
            }
            _ => None,
        };
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.inflight -= 1;
        if let Some(p) = hw.mem_recs.iter().position(|&x| x == id) {
            hw.mem_recs.swap_remove(p);
        }
        if let Some(b) = write {
            let (i, m) = (b as usize / 64, 1u64 << (b % 64));
            hw.pending[i] &= !m;
            hw.pending_mem[i] &= !m;
        }
        hw.resume_at = hw.resume_at.max(resume);
        hw.fetch_at = hw.fetch_at.max(resume);
        if naive {
            let dropped = hw.iq.len() as u32;
            hw.iq.clear();
            self.iq_used -= dropped;
            if let Some(top) = hw.w.stack.last_mut() {
                top.pc = pc;
            }
            hw.fetch_gated = false;
        } else {
            let e = replay.expect("a replay-queue slot");
            let at = hw.iq.iter().position(|x| x.age > age).unwrap_or(hw.iq.len());
            hw.iq.insert(at, e);
        }
        let ended = (hw.w.state == WarpState::Done && hw.inflight == 0).then_some(hw.block);
        self.wake_at = self.wake_at.min(now);
        self.tb_check = true;
        if let Some(b) = ended {
            self.check_block(now, b);
        }
    }

    /// Translates each line of a global access (record-to-be of the warp in `slot`, issued
    /// now): the lines' addresses are generated the cycle after operand read and each asks the
    /// L1 TLB then. Fills the plan's per-line ready cycles, its last TLB check and its fault;
    /// a page of another process is the instruction's fault (isolation).
    fn translate(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<(), SmFault> {
        self.translate_lines(now, slot, d, plan, mem)?;
        if self.inject.rate > 0.0 && plan.nlines > 0 {
            // An injected fault: at the instruction's last TLB check, its page in `latency`
            // cycles later (under stall-on-fault its lines wait that long).
            let n = self.inject_n;
            self.inject_n += 1;
            let h = splitmix(self.inject.seed ^ (self.id as u64) << 40 ^ n);
            if ((h >> 11) as f64 / (1u64 << 53) as f64) < self.inject.rate {
                let f = plan.last_check;
                let r = f + self.inject.latency as u64;
                plan.fault = Some(plan.fault.map_or((f, r), |(f0, r0)| (f0.min(f), r0.max(r))));
                if self.scheme == FaultScheme::Stall {
                    plan.ready[..plan.nlines].fill(r);
                    plan.last_check = r;
                }
            }
        }
        Ok(())
    }

    fn translate_lines(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<(), SmFault> {
        let info = &self.blocks[d.bslot as usize].as_ref().unwrap().info;
        let asid = info.process;
        let t0 = now + 2;
        if !self.vm {
            let t = t0 + self.lat.l1_tlb_latency as u64;
            plan.ready[..plan.nlines].fill(t);
            plan.last_check = t;
            return Ok(());
        }
        let shift = PAGE_BYTES.trailing_zeros() - self.lat.l1_line.trailing_zeros();
        let mut last = t0;
        let mut fault: Option<(u64, u64)> = None;
        for i in 0..plan.nlines {
            let page = plan.lines[i] >> shift;
            if i > 0 && plan.lines[i - 1] >> shift == page {
                // (a line on the previous line's page: the same translation)
                plan.ready[i] = plan.ready[i - 1];
                mem.mmu.stats.translations += 1;
                mem.mmu.stats.l1_tlb_joins += 1;
                continue;
            }
            match mem.mmu.translate(&mut self.tlb, asid, page, t0) {
                Ok(tr) => {
                    plan.ready[i] = tr.ready;
                    last = last.max(tr.ready);
                    if let Some((f, r)) = tr.fault {
                        fault = Some(fault.map_or((f, r), |(f0, r0)| (f0.min(f), r0.max(r))));
                    }
                }
                Err(NotOwned { owner }) => {
                    let hw = self.warps[slot as usize].as_ref().unwrap();
                    let blk = self.blocks[d.bslot as usize].as_ref().unwrap();
                    let lane = (0..WARP_SIZE).find(|&l| d.exec_mask >> l & 1 != 0 && plan.lane_line[l] == plan.lines[i]).unwrap_or(0);
                    let (Op::Ld { addr, .. } | Op::St { addr, .. } | Op::Atom { addr, .. }) = d.inst.op else { unreachable!("a global access") };
                    let ad = self.lane_addresses(slot, d, addr);
                    let fault = Fault { pc: d.pc as u32, lane: lane as u32, space: Space::Global, store: plan.store || plan.atomic, addr: ad[lane], kind: FaultKind::NotOwned { owner } };
                    return Err(SmFault { launch: blk.info.id, ctaid: blk.ctaid, warp: hw.w.id, fault });
                }
            }
        }
        plan.last_check = last;
        plan.fault = fault;
        Ok(())
    }

    /// A faulted instruction of the warp in `slot` occupies [`f`, `r`): counted once per warp
    /// cycle.
    fn note_fault(&mut self, slot: u32, f: u64, r: u64) {
        self.stats.faulted_insts += 1;
        let hw = self.warps[slot as usize].as_mut().unwrap();
        let a = f.max(hw.fault_until);
        if r > a {
            self.stats.faulted_warp_cycles += r - a;
            if let Some(tl) = &mut self.timeline {
                tl.add(a, r, 1, true);
            }
        }
        hw.fault_until = hw.fault_until.max(r);
    }

    /// The memory side of issuing the decoded instruction of the warp in `slot`: plans its
    /// accesses ([`Sm::plan_memory`]; `Refused` when the MSHRs cannot take a load now) and
    /// translates a global access ([`Sm::translate`]). Under Warp Disable a faulting
    /// instruction is squashed (`Squashed(cycle its page is in)`): it is the warp's youngest
    /// (nothing issues behind a global memory instruction before its last TLB check), has read
    /// nothing into the register file and performed no line (`docs/faults.md`, O2, O3), so
    /// squashing it leaves the warp's pc on it; the caller holds it until its page arrives,
    /// then it is fetched and replayed. (The model decides at issue, where the translation is
    /// timed; the warp could do nothing in between either way.)
    pub(super) fn prepare_memory(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<Prep, SmFault> {
        if let Err(need) = self.plan_memory(slot, d, plan) {
            self.warps[slot as usize].as_mut().unwrap().mshr_need = Some(need);
            return Ok(Prep::Refused);
        }
        if plan.space == Some(Space::Global) {
            self.translate(now, slot, d, plan, mem)?;
            if let Some((f, r)) = plan.fault {
                self.note_fault(slot, f, r);
                if self.scheme.replays() {
                    self.warps[slot as usize].as_mut().unwrap().mshr_need = None;
                    return Ok(Prep::Faulting(f, r));
                }
                if self.scheme != FaultScheme::Stall {
                    self.stats.squashed += 1;
                    self.ldst_free = now + plan.nlines as u64;
                    self.warps[slot as usize].as_mut().unwrap().mshr_need = None;
                    return Ok(Prep::Squashed(r));
                }
            }
        }
        Ok(Prep::Go)
    }
}

/// A 64-bit mix (splitmix64's finalizer) for seeded, deterministic choices.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
