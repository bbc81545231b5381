//! IP folders (`mpgpu verilog`, `mpgpu_tb::ip`, `docs/ip.md`): every block's Verilog with its
//! modules named after it lints clean under `verilator -Wall` with only its shipped waivers
//! (and the waivers hide nothing else), every block reads into one yosys design with the others,
//! the synchronous reset returns a block to its starting state mid-trace (and a reset that
//! misses a register or a memory is caught), and an IP folder's FuseSoC core simulates the
//! block's testbench in Icarus and Verilator and fails on an edited trace.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use mpgpu_tb::cosim::{run_with, CosimOptions, UnitKind};
use mpgpu_tb::ip;
use mpgpu_tb::registry::BLOCKS;
use mpgpu_tb::trace::{replay, Replay};
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ip").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(dir: &Path, tool: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new(tool).current_dir(dir).args(args).output().unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// The warning classes Verilator reports in `log`.
fn classes(log: &str) -> std::collections::BTreeSet<String> {
    log.lines().filter_map(|l| l.strip_prefix("%Warning-")).map(|l| l.split(':').next().unwrap().to_string()).collect()
}

#[test]
fn every_block_lints_clean_with_its_waivers_and_all_read_into_one_design() {
    let root = dir("all");
    let failures: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = BLOCKS
            .iter()
            .map(|b| {
                let root = root.clone();
                s.spawn(move || {
                    let rtl = b.verilog_sized(15).unwrap();
                    let v = ip::ip_verilog(&rtl, b.name, b.about, ip::PREFIX, "test").unwrap();
                    let top = ip::module_name(ip::PREFIX, b.name);
                    let f = mpgpu_tb::ip_folder::write_folder(&root.join(b.name), &v, &top, b.name, b.about, None).unwrap();
                    let (vf, vlt) = (format!("{top}.v"), format!("{top}.vlt"));
                    let mut errors = Vec::new();
                    // every module is the block's, and the top has the reset if it has state
                    for m in v.lines().filter_map(|l| l.strip_prefix("module ")) {
                        if !m.starts_with(&top) {
                            errors.push(format!("{}: module {m} is not named after the block", b.name));
                        }
                    }
                    if !ip::top_has_reset(&v) {
                        errors.push(format!("{}: no reset input", b.name));
                    }
                    let (ok, log) = run(&f.dir, "verilator", &["--lint-only", "-Wall", "--top-module", &top, &vlt, &vf]);
                    if !ok || log.contains("%Warning") {
                        errors.push(format!("{}: verilator -Wall with the waivers:\n{log}", b.name));
                    }
                    // the waivers hide only the classes they name
                    let (_, log) = run(&f.dir, "verilator", &["--lint-only", "-Wall", "-Wno-fatal", "--top-module", &top, &vf]);
                    let named: std::collections::BTreeSet<String> = ["WIDTH", "UNOPTFLAT", "DECLFILENAME"].iter().map(|s| s.to_string()).collect();
                    if !classes(&log).is_subset(&named) {
                        errors.push(format!("{}: warnings beyond the waived classes: {:?}", b.name, classes(&log)));
                    }
                    let (ok, log) = run(&f.dir, "iverilog", &["-o", "/dev/null", &vf]);
                    if !ok {
                        errors.push(format!("{}: iverilog:\n{log}", b.name));
                    }
                    errors
                })
            })
            .collect();
        runs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // All blocks in one yosys design: no module is defined twice, every instance resolves.
    let reads: Vec<String> = BLOCKS.iter().map(|b| format!("read_verilog {}/{}{}.v", b.name, ip::PREFIX, b.name)).collect();
    let (ok, log) = run(&root, "yosys", &["-q", "-p", &format!("{}; hierarchy -check", reads.join("; "))]);
    assert!(ok, "yosys of all blocks at once:\n{log}");
    // The raw rust-hdl output (every block's module `top`) cannot be read together: the check
    // above would fail without the renaming.
    let raw: Vec<String> = ["rq", "oplog"].iter().map(|n| {
        let p = root.join(format!("raw-{n}.v"));
        std::fs::write(&p, mpgpu_tb::registry::block(n).unwrap().verilog_sized(15).unwrap().verilog).unwrap();
        format!("read_verilog {}", p.display())
    }).collect();
    let (ok, log) = run(&root, "yosys", &["-q", "-p", &raw.join("; ")]);
    assert!(!ok && log.contains("Re-definition of module"), "{log}");
}

#[test]
fn a_prefix_names_every_module_and_bad_prefixes_are_refused() {
    let b = mpgpu_tb::registry::block("rq").unwrap();
    let v = ip::ip_verilog(&b.verilog_sized(16).unwrap(), b.name, b.about, "acme_gpu_", "test").unwrap();
    let mods: Vec<&str> = v.lines().filter_map(|l| l.strip_prefix("module ")).collect();
    assert!(mods[0].starts_with("acme_gpu_rq(clock,reset,"), "{}", mods[0]);
    assert!(mods.iter().all(|m| m.starts_with("acme_gpu_rq")));
    assert!(v.contains("acme_gpu_rq_age_ram age_ram("));
    assert!(v.contains("// Generated by mpgpu") && v.contains("RqPorts { slots: 128 }"));
    assert!(v.contains("//   output rd_nlog     2 bits"), "{}", &v[..2000]);
    for bad in ["", "9x", "a-b", "a b", &"x".repeat(65)] {
        assert!(ip::check_prefix(bad).unwrap_err().contains("--prefix"), "{bad}");
    }
}

/// A short run of the replay queue with faults (thesis16, SM 0 carrying the RTL), traced.
fn rq_trace(d: &Path) -> u64 {
    let mut cfg = GpuConfig::preset("thesis16").unwrap();
    let unit = UnitKind::named("rq").unwrap();
    unit.setup(&mut cfg);
    cfg.inject.rate = 0.05;
    cfg.inject.seed = 5;
    cfg.validate().unwrap();
    let w = Workload::parse("lbm.toml", "description = \"lbm\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 1 }]\n").unwrap();
    let mut o = CosimOptions::new(Policy::Fcfs, Mechanism::ContextSwitch);
    o.unit = unit;
    o.sms = mpgpu_ref::slots::SmSet::parse("0", 16).unwrap();
    o.trace = Some(d.to_path_buf());
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    assert!(r.mismatch.is_none(), "{}", r.mismatch.unwrap());
    assert!(r.result.unwrap().sm.replayed > 0, "no replay in the traced run");
    r.cycles_checked
}

/// The trace in `from` replayed with `from_text` replaced by `to_text` once in module
/// `module` of its Verilog (which must change it): the replay must fail after the reset.
fn caught_after_reset(from: &Path, name: &str, module: &str, from_text: &str, to_text: &str) {
    let to = dir(name);
    for f in ["trace.hex", "trace.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    let v = std::fs::read_to_string(from.join("mpgpu_rq.v")).unwrap();
    let (a, b) = v.split_at(v.find(&format!("module {module}(")).unwrap());
    let e = format!("{a}{}", b.replacen(from_text, to_text, 1));
    assert_ne!(e, v, "{name}: the edit changed nothing");
    std::fs::write(to.join("mpgpu_rq.v"), e).unwrap();
    match replay(&to).unwrap() {
        Replay::Mismatch { line, .. } => assert!(line.contains("(after the reset)"), "{name}: {line}"),
        r => panic!("{name}: replayed as {r:?}"),
    }
}

#[test]
fn a_reset_mid_trace_replays_as_from_the_start_and_a_partial_reset_is_caught() {
    let d = dir("rq-trace");
    let cycles = rq_trace(&d);
    let info = mpgpu_tb::trace::read(&d.join("sm0")).unwrap();
    assert!(info.reset && info.reset_cycles == 128, "{info:?}");
    assert_eq!(replay(&d.join("sm0")).unwrap(), Replay::Pass { cycles });
    let log = std::fs::read_to_string(d.join("sm0/replay.log")).unwrap();
    assert!(log.contains(&format!("REPLAY RESET after {} cycles", cycles / 2)), "{log}");
    // A reset that leaves a memory's words (the entries' ages) as they were: a slot read after
    // the reset shows its old entry.
    caught_after_reset(&d.join("sm0"), "rq-no-clear", "mpgpu_rq_age_ram", "mem[reset_address] <= 0;", "");
    // A reset that misses a register (the valid bits of slots 0-63).
    caught_after_reset(&d.join("sm0"), "rq-no-valid", "mpgpu_rq_valid_0", "if (reset) begin", "if (1'b0) begin");
}

/// FuseSoC from PyPI in the tools' environment under `target/` (`mpgpu_tb::ip_folder::fusesoc`).
fn fusesoc() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    mpgpu_tb::ip_folder::fusesoc(&mpgpu_tb::fpga::default_venv(&root), |m| eprintln!("{m}")).expect("cannot install FuseSoC")
}

#[test]
fn an_ip_folder_simulates_its_testbench_under_fusesoc_in_icarus_and_verilator() {
    let t = dir("fusesoc-trace");
    let cycles = rq_trace(&t);
    let out = dir("fusesoc");
    let b = mpgpu_tb::registry::block("rq").unwrap();
    let top = ip::module_name(ip::PREFIX, "rq");
    let v = ip::ip_verilog(&b.verilog_sized(16).unwrap(), "rq", b.about, ip::PREFIX, "test").unwrap();
    let f = mpgpu_tb::ip_folder::write_folder(&out.join("rq"), &v, &top, "rq", b.about, Some(&t.join("sm0"))).unwrap();
    for x in ["mpgpu_rq.v", "mpgpu_rq.vlt", "files.f", "mpgpu_rq.core", "tb/mpgpu_rq_tb.v", "tb/trace.hex"] {
        assert!(f.files.iter().any(|g| g == x) && f.dir.join(x).exists(), "{x}");
    }
    let fs = fusesoc();
    let core = format!("mpgpu:ip:{top}");
    let go = |target: &str, build: &str| {
        let out = Command::new(&fs).current_dir(&out).args(["--cores-root", "rq", "run", "--target", target, "--build-root", build, &core]).output().unwrap();
        (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    let (ok, log) = go("lint", "build-lint");
    assert!(ok, "fusesoc lint:\n{log}");
    for target in ["sim", "sim_verilator"] {
        let (ok, log) = go(target, &format!("build-{target}"));
        assert!(ok && log.contains(&format!("REPLAY PASS {cycles} cycles")) && log.contains("REPLAY RESET"), "fusesoc {target}:\n{log}");
    }
    // An edited expected value fails the simulation (and fusesoc with it).
    let hex = f.dir.join("tb/trace.hex");
    let text = std::fs::read_to_string(&hex).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut w: Vec<String> = lines[3].split_whitespace().map(String::from).collect();
    // flip the expected alloc_idx's low bit
    let f = mpgpu_tb::trace::read(&t.join("sm0")).unwrap().expected_field("alloc_idx").unwrap();
    let a = u64::from_str_radix(&w[f], 16).unwrap() ^ 1;
    w[f] = format!("{a:x}");
    lines[3] = w.join(" ");
    std::fs::write(&hex, lines.join("\n") + "\n").unwrap();
    let (ok, log) = go("sim", "build-sim-bad");
    assert!(!ok && log.contains("REPLAY MISMATCH cycle 3") && log.contains("port alloc_idx"), "{log}");
}

/// Every block's IP folder carries a testbench recorded from the block's own run in the whole
/// GPU (what `mpgpu verilog` writes by default: `mpgpu_tb::ip_folder::record_testbench`), a run
/// that exercises it (preemptions for the framework and its engines, replays for the
/// fault-handling blocks, grants for Zorua's coordinator, a slicing decision for the slicing
/// blocks, a steering decision that moves SMs for the steering unit), and each passes under FuseSoC in Icarus, through the reset half-way, its modules
/// named with another prefix than the run's;
/// in the long tier in Verilator too, and the framework built to share its SMs as well.
#[test]
fn every_ip_folder_carries_a_testbench_of_its_own_run_that_passes_under_fusesoc() {
    let out = dir("folders");
    let fs = fusesoc();
    let long = cfg!(feature = "long");
    let mut cases: Vec<(&mpgpu_tb::registry::Block, bool)> = BLOCKS.iter().filter(|b| b.host.is_some()).map(|b| (b, false)).collect();
    assert!(cases.len() >= 10, "{} blocks with a run of their own", cases.len());
    if long {
        cases.push((mpgpu_tb::registry::block("sched").unwrap(), true));
    }
    let targets: &[&str] = if long { &["sim", "sim_verilator"] } else { &["sim"] };
    for (b, sharing) in cases {
        let name = if sharing { format!("{}-sharing", b.name) } else { b.name.to_string() };
        let cfg = b.default_gpu().unwrap();
        let rtl = b.verilog_with(16, &cfg, sharing).unwrap();
        let run = mpgpu_tb::ip_folder::testbench_run(b, &cfg, 16, sharing).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (t, res) = mpgpu_tb::ip_folder::record_testbench(b, &rtl, run, &out.join("rec").join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let info = mpgpu_tb::trace::read(&t).unwrap();
        let decided = res.slicing.as_ref().is_some_and(|s| !s.decisions.is_empty());
        match b.name {
            _ if sharing => assert!(decided, "{name}: no slicing decision in the testbench's run"),
            "sched" | "dss" | "prio" => assert!(res.preemptions > 0, "{name}: no preemption in the testbench's run ({} cycles, {} restores)", res.cycles, res.restores),
            "rq" | "oplog" | "oldata" => assert!(res.sm.replayed > 0, "{name}: no replay in the testbench's run"),
            "zorua" => assert!(res.zorua.as_ref().is_some_and(|z| z.grants > 0), "{name}: no grant in the testbench's run"),
            "admit" => assert!(res.sm.admit_packs > 0 && res.sm.max_kernels_resident > 1, "{name}: no packing beside another kernel in the testbench's run"),
            "wf" | "prof" | "slice" => assert!(decided, "{name}: no slicing decision in the testbench's run"),
            "steer" => assert!(res.steering.as_ref().is_some_and(|s| s.decisions.iter().any(|d| !d.big.is_empty()) && s.drains > 0), "{name}: no steering decision that moved SMs in the testbench's run"),
            _ => panic!("{name}: a block with a testbench run but no event the test requires of it"),
        }
        assert!(info.cycles > 200, "{name}: {info:?}");
        // (another prefix than the co-simulation's: the folder's testbench names its modules)
        let top = ip::module_name("t_", b.name);
        let v = ip::ip_verilog(&rtl, b.name, b.about, "t_", "test").unwrap();
        let root = out.join(&name);
        let f = mpgpu_tb::ip_folder::write_folder(&root.join(b.name), &v, &top, b.name, b.about, Some(&t)).unwrap();
        assert!(f.files.iter().any(|x| x == &format!("tb/{top}_tb.v")), "{name}: {:?}", f.files);
        for target in targets {
            let o = Command::new(&fs).current_dir(&root).args(["--cores-root", b.name, "run", "--target", target, "--build-root", &format!("build-{target}"), &format!("mpgpu:ip:{top}")]).output().unwrap();
            let log = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            assert!(o.status.success() && log.contains(&format!("REPLAY PASS {} cycles", info.cycles)) && log.contains("REPLAY RESET"), "{name}: fusesoc {target}:\n{log}");
        }
    }
}

/// The whole controller (`fpga --gpu --controller`): the GPU-wide blocks and two SMs' per-SM
/// blocks in one top, read by yosys with every instance resolved, and its ports the rings'.
#[test]
fn the_whole_controller_is_one_design_of_every_block() {
    use mpgpu_tb::controller::{verilog, TOP};
    use mpgpu_tb::gpu_cost::gpu_blocks;
    use mpgpu_tb::registry::Scope;
    let root = dir("controller");
    let blocks = gpu_blocks(BLOCKS);
    let fermi = mpgpu_ref::config::GpuConfig::preset("fermi15").unwrap();
    let (text, instances, bits) = verilog(&blocks, 15, &fermi, 2, false).unwrap();
    let global = blocks.iter().filter(|b| b.scope == Scope::Gpu).count();
    let per_sm = blocks.iter().filter(|b| b.scope == Scope::PerSm).count();
    assert!(global >= 3 && per_sm >= 4, "{global} GPU-wide and {per_sm} per-SM blocks");
    assert_eq!(instances, global + 2 * per_sm);
    assert!(text.starts_with("// Generated by mpgpu") && text.contains(&format!("module {TOP}(clock, reset, ")), "{}", &text[..300]);
    for inst in ["sched", "wf", "slice", "sm0_zorua", "sm1_zorua", "sm1_oldata", "sm1_rq", "sm1_oplog", "sm0_prof"] {
        assert!(text.contains(&format!(" {inst}(.clock(clock), ")), "no instance {inst}");
    }
    assert!(!text.contains("sm2_"), "a third SM's blocks");
    // Every port of the top but the clock and reset is a block's, registered in its ring.
    let ports = mpgpu_tb::fpga::top_ports(&text.replacen(&format!("module {TOP}("), "module top(", 1)).unwrap();
    assert_eq!(ports.iter().filter(|p| p.name != "clock" && p.name != "reset").map(|p| p.width as u64).sum::<u64>(), bits);
    let path = root.join("controller.v");
    std::fs::write(&path, &text).unwrap();
    let (ok, log) = run(&root, "yosys", &["-q", "-p", &format!("read_verilog {}; hierarchy -check -top {TOP}; stat", path.display())]);
    assert!(ok, "yosys of the controller:\n{log}");
    // With --sharing its framework is the one built to share its SMs, and only that differs.
    let (shared, n, b) = verilog(&blocks, 15, &fermi, 2, true).unwrap();
    assert_eq!((n, b), (instances, bits));
    let on = |t: &str| t.matches("localparam  sh_on = 1'b1;").count();
    assert_eq!((on(&shared), on(&text)), (1, 0), "the framework built to share its SMs in the controller with sharing only");
}
