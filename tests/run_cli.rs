//! `mpgpu run`, `mpgpu configs`, and bad workload and configuration files.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::workload::Workload;
use std::process::Command;

fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args).output().expect("run mpgpu");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The number that follows `label` in `out` (0 if none).
fn count(out: &str, label: &str) -> u64 {
    out.split(label).nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn temp_file(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("run_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const GOOD: &str = "description = \"d\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"vecadd\", size = 4096 }]\n";

fn workload_error(text: &str) -> String {
    Workload::parse("w.toml", text).expect_err("expected an error").to_string()
}

#[test]
fn bad_workloads_name_the_field_and_what_was_expected() {
    let cases: [(&str, &str); 12] = [
        (&GOOD.replace("vecadd", "nosuch"), "process[0] (`a`): launches[0]: unknown kernel `nosuch` (the library has: vecadd, sgemm"),
        (&GOOD.replace("kernel = \"vecadd\", size = 4096", "kernel = \"sgemm\", size = 40"), "process[0] (`a`): launches[0]: sgemm: --size 40"),
        (&GOOD.replace("name = \"a\"", "name = \"a\"\nrepeat = 0"), "field `repeat`: 0 is out of range (expected 1..=1000)"),
        (&GOOD.replace("name = \"a\"", "name = \"a\"\nreplay = false"), "process[0] (`a`): field `replay = false` applies to a replayed workload (`min_runs`)"),
        (&format!("{GOOD}[[process]]\nname = \"a\"\nlaunches = [{{ kernel = \"vecadd\" }}]\n"), "process[1] (`a`): duplicate name (also process[0])"),
        ("description = \"d\"\nprocess = []\n", "no [[process]]: at least one process is needed"),
        (&GOOD.replace("name = \"a\"", "name = \"a\"\narrivl = 5"), "unknown field `arrivl`, expected one of `name`, `arrival`, `priority`, `repeat`, `tokens`, `replay`, `insts`, `launches`"),
        (&GOOD.replace("size = 4096", "size = \"big\""), "invalid type: string \"big\", expected u32"),
        ("description = \"d\"\n[[process]]\nname = \"a\"\nlaunches = []\n", "field `launches` is empty"),
        ("[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"vecadd\" }]\n", "missing field `description`"),
        (&GOOD.replace("name = \"a\"", "name = \"\""), "process[0]: field `name` must not be empty"),
        ("description = \"d\"\n[[process]\nname = \"a\"\n", "TOML parse error at line 2, column"),
    ];
    for (text, want) in cases {
        let e = workload_error(text);
        assert!(e.starts_with("workload w.toml: "), "{e}");
        assert!(e.contains(want), "error `{e}` lacks `{want}`");
    }
}

fn config_error(text: &str) -> String {
    GpuConfig::parse("c.toml", text).expect_err("expected an error").to_string()
}

#[test]
fn bad_configs_name_the_field_and_the_legal_range() {
    let good = mpgpu_ref::config::PRESETS.iter().find(|p| p.0 == "gtx480").unwrap().1;
    assert!(GpuConfig::parse("c.toml", good).is_ok());
    let cases: [(String, &str); 11] = [
        (good.replace("threads = 1536", "threads = 0"), "field `sm[0].threads`: 0 is out of range (expected 32..=1536)"),
        (good.replace("blocks = 8", "blocks = 100"), "field `sm[0].blocks`: 100 is out of range (expected 1..=64)"),
        (good.replace("l1_bytes = 16384", "l1_bytes = 12288"), "must be a power of two"),
        (good.replace("registers = 32768", "registers = 32768\nshared_configs = [32768, 16384]"), "field `sm[0].shared_configs`: configurations must be ascending"),
        (good.replace("dram_bandwidth_gbs = 177.4", "dram_bandwidth_gbs = -1.0"), "field `memory.dram_bandwidth_gbs`: -1 is out of range"),
        (good.replace("core_clock_mhz = 1400.0", "core_clock_mhz = 0.0"), "field `core_clock_mhz`: 0 is out of range (expected 10..=10000)"),
        (good.replace("schedulers = 2", "schedulers = 0"), "field `sm[0].schedulers`: 0 is out of range (expected 1..=8)"),
        (good.replace("channels = 6", "channels = 0"), "field `memory.channels`: 0 is out of range (expected 1..=64)"),
        (good.replace("scheduler = \"gto\"", "scheduler = \"fifo\""), "unknown variant `fifo`, expected `gto` or `lrr`"),
        (good.replace("l1_mshrs = 64", "l1_mshr = 64"), "unknown field `l1_mshr`"),
        (good.replace("l2_assoc = 8", "l2_assoc = \"eight\""), "invalid type: string \"eight\""),
    ];
    for (text, want) in cases {
        let e = config_error(&text);
        assert!(e.starts_with("config c.toml: "), "{e}");
        assert!(e.contains(want), "error `{e}` lacks `{want}`");
    }
    let e = GpuConfig::from_arg("gtx9000").unwrap_err().to_string();
    assert!(e.contains("no such preset or file (presets: gtx480, fermi15, kepler15, maxwell15, k20c, thesis16, thesis32, heterocore, full)"), "{e}");
    // (a configuration over a preset: `base`)
    for (text, want) in [
        ("base = \"gtx9000\"\nname = \"x\"\n", "field `base`: no preset `gtx9000` (presets: gtx480,"),
        ("base = 3\nname = \"x\"\n", "field `base`: 3 is not a preset's name"),
        ("base = \"fermi15\"\n[[sm]]\nthreads = 0\n", "field `sm[0].threads`: 0 is out of range"),
        ("base = \"fermi15\"\n[memory]\nchanels = 2\n", "unknown field `chanels`"),
        ("base = \"fermi15\"\nfaults = \"aol\"\n", "line 2, column 10"),
    ] {
        let e = config_error(text);
        assert!(e.starts_with("config c.toml: ") && e.contains(want), "error `{e}` lacks `{want}`");
    }
}

/// A configuration over a preset takes the preset's fields and replaces those it gives, an
/// `[[sm]]` group's field by field; `full` is fermi15 with every mechanism on.
#[test]
fn a_configuration_over_a_preset_replaces_only_what_it_gives() {
    let fermi = GpuConfig::preset("fermi15").unwrap();
    let c = GpuConfig::parse("c.toml", "base = \"fermi15\"\nname = \"mine\"\n[[sm]]\ncount = 2\n[[sm]]\ncount = 1\nthreads = 768\nwarps = 24\nregisters = 16384\nblocks = 8\nshared_bytes = 16384\nschedulers = 1\nscheduler = \"gto\"\nl1_bytes = 16384\nl1_assoc = 4\n").unwrap();
    assert_eq!(c.name, "mine");
    assert_eq!((c.sm.len(), c.sm[0].count, c.sm[1].count, c.sm[1].warps), (2, 2, 1, 24));
    assert_eq!((c.sm[0].registers, c.sm[0].warps), (fermi.sm[0].registers, fermi.sm[0].warps));
    assert_eq!((c.memory.channels, c.core_clock_mhz, c.sm[0].shared_bytes), (fermi.memory.channels, fermi.core_clock_mhz, fermi.sm[0].shared_bytes));
    let full = GpuConfig::preset("full").unwrap();
    let mut on = fermi.clone();
    on.sm[0].pipeline = mpgpu_ref::config::Pipeline::Thesis;
    on.alloc = mpgpu_ref::config::Alloc::Zorua;
    on.faults = mpgpu_ref::config::FaultScheme::Ol;
    on.memory.vm = true;
    on.paging.link = mpgpu_ref::config::PagingLink::Nvlink;
    assert_eq!(GpuConfig { name: full.name.clone(), description: full.description.clone(), ..on }, full, "full is fermi15 with the mechanisms on, nothing else changed");
}

#[test]
fn every_preset_and_shipped_workload_is_valid_and_described() {
    for (name, _) in mpgpu_ref::config::PRESETS {
        let c = GpuConfig::preset(name).unwrap();
        assert!(!c.description.is_empty(), "{name}");
    }
    let gtx = GpuConfig::preset("gtx480").unwrap();
    assert_eq!((gtx.num_sms(), gtx.sm[0].threads, gtx.sm[0].registers, gtx.sm[0].blocks, gtx.sm[0].shared_bytes), (16, 1536, 32768, 8, 49152));
    assert_eq!((gtx.sm[0].schedulers, gtx.sm[0].l1_bytes, gtx.memory.l2_bytes_per_channel, gtx.memory.channels), (2, 16384, 131072, 6));
    let k = GpuConfig::preset("k20c").unwrap();
    assert_eq!((k.num_sms(), k.sm[0].registers, k.sm[0].blocks, k.sm[0].threads, k.memory.dram_bandwidth_gbs), (13, 65536, 16, 2048, 208.0));
    assert_eq!(k.sm[0].shared_configs, vec![16384, 32768, 49152]);
    // (Zorua's portability study, Table 2: the Fermi-like GPU with the Kepler and Maxwell SMs)
    for (name, shared) in [("kepler15", 49152), ("maxwell15", 65536)] {
        let z = GpuConfig::preset(name).unwrap();
        assert_eq!((z.num_sms(), z.sm[0].warps, z.sm[0].registers, z.sm[0].shared_bytes, z.core_clock_mhz), (15, 64, 65536, shared, 1400.0), "{name}");
    }
    // (thesis16 scaled to 32 SMs, its memory system doubled, nothing else changed)
    let (t16, t32) = (GpuConfig::preset("thesis16").unwrap(), GpuConfig::preset("thesis32").unwrap());
    let mut scaled = t16.clone();
    (scaled.sm[0].count, scaled.memory.channels, scaled.memory.dram_bandwidth_gbs) = (32, 16, 500.0);
    assert_eq!(GpuConfig { name: t32.name.clone(), description: t32.description.clone(), ..scaled }, t32, "thesis32 is thesis16 with 32 SMs and twice the memory system");
    let h = GpuConfig::preset("heterocore").unwrap();
    assert_eq!((h.sm[0].count, h.sm[1].count, h.sm[0].registers + h.sm[1].registers), (8, 8, 65536));
    let mut sizes = Vec::new();
    // (workloads/ and its directories: the Warped-Slicer pairs and triples)
    let mut dirs = vec![std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/workloads"))];
    let mut files = 0;
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let w = Workload::load(&p).unwrap_or_else(|e| panic!("{e}"));
            assert!(w.description.len() > 20, "{}: description too short", p.display());
            sizes.push(w.processes.len());
            files += 1;
        }
    }
    assert!(files >= 7 + 21 + 12, "{files} workload files");
    for n in [2, 3, 4, 8] {
        assert!(sizes.contains(&n), "no {n}-process workload in workloads/");
    }
}

#[test]
fn run_default_prints_metrics_and_verifies() {
    let json = temp_file("out.json", "");
    let (code, out, err) = mpgpu(&["run", concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/two-compute-memory.toml"), "--json", &json]);
    assert_eq!(code, 0, "{out}{err}");
    for want in ["ANTT", "STP", "fairness", "IPC", "occupancy", "DRAM", "scheduler cycles", "all outputs verified: PASS"] {
        assert!(out.contains(want), "`{want}` missing from\n{out}");
    }
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(j["metrics"]["stp"].as_f64().unwrap() > 1.0);
    assert_eq!(j["run"]["processes"].as_array().unwrap().len(), 2);
    assert!(j["run"]["cycles"].as_u64().unwrap() > 0);
}

#[test]
fn run_reports_bad_files_and_limits_clearly() {
    let bad = temp_file("bad.toml", &GOOD.replace("vecadd", "nosuch"));
    let (code, _, err) = mpgpu(&["run", &bad]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("workload {bad}: process[0] (`a`): launches[0]: unknown kernel `nosuch`")), "{err}");
    let (code, _, err) = mpgpu(&["run", "/nonexistent.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("workload /nonexistent.toml: cannot read"), "{err}");
    let cfg = temp_file("cfg.toml", "name = \"x\"\ncore_clock_mhz = 1000.0\n");
    let (code, _, err) = mpgpu(&["run", "--config", &cfg]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("config {cfg}: ")) && err.contains("missing field"), "{err}");
    let (code, _, err) = mpgpu(&["run", "--max-cycles", "2000", "--no-alone"]);
    assert_eq!(code, 2);
    assert!(err.contains("stopped at --max-cycles 2000") && err.contains("blocks issued"), "{err}");
}

#[test]
fn run_rejects_unknown_policies_and_mechanisms_naming_the_choices() {
    let (code, _, err) = mpgpu(&["run", "--policy", "lifo"]);
    assert_eq!(code, 2);
    assert!(err.contains("'lifo'") && err.contains("--policy"), "{err}");
    assert!(["fcfs", "npq", "ppq-excl", "ppq-shared", "dss", "equal"].iter().all(|p| err.contains(p)), "{err}");
    let (code, _, err) = mpgpu(&["run", "--policy", "dss", "--preempt", "kill"]);
    assert_eq!(code, 2);
    assert!(err.contains("'kill'") && err.contains("--preempt") && err.contains("ctxsw") && err.contains("drain"), "{err}");
    // The framework's policy and intra-SM slicing together: slicing inside the framework
    // (docs/warped-slicer.md), the framework's SMs shared by Even's quotas.
    let two = "description = \"d\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"sgemm\", size = 64 }]\n[[process]]\nname = \"b\"\nlaunches = [{ kernel = \"spmv\", size = 2048, seed = 2 }]\n";
    let (code, out, err) = mpgpu(&["run", &temp_file("sliced.toml", two), "--policy", "dss", "--slicing", "even", "--no-alone"]);
    assert!(code == 0 && out.contains("framework dss, slicing even inside it") && out.contains("all outputs verified: PASS"), "{out}{err}");
}

#[test]
fn configs_lists_the_presets() {
    let (code, out, _) = mpgpu(&["configs"]);
    assert_eq!(code, 0);
    for p in ["gtx480", "fermi15", "k20c", "thesis16", "heterocore"] {
        assert!(out.contains(p), "{p} missing");
    }
}

#[test]
fn cosim_reports_zero_mismatches_and_catches_a_broken_block() {
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/two-compute-memory.toml");
    let (code, out, err) = mpgpu(&["cosim", w, "--config", "k20c", "--policy", "equal", "--preempt", "drain"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("mismatches: 0") && out.contains("all outputs verified: PASS"), "{out}");
    // The whole framework with its PTBQ popped in the wrong order.
    let pair = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/priority-pair.toml");
    let (code, out, err) = mpgpu(&["cosim", pair, "--config", "k20c", "--policy", "ppq-excl", "--broken", "lifo"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("mismatches: 1") && err.contains("mismatch at clocked cycle") && err.contains("sched.issue.tb: model"), "{out}{err}");
    assert!(err.contains("target/cosim/mismatch.vcd"), "{err}");
    // Only the DSS engine in RTL, ties broken the wrong way.
    let vcd = temp_file("broken.vcd", "");
    let (code, out, err) = mpgpu(&["cosim", w, "--unit", "engine", "--config", "k20c", "--policy", "dss", "--broken", "lifo", "--vcd", &vcd]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("mismatches: 1") && err.contains("mismatch at clocked cycle") && err.contains("GPU cycle"), "{out}{err}");
    assert!(std::fs::metadata(&vcd).unwrap().len() > 1000);
    let (code, _, err) = mpgpu(&["cosim", "--unit", "alu"]);
    assert_eq!(code, 2);
    assert!(err.contains("'alu'") && err.contains("--unit") && err.contains("sched") && err.contains("engine"), "{err}");
}

#[test]
fn cosim_on_verilator_writes_a_trace_that_replays_in_icarus() {
    // A short priority pair (685 clocked cycles): Icarus replays the framework at a few hundred
    // cycles a second, and every replay runs the trace twice around a 4,096-cycle reset (the
    // shipped pair's trace has 39,038 cycles and takes 4 minutes). Traces with preemptions and
    // restores are replayed by the long tier's gate-level test of the framework.
    let pair = temp_file(
        "small-priority-pair.toml",
        "description = \"a short priority pair\"\n\n[[process]]\nname = \"lbm-low\"\narrival = 0\npriority = 0\nlaunches = [{ kernel = \"lbm\", size = 64, seed = 1 }]\n\n\
         [[process]]\nname = \"sgemm-high\"\narrival = 2500\npriority = 1\nlaunches = [{ kernel = \"sgemm\", size = 32, seed = 2 }]\n",
    );
    let pair = pair.as_str();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-trace");
    let d = dir.to_str().unwrap();
    let vcd = dir.join("run.vcd");
    let (code, out, err) = mpgpu(&["cosim", pair, "--config", "k20c", "--policy", "ppq-excl", "--backend", "verilator", "--trace", d, "--vcd", vcd.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("on verilator") && out.contains("mismatches: 0") && out.contains("mpgpu replay"), "{out}");
    assert!(vcd.with_extension("gtkw").exists(), "no GTKWave save file beside the waveform");
    let (code, out, err) = mpgpu(&["replay", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    // An edited expected value: busy flipped in the first record.
    let f = mpgpu_tb::trace::read(&dir).unwrap().expected_field("busy").unwrap();
    let hex = dir.join("trace.hex");
    let text = std::fs::read_to_string(&hex).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut w: Vec<String> = lines[0].split_whitespace().map(String::from).collect();
    w[f] = if w[f] == "0" { "1".into() } else { "0".into() };
    lines[0] = w.join(" ");
    std::fs::write(&hex, lines.join("\n") + "\n").unwrap();
    let (code, out, err) = mpgpu(&["replay", d]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("REPLAY MISMATCH cycle 0") && err.contains("port busy"), "{err}");
    let (code, _, err) = mpgpu(&["replay", "/nonexistent-trace"]);
    assert_eq!(code, 2);
    assert!(err.contains("no trace.json"), "{err}");
}

#[test]
fn mixes_writes_the_thesis_workloads_that_run_reads() {
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-mixes");
    let _ = std::fs::remove_dir_all(&out_dir);
    let o = out_dir.to_str().unwrap();
    let (code, out, err) = mpgpu(&["mixes", "--counts", "2,8", "--per-count", "2", "--priority", "--out", o]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("sized for 3 rounds") && out.contains("wrote 4 workloads"), "{out}");
    for f in ["mix-2-0.toml", "mix-2-1.toml", "mix-8-0.toml", "mix-8-1.toml"] {
        let w = Workload::load(&out_dir.join(f)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.min_runs, Some(3), "{f}");
        assert_eq!(w.processes.iter().filter(|p| p.priority == 1).count(), 1, "{f}");
    }
    let (code, _, err) = mpgpu(&["mixes", "--counts", "0", "--out", o]);
    assert_eq!(code, 2);
    assert!(err.contains("--counts") && err.contains("0 processes"), "{err}");
}

#[test]
fn soak_passes_and_reports_a_broken_block_with_a_workload_that_reproduces_it() {
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-soak");
    let o = out_dir.to_str().unwrap();
    let (code, out, err) = mpgpu(&["soak", "--seed", "5", "--workloads", "1", "--out", o]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 workloads, 12 runs") && out.contains("mismatches: 0") && out.contains("PASS"), "{out}");
    let (code, out, err) = mpgpu(&["soak", "--seed", "3", "--workloads", "20", "--out", o, "--broken", "lifo"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("mismatches: 1") && err.contains("reproduce with: mpgpu cosim"), "{out}{err}");
    let file = err.lines().find_map(|l| l.strip_prefix("reproduce with: mpgpu cosim ")).unwrap().split_whitespace().next().unwrap().to_string();
    assert!(std::path::Path::new(&file).exists(), "{file}");
    assert!(err.lines().any(|l| l.starts_with("reproduce with: mpgpu cosim ") && l.ends_with(" --broken lifo")), "{err}");
    // Any unit's own variants: the steering unit's, its command carrying the variant, which
    // reproduces the mismatch.
    let (code, out, err) = mpgpu(&["soak", "--unit", "steer", "--workloads", "4", "--out", o, "--broken", "always-switch"]);
    assert_eq!(code, 1, "{out}{err}");
    let cmd = err.lines().find_map(|l| l.strip_prefix("reproduce with: mpgpu ")).unwrap_or_else(|| panic!("{err}"));
    assert!(cmd.starts_with("cosim ") && cmd.contains(" --unit steer ") && cmd.ends_with(" --broken always-switch"), "{cmd}");
    let args: Vec<&str> = cmd.split_whitespace().collect();
    let (code, out, err) = mpgpu(&args);
    assert!(code == 1 && format!("{out}{err}").contains("mismatch at clocked cycle "), "{out}{err}");
}

#[test]
fn cosim_and_soak_refuse_a_gpu_the_framework_cannot_run_on_before_building_rtl() {
    let gtx = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/sim-ref/configs/gtx480.toml")).unwrap();
    let big = temp_file("big.toml", &gtx.replacen("count = 16", "count = 20", 1).replacen("name = \"gtx480\"", "name = \"big\"", 1));
    for args in [vec!["cosim", "--config", &big], vec!["cosim", "--config", &big, "--backend", "verilator"], vec!["cosim", "--unit", "engine", "--config", &big], vec!["soak", "--workloads", "1", "--config", &big]] {
        let (code, out, err) = mpgpu(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("at most 16 SMs") && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn run_with_demand_paging_reports_faults_and_writes_a_timeline() {
    let w = temp_file("paging.toml", GOOD);
    let csv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("run_cli").join("timeline.csv");
    let (code, out, err) = mpgpu(&["run", &w, "--config", "thesis16", "--paging", "pcie", "--migration", "4k", "--faults", "wd-lastcheck", "--timeline", csv.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("paging Pcie, 4 KB units:") && out.contains("faults under wd-lastcheck:") && out.contains("PASS"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("cycle,sm,resident,faulted,active\n") && text.lines().count() > 16, "{text}");
    // Bad values are refused, naming the option and what was expected.
    let (code, _, err) = mpgpu(&["run", &w, "--paging", "nvlink", "--migration", "3000"]);
    assert_eq!(code, 2);
    assert!(err.contains("--migration: ") && err.contains("expected 4096"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--migration", "lots"]);
    assert_eq!(code, 2);
    assert!(err.contains("`lots` is not a byte count"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--config", "gtx480", "--timeline", csv.to_str().unwrap(), "--no-alone"]);
    assert_eq!(code, 2);
    assert!(err.contains("--timeline needs demand paging"), "{err}");
}

/// The replay queue and operand log from the command line: injected faults are squashed and
/// replayed and the outputs verify; bad settings are refused with the option named.
#[test]
fn run_with_the_operand_log_and_injected_faults() {
    let w = temp_file("ol.toml", GOOD);
    let (code, out, err) = mpgpu(&["run", &w, "--config", "thesis16", "--faults", "ol", "--oplog-bytes", "4k", "--oplog-full", "hold", "--inject", "0.05,3", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("faults under ol:") && out.contains("instructions replayed") && out.contains("PASS"), "{out}");
    let (code, _, err) = mpgpu(&["run", &w, "--config", "thesis16", "--faults", "ol", "--oplog-bytes", "1k"]);
    assert_eq!(code, 2);
    assert!(err.contains("--oplog-bytes") && err.contains("expected at least 4096"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--faults", "rq"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs the thesis's pipeline") && err.contains("--pipeline thesis"), "{err}");
    // (the pipeline from the command line: Zorua on fermi15 with the thesis's, under the log)
    let (code, out, err) = mpgpu(&["run", &w, "--config", "fermi15", "--pipeline", "thesis", "--alloc", "zorua", "--faults", "ol", "--vm", "on", "--inject", "0.05,3", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("faults under ol:") && out.contains("PASS"), "{out}");
    let (code, _, err) = mpgpu(&["run", &w, "--config", "thesis16", "--alloc", "zorua", "--faults", "rq", "--tb-switch", "on"]);
    assert_eq!(code, 2);
    assert!(err.contains("--tb-switch: switching a faulted block out saves its registers"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--config", "thesis16", "--inject", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a probability"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--config", "thesis16", "--tb-switch", "on"]);
    assert_eq!(code, 2);
    assert!(err.contains("--tb-switch: switching a faulted block out needs"), "{err}");
}

#[test]
fn soak_of_the_per_sm_blocks_passes_with_faults_and_refuses_what_it_cannot_run() {
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-soak-rq");
    let o = out_dir.to_str().unwrap();
    let (code, out, err) = mpgpu(&["soak", "--unit", "rq-ol", "--workloads", "1", "--backend", "verilator", "--out", o]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("on thesis16 (verilator), --unit rq-ol's RTL on every SM") && out.contains("1 workloads, 2 runs") && out.contains("mismatches: 0") && out.contains("PASS"), "{out}");
    let replayed: u64 = out.lines().find_map(|l| l.strip_prefix("faults: ")).and_then(|l| l.split(", ").nth(1)).and_then(|x| x.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(replayed > 0, "{out}");
    // The per-SM blocks need the thesis's pipeline; the framework's broken variants are not theirs.
    let (code, out, err) = mpgpu(&["soak", "--unit", "rq", "--config", "k20c", "--workloads", "1", "--out", o]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("needs the thesis's pipeline") && !err.contains("panicked"), "{err}");
    let (code, out, err) = mpgpu(&["soak", "--unit", "rq", "--broken", "lifo", "--out", o]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--broken") && !err.contains("panicked"), "{err}");
}

#[test]
fn bench_cosim_measures_a_per_sm_block_on_every_sm() {
    let w = temp_file("bench-rq.toml", GOOD);
    let (code, out, err) = mpgpu(&["bench", "cosim", &w, "--unit", "rq", "--config", "thesis16", "--inject", "0.05,3", "--reps", "1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("rq on every SM, faults Rq"), "{out}");
    for row in ["model alone", "rust-hdl in the loop, gated", "rust-hdl alone, gated", "verilator in the loop, gated", "verilator alone, gated"] {
        assert!(out.lines().any(|l| l.starts_with(row)), "no row {row:?}:\n{out}");
    }
    assert!(!out.contains("every cycle"), "{out}");
}

#[test]
fn a_list_of_units_puts_their_blocks_in_one_gpu_and_refuses_what_cannot_share_it() {
    // The framework's RTL and the replay queue and operand log on every SM, together, under
    // injected faults, on both backends (Verilator, with a model of the framework for 16 SMs,
    // in the long tier); a broken block of the list is caught.
    let two = "description = \"d\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"vecadd\", size = 4096 }]\n[[process]]\nname = \"b\"\nlaunches = [{ kernel = \"vecadd\", size = 4096, seed = 2 }]\n";
    let w = temp_file("list.toml", two);
    let backends: &[&str] = if cfg!(feature = "long") { &["rust-hdl", "verilator"] } else { &["rust-hdl"] };
    for &backend in backends {
        let (code, out, err) = mpgpu(&["cosim", &w, "--unit", "sched,rq-ol", "--config", "thesis16", "--policy", "dss", "--preempt", "drain", "--inject", "0.05,1", "--backend", backend]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("summed over 16 SMs' slots (3 blocks each) and sched") && out.contains("mismatches: 0") && out.contains("all outputs verified: PASS"), "{out}");
        assert!(count(&out, "faults under ol: ") > 0, "no fault was taken: {out}");
    }
    let (code, out, err) = mpgpu(&["cosim", &w, "--unit", "sched,rq-ol", "--config", "thesis16", "--inject", "0.05,1", "--broken", "wrong-slot"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("mismatches: 1") && err.contains(".rq."), "{out}{err}");
    // What cannot share one GPU is refused, with the reason.
    for (list, why) in [
        ("sched,slice", "which has no place for slice: the slice table issues under the slicing dispatcher"),
        ("sched,dss", "fill the framework's slot"),
        ("engine,rq", "is one of its blocks by the policy"),
        ("sched,nosuch", "unknown unit `nosuch` in the list"),
    ] {
        let (code, _, err) = mpgpu(&["cosim", &w, "--unit", list]);
        assert!(code == 2 && err.contains(why), "--unit {list}: {err}");
    }
    // `--unit all`: the framework's blocks and every per-SM block; with --slicing, the slicing
    // dispatcher's in the framework's place, which refuses the framework's flags; with
    // --policy too, slicing inside the framework: every block but the slice table, the
    // framework sharing its SMs, and Warped-Slicer's units only under Warped-Slicer.
    let (code, out, err) = mpgpu(&["cosim", &w, "--unit", "all", "--config", "thesis16", "--inject", "0.05,1"]);
    assert!(code == 0 && out.contains("summed over 16 SMs' slots (4 blocks each) and sched") && out.contains("mismatches: 0"), "{out}{err}");
    assert!(count(&out, "replay queue: ") > 0, "no instruction replayed: {out}");
    let (code, _, err) = mpgpu(&["cosim", &w, "--unit", "all", "--config", "thesis16", "--slicing", "even", "--preempt", "drain"]);
    assert!(code == 2 && err.contains("--unit all (slicing) runs under its slicing dispatcher"), "{err}");
    let (code, out, err) = mpgpu(&["cosim", &w, "--unit", "all", "--config", "thesis16", "--slicing", "warped-slicer", "--policy", "dss"]);
    assert!(code == 0 && out.contains("its SMs shared by warped-slicer quotas") && out.contains("(5 blocks each) and sched, wf") && out.contains("mismatches: 0"), "{out}{err}");
    let (code, _, err) = mpgpu(&["cosim", &w, "--unit", "all", "--config", "thesis16", "--slicing", "even", "--policy", "dss"]);
    assert!(code != 0 && err.contains("--slicing even has it idle: give --slicing warped-slicer"), "{err}");
    // The `full` preset (everything on: the thesis's pipeline, paging, the operand log, Zorua),
    // every block at once, with and without Warped-Slicer inside the framework (a decision
    // taken), and Kepler's SMs on the thesis's pipeline (Verilator too in the long tier);
    // Maxwell's 32 blocks an SM are more than the operand log partitions, refused naming it.
    for &backend in backends {
        for (args, want) in [
            (&["--config", "full"][..], "(4 blocks each) and sched"),
            (&["--config", "full", "--policy", "dss", "--slicing", "warped-slicer"][..], "(5 blocks each) and sched, wf"),
            (&["--config", "kepler15", "--pipeline", "thesis", "--policy", "dss", "--preempt", "drain", "--inject", "0.05,1"][..], "summed over 15 SMs' slots (4 blocks each) and sched"),
        ] {
            let (code, out, err) = mpgpu(&[&["cosim", &w, "--unit", "all", "--backend", backend][..], args].concat());
            assert!(code == 0 && out.contains(want) && out.contains("mismatches: 0"), "{args:?}: {out}{err}");
            assert!(count(&out, "replay queue: ") > 0, "{args:?}: no instruction replayed: {out}");
            assert!(!args.contains(&"warped-slicer") || out.contains("-> quotas"), "{args:?}: no decision: {out}");
        }
    }
    let (code, _, err) = mpgpu(&["cosim", &w, "--unit", "all", "--config", "maxwell15", "--pipeline", "thesis"]);
    assert!(code != 0 && err.contains("32 blocks per SM; the operand log partitions at most 16"), "{err}");
    let (_, help, _) = mpgpu(&["cosim", "--help"]);
    assert!(help.contains("- all:") && help.contains("every block that runs in one GPU at once"), "{help}");
}

/// `run --reg-cap` compiles every kernel under the cap (docs/unified.md) and the outputs still
/// verify, spills in shared memory with --spill-slots; a cap a kernel cannot take and spill
/// slots without a cap are refused before the run, naming the flag, process and kernel.
#[test]
fn run_compiles_the_kernels_under_a_register_cap() {
    let w = temp_file("cap.toml", &GOOD.replace("kernel = \"vecadd\", size = 4096", "kernel = \"sgemm\", size = 64"));
    let (code, base, err) = mpgpu(&["run", &w, "--no-alone"]);
    assert_eq!(code, 0, "{base}{err}");
    for args in [&["--reg-cap", "12"][..], &["--reg-cap", "12", "--spill-slots", "8"]] {
        let (code, out, err) = mpgpu(&[&["run", &w, "--no-alone"][..], args].concat());
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("all outputs verified: PASS"), "{out}");
        assert!(count(&out, "warp-insts ") > count(&base, "warp-insts "), "{args:?}: the spill code ran\n{out}");
    }
    let (code, _, err) = mpgpu(&["run", &w, "--reg-cap", "2"]);
    assert_ne!(code, 0);
    assert!(err.contains("process `a`: under a register cap of 2: sgemm: kernel `sgemm`: a cap of 2 register(s) is too few"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--reg-cap", "0"]);
    assert_ne!(code, 0);
    assert!(err.contains("--reg-cap: 0 is out of range (expected 1..=255)"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--spill-slots", "4"]);
    assert_eq!(code, 2, "{err}");
    // (auto: the search leaves sgemm as written, so the run is the same run)
    let (code, out, err) = mpgpu(&["run", &w, "--no-alone", "--reg-cap", "auto"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(count(&out, "cycles "), count(&base, "cycles "), "{out}");
    let (code, _, err) = mpgpu(&["run", &w, "--reg-cap", "auto", "--config", "heterocore"]);
    assert_ne!(code, 0);
    assert!(err.contains("--reg-cap: the concurrency search sizes a kernel for one kind of SM"), "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--reg-cap", "many"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = mpgpu(&["run", &w, "--reg-cap", "auto", "--spill-slots", "3"]);
    assert_ne!(code, 0);
    assert!(err.contains("--spill-slots: the search chooses each kernel's spill slots"), "{err}");
    // (the flags replace a configuration's [compile]; a sweep refuses one)
    let capped = temp_file("capped.toml", "base = \"gtx480\"\nname = \"capped\"\n[compile]\nreg_cap = 12\nspill_slots = 8\n");
    let (code, out, err) = mpgpu(&["run", &w, "--no-alone", "--config", &capped, "--reg-cap", "auto"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(count(&out, "cycles "), count(&base, "cycles "), "{out}");
    let (code, _, err) = mpgpu(&["sweep", "spmv", "--regs", "14..22:8", "--config", &capped]);
    assert_ne!(code, 0);
    assert!(err.contains("its [compile] section caps every kernel's registers"), "{err}");
}
