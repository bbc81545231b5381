//! `--jobs`: every command that runs independent simulations gives the same output, file for
//! file, on one thread as on several.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args).output().expect("run mpgpu");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("jobs").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Standard output without what changes from run to run (wall-clock times, speeds, the
/// progress lines a run without a terminal writes once a minute) and with the output folder
/// `out` named `OUT`.
fn stable(s: &str, out: &Path) -> String {
    s.lines().filter(|l| !l.starts_with("simulated in") && !l.contains(" so far, about ")).map(|l| without_seconds(&l.replace(out.to_str().unwrap(), "OUT"))).collect::<Vec<_>>().join("\n")
}

/// `l` with every " in N s" (N a decimal number) cut out.
fn without_seconds(l: &str) -> String {
    let mut r = String::new();
    let mut rest = l;
    while let Some(i) = rest.find(" in ") {
        let after = &rest[i + 4..];
        let n = after.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(after.len());
        if n > 0 && after[n..].starts_with(" s") {
            r += &rest[..i];
            rest = &after[n + 2..];
        } else {
            r += &rest[..i + 4];
            rest = after;
        }
    }
    r + rest
}

/// The files under `d`, by path relative to it, with their bytes.
fn files(d: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v = Vec::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap().path();
            if e.is_dir() {
                stack.push(e);
            } else {
                v.push((e.strip_prefix(d).unwrap().to_path_buf(), std::fs::read(&e).unwrap()));
            }
        }
    }
    v.sort();
    v
}

/// Asserts that two runs wrote the same files ([`files`]), naming the first that differs.
fn same_files(name: &str, a: &[(PathBuf, Vec<u8>)], b: &[(PathBuf, Vec<u8>)]) {
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>(), "{name}: the files written");
    for (x, y) in a.iter().zip(b) {
        assert!(x.1 == y.1, "{name}: {} differs", x.0.display());
    }
}

/// `args` (with `{out}` for an output folder) at `--jobs 1` and `--jobs 3`: the same exit code,
/// standard output and files.
fn same_on_one_thread_and_three(name: &str, args: &[&str], code: i32) -> String {
    let mut outs = Vec::new();
    for jobs in ["1", "3"] {
        let d = dir(&format!("{name}-{jobs}"));
        let a: Vec<String> = args.iter().map(|x| x.replace("{out}", d.to_str().unwrap())).chain(["--jobs".to_string(), jobs.to_string()]).collect();
        let (c, out, err) = mpgpu(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(c, code, "{name} --jobs {jobs}: {out}{err}");
        outs.push((stable(&out, &d), stable(&err, &d), files(&d)));
    }
    assert_eq!(outs[0].0, outs[1].0, "{name}: standard output");
    assert_eq!(outs[0].1, outs[1].1, "{name}: standard error");
    same_files(name, &outs[0].2, &outs[1].2);
    assert!(!outs[0].2.is_empty() || code != 0, "{name}: wrote nothing");
    outs.swap_remove(0).0
}

/// A folder `name` holding one small workload (cutcp and vecadd), for `slicing`.
fn pair(name: &str) -> PathBuf {
    let w = dir(name);
    std::fs::write(
        w.join("pair.toml"),
        "description = \"d\"\n[[process]]\nname = \"cutcp\"\nlaunches = [{ kernel = \"cutcp\", size = 32, seed = 1 }]\n[[process]]\nname = \"vecadd\"\nlaunches = [{ kernel = \"vecadd\", size = 131072, seed = 2 }]\n",
    )
    .unwrap();
    w
}

#[test]
fn every_command_gives_the_same_output_on_one_thread_and_on_several() {
    let out = same_on_one_thread_and_three("sweep", &["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--csv", "{out}/sweep.csv", "--json", "{out}/sweep.json"], 0);
    assert!(out.contains("all outputs verified: PASS"), "{out}");
    let out = same_on_one_thread_and_three("run", &["run", "--json", "{out}/run.json"], 0);
    assert!(out.contains("STP"), "{out}");
    let w = pair("workloads");
    let out = same_on_one_thread_and_three("slicing", &["slicing", w.to_str().unwrap(), "--out", "{out}"], 0);
    assert!(out.contains("all outputs verified: PASS"), "{out}");
    // (with instruction targets: each kernel halted at what it executes alone in 30,000 cycles)
    let out = same_on_one_thread_and_three("slicing-length", &["slicing", w.to_str().unwrap(), "--out", "{out}", "--length", "30000"], 0);
    assert!(out.contains("targets: cutcp ") && out.contains("all outputs verified: PASS"), "{out}");
    let out = same_on_one_thread_and_three("faults", &["faults", "--kernels", "sad,stencil", "--scale", "0.25", "--paging", "nvlink", "--oplog-sweep", "4k", "--svg", "{out}"], 0);
    assert!(out.contains("geomean") && out.contains("demand paging"), "{out}");
    let out = same_on_one_thread_and_three("experiment", &["experiment", "thesis", "--quick", "--out", "{out}"], 0);
    assert!(out.contains("thesis: 18 points") && out.contains("all outputs verified: PASS"), "{out}");
    // A soak stops at the same failure, with the same workload and waveform written.
    let out = same_on_one_thread_and_three("soak", &["soak", "--seed", "3", "--workloads", "20", "--broken", "lifo", "--out", "{out}"], 1);
    assert!(out.contains("mismatches: 1"), "{out}");
}

/// `args` run locally at `--jobs 1`, and with `--slurm` without submitting: each round's job
/// array script run by hand for every point (as Slurm runs it, with `SLURM_ARRAY_TASK_ID`), then
/// the command again. Returns the local and merged (exit code, standard output, files), the
/// Slurm folder, and the rounds it took.
fn local_and_by_hand(name: &str, args: &[&str]) -> ((i32, String, Vec<(PathBuf, Vec<u8>)>), (i32, String, Vec<(PathBuf, Vec<u8>)>), PathBuf, usize) {
    let with = |d: &Path, extra: &[&str]| -> Vec<String> { args.iter().map(|x| x.replace("{out}", d.to_str().unwrap())).chain(extra.iter().map(|s| s.to_string())).collect() };
    let run = |a: &[String]| mpgpu(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let d = dir(&format!("{name}-local"));
    let (c, out, _) = run(&with(&d, &["--jobs", "1"]));
    let local = (c, stable(&out, &d), files(&d));
    let d = dir(&format!("{name}-slurm"));
    let s = dir(&format!("{name}-slurm-dir"));
    let a = with(&d, &["--slurm", s.to_str().unwrap(), "--no-submit"]);
    let mut rounds = 0;
    loop {
        let (c, out, err) = run(&a);
        let script = s.join(format!("round-{}", rounds + 1)).join("array.sh");
        if !err.contains("not submitted") {
            assert!(!script.exists() || rounds > 0, "{name}: {err}");
            return (local, (c, stable(&out, &d), files(&d)), s, rounds);
        }
        assert_eq!(c, 0, "{name}: {err}");
        rounds += 1;
        let n = std::fs::read_to_string(script.with_file_name("points.txt")).unwrap().lines().count();
        for i in 0..n {
            let o = Command::new("bash").arg(&script).env("SLURM_ARRAY_TASK_ID", i.to_string()).output().unwrap();
            assert!(o.status.success(), "{name}: round {rounds} point {i}: {}", String::from_utf8_lossy(&o.stderr));
        }
        assert!(rounds < 5, "{name}: no end to the rounds");
    }
}

#[test]
fn a_sweep_on_slurm_gives_what_the_local_run_gives() {
    let w = pair("slurm-workloads");
    for (name, args, rounds) in [
        ("sweep", vec!["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--csv", "{out}/sweep.csv", "--json", "{out}/sweep.json"], 1),
        // (the shared run and each process alone)
        ("run", vec!["run", "--json", "{out}/run.json"], 1),
        // (two rounds: the applications alone and their curves, then every workload under every policy)
        ("slicing", vec!["slicing", w.to_str().unwrap(), "--out", "{out}"], 2),
        // (one round: the applications alone and every mix under every policy)
        ("experiment", vec!["experiment", "thesis", "--quick", "--out", "{out}"], 1),
    ] {
        let (local, merged, _, r) = local_and_by_hand(name, &args);
        assert_eq!(r, rounds, "{name}: rounds");
        assert_eq!(local.0, 0, "{name}: {}", local.1);
        assert_eq!(local.0, merged.0, "{name}: exit code");
        assert_eq!(local.1, merged.1, "{name}: standard output");
        assert!(local.1.contains("all outputs verified: PASS"), "{name}: {}", local.1);
        same_files(name, &local.2, &merged.2);
    }
}

/// `--resume DIR` runs the points here and keeps each result as it comes: a run stopped part
/// way (here: results removed, as if it had been killed before them) computes only the
/// missing points when run again, and every run writes what a straight run writes.
#[test]
fn a_resumed_run_gives_what_a_straight_run_gives() {
    let w = pair("resume-workloads");
    for (name, args) in [
        ("sweep", vec!["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--csv", "{out}/sweep.csv"]),
        // (two rounds: the applications alone, then every workload under every policy)
        ("slicing", vec!["slicing", w.to_str().unwrap(), "--out", "{out}"]),
    ] {
        let with = |d: &Path, extra: &[&str]| -> Vec<String> { args.iter().map(|x| x.replace("{out}", d.to_str().unwrap())).chain(extra.iter().map(|s| s.to_string())).collect() };
        let run = |a: &[String]| mpgpu(&a.iter().map(String::as_str).collect::<Vec<_>>());
        let d = dir(&format!("resume-{name}-straight"));
        let (c, out, err) = run(&with(&d, &["--jobs", "1"]));
        assert_eq!(c, 0, "{name}: {err}");
        let straight = (stable(&out, &d), files(&d));
        let r = dir(&format!("resume-{name}-dir"));
        let again = |k: usize| {
            // (the same command line, outputs included: another is refused)
            let d = dir(&format!("resume-{name}-out"));
            let (c, out, err) = run(&with(&d, &["--jobs", "2", "--resume", r.to_str().unwrap()]));
            assert_eq!(c, 0, "{name} ({k}): {err}");
            assert_eq!(stable(&out, &d), straight.0, "{name} ({k}): standard output");
            same_files(name, &straight.1, &files(&d));
        };
        again(0);
        // Every round's results kept; two of the last round's removed.
        let rounds: Vec<PathBuf> = (1..).map(|k| r.join(format!("round-{k}"))).take_while(|p| p.exists()).collect();
        let results = rounds.last().unwrap().join("results");
        let n = std::fs::read_dir(&results).unwrap().count();
        assert!(n >= 3, "{name}: {n} results");
        std::fs::remove_file(results.join("0.cbor")).unwrap();
        std::fs::remove_file(results.join(format!("{}.cbor", n - 1))).unwrap();
        // (a result file is written through a new file: a kept one keeps its time)
        let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options().write(true).open(results.join("1.cbor")).unwrap().set_modified(old).unwrap();
        again(1);
        assert!(results.join("0.cbor").exists() && results.join(format!("{}.cbor", n - 1)).exists(), "{name}: the missing points were not computed again");
        assert_eq!(std::fs::metadata(results.join("1.cbor")).unwrap().modified().unwrap(), old, "{name}: a kept result was computed again");
    }
    // Another command line in the same folder is refused; --resume and --slurm do not go together.
    let r = dir("resume-refusals");
    let (c, _, err) = mpgpu(&["sweep", "vecadd", "--regs", "8..16:8", "--size", "65536", "--resume", r.to_str().unwrap()]);
    assert_eq!(c, 0, "{err}");
    let (c, _, err) = mpgpu(&["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--resume", r.to_str().unwrap()]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("holds the points of another command line"), "{err}");
    let (c, _, err) = mpgpu(&["sweep", "vecadd", "--regs", "8..16:8", "--size", "65536", "--resume", r.to_str().unwrap(), "--slurm", r.to_str().unwrap()]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("--resume") && err.contains("--slurm"), "{err}");
    // A file where the folder should be: named, with what is expected.
    let f = r.join("command.txt");
    let (c, _, err) = mpgpu(&["sweep", "vecadd", "--regs", "8..16:8", "--size", "65536", "--resume", f.to_str().unwrap()]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("--resume") && err.contains("command.txt") && err.contains("not a folder"), "{err}");
}

#[test]
fn slurm_runs_refuse_what_does_not_fit() {
    let s = dir("slurm-refusals");
    let sd = s.join("d");
    let sweep = |regs: &str, extra: &[&str]| {
        let a: Vec<&str> = ["sweep", "vecadd", "--regs", regs, "--size", "65536", "--slurm", sd.to_str().unwrap()].into_iter().chain(extra.iter().copied()).collect();
        mpgpu(&a)
    };
    let (c, _, err) = sweep("8..24:8", &["--no-submit"]);
    assert_eq!(c, 0, "{err}");
    // Another command line in the same folder: refused, naming both; `--jobs` is no other.
    let (c, _, err) = sweep("8..16:8", &["--no-submit"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("holds the points of another command line") && err.contains("--regs 8..24:8") && err.contains("--regs 8..16:8"), "{err}");
    let (c, _, err) = sweep("8..24:8", &["--no-submit", "--jobs", "1"]);
    assert_eq!(c, 0, "{err}");
    // A task without its index, or with one past the round.
    let (c, _, err) = sweep("8..24:8", &["--slurm-round", "1"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("SLURM_ARRAY_TASK_ID"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--slurm", sd.to_str().unwrap(), "--slurm-round", "1"]).env("SLURM_ARRAY_TASK_ID", "9").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("SLURM_ARRAY_TASK_ID is 9, but the round has 9 points (0..=8)"), "{}", String::from_utf8_lossy(&o.stderr));
    // A task in a folder no command wrote.
    let o = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--slurm", s.join("other").to_str().unwrap(), "--slurm-round", "1"]).env("SLURM_ARRAY_TASK_ID", "0").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("command.txt is missing: a task runs only in a folder the command wrote"), "{}", String::from_utf8_lossy(&o.stderr));
    // One point done, the round submitted (its job id written): the run again names the rest.
    let o = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--slurm", sd.to_str().unwrap(), "--slurm-round", "1"]).env("SLURM_ARRAY_TASK_ID", "4").output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Submitted again (here written only), a round asks for the points without a result.
    let (c, _, err) = sweep("8..24:8", &["--no-submit"]);
    assert_eq!(c, 0, "{err}");
    let script = std::fs::read_to_string(sd.join("round-1").join("array.sh")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3,5-8\n") && script.contains(" sweep --slurm-round 1 vecadd "), "{script}");
    std::fs::write(sd.join("round-1").join("job"), "77\n").unwrap();
    let (c, _, err) = sweep("8..24:8", &[]);
    assert_eq!(c, 3, "{err}");
    assert!(err.contains("round 1 (job 77) has results for 1 of 9 points; without one: 0 (") && err.contains("), 8 (zorua") && !err.contains(", 4 ("), "{err}");
    // A result file that is not one.
    std::fs::write(sd.join("round-1").join("results").join("4.cbor"), "x").unwrap();
    for i in (0..9).filter(|&i| i != 4) {
        std::fs::copy(sd.join("round-1").join("job"), sd.join("round-1").join("results").join(format!("{i}.cbor"))).unwrap();
    }
    let (c, _, err) = sweep("8..24:8", &[]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("0.cbor: not a result file"), "{err}");
    // Without `sbatch` on the path, submitting fails with a clear error.
    let o = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--slurm", s.join("new").to_str().unwrap()]).env("PATH", "/nonexistent").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sbatch: "), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The one-node Slurm of `scripts/slurm-localhost`, stopped when dropped.
struct LocalSlurm(PathBuf);

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        let _ = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-localhost")).arg("down").arg(&self.0).status();
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn a_sweep_submitted_to_a_real_slurm_gives_what_the_local_run_gives() {
    // (a cluster a killed earlier run left behind is stopped before its folder is cleared)
    let old = Path::new(env!("CARGO_TARGET_TMPDIR")).join("jobs").join("slurm-cluster");
    let _ = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-localhost")).arg("down").arg(&old).status();
    let cluster = dir("slurm-cluster");
    let up = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-localhost")).arg("up").arg(&cluster).output().unwrap();
    if up.status.code() == Some(10) {
        eprintln!("SKIPPED: {}", String::from_utf8_lossy(&up.stderr).trim());
        return;
    }
    let _down = LocalSlurm(cluster.clone());
    assert!(up.status.success(), "scripts/slurm-localhost up: {}", String::from_utf8_lossy(&up.stderr));
    let conf = cluster.join("slurm.conf");
    let args = |out: &Path| -> Vec<String> { ["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--csv", &format!("{}/sweep.csv", out.display()), "--json", &format!("{}/sweep.json", out.display())].iter().map(|s| s.to_string()).collect() };
    let local = dir("slurm-real-local");
    let o = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args(&local)).arg("--jobs").arg("1").output().unwrap();
    assert!(o.status.success());
    let out = dir("slurm-real-out");
    let sd = dir("slurm-real-dir");
    let submit = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args(&out)).arg("--slurm").arg(&sd).env("SLURM_CONF", &conf).output().unwrap();
    let err = String::from_utf8_lossy(&submit.stderr).into_owned();
    assert!(submit.status.success() && err.contains("submitted as job array"), "{err}");
    // The follow-up job writes the outputs once the array has ended (bounded wait).
    let next = sd.join("round-1").join("next.out");
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&next).is_ok_and(|s| s.contains("all outputs verified")) {
        assert!(start.elapsed().as_secs() < 600, "no merged output after 10 minutes; squeue: {}", String::from_utf8_lossy(&Command::new("squeue").env("SLURM_CONF", &conf).output().map(|o| o.stdout).unwrap_or_default()));
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let merged = std::fs::read_to_string(&next).unwrap();
    assert_eq!(stable(&String::from_utf8_lossy(&o.stdout), &local), stable(&merged, &out), "standard output");
    assert_eq!(files(&local), files(&out), "the files written");
    // Run again by hand, the command prints the same from the results.
    let again = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args(&out)).arg("--slurm").arg(&sd).output().unwrap();
    assert_eq!(stable(&String::from_utf8_lossy(&again.stdout), &out), stable(&merged, &out));
}
