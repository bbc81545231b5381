//! The thesis's pipeline (Tanasić's thesis, §2.4): the unified issue queue, out-of-order
//! issue within a warp, and fetch.

use super::*;

impl Sm {
    /// One cycle of the thesis's pipeline (Tanasić's thesis, §2.4): issue, then fetch.
    ///
    /// Issue: up to `schedulers` instructions from the unified issue queue, from one warp or
    /// several, greedy-then-oldest over the warps; within a warp, the oldest entry that can go
    /// (out of order): none of its sources or its destination has a write outstanding (in
    /// flight, or an older entry's), its destination is no source an older entry or an
    /// instruction issued in the last two cycles has still to read (sources are released at
    /// operand read, visible to issue the cycle after), its unit is free; control flow and
    /// barriers go only as their warp's oldest entry, fences also once its memory accesses
    /// are done. Fetch: one warp per cycle (round robin over those with fetch enabled) brings
    /// up to `fetch_width` instructions into the queue, stopping after a memory instruction
    /// (fetch resumes when it issues, or under Warp Disable at its commit or last TLB check)
    /// or before moving past a control-flow instruction (fetch resumes the cycle after it
    /// commits).
    pub(super) fn ooo_cycle(&mut self, now: u64, mem: &mut MemSys) -> Result<bool, SmFault> {
        let width = self.cfg.schedulers as usize;
        let mut issued = 0;
        let mut active = false;
        let nslots = self.warps.len() as u32;
        let first = self.ooo_last;
        // (a warp whose quiet time has not come cannot issue: only the others are looked at,
        // unless every cycle is stepped; debug builds check each skipped one)
        if self.lazy {
            self.warps.quiet.wake(now);
            self.quiet_skips += self.warps.quiet.quiet_count();
            #[cfg(debug_assertions)]
            for slot in 0..nslots {
                if !self.warps.quiet.is_due(slot as usize) {
                    let counts = [&self.ol_wait, &self.rq_full, &self.log_full, &self.ol_queue_full].map(|c| c.get());
                    assert!(self.ooo_pick(now, slot).is_err(), "SM warp slot {slot}: quiet until {}, but it can issue at {now}", self.warps.quiet.until(slot as usize));
                    assert_eq!(counts, [&self.ol_wait, &self.rq_full, &self.log_full, &self.ol_queue_full].map(|c| c.get()), "SM warp slot {slot}: quiet, but its pick counts a refusal at {now}");
                }
            }
        }
        // The last warp to issue first, then every other slot in order (of those not stepped
        // over: a warp that changes in this loop comes due at once).
        let n = nslots as usize;
        let mut from = 0;
        let mut head = first;
        loop {
            let slot = match head.take() {
                Some(f) if !self.lazy || self.warps.quiet.is_due(f as usize) => f,
                Some(_) => continue,
                None => {
                    let Some(s) = self.warps.quiet.next_look(!self.lazy, from, n) else {
                        break;
                    };
                    from = s + 1;
                    if Some(s as u32) == first {
                        continue;
                    }
                    s as u32
                }
            };
            if issued == width {
                break;
            }
            loop {
                if issued == width {
                    break;
                }
                let (k, unit) = match self.ooo_pick(now, slot) {
                    Ok(p) => p,
                    // (kept only when skipping: stepping every cycle looks at every warp)
                    Err((quiet, on_mshrs)) => {
                        if self.lazy {
                            self.warps.quiet.sleep(slot as usize, quiet);
                            // (listed once: a warp looked at every cycle asks again each time)
                            if on_mshrs && !self.warps.on_mshrs.contains(&slot) {
                                self.warps.on_mshrs.push(slot);
                            }
                        }
                        break;
                    }
                };
                active = true;
                if self.ooo_issue(now, unit, slot, k, mem)? {
                    issued += 1;
                    self.ooo_last = self.warps[slot as usize].is_some().then_some(slot);
                    if self.warps[slot as usize].is_none() {
                        break;
                    }
                } else {
                    break;
                }
            }
        }
        let resident = self.used_warps > 0;
        // (under Zorua the cycle's reasons feed Algorithm 1: idle when no warp is schedulable,
        // memory when every schedulable warp waits on a load or on swap; `docs/zorua.md`)
        let (zorua, schedulable, on_memory) = match self.zorua.is_some() {
            true => {
                let warps = self.scheds.iter().flat_map(|s| s.warps.iter());
                let on_mem = |&slot: &u32| self.z_swap_waiting(slot) || self.warps[slot as usize].as_ref().is_some_and(|w| w.pending_mem.iter().any(|&m| m != 0));
                (true, warps.clone().count(), warps.clone().all(on_mem))
            }
            false => (false, 0, false),
        };
        for (i, sc) in self.scheds.iter_mut().enumerate() {
            sc.reason = if i < issued {
                Stall::Issued
            } else if !resident || (zorua && schedulable == 0) {
                Stall::Idle
            } else if zorua && on_memory {
                Stall::Memory
            } else if self.iq_used == 0 {
                Stall::Fetch
            } else {
                Stall::Dependency
            };
        }
        active |= self.ooo_fetch(now);
        Ok(active)
    }

    /// The warp's oldest issue-queue entry that can issue now, and the ALU it would take; or,
    /// if none can, the first cycle it might (`u64::MAX`: only a change of the warp itself can
    /// let it issue; the next cycle where something outside the warp decides: under Zorua, a
    /// block being restored, the replay queue or operand log), and whether a freed MSHR might
    /// let it issue sooner. The time is the earliest at which an
    /// entry's first failing condition can turn by time alone: its ready cycle, a hold of its
    /// destination ending, a TLB check passing, its unit coming free (units only ever become
    /// busy later: each is taken when free, until a later cycle).
    fn ooo_pick(&self, now: u64, slot: u32) -> Result<(usize, usize), (u64, bool)> {
        let Some(w) = self.warps[slot as usize].as_ref() else {
            return Err((u64::MAX, false));
        };
        if w.w.state != WarpState::Ready || w.iq.is_empty() {
            return Err((u64::MAX, false));
        }
        if w.resume_at > now {
            return Err((w.resume_at, false));
        }
        let next = now + 1;
        // (under Zorua only a warp the coordinator has made schedulable issues, and not while
        // its instruction's sets are read from swap)
        if !self.z_schedulable(slot) || self.z_swap_waiting(slot) {
            return Err((next, false));
        }
        // (under the replay queue a frozen warp's queued instructions are saved with its
        // context: it issues nothing more)
        if w.frozen && matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol) {
            return Err((u64::MAX, false));
        }
        let blk = self.blocks[w.block as usize].as_ref().unwrap();
        if blk.restoring {
            return Err((next, false));
        }
        let mut quiet = if self.zorua.is_some() { next } else { u64::MAX };
        let mut on_mshrs = false;
        let t = &blk.info.timing;
        let mut hold = [0u64; 5];
        for &(c, m) in &w.src_hold {
            if c + 2 > now {
                for i in 0..5 {
                    hold[i] |= m[i];
                }
            }
        }
        for &(c, m) in &w.mem_hold {
            if c >= now {
                for i in 0..5 {
                    hold[i] |= m[i];
                }
            }
        }
        let rqs = matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol);
        let zorua_replays = self.zorua.is_some() && self.scheme.replays();
        let mut older_mem = false;
        let (mut older_w, mut older_r) = ([0u64; 5], [0u64; 5]);
        for (k, e) in w.iq.iter().enumerate() {
            let pc = e.pc as usize;
            let reads = &t.reads[pc];
            let mut wr = [0u64; 5];
            if let Some(b) = t.writes[pc] {
                bit(&mut wr, b as usize);
            }
            let class = t.class[pc];
            let touch = &t.touches[pc];
            // (the entry's first failing condition, and the first cycle it can turn by time alone)
            let blocked = if e.ready_at > now {
                Some(e.ready_at)
            } else if any(&w.pending, touch) || any(&older_w, touch) || any(&older_r, &wr) {
                Some(u64::MAX)
            } else if any(&hold, &wr) {
                // (until the last hold on its destination ends)
                let src = w.src_hold.iter().filter(|&&(c, m)| c + 2 > now && any(&m, &wr)).map(|&(c, _)| c + 2);
                let mem = w.mem_hold.iter().filter(|&&(c, m)| c >= now && any(&m, &wr)).map(|&(c, _)| c + 1);
                Some(src.chain(mem).max().expect("a hold on the destination"))
            } else if (k != 0 && (ordered(class, self.zorua.is_some()) || class == Class::Fence))
                || (class == Class::Fence && !w.mem_recs.is_empty())
                // (memory instructions issue in program order: only replayed ones can meet)
                || (older_mem && mem_like(class))
            {
                Some(u64::MAX)
            } else if (rqs || zorua_replays)
                && w.check_until >= now
                && ((matches!(class, Class::Barrier | Class::Control) && self.is_exit_or_bar(&blk.info, pc)) || (zorua_replays && class == Class::Phase))
            {
                // (a barrier or exit waits until no older global access can fault; under Zorua,
                // with any replaying scheme, so does a phase specifier, and so do they under the
                // naive one: the warp's registers go home at its event, which the coordinator
                // takes once, and a replay reads its sources again)
                Some(w.check_until + 1)
            } else if rqs && t.log_need[pc] > 0 && (w.store_check >= now || (t.log_need[pc] > 1 && w.check_until >= now)) {
                // (a global access does not overtake an older one that may still fault and be
                // replayed, where memory order matters: a load an older store or atomic, a
                // store or atomic any older access)
                let store = if w.store_check >= now { w.store_check + 1 } else { 0 };
                let any_access = if t.log_need[pc] > 1 && w.check_until >= now { w.check_until + 1 } else { 0 };
                Some(store.max(any_access))
            } else if rqs && t.log_need[pc] != 0 {
                // (the replay queue's and the operand log's room decide: nothing outside the
                // warp says when they change)
                let logged = if e.replay.is_some() {
                    // (a replay under the operand log once its logged operands are read out of
                    // the array; the cycles it waits for them are counted)
                    e.nlog == 0
                        || self.ol_loaded(slot, e.age)
                        || {
                            self.ol_wait.set(self.ol_wait.get() + 1);
                            false
                        }
                } else if e.staged {
                    // (a restored one takes entries for its logged operands, out of its
                    // block's reservation, when the list holds them, and writes them)
                    self.ol_out().list_room >= e.nlog && self.ol_wq_free() >= e.nlog
                } else {
                    self.log_room(w.block, if e.fixed { 0 } else { t.log_need[pc] })
                };
                // (each refusal is counted: an entry that gets this far is looked at every cycle)
                quiet = next;
                (!logged).then_some(next)
            } else {
                None
            };
            let blocked = match blocked {
                Some(at) => at,
                None => {
                    let unit = match class {
                        Class::Sfu => (self.sfu_free <= now).then_some(0).ok_or(self.sfu_free),
                        Class::Mem(_) | Class::Atomic if class != Class::Mem(Space::Param) => {
                            let mshrs_ok = w.mshr_need.is_none_or(|need| self.mshrs_used + need <= self.lat.l1_mshrs || self.mshrs_used == 0);
                            if self.ldst_free > now {
                                Err(self.ldst_free)
                            } else if !mshrs_ok {
                                on_mshrs = true;
                                Err(u64::MAX)
                            } else {
                                Ok(0)
                            }
                        }
                        _ => (0..self.alu_free.len()).find(|&u| self.alu_free[u] <= now).ok_or_else(|| self.alu_free.iter().copied().min().unwrap_or(next)),
                    };
                    match unit {
                        Ok(u) => return Ok((k, u)),
                        Err(free) => free,
                    }
                }
            };
            quiet = quiet.min(blocked);
            for i in 0..5 {
                older_w[i] |= wr[i];
                older_r[i] |= reads[i];
            }
            older_mem |= mem_like(class);
        }
        Err((quiet, on_mshrs))
    }

    /// The sources of the instruction at `pc`, issued now by the warp in `slot`, are held
    /// until they are read (released at operand read, visible to issue the cycle after).
    pub(super) fn hold_sources(&mut self, now: u64, slot: u32, bslot: u32, pc: usize) {
        let reads = self.info(bslot).timing.reads[pc];
        let hw = self.warps[slot as usize].as_mut().unwrap();
        let old = if hw.src_hold[0].0 <= hw.src_hold[1].0 { 0 } else { 1 };
        if hw.src_hold[1 - old].0 == now {
            for i in 0..5 {
                hw.src_hold[1 - old].1[i] |= reads[i];
            }
        } else {
            hw.src_hold[old] = (now, reads);
        }
    }

    /// Whether a memory or control-flow instruction still waits in the warp's queue (a replayed
    /// memory instruction issuing ahead of it does not re-enable fetch: that one does, at its
    /// own issue or commit). Never true on the baseline, where the instruction that stopped
    /// fetch is the warp's youngest.
    pub(super) fn gated_behind(&self, slot: u32) -> bool {
        let w = self.warps[slot as usize].as_ref().unwrap();
        gates_fetch(&self.info(w.block).timing, &w.iq, self.zorua.is_some())
    }

    /// Whether the instruction at `pc` is `bar.sync` or `exit`.
    fn is_exit_or_bar(&self, info: &LaunchInfo, pc: usize) -> bool {
        matches!(info.launch.kernel.code[pc].op, Op::Bar | Op::Exit)
    }

    /// Issues entry `k` of the warp's issue queue on unit `unit` (an ALU's index). Returns
    /// false (and changes nothing) if the memory stage cannot take it this cycle.
    fn ooo_issue(&mut self, now: u64, unit: usize, slot: u32, k: usize, mem: &mut MemSys) -> Result<bool, SmFault> {
        let e = self.warps[slot as usize].as_ref().unwrap().iq[k];
        let mut d = self.decode_entry(slot, e.pc as usize, e.active);
        if e.fixed {
            // (a replay executes in the lanes it executed in: its guard is not read again; under
            // the operand log its addresses come from the log)
            d.exec_mask = e.active;
            d.write = self.info(d.bslot).timing.writes[d.pc];
            // (a restored one's from the staging store, a replay's as read out of the array)
            d.addr_ops = if e.nlog == 0 {
                None
            } else if e.staged {
                Some(self.ol_staged[e.log[0] as usize].expect("a staged logged operand"))
            } else {
                Some(self.ol_rbuf.as_ref().filter(|_| self.ol_loaded(slot, e.age)).expect("a replay's logged operands read out before it issues").data[0])
            };
        }
        if self.zorua.is_some() && self.z_swap_before_issue(now, slot, &d, mem) {
            // (the instruction's sets in swap are read first: the warp waits for them, and the
            // issue slot is used)
            return Ok(true);
        }
        let mut plan = MemPlan::new();
        let faulting = match self.prepare_memory(now, slot, &d, &mut plan, mem)? {
            Prep::Go => None,
            Prep::Refused => return Ok(false),
            Prep::Squashed(r) => {
                // (it stays in the queue, the warp fetching nothing behind it, and issues
                // again once its page is in)
                self.warps[slot as usize].as_mut().unwrap().iq[k].ready_at = r + 2;
                return Ok(true);
            }
            Prep::Faulting(f, r) => Some((f, r)),
        };
        let cfg_alu = self.lat.alu_latency as u64;
        let in_order = ordered(d.class, self.zorua.is_some());
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.mshr_need = None;
        hw.iq.remove(k);
        if e.replay.is_none() {
            self.iq_used -= 1;
        }
        if e.fixed {
            self.stats.replayed += 1;
        }
        if let Some((f, r)) = faulting {
            return Ok(self.issue_faulting(now, slot, &d, &e, &plan, f, r));
        }
        let ev = if in_order { exec::issue(&mut hw.w, &d.inst, d.exec_mask) } else { Event::Continue };
        // Its sources are released at operand read (the next cycle).
        self.hold_sources(now, slot, d.bslot, d.pc);
        let rec = self.execute(now, unit, slot, &d, &plan, mem);
        let global = plan.space == Some(Space::Global);
        if global && self.scheme.replays() {
            if let Some(id) = rec {
                self.track_global(now, id, slot, &d, &e, plan.last_check, None);
            }
        }
        // Fetch gating.
        let gated_behind = self.gated_behind(slot);
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if in_order {
            // Commit after operand read and execute; fetch the cycle after.
            hw.fetch_gated = false;
            hw.fetch_at = now + 1 + cfg_alu + 1;
        } else if mem_like(d.class) {
            match (self.scheme, global, rec) {
                (FaultScheme::WdCommit, true, Some(id)) => hw.wd_wait = Some(id),
                (FaultScheme::WdLastcheck, true, _) => {
                    hw.fetch_gated = false;
                    hw.fetch_at = plan.last_check + 1;
                }
                _ if gated_behind => {}
                _ => {
                    hw.fetch_gated = false;
                    hw.fetch_at = now;
                }
            }
        }
        let s = self.sched_of(slot);
        self.z_issued(now, s, slot, d.pc, &d.inst, ev);
        self.block_event(now, s, slot, d.bslot, ev);
        Ok(true)
    }

    /// [`Sm::decode`] for an issue-queue entry: its pc and the lanes active when it was
    /// fetched (its guard is read now).
    fn decode_entry(&self, slot: u32, pc: usize, active: u32) -> Decoded {
        let hw = self.warps[slot as usize].as_ref().unwrap();
        let bslot = hw.block;
        let info = self.info(bslot);
        let inst = info.launch.kernel.code[pc];
        let exec_mask = exec::guard_mask(&hw.w, &inst, active);
        Decoded { bslot, pc, inst, class: info.timing.class[pc], exec_mask, active_lanes: active.count_ones() as u64, write: info.timing.writes[pc].filter(|_| exec_mask != 0), addr_ops: None }
    }

    /// Fetch: the next warp (round robin) whose fetch is enabled brings up to `fetch_width`
    /// instructions into the issue queue, as space allows. A non-control instruction moves the
    /// warp's pc on as it is fetched (no speculation: nothing after a control-flow instruction
    /// is fetched before it commits, so the pc is always known); a control-flow instruction
    /// moves it at issue.
    fn ooo_fetch(&mut self, now: u64) -> bool {
        let cap = self.cfg.iq_entries;
        if self.iq_used >= cap {
            return false;
        }
        let n = self.warps.len() as u32;
        // (round robin from `fetch_rr`: the slots from it on, then those before; a warp whose
        // quiet time has not come cannot fetch, and is not looked at unless every cycle is
        // stepped)
        let start = (self.fetch_rr % n.max(1)) as usize;
        if self.lazy {
            self.warps.fetch_quiet.wake(now);
            #[cfg(debug_assertions)]
            for (slot, w) in self.warps.iter().enumerate() {
                if let Some(w) = w.as_ref().filter(|_| !self.warps.fetch_quiet.is_due(slot)) {
                    let blocked = w.w.state != WarpState::Ready || w.fetch_gated || w.frozen || w.wd_wait.is_some() || w.fetch_at > now || w.resume_at > now;
                    assert!(blocked, "SM warp slot {slot}: fetch quiet until {}, but it can fetch at {now}", self.warps.fetch_quiet.until(slot));
                }
            }
        }
        let (n, lazy) = (n as usize, self.lazy);
        for (lo, hi) in [(start, n), (0, start)] {
            let mut from = lo;
            loop {
                let Some(slot) = self.warps.fetch_quiet.next_look(!lazy, from, hi) else {
                    break;
                };
                from = slot + 1;
                let slot = slot as u32;
                let Some(w) = self.warps[slot as usize].as_ref() else {
                    if lazy {
                        self.warps.fetch_quiet.sleep(slot as usize, u64::MAX);
                    }
                    continue;
                };
                // (a warp that cannot fetch until it changes, or until a cycle, is not looked at
                // again before then)
                if w.w.state != WarpState::Ready || w.fetch_gated || w.frozen || w.wd_wait.is_some() {
                    if lazy {
                        self.warps.fetch_quiet.sleep(slot as usize, u64::MAX);
                    }
                    continue;
                }
                if w.fetch_at > now || w.resume_at > now {
                    if lazy {
                        self.warps.fetch_quiet.sleep(slot as usize, w.fetch_at.max(w.resume_at));
                    }
                    continue;
                }
                if !self.z_schedulable(slot) {
                    continue;
                }
                let blk = self.blocks[w.block as usize].as_ref().unwrap();
                if blk.restoring {
                    continue;
                }
                let info = blk.info.clone();
                let zorua = self.zorua.is_some();
                let width = self.cfg.fetch_width.min(cap - self.iq_used);
                let hw = self.warps[slot as usize].as_mut().unwrap();
                let mut fetched = 0;
                while fetched < width && hw.w.state == WarpState::Ready {
                    let Some(pc) = hw.w.pc() else { break };
                    let class = info.timing.class[pc as usize];
                    hw.iq.push_back(IqEntry { pc, active: hw.w.active_mask(), ready_at: now + 1, age: hw.age, replay: None, fixed: false, log: [0; 3], nlog: 0, staged: false });
                    hw.age = hw.age.wrapping_add(1);
                    fetched += 1;
                    if ordered(class, zorua) {
                        hw.fetch_gated = true;
                        break;
                    }
                    hw.w.advance();
                    if mem_like(class) {
                        hw.fetch_gated = true;
                        break;
                    }
                }
                self.iq_used += fetched;
                self.fetch_rr = (slot + 1) % n as u32;
                return fetched > 0;
            }
        }
        false
    }
}
