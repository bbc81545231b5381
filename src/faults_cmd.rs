//! `mpgpu faults`: the cost of making page faults preemptible, and stall-on-fault under demand
//! paging, over the Parboil-like library kernels (Tanasić's thesis, §6.5.2 and Fig. 6.2).

use crate::args::{parse_bytes, PagingArg};
use anyhow::{anyhow, bail, Result};
use mpgpu_ref::config::{FaultScheme, GpuConfig, OplogFull, PagingLink};
use mpgpu_ref::timing::{RunLimits, RunResult};
use mpgpu_ref::workload::{LaunchSpec, ProcessSpec, Workload};
use crate::slicing_cmd::geomean;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct FaultsArgs {
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
    /// A preset or a TOML file (translation is switched on).
    #[arg(long, default_value = "thesis16")]
    config: String,
    /// Kernels to run (default: the Parboil-like ones).
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Scale each application's default size by this factor.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Size each application instead for at least this many rounds of blocks on the
    /// configuration (1..=16), as `mixes` sizes them (the thesis's inputs, §6.5.1).
    #[arg(long, conflicts_with = "scale", value_parser = clap::value_parser!(u32).range(1..=16))]
    rounds: Option<u32>,
    /// Also run each kernel with demand paging over this link, stalling on faults.
    #[arg(long, value_enum)]
    paging: Option<PagingArg>,
    /// Bytes migrated per fault with --paging (default 64k).
    #[arg(long, value_parser = parse_bytes)]
    migration: Option<u32>,
    /// With --paging, write every kernel's per-SM timeline (resident, faulted, active warps)
    /// to DIR/<kernel>.csv.
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Also run the operand log at each of these sizes per SM (e.g. 2k,4k,8k,16k).
    #[arg(long, value_delimiter = ',', value_parser = parse_bytes)]
    oplog_sweep: Vec<u32>,
    /// With --paging, skip the table without faults.
    #[arg(long)]
    paging_only: bool,
    /// The log-full policy of the --oplog-sweep runs (default stall).
    #[arg(long, value_enum)]
    oplog_full: Option<OplogFullArg>,
    /// Write the tables as SVG bar charts into DIR.
    #[arg(long)]
    svg: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum OplogFullArg {
    Stall,
    Hold,
}

impl From<OplogFullArg> for OplogFull {
    fn from(o: OplogFullArg) -> Self {
        match o {
            OplogFullArg::Stall => OplogFull::Stall,
            OplogFullArg::Hold => OplogFull::Hold,
        }
    }
}

/// A byte count as 512, 4K, 2M.
fn human(b: u32) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b % 1024 == 0 {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    }
}

fn workload(kernel: &str, size: u32) -> Workload {
    Workload {
        description: kernel.to_string(),
        min_runs: None,
        processes: vec![ProcessSpec {
            name: kernel.to_string(),
            arrival: 0,
            priority: 0,
            repeat: 1,
            tokens: None,
            replay: true,
            insts: None,
            launches: vec![LaunchSpec { kernel: kernel.to_string(), size: Some(size), seed: 1 }],
        }],
    }
}

/// `cfg` under the operand log of `bytes` per SM (an `--oplog-sweep` size), checked.
fn with_oplog(cfg: &GpuConfig, bytes: u32, full: OplogFull) -> Result<GpuConfig> {
    let mut c = cfg.clone();
    c.faults = FaultScheme::Ol;
    c.sm.iter_mut().for_each(|g| {
        g.oplog_bytes = bytes;
        g.oplog_full = full;
    });
    c.validate().map_err(|e| anyhow!("--oplog-sweep {bytes}: {}", crate::args::in_flags(&e, &["--oplog-bytes"]).trim_start_matches("--oplog-bytes: ")))?;
    Ok(c)
}

/// The runs of one `faults` invocation (or of `experiment thesis-faults`): each distinct
/// configuration and kernel simulated once, on the bar's workers (or on Slurm), then looked up
/// as the tables are made.
pub(crate) struct Runs {
    index: std::collections::HashMap<String, usize>,
    results: Vec<Result<(RunResult, f64), String>>,
}

impl Runs {
    fn key(cfg: &GpuConfig, k: &str, size: u32) -> String {
        format!("{k}@{size} {cfg:?}")
    }

    /// The distinct runs of `plan`: the points [`Runs::run`] simulates.
    pub(crate) fn count(plan: &[(&GpuConfig, &str, u32)]) -> usize {
        plan.iter().map(|(c, k, size)| Runs::key(c, k, *size)).collect::<std::collections::HashSet<_>>().len()
    }

    /// Every run of `plan` (configuration, kernel, size), each distinct one once, as a round of
    /// points on `pb`.
    pub(crate) fn run(plan: Vec<(&GpuConfig, &str, u32)>, limits: RunLimits, pb: &crate::par::Progress) -> Runs {
        let (mut index, mut todo) = (std::collections::HashMap::new(), Vec::new());
        for (cfg, k, size) in plan {
            let n = index.len();
            index.entry(Runs::key(cfg, k, size)).or_insert_with(|| {
                todo.push((cfg, k, size));
                n
            });
        }
        let results = pb.map_points(
            &todo,
            |&(cfg, k, _)| format!("{k} on {}", cfg.name),
            |&(cfg, k, size)| {
                let t = std::time::Instant::now();
                let r = mpgpu_ref::timing::run_workload(cfg, &workload(k, size), limits, &mut |_, _, _| {}).map_err(|e| format!("{k}: {e}"))?;
                if !r.processes.iter().all(|p| p.verified) {
                    return Err(format!("{k} on {}: wrong results: {:?}", cfg.name, r.processes[0].failures));
                }
                Ok((r, t.elapsed().as_secs_f64()))
            },
        );
        Runs { index, results }
    }

    /// The run of `k` at `size` on `cfg`, or its error.
    pub(crate) fn get(&self, cfg: &GpuConfig, k: &str, size: u32) -> Result<&RunResult> {
        let i = self.index[&Runs::key(cfg, k, size)];
        self.results[i].as_ref().map(|r| &r.0).map_err(|e| anyhow!("{e}"))
    }

    /// The runs' times summed (seconds of one core).
    pub(crate) fn core_seconds(&self) -> f64 {
        self.results.iter().filter_map(|r| r.as_ref().ok()).map(|r| r.1).sum()
    }
}

/// A scheme of §6.5.2 that makes faults preemptible, measured without faults against the
/// stall-on-fault baseline: Warp Disable (both), the replay queue, and the operand log at the
/// thesis's two sizes (8 KB and 16 KB of 64-bit operands: 32 and 64 entries, 4 KB and 8 KB of
/// our 32-bit ones), under both log-full policies (`hold` issues unlogged instead of stalling:
/// docs/faults.md O10).
pub(crate) struct Scheme {
    pub name: &'static str,
    pub faults: FaultScheme,
    /// The operand log's bytes per SM (0: none).
    pub oplog_bytes: u32,
    pub full: OplogFull,
}

pub(crate) const SCHEMES: &[Scheme] = &[
    Scheme { name: "WD-commit", faults: FaultScheme::WdCommit, oplog_bytes: 0, full: OplogFull::Stall },
    Scheme { name: "WD-lastchk", faults: FaultScheme::WdLastcheck, oplog_bytes: 0, full: OplogFull::Stall },
    Scheme { name: "RQ", faults: FaultScheme::Rq, oplog_bytes: 0, full: OplogFull::Stall },
    Scheme { name: "OL-4KB", faults: FaultScheme::Ol, oplog_bytes: 4096, full: OplogFull::Stall },
    Scheme { name: "OL-8KB", faults: FaultScheme::Ol, oplog_bytes: 8192, full: OplogFull::Stall },
    Scheme { name: "OL-4KB-h", faults: FaultScheme::Ol, oplog_bytes: 4096, full: OplogFull::Hold },
    Scheme { name: "OL-8KB-h", faults: FaultScheme::Ol, oplog_bytes: 8192, full: OplogFull::Hold },
];

/// The stall-on-fault baseline: `cfg` with translation on, every page resident.
pub(crate) fn base_config(cfg: &GpuConfig) -> GpuConfig {
    let mut c = cfg.clone();
    c.memory.vm = true;
    c.paging.link = PagingLink::Off;
    c.faults = FaultScheme::Stall;
    c
}

/// `base` under each of [`SCHEMES`], checked (the replay queue's need the thesis's pipeline).
pub(crate) fn scheme_configs(base: &GpuConfig) -> Result<Vec<GpuConfig>> {
    SCHEMES
        .iter()
        .map(|s| {
            let mut c = base.clone();
            c.faults = s.faults;
            if s.oplog_bytes > 0 {
                c.sm.iter_mut().for_each(|g| {
                    g.oplog_bytes = s.oplog_bytes;
                    g.oplog_full = s.full;
                });
            }
            c.validate().map_err(|e| anyhow!("--config {}: scheme {}: {e}", base.name, s.name))?;
            Ok(c)
        })
        .collect()
}

/// The demand-paging runs' columns after stall-on-fault: the replay queue alone, with
/// thread-block switching on faults (through memory, and with 1-cycle switches), and with local
/// handling of faults on pages with no data.
pub(crate) const PAGED: [&str; 4] = ["RQ", "switch", "ideal", "local"];

/// The demand-paging configurations over `link` with `migration`-byte units: stall-on-fault,
/// then one for each of [`PAGED`]. `flags` names the options that set the migration, for an
/// error.
pub(crate) fn paged_configs(cfg: &GpuConfig, link: PagingLink, migration: u32, flags: &[&str]) -> Result<(GpuConfig, Vec<GpuConfig>)> {
    let mut c = cfg.clone();
    c.memory.vm = true;
    c.paging.link = link;
    c.paging.migration_bytes = migration;
    c.faults = FaultScheme::Stall;
    c.validate().map_err(|e| anyhow!("{}", crate::args::in_flags(&e, flags)))?;
    let qs = [(false, false, false), (true, false, false), (true, true, false), (false, false, true)]
        .iter()
        .map(|&(tb, ideal, local)| {
            let mut q = c.clone();
            q.faults = FaultScheme::Rq;
            q.tb_switch.enabled = tb;
            q.tb_switch.ideal = ideal;
            q.paging.local = local;
            q
        })
        .collect();
    Ok((c, qs))
}

/// One kernel's row of the demand-paging table.
pub(crate) struct PagedRow {
    pub cycles: u64,
    /// Against the same kernel with every page resident.
    pub slowdown: f64,
    pub faults: u64,
    pub migrations: u64,
    /// From a unit's first fault to its arrival, cycles.
    pub mean_latency: f64,
    /// Share of cycles the host handler was busy.
    pub handler: f64,
    /// Share of resident warp-cycles with a fault outstanding.
    pub faulted: f64,
    /// The fewest mean active (resident, not faulted) warps per SM over any timeline bin in
    /// which warps were resident.
    pub min_active: f64,
    /// Stall-on-fault's cycles over each of [`PAGED`]'s.
    pub speedups: Vec<f64>,
    /// Blocks switched out on faults, in the `switch` run.
    pub switched_out: u64,
}

/// The row of kernel `k` at `size`: `base` the run with every page resident, `stall` and `qs`
/// [`paged_configs`]'s.
pub(crate) fn paged_row(runs: &Runs, base: &GpuConfig, stall: &GpuConfig, qs: &[GpuConfig], k: &str, size: u32) -> Result<PagedRow> {
    let b = runs.get(base, k, size)?;
    let r = runs.get(stall, k, size)?;
    let v = &r.vm;
    let tl = r.timeline.as_ref().ok_or_else(|| anyhow!("{k}: a paging run without a timeline"))?;
    let nbins = tl.iter().map(|t| t.bins.len()).max().unwrap_or(0);
    let mut min_active = f64::INFINITY;
    for bin in 0..nbins {
        let (res, fl): (u64, u64) = tl.iter().filter_map(|t| t.bins.get(bin)).fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
        if res > 0 {
            min_active = min_active.min((res - fl.min(res)) as f64 / (tl[0].width as f64 * tl.len() as f64));
        }
    }
    let speedups = qs.iter().map(|q| Ok(r.cycles as f64 / runs.get(q, k, size)?.cycles as f64)).collect::<Result<Vec<f64>>>()?;
    Ok(PagedRow {
        cycles: r.cycles,
        slowdown: r.cycles as f64 / b.cycles as f64,
        faults: v.faults,
        migrations: v.migrations,
        mean_latency: v.fault_latency_cycles as f64 / v.migrations.max(1) as f64,
        handler: v.handler_busy_cycles as f64 / r.cycles as f64,
        faulted: r.sm.faulted_warp_cycles as f64 / r.sm.warp_cycles.max(1) as f64,
        min_active,
        speedups,
        switched_out: runs.get(&qs[1], k, size)?.sm.switched_out,
    })
}

pub fn faults_cmd(a: FaultsArgs) -> Result<ExitCode> {
    let mut cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    cfg.memory.vm = true;
    let kernels: Vec<String> = if a.kernels.is_empty() { mpgpu_ref::library::PARBOIL.iter().map(|s| s.to_string()).collect() } else { a.kernels.clone() };
    if !(a.scale.is_finite() && a.scale > 0.0) {
        return Err(anyhow!("--scale {}: expected a positive number", a.scale));
    }
    let limits = a.limit.limits();
    // The schemes of §6.5.2, fault-free, against the stall-on-fault baseline: Warp Disable
    // (both), the replay queue, and the operand log at the thesis's two sizes (8 KB and 16 KB
    // of 64-bit operands: 32 and 64 entries, 4 KB and 8 KB of our 32-bit ones).
    // `hold`: the log-full policy that issues unlogged instead of stalling (docs/faults.md O10).
    let mut sizes = Vec::new();
    for k in &kernels {
        let b = mpgpu_ref::workload::find(k).map_err(|e| anyhow!("{e}"))?;
        let size = match a.rounds {
            Some(r) => mpgpu_ref::mixgen::sized(&b, &cfg, r).map_err(|e| anyhow!("--rounds {r}: {e}"))?.0,
            None => {
                let size = ((b.default_size as f64 * a.scale).round() as u32).max(1);
                b.program(size, 1).map_err(|e| anyhow!("--scale gives {k} size {size}: {e}"))?;
                size
            }
        };
        sizes.push(size);
    }
    // (every option is checked, and every output, before the first simulation)
    let paging = a.paging.filter(|&p| p != PagingArg::Off);
    if paging.is_none() {
        for (given, flag) in [(a.migration.is_some(), "--migration"), (a.timeline.is_some(), "--timeline"), (a.paging_only, "--paging-only")] {
            if given {
                bail!("{flag} applies to the demand-paging runs: add --paging nvlink or pcie");
            }
        }
    }
    if a.paging_only && !a.oplog_sweep.is_empty() {
        bail!("--oplog-sweep adds to the table without faults, which --paging-only skips");
    }
    if a.oplog_full.is_some() && a.oplog_sweep.is_empty() {
        bail!("--oplog-full sets the policy of the --oplog-sweep runs: give --oplog-sweep SIZES");
    }
    let oplog_full: OplogFull = a.oplog_full.unwrap_or(OplogFullArg::Stall).into();
    let migration = a.migration.unwrap_or(64 * 1024);
    for &bytes in &a.oplog_sweep {
        with_oplog(&cfg, bytes, oplog_full)?;
    }
    // The demand-paging runs: stall-on-fault, then the replay queue alone, with thread-block
    // switching on faults (through memory, and ideal), and with local handling.
    let paged: Option<(GpuConfig, Vec<GpuConfig>)> = match paging {
        None => None,
        Some(link) => Some(paged_configs(&cfg, link.into(), migration, if a.migration.is_some() { &["--migration"] } else { &[] })?),
    };
    if let Some(d) = &a.timeline {
        crate::checks::output_dir(d, "--timeline")?;
    }
    if let Some(d) = &a.svg {
        crate::checks::output_dir(d, "--svg")?;
    }
    let base_cfg = base_config(&cfg);
    let scheme_cfgs: Vec<GpuConfig> = if a.paging_only { Vec::new() } else { scheme_configs(&base_cfg)? };
    let sweep_cfgs: Vec<GpuConfig> = a.oplog_sweep.iter().map(|&bytes| with_oplog(&base_cfg, bytes, oplog_full)).collect::<Result<_>>()?;
    // Every run the tables need, each distinct configuration and kernel once, on every core
    // (`--jobs`); the tables are printed from the results after.
    let mut plan = Vec::new();
    for (k, &size) in kernels.iter().zip(&sizes) {
        let mut cfgs: Vec<&GpuConfig> = Vec::new();
        if !a.paging_only {
            cfgs.push(&base_cfg);
            cfgs.extend(&scheme_cfgs);
            cfgs.extend(&sweep_cfgs);
        }
        if let Some((c, qs)) = &paged {
            cfgs.push(&base_cfg);
            cfgs.push(c);
            cfgs.extend(qs);
        }
        for c in cfgs {
            plan.push((c, k.as_str(), size));
        }
    }
    let pb = crate::par::Progress::new("faults", Runs::count(&plan), a.jobs.workers()).with_slurm(&a.slurm);
    let runs = Runs::run(plan, limits, &pb);
    pb.finish();
    if !a.paging_only {
    println!("preemptible faults on {} ({} SMs), no page faults: performance relative to the stall-on-fault baseline (baseline cycles / scheme cycles)", cfg.name, cfg.num_sms());
    print!("{:<10} {:>8} {:>10}", "kernel", "size", "baseline");
    for sc in SCHEMES {
        print!(" {:>10}", sc.name);
    }
    println!();
    let mut rel: Vec<Vec<f64>> = vec![Vec::new(); SCHEMES.len()];
    let mut sweep_rows = Vec::new();
    for (k, &size) in kernels.iter().zip(&sizes) {
        let base = runs.get(&base_cfg, k, size)?.cycles;
        print!("{:<10} {:>8} {:>10}", k, size, base);
        for (i, sc) in scheme_cfgs.iter().enumerate() {
            let x = base as f64 / runs.get(sc, k, size)?.cycles as f64;
            rel[i].push(x);
            print!(" {:>9.1}%", 100.0 * x);
        }
        println!();
        if !a.oplog_sweep.is_empty() {
            let mut row = Vec::new();
            for c in &sweep_cfgs {
                row.push(base as f64 / runs.get(c, k, size)?.cycles as f64);
            }
            sweep_rows.push(row);
        }
    }
    print!("{:<10} {:>8} {:>10}", "geomean", "", "");
    for r in &rel {
        print!(" {:>9.1}%", 100.0 * geomean(r));
    }
    println!();
    if !a.oplog_sweep.is_empty() {
        println!("\noperand log size sweep (with the replay queue), no page faults: performance relative to the baseline");
        print!("{:<10}", "kernel");
        for &b in &a.oplog_sweep {
            print!(" {:>9}", format!("{}B", human(b)));
        }
        println!();
        for (k, row) in kernels.iter().zip(&sweep_rows) {
            print!("{k:<10}");
            for x in row {
                print!(" {:>8.1}%", 100.0 * x);
            }
            println!();
        }
        print!("{:<10}", "geomean");
        for i in 0..a.oplog_sweep.len() {
            let col: Vec<f64> = sweep_rows.iter().map(|r| r[i]).collect();
            print!(" {:>8.1}%", 100.0 * geomean(&col));
        }
        println!();
    }
    if let Some(d) = &a.svg {
        std::fs::create_dir_all(d).map_err(|e| anyhow!("cannot create {}: {e}", d.display()))?;
        let series: Vec<(String, Vec<f64>)> = SCHEMES.iter().zip(&rel).map(|(sc, v)| (sc.name.to_string(), v.clone())).collect();
        let path = d.join("schemes.svg");
        crate::plot::bars(&path, "Preemptible faults without faults: performance relative to stall-on-fault", "performance relative to stall-on-fault (%)", &kernels, &series)?;
        println!("wrote {}", path.display());
        if !a.oplog_sweep.is_empty() {
            let series: Vec<(String, Vec<f64>)> = a.oplog_sweep.iter().enumerate().map(|(i, &b)| (format!("OL {}B", human(b)), sweep_rows.iter().map(|r| r[i]).collect())).collect();
            let path = d.join("oplog-sweep.svg");
            crate::plot::bars(&path, "Operand log size: performance relative to stall-on-fault", "performance relative to stall-on-fault (%)", &kernels, &series)?;
            println!("wrote {}", path.display());
        }
    }
    }
    if let Some((c, qs)) = &paged {
        if let Some(d) = &a.timeline {
            std::fs::create_dir_all(d).map_err(|e| anyhow!("cannot create {}: {e}", d.display()))?;
        }
        println!(
            "\ndemand paging over {:?} ({} KB units), stall-on-fault: all data start in host memory",
            c.paging.link,
            c.paging.migration_bytes / 1024
        );
        println!(
            "{:<10} {:>12} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}",
            "kernel", "cycles", "slowdown", "faults", "migrations", "mean lat", "handler", "faulted", "min act", "RQ", "switch", "ideal", "local"
        );
        let mut speedups: Vec<Vec<f64>> = vec![Vec::new(); 4];
        for (k, &size) in kernels.iter().zip(&sizes) {
            let row = paged_row(&runs, &base_cfg, c, qs, k, size)?;
            let sp = &row.speedups;
            for (i, x) in sp.iter().enumerate() {
                speedups[i].push(*x);
            }
            println!(
                "{:<10} {:>12} {:>8.2}x {:>10} {:>10} {:>10.0} {:>8.1}% {:>8.1}% {:>9.2} {:>7.1}% {:>7.1}% {:>7.1}% {:>7.1}%",
                k,
                row.cycles,
                row.slowdown,
                row.faults,
                row.migrations,
                row.mean_latency,
                100.0 * row.handler,
                100.0 * row.faulted,
                row.min_active,
                100.0 * sp[0],
                100.0 * sp[1],
                100.0 * sp[2],
                100.0 * sp[3]
            );
            if let Some(d) = &a.timeline {
                let path = d.join(format!("{k}.csv"));
                let tl = runs.get(c, k, size)?.timeline.as_ref().ok_or_else(|| anyhow!("{k}: a paging run without a timeline"))?;
                std::fs::write(&path, crate::run_cmd::timeline_csv(tl)).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
            }
        }
        println!(
            "{:<10} {:>12} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>7.1}% {:>7.1}% {:>7.1}% {:>7.1}%",
            "geomean", "", "", "", "", "", "", "", "", 100.0 * geomean(&speedups[0]), 100.0 * geomean(&speedups[1]), 100.0 * geomean(&speedups[2]), 100.0 * geomean(&speedups[3])
        );
        if let Some(d) = &a.svg {
            std::fs::create_dir_all(d).map_err(|e| anyhow!("cannot create {}: {e}", d.display()))?;
            let series = vec![("RQ".to_string(), speedups[0].clone()), ("RQ + TB switch".to_string(), speedups[1].clone()), ("ideal switch".to_string(), speedups[2].clone()), ("RQ + local".to_string(), speedups[3].clone())];
            let path = d.join(format!("tb-switch-{}.svg", format!("{:?}", c.paging.link).to_lowercase()));
            crate::plot::bars(&path, &format!("Thread-block switching on faults ({:?}): performance relative to stall-on-fault", c.paging.link), "performance relative to stall-on-fault (%)", &kernels, &series)?;
            println!("wrote {}", path.display());
        }
        println!("(RQ, switch, ideal, local: stall-on-fault cycles over the replay queue's, alone, with thread-block switching on faults, with 1-cycle switches, and with local handling of faults on pages with no data)");
        println!("(slowdown: against the same kernel with every page resident; handler: share of cycles the host handler was busy; faulted: share of resident warp-cycles with a fault outstanding; min act: fewest mean active warps per SM in any timeline bin)");
    }
    Ok(ExitCode::SUCCESS)
}

