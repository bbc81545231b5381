//! The slice table (kernels sharing SMs under quotas) in RTL, in lockstep with its model every
//! cycle (outputs and every register), on both backends, under a random controller; a broken
//! quota compare caught at the cycle the model predicts; the whole GPU under every slicing
//! policy with the table's RTL in the loop.

use mpgpu_ref::units::slice::Slice as SliceModel;
use mpgpu_rtl::SliceFaults;
use mpgpu_spec::units::slice::{Cmd, In, State, KMAX, NO_QUOTA, RES};
use mpgpu_spec::Unit;
use mpgpu_tb::blocks::SlicePorts;
use mpgpu_tb::{Backend, InLoop, RtlUnit};
use rand::{Rng, SeedableRng};

mod common;

const TOTAL: [u32; RES] = [8, 1536, 32768, 49152];

/// A random controller: kernels enter free slots (random grids, requests, quotas), leave once
/// done and drained, quota rows change, resident blocks complete, with calm phases in which the
/// table must fall asleep only when no SM has room for an eligible block. Returns the stimulus the
/// model produced and what it saw: (issues, issues at a quota's last block, leaves).
fn stimulus(sms: usize, seed: u64, cycles: usize) -> (Vec<In>, u64, u64, u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut m = SliceModel::new(sms, TOTAL);
    let mut resident: Vec<(u8, u8)> = Vec::new();
    let mut v = Vec::new();
    let (mut issues, mut at_quota, mut leaves, mut asleep) = (0, 0, 0, 0);
    for t in 0..cycles {
        let st = m.state();
        let mut cmd = Cmd::None;
        // (one phase in three is calm, a twentieth of the traffic, so that the table sleeps)
        let calm = (t / 150) % 3 == 2 && rng.gen_bool(0.95);
        let r = if calm { 100 } else { rng.gen_range(0..100) };
        let free = (0..KMAX).find(|&k| !st.valid[k]);
        if r < 4 && free.is_some() {
            let req = [1, 32 * rng.gen_range(1..=16), 256 * rng.gen_range(0..=64), 1024 * rng.gen_range(0..=24)];
            let quota = if rng.gen_bool(0.3) { NO_QUOTA } else { rng.gen_range(0..=8) };
            cmd = Cmd::Enter { slot: free.unwrap() as u8, blocks: rng.gen_range(1..80), req, quota };
        } else if r < 8 {
            let q = std::array::from_fn(|_| if rng.gen_bool(0.2) { NO_QUOTA } else { rng.gen_range(0..=6) });
            cmd = Cmd::Quota { sm: rng.gen_range(0..sms as u8), all: rng.gen_bool(0.3), q };
        } else if r < 12 {
            if let Some(k) = (0..KMAX).find(|&k| st.valid[k] && st.left[k] == 0 && !resident.iter().any(|x| x.1 == k as u8)) {
                cmd = Cmd::Leave { slot: k as u8 };
                leaves += 1;
            }
        }
        let done = if !calm && !resident.is_empty() && rng.gen_bool(0.25) { Some(resident.swap_remove(rng.gen_range(0..resident.len()))) } else { None };
        let i = In { cmd, done };
        if let Some((s, k)) = m.pick() {
            at_quota += (st.n[s as usize][k as usize] + 1 == st.quota[s as usize][k as usize]) as u64;
        }
        let o = m.outputs(&i);
        // (liveness: the table sleeps only when no SM has room for an eligible block)
        if !o.busy {
            asleep += 1;
            for s in 0..sms {
                let room = (0..KMAX).find(|&k| st.valid[k] && st.left[k] > 0 && st.n[s][k] < st.quota[s][k] && (0..RES).all(|c| st.used[s][c] <= st.lim[k][c]));
                assert!(room.is_none(), "{sms} SMs, seed {seed}: asleep with room on SM {s} for slot {room:?}: {st:?}");
            }
        }
        if let Some(x) = o.issue {
            resident.push(x);
            issues += 1;
        }
        m.clock(&i);
        v.push(i);
    }
    assert!(asleep > cycles / 100, "{sms} SMs, seed {seed}: asleep {asleep} of {cycles} cycles: the liveness check saw too little");
    (v, issues, at_quota, leaves)
}

fn pair(sms: usize, faults: SliceFaults, backend: Backend) -> InLoop<SliceModel, RtlUnit<SlicePorts>, State> {
    let rtl = RtlUnit::with_backend(SlicePorts { sms, total: TOTAL, faults }, backend).unwrap_or_else(|e| panic!("{e}"));
    InLoop::with_state(SliceModel::new(sms, TOTAL), rtl, 16, SliceModel::state, RtlUnit::<SlicePorts>::state).named("slice")
}

/// Random command, completion and quota traffic on 16, 15, 3, 2 and 1 SMs, both backends: zero
/// mismatches over outputs and every register, with many issues, blocks issued up to a
/// quota, kernels leaving and slots reused; and the table never asleep while an SM has room
/// for an eligible block.
#[test]
fn random_traffic_runs_in_lockstep_on_both_backends() {
    // Every SM count on rust-hdl; on Verilator (a model for each count) in the long tier, and
    // otherwise gtx480's 15, whose model the whole-GPU runs below share.
    let all = [(16, 1), (15, 2), (3, 5), (2, 4), (1, 3)];
    for backend in [Backend::RustHdl, Backend::Verilator] {
        for (sms, seed) in all.into_iter().filter(|&(sms, _)| cfg!(feature = "long") || backend == Backend::RustHdl || sms == 15) {
            let (stim, issues, at_quota, leaves) = stimulus(sms, seed, 6000);
            assert!(issues > 400 && at_quota > 20 && leaves > 10, "{sms} SMs: {issues} issues, {at_quota} at a quota, {leaves} leaves");
            let mut p = pair(sms, SliceFaults::default(), backend);
            for i in &stim {
                p.outputs(i);
                p.clock(i);
            }
            p.outputs(&In::default());
            if let Some(m) = p.mismatch() {
                panic!("{} {sms} SMs: {m}", backend.name());
            }
        }
    }
}

/// The broken quota compare (`<=`) is caught in the cycle after the first Fit in which it sets
/// a fit bit differently (a kernel at its quota taken as below it), on that bit.
#[test]
fn an_over_quota_issue_is_caught_where_the_model_predicts() {
    let (stim, _, _, _) = stimulus(16, 7, 4000);
    let mut m = SliceModel::new(16, TOTAL);
    let mut first = None;
    for (c, i) in stim.iter().enumerate() {
        if first.is_none() && m.fit_with(true) != m.fit_with(false) {
            first = Some(c as u64);
        }
        m.clock(i);
    }
    let first = first.expect("the stimulus never reaches a quota");
    for &backend in common::BROKEN_BACKENDS {
        let mut p = pair(16, SliceFaults { over_quota: true }, backend);
        for i in &stim {
            p.outputs(i);
            p.clock(i);
        }
        let mm = p.mismatch().expect("the over-quota issue was not caught");
        assert_eq!(mm.cycle, first + 1, "{}: {mm}", backend.name());
        assert!(mm.diffs.iter().any(|d| d.field.contains("f_e")), "{mm}");
    }
}

fn gpu_run(workload: &str, slicing: mpgpu_ref::timing::slicer::Slicing, backend: Backend, mode: mpgpu_tb::cosim::SlotMode, faults: SliceFaults) -> mpgpu_tb::cosim::CosimReport {
    use mpgpu_tb::cosim::{run_with, CosimOptions, UnitKind};
    let cfg = mpgpu_ref::config::GpuConfig::preset("gtx480").unwrap();
    let w = mpgpu_ref::workload::Workload::load(std::path::Path::new(&format!("{}/../workloads/{workload}.toml", env!("CARGO_MANIFEST_DIR")))).unwrap();
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::Drain);
    o.unit = UnitKind::named("slice").unwrap();
    o.slicing = slicing;
    o.mode = mode;
    o.backend = backend;
    o.broken = mpgpu_tb::broken::Broken::default().with("slice", faults);
    o.mismatch_vcd = std::env::temp_dir().join(format!("slice-mismatch-{}.vcd", std::process::id()));
    run_with(&cfg, &w, &o).unwrap()
}

/// The whole GPU under every slicing policy with the slice table's RTL in the loop, both
/// backends, a pair and a triple: zero mismatches, every output verified, kernels sharing SMs
/// (blocks issued beside another kernel's), and the RTL alone and the model alone driving the
/// GPU to the same cycle.
#[test]
fn every_policy_runs_in_lockstep_in_the_whole_gpu() {
    use mpgpu_ref::timing::slicer::Slicing;
    use mpgpu_tb::cosim::SlotMode;
    // Every policy in the long tier; otherwise Warped-Slicer's own (`an_over_quota_issue_is_caught_in_the_whole_gpu_where_predicted` runs the even split).
    let pair: &[Slicing] = if cfg!(feature = "long") { &[Slicing::LeftOver, Slicing::Even, Slicing::Spatial, Slicing::WarpedSlicer, Slicing::Oracle] } else { &[Slicing::WarpedSlicer] };
    let triple: &[Slicing] = if cfg!(feature = "long") { &[Slicing::Even, Slicing::WarpedSlicer] } else { &[Slicing::WarpedSlicer] };
    for (workload, policies) in [("slicing/mriq-histo", pair), ("slicing3/mriq-cutcp-histo", triple)] {
        for &p in policies {
            let model = gpu_run(workload, p, Backend::RustHdl, SlotMode::ModelAlone, SliceFaults::default()).result.unwrap();
            let st = model.slicing.clone().unwrap();
            assert!(st.issued > 50 && st.commands >= 2, "{workload} {p:?}: {st:?}");
            if p != Slicing::Spatial {
                assert!(st.max_sharing >= 2 && st.shared_issues > 0, "{workload} {p:?}: no SM held two kernels");
            }
            for backend in [Backend::RustHdl, Backend::Verilator] {
                let rep = gpu_run(workload, p, backend, SlotMode::Lockstep, SliceFaults::default());
                assert!(rep.mismatch.is_none(), "{workload} {p:?} {}: {}", backend.name(), rep.mismatch.unwrap());
                let r = rep.result.expect("the run finished");
                assert!(r.processes.iter().all(|x| x.verified), "{workload} {p:?}");
                assert!(rep.cycles_checked > 100);
                assert_eq!(r.cycles, model.cycles, "{workload} {p:?} {}", backend.name());
                // The RTL alone (no model beside it) for Warped-Slicer's own policy; for every
                // policy in the long tier (the lockstep runs above already drive the GPU with the
                // RTL's outputs).
                if cfg!(feature = "long") || p == Slicing::WarpedSlicer {
                    let alone = gpu_run(workload, p, backend, SlotMode::RtlAlone, SliceFaults::default()).result.unwrap();
                    assert_eq!(alone.cycles, model.cycles, "{workload} {p:?} {}: the RTL alone", backend.name());
                }
            }
        }
    }
}

/// In the whole GPU, the broken quota compare is caught in the GPU cycle after the first Fit
/// at which the model predicts it sets a fit bit differently, on that bit.
#[test]
fn an_over_quota_issue_is_caught_in_the_whole_gpu_where_predicted() {
    use mpgpu_ref::timing::slicer::Slicing;
    use mpgpu_tb::cosim::SlotMode;
    for p in [Slicing::Even, Slicing::WarpedSlicer] {
        let model = gpu_run("slicing/mriq-histo", p, Backend::RustHdl, SlotMode::ModelAlone, SliceFaults::default()).result.unwrap();
        let at = model.slicing.unwrap().first_over_quota.expect("no quota ever binds");
        for &backend in common::BROKEN_BACKENDS {
            let rep = gpu_run("slicing/mriq-histo", p, backend, SlotMode::Lockstep, SliceFaults { over_quota: true });
            let m = rep.mismatch.expect("the over-quota issue was not caught");
            assert_eq!(m.time, Some(at + 1), "{p:?} {}: {m}", backend.name());
            assert!(m.diffs.iter().any(|d| d.field.contains("f_e")), "{m}");
        }
    }
}
