//! `mpgpu fpga`, `mpgpu replay --gate` and `mpgpu cosim --backend fpga` from the command line
//! (`docs/fpga.md`, `docs/board.md`).

use std::path::Path;
use std::process::Command;

fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args).output().expect("run mpgpu");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn dir(name: &str) -> String {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fpga_cli").join(name);
    let _ = std::fs::remove_dir_all(&d);
    d.to_str().unwrap().to_string()
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_flow_reports_cost_and_fmax_and_checks_the_target() {
    let out = dir("flow");
    let (code, stdout, stderr) = mpgpu(&["fpga", "dss", "--families", "ecp5", "--out", &out]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    for want in ["LFE5U-85F", "Yosys 0.70", "synth ecp5", "place and route", "ecp5 ", "Fmax", "PASS", "critical path"] {
        assert!(stdout.contains(want), "no `{want}` in\n{stdout}");
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(Path::new(&out).join("dss").join("summary.json")).unwrap()).unwrap();
    assert!(summary["pnr"]["fmax_mhz"].as_f64().unwrap() > 100.0);
    assert!(summary["io_ring_ffs"].as_u64().unwrap() > 0);
    assert!(stdout.contains("path estimate:"), "{stdout}");
    // --estimate stops before place and route; at 400 MHz every family over 2.5 ns is listed.
    let (code, stdout, stderr) = mpgpu(&["fpga", "dss", "--families", "ecp5", "--estimate", "--freq", "400", "--paths", "3", "--out", &out]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("Fmax") && stdout.contains("path estimate:") && stdout.contains("more (--paths N)"), "{stdout}");
    let paths: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(Path::new(&out).join("dss").join("ring").join("paths.json")).unwrap()).unwrap();
    let p = paths.as_array().unwrap();
    assert!(p.len() > 3 && p.iter().all(|f| f["ns"].as_f64().unwrap() >= 2.5), "{paths}");
    // An unreachable target fails with --check.
    let (code, stdout, _) = mpgpu(&["fpga", "dss", "--families", "ecp5", "--freq", "2000", "--check", "--out", &out]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("FAIL"), "{stdout}");
}

/// Refused before any tool runs (or is installed).
#[test]
fn bad_fpga_arguments_are_refused_with_the_reason() {
    let out = dir("bad");
    let (code, _, stderr) = mpgpu(&["fpga", "dss", "--estimate", "--check"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    // Bad input: a block that does not exist, an SM count out of range.
    let (code, _, stderr) = mpgpu(&["fpga", "nosuch"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown block `nosuch`; blocks: lowest_first"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "dss", "--sms", "17", "--out", &out]);
    assert_eq!(code, 2);
    assert!(stderr.contains("1..=16"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "dss", "--freq", "0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a frequency"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "dss", "--synth-only", "--check"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    // The whole GPU: a configuration that does not exist, a block beside it, neither given.
    let (code, _, stderr) = mpgpu(&["fpga", "--gpu", "nosuch", "--out", &out]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--gpu") && stderr.contains("nosuch"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "sched", "--gpu", "fermi15"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    // The whole controller: more SMs than the configuration has, without place and route, or
    // without --gpu.
    let (code, _, stderr) = mpgpu(&["fpga", "--gpu", "fermi15", "--controller", "16", "--out", &out]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--controller 16: expected 1..=15"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "--gpu", "fermi15", "--controller", "2", "--synth-only"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "dss", "--controller", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--gpu"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga", "--gpu", "fermi15", "--controller"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--controller <N>"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["fpga"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("<BLOCK>") || stderr.contains("--gpu"), "{stderr}");
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn a_trace_replays_on_the_ecp5_netlist() {
    let t = dir("trace");
    let (code, stdout, stderr) = mpgpu(&["cosim", "--unit", "engine", "--policy", "dss", "--trace", &t]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, stderr) = mpgpu(&["replay", "--gate", &t]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("ECP5 netlist") && stdout.contains("every output matched: PASS"), "{stdout}");
    assert!(Path::new(&t).join("gate").join("gate.v").exists());
}

const TINY: &str = "description = \"two small kernels\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"vecadd\", size = 2048, seed = 1 }]\n[[process]]\nname = \"b\"\narrival = 500\nlaunches = [{ kernel = \"vecadd\", size = 2048, seed = 2 }]\n";

#[test]
fn cosim_with_the_fpga_backend_runs_on_the_simulated_board_and_a_missing_device_is_an_error() {
    let d = dir("board");
    std::fs::create_dir_all(&d).unwrap();
    let w = Path::new(&d).join("tiny.toml");
    std::fs::write(&w, TINY).unwrap();
    let w = w.to_str().unwrap();
    let (code, stdout, stderr) = mpgpu(&["cosim", w, "--backend", "fpga", "--unit", "engine", "--policy", "dss", "--config", "k20c"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("on fpga") && stdout.contains("mismatches: 0") && stdout.contains("PASS"), "{stdout}");
    let (code, _, stderr) = mpgpu(&["cosim", w, "--backend", "fpga", "--device", "/dev/nonexistent-mpgpu", "--config", "k20c"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/dev/nonexistent-mpgpu") && stderr.contains("cannot open"), "{stderr}");
    let (code, _, stderr) = mpgpu(&["cosim", w, "--device", "/dev/ttyUSB0"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("needs --backend fpga"), "{stderr}");
}
