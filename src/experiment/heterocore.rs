//! `mpgpu experiment heterocore`: HeteroCore's evaluation (TPDS 2018, §2, §4, §6) on the
//! library: each application alone on 8 baseline, 8 big and 8 small SMs (§4.2.1's
//! classification), alone on the conventional GPU and on HeteroCore (§6.3), and every pair
//! on the conventional GPU with even spatial partitioning, on HeteroCore with the
//! TLP-agnostic layout, and on HeteroCore with spatial profiling and steering (§6.1),
//! four-application mixes (§6.4), and thick + lean pairs on §6.5's 4 big + 12 small and
//! 12 big + 4 small GPUs (docs/heterocore.md, "Results").

use super::{mean, ratio_verdict, share_verdict, side, Claim, Ctx, Experiment, Report, Verdict};
use crate::par::Progress;
use anyhow::{anyhow, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::heterocore::{class_of, conventional, of_kind, split, Kind, TlpClass};
use mpgpu_ref::timing::metrics::metrics;
use mpgpu_ref::timing::steer::{run_workload_steered, Offline, SteerParams, Steering};
use mpgpu_ref::timing::RunResult;
use mpgpu_ref::workload::Workload;
use std::fmt::Write as _;
use std::path::PathBuf;

pub const EXPERIMENT: Experiment = Experiment {
    name: "heterocore",
    paper: "HeteroCore (IEEE TPDS 2018), §2, §4, §6",
    page: "heterocore",
    what: "the applications' TLP classes, single applications, every pair on the conventional GPU and on HeteroCore under TLP-agnostic, dynamic and static steering, four-application mixes, and §6.5's other splits of the same area",
    points,
    run,
};

const CONFIG: &str = "heterocore";
/// The applications and their sizes: every one of the library, each sized to take 50-250 K
/// cycles alone on the conventional GPU (several rounds of blocks); under `--quick` three
/// small ones.
const APPS: [(&str, u32); 12] = [
    ("bfs", 1 << 16),
    ("blur", 1 << 20),
    ("cutcp", 128),
    ("histo", 1 << 20),
    ("lbm", 256),
    ("mriq", 8192),
    ("reduction", 1 << 21),
    ("sad", 128),
    ("sgemm", 192),
    ("spmv", 1 << 15),
    ("stencil", 96),
    ("vecadd", 1 << 21),
];
const QUICK_APPS: [(&str, u32); 3] = [("stencil", 64), ("spmv", 8192), ("sgemm", 64)];
/// Each pair replays both applications until each has completed this many runs (the paper
/// relaunches a finished benchmark for the whole run, §5); statistics from completed runs.
const MIN_RUNS: u32 = 2;
/// An application gains on big SMs as the paper's thick kernels do (Fig. 1) when 8 big SMs run
/// it at least this much faster than 8 baseline ones.
const GAINS: f64 = 1.05;
/// The profiling phase, scaled from the paper's 20 K + 20 K cycles of a 10 M-cycle run (0.4 %)
/// to our runs of a few hundred thousand cycles.
const PROFILE: SteerParams = SteerParams { warmup: 2000, window: 2000, preempt: mpgpu_ref::timing::steer::Preempt::Adaptive };

fn apps(quick: bool) -> &'static [(&'static str, u32)] {
    if quick {
        &QUICK_APPS
    } else {
        &APPS
    }
}

/// The GPUs an application runs alone on.
const ALONE: [(&str, Option<Kind>); 5] = [("conventional", None), ("8 base", Some(Kind::Base)), ("8 big", Some(Kind::Big)), ("8 small", Some(Kind::Small)), ("heterocore", None)];
/// The pair runs.
const PAIR: [&str; 4] = ["conventional even", "heterocore even", "heterocore dynamic", "heterocore balanced"];

/// The four-kernel mixes (§6.4): this many, chosen once the applications' classes are known
/// (three thick and one lean, or two and two; the paper draws 50 of 310), each under the
/// conventional GPU's even partitioning and HeteroCore's dynamic steering; none under `--quick`.
const MIXES: usize = 12;
const MIX: [&str; 2] = ["conventional even", "heterocore dynamic"];

/// §6.5's GPUs of the same totals: big SMs of each (the rest small; the small SM as it is,
/// the big one resized, `heterocore::split`), each pair under the static layout by class (the
/// thick application on the big SMs, the lean one on the small: the optimum the paper finds on
/// 4 big + 12 small).
const SPLITS: [(&str, u32); 3] = [("8 big + 8 small", 8), ("4 big + 12 small", 4), ("12 big + 4 small", 12)];
/// The pairs run on the splits: this many, thick + lean ones first, chosen once the classes
/// are known; one under `--quick`.
const SPLIT_PAIRS: usize = 10;

/// §6.5's static optimum on 8 big + 8 small: every layout of the first application on 4, 8 or
/// 12 SMs, in any mix of the kinds (the second on the rest), for the same pairs.
fn layouts() -> Vec<(u8, u8)> {
    (0..=8u8).flat_map(|b| (0..=8u8).map(move |s| (b, s))).filter(|&(b, s)| matches!(b + s, 4 | 8 | 12)).collect()
}

enum Point {
    Alone(usize, usize),
    Pair(usize, usize, usize),
    Mix(usize, usize),
    Split(usize, usize),
    Layout(usize, usize),
}

fn mixes(quick: bool) -> usize {
    if quick {
        0
    } else {
        MIXES
    }
}

fn split_pairs(quick: bool) -> usize {
    if quick {
        1
    } else {
        SPLIT_PAIRS
    }
}

fn plan(n: usize, quick: bool) -> Vec<Point> {
    let mut v: Vec<Point> = (0..n).flat_map(|a| (0..ALONE.len()).map(move |g| Point::Alone(a, g))).collect();
    for i in 0..n {
        for j in i + 1..n {
            v.extend((0..PAIR.len()).map(|p| Point::Pair(i, j, p)));
        }
    }
    v.extend((0..mixes(quick)).flat_map(|m| (0..MIX.len()).map(move |k| Point::Mix(m, k))));
    let pairs = split_pairs(quick).min(n * n.saturating_sub(1) / 2);
    v.extend((0..pairs).flat_map(|m| (0..SPLITS.len()).map(move |g| Point::Split(m, g))));
    let n_layouts = layouts().len();
    v.extend((0..pairs).flat_map(|m| (0..n_layouts).map(move |l| Point::Layout(m, l))));
    v
}

/// `count` pairs for §6.5: the thick + lean ones spread evenly over all of them in
/// lexicographic order, then (when there are too few) the others in order.
fn choose_pairs(class: &[TlpClass], count: usize) -> Vec<(usize, usize)> {
    let n = class.len();
    let all: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
    let (het, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|&(i, j)| class[i] != class[j]);
    let mut v: Vec<(usize, usize)> = (0..count.min(het.len())).map(|k| het[k * het.len() / count.min(het.len())]).collect();
    v.extend(rest.into_iter().take(count.saturating_sub(v.len())));
    v
}

fn points(quick: bool) -> Result<usize> {
    Ok(plan(apps(quick).len(), quick).len())
}

/// `count` four-application mixes of three thick and one lean, or two and two, spread evenly
/// over all such mixes in lexicographic order (any four when there are too few of those).
fn choose_mixes(class: &[TlpClass], count: usize) -> Vec<[usize; 4]> {
    let n = class.len();
    let mut all = Vec::new();
    let mut any = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let lean = [a, b, c, d].iter().filter(|&&x| class[x] == TlpClass::Lean).count();
                    if lean == 1 || lean == 2 {
                        all.push([a, b, c, d]);
                    }
                    any.push([a, b, c, d]);
                }
            }
        }
    }
    let from = if all.len() >= count { all } else { any };
    (0..count.min(from.len())).map(|i| from[i * from.len() / count]).collect()
}

fn process(name: &str, size: u32) -> String {
    format!("[[process]]\nname = \"{name}\"\nlaunches = [{{ kernel = \"{name}\", size = {size}, seed = 1 }}]\n")
}

fn workload(text: &str) -> Result<Workload> {
    Workload::parse("(heterocore experiment)", text).map_err(|e| anyhow!("{e}"))
}

fn pct(x: f64) -> String {
    format!("{:+.1} %", 100.0 * (x - 1.0))
}

/// A fraction as a percentage, unsigned.
fn share(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

fn run(ctx: &Ctx, pb: &Progress) -> Result<Report> {
    let hc = GpuConfig::from_arg(CONFIG).map_err(|e| anyhow!("{e}"))?;
    let conv = conventional(&hc);
    let apps = apps(ctx.quick);
    let pts = plan(apps.len(), ctx.quick);
    let limits = ctx.limits;
    let gpu = |g: usize| match ALONE[g].1 {
        Some(k) => of_kind(&hc, k, 8),
        None if g == 0 => conv.clone(),
        None => hc.clone(),
    };
    let name = |p: &&Point| match **p {
        Point::Alone(a, g) => format!("heterocore: {} alone on {}", apps[a].0, ALONE[g].0),
        Point::Pair(i, j, k) => format!("heterocore: {} + {} on {}", apps[i].0, apps[j].0, PAIR[k]),
        Point::Mix(m, k) => format!("heterocore: mix {m} on {}", MIX[k]),
        Point::Split(m, g) => format!("heterocore: §6.5 pair {m} on {}", SPLITS[g].0),
        Point::Layout(m, l) => format!("heterocore: §6.5 pair {m}, the first on {} big + {} small", layouts()[l].0, layouts()[l].1),
    };
    let lay = layouts();
    let splits: Vec<GpuConfig> = SPLITS.iter().map(|&(_, b)| if b == 8 { Ok(hc.clone()) } else { split(&hc, b).map_err(|e| anyhow!("{e}")) }).collect::<Result<_>>()?;
    // (applications `a` side by side, each replayed until all have completed MIN_RUNS runs)
    let replayed = |a: &[usize]| workload(&format!("description = \"{}\"\nmin_runs = {MIN_RUNS}\n{}", a.iter().map(|&x| apps[x].0).collect::<Vec<_>>().join(" + "), a.iter().map(|&x| process(apps[x].0, apps[x].1)).collect::<String>()));
    let run_point = |p: &Point, offline: &[(String, Offline)], mixes: &[[usize; 4]], pairs: &[(usize, usize)]| -> Result<(RunResult, f64)> {
        let t = std::time::Instant::now();
        let r = match *p {
            Point::Alone(a, g) => {
                let w = workload(&format!("description = \"{} alone\"\n{}", apps[a].0, process(apps[a].0, apps[a].1)))?;
                mpgpu_ref::timing::run_workload(&gpu(g), &w, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} alone on {}: {e}", apps[a].0, ALONE[g].0))?
            }
            Point::Pair(i, j, k) => {
                let w = replayed(&[i, j])?;
                let (cfg, s) = match k {
                    0 => (&conv, Steering::Even),
                    1 => (&hc, Steering::Even),
                    2 => (&hc, Steering::Dynamic),
                    _ => (&hc, Steering::Balanced),
                };
                run_workload_steered(cfg, &w, s, PROFILE, offline, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} + {} on {}: {e}", apps[i].0, apps[j].0, PAIR[k]))?
            }
            Point::Mix(m, k) => {
                let names: Vec<&str> = mixes[m].iter().map(|&a| apps[a].0).collect();
                let w = replayed(&mixes[m])?;
                let (cfg, s) = if k == 0 { (&conv, Steering::Even) } else { (&hc, Steering::Dynamic) };
                run_workload_steered(cfg, &w, s, PROFILE, offline, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} on {}: {e}", names.join(" + "), MIX[k]))?
            }
            Point::Split(m, g) => {
                let (i, j) = pairs[m];
                let w = replayed(&[i, j])?;
                run_workload_steered(&splits[g], &w, Steering::Classified, PROFILE, offline, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} + {} on {}: {e}", apps[i].0, apps[j].0, SPLITS[g].0))?
            }
            Point::Layout(m, l) => {
                let (i, j) = pairs[m];
                let (big, small) = lay[l];
                let w = replayed(&[i, j])?;
                run_workload_steered(&hc, &w, Steering::Fixed { big, small }, PROFILE, offline, limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} + {} with the first on {big} big + {small} small: {e}", apps[i].0, apps[j].0))?
            }
        };
        Ok((r, t.elapsed().as_secs_f64()))
    };
    // The isolated runs first: the static policy decides from them.
    let (first, second): (Vec<&Point>, Vec<&Point>) = pts.iter().partition(|p| matches!(p, Point::Alone(..)));
    let mut results = pb.map_points(&first, name, |p| run_point(p, &[], &[], &[]));
    let mut offline = Vec::new();
    let mut classes = vec![TlpClass::Thick; apps.len()];
    for (p, r) in first.iter().zip(&results) {
        let (Point::Alone(a, 0), Ok(_)) = (p, r) else { continue };
        let run = |g: usize| -> Result<&RunResult> {
            let k = first.iter().position(|q| matches!(q, Point::Alone(b, h) if b == a && *h == g)).expect("every isolated run is planned");
            results[k].as_ref().map(|r| &r.0).map_err(|e| anyhow!("{e}"))
        };
        let o = Offline::of(run(0)?, run(2)?, run(3)?, class_of(run(1)?.cycles, run(3)?.cycles));
        classes[*a] = o.class;
        let b = mpgpu_ref::library::find(apps[*a].0).ok_or_else(|| anyhow!("no library application `{}`", apps[*a].0))?;
        for k in b.kernels().map_err(|e| anyhow!("{e}"))?.0 {
            offline.push((k.name.clone(), o));
        }
    }
    // (the mixes by the classes the isolated runs give)
    let mix_apps = choose_mixes(&classes, mixes(ctx.quick));
    let split_apps = choose_pairs(&classes, split_pairs(ctx.quick));
    results.extend(pb.map_points(&second, name, |p| run_point(p, &offline, &mix_apps, &split_apps)));
    let pts: Vec<&Point> = first.into_iter().chain(second).collect();
    let results: Vec<(RunResult, f64)> = results.into_iter().collect::<Result<_>>()?;
    let core_seconds = results.iter().map(|r| r.1).sum();
    let verified = results.iter().all(|(r, _)| r.processes.iter().all(|p| p.verified));
    let n = apps.len();
    // alone[a][g], pair[(i, j)][k]
    let mut alone: Vec<Vec<Option<RunResult>>> = vec![vec![None; ALONE.len()]; n];
    let mut pair: std::collections::BTreeMap<(usize, usize), Vec<Option<RunResult>>> = Default::default();
    let mut mix: Vec<Vec<Option<RunResult>>> = vec![vec![None; MIX.len()]; mix_apps.len()];
    let mut on_split: Vec<Vec<Option<RunResult>>> = vec![vec![None; SPLITS.len()]; split_apps.len()];
    let mut on_layout: Vec<Vec<Option<RunResult>>> = vec![vec![None; lay.len()]; split_apps.len()];
    for (p, (r, _)) in pts.iter().zip(results) {
        match **p {
            Point::Alone(a, g) => alone[a][g] = Some(r),
            Point::Pair(i, j, k) => pair.entry((i, j)).or_insert_with(|| vec![None; PAIR.len()])[k] = Some(r),
            Point::Mix(m, k) => mix[m][k] = Some(r),
            Point::Split(m, g) => on_split[m][g] = Some(r),
            Point::Layout(m, l) => on_layout[m][l] = Some(r),
        }
    }
    let cyc = |a: usize, g: usize| alone[a][g].as_ref().unwrap().cycles;
    let class: Vec<TlpClass> = (0..n).map(|a| class_of(cyc(a, 1), cyc(a, 3))).collect();
    // The applications alone.
    let mut csv = String::from("application,size,conventional,base8,big8,small8,heterocore,big_speedup,small_speedup,class,heterocore_speedup,base8_issue_share\n");
    let mut table = String::from("| application | size | issue cycles on 8 base SMs | 8 big against 8 base | 8 small against 8 base | class (§4.2.1) | HeteroCore against the conventional GPU |\n| --- | ---: | ---: | ---: | ---: | --- | ---: |\n");
    let (mut big_up, mut small_up, mut hc_up, mut issue) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for a in 0..n {
        let s = |g: usize| cyc(a, 1) as f64 / cyc(a, g) as f64;
        let h = cyc(a, 0) as f64 / cyc(a, 4) as f64;
        // (the share of the schedulers' cycles that issued: near 1, more warps cannot help)
        let st = &alone[a][1].as_ref().unwrap().stalls;
        let is = st[0].1 as f64 / st.iter().map(|x| x.1).sum::<u64>().max(1) as f64;
        big_up.push(s(2));
        small_up.push(s(3));
        hc_up.push(h);
        issue.push(is);
        let _ = writeln!(csv, "{},{},{},{},{},{},{},{:.4},{:.4},{},{:.4},{is:.4}", apps[a].0, apps[a].1, cyc(a, 0), cyc(a, 1), cyc(a, 2), cyc(a, 3), cyc(a, 4), s(2), s(3), class[a].name(), h);
        let _ = writeln!(table, "| {} | {} | {:.0} % | {} | {} | {} | {} |", apps[a].0, apps[a].1, 100.0 * is, pct(s(2)), pct(s(3)), class[a].name(), pct(h));
    }
    std::fs::write(ctx.out.join("alone.csv"), &csv).map_err(|e| anyhow!("{}: {e}", ctx.out.join("alone.csv").display()))?;
    // The pairs.
    let mut pcsv = String::from("first,second,classes,policy,cycles,stp,antt,decisions,big_to\n");
    let mut rows = Vec::new();
    for (&(i, j), runs) in &pair {
        let solo = [alone[i][0].clone().unwrap(), alone[j][0].clone().unwrap()];
        let mut stp = [0.0; PAIR.len()];
        let mut antt = [0.0; PAIR.len()];
        let mut big_to = String::new();
        for k in 0..PAIR.len() {
            let r = runs[k].as_ref().unwrap();
            let m = metrics(r, &solo);
            (stp[k], antt[k]) = (m.stp, m.antt);
            let st = r.steering.as_ref();
            let decisions = st.map_or(0, |s| s.decisions.len());
            // (the kernel the steering gave the big SMs to most often, by process)
            let mut count = [0usize; 3];
            for d in st.map_or(&[][..], |s| &s.decisions[..]) {
                let who = d.big.first().map_or(2, |&l| r.launches.get(l).map_or(2, |x| if x.process == apps[i].0 { 0 } else { 1 }));
                count[who] += 1;
            }
            if k == 2 {
                big_to = match (0..3).max_by_key(|&x| (count[x], std::cmp::Reverse(x))).unwrap() {
                    0 => apps[i].0.to_string(),
                    1 => apps[j].0.to_string(),
                    _ => "split".to_string(),
                };
            }
            let _ = writeln!(pcsv, "{},{},{}+{},{},{},{:.4},{:.4},{decisions},{}", apps[i].0, apps[j].0, class[i].name(), class[j].name(), PAIR[k], r.cycles, m.stp, m.antt, if k == 2 { &big_to } else { "-" });
        }
        rows.push((i, j, stp, antt, big_to));
    }
    std::fs::write(ctx.out.join("pairs.csv"), &pcsv).map_err(|e| anyhow!("{}: {e}", ctx.out.join("pairs.csv").display()))?;
    // The four-application mixes.
    let mut mcsv = String::from("mix,applications,classes,policy,cycles,stp,antt\n");
    let mut mix_rows = Vec::new();
    for (m, apps4) in mix_apps.iter().enumerate() {
        let solo: Vec<RunResult> = apps4.iter().map(|&a| alone[a][0].clone().unwrap()).collect();
        let names = apps4.iter().map(|&a| apps[a].0).collect::<Vec<_>>().join("+");
        let classes4 = apps4.iter().map(|&a| class[a].name()).collect::<Vec<_>>().join("+");
        let mut st = [0.0; MIX.len()];
        let mut an = [0.0; MIX.len()];
        for k in 0..MIX.len() {
            let r = mix[m][k].as_ref().unwrap();
            let mm = metrics(r, &solo);
            (st[k], an[k]) = (mm.stp, mm.antt);
            let _ = writeln!(mcsv, "{m},{names},{classes4},{},{},{:.4},{:.4}", MIX[k], r.cycles, mm.stp, mm.antt);
        }
        mix_rows.push((names, classes4, st, an));
    }
    if !mix_rows.is_empty() {
        std::fs::write(ctx.out.join("mixes.csv"), &mcsv).map_err(|e| anyhow!("{}: {e}", ctx.out.join("mixes.csv").display()))?;
    }
    // §6.5's splits: per pair and GPU, STP, ANTT and the thick and lean applications' NTT.
    let mut scsv = String::from("first,second,classes,gpu,cycles,stp,antt,ntt_first,ntt_second\n");
    let mut split_rows = Vec::new();
    for (m, &(i, j)) in split_apps.iter().enumerate() {
        let solo = [alone[i][0].clone().unwrap(), alone[j][0].clone().unwrap()];
        let (mut st, mut an, mut ntt) = ([0.0; SPLITS.len()], [0.0; SPLITS.len()], [[0.0; 2]; SPLITS.len()]);
        for g in 0..SPLITS.len() {
            let r = on_split[m][g].as_ref().unwrap();
            let mm = metrics(r, &solo);
            (st[g], an[g]) = (mm.stp, mm.antt);
            ntt[g] = [mm.processes[0].ntt, mm.processes[1].ntt];
            let _ = writeln!(scsv, "{},{},{}+{},{},{},{:.4},{:.4},{:.4},{:.4}", apps[i].0, apps[j].0, class[i].name(), class[j].name(), SPLITS[g].0, r.cycles, mm.stp, mm.antt, ntt[g][0], ntt[g][1]);
        }
        split_rows.push((i, j, st, an, ntt));
    }
    if !split_rows.is_empty() {
        std::fs::write(ctx.out.join("splits.csv"), &scsv).map_err(|e| anyhow!("{}: {e}", ctx.out.join("splits.csv").display()))?;
    }
    let split_het: Vec<_> = split_rows.iter().filter(|r| class[r.0] != class[r.1]).collect();
    // §6.5's static optimum on 8 + 8: per pair the layout of the best STP and of the best
    // ANTT, against dynamic steering's (the pair's run on HeteroCore above).
    let mut lcsv = String::from("first,second,classes,first_big,first_small,cycles,stp,antt\n");
    let mut opt_rows = Vec::new();
    for (m, &(i, j)) in split_apps.iter().enumerate() {
        let solo = [alone[i][0].clone().unwrap(), alone[j][0].clone().unwrap()];
        let mut best_stp = (f64::NEG_INFINITY, 0);
        let mut best_antt = (f64::INFINITY, 0);
        for (l, &(b, sm)) in lay.iter().enumerate() {
            let r = on_layout[m][l].as_ref().unwrap();
            let mm = metrics(r, &solo);
            let _ = writeln!(lcsv, "{},{},{}+{},{b},{sm},{},{:.4},{:.4}", apps[i].0, apps[j].0, class[i].name(), class[j].name(), r.cycles, mm.stp, mm.antt);
            if mm.stp > best_stp.0 {
                best_stp = (mm.stp, l);
            }
            if mm.antt < best_antt.0 {
                best_antt = (mm.antt, l);
            }
        }
        let d = metrics(pair[&(i, j)][2].as_ref().unwrap(), &solo);
        opt_rows.push((i, j, best_stp, best_antt, d.stp, d.antt));
    }
    if !opt_rows.is_empty() {
        std::fs::write(ctx.out.join("layouts.csv"), &lcsv).map_err(|e| anyhow!("{}: {e}", ctx.out.join("layouts.csv").display()))?;
    }
    let opt_het: Vec<_> = opt_rows.iter().filter(|r| class[r.0] != class[r.1]).collect();
    let dyn_vs_opt_stp = mean(&opt_het.iter().map(|r| r.4 / r.2 .0).collect::<Vec<_>>());
    let dyn_vs_opt_antt = mean(&opt_het.iter().map(|r| r.3 .0 / r.5).collect::<Vec<_>>());
    // (against 8 + 8: STP new / old, ANTT new / old (higher is worse), and the NTT of the
    // thick and of the lean application, each a mean over the thick + lean pairs)
    let vs8 = |g: usize| {
        let thick = |r: &(usize, usize, [f64; 3], [f64; 3], [[f64; 2]; 3])| if class[r.0] == TlpClass::Thick { 0 } else { 1 };
        (
            mean(&split_het.iter().map(|r| r.2[g] / r.2[0]).collect::<Vec<_>>()),
            mean(&split_het.iter().map(|r| r.3[g] / r.3[0]).collect::<Vec<_>>()),
            mean(&split_het.iter().map(|r| r.4[g][thick(r)]).collect::<Vec<_>>()),
            mean(&split_het.iter().map(|r| r.4[g][1 - thick(r)]).collect::<Vec<_>>()),
        )
    };
    let mix_stp = mean(&mix_rows.iter().map(|r| r.2[1] / r.2[0]).collect::<Vec<_>>());
    let mix_antt = mean(&mix_rows.iter().map(|r| r.3[0] / r.3[1]).collect::<Vec<_>>());
    let hetero = |&&(i, j, ..): &&(usize, usize, [f64; PAIR.len()], [f64; PAIR.len()], String)| class[i] != class[j];
    let gain = |set: &[&(usize, usize, [f64; PAIR.len()], [f64; PAIR.len()], String)], k: usize| (mean(&set.iter().map(|r| r.2[k] / r.2[0]).collect::<Vec<_>>()), mean(&set.iter().map(|r| r.3[0] / r.3[k]).collect::<Vec<_>>()));
    let all: Vec<_> = rows.iter().collect();
    let het: Vec<_> = rows.iter().filter(hetero).collect();
    let (stp_all, antt_all) = gain(&all, 2);
    let (stp_het, antt_het) = gain(&het, 2);
    let (stp_agn, antt_agn) = gain(&all, 1);
    // (the pairs of a lean application with one that gains on big SMs as the paper's thick
    // kernels do, Fig. 1: at least GAINS faster on 8 big SMs than on 8 baseline ones)
    let gains_big = |a: usize| big_up[a] >= GAINS;
    let fig1: Vec<_> = rows.iter().filter(|r| (gains_big(r.0) && class[r.1] == TlpClass::Lean) || (gains_big(r.1) && class[r.0] == TlpClass::Lean)).collect();
    let (stp_fig1, antt_fig1) = gain(&fig1, 2);
    // (in heterogeneous pairs: the steering gave the big SMs to the thick kernel)
    let thick_big = het.iter().filter(|r| (r.4 == apps[r.0].0 && class[r.0] == TlpClass::Thick) || (r.4 == apps[r.1].0 && class[r.1] == TlpClass::Thick)).count();
    let lean = class.iter().filter(|&&c| c == TlpClass::Lean).count();
    let mean_big = mean(&big_up);
    let mean_small = mean(&small_up);
    let others: Vec<f64> = (0..n).filter(|&a| big_up[a] < GAINS).map(|a| big_up[a]).collect();
    let cause = format!(
        "8 big SMs run our applications {} faster than 8 baseline ones on average, and {} of the {n} at most {} faster, while 8 small SMs slow them by {} on average (at worst by {}): at a baseline SM's occupancy more warps no longer speed most of them up (their schedulers issue in {:.0} % of the cycles on average, up to {:.0} %), while a small SM's fewer warps slow them down, so moving TLP resources from small SMs to big ones loses more than it gains",
        share(mean_big - 1.0),
        others.len(),
        share(others.iter().copied().fold(f64::NAN, f64::max) - 1.0),
        share(1.0 - mean_small),
        share(1.0 - small_up.iter().copied().fold(f64::NAN, f64::min)),
        100.0 * mean(&issue),
        100.0 * issue.iter().copied().fold(f64::NAN, f64::max)
    );
    let mut claims = Vec::new();
    let mut ratio = |what: &str, paper: f64, ours: f64, cause: &str| {
        let v = ratio_verdict((paper, paper), (ours, ours));
        claims.push(Claim { what: what.into(), paper: pct(paper), ours: if ours.is_finite() { pct(ours) } else { "-".into() }, verdict: v, cause: if v == Verdict::Reproduced { String::new() } else { cause.to_string() } });
    };
    let no_het = if het.is_empty() { format!("no pair of a thick and a lean application: {cause}") } else { cause.clone() };
    ratio("§6.1, Fig. 7: STP of HeteroCore with dynamic steering over the conventional GPU, thick + lean pairs", 1.201, stp_het, &no_het);
    ratio("§6.1, Fig. 8: ANTT of HeteroCore with dynamic steering over the conventional GPU, thick + lean pairs", 1.298, antt_het, &no_het);
    let gainers: Vec<&str> = (0..n).filter(|&a| gains_big(a)).map(|a| apps[a].0).collect();
    let fig1_cause = format!(
        "{} of our applications gain on big SMs as the paper's thick kernels do ({}); paired with a lean one, HeteroCore's gain is smaller than the paper's because {}",
        gainers.len(),
        gainers.join(", "),
        if fig1.is_empty() { "there is no such pair".to_string() } else { format!("the lean applications run at most {} faster on small SMs (the paper's cache-sensitive ones gain up to 46.6 %), so the small SMs give back little of what the thick one gains", pct(small_up.iter().zip(&class).filter(|x| *x.1 == TlpClass::Lean).map(|x| *x.0).fold(f64::NAN, f64::max))) }
    );
    ratio("§6.1, Fig. 7: STP over the conventional GPU, pairs of an application that gains on big SMs (Fig. 1) and a lean one", 1.201, stp_fig1, &fig1_cause);
    ratio("§6.1, Fig. 8: ANTT over the conventional GPU, the same pairs", 1.298, antt_fig1, &fig1_cause);
    let (stp_static, antt_static) = gain(&all, 3);
    // (dynamic against the static STP/ANTT-balanced policy, pair by pair)
    let dyn_stp = mean(&rows.iter().map(|r| r.2[2] / r.2[3]).collect::<Vec<_>>());
    let dyn_antt = mean(&rows.iter().map(|r| r.3[3] / r.3[2]).collect::<Vec<_>>());
    let profile_cause = format!(
        "dynamic steering profiles on every launch ({} cycles a time) and moves SMs after each profile, where the static policy decides at once from the isolated runs; our pairs replay short applications, so profiling and its preemptions recur often (the paper's benchmarks run for millions of cycles between launches); {cause}",
        PROFILE.warmup + PROFILE.window
    );
    ratio("§6.1, Figs. 7-8: STP of dynamic steering against the static STP/ANTT-balanced policy, all pairs", 0.97, dyn_stp, &profile_cause);
    ratio("§6.1, Figs. 7-8: ANTT of dynamic steering against the static STP/ANTT-balanced policy, all pairs", 0.964, dyn_antt, &profile_cause);
    ratio("§4.2.4, Fig. 6: STP of the static STP/ANTT-balanced policy over the conventional GPU, all pairs", 1.139, stp_static, &cause);
    ratio("§4.2.4, Fig. 6: ANTT of the static STP/ANTT-balanced policy over the conventional GPU, all pairs", 1.238, antt_static, &cause);
    ratio("§6.1, Fig. 7: STP over the conventional GPU, all pairs", 1.11, stp_all, &cause);
    ratio("§6.1, Fig. 8: ANTT over the conventional GPU, all pairs", 1.202, antt_all, &cause);
    ratio("§6.3, Fig. 9: single applications on HeteroCore against the conventional GPU, mean", 1.0, mean(&hc_up), &cause);
    if !mix_rows.is_empty() {
        ratio("§6.4: STP of HeteroCore with dynamic steering over the conventional GPU, four-application mixes", 1.19, mix_stp, &cause);
        ratio("§6.4: ANTT of HeteroCore with dynamic steering over the conventional GPU, four-application mixes", 1.332, mix_antt, &cause);
    }
    if !opt_het.is_empty() {
        // (the layout by class: the thick application on the 8 big SMs, the lean one on the 8
        // small; and the pairs where dynamic steering mostly kept the even shares)
        let best_class = opt_het.iter().filter(|r| lay[r.2 .1] == if class[r.0] == TlpClass::Thick { (8, 0) } else { (0, 8) }).count();
        let kept = opt_het.iter().filter(|o| rows.iter().any(|r| (r.0, r.1) == (o.0, o.1) && r.4 == "split")).count();
        let cause = format!(
            "the best layout is the one by class (the thick application on the 8 big SMs, the lean one on the 8 small) in {best_class} of the {} thick + lean pairs; dynamic steering mostly kept the even shares in {kept} of them (Algorithm 2 splits when both kernels issue more per big SM than per small SM, which a lean kernel with more warps on a big SM also does), and it profiles for {} cycles on every launch. The best layout's ANTT is {} of dynamic steering's",
            opt_het.len(),
            PROFILE.warmup + PROFILE.window,
            share(dyn_vs_opt_antt)
        );
        ratio("§6.5, Fig. 10: STP of dynamic steering against the static optimum (every layout of 4, 8 or 12 SMs of either kind), thick + lean pairs on 8 big + 8 small", 0.965, dyn_vs_opt_stp, &cause);
    }
    if !split_het.is_empty() {
        let (s4, a4, t4, l4) = vs8(1);
        let (s12, a12, t12, l12) = vs8(2);
        let (_, _, t8, l8) = vs8(0);
        let ntts = format!(
            "the thick application's NTT is {t8:.3} on 8 + 8, {t4:.3} on 4 big + 12 small and {t12:.3} on 12 big + 4 small, the lean one's {l8:.3}, {l4:.3} and {l12:.3} (means over {} thick + lean pairs, each under the layout by class)",
            split_het.len()
        );
        ratio("§6.5, Fig. 10: STP of 4 big + 12 small against 8 big + 8 small, thick + lean pairs, the thick application on the big SMs", 1.0, s4, &ntts);
        // (the paper: ANTT suffers by 34.4 %: as new / old, higher is worse)
        ratio("§6.5, Fig. 10: ANTT of 4 big + 12 small against 8 big + 8 small, the same (higher is worse)", 1.344, a4, &ntts);
        // (the paper gives no number for 12 big + 4 small: both worse)
        let worse = side(s12 - 1.0) < 0 && side(a12 - 1.0) > 0;
        claims.push(Claim {
            what: "§6.5, Fig. 10: STP and ANTT of 12 big + 4 small against 8 big + 8 small, the same pairs".into(),
            paper: "both worse".into(),
            ours: format!("STP {}, ANTT {}", pct(s12), pct(a12)),
            verdict: if worse { Verdict::Reproduced } else { Verdict::NotReproduced },
            cause: if worse { String::new() } else { ntts.clone() },
        });
    }
    let v = share_verdict(&[0.5], &[lean as f64 / n as f64]);
    claims.push(Claim {
        what: "§5, Table 3: lean applications among the benchmarks".into(),
        paper: "6 of 12".into(),
        ours: format!("{lean} of {n}"),
        verdict: v,
        cause: if v == Verdict::Reproduced { String::new() } else { format!("{lean} of our {n} applications do not slow down on small SMs; {cause}") },
    });
    // Plots.
    let names: Vec<String> = rows.iter().map(|r| format!("{}+{}", apps[r.0].0, apps[r.1].0)).collect();
    let series: Vec<(String, Vec<f64>)> = (0..PAIR.len()).map(|k| (PAIR[k].to_string(), rows.iter().map(|r| r.2[k]).collect())).collect();
    crate::plot::bars(&ctx.out.join("pairs-stp.svg"), "STP of every pair (alone: the conventional GPU)", "STP", &names, &series)?;
    let series: Vec<(String, Vec<f64>)> = (0..PAIR.len()).map(|k| (PAIR[k].to_string(), rows.iter().map(|r| r.3[k]).collect())).collect();
    crate::plot::bars(&ctx.out.join("pairs-antt.svg"), "ANTT of every pair (lower is better)", "ANTT", &names, &series)?;
    let anames: Vec<String> = apps.iter().map(|a| a.0.to_string()).collect();
    let series = vec![("8 big".to_string(), big_up.iter().map(|x| 100.0 * x).collect()), ("8 small".to_string(), small_up.iter().map(|x| 100.0 * x).collect())];
    crate::plot::bars(&ctx.out.join("kinds.svg"), "Each application alone: speed against 8 baseline SMs", "speed relative to 8 baseline SMs (%)", &anames, &series)?;
    let mut body = String::from("## The applications alone\n\nEach alone on 8 baseline, 8 big and 8 small SMs (speed against the baseline SMs: cycles on 8 baseline SMs over cycles on the others; §4.2.1 calls an application lean when the small SMs do not slow it down), and on HeteroCore against the conventional GPU of 16 baseline SMs (§6.3):\n\n");
    body += &table;
    let _ = write!(
        body,
        "\n## The pairs\n\nEvery pair, each application replayed until both have completed {MIN_RUNS} runs; STP and ANTT against each alone on the conventional GPU. Over the conventional GPU with even spatial partitioning, means over the pairs: TLP-agnostic HeteroCore (4 big + 4 small SMs each) STP {}, ANTT {}; dynamic steering STP {} (thick + lean pairs {}), ANTT {} ({}). In {} of the {} thick + lean pairs the steering gave the big SMs to the thick application most often. Over the {} pairs of a lean application and one that gains at least {} on 8 big SMs: STP {}, ANTT {}. The static STP/ANTT-balanced policy (§4.2.3, deciding at once from the isolated runs): STP {}, ANTT {}.\n\n| pair | classes | STP: conventional, TLP-agnostic, dynamic, static balanced | ANTT: the same | big SMs most often to (dynamic) |\n| --- | --- | --- | --- | --- |\n",
        pct(stp_agn),
        pct(antt_agn),
        pct(stp_all),
        pct(stp_het),
        pct(antt_all),
        pct(antt_het),
        thick_big,
        het.len(),
        fig1.len(),
        pct(GAINS),
        pct(stp_fig1),
        pct(antt_fig1),
        pct(stp_static),
        pct(antt_static)
    );
    for r in &rows {
        let _ = writeln!(body, "| {} + {} | {} + {} | {:.3}, {:.3}, {:.3}, {:.3} | {:.3}, {:.3}, {:.3}, {:.3} | {} |", apps[r.0].0, apps[r.1].0, class[r.0].name(), class[r.1].name(), r.2[0], r.2[1], r.2[2], r.2[3], r.3[0], r.3[1], r.3[2], r.3[3], r.4);
    }
    if !mix_rows.is_empty() {
        let _ = write!(
            body,
            "\n## Four applications (§6.4)\n\n{} mixes of three thick applications and a lean one, or two and two, each replayed until all four have completed {MIN_RUNS} runs: HeteroCore with dynamic steering (profiling on 2 big + 2 small SMs each, then the two largest gains to 4 big SMs each) against the conventional GPU with even partitioning (4 SMs each), STP {} and ANTT {} on average.\n\n| mix | classes | STP: conventional, dynamic | ANTT: conventional, dynamic |\n| --- | --- | --- | --- |\n",
            mix_rows.len(),
            pct(mix_stp),
            pct(mix_antt)
        );
        for r in &mix_rows {
            let _ = writeln!(body, "| {} | {} | {:.3}, {:.3} | {:.3}, {:.3} |", r.0, r.1, r.2[0], r.2[1], r.3[0], r.3[1]);
        }
    }
    if !split_rows.is_empty() {
        let (s4, a4, ..) = vs8(1);
        let (s12, a12, ..) = vs8(2);
        let _ = write!(
            body,
            "\n## Other splits of the same area (§6.5)\n\n{} pairs ({} thick + lean) on HeteroCore GPUs of the same TLP totals, the small SM as it is and the big one resized (`heterocore::split`: 4 big SMs of 81,920 registers, 96 KB and 120 warps; 12 of 38,229 registers, 53 KB and 56 warps), each pair under the static layout by class (the thick application on the big SMs, the lean one on the small; two of a class split both kinds), replayed until both have completed {MIN_RUNS} runs. Against 8 big + 8 small, over the thick + lean pairs: 4 big + 12 small STP {}, ANTT {} (higher is worse; the paper: STP nearly unchanged, ANTT 34.4 % worse); 12 big + 4 small STP {}, ANTT {} (the paper: both worse).\n\n| pair | classes | STP: 8B+8S, 4B+12S, 12B+4S | ANTT: the same | NTT of the first: the same | NTT of the second: the same |\n| --- | --- | --- | --- | --- | --- |\n",
            split_rows.len(),
            split_het.len(),
            pct(s4),
            pct(a4),
            pct(s12),
            pct(a12)
        );
        for r in &split_rows {
            let _ = writeln!(body, "| {} + {} | {} + {} | {:.3}, {:.3}, {:.3} | {:.3}, {:.3}, {:.3} | {:.3}, {:.3}, {:.3} | {:.3}, {:.3}, {:.3} |", apps[r.0].0, apps[r.1].0, class[r.0].name(), class[r.1].name(), r.2[0], r.2[1], r.2[2], r.3[0], r.3[1], r.3[2], r.4[0][0], r.4[1][0], r.4[2][0], r.4[0][1], r.4[1][1], r.4[2][1]);
        }
        let names: Vec<String> = split_rows.iter().map(|r| format!("{}+{}", apps[r.0].0, apps[r.1].0)).collect();
        let series: Vec<(String, Vec<f64>)> = (0..SPLITS.len()).map(|g| (SPLITS[g].0.to_string(), split_rows.iter().map(|r| r.3[g]).collect())).collect();
        crate::plot::bars(&ctx.out.join("splits-antt.svg"), "§6.5: ANTT of each pair on three splits of the same area (lower is better)", "ANTT", &names, &series)?;
        let series: Vec<(String, Vec<f64>)> = (0..SPLITS.len()).map(|g| (SPLITS[g].0.to_string(), split_rows.iter().map(|r| r.2[g]).collect())).collect();
        crate::plot::bars(&ctx.out.join("splits-stp.svg"), "§6.5: STP of each pair on three splits of the same area", "STP", &names, &series)?;
    }
    if !opt_rows.is_empty() {
        let _ = write!(
            body,
            "\n## The static optimum (§6.5)\n\nThe same pairs on 8 big + 8 small under every fixed layout of the first application on 4, 8 or 12 SMs in any mix of the kinds ({} layouts; the second on the rest; `layouts.csv`), the best STP and the best ANTT among them against dynamic steering's. Over the thick + lean pairs, dynamic steering reaches {} of the optimum's STP (the paper: within 3.5 %) and {} of its ANTT (the optimum's ANTT over dynamic's).\n\n| pair | classes | best STP (first on big + small) | dynamic STP | best ANTT (first on big + small) | dynamic ANTT |\n| --- | --- | --- | ---: | --- | ---: |\n",
            lay.len(),
            share(dyn_vs_opt_stp),
            share(dyn_vs_opt_antt)
        );
        for r in &opt_rows {
            let _ = writeln!(body, "| {} + {} | {} + {} | {:.3} ({} + {}) | {:.3} | {:.3} ({} + {}) | {:.3} |", apps[r.0].0, apps[r.1].0, class[r.0].name(), class[r.1].name(), r.2 .0, lay[r.2 .1].0, lay[r.2 .1].1, r.4, r.3 .0, lay[r.3 .1].0, lay[r.3 .1].1, r.5);
        }
    }
    let scale = format!(
        "`{CONFIG}` (Table 1: 8 big + 8 small SMs) and its conventional GPU (16 baseline SMs, the same memory system); {n} applications of the library ({}); {} pairs, each replayed until both applications have completed {MIN_RUNS} runs (the paper: 66 pairs, 10 M cycles each); {} four-application mixes (the paper: 50); {} pairs on §6.5's other splits and under {} fixed layouts (its static optimum); profiling {} + {} cycles (the paper's 20 K + 20 K of 10 M cycles, scaled to our runs); {} simulations",
        apps.iter().map(|a| format!("{} {}", a.0, a.1)).collect::<Vec<_>>().join(", "),
        rows.len(),
        mix_rows.len(),
        split_rows.len(),
        lay.len(),
        PROFILE.warmup,
        PROFILE.window,
        pts.len()
    );
    let mut files: Vec<PathBuf> = ["alone.csv", "pairs.csv", "kinds.svg", "pairs-stp.svg", "pairs-antt.svg"].iter().map(PathBuf::from).collect();
    if !mix_rows.is_empty() {
        files.push(PathBuf::from("mixes.csv"));
    }
    if !split_rows.is_empty() {
        files.extend(["splits.csv", "splits-stp.svg", "splits-antt.svg", "layouts.csv"].iter().map(PathBuf::from));
    }
    Ok(Report { scale, claims, body, files, points: pts.len(), core_seconds, verified })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_hold_one_or_two_lean_applications_spread_over_all() {
        use TlpClass::{Lean, Thick};
        let class = [Thick, Thick, Thick, Lean, Lean, Thick];
        let m = choose_mixes(&class, 4);
        assert_eq!(m.len(), 4);
        for x in &m {
            let lean = x.iter().filter(|&&a| class[a] == Lean).count();
            assert!(lean == 1 || lean == 2, "{x:?}");
        }
        // (spread: the first and a late one of the 14 such mixes in order)
        assert_eq!(m[0], [0, 1, 2, 3]);
        assert_ne!(m[3], m[2]);
        // Too few such mixes: any four.
        assert_eq!(choose_mixes(&[Thick; 4], 2), vec![[0, 1, 2, 3]]);
    }
}
