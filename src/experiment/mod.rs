//! `mpgpu experiment <name>`: one command per paper that regenerates its headline results at
//! the paper's scale, and writes the CSV files, the SVG plots and a page that sets each of the
//! paper's numbers beside ours with a verdict (docs/results/README.md describes the pages and
//! the verdict rules).
//!
//! An experiment is a list of independent simulations (its points), run on every core
//! (`--jobs`) or on Slurm (`--slurm`), and a summary computed from their results. `--quick`
//! runs a small subset of the points with the same code (what the tests run); its page goes
//! under `--out` only, so that it never replaces a full run's page in `docs/results`.

mod heterocore;
mod thesis;
mod thesis_faults;
mod unified;
mod warped_slicer;
mod zorua;

use crate::par::Progress;
use anyhow::{anyhow, bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExperimentArgs {
    /// The experiment (`--list` names them), or `all`.
    name: Option<String>,
    /// List the experiments: what each reproduces, its points and its last full run's time on
    /// one core.
    #[arg(long)]
    list: bool,
    /// A small subset of the points, with the same code (minutes on one core); the page is
    /// written under --out only.
    #[arg(long)]
    quick: bool,
    /// Where the CSV files, the plots and the page go (a folder per experiment).
    #[arg(long, default_value = "target/experiment")]
    out: PathBuf,
    /// Where a full run also writes its page, `<page>.md` (the project's docs/results).
    #[arg(long, default_value = "docs/results")]
    docs: PathBuf,
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
}

/// What an experiment gets: the scale, the limits and where its files go.
pub struct Ctx {
    pub quick: bool,
    pub limits: mpgpu_ref::timing::RunLimits,
    /// The experiment's own folder under `--out`.
    pub out: PathBuf,
}

/// One experiment of the registry.
pub struct Experiment {
    pub name: &'static str,
    /// The paper, as the page cites it.
    pub paper: &'static str,
    /// The page's file stem under docs/results.
    pub page: &'static str,
    /// What it reproduces, one line.
    pub what: &'static str,
    /// The points at full scale and under `--quick`.
    pub points: fn(quick: bool) -> Result<usize>,
    pub run: fn(&Ctx, &Progress) -> Result<Report>,
}

/// Every experiment, in the order `all` runs them.
pub const EXPERIMENTS: &[Experiment] = &[thesis::EXPERIMENT, thesis_faults::EXPERIMENT, zorua::EXPERIMENT, warped_slicer::EXPERIMENT, heterocore::EXPERIMENT, unified::EXPERIMENT];

/// How one of the paper's numbers compares with ours (docs/results/README.md, "Verdicts").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Reproduced,
    TrendOnly,
    NotReproduced,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::TrendOnly => "trend only",
            Verdict::NotReproduced => "not reproduced",
        }
    }
}

/// The arithmetic mean, NaN for none.
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Below this distance from 1 a ratio counts as no effect.
const NO_EFFECT: f64 = 0.02;
/// A ratio's effect (its distance from 1) is reproduced within this share of the paper's...
const EFFECT_SHARE: f64 = 0.5;
/// ...or within this much, whichever is larger.
const EFFECT_SLACK: f64 = 0.05;

fn side(e: f64) -> i8 {
    if e.abs() < NO_EFFECT {
        0
    } else if e > 0.0 {
        1
    } else {
        -1
    }
}

/// The verdict on a ratio (1 = no effect) the paper gives at the low and high end of a range
/// (fewest to most processes, smallest to largest parameter), against ours at the same ends (a
/// single value is a range whose ends are equal: trend only then means the paper's side of 1,
/// outside the tolerance):
/// - reproduced: at both ends our effect (ratio − 1) is on the paper's side of 1 and within
///   half of the paper's effect, or within 0.05;
/// - trend only: at both ends on the paper's side of 1, and moving from the low end to the
///   high end in the paper's direction (where the paper's moves by more than 0.05);
/// - not reproduced: otherwise.
pub fn ratio_verdict(paper: (f64, f64), ours: (f64, f64)) -> Verdict {
    let ends = [(paper.0 - 1.0, ours.0 - 1.0), (paper.1 - 1.0, ours.1 - 1.0)];
    if ends.iter().any(|(_, o)| !o.is_finite()) {
        return Verdict::NotReproduced;
    }
    let same_side = ends.iter().all(|&(p, o)| side(p) == side(o));
    if same_side && ends.iter().all(|&(p, o)| (o - p).abs() <= (EFFECT_SHARE * p.abs()).max(EFFECT_SLACK)) {
        return Verdict::Reproduced;
    }
    let (dp, dour) = (paper.1 - paper.0, ours.1 - ours.0);
    let direction = dp.abs() <= EFFECT_SLACK || dp.signum() == dour.signum();
    if same_side && direction {
        Verdict::TrendOnly
    } else {
        Verdict::NotReproduced
    }
}

/// The verdict on a share (0..=1) the paper gives at points of a range, against ours at the
/// same points: reproduced when every one is within 0.15; trend only when the paper's share
/// moves by more than 0.15 from the first point to the last and ours moves the same way; not
/// reproduced otherwise (a share with no trend in the paper is reproduced or not).
pub fn share_verdict(paper: &[f64], ours: &[f64]) -> Verdict {
    if paper.len() != ours.len() || paper.is_empty() || ours.iter().any(|o| !o.is_finite()) {
        return Verdict::NotReproduced;
    }
    if paper.iter().zip(ours).all(|(p, o)| (p - o).abs() <= 0.15) {
        return Verdict::Reproduced;
    }
    let (dp, dour) = (paper[paper.len() - 1] - paper[0], ours[ours.len() - 1] - ours[0]);
    if dp.abs() > 0.15 && dp.signum() == dour.signum() && dour.abs() > 0.0 {
        Verdict::TrendOnly
    } else {
        Verdict::NotReproduced
    }
}

/// One of the paper's numbers beside ours.
pub struct Claim {
    /// The paper's figure or section and what it measures.
    pub what: String,
    pub paper: String,
    pub ours: String,
    pub verdict: Verdict,
    /// For a verdict other than reproduced: the measured cause, from this run's figures.
    pub cause: String,
}

/// What an experiment found.
pub struct Report {
    /// The scale it ran at (configuration, workloads, lengths), for the page.
    pub scale: String,
    pub claims: Vec<Claim>,
    /// Further sections of the page (Markdown): the tables behind the claims.
    pub body: String,
    /// The files it wrote under its folder (CSV and plots).
    pub files: Vec<PathBuf>,
    /// The points it ran and the sum of their run times (seconds of one core).
    pub points: usize,
    pub core_seconds: f64,
    /// Every output of every run verified.
    pub verified: bool,
}

/// The file beside a page that records its run's time on one core (read back by `--list`):
/// kept out of the page, which is the same at every `--jobs`.
fn time_file(dir: &Path, e: &Experiment) -> PathBuf {
    dir.join(format!("{}.time", e.page))
}

fn page(e: &Experiment, r: &Report, quick: bool) -> String {
    let mut s = format!("# {}: the paper's results against mpgpu's\n\n", e.paper);
    let _ = writeln!(s, "Written by `mpgpu experiment {}{}` (do not edit: rerun it). What it reproduces: {}.\n", e.name, if quick { " --quick" } else { "" }, e.what);
    if quick {
        s += "**A quick run**: a small subset of the points, for the tests; the figures are not the paper's scale.\n\n";
    }
    let _ = writeln!(s, "Scale: {}\n", r.scale);
    let counts = [Verdict::Reproduced, Verdict::TrendOnly, Verdict::NotReproduced].map(|v| r.claims.iter().filter(|c| c.verdict == v).count());
    let _ = writeln!(s, "## Verdicts\n\n{} reproduced, {} trend only, {} not reproduced (the rules: docs/results/README.md).\n", counts[0], counts[1], counts[2]);
    s += "| result | paper | ours | verdict |\n| --- | --- | --- | --- |\n";
    for c in &r.claims {
        let _ = writeln!(s, "| {} | {} | {} | {} |", c.what, c.paper, c.ours, c.verdict.name());
    }
    // (each cause once, after every result it explains, in the table's order)
    let mut causes: Vec<(&str, Vec<&Claim>)> = Vec::new();
    for c in r.claims.iter().filter(|c| c.verdict != Verdict::Reproduced && !c.cause.is_empty()) {
        match causes.iter_mut().find(|x| x.0 == c.cause) {
            Some(x) => x.1.push(c),
            None => causes.push((&c.cause, vec![c])),
        }
    }
    if !causes.is_empty() {
        s += "\n## Measured causes\n\n";
        for (cause, cs) in causes {
            let _ = writeln!(s, "- {}: {cause}", cs.iter().map(|c| format!("**{}** ({})", c.what, c.verdict.name())).collect::<Vec<_>>().join("; "));
        }
    }
    s += "\n";
    s += &r.body;
    if !r.files.is_empty() {
        let _ = writeln!(s, "\n## Files\n\nUnder `--out` (default `target/experiment/{}`): {}.", e.name, r.files.iter().map(|f| format!("`{}`", f.display())).collect::<Vec<_>>().join(", "));
    }
    s
}

/// The one-core time of the last full run, if one was recorded.
fn recorded_minutes(docs: &Path, e: &Experiment) -> Option<String> {
    let text = std::fs::read_to_string(time_file(docs, e)).ok()?;
    Some(text.lines().next()?.split(" (").next()?.trim().to_string())
}

pub fn experiment_cmd(a: ExperimentArgs) -> Result<ExitCode> {
    if a.list {
        if a.name.is_some() {
            bail!("--list lists every experiment: give no name with it");
        }
        println!("{:<14} {:>7} {:>7}  {:<22} what", "name", "points", "quick", "one core (full run)");
        for e in EXPERIMENTS {
            let t = recorded_minutes(&a.docs, e).unwrap_or_else(|| "not run yet".into());
            // (an experiment that cannot count its points here, run from outside the project's
            // root say, shows "-")
            let n = |q: bool| (e.points)(q).map_or("-".to_string(), |n| n.to_string());
            println!("{:<14} {:>7} {:>7}  {:<22} {} ({})", e.name, n(false), n(true), t, e.what, e.paper);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(name) = a.name.as_deref() else {
        bail!("name an experiment ({}), or `all`; --list describes them", EXPERIMENTS.iter().map(|e| e.name).collect::<Vec<_>>().join(", "));
    };
    let chosen: Vec<&Experiment> = if name == "all" {
        EXPERIMENTS.iter().collect()
    } else {
        vec![EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| anyhow!("no experiment `{}` (expected one of: {}, all)", crate::checks::shown(name), EXPERIMENTS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")))?]
    };
    // (every output folder is checked before the first simulation)
    crate::checks::output_dir(&a.out, "--out")?;
    if !a.quick {
        crate::checks::output_dir(&a.docs, "--docs")?;
    }
    let points: Vec<usize> = chosen.iter().map(|e| (e.points)(a.quick)).collect::<Result<_>>()?;
    let total: usize = points.iter().sum();
    let mut pb = Progress::new("experiment", total, a.jobs.workers()).with_slurm(&a.slurm);
    // (`all` under `--resume DIR` or `--slurm DIR`: each experiment in `DIR/<name>`, the folder
    // of `experiment <name>` with the same options, so that one run alone serves `all`)
    let whole = if name == "all" { pb.set_slurm(None) } else { None };
    if let Some(w) = &whole {
        w.check_parts()?;
    }
    let mut ok = true;
    let parts = chosen.len() > 1;
    for (k, e) in chosen.iter().enumerate() {
        if parts {
            // (the experiments' points cost very different times: each estimated by its own)
            let then: String = chosen[k + 1..].iter().map(|n| format!(", then {} ({})", n.name, recorded_minutes(&a.docs, n).map_or("not run yet".to_string(), |t| format!("{t} of one core when last run")))).collect();
            pb.part(e.name, points[k], &then);
        }
        if let Some(w) = &whole {
            let argv = part_argv(e.name, &w.dir().join(e.name))?;
            pb.set_slurm(Some(w.part(e.name, argv)));
        }
        let out = a.out.join(e.name);
        std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
        let ctx = Ctx { quick: a.quick, limits: a.limit.limits(), out: out.clone() };
        let r = (e.run)(&ctx, &pb)?;
        let text = page(e, &r, a.quick);
        let mut pages = vec![out.join(format!("{}.md", e.page))];
        std::fs::write(&pages[0], &text).with_context(|| format!("cannot write {}", pages[0].display()))?;
        if !a.quick {
            std::fs::create_dir_all(&a.docs).with_context(|| format!("cannot create {}", a.docs.display()))?;
            let p = a.docs.join(format!("{}.md", e.page));
            std::fs::write(&p, &text).with_context(|| format!("cannot write {}", p.display()))?;
            let t = time_file(&a.docs, e);
            std::fs::write(&t, format!("{:.1} minutes ({} simulations)\n", r.core_seconds / 60.0, r.points)).with_context(|| format!("cannot write {}", t.display()))?;
            pages.extend([p, t]);
        }
        println!("{}: {} points, their run times summed in {:.1} s", e.name, r.points, r.core_seconds);
        for c in &r.claims {
            println!("  {:<15} {} (paper {}, ours {})", c.verdict.name(), c.what, c.paper, c.ours);
        }
        for p in &pages {
            println!("wrote {}", p.display());
        }
        ok &= r.verified;
    }
    pb.finish();
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong (the runs' CSV files say which)" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The command line of one experiment of `experiment all`: this process's, with the
/// experiment's name in place of `all` and `dir` in place of the folder of `--resume` or
/// `--slurm`.
fn part_argv(name: &str, dir: &Path) -> Result<Vec<String>> {
    let argv = crate::slurm::args()?;
    let dir = dir.to_str().ok_or_else(|| anyhow!("{}: the folder's path is not UTF-8", dir.display()))?;
    part_of(&argv, name, dir)
}

/// [`part_argv`] of the arguments `argv` (the subcommand first).
fn part_of(argv: &[String], name: &str, dir: &str) -> Result<Vec<String>> {
    use clap::Args;
    let cmd = ExperimentArgs::augment_args(clap::Command::new("experiment"));
    let valued: Vec<&str> = cmd.get_arguments().filter(|x| x.get_action().takes_values()).filter_map(|x| x.get_long()).collect();
    let mut out = Vec::new();
    let mut it = argv.iter();
    out.extend(it.next().cloned());
    let mut named = false;
    while let Some(x) = it.next() {
        match x.strip_prefix("--") {
            Some("") => {
                out.push(x.clone());
                if !named {
                    out.extend(it.next().map(|_| name.to_string()));
                    named = true;
                }
                out.extend(it.cloned());
                break;
            }
            Some(opt) => {
                let (key, value) = opt.split_once('=').map_or((opt, None), |(k, v)| (k, Some(v)));
                let folder = key == "resume" || key == "slurm";
                match value {
                    Some(_) if folder => out.push(format!("--{key}={dir}")),
                    Some(_) => out.push(x.clone()),
                    None => {
                        out.push(x.clone());
                        if valued.contains(&key) {
                            let v = it.next().ok_or_else(|| anyhow!("--{key}: expected a value"))?;
                            out.push(if folder { dir.to_string() } else { v.clone() });
                        }
                    }
                }
            }
            None if !named => {
                out.push(name.to_string());
                named = true;
            }
            None => out.push(x.clone()),
        }
    }
    if !named {
        bail!("expected the experiment's name (`all`) among the arguments");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_verdicts_follow_the_rules() {
        // the paper's 1.5x -> 2x
        assert_eq!(ratio_verdict((1.5, 2.0), (1.4, 2.3)), Verdict::Reproduced);
        assert_eq!(ratio_verdict((1.5, 2.0), (1.1, 1.3)), Verdict::TrendOnly);
        assert_eq!(ratio_verdict((1.5, 2.0), (1.3, 1.2)), Verdict::NotReproduced);
        assert_eq!(ratio_verdict((1.5, 2.0), (0.9, 2.0)), Verdict::NotReproduced);
        // small effects: within 0.05 reproduces; no effect where the paper has one does not
        assert_eq!(ratio_verdict((1.08, 1.12), (1.04, 1.15)), Verdict::Reproduced);
        assert_eq!(ratio_verdict((1.08, 1.12), (1.01, 1.15)), Verdict::NotReproduced);
        assert_eq!(ratio_verdict((1.0, 1.6), (1.01, 1.5)), Verdict::Reproduced);
        assert_eq!(ratio_verdict((1.5, 2.0), (f64::NAN, 2.0)), Verdict::NotReproduced);
    }

    #[test]
    fn share_verdicts_follow_the_rules() {
        assert_eq!(share_verdict(&[0.2, 0.7, 1.0], &[0.3, 0.6, 0.9]), Verdict::Reproduced);
        assert_eq!(share_verdict(&[0.2, 0.7, 1.0], &[0.0, 0.2, 0.5]), Verdict::TrendOnly);
        assert_eq!(share_verdict(&[0.2, 0.7, 1.0], &[0.5, 0.2, 0.0]), Verdict::NotReproduced);
    }

    #[test]
    fn a_part_of_all_is_the_experiment_s_own_command_line() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let part = |s: &str| part_of(&v(s), "zorua", "R/zorua").unwrap().join(" ");
        assert_eq!(part("experiment all --resume R --jobs 2"), "experiment zorua --resume R/zorua --jobs 2");
        assert_eq!(part("experiment --out all --slurm=R --max-cycles 9 all --quick"), "experiment --out all --slurm=R/zorua --max-cycles 9 zorua --quick");
        assert_eq!(part("experiment --jobs=2 -- all"), "experiment --jobs=2 -- zorua");
        assert!(part_of(&v("experiment --resume R"), "zorua", "R/zorua").is_err());
    }

    #[test]
    fn experiment_names_and_pages_are_unique() {
        let mut n: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        let mut p: Vec<&str> = EXPERIMENTS.iter().map(|e| e.page).collect();
        n.sort();
        p.sort();
        n.dedup();
        p.dedup();
        assert_eq!(n.len(), EXPERIMENTS.len());
        assert_eq!(p.len(), EXPERIMENTS.len());
        assert!(!n.contains(&"all"));
    }
}
