//! `mpgpu experiment`: the registry, the quick thesis experiment's files and page, and what
//! the command refuses.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args).output().expect("run mpgpu");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("experiment").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_quick_thesis_experiment_writes_its_runs_plots_and_page() {
    let out = dir("thesis-out");
    let docs = dir("thesis-docs");
    let (c, o, e) = mpgpu(&["experiment", "thesis", "--quick", "--out", out.to_str().unwrap(), "--docs", docs.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("thesis");
    // Every mix (2 and 4 processes) under the three sharing and three priority runs, verified.
    let runs = std::fs::read_to_string(d.join("thesis-runs.csv")).unwrap();
    let rows: Vec<&str> = runs.lines().skip(1).collect();
    assert_eq!(rows.len(), 14, "{runs}");
    for (prio, pol, k) in [("false", "fcfs", "ctxsw"), ("true", "fcfs", "ctxsw"), ("false", "equal", "ctxsw"), ("false", "equal", "drain"), ("true", "npq", "ctxsw"), ("true", "ppq-excl", "ctxsw"), ("true", "ppq-excl", "drain")] {
        for n in ["2", "4"] {
            let hit = rows.iter().filter(|r| {
                let f: Vec<&str> = r.split(',').collect();
                f[0] == n && f[3] == prio && f[5] == pol && f[6] == k && f[8] == "true" && f[16] == "true"
            });
            assert_eq!(hit.count(), 1, "{n} processes, {pol} {k}, priority {prio}: {runs}");
        }
    }
    let summary = std::fs::read_to_string(d.join("thesis-summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 3, "{summary}");
    // At 2 processes NPQ has no choice to make: the lead's turnaround is FCFS's (Fig. 5.4).
    let two: Vec<f64> = summary.lines().nth(1).unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    assert_eq!(two[0], 2.0);
    assert!((two[1] - 1.0).abs() < 1e-9, "{summary}");
    for f in ["fig5-4.svg", "fig5-6.svg", "fig5-8.svg"] {
        assert!(std::fs::read_to_string(d.join(f)).unwrap().starts_with("<svg"), "{f}");
    }
    // The page: every claim with the paper's number, ours and a verdict; marked as quick.
    let page = std::fs::read_to_string(d.join("thesis.md")).unwrap();
    assert!(page.contains("**A quick run**"), "{page}");
    let claims: Vec<&str> = page.lines().filter(|l| l.starts_with("| Fig. 5.")).collect();
    assert_eq!(claims.len(), 13, "{page}");
    for l in &claims {
        assert!(["| reproduced |", "| trend only |", "| not reproduced |"].iter().any(|v| l.ends_with(v)), "{l}");
    }
    // (every verdict other than reproduced has its cause, in this run's figures)
    let not = claims.iter().filter(|l| !l.ends_with("| reproduced |")).count();
    let explained: usize = page.lines().filter(|l| l.starts_with("- **Fig. 5.")).map(|l| l.matches("** (").count()).sum();
    assert_eq!(explained, not, "{page}");
    // A quick run leaves the project's pages alone.
    assert_eq!(std::fs::read_dir(&docs).unwrap().count(), 0, "a quick run wrote into --docs");
}

#[test]
fn a_thesis_run_stopped_at_the_cycle_limit_is_reported_not_fatal() {
    // (the quick 4-process mix takes 191,635 cycles under FCFS, its slowest alone run under
    // 150,000: every 4-process run stops at the limit, every 2-process one finishes)
    let out = dir("thesis-capped");
    let docs = dir("thesis-capped-docs");
    let (c, o, e) = mpgpu(&["experiment", "thesis", "--quick", "--max-cycles", "150000", "--out", out.to_str().unwrap(), "--docs", docs.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("thesis");
    let runs = std::fs::read_to_string(d.join("thesis-runs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = runs.lines().skip(1).map(|r| r.split(',').collect()).collect();
    assert_eq!(rows.len(), 14, "{runs}");
    for f in &rows {
        // (finished exactly when the run ended before the limit; every process's runs counted)
        assert_eq!(f[8] == "true", f[0] == "2", "{runs}");
        assert_eq!(f[9].split(' ').count(), f[0].parse::<usize>().unwrap(), "{runs}");
        let cycles: u64 = f[7].parse().unwrap();
        assert!(cycles <= 150_001, "{runs}");
        // (a run in which some process completed none has no metrics)
        assert_eq!(f[10].is_empty(), f[9].split(' ').any(|r| r == "0"), "{runs}");
    }
    // PPQ exclusive gives the lead the GPU: sad has not completed a run at the limit.
    assert!(rows.iter().any(|f| f[5] == "ppq-excl" && f[10].is_empty()), "{runs}");
    let page = std::fs::read_to_string(d.join("thesis.md")).unwrap();
    let stopped: Vec<&str> = page.lines().filter(|l| l.starts_with("| 4-0 |")).collect();
    assert_eq!(stopped.len(), 7, "{page}");
    assert!(stopped.iter().any(|l| l.ends_with("| left out |")) && stopped.iter().any(|l| l.ends_with("| completed runs only |")), "{page}");
    // (the 4-process mix has no run set complete; its NPQ gain, from usable runs, stands)
    assert!(page.contains("| 4 | 1 (0) |"), "{page}");
    // (a measure without a figure at 4 processes says which of the runs it reads left it
    // without one; one with its figures says nothing of the kind)
    let cause = |what: &str| page.lines().find(|l| l.starts_with(&format!("- **{what}**"))).unwrap_or_else(|| panic!("no cause for {what}: {page}"));
    assert!(
        cause("Fig. 5.5a: PPQ's STP overhead over NPQ, draining").ends_with("; no figure at 4 processes, where no mix has every run the measure reads usable: runs stopped at the cycle limit (150000 cycles) with a process that completed no run under ppq-excl on the priority twin (drain) in 1 of the 1 mixes (sad completing none)"),
        "{page}"
    );
    assert!(!cause("Fig. 5.4: high-priority turnaround gain, NPQ").contains("no figure"), "{page}");
    assert!(!page.contains("no figure at 2 processes"), "{page}");
    let summary = std::fs::read_to_string(d.join("thesis-summary.csv")).unwrap();
    let four: Vec<&str> = summary.lines().nth(2).unwrap().split(',').collect();
    assert!(four[1].parse::<f64>().unwrap().is_finite() && four[4] == "NaN", "{summary}");
}

#[test]
fn the_quick_thesis_faults_experiment_measures_every_scheme_and_both_links() {
    let out = dir("tf-out");
    let (c, o, e) = mpgpu(&["experiment", "thesis-faults", "--quick", "--out", out.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("thesis-faults");
    let runs = std::fs::read_to_string(d.join("thesis-faults-runs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = runs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // Two kernels: the baseline and 7 schemes without faults, and on each link stall-on-fault
    // and the replay queue alone, switching, ideal switching and local handling.
    assert_eq!(rows.len(), 2 * (1 + 7 + 2 * 5), "{runs}");
    for k in ["sgemm", "lbm"] {
        for (paging, scheme) in [("off", "stall"), ("off", "WD-commit"), ("off", "OL-8KB-h"), ("nvlink", "stall"), ("nvlink", "switch"), ("pcie", "local")] {
            assert_eq!(rows.iter().filter(|r| r[0] == k && r[3] == paging && r[4] == scheme).count(), 1, "{k} {paging} {scheme}: {runs}");
        }
    }
    // Faults happened under paging, none without it, and lbm's blocks were switched out.
    assert!(rows.iter().filter(|r| r[3] == "off").all(|r| r[7] == "0"), "{runs}");
    assert!(rows.iter().filter(|r| r[3] != "off").all(|r| r[7].parse::<u64>().unwrap() > 0), "{runs}");
    assert!(rows.iter().any(|r| r[0] == "lbm" && r[4] == "switch" && r[9].parse::<u64>().unwrap() > 0), "{runs}");
    // (the relative column is the baseline's cycles over the run's)
    let cyc = |p: &str, s: &str| rows.iter().find(|r| r[0] == "lbm" && r[3] == p && r[4] == s).map(|r| (r[5].parse::<f64>().unwrap(), r[6].parse::<f64>().unwrap())).unwrap();
    let (base, _) = cyc("off", "stall");
    let (rq, rel) = cyc("off", "RQ");
    assert!((base / rq - rel).abs() < 1e-3, "{runs}");
    let page = std::fs::read_to_string(d.join("thesis-faults.md")).unwrap();
    let claims: Vec<&str> = page.lines().filter(|l| l.starts_with("| Fig. 6.") || l.starts_with("| §6.")).collect();
    assert_eq!(claims.len(), 13, "{page}");
    let not = claims.iter().filter(|l| !l.ends_with("| reproduced |")).count();
    let explained: usize = page.lines().filter(|l| l.starts_with("- **")).map(|l| l.matches("** (").count()).sum();
    assert_eq!(explained, not, "{page}");
    for f in ["schemes.svg", "paging-nvlink.svg", "paging-pcie.svg"] {
        assert!(std::fs::read_to_string(d.join(f)).unwrap().starts_with("<svg"), "{f}");
    }
}

#[test]
fn the_quick_warped_slicer_experiment_sets_the_paper_against_ours() {
    let out = dir("ws-out");
    let (c, o, e) = mpgpu(&["experiment", "warped-slicer", "--quick", "--out", out.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("warped-slicer");
    // Two pairs under the five policies, and Warped-Slicer again with a long decision delay.
    let runs = std::fs::read_to_string(d.join("warped-slicer-runs.csv")).unwrap();
    // (the decision, "(2, 1)", is one quoted field)
    let rows: Vec<Vec<&str>> = runs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert!(runs.contains(",\"(") || !runs.contains("(2"), "{runs}");
    let rows: Vec<Vec<String>> = rows.iter().map(|r| {
        let (mut v, mut cur): (Vec<String>, Option<String>) = (Vec::new(), None);
        for f in r {
            match cur.take() {
                Some(c) if f.ends_with('"') => v.push(format!("{c},{}", f.trim_end_matches('"'))),
                Some(c) => cur = Some(format!("{c},{f}")),
                None if f.starts_with('"') && !f.ends_with('"') => cur = Some(f.trim_start_matches('"').to_string()),
                None => v.push(f.to_string()),
            }
        }
        v
    }).collect();
    assert_eq!(rows.len(), 2 * 5 + 2, "{runs}");
    assert!(rows.iter().all(|r| r.len() == 12), "{runs}");
    assert!(rows.iter().all(|r| r[11] == "true"), "{runs}");
    assert_eq!(rows.iter().filter(|r| r[2] == "warped-slicer" && r[4] == "10000").count(), 2, "{runs}");
    // Warped-Slicer decided something on every pair (quotas or Spatial), and the delay moved
    // its runs.
    assert!(rows.iter().filter(|r| r[2] == "warped-slicer").all(|r| r[10] != "-"), "{runs}");
    let cycles = |delay: &str| rows.iter().filter(|r| r[2] == "warped-slicer" && r[4] == delay).map(|r| r[5].parse::<u64>().unwrap()).collect::<Vec<_>>();
    assert_ne!(cycles("0"), cycles("10000"), "{runs}");
    let page = std::fs::read_to_string(d.join("warped-slicer.md")).unwrap();
    assert!(page.contains("each application halted at the warp-instructions it executes alone in 30000 cycles"), "{page}");
    let claims = page.lines().filter(|l| l.starts_with("| Fig.") || l.starts_with("| §")).count();
    assert_eq!(claims, 7, "{page}");
    assert!(std::fs::read_to_string(d.join("ipc-2.svg")).unwrap().starts_with("<svg"));
}

#[test]
fn the_quick_zorua_experiment_runs_the_study_and_sets_the_paper_against_it() {
    let out = dir("zorua-out");
    let (c, o, e) = mpgpu(&["experiment", "zorua", "--quick", "--out", out.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    let d = out.join("zorua");
    // reduction's 5 specifications under the three schemes on two configurations
    let points = std::fs::read_to_string(d.join("study/points.csv")).unwrap();
    assert_eq!(points.lines().count(), 1 + 5 * 3 * 2, "{points}");
    let page = std::fs::read_to_string(d.join("zorua.md")).unwrap();
    assert_eq!(page.lines().filter(|l| l.starts_with("| §6")).count(), 8, "{page}");
    // (the study's own tables are on the page, and the figures the claims quote are from them)
    assert!(page.contains("### Performance range on fermi15") && page.contains("### Porting loss"), "{page}");
    assert!(page.contains("| §6.4: register accesses to physical sets | 98.9 % | 100.0 % | reproduced |"), "{page}");
}

#[test]
fn the_quick_heterocore_experiment_classifies_steers_and_sets_the_paper_against_ours() {
    let out = dir("heterocore-out");
    let (c, o, e) = mpgpu(&["experiment", "heterocore", "--quick", "--jobs", "2", "--out", out.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("heterocore");
    // Three applications, each alone on five GPUs; their three pairs under four layouts.
    let alone = std::fs::read_to_string(d.join("alone.csv")).unwrap();
    assert_eq!(alone.lines().count(), 1 + 3, "{alone}");
    assert!(alone.lines().skip(1).all(|l| l.contains(",thick,") || l.contains(",lean,")), "{alone}");
    let pairs = std::fs::read_to_string(d.join("pairs.csv")).unwrap();
    assert_eq!(pairs.lines().count(), 1 + 3 * 4, "{pairs}");
    // (the dynamic runs decided: each pair's row says where the big SMs went)
    let dynamic: Vec<&str> = pairs.lines().filter(|l| l.contains(",heterocore dynamic,")).collect();
    assert_eq!(dynamic.len(), 3);
    assert!(dynamic.iter().all(|l| l.split(',').nth(7).is_some_and(|n| n.parse::<u32>().unwrap() > 0)), "{pairs}");
    for f in ["kinds.svg", "pairs-stp.svg", "pairs-antt.svg", "splits-stp.svg", "splits-antt.svg"] {
        assert!(std::fs::read_to_string(d.join(f)).unwrap().starts_with("<svg"), "{f}");
    }
    // §6.5: one thick + lean pair on the three splits, and under the 19 fixed layouts on 8 + 8,
    // the class layout among them giving the split run's result on 8 + 8 exactly
    let splits = std::fs::read_to_string(d.join("splits.csv")).unwrap();
    assert_eq!(splits.lines().count(), 1 + 3, "{splits}");
    let layouts = std::fs::read_to_string(d.join("layouts.csv")).unwrap();
    assert_eq!(layouts.lines().count(), 1 + 19, "{layouts}");
    let on8 = splits.lines().find(|l| l.contains(",8 big + 8 small,")).unwrap().split(',').nth(4).unwrap().to_string();
    let thick_first = splits.lines().nth(1).unwrap().contains(",thick+lean,");
    let class_layout = if thick_first { ",8,0," } else { ",0,8," };
    assert!(layouts.lines().any(|l| l.contains(class_layout) && l.split(',').nth(5) == Some(&on8)), "{splits}{layouts}");
    let page = std::fs::read_to_string(d.join("heterocore.md")).unwrap();
    let claims: Vec<&str> = page.lines().filter(|l| l.starts_with("| §")).collect();
    assert_eq!(claims.len(), 16, "{page}");
    for l in &claims {
        assert!(["| reproduced |", "| trend only |", "| not reproduced |"].iter().any(|v| l.ends_with(v)), "{l}");
    }
}

/// The unified allocation's quick run: fdtd3d on `gtx480` as written and at each occupancy
/// level above it, spills in local and in shared memory, every output verified; the search's
/// choice, the sweep's best and the baseline set against the paper's.
#[test]
fn the_quick_unified_experiment_sweeps_the_register_cap_and_sets_the_paper_against_ours() {
    let out = dir("unified-out");
    let (c, o, e) = mpgpu(&["experiment", "unified", "--quick", "--out", out.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(o.contains("all outputs verified: PASS"), "{o}");
    let d = out.join("unified");
    let runs = std::fs::read_to_string(d.join("unified-runs.csv")).unwrap();
    let rows: Vec<Vec<&str>> = runs.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.iter().filter(|r| r[3] == "at its demand").count(), 1, "{runs}");
    let local: Vec<&Vec<&str>> = rows.iter().filter(|r| r[3] == "local").collect();
    let shared: Vec<&Vec<&str>> = rows.iter().filter(|r| r[3] == "shared").collect();
    assert!(local.len() >= 2 && local.len() == shared.len(), "{runs}");
    // (each level: more threads per SM under a lower cap; local spills only in local memory,
    // shared ones mostly in shared memory; every run verified and slower than none of the
    // spill code's instructions would make it)
    for (l, s) in local.iter().zip(&shared) {
        assert_eq!(l[4], s[4], "{runs}");
        assert!(l[6] == "0" && l[7] == "0" && l[8] != "0", "{runs}");
        assert!(s[6] != "0" && s[7] != "0", "{runs}");
    }
    assert!(rows.iter().all(|r| r[15] == "true"), "{runs}");
    let page = std::fs::read_to_string(d.join("unified.md")).unwrap();
    let claims = page.lines().filter(|l| l.starts_with("| Fig") || l.starts_with("| §") || l.starts_with("| Table") || l.starts_with("| Abstract")).count();
    assert_eq!(claims, 6, "{page}");
    assert!(std::fs::read_to_string(d.join("runtime.svg")).unwrap().starts_with("<svg"));
}

#[test]
fn the_list_names_every_experiment_with_its_recorded_time() {
    let docs = dir("list-docs");
    let (c, o, e) = mpgpu(&["experiment", "--list", "--docs", docs.to_str().unwrap()]);
    assert_eq!(c, 0, "{e}");
    let line = o.lines().find(|l| l.starts_with("thesis ")).unwrap_or_else(|| panic!("{o}"));
    assert!(line.contains("not run yet") && line.contains(" 18 "), "{line}");
    std::fs::write(docs.join("thesis.time"), "123.4 minutes (129 simulations)\n").unwrap();
    let (_, o, _) = mpgpu(&["experiment", "--list", "--docs", docs.to_str().unwrap()]);
    assert!(o.lines().any(|l| l.starts_with("thesis ") && l.contains("123.4 minutes")), "{o}");
}

#[test]
fn experiments_refuse_what_does_not_fit() {
    let (c, _, e) = mpgpu(&["experiment", "nosuch"]);
    assert_eq!(c, 2);
    assert!(e.contains("no experiment `nosuch`") && e.contains("thesis, thesis-faults, zorua, warped-slicer, heterocore, unified, all"), "{e}");
    let (c, _, e) = mpgpu(&["experiment"]);
    assert_eq!(c, 2);
    assert!(e.contains("name an experiment"), "{e}");
    let (c, _, e) = mpgpu(&["experiment", "thesis", "--list"]);
    assert_eq!(c, 2);
    assert!(e.contains("--list"), "{e}");
    // (an output folder that cannot be one, before any simulation)
    let f = dir("refuse").join("file");
    std::fs::write(&f, "x").unwrap();
    let (c, _, e) = mpgpu(&["experiment", "thesis", "--quick", "--out", f.to_str().unwrap()]);
    assert_eq!(c, 2);
    assert!(e.contains("--out"), "{e}");
}

/// Every file under `d` with its contents, by its path under `d`.
fn files(d: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push((p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(d, d, &mut out);
    out.sort();
    out
}

/// The results kept under `d`, each with its inode: a result computed again is written to
/// a new file and renamed over the old one, so its inode changes.
fn kept(d: &Path) -> Vec<(PathBuf, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out: Vec<(PathBuf, u64)> = files(d).into_iter().filter(|(p, _)| p.extension().is_some_and(|e| e == "cbor")).map(|(p, _)| {
        let ino = std::fs::metadata(d.join(&p)).unwrap().ino();
        (p, ino)
    }).collect();
    out.sort();
    out
}

/// `experiment all --resume DIR` keeps each experiment in `DIR/<name>`, the folder of that
/// experiment run alone with the same options: a run of one serves `all`, and `all` run again
/// computes nothing and writes the same outputs.
#[test]
fn all_resumes_each_experiment_in_the_folder_of_its_own_run() {
    let r = dir("all-resume");
    let one = dir("all-one-out");
    let (c, o, e) = mpgpu(&["experiment", "thesis", "--quick", "--resume", r.join("thesis").to_str().unwrap(), "--out", one.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    let thesis = kept(&r.join("thesis"));
    assert!(thesis.len() > 10, "{thesis:?}");
    // (the folder of one command line is not taken for a folder of folders)
    let (c, _, e) = mpgpu(&["experiment", "all", "--quick", "--resume", r.join("thesis").to_str().unwrap()]);
    assert_ne!(c, 0);
    assert!(e.contains("a folder of its own") && e.contains("command.txt"), "{e}");
    let all = dir("all-out");
    let (c, o, e) = mpgpu(&["experiment", "all", "--quick", "--jobs", "2", "--resume", r.to_str().unwrap(), "--out", all.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    // (the thesis's points were kept, not run again; its page is the one its own run wrote)
    assert!(kept(&r.join("thesis")) == thesis, "the thesis's points were computed again");
    assert_eq!(std::fs::read(all.join("thesis/thesis.md")).unwrap(), std::fs::read(one.join("thesis/thesis.md")).unwrap());
    for name in ["thesis-faults", "zorua", "warped-slicer", "heterocore", "unified"] {
        let cmd = std::fs::read_to_string(r.join(name).join("command.txt")).unwrap_or_else(|_| panic!("{name}: no folder of its own"));
        assert!(cmd.contains(&format!("\n{name}\n")) && !cmd.contains("\nall\n"), "{cmd}");
    }
    // (run again: every point kept, none computed, the same outputs)
    let before = kept(&r);
    let again = dir("all-again-out");
    let (c, o, e) = mpgpu(&["experiment", "all", "--quick", "--resume", r.to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(c, 0, "{o}{e}");
    assert!(kept(&r) == before, "points were computed again");
    // (the same files, the same bytes but for the paths of the outputs themselves)
    let read = |d: &Path| files(d).into_iter().filter(|(p, _)| !p.to_string_lossy().ends_with(".log")).map(|(p, b)| (p, String::from_utf8_lossy(&b).replace(d.to_str().unwrap(), "OUT"))).collect::<Vec<_>>();
    let (a, b) = (read(&all), read(&again));
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>());
    for (x, y) in a.iter().zip(&b) {
        assert!(x.1 == y.1, "{}: not the same when run again", x.0.display());
    }
    // (on Slurm, with the thesis's folder moved in: `all` goes on to thesis-faults, whose
    // tasks run that experiment's own command line, its rounds counted from 1; the follow-up
    // job runs `all` again)
    let s = dir("all-slurm");
    std::fs::rename(r.join("thesis"), s.join("thesis")).unwrap();
    let (c, _, e) = mpgpu(&["experiment", "all", "--quick", "--slurm", s.to_str().unwrap(), "--no-submit"]);
    assert_eq!(c, 0, "{e}");
    assert!(e.contains(&s.join("thesis-faults/round-1").display().to_string()), "{e}");
    let script = s.join("thesis-faults/round-1/array.sh");
    let task = std::fs::read_to_string(&script).unwrap();
    assert!(task.contains(&format!("experiment --slurm-round 1 thesis-faults --quick --slurm {} --no-submit", s.join("thesis-faults").display())), "{task}");
    let next = std::fs::read_to_string(script.with_file_name("next.sh")).unwrap();
    assert!(next.contains(&format!("experiment all --quick --slurm {} --no-submit", s.display())), "{next}");
    let o = Command::new("bash").arg(&script).env("SLURM_ARRAY_TASK_ID", "0").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(s.join("thesis-faults/round-1/results/0.cbor").exists());
    // (a folder of another command line is still refused: the same experiment at full scale)
    let (c, _, e) = mpgpu(&["experiment", "thesis", "--resume", s.join("thesis").to_str().unwrap(), "--out", one.to_str().unwrap(), "--docs", one.to_str().unwrap()]);
    assert_ne!(c, 0);
    assert!(e.contains("another command line"), "{e}");
}
