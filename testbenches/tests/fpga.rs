//! The FPGA flow (`docs/fpga.md`): every block synthesizes for the ECP5, Xilinx 7-series and
//! iCE40, the framework's PTBQs in block RAM; the small blocks place and route on the LFE5U-85F
//! at 100 MHz or more; the ECP5 netlists of the DSS engine and of the whole framework replay a co-simulation
//! trace in Icarus with yosys's cell models, and an edited expected value is caught there; so
//! does the replay queue's, with its distributed RAM, on one SM's trace.
//!
//! The tools are installed under `target/fpga-venv` on first use (`Tools::ensure`). Place and
//! route of the whole framework takes minutes and runs only when asked:
//! `cargo test --release -p mpgpu-tb --test fpga -- --ignored`.

use mpgpu_ref::config::{FaultScheme, GpuConfig};
use mpgpu_ref::slots::SmSet;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use mpgpu_tb::registry::{block, BLOCKS};
use mpgpu_tb::cosim::{run_with, CosimOptions, UnitKind};
use mpgpu_tb::fpga::{self, default_venv, gate_replay, io_ring, path_estimate, place_and_route, synthesize, synthesize_ring, top_ports, Family, Tools};
use mpgpu_tb::trace::Replay;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

mod common;
use common::{edit, TWO};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fpga").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The tools, installed once for all tests of this binary.
fn tools() -> Tools {
    static T: OnceLock<Mutex<Option<Tools>>> = OnceLock::new();
    let m = T.get_or_init(|| Mutex::new(None));
    let mut g = m.lock().unwrap();
    if g.is_none() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        *g = Some(Tools::ensure(&default_venv(root), |m| eprintln!("{m}")).expect("cannot install the FPGA tools"));
    }
    g.clone().unwrap()
}

fn write_block(d: &Path, name: &str) -> PathBuf {
    let p = d.join(format!("{name}.v"));
    std::fs::write(&p, block(name).unwrap().verilog_sized(16).unwrap().verilog).unwrap();
    p
}

/// A copy of a trace directory (trace, description, Verilog) for editing.
fn copy_trace(from: &Path, name: &str) -> PathBuf {
    let to = dir(name);
    for f in ["trace.hex".to_string(), "trace.json".to_string(), format!("{}.v", mpgpu_tb::trace::read(from).unwrap().module)] {
        std::fs::copy(from.join(&f), to.join(&f)).unwrap();
    }
    to
}

#[test]
fn the_port_list_and_io_ring_follow_the_generated_verilog() {
    let v = block("dss").unwrap().verilog_sized(16).unwrap().verilog;
    let ports = top_ports(&v).unwrap();
    let find = |n: &str| ports.iter().find(|p| p.name == n).cloned().unwrap();
    assert_eq!((find("k_count").width, find("k_count").input), (8, true));
    assert_eq!((find("act_sm").width, find("act_sm").input), (4, false));
    assert_eq!(find("trigger").width, 1);
    assert_eq!(ports.len(), 19);
    let ring = io_ring(&ports);
    assert!(ring.contains("always @(posedge clock) k_count_q <= k_count;"), "{ring}");
    assert!(ring.contains("always @(posedge clock) act_sm <= act_sm_d;"), "{ring}");
    assert!(top_ports("module other(a);").is_err());
}

#[test]
fn a_nextpnr_report_is_read() {
    let text = r#"{"critical_paths":[{"from":"posedge clock","to":"posedge clock","path":[
        {"delay":0.5,"from":{"cell":"a","loc":[1,1],"port":"Q"},"to":{"cell":"a","loc":[1,1],"port":"Q"},"type":"clk-to-q"},
        {"delay":2.0,"from":{"cell":"a","loc":[1,1],"port":"Q"},"to":{"cell":"b","loc":[2,2],"port":"DI"},"type":"routing"}]}],
        "fmax":{"clock":{"achieved":123.5,"constraint":100}},
        "utilization":{"TRELLIS_COMB":{"available":83640,"used":234},"DP16KD":{"available":208,"used":2}}}"#;
    let r = fpga::parse_pnr_report(text).unwrap();
    assert_eq!(r.fmax_mhz, Some(123.5));
    assert_eq!(r.used("TRELLIS_COMB"), 234);
    assert_eq!(r.used("DP16KD"), 2);
    assert_eq!(r.critical_path.last().unwrap().0, "b.DI");
    assert!(fpga::parse_pnr_report("{").is_err());
}

/// The memory bits `mpgpu fpga --gpu` counts as state are the tables the docs give
/// (`docs/fpga.md`, "Against the storage the papers give"), and a module instantiated twice
/// (which rust-hdl never writes) is refused rather than miscounted.
#[test]
fn memory_bits_are_the_declared_tables() {
    let bits = |name: &str| mpgpu_tb::ip::memory_bits(&block(name).unwrap().verilog_sized(16).unwrap().verilog).unwrap();
    // 16 register-mapping RAMs of 64 x 10 bits and 64 scratchpad-mapping RAMs of 16 x 7 bits.
    assert_eq!(bits("zorua"), 16 * 64 * 10 + 64 * 16 * 7);
    // The PTBQs: 16 queues of 256 entries of 28 bits, in one RAM.
    assert_eq!(bits("sched"), 16 * 256 * 28);
    // 32 lane RAMs of 64 entries of 32 bits.
    assert_eq!(bits("oldata"), 32 * 64 * 32);
    let twice = "module top(clock);\n  input wire clock;\n  top$a a(\n  );\n  top$a b(\n  );\nendmodule\nmodule top$a(clock);\n  reg [3:0] m [0:15];\nendmodule\n";
    assert!(mpgpu_tb::ip::memory_bits(twice).unwrap_err().contains("instantiated 2 times"));
    assert_eq!(mpgpu_tb::ip::memory_bits(&twice.replace("  top$a b(\n  );\n", "")).unwrap(), 64);
}

/// A block's cost for the whole GPU's table (`mpgpu fpga --gpu`): synthesized once, then read
/// from the cache for the same Verilog; the blocks a GPU carries are those that are not parts.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn a_blocks_cost_is_synthesized_once_and_cached() {
    use mpgpu_tb::gpu_cost::{block_cost, gpu_blocks};
    let names: Vec<&str> = gpu_blocks(BLOCKS).iter().map(|b| b.name).collect();
    assert_eq!(names, ["sched", "wf", "slice", "oplog", "oldata", "rq", "zorua", "prof"]);
    let t = tools();
    let d = dir("gpu-cost");
    let _ = std::fs::remove_dir_all(&d);
    let mut said = Vec::new();
    let fermi = mpgpu_ref::config::GpuConfig::preset("fermi15").unwrap();
    let prof = block("prof").unwrap().verilog_for(15, &fermi).unwrap().verilog;
    let c = block_cost(&t, block("prof").unwrap(), 15, &prof, &d, None, |m| said.push(m.to_string())).unwrap();
    assert!(said.iter().any(|m| m.contains("synthesizing prof")), "{said:?}");
    // One SM's sampling counters: registers, no memory.
    assert!(c.lut4() > 0 && c.ff() > 0 && c.memory_bits == 0 && c.bram_bits() == 0, "{c:?}");
    assert_eq!(c.storage_bytes(), c.ff() as f64 / 8.0);
    let again = block_cost(&t, block("prof").unwrap(), 15, &prof, &d, None, |m| panic!("not cached: {m}")).unwrap();
    assert_eq!(again.synth.cells, c.synth.cells);
}

/// Every block of a Fermi GPU synthesized for its cost table (`mpgpu fpga --gpu fermi15
/// --synth-only`): Zorua's state is its mapping tables (1.88 KB in the paper) and its
/// coordinator's flip-flops, in distributed RAM; the framework's PTBQs in block RAM.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn every_block_of_a_fermi_gpu_has_its_cost() {
    use mpgpu_tb::gpu_cost::{block_cost, gpu_blocks, DP16KD_BITS};
    let t = tools();
    let d = dir("gpu-cost-fermi");
    let fermi = mpgpu_ref::config::GpuConfig::preset("fermi15").unwrap();
    for b in gpu_blocks(BLOCKS) {
        let c = block_cost(&t, b, 15, &b.verilog_for(15, &fermi).unwrap().verilog, &d, None, |m| eprintln!("{m}")).unwrap();
        eprintln!("{}: {} LUT4, {} FF, {} memory bits", b.name, c.lut4(), c.ff(), c.memory_bits);
        assert!(c.lut4() > 0 && c.storage_bytes() > 0.0, "{c:?}");
        match b.name {
            // (the tables as `memory_bits_are_the_declared_tables` has them: Zorua's RTL keeps
            // its largest geometry's tables on every SM)
            "zorua" => assert!(c.memory_bits == 16 * 64 * 10 + 64 * 16 * 7 && c.dist_ram_bits() >= c.memory_bits && c.bram_bits() == 0, "{c:?}"),
            "sched" => {
                assert_eq!(c.bram_bits(), 7 * DP16KD_BITS, "{c:?}");
                // Built without sharing, the framework carries none of `Share` (its handover
                // masked by the constant, synthesis removes it all: 12,924 LUT4 rather than
                // 17,038 with a handover term left unmasked).
                let net = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with("sched-")).unwrap().join("ecp5.json");
                let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&net).unwrap()).unwrap();
                let cells = json["modules"]["top"]["cells"].as_object().unwrap();
                let share: Vec<&String> = cells.iter().filter(|(k, v)| k.starts_with("share.") && v["type"] != "$scopeinfo").map(|(k, _)| k).collect();
                assert!(share.is_empty(), "{}: {} cells of `Share` in the framework built without sharing ({:?} ...)", net.display(), share.len(), &share[..share.len().min(3)]);
            }
            _ => {}
        }
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn every_block_synthesizes_for_every_family() {
    let t = tools();
    for block in BLOCKS.iter().map(|b| b.name) {
        if block == "zorua" {
            // (Zorua's coordinator takes minutes per family: `mpgpu fpga zorua` measures it,
            // docs/zorua.md; the test suite lints its Verilog with yosys, Icarus and Verilator)
            continue;
        }
        let d = dir(&format!("synth-{block}"));
        let v = write_block(&d, block);
        let families = [Family::Ecp5, Family::Xilinx7, Family::Ice40];
        for f in families {
            let r = synthesize(&t, &v, f, &d).unwrap();
            eprintln!("{block} {}: {:?} in {:.1} s", f.name(), r.groups, r.seconds);
            if block == "oldata" {
                // The operand log's data array is its RAMs and an address select: 32 lane RAMs
                // of 64 x 32 bits, each one DP16KD on the ECP5 (its read register inside the
                // RAM and cleared at configuration, so no flip-flop), two 256 x 16 SB_RAM40_4K
                // on the iCE40 (whose read register yosys cannot start at zero: a flip-flop
                // marks the first cycle and LUTs hold the outputs at zero until then); the
                // 7-series maps 64-word RAMs to LUT RAM with the read register in flip-flops.
                assert!(r.group("lut") > 0, "{block} {}: {:?}", f.name(), r.cells);
                match f {
                    Family::Ecp5 => assert_eq!((r.cells.get("DP16KD").copied(), r.group("ff"), r.group("dist_ram")), (Some(32), 0, 0), "{:?}", r.cells),
                    Family::Ice40 => assert_eq!((r.cells.get("SB_RAM40_4K").copied(), r.group("dist_ram")), (Some(64), 0), "{:?}", r.cells),
                    Family::Xilinx7 => assert!(r.group("dist_ram") > 0 && r.group("ff") == 32 * 32, "{:?}", r.cells),
                }
                assert_eq!(r.group("other"), 0, "{block} {}: unexpected cells {:?}", f.name(), r.cells);
                continue;
            }
            assert!(r.group("lut") > 0 && r.group("ff") > 0, "{block} {}: {:?}", f.name(), r.cells);
            assert_eq!(r.group("other"), 0, "{block} {}: unexpected cells {:?}", f.name(), r.cells);
            if block == "sched" {
                // The PTBQs (16 queues of 256 entries of 28 bits: block index and save slot) in
                // block RAM: seven DP16KD (4096 x 4 bits each) on the ECP5, no distributed RAM.
                let want = match f {
                    Family::Ecp5 => ("DP16KD", 7),
                    Family::Xilinx7 => ("RAMB18E1", 7),
                    Family::Ice40 => ("SB_RAM40_4K", 28),
                };
                assert_eq!(r.cells.get(want.0).copied(), Some(want.1), "the PTBQ RAM: {:?}", r.cells);
                assert_eq!(r.group("dist_ram"), 0, "{:?}", r.cells);
            }
        }
    }
}

/// The blocks that route in seconds, the replay queue among them (one SM's, 1,228 logic
/// cells with its ring), each at 100 MHz or more.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_small_blocks_place_and_route_at_100_mhz_in_their_io_ring() {
    let t = tools();
    for block in ["lowest_first", "dss", "prio", "rq", "oplog", "oldata"] {
        let d = dir(&format!("pnr-{block}"));
        let v = write_block(&d, block);
        let ring = synthesize_ring(&t, &v, &d).unwrap();
        assert!(ring > 0);
        // the estimate before place and route ranks every register-to-register path family,
        // worst first
        let est = path_estimate(&std::fs::read_to_string(d.join("ecp5.json")).unwrap(), "mpgpu_io_ring", 0.0).unwrap();
        assert!(!est.is_empty() && est.windows(2).all(|w| w[0].ns >= w[1].ns), "{block}: {est:?}");
        assert!(est.iter().all(|f| f.ns < 11.0), "{block}: {:?}", est.first());
        let r = place_and_route(&t, &d, 1, 100.0).unwrap();
        eprintln!("{block}: Fmax {:?} MHz, {} logic cells, {} s", r.fmax_mhz, r.used("TRELLIS_COMB"), r.seconds);
        let f = r.fmax_mhz.expect("no timed path");
        assert!(f >= 100.0, "{block}: Fmax {f:.1} MHz; critical path {:?}", r.critical_path);
        assert!(r.used("TRELLIS_FF") as u64 >= ring);
    }
}

/// Records a co-simulation trace of `unit` under `policy` on the two-process workload.
fn record(name: &str, unit: UnitKind, policy: Policy) -> (PathBuf, u64) {
    record_on(name, unit, policy, TWO)
}

/// [`record`] on a workload of its own.
fn record_on(name: &str, unit: UnitKind, policy: Policy, workload: &str) -> (PathBuf, u64) {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", workload).unwrap();
    let d = dir(name);
    let o = CosimOptions { unit, trace: Some(d.clone()), mismatch_vcd: d.join("unused.vcd"), ..CosimOptions::new(policy, Mechanism::ContextSwitch) };
    let rep = run_with(&cfg, &w, &o).unwrap();
    assert!(rep.mismatch.is_none());
    (d, rep.cycles_checked)
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_dss_engines_ecp5_netlist_replays_its_trace_and_an_edited_value_is_caught() {
    let t = tools();
    let (d, cycles) = record("gate-dss", UnitKind::named("engine").unwrap(), Policy::Dss);
    let (r, synth) = gate_replay(&t, &d).unwrap();
    assert_eq!(r, Replay::Pass { cycles });
    assert!(synth.group("lut") > 0);
    // The netlist is mapped cells, not the RTL: no behavioural always blocks of the block.
    let gate = std::fs::read_to_string(d.join("gate").join("gate.v")).unwrap();
    assert!(gate.contains("TRELLIS_FF") && gate.contains("LUT4"));
    // Change the expected scan address of a busy cycle.
    let info = mpgpu_tb::trace::read(&d).unwrap();
    let field = |port: &str| info.expected_field(port).unwrap();
    let text = std::fs::read_to_string(d.join("trace.hex")).unwrap();
    let at = text.lines().position(|l| l.split_whitespace().nth(field("busy")) == Some("1")).expect("the engine never ran");
    let bad = copy_trace(&d, "gate-dss-edited");
    edit(&bad.join("trace.hex"), at, field("next_addr"), |a| a ^ 1);
    match gate_replay(&t, &bad).unwrap().0 {
        Replay::Mismatch { cycle, port, .. } => assert_eq!((cycle, port.as_str()), (at as u64, "next_addr")),
        r => panic!("the edited trace replayed as {r:?}"),
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_frameworks_ecp5_netlist_replays_its_trace_and_an_edited_value_is_caught() {
    let t = tools();
    // (A larger sgemm than `TWO`'s: restores then pop queues deep enough that their entries come
    // from the block RAM, not only from the write register's bypass, which serves an entry
    // pushed the cycle before; with `TWO` every RAM-sourced entry is bypassed, as corrupting the
    // RAM's reads in the rust-hdl simulation shows.)
    let two_deep = TWO.replace("size = 96", "size = 128");
    let (d, cycles) = record_on("gate-sched", UnitKind::named("sched").unwrap(), Policy::PpqExclusive, &two_deep);
    let (r, _) = gate_replay(&t, &d).unwrap();
    assert_eq!(r, Replay::Pass { cycles });
    // Record: GPU cycle, the inputs, the expected outputs, care (the trace's description
    // lists the ports). Change the expected block of an issue.
    let info = mpgpu_tb::trace::read(&d).unwrap();
    let field = |port: &str| info.expected_field(port).unwrap();
    let text = std::fs::read_to_string(d.join("trace.hex")).unwrap();
    let at = text.lines().position(|l| l.split_whitespace().nth(field("issue_valid")) == Some("1")).expect("no block issued in the trace");
    let bad = copy_trace(&d, "gate-sched-edited");
    edit(&bad.join("trace.hex"), at, field("issue_tb"), |tb| tb ^ 1);
    // The netlist of the copy is the same block's: reuse it rather than synthesize again.
    std::fs::create_dir_all(bad.join("gate")).unwrap();
    for f in ["gate.v", "ecp5_cells.v"] {
        std::fs::copy(d.join("gate").join(f), bad.join("gate").join(f)).unwrap();
    }
    let files = [bad.join("gate").join("gate.v"), bad.join("gate").join("ecp5_cells.v")];
    match mpgpu_tb::trace::replay_on(&bad, &[files[0].as_path(), files[1].as_path()], "gate").unwrap() {
        Replay::Mismatch { cycle, port, .. } => assert_eq!((cycle, port.as_str()), (at as u64, "issue_tb")),
        r => panic!("the edited trace replayed as {r:?}"),
    }
    // The trace exercises the block RAM: a DP16KD model whose reads are wrong in one bit fails
    // the original trace (at a restore of a preempted block).
    let cells = std::fs::read_to_string(&files[1]).unwrap();
    let broken = cells.replace("else doB_q <= mem[waB];", "else doB_q <= mem[waB] ^ 18'b1;");
    assert_ne!(broken, cells, "the DP16KD model's read is not where the test expects it");
    let wrong_ram = copy_trace(&d, "gate-sched-wrong-ram");
    let model = wrong_ram.join("cells.v");
    std::fs::write(&model, broken).unwrap();
    match mpgpu_tb::trace::replay_on(&wrong_ram, &[files[0].as_path(), model.as_path()], "gate").unwrap() {
        Replay::Mismatch { port, .. } => assert_eq!(port, "issue_tb"),
        r => panic!("a wrong block RAM replayed as {r:?}"),
    }
}

/// The replay queue's ECP5 netlist, with its tables in distributed RAM (TRELLIS_DPR16X4 cells
/// and their zero initial values), replays one SM's trace under injected faults; the trace
/// exercises those cells: a cell model that writes one bit wrong fails it on a read-port output.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_replay_queues_ecp5_netlist_replays_an_sms_trace_and_a_wrong_distributed_ram_is_caught() {
    let t = tools();
    let mut cfg = GpuConfig::preset("thesis16").unwrap();
    cfg.faults = FaultScheme::Rq;
    cfg.inject.rate = 0.05;
    cfg.inject.seed = 5;
    cfg.validate().unwrap();
    let w = Workload::parse("lbm.toml", "description = \"lbm\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 3 }]\n").unwrap();
    let d = dir("gate-rq");
    let mut o = CosimOptions::new(Policy::Fcfs, Mechanism::ContextSwitch);
    o.unit = UnitKind::named("rq").unwrap();
    o.sms = SmSet::parse("0", 16).unwrap();
    o.trace = Some(d.clone());
    o.mismatch_vcd = d.join("unused.vcd");
    let rep = run_with(&cfg, &w, &o).unwrap();
    assert!(rep.mismatch.is_none());
    assert!(rep.result.as_ref().unwrap().sm.replayed > 0, "no replay in the traced run");
    let sm0 = d.join("sm0");
    let (r, synth) = gate_replay(&t, &sm0).unwrap();
    assert_eq!(r, Replay::Pass { cycles: rep.cycles_checked });
    assert_eq!(synth.group("dist_ram"), 184, "the warp, lanes, info and age tables as distributed RAM");
    let gate = sm0.join("gate");
    let cells = std::fs::read_to_string(gate.join("ecp5_cells.v")).unwrap();
    let broken = cells.replacen("mem[WAD] <= DI;", "mem[WAD] <= DI ^ 4'b1;", 1);
    assert_ne!(broken, cells, "the TRELLIS_DPR16X4 model's write is not where the test expects it");
    let wrong_ram = copy_trace(&sm0, "gate-rq-wrong-ram");
    let model = wrong_ram.join("cells.v");
    std::fs::write(&model, broken).unwrap();
    match mpgpu_tb::trace::replay_on(&wrong_ram, &[gate.join("gate.v").as_path(), model.as_path()], "gate").unwrap() {
        Replay::Mismatch { port, .. } => assert!(port.starts_with("rd_"), "a wrong distributed RAM caught on {port}"),
        r => panic!("a wrong distributed RAM replayed as {r:?}"),
    }
}

/// `block` (at 16 SMs and its default configuration) placed and routed on the LFE5U-85F at
/// the flow's seed meets 100 MHz.
fn routes_at_100_mhz(block: &str) {
    let t = tools();
    let d = dir(&format!("pnr-{block}"));
    let v = write_block(&d, block);
    synthesize_ring(&t, &v, &d).unwrap();
    let r = place_and_route(&t, &d, 1, 100.0).unwrap();
    eprintln!("{block}: Fmax {:?} MHz, {:?}, {:.0} s", r.fmax_mhz, r.utilization.iter().filter(|u| u.1 .0 > 0).collect::<Vec<_>>(), r.seconds);
    assert!(r.fmax_mhz.unwrap_or(0.0) >= 100.0, "{block}: Fmax {:?} MHz; critical path {:?}", r.fmax_mhz, r.critical_path);
}

/// Zorua's coordinator (generated for `fermi15`'s SM, the block's default) placed and routed
/// on the LFE5U-85F at 100 MHz (minutes).
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn zoruas_coordinator_places_and_routes_at_100_mhz() {
    routes_at_100_mhz("zorua");
}

/// The whole framework placed and routed on the LFE5U-85F at 100 MHz (minutes).
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_framework_places_and_routes_at_100_mhz() {
    routes_at_100_mhz("sched");
}
