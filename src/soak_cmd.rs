//! `mpgpu soak`: random multiprogrammed workloads co-simulated with the framework's RTL in the
//! loop under every policy and mechanism.

use crate::args::BackendArg;
use crate::cosim_cmd::BrokenArg;
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressStyle};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::soakgen::SoakParams;
use mpgpu_tb::soak::{Soak, MECHANISMS, POLICIES};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// Seed of the workload generator (the same seed gives the same workloads).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random workloads to run (each under every policy and mechanism).
    #[arg(long, default_value_t = 10)]
    workloads: u64,
    /// A preset (at most 16 identical SMs) or a TOML file.
    #[arg(long, default_value = "k20c")]
    config: String,
    /// The simulator of the RTL.
    #[arg(long, value_enum, default_value = "rust-hdl")]
    backend: BackendArg,
    /// Where a failing workload is written.
    #[arg(long, default_value = "target/soak")]
    out: PathBuf,
    /// Test-only: soak a deliberately broken RTL variant.
    #[arg(long, value_enum, hide = true)]
    broken: Option<BrokenArg>,
}

pub fn soak_cmd(a: SoakArgs) -> Result<ExitCode> {
    let config = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    let faults = mpgpu_rtl::SchedFaults { ptbq_lifo: a.broken == Some(BrokenArg::Lifo), keep_token: a.broken == Some(BrokenArg::KeepToken) };
    let soak = Soak { seed: a.seed, workloads: a.workloads, config, config_arg: a.config.clone(), backend: a.backend.into(), faults, params: SoakParams::default(), out: a.out.clone() };
    let per = (POLICIES.len() * MECHANISMS.len()) as u64;
    println!("soak: seed {}, {} random workloads x {per} policy/mechanism pairs on {} ({}), the framework's RTL in the loop", a.seed, a.workloads, soak.config.name, soak.backend);
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) { ProgressBar::new(a.workloads * per) } else { ProgressBar::hidden() };
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} runs [{elapsed_precise} < {eta_precise}] {msg}").unwrap());
    let t = std::time::Instant::now();
    let rep = soak
        .run(&mut |_, runs, r| {
            bar.set_position(runs);
            bar.set_message(format!("{} cycles checked", r.cycles_checked));
        })
        .map_err(|e| anyhow!(e))?;
    bar.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{} workloads, {} runs: {} co-simulated cycles checked ({} GPU cycles, {} preemptions) in {:.1} s; mismatches: {}",
        rep.workloads,
        rep.runs,
        rep.cycles_checked,
        rep.gpu_cycles,
        rep.preemptions,
        secs,
        rep.failure.as_ref().map_or(0, |f| f.mismatch.is_some() as u32)
    );
    match &rep.failure {
        None => {
            println!("PASS");
            Ok(ExitCode::SUCCESS)
        }
        Some(f) => {
            eprintln!("workload {} of seed {} failed under {} / {:?}:", f.index, a.seed, f.policy.name(), f.mechanism);
            if let Some(m) = &f.mismatch {
                eprintln!("{m}");
            }
            if let Some(e) = &f.error {
                eprintln!("{e}");
            }
            eprintln!("reproduce with: {}", f.command);
            Ok(ExitCode::FAILURE)
        }
    }
}
