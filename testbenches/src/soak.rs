//! Soak: random multiprogrammed workloads (`mpgpu_ref::soakgen`), each co-simulated with the
//! whole framework's RTL in the loop under every policy and preemption mechanism, or with a
//! per-SM block's RTL on every SM (the replay queue, the operand log or both) under faults that
//! really happen, until the first mismatch or failure. A failing workload is written out as a
//! TOML file that reproduces it with `mpgpu cosim`.

use crate::cosim::{run_with, CosimOptions, UnitKind};
use crate::lockstep::Mismatch;
use crate::rtl::Backend;
use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::soakgen::{random_workload, SoakParams};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_rtl::{OplogFaults, RqFaults, SchedFaults};
use std::path::{Path, PathBuf};

/// Every policy and mechanism a soak runs each workload under.
pub const POLICIES: [Policy; 6] = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
pub const MECHANISMS: [Mechanism; 2] = [Mechanism::ContextSwitch, Mechanism::Drain];

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
    pub faults: SchedFaults,
    /// Test-only broken variants of the per-SM blocks.
    pub rq_faults: RqFaults,
    pub oplog_faults: OplogFaults,
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
            for (p, m, cfg, variant) in self.runs_of(index)? {
                let o = CosimOptions { backend: self.backend, faults: self.faults, unit: self.unit, rq_faults: self.rq_faults, oplog_faults: self.oplog_faults, mismatch_vcd: self.out.join("mismatch.vcd"), ..CosimOptions::new(p, m) };
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

    /// Whether the block in the loop is a per-SM one.
    pub fn per_sm(&self) -> bool {
        self.unit.per_sm()
    }

    /// Runs per workload.
    pub fn runs_per_workload(&self) -> u64 {
        if self.per_sm() {
            2
        } else {
            (POLICIES.len() * MECHANISMS.len()) as u64
        }
    }

    /// The runs of workload `index`: policy, mechanism, configuration and (per-SM blocks) the
    /// options that give its faults. A per-SM block's workload runs twice: with faults injected
    /// at a rate and seed drawn from the soak's seed and the index, and under demand paging
    /// (NVLink) with thread-block switching; its unit implies the fault scheme.
    fn runs_of(&self, index: u64) -> Result<Vec<(Policy, Mechanism, GpuConfig, String)>, String> {
        if !self.per_sm() {
            return Ok(POLICIES.iter().flat_map(|&p| MECHANISMS.iter().map(move |&m| (p, m, self.config.clone(), String::new()))).collect());
        }
        let scheme = self.unit.implied_faults().expect("a per-SM unit implies its fault scheme");
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
        let mut runs = Vec::new();
        for (cfg, variant) in [(injected, format!("--faults {name} --inject {rate},{seed}")), (paged, format!("--faults {name} --paging nvlink --tb-switch on"))] {
            cfg.validate().map_err(|e| format!("configuration {} under {variant}: {e}", self.config_arg))?;
            runs.push((Policy::Fcfs, Mechanism::ContextSwitch, cfg, variant));
        }
        Ok(runs)
    }

    /// The command that reproduces a failed run.
    fn command(&self, file: &Path, p: Policy, m: Mechanism, variant: &str) -> String {
        if self.per_sm() {
            return format!("mpgpu cosim {} --config {} --unit {} {variant} --backend {}", file.display(), self.config_arg, self.unit.name(), self.backend);
        }
        let broken = match (self.faults.ptbq_lifo, self.faults.keep_token) {
            (true, _) => " --broken lifo",
            (_, true) => " --broken keep-token",
            _ => "",
        };
        format!(
            "mpgpu cosim {} --config {} --policy {} --preempt {} --backend {}{broken}",
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
