//! Soak: random multiprogrammed workloads (`mpgpu_ref::soakgen`), each co-simulated with a
//! unit's RTL in the loop (any unit of `UnitKind::ALL`): the framework's (or its engine's)
//! under every policy and preemption mechanism, a fault-handling block's on every SM under
//! faults that really happen, Zorua's coordinator's under the baseline dispatcher and the
//! framework, Warped-Slicer's and the slice table's under their slicing policies, until the
//! first mismatch or failure. A failing workload is written out as a
//! TOML file that reproduces it with `mpgpu cosim`.

use crate::cosim::{run_with, CosimOptions, UnitKind};
use crate::entry::GpuKind;
use crate::lockstep::Mismatch;
use crate::backend::Backend;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::soakgen::{random_workload, SoakParams};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use crate::broken::Broken;
use std::path::{Path, PathBuf};

pub use crate::runs::{Run, MECHANISMS, POLICIES, SLICINGS};

/// A soak's settings.
#[derive(Clone, Debug)]
pub struct Soak {
    pub seed: u64,
    pub workloads: u64,
    pub config: GpuConfig,
    /// How the command line named the configuration (a preset or a file), for the command
    /// that reproduces a failure.
    pub config_arg: String,
    pub backend: Backend,
    /// The block in the loop: the framework (`Sched`, under every policy and mechanism) or a
    /// per-SM block (`Rq`, `Oplog`, `RqOl`: each workload twice, under injected faults and
    /// under demand paging with thread-block switching; the baseline dispatcher).
    pub unit: UnitKind,
    /// Test-only broken variants of the blocks in the loop, by block (as
    /// [`CosimOptions::broken`]).
    pub broken: Broken,
    pub params: SoakParams,
    /// Where a failing workload is written.
    pub out: PathBuf,
    /// Slicing inside the framework with this quota controller: every run under the
    /// framework's model, each policy and mechanism in turn (`mpgpu soak --slicing`).
    pub sliced: Option<mpgpu_ref::timing::slicer::Slicing>,
}

/// Why a soak stopped early.
#[derive(Clone, Debug)]
pub struct SoakFailure {
    pub index: u64,
    pub policy: Policy,
    pub mechanism: Mechanism,
    /// For a per-SM block, the run's faults (`--faults`, `--inject` or paging options).
    pub variant: String,
    pub mismatch: Option<Mismatch>,
    /// The error, when the run failed without a mismatch (an output that did not verify, a
    /// stuck run).
    pub error: Option<String>,
    /// The workload file that reproduces it.
    pub workload: PathBuf,
    /// The command that reproduces it.
    pub command: String,
}

/// What a soak did.
#[derive(Clone, Debug, Default)]
pub struct SoakReport {
    pub workloads: u64,
    pub runs: u64,
    /// Co-simulated cycles (clocked and compared) and GPU cycles over all runs.
    pub cycles_checked: u64,
    pub gpu_cycles: u64,
    pub preemptions: u64,
    /// Per-SM blocks: faulted instructions, replays and thread-block switches over all runs.
    pub faulted: u64,
    pub replayed: u64,
    pub switched_out: u64,
    /// Steering: decisions, the decisions that moved SMs, SMs drained and context-switched.
    pub steer_decisions: u64,
    pub steer_moves: u64,
    pub steer_drains: u64,
    pub steer_switches: u64,
    pub failure: Option<SoakFailure>,
}

impl Soak {
    /// Runs the soak on one thread; `progress(workloads done, runs done, report so far)` after
    /// every run.
    pub fn run(&self, progress: &mut (dyn FnMut(u64, u64, &SoakReport) + Send)) -> Result<SoakReport, String> {
        self.run_on(1, progress)
    }

    /// Runs the soak on `workers` threads: the runs are taken in order (workload by workload,
    /// each workload's runs in turn) and their results folded into the report in that order,
    /// so that the report, the failure it stops at and `progress`'s calls are those of one
    /// thread whatever `workers` is. Past a failure no further run starts; the runs after it
    /// that were under way are dropped. The runs held between taking and folding are at most
    /// a few per worker.
    pub fn run_on(&self, workers: usize, progress: &mut (dyn FnMut(u64, u64, &SoakReport) + Send)) -> Result<SoakReport, String> {
        use std::collections::BTreeMap;
        use std::sync::{Arc, Mutex};
        type Job = Result<(Run, Arc<mpgpu_ref::workload::Workload>), String>;
        /// The runs still to take: the current workload's, then the next workload's.
        struct Next {
            index: u64,
            runs: std::vec::IntoIter<Run>,
            workload: Option<Arc<mpgpu_ref::workload::Workload>>,
            seq: u64,
        }
        /// A run taken: its place in the order, its workload, whether it is that workload's
        /// last, and the run (or why the workload's runs could not be made).
        struct Task {
            seq: u64,
            index: u64,
            last: bool,
            job: Job,
        }
        /// A run done, waiting for the runs before it to be folded.
        struct Done {
            index: u64,
            last: bool,
            run: Option<Run>,
            scratch: PathBuf,
            outcome: Result<crate::cosim::CosimReport, String>,
        }
        struct Fold<'a> {
            rep: SoakReport,
            next_seq: u64,
            done: BTreeMap<u64, Done>,
            /// The first run, in order, that failed or could not be made: none after it starts.
            stop: Option<u64>,
            error: Option<String>,
            progress: &'a mut (dyn FnMut(u64, u64, &SoakReport) + Send),
        }
        let next = Mutex::new(Next { index: 0, runs: Vec::new().into_iter(), workload: None, seq: 0 });
        let fold = Mutex::new(Fold { rep: SoakReport::default(), next_seq: 0, done: BTreeMap::new(), stop: None, error: None, progress });
        let take = || -> Option<Task> {
            let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if fold.lock().unwrap_or_else(|e| e.into_inner()).stop.is_some_and(|s| n.seq > s) {
                    return None;
                }
                let seq = n.seq;
                if let Some(run) = n.runs.next() {
                    n.seq += 1;
                    let last = n.runs.len() == 0;
                    let w = n.workload.clone().expect("a workload with its runs");
                    return Some(Task { seq, index: n.index - 1, last, job: Ok((run, w)) });
                }
                if n.index >= self.workloads {
                    return None;
                }
                let index = n.index;
                n.index += 1;
                match self.runs_of(index) {
                    Ok(runs) => {
                        n.runs = runs.into_iter();
                        n.workload = Some(Arc::new(random_workload(self.seed, index, &self.params)));
                    }
                    Err(e) => {
                        // (the soak stops here, as at a failure; nothing after it is taken)
                        n.seq += 1;
                        n.index = self.workloads;
                        return Some(Task { seq, index, last: true, job: Err(e) });
                    }
                }
            }
        };
        let work = || {
            while let Some(t) = take() {
                let scratch = self.out.join(format!(".soak-run-{}", t.seq));
                let (run, outcome) = match t.job {
                    Ok((run, w)) => {
                        let o = CosimOptions { mismatch_vcd: scratch.join("mismatch.vcd"), ..self.options(&run) };
                        let outcome = run_with(&run.cfg, &w, &o);
                        (Some(run), outcome)
                    }
                    Err(e) => (None, Err(e)),
                };
                let mut f = fold.lock().unwrap_or_else(|e| e.into_inner());
                f.done.insert(t.seq, Done { index: t.index, last: t.last, run, scratch, outcome });
                // Fold every run now in order.
                loop {
                    let seq = f.next_seq;
                    let Some(d) = f.done.remove(&seq) else { break };
                    f.next_seq += 1;
                    if f.stop.is_some_and(|s| seq > s) {
                        let _ = std::fs::remove_dir_all(&d.scratch);
                        continue;
                    }
                    let folded = self.fold(&mut f.rep, d.index, d.last, d.run.as_ref(), &d.scratch, d.outcome);
                    let _ = std::fs::remove_dir_all(&d.scratch);
                    if let Err(e) = folded {
                        f.error = Some(e);
                        f.stop = Some(seq);
                        continue;
                    }
                    if f.rep.failure.is_some() {
                        f.stop = Some(seq);
                    }
                    let (w, r) = (if f.rep.failure.is_some() { d.index + 1 } else { d.index }, f.rep.runs);
                    let Fold { rep, progress, .. } = &mut *f;
                    progress(w, r, rep);
                }
            }
        };
        std::thread::scope(|sc| {
            let hs: Vec<_> = (0..workers.max(1)).map(|_| std::thread::Builder::new().stack_size(64 << 20).spawn_scoped(sc, work)).collect();
            for h in hs {
                match h {
                    Ok(h) => {
                        if let Err(p) = h.join() {
                            std::panic::resume_unwind(p);
                        }
                    }
                    Err(e) => panic!("cannot start a soak thread: {e}"),
                }
            }
        });
        let f = fold.into_inner().unwrap_or_else(|e| e.into_inner());
        for d in f.done.values() {
            let _ = std::fs::remove_dir_all(&d.scratch);
        }
        // (the run the soak stopped at failed, or could not be made or run: an error)
        match f.error {
            Some(e) => Err(e),
            None => Ok(f.rep),
        }
    }

    /// One run's outcome into the report: its counts, and the failure it is (its workload
    /// written out and its waveform moved to `out`); an error when the run could not be made.
    fn fold(&self, rep: &mut SoakReport, index: u64, last: bool, run: Option<&Run>, scratch: &Path, outcome: Result<crate::cosim::CosimReport, String>) -> Result<(), String> {
        let r = outcome?;
        let run = run.expect("a run that ran");
        rep.runs += 1;
        rep.cycles_checked += r.cycles_checked;
        let verified = r.result.as_ref().is_some_and(|x| x.processes.iter().all(|p| p.verified));
        if let Some(x) = &r.result {
            rep.gpu_cycles += x.cycles;
            rep.preemptions += x.preemptions;
            rep.faulted += x.sm.faulted_insts;
            rep.replayed += x.sm.replayed;
            rep.switched_out += x.sm.switched_out;
            if let Some(st) = &x.steering {
                rep.steer_decisions += st.decisions.len() as u64;
                rep.steer_moves += st.decisions.iter().filter(|d| !d.big.is_empty()).count() as u64;
                rep.steer_drains += st.drains;
                rep.steer_switches += st.switches;
            }
        }
        if r.mismatch.is_some() || !verified {
            let w = random_workload(self.seed, index, &self.params);
            let file = self.write_workload(index, &w)?;
            let command = self.command(&file, run.policy, run.mechanism, &run.variant);
            let error = if r.mismatch.is_some() { None } else { Some(r.error.map_or_else(|| "an output did not verify".to_string(), |e| e.to_string())) };
            // (the waveform around the mismatch, a file or a folder of one per SM)
            for name in ["mismatch.vcd", "mismatch"] {
                let (from, to) = (scratch.join(name), self.out.join(name));
                if from.exists() {
                    let _ = std::fs::remove_dir_all(&to);
                    let _ = std::fs::remove_file(&to);
                    std::fs::rename(&from, &to).map_err(|e| format!("cannot move {} to {}: {e}", from.display(), to.display()))?;
                }
            }
            rep.workloads = index + 1;
            rep.failure = Some(SoakFailure { index, policy: run.policy, mechanism: run.mechanism, variant: run.variant.clone(), mismatch: r.mismatch, error, workload: file, command });
            return Ok(());
        }
        if last {
            rep.workloads = index + 1;
        }
        Ok(())
    }

    /// The co-simulation options of run `r`.
    fn options(&self, r: &Run) -> CosimOptions {
        CosimOptions {
            backend: self.backend,
            broken: self.broken.clone(),
            unit: self.unit,
            framework: r.framework,
            slicing: r.slicing,
            sliced: r.sliced,
            steer: r.steer,
            steered: r.steered,
            mismatch_vcd: self.out.join("mismatch.vcd"),
            ..CosimOptions::new(r.policy, r.mechanism)
        }
    }

    /// Whether the unit's runs vary the GPU (faults, paging, dispatcher) rather than the
    /// framework's policy and mechanism.
    pub fn varies_gpu(&self) -> bool {
        self.unit.gpu() != GpuKind::Framework && self.sliced.is_none()
    }

    /// Whether the unit's runs inject faults (a fault-handling block's).
    pub fn runs_inject_faults(&self) -> bool {
        self.runs_of(0).is_ok_and(|r| r.iter().any(|r| r.cfg.inject.rate > 0.0))
    }

    pub fn runs_per_workload(&self) -> u64 {
        self.runs_of(0).map_or(1, |r| r.len() as u64)
    }

    /// The runs of workload `index`: the unit's blocks' (`Host::soak`: for the framework and
    /// its engines, every policy and mechanism; for the fault-handling blocks, injected faults
    /// and demand paging with thread-block switching; for Zorua's coordinator, the baseline
    /// dispatcher and the framework's DSS with draining; for the water-filling unit,
    /// Warped-Slicer; for the slice table, every online slicing policy), on the configuration
    /// the unit sets up.
    fn runs_of(&self, index: u64) -> Result<Vec<Run>, String> {
        Ok(self.runs_and_skipped(index)?.0)
    }

    /// The runs of workload `index` ([`Soak::runs_of`]) and, for a list of units, the runs of
    /// its blocks that the others cannot share, by reason (the framework's context switch
    /// under Zorua, thread-block switching under the framework, a slicing policy that leaves
    /// the water-filling unit idle): those are left out. Under a
    /// list with the framework a per-SM block's run takes the framework's policy, draining
    /// under Zorua. A unit of one block runs all of its own.
    pub fn runs_and_skipped(&self, index: u64) -> Result<(Vec<Run>, Vec<(String, Vec<String>)>), String> {
        let mut cfg = self.config.clone();
        self.unit.setup(&mut cfg);
        let mut runs = self.unit.soak_runs(self.seed, &cfg, index);
        // (inside the framework: the blocks' runs in turn under every policy and mechanism,
        // each pair at least once, mechanism-major so that each run meets both mechanisms;
        // only the policies its policy engines run, if it has one; draining where the
        // allocation needs it)
        if let Some(sl) = self.sliced.filter(|_| !runs.is_empty()) {
            let engines = self.unit.framework_policies(self.seed, &cfg, index);
            let pairs: Vec<(Policy, Mechanism)> = MECHANISMS
                .iter()
                .flat_map(|&m| POLICIES.iter().map(move |&p| (p, m)))
                .filter(|(p, _)| engines.as_ref().is_none_or(|e| e.contains(p)))
                .collect();
            let mut all: Vec<Run> = Vec::new();
            for i in 0..runs.len().max(pairs.len()) {
                let base = &runs[i % runs.len()];
                let (policy, mut mechanism) = pairs[i % pairs.len()];
                if base.cfg.alloc != mpgpu_ref::config::Alloc::Block {
                    mechanism = Mechanism::Drain;
                }
                let r = Run { policy, mechanism, cfg: base.cfg.clone(), variant: base.variant.clone(), framework: true, slicing: sl, sliced: true, steer: base.steer, steered: false };
                if !all.iter().any(|x| x.same(&r)) {
                    all.push(r);
                }
            }
            runs = all;
        }
        // (the framework's blocks with the steering unit: steering inside the framework, each
        // of the framework's runs steered dynamically with short profiles, SMs draining; the
        // steering dispatcher's own runs have no place there)
        if self.unit.steers_in_framework() {
            use mpgpu_ref::timing::steer::{Preempt, SteerParams};
            runs.retain(|r| !r.variant.starts_with("--steer"));
            for r in runs.iter_mut() {
                r.steered = true;
                r.steer = SteerParams { warmup: 2000, window: 2000, preempt: Preempt::Drain };
            }
        }
        let mut skipped: Vec<(String, Vec<String>)> = Vec::new();
        if self.unit.several() || self.sliced.is_some() {
            let fw = self.unit.gpu() == GpuKind::Framework || self.sliced.is_some();
            for r in runs.iter_mut() {
                // (a per-SM block's run under the framework of the list: its policy, with
                // draining where the allocation needs it)
                if fw && !r.variant.is_empty() && r.cfg.alloc != mpgpu_ref::config::Alloc::Block {
                    r.mechanism = Mechanism::Drain;
                }
            }
            runs.retain(|r| {
                let why = r
                    .cfg
                    .validate()
                    .err()
                    .or_else(|| self.unit.fits(&r.cfg, &self.options(r)).err())
                    .or_else(|| (fw || r.framework).then(|| mpgpu_ref::timing::gpu::Gpu::framework_refusal(&r.cfg, r.mechanism)).flatten());
                if let Some(e) = why.clone() {
                    let what = if r.variant.is_empty() { format!("--policy {} --preempt {}", r.policy.name(), r.mechanism.name()) } else { r.variant.clone() };
                    match skipped.iter_mut().find(|(x, _)| *x == e) {
                        Some((_, v)) => v.push(what),
                        None => skipped.push((e, vec![what])),
                    }
                }
                why.is_none()
            });
            let mut kept: Vec<Run> = Vec::new();
            for r in runs {
                if !kept.iter().any(|x| x.same(&r)) {
                    kept.push(r);
                }
            }
            runs = kept;
            if runs.is_empty() {
                let why: Vec<String> = skipped.iter().map(|(e, w)| format!("{}: {e}", w.join(", "))).collect();
                return Err(format!("--unit {}: none of its blocks' runs can run with the others ({})", self.unit, why.join("; ")));
            }
        }
        for r in &runs {
            r.cfg.validate().map_err(|e| format!("configuration {}{}: {e}", self.config_arg, if r.variant.is_empty() { String::new() } else { format!(" under {}", r.variant) }))?;
        }
        Ok((runs, skipped))
    }

    fn command(&self, file: &Path, p: Policy, m: Mechanism, variant: &str) -> String {
        // (the variants set by name; a library soak's set by hand, the framework's by its
        // faults)
        let broken: String = match self.broken.names() {
            [] => {
                let f: mpgpu_rtl::SchedFaults = self.broken.of("sched");
                match (f.ptbq_lifo, f.keep_token) {
                    (true, _) => " --broken lifo".into(),
                    (_, true) => " --broken keep-token".into(),
                    _ => String::new(),
                }
            }
            names => names.iter().map(|n| format!(" --broken {n}")).collect(),
        };
        // (steering inside the framework: each run's profile)
        let broken = if self.unit.steers_in_framework() { format!(" --steer dynamic --steer-warmup 2000 --steer-window 2000{broken}") } else { broken };
        if self.varies_gpu() {
            let variant = if variant.is_empty() { String::new() } else { format!(" {variant}") };
            return format!("mpgpu cosim {} --config {} --unit {}{variant} --backend {}{broken}", file.display(), self.config_arg, self.unit.arg(), self.backend);
        }
        let unit = if self.unit == UnitKind::default() { String::new() } else { format!(" --unit {}", self.unit.arg()) };
        // (a list's per-SM blocks' runs set faults or paging)
        let variant = if variant.is_empty() { String::new() } else { format!(" {variant}") };
        let sliced = self.sliced.map_or(String::new(), |s| format!(" --slicing {}", s.name()));
        format!(
            "mpgpu cosim {} --config {}{unit}{variant} --policy {} --preempt {}{sliced} --backend {}{broken}",
            file.display(),
            self.config_arg,
            p.name(),
            m.name(),
            self.backend
        )
    }

    fn write_workload(&self, index: u64, w: &mpgpu_ref::workload::Workload) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&self.out).map_err(|e| format!("cannot create {}: {e}", self.out.display()))?;
        let f = self.out.join(format!("soak-seed{}-{index}.toml", self.seed));
        std::fs::write(&f, w.to_toml()).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
        Ok(f)
    }
}

/// The default place for a soak's failing workloads.
pub fn default_out() -> PathBuf {
    Path::new("target").join("soak")
}
