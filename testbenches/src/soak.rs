//! Soak: random multiprogrammed workloads (`mpgpu_ref::soakgen`), each co-simulated with a
//! unit's RTL in the loop (any unit of `UnitKind::ALL`): the framework's (or its engine's)
//! under every policy and preemption mechanism, a fault-handling block's on every SM under
//! faults that really happen, Zorua's coordinator's under the baseline dispatcher and the
//! framework, Warped-Slicer's and the slice table's under their slicing policies, until the
//! first mismatch or failure. A failing workload is written out as a
//! TOML file that reproduces it with `mpgpu cosim`.

use crate::cosim::{run_with, CosimOptions, UnitKind};
use crate::lockstep::Mismatch;
use crate::backend::Backend;
use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::soakgen::{random_workload, SoakParams};
use mpgpu_ref::timing::slicer::Slicing;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use crate::broken::Broken;
use mpgpu_rtl::SchedFaults;
use std::path::{Path, PathBuf};

/// Every policy and mechanism a soak runs each workload under.
pub const POLICIES: [Policy; 6] = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
pub const MECHANISMS: [Mechanism; 2] = [Mechanism::ContextSwitch, Mechanism::Drain];
/// The slicing policies a soak of the slice table runs (the online ones: the Oracle's curves
/// take every process's isolated runs first).
pub const SLICINGS: [Slicing; 4] = [Slicing::LeftOver, Slicing::Even, Slicing::Spatial, Slicing::WarpedSlicer];

/// One co-simulation of a soak's workload.
struct Run {
    policy: Policy,
    mechanism: Mechanism,
    cfg: GpuConfig,
    /// The flags that set it apart (`mpgpu cosim`'s), for the report.
    variant: String,
    framework: bool,
    slicing: Slicing,
}

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
    pub failure: Option<SoakFailure>,
}

impl Soak {
    /// Runs the soak; `progress(workloads done, runs done, report so far)` after every run.
    pub fn run(&self, progress: &mut dyn FnMut(u64, u64, &SoakReport)) -> Result<SoakReport, String> {
        let mut rep = SoakReport::default();
        for index in 0..self.workloads {
            let w = random_workload(self.seed, index, &self.params);
            for Run { policy: p, mechanism: m, cfg, variant, framework, slicing } in self.runs_of(index)? {
                let o = CosimOptions {
                    backend: self.backend,
                    broken: self.broken.clone(),
                    unit: self.unit,
                    framework,
                    slicing,
                    mismatch_vcd: self.out.join("mismatch.vcd"),
                    ..CosimOptions::new(p, m)
                };
                let r = run_with(&cfg, &w, &o)?;
                rep.runs += 1;
                rep.cycles_checked += r.cycles_checked;
                let verified = r.result.as_ref().is_some_and(|x| x.processes.iter().all(|p| p.verified));
                if let Some(x) = &r.result {
                    rep.gpu_cycles += x.cycles;
                    rep.preemptions += x.preemptions;
                    rep.faulted += x.sm.faulted_insts;
                    rep.replayed += x.sm.replayed;
                    rep.switched_out += x.sm.switched_out;
                }
                if r.mismatch.is_some() || !verified {
                    let file = self.write_workload(index, &w)?;
                    let command = self.command(&file, p, m, &variant);
                    let error = if r.mismatch.is_some() {
                        None
                    } else {
                        Some(r.error.map_or_else(|| "an output did not verify".to_string(), |e| e.to_string()))
                    };
                    rep.workloads = index + 1;
                    rep.failure = Some(SoakFailure { index, policy: p, mechanism: m, variant, mismatch: r.mismatch, error, workload: file, command });
                    progress(index + 1, rep.runs, &rep);
                    return Ok(rep);
                }
                progress(index, rep.runs, &rep);
            }
            rep.workloads = index + 1;
        }
        Ok(rep)
    }

    /// Whether the unit's runs vary the GPU (faults, paging, dispatcher) rather than the
    /// framework's policy and mechanism.
    pub fn varies_gpu(&self) -> bool {
        !matches!(self.unit, UnitKind::Sched | UnitKind::Engine)
    }

    pub fn runs_per_workload(&self) -> u64 {
        match self.unit {
            UnitKind::Sched | UnitKind::Engine => (POLICIES.len() * MECHANISMS.len()) as u64,
            UnitKind::Wf => 1,
            UnitKind::Slice => SLICINGS.len() as u64,
            UnitKind::Zorua | UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl => 2,
        }
    }

    /// The runs of workload `index`: for the framework and its engine, every policy and
    /// mechanism; for the fault-handling blocks, injected faults (at a rate and seed drawn
    /// from the workload's index) and demand paging with thread-block switching; for Zorua's
    /// coordinator, the baseline dispatcher and the framework's DSS with draining; for the
    /// water-filling unit, Warped-Slicer; for the slice table, every online slicing policy.
    fn runs_of(&self, index: u64) -> Result<Vec<Run>, String> {
        let run = |policy, mechanism, cfg: &GpuConfig, variant: String| Run { policy, mechanism, cfg: cfg.clone(), variant, framework: false, slicing: Slicing::WarpedSlicer };
        let fcfs = |cfg: &GpuConfig, variant: String| run(Policy::Fcfs, Mechanism::ContextSwitch, cfg, variant);
        let runs = match self.unit {
            UnitKind::Sched | UnitKind::Engine => POLICIES.iter().flat_map(|&p| MECHANISMS.iter().map(move |&m| (p, m))).map(|(p, m)| run(p, m, &self.config, String::new())).collect(),
            UnitKind::Zorua => {
                let mut cfg = self.config.clone();
                self.unit.setup(&mut cfg);
                let framework = Run { framework: true, ..run(Policy::Dss, Mechanism::Drain, &cfg, "--framework --policy dss --preempt drain".into()) };
                vec![fcfs(&cfg, String::new()), framework]
            }
            UnitKind::Wf => vec![fcfs(&self.config, String::new())],
            UnitKind::Slice => SLICINGS.iter().map(|&sl| Run { slicing: sl, ..fcfs(&self.config, format!("--slicing {}", sl.name())) }).collect(),
            UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl => {
                let scheme = self.unit.implied_faults().expect("a fault-handling unit implies its fault scheme");
                let name = scheme.name();
                let rate = [0.01, 0.02, 0.05][(index % 3) as usize];
                let seed = self.seed.wrapping_mul(1_000_003).wrapping_add(index) % 1_000_000_007;
                let mut injected = self.config.clone();
                injected.faults = scheme;
                injected.inject.rate = rate;
                injected.inject.seed = seed;
                let mut paged = self.config.clone();
                paged.faults = scheme;
                paged.paging.link = PagingLink::Nvlink;
                paged.tb_switch.enabled = true;
                vec![fcfs(&injected, format!("--faults {name} --inject {rate},{seed}")), fcfs(&paged, format!("--faults {name} --paging nvlink --tb-switch on"))]
            }
        };
        for r in &runs {
            r.cfg.validate().map_err(|e| format!("configuration {}{}: {e}", self.config_arg, if r.variant.is_empty() { String::new() } else { format!(" under {}", r.variant) }))?;
        }
        Ok(runs)
    }

    fn command(&self, file: &Path, p: Policy, m: Mechanism, variant: &str) -> String {
        if self.varies_gpu() {
            let variant = if variant.is_empty() { String::new() } else { format!(" {variant}") };
            return format!("mpgpu cosim {} --config {} --unit {}{variant} --backend {}", file.display(), self.config_arg, self.unit.name(), self.backend);
        }
        let faults: SchedFaults = self.broken.of("sched");
        let broken = match (faults.ptbq_lifo, faults.keep_token) {
            (true, _) => " --broken lifo",
            (_, true) => " --broken keep-token",
            _ => "",
        };
        let unit = if self.unit == UnitKind::Engine { " --unit engine" } else { "" };
        format!(
            "mpgpu cosim {} --config {}{unit} --policy {} --preempt {} --backend {}{broken}",
            file.display(),
            self.config_arg,
            p.name(),
            if m == Mechanism::Drain { "drain" } else { "ctxsw" },
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
