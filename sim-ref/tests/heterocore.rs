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
