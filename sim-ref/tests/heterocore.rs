//! HeteroCore (docs/heterocore.md): the big SM's two-group warp scheduler.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult};
use mpgpu_ref::workload::Workload;

fn workload(text: &str) -> Workload {
    Workload::parse("test.toml", text).unwrap_or_else(|e| panic!("{e}"))
}

fn run_with(cfg: &GpuConfig, w: &Workload, skip_idle: bool) -> RunResult {
    let mut g = Gpu::new(cfg);
    g.add_workload(w).unwrap();
    g.run(RunLimits { skip_idle, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = g.result();
    for p in &r.processes {
        assert!(p.verified, "{}: {:?}", p.name, p.failures);
    }
    r
}

/// The JSON of a run apart from the simulator's effort (cycles stepped, SM-cycles awake).
fn json(mut r: RunResult) -> String {
    r.stepped_cycles = 0;
    r.sm.awake_cycles = 0;
    serde_json::to_string(&r).unwrap()
}

/// Blocks of two kernels sharing the big SMs fill more than their first group (each kernel
/// alone is held below 48 warps by its registers or shared memory).
const FULL: &str = r#"
description = "sgemm and spmv sharing the SMs"
[[process]]
name = "sgemm"
launches = [{ kernel = "sgemm", size = 128, seed = 1 }]
[[process]]
name = "spmv"
launches = [{ kernel = "spmv", size = 8192, seed = 1 }]
"#;

/// One block per SM (8 warps): the big SMs use the first group only.
const SPARSE: &str = r#"
description = "16 blocks of sgemm"
[[process]]
name = "sgemm"
launches = [{ kernel = "sgemm", size = 64, seed = 1 }]
"#;

fn heterocore(group_warps: u32) -> GpuConfig {
    let mut cfg = GpuConfig::preset("heterocore").unwrap();
    assert_eq!(cfg.sm[0].group_warps, 24, "the preset's big SM has the two-group scheduler");
    cfg.sm[0].group_warps = group_warps;
    cfg.validate().unwrap();
    cfg
}

#[test]
fn the_big_sm_scheduler_moves_between_groups_and_idle_skipping_changes_nothing() {
    let cfg = heterocore(24);
    let w = workload(FULL);
    let lazy = run_with(&cfg, &w, true);
    assert!(lazy.sm.group_switches > 100, "the big SMs' schedulers should move between their groups: {} moves", lazy.sm.group_switches);
    let stepped = run_with(&cfg, &w, false);
    assert_eq!(json(lazy.clone()), json(stepped), "the two-group scheduler gives other results when every cycle is stepped");
    // Without the groups the schedulers look at all their warps: other timing, no moves.
    let one = run_with(&heterocore(0), &w, true);
    assert_eq!(one.sm.group_switches, 0);
    assert_eq!(one.warp_insts, lazy.warp_insts);
    assert_ne!(one.cycles, lazy.cycles, "the groups should change the timing");
    assert!(!serde_json::to_string(&one).unwrap().contains("group_switches"), "a run without the groups reports no moves");
}

#[test]
fn a_big_sm_using_its_first_group_only_runs_as_without_groups() {
    let w = workload(SPARSE);
    let grouped = run_with(&heterocore(24), &w, true);
    assert_eq!(grouped.sm.group_switches, 0, "no warp is in the second group");
    let one = run_with(&heterocore(0), &w, true);
    assert_eq!(json(grouped), json(one));
}

#[test]
fn the_two_group_scheduler_is_refused_where_it_does_not_apply() {
    let mut cfg = GpuConfig::preset("heterocore").unwrap();
    cfg.sm[0].group_warps = 36;
    let e = cfg.validate().unwrap_err();
    assert!(e.contains("sm[0].group_warps") && e.contains("expected 1..=35"), "{e}");
    let mut cfg = heterocore(24);
    cfg.sm[0].pipeline = mpgpu_ref::config::Pipeline::Thesis;
    let e = cfg.validate().unwrap_err();
    assert!(e.contains("sm[0].group_warps") && e.contains("thesis"), "{e}");
}

// Steering (mpgpu_ref::timing::steer).

use mpgpu_ref::timing::steer::{Preempt, Steer, SteerDecision, SteerParams, Steering};

/// A kernel that runs faster on the small SMs (stencil) beside one that runs faster on the
/// big ones (spmv), both running past the profiling phase.
const PAIR: &str = r#"
description = "stencil and spmv"
[[process]]
name = "stencil"
launches = [{ kernel = "stencil", size = 64, seed = 1 }]
[[process]]
name = "spmv"
launches = [{ kernel = "spmv", size = 8192, seed = 1 }]
"#;

fn steered(cfg: &GpuConfig, w: &Workload, policy: Steering, preempt: Preempt, skip_idle: bool) -> RunResult {
    let params = SteerParams { warmup: 2000, window: 2000, preempt };
    let mut g = Gpu::with_dispatcher(cfg, Box::new(Steer::new(cfg, policy, params)));
    g.add_workload(w).unwrap();
    g.run(RunLimits { skip_idle, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = Steer::result(&g);
    for p in &r.processes {
        assert!(p.verified, "{}: {:?}", p.name, p.failures);
    }
    r
}

/// A kernel's estimated gain on big SMs, recomputed in floating point from what the decision
/// recorded: (IPC_big - IPC_small) / IPC_base per SM, IPC_base interpolated on blocks per SM.
fn est_gain(d: &SteerDecision, i: usize) -> f64 {
    let (b, s) = (d.big_insts[i] as f64 / d.sms[i].0 as f64, d.small_insts[i] as f64 / d.sms[i].1 as f64);
    let [cb, cs, c0] = d.blocks[i].map(|c| c as f64);
    let f = if cb > cs { (c0 - cs) / (cb - cs) } else { 0.5 };
    let base = s + f * (b - s);
    if base > 0.0 {
        (b - s) / base
    } else {
        0.0
    }
}

/// Algorithm 2 of the HeteroCore paper in floating point: both kernels faster per SM on big
/// SMs keep their share of both kinds; otherwise the big SMs go to K0 if STP(K0 -> big, K1 ->
/// small) > STP(K1 -> big, K0 -> small), which is K0's gain against K1's.
fn algorithm2(d: &SteerDecision) -> Vec<usize> {
    if (0..2).all(|i| d.big_insts[i] * d.sms[i].1 as u64 > d.small_insts[i] * d.sms[i].0 as u64) {
        return Vec::new();
    }
    vec![d.launches[if est_gain(d, 0) > est_gain(d, 1) { 0 } else { 1 }]]
}

#[test]
fn dynamic_steering_profiles_decides_as_algorithm_2_and_preempts_adaptively() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = workload(PAIR);
    let r = steered(&cfg, &w, Steering::Dynamic, Preempt::Adaptive, true);
    let st = r.steering.as_ref().expect("steering statistics");
    assert!(st.decisions.len() >= 2, "a decision for each pair of kernels: {:?}", st.decisions);
    let mut steered_to_big = 0;
    for d in &st.decisions {
        assert_eq!(d.launches.len(), 2);
        assert_eq!(d.big, algorithm2(d), "decision at cycle {} against Algorithm 2: {d:?}", d.cycle);
        steered_to_big += d.big.len();
        // (the adaptive choice: drain a kernel that ended a block in the warm-up, switch the others)
        for &(sm, l, switch) in &d.preempted {
            let i = d.launches.iter().position(|&x| x == l).unwrap();
            assert_eq!(switch, !d.ended_in_warmup[i], "SM {sm} gave up launch {l}'s blocks the wrong way at cycle {}", d.cycle);
        }
    }
    assert!(steered_to_big > 0, "no decision gave the big SMs to one kernel: {:?}", st.decisions);
    assert!(st.switches > 0 && st.saved_blocks > 0 && st.saved_blocks == st.restored_blocks, "{st:?}");
    // An SM holds the blocks of one kernel at a time, transitions included.
    assert_eq!(r.sm.max_kernels_resident, 1);
    // Every SM steps as it would cycle by cycle.
    let full = steered(&cfg, &w, Steering::Dynamic, Preempt::Adaptive, false);
    assert_eq!(json(r), json(full));
}

#[test]
fn dynamic_steering_compares_per_sm_rates_when_the_kinds_differ_in_number() {
    // 4 big and 12 small SMs: each kernel profiles on 2 big and 6 small.
    let mut cfg = GpuConfig::preset("heterocore").unwrap();
    cfg.sm[0].count = 4;
    cfg.sm[1].count = 12;
    let r = steered(&cfg, &workload(PAIR), Steering::Dynamic, Preempt::Adaptive, true);
    let st = r.steering.as_ref().unwrap();
    assert!(!st.decisions.is_empty());
    for d in &st.decisions {
        assert!(d.sms.iter().all(|&s| s == (2, 6)), "{d:?}");
        assert_eq!(d.big, algorithm2(d), "decision at cycle {} against Algorithm 2: {d:?}", d.cycle);
    }
}

#[test]
fn steered_sms_change_owner_by_draining_or_by_context_switch() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = workload(PAIR);
    let drain = steered(&cfg, &w, Steering::Dynamic, Preempt::Drain, true);
    let st = drain.steering.as_ref().unwrap();
    assert!(st.drains > 0 && st.switches == 0 && st.saved_blocks == 0, "{st:?}");
    let switch = steered(&cfg, &w, Steering::Dynamic, Preempt::Switch, true);
    let st = switch.steering.as_ref().unwrap();
    assert!(st.switches > 0 && st.saved_blocks > 0 && st.saved_blocks == st.restored_blocks, "{st:?}");
    assert_ne!(drain.cycles, switch.cycles);
    for r in [&drain, &switch] {
        assert_eq!(r.sm.max_kernels_resident, 1);
    }
}

#[test]
fn even_steering_splits_every_kind_and_never_profiles() {
    // On identical SMs it is the conventional GPU's even spatial partitioning.
    for name in ["heterocore", "gtx480"] {
        let cfg = GpuConfig::preset(name).unwrap();
        let r = steered(&cfg, &workload(PAIR), Steering::Even, Preempt::Adaptive, true);
        let st = r.steering.as_ref().unwrap();
        assert!(st.profiles == 0 && st.decisions.is_empty() && st.layouts >= 2, "{name}: {st:?}");
        assert_eq!(r.sm.max_kernels_resident, 1, "{name}");
    }
    // Dynamic steering on identical SMs has nothing to profile.
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let r = steered(&cfg, &workload(PAIR), Steering::Dynamic, Preempt::Adaptive, true);
    assert_eq!(r.steering.as_ref().unwrap().profiles, 0);
    // The baseline dispatcher lets the two kernels share SMs.
    let fcfs = run_with(&GpuConfig::preset("heterocore").unwrap(), &workload(PAIR), true);
    assert!(fcfs.sm.max_kernels_resident > 1);
}

#[test]
fn four_kernels_profile_on_two_big_and_two_small_sms_each_and_two_take_the_big_ones() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let more = "[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 128, seed = 1 }]\n[[process]]\nname = \"histo\"\nlaunches = [{ kernel = \"histo\", size = 200000, seed = 1 }]\n";
    let w = workload(&format!("{PAIR}{more}"));
    let r = steered(&cfg, &w, Steering::Dynamic, Preempt::Adaptive, true);
    let st = r.steering.as_ref().unwrap();
    let four: Vec<&SteerDecision> = st.decisions.iter().filter(|d| d.launches.len() == 4).collect();
    assert!(!four.is_empty(), "no decision among four kernels: {st:?}");
    assert!(four.iter().any(|d| d.big.len() == 2), "no four-kernel decision steered: {four:?}");
    for d in four {
        assert!(d.sms.iter().all(|&s| s == (2, 2)), "{d:?}");
        // (every kernel faster on big SMs keeps the split; otherwise the two with the largest
        // gains take the big SMs, §6.4)
        if (0..4).all(|i| d.big_insts[i] > d.small_insts[i]) {
            assert!(d.big.is_empty(), "{d:?}");
            continue;
        }
        let gain = |i: usize| est_gain(d, i);
        let mut best = (f64::NEG_INFINITY, vec![]);
        for i in 0..4 {
            for j in i + 1..4 {
                if gain(i) + gain(j) > best.0 {
                    best = (gain(i) + gain(j), vec![d.launches[i], d.launches[j]]);
                }
            }
        }
        assert_eq!(d.big, best.1, "{d:?}");
    }
    assert_eq!(r.sm.max_kernels_resident, 1);
}

#[test]
fn a_replay_takes_the_sms_of_the_run_before_it() {
    // Replays change the kernels again and again; under even steering each new run takes the
    // SMs its process's last run had, and no SM changes owner while it holds blocks.
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = workload(&PAIR.replace("description = \"stencil and spmv\"", "description = \"stencil and spmv\"\nmin_runs = 2"));
    let r = steered(&cfg, &w, Steering::Even, Preempt::Adaptive, true);
    let st = r.steering.as_ref().unwrap();
    assert!(st.layouts >= 4, "{st:?}");
    assert_eq!((st.drains, st.switches), (0, 0), "{st:?}");
}

#[test]
fn a_static_policy_needs_an_isolated_run_of_every_kernel() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let e = mpgpu_ref::timing::steer::run_workload_steered(&cfg, &workload(PAIR), Steering::Balanced, SteerParams::default(), &[], RunLimits::default(), &mut |_, _, _| {}).unwrap_err();
    assert!(e.to_string().contains("steering balanced: no isolated run of kernel `stencil7` (process `stencil`) to decide from"), "{e}");
}

use mpgpu_ref::units::framework::{Mechanism, Policy};

fn framework_run(cfg: &GpuConfig, w: &Workload, policy: Policy, mechanism: Mechanism) -> RunResult {
    let mut g = Gpu::with_framework(cfg, policy, mechanism, w.processes.len()).unwrap_or_else(|e| panic!("{e}"));
    g.add_workload(w).unwrap();
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = g.result();
    for p in &r.processes {
        assert!(p.verified, "{}: {:?}", p.name, p.failures);
    }
    r
}

/// The scheduling framework on SMs of two kinds (docs/heterocore.md, "Under the scheduling
/// framework"): T_k is the big SM's occupancy and each small SM reports through `full` when
/// its own resources have no room, so one kernel alone fills every SM to its own occupancy
/// and runs within 3 % of the baseline dispatcher (with the small SM's T_k for every SM the
/// big SMs hold only as many blocks as a small one, no SM reports itself full and the run
/// takes 21 % longer; without the reports the framework issues onto full small SMs).
#[test]
fn the_framework_fills_each_kind_of_sm_to_its_own_occupancy() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = workload("description = \"lbm\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 128, seed = 1 }]\n");
    let base = run_with(&cfg, &w, true);
    let fw = framework_run(&cfg, &w, Policy::Fcfs, Mechanism::Drain);
    assert!(fw.fw_full_cycles > 0 && fw.fw_inbox_blocks > 0, "no SM reported itself full: {} {}", fw.fw_full_cycles, fw.fw_inbox_blocks);
    let ratio = fw.cycles as f64 / base.cycles as f64;
    assert!((0.97..1.03).contains(&ratio), "the framework {} cycles, the baseline dispatcher {}", fw.cycles, base.cycles);
    // Preemption across the kinds: on the default workload DSS moves SMs between processes
    // as their kernels come and go and context-switches them, every output verified.
    let r = framework_run(&cfg, &Workload::default_workload(), Policy::Dss, Mechanism::ContextSwitch);
    assert!(r.preemptions > 0 && r.restores > 0, "{} preemptions, {} restores", r.preemptions, r.restores);
}

/// A fixed layout (§6.5's static search): the first process's kernel on the big SMs only is the
/// layout by class for a thick + lean pair (the same run, cycle for cycle, with both replayed);
/// on the small SMs only it is another run; counts beyond the GPU's are refused before the run.
#[test]
fn a_fixed_layout_places_the_first_kernel_on_the_sms_it_names() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    // (replayed: the first process's kernel is not always the earlier one)
    let w = workload("description = \"blur + stencil\"\nmin_runs = 3\n[[process]]\nname = \"blur\"\nlaunches = [{ kernel = \"blur\", size = 262144, seed = 1 }]\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 48, seed = 1 }]\n");
    let offline = mpgpu_ref::timing::steer::offline_for(&cfg, &w, RunLimits::default()).unwrap();
    let run = |s: Steering| mpgpu_ref::timing::steer::run_workload_steered(&cfg, &w, s, SteerParams::default(), &offline, RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let by_class = run(Steering::Classified);
    assert_eq!(by_class.steering.as_ref().unwrap().decisions[0].big, vec![0], "blur (thick) takes the big SMs");
    let big = run(Steering::Fixed { big: 8, small: 0 });
    assert_eq!(big.cycles, by_class.cycles);
    assert_eq!(serde_json::to_string(&big.processes).unwrap(), serde_json::to_string(&by_class.processes).unwrap());
    let small = run(Steering::Fixed { big: 0, small: 8 });
    assert_ne!(small.cycles, big.cycles);
    assert!(small.processes.iter().all(|p| p.verified));
    let e = mpgpu_ref::timing::steer::run_workload_steered(&cfg, &w, Steering::Fixed { big: 9, small: 0 }, SteerParams::default(), &offline, RunLimits::default(), &mut |_, _, _| {}).unwrap_err();
    assert!(e.to_string().contains("steering fixed: 9 big and 0 small SMs for the first process's kernel; `heterocore` has 8 big and 8 small"), "{e}");
}
