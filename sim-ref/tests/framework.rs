//! The kernel scheduling framework driving the whole GPU: every policy and preemption
//! mechanism keeps every output right, preemptive priority helps the high-priority process,
//! and Equal Spatial Sharing divides the SMs as the thesis says.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{run_workload_with, Gpu, RunLimits, RunResult};
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

fn run(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism) -> RunResult {
    run_workload_with(cfg, w, Some((p, m)), RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{:?} {:?}: {e}", p, m))
}

#[test]
fn every_policy_and_mechanism_keeps_outputs_right() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("p.toml", PRIORITY).unwrap();
    for p in [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal] {
        for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
            let r = run(&cfg, &w, p, m);
            for pr in &r.processes {
                assert!(pr.verified, "{p:?} {m:?}: {} failed: {:?}", pr.name, pr.failures);
            }
        }
    }
}

fn turnaround(r: &RunResult, name: &str) -> u64 {
    r.processes.iter().find(|p| p.name == name).unwrap().turnaround
}

#[test]
fn preemptive_priority_serves_the_high_priority_process_sooner() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("p.toml", PRIORITY).unwrap();
    let npq = run(&cfg, &w, Policy::Npq, Mechanism::ContextSwitch);
    assert!(npq.dispatcher.contains("0 preemptions"), "{}", npq.dispatcher);
    for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
        let ppq = run(&cfg, &w, Policy::PpqExclusive, m);
        assert!(!ppq.dispatcher.contains(" 0 preemptions"), "{m:?}: {}", ppq.dispatcher);
        assert!(
            turnaround(&ppq, "high") < turnaround(&npq, "high"),
            "{m:?}: high-priority turnaround {} not better than NPQ's {}",
            turnaround(&ppq, "high"),
            turnaround(&npq, "high")
        );
    }
    let ctx = run(&cfg, &w, Policy::PpqExclusive, Mechanism::ContextSwitch);
    assert!(!ctx.dispatcher.contains(" 0 restores"), "context-switched blocks were never restored: {}", ctx.dispatcher);
    // With long-running blocks, saving them beats waiting for them (thesis §5.3.3).
    let drain = run(&cfg, &w, Policy::PpqExclusive, Mechanism::Drain);
    assert!(turnaround(&ctx, "high") < turnaround(&drain, "high"), "context switch {} vs drain {}", turnaround(&ctx, "high"), turnaround(&drain, "high"));
}

#[test]
fn equal_spatial_sharing_divides_13_sms_4_3_3_3() {
    // Four long processes arriving together on k20c's 13 SMs.
    let cfg = GpuConfig::preset("k20c").unwrap();
    let mut text = String::from("description = \"four\"\n");
    for (i, k) in ["lbm", "stencil", "mriq", "spmv"].iter().enumerate() {
        let size = match *k {
            "lbm" => 512,
            "stencil" => 96,
            "mriq" => 16384,
            _ => 131072,
        };
        text += &format!("[[process]]\nname = \"p{i}\"\nlaunches = [{{ kernel = \"{k}\", size = {size}, seed = {i} }}]\n");
    }
    let w = Workload::parse("four.toml", &text).unwrap();
    let mut g = Gpu::with_framework(&cfg, Policy::Equal, Mechanism::Drain, 4).unwrap();
    g.add_workload(&w).unwrap();
    // Let the policy settle, then look at the SMST.
    let _ = g.run(RunLimits { max_cycles: 20_000, ..RunLimits::default() }, &mut |_, _, _| {});
    let mut sms: Vec<usize> = g.framework().unwrap().allocation().iter().map(|p| p.1).collect();
    assert_eq!(sms.len(), 4, "{sms:?}");
    let first = sms[0];
    sms[1..].sort_unstable();
    assert_eq!((first, sms[1..].to_vec()), (4, vec![3, 3, 3]), "allocation {:?}", g.framework().unwrap().allocation());
}
