//! `mpgpu slicing`: Warped-Slicer's evaluation (Xu et al., ISCA 2016, §V): every workload of the
//! pair and triple classes under Left-Over, Even, Spatial, Warped-Slicer and the Oracle;
//! throughput (IPC), STP, ANTT and the minimum speedup, normalised to Left-Over; the Spatial
//! fallbacks; the profiled partitions against the Oracle's. CSV and SVG plots under `--out`.

use crate::plot;
use anyhow::{anyhow, Context, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunResult};
use mpgpu_ref::timing::metrics::metrics;
use mpgpu_ref::timing::slicer::{oracle_curves, SliceDecision, SliceParams, Slicer, Slicing};
use mpgpu_ref::timing::RunLimits;
use mpgpu_ref::workload::Workload;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SlicingArgs {
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    /// Directories of workload files (every `*.toml`, in name order).
    #[arg(default_values = ["workloads/slicing", "workloads/slicing3"])]
    dirs: Vec<PathBuf>,
    /// A preset name or a TOML file (at most 16 identical SMs).
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Where the CSV and the plots go.
    #[arg(long, default_value = "target/slicing")]
    out: PathBuf,
    #[command(flatten)]
    ws: crate::args::WsArgs,
    /// Halt each application at the warp-instructions it executes alone in this many cycles,
    /// replaying it until then (Warped-Slicer's run length, §V-A: 2000000); default: each runs
    /// its grid once.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    length: Option<u64>,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
}

/// The policies of the evaluation, Left-Over (the baseline every figure is normalised to) first.
pub(crate) const POLICIES: [Slicing; 5] = [Slicing::LeftOver, Slicing::Even, Slicing::Spatial, Slicing::WarpedSlicer, Slicing::Oracle];

/// One workload under one policy.
pub(crate) struct Row {
    pub ipc: f64,
    pub stp: f64,
    pub antt: f64,
    pub min_speedup: f64,
    pub cycles: u64,
    pub decision: Option<SliceDecision>,
    pub verified: bool,
}

/// A workload's rows, one per policy asked for, in that order.
pub(crate) struct Evaluated {
    pub name: String,
    pub kernels: usize,
    pub rows: Vec<Row>,
}

pub(crate) fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

pub(crate) fn describe(d: &Option<SliceDecision>) -> String {
    d.as_ref().map_or("-".into(), |d| d.to_string())
}

/// The runs before the workloads': each distinct process alone (for the metrics) and, with the
/// Oracle, each distinct process's curve (blocks per SM against IPC).
enum Solo<'a> {
    Alone(&'a str, &'a mpgpu_ref::workload::ProcessSpec),
    Curve(&'a str, &'a mpgpu_ref::workload::ProcessSpec),
}

fn solos<'a>(named: &'a [(String, Workload)], policies: &[Slicing], known: &Alone) -> Vec<Solo<'a>> {
    let (mut solos, mut seen) = (Vec::new(), std::collections::HashSet::new());
    for (name, w) in named {
        for p in &w.processes {
            if !known.contains_key(&format!("{p:?}")) && seen.insert(format!("alone {p:?}")) {
                solos.push(Solo::Alone(name, p));
            }
            // (a curve is the kernel's whole grid at each block count, whatever its target)
            if policies.contains(&Slicing::Oracle) && seen.insert(format!("curve {:?}", mpgpu_ref::workload::ProcessSpec { name: String::new(), arrival: 0, insts: None, ..p.clone() })) {
                solos.push(Solo::Curve(name, p));
            }
        }
    }
    solos
}

/// Each process's run alone (for the metrics), by its spec: [`evaluate`] fills it and reuses
/// what it holds.
pub(crate) type Alone = HashMap<String, RunResult>;

/// The simulations [`evaluate`] runs with nothing known alone (and [`with_targets`] before it,
/// given a length).
pub(crate) fn point_count(named: &[(String, Workload)], policies: &[Slicing], length: Option<u64>) -> usize {
    let targets = if length.is_some() { distinct(named).len() } else { 0 };
    targets + solos(named, policies, &Alone::new()).len() + named.len() * policies.len()
}

/// A process as it runs alone (its arrival aside): what its target is keyed by.
fn alone_key(p: &mpgpu_ref::workload::ProcessSpec) -> String {
    format!("{:?}", mpgpu_ref::workload::ProcessSpec { arrival: 0, ..p.clone() })
}

/// Every distinct process of the workloads (as it would run alone), in order of first
/// appearance.
fn distinct(named: &[(String, Workload)]) -> Vec<(&str, &mpgpu_ref::workload::ProcessSpec)> {
    let mut seen = std::collections::HashSet::new();
    named.iter().flat_map(|(n, w)| w.processes.iter().map(move |p| (n.as_str(), p))).filter(|(_, p)| seen.insert(alone_key(p))).collect()
}

/// Whether the workloads can take instruction targets from alone runs of `cycles` cycles
/// (checked before any simulation): within `--max-cycles`, and no `min_runs` or
/// `replay = false`, which a target replaces.
pub(crate) fn check_targets(named: &[(String, Workload)], cycles: u64, limits: RunLimits) -> Result<()> {
    if cycles > limits.max_cycles {
        return Err(anyhow!("the run length, {cycles} cycles alone, passes --max-cycles {}", limits.max_cycles));
    }
    for (n, w) in named {
        if w.min_runs.is_some() {
            return Err(anyhow!("{n}: field `min_runs`: instruction targets (--length) replay each process until it halts instead; remove it"));
        }
        if let Some(p) = w.processes.iter().find(|p| !p.replay) {
            return Err(anyhow!("{n}: process `{}`: field `replay = false`: instruction targets (--length) replay each process until it halts; remove it", crate::checks::shown(&p.name)));
        }
    }
    Ok(())
}

/// The workloads with every process's instruction target: what it executes alone on `cfg` in
/// `cycles` cycles (a round of points on `pb`, one per distinct process). Also returns the
/// points' run times, summed. The caller checks the workloads first ([`check_targets`]).
pub(crate) fn with_targets(cfg: &GpuConfig, named: &[(String, Workload)], cycles: u64, limits: RunLimits, pb: &crate::par::Progress) -> Result<(Vec<(String, Workload)>, f64)> {
    let ps = distinct(named);
    let found = pb.map_points(
        &ps,
        |(_, p)| format!("{} alone for {cycles} cycles", p.name),
        |(n, p)| -> Result<(u64, f64)> {
            let t = std::time::Instant::now();
            let i = mpgpu_ref::timing::insts_in(cfg, p, cycles, limits).map_err(|e| anyhow!("{n}: {} alone for its target: {e}", p.name))?;
            Ok((i, t.elapsed().as_secs_f64()))
        },
    );
    let mut targets = HashMap::new();
    let mut secs = 0.0;
    for ((_, p), r) in ps.iter().zip(found) {
        let (i, took) = r?;
        secs += took;
        targets.insert(alone_key(p), i);
    }
    let out = named
        .iter()
        .map(|(n, w)| {
            let mut w = w.clone();
            for p in &mut w.processes {
                p.insts = Some(targets[&alone_key(p)]);
            }
            (n.clone(), w)
        })
        .collect();
    Ok((out, secs))
}

/// Every workload under every policy of `policies`, with the metrics against each process
/// alone: two rounds of points on `pb` (the solo runs, then the workloads'). Each point is keyed
/// as a sequential run would key it, so the results do not depend on `--jobs`. Also returns the
/// points' run times, summed (seconds of one core).
pub(crate) fn evaluate(cfg: &GpuConfig, named: &[(String, Workload)], policies: &[Slicing], params: SliceParams, limits: RunLimits, alone_cache: &mut Alone, pb: &crate::par::Progress) -> Result<(Vec<Evaluated>, f64)> {
    let solos = solos(named, policies, alone_cache);
    let solo_runs = pb.map_points(
        &solos,
        |s| match s {
            Solo::Alone(_, p) => format!("{} alone", p.name),
            Solo::Curve(_, p) => format!("{} oracle curve", p.name),
        },
        |s| -> Result<(Option<RunResult>, HashMap<String, [u64; mpgpu_spec::units::wf::NMAX]>, f64)> {
            let t = std::time::Instant::now();
            let (r, c) = match s {
                Solo::Alone(name, p) => {
                    let solo = Workload::alone(p);
                    let r = mpgpu_ref::timing::run_workload(cfg, &solo, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{name}: {} alone: {e}", p.name))?;
                    (Some(r), HashMap::new())
                }
                Solo::Curve(name, p) => {
                    let mut cache = HashMap::new();
                    let solo = Workload::alone(p);
                    oracle_curves(cfg, &solo, limits, &mut cache).map_err(|e| anyhow!("{name}: oracle curves: {e}"))?;
                    (None, cache)
                }
            };
            Ok((r, c, t.elapsed().as_secs_f64()))
        },
    );
    let mut secs = 0.0;
    let mut curve_cache = HashMap::new();
    for (s, r) in solos.iter().zip(solo_runs) {
        let (run, curves, took) = r?;
        secs += took;
        if let (Solo::Alone(_, p), Some(run)) = (s, run) {
            alone_cache.insert(format!("{p:?}"), run);
        }
        curve_cache.extend(curves);
    }
    // (every workload's curves, all from the cache just filled)
    let curves: Vec<_> = if policies.contains(&Slicing::Oracle) {
        named.iter().map(|(name, w)| oracle_curves(cfg, w, limits, &mut curve_cache).map(Some).map_err(|e| anyhow!("{name}: oracle curves: {e}"))).collect::<Result<_>>()?
    } else {
        vec![None; named.len()]
    };
    let runs: Vec<(usize, Slicing)> = (0..named.len()).flat_map(|wi| policies.iter().map(move |&pol| (wi, pol))).collect();
    let results = pb.map_points(
        &runs,
        |(wi, pol)| format!("{} under {}", named[*wi].0, pol.name()),
        |(wi, pol)| -> Result<(RunResult, f64)> {
            let t = std::time::Instant::now();
            let (name, w) = (&named[*wi].0, &named[*wi].1);
            let slicer = match (pol, &curves[*wi]) {
                (Slicing::Oracle, Some(c)) => Slicer::oracle(params, cfg.num_sms() as usize, c.clone()),
                _ => Slicer::new(*pol, params, cfg.num_sms() as usize),
            };
            let mut gpu = Gpu::with_dispatcher(cfg, Box::new(slicer));
            gpu.add_workload(w).map_err(|e| anyhow!("{name}: {e}"))?;
            gpu.run(limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{name} under {}: {e}", pol.name()))?;
            Ok((Slicer::result(&gpu), t.elapsed().as_secs_f64()))
        },
    );
    let mut out = Vec::new();
    let mut results = results.into_iter();
    for (name, w) in named {
        let alone: Vec<RunResult> = w.processes.iter().map(|p| alone_cache[&format!("{p:?}")].clone()).collect();
        let mut rows = Vec::new();
        for _ in policies {
            let (r, took) = results.next().expect("a run per workload and policy")?;
            secs += took;
            let m = metrics(&r, &alone);
            let min_speedup = m.processes.iter().map(|p| 1.0 / p.ntt).fold(f64::INFINITY, f64::min);
            let decision = r.slicing.as_ref().and_then(|s| s.decisions.first().cloned());
            let verified = r.processes.iter().all(|p| p.verified);
            // (with instruction targets, the instructions up to each process's halt: its
            // blocks that run on after it do not count)
            let insts = if r.processes.iter().all(|p| p.halted) { r.processes.iter().map(|p| p.insts).sum() } else { r.warp_insts };
            rows.push(Row { ipc: insts as f64 / r.cycles as f64, stp: m.stp, antt: m.antt, min_speedup, cycles: r.cycles, decision, verified });
        }
        out.push(Evaluated { name: name.clone(), kernels: w.processes.len(), rows });
    }
    Ok((out, secs))
}

/// The workload files of `dirs` (every `*.toml`, in name order), read and named by file stem.
pub(crate) fn load_dirs(dirs: &[PathBuf]) -> Result<Vec<(String, Workload)>> {
    let mut files = Vec::new();
    for d in dirs {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d).with_context(|| format!("cannot read {}", d.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        v.sort();
        files.extend(v);
    }
    if files.is_empty() {
        return Err(anyhow!("no workload files (*.toml) in {}", dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    files
        .iter()
        .map(|f| {
            let w = Workload::load(f).map_err(|e| anyhow!("{e}"))?;
            Ok((f.file_stem().map(|s| crate::checks::shown(&s.to_string_lossy()).into_owned()).unwrap_or_default(), w))
        })
        .collect()
}

/// How many of `set` fell back to Spatial under policy `i` of [`POLICIES`] (its first decision).
pub(crate) fn fell_back(set: &[&Evaluated], i: usize) -> usize {
    set.iter().filter(|e| e.rows[i].decision.as_ref().is_some_and(|d| d.spatial)).count()
}

/// Whether Warped-Slicer's profiled partition of `e` is within one block of the Oracle's,
/// kernel by kernel (or both Spatial).
pub(crate) fn is_near_oracle(e: &Evaluated) -> bool {
    matches!((&e.rows[3].decision, &e.rows[4].decision), (Some(p), Some(o)) if p.within_one_of(o))
}

/// How many of `set` are [`is_near_oracle`].
pub(crate) fn near_oracle(set: &[&Evaluated]) -> usize {
    set.iter().filter(|e| is_near_oracle(e)).count()
}

/// The summary of `set` (evaluated under [`POLICIES`]): each policy's IPC, STP, ANTT and
/// minimum speedup over Left-Over's (geometric means) as a Markdown table, Warped-Slicer's IPC
/// against each other policy, its and the Oracle's fallbacks, and its profile's accuracy.
pub(crate) fn summary(set: &[&Evaluated]) -> String {
    let mut md = String::from("| policy | IPC | STP | ANTT | minimum speedup |\n| --- | ---: | ---: | ---: | ---: |\n");
    for (i, pol) in POLICIES.iter().enumerate() {
        let f = |g: &dyn Fn(&Row) -> f64| geomean(&set.iter().map(|e| g(&e.rows[i]) / g(&e.rows[0])).collect::<Vec<_>>());
        writeln!(md, "| {} | {:.3} | {:.3} | {:.3} | {:.3} |", pol.name(), f(&|r| r.ipc), f(&|r| r.stp), f(&|r| r.antt), f(&|r| r.min_speedup)).ok();
    }
    let ws = |i: usize| geomean(&set.iter().map(|e| e.rows[3].ipc / e.rows[i].ipc).collect::<Vec<_>>());
    writeln!(md, "\nWarped-Slicer's IPC against Left-Over {:+.1} %, Even {:+.1} %, Spatial {:+.1} %, Oracle {:+.1} %.", 100.0 * (ws(0) - 1.0), 100.0 * (ws(1) - 1.0), 100.0 * (ws(2) - 1.0), 100.0 * (ws(4) - 1.0)).ok();
    let (fell, ofell, near) = (fell_back(set, 3), fell_back(set, 4), near_oracle(set));
    writeln!(md, "Fell back to Spatial: Warped-Slicer {fell} of {}, Oracle {ofell}. Profiled partition within one block of the Oracle's (or both Spatial): {near} of {} ({:.0} %).", set.len(), set.len(), 100.0 * near as f64 / set.len() as f64).ok();
    md
}

/// The water-filling unit reads up to 16 identical SMs: the configurations it can run on.
pub(crate) fn check_config(cfg: &GpuConfig) -> Result<()> {
    if cfg.num_sms() as usize > mpgpu_spec::units::wf::MAX_SMS || cfg.sm.len() != 1 {
        return Err(anyhow!("--config {}: the water-filling unit reads up to {} identical SMs", cfg.name, mpgpu_spec::units::wf::MAX_SMS));
    }
    Ok(())
}

pub fn slicing_cmd(a: SlicingArgs) -> Result<ExitCode> {
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    check_config(&cfg)?;
    let params = a.ws.params();
    let limits = a.limit.limits();
    // (every workload is read, and the output folder checked, before the first simulation)
    let named = load_dirs(&a.dirs)?;
    if let Some(c) = a.length {
        check_targets(&named, c, limits).map_err(|e| anyhow!("--length {c}: {e}"))?;
    }
    crate::checks::output_dir(&a.out, "--out")?;
    let mut plots = Vec::new();
    let mut csv = String::from("workload,kernels,policy,cycles,ipc,stp,antt,min_speedup,decision,verified\n");
    let t0 = std::time::Instant::now();
    let pb = crate::par::Progress::new("slicing", point_count(&named, &POLICIES, a.length), a.jobs.workers()).with_slurm(&a.slurm);
    let named = match a.length {
        Some(c) => {
            let (w, _) = with_targets(&cfg, &named, c, limits, &pb)?;
            for (n, w) in &w {
                println!("{n:<24} targets: {}", w.processes.iter().map(|p| format!("{} {}", p.name, p.insts.unwrap_or(0))).collect::<Vec<_>>().join(", "));
            }
            w
        }
        None => named,
    };
    let (evaluated, _) = evaluate(&cfg, &named, &POLICIES, params, limits, &mut Alone::new(), &pb)?;
    pb.finish();
    for e in &evaluated {
        for (pol, row) in POLICIES.iter().zip(&e.rows) {
            writeln!(csv, "{},{},{},{},{:.4},{:.4},{:.4},{:.4},{},{}", e.name, e.kernels, pol.name(), row.cycles, row.ipc, row.stp, row.antt, row.min_speedup, crate::sweep_cmd::csv_text(&describe(&row.decision)), row.verified).ok();
        }
        let rows = &e.rows;
        let lo = &rows[0];
        println!(
            "{:<24} {}  IPC/LO: {}  WS {} oracle {}",
            e.name,
            if rows.iter().all(|r| r.verified) { "PASS" } else { "FAIL" },
            rows.iter().map(|r| format!("{:.3}", r.ipc / lo.ipc)).collect::<Vec<_>>().join(" "),
            describe(&rows[3].decision),
            describe(&rows[4].decision)
        );
    }
    let csv_path = a.out.join("slicing.csv");
    std::fs::write(&csv_path, &csv).with_context(|| format!("cannot write {}", csv_path.display()))?;
    // Summaries per kernel count.
    let mut md = String::new();
    for k in [2usize, 3] {
        let set: Vec<&Evaluated> = evaluated.iter().filter(|e| e.kernels == k).collect();
        if set.is_empty() {
            continue;
        }
        writeln!(md, "\n{k} kernels, {} workloads (geometric means, normalised to Left-Over):\n", set.len()).ok();
        md += &summary(&set);
        // Plots: IPC and minimum speedup per workload, normalised to Left-Over.
        let groups: Vec<String> = set.iter().map(|e| e.name.clone()).collect();
        for (what, g) in [("ipc", (&|r: &Row| r.ipc) as &dyn Fn(&Row) -> f64), ("min-speedup", &|r: &Row| r.min_speedup), ("antt", &|r: &Row| r.antt)] {
            let series: Vec<(String, Vec<f64>)> = (1..POLICIES.len()).map(|i| (POLICIES[i].name().to_string(), set.iter().map(|e| g(&e.rows[i]) / g(&e.rows[0])).collect())).collect();
            let path = a.out.join(format!("{what}-{k}.svg"));
            plot::bars(&path, &format!("{what} normalised to Left-Over, {k} kernels ({})", cfg.name), &format!("{what} relative to Left-Over (%)"), &groups, &series)?;
            plots.push(path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()));
        }
    }
    println!("{md}");
    let md_path = a.out.join("summary.md");
    std::fs::write(&md_path, &md).with_context(|| format!("cannot write {}", md_path.display()))?;
    println!("wrote {}, {} and the plots {} in {:.0} s", csv_path.display(), md_path.display(), plots.join(", "), t0.elapsed().as_secs_f64());
    let ok = evaluated.iter().all(|e| e.rows.iter().all(|r| r.verified));
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
