//! The host side: processes, their programs and the launches they submit through their
//! command buffers (a process's launches in order), checked and handed to the block scheduler.

use super::*;

impl Gpu {
    /// Adds the processes of a workload (validated already).
    pub fn add_workload(&mut self, w: &Workload) -> Result<(), SimError> {
        for p in &w.processes {
            // (each launch's kernels placed once, under a register cap or where the search puts
            // them: a cap that a kernel cannot be placed under, or whose placement no SM can
            // hold, is refused now, and every launch of the process reuses the placement)
            let mut launches = Vec::new();
            for l in &p.launches {
                let bench = workload::find(&l.kernel).map_err(SimError::BadLaunch)?;
                let placed = if let Some(alloc) = self.cfg.compile.budget() {
                    let ks = bench.kernels().map_err(|e| SimError::BadLaunch(e.to_string()))?;
                    Some(crate::library::Spec { alloc: Some(alloc), ..Default::default() }.apply(&bench, ks).map_err(|e| SimError::BadLaunch(format!("process `{}`: under a register cap of {}: {e}", p.name, alloc.regs)))?.0)
                } else if self.cfg.compile.auto {
                    let ks = bench.kernels().map_err(|e| SimError::BadLaunch(e.to_string()))?;
                    Some(ks.0.iter().map(|k| Arc::new(crate::unified::search::auto(k, &self.cfg.sm[0]))).collect())
                } else {
                    None
                };
                for k in placed.iter().flatten() {
                    if let Some(g) = self.cfg.sm.iter().find(|g| g.occupancy(&k.footprint()).blocks == 0) {
                        return Err(SimError::BadLaunch(format!(
                            "process `{}`: kernel `{}` compiled under the register cap takes {} registers a thread, {} B of shared memory a block and {} threads: an SM of {} registers and {} B holds no block of it",
                            p.name, k.name, k.regs, k.shared_bytes, k.threads, g.registers, g.shared_bytes
                        )));
                    }
                }
                launches.push((bench, l.size.unwrap_or(bench.default_size), l.seed, placed.map(Arc::new)));
            }
            let mut jobs = Vec::new();
            for _ in 0..p.repeat {
                jobs.extend(launches.iter().map(|(bench, size, seed, placed)| Job::Library { bench: *bench, size: *size, seed: *seed, placed: placed.clone() }));
            }
            self.push_process(&p.name, p.arrival, p.priority, jobs);
            let ps = self.procs.last_mut().unwrap();
            ps.tokens = p.tokens;
            ps.replay = p.replay;
            ps.target = p.insts;
            if p.insts.is_some() && (w.min_runs.is_some() || !p.replay) {
                return Err(SimError::BadLaunch(format!("process `{}`: an instruction target (`insts`) replays the process until it halts, which `min_runs` and `replay = false` contradict", p.name)));
            }
            if p.insts.is_some() && self.fw().is_some() {
                return Err(SimError::BadLaunch(format!(
                    "process `{}`: an instruction target (`insts`) halts a process by dropping its blocks not yet issued, which the scheduling framework's block scheduler does not do: run it with a baseline dispatcher (no --policy)",
                    p.name
                )));
            }
        }
        self.targets = self.procs.iter().any(|p| p.target.is_some());
        self.min_runs = w.min_runs;
        Ok(())
    }

    /// Adds a process running the given host programs in order (for experiments and tests
    /// with kernels outside the library).
    pub fn add_process(&mut self, name: &str, arrival: u64, priority: u32, programs: Vec<(String, Box<dyn Program>)>) {
        let jobs = programs.into_iter().map(|(name, p)| Job::Custom { name, program: Some(p) }).collect();
        self.push_process(name, arrival, priority, jobs);
    }

    fn push_process(&mut self, name: &str, arrival: u64, priority: u32, jobs: Vec<Job>) {
        {
            self.procs.push(ProcState {
                name: name.to_string(),
                tokens: None,
                arrival,
                priority,
                jobs,
                next_job: 0,
                program: None,
                started: false,
                end: None,
                launches: Vec::new(),
                failures: Vec::new(),
                programs_done: 0,
                run_start: arrival,
                runs: Vec::new(),
                replay: true,
                target: None,
                halted: None,
                dropped: 0,
            });
        }
        let n = self.procs.len();
        self.sms.iter_mut().for_each(|s| s.insts_by_process.resize(n, 0));
    }

    /// Starts the process's next host program, or ends the process.
    pub(super) fn next_program(&mut self, p: usize) -> Result<(), SimError> {
        if self.procs[p].next_job == self.procs[p].jobs.len() {
            // A run completed: replayed while some process has completed fewer than
            // `min_runs` (itself included), ended otherwise; a process that is not replayed
            // ends after its one run.
            // A process with an instruction target is replayed until it halts.
            let now = self.now;
            let ps = &mut self.procs[p];
            ps.runs.push(now - ps.run_start);
            ps.end = Some(now);
            if ps.target.is_none() {
                let Some(n) = self.min_runs else { return Ok(()) };
                if !ps.replay || self.procs.iter().all(|q| q.complete(n)) {
                    return Ok(());
                }
            }
            let ps = &mut self.procs[p];
            if ps.runs.len() >= crate::workload::MAX_RUNS as usize {
                let why = match (ps.target, self.min_runs) {
                    (Some(t), _) => format!("before it issued its {t} warp-instructions (`insts`): a workload may replay a process at most {} times; give a smaller target", crate::workload::MAX_RUNS),
                    (None, n) => format!("before every process completed {} (`min_runs`): a workload may replay a process at most {} times; pair processes of closer run times", n.unwrap_or(1), crate::workload::MAX_RUNS),
                };
                return Err(SimError::BadLaunch(format!(
                    "process `{}` completed {} runs {why}",
                    ps.name,
                    ps.runs.len()
                )));
            }
            if ps.jobs.iter().any(|j| matches!(j, Job::Custom { .. })) {
                return Err(SimError::BadLaunch(format!("process `{}`: a process of host programs built by the caller runs once (`min_runs` replays library applications)", ps.name)));
            }
            ps.next_job = 0;
            ps.run_start = now;
        }
        let ps = &mut self.procs[p];
        let job = &mut ps.jobs[ps.next_job];
        ps.next_job += 1;
        let mut prog = match job {
            Job::Library { bench, size, seed, placed: Some(placed) } => bench.program_placed(*size, *seed, |k| placed.iter().find(|p| p.name == k.name).map(|p| (**p).clone()).ok_or_else(|| format!("kernel `{}` was not placed", k.name))).map_err(SimError::BadLaunch)?,
            Job::Library { bench, size, seed, placed: None } => bench.program(*size, *seed).map_err(SimError::BadLaunch)?,
            Job::Custom { program, .. } => program.take().expect("a custom program runs once"),
        };
        if p >= MAX_PROCESSES {
            return Err(SimError::BadLaunch(format!("process `{}`: the model takes at most {MAX_PROCESSES} processes (one address space each)", self.procs[p].name)));
        }
        // The pages the program allocates are its process's (with demand paging, in host
        // memory until they fault in).
        let mark = self.gmem.alloc_mark();
        prog.setup(&mut self.gmem);
        self.mem.mmu.adopt(p as u16, mark, self.gmem.alloc_mark(), &self.gmem);
        self.procs[p].program = Some(prog);
        self.next_launch(p)
    }

    /// Submits the current program's next launch, or finishes the program.
    pub(super) fn next_launch(&mut self, p: usize) -> Result<(), SimError> {
        if self.procs[p].halted.is_some() {
            // (its last launch drained after the halt: nothing follows)
            return Ok(());
        }
        let l = self.procs[p].program.as_mut().unwrap().next_launch(&self.gmem);
        match l {
            Some(l) => self.submit(p, l),
            None => {
                let prog = self.procs[p].program.take().unwrap();
                if let Err(e) = prog.verify(&self.gmem) {
                    let job = &self.procs[p].jobs[self.procs[p].next_job - 1];
                    let msg = format!("{}: {e}", job.describe());
                    self.procs[p].failures.push(msg);
                }
                self.procs[p].programs_done += 1;
                self.next_program(p)
            }
        }
    }

    fn submit(&mut self, p: usize, l: Launch) -> Result<(), SimError> {
        l.validate().map_err(SimError::BadLaunch)?;
        let mut l = l;
        let f = l.kernel.footprint();
        if self.cfg.alloc != crate::config::Alloc::Block {
            l = self.zorua_launch(p, l)?;
        }
        if self.cfg.alloc != crate::config::Alloc::Zorua && !self.sms.iter().any(|s| s.config().occupancy(&f).blocks > 0) {
            return Err(SimError::BadLaunch(format!(
                "kernel `{}` of process `{}`: one block ({} threads, {} registers/thread, {} B shared) fits on no SM of `{}`",
                l.kernel.name, self.procs[p].name, f.threads_per_block, f.regs_per_thread, f.shared_per_block, self.cfg.name
            )));
        }
        // (the framework may give any SM to the kernel: a block of it must fit on every kind)
        if let (true, Some(s)) = (self.fw().is_some(), self.cfg.sm.iter().find(|s| self.cfg.alloc != crate::config::Alloc::Zorua && s.occupancy(&f).blocks == 0)) {
            return Err(SimError::BadLaunch(format!(
                "kernel `{}` of process `{}`: one block ({} threads, {} registers/thread, {} B shared) does not fit on `{}`'s SMs of {} threads, {} registers, {} B shared, any of which the scheduling framework may give it",
                l.kernel.name, self.procs[p].name, f.threads_per_block, f.regs_per_thread, f.shared_per_block, self.cfg.name, s.threads, s.registers, s.shared_bytes
            )));
        }
        let id = self.launches.len();
        let blocks = l.num_blocks();
        if self.fw().is_some() && (id > u16::MAX as usize || blocks > MAX_GRID_BLOCKS) {
            return Err(SimError::BadLaunch(format!(
                "kernel `{}` of process `{}`: the scheduling framework takes at most {} launches of at most {MAX_GRID_BLOCKS} blocks (this is launch {id} with {blocks} blocks)",
                l.kernel.name, self.procs[p].name, u16::MAX as usize + 1
            )));
        }
        let timing = KernelTiming::new(&l.kernel);
        self.launches.push(LaunchState {
            info: Arc::new(LaunchInfo { id, process: p as u16, launch: l, timing }),
            process: p,
            priority: self.procs[p].priority,
            ready_at: self.now,
            first_block_at: None,
            end_at: None,
            next_block: 0,
            blocks,
            done_blocks: 0,
            retired: false,
        });
        self.procs[p].launches.push(id);
        if let BlockSched::Framework(d) = &mut self.sched {
            // (T_k: the occupancy rule under the block allocation; under Zorua the blocks whose
            // warps all have physical slots, the SM's `full` report deciding when; on SMs of
            // several kinds the largest kind's, each SM's `full` report holding its own)
            let tk = self.sms.iter().map(|s| s.zorua_block_limit(f.threads_per_block.div_ceil(32)).map_or_else(|| s.config().occupancy(&f).blocks, |n| n.min(MAX_TMAX as u32))).max().unwrap_or(0);
            let order = self.procs[..p].len();
            let equal = crate::units::dss::equal_share_tokens(self.sms.len(), d.procs, order);
            let tokens = if d.policy == Policy::Dss { self.procs[p].tokens.unwrap_or(equal) } else { equal };
            let priority = self.procs[p].priority.min(15) as u8;
            d.cmds.push_back(KernelCmd { handle: id as u16, tbs: blocks as u32, tk: tk as u8, priority, tokens });
            return Ok(());
        }
        let view = DispatchView { sms: &self.sms, launches: &self.launches };
        if let BlockSched::Baseline { d, dirty } = &mut self.sched {
            d.launch_ready(self.now, id, &view);
            *dirty = true;
        }
        Ok(())
    }

    /// A launch under Zorua: within the coordinator's logical limits, and with phase
    /// specifiers it can allocate by: the kernel's own when they are sound
    /// ([`crate::phases::sound`]), else the compiler pass's (docs/zorua.md, "Which specifiers").
    fn zorua_launch(&mut self, p: usize, mut l: Launch) -> Result<Launch, SimError> {
        use mpgpu_spec::units::zorua::{MAX_LWARPS, REG_SETS, SET_REGS, SMEM_SETS, SMEM_SET_BYTES};
        let k = &l.kernel;
        let bad = |what: String| Err(SimError::BadLaunch(format!("kernel `{}` of process `{}` under --alloc zorua: {what}", k.name, self.procs[p].name)));
        if k.warps() as usize > MAX_LWARPS {
            return bad(format!("{} warps per block, more than the {MAX_LWARPS} logical warps of an SM", k.warps()));
        }
        let max_regs = REG_SETS as u32 * SET_REGS;
        let max_smem = SMEM_SETS as u32 * SMEM_SET_BYTES;
        if k.regs > max_regs || k.shared_bytes > max_smem {
            return bad(format!("{} registers per thread and {} B of scratchpad per block; the mapping tables take at most {max_regs} and {max_smem}", k.regs, k.shared_bytes));
        }
        if self.cfg.alloc == crate::config::Alloc::Zorua && crate::phases::sound(k).is_err() {
            l.kernel = Arc::new(if self.cfg.zorua.renumber { crate::phases::with_renumbered_phases(k) } else { crate::phases::with_placed_phases(k) });
        }
        Ok(l)
    }

    /// Processes with an instruction target that reached it in this cycle halt: nothing of
    /// theirs is submitted again, the blocks of their launches the dispatcher has not issued
    /// end as it issues them, without running (so that every dispatcher, and the slice table,
    /// sees their launches end as launches always end), and those on the SMs run to their end.
    /// Their partial run is not verified.
    pub(super) fn halt_check(&mut self, now: u64) {
        for p in 0..self.procs.len() {
            let ps = &self.procs[p];
            let Some(t) = ps.target.filter(|_| ps.halted.is_none() && ps.started) else { continue };
            let n: u64 = self.sms.iter().map(|s| s.insts_by_process.get(p).copied().unwrap_or(0)).sum();
            if n >= t {
                let ps = &mut self.procs[p];
                ps.halted = Some(n);
                ps.end = Some(now);
                ps.program = None;
                if let BlockSched::Baseline { dirty, .. } = &mut self.sched {
                    *dirty = true;
                }
            }
        }
    }

    /// Every process finished (one with an instruction target: halted), or, replaying, every
    /// one completed `min_runs` runs.
    pub(super) fn all_done(&self) -> bool {
        match self.min_runs {
            None => self.procs.iter().all(|p| p.end.is_some() && (p.target.is_none() || p.halted.is_some())),
            Some(n) => self.procs.iter().all(|p| p.complete(n)),
        }
    }

    pub(super) fn next_arrival(&self) -> u64 {
        self.procs.iter().filter(|p| !p.started).map(|p| p.arrival).min().unwrap_or(u64::MAX)
    }
}

impl ProcState {
    /// Done as a replayed workload counts it: `n` runs completed, or its one run if it is not
    /// replayed.
    fn complete(&self, n: u32) -> bool {
        self.runs.len() >= n as usize || (!self.replay && !self.runs.is_empty())
    }
}
