//! The operand log's bookkeeping (`Oplog`) in the loop of the whole GPU on every SM: zero
//! mismatches with faults, log-full stalls and context switches on both backends, the slot
//! modes agree, and the broken variants are caught at the SM, clocked cycle and field that a
//! run of the model alone predicts.

use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::units::oplog::Oplog;
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::OplogFaults;
use mpgpu_spec::units::oplog::{In, Out};
use mpgpu_spec::Unit;
use mpgpu_tb::cosim::{run_with, CosimOptions, CosimReport, SlotMode, UnitKind};
use mpgpu_tb::Backend;

mod common;
use common::{caught_where_predicted, clean, flip_trace_field, lbm_and_spmv as pair, ol_config as config, replay_per_sm, slot_modes_agree};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

fn cosim(cfg: &GpuConfig, w: &Workload, backend: Backend, mode: SlotMode, faults: OplogFaults) -> CosimReport {
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("oplog").unwrap();
    o.backend = backend;
    o.mode = mode;
    o.broken = mpgpu_tb::broken::Broken::default().with("oplog", faults);
    o.mismatch_vcd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oplog").join("mismatch.vcd");
    run_with(cfg, w, &o).unwrap()
}

#[test]
fn the_operand_log_runs_in_lockstep_on_every_sm_with_faults_and_log_full_stalls() {
    let cfg = config(4096, 0.02);
    let w = pair();
    let r = cosim(&cfg, &w, Backend::RustHdl, SlotMode::Lockstep, OplogFaults::default());
    clean(&r, "rust-hdl lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(r.cycles_checked > 1000, "only {} clocked cycles checked", r.cycles_checked);
    assert!(res.sm.squashed > 0 && res.sm.replayed > 0, "no fault was replayed: {} squashed, {} replayed", res.sm.squashed, res.sm.replayed);
    assert!(res.sm.log_full > 0, "the 4 KB log never stalled issue");
    // Every SM carried the RTL: each clocked its unit.
    slot_modes_agree(&r, |b, m| cosim(&cfg, &w, b, m, OplogFaults::default()), |x| x.sm.log_full);
}

/// Blocks switched out on faults and back take their partitions' logged operands with them
/// (claim with entries in use, release), on the Verilated Verilog.
#[test]
fn the_operand_log_stays_in_lockstep_through_thread_block_switching() {
    let mut cfg = config(8192, 0.0);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.tb_switch.enabled = true;
    cfg.validate().unwrap();
    let t = "description = \"reduction\"\n[[process]]\nname = \"reduction\"\nlaunches = [{ kernel = \"reduction\", size = 200000, seed = 3 }]\n";
    let w = Workload::parse("r.toml", t).unwrap();
    let r = cosim(&cfg, &w, Backend::Verilator, SlotMode::Lockstep, OplogFaults::default());
    clean(&r, "verilator lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(res.sm.switched_out > 0 && res.sm.switched_in == res.sm.switched_out, "switched out {}, in {}", res.sm.switched_out, res.sm.switched_in);
}

/// The model's unit, recording for each SM the clocked cycles it sees, to predict where a
/// broken RTL parts from it.
struct Recorder {
    inner: Oplog,
    sm: usize,
    clocked: u64,
    /// (GPU cycle, SM, clocked cycle) of the first store allocation, and (with the block
    /// slot) of the first push of a freed entry that goes back to its block's quota.
    first_store: Rc<RefCell<Option<(u64, usize, u64)>>>,
    first_credit: Rc<RefCell<Option<(u64, usize, u64, u8)>>>,
    time: u64,
}

impl Unit for Recorder {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        self.inner.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        if i.alloc && i.alloc_need == 2 {
            let mut f = self.first_store.borrow_mut();
            if f.is_none_or(|(t, s, _)| (self.time, self.sm) < (t, s)) {
                // (caught at this SM's next clocked cycle, when the registers are compared)
                *f = Some((self.time, self.sm, self.clocked + 1));
            }
        }
        self.inner.clock(i);
        let st = self.inner.state();
        if let Some(p) = (0..2).find(|&p| st.cr[p]) {
            let mut f = self.first_credit.borrow_mut();
            if f.is_none_or(|(t, s, _, _)| (self.time, self.sm) < (t, s)) {
                // (credited at this edge by the broken block, at the next by the model)
                *f = Some((self.time, self.sm, self.clocked + 1, st.cown[p]));
            }
        }
        self.clocked += 1;
    }
    fn at_cycle(&mut self, t: u64) {
        self.time = t;
    }
}

impl Hosted for Recorder {}

#[test]
fn broken_operand_logs_are_caught_where_the_model_predicts() {
    let cfg = config(4096, 0.0);
    let t = "description = \"lbm\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 3 }]\n";
    let w = Workload::parse("lbm.toml", t).unwrap();
    let (store, credit) = (Rc::new(RefCell::new(None)), Rc::new(RefCell::new(None)));
    let mut gpu = Gpu::new(&cfg);
    gpu.set_units(&mut |k| Box::new(Recorder { inner: Oplog::new(32), sm: k, clocked: 0, first_store: store.clone(), first_credit: credit.clone(), time: 0 }) as Held<In, Out>).unwrap();
    gpu.add_workload(&w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let (_, store_sm, store_at) = store.borrow().expect("lbm stores");
    let (_, credit_sm, credit_at, credit_block) = credit.borrow().expect("a freed entry back to its block");
    let credit_field = format!("state.left[{credit_block}]");
    for (faults, sm, at, field) in [
        (OplogFaults { drop_second: true, ..Default::default() }, store_sm, store_at, "state.valid"),
        (OplogFaults { early_credit: true, ..Default::default() }, credit_sm, credit_at, credit_field.as_str()),
    ] {
        for &backend in common::BROKEN_BACKENDS {
            let r = cosim(&cfg, &w, backend, SlotMode::Lockstep, faults);
            caught_where_predicted(&r, &format!("{faults:?} on {backend:?}"), "oplog", sm, at, &[field]);
        }
    }
}

/// Each SM's clocked cycles recorded (`--trace DIR` writes `DIR/sm<k>`) replay in Icarus on the
/// block's Verilog, every output every cycle; an edited expected value is caught there.
#[test]
fn per_sm_traces_replay_in_icarus() {
    use mpgpu_tb::trace::{replay, Replay};
    let cfg = config(4096, 0.02);
    let t = "description = \"lbm\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 3 }]\n";
    let w = Workload::parse("lbm.toml", t).unwrap();
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oplog").join("trace");
    let _ = std::fs::remove_dir_all(&d);
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("oplog").unwrap();
    o.sms = mpgpu_ref::slots::SmSet::parse("0,5", 16).unwrap();
    o.trace = Some(d.clone());
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    clean(&r, "traced lockstep");
    assert_eq!(r.trace.as_deref(), Some(d.join("sm0").as_path()));
    assert!(!d.join("sm1").exists(), "an SM without the RTL has no trace");
    assert_eq!(replay_per_sm(&d, &[0, 5]), r.cycles_checked, "the two SMs' traces hold every clocked cycle");
    // Record: GPU cycle, 11 inputs, 8 expected outputs (pool_free first), care mask.
    let bad = d.join("sm0");
    flip_trace_field(&bad, 3, 12);
    match replay(&bad).unwrap() {
        Replay::Mismatch { cycle, port, line } => {
            assert_eq!((cycle, port.as_str()), (3, "pool_free"), "{line}")
        }
        x => panic!("the edited trace replayed as {x:?}"),
    }
}

/// Random, legal stimulus for the block alone (no GPU around it), in lockstep with the model
/// every cycle, outputs and state: frees of entries in use, allocations within `room` (and
/// reserved ones within `list_room`), claims within `pool_free` into slots neither leaving nor
/// returning, and releases of several slots at once, so that a slot leaves while its entries
/// are being picked or pushed and quotas queue up to return. Each corner must happen.
#[test]
fn random_legal_stimulus_keeps_the_block_in_lockstep_with_the_model() {
    use mpgpu_tb::blocks::OplogPorts;
    use mpgpu_tb::ports::Ports;
    use mpgpu_tb::{InLoop, RtlUnit};
    use rand::{Rng, SeedableRng};
    for (seed, entries) in [(1u64, 64usize), (2, 32), (3, 40)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let ports = OplogPorts { entries, faults: OplogFaults::default() };
        let rtl = RtlUnit::rust_hdl(ports);
        // (and the same block simulated without the shortcuts: its logic evaluated in every
        // pass, each settle until nothing changes, the inputs settled before the edge)
        let mut slow = mpgpu_tb::rtl::FullSettle::new(ports.block().plain(), rtl.layout());
        let mut pair = InLoop::with_state(Oplog::new(entries as u32), rtl, 16, Oplog::state, RtlUnit::<OplogPorts>::state);
        let mut resident = [false; 16];
        let mut reserved = [0u8; 16];
        let (mut allocs, mut multi, mut left_while_pushed) = (0, 0, 0);
        for _ in 0..6000 {
            let st = pair.model.state();
            let o = pair.outputs(&In::default());
            let mut i = In::default();
            for e in 0..64 {
                if st.valid >> e & 1 != 0 && rng.gen_range(0..6) == 0 {
                    i.free |= 1 << e;
                }
            }
            let b = rng.gen_range(0..16usize);
            let need = rng.gen_range(1..=3u8);
            if resident[b] && reserved[b] >= need && o.list_room >= need && rng.gen_range(0..3) == 0 {
                (i.alloc, i.alloc_block, i.alloc_need, i.alloc_res) = (true, b as u8, need, true);
                reserved[b] -= need;
            } else if resident[b] && o.room_of(b as u32) >= need && rng.gen_range(0..2) == 0 {
                (i.alloc, i.alloc_block, i.alloc_need) = (true, b as u8, need);
                allocs += 1;
            }
            if rng.gen_range(0..40) == 0 {
                // (several slots leave together, not the one allocating)
                for s in 0..16 {
                    if resident[s] && !(i.alloc && i.alloc_block as usize == s) && rng.gen_range(0..2) == 0 {
                        i.release |= 1 << s;
                        resident[s] = false;
                        reserved[s] = 0;
                    }
                }
                if i.release.count_ones() >= 2 {
                    multi += 1;
                }
                if st.cr.iter().zip(&st.cown).any(|(&c, &w)| c && i.release >> w & 1 != 0) || (0..2).any(|p| st.pick_v[p] && i.release >> st.owner[st.pick[p] as usize] & 1 != 0) {
                    left_while_pushed += 1;
                }
            }
            let c = rng.gen_range(0..16usize);
            let n = rng.gen_range(2..=6u8);
            if !resident[c] && (o.returning | i.release) >> c & 1 == 0 && o.pool_free >= n && rng.gen_range(0..3) == 0 {
                let used = rng.gen_range(0..=2u8);
                (i.claim, i.claim_block, i.claim_n, i.claim_used) = (true, c as u8, n, used);
                resident[c] = true;
                reserved[c] = used;
            }
            i.tick = o.busy;
            pair.clock(&i);
            if let Some(m) = pair.mismatch() {
                panic!("seed {seed}, {entries} entries:\n{m}");
            }
            if let Err(e) = slow.follow(&pair.rtl) {
                panic!("seed {seed}: the plain simulation parted at cycle {}: {e}", pair.cycle);
            }
        }
        assert!(allocs > 600 && multi > 10 && left_while_pushed > 0, "seed {seed}: {allocs} allocations, {multi} multiple releases, {left_while_pushed} releases of a block whose entries were picked or pushed");
    }
}
