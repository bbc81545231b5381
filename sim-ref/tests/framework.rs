//! The kernel scheduling framework driving the whole GPU: every policy and preemption
//! mechanism keeps every output right, preemptive priority helps the high-priority process,
//! and Equal Spatial Sharing divides the SMs as the thesis says.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::timing::slicer::{SliceParams, Slicer, Slicing};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;

const PRIORITY: &str = r#"
description = "low-priority mri-q (long blocks) holds the GPU when high-priority sgemm arrives"
[[process]]
name = "low"
priority = 0
launches = [{ kernel = "mriq", size = 16384, seed = 1 }]
[[process]]
name = "high"
arrival = 8000
priority = 1
launches = [{ kernel = "sgemm", size = 96, seed = 2 }]
"#;

/// A run to the end, with the framework's (preemptions, restores).
fn run_counted(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism) -> (RunResult, (u64, u64)) {
    let mut g = Gpu::with_framework(cfg, p, m, w.processes.len()).unwrap();
    g.add_workload(w).unwrap();
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{p:?} {m:?}: {e}"));
    let r = g.result();
    assert!(r.dispatcher.starts_with("framework"), "the GPU has the framework: {}", r.dispatcher);
    let counts = (r.preemptions, r.restores);
    (r, counts)
}

/// Every policy and mechanism verifies every output, and the preemptive ones do so with
/// preemption in play: the priority workload makes PPQ (exclusive and shared), DSS and Equal
/// Spatial Sharing take SMs from the low-priority kernel, and context switching restores the
/// blocks it saved, while FCFS and NPQ never preempt and draining never restores.
#[test]
fn every_policy_and_mechanism_keeps_outputs_right() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("p.toml", PRIORITY).unwrap();
    for p in [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal] {
        for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
            let (r, (preemptions, restores)) = run_counted(&cfg, &w, p, m);
            for pr in &r.processes {
                assert!(pr.verified, "{p:?} {m:?}: {} failed: {:?}", pr.name, pr.failures);
            }
            if matches!(p, Policy::Fcfs | Policy::Npq) {
                assert_eq!((preemptions, restores), (0, 0), "{p:?} {m:?} is not preemptive");
            } else {
                assert!(preemptions > 0, "{p:?} {m:?}: the run preempted nothing");
                match m {
                    Mechanism::ContextSwitch => assert!(restores > 0, "{p:?} {m:?}: {preemptions} preemptions, nothing restored"),
                    Mechanism::Drain => assert_eq!(restores, 0, "{p:?} {m:?}: draining restored blocks"),
                }
            }
        }
    }
}

fn turnaround(r: &RunResult, name: &str) -> u64 {
    r.processes.iter().find(|p| p.name == name).unwrap().turnaround
}

/// PPQ (exclusive) preempts the low-priority kernel for the high-priority one where NPQ does
/// not (counted: the run must preempt, and with context switching restore, at least once), and
/// the high-priority process finishes sooner; context switching beats draining here.
#[test]
fn preemptive_priority_serves_the_high_priority_process_sooner() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("p.toml", PRIORITY).unwrap();
    let (npq, npq_counts) = run_counted(&cfg, &w, Policy::Npq, Mechanism::ContextSwitch);
    assert_eq!(npq_counts, (0, 0), "NPQ preempted: {}", npq.dispatcher);
    let mut by_mechanism = Vec::new();
    for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
        let (ppq, (preemptions, restores)) = run_counted(&cfg, &w, Policy::PpqExclusive, m);
        assert!(preemptions > 0, "{m:?}: PPQ preempted nothing: {}", ppq.dispatcher);
        match m {
            Mechanism::ContextSwitch => assert!(restores > 0, "context-switched blocks were never restored: {}", ppq.dispatcher),
            Mechanism::Drain => assert_eq!(restores, 0, "draining restored blocks: {}", ppq.dispatcher),
        }
        assert!(
            turnaround(&ppq, "high") < turnaround(&npq, "high"),
            "{m:?}: high-priority turnaround {} not better than NPQ's {}",
            turnaround(&ppq, "high"),
            turnaround(&npq, "high")
        );
        by_mechanism.push(ppq);
    }
    // With long-running blocks, saving them beats waiting for them (thesis §5.3.3).
    let (ctx, drain) = (&by_mechanism[0], &by_mechanism[1]);
    assert!(turnaround(ctx, "high") < turnaround(drain, "high"), "context switch {} vs drain {}", turnaround(ctx, "high"), turnaround(drain, "high"));
}

/// Long-running processes arriving together on k20c's 13 SMs under Equal Spatial Sharing: the
/// SMs each process owns once the policy has settled (its active launch's SMs running, setting
/// up or reserved for it; a process runs one launch at a time), indexed by process. The run is
/// stopped at 20,000 cycles on purpose; any other error fails.
fn equal_allocation(n: usize) -> Vec<usize> {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let kernels = [("lbm", 512), ("stencil", 96), ("mriq", 16384), ("spmv", 131072), ("sad", 192), ("cutcp", 192), ("sgemm", 256), ("lbm", 384)];
    let mut text = String::from("description = \"equal\"\n");
    for (i, (k, size)) in kernels.iter().take(n).enumerate() {
        text += &format!("[[process]]\nname = \"p{i}\"\nlaunches = [{{ kernel = \"{k}\", size = {size}, seed = {i} }}]\n");
    }
    let w = Workload::parse("equal.toml", &text).unwrap();
    let mut g = Gpu::with_framework(&cfg, Policy::Equal, Mechanism::Drain, n).unwrap();
    g.add_workload(&w).unwrap();
    match g.run(RunLimits { max_cycles: 20_000, ..RunLimits::default() }, &mut |_, _, _| {}) {
        Err(SimError::MaxCycles { .. }) => {}
        Ok(()) => panic!("{n} processes: the long-running workload finished before the allocation was read"),
        Err(e) => panic!("{n} processes: {e}"),
    }
    let fw = g.framework().unwrap();
    let alloc = fw.allocation();
    assert_eq!(alloc.len(), n, "{n} processes, one active launch each: {alloc:?}");
    // Settled: every token is spent (count + SMs held = tokens given, checked every cycle).
    assert!(fw.counts().iter().all(|&c| c == 0), "{n} processes: tokens left over: {:?}", fw.counts());
    // KSRT handles are launch indices; each launch belongs to one process.
    let mut per_process = vec![0; n];
    for (handle, sms) in alloc {
        per_process[g.launches[handle as usize].process] += sms;
    }
    per_process
}

/// Thesis §5.3.4: floor(13 / N_p) SMs each and one more for the first 13 mod N_p processes,
/// asserted process by process (p0 is the first process; all arrive at cycle 0, so it is also
/// the first to arrive). mri-q's (p2's) first launch is short and its second is admitted later,
/// which moves it in the KSRT's admission order but not in this mapping.
#[test]
fn equal_spatial_sharing_on_13_sms_for_2_4_6_8_processes() {
    for (n, want) in [(2, vec![7, 6]), (4, vec![4, 3, 3, 3]), (6, vec![3, 2, 2, 2, 2, 2]), (8, vec![2, 2, 2, 2, 2, 1, 1, 1])] {
        assert_eq!(equal_allocation(n), want, "{n} processes: SMs per process p0, p1, ...");
    }
}

/// The shipped priority workload (`workloads/priority-long.toml`, `docs/results.md`): with
/// context switching, PPQ (exclusive and shared) serves the high-priority process in well under
/// half of NPQ's turnaround, as soon as it arrives (the thesis's §5.3.3 result). A framework
/// that preempts late, or for fewer SMs than it should, fails here even if it still beats NPQ.
#[test]
fn ppq_with_context_switch_serves_the_shipped_high_priority_process_at_once() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/priority-long.toml");
    let w = Workload::load(&path).unwrap();
    let high = |r: &RunResult| r.processes.iter().find(|p| p.name == "sgemm-high").unwrap().turnaround;
    let (npq, _) = run_counted(&cfg, &w, Policy::Npq, Mechanism::ContextSwitch);
    for p in [Policy::PpqExclusive, Policy::PpqShared] {
        let (ppq, (preemptions, _)) = run_counted(&cfg, &w, p, Mechanism::ContextSwitch);
        assert!(preemptions > 0, "{p:?} preempted nothing");
        assert!(2 * high(&ppq) < high(&npq), "{p:?}: high-priority turnaround {} against NPQ's {}", high(&ppq), high(&npq));
    }
}

/// The framework under Zorua (and WLM) learns each SM's room from the SM: its `full` input
/// carries the coordinator's free warp slots, so the SMs run the blocks their coordinators
/// admit, not a static blocks-per-SM figure. Every output verifies under every preemptive
/// policy with draining, preemptions happen, and the SMs did report no room (the report
/// mattered); context switching is refused with the reason.
#[test]
fn zorua_under_the_framework_takes_each_sms_room_from_the_sm() {
    for alloc in [mpgpu_ref::config::Alloc::Zorua, mpgpu_ref::config::Alloc::Wlm] {
        let mut cfg = GpuConfig::preset("gtx480").unwrap();
        cfg.alloc = alloc;
        // (twice the low-priority grid: with Zorua's T_k, the blocks whose warps all have
        // slots, 64 blocks fill 11 of the 15 SMs and leave the high-priority kernel idle ones)
        let w = Workload::parse("p.toml", &PRIORITY.replace("size = 16384", "size = 32768")).unwrap();
        // (FCFS and equal sharing too in the long tier)
        let policies: &[Policy] = if cfg!(feature = "long") { &[Policy::Fcfs, Policy::PpqShared, Policy::Dss, Policy::Equal] } else { &[Policy::PpqShared, Policy::Dss] };
        for &p in policies {
            let (r, (preemptions, restores)) = run_counted(&cfg, &w, p, Mechanism::Drain);
            for pr in &r.processes {
                assert!(pr.verified, "{alloc:?} {p:?}: {} failed: {:?}", pr.name, pr.failures);
            }
            assert_eq!(restores, 0);
            if p != Policy::Fcfs {
                assert!(preemptions > 0, "{alloc:?} {p:?}: the run preempted nothing");
            }
            assert!(r.fw_full_cycles > 0, "{alloc:?} {p:?}: no SM ever reported itself full");
            let z = r.zorua.as_ref().expect("Zorua's counters");
            assert!(z.grants > 0, "{alloc:?} {p:?}: the coordinators granted nothing");
            // The SMs' reports gate like any input: an idle framework seeing the same `full`
            // bits as at its last clocked cycle is not clocked, and that changes no cycle.
            let mut g = Gpu::with_framework(&cfg, p, Mechanism::Drain, w.processes.len()).unwrap();
            g.set_framework_clock_gating(false);
            g.add_workload(&w).unwrap();
            g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
            let every = g.result();
            let runs = |r: &RunResult| (r.cycles, r.launches.iter().map(|l| (l.start, l.end)).collect::<Vec<_>>(), r.preemptions, r.fw_full_cycles, r.fw_inbox_blocks);
            assert_eq!(runs(&r), runs(&every), "{alloc:?} {p:?}: gating the framework's clock changed the run");
            assert_eq!(every.fw_clocked_cycles, every.cycles);
            assert!(r.fw_clocked_cycles < r.fw_full_cycles, "{alloc:?} {p:?}: of {} cycles with an SM full, {} clocked", r.fw_full_cycles, r.fw_clocked_cycles);
        }
        let e = Gpu::with_framework(&cfg, Policy::Dss, Mechanism::ContextSwitch, 2).err().expect("context switching under Zorua is refused");
        assert!(e.contains("--preempt drain"), "{e}");
    }
}

/// Two kernels of one priority arriving together (sgemm and spmv: Warped-Slicer gives them
/// quotas, not the Spatial split), and a high-priority process arriving once they share the
/// SMs.
const SLICED: &str = r#"
description = "sgemm and spmv share the SMs; a high-priority sgemm arrives later"
[[process]]
name = "sgemm"
launches = [{ kernel = "sgemm", size = 256, seed = 1 }]
[[process]]
name = "spmv"
launches = [{ kernel = "spmv", size = 8192, seed = 2 }]
[[process]]
name = "high"
arrival = 30000
priority = 1
launches = [{ kernel = "sgemm", size = 64, seed = 3 }]
"#;

/// A run with slicing `s` inside the framework, to the end.
fn run_sliced(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism, s: Slicing) -> RunResult {
    run_sliced_with(cfg, w, p, m, s, SliceParams::default())
}

/// [`run_sliced`] with Warped-Slicer's parameters `params`.
fn run_sliced_with(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism, s: Slicing, params: SliceParams) -> RunResult {
    let ctl = Slicer::new(s, params, cfg.num_sms() as usize).in_framework();
    let mut g = Gpu::with_framework_sliced(cfg, p, m, w.processes.len(), Box::new(ctl)).unwrap();
    g.add_workload(w).unwrap();
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{p:?} {m:?} {s:?}: {e}"));
    Slicer::result(&g)
}

/// Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling framework"):
/// under every policy and mechanism the two kernels of priority 0 share SMs under
/// Warped-Slicer's quotas (a decision is made, and blocks go beside the other kernel's), every
/// output verifies, and the preemptive policies preempt for the high-priority process
/// (context switching then restores the blocks it saved, of both kernels' PTBQs). The
/// framework's own invariants (each kernel's blocks per SM within its T_k, blocks and tokens
/// conserved) are checked at every edge.
#[test]
fn warped_slicer_runs_inside_the_framework_under_every_policy() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = Workload::parse("s.toml", SLICED).unwrap();
    // (the other policies and draining in the long tier)
    let runs: &[(Policy, Mechanism)] = if cfg!(feature = "long") {
        &[
            (Policy::Fcfs, Mechanism::ContextSwitch),
            (Policy::Npq, Mechanism::Drain),
            (Policy::PpqExclusive, Mechanism::ContextSwitch),
            (Policy::PpqShared, Mechanism::ContextSwitch),
            (Policy::PpqShared, Mechanism::Drain),
            (Policy::Dss, Mechanism::ContextSwitch),
            (Policy::Dss, Mechanism::Drain),
            (Policy::Equal, Mechanism::ContextSwitch),
        ]
    } else {
        &[(Policy::Fcfs, Mechanism::ContextSwitch), (Policy::PpqShared, Mechanism::ContextSwitch), (Policy::Dss, Mechanism::Drain)]
    };
    for &(p, m) in runs {
        let r = run_sliced(&cfg, &w, p, m, Slicing::WarpedSlicer);
        for pr in &r.processes {
            assert!(pr.verified, "{p:?} {m:?}: {} failed: {:?}", pr.name, pr.failures);
        }
        assert!(r.dispatcher.contains("slicing warped-slicer inside it"), "{}", r.dispatcher);
        let s = r.slicing.as_ref().expect("the controller's statistics");
        assert!(s.decisions.iter().any(|d| !d.spatial && d.launches.len() == 2), "{p:?} {m:?}: no quota decision for the pair: {:?}", s.decisions);
        assert!(s.shared_issues > 0 && s.max_sharing >= 2, "{p:?} {m:?}: no SM held blocks of two kernels ({} shared issues)", s.shared_issues);
        // (the quotas fit an SM together, and a kernel over its quota after a change drains
        // before the SM takes more: no block ever waits for room)
        assert_eq!(r.fw_inbox_blocks, 0, "{p:?} {m:?}: blocks issued to an SM without room");
        if p.uses_dss() || matches!(p, Policy::PpqExclusive | Policy::PpqShared) {
            assert!(r.preemptions > 0, "{p:?} {m:?}: the run preempted nothing");
            if m == Mechanism::ContextSwitch && p != Policy::Dss {
                assert!(r.restores > 0, "{p:?} {m:?}: nothing restored");
            }
        }
    }
}

/// With no quota (Left-Over: the controller partitions nothing) an SM runs its holder's
/// blocks only, so the framework with slicing inside it runs cycle for cycle as without: the
/// sharing logic is neutral when it has nothing to share. Even's quotas share the SMs and beat
/// the framework alone on this compute + cache pair.
#[test]
fn slicing_inside_the_framework_without_quotas_is_the_framework() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = Workload::parse("s.toml", &SLICED.replace("priority = 1", "priority = 0")).unwrap();
    let (plain, _) = run_counted(&cfg, &w, Policy::Fcfs, Mechanism::ContextSwitch);
    let left = run_sliced(&cfg, &w, Policy::Fcfs, Mechanism::ContextSwitch, Slicing::LeftOver);
    assert_eq!((left.cycles, left.warp_insts), (plain.cycles, plain.warp_insts), "Left-Over inside the framework is the framework");
    assert_eq!(left.slicing.as_ref().unwrap().shared_issues, 0);
    let even = run_sliced(&cfg, &w, Policy::Fcfs, Mechanism::ContextSwitch, Slicing::Even);
    assert!(even.processes.iter().all(|p| p.verified));
    assert!(even.slicing.as_ref().unwrap().shared_issues > 0, "Even shared no SM");
    assert!(even.cycles < plain.cycles, "Even inside the framework took {} cycles, the framework alone {}", even.cycles, plain.cycles);
}

/// Under slicing inside the framework the framework's clock is gated as without it (a quota
/// written is an input that clocks it): gated or clocked every cycle, the runs are the same
/// cycle for cycle, under a policy that preempts between the sharing kernels (DSS) and one
/// that does not (FCFS).
#[test]
fn slicing_inside_the_framework_gates_its_clock_without_changing_a_cycle() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/slicing/sgemm-lbm.toml");
    let w = Workload::load(&path).unwrap();
    for p in [Policy::Dss, Policy::Fcfs] {
        let run = |gating: bool| {
            let ctl = Slicer::new(Slicing::WarpedSlicer, SliceParams::default(), cfg.num_sms() as usize).in_framework();
            let mut g = Gpu::with_framework_sliced(&cfg, p, Mechanism::ContextSwitch, w.processes.len(), Box::new(ctl)).unwrap();
            g.set_framework_clock_gating(gating);
            g.add_workload(&w).unwrap();
            g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
            let r = Slicer::result(&g);
            ((r.cycles, r.launches.iter().map(|l| (l.start, l.end)).collect::<Vec<_>>(), r.preemptions, r.slicing.unwrap().decisions), r.fw_clocked_cycles)
        };
        let ((gated, clocked), (every, all)) = (run(true), run(false));
        assert_eq!(gated, every, "{p:?}: gating the framework's clock changed the run");
        assert!(clocked < all / 2, "{p:?}: gating left the framework clocked in {clocked} of {all} cycles");
    }
}

/// Random workloads (`soakgen`: mixed priorities, arrivals, several launches, DSS tokens)
/// under slicing inside the framework, each under another policy, mechanism and slicing
/// policy in turn: every output verifies, and the framework's invariants (checked at every
/// edge: each kernel's blocks per SM within T_k and counted per kernel, blocks and tokens
/// conserved) hold. More workloads, and Zorua's SMs, in the long tier.
#[test]
fn random_workloads_run_with_slicing_inside_the_framework() {
    use mpgpu_ref::soakgen::{random_workload, SoakParams};
    let policies = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
    let slicings = [Slicing::WarpedSlicer, Slicing::Even, Slicing::Spatial];
    let n: u64 = if cfg!(feature = "long") { 36 } else { 6 };
    // (two priorities, arrivals close together: kernels of one priority overlap)
    let params = SoakParams { max_priority: 1, max_arrival: 10_000, ..SoakParams::default() };
    let (mut shared, mut preempted, mut decided) = (0, 0, 0);
    for i in 0..n {
        let w = random_workload(7, i, &params);
        let (p, s) = (policies[i as usize % 6], slicings[i as usize / 6 % 3]);
        let zorua = cfg!(feature = "long") && i % 4 == 3;
        let mut cfg = GpuConfig::preset(if zorua { "fermi15" } else { "gtx480" }).unwrap();
        let m = if zorua || i % 2 == 1 { Mechanism::Drain } else { Mechanism::ContextSwitch };
        if zorua {
            cfg.alloc = mpgpu_ref::config::Alloc::Zorua;
        }
        let r = run_sliced(&cfg, &w, p, m, s);
        for pr in &r.processes {
            assert!(pr.verified, "workload {i} ({p:?} {m:?} {s:?}, {}): {} failed: {:?}", cfg.name, pr.name, pr.failures);
        }
        let st = r.slicing.as_ref().unwrap();
        eprintln!("workload {i} {p:?} {m:?} {s:?}: {} cycles, {} shared issues, {} preemptions, {} decisions", r.cycles, st.shared_issues, r.preemptions, st.decisions.len());
        (shared, preempted, decided) = (shared + st.shared_issues, preempted + r.preemptions, decided + st.decisions.len());
    }
    // (the workloads exercised what they are for)
    assert!(shared > 0 && preempted > 0 && decided > 0, "shared issues {shared}, preemptions {preempted}, decisions {decided}");
}

/// Even's quota is at least one block, so four kernels that each need over a quarter of an
/// SM's resource over-commit it: a block the quotas admit but the SM has no room for waits in
/// the SM's inbox, a restored one (context switching, PPQ for the high-priority process) too,
/// its context in its save slot until it goes in. And a high-priority kernel that arrives while
/// Warped-Slicer profiles the kernels below it is not held back by their profile: the profile
/// is dropped, and it starts as soon as without slicing, before any decision.
#[test]
fn slicing_inside_the_framework_waits_for_room_and_does_not_hold_back_a_higher_priority() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let four = r#"
description = "four kernels of one priority, then a high-priority one"
[[process]]
name = "h1"
launches = [{ kernel = "histo", size = 1048576, seed = 1 }]
[[process]]
name = "h2"
launches = [{ kernel = "histo", size = 1048576, seed = 2 }]
[[process]]
name = "red"
launches = [{ kernel = "reduction", size = 1000000, seed = 3 }]
[[process]]
name = "sg"
launches = [{ kernel = "sgemm", size = 256, seed = 4 }]
[[process]]
name = "hi"
arrival = 60000
priority = 1
launches = [{ kernel = "vecadd", size = 100000, seed = 5 }]
"#;
    let w = Workload::parse("four.toml", four).unwrap();
    let r = run_sliced(&cfg, &w, Policy::PpqExclusive, Mechanism::ContextSwitch, Slicing::Even);
    assert!(r.processes.iter().all(|p| p.verified));
    assert!(r.restores > 0 && r.fw_inbox_blocks > 0, "{} restores, {} blocks waited for room", r.restores, r.fw_inbox_blocks);
    let w = Workload::parse("s.toml", &SLICED.replace("arrival = 30000", "arrival = 2000").replace("size = 64, seed = 3", "size = 100000, seed = 3").replace("\"sgemm\", size = 100000", "\"vecadd\", size = 100000")).unwrap();
    // (a long profiling window: held back, the kernel would start only after the pair's
    // decision, 40,000 cycles on)
    let params = SliceParams { window: 40_000, ..SliceParams::default() };
    let r = run_sliced_with(&cfg, &w, Policy::PpqExclusive, Mechanism::ContextSwitch, Slicing::WarpedSlicer, params);
    let (plain, _) = run_counted(&cfg, &w, Policy::PpqExclusive, Mechanism::ContextSwitch);
    let start = |r: &RunResult| r.launches.iter().find(|l| l.process == "high").unwrap().start;
    let decided = r.slicing.as_ref().unwrap().decisions.first().map_or(u64::MAX, |d| d.cycle);
    assert!(start(&r) < decided && start(&r) <= start(&plain), "the high-priority kernel started at {} (without slicing at {}; the pair's first decision at {decided})", start(&r), start(&plain));
}

/// Skipping idle cycles changes nothing under preemption: a frozen or captured block changes
/// its SM's stall reasons at once, so every run, lazy and stepped every cycle, gives the same
/// statistics (the simulator's own effort apart), with the preemptions counted.
#[test]
fn skipping_idle_cycles_changes_nothing_under_preemption() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("p.toml", PRIORITY).unwrap();
    for (p, m) in [(Policy::PpqExclusive, Mechanism::ContextSwitch), (Policy::Dss, Mechanism::Drain)] {
        let go = |skip_idle: bool| {
            let mut g = Gpu::with_framework(&cfg, p, m, w.processes.len()).unwrap();
            g.add_workload(&w).unwrap();
            g.run(RunLimits { skip_idle, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{p:?} {m:?}: {e}"));
            let mut r = g.result();
            assert!(r.preemptions > 0, "{p:?} {m:?}: the run preempted nothing");
            (r.stepped_cycles, r.sm.awake_cycles) = (0, 0);
            serde_json::to_string(&r).unwrap()
        };
        assert_eq!(go(true), go(false), "{p:?} {m:?}: results differ when every cycle is stepped");
    }
}
