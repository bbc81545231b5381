//! HeteroCore's steering unit in RTL: in lockstep with its model every cycle (outputs and every
//! register) on both backends under a random controller and in the whole GPU on HeteroCore's
//! big and small SMs (decisions that steer, drains and context switches seen), the RTL alone
//! driving the GPU as the model does; each broken variant caught at the cycle and field the
//! model predicts; the waveform's ports, registers, expected values and mismatch marker.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::timing::steer::{Preempt, Steer as SteerDispatcher, SteerParams, Steering};
use mpgpu_ref::units::steer::{gain, Profiled, Steer};
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::SteerFaults;
use mpgpu_spec::units::steer::*;
use mpgpu_spec::Unit;
use mpgpu_tb::blocks::SteerPorts;
use mpgpu_tb::cosim::{run_with, CosimOptions, CosimReport, SlotMode, UnitKind};
use mpgpu_tb::{Backend, InLoop, RtlUnit};
use rand::{Rng, SeedableRng};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

mod common;

/// What a random stimulus exercised.
#[derive(Debug, Default)]
struct Seen {
    decisions: u32,
    steering: u32,
    four: u32,
    drains: u32,
    switches: u32,
    stops: u32,
    /// Profiled slots whose larger rate took one shift to fit 16 bits, and more than one.
    one_shift: u32,
    shifts: u32,
}

/// A random controller on 16 SMs (a random split into big, small and neither): kernels take
/// and leave slots, owner tables load (between profiles, or with a start or a stop, as the
/// contract asks; and in the cycle of a decision), profiles start on the active slots with short
/// random lengths, some stopped, block ends and issue on every SM, random blocks per SM, every
/// preemption policy, the clock gated (the cycle stamp jumps) between profiles.
fn stimulus(seed: u64, cycles: usize, window: u32) -> (Vec<In>, Seen) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut m = Steer::default();
    let (mut big_sms, mut small_sms) = (0u16, 0u16);
    for s in 0..MAX_SMS {
        match rng.gen_range(0..10) {
            0..=4 => big_sms |= 1 << s,
            5..=8 => small_sms |= 1 << s,
            _ => {}
        }
    }
    let mut active = 0u8;
    let mut blocks = [[0u8; 3]; KMAX];
    let mut now = 0u32;
    let mut seen = Seen::default();
    let mut v = Vec::new();
    for _ in 0..cycles {
        let o = m.outputs(&In::default());
        let idle = o.phase == PHASE_IDLE;
        now = now.wrapping_add(if idle && rng.gen_bool(0.3) { rng.gen_range(1..40_000) } else { 1 });
        // (short profiles, their lengths fixed for the run)
        let mut i = In { now, warmup: 5 + (seed % 3) as u32 * 6, window: window + (seed % 5) as u32, policy: rng.gen_range(0..3), big_sms, small_sms, ..In::default() };
        let change = (idle && rng.gen_bool(0.05)) || (!idle && rng.gen_bool(0.01 / window as f64));
        if change {
            // Kernels come and go; a new one in a slot is fresh.
            for k in 0..KMAX {
                if rng.gen_bool(0.3) {
                    active ^= 1 << k;
                    if active >> k & 1 != 0 {
                        i.fresh |= 1 << k;
                        let cb = rng.gen_range(0..64);
                        blocks[k] = [cb, rng.gen_range(0..=cb.max(1)), rng.gen_range(0..64)];
                    }
                }
            }
            if active.count_ones() >= 2 && rng.gen_bool(0.8) {
                i.start = true;
            } else {
                i.stop = true;
                seen.stops += !idle as u32;
            }
        }
        if change || o.decided || (idle && rng.gen_bool(0.02)) {
            i.load = true;
            for s in 0..MAX_SMS {
                let k = rng.gen_range(0..KMAX);
                i.owners_in[s] = if active >> k & 1 != 0 && rng.gen_bool(0.95) { 1 << SLOT_BITS | k as u8 } else { rng.gen_range(0..4) };
            }
        }
        i.active = active;
        i.ends = rng.gen_range(0..16) & active & if rng.gen_bool(0.1) { 0xf } else { 0 };
        for s in 0..MAX_SMS {
            i.issued[s] = rng.gen_range(0..8);
        }
        for k in 0..KMAX {
            [i.cb[k], i.cs[k], i.c0[k]] = blocks[k];
        }
        if o.decided {
            seen.decisions += 1;
            seen.steering += (o.big != 0) as u32;
            // (the rates as the decision formed them: a slot's sum times its SMs of the other kind)
            let st = m.state();
            for k in (0..KMAX).filter(|&k| st.prof >> k & 1 != 0) {
                let on = |mask: u16| (0..MAX_SMS).filter(|&s| st.owners[s] == (1 << SLOT_BITS | k as u8) && mask >> s & 1 != 0).count() as u64;
                let top = (o.big_insts[k] as u64 * on(small_sms)).max(o.small_insts[k] as u64 * on(big_sms));
                seen.one_shift += (top >> 16 == 1) as u32;
                seen.shifts += (top >> 17 != 0) as u32;
            }
        }
        seen.four += (m.state().prof.count_ones() == 4 && o.decided) as u32;
        m.clock(&i);
        if i.load {
            let st = m.state();
            seen.drains += st.modes.iter().filter(|&&x| x == MODE_DRAIN).count() as u32;
            seen.switches += st.modes.iter().filter(|&&x| x == MODE_SWITCH).count() as u32;
        }
        v.push(i);
    }
    (v, seen)
}

fn pair(faults: SteerFaults, backend: Backend) -> InLoop<Steer, RtlUnit<SteerPorts>, State> {
    let rtl = RtlUnit::with_backend(SteerPorts { faults }, backend).unwrap_or_else(|e| panic!("{e}"));
    InLoop::with_state(Steer::default(), rtl, 16, Steer::state, RtlUnit::<SteerPorts>::state).named("steer")
}

/// `stim` through the model and the RTL in lockstep on both backends: panics at a mismatch,
/// named by `what`.
fn lockstep(stim: &[In], what: &str) {
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let mut p = pair(SteerFaults::default(), backend);
        for i in stim {
            p.outputs(i);
            p.clock(i);
        }
        p.outputs(&In::default());
        if let Some(m) = p.mismatch() {
            panic!("{} {what}: {m}", backend.name());
        }
    }
}

/// Random traffic on both backends: zero mismatches over the outputs and every register, with
/// decisions of two to four kernels that steer, profiles stopped, drains and switches.
#[test]
fn random_traffic_runs_in_lockstep_on_both_backends() {
    for seed in [1, 2, 3] {
        let (stim, seen) = stimulus(seed, 30_000, 17);
        assert!(seen.decisions > 40 && seen.steering > 10 && seen.four > 2 && seen.stops > 2 && seen.drains > 20 && seen.switches > 20, "seed {seed}: {seen:?}");
        lockstep(&stim, &format!("seed {seed}"));
    }
}

/// Windows of 12,000 cycles, so that the rates outgrow 16 bits and the decision shifts them (by
/// one, and by more): in lockstep on both backends, failing unless both happened.
#[test]
fn wide_rates_are_normalised_in_lockstep() {
    let (stim, seen) = stimulus(4, 100_000, 12_000);
    assert!(seen.decisions > 3 && seen.one_shift > 0 && seen.shifts > 0, "{seen:?}");
    lockstep(&stim, "long windows");
}

/// A directed decision where one slot's rate is just over 16 bits (B = 84,000, S = 0) with
/// fden 63: unshifted, its NUM would overflow 23 bits and turn negative, and the other slot (a
/// smaller loss than that) would take the big SMs. The model gives slot 0 the big SMs; the RTL
/// must agree, on both backends.
#[test]
fn a_rate_just_over_16_bits_is_shifted_once() {
    // SMs 0, 1 big and 2 small of slot 0; SM 3 big and 4 small of slot 1.
    let mut base = In { warmup: 1, window: 6000, big_sms: 0b01011, small_sms: 0b10100, active: 0b11, cb: [63, 10, 0, 0], cs: [0, 6, 0, 0], c0: [30, 8, 0, 0], ..In::default() };
    base.issued[..5].copy_from_slice(&[7, 7, 0, 6, 7]);
    let mut first = base;
    first.start = true;
    first.load = true;
    first.owners_in[..5].copy_from_slice(&[4, 4, 4, 5, 5]);
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let mut p = pair(SteerFaults::default(), backend);
        let mut decided = None;
        for c in 0..7000u32 {
            let i = if c == 0 { first } else { In { now: c, ..base } };
            let o = p.outputs(&i);
            if o.decided {
                decided = Some((o.big, o.big_insts, o.small_insts));
            }
            p.clock(&i);
        }
        if let Some(m) = p.mismatch() {
            panic!("{}: {m}", backend.name());
        }
        assert_eq!(decided, Some((0b01, [84_000, 36_000, 0, 0], [0, 42_000, 0, 0])), "{}", backend.name());
    }
}

/// stencil (it gains on big SMs in the profile) and spmv (it does not) on HeteroCore's GPU.
const PAIR: &str = "description = \"stencil and spmv\"\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 64, seed = 1 }]\n[[process]]\nname = \"spmv\"\nlaunches = [{ kernel = \"spmv\", size = 8192, seed = 1 }]\n";
/// Four applications (§6.4).
const FOUR: &str = "description = \"four\"\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 64, seed = 1 }]\n[[process]]\nname = \"spmv\"\nlaunches = [{ kernel = \"spmv\", size = 8192, seed = 1 }]\n[[process]]\nname = \"sgemm\"\nlaunches = [{ kernel = \"sgemm\", size = 128, seed = 1 }]\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 64, seed = 1 }]\n";

fn workload(text: &str) -> Workload {
    Workload::parse("test.toml", text).unwrap_or_else(|e| panic!("{e}"))
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("steer");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn params(preempt: Preempt) -> SteerParams {
    SteerParams { warmup: 2000, window: 2000, preempt }
}

fn gpu_run(text: &str, preempt: Preempt, backend: Backend, mode: SlotMode, faults: SteerFaults, vcd: Option<PathBuf>) -> CosimReport {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::Drain);
    o.unit = UnitKind::named("steer").unwrap();
    o.steering = Steering::Dynamic;
    o.steer = params(preempt);
    o.mode = mode;
    o.backend = backend;
    o.broken = mpgpu_tb::broken::Broken::default().with("steer", faults);
    o.vcd = vcd;
    o.mismatch_vcd = dir(&format!("mismatch-{}.vcd", backend.name()));
    run_with(&cfg, &workload(text), &o).unwrap()
}

/// Dynamic steering of a pair and of four kernels on HeteroCore's GPU with the unit's RTL in
/// the loop, both backends, under the adaptive and the context-switching preemption: zero
/// mismatches, every output verified, decisions that give the big SMs to one kernel (two of
/// four), SMs that drain and SMs context-switched; the RTL alone drives the GPU to the model's
/// cycle.
#[test]
fn dynamic_steering_runs_with_the_unit_in_the_loop() {
    for (text, preempt, n) in [(PAIR, Preempt::Adaptive, 2), (FOUR, Preempt::Switch, 4)] {
        let model = gpu_run(text, preempt, Backend::RustHdl, SlotMode::ModelAlone, SteerFaults::default(), None).result.unwrap();
        let st = model.steering.clone().unwrap();
        assert!(st.decisions.iter().any(|d| d.launches.len() == n && d.big.len() == n / 2), "{n} kernels: no decision steered: {:?}", st.decisions);
        assert!(st.switches > 0 && st.saved_blocks > 0, "{n} kernels: no context switch: {st:?}");
        if preempt == Preempt::Adaptive {
            assert!(st.drains > 0, "no SM drained: {st:?}");
        }
        for backend in [Backend::RustHdl, Backend::Verilator] {
            let rep = gpu_run(text, preempt, backend, SlotMode::Lockstep, SteerFaults::default(), None);
            assert!(rep.mismatch.is_none(), "{n} kernels {}: {}", backend.name(), rep.mismatch.unwrap());
            assert!(rep.cycles_checked > 8000, "{}", rep.cycles_checked);
            let r = rep.result.unwrap();
            assert!(r.processes.iter().all(|p| p.verified));
            assert_eq!(r.steering, model.steering, "{n} kernels {}", backend.name());
            let alone = gpu_run(text, preempt, backend, SlotMode::RtlAlone, SteerFaults::default(), None).result.unwrap();
            assert_eq!((alone.cycles, alone.steering), (model.cycles, model.steering.clone()), "{n} kernels {}: the RTL alone", backend.name());
        }
    }
}

/// The model in the GPU's slot, watched: per clocked GPU cycle, its state after the edge.
struct Watch(Steer, Rc<RefCell<Vec<(u64, State)>>>, u64);

impl Unit for Watch {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.0.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        self.0.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        self.0.clock(i);
        self.1.borrow_mut().push((self.2, self.0.state()));
    }
    fn at_cycle(&mut self, c: u64) {
        self.2 = c;
    }
}

impl Hosted for Watch {}

/// The model's states, edge by edge (GPU cycle of the edge, state after it), for `text`.
fn watched(text: &str, preempt: Preempt) -> Vec<(u64, State)> {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut g = Gpu::with_dispatcher(&cfg, Box::new(SteerDispatcher::new(&cfg, Steering::Dynamic, params(preempt))));
    g.set_units(&mut |_| Box::new(Watch(Steer::default(), log.clone(), 0)) as Held<In, Out>).unwrap();
    g.add_workload(&workload(text)).unwrap();
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let v = log.borrow().clone();
    v
}

/// The decision with the pairs' products compared unsigned (the broken variant's), from what
/// a decided state recorded.
fn unsigned_decision(k: &[Profiled]) -> u8 {
    let g: Vec<(i64, i64, bool)> = k.iter().map(gain).collect();
    if g.iter().all(|x| x.2) {
        return 0;
    }
    let u = |x: i64| (x as u64) & ((1 << 45) - 1);
    let mut rank = vec![0; k.len()];
    for i in 0..k.len() {
        for j in i + 1..k.len() {
            if u(g[j].0 * g[i].1) >= u(g[i].0 * g[j].1) {
                rank[i] += 1;
            } else {
                rank[j] += 1;
            }
        }
    }
    (0..k.len()).filter(|&i| rank[i] < k.len() / 2).fold(0, |m, i| m | 1 << i)
}

/// Each broken variant is caught in the GPU cycle and on the field the model predicts, on both
/// backends (in the clocked cycle after the edge whose state differs, where the states are
/// compared): the short window after the edge where the model's window goes from two cycles
/// left to one (the RTL already deciding), on the phase; the unsigned compare at the first
/// decision whose outcome the sign changes, on `big`; the context switch that ignores the
/// adaptive choice after the first load that records a drain, on `modes`.
#[test]
fn each_broken_variant_is_caught_where_the_model_predicts() {
    let log = watched(PAIR, Preempt::Adaptive);
    // (a state is compared in the next clocked cycle; the broken RTL leaves the window at the
    // edge where the model's timer goes from 2 to 1)
    let next = |c: u64| log.iter().map(|x| x.0).find(|&t| t > c).expect("a clocked cycle after");
    let short_at = next(log.iter().find(|(_, s)| s.phase == PHASE_WINDOW && s.timer == 1).expect("no window").0);
    // (a decided state: its slots' counters, SMs and blocks reconstructed from the run's
    // decision records)
    let model = gpu_run(PAIR, Preempt::Adaptive, Backend::RustHdl, SlotMode::ModelAlone, SteerFaults::default(), None).result.unwrap();
    let decisions = model.steering.unwrap().decisions;
    let unsigned_at = decisions
        .iter()
        .find(|d| {
            let k: Vec<Profiled> = (0..d.launches.len()).map(|i| Profiled { big_insts: d.big_insts[i] as u32, small_insts: d.small_insts[i] as u32, nb: d.sms[i].0, ns: d.sms[i].1, blocks: d.blocks[i] }).collect();
            let ours: u8 = (0..d.launches.len()).filter(|&i| d.big.contains(&d.launches[i])).fold(0, |m, i| m | 1 << i);
            unsigned_decision(&k) != ours
        })
        .expect("no decision where the sign matters")
        .cycle;
    let drain_at = next(log.iter().find(|(_, s)| s.modes.contains(&MODE_DRAIN)).expect("no drain recorded").0);
    let cases = [
        (SteerFaults { short_window: true, ..SteerFaults::default() }, short_at, "phase"),
        (SteerFaults { unsigned_compare: true, ..SteerFaults::default() }, unsigned_at, "big"),
        (SteerFaults { always_switch: true, ..SteerFaults::default() }, drain_at, "modes"),
    ];
    for (faults, at, field) in cases {
        for &backend in common::BROKEN_BACKENDS {
            let rep = gpu_run(PAIR, Preempt::Adaptive, backend, SlotMode::Lockstep, faults, None);
            let m = rep.mismatch.unwrap_or_else(|| panic!("{faults:?} was not caught on {}", backend.name()));
            assert_eq!(m.time, Some(at), "{faults:?} {}: {m}", backend.name());
            assert!(m.diffs.iter().any(|d| d.field.contains(field)), "{faults:?}: {m}");
        }
    }
}

/// `--vcd`: the run's waveform holds the unit's ports, its registers, the model's expected
/// values and the mismatch marker, on the GPU's time axis.
#[test]
fn the_waveform_shows_ports_registers_expected_values_and_the_marker() {
    let path = dir("run.vcd");
    let rep = gpu_run(PAIR, Preempt::Adaptive, Backend::RustHdl, SlotMode::Lockstep, SteerFaults::default(), Some(path.clone()));
    assert!(rep.mismatch.is_none());
    let text = std::fs::read_to_string(&path).unwrap();
    for name in [" owners_in ", " issued ", " owners ", " modes ", " big_insts0 ", " timer ", " bi$0 ", " own$15 ", " mismatch $end", "module expected"] {
        assert!(text.contains(name), "the waveform lacks `{}`", name.trim());
    }
}

/// `mpgpu soak --unit steer`: random workloads on HeteroCore's GPU, each steered under every
/// preemption policy with the unit's RTL in the loop: clean, with decisions, drains and context
/// switches; the context switch that ignores the adaptive choice is found.
#[test]
fn a_soak_runs_clean_and_finds_the_broken_preemption_records() {
    use mpgpu_ref::soakgen::SoakParams;
    use mpgpu_tb::soak::Soak;
    let soak = |faults: SteerFaults| Soak {
        seed: 1,
        workloads: 8,
        config: GpuConfig::preset("heterocore").unwrap(),
        config_arg: "heterocore".into(),
        backend: Backend::RustHdl,
        unit: UnitKind::named("steer").unwrap(),
        broken: mpgpu_tb::broken::Broken::default().with("steer", faults),
        params: SoakParams::default(),
        out: dir("soak"),
        sliced: None,
    };
    let clean = soak(SteerFaults::default()).run(&mut |_, _, _| {}).unwrap();
    assert!(clean.failure.is_none(), "{:?}", clean.failure);
    assert_eq!((clean.workloads, clean.runs), (8, 24));
    assert!(clean.steer_decisions > 0 && clean.steer_drains > 0 && clean.steer_switches > 0, "{clean:?}");
    let broken = soak(SteerFaults { always_switch: true, ..SteerFaults::default() }).run(&mut |_, _, _| {}).unwrap();
    let f = broken.failure.expect("the broken preemption records were not found");
    assert!(f.mismatch.as_ref().is_some_and(|m| m.diffs.iter().any(|d| d.field.contains("modes"))), "{:?}", f.mismatch);
}

/// Steering inside the scheduling framework (`--policy` with `--steer`): the framework's RTL
/// and the steering unit's RTL together in the GPU, in lockstep on both backends under FCFS
/// and DSS (DSS on Verilator in the long tier); a decision gives blur the big SMs and SMs change owner by draining (the quotas),
/// every output verified, both backends driving the GPU alike and as the models alone do.
#[test]
fn steering_inside_the_framework_runs_with_the_frameworks_rtl() {
    use mpgpu_ref::units::framework::{Mechanism, Policy};
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = workload("description = \"blur + stencil\"\n[[process]]\nname = \"blur\"\nlaunches = [{ kernel = \"blur\", size = 262144, seed = 1 }]\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 96, seed = 1 }]\n");
    for policy in [Policy::Fcfs, Policy::Dss] {
        let run = |backend: Backend, mode: SlotMode| {
            let mut o = CosimOptions::new(policy, Mechanism::ContextSwitch);
            o.unit = UnitKind::named("sched,steer").unwrap();
            (o.steered, o.steering, o.steer) = (true, Steering::Dynamic, params(Preempt::Drain));
            (o.mode, o.backend) = (mode, backend);
            o.mismatch_vcd = dir(&format!("mismatch-fw-{}.vcd", backend.name()));
            run_with(&cfg, &w, &o).unwrap()
        };
        let model = run(Backend::RustHdl, SlotMode::ModelAlone).result.unwrap();
        let st = model.steering.clone().unwrap_or_else(|| panic!("{policy:?}: no steering statistics"));
        assert!(st.decisions.iter().any(|d| d.big == vec![0]), "{policy:?}: no decision gave blur the big SMs: {st:?}");
        assert!(st.drains > 0 && st.switches == 0, "{policy:?}: SMs change owner by draining only: {st:?}");
        assert!(model.dispatcher.contains(", steer dynamic inside it"), "{}", model.dispatcher);
        // (the quotas act: the framework alone runs the pair otherwise)
        let mut o = CosimOptions::new(policy, Mechanism::ContextSwitch);
        o.mode = SlotMode::ModelAlone;
        let alone = run_with(&cfg, &w, &o).unwrap().result.unwrap();
        assert_ne!(alone.cycles, model.cycles, "{policy:?}: steering changed nothing");
        // (each policy is a Verilator model of the framework to build: DSS's in the long tier)
        let backends = if policy == Policy::Fcfs || cfg!(feature = "long") { vec![Backend::RustHdl, Backend::Verilator] } else { vec![Backend::RustHdl] };
        for backend in backends {
            let rep = run(backend, SlotMode::Lockstep);
            assert!(rep.mismatch.is_none(), "{policy:?} {}: {}", backend.name(), rep.mismatch.unwrap());
            let r = rep.result.unwrap();
            assert!(r.processes.iter().all(|p| p.verified));
            assert_eq!((r.cycles, &r.steering), (model.cycles, &model.steering), "{policy:?} {}", backend.name());
        }
    }
}

/// A soak of steering inside the framework (`mpgpu soak --unit sched,steer --config
/// heterocore`): every policy and mechanism of the framework, each run steered dynamically
/// with short profiles, the framework's and the steering unit's RTL in the loop; clean, with
/// decisions that move SMs and SMs drained. Long tier (about a minute).
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn a_soak_of_steering_inside_the_framework_runs_clean() {
    use mpgpu_ref::soakgen::SoakParams;
    use mpgpu_tb::soak::Soak;
    let soak = Soak {
        seed: 2,
        workloads: 8,
        config: GpuConfig::preset("heterocore").unwrap(),
        config_arg: "heterocore".into(),
        backend: Backend::RustHdl,
        unit: UnitKind::named("sched,steer").unwrap(),
        broken: Default::default(),
        params: SoakParams::default(),
        out: dir("soak-fw"),
        sliced: None,
    };
    let rep = soak.run(&mut |_, _, _| {}).unwrap();
    assert!(rep.failure.is_none(), "{:?}", rep.failure);
    assert_eq!((rep.workloads, rep.runs), (8, 96));
    assert!(rep.steer_moves > 0 && rep.steer_drains > 0 && rep.steer_switches == 0, "{rep:?}");
}
