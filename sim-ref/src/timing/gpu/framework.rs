//! The GPU with the kernel scheduling framework as its block scheduler: building it (the
//! framework's model, its units or a co-simulated unit in the slot) and the SM driver's part
//! of a cycle (the framework's inputs, its block issues and preemptions, the context switches).

use super::*;

impl Gpu {
    /// Why the framework does not run on `cfg` with `mechanism`, if it does not: thread-block
    /// switching, or context switching under Zorua or WLM.
    pub fn framework_refusal(cfg: &GpuConfig, mechanism: Mechanism) -> Option<String> {
        if cfg.tb_switch.enabled {
            return Some("thread-block switching on faults (tb_switch) runs with the baseline dispatcher, not the scheduling framework (--policy)".into());
        }
        if cfg.alloc != crate::config::Alloc::Block && mechanism == Mechanism::ContextSwitch {
            return Some(format!(
                "--alloc {} runs with the scheduling framework's draining preemption (--preempt drain), not context switching: a block's registers and scratchpad live in the coordinator's physical sets and swap, which a save does not capture yet (docs/zorua.md, \"Under the scheduling framework\")",
                cfg.alloc.name()
            ));
        }
        None
    }

    /// A GPU whose blocks are scheduled by the kernel scheduling framework with `policy`,
    /// preempting by `mechanism`, for `procs` processes (Equal Spatial Sharing divides the SMs
    /// among them). The framework takes at most 16 SMs; on SMs of several kinds (HeteroCore's)
    /// a kernel's T_k is its occupancy on the largest kind, and an SM reports through the
    /// framework's `full` input when its own resources have no room for another block
    /// (`docs/heterocore.md`, "Under the scheduling framework").
    /// Its slot holds the framework's reference model; `Gpu::set_units` puts another unit of
    /// its interface there (its RTL, or the two in lockstep).
    pub fn with_framework(cfg: &GpuConfig, policy: Policy, mechanism: Mechanism, procs: usize) -> Result<Gpu, String> {
        if let Some(e) = Gpu::framework_refusal(cfg, mechanism) {
            return Err(e);
        }
        // (on SMs of several kinds T_k is the largest kind's, and each SM reports when its own
        // accounting has no room, as under Zorua)
        let room_from_sm = cfg.alloc != crate::config::Alloc::Block || cfg.sm.len() > 1;
        let params = Gpu::framework_params(cfg)?;
        let n = params.sms;
        let mut g = Gpu::new(cfg);
        let fw: Held<FwIn, FwOut> = Box::new(Framework::new(params, policy, mechanism));
        g.sched = BlockSched::Framework(Box::new(FwDriver {
            idle: fw.quiet(),
            fw,
            policy,
            mechanism,
            cmds: VecDeque::new(),
            done: VecDeque::new(),
            kernel_of: std::collections::HashMap::new(),
            saving_q: VecDeque::new(),
            gating: true,
            switching: vec![false; n],
            slots: cfg.sm.iter().map(|g| g.count * g.blocks).sum(),
            procs,
            preemptions: 0,
            restores: 0,
            retired: Vec::new(),
            room_from_sm,
            inbox: vec![VecDeque::new(); n],
            last: vec![None; n],
            full: 0,
            inbox_blocks: 0,
            full_cycles: 0,
            clocked: 0,
            slicing: None,
        }));
        Ok(g)
    }

    /// [`Gpu::with_framework`] with slicing inside the framework: where an SM's holder shares
    /// it with the other kernels that hold quotas, `ctl` (a slicing dispatcher as quota
    /// controller, [`Dispatcher::framework_quotas`]) partitions it (`docs/warped-slicer.md`,
    /// "Inside the scheduling framework"). The framework's quotas are brought to the
    /// controller's one launch a cycle through its `quota` input, which clocks that cycle (its
    /// clock is gated as without slicing); the controller keeps the GPU
    /// stepping every cycle while its counters sample. An SM reports when it has no room, as
    /// under Zorua, so that a block the quotas admit but the SM's own accounting does not
    /// waits in its inbox.
    pub fn with_framework_sliced(cfg: &GpuConfig, policy: Policy, mechanism: Mechanism, procs: usize, ctl: Box<dyn Dispatcher>) -> Result<Gpu, String> {
        let mut g = Gpu::with_framework(cfg, policy, mechanism, procs)?;
        let f = Framework::new(Gpu::framework_params(cfg)?, policy, mechanism).with_sharing();
        let d = g.fw_mut().expect("built with the framework");
        d.fw = Box::new(f);
        d.idle = d.fw.quiet();
        d.room_from_sm = true;
        d.slicing = Some(FwSlicing { ctl, want: Default::default(), held: Vec::new(), group: Vec::new(), admitted: Vec::new(), top: None });
        Ok(g)
    }

    /// The quota controller of slicing inside the framework, when it runs.
    pub fn quota_controller(&self) -> Option<&dyn Dispatcher> {
        Some(&*self.fw()?.slicing.as_ref()?.ctl)
    }

    /// Puts in the framework's slot its reference model with the policy engines given (RTL in
    /// the loop, in a co-simulation); `None` is the engine's model. The GPU runs under the
    /// framework ([`Gpu::with_framework`]), whose policy and mechanism the model takes.
    pub fn set_framework_engines(
        &mut self,
        dss: Option<Box<dyn mpgpu_spec::Unit<In = mpgpu_spec::units::sched::dss::In, Out = mpgpu_spec::units::sched::dss::Out>>>,
        prio: Option<Box<dyn mpgpu_spec::Unit<In = mpgpu_spec::units::sched::prio::In, Out = mpgpu_spec::units::sched::prio::Out>>>,
    ) -> Result<(), String> {
        let Some(d) = self.fw_mut() else { return Err("the policy engines are the scheduling framework's: the GPU runs under the framework (Gpu::with_framework)".into()) };
        let (policy, mechanism, sharing) = (d.policy, d.mechanism, d.slicing.is_some());
        let mut f = Framework::new(Gpu::framework_params(&self.cfg)?, policy, mechanism);
        // (under slicing inside the framework, sharing its SMs)
        if sharing {
            f = f.with_sharing();
        }
        if let Some(d) = dss {
            f.set_dss(d);
        }
        if let Some(p) = prio {
            f.set_prio(p);
        }
        let d = self.fw_mut().expect("checked above");
        d.fw = Box::new(f);
        d.idle = d.fw.quiet();
        Ok(())
    }

    /// The scheduling framework's parameters for `cfg`, or why the framework cannot run on it
    /// (it needs at most 16 SMs, at most 16 blocks on each; T_max is the largest kind's).
    /// Checked before any RTL is built for it.
    pub fn framework_params(cfg: &GpuConfig) -> Result<SchedParams, String> {
        let n = cfg.num_sms() as usize;
        if n > mpgpu_spec::units::sched::MAX_SMS {
            return Err(format!("the scheduling framework supports at most {} SMs; `{}` has {n}", mpgpu_spec::units::sched::MAX_SMS, cfg.name));
        }
        let tmax = cfg.sm.iter().map(|g| g.blocks).max().unwrap_or(0);
        if tmax as usize > MAX_TMAX {
            return Err(format!("the scheduling framework supports at most {MAX_TMAX} blocks per SM; `{}` has {tmax}", cfg.name));
        }
        SchedParams::new(n, tmax as usize)
    }

    /// Clocks the framework every cycle (`false`) instead of gating its clock while it is idle
    /// with no input (the default). The results are the same; a co-simulation then compares
    /// the framework's idle cycles too.
    pub fn set_framework_clock_gating(&mut self, on: bool) {
        if let Some(d) = self.fw_mut() {
            d.gating = on;
        }
    }

    /// The framework's reference model, when the GPU has one (not when its RTL runs alone).
    pub fn framework(&self) -> Option<Box<dyn std::ops::Deref<Target = Framework> + '_>> {
        self.fw().and_then(|d| d.fw.model()?.typed())
    }

    /// One cycle of the framework and its SM driver.
    pub(super) fn framework_cycle(&mut self, now: u64) -> Result<(), SimError> {
        let BlockSched::Framework(d) = &mut self.sched else { return Ok(()) };
        // Context switches: save every block that has drained.
        for sm in 0..self.sms.len() {
            if !d.switching[sm] {
                continue;
            }
            for b in self.sms[sm].quiescent_blocks() {
                // Into a slot of the launch's save area, then out through the memory system.
                let ctx = self.sms[sm].capture_block(now, b).unwrap();
                let l = &ctx.info.launch;
                let c = ctx.ctaid;
                let tb = (c[0] as u64 + l.grid[0] as u64 * (c[1] as u64 + l.grid[1] as u64 * c[2] as u64)) as u32;
                let ctx_err = |e: String| SimError::Cosim { cycle: now, detail: format!("saving block {tb} of launch {} on SM {sm}: {e}", ctx.info.id) };
                let words = crate::timing::context::saved_words(&ctx).map_err(ctx_err)?;
                let mark = self.gmem.alloc_mark();
                let kernel = *d.kernel_of.get(&ctx.info.id).ok_or_else(|| ctx_err("the framework never issued its launch".into()))?;
                let (slot, addr) = self.ctx.take_slot(&mut self.gmem, ctx.info.id, &l.kernel, d.slots, tb, &words).map_err(ctx_err)?;
                self.mem.mmu.adopt_system(mark, self.gmem.alloc_mark(), &self.gmem);
                let xfer = self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, XferKind::Save, addr, words.len(), now);
                d.saving_q.push_back((xfer, TbSaved { sm: sm as u8, kernel, tb, slot: slot as u8 }));
            }
            if self.sms[sm].is_empty() {
                d.switching[sm] = false;
            }
        }
        let saved_now = match d.saving_q.front() {
            Some(&(x, saved)) if self.ctx.xfer(x).is_some_and(|x| x.done.is_some()) => {
                d.saving_q.pop_front();
                self.ctx.end_xfer(x);
                Some(saved)
            }
            _ => None,
        };
        // Under Zorua (or WLM) a block waiting in an inbox goes in once its SM has room, oldest
        // first; then each SM reports whether it has room for another block of the launch it
        // last got (an SM that is empty has room for any).
        let mut full = 0u16;
        if d.room_from_sm {
            for sm in 0..self.sms.len() {
                while let Some(&b) = d.inbox[sm].front() {
                    let launch = match b {
                        Inboxed::New(l, _) | Inboxed::Restore { launch: l, .. } => l,
                    };
                    let info = self.launches[launch].info.clone();
                    if !self.sms[sm].fits(&info.launch) {
                        break;
                    }
                    d.inbox[sm].pop_front();
                    match b {
                        Inboxed::New(_, tb) => self.sms[sm].place_block(now, &info, tb),
                        Inboxed::Restore { tb, slot, .. } => {
                            let (addr, words) = self.ctx.saved_slot(launch, tb, slot).map_err(|e| SimError::Cosim { cycle: now, detail: format!("restoring block {tb} of launch {launch} from save slot {slot}: {e}") })?;
                            Gpu::restore_into(&mut self.sms[sm], &mut self.ctx, &mut self.mem, &self.gmem, self.cfg.sm[0].l1_line, now, info, tb, slot, addr, words)?;
                        }
                    }
                }
                let room = d.inbox[sm].is_empty() && (self.sms[sm].is_empty() || d.last[sm].is_none_or(|l| self.sms[sm].fits(&self.launches[l].info.launch)));
                if !room {
                    full |= 1 << sm;
                }
            }
        }
        // (slicing inside the framework: one launch's quotas written, if the framework's differ
        // from the controller's)
        let quota = d.slicing.as_ref().and_then(|s| s.next_write());
        let input = FwIn { cmd: d.cmds.front().copied(), tb_done: d.done.pop_front(), tb_saved: saved_now, full, quota };
        // Clock gating: an idle framework whose inputs are those of its last clocked cycle,
        // with no command, completion, save or quota among them, would change nothing. (An
        // SM's `full` bit only masks SMs out of the issue: with the same bits the edge after an
        // idle one is idle again; a bit that changes clocks the framework, so an SM unmasked is
        // found ready. Under Zorua and slicing the SMs report no room for most cycles: this
        // gates those cycles too.)
        d.full_cycles += (full != 0) as u64;
        if d.gating && d.idle && input == (FwIn { full: d.full, ..FwIn::default() }) {
            if let Some(sl) = &mut d.slicing {
                sl.update(now, None, None, &DispatchView { sms: &self.sms, launches: &self.launches });
            }
            return Ok(());
        }
        d.full = full;
        d.clocked += 1;
        d.fw.at_cycle(now);
        let out = d.fw.outputs(&input);
        d.fw.clock(&input);
        d.idle = d.fw.quiet();
        if let Some(detail) = d.fw.halted() {
            return Err(SimError::Cosim { cycle: now, detail });
        }
        let taken = if out.cmd_taken { d.cmds.pop_front() } else { None };
        if let (Some(w), Some(sl)) = (quota, &mut d.slicing) {
            sl.wrote(w);
        }
        if let Some(h) = out.retired {
            d.retired.push(h);
        }
        // The framework's outputs drive the GPU; with its RTL alone nothing else checks them, so
        // one the GPU cannot carry out stops the run with an error naming it.
        let bad = |detail: String| Err(SimError::Cosim { cycle: now, detail });
        if let Some(t) = out.issue {
            let sm = t.sm as usize;
            if sm >= self.sms.len() {
                return bad(format!("the framework issued block {} of launch {} to SM {sm}; the GPU has {}", t.tb, t.handle, self.sms.len()));
            }
            if let Some(sl) = &mut d.slicing {
                sl.ctl.block_placed(t.handle as usize, sm, &DispatchView { sms: &self.sms, launches: &self.launches });
            }
            // (a launch keeps its KSRT entry from its admission to its retirement)
            match *d.kernel_of.entry(t.handle as usize).or_insert(t.kernel) {
                k if k == t.kernel => {}
                k => return bad(format!("the framework issued block {} of launch {} as kernel {}; its blocks were issued as kernel {k}", t.tb, t.handle, t.kernel)),
            }
            if t.restore {
                let launch = t.handle as usize;
                let slot = t.slot as u32;
                let (addr, words) = match self.ctx.saved_slot(launch, t.tb, slot) {
                    Ok(at) => at,
                    Err(e) => return bad(format!("the framework restored block {} of launch {} from save slot {slot}: {e}", t.tb, t.handle)),
                };
                d.restores += 1;
                let info = self.launches[launch].info.clone();
                // (under Zorua, or slicing inside the framework, a block the SM has no room
                // for yet waits in its inbox, its context in its save slot)
                let fits = self.sms[sm].fits(&info.launch);
                if d.room_from_sm && (!d.inbox[sm].is_empty() || !fits) {
                    d.inbox[sm].push_back(Inboxed::Restore { launch, tb: t.tb, slot });
                    d.inbox_blocks += 1;
                } else if !fits {
                    return bad(format!("the framework restored block {} of launch {} onto SM {sm}, which has no room", t.tb, t.handle));
                } else {
                    Gpu::restore_into(&mut self.sms[sm], &mut self.ctx, &mut self.mem, &self.gmem, self.cfg.sm[0].l1_line, now, info, t.tb, slot, addr, words)?;
                }
            } else {
                let Some(ls) = self.launches.get_mut(t.handle as usize) else {
                    return bad(format!("the framework issued a block of launch {}, which does not exist", t.handle));
                };
                if ls.retired || t.tb as u64 >= ls.blocks || ls.next_block >= ls.blocks {
                    return bad(format!("the framework issued block {} of launch {} ({} blocks, {} issued{})", t.tb, t.handle, ls.blocks, ls.next_block, if ls.retired { ", retired" } else { "" }));
                }
                // (under Zorua the SM's report of room is a few cycles old by the issue: a block
                // that does not fit yet waits in the SM's inbox)
                let fits = self.sms[sm].fits(&ls.info.launch);
                let wait = d.room_from_sm && (!d.inbox[sm].is_empty() || !fits);
                if !wait && !fits {
                    return bad(format!("the framework issued block {} of launch {} onto SM {sm}, which has no room", t.tb, t.handle));
                }
                ls.next_block += 1;
                ls.first_block_at.get_or_insert(now);
                let info = ls.info.clone();
                if d.room_from_sm {
                    d.last[sm] = Some(t.handle as usize);
                }
                if wait {
                    d.inbox[sm].push_back(Inboxed::New(t.handle as usize, t.tb as u64));
                    d.inbox_blocks += 1;
                } else {
                    self.sms[sm].place_block(now, &info, t.tb as u64);
                }
            }
        }
        // A preemption after the block issued in the same cycle: the issue's outputs are
        // registered, so the block picked before a reservation of its SM may arrive with the
        // preemption, and is then saved with the SM's other blocks.
        if let Some(sm) = out.preempt {
            if sm as usize >= self.sms.len() {
                return bad(format!("the framework preempted SM {sm}; the GPU has {}", self.sms.len()));
            }
            d.preemptions += 1;
            if d.mechanism == Mechanism::ContextSwitch {
                d.switching[sm as usize] = true;
                for b in self.sms[sm as usize].blocks_resident() {
                    self.sms[sm as usize].freeze_block(b);
                }
            }
        }
        // Slicing inside the framework: the controller partitions the admitted launches of the
        // highest priority among them (it hears of those that join or leave that group), and
        // its quotas, when they changed, are written to the framework from its next cycle on,
        // one launch a cycle.
        if let Some(sl) = &mut d.slicing {
            sl.update(now, taken, out.retired, &DispatchView { sms: &self.sms, launches: &self.launches });
        }
        Ok(())
    }

    /// Restores block `tb` of a launch (`info`) on `sm` from its save slot (`addr`, `words`):
    /// its context loaded, the block placed, the transfer that brings its state back started.
    #[allow(clippy::too_many_arguments)]
    fn restore_into(sm: &mut crate::timing::sm::Sm, ctx: &mut crate::timing::context::ContextUnit, mem: &mut MemSys, gmem: &GlobalMem, line: u32, now: u64, info: Arc<LaunchInfo>, tb: u32, slot: u32, addr: u32, words: usize) -> Result<(), SimError> {
        let launch = info.id;
        let template = crate::timing::sm::BlockContext { ctaid: info.launch.block_coords(tb as u64), info, shared: Vec::new(), warps: Vec::new(), queued: Vec::new(), ages: Vec::new() };
        let bctx = crate::timing::context::load(gmem, addr, words, &template).map_err(SimError::BadLaunch)?;
        let bslot = sm.restore_block_at(now, bctx, true);
        let kind = XferKind::Restore { bslot, slot: Some((launch, slot)), region: None };
        ctx.start_xfer(mem, line, sm.id as usize, kind, addr, words, now);
        Ok(())
    }

    /// Slicing inside the framework: the quota controller's units, clocked with the SMs
    /// ([`Dispatcher::observe`]) after their cycle.
    pub(super) fn framework_observe(&mut self, now: u64) -> Result<(), SimError> {
        let BlockSched::Framework(d) = &mut self.sched else { return Ok(()) };
        let Some(sl) = &mut d.slicing else { return Ok(()) };
        let view = DispatchView { sms: &self.sms, launches: &self.launches };
        sl.ctl.observe(now, &view).map_err(|detail| SimError::Cosim { cycle: now, detail })?;
        Ok(())
    }
}

impl FwSlicing {
    /// After the framework's cycle (or a gated one): the controller hears of the launches
    /// that joined or left the group it partitions (the admitted launches of the highest
    /// priority among them), and gives its quotas when they changed; the framework's are
    /// brought to them one launch per cycle ([`FwSlicing::next_write`]).
    fn update(&mut self, now: u64, taken: Option<KernelCmd>, retired: Option<u16>, view: &DispatchView) {
        if let Some(c) = taken {
            self.admitted.push((c.handle as usize, c.priority));
            self.held.push((c.handle, None));
        }
        if let Some(h) = retired {
            self.admitted.retain(|a| a.0 != h as usize);
            self.held.retain(|a| a.0 != h);
        }
        let top = self.admitted.iter().map(|a| a.1).max();
        let group: Vec<usize> = self.admitted.iter().filter(|a| Some(a.1) == top).map(|a| a.0).collect();
        // (a group of another priority: its launches are not those of the last one)
        if top != self.top {
            self.top = top;
            self.ctl.framework_regroup();
        }
        for &l in self.group.iter().filter(|l| !group.contains(l)) {
            self.ctl.launch_done(now, l);
        }
        for &l in group.iter().filter(|l| !self.group.contains(l)) {
            self.ctl.launch_ready(now, l, view);
        }
        self.group = group;
        if let Some(q) = self.ctl.framework_quotas(now, view) {
            // (a quota above what the port carries is T_k's: the framework takes it as T_k)
            let max = (1u32 << mpgpu_spec::units::sched::fw::QUOTA_BITS) - 1;
            self.want = q.into_iter().map(|(l, v)| (l as u16, std::array::from_fn(|s| v.get(s).map_or(0, |&x| x.min(max) as u8)))).collect();
        }
    }

    /// The write that brings the framework's quotas one launch nearer the controller's: a
    /// launch's quotas taken away first (so that kernels of two priorities never hold quotas
    /// at once: a new group's are written after the old group's are gone), then one set, in
    /// admission order.
    pub(super) fn next_write(&self) -> Option<QuotaWrite> {
        let clear = self.held.iter().find(|(h, q)| q.is_some() && !self.want.contains_key(h)).map(|&(handle, _)| QuotaWrite { handle, quotas: None });
        clear.or_else(|| self.held.iter().find(|(h, q)| self.want.get(h).is_some_and(|w| q.as_ref() != Some(w))).map(|&(handle, _)| QuotaWrite { handle, quotas: self.want.get(&handle).copied() }))
    }

    /// The framework took write `w` at its last edge.
    fn wrote(&mut self, w: QuotaWrite) {
        if let Some(e) = self.held.iter_mut().find(|e| e.0 == w.handle) {
            e.1 = w.quotas;
        }
    }
}
