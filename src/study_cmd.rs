//! `mpgpu study`: Zorua's evaluation over the kernel library (Zorua §6.1-§6.4): every
//! application at a grid of resource specifications, under the block allocation, WLM and
//! Zorua, on each configuration; then the performance range per application (Tukey box plots,
//! normalised to the slowest baseline point), the best-point and all-point speedups, the
//! porting loss between the configurations, the physical hit rates and the schedulable warps.
//! The grids, the metrics' exact definitions and the measured figures are in docs/zorua.md.

use crate::plot;
use crate::sweep_cmd::{create_parent, csv_field, csv_hit_rate, describe, hit_rate, run_point, Point};
use anyhow::{anyhow, bail, Context, Result};
use mpgpu_ref::config::{Alloc, GpuConfig};
use mpgpu_ref::library::{find, Spec};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct StudyArgs {
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    /// The applications, comma-separated, each `NAME` (its grid and size below) or `NAME@SIZE`
    /// (another problem size). Default: every application of the grid table.
    #[arg(long, value_delimiter = ',')]
    apps: Vec<String>,
    /// The configurations (presets or TOML files), comma-separated: the first is the one the
    /// ranges and speedups are reported for; porting is measured between all of them.
    #[arg(long, value_delimiter = ',', default_values = ["fermi15", "kepler15", "maxwell15"])]
    configs: Vec<String>,
    /// The folder for points.csv, points.json, summary.md and the plots.
    #[arg(long, default_value = "target/results/zorua/study")]
    out: PathBuf,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// One application's grid: registers per thread, threads per block and scratchpad per block
/// (empty: the application's own), at a problem size (`None`: its default).
pub(crate) struct Grid {
    app: &'static str,
    size: Option<u32>,
    regs: &'static [u32],
    threads: &'static [u32],
    smem: &'static [u32],
}

/// The grids: every application of the library, registers from what its code names up, threads
/// per block where its host program takes them, scratchpad where it has a choice (sad: a
/// scratchpad-bound sweep, as the paper's NQU). Sizes are cut where a point would take
/// seconds. docs/zorua.md, "Results: the study".
const GRIDS: &[Grid] = &[
    Grid { app: "vecadd", size: None, regs: &[8, 16, 24, 32], threads: &[128, 256, 512, 768, 1024], smem: &[] },
    Grid { app: "sgemm", size: None, regs: &[32, 40, 48, 56, 64], threads: &[], smem: &[] },
    Grid { app: "reduction", size: None, regs: &[10, 14, 18, 22, 26], threads: &[], smem: &[] },
    Grid { app: "histo", size: Some(1 << 21), regs: &[16, 24, 32, 40], threads: &[128, 256, 512, 768, 1024], smem: &[] },
    Grid { app: "stencil", size: Some(64), regs: &[40, 48, 56, 64], threads: &[], smem: &[] },
    Grid { app: "lbm", size: Some(256), regs: &[48, 56, 64], threads: &[128, 256, 384, 512, 640], smem: &[] },
    Grid { app: "spmv", size: Some(32768), regs: &[14, 22, 30], threads: &[128, 256, 512, 1024], smem: &[] },
    Grid { app: "bfs", size: Some(65536), regs: &[12, 24, 36], threads: &[128, 256, 512, 768, 1024], smem: &[] },
    Grid { app: "mriq", size: None, regs: &[24, 32, 40, 48], threads: &[], smem: &[] },
    Grid { app: "cutcp", size: None, regs: &[28, 36, 44], threads: &[128, 256, 512], smem: &[] },
    Grid { app: "sad", size: None, regs: &[20, 32], threads: &[], smem: &[16384, 24576, 32768, 40960, 49152] },
];

const ALLOCS: [Alloc; 3] = [Alloc::Block, Alloc::Wlm, Alloc::Zorua];

fn specs(g: &Grid) -> Vec<Spec> {
    let opt = |v: &[u32]| if v.is_empty() { vec![None] } else { v.iter().map(|&x| Some(x)).collect() };
    let mut out = Vec::new();
    for r in opt(g.regs) {
        for t in opt(g.threads) {
            for s in opt(g.smem) {
                out.push(Spec { regs: r, threads: t, smem: s, alloc: None });
            }
        }
    }
    out
}

/// One run of the study.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct StudyPoint {
    config: String,
    app: String,
    size: u32,
    #[serde(flatten)]
    point: Point,
}

/// The figures of one application under one scheme on one configuration.
#[derive(Default, Clone, Debug)]
struct Figures {
    /// Cycles per specification run by every scheme (the common points).
    cycles: BTreeMap<String, u64>,
    sched: Vec<f64>,
    reg_hits: [u64; 2],
    smem_hits: [u64; 2],
}

/// What [`study`] found.
pub(crate) struct Study {
    /// summary.md's text (also printed by `mpgpu study`).
    pub summary: String,
    pub headline: Headline,
    /// Points that ran but failed their verification, described.
    pub failed: Vec<String>,
    /// Points that did not run (a deadlock, say), with the reason.
    pub errors: Vec<String>,
    /// The points' run times, summed (seconds of one core).
    pub secs: f64,
}

/// The applications (`NAME` or `NAME@SIZE`, all of the grids if empty) resolved to their
/// grids and sizes, every specification checked.
pub(crate) fn resolve_apps(names: &[String], seed: u64) -> Result<Vec<(&'static Grid, u32)>> {
    let names: Vec<String> = if names.is_empty() { GRIDS.iter().map(|g| g.app.to_string()).collect() } else { names.to_vec() };
    let mut apps = Vec::new();
    for n in &names {
        let (name, size) = match n.split_once('@') {
            Some((nm, sz)) => (nm, Some(sz.parse::<u32>().map_err(|_| anyhow!("--apps `{n}`: the size after @ is not a whole number"))?)),
            None => (n.as_str(), None),
        };
        let g = GRIDS.iter().find(|g| g.app == name).ok_or_else(|| anyhow!("--apps: no application `{name}` in the study's grids (they are: {})", GRIDS.iter().map(|g| g.app).collect::<Vec<_>>().join(", ")))?;
        let b = find(name).ok_or_else(|| anyhow!("no application `{name}` in the library"))?;
        let size = size.or(g.size).unwrap_or(b.default_size);
        for s in specs(g) {
            b.program_at(size, seed, s).map_err(|e| anyhow!("{name} at {}: {e}", describe(&s)))?;
        }
        apps.push((g, size));
    }
    Ok(apps)
}

/// The points of a study: every specification of every application under every scheme on
/// every configuration (by index).
fn study_points(apps: &[(&Grid, u32)], ncfgs: usize) -> Vec<(usize, usize, Spec, Alloc)> {
    let mut jobs = Vec::new();
    for ci in 0..ncfgs {
        for (ai, (g, _)) in apps.iter().enumerate() {
            for s in specs(g) {
                for al in ALLOCS {
                    jobs.push((ci, ai, s, al));
                }
            }
        }
    }
    jobs
}

/// The number of points [`study`] runs.
pub(crate) fn study_count(apps: &[(&Grid, u32)], ncfgs: usize) -> usize {
    study_points(apps, ncfgs).len()
}

/// Runs the study's points on `pb` (one round) and writes points.csv, points.json, the plots
/// and summary.md under `out`.
pub(crate) fn study(apps: &[(&Grid, u32)], cfgs: &[GpuConfig], seed: u64, limits: mpgpu_ref::timing::RunLimits, out: &Path, pb: &crate::par::Progress) -> Result<Study> {
    let jobs = study_points(apps, cfgs.len());
    let results = pb.map_points(
        &jobs,
        |&(ci, ai, _, al)| format!("{} {} {}", apps[ai].0.app, cfgs[ci].name, al.name()),
        |&(ci, ai, spec, al)| {
            let (g, size) = apps[ai];
            let cfg = &cfgs[ci];
            let t = std::time::Instant::now();
            run_point(cfg, g.app, size, seed, spec, al, limits)
                .map(|point| (StudyPoint { config: cfg.name.clone(), app: g.app.to_string(), size, point }, t.elapsed().as_secs_f64()))
                .with_context(|| format!("{} on {}", g.app, cfg.name))
        },
    );
    // (a point that fails, a deadlock say, is reported and the study goes on without it)
    let mut points: Vec<StudyPoint> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut secs = 0.0;
    for r in results {
        match r {
            Ok((p, t)) => {
                points.push(p);
                secs += t;
            }
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    write_points(out, &points)?;
    let cfg_names: Vec<String> = cfgs.iter().map(|c| c.name.clone()).collect();
    let app_names: Vec<String> = apps.iter().map(|(g, _)| g.app.to_string()).collect();
    let (mut summary, headline) = summarise(out, &cfg_names, &app_names, &points)?;
    if !errors.is_empty() {
        writeln!(summary, "## Points that did not run ({})\n", errors.len()).unwrap();
        for e in &errors {
            writeln!(summary, "- {}", e.replace('\n', " / ")).unwrap();
        }
        summary.push('\n');
    }
    let path = out.join("summary.md");
    std::fs::write(&path, &summary).with_context(|| format!("cannot write {}", path.display()))?;
    let failed: Vec<String> = points.iter().filter(|p| p.point.fits && !p.point.verified).map(|p| format!("{} on {} under {} at {}", p.app, p.config, p.point.alloc.name(), describe(&p.point.spec))).collect();
    Ok(Study { summary, headline, failed, errors, secs })
}

pub fn study_cmd(a: StudyArgs) -> Result<ExitCode> {
    // (everything is checked before anything runs)
    let apps = resolve_apps(&a.apps, a.seed)?;
    if a.configs.is_empty() {
        bail!("--configs: give at least one configuration");
    }
    let cfgs: Vec<GpuConfig> = a.configs.iter().map(|c| GpuConfig::from_arg(c).map_err(|e| anyhow!("--configs `{c}`: {e}"))).collect::<Result<_>>()?;
    for c in &cfgs {
        crate::sweep_cmd::no_compile(c, "--configs")?;
    }
    // (the output folder is checked before the first point runs)
    crate::checks::output_dir(&a.out, "--out")?;
    let workers = a.jobs.workers();
    let total = study_count(&apps, cfgs.len());
    // (how many at once goes to standard error: the output is the same at every `--jobs`, and
    // on Slurm)
    println!("study: {} applications on {} configurations, {} points", apps.len(), cfgs.len(), total);
    eprintln!("study: {workers} at a time");
    let pb = crate::par::Progress::new("study", total, workers).with_slurm(&a.slurm);
    let st = study(&apps, &cfgs, a.seed, a.limit.limits(), &a.out, &pb)?;
    pb.finish();
    print!("{}", st.summary);
    println!("wrote {}", a.out.display());
    if !st.failed.is_empty() || !st.errors.is_empty() {
        println!("{} points FAILED verification: {}", st.failed.len(), st.failed.join("; "));
        println!("{} points did not run (listed in the summary)", st.errors.len());
        return Ok(ExitCode::FAILURE);
    }
    println!("all outputs verified: PASS");
    Ok(ExitCode::SUCCESS)
}

fn write_points(out: &Path, points: &[StudyPoint]) -> Result<()> {
    let mut csv = String::from("config,app,size,alloc,regs,threads,smem,fits,cycles,verified,blocks_per_sm,sched_warps,reg_hit_rate,smem_hit_rate,reg_sets_swapped,smem_sets_swapped,swap_reads,swap_l1_hits\n");
    for p in points {
        let q = &p.point;
        let f = csv_field::<u32>;
        let z = q.zorua.as_ref().map(|z| (csv_hit_rate(z.reg_accesses), csv_hit_rate(z.smem_accesses), z.reg_sets[1].to_string(), z.smem_sets[1].to_string(), z.swap_reads.to_string(), z.swap_l1_hits.to_string())).unwrap_or_default();
        let cycles = if q.fits { q.cycles.to_string() } else { String::new() };
        writeln!(csv, "{},{},{},{},{},{},{},{},{cycles},{},{},{:.3},{},{},{},{},{},{}", p.config, p.app, p.size, q.alloc.name(), f(q.spec.regs), f(q.spec.threads), f(q.spec.smem), q.fits, q.verified, q.blocks_per_sm, q.sched_warps, z.0, z.1, z.2, z.3, z.4, z.5).unwrap();
    }
    let path = out.join("points.csv");
    create_parent(&path)?;
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    let path = out.join("points.json");
    std::fs::write(&path, serde_json::to_string_pretty(points)?).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The figures of every application and scheme on every configuration, over the
/// specifications every scheme ran on that configuration.
fn figures(cfg: &str, app: &str, points: &[StudyPoint]) -> BTreeMap<&'static str, Figures> {
    let mine: Vec<&StudyPoint> = points.iter().filter(|p| p.config == cfg && p.app == app).collect();
    let key = |s: &Spec| describe(s);
    let common: Vec<String> = {
        let mut keys: Vec<String> = mine.iter().map(|p| key(&p.point.spec)).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter().filter(|k| ALLOCS.iter().all(|&al| mine.iter().any(|p| p.point.alloc == al && p.point.fits && &key(&p.point.spec) == k))).collect()
    };
    let mut out = BTreeMap::new();
    for al in ALLOCS {
        let mut f = Figures::default();
        for p in mine.iter().filter(|p| p.point.alloc == al && p.point.fits && common.contains(&key(&p.point.spec))) {
            f.cycles.insert(key(&p.point.spec), p.point.cycles);
            f.sched.push(p.point.sched_warps);
            if let Some(z) = &p.point.zorua {
                for k in 0..2 {
                    f.reg_hits[k] += z.reg_accesses[k];
                    f.smem_hits[k] += z.smem_accesses[k];
                }
            }
        }
        out.insert(al.name(), f);
    }
    out
}

fn range(f: &Figures) -> Option<f64> {
    (!f.cycles.is_empty()).then(|| crate::sweep_cmd::range(&f.cycles.values().copied().collect::<Vec<_>>()))
}

/// The most a point within 5% of the best on `src` loses on `dst`, against `dst`'s best
/// (Zorua §6.3), over the specifications the scheme ran on both.
fn porting(src: &Figures, dst: &Figures) -> Option<f64> {
    let both: Vec<&String> = src.cycles.keys().filter(|k| dst.cycles.contains_key(*k)).collect();
    let sbest = both.iter().map(|k| src.cycles[*k]).min()? as f64;
    let dbest = both.iter().map(|k| dst.cycles[*k]).min()? as f64;
    both.iter().filter(|k| src.cycles[**k] as f64 <= 1.05 * sbest).map(|k| dst.cycles[*k] as f64 / dbest - 1.0).reduce(f64::max)
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}%", 100.0 * x))
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The study's headline figures, each a mean over the applications (Zorua §6).
#[derive(Default)]
pub(crate) struct Headline {
    /// Performance range on the first configuration: block, WLM, Zorua.
    pub range: [Option<f64>; 3],
    /// Zorua's best point against the block allocation's best, less 1.
    pub best_speedup: Option<f64>,
    /// The geometric mean over the points of block over Zorua, less 1.
    pub all_speedup: Option<f64>,
    /// Porting loss: block, WLM, Zorua.
    pub porting: [Option<f64>; 3],
    /// Schedulable warps against the block allocation's, less 1: WLM, Zorua.
    pub warps: [Option<f64>; 2],
    /// Zorua's register and scratchpad accesses that find their sets physical.
    pub hits: [Option<f64>; 2],
}

fn summarise(out: &Path, cfgs: &[String], apps: &[String], points: &[StudyPoint]) -> Result<(String, Headline)> {
    let mut s = String::new();
    let mut h = Headline::default();
    let main = &cfgs[0];
    let figs: BTreeMap<(&str, &str), BTreeMap<&'static str, Figures>> = cfgs.iter().flat_map(|c| apps.iter().map(move |a| ((c.as_str(), a.as_str()), figures(c, a, points)))).collect();
    writeln!(s, "## Performance range on {main} (worst / best - 1, over the specifications every scheme ran)\n").unwrap();
    writeln!(s, "| application | specifications | block | WLM | Zorua | best-point speedup | all-point speedup |").unwrap();
    writeln!(s, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |").unwrap();
    let mut cols: [Vec<f64>; 5] = Default::default();
    for a in apps {
        let f = &figs[&(main.as_str(), a.as_str())];
        let (b, w, z) = (&f["block"], &f["wlm"], &f["zorua"]);
        let best = |f: &Figures| f.cycles.values().min().copied();
        let speedup = match (best(b), best(z)) {
            (Some(x), Some(y)) => Some(x as f64 / y as f64 - 1.0),
            _ => None,
        };
        // (the geometric mean of block / Zorua over the points, less 1)
        let all = (!z.cycles.is_empty()).then(|| (z.cycles.iter().map(|(k, &c)| (b.cycles[k] as f64 / c as f64).ln()).sum::<f64>() / z.cycles.len() as f64).exp() - 1.0);
        for (i, v) in [range(b), range(w), range(z), speedup, all].into_iter().enumerate() {
            if let Some(v) = v {
                cols[i].push(v);
            }
        }
        writeln!(s, "| {a} | {} | {} | {} | {} | {} | {} |", z.cycles.len(), pct(range(b)), pct(range(w)), pct(range(z)), pct(speedup), pct(all)).unwrap();
    }
    writeln!(s, "| **mean** | | {} | {} | {} | {} | {} |\n", pct(mean(&cols[0])), pct(mean(&cols[1])), pct(mean(&cols[2])), pct(mean(&cols[3])), pct(mean(&cols[4]))).unwrap();
    h.range = [mean(&cols[0]), mean(&cols[1]), mean(&cols[2])];
    h.best_speedup = mean(&cols[3]);
    h.all_speedup = mean(&cols[4]);
    // The box plot: each application's points relative to its slowest baseline point.
    let series: Vec<(String, Vec<Vec<f64>>)> = ALLOCS
        .iter()
        .map(|al| {
            let v = apps
                .iter()
                .map(|a| {
                    let f = &figs[&(main.as_str(), a.as_str())];
                    let slowest = f["block"].cycles.values().max().copied().unwrap_or(1).max(1) as f64;
                    f[al.name()].cycles.values().map(|&c| c as f64 / slowest).collect()
                })
                .collect();
            (al.name().to_string(), v)
        })
        .collect();
    let svg = out.join(format!("range-{main}.svg"));
    plot::boxes(&svg, &format!("Execution time per specification on {main}, relative to the slowest block-allocation point"), "execution time (slowest block = 1)", apps, &series)?;
    writeln!(s, "Box plot: {}\n", svg.display()).unwrap();
    if cfgs.len() > 1 {
        writeln!(s, "## Porting loss (the most a point within 5% of the best on one configuration loses on another, against that one's best; the maximum over every pair of {})\n", cfgs.join(", ")).unwrap();
        writeln!(s, "| application | block | WLM | Zorua |").unwrap();
        writeln!(s, "| --- | ---: | ---: | ---: |").unwrap();
        let mut cols: [Vec<f64>; 3] = Default::default();
        let mut bars: Vec<(String, Vec<f64>)> = ALLOCS.iter().map(|al| (al.name().to_string(), Vec::new())).collect();
        let mut groups = Vec::new();
        for a in apps {
            let mut row = Vec::new();
            for (i, al) in ALLOCS.iter().enumerate() {
                let mut worst: Option<f64> = None;
                for src in cfgs {
                    for dst in cfgs.iter().filter(|d| *d != src) {
                        if let Some(l) = porting(&figs[&(src.as_str(), a.as_str())][al.name()], &figs[&(dst.as_str(), a.as_str())][al.name()]) {
                            worst = Some(worst.map_or(l, |w| w.max(l)));
                        }
                    }
                }
                if let Some(w) = worst {
                    cols[i].push(w);
                }
                row.push(worst);
            }
            writeln!(s, "| {a} | {} | {} | {} |", pct(row[0]), pct(row[1]), pct(row[2])).unwrap();
            if row.iter().all(Option::is_some) {
                groups.push(a.clone());
                for (i, v) in row.iter().enumerate() {
                    bars[i].1.push(1.0 + v.unwrap());
                }
            }
        }
        writeln!(s, "| **mean** | {} | {} | {} |\n", pct(mean(&cols[0])), pct(mean(&cols[1])), pct(mean(&cols[2]))).unwrap();
        h.porting = [mean(&cols[0]), mean(&cols[1]), mean(&cols[2])];
        if !groups.is_empty() {
            let svg = out.join("porting.svg");
            plot::bars(&svg, "The worst ported point's execution time, relative to the target's best", "execution time relative to the target's best (%)", &groups, &bars)?;
            writeln!(s, "Plot: {}\n", svg.display()).unwrap();
        }
    }
    writeln!(s, "## Mechanism on {main} (over the same specifications)\n").unwrap();
    writeln!(s, "| application | schedulable warps per SM: block | WLM | Zorua | Zorua register hit rate | scratchpad hit rate |").unwrap();
    writeln!(s, "| --- | ---: | ---: | ---: | ---: | ---: |").unwrap();
    let hit = |h: [u64; 2]| hit_rate(h).map_or("-".to_string(), |r| format!("{:.2}%", 100.0 * r));
    let mut gain: [Vec<f64>; 2] = Default::default();
    let (mut rh, mut sh) = ([0u64; 2], [0u64; 2]);
    for a in apps {
        let f = &figs[&(main.as_str(), a.as_str())];
        let m = |n: &str| mean(&f[n].sched);
        let z = &f["zorua"];
        for k in 0..2 {
            rh[k] += z.reg_hits[k];
            sh[k] += z.smem_hits[k];
        }
        if let (Some(b), Some(w), Some(zz)) = (m("block"), m("wlm"), m("zorua")) {
            if b > 0.0 {
                gain[0].push(w / b - 1.0);
                gain[1].push(zz / b - 1.0);
            }
        }
        let f2 = |v: Option<f64>| v.map_or("-".into(), |x| format!("{x:.1}"));
        writeln!(s, "| {a} | {} | {} | {} | {} | {} |", f2(m("block")), f2(m("wlm")), f2(m("zorua")), hit(z.reg_hits), hit(z.smem_hits)).unwrap();
    }
    writeln!(s, "| **all** | | WLM {} | Zorua {} | {} | {} |\n", pct(mean(&gain[0])), pct(mean(&gain[1])), hit(rh), hit(sh)).unwrap();
    h.warps = [mean(&gain[0]), mean(&gain[1])];
    h.hits = [hit_rate(rh), hit_rate(sh)];
    writeln!(s, "(schedulable warps: the mean over the specifications of each scheme's mean per SM; the last row gives the mean over the applications of WLM's and Zorua's change against the block allocation; hit rates: register operand and shared-memory accesses to physical sets, over every point)\n").unwrap();
    Ok((s, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(points: &[(&str, u64)]) -> Figures {
        Figures { cycles: points.iter().map(|(k, c)| (k.to_string(), *c)).collect(), ..Figures::default() }
    }

    #[test]
    fn porting_takes_the_worst_near_best_point() {
        // on the source a (100) and b (104) are within 5% of the best, c (200) is not
        let src = fig(&[("a", 100), ("b", 104), ("c", 200)]);
        let dst = fig(&[("a", 150), ("b", 100), ("c", 50)]);
        // against the target's best (50): a 150/50 - 1 = 2, b 1
        assert_eq!(porting(&src, &dst), Some(2.0));
        // (the other way: only c is near the best (50); on the source it takes 200, the best 100)
        assert_eq!(porting(&dst, &src), Some(1.0));
        assert_eq!(porting(&fig(&[]), &dst), None);
    }

    #[test]
    fn every_grid_names_a_library_application() {
        for g in GRIDS {
            let b = find(g.app).unwrap();
            let size = g.size.unwrap_or(b.default_size);
            for s in specs(g) {
                b.program_at(size, 1, s).unwrap_or_else(|e| panic!("{} at {}: {e}", g.app, describe(&s)));
            }
        }
    }
}
