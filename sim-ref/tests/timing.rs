//! The timing model: calibration against the machine's bounds, occupancy, multiprogramming
//! metrics, determinism, block capture and restore, and timing with data.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::func::Launch;
use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::timing::metrics::metrics;
use mpgpu_ref::timing::context::send_lines;
use mpgpu_ref::timing::memsys::{MemSys, ReqKind};
use mpgpu_ref::timing::sm::{Sm, CONTEXT_TAG};
use mpgpu_ref::workload::{ProcessSpec, Workload};
use mpgpu_ref::{assemble_one, library};
use std::sync::Arc;

fn run(cfg: &GpuConfig, w: &Workload) -> RunResult {
    let mut g = Gpu::new(cfg);
    g.add_workload(w).unwrap();
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    g.result()
}

fn workload(text: &str) -> Workload {
    Workload::parse("test.toml", text).unwrap_or_else(|e| panic!("{e}"))
}

/// One custom kernel as a one-launch program whose output is `words` words at param 0.
fn custom(src: &str, blocks: u32, words: usize, expect: Vec<u32>) -> Box<dyn Program> {
    let k = Arc::new(assemble_one("custom.s", src).unwrap_or_else(|e| panic!("{e}")));
    Box::new(StaticProgram::new(move |mem| {
        let out = mem.alloc(4 * words as u32);
        let l = Launch::linear(&k, blocks, vec![out]);
        (vec![l], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(expect) }])
    }))
}

fn run_custom(cfg: &GpuConfig, p: Box<dyn Program>) -> RunResult {
    let mut g = Gpu::new(cfg);
    g.add_process("p", 0, 0, vec![("custom".into(), p)]);
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = g.result();
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
    r
}

#[test]
fn compute_bound_kernel_reaches_the_issue_width_bound() {
    // Independent ALU work in four chains per thread; 16 SMs x 6 blocks x 8 warps fill every
    // warp slot of gtx480, so the issue width (2 schedulers x 16 SMs) is the bound.
    let iters = 400;
    let src = format!(
        ".kernel alu\n.regs 12\n.threads 256\n.params 4\n\
         mov.u32 r0, 0\n mov.u32 r1, 1\n mov.u32 r2, 2\n mov.u32 r3, 3\n mov.u32 r4, 0\n\
         LOOP:\n{}\
         add.u32 r4, r4, 1\n setp.lt.u32 p0, r4, {iters}\n@p0 bra LOOP\n\
         add.u32 r0, r0, r1\n add.u32 r0, r0, r2\n add.u32 r0, r0, r3\n\
         mov.u32 r5, %ctaid.x\n mad.u32 r5, r5, %ntid.x, %tid.x\n shl.b32 r5, r5, 2\n ld.param.u32 r6, [0]\n add.u32 r6, r6, r5\n\
         st.global.u32 [r6], r0\n exit\n",
        "  add.u32 r0, r0, 3\n  add.u32 r1, r1, 5\n  add.u32 r2, r2, 7\n  add.u32 r3, r3, 9\n".repeat(4)
    );
    let n = 96 * 256;
    let per = |s: u32, k: u32| s + k * iters * 4;
    let expect = vec![per(0, 3).wrapping_add(per(1, 5)).wrapping_add(per(2, 7)).wrapping_add(per(3, 9)); n];
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let r = run_custom(&cfg, custom(&src, 96, n, expect));
    let bound = (cfg.sm[0].schedulers * cfg.num_sms()) as f64;
    let ipc = r.ipc;
    eprintln!("compute-bound: IPC {ipc:.2} of an issue-width bound of {bound}");
    assert!(ipc <= bound, "IPC {ipc} above the issue-width bound {bound}");
    assert!(ipc >= 0.9 * bound, "IPC {ipc} is not within 10% of the issue-width bound {bound}");
}

/// vecadd at `size` on `cfg`: the DRAM utilisation.
fn streaming(cfg: &GpuConfig, size: u32) -> RunResult {
    let w = workload(&format!("description = \"stream\"\n[[process]]\nname = \"v\"\nlaunches = [{{ kernel = \"vecadd\", size = {size} }}]\n"));
    run(cfg, &w)
}

#[test]
fn streaming_kernel_reaches_most_of_the_dram_bandwidth() {
    for name in ["gtx480", "k20c"] {
        let cfg = GpuConfig::preset(name).unwrap();
        let r = streaming(&cfg, 1 << 21);
        assert!(r.processes[0].verified);
        let u = r.dram_utilisation;
        eprintln!("{name}: streaming vecadd uses {:.1}% of the DRAM bandwidth", 100.0 * u);
        assert!(u <= 1.0, "{name}: DRAM utilisation {u} above 100%");
        assert!(u >= 0.7, "{name}: streaming reaches only {:.1}% of the DRAM bandwidth", 100.0 * u);
    }
}

#[test]
fn memory_bound_ipc_rises_with_resident_warps_and_saturates() {
    // Six SMs share the whole DRAM bandwidth, so latency, not bandwidth, limits them until
    // enough warps are resident; vecadd has 8 warps per block.
    let mut ipcs = Vec::new();
    for blocks in [1u32, 2, 3, 4, 6] {
        let mut cfg = GpuConfig::preset("gtx480").unwrap();
        cfg.sm[0].count = 6;
        cfg.sm[0].blocks = blocks;
        let r = streaming(&cfg, 1 << 18);
        ipcs.push(r.ipc);
    }
    for w in ipcs.windows(2) {
        assert!(w[1] >= w[0] * 0.98, "IPC fell with more warps: {ipcs:?}");
    }
    eprintln!("vecadd IPC by resident blocks (8 warps each): {ipcs:?}");
    assert!(ipcs[1] > 1.3 * ipcs[0], "no latency hiding from 8 to 16 warps: {ipcs:?}");
    // Saturation: the last step adds far less than the first.
    let first = ipcs[1] / ipcs[0];
    let last = ipcs[4] / ipcs[3];
    assert!(last < 1.0 + (first - 1.0) / 3.0, "no saturation: {ipcs:?}");
}

#[test]
fn occupancy_equals_the_rule_for_every_kernel_on_every_preset() {
    for (name, _) in mpgpu_ref::config::PRESETS {
        let cfg = GpuConfig::preset(name).unwrap();
        for g in &cfg.sm {
            for b in library::library() {
                for k in b.kernels().unwrap().0 {
                    let occ = g.occupancy(&k.footprint());
                    // What the SM admits (its admission unit), a block a cycle.
                    let mut sm = Sm::new(0, g);
                    let launch = Launch::linear(&k, 1000, vec![0; (k.param_bytes / 4) as usize]);
                    let info = Arc::new(mpgpu_ref::timing::sm::LaunchInfo { id: 0, process: 0, timing: mpgpu_ref::timing::sm::KernelTiming::new(&launch.kernel), launch });
                    let mut n = 0;
                    while sm.fits(&info.launch) {
                        sm.place_block(n as u64, &info, n as u64);
                        n += 1;
                        assert!(!sm.fits(&info.launch), "{name}: a second block in one cycle");
                        assert_eq!(sm.unit_edges(n as u64), None);
                    }
                    assert_eq!(n, occ.blocks, "{name}: {} admits {n} blocks, the rule says {} ({:?})", k.name, occ.blocks, occ.limiter);
                    assert!(n >= 1, "{name}: {} does not fit at all", k.name);
                }
            }
        }
    }
}

#[test]
fn k20c_rule_matches_thesis_table_5_2() {
    // (kernel, regs per block, shared per block, threads per block where the thesis implies
    // them, blocks per SM in Table 5.2)
    let rows: [(&str, u32, u32, u32, u32); 24] = [
        ("StreamCollide", 4320, 0, 128, 15),
        ("histo final", 19456, 0, 128, 3),
        ("histo prescan", 9216, 4096, 128, 4),
        ("histo intermediates", 8964, 0, 512, 4),
        ("histo main", 16896, 24576, 128, 1),
        ("genhists", 7680, 13312, 128, 1),
        ("spmvjds", 928, 0, 128, 16),
        ("ComputeQ", 5376, 0, 256, 8),
        ("ComputePhiMag", 6144, 0, 512, 4),
        ("largersadcalc8", 3328, 0, 128, 16),
        ("largersadcalc16", 832, 0, 128, 16),
        ("mbsadcalc", 2135, 2224, 128, 7),
        ("mysgemmNT", 4480, 512, 128, 14),
        ("block2Dregtiling", 41984, 0, 128, 1),
        ("lattice6overlap", 3328, 4116, 128, 3),
        ("binning", 4096, 0, 512, 4),
        ("scaninter1", 1173, 665, 128, 16),
        ("scanL1", 9216, 4368, 128, 3),
        ("uniformAdd", 4096, 16, 512, 4),
        ("reorder", 8192, 0, 512, 4),
        ("splitSort", 10240, 4484, 128, 3),
        ("griddingGPU", 3648, 1536, 128, 10),
        ("splitRearrange", 5888, 4160, 128, 3),
        ("scaninter2", 1173, 665, 128, 16),
    ];
    let cfg = GpuConfig::preset("k20c").unwrap();
    let g = &cfg.sm[0];
    for (name, regs, shared, threads, tbs) in rows {
        let occ = g.occupancy_of(regs, shared, threads / 32, g.shared_config_for(shared));
        assert_eq!(occ.blocks, tbs, "{name}: rule gives {} ({:?}), Table 5.2 lists {tbs}", occ.blocks, occ.limiter);
    }
}

const TWO: &str = r#"
description = "compute-bound sgemm against memory-bound lbm"
[[process]]
name = "sgemm"
launches = [{ kernel = "sgemm", size = 96, seed = 1 }]
[[process]]
name = "lbm"
launches = [{ kernel = "lbm", size = 128, seed = 2 }]
"#;

fn alone(cfg: &GpuConfig, w: &Workload) -> Vec<RunResult> {
    w.processes.iter().map(|p| run(cfg, &Workload::alone(p))).collect()
}

#[test]
fn sharing_slows_each_process_and_stp_is_in_range() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let shared = run(&cfg, &w);
    assert!(shared.processes.iter().all(|p| p.verified));
    let m = metrics(&shared, &alone(&cfg, &w));
    for p in &m.processes {
        assert!(p.t_shared > p.t_alone, "{}: shared {} not longer than alone {}", p.name, p.t_shared, p.t_alone);
        assert!(p.ntt > 1.0);
    }
    assert!(m.stp > 1.0 && m.stp <= 2.0, "STP {} outside (1, 2]", m.stp);
    assert!(m.fairness > 0.0 && m.fairness <= 1.0);
    assert!((m.antt - m.processes.iter().map(|p| p.ntt).sum::<f64>() / 2.0).abs() < 1e-12);
}

#[test]
fn back_to_back_processes_are_not_slowed() {
    // The second process arrives after the first has finished: each runs as if alone, so every
    // normalised progress is 1 (STP = N, ANTT = 1) up to what the first leaves behind: its
    // dirty L2 lines are written back while the second runs (a few percent).
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let a = alone(&cfg, &w);
    let gap = a[0].processes[0].turnaround + 1000;
    let w2 = workload(&TWO.replace("name = \"lbm\"", &format!("name = \"lbm\"\narrival = {gap}")));
    let shared = run(&cfg, &w2);
    let m = metrics(&shared, &alone(&cfg, &w2));
    for p in &m.processes {
        assert!((p.progress - 1.0).abs() < 0.05, "{}: progress {} (shared {}, alone {})", p.name, p.progress, p.t_shared, p.t_alone);
    }
    assert!((m.stp - 2.0).abs() < 0.06 && (m.antt - 1.0).abs() < 0.05, "STP {} ANTT {}", m.stp, m.antt);
    // One process alone is its own baseline: STP exactly 1.
    let one = workload("description = \"one\"\n[[process]]\nname = \"s\"\nlaunches = [{ kernel = \"sgemm\", size = 32 }]\n");
    let r = run(&cfg, &one);
    let m = metrics(&r, &[r.clone()]);
    assert_eq!(m.stp, 1.0);
}

#[test]
fn a_replayed_workload_runs_until_every_process_has_completed_min_runs() {
    // The thesis's methodology (§5.3.1): each process starts again when it finishes, until
    // every one has run at least three times; the turnaround is the mean of completed runs.
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let once = run(&cfg, &workload(TWO));
    let w = workload(&TWO.replace("description = ", "min_runs = 3\ndescription = "));
    assert_eq!(w.min_runs, Some(3));
    let r = run(&cfg, &w);
    for p in &r.processes {
        assert!(p.verified, "{}: {:?}", p.name, p.failures);
        assert!(p.runs.len() >= 3, "{}: {} runs", p.name, p.runs.len());
        let n = p.runs.len() as u64;
        assert_eq!(p.turnaround, (p.runs.iter().sum::<u64>() + n / 2) / n, "{}: the mean of {:?}", p.name, p.runs);
        // (each run ends after the one before it)
        assert!(p.end <= r.cycles && p.runs.iter().all(|&t| t > 0));
    }
    // The shorter process is replayed more often, and the run ends as the last process
    // completes its third run (its end is the run's last cycle).
    let (s, l) = (&r.processes[0], &r.processes[1]);
    let (short, long) = if once.processes[0].turnaround < once.processes[1].turnaround { (s, l) } else { (l, s) };
    assert!(short.runs.len() > long.runs.len(), "short {:?} long {:?}", short.runs, long.runs);
    assert_eq!(long.runs.len(), 3);
    assert_eq!(r.cycles, long.end + 1, "the run stops when every process has completed three runs");
    assert_eq!(long.end, long.arrival + long.runs.iter().sum::<u64>(), "each replay starts as the run before it ends");
    assert!(r.launches.len() > 6, "the launches of every run are there: {}", r.launches.len());
    // The first run is the unreplayed workload's up to where the replays start to compete.
    assert!(short.runs[0] <= once.processes.iter().find(|p| p.name == short.name).unwrap().turnaround);
    // `min_runs = 1` still replays the shorter process until the longer has completed once
    // (the contention lasts to the end), and stops there.
    let one = run(&cfg, &workload(&TWO.replace("description = ", "min_runs = 1\ndescription = ")));
    assert!(one.processes.iter().all(|p| !p.runs.is_empty()) && one.processes.iter().any(|p| p.runs.len() > 1), "{:?}", one.processes);
    assert_eq!(one.cycles, one.processes.iter().map(|p| p.end).max().unwrap() + 1);
    // The metrics use the mean turnaround.
    let m = metrics(&r, &alone(&cfg, &w));
    for (p, q) in m.processes.iter().zip(&r.processes) {
        assert_eq!(p.t_shared, q.turnaround);
    }
    // A process that is not replayed runs once: the run ends when the other has completed its
    // three runs, or as the process ends if that is later.
    let w = workload(&TWO.replace("description = ", "min_runs = 3\ndescription = ").replacen("[[process]]\n", "[[process]]\nreplay = false\n", 1));
    assert!(!w.processes[0].replay && w.processes[1].replay);
    let r = run(&cfg, &w);
    let (a, b) = (&r.processes[0], &r.processes[1]);
    assert_eq!(a.runs.len(), 1, "{:?}", a.runs);
    assert!(b.runs.len() >= 3, "{:?}", b.runs);
    assert_eq!(r.cycles, a.end.max(b.end) + 1);
    assert!(r.processes.iter().all(|p| p.verified));
    // Out of range, with the field named.
    for bad in ["0", "101"] {
        let e = Workload::parse("w.toml", &TWO.replace("description = ", &format!("min_runs = {bad}\ndescription = "))).unwrap_err().to_string();
        assert!(e.contains("w.toml") && e.contains("field `min_runs`") && e.contains("1..=100"), "{e}");
    }
}

#[test]
fn a_process_with_an_instruction_target_is_replayed_until_it_halts() {
    // Warped-Slicer's run length (§V-A): each application runs until it has executed what it
    // executes alone in a fixed number of cycles.
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let once = run(&cfg, &w);
    let cycles = once.cycles * 3 / 2;
    let targets: Vec<u64> = w.processes.iter().map(|p| mpgpu_ref::timing::insts_in(&cfg, p, cycles, RunLimits::default()).unwrap()).collect();
    // Alone with its target a process halts where it stood after `cycles` cycles alone: the
    // last cycle it issued in, at most `cycles`.
    for (p, &t) in w.processes.iter().zip(&targets) {
        let a = run(&cfg, &Workload::alone(&ProcessSpec { insts: Some(t), ..p.clone() }));
        let q = &a.processes[0];
        assert!(q.halted && q.insts >= t && q.insts < t + 64, "{}: {} of {t}", q.name, q.insts);
        assert!(q.turnaround <= cycles && q.turnaround + 2000 > cycles, "{} halts at {} alone; its target is from {cycles} cycles", q.name, q.turnaround);
        assert!(q.runs.len() >= 1 && q.verified, "{q:?}");
    }
    // Together: each is replayed until it halts; the run ends at the last halt.
    let mut tw = w.clone();
    for (p, &t) in tw.processes.iter_mut().zip(&targets) {
        p.insts = Some(t);
    }
    let r = run(&cfg, &tw);
    for (p, &t) in r.processes.iter().zip(&targets) {
        assert!(p.halted && p.insts >= t && p.insts < t + 64, "{}: {} of {t}", p.name, p.insts);
        assert_eq!(p.turnaround, p.end - p.arrival);
        assert!(!p.runs.is_empty() && p.verified, "{p:?}");
        // (nothing of it is submitted after its halt)
        assert!(r.launches.iter().filter(|l| l.process == p.name).all(|l| l.ready <= p.end), "{:?}", r.launches);
    }
    assert!(r.processes.iter().any(|p| p.runs.len() > 1), "a replay: {:?}", r.processes);
    assert_eq!(r.cycles, r.processes.iter().map(|p| p.end).max().unwrap() + 1);
    // lbm halted in its first run leaves the GPU to sgemm: its blocks not yet issued end
    // without running, and its launch ends soon after (as its blocks on the SMs end).
    let mut early = tw.clone();
    early.processes[1].insts = Some(targets[1] / 8);
    let e = run(&cfg, &early);
    let lbm = &e.processes[1];
    assert!(lbm.halted && lbm.runs.is_empty() && lbm.dropped > 0, "{lbm:?}");
    let l = e.launches.iter().find(|l| l.process == "lbm").unwrap();
    assert!(l.end >= lbm.end && l.end - lbm.end < lbm.end, "{l:?}, halted at {}", lbm.end);
    assert!(e.processes[0].halted && e.processes[0].end > l.end, "{:?}", e.processes[0]);
    // The same run again gives the same cycles (the dropped blocks are deterministic too).
    assert_eq!(run(&cfg, &tw).cycles, r.cycles);
    // A target replaces `min_runs` and `replay = false`; the framework does not take one.
    let with = |extra: &str| Workload::parse("w.toml", &TWO.replacen("[[process]]\n", &format!("[[process]]\ninsts = 1000\n{extra}"), 1));
    for (text, want) in [
        (with("").map(|_| ()).err().map(|e| e.to_string()), None),
        (with("replay = false\n").err().map(|e| e.to_string()), Some("`replay = false` does not apply")),
    ] {
        match want {
            None => assert!(text.is_none(), "{text:?}"),
            Some(w) => assert!(text.as_deref().is_some_and(|t| t.contains("w.toml") && t.contains("field `insts`") && t.contains(w)), "{text:?}"),
        }
    }
    let e = Workload::parse("w.toml", &TWO.replace("description = ", "min_runs = 2\ndescription = ").replacen("[[process]]\n", "[[process]]\ninsts = 1000\n", 1)).unwrap_err().to_string();
    assert!(e.contains("`min_runs`") && e.contains("give one of them"), "{e}");
    let e = Workload::parse("w.toml", &TWO.replacen("[[process]]\n", "[[process]]\ninsts = 0\n", 1)).unwrap_err().to_string();
    assert!(e.contains("field `insts`: 0 is out of range"), "{e}");
    let mut g = Gpu::with_framework(&cfg, mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch, 2).unwrap();
    let e = g.add_workload(&tw).unwrap_err().to_string();
    assert!(e.contains("instruction target") && e.contains("framework"), "{e}");
    // (a workload built in code, unvalidated, is refused by the GPU too)
    let e = Gpu::new(&cfg).add_workload(&Workload { min_runs: Some(2), ..tw.clone() }).unwrap_err().to_string();
    assert!(e.contains("`insts`") && e.contains("`min_runs`"), "{e}");
    // It is written back and read again.
    assert_eq!(Workload::parse("again.toml", &tw.to_toml()).unwrap(), tw);
}

#[test]
fn more_processes_than_a_workload_file_takes_still_run() {
    // (the GPU takes up to 4,095 address spaces; a workload file at most 64)
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let p = workload(TWO).processes[0].clone();
    let ps: Vec<ProcessSpec> = (0..70).map(|i| ProcessSpec { name: format!("p{i}"), launches: vec![mpgpu_ref::workload::LaunchSpec { kernel: "vecadd".into(), size: Some(256), seed: i }], ..p.clone() }).collect();
    let r = run(&cfg, &Workload { description: "many".into(), min_runs: None, processes: ps });
    assert_eq!(r.processes.len(), 70);
    assert!(r.processes.iter().all(|p| p.verified && p.insts > 0), "{:?}", r.processes.last());
}

#[test]
fn same_workload_same_cycles_and_json() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let a = serde_json::to_string(&run(&cfg, &w)).unwrap();
    let b = serde_json::to_string(&run(&cfg, &w)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn skipping_idle_cycles_changes_nothing() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let go = |skip: bool| {
        let mut g = Gpu::new(&cfg);
        g.add_workload(&w).unwrap();
        g.run(RunLimits { skip_idle: skip, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
        let mut r = g.result();
        let stepped = r.stepped_cycles;
        r.stepped_cycles = 0;
        r.sm.awake_cycles = 0;
        (serde_json::to_string(&r).unwrap(), stepped)
    };
    let (lazy, s1) = go(true);
    let (full, s2) = go(false);
    assert_eq!(lazy, full, "results differ when every cycle is stepped");
    assert!(s1 < s2, "nothing was skipped ({s1} vs {s2} stepped cycles)");
}

#[test]
fn every_library_kernel_verifies_under_timing() {
    for &(name, _) in mpgpu_ref::config::PRESETS {
        let cfg = GpuConfig::preset(name).unwrap();
        let mut text = String::from("description = \"all\"\n");
        for b in library::library() {
            text += &format!("[[process]]\nname = \"{0}\"\nlaunches = [{{ kernel = \"{0}\", size = {1}, seed = 3 }}]\n", b.name, b.test_sizes[0]);
        }
        let r = run(&cfg, &workload(&text));
        for p in &r.processes {
            assert!(p.verified, "{name}: {} failed: {:?}", p.name, p.failures);
        }
    }
}

#[test]
fn blocks_of_different_kernels_share_an_sm() {
    // Two small launches: FCFS gives each SM one block of the first, and the second fills the
    // room left on the same SMs.
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(
        "description = \"slicing\"\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"sgemm\", size = 64 }]\n\
         [[process]]\nname = \"b\"\nlaunches = [{ kernel = \"vecadd\", size = 20000 }]\n",
    );
    let r = run(&cfg, &w);
    assert!(r.processes.iter().all(|p| p.verified));
    assert!(r.sm.max_kernels_resident >= 2, "no SM ever held blocks of two kernels");
}

#[test]
fn a_block_captured_on_one_sm_finishes_on_another() {
    // sgemm uses shared memory and barriers: a block moved mid-flight must carry its registers,
    // reconvergence stacks, shared memory and barrier state, or the product is wrong.
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload("description = \"move\"\n[[process]]\nname = \"s\"\nlaunches = [{ kernel = \"sgemm\", size = 256, seed = 5 }]\n");
    let mut g = Gpu::new(&cfg);
    g.add_workload(&w).unwrap();
    let mut moved = 0;
    let mut limit = 3000;
    while moved < 3 {
        match g.run(RunLimits { max_cycles: limit, ..RunLimits::default() }, &mut |_, _, _| {}) {
            Err(SimError::MaxCycles { .. }) => {}
            other => panic!("finished before any block moved: {other:?}"),
        }
        // A quiescent block of SM 0 and one of the last SM trade places.
        let last = g.sms.len() - 1;
        if let (Some(&a), Some(&b)) = (g.sms[0].quiescent_blocks().first(), g.sms[last].quiescent_blocks().first()) {
            let ca = g.capture_block(0, a).unwrap();
            let cb = g.capture_block(last, b).unwrap();
            assert!(ca.warps.iter().any(|w| w.pc().unwrap_or(0) > 0), "captured a block that had not started");
            g.restore_block(last, ca);
            g.restore_block(0, cb);
            moved += 1;
        }
        limit += 1500;
    }
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let r = g.result();
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
}

#[test]
fn a_block_that_fits_nowhere_is_refused_clearly() {
    let mut cfg = GpuConfig::preset("gtx480").unwrap();
    cfg.sm[0].shared_bytes = 8192; // sad needs 16 KB per block
    let w = workload("description = \"x\"\n[[process]]\nname = \"s\"\nlaunches = [{ kernel = \"sad\", size = 32 }]\n");
    let mut g = Gpu::new(&cfg);
    g.add_workload(&w).unwrap();
    let e = g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_err();
    assert!(e.to_string().contains("fits on no SM"), "{e}");
}

#[test]
fn max_cycles_stops_with_a_report() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let mut g = Gpu::new(&cfg);
    g.add_workload(&workload(TWO)).unwrap();
    let e = g.run(RunLimits { max_cycles: 500, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("--max-cycles 500") && s.contains("process `sgemm`: running") && s.contains("blocks issued"), "{s}");
}

#[test]
fn lrr_and_gto_schedule_differently_and_both_verify() {
    let w = workload(TWO);
    let gto = GpuConfig::preset("gtx480").unwrap();
    let mut lrr = gto.clone();
    lrr.sm[0].scheduler = mpgpu_ref::config::SchedPolicy::Lrr;
    let a = run(&gto, &w);
    let b = run(&lrr, &w);
    assert!(a.processes.iter().chain(&b.processes).all(|p| p.verified));
    assert_eq!(a.warp_insts, b.warp_insts, "the same work either way");
    assert_ne!(a.cycles, b.cycles, "the policy made no difference at all");
}

#[test]
fn shared_memory_bank_conflicts_cost_cycles() {
    // Each warp reads shared memory with a stride of 32 words (every lane in bank 0) or of one
    // word; the conflicted version takes longer and counts the extra cycles.
    let kernel = |stride: u32| {
        format!(
            ".kernel bank\n.regs 8\n.shared 4096\n.threads 32\n.params 4\n\
             mov.u32 r0, %tid.x\n mul.u32 r1, r0, {}\n and.b32 r1, r1, 4095\n mov.u32 r3, 0\n mov.u32 r4, 0\n\
             L:\n ld.shared.u32 r2, [r1]\n add.u32 r3, r3, r2\n add.u32 r4, r4, 1\n setp.lt.u32 p0, r4, 64\n@p0 bra L\n\
             ld.param.u32 r5, [0]\n shl.b32 r6, r0, 2\n add.u32 r5, r5, r6\n st.global.u32 [r5], r3\n exit\n",
            4 * stride
        )
    };
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let fast = run_custom(&cfg, custom(&kernel(1), 1, 32, vec![0; 32]));
    let slow = run_custom(&cfg, custom(&kernel(32), 1, 32, vec![0; 32]));
    assert_eq!(fast.sm.shared_conflict_cycles, 0);
    assert_eq!(slow.sm.shared_conflict_cycles, 64 * 31);
    assert!(slow.cycles >= fast.cycles + 64 * 31, "{} vs {}", slow.cycles, fast.cycles);
}

#[test]
fn a_barrier_releases_only_its_own_block() {
    // One SM. Block 0: warp 1 exits at once, warp 0 spins, then waits at a barrier. Block 8
    // arrives later, into the slots other blocks freed: its reader warp waits at a barrier for
    // a slow writer warp that fills shared memory. Block 0's barrier must not let it through.
    let src = ".kernel iso\n.regs 8\n.shared 128\n.threads 64\n.params 4\n\
        mov.u32 r0, %tid.x\n mov.u32 r1, %ctaid.x\n mov.u32 r4, 0\n\
        setp.eq.u32 p0, r1, 0\n@p0 bra FIRST\n setp.eq.u32 p0, r1, 8\n@p0 bra LAST\n\
        SHORT:\n add.u32 r4, r4, 1\n setp.lt.u32 p2, r4, 10\n@p2 bra SHORT\n exit\n\
        FIRST:\n setp.ge.u32 p1, r0, 32\n@p1 exit\n\
        SPIN:\n add.u32 r4, r4, 1\n setp.lt.u32 p2, r4, 300\n@p2 bra SPIN\n bar.sync\n exit\n\
        LAST:\n setp.ge.u32 p1, r0, 32\n@p1 bra WRITE\n bar.sync\n shl.b32 r2, r0, 2\n ld.shared.u32 r3, [r2]\n\
        ld.param.u32 r5, [0]\n add.u32 r5, r5, r2\n st.global.u32 [r5], r3\n exit\n\
        WRITE:\n add.u32 r4, r4, 1\n setp.lt.u32 p2, r4, 3000\n@p2 bra WRITE\n\
        sub.u32 r2, r0, 32\n shl.b32 r2, r2, 2\n st.shared.u32 [r2], 7\n bar.sync\n exit\n";
    let mut cfg = GpuConfig::preset("gtx480").unwrap();
    cfg.sm[0].count = 1;
    run_custom(&cfg, custom(src, 9, 32, vec![7; 32]));
}

#[test]
fn a_block_with_exited_warps_can_be_captured_and_moved() {
    // Warp 0 of the block exits at once; the other three loop. Capture the block mid-loop and
    // finish it on another SM.
    let src = ".kernel part\n.regs 8\n.threads 128\n.params 4\n mov.u32 r0, %tid.x\n setp.lt.u32 p0, r0, 32\n@p0 exit\n\
        mov.u32 r4, 0\nL:\n add.u32 r4, r4, 1\n setp.lt.u32 p1, r4, 500\n@p1 bra L\n\
        ld.param.u32 r5, [0]\n shl.b32 r6, r0, 2\n add.u32 r5, r5, r6\n st.global.u32 [r5], r4\n exit\n";
    let mut expect = vec![500u32; 128];
    expect[..32].fill(0);
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let mut g = Gpu::new(&cfg);
    g.add_process("p", 0, 0, vec![("c".into(), custom(src, 1, 128, expect))]);
    assert!(matches!(g.run(RunLimits { max_cycles: 300, ..RunLimits::default() }, &mut |_, _, _| {}), Err(SimError::MaxCycles { .. })));
    let from = g.sms.iter().position(|s| !s.is_empty()).unwrap();
    // Stop the block issuing and let its in-flight instructions drain, as a context switch does.
    let b = g.sms[from].blocks_resident()[0];
    g.freeze_block(from, b);
    let mut limit = 300;
    while !g.sms[from].quiescent_blocks().contains(&b) {
        limit += 5;
        assert!(limit < 1000, "the frozen block never drained");
        let _ = g.run(RunLimits { max_cycles: limit, ..RunLimits::default() }, &mut |_, _, _| {});
    }
    let ctx = g.capture_block(from, b).unwrap();
    assert_eq!(ctx.warps.iter().filter(|w| w.state == mpgpu_ref::exec::WarpState::Done).count(), 1);
    let to = (from + 5) % g.sms.len();
    g.restore_block(to, ctx);
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let r = g.result();
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
}

#[test]
fn a_load_wider_than_the_mshrs_still_goes_ahead() {
    // spmv gathers touch up to 32 lines per load; with 2 MSHRs it must still finish.
    let mut cfg = GpuConfig::preset("gtx480").unwrap();
    cfg.sm[0].l1_mshrs = 2;
    let r = run(&cfg, &workload("description = \"x\"\n[[process]]\nname = \"s\"\nlaunches = [{ kernel = \"spmv\", size = 2000 }]\n"));
    assert!(r.processes[0].verified);
}

#[test]
fn a_run_resumed_after_max_cycles_matches_a_straight_run() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload(TWO);
    let straight = run(&cfg, &w);
    let mut g = Gpu::new(&cfg);
    g.add_workload(&w).unwrap();
    let mut limit = 1000;
    loop {
        match g.run(RunLimits { max_cycles: limit, ..RunLimits::default() }, &mut |_, _, _| {}) {
            Ok(()) => break,
            Err(SimError::MaxCycles { .. }) => limit += 1000,
            Err(e) => panic!("{e}"),
        }
    }
    let mut chunked = g.result();
    chunked.stepped_cycles = straight.stepped_cycles;
    chunked.sm.awake_cycles = straight.sm.awake_cycles;
    assert_eq!(serde_json::to_string(&chunked).unwrap(), serde_json::to_string(&straight).unwrap());
}

/// Runs sgemm, context-switches `n` blocks out of SM 0 through global memory and back onto
/// another SM; `corrupt` flips a saved register word of each before the restore.
fn context_switch_sgemm(n: usize, corrupt: bool) -> RunResult {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = workload("description = \"ctx\"\n[[process]]\nname = \"s\"\nlaunches = [{ kernel = \"sgemm\", size = 128, seed = 9 }]\n");
    let mut g = Gpu::new(&cfg);
    g.add_workload(&w).unwrap();
    let mut limit = 2000;
    let stop = |g: &mut Gpu, limit: u64| match g.run(RunLimits { max_cycles: limit, ..RunLimits::default() }, &mut |_, _, _| {}) {
        Err(SimError::MaxCycles { .. }) => {}
        other => panic!("the kernel ended before the context switches: {other:?}"),
    };
    for k in 0..n {
        stop(&mut g, limit);
        let b = g.sms[0].blocks_resident()[0];
        g.freeze_block(0, b);
        while !g.sms[0].quiescent_blocks().contains(&b) {
            limit += 2;
            stop(&mut g, limit);
        }
        let writes = g.mem.stats.requests;
        let start = g.now;
        let saved = g.save_block(0, b).unwrap();
        assert!(g.mem.stats.requests > writes, "the save sent no traffic");
        if corrupt {
            let ctx = mpgpu_ref::timing::context::load(&g.gmem, saved.addr, saved.words, &saved.template).unwrap();
            // r13 is sgemm's accumulator.
            let at = saved.addr + 4 * mpgpu_ref::timing::context::register_word(&ctx, 0, 13, 0) as u32;
            let v = g.gmem.read(at).unwrap();
            g.gmem.write(at, v ^ 0x4000_0000).unwrap();
        }
        // The save completes at its last acknowledgement, before the restore can start.
        assert!(g.restore_saved(1, &saved).is_err(), "a restore before the save completed was taken");
        while g.save_done(&saved).is_none() {
            limit += 20;
            stop(&mut g, limit);
        }
        let took = g.save_done(&saved).unwrap() - start;
        assert!(took > 4 * saved.words as u64 / 128, "a save of {} words took {took} cycles", saved.words);
        let dest = (1..g.sms.len()).find(|&s| g.sms[s].fits(&saved.template.info.launch)).unwrap_or(0);
        let _ = k;
        g.restore_saved(dest, &saved).unwrap();
        assert!(g.restore_saved(dest, &saved).is_err(), "a block was restored twice");
        limit += 500;
    }
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    g.result()
}

#[test]
fn a_context_switch_through_global_memory_preserves_the_results() {
    let r = context_switch_sgemm(3, false);
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
}

#[test]
fn a_corrupted_saved_context_gives_a_wrong_result() {
    let r = context_switch_sgemm(1, true);
    assert!(!r.processes[0].verified, "a corrupted context went unnoticed");
    assert!(r.processes[0].failures[0].contains("output `C`"), "{:?}", r.processes[0].failures);
}

/// The Fig. 6.3 sequence of Tanasić's thesis (§6.2), on real values: `ld r3, [r2]` reads its
/// address register at operand read and releases it, so the younger `add r2, ...` issues and
/// writes r2 back while the load is still waiting for memory. The load still gets the value
/// at the old address (the result checks it), and the model counts the overwrite. With the add
/// placed after the load's consumer, which waits for the load, nothing is overwritten in
/// flight.
fn fig_6_3(add_first: bool) -> RunResult {
    // out[tid] = tid + 100 (written, then fenced so that the load below misses in the L1 and
    // waits for memory); then I0 ld r3 <- [r2]; I1 add r2 <- r2 + 8; I2 mul r8 <- r3 * 3.
    let (i1, after) = ("add.u32 r2, r2, 8\n", "sub.u32 r2, r2, 8\n");
    let src = format!(
        ".kernel fig63\n.regs 10\n.threads 32\n.params 4\n\
         mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n\
         add.u32 r4, r0, 100\n st.global.u32 [r2], r4\n membar.gl\n\
         ld.global.u32 r3, [r2]\n {}\n mul.u32 r8, r3, 3\n {}\n {}\n st.global.u32 [r2], r8\n exit\n",
        if add_first { i1 } else { "" },
        if add_first { "" } else { i1 },
        after
    );
    let cfg = GpuConfig::preset("gtx480").unwrap();
    run_custom(&cfg, custom(&src, 1, 32, (0..32).map(|t| 3 * (t + 100)).collect()))
}

#[test]
fn a_younger_instruction_overwrites_the_source_of_an_older_load_in_flight() {
    let hazard = fig_6_3(true);
    assert_eq!(hazard.sm.war_overwrites, 1, "the add should overwrite r2 while the load is in flight");
    let ordered = fig_6_3(false);
    assert_eq!(ordered.sm.war_overwrites, 0, "the add comes after the load's consumer");
}

#[test]
fn membar_waits_for_the_warps_stores_to_be_acknowledged() {
    // 64 stores to one word, with or without a fence after each: a fenced store waits for its
    // acknowledgement (a round trip through the interconnect and the L2) before the next.
    let kernel = |fence: bool| {
        format!(
            ".kernel fence\n.regs 8\n.threads 32\n.params 4\n ld.param.u32 r1, [0]\n mov.u32 r2, %tid.x\n shl.b32 r3, r2, 2\n\
             add.u32 r1, r1, r3\n mov.u32 r4, 0\nL:\n add.u32 r4, r4, 1\n st.global.u32 [r1], r4\n{}\
             setp.lt.u32 p0, r4, 64\n@p0 bra L\n exit\n",
            if fence { " membar.gl\n" } else { "" }
        )
    };
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let plain = run_custom(&cfg, custom(&kernel(false), 1, 32, vec![64; 32]));
    let fenced = run_custom(&cfg, custom(&kernel(true), 1, 32, vec![64; 32]));
    let m = &cfg.memory;
    let round_trip = 2 * m.icnt_latency as u64 + m.l2_latency as u64;
    assert!(
        fenced.cycles >= plain.cycles + 63 * round_trip,
        "fenced {} cycles, plain {}: each fence should wait a round trip of at least {round_trip}",
        fenced.cycles,
        plain.cycles
    );
}

#[test]
fn every_sm_saving_at_once_takes_table_5_2s_time_through_the_memory_model() {
    // Table 5.2 of the thesis: context bytes per SM (TBs/SM x (4 x regs + shared bytes) per TB)
    // and the save time at 706 MHz, 1/13 of 208 GB/s per SM. Every SM of k20c sends that many
    // bytes as context-save traffic at once; each SM's save, from its first request to its last
    // acknowledgement, comes out of the memory model (port, slices, channels) within 5 %.
    let rows: [(&str, u32, u64); 24] = [
        ("StreamCollide", 259200, 11437),
        ("histo final", 233472, 10301),
        ("histo prescan", 163840, 7229),
        ("histo intermediates", 143424, 6326),
        ("histo main", 92160, 4067),
        ("genhists", 44032, 1942),
        ("spmvjds", 59392, 2619),
        ("ComputeQ", 172032, 7590),
        ("ComputePhiMag", 98304, 4335),
        ("largersadcalc8", 212992, 9397),
        ("largersadcalc16", 53248, 2351),
        ("mbsadcalc", 75348, 3325),
        ("mysgemmNT", 258048, 11388),
        ("block2Dregtiling", 167936, 7413),
        ("lattice6overlap", 52284, 2309),
        ("binning", 65536, 2895),
        ("scaninter1", 85712, 3784),
        ("scanL1", 123696, 5457),
        ("uniformAdd", 65600, 2895),
        ("reorder", 131072, 5782),
        ("splitSort", 136332, 6015),
        ("griddingGPU", 161280, 7116),
        ("splitRearrange", 83136, 3671),
        ("scaninter2", 85712, 3784),
    ];
    let cfg = GpuConfig::preset("k20c").unwrap();
    let n = cfg.num_sms() as usize;
    let line = cfg.sm[0].l1_line;
    for (name, bytes, table) in rows {
        let mut mem = MemSys::new(&cfg);
        let region = (bytes / line + 8) * line;
        for sm in 0..n {
            let lines = send_lines(&mut mem, line, sm, 0x1000_0000 + sm as u32 * region, (bytes / 4) as usize, ReqKind::StreamWrite, CONTEXT_TAG | sm as u32, 0);
            assert_eq!(lines, bytes.div_ceil(line));
        }
        let mut last = vec![0u64; n];
        let mut t = 0;
        while mem.busy() {
            mem.tick(t);
            for (sm, _) in mem.ready.drain(..) {
                last[sm as usize] = t;
            }
            mem.performed.clear();
            t += 1;
        }
        let (lo, hi) = (*last.iter().min().unwrap(), *last.iter().max().unwrap());
        println!("{name:20} {bytes:7} B: {lo}..{hi} cycles per SM, Table 5.2 {table} ({:+.1} %..{:+.1} %)", 100.0 * (lo as f64 / table as f64 - 1.0), 100.0 * (hi as f64 / table as f64 - 1.0));
        for (sm, &took) in last.iter().enumerate() {
            let err = took.abs_diff(table) as f64 / table as f64;
            assert!(err <= 0.05, "{name}: SM {sm} saved {bytes} B in {took} cycles, Table 5.2 gives {table} ({:.1} % off)", 100.0 * err);
        }
    }
}

#[test]
fn save_areas_are_reused_so_memory_stays_bounded_under_many_preemptions() {
    // High-priority sgemm processes arrive one after another while lbm runs: each arrival
    // preempts lbm's SMs (context switch) and they are restored after. More preemptions must
    // not take more memory for contexts.
    use mpgpu_ref::units::framework::{Mechanism, Policy};
    let cfg = GpuConfig::preset("k20c").unwrap();
    let run = |highs: u32| {
        let mut text = "description = \"x\"\n[[process]]\nname = \"low\"\nlaunches = [{ kernel = \"lbm\", size = 256, seed = 1 }]\n".to_string();
        for i in 0..highs {
            text += &format!("[[process]]\nname = \"h{i}\"\narrival = {}\npriority = 1\nlaunches = [{{ kernel = \"sgemm\", size = 32, seed = 2 }}]\n", 3000 + 15000 * i);
        }
        let w = workload(&text);
        let mut g = Gpu::with_framework(&cfg, Policy::PpqExclusive, Mechanism::ContextSwitch, w.processes.len()).unwrap();
        g.add_workload(&w).unwrap();
        g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
        let r = g.result();
        assert!(r.processes.iter().all(|p| p.verified), "{:?}", r.processes);
        (r.preemptions, r.restores, g.ctx.allocated_bytes())
    };
    let (p1, r1, bytes1) = run(1);
    let (p4, r4, bytes4) = run(3);
    assert!(p1 > 0 && r1 > 0, "one arrival: {p1} preemptions, {r1} restores");
    assert!(p4 >= 2 * p1 && r4 >= 2 * r1, "three arrivals should preempt more often: {p4} preemptions and {r4} restores against {p1} and {r1}");
    assert!(bytes1 > 0);
    assert_eq!(bytes4, bytes1, "context memory grew with the preemptions: {bytes4} B against {bytes1} B");
}

#[test]
fn local_memory_loads_joining_misses_at_every_distance_read_the_right_values() {
    // Each thread writes its local word 0 (the store evicts the line from the L1) and fences;
    // then one load misses and a second load of the same line follows it 0 to 23 instructions
    // later, joining the first one's miss before, while and after the L2 performs it. Every
    // load must read the stored value exactly once: out[tid] = 49 * (tid + 5).
    let mut body = String::new();
    for gap in 0..24 {
        body += " st.local.u32 [0], r5
 membar.cta
 ld.local.u32 r10, [0]
";
        for _ in 0..gap {
            body += " add.u32 r9, r9, 1
";
        }
        body += " ld.local.u32 r11, [0]
 add.u32 r8, r8, r10
 add.u32 r8, r8, r11
";
    }
    let src = format!(
        ".kernel locals\n.regs 16\n.threads 64\n.params 4\n.local 16\n\
         mov.u32 r0, %tid.x\n add.u32 r5, r0, 5\n mov.u32 r8, r5\n mov.u32 r9, 0\n\
         {body} ld.param.u32 r1, [0]\n shl.b32 r2, r0, 2\n add.u32 r1, r1, r2\n st.global.u32 [r1], r8\n exit\n"
    );
    let cfg = GpuConfig::preset("gtx480").unwrap();
    run_custom(&cfg, custom(&src, 4, 64, (0..64).map(|t| 49 * (t + 5)).collect()));
}

#[test]
fn global_loads_joining_misses_at_every_distance_read_the_right_values() {
    // As above with global memory (each thread's word of the output, a line per warp): the
    // store, a fence, a load that misses, then a second load of the line 0 to 23 instructions
    // later, which joins the miss before, while or after the L2 performs its read.
    let mut body = String::new();
    for gap in 0..24 {
        body += " st.global.u32 [r1], r5\n membar.gl\n ld.global.u32 r10, [r1]\n";
        for _ in 0..gap {
            body += " add.u32 r9, r9, 1\n";
        }
        body += " ld.global.u32 r11, [r1]\n add.u32 r8, r8, r10\n add.u32 r8, r8, r11\n";
    }
    let src = format!(
        ".kernel joins\n.regs 16\n.threads 64\n.params 4\n\
         mov.u32 r0, %tid.x\n mov.u32 r3, %ctaid.x\n mad.u32 r0, r3, %ntid.x, r0\n add.u32 r5, r0, 5\n mov.u32 r8, r5\n mov.u32 r9, 0\n\
         ld.param.u32 r1, [0]\n shl.b32 r2, r0, 2\n add.u32 r1, r1, r2\n{body} st.global.u32 [r1], r8\n exit\n"
    );
    let cfg = GpuConfig::preset("gtx480").unwrap();
    run_custom(&cfg, custom(&src, 4, 256, (0..256).map(|t| 49 * (t + 5)).collect()));
}
