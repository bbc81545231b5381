//! The operand log's data array (`Oldata`) in the loop of the whole GPU on every SM: zero
//! mismatches with injected faults, replays, write-queue stalls and context saves on both
//! backends; the slot modes agree; the broken variants are caught at the SM, clocked cycle and
//! field that a run of the model alone predicts, and the broken RTL alone, driving the GPU,
//! gives wrong answers; traces replay in Icarus; random stimulus against the model and the
//! plain simulation.

use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::units::oldata::Oldata;
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::OldataFaults;
use mpgpu_spec::units::oldata::{In, Out, LANES};
use mpgpu_spec::Unit;
use mpgpu_tb::cosim::{run_with, CosimOptions, CosimReport, SlotMode, UnitKind};
use mpgpu_tb::Backend;

mod common;
use common::{caught_where_predicted, clean, flip_trace_field, lbm_and_spmv as pair, note_first, ol_config as config, one, replay_per_sm, slot_modes_agree, First};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

fn options(backend: Backend, mode: SlotMode, faults: OldataFaults) -> CosimOptions {
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("oldata").unwrap();
    o.backend = backend;
    o.mode = mode;
    o.broken = mpgpu_tb::broken::Broken::default().with("oldata", faults);
    o.mismatch_vcd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oldata").join("mismatch.vcd");
    o
}

fn cosim(cfg: &GpuConfig, w: &Workload, backend: Backend, mode: SlotMode, faults: OldataFaults) -> CosimReport {
    run_with(cfg, w, &options(backend, mode, faults)).unwrap()
}

#[test]
fn the_data_array_runs_in_lockstep_on_every_sm_with_faults_and_replays() {
    let cfg = config(4096, 0.02);
    let w = pair();
    let r = cosim(&cfg, &w, Backend::RustHdl, SlotMode::Lockstep, OldataFaults::default());
    clean(&r, "rust-hdl lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(r.cycles_checked > 1000, "only {} clocked cycles checked", r.cycles_checked);
    assert!(res.sm.replayed > 0 && res.sm.ol_reads > 0, "no logged operand was read for a replay: {} replayed, {} reads", res.sm.replayed, res.sm.ol_reads);
    assert!(res.sm.ol_writes > res.sm.replayed, "{} entries written", res.sm.ol_writes);
    // (issue waited for places in the write queue)
    assert!(res.sm.ol_queue_full > 0, "issue never waited for places in the write queue");
    // The model alone and the RTL alone (Verilator) drive the GPU to the same cycle, with the
    // same reads and write-queue stalls.
    slot_modes_agree(&r, |b, m| cosim(&cfg, &w, b, m, OldataFaults::default()), |x| x.sm.ol_reads + x.sm.ol_queue_full);
}

/// Blocks switched out on faults have their queued replays' logged operands read out of the
/// array (through its one read port) and saved with their contexts; on the way back in they
/// are written into the entries they take. On the Verilated Verilog.
#[test]
fn the_data_array_stays_in_lockstep_through_context_saves_and_restores() {
    let mut cfg = config(8192, 0.0);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.tb_switch.enabled = true;
    cfg.validate().unwrap();
    let w = one("reduction", 200000);
    let r = cosim(&cfg, &w, Backend::Verilator, SlotMode::Lockstep, OldataFaults::default());
    clean(&r, "verilator lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(res.sm.switched_out > 0 && res.sm.switched_in == res.sm.switched_out, "switched out {}, in {}", res.sm.switched_out, res.sm.switched_in);
    assert!(res.sm.saved_queued > 0 && res.sm.ol_save_reads > 0, "{} queued instructions saved, {} entries read for saves", res.sm.saved_queued, res.sm.ol_save_reads);
}

/// The model's unit, recording where each broken RTL would first differ. What an edge does
/// wrong is seen at the SM's next look at the unit (the state after the edge, or the word read
/// at it, compared then), dated to the GPU cycle of that look.
struct Recorder {
    inner: Oldata,
    sm: usize,
    clocked: u64,
    time: u64,
    /// A write whose lane 31 changes the word (`drop_lane`: seen in the state after the edge),
    /// and the entry written.
    lane31: First,
    lane31_entry: Rc<RefCell<Option<u8>>>,
    /// A read of an entry that differs from the written one (`read_waddr`: seen on `rdata`
    /// after the edge).
    crossed: First,
    /// The last edge did either (and which entry lane 31 changed in), not looked at yet.
    pending: std::cell::Cell<(bool, Option<u8>)>,
}

impl Recorder {
    fn note(&self, f: &First) -> bool {
        note_first(f, self.time, self.sm, self.clocked)
    }
}

impl Unit for Recorder {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        let (crossed, lane31) = self.pending.take();
        if crossed {
            self.note(&self.crossed);
        }
        if let Some(e) = lane31 {
            if self.note(&self.lane31) {
                *self.lane31_entry.borrow_mut() = Some(e);
            }
        }
        self.inner.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        let old = self.inner.entry(i.waddr as usize)[LANES - 1];
        let crossed = i.re && self.inner.entry(i.raddr as usize) != self.inner.entry(i.waddr as usize);
        self.pending.set((crossed, (i.we && i.wdata[LANES - 1] != old).then_some(i.waddr)));
        self.inner.clock(i);
        self.clocked += 1;
    }
    fn at_cycle(&mut self, t: u64) {
        self.time = t;
    }
}

impl Hosted for Recorder {}

#[test]
fn broken_data_arrays_are_caught_where_the_model_predicts() {
    let cfg = config(4096, 0.05);
    let w = one("lbm", 32);
    let (lane31, crossed, entry): (First, First, Rc<RefCell<Option<u8>>>) = Default::default();
    let mut gpu = Gpu::new(&cfg);
    gpu.set_units(&mut |k| Box::new(Recorder { inner: Oldata::new(32), sm: k, clocked: 0, time: 0, lane31: lane31.clone(), lane31_entry: entry.clone(), crossed: crossed.clone(), pending: Default::default() }) as Held<In, Out>).unwrap();
    gpu.add_workload(&w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let (_, l_sm, l_at) = lane31.borrow().expect("lbm writes its log");
    let (_, c_sm, c_at) = crossed.borrow().expect("a replay reads an entry other than the one written");
    // (a 4 KB log: 32 entries, lane k's word of entry e at state.words[k * 32 + e])
    let word = format!("state.words[{}]", (LANES - 1) * 32 + entry.borrow().unwrap() as usize);
    for (faults, sm, at, fields) in [
        (OldataFaults { drop_lane: true, ..Default::default() }, l_sm, l_at, vec![word.clone()]),
        (OldataFaults { read_waddr: true, ..Default::default() }, c_sm, c_at, (0..LANES).map(|k| format!("rdata[{k}]")).collect()),
    ] {
        for &backend in common::BROKEN_BACKENDS {
            let r = cosim(&cfg, &w, backend, SlotMode::Lockstep, faults);
            let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
            caught_where_predicted(&r, &format!("{faults:?} on {backend:?}"), "oldata", sm, at, &fields);
        }
    }
    // Alone in the slots, the RTL drives the GPU: with lane 31's writes dropped, replays
    // execute with lane 31's operands from another instruction (or none), and the kernel's
    // check catches the wrong answer (or the run stops on a wild access). The sound RTL alone
    // verifies.
    let sound = cosim(&cfg, &w, Backend::Verilator, SlotMode::RtlAlone, OldataFaults::default());
    clean(&sound, "verilator alone");
    let broken = cosim(&cfg, &w, *common::BROKEN_BACKENDS.last().unwrap(), SlotMode::RtlAlone, OldataFaults { drop_lane: true, ..Default::default() });
    let wrong = broken.error.is_some() || broken.result.as_ref().is_some_and(|r| r.processes.iter().any(|p| !p.verified));
    assert!(wrong, "the broken data array alone gave right answers");
}

/// Both units of the operand log and the replay queue in the loop at once (`--unit rq-ol`)
/// under demand paging: a waveform per block per SM, with the expected values and the
/// mismatch marker; the data array's holds its RAM ports.
#[test]
fn rq_ol_runs_all_three_blocks_with_a_waveform_each() {
    let mut cfg = config(8192, 0.0);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.validate().unwrap();
    let w = one("lbm", 32);
    let mut o = options(Backend::Verilator, SlotMode::Lockstep, OldataFaults::default());
    o.unit = UnitKind::named("rq-ol").unwrap();
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oldata").join("rq-ol");
    let _ = std::fs::remove_dir_all(&d);
    o.vcd = Some(d.join("run"));
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    clean(&r, "rq-ol lockstep");
    let res = r.result.as_ref().unwrap();
    assert!(res.sm.replayed > 0 && res.sm.ol_reads > 0, "no page fault was replayed from the log");
    for f in ["run/sm0-oplog.vcd", "run/sm0-oldata.vcd", "run/sm7-oldata.vcd", "run/sm0-rq.vcd"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(text.contains(" mismatch $end") && text.contains("module expected"), "{f}: no expected values or mismatch marker");
    }
    let text = std::fs::read_to_string(d.join("run/sm0-oldata.vcd")).unwrap();
    for s in [" raddr ", " rd31 ", " we "] {
        assert!(text.contains(s), "run/sm0-oldata.vcd has no{s}signal");
    }
}

/// Each SM's clocked cycles recorded (`--trace DIR` writes `DIR/sm<k>`) replay in Icarus on the
/// block's Verilog, every output every cycle; an edited expected value is caught there.
#[test]
fn per_sm_traces_replay_in_icarus() {
    use mpgpu_tb::trace::{replay, Replay};
    let cfg = config(4096, 0.05);
    let w = one("lbm", 32);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oldata").join("trace");
    let _ = std::fs::remove_dir_all(&d);
    let mut o = options(Backend::RustHdl, SlotMode::Lockstep, OldataFaults::default());
    o.sms = mpgpu_ref::slots::SmSet::parse("0,5", 16).unwrap();
    o.trace = Some(d.clone());
    o.mismatch_vcd = d.join("mismatch.vcd");
    let r = run_with(&cfg, &w, &o).unwrap();
    clean(&r, "traced lockstep");
    assert!(r.result.as_ref().unwrap().sm.ol_reads > 0, "no entry was read in the traced run");
    assert_eq!(replay_per_sm(&d, &[0, 5]), r.cycles_checked, "the two SMs' traces hold every clocked cycle");
    // Record: GPU cycle, 36 inputs (we, waddr, re, raddr, wd0..wd31), 32 expected outputs
    // (rd0 first), care mask. Find a record after a read whose word 0 is not zero.
    let bad = d.join("sm0");
    let text = std::fs::read_to_string(bad.join("trace.hex")).unwrap();
    let line = text.lines().position(|l| l.split_whitespace().nth(37).is_some_and(|x| x != "0")).expect("a record with a word read");
    flip_trace_field(&bad, line, 37);
    match replay(&bad).unwrap() {
        Replay::Mismatch { port, .. } => assert_eq!(port, "rd0"),
        x => panic!("the edited trace replayed as {x:?}"),
    }
}

/// Random stimulus for the block alone, in lockstep with the model every cycle (outputs and
/// every word), and against the same block simulated without the shortcuts of a flat block
/// (its logic in every pass, every settle until nothing changes): writes and reads of random
/// entries, alone and together, the same entry read as written, idle cycles, cycles where only
/// `re` changes; at the three log sizes (4, 6 and 8 KB: 32, 48 and 64 entries).
#[test]
fn random_stimulus_matches_the_model_and_the_plain_simulation() {
    use mpgpu_tb::blocks::OldataPorts;
    use mpgpu_tb::ports::Ports;
    use mpgpu_tb::{InLoop, RtlUnit};
    use rand::{Rng, SeedableRng};
    for (seed, entries) in [(7u64, 64usize), (8, 32), (9, 48)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let ports = OldataPorts { entries, faults: OldataFaults::default() };
        let rtl = RtlUnit::rust_hdl(ports);
        let mut slow = mpgpu_tb::rtl::FullSettle::new(ports.block().plain(), rtl.layout());
        let mut pair = InLoop::with_state(Oldata::new(entries), rtl, 16, Oldata::state, RtlUnit::<OldataPorts>::state);
        let (mut both, mut same, mut nonzero, mut re_alone) = (0, 0, 0, 0);
        let mut prev = In::default();
        for _ in 0..2000 {
            let mut i = In::default();
            if rng.gen_range(0..8) == 0 {
                // (only `re` changes: the read port moves between `raddr` and `waddr`, which
                // a flat block's shortcut must see)
                i = In { re: !prev.re, ..prev };
                re_alone += (i.raddr != i.waddr) as u32;
            } else {
                if rng.gen_range(0..3) != 0 {
                    i.we = true;
                    i.waddr = rng.gen_range(0..entries as u8);
                    i.wdata = std::array::from_fn(|_| rng.gen());
                }
                if rng.gen_range(0..3) != 0 {
                    i.re = true;
                    i.raddr = if i.we && rng.gen_range(0..8) == 0 { i.waddr } else { rng.gen_range(0..entries as u8) };
                } else if rng.gen_range(0..2) == 0 {
                    // (an address on `raddr` with `re` low: the port looks at `waddr`)
                    i.raddr = rng.gen_range(0..entries as u8);
                }
            }
            prev = i;
            both += (i.we && i.re) as u32;
            same += (i.we && i.re && i.waddr == i.raddr) as u32;
            let o = pair.outputs(&i);
            nonzero += o.rdata.iter().any(|&x| x != 0) as u32;
            pair.clock(&i);
            if let Some(m) = pair.mismatch() {
                panic!("{entries} entries: {m}");
            }
            if let Err(e) = slow.follow(&pair.rtl) {
                panic!("{entries} entries: the plain simulation parted at cycle {}: {e}", pair.cycle);
            }
        }
        assert_eq!(pair.model_state().unwrap().words.len(), LANES * entries);
        assert!(both > 300 && same > 30 && nonzero > 1000 && re_alone > 100, "{entries} entries: {both} writes with reads, {same} of the written entry, {nonzero} cycles with a word read, {re_alone} with only re changed");
    }
}
