//! Warped-Slicer's profiling accuracy (§IV-A): the partition the 5,000-cycle online profile
//! gives is within one block of the Oracle's (water-filling on curves from isolated runs),
//! kernel by kernel, for most of the 21 pairs of `workloads/slicing` (the paper: more than 90 %
//! of its pairs). Results and the causes of the misses: `docs/warped-slicer.md`.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::timing::slicer::{oracle_curves, SliceDecision, SliceParams, Slicer, Slicing};
use mpgpu_ref::workload::Workload;
use std::collections::HashMap;

/// The first decision of `w` under `slicer`, with the outputs verified.
fn first_decision(cfg: &GpuConfig, w: &Workload, slicer: Slicer, name: &str) -> SliceDecision {
    let mut gpu = Gpu::with_dispatcher(cfg, Box::new(slicer));
    gpu.add_workload(w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = Slicer::result(&gpu);
    assert!(r.processes.iter().all(|p| p.verified), "{name}");
    r.slicing.and_then(|s| s.decisions.first().cloned()).unwrap_or_else(|| panic!("{name}: no decision"))
}

fn pairs() -> Vec<(String, Workload)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/slicing");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    v.sort();
    v.iter().map(|p| (p.file_stem().unwrap().to_string_lossy().to_string(), Workload::load(p).unwrap())).collect()
}

/// Most pairs (more than half) within one block of the Oracle with the grid cap (our default);
/// and the cap is what gets there: without it, at most half (the profile measures counts a
/// 32-block grid cannot fill on every SM).
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn profiled_partitions_are_within_one_block_of_the_oracle_for_most_pairs() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let sms = cfg.num_sms() as usize;
    let mut cache = HashMap::new();
    let (mut near, mut near_uncapped, mut n) = (0, 0, 0);
    let mut report = Vec::new();
    for (name, w) in pairs() {
        let curves = oracle_curves(&cfg, &w, RunLimits::default(), &mut cache).unwrap_or_else(|e| panic!("{name}: {e}"));
        let oracle = first_decision(&cfg, &w, Slicer::oracle(SliceParams::default(), sms, curves), &name);
        let ws = first_decision(&cfg, &w, Slicer::new(Slicing::WarpedSlicer, SliceParams::default(), sms), &name);
        let raw = first_decision(&cfg, &w, Slicer::new(Slicing::WarpedSlicer, SliceParams { grid_cap: false, ..SliceParams::default() }, sms), &name);
        n += 1;
        near += ws.within_one_of(&oracle) as u32;
        near_uncapped += raw.within_one_of(&oracle) as u32;
        report.push(format!("{name}: oracle {oracle} profiled {ws} uncapped {raw}"));
    }
    let report = report.join("\n");
    assert_eq!(n, 21, "{report}");
    assert!(2 * near > n, "within one block of the Oracle: {near} of {n}\n{report}");
    assert!(2 * near_uncapped <= n && near > near_uncapped, "uncapped {near_uncapped}, capped {near} of {n}\n{report}");
    eprintln!("within one block of the Oracle: {near} of {n} (uncapped {near_uncapped})\n{report}");
}
