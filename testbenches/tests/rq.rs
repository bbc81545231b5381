//! The replay queue (`Rq`) in the loop of the whole GPU on every SM: zero mismatches with
//! injected faults, a full queue, the operand log beside it and context switches, on both
//! backends; the slot modes agree; the broken variants are caught at the SM, clocked cycle and
//! field that a run of the model alone predicts.

use mpgpu_ref::config::{FaultScheme, GpuConfig, PagingLink};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::units::rq::Rq;
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::RqFaults;
use mpgpu_spec::units::rq::{In, Out, State};
use mpgpu_spec::Unit;
use mpgpu_tb::cosim::{run_with, CosimOptions, CosimReport, SlotMode, UnitKind};
use mpgpu_tb::Backend;

mod common;
use common::{caught_where_predicted, clean, flip_trace_field, note_first, one, replay_per_sm, slot_modes_agree, First};
use std::path::Path;
use std::rc::Rc;

/// thesis16 under `scheme` with `slots` replay-queue slots and injected faults at `rate`.
fn config(scheme: FaultScheme, slots: u32, rate: f64) -> GpuConfig {
    let mut c = GpuConfig::preset("thesis16").unwrap();
    c.faults = scheme;
    for g in &mut c.sm {
        g.rq_entries = slots;
    }
    c.inject.rate = rate;
    c.inject.seed = 5;
    c.validate().unwrap();
    c
}

fn cosim(cfg: &GpuConfig, w: &Workload, backend: Backend, mode: SlotMode, faults: RqFaults) -> CosimReport {
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("rq").unwrap();
    o.backend = backend;
    o.mode = mode;
    o.broken = mpgpu_tb::broken::Broken::default().with("rq", faults);
    o.mismatch_vcd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rq").join("mismatch.vcd");
    run_with(cfg, w, &o).unwrap()
}

#[test]
fn the_replay_queue_runs_in_lockstep_on_every_sm_with_faults_and_a_full_queue() {
    // 16 slots: the queue fills (a global memory instruction waits for a slot).
    let cfg = config(FaultScheme::Rq, 16, 0.02);
    let t = "description = \"lbm and spmv\"\n\
        [[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 64, seed = 3 }]\n\
        [[process]]\nname = \"spmv\"\nlaunches = [{ kernel = \"spmv\", size = 2048, seed = 4 }]\n";
    let w = Workload::parse("pair.toml", t).unwrap();
    let r = cosim(&cfg, &w, Backend::RustHdl, SlotMode::Lockstep, RqFaults::default());
    clean(&r, "rust-hdl lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(r.cycles_checked > 1000, "only {} clocked cycles checked", r.cycles_checked);
    assert!(res.sm.squashed > 0 && res.sm.replayed > 0, "no fault was replayed: {} squashed, {} replayed", res.sm.squashed, res.sm.replayed);
    assert!(res.sm.rq_full > 0, "the 16-slot replay queue never refused an issue");
    slot_modes_agree(&r, |b, m| cosim(&cfg, &w, b, m, RqFaults::default()), |x| x.sm.rq_full);
}

/// Under the operand log with thread-block switching on faults: blocks switched out take their
/// faulted instructions' slots out of the queue (freed) and back in (issued again), on the
/// Verilated Verilog.
#[test]
fn the_replay_queue_stays_in_lockstep_through_thread_block_switching_under_the_operand_log() {
    let mut cfg = config(FaultScheme::Ol, 128, 0.0);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.tb_switch.enabled = true;
    cfg.validate().unwrap();
    let w = one("reduction", 200000);
    let r = cosim(&cfg, &w, Backend::Verilator, SlotMode::Lockstep, RqFaults::default());
    clean(&r, "verilator lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(res.sm.switched_out > 0 && res.sm.switched_in == res.sm.switched_out, "switched out {}, in {}", res.sm.switched_out, res.sm.switched_in);
    assert!(res.sm.saved_queued > 0, "no queued instruction was saved with a context");
    // The same run with the model alone, counting the cycles whose frees include a faulted
    // slot: a faulted instruction leaving with its block's context frees its slot (a commit
    // frees only slots that are not faulted).
    let n = Rc::new(std::cell::Cell::new(0u64));
    let mut gpu = Gpu::new(&cfg);
    gpu.set_units(&mut |k| Box::new(Recorder { inner: Rq::new(128), sm: k, clocked: 0, time: 0, early: Default::default(), wrong: Default::default(), pending: Default::default(), faulted_frees: n.clone() }) as Held<In, Out>).unwrap();
    gpu.add_workload(&w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    assert!(n.get() > 0, "no faulted slot was freed with its block's context");
}

/// The model's unit, recording where a broken RTL would first drive different outputs.
struct Recorder {
    inner: Rq,
    sm: usize,
    clocked: u64,
    time: u64,
    /// A slot freed in this cycle would change `full` or `alloc_idx` (early free).
    early: First,
    /// A replay's slot differs from the read port's (a replay clearing the read port's slot
    /// leaves its own faulted): seen in the state at the next clocked cycle.
    wrong: First,
    /// The last clocked cycle had such a replay.
    pending: std::cell::Cell<bool>,
    /// Clocked cycles whose frees include a faulted slot (one leaving with its block's context).
    faulted_frees: Rc<std::cell::Cell<u64>>,
}

impl Recorder {
    fn note(&self, f: &First) {
        note_first(f, self.time, self.sm, self.clocked);
    }
}

fn mask(v: &[u64]) -> u128 {
    v[0] as u128 | (v[1] as u128) << 64
}

impl Unit for Recorder {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        let o = self.inner.outputs(i);
        let st: State = self.inner.state();
        let valid = mask(&st.valid);
        // (the test's queues have all 128 slots: no slot is absent)
        let (now, early) = (!valid, !(valid & !i.free));
        let low = |m: u128| if m == 0 { None } else { Some(m.trailing_zeros()) };
        if low(now) != low(early) {
            self.note(&self.early);
        }
        if self.pending.replace(false) {
            self.note(&self.wrong);
        }
        o
    }
    fn clock(&mut self, i: &In) {
        if i.free & mask(&self.inner.state().faulted) != 0 {
            self.faulted_frees.set(self.faulted_frees.get() + 1);
        }
        self.pending.set(i.replay && i.rd_idx as usize % 128 != i.replay_idx as usize);
        self.inner.clock(i);
        self.clocked += 1;
    }
    fn at_cycle(&mut self, t: u64) {
        self.time = t;
    }
}

impl Hosted for Recorder {}

#[test]
fn broken_replay_queues_are_caught_where_the_model_predicts() {
    let mut want = Vec::new();
    // (a fifth of sgemm's global accesses fault: warps hold several faulted slots at once)
    for (faults, w, rate, field) in [
        (RqFaults { early_free: true, ..Default::default() }, one("lbm", 32), 0.05, &["alloc_idx", "full"][..]),
        (RqFaults { wrong_slot: true, ..Default::default() }, one("sgemm", 128), 0.2, &["state.faulted[0]", "state.faulted[1]"][..]),
    ] {
        let cfg = config(FaultScheme::Rq, 128, rate);
        let (early, wrong): (First, First) = Default::default();
        let mut gpu = Gpu::new(&cfg);
        gpu.set_units(&mut |k| Box::new(Recorder { inner: Rq::new(128), sm: k, clocked: 0, time: 0, early: early.clone(), wrong: wrong.clone(), pending: Default::default(), faulted_frees: Default::default() }) as Held<In, Out>).unwrap();
        gpu.add_workload(&w).unwrap();
        gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
        let first = if faults.early_free { early } else { wrong };
        let (_, sm, at) = first.borrow().unwrap_or_else(|| panic!("{faults:?}: the run never exercises it"));
        want.push((faults, cfg, w, sm, at, field));
    }
    for (faults, cfg, w, sm, at, fields) in want {
        for &backend in common::BROKEN_BACKENDS {
            let r = cosim(&cfg, &w, backend, SlotMode::Lockstep, faults);
            caught_where_predicted(&r, &format!("{faults:?} on {backend:?}"), "rq", sm, at, fields);
        }
        if faults.wrong_slot {
            // Alone in the slots, the broken RTL drives the GPU: a replay clears slot 0's
            // faulted bit, and when slot 0's own replay comes the SM sees that the unit does
            // not hold it as faulted and stops the run.
            let r = cosim(&cfg, &w, *common::BROKEN_BACKENDS.last().unwrap(), SlotMode::RtlAlone, faults);
            let e = r.error.map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("does not hold slot 0, which warp slot"), "the RTL alone was not stopped: {e:?}");
        }
    }
}

/// Both per-SM units in the loop at once under demand paging (`--unit rq-ol`): the replay
/// queue and the operand log's bookkeeping on every SM, zero mismatches, a waveform per block
/// per SM.
#[test]
fn the_replay_queue_and_the_operand_log_run_together_under_demand_paging() {
    let mut cfg = config(FaultScheme::Ol, 128, 0.0);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.validate().unwrap();
    let w = one("lbm", 32);
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("rq-ol").unwrap();
    o.backend = Backend::Verilator;
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rq-ol");
    let _ = std::fs::remove_dir_all(&d);
    o.vcd = Some(d.join("run"));
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    clean(&r, "rq-ol lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(res.sm.squashed > 0 && res.sm.replayed > 0, "no page fault was replayed");
    for f in ["run/sm0-oplog.vcd", "run/sm0-rq.vcd", "run/sm7-rq.vcd"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.contains(" mismatch $end") && text.contains("module expected"), "{f}: no expected values or mismatch marker");
    }
}

/// Counts the replays of slots 64-127 (the RTL's upper half).
struct HighReplays(Rq, Rc<std::cell::Cell<u64>>);

impl Unit for HighReplays {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.0.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        self.0.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        if i.replay && i.replay_idx >= 64 {
            self.1.set(self.1.get() + 1);
        }
        self.0.clock(i);
    }
}

impl Hosted for HighReplays {}

/// All 128 slots in use: stencil's many loads in flight take slots of both halves of the RTL's
/// tables, and faulted ones there are replayed (the model alone shows it; the test fails if
/// not), in lockstep on every SM.
#[test]
fn the_whole_queue_is_used_in_lockstep() {
    let cfg = config(FaultScheme::Rq, 128, 0.05);
    let w = one("stencil", 64);
    let n = Rc::new(std::cell::Cell::new(0));
    let mut gpu = Gpu::new(&cfg);
    gpu.set_units(&mut |_| Box::new(HighReplays(Rq::new(128), n.clone())) as Held<In, Out>).unwrap();
    gpu.add_workload(&w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    assert!(n.get() > 0, "no slot of 64-127 was replayed");
    let r = cosim(&cfg, &w, Backend::RustHdl, SlotMode::Lockstep, RqFaults::default());
    clean(&r, "rust-hdl lockstep");
}

/// Each SM's clocked cycles recorded (`--trace DIR` writes `DIR/sm<k>`) replay in Icarus on the
/// block's Verilog, every output every cycle; an edited expected value is caught there.
#[test]
fn per_sm_traces_replay_in_icarus() {
    use mpgpu_tb::trace::{replay, Replay};
    let cfg = config(FaultScheme::Rq, 128, 0.05);
    let w = one("lbm", 32);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rq").join("trace");
    let _ = std::fs::remove_dir_all(&d);
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("rq").unwrap();
    o.sms = mpgpu_ref::slots::SmSet::parse("0,5", 16).unwrap();
    o.trace = Some(d.clone());
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    clean(&r, "traced lockstep");
    assert!(r.result.as_ref().unwrap().sm.replayed > 0, "no replay in the traced run");
    assert_eq!(replay_per_sm(&d, &[0, 5]), r.cycles_checked, "the two SMs' traces hold every clocked cycle");
    // Record: GPU cycle, 16 inputs, 11 expected outputs (full, alloc_idx, ...), care mask.
    let bad = d.join("sm0");
    flip_trace_field(&bad, 3, 18);
    match replay(&bad).unwrap() {
        Replay::Mismatch { cycle, port, line } => assert_eq!((cycle, port.as_str()), (3, "alloc_idx"), "{line}"),
        x => panic!("the edited trace replayed as {x:?}"),
    }
}

/// `mpgpu soak --unit rq-ol`: random workloads, each run with injected faults and under demand
/// paging with thread-block switching, both blocks on every SM (Verilator): clean, with replays
/// and switches; a broken replay queue (replay out of age order) is found, and the workload
/// and command that reproduce it are given.
#[test]
fn a_soak_with_both_blocks_on_every_sm_runs_clean_and_finds_a_broken_replay_queue() {
    use mpgpu_ref::soakgen::SoakParams;
    use mpgpu_tb::soak::Soak;
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rq").join("soak");
    let soak = |rq_faults: RqFaults, n: u64| Soak {
        seed: 1,
        workloads: n,
        config: GpuConfig::preset("thesis16").unwrap(),
        config_arg: "thesis16".into(),
        backend: Backend::Verilator,
        unit: UnitKind::named("rq-ol").unwrap(),
        broken: mpgpu_tb::broken::Broken::default().with("rq", rq_faults),
        params: SoakParams::default(),
        out: out.clone(),
        sliced: None,
    };
    let clean = soak(RqFaults::default(), 8).run(&mut |_, _, _| {}).unwrap();
    assert!(clean.failure.is_none(), "{:?}", clean.failure);
    assert_eq!((clean.workloads, clean.runs), (8, 16));
    assert!(clean.replayed > 0 && clean.switched_out > 0, "replayed {}, switched out {}", clean.replayed, clean.switched_out);
    let rep = soak(RqFaults { wrong_slot: true, ..Default::default() }, 8).run(&mut |_, _, _| {}).unwrap();
    let f = rep.failure.expect("eight random workloads did not find a replay that clears the wrong slot");
    let m = f.mismatch.expect("a mismatch, not another failure");
    assert!(m.diffs.iter().any(|d| d.field.contains(".rq.state.faulted[")), "{m}");
    assert!(f.workload.exists() && f.command.contains("--unit rq-ol") && f.command.contains(&f.variant), "{}", f.command);
}

/// Random stimulus for the block alone, in lockstep with the model every cycle (outputs and
/// state), and against the same block simulated without the shortcuts of a flat block
/// (`mpgpu_rtl::reg`: its logic in every pass, every settle until nothing changes, the inputs
/// settled before the edge): issues into the lowest free slot, commits and faults of slots in
/// use, replays of faulted slots, and the read port moving. The queue must fill.
#[test]
fn random_stimulus_matches_the_model_and_the_plain_simulation() {
    use mpgpu_tb::blocks::RqPorts;
    use mpgpu_tb::ports::Ports;
    use mpgpu_tb::{InLoop, RtlUnit};
    use rand::{Rng, SeedableRng};
    for (seed, slots) in [(1u64, 128usize), (2, 40)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let ports = RqPorts { slots, faults: RqFaults::default() };
        let rtl = RtlUnit::rust_hdl(ports);
        let mut slow = mpgpu_tb::rtl::FullSettle::new(ports.block().plain(), rtl.layout());
        let mut pair = InLoop::with_state(Rq::new(slots as u32), rtl, 16, Rq::state, RtlUnit::<RqPorts>::state);
        let (mut full, mut replays) = (0, 0);
        for _ in 0..5000 {
            let st = pair.model.state();
            let mask = |v: &[u64]| v[0] as u128 | (v[1] as u128) << 64;
            let (valid, faulted) = (mask(&st.valid), mask(&st.faulted));
            let mut i = In { rd_idx: rng.gen_range(0..slots as u8), replay_idx: rng.gen_range(0..slots as u8), ..In::default() };
            let o = pair.outputs(&i);
            full += o.full as u32;
            for s in 0..slots {
                let running = valid >> s & 1 != 0 && faulted >> s & 1 == 0;
                match rng.gen_range(0..300) {
                    0 | 1 if running => i.free |= 1 << s,
                    2 if running => i.fault |= 1 << s,
                    _ => {}
                }
            }
            if o.replay_ok && rng.gen_range(0..2) == 0 && i.fault >> i.replay_idx & 1 == 0 {
                i.replay = true;
                replays += 1;
            }
            if !o.full && rng.gen_range(0..3) != 0 {
                i.issue = true;
                (i.warp, i.pc, i.exec, i.age) = (rng.gen_range(0..64), rng.gen(), rng.gen(), rng.gen());
                i.nlog = rng.gen_range(0..=3);
                i.log = [rng.gen_range(0..64), rng.gen_range(0..64), rng.gen_range(0..64)];
            }
            pair.clock(&i);
            if let Some(m) = pair.mismatch() {
                panic!("seed {seed}, {slots} slots:\n{m}");
            }
            if let Err(e) = slow.follow(&pair.rtl) {
                panic!("seed {seed}: the plain simulation parted at cycle {}: {e}", pair.cycle);
            }
        }
        assert!(full > 50 && replays > 200, "seed {seed}: full in {full} cycles, {replays} replays");
    }
}
