//! The admission unit (`admit`) in the whole GPU, RTL in the loop on every SM: the descriptors
//! of the unified allocation paper's Table 1 (every kernel on Fermi and Kepler at every
//! occupancy level from its register demand to the most blocks an SM holds, spill slots as
//! getRegSmem gives them) run together on both backends with zero mismatches; the broken
//! variants are caught where a run of the model predicts; the waveforms carry the unit.

use mpgpu_ref::asm::assemble_one;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::kernel::{Footprint, Launch};
use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
use mpgpu_ref::unified::search::{reg_smem_of, TABLE_1};
use mpgpu_ref::units::admit::Admit;
use mpgpu_ref::workload::{Workload, DEFAULT_WORKLOAD};
use mpgpu_rtl::AdmitFaults;
use mpgpu_spec::units::admit::{In, Out};
use mpgpu_spec::Unit;
use mpgpu_tb::cosim::{run_with, CosimOptions, CosimReport, SlotMode, UnitKind};
use mpgpu_tb::host::Rec;
use mpgpu_tb::Backend;
use std::path::Path;
use std::sync::Arc;

mod common;
use common::{caught_where_predicted, note_first, First, BROKEN_BACKENDS};

/// Threads a block of every Table 1 kernel (the paper gives no block sizes).
const THREADS: u32 = 256;

/// One descriptor of the sweep: its kernel's name, registers a thread, the program's shared
/// bytes a block and the spill slots' bytes.
struct Point {
    name: String,
    regs: u32,
    user: u32,
    spill: u32,
}

/// Table 1's descriptors on `cfg`'s SM (`arch` 0: the Fermi columns, 1: the Kepler ones): each
/// kernel at every occupancy level from its demand's to the most blocks the SM holds, with
/// getRegSmem's registers and spill slots.
fn sweep(cfg: &GpuConfig, arch: usize) -> Vec<Point> {
    let sm = &cfg.sm[0];
    let most = sm.blocks.min(sm.threads / THREADS).min(sm.warps / (THREADS / 32));
    let mut out = Vec::new();
    for (name, demand, user) in TABLE_1 {
        let (demand, user) = (demand[arch], (user[arch] * THREADS as f64) as u32);
        let base = sm.occupancy(&Footprint { regs_per_thread: demand, shared_per_block: user, threads_per_block: THREADS, local_per_thread: 0 }).blocks;
        assert!(base >= 1 && base < most, "{name} on {}: {base} blocks at its demand", cfg.name);
        // (up to the level its own shared memory allows: a level no register count reaches
        // has no budget; on k20c, dxtc's 3 KB a block take the 16 KB configuration, which
        // holds 5 blocks, as its 49 registers do)
        let levels: Vec<Point> = (base..=most).map_while(|b| reg_smem_of(demand, user, THREADS, sm, b).map(|g| Point { name: format!("{name}_{b}"), regs: g.regs, user, spill: 4 * g.slots * THREADS })).collect();
        assert!(!levels.is_empty(), "{name} on {}: no level", cfg.name);
        out.extend(levels);
    }
    out
}

/// A program launching `blocks` blocks of a kernel of point `p`'s descriptor, each thread
/// writing its global index.
fn program(p: &Point, blocks: u32) -> Box<dyn Program> {
    let text = format!(
        ".kernel {}\n.regs {}\n.shared {}\n.threads {THREADS}\n.params 4\n    mov.u32 r0, %ctaid.x\n    mov.u32 r1, %ntid.x\n    mad.u32 r0, r0, r1, %tid.x\n    shl.b32 r1, r0, 2\n    ld.param.u32 r2, [0]\n    add.u32 r2, r2, r1\n    st.global.u32 [r2], r0\n    exit\n",
        p.name,
        p.regs,
        p.user + p.spill
    );
    let mut k = assemble_one("table1.s", &text).unwrap_or_else(|e| panic!("{}: {e}", p.name));
    k.spill_shared = p.spill;
    let k = Arc::new(k);
    let name = p.name.clone();
    Box::new(StaticProgram::new(move |mem| {
        let out = mem.alloc(4 * blocks * THREADS);
        (vec![Launch::linear(&k, blocks, vec![out])], vec![Output { name, addr: out, expected: Expected::U32((0..blocks * THREADS).collect()) }])
    }))
}

fn options(backend: Backend) -> CosimOptions {
    let mut o = CosimOptions::new(mpgpu_ref::units::framework::Policy::Fcfs, mpgpu_ref::units::framework::Mechanism::ContextSwitch);
    o.unit = UnitKind::named("admit").unwrap();
    o.backend = backend;
    o
}

#[test]
fn table_1_descriptors_run_in_lockstep_on_every_sm_on_both_backends() {
    let w = Workload::parse("default", DEFAULT_WORKLOAD).unwrap();
    for (preset, arch) in [("gtx480", 0), ("k20c", 1)] {
        let cfg = GpuConfig::preset(preset).unwrap();
        let points = sweep(&cfg, arch);
        // (every kernel at its demand, the paper's baseline, and at full occupancy)
        assert!(points.len() >= 2 * TABLE_1.len(), "{preset}: {} descriptors", points.len());
        for backend in [Backend::RustHdl, Backend::Verilator] {
            let o = options(backend);
            let (outcomes, mut gpu): (_, Gpu) = o.unit.build(&cfg, &w, &o, &Rec::none(), None).unwrap();
            // (one process a kernel of the table, its levels one after another, all at once)
            for (name, _, _) in TABLE_1 {
                let progs = points.iter().filter(|p| p.name.starts_with(&format!("{name}_"))).map(|p| (p.name.clone(), program(p, 2 * cfg.num_sms()))).collect();
                gpu.add_process(name, 0, 0, progs);
            }
            gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{preset} on {backend:?}: {e}"));
            for (out, _) in &outcomes {
                assert!(out.mismatch().is_none(), "{preset} on {backend:?}: {}", out.mismatch().unwrap());
                assert!(out.cycles() > 100, "{preset} on {backend:?}: {} clocked cycles", out.cycles());
            }
            let r = gpu.result();
            assert!(r.processes.iter().all(|p| p.verified), "{preset}: {:?}", r.processes.iter().map(|p| &p.failures).collect::<Vec<_>>());
            // (the descriptors shared SMs, and some block found its room only in pieces)
            assert!(r.sm.max_kernels_resident > 1, "{preset}: no SM held two kernels");
            assert!(r.sm.admit_packs > 0, "{preset} on {backend:?}: no placement packed the ranges");
            eprintln!("{preset} on {backend:?}: {} descriptors, {} clocked cycles, {} cycles, {} packings", points.len(), outcomes.iter().map(|o| o.0.cycles()).sum::<u64>(), r.cycles, r.sm.admit_packs);
        }
    }
}

/// The model's unit, recording where each broken variant would first drive other outputs.
struct Recorder {
    inner: Admit,
    sm: usize,
    clocked: u64,
    time: u64,
    /// Per variant (no-bypass, no-pack): the first look, and the fields that differ there.
    first: [First; 2],
    fields: [std::rc::Rc<std::cell::RefCell<Vec<&'static str>>>; 2],
}

/// The fields of `a` and `b` that differ.
fn differing(a: &Out, b: &Out) -> Vec<&'static str> {
    let mut v = Vec::new();
    for (name, differs) in [("fits", a.fits != b.fits), ("rf_base", a.rf_base != b.rf_base), ("sh_base", a.sh_base != b.sh_base), ("sp_base", a.sp_base != b.sp_base), ("rf_move", a.rf_move != b.rf_move), ("sh_move", a.sh_move != b.sh_move)] {
        if differs {
            v.push(name);
        }
    }
    v
}

impl Unit for Recorder {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        let o = self.inner.outputs(i);
        for (k, (nb, t)) in [(true, false), (false, true)].into_iter().enumerate() {
            let d = differing(&o, &self.inner.outputs_of(i, nb, t));
            if !d.is_empty() && note_first(&self.first[k], self.time, self.sm, self.clocked) {
                *self.fields[k].borrow_mut() = d;
            }
        }
        o
    }
    fn clock(&mut self, i: &In) {
        self.inner.clock(i);
        self.clocked += 1;
    }
    fn at_cycle(&mut self, t: u64) {
        self.time = t;
    }
}

impl Hosted for Recorder {}

fn cosim(cfg: &GpuConfig, w: &Workload, backend: Backend, faults: AdmitFaults, vcd: Option<&Path>) -> CosimReport {
    let mut o = options(backend);
    o.broken = mpgpu_tb::broken::Broken::default().with("admit", faults);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("admit");
    o.mismatch_vcd = d.join("mismatch.vcd");
    o.vcd = vcd.map(Path::to_path_buf);
    o.mode = SlotMode::Lockstep;
    run_with(cfg, w, &o).unwrap()
}

#[test]
fn broken_admission_units_are_caught_where_the_model_predicts() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = Workload::parse("default", DEFAULT_WORKLOAD).unwrap();
    let params = mpgpu_ref::units::admit::params(&cfg.sm[0]);
    let first: [First; 2] = Default::default();
    let fields: [std::rc::Rc<std::cell::RefCell<Vec<&'static str>>>; 2] = Default::default();
    let mut gpu = Gpu::new(&cfg);
    gpu.set_units(&mut |k| Box::new(Recorder { inner: Admit::new(params), sm: k, clocked: 0, time: 0, first: first.clone(), fields: fields.clone() }) as Held<In, Out>).unwrap();
    gpu.add_workload(&w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    for (k, faults) in [AdmitFaults { no_bypass: true, ..Default::default() }, AdmitFaults { no_pack: true, ..Default::default() }].into_iter().enumerate() {
        let (_, sm, at) = first[k].borrow().unwrap_or_else(|| panic!("{faults:?}: the run never exercises it"));
        let want = fields[k].borrow().clone();
        for &backend in BROKEN_BACKENDS {
            let r = cosim(&cfg, &w, backend, faults, None);
            caught_where_predicted(&r, &format!("{faults:?} on {backend:?}"), "admit", sm, at, &want);
        }
    }
}

#[test]
fn the_waveforms_show_the_units_ports_registers_expected_values_and_mismatch_marker() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = Workload::parse("two", mpgpu_tb::entry::TB_TWO).unwrap();
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("admit-vcd");
    let _ = std::fs::remove_dir_all(&d);
    let r = cosim(&cfg, &w, Backend::Verilator, AdmitFaults::default(), Some(&d.join("run")));
    assert!(r.mismatch.is_none() && r.error.is_none(), "{:?} {:?}", r.mismatch.map(|m| m.to_string()), r.error);
    // (the two processes' blocks fill SMs 0-11)
    for f in ["run/sm0-admit.vcd", "run/sm11-admit.vcd"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        for want in [" mismatch $end", "module expected", " fits $end", " rf_base $end", " free $end", "module state", " rf_len_0 $end", " cap $end"] {
            assert!(text.contains(want), "{f}: no `{want}`");
        }
    }
}

/// Random descriptors, frees and placements, many of them at a boundary (a block that takes
/// exactly the room left, or one more; a block as large as a shared-memory configuration),
/// on `gtx480`'s SM, on `k20c`'s (16 slots, three configurations) and on a small SM whose
/// warp limit a block can take whole (32 warps, 4 slots): the RTL on rust-hdl's simulation
/// against the model, outputs at every look and the registers every cycle.
#[test]
fn random_stimulus_at_the_boundaries_matches_the_model() {
    use mpgpu_tb::blocks::AdmitPorts;
    use mpgpu_tb::{InLoop, RtlUnit};
    use rand::{Rng, SeedableRng};
    let small_sm = mpgpu_spec::units::admit::Params { slots: 4, rows: 512, warps: 32, reg_round: 1, configs: [8192, 16384, 16384, 16384], shared: 16384 };
    let of = |preset: &str| mpgpu_ref::units::admit::params(&GpuConfig::preset(preset).unwrap().sm[0]);
    for (seed, preset, params) in [(1u64, "gtx480", of("gtx480")), (2, "k20c", of("k20c")), (3, "a small SM", small_sm)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let rtl = RtlUnit::rust_hdl(AdmitPorts { params, faults: AdmitFaults::default() });
        let mut pair = InLoop::with_state(Admit::new(params), rtl, 16, Admit::state, RtlUnit::<AdmitPorts>::state);
        let (mut placed, mut refused, mut packs, mut exact) = (0, 0, 0, 0);
        for _ in 0..4000 {
            let st = pair.model.state();
            let mut i = In::default();
            for k in 0..params.slots as u64 {
                if st.valid >> k & 1 != 0 && rng.gen_range(0..8) == 0 {
                    i.free |= 1 << k;
                }
            }
            let live = |k: usize| st.valid >> k & 1 != 0 && i.free >> k & 1 == 0;
            let used = |v: &[u32]| (0..params.slots as usize).filter(|&k| live(k)).map(|k| v[k]).sum::<u32>();
            let empty = (0..params.slots as usize).all(|k| !live(k));
            let cap = if empty { params.shared } else { st.cap };
            let (room_r, room_s, room_w) = (params.rows - used(&st.rf_len), cap - used(&st.sh_len), params.warps - used(&st.warps));
            let over = rng.gen_range(0..4) == 0;
            // (a block of no registers now and then: the SM is not empty, and none of its rows is taken)
            let small = |rng: &mut rand_chacha::ChaCha8Rng| mpgpu_spec::units::admit::Desc { rows: rng.gen_range(0..300) * rng.gen_range(0..8).min(1), warps: rng.gen_range(1..9), user: rng.gen_range(0..6000), spill: rng.gen_range(0..3) * 1024 };
            let mut d = small(&mut rng);
            match rng.gen_range(0..6) {
                0 if room_r > 0 => d.rows = (room_r + over as u32).min(8191) as u16,
                1 => (d.user, d.spill) = (room_s / 2, room_s - room_s / 2 + over as u32),
                2 if room_w > 0 => d.warps = (room_w + over as u32).min(32) as u8,
                3 => (d.user, d.spill) = (params.configs[rng.gen_range(0..4)], 0),
                _ => {}
            }
            if !over && (d.rows as u32 == room_r || d.user + d.spill == room_s || d.warps as u32 == room_w) {
                exact += 1;
            }
            // (a second look, as a dispatcher asks about several kernels in a cycle)
            pair.outputs(&In { desc: small(&mut rng), ..i });
            i.desc = d;
            let o = pair.outputs(&i);
            let slot = (0..params.slots as usize).find(|&k| !live(k));
            match slot {
                Some(s) if o.fits && rng.gen_range(0..4) != 0 => {
                    (i.alloc, i.slot) = (true, s as u8);
                    placed += 1;
                    packs += (o.rf_move || o.sh_move) as u32;
                }
                _ => refused += !o.fits as u32,
            }
            pair.clock(&i);
            if let Some(m) = pair.mismatch() {
                panic!("seed {seed}, {preset}:\n{m}");
            }
        }
        eprintln!("{preset}: {placed} placed, {refused} refused, {packs} packings, {exact} exact fits");
        assert!(placed > 500 && refused > 200 && packs > 50 && exact > 100, "{preset}: {placed} placed, {refused} refused, {packs} packings, {exact} exact fits");
    }
}
