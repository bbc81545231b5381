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

/// Standard output without what changes from run to run (wall-clock times, speeds) and with
/// the output folder `out` named `OUT`.
fn stable(s: &str, out: &Path) -> String {
    s.lines().filter(|l| !l.starts_with("simulated in")).map(|l| without_seconds(&l.replace(out.to_str().unwrap(), "OUT"))).collect::<Vec<_>>().join("\n")
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
    let names = |f: &[(PathBuf, Vec<u8>)]| f.iter().map(|x| x.0.display().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&outs[0].2), names(&outs[1].2), "{name}: the files written");
    for (a, b) in outs[0].2.iter().zip(&outs[1].2) {
        assert!(a.1 == b.1, "{name}: {} differs", a.0.display());
    }
    assert!(!outs[0].2.is_empty() || code != 0, "{name}: wrote nothing");
    outs.swap_remove(0).0
}

#[test]
fn every_command_gives_the_same_output_on_one_thread_and_on_several() {
    let out = same_on_one_thread_and_three("sweep", &["sweep", "vecadd", "--regs", "8..24:8", "--size", "65536", "--csv", "{out}/sweep.csv", "--json", "{out}/sweep.json"], 0);
    assert!(out.contains("all outputs verified: PASS"), "{out}");
    let out = same_on_one_thread_and_three("run", &["run", "--json", "{out}/run.json"], 0);
    assert!(out.contains("STP"), "{out}");
    let w = dir("workloads");
    std::fs::write(
        w.join("pair.toml"),
        "description = \"d\"\n[[process]]\nname = \"cutcp\"\nlaunches = [{ kernel = \"cutcp\", size = 32, seed = 1 }]\n[[process]]\nname = \"vecadd\"\nlaunches = [{ kernel = \"vecadd\", size = 131072, seed = 2 }]\n",
    )
    .unwrap();
    let out = same_on_one_thread_and_three("slicing", &["slicing", w.to_str().unwrap(), "--out", "{out}"], 0);
    assert!(out.contains("all outputs verified: PASS"), "{out}");
    let out = same_on_one_thread_and_three("faults", &["faults", "--kernels", "sad,stencil", "--scale", "0.25", "--paging", "nvlink", "--oplog-sweep", "4k", "--svg", "{out}"], 0);
    assert!(out.contains("geomean") && out.contains("demand paging"), "{out}");
    // A soak stops at the same failure, with the same workload and waveform written.
    let out = same_on_one_thread_and_three("soak", &["soak", "--seed", "3", "--workloads", "20", "--broken", "lifo", "--out", "{out}"], 1);
    assert!(out.contains("mismatches: 1"), "{out}");
}
