//! `mpgpu faults`: the cost of making page faults preemptible, and stall-on-fault under demand
//! paging, over the Parboil-like library kernels (Tanasić's thesis, §6.5.2 and Fig. 6.2).

use crate::args::{parse_bytes, PagingArg};
use crate::common::simulate;
use anyhow::{anyhow, Result};
use mpgpu_ref::config::{FaultScheme, GpuConfig, PagingLink};
use mpgpu_ref::timing::{RunLimits, RunResult};
use mpgpu_ref::workload::{LaunchSpec, ProcessSpec, Workload};
use std::path::PathBuf;
use std::process::ExitCode;

/// The thesis's benchmarks that the library has (Parboil, Table 4.1).
const PARBOIL: &[&str] = &["sgemm", "cutcp", "histo", "sad", "stencil", "lbm", "spmv", "bfs", "mriq"];

#[derive(clap::Args)]
pub struct FaultsArgs {
    /// A preset or a TOML file (translation is switched on).
    #[arg(long, default_value = "thesis16")]
    config: String,
    /// Kernels to run (default: the Parboil-like ones).
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Scale each application's default size by this factor.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Also run each kernel with demand paging over this link, stalling on faults.
    #[arg(long, value_enum)]
    paging: Option<PagingArg>,
    /// Bytes migrated per fault with --paging.
    #[arg(long, value_parser = parse_bytes, default_value = "64k")]
    migration: u32,
    /// With --paging, write every kernel's per-SM timeline (resident, faulted, active warps)
    /// to DIR/<kernel>.csv.
    #[arg(long)]
    timeline: Option<PathBuf>,
}

fn workload(kernel: &str, size: u32) -> Workload {
    Workload {
        description: kernel.to_string(),
        processes: vec![ProcessSpec {
            name: kernel.to_string(),
            arrival: 0,
            priority: 0,
            repeat: 1,
            tokens: None,
            launches: vec![LaunchSpec { kernel: kernel.to_string(), size: Some(size), seed: 1 }],
        }],
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

pub fn faults_cmd(a: FaultsArgs) -> Result<ExitCode> {
    let mut cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    cfg.memory.vm = true;
    let kernels: Vec<String> = if a.kernels.is_empty() { PARBOIL.iter().map(|s| s.to_string()).collect() } else { a.kernels.clone() };
    if !(a.scale.is_finite() && a.scale > 0.0) {
        return Err(anyhow!("--scale {}: expected a positive number", a.scale));
    }
    let limits = RunLimits::default();
    let run = |cfg: &GpuConfig, k: &str, size: u32| -> Result<RunResult> {
        let (r, _) = simulate(cfg, &workload(k, size), limits, k)?;
        if !r.processes.iter().all(|p| p.verified) {
            return Err(anyhow!("{k} on {}: wrong results: {:?}", cfg.name, r.processes[0].failures));
        }
        Ok(r)
    };
    println!("preemptible faults on {} ({} SMs), no page faults: performance relative to the stall-on-fault baseline", cfg.name, cfg.num_sms());
    println!("{:<10} {:>8} {:>12} {:>12} {:>12} {:>8} {:>8}", "kernel", "size", "baseline", "WD-lastchk", "WD-commit", "lastchk", "commit");
    let (mut last, mut commit) = (Vec::new(), Vec::new());
    let mut sizes = Vec::new();
    for k in &kernels {
        let b = mpgpu_ref::workload::find(k).map_err(|e| anyhow!("{e}"))?;
        let size = ((b.default_size as f64 * a.scale).round() as u32).max(1);
        b.program(size, 1).map_err(|e| anyhow!("--scale gives {k} size {size}: {e}"))?;
        sizes.push(size);
        let mut c = cfg.clone();
        c.paging.link = PagingLink::Off;
        let mut cyc = Vec::new();
        for f in [FaultScheme::Stall, FaultScheme::WdLastcheck, FaultScheme::WdCommit] {
            c.faults = f;
            cyc.push(run(&c, k, size)?.cycles);
        }
        let (l, m) = (cyc[0] as f64 / cyc[1] as f64, cyc[0] as f64 / cyc[2] as f64);
        last.push(l);
        commit.push(m);
        println!("{:<10} {:>8} {:>12} {:>12} {:>12} {:>7.1}% {:>7.1}%", k, size, cyc[0], cyc[1], cyc[2], 100.0 * l, 100.0 * m);
    }
    println!("{:<10} {:>8} {:>12} {:>12} {:>12} {:>7.1}% {:>7.1}%", "geomean", "", "", "", "", 100.0 * geomean(&last), 100.0 * geomean(&commit));
    if let Some(link) = a.paging.filter(|&p| p != PagingArg::Off) {
        let mut c = cfg.clone();
        c.paging.link = link.into();
        c.paging.migration_bytes = a.migration;
        c.faults = FaultScheme::Stall;
        c.validate().map_err(|e| anyhow!("--migration: {e}"))?;
        if let Some(d) = &a.timeline {
            std::fs::create_dir_all(d).map_err(|e| anyhow!("cannot create {}: {e}", d.display()))?;
        }
        println!(
            "\ndemand paging over {:?} ({} KB units), stall-on-fault: all data start in host memory",
            c.paging.link,
            c.paging.migration_bytes / 1024
        );
        println!(
            "{:<10} {:>12} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9}",
            "kernel", "cycles", "slowdown", "faults", "migrations", "mean lat", "handler", "faulted", "min act"
        );
        for (k, &size) in kernels.iter().zip(&sizes) {
            let mut base = cfg.clone();
            base.paging.link = PagingLink::Off;
            base.faults = FaultScheme::Stall;
            let b = run(&base, k, size)?;
            let r = run(&c, k, size)?;
            let v = &r.vm;
            // The lowest mean active (resident, not faulted) warps per SM over any bin in which
            // warps were resident, and the faulted share of resident warp-cycles.
            let tl = r.timeline.as_ref().expect("paging keeps a timeline");
            let nbins = tl.iter().map(|t| t.bins.len()).max().unwrap_or(0);
            let mut min_active = f64::INFINITY;
            for bin in 0..nbins {
                let (res, fl): (u64, u64) = tl.iter().filter_map(|t| t.bins.get(bin)).fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
                if res > 0 {
                    min_active = min_active.min((res - fl.min(res)) as f64 / (tl[0].width as f64 * tl.len() as f64));
                }
            }
            println!(
                "{:<10} {:>12} {:>8.2}x {:>10} {:>10} {:>10.0} {:>8.1}% {:>8.1}% {:>9.2}",
                k,
                r.cycles,
                r.cycles as f64 / b.cycles as f64,
                v.faults,
                v.migrations,
                v.fault_latency_cycles as f64 / v.migrations.max(1) as f64,
                100.0 * v.handler_busy_cycles as f64 / r.cycles as f64,
                100.0 * r.sm.faulted_warp_cycles as f64 / r.sm.warp_cycles.max(1) as f64,
                min_active
            );
            if let Some(d) = &a.timeline {
                let path = d.join(format!("{k}.csv"));
                std::fs::write(&path, crate::run_cmd::timeline_csv(tl)).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
            }
        }
        println!("(slowdown: against the same kernel with every page resident; handler: share of cycles the host handler was busy; faulted: share of resident warp-cycles with a fault outstanding; min act: fewest mean active warps per SM in any timeline bin)");
    }
    Ok(ExitCode::SUCCESS)
}

