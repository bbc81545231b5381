//! Soak: random multiprogrammed workloads (`mpgpu_ref::soakgen`), each co-simulated with the
//! whole framework's RTL in the loop under every policy and preemption mechanism, until the
//! first mismatch or failure. A failing workload is written out as a TOML file that
//! reproduces it with `mpgpu cosim`.

use crate::cosim::{run_with, CosimOptions};
use crate::lockstep::Mismatch;
use crate::rtl::Backend;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::soakgen::{random_workload, SoakParams};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_rtl::SchedFaults;
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
    pub faults: SchedFaults,
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
    pub failure: Option<SoakFailure>,
}

impl Soak {
    /// Runs the soak; `progress(workloads done, runs done, report so far)` after every run.
    pub fn run(&self, progress: &mut dyn FnMut(u64, u64, &SoakReport)) -> Result<SoakReport, String> {
        let mut rep = SoakReport::default();
        for index in 0..self.workloads {
            let w = random_workload(self.seed, index, &self.params);
            for p in POLICIES {
                for m in MECHANISMS {
                    let o = CosimOptions { backend: self.backend, faults: self.faults, mismatch_vcd: self.out.join("mismatch.vcd"), ..CosimOptions::new(p, m) };
                    let r = run_with(&self.config, &w, &o)?;
                    rep.runs += 1;
                    rep.cycles_checked += r.cycles_checked;
                    let verified = r.result.as_ref().is_some_and(|x| x.processes.iter().all(|p| p.verified));
                    if let Some(x) = &r.result {
                        rep.gpu_cycles += x.cycles;
                        rep.preemptions += x.preemptions;
                    }
                    if r.mismatch.is_some() || !verified {
                        let file = self.write_workload(index, &w)?;
                        let broken = match (self.faults.ptbq_lifo, self.faults.keep_token) {
                            (true, _) => " --broken lifo",
                            (_, true) => " --broken keep-token",
                            _ => "",
                        };
                        let command = format!(
                            "mpgpu cosim {} --config {} --policy {} --preempt {} --backend {}{broken}",
                            file.display(),
                            self.config_arg,
                            p.name(),
                            if m == Mechanism::Drain { "drain" } else { "ctxsw" },
                            self.backend
                        );
                        let error = if r.mismatch.is_some() {
                            None
                        } else {
                            Some(r.error.map_or_else(|| "an output did not verify".to_string(), |e| e.to_string()))
                        };
                        rep.workloads = index + 1;
                        rep.failure = Some(SoakFailure { index, policy: p, mechanism: m, mismatch: r.mismatch, error, workload: file, command });
                        progress(index + 1, rep.runs, &rep);
                        return Ok(rep);
                    }
                    progress(index, rep.runs, &rep);
                }
            }
            rep.workloads = index + 1;
        }
        Ok(rep)
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
