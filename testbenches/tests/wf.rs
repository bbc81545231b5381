//! Warped-Slicer's water-filling unit and sampling counters in RTL, in lockstep with their
//! models every cycle (outputs and the whole FSM state, tables included), on both backends;
//! broken variants caught where the model predicts.

use mpgpu_ref::units::prof::Prof as ProfModel;
use mpgpu_ref::units::wf::Wf as WfModel;
use mpgpu_ref::warped::{drive, random_scenario, Round, Scenario};
use mpgpu_rtl::{ProfFaults, WfFaults};
use mpgpu_spec::units::prof;
use mpgpu_spec::Unit;
use mpgpu_tb::blocks::{ProfPorts, WfPorts};
use mpgpu_tb::ports::Ports;
use mpgpu_tb::{Backend, InLoop, RtlUnit};
use rand::{Rng, SeedableRng};

type WfPair = InLoop<WfModel, RtlUnit<WfPorts>, mpgpu_spec::units::wf::State>;

fn wf_pair(sms: usize, faults: WfFaults, backend: Backend) -> WfPair {
    let rtl = RtlUnit::with_backend(WfPorts { sms, faults }, backend).unwrap_or_else(|e| panic!("{e}"));
    InLoop::with_state(WfModel::new(sms), rtl, 16, WfModel::state, RtlUnit::<WfPorts>::state).named("wf")
}

/// MM + MVP as the profile would see them on 16 SMs: SMs 0-7 run MM with 1..8 CTAs, 8-15 MVP.
fn mm_mvp() -> Scenario {
    let map: Vec<(u8, u8)> = (0..16).map(|s| ((s / 8) as u8, (s % 8 + 1) as u8)).collect();
    let mm = [3000u32, 5000, 7000, 8500, 10000, 10000, 10000, 10000];
    let mvp = [9000u32, 8100, 7200, 6300, 5400, 4500, 4000, 3600];
    let insts = (0..16).map(|s| if s < 8 { mm[s] } else { mvp[s - 8] }).collect();
    let stalls = (0..16).map(|s| if s < 8 { 100 + 10 * s as u32 } else { 2000 + 300 * (s as u32 - 8) }).collect();
    Scenario {
        kernels: 2,
        window: 5000,
        pct: 120,
        delay: 0,
        total: [8, 1536, 32768, 49152],
        req: vec![[1, 128, 5632, 0], [1, 192, 3840, 0]],
        rounds: vec![Round { map, insts, stalls }],
    }
}

/// The paper's worked case on the RTL, both backends: MM + MVP ends at (5, 1).
#[test]
fn mm_and_mvp_end_at_five_and_one_in_rtl() {
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let mut pair = wf_pair(16, WfFaults::default(), backend);
        let sc = mm_mvp();
        let (cycles, quota, spatial) = drive(&mut pair, &sc, 100_000, &mut |_, _, _| {}).expect("not done");
        if let Some(m) = pair.mismatch() {
            panic!("{}: {m}", backend.name());
        }
        assert_eq!((quota, spatial), (vec![5, 1], false), "{}", backend.name());
        assert_eq!(sc.expected().quota, vec![5, 1]);
        assert!(cycles > 5000 && cycles < 6000, "{cycles}");
    }
}

/// Random decisions (K = 2, 3, 4; ties; kernels past their peak; several rounds; the
/// fallback; windows of 1 to 5,000 cycles; decision delays), the RTL in lockstep with the
/// model every cycle, state included, and deciding what Algorithm 1 decides.
#[test]
fn random_decisions_run_in_lockstep_on_both_backends() {
    for (backend, seed, n) in [(Backend::RustHdl, 1u64, 90), (Backend::Verilator, 2, 150)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut pair = wf_pair(16, WfFaults::default(), backend);
        let (mut ties, mut spatial, mut cycles) = (0, 0, 0);
        for d in 0..n {
            let k = 2 + (d % 3) as u8;
            let sc = random_scenario(&mut rng, k, 16);
            let before = pair.model.ties.len();
            let (c, quota, sp) = drive(&mut pair, &sc, 1_000_000, &mut |_, _, _| {}).unwrap_or_else(|| panic!("decision {d} not done"));
            if let Some(m) = pair.mismatch() {
                panic!("{} seed {seed}, decision {d} ({sc:?}):\n{m}", backend.name());
            }
            let e = sc.expected();
            assert_eq!((quota, sp), (e.quota, e.spatial), "decision {d}");
            ties += (pair.model.ties.len() > before) as u32;
            spatial += sp as u32;
            cycles += c;
            // (the unit idles a cycle after `done`; the next decision starts from there)
            let i = mpgpu_spec::units::wf::In::default();
            pair.outputs(&i);
            pair.clock(&i);
        }
        eprintln!("{}: {n} decisions, {cycles} cycles, {ties} with ties, {spatial} spatial", backend.name());
        assert!(ties >= n / 6 && spatial >= n / 10 && spatial < n * 9 / 10, "{ties} with ties, {spatial} spatial of {n}");
    }
}

/// Fewer SMs (the Fermi configuration's 15).
#[test]
fn fifteen_sms_run_in_lockstep() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
    let mut pair = wf_pair(15, WfFaults::default(), Backend::RustHdl);
    for d in 0..20 {
        let sc = random_scenario(&mut rng, 2 + (d % 2) as u8, 15);
        let (_, quota, sp) = drive(&mut pair, &sc, 1_000_000, &mut |_, _, _| {}).expect("not done");
        if let Some(m) = pair.mismatch() {
            panic!("decision {d}: {m}");
        }
        let e = sc.expected();
        assert_eq!((quota, sp), (e.quota, e.spatial));
        let i = mpgpu_spec::units::wf::In::default();
        pair.outputs(&i);
        pair.clock(&i);
    }
}

/// A tie at Select won by the higher index (`tie_high`) is caught in the cycle after the
/// first Select that sees a tie, in the selected kernel or its Full bit.
#[test]
fn a_tie_won_by_the_higher_index_is_caught_where_the_model_predicts() {
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let mut found = false;
        for d in 0..200 {
            let sc = random_scenario(&mut rng, 2 + (d % 3) as u8, 16);
            // The model alone first: where is its first tie?
            let mut model = WfModel::new(16);
            drive(&mut model, &sc, 1_000_000, &mut |_, _, _| {}).unwrap();
            let Some(&(tie_cycle, _)) = model.ties.first() else { continue };
            let mut pair = wf_pair(16, WfFaults { tie_high: true }, backend);
            drive(&mut pair, &sc, 1_000_000, &mut |_, _, _| {});
            let m = pair.mismatch().expect("the broken tie-break was not caught");
            // The model counts clock edges from 1: the Select of edge `tie_cycle` is clocked
            // cycle tie_cycle - 1 (looks counted from 0), its result seen at the next look.
            assert_eq!(m.cycle, tie_cycle, "{}: {m}", backend.name());
            assert!(m.diffs.iter().all(|f| ["wf.state.sel", "wf.rd_k", "wf.state.full", "wf.state.phase"].contains(&f.field.as_str())), "{m}");
            assert!(m.diffs.iter().any(|f| f.field == "wf.state.sel" || f.field == "wf.state.full"), "{m}");
            found = true;
            break;
        }
        assert!(found, "no decision with a tie");
    }
}

/// The sampling counters: random windows and events, in lockstep (outputs and registers);
/// a latch one cycle late is caught at the cycle after the window's last, in the latched
/// counts.
#[test]
fn the_sampling_counters_run_in_lockstep_and_a_late_latch_is_caught() {
    let stim = |seed: u64| -> Vec<prof::In> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut v = Vec::new();
        for _ in 0..30 {
            for _ in 0..rng.gen_range(0..20) {
                v.push(prof::In { issued: rng.gen_range(0..=4), stall: rng.gen(), blocks: rng.gen_range(0..9), ..Default::default() });
            }
            let w = rng.gen_range(1..200);
            for c in 0..w {
                v.push(prof::In { run: true, first: c == 0, last: c == w - 1, issued: rng.gen_range(0..=4), stall: rng.gen_range(0..3) == 0, blocks: rng.gen_range(0..9) });
            }
        }
        v
    };
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let rtl = RtlUnit::with_backend(ProfPorts::default(), backend).unwrap();
        let mut pair = InLoop::with_state(ProfModel::default(), rtl, 16, ProfModel::state, RtlUnit::<ProfPorts>::state).named("sm[0].prof");
        let s = stim(5);
        let mut latched = 0;
        for i in &s {
            let o = pair.outputs(i);
            pair.clock(i);
            latched += (i.last && o.insts != 0) as u32;
        }
        pair.outputs(&prof::In::default());
        assert!(pair.mismatch().is_none(), "{}", pair.mismatch().unwrap());
        assert!(latched > 10);
        let rtl = RtlUnit::with_backend(ProfPorts { faults: ProfFaults { late_latch: true } }, backend).unwrap();
        let mut pair = InLoop::with_state(ProfModel::default(), rtl, 16, ProfModel::state, RtlUnit::<ProfPorts>::state).named("sm[0].prof");
        // The first window's last cycle: the model latches at its edge; the broken one a cycle
        // later.
        let last = s.iter().position(|i| i.last).unwrap() as u64;
        for i in &s {
            pair.outputs(i);
            pair.clock(i);
        }
        let m = pair.mismatch().expect("the late latch was not caught");
        assert_eq!(m.cycle, last + 1, "{m}");
        assert!(m.diffs.iter().any(|d| d.field == "sm[0].prof.insts" || d.field == "sm[0].prof.state.insts"), "{m}");
        // Its plain simulation agrees with the shortcut one (flat blocks only).
        let _ = ProfPorts::default().block();
    }
}

fn gpu_run(workload: &str, backend: Backend, mode: mpgpu_tb::cosim::SlotMode, wf: WfFaults, pf: ProfFaults) -> mpgpu_tb::cosim::CosimReport {
    use mpgpu_tb::cosim::{run_with, CosimOptions, UnitKind};
    let cfg = mpgpu_ref::config::GpuConfig::preset("gtx480").unwrap();
    let w = mpgpu_ref::workload::Workload::load(std::path::Path::new(&format!("{}/../workloads/slicing/{workload}.toml", env!("CARGO_MANIFEST_DIR")))).unwrap();
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::Drain);
    o.unit = UnitKind::named("wf").unwrap();
    o.mode = mode;
    o.backend = backend;
    o.broken = mpgpu_tb::broken::Broken::default().with("wf", wf).with("prof", pf);
    o.mismatch_vcd = std::env::temp_dir().join(format!("wf-mismatch-{workload}-{}.vcd", std::process::id()));
    run_with(&cfg, &w, &o).unwrap()
}

/// The whole GPU under Warped-Slicer with the water-filling unit and every SM's counters in
/// RTL, in lockstep, on both backends: repartitions happen (profiling rounds, decisions with
/// quotas), no mismatch, every output verified, and the RTL alone and the model alone drive
/// the GPU to the same cycles.
#[test]
fn warped_slicer_runs_in_lockstep_in_the_whole_gpu() {
    use mpgpu_tb::cosim::SlotMode;
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let rep = gpu_run("mriq-cutcp", backend, SlotMode::Lockstep, WfFaults::default(), ProfFaults::default());
        assert!(rep.mismatch.is_none(), "{}: {}", backend.name(), rep.mismatch.unwrap());
        let r = rep.result.expect("the run finished");
        assert!(r.processes.iter().all(|p| p.verified));
        let st = r.slicing.expect("slicing stats");
        assert!(st.rounds >= 2 && st.decisions.len() >= 2 && st.decisions.iter().any(|d| !d.spatial), "{st:?}");
        assert!(!st.ties.is_empty());
        let alone = gpu_run("mriq-cutcp", backend, SlotMode::RtlAlone, WfFaults::default(), ProfFaults::default()).result.unwrap();
        let model = gpu_run("mriq-cutcp", backend, SlotMode::ModelAlone, WfFaults::default(), ProfFaults::default()).result.unwrap();
        assert_eq!((alone.cycles, model.cycles), (r.cycles, r.cycles), "{}", backend.name());
        assert_eq!(alone.slicing.unwrap().decisions, st.decisions);
    }
}

/// In the whole GPU, the broken variants are caught at the cycle and field the model
/// predicts: a counter latched a cycle late in the cycle after the first window's last (SM
/// 0's latched count), a tie won by the higher index in the cycle after the first tied Select
/// (the selected kernel or a Full bit).
#[test]
fn broken_variants_are_caught_in_the_whole_gpu_where_predicted() {
    use mpgpu_tb::cosim::SlotMode;
    let model = gpu_run("mriq-cutcp", Backend::RustHdl, SlotMode::ModelAlone, WfFaults::default(), ProfFaults::default()).result.unwrap();
    let st = model.slicing.unwrap();
    let first_window_end = st.samples[0].0;
    let first_tie = st.ties[0];
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let rep = gpu_run("mriq-cutcp", backend, SlotMode::Lockstep, WfFaults::default(), ProfFaults { late_latch: true });
        let m = rep.mismatch.expect("the late latch was not caught");
        assert_eq!(m.time, Some(first_window_end + 1), "{}: {m}", backend.name());
        assert!(m.diffs.iter().any(|d| d.field.starts_with("sm[") && d.field.ends_with("].prof.insts")), "{m}");
        let rep = gpu_run("mriq-cutcp", backend, SlotMode::Lockstep, WfFaults { tie_high: true }, ProfFaults::default());
        let m = rep.mismatch.expect("the broken tie-break was not caught");
        assert_eq!(m.time, Some(first_tie + 1), "{}: {m}", backend.name());
        assert!(m.diffs.iter().any(|d| d.field == "wf.state.sel" || d.field == "wf.state.full"), "{m}");
    }
}
