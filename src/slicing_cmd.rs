//! `mpgpu slicing`: Warped-Slicer's evaluation (Xu et al., ISCA 2016, §V): every workload of the
//! pair and triple classes under Left-Over, Even, Spatial, Warped-Slicer and the Oracle;
//! throughput (IPC), STP, ANTT and the minimum speedup, normalised to Left-Over; the Spatial
//! fallbacks; the profiled partitions against the Oracle's. CSV and SVG plots under `--out`.

use crate::plot;
use anyhow::{anyhow, Context, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunResult};
use mpgpu_ref::timing::metrics::metrics;
use mpgpu_ref::timing::slicer::{oracle_curves, SliceDecision, Slicer, Slicing};
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
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
}

const POLICIES: [Slicing; 5] = [Slicing::LeftOver, Slicing::Even, Slicing::Spatial, Slicing::WarpedSlicer, Slicing::Oracle];

/// One workload under one policy.
struct Row {
    ipc: f64,
    stp: f64,
    antt: f64,
    min_speedup: f64,
    cycles: u64,
    decision: Option<SliceDecision>,
    verified: bool,
}

fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn describe(d: &Option<SliceDecision>) -> String {
    d.as_ref().map_or("-".into(), |d| d.to_string())
}

pub fn slicing_cmd(a: SlicingArgs) -> Result<ExitCode> {
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    if cfg.num_sms() as usize > mpgpu_spec::units::wf::MAX_SMS || cfg.sm.len() != 1 {
        return Err(anyhow!("--config {}: the water-filling unit reads up to {} identical SMs", cfg.name, mpgpu_spec::units::wf::MAX_SMS));
    }
    let params = a.ws.params();
    let limits = a.limit.limits();
    let mut files = Vec::new();
    for d in &a.dirs {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d).with_context(|| format!("cannot read {}", d.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        v.sort();
        files.extend(v);
    }
    if files.is_empty() {
        return Err(anyhow!("no workload files (*.toml) in {}", a.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")));
    }
    // (every workload is read, and the output folder checked, before the first simulation)
    let workloads: Vec<Workload> = files.iter().map(|f| Workload::load(f).map_err(|e| anyhow!("{e}"))).collect::<Result<_>>()?;
    crate::checks::output_dir(&a.out, "--out")?;
    let mut plots = Vec::new();
    let mut csv = String::from("workload,kernels,policy,cycles,ipc,stp,antt,min_speedup,decision,verified\n");
    let t0 = std::time::Instant::now();
    let names: Vec<String> = files.iter().map(|f| f.file_stem().map(|s| crate::checks::shown(&s.to_string_lossy()).into_owned()).unwrap_or_default()).collect();
    // The points, on every core: first each distinct process alone (for the metrics) and each
    // distinct process's Oracle curve (blocks per SM against IPC), then every workload under
    // every policy. Each is keyed as the sequential run keyed it, so that the results do not
    // depend on `--jobs`.
    enum Solo<'a> {
        Alone(&'a str, &'a mpgpu_ref::workload::ProcessSpec),
        Curve(&'a str, &'a mpgpu_ref::workload::ProcessSpec),
    }
    let (mut solos, mut seen) = (Vec::new(), std::collections::HashSet::new());
    for (name, w) in names.iter().zip(&workloads) {
        for p in &w.processes {
            if seen.insert(format!("alone {p:?}")) {
                solos.push(Solo::Alone(name, p));
            }
            if seen.insert(format!("curve {:?}", mpgpu_ref::workload::ProcessSpec { name: String::new(), arrival: 0, ..p.clone() })) {
                solos.push(Solo::Curve(name, p));
            }
        }
    }
    let pb = crate::par::Progress::new("slicing", solos.len() + workloads.len() * POLICIES.len(), a.jobs.workers()).with_slurm(&a.slurm);
    let solo_runs = pb.map_points(
        &solos,
        |s| match s {
            Solo::Alone(_, p) => format!("{} alone", p.name),
            Solo::Curve(_, p) => format!("{} oracle curve", p.name),
        },
        |s| -> Result<(Option<RunResult>, HashMap<String, [u64; mpgpu_spec::units::wf::NMAX]>)> {
            match s {
                Solo::Alone(name, p) => {
                    let solo = Workload::alone(p);
                    let r = mpgpu_ref::timing::run_workload(&cfg, &solo, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{name}: {} alone: {e}", p.name))?;
                    Ok((Some(r), HashMap::new()))
                }
                Solo::Curve(name, p) => {
                    let mut cache = HashMap::new();
                    let solo = Workload::alone(p);
                    oracle_curves(&cfg, &solo, limits, &mut cache).map_err(|e| anyhow!("{name}: oracle curves: {e}"))?;
                    Ok((None, cache))
                }
            }
        },
    );
    let mut alone_cache: HashMap<String, RunResult> = HashMap::new();
    let mut curve_cache = HashMap::new();
    for (s, r) in solos.iter().zip(solo_runs) {
        let (run, curves) = r?;
        if let (Solo::Alone(_, p), Some(run)) = (s, run) {
            alone_cache.insert(format!("{p:?}"), run);
        }
        curve_cache.extend(curves);
    }
    // (every workload's curves, all from the cache just filled)
    let curves: Vec<_> = names.iter().zip(&workloads).map(|(name, w)| oracle_curves(&cfg, w, limits, &mut curve_cache).map_err(|e| anyhow!("{name}: oracle curves: {e}"))).collect::<Result<_>>()?;
    let runs: Vec<(usize, Slicing)> = (0..workloads.len()).flat_map(|wi| POLICIES.map(|pol| (wi, pol))).collect();
    let results = pb.map_points(
        &runs,
        |(wi, pol)| format!("{} under {}", names[*wi], pol.name()),
        |(wi, pol)| -> Result<RunResult> {
            let (name, w) = (&names[*wi], &workloads[*wi]);
            let slicer = match pol {
                Slicing::Oracle => Slicer::oracle(params, cfg.num_sms() as usize, curves[*wi].clone()),
                _ => Slicer::new(*pol, params, cfg.num_sms() as usize),
            };
            let mut gpu = Gpu::with_dispatcher(&cfg, Box::new(slicer));
            gpu.add_workload(w).map_err(|e| anyhow!("{name}: {e}"))?;
            gpu.run(limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{name} under {}: {e}", pol.name()))?;
            Ok(Slicer::result(&gpu))
        },
    );
    pb.finish();
    // (per workload: the rows of every policy)
    let mut all: Vec<(String, usize, Vec<Row>)> = Vec::new();
    let mut results = results.into_iter();
    for (name, w) in names.iter().zip(&workloads) {
        let alone: Vec<RunResult> = w.processes.iter().map(|p| alone_cache[&format!("{p:?}")].clone()).collect();
        let mut rows = Vec::new();
        for pol in POLICIES {
            let r = results.next().expect("a run per workload and policy")?;
            let m = metrics(&r, &alone);
            let min_speedup = m.processes.iter().map(|p| 1.0 / p.ntt).fold(f64::INFINITY, f64::min);
            let decision = r.slicing.as_ref().and_then(|s| s.decisions.first().cloned());
            let verified = r.processes.iter().all(|p| p.verified);
            let row = Row { ipc: r.warp_insts as f64 / r.cycles as f64, stp: m.stp, antt: m.antt, min_speedup, cycles: r.cycles, decision, verified };
            writeln!(csv, "{name},{},{},{},{:.4},{:.4},{:.4},{:.4},{},{}", w.processes.len(), pol.name(), row.cycles, row.ipc, row.stp, row.antt, row.min_speedup, describe(&row.decision), row.verified).ok();
            rows.push(row);
        }
        let lo = &rows[0];
        println!(
            "{name:<24} {}  IPC/LO: {}  WS {} oracle {}",
            if rows.iter().all(|r| r.verified) { "PASS" } else { "FAIL" },
            rows.iter().map(|r| format!("{:.3}", r.ipc / lo.ipc)).collect::<Vec<_>>().join(" "),
            describe(&rows[3].decision),
            describe(&rows[4].decision)
        );
        all.push((name.clone(), w.processes.len(), rows));
    }
    let csv_path = a.out.join("slicing.csv");
    std::fs::write(&csv_path, &csv).with_context(|| format!("cannot write {}", csv_path.display()))?;
    // Summaries per kernel count.
    let mut md = String::new();
    for k in [2usize, 3] {
        let set: Vec<&(String, usize, Vec<Row>)> = all.iter().filter(|x| x.1 == k).collect();
        if set.is_empty() {
            continue;
        }
        writeln!(md, "\n{k} kernels, {} workloads (geometric means, normalised to Left-Over):\n", set.len()).ok();
        writeln!(md, "| policy | IPC | STP | ANTT | minimum speedup |\n| --- | ---: | ---: | ---: | ---: |").ok();
        for (i, pol) in POLICIES.iter().enumerate() {
            let f = |g: &dyn Fn(&Row) -> f64| geomean(&set.iter().map(|x| g(&x.2[i]) / g(&x.2[0])).collect::<Vec<_>>());
            writeln!(md, "| {} | {:.3} | {:.3} | {:.3} | {:.3} |", pol.name(), f(&|r| r.ipc), f(&|r| r.stp), f(&|r| r.antt), f(&|r| r.min_speedup)).ok();
        }
        let ws = |i: usize| geomean(&set.iter().map(|x| x.2[3].ipc / x.2[i].ipc).collect::<Vec<_>>());
        writeln!(md, "\nWarped-Slicer's IPC against Left-Over {:+.1} %, Even {:+.1} %, Spatial {:+.1} %, Oracle {:+.1} %.", 100.0 * (ws(0) - 1.0), 100.0 * (ws(1) - 1.0), 100.0 * (ws(2) - 1.0), 100.0 * (ws(4) - 1.0)).ok();
        let fell = set.iter().filter(|x| x.2[3].decision.as_ref().is_some_and(|d| d.spatial)).count();
        let ofell = set.iter().filter(|x| x.2[4].decision.as_ref().is_some_and(|d| d.spatial)).count();
        // Profiled partitions within one block of the Oracle's, kernel by kernel (or both Spatial).
        let near = set
            .iter()
            .filter(|x| match (&x.2[3].decision, &x.2[4].decision) {
                (Some(p), Some(o)) => p.within_one_of(o),
                _ => false,
            })
            .count();
        writeln!(md, "Fell back to Spatial: Warped-Slicer {fell} of {}, Oracle {ofell}. Profiled partition within one block of the Oracle's (or both Spatial): {near} of {} ({:.0} %).", set.len(), set.len(), 100.0 * near as f64 / set.len() as f64).ok();
        // Plots: IPC and minimum speedup per workload, normalised to Left-Over.
        let groups: Vec<String> = set.iter().map(|x| x.0.clone()).collect();
        for (what, g) in [("ipc", (&|r: &Row| r.ipc) as &dyn Fn(&Row) -> f64), ("min-speedup", &|r: &Row| r.min_speedup), ("antt", &|r: &Row| r.antt)] {
            let series: Vec<(String, Vec<f64>)> = (1..POLICIES.len()).map(|i| (POLICIES[i].name().to_string(), set.iter().map(|x| g(&x.2[i]) / g(&x.2[0])).collect())).collect();
            let path = a.out.join(format!("{what}-{k}.svg"));
            plot::bars(&path, &format!("{what} normalised to Left-Over, {k} kernels ({})", cfg.name), &format!("{what} relative to Left-Over (%)"), &groups, &series)?;
            plots.push(path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()));
        }
    }
    println!("{md}");
    let md_path = a.out.join("summary.md");
    std::fs::write(&md_path, &md).with_context(|| format!("cannot write {}", md_path.display()))?;
    println!("wrote {}, {} and the plots {} in {:.0} s", csv_path.display(), md_path.display(), plots.join(", "), t0.elapsed().as_secs_f64());
    let ok = all.iter().all(|x| x.2.iter().all(|r| r.verified));
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
