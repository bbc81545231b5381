//! `mpgpu soak`: random multiprogrammed workloads co-simulated with the framework's RTL in the
//! loop under every policy and mechanism, or with a per-SM block's RTL on every SM under
//! injected faults and under demand paging with thread-block switching.

use crate::args::BackendArg;
use anyhow::{anyhow, Result};
use indicatif::{ProgressBar, ProgressStyle};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::soakgen::SoakParams;
use mpgpu_tb::cosim::UnitKind;
use mpgpu_tb::soak::Soak;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SoakArgs {
    /// Seed of the workload generator (the same seed gives the same workloads).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random workloads to run (each under every policy and mechanism; 1 or more).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    workloads: u64,
    /// A preset or a TOML file (at most 16 SMs for the GPU-wide blocks; identical SMs but for
    /// the framework's and the steering unit's). Default:
    /// the unit's (`UnitKind::default_config`: k20c for the framework and its engine, thesis16 for the fault-handling
    /// blocks, which need the thesis's pipeline, fermi15 for Zorua's, gtx480 for Warped-Slicer's
    /// and the slice table).
    #[arg(long)]
    config: Option<String>,
    /// The unit in the loop (as for `mpgpu cosim --unit`): the framework (`sched`) or its
    /// engine, each workload under every policy and mechanism; a fault-handling block on every
    /// SM (`rq`, `oplog`, `oldata`, `rq-ol`), each workload with injected faults and under
    /// demand paging with thread-block switching; Zorua's coordinator (`zorua`) under the
    /// baseline dispatcher and the framework; Warped-Slicer (`wf`); the slice table (`slice`)
    /// under every online slicing policy. A list (`sched,zorua,rq-ol`) puts its blocks in one
    /// GPU and runs each block's runs that the others can share (the rest are listed, with the
    /// reason, and left out).
    #[arg(long, value_parser = crate::args::unit_name(), default_value = "sched")]
    unit: UnitKind,
    /// Every SM's pipeline (`gpgpusim` or `thesis`), over the configuration's (as for `mpgpu
    /// run --pipeline`): the replay hardware needs the thesis's pipeline, so Zorua's coordinator
    /// runs beside it on Fermi's SM with `--config fermi15 --pipeline thesis`.
    #[arg(long, value_parser = ["gpgpusim", "thesis"])]
    pipeline: Option<String>,
    /// The simulator of the RTL.
    #[arg(long, value_enum, default_value = "rust-hdl")]
    backend: BackendArg,
    /// Where a failing workload is written.
    #[arg(long, default_value = "target/soak")]
    out: PathBuf,
    /// Slicing inside the framework: every run under the framework sharing its SMs, each
    /// policy and mechanism in turn, with this slicing policy as its quota controller; the
    /// unit any but slice (with `--unit all`, every block but the slice table:
    /// docs/warped-slicer.md, "Inside the scheduling framework").
    #[arg(long, value_enum)]
    slicing: Option<crate::args::SlicingArg>,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    /// Test-only: soak a deliberately broken RTL variant.
    #[arg(long, hide = true)]
    broken: Option<String>,
}

pub fn soak_cmd(a: SoakArgs) -> Result<ExitCode> {
    let unit = if a.unit.is_all() && a.slicing.is_some() { UnitKind::every_block_in_framework() } else { a.unit };
    if a.slicing.is_some() && unit.has(mpgpu_tb::unit::GpuKind::Steer) {
        return Err(anyhow!("--slicing soaks a unit under slicing inside the framework; --unit {unit} has the steering unit, which shares no GPU with a slicing policy (soak it without --slicing)"));
    }
    if let Some((b, why)) = unit.outside_slicing_in_framework().filter(|_| a.slicing.is_some()) {
        return Err(anyhow!("--slicing soaks a unit under slicing inside the framework, which has no place for {b} ({why}): give another unit (--unit all: every block it has a place for)"));
    }
    // (a broken variant of one of the unit's blocks, checked before anything runs)
    let broken = a.broken.as_deref().map(|b| mpgpu_tb::registry::broken(unit, b)).transpose().map_err(|e| anyhow!(e))?.unwrap_or_default();
    crate::checks::output_dir(&a.out, "--out")?;
    let mut config_arg = a.config.clone().unwrap_or_else(|| unit.default_config().to_string());
    let mut config = GpuConfig::from_arg(&config_arg).map_err(|e| anyhow!("{e}"))?;
    if let Some(p) = &a.pipeline {
        for g in &mut config.sm {
            g.pipeline = crate::args::pipeline(p);
        }
        // (the command that reproduces a failure names it with the configuration)
        config_arg = format!("{config_arg} --pipeline {p}");
    }
    let soak = Soak { seed: a.seed, workloads: a.workloads, config, config_arg, backend: a.backend.into(), unit, broken, params: SoakParams::default(), out: a.out.clone(), sliced: a.slicing.map(Into::into) };
    // (the runs are checked before any simulation: a list's blocks that cannot share a run say
    // why)
    let (runs, skipped) = soak.runs_and_skipped(0).map_err(|e| anyhow!(e))?;
    let per = runs.len() as u64;
    if soak.runs_inject_faults() {
        let tb = if runs.iter().any(|r| r.cfg.tb_switch.enabled) { " with thread-block switching" } else { "" };
        println!("soak: seed {}, {} random workloads x {per} runs (injected faults; demand paging{tb}) on {} ({}), --unit {unit}'s RTL on every SM", a.seed, a.workloads, soak.config.name, soak.backend);
    } else if soak.varies_gpu() {
        println!("soak: seed {}, {} random workloads x {per} runs on {} ({}), --unit {unit}: {}", a.seed, a.workloads, soak.config.name, soak.backend, unit.about());
    } else {
        let what = if unit == UnitKind::default() { "the framework's".to_string() } else { format!("--unit {unit}'s") };
        println!("soak: seed {}, {} random workloads x {per} policy/mechanism pairs on {} ({}), {what} RTL in the loop", a.seed, a.workloads, soak.config.name, soak.backend);
    }
    for (why, runs) in &skipped {
        println!("  left out: {} ({why})", runs.join(", "));
    }
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) { ProgressBar::new(a.workloads * per) } else { ProgressBar::hidden() };
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} runs [{elapsed_precise} < {eta_precise}] {msg}").unwrap());
    let t = std::time::Instant::now();
    let rep = soak
        .run_on(a.jobs.workers(), &mut |_, runs, r| {
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
    if soak.unit.has(mpgpu_tb::unit::GpuKind::Steer) {
        println!("steering: {} decisions ({} moving SMs), {} SMs drained, {} context-switched", rep.steer_decisions, rep.steer_moves, rep.steer_drains, rep.steer_switches);
    }
    if soak.runs_inject_faults() {
        println!("faults: {} faulted instructions, {} replayed, {} blocks switched out", rep.faulted, rep.replayed, rep.switched_out);
    }
    match &rep.failure {
        None => {
            println!("PASS");
            Ok(ExitCode::SUCCESS)
        }
        Some(f) => {
            if soak.varies_gpu() {
                eprintln!("workload {} of seed {} failed under {}:", f.index, a.seed, f.variant);
            } else {
                eprintln!("workload {} of seed {} failed under {} / {:?}:", f.index, a.seed, f.policy.name(), f.mechanism);
            }
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
