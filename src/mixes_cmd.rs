//! `mpgpu mixes`: the thesis's random multiprogrammed workloads (Tanasić 2016, §5.3.1) written
//! as workload files: mixes of 2, 4, 6 and 8 Parboil-like processes, sized for several rounds
//! of blocks on the configuration, each replayed until every process has run three times
//! (`sim-ref/src/mixgen.rs`; docs/results.md, "The thesis's workloads").

use anyhow::{anyhow, bail, Context, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::mixgen::{mix, sizes, MixParams, COUNTS};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MixesArgs {
    /// The configuration the inputs are sized for (a preset or a TOML file).
    #[arg(long, default_value = "k20c")]
    config: String,
    /// The process counts, comma-separated (the thesis's: 2, 4, 6 and 8).
    #[arg(long, value_delimiter = ',', default_values_t = COUNTS.to_vec(), value_parser = clap::value_parser!(usize))]
    counts: Vec<usize>,
    /// Workloads per process count (1..=100).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100))]
    per_count: u64,
    /// Seed of the draws (the same seed gives the same workloads).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rounds of blocks every process's first launch fills at the least (1..=16).
    #[arg(long, default_value_t = MixParams::default().rounds, value_parser = clap::value_parser!(u32).range(1..=16))]
    rounds: u32,
    /// Runs every process completes at least (the workloads' `min_runs`, 1..=100).
    #[arg(long, default_value_t = MixParams::default().min_runs, value_parser = clap::value_parser!(u32).range(1..=100))]
    min_runs: u32,
    /// One process of each workload at priority 1, in turn (the thesis's priority experiments).
    #[arg(long)]
    priority: bool,
    /// The folder for the workload files (`mix-<count>-<index>.toml`).
    #[arg(long, default_value = "target/mixes")]
    out: PathBuf,
}

pub fn mixes_cmd(a: MixesArgs) -> Result<ExitCode> {
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("--config {}: {e}", a.config))?;
    for &n in &a.counts {
        if !(1..=mpgpu_ref::workload::MAX_PROCESSES).contains(&n) {
            bail!("--counts: {n} processes is out of range (expected 1..={})", mpgpu_ref::workload::MAX_PROCESSES);
        }
    }
    crate::checks::output_dir(&a.out, "--out")?;
    let p = MixParams { rounds: a.rounds, min_runs: a.min_runs, priority: a.priority };
    println!("applications on {} ({} SMs), sized for {} rounds of blocks:", cfg.name, cfg.num_sms(), a.rounds);
    let sizes = sizes(&cfg, a.rounds).map_err(|e| anyhow!(e))?;
    for (name, size, rounds) in &sizes {
        println!("  {name:<8} size {size:>8}  {rounds:>5.1} rounds{}", if *rounds < a.rounds as f64 { " (short: no size it takes gives more)" } else { "" });
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let mut written = 0;
    for &n in &a.counts {
        for i in 0..a.per_count {
            let w = mix(&cfg.name, &sizes, n, a.seed, i, &p).map_err(|e| anyhow!("mix {i} of {n} processes: {e}"))?;
            let f = a.out.join(format!("mix-{n}-{i}.toml"));
            std::fs::write(&f, w.to_toml()).with_context(|| format!("cannot write {}", f.display()))?;
            println!("{}: {}", f.display(), w.processes.iter().map(|p| if p.priority > 0 { format!("{} (high priority)", p.name) } else { p.name.clone() }).collect::<Vec<_>>().join(", "));
            written += 1;
        }
    }
    println!("wrote {written} workloads to {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
