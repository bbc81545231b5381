//! `mpgpu experiment zorua`: Zorua's evaluation (Vijaykumar et al., ISCA 2016, §6): every
//! library application over a grid of resource specifications under the block allocation, WLM
//! and Zorua on `fermi15`, `kepler15` and `maxwell15` (`mpgpu study`): the performance ranges
//! (§6.1, Fig. 9), the speedups (§6.2), the porting loss (§6.3, Fig. 11), the schedulable warps
//! and the physical hit rates (§6.4, Fig. 12).

use super::{ratio_verdict, share_verdict, Claim, Ctx, Experiment, Report, Verdict};
use crate::par::Progress;
use crate::study_cmd::{resolve_apps, study, study_count};
use anyhow::{anyhow, Result};
use mpgpu_ref::config::GpuConfig;
use std::path::PathBuf;

pub const EXPERIMENT: Experiment = Experiment {
    name: "zorua",
    paper: "Vijaykumar et al., Zorua (ISCA 2016), §6",
    page: "zorua",
    what: "performance ranges, speedups, porting loss, schedulable warps and hit rates over the library under block, WLM and Zorua",
    points,
    run,
};

/// The paper's three GPU generations, as our presets (docs/configs.md).
const CONFIGS: [&str; 3] = ["fermi15", "kepler15", "maxwell15"];
const SEED: u64 = 1;

/// The applications: every grid of the study, or under `--quick` one small one.
fn apps(quick: bool) -> Vec<String> {
    if quick {
        vec!["reduction".into()]
    } else {
        Vec::new()
    }
}

fn configs(quick: bool) -> Result<Vec<GpuConfig>> {
    let n = if quick { 2 } else { CONFIGS.len() };
    CONFIGS[..n].iter().map(|c| GpuConfig::from_arg(c).map_err(|e| anyhow!("{e}"))).collect()
}

fn points(quick: bool) -> Result<usize> {
    Ok(study_count(&resolve_apps(&apps(quick), SEED)?, configs(quick)?.len()))
}

fn run(ctx: &Ctx, pb: &Progress) -> Result<Report> {
    let apps = resolve_apps(&apps(ctx.quick), SEED)?;
    let cfgs = configs(ctx.quick)?;
    let st = study(&apps, &cfgs, SEED, ctx.limits, &ctx.out.join("study"), pb)?;
    let h = &st.headline;
    let pct = |v: Option<f64>| v.map_or("-".into(), |x| format!("{:.1} %", 100.0 * x));
    let mut claims = Vec::new();
    // (a ratio of two means: Zorua's figure as a share of the block allocation's)
    let share_of = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => f64::NAN,
    };
    let mut ratio = |what: &str, paper_s: String, paper: f64, ours_s: String, ours: f64, cause: &str| {
        let v = ratio_verdict((paper, paper), (ours, ours));
        claims.push(Claim { what: what.into(), paper: paper_s, ours: ours_s, verdict: v, cause: if v == Verdict::Reproduced { String::new() } else { cause.to_string() } });
    };
    let warps = format!("Zorua's schedulable warps rise by {} over the block allocation's (the paper's +32.8 %): it admits a warp only if its peak phase fits and does not oversubscribe on our kernels", pct(h.warps[1]));
    ratio(
        "§6.1, Fig. 9: Zorua's mean performance range against the block allocation's",
        "48.2 % against 96.6 %".into(),
        0.482 / 0.966,
        format!("{} against {}", pct(h.range[2]), pct(h.range[0])),
        share_of(h.range[2], h.range[0]),
        &warps,
    );
    ratio("§6.1, Fig. 9: WLM's mean performance range against the block allocation's", "88.3 % against 96.6 %".into(), 0.883 / 0.966, format!("{} against {}", pct(h.range[1]), pct(h.range[0])), share_of(h.range[1], h.range[0]), "");
    ratio(
        "§6.3, Fig. 11: Zorua's porting loss against the block allocation's",
        "23.9 % against 52.7 %".into(),
        0.239 / 0.527,
        format!("{} against {}", pct(h.porting[2]), pct(h.porting[0])),
        share_of(h.porting[2], h.porting[0]),
        "our three presets differ less than the paper's GPUs",
    );
    let one = |v: Option<f64>| v.map_or(f64::NAN, |x| 1.0 + x);
    ratio("§6.2: Zorua's speedup over the block allocation, all specifications", "+25.2 %".into(), 1.252, pct(h.all_speedup), one(h.all_speedup), &warps);
    ratio("§6.2, Fig. 9: Zorua's speedup at the best specification", "+12.8 %".into(), 1.128, pct(h.best_speedup), one(h.best_speedup), &format!("{warps}; at the best specification the block allocation already has the occupancy it needs, and Zorua pays its table lookups and the coordinator's cycles (docs/zorua.md, \"Against the paper\")"));
    ratio("§6.4, Fig. 12: schedulable warps over the block allocation", "+32.8 %".into(), 1.328, pct(h.warps[1]), one(h.warps[1]), &warps);
    for (i, (what, paper)) in [("§6.4: register accesses to physical sets", 0.989), ("§6.4: scratchpad accesses to physical sets", 0.996)].into_iter().enumerate() {
        let v = h.hits[i].map_or(Verdict::NotReproduced, |o| share_verdict(&[paper], &[o]));
        let cause = match h.hits[i] {
            _ if v == Verdict::Reproduced => String::new(),
            None => "no access of the run was counted".into(),
            Some(o) => format!("{:.1} % of the accesses found their sets physical", 100.0 * o),
        };
        claims.push(Claim { what: what.into(), paper: pct(Some(paper)), ours: pct(h.hits[i]), verdict: v, cause });
    }
    let mut failed = st.failed.clone();
    failed.extend(st.errors.iter().cloned());
    let body = format!(
        "## The study\n\nThe tables below are `study/summary.md` (`mpgpu study`; docs/zorua.md, \"Results: the study over the library\", defines each figure).\n\n{}{}",
        // (the plots named relative to the experiment's folder, so that the page does not depend
        // on --out)
        st.summary.replace("## ", "### ").replace(&format!("{}/", ctx.out.join("study").display()), "study/"),
        if failed.is_empty() { String::new() } else { format!("\n### Points that failed\n\n{}\n", failed.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n")) }
    );
    let scale = format!(
        "{} ({}); {} applications, each over its grid of registers per thread, threads and scratchpad per block (docs/zorua.md, \"Results: the study\"; the paper's grids are 8 to 65 specifications, ours 4 to 20), under block, WLM and Zorua; {} simulations",
        cfgs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
        "the paper's Fermi, Kepler and Maxwell",
        apps.len(),
        points(ctx.quick)?
    );
    let mut files: Vec<PathBuf> = ["study/points.csv", "study/points.json", "study/summary.md"].iter().map(PathBuf::from).collect();
    for f in std::fs::read_dir(ctx.out.join("study")).map_err(|e| anyhow!("{}: {e}", ctx.out.join("study").display()))? {
        let name = f.map_err(|e| anyhow!("{e}"))?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".svg") {
            files.push(PathBuf::from("study").join(name));
        }
    }
    files[3..].sort();
    Ok(Report { scale, claims, body, files, points: points(ctx.quick)?, core_seconds: st.secs, verified: st.failed.is_empty() && st.errors.is_empty() })
}
