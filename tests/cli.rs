//! The command line, end to end.

use std::path::Path;
use std::process::Command;

fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mpgpu")).args(args).output().expect("run mpgpu");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn kernels_lists_the_library_with_footprints() {
    let (code, out, _) = mpgpu(&["kernels"]);
    assert_eq!(code, 0);
    for b in mpgpu_ref::library::library() {
        assert!(out.contains(b.name), "{} missing from:\n{out}", b.name);
    }
    assert!(out.contains("regs/t") && out.contains("smem/blk") && out.contains("thr/blk"));
}

#[test]
fn exec_runs_and_verifies_a_library_kernel() {
    let (code, out, err) = mpgpu(&["exec", "vecadd", "--size", "3000", "--seed", "5"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
    assert!(out.contains("warp-instructions"), "{out}");
}

#[test]
fn exec_rejects_unknown_kernels_and_bad_sizes() {
    let (code, _, err) = mpgpu(&["exec", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown kernel `nosuch`") && err.contains("vecadd"), "{err}");
    let (code, _, err) = mpgpu(&["exec", "vecadd", "--size", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("vecadd: --size 0"), "{err}");
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn asm_reports_errors_with_file_line_and_column() {
    let p = temp_file("bad.s", ".kernel k\n.regs 4\n.threads 32\n    add.u32 r1, r2, r7\n    exit\n");
    let (code, _, err) = mpgpu(&["asm", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.s:4:21: error: register r7 is outside the declared `.regs 4`"), "{err}");
    let (code, _, err) = mpgpu(&["asm", "/nonexistent/x.s"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read /nonexistent/x.s"), "{err}");
}

#[test]
fn asm_disassembles_a_good_file() {
    let p = temp_file("good.s", ".kernel k\n.regs 4\n.threads 32\nTOP:\n    add.u32 r1, r1, 1\n    setp.lt.u32 p0, r1, 4\n@p0 bra TOP\n    exit\n");
    let (code, out, _) = mpgpu(&["asm", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("kernel `k`: 4 instructions"), "{out}");
    let (code, out, _) = mpgpu(&["asm", "--disasm", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("@p0 bra TOP") && out.contains("TOP:"), "{out}");
}

#[test]
fn exec_file_runs_an_assembly_file_with_a_launch_spec() {
    let p = temp_file(
        "scale.s",
        ".kernel scale\n.regs 6\n.threads 64\n.params 12\n\
         mov.u32 r0, %ctaid.x\n mad.u32 r0, r0, %ntid.x, %tid.x\n ld.param.u32 r1, [8]\n\
         setp.ge.u32 p0, r0, r1\n@p0 exit\n shl.b32 r0, r0, 2\n ld.param.u32 r1, [0]\n add.u32 r1, r1, r0\n\
         ld.global.u32 r2, [r1]\n ld.param.u32 r3, [4]\n mul.u32 r2, r2, r3\n st.global.u32 [r1], r2\n exit\n",
    );
    let (code, out, err) = mpgpu(&["exec", "--file", p.to_str().unwrap(), "--grid", "2", "--param", "buf:100=seq", "--param", "3", "--param", "100", "--dump", "4"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0x00000000 0x00000003 0x00000006 0x00000009"), "{out}");
    // A fault is reported with its location, not a panic.
    // (the 100-word buffer's page holds 1024 words; thread 1024 is the first past it)
    let (code, _, err) = mpgpu(&["exec", "--file", p.to_str().unwrap(), "--grid", "20", "--param", "buf:100=seq", "--param", "3", "--param", "5000"]);
    assert_eq!(code, 2);
    assert!(err.contains("kernel `scale`, block (16,0,0), warp 0, lane 0") && err.contains("unmapped address"), "{err}");
    let (code, _, err) = mpgpu(&["exec", "--file", p.to_str().unwrap(), "--param", "buf:x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--param #1 `buf:x`"), "{err}");
}

#[test]
fn verilog_writes_ip_folders_under_target() {
    let (code, out, err) = mpgpu(&["verilog", "lowest_first"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("target/ip/lowest_first/ (mpgpu_lowest_first.v, mpgpu_lowest_first.vlt, files.f, mpgpu_lowest_first.core)"), "{out}");
    let (code, _, err) = mpgpu(&["verilog", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown block `nosuch`"), "{err}");
    // every block, with another prefix, the GPU-wide ones for 4 SMs (recorded in the header)
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-ip");
    let _ = std::fs::remove_dir_all(&out_dir);
    let (code, out, err) = mpgpu(&["verilog", "all", "--sms", "4", "--prefix", "acme_", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("wrote ")).count(), mpgpu_tb::registry::BLOCKS.len(), "{out}");
    let sched = std::fs::read_to_string(out_dir.join("sched/acme_sched.v")).unwrap();
    assert!(sched.contains("(`mpgpu verilog sched --sms 4 --prefix acme_`) for: SchedPorts { sms: 4, mode: Dss, sharing: false }"), "{}", &sched[..600]);
    assert!(sched.lines().any(|l| l.starts_with("module acme_sched(clock,reset,")));
    // each hosted block's folder carries a testbench of its own run (a part's does not), and
    // its core the simulation targets
    for b in mpgpu_tb::registry::BLOCKS {
        let (tb, core) = (out_dir.join(b.name).join(format!("tb/acme_{}_tb.v", b.name)), out_dir.join(b.name).join(format!("acme_{}.core", b.name)));
        let core = std::fs::read_to_string(core).unwrap();
        assert_eq!(tb.exists(), b.host.is_some(), "{}", b.name);
        assert_eq!(core.contains("  sim:\n") && core.contains("  sim_verilator:\n"), b.host.is_some(), "{}: {core}", b.name);
    }
    assert!(out.contains("acme_sched.core; the testbench replays "), "{out}");
    let (code, out, err) = mpgpu(&["verilog", "rq", "--no-testbench", "--out", out_dir.join("bare").to_str().unwrap()]);
    assert!(code == 0 && out.contains("rq/ (mpgpu_rq.v, mpgpu_rq.vlt, files.f, mpgpu_rq.core)\n"), "{out}{err}");
    // (written again without one, a folder loses the testbench it had)
    assert!(out_dir.join("rq/tb").exists());
    let (code, out, err) = mpgpu(&["verilog", "rq", "--no-testbench", "--prefix", "acme_", "--out", out_dir.to_str().unwrap()]);
    assert!(code == 0 && !out_dir.join("rq/tb").exists(), "{out}{err}");
    // where the block has no run of its own (the water-filling unit on HeteroCore's two kinds
    // of SM), the folder comes without a testbench, saying why; the framework has one there
    let (code, out, err) = mpgpu(&["verilog", "wf", "--config", "heterocore", "--out", out_dir.join("hc").to_str().unwrap()]);
    assert!(code == 0 && out.contains("wf/ (mpgpu_wf.v, mpgpu_wf.vlt, files.f, mpgpu_wf.core)\n") && err.contains("no testbench for `wf` in its folder: --unit wf needs identical SMs; `heterocore` has 2 kinds"), "{out}{err}");
    let (code, out, err) = mpgpu(&["verilog", "sched", "--config", "heterocore", "--out", out_dir.join("hc").to_str().unwrap()]);
    assert!(code == 0 && out.contains("sched/ (mpgpu_sched.v, mpgpu_sched.vlt, files.f, tb/mpgpu_sched_tb.v, tb/trace.hex, tb/trace.json, mpgpu_sched.core;"), "{out}{err}");
    // Zorua's tables generated for another SM (Kepler's 512 register sets), recorded in the
    // header; an SM the RTL cannot take (HeteroCore's big SM: 72 warp slots) is refused
    let (code, _, err) = mpgpu(&["verilog", "zorua", "--config", "kepler15", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let zorua = std::fs::read_to_string(out_dir.join("zorua/mpgpu_zorua.v")).unwrap();
    assert!(zorua.contains("(`mpgpu verilog zorua --config kepler15`) for: ZoruaPorts { params: ZoruaParams { slots: 64, reg_sets: 512, smem_sets: 48,"), "{}", &zorua[..600]);
    let (code, _, err) = mpgpu(&["verilog", "zorua", "--config", "heterocore", "--out", out_dir.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("block `zorua` for --config heterocore") && err.contains("warp slots is 72"), "{err}");
    // a trace recorded by `cosim --trace` packaged under another prefix
    let tr = out_dir.join("rq-trace");
    let (code, out, err) = mpgpu(&["cosim", "--unit", "rq", "--config", "thesis16", "--inject", "0.05", "--sms", "0", "--trace", tr.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = mpgpu(&["verilog", "rq", "--trace", tr.join("sm0").to_str().unwrap(), "--prefix", "acme_", "--out", out_dir.join("traced").to_str().unwrap()]);
    assert!(code == 0 && out.contains("tb/acme_rq_tb.v") && !out.contains("recording"), "{out}{err}");
    // a trace of another configuration is refused, naming it
    let (code, _, err) = mpgpu(&["verilog", "rq", "--trace", out_dir.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("--trace") && err.contains("trace.json"), "{err}");
    let (code, _, err) = mpgpu(&["verilog", "all", "--trace", "x"]);
    assert_ne!(code, 0);
    assert!(err.contains("--trace gives one block's recorded trace"), "{err}");
    let (code, _, err) = mpgpu(&["verilog", "rq", "--prefix", "9x"]);
    assert_ne!(code, 0);
    assert!(err.contains("--prefix `9x`: expected a letter"), "{err}");
}

/// `asm --place-phases` prints each kernel with the pass's phase specifiers, in a form that
/// assembles again, with a line comparing them to the file's.
#[test]
fn asm_places_phase_specifiers_and_prints_a_kernel_that_assembles() {
    let (code, out, err) = mpgpu(&["asm", "--place-phases", "kernels/reduction.s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("// kernel `reduce`: the file's specifiers [7,0 6,2048 4,0]; placed ["), "{out}");
    let k = mpgpu_ref::assemble_one("placed.s", &out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(k.phases().len() >= 2 && k.phases()[0].0 == 0, "{:?}", k.phases());
    let (code, _, err) = mpgpu(&["asm", "--place-phases", "--disasm", "kernels/reduction.s"]);
    assert_eq!(code, 2, "{err}");
    // (--renumber: lbm's peak phase asks for about the registers live in it, and the kernel
    // still assembles; without --place-phases it is refused)
    let peak = |args: &[&str]| {
        let (code, out, err) = mpgpu(args);
        assert_eq!(code, 0, "{out}{err}");
        let k = mpgpu_ref::assemble_one("placed.s", &out).unwrap_or_else(|e| panic!("{e}\n{out}"));
        k.phases().iter().map(|p| p.1).max().unwrap()
    };
    let (written, renumbered) = (peak(&["asm", "--place-phases", "kernels/lbm.s"]), peak(&["asm", "--place-phases", "--renumber", "kernels/lbm.s"]));
    assert!(written >= 40 && renumbered <= 24, "lbm's peak: {written} as written, {renumbered} renumbered");
    let (code, _, err) = mpgpu(&["asm", "--renumber", "kernels/lbm.s"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn sweep_runs_every_specification_under_each_scheme_and_writes_a_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let (code, out, err) = mpgpu(&["sweep", "spmv", "--regs", "14..22:8", "--threads", "64..128", "--size", "600", "--csv", csv.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all outputs verified: PASS") && out.contains("range"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    // header, 2 register counts x 3 block sizes x 3 schemes (block, wlm, zorua)
    assert_eq!(rows.len(), 1 + 2 * 3 * 3, "{text}");
    assert!(rows.iter().any(|r| r.starts_with("wlm,14,64,,true,")), "{text}");
    assert!(rows[0].starts_with("alloc,regs,threads,smem,fits,cycles,verified"));
    assert!(rows.iter().any(|r| r.starts_with("zorua,22,128,,true,")), "{text}");
    // a specification the application cannot take, and a malformed range
    let (code, _, err) = mpgpu(&["sweep", "sgemm", "--threads", "64..128"]);
    assert_eq!(code, 2);
    assert!(err.contains("fixed blocks of 256 threads"), "{err}");
    let (code, _, err) = mpgpu(&["sweep", "spmv", "--regs", "8..4"]);
    assert_eq!(code, 2);
    assert!(err.contains("A <= B"), "{err}");
    let (code, _, err) = mpgpu(&["sweep", "spmv", "--regs", "4..8"]);
    assert_eq!(code, 2);
    assert!(err.contains("--regs must be"), "{err}");
    // a plot of one dimension, the JSON of every point; a plot of two is refused
    let (svg, json) = (dir.path().join("s.svg"), dir.path().join("s.json"));
    let (code, out, err) = mpgpu(&["sweep", "spmv", "--threads", "64..128:64", "--size", "600", "--alloc", "block,zorua", "--csv", csv.to_str().unwrap(), "--svg", svg.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.contains("<svg") && plot.contains("threads per block") && plot.matches("<polyline").count() == 2, "{plot}");
    let points: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(points.as_array().unwrap().len(), 4);
    assert!(points[3]["zorua"]["grants"].as_u64().unwrap() > 0, "{points}");
    let (code, _, err) = mpgpu(&["sweep", "spmv", "--regs", "14..22:8", "--threads", "64..128", "--svg", svg.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("exactly one of"), "{err}");
}

/// `study` runs its grids on each configuration and writes the points, the summary (ranges,
/// speedups, porting, mechanism) and the plots; bad input is refused before anything runs.
#[test]
fn study_runs_the_grids_and_writes_the_summary_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("study");
    let (code, out, err) = mpgpu(&["study", "--apps", "reduction@20000,cutcp@32", "--configs", "fermi15,kepler15", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all outputs verified: PASS"), "{out}");
    let csv = std::fs::read_to_string(out_dir.join("points.csv")).unwrap();
    // header, (5 reduction + 9 cutcp specifications) x 3 schemes x 2 configurations
    assert_eq!(csv.lines().count(), 1 + 14 * 3 * 2, "{csv}");
    assert!(csv.lines().any(|r| r.starts_with("kepler15,cutcp,32,zorua,44,512,,true,")), "{csv}");
    let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    for want in ["| reduction | 5 |", "| cutcp |", "## Porting loss", "## Mechanism on fermi15", "| **mean** |"] {
        assert!(summary.contains(want), "{want}: {summary}");
    }
    let boxes = std::fs::read_to_string(out_dir.join("range-fermi15.svg")).unwrap();
    assert!(boxes.contains("<svg") && boxes.contains("cutcp") && boxes.matches("<rect").count() >= 2 * 3, "{boxes}");
    assert!(std::fs::read_to_string(out_dir.join("porting.svg")).unwrap().contains("<svg"));
    let (code, _, err) = mpgpu(&["study", "--apps", "nosuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("no application `nosuch`"), "{err}");
    let (code, _, err) = mpgpu(&["study", "--apps", "sad@x"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a whole number"), "{err}");
    let (code, _, err) = mpgpu(&["study", "--apps", "sad@100"]);
    assert_eq!(code, 2);
    assert!(err.contains("sad at"), "{err}");
}

/// A reader that stops early (`mpgpu kernels | head -1`) ends the program quietly: no panic.
#[test]
fn a_closed_pipe_ends_the_program_without_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mpgpu"))
        .args(["asm", "--disasm", "kernels/lbm.s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mpgpu");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn the_coordinator_timing_is_a_configuration_field_checked_by_name() {
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/sim-ref/configs/fermi15.toml")).unwrap();
    // (the pipelined timing is the default; the single-cycle one is asked for by name)
    let (code, out, err) = mpgpu(&["run", "--config", "fermi15", "--alloc", "zorua", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all outputs verified: PASS") && out.contains("cycles 289198"), "{out}");
    let single = temp_file("fermi15-single.toml", &format!("{base}\n[zorua]\ntiming = \"single-cycle\"\n"));
    let (code, out, err) = mpgpu(&["run", "--config", single.to_str().unwrap(), "--alloc", "zorua", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("all outputs verified: PASS") && out.contains("cycles 293122"), "{out}");
    let bad = temp_file("fermi15-bad-timing.toml", &format!("{base}\n[zorua]\ntiming = \"fast\"\n"));
    let (code, _, err) = mpgpu(&["run", "--config", bad.to_str().unwrap(), "--alloc", "zorua"]);
    assert_ne!(code, 0);
    assert!(err.contains("line") && err.contains("expected `single-cycle` or `pipelined`"), "{err}");
}

/// `mpgpu run --alloc zorua --policy P` runs the framework over Zorua's SMs with draining (the
/// default there), reports the SMs' room, and refuses context switching with the reason.
#[test]
fn the_framework_runs_over_zorua_with_draining_and_refuses_context_switching() {
    let w = temp_file(
        "zorua-fw.toml",
        "description = \"two kernels\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"sgemm\", size = 64, seed = 1 }]\n[[process]]\nname = \"b\"\nlaunches = [{ kernel = \"reduction\", size = 30000, seed = 2 }]\n",
    );
    let w = w.to_str().unwrap();
    let (code, out, err) = mpgpu(&["run", w, "--config", "fermi15", "--alloc", "zorua", "--policy", "dss", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("framework dss (Drain;") && out.contains("room from the SMs") && out.contains("all outputs verified: PASS"), "{out}");
    let (code, out, err) = mpgpu(&["run", w, "--config", "fermi15", "--alloc", "zorua", "--policy", "dss", "--preempt", "ctxsw", "--no-alone"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("--preempt drain") && err.contains("not context switching"), "{err}");
}

#[test]
fn cosim_runs_the_slice_table_under_a_chosen_policy_and_catches_its_broken_variant() {
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/slicing/mriq-histo.toml");
    let (code, out, err) = mpgpu(&["cosim", w, "--unit", "slice", "--slicing", "even"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("mismatches: 0") && out.contains("even slicing dispatcher") && out.contains("PASS"), "{out}");
    // The broken quota compare: a mismatch, exit code 1, no panic.
    let (code, out, err) = mpgpu(&["cosim", w, "--unit", "slice", "--slicing", "even", "--broken", "over-quota"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("mismatches: 1") && err.contains("mismatch at clocked cycle") && !err.contains("panicked"), "{out}{err}");
    // Bad combinations are refused with a message naming the flags.
    let (code, _, err) = mpgpu(&["cosim", w, "--unit", "wf", "--slicing", "even"]);
    assert!(code != 0 && err.contains("--unit wf runs under Warped-Slicer"), "{err}");
    let (code, _, err) = mpgpu(&["cosim", w, "--unit", "sched", "--slicing", "even"]);
    assert!(code != 0 && err.contains("--slicing picks the slicing policy of the units under the slicing dispatcher (wf, prof, slice)"), "{err}");
    let (code, _, err) = mpgpu(&["cosim", w, "--unit", "slice", "--broken", "tie-high"]);
    assert!(code != 0 && err.contains("not a variant of --unit"), "{err}");
    let (code, _, err) = mpgpu(&["cosim", w, "--unit", "slice", "--broken", "nosuch"]);
    assert!(code != 0 && err.contains("--broken nosuch: no block has that broken variant (--unit slice's variants: over-quota)"), "{err}");
}

/// `run --steer classified|stp-optimized|balanced` first runs each process alone (on the
/// conventional GPU and on 8 SMs of each kind), prints its class and IPCs, and steers from
/// them: blur (thick) takes the big SMs from stencil (lean) at cycle 0, with no profiling.
#[test]
fn run_steers_statically_from_each_processs_isolated_runs() {
    let w = temp_file("blur-stencil.toml", "description = \"blur + stencil\"\n[[process]]\nname = \"blur\"\nlaunches = [{ kernel = \"blur\", size = 262144, seed = 1 }]\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 48, seed = 1 }]\n");
    for policy in ["classified", "stp-optimized", "balanced"] {
        let (code, out, err) = mpgpu(&["run", w.to_str().unwrap(), "--config", "heterocore", "--steer", policy, "--jobs", "2"]);
        assert_eq!(code, 0, "{policy}: {out}{err}");
        assert!(out.contains("isolated: blur thick (IPC ") && out.contains("isolated: stencil lean (IPC "), "{policy}: {out}");
        assert!(out.contains(&format!("blocks scheduled by steer {policy}\n")) && out.contains(", 0 profiling phases (0 cycles);") && out.contains("\n  cycle 0: launch 0; launch 1 -> big SMs to launches [0]\n"), "{policy}: {out}");
        assert!(out.contains("all outputs verified: PASS"), "{out}");
    }
    // Inside the scheduling framework (--policy): the same decision once the framework has
    // admitted both launches.
    let (code, out, err) = mpgpu(&["run", w.to_str().unwrap(), "--config", "heterocore", "--policy", "fcfs", "--steer", "classified", "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("blocks scheduled by framework fcfs, steer classified inside it") && out.contains(": launch 0; launch 1 -> big SMs to launches [0]\n") && out.contains("all outputs verified: PASS"), "{out}");
}

/// `asm --cap` places each kernel under a register cap (docs/unified.md) and prints a line per
/// kernel, or with --disasm a kernel that assembles again within the cap; a cap too small for
/// the spill code itself is refused with the kernel named.
#[test]
fn asm_places_a_kernel_under_a_register_cap() {
    let (code, out, err) = mpgpu(&["asm", "--cap", "12", "--slots", "4", "kernels/sgemm.s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("kernel `sgemm`: demand 26 registers; under a cap of 12 with 4 shared slots: 12 registers"), "{out}");
    let (code, out, err) = mpgpu(&["asm", "--cap", "12", "--slots", "4", "--disasm", "kernels/sgemm.s"]);
    assert_eq!(code, 0, "{out}{err}");
    let k = mpgpu_ref::assemble_one("capped.s", &out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(k.regs <= 12 && k.shared_bytes == 2048 + 4 * 4 * 256 && k.local_bytes > 0, "{} regs, {} B shared, {} B local", k.regs, k.shared_bytes, k.local_bytes);
    let (code, _, err) = mpgpu(&["asm", "--cap", "1", "kernels/vecadd.s"]);
    assert_ne!(code, 0);
    assert!(err.contains("kernel `vecadd`: a cap of 1 register(s) is too few for the spill code"), "{err}");
    let (code, _, err) = mpgpu(&["asm", "--slots", "4", "kernels/vecadd.s"]);
    assert_eq!(code, 2, "{err}");
}

/// `asm --auto CONFIG` prints the concurrency search level by level and its choice (the
/// library's sgemm stays as written: CI_pred fails at the first level); a bad configuration
/// is named.
#[test]
fn asm_runs_the_concurrency_search() {
    let (code, out, err) = mpgpu(&["asm", "--auto", "gtx480", "kernels/sgemm.s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("kernel `sgemm`: demand 26 registers, AD_int") && out.contains("CI_pred") && out.contains("chosen: as written (no level above the original concurrency passes CI_pred)"), "{out}");
    let (code, out, err) = mpgpu(&["asm", "--auto", "gtx480", "kernels/vecadd.s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("chosen: as written (registers do not limit its occupancy"), "{out}");
    let (code, _, err) = mpgpu(&["asm", "--auto", "nosuch", "kernels/vecadd.s"]);
    assert_ne!(code, 0);
    assert!(err.contains("--auto: ") && err.contains("nosuch"), "{err}");
}
