//! `mpgpu sweep`: one library application at many resource specifications (registers per
//! thread, threads per block, scratchpad per block), the same work each, under each allocation
//! scheme: the cycles of every point to a CSV file, and each scheme's performance range (Zorua,
//! §2.1, §5.2, §6.1; docs/zorua.md).

use anyhow::{anyhow, bail, Context, Result};
use mpgpu_ref::config::{Alloc, GpuConfig};
use mpgpu_ref::library::{find, Spec};
use mpgpu_ref::timing::gpu::Gpu;
use mpgpu_ref::timing::RunLimits;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The library application (see `mpgpu kernels`).
    app: String,
    /// Registers per thread: A..B, or A..B:STEP (default step 4).
    #[arg(long, value_parser = parse_range)]
    regs: Option<(u32, u32, Option<u32>)>,
    /// Threads per block: C..D, or C..D:STEP (default step 32).
    #[arg(long, value_parser = parse_range)]
    threads: Option<(u32, u32, Option<u32>)>,
    /// Scratchpad bytes per block: E..F, or E..F:STEP (default step 1024).
    #[arg(long, value_parser = parse_range)]
    smem: Option<(u32, u32, Option<u32>)>,
    /// A preset name (see `mpgpu configs`) or a TOML file.
    #[arg(long, default_value = "fermi15")]
    config: String,
    /// The allocation schemes to run each point under, comma-separated.
    #[arg(long, value_delimiter = ',', default_values = ["block", "wlm", "zorua"], value_parser = ["block", "zorua", "wlm"])]
    alloc: Vec<String>,
    /// Problem size (default: the application's default; see `mpgpu kernels`).
    #[arg(long)]
    size: Option<u32>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The CSV file (default target/sweep/<app>.csv).
    #[arg(long)]
    csv: Option<PathBuf>,
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
    /// Also write every point, with Zorua's counters (summed over the SMs), as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also plot execution time against the swept dimension, relative to the best point of
    /// all schemes, one line per scheme, as SVG here (a sweep of one dimension only).
    #[arg(long)]
    svg: Option<PathBuf>,
    /// The most simulations (specifications x schemes) a sweep may run; a larger sweep is
    /// refused before it starts, with its count.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    max_points: u64,
}

/// `A..B` or `A..B:STEP`.
fn parse_range(s: &str) -> Result<(u32, u32, Option<u32>), String> {
    let (r, step) = match s.split_once(':') {
        Some((r, st)) => (r, Some(st.trim().parse::<u32>().map_err(|_| format!("step `{st}` is not a whole number"))?)),
        None => (s, None),
    };
    let (a, b) = r.split_once("..").ok_or_else(|| format!("`{s}`: expected A..B or A..B:STEP"))?;
    let a: u32 = a.trim().parse().map_err(|_| format!("`{a}` is not a whole number"))?;
    let b: u32 = b.trim().parse().map_err(|_| format!("`{b}` is not a whole number"))?;
    if a > b || step == Some(0) {
        return Err(format!("`{s}`: expected A <= B and a step above 0"));
    }
    Ok((a, b, step))
}

/// The values of a range (its default step `step`), or the one `None` of a dimension not swept.
/// Materialise only after [`count`] is bounded.
fn values(r: Option<(u32, u32, Option<u32>)>, step: u32) -> Vec<Option<u32>> {
    match r {
        None => vec![None],
        Some((a, b, st)) => (a..=b).step_by(st.unwrap_or(step) as usize).map(Some).collect(),
    }
}

/// How many values [`values`] gives, without making them.
fn count(r: Option<(u32, u32, Option<u32>)>, step: u32) -> u128 {
    r.map_or(1, |(a, b, st)| ((b - a) / st.unwrap_or(step)) as u128 + 1)
}

/// The first and last values of a range (its default step `step`).
fn ends(r: Option<(u32, u32, Option<u32>)>, step: u32) -> [Option<u32>; 2] {
    r.map_or([None, None], |(a, b, st)| {
        let st = st.unwrap_or(step);
        [Some(a), Some(a + (b - a) / st * st)]
    })
}

/// One point of a sweep.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Point {
    pub alloc: Alloc,
    pub spec: Spec,
    pub cycles: u64,
    pub verified: bool,
    /// Blocks per SM the occupancy rule gives the application's first kernel.
    pub blocks_per_sm: u32,
    /// Under the block allocation or WLM, no block fits an SM: the point did not run.
    pub fits: bool,
    /// Schedulable warps per SM, the mean over the run: warps resident and not at a barrier
    /// under the block allocation, warps the coordinator has granted (at a barrier: not)
    /// under WLM and Zorua (Zorua §6.4).
    pub sched_warps: f64,
    pub zorua: Option<mpgpu_ref::timing::sm::ZoruaStats>,
}

/// Refuses a configuration whose `[compile]` section caps the kernels' registers: a sweep and
/// a study set each point's registers per thread themselves.
pub fn no_compile(cfg: &GpuConfig, flag: &str) -> Result<()> {
    if !cfg.compile.is_default() {
        anyhow::bail!("{flag} `{}`: its [compile] section caps every kernel's registers, and the sweep sets each point's registers per thread itself; leave [compile] out", cfg.name);
    }
    Ok(())
}

/// Runs application `app` at `spec` under `alloc` on `cfg`.
pub fn run_point(cfg: &GpuConfig, app: &str, size: u32, seed: u64, spec: Spec, alloc: Alloc, limits: RunLimits) -> Result<Point> {
    let b = find(app).ok_or_else(|| anyhow!("no application `{app}` (see `mpgpu kernels`)"))?;
    let mut cfg = cfg.clone();
    cfg.alloc = alloc;
    cfg.validate().map_err(|e| anyhow!("{e}"))?;
    let prog = b.program_at(size, seed, spec).map_err(|e| anyhow!(e))?;
    let k = spec.apply(&b, b.kernels().map_err(|e| anyhow!("{e}"))?).map_err(|e| anyhow!(e))?.0[0].clone();
    let blocks_per_sm = cfg.sm[0].occupancy(&k.footprint()).blocks;
    if alloc != Alloc::Zorua && blocks_per_sm == 0 {
        return Ok(Point { alloc, spec, cycles: 0, verified: false, blocks_per_sm, fits: false, sched_warps: 0.0, zorua: None });
    }
    let mut g = Gpu::new(&cfg);
    g.add_process(app, 0, 0, vec![(app.to_string(), prog)]);
    g.run(limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{app} at {} under {}: {e}", describe(&spec), alloc.name()))?;
    let r = g.result();
    let warp_cycles = match &r.zorua {
        Some(z) => z.sched_warp_cycles,
        None => r.sm.warp_cycles - r.sm.barrier_warp_cycles,
    };
    let sched_warps = warp_cycles as f64 / (r.cycles.max(1) * r.sm_count.max(1) as u64) as f64;
    Ok(Point { alloc, spec, cycles: r.cycles, verified: r.processes[0].verified, blocks_per_sm, fits: true, sched_warps, zorua: r.zorua })
}

pub fn describe(s: &Spec) -> String {
    let f = |v: Option<u32>| v.map_or("-".to_string(), |x| x.to_string());
    format!("regs {} threads {} smem {}", f(s.regs), f(s.threads), f(s.smem))
}

/// Creates the folder `path` goes in, if it names one.
pub fn create_parent(path: &std::path::Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display())),
        None => Ok(()),
    }
}

/// The share of accesses (`[to physical sets, to sets in swap]`) that went to physical sets;
/// none without accesses (the paper's hit rates, Zorua §6.4).
pub fn hit_rate(a: [u64; 2]) -> Option<f64> {
    (a[0] + a[1] > 0).then(|| a[0] as f64 / (a[0] + a[1]) as f64)
}

/// A text as one CSV field (RFC 4180): quoted, with its quotes doubled, if it holds a comma,
/// a quote or a line break.
pub fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A CSV field: the value, or empty.
pub fn csv_field<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// A hit rate as a CSV field (4 decimals, empty without accesses).
pub fn csv_hit_rate(a: [u64; 2]) -> String {
    csv_field(hit_rate(a).map(|r| format!("{r:.4}")))
}

/// The performance range of a set of cycle counts: worst over best, minus one (Zorua §6.1).
pub fn range(cycles: &[u64]) -> f64 {
    let best = *cycles.iter().min().unwrap_or(&1) as f64;
    let worst = *cycles.iter().max().unwrap_or(&1) as f64;
    worst / best - 1.0
}

pub fn sweep_cmd(a: SweepArgs) -> Result<ExitCode> {
    let b = find(&a.app).ok_or_else(|| anyhow!("no application `{}` (see `mpgpu kernels`)", a.app))?;
    if a.regs.is_none() && a.threads.is_none() && a.smem.is_none() {
        bail!("give at least one of --regs, --threads, --smem to sweep");
    }
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    no_compile(&cfg, "--config")?;
    let size = a.size.unwrap_or(b.default_size);
    // (each range's ends are checked against the application's bounds, and the number of
    // points bounded, before any point is made)
    let kernels = b.kernels().map_err(|e| anyhow!("{e}"))?;
    let [r0, r1] = ends(a.regs, 4);
    let [t0, t1] = ends(a.threads, 32);
    let [s0, s1] = ends(a.smem, 1024);
    for spec in [Spec { regs: r0, threads: t0, smem: s0, alloc: None }, Spec { regs: r1, threads: t1, smem: s1, alloc: None }] {
        spec.apply(&b, kernels.clone()).map_err(|e| anyhow!(e))?;
    }
    let allocs: Vec<Alloc> = a.alloc.iter().map(|x| Alloc::parse(x).map_err(|e| anyhow!(e))).collect::<Result<_>>()?;
    let points = count(a.regs, 4) * count(a.threads, 32) * count(a.smem, 1024) * allocs.len() as u128;
    crate::checks::bounded(points, "simulations (specifications x schemes)", a.max_points, "--max-points")?;
    let csv_path = a.csv.clone().unwrap_or_else(|| PathBuf::from(format!("target/sweep/{}.csv", b.name)));
    for (p, flag) in [(Some(&csv_path), "--csv"), (a.json.as_ref(), "--json"), (a.svg.as_ref(), "--svg")] {
        if let Some(p) = p {
            crate::checks::output_file(p, flag)?;
        }
    }
    let mut specs = Vec::new();
    for r in values(a.regs, 4) {
        for t in values(a.threads, 32) {
            for s in values(a.smem, 1024) {
                specs.push(Spec { regs: r, threads: t, smem: s, alloc: None });
            }
        }
    }
    let dims = [(a.regs, 4), (a.threads, 32), (a.smem, 1024)].iter().filter(|&&(r, step)| count(r, step) > 1).count();
    if a.svg.is_some() && dims != 1 {
        bail!("--svg plots a sweep of one dimension: give a range of more than one value for exactly one of --regs, --threads, --smem ({dims} given)");
    }
    // (every point is checked before any runs)
    for s in &specs {
        b.program_at(size, a.seed, *s).map_err(|e| anyhow!("{e}"))?;
    }
    let limits = a.limit.limits();
    println!("sweep: {} (size {size}) on {}, {} specifications x {} schemes", b.name, cfg.name, specs.len(), allocs.len());
    let runs: Vec<(Alloc, Spec)> = allocs.iter().flat_map(|&al| specs.iter().map(move |&s| (al, s))).collect();
    let pb = crate::par::Progress::new("sweep", runs.len(), a.jobs.workers()).with_slurm(&a.slurm);
    let points = pb.map_points(&runs, |(al, s)| format!("{} {}", al.name(), describe(s)), |&(al, s)| run_point(&cfg, b.name, size, a.seed, s, al, limits));
    pb.finish();
    let points: Vec<Point> = points.into_iter().collect::<Result<_>>()?;
    let mut csv = String::from("alloc,regs,threads,smem,fits,cycles,verified,blocks_per_sm,grants,reg_sets_swapped,smem_sets_swapped,reg_hit_rate,smem_hit_rate,swap_reads,swap_writes,swap_l1_hits\n");
    for p in &points {
        let f = csv_field::<u32>;
        let (g, rs, ss, rh, sh, sr, sw, sl) = match &p.zorua {
            Some(z) => (z.grants.to_string(), z.reg_sets[1].to_string(), z.smem_sets[1].to_string(), csv_hit_rate(z.reg_accesses), csv_hit_rate(z.smem_accesses), z.swap_reads.to_string(), z.swap_writes.to_string(), z.swap_l1_hits.to_string()),
            None => Default::default(),
        };
        let cycles = if p.fits { p.cycles.to_string() } else { String::new() };
        writeln!(csv, "{},{},{},{},{},{cycles},{},{},{g},{rs},{ss},{rh},{sh},{sr},{sw},{sl}", p.alloc.name(), f(p.spec.regs), f(p.spec.threads), f(p.spec.smem), p.fits, p.verified, p.blocks_per_sm).unwrap();
    }
    let path = csv_path;
    create_parent(&path)?;
    std::fs::write(&path, &csv).with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(j) = &a.json {
        create_parent(j)?;
        std::fs::write(j, serde_json::to_string_pretty(&points)?).with_context(|| format!("cannot write {}", j.display()))?;
        println!("wrote {}", j.display());
    }
    println!("{:<8} {:>10} {:>28} {:>10} {:>28} {:>8}", "alloc", "best", "at", "worst", "at", "range");
    for &al in &allocs {
        let ps: Vec<&Point> = points.iter().filter(|p| p.alloc == al && p.fits).collect();
        let skipped = points.iter().filter(|p| p.alloc == al && !p.fits).count();
        if skipped > 0 {
            println!("{:<8} {skipped} specifications fit no SM (not run)", al.name());
        }
        if ps.is_empty() {
            continue;
        }
        let best = ps.iter().min_by_key(|p| p.cycles).unwrap();
        let worst = ps.iter().max_by_key(|p| p.cycles).unwrap();
        let cycles: Vec<u64> = ps.iter().map(|p| p.cycles).collect();
        println!("{:<8} {:>10} {:>28} {:>10} {:>28} {:>7.1}%", al.name(), best.cycles, describe(&best.spec), worst.cycles, describe(&worst.spec), 100.0 * range(&cycles));
    }
    if let Some(svg) = &a.svg {
        plot_sweep(svg, b.name, &cfg.name, &allocs, &points)?;
        println!("wrote {}", svg.display());
    }
    let failed = points.iter().filter(|p| p.fits && !p.verified).count();
    println!("wrote {}", path.display());
    if failed > 0 {
        println!("{failed} points FAILED verification");
        return Ok(ExitCode::FAILURE);
    }
    println!("all outputs verified: PASS");
    Ok(ExitCode::SUCCESS)
}

/// The sweep's plot: execution time relative to the best point of every scheme, against the
/// dimension that varies.
fn plot_sweep(path: &std::path::Path, app: &str, config: &str, allocs: &[Alloc], points: &[Point]) -> Result<()> {
    let (name, get): (&str, fn(&Spec) -> Option<u32>) = {
        let varies = |f: fn(&Spec) -> Option<u32>| points.iter().any(|p| f(&p.spec) != f(&points[0].spec));
        if varies(|s| s.regs) {
            ("registers per thread", |s| s.regs)
        } else if varies(|s| s.threads) {
            ("threads per block", |s| s.threads)
        } else {
            ("scratchpad bytes per block", |s| s.smem)
        }
    };
    let mut xs: Vec<u32> = points.iter().filter_map(|p| get(&p.spec)).collect();
    xs.sort_unstable();
    xs.dedup();
    let best = points.iter().filter(|p| p.fits).map(|p| p.cycles).min().unwrap_or(1).max(1) as f64;
    let series: Vec<(String, Vec<Option<f64>>)> = allocs
        .iter()
        .map(|&al| {
            let v = xs.iter().map(|&x| points.iter().find(|p| p.alloc == al && p.fits && get(&p.spec) == Some(x)).map(|p| p.cycles as f64 / best)).collect();
            (al.name().to_string(), v)
        })
        .collect();
    create_parent(path)?;
    let xs: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    crate::plot::lines(path, &format!("{app} on {config}: execution time relative to the best point"), name, "execution time (best = 1)", &xs, &series)
}
