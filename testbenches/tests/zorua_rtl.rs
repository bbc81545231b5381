//! Zorua's coordinator in RTL (`mpgpu_rtl::Zorua`) against its model (`mpgpu_ref::units::zorua::
//! Coord`) on random event streams: an SM-like driver sends blocks, phase changes, barrier
//! arrivals and ends as the model grants, and every cycle the RTL's outputs and state must
//! equal the model's. The broken variants are caught.

use mpgpu_ref::units::zorua::{Broken, Coord, Geometry};
use mpgpu_ref::units::zorua_random::{RandomParams, RandomSm};
use mpgpu_ref::zorua::ThreshParams;
use mpgpu_rtl::{Zorua, ZoruaFaults, ZoruaParams};
use mpgpu_tb::blocks::ZoruaPorts;
use mpgpu_tb::RtlUnit;
use mpgpu_tb::Backend;
use mpgpu_spec::units::zorua::{pack_block, pack_warp, In, Out, State, REG_SETS, SMEM_SETS};
use mpgpu_spec::Unit;
use rust_hdl::prelude::*;

struct Rtl {
    b: Zorua,
    /// The physical slots, register sets and scratchpad sets.
    present: u64,
    reg_sets: usize,
    smem_sets: usize,
}

fn mask(n: usize) -> u64 {
    mpgpu_spec::port::mask(u64::MAX, n)
}

fn u(b: impl Into<u64>) -> u64 {
    b.into()
}

/// Entry `e`'s value of a bit-sliced field.
fn field<const N: usize>(slices: &[mpgpu_rtl::Reg<Bits<N>>], e: usize) -> u8 {
    slices.iter().enumerate().fold(0u8, |v, (j, r)| v | ((r.q.val().to_u64() >> e & 1) as u8) << j)
}

impl Rtl {
    fn new(g: &Geometry, f: ZoruaFaults) -> Rtl {
        let mut b = Zorua::new(params(g), f);
        b.connect_inputs();
        let mut r = Rtl { b, present: mask(g.slots as usize), reg_sets: g.reg_sets as usize, smem_sets: g.smem_sets as usize };
        r.settle();
        r
    }
    fn settle(&mut self) {
        for _ in 0..1000 {
            self.b.update_all();
            if !self.b.has_changed() {
                return;
            }
        }
        panic!("the RTL did not settle");
    }
    fn drive(&mut self, i: &In) {
        self.b.ev.next = (i.ev as u64).into();
        self.b.warp.next = (i.warp as u64).into();
        self.b.block.next = (i.block as u64).into();
        self.b.warps.next = i.warps.into();
        self.b.regs.next = (i.regs as u64).into();
        self.b.smem.next = (i.smem as u64).into();
        self.b.idle.next = (i.idle as u64).into();
        self.b.mem.next = (i.mem as u64).into();
        self.b.peak.next = (i.peak as u64).into();
        self.b.nwarps_in.next = (i.nwarps as u64).into();
        self.b.clock.next = false.into();
        self.settle();
    }
    fn outputs(&mut self, i: &In) -> Out {
        self.drive(i);
        let b = &self.b;
        let mut o = Out {
            ready: b.ready.val(),
            grant: b.grant.val(),
            grant_warp: b.grant_warp.val().to_u64() as u8,
            grant_slot: b.grant_slot.val().to_u64() as u8,
            reg_phys: b.reg_phys.val().to_u64() as u16,
            smem_phys: b.smem_phys.val().to_u64(),
            o_thresh: b.o_thresh.val().to_u64() as u8,
            slot_room: b.slot_room.val().to_u64() as u8,
            waiting: b.waiting.val(),
            release: b.released.val().to_u64(),
            ..Out::default()
        };
        for k in 0..REG_SETS {
            o.reg_set[k] = b.reg_set[k].val().to_u64() as u16;
        }
        for k in 0..SMEM_SETS {
            o.smem_set[k] = b.smem_set[k].val().to_u64() as u8;
        }
        o
    }
    fn clock(&mut self, i: &In) {
        self.drive(i);
        self.b.clock.next = true.into();
        self.settle();
    }
    fn state(&self) -> State {
        let b = &self.b;
        let q64 = |r: &mpgpu_rtl::Reg<Bits<64>>| u(r.q.val().to_u64());
        State {
            tq: q64(&b.tq),
            sq: q64(&b.sq),
            rq: q64(&b.rq),
            sched: q64(&b.sched),
            bar: q64(&b.bar),
            live: q64(&b.live),
            blocks: b.blocks.q.val().to_u64() as u16,
            reg_free: self.reg_sets as u32 - b.reg_cnt.q.val().to_u64() as u32,
            reg_swap: b.reg_swap.q.val().to_u64() as u32,
            reg_resv: b.reg_resv.q.val().to_u64() as u32,
            started: q64(&b.started),
            smem_free: self.smem_sets as u32 - b.smem_cnt.q.val().to_u64() as u32,
            smem_swap: b.smem_swap.q.val().to_u64() as u32,
            slots_free: !q64(&b.slot_used) & self.present,
            o_thresh: b.o_thresh.val().to_u64() as u8,
            warp_info: (0..64).map(|w| pack_warp(field(&b.wblock, w), field(&b.rneed, w), field(&b.rheld, w), (b.slotv.q.val().to_u64() >> w & 1 != 0).then(|| field(&b.slot, w)))).collect(),
            block_info: (0..16).map(|k| pack_block(field(&b.bpeak, k), field(&b.sneed, k), field(&b.sheld, k), field(&b.nwarps, k), field(&b.narr, k), b.bgive.q.val().get_bit(k))).collect(),
            reg_map_free: (0..self.reg_sets.div_ceil(64)).map(|k| !q64(&b.reg_used[k]) & mask(self.reg_sets - 64 * k)).collect(),
            smem_map_free: !q64(&b.smem_used) & mask(self.smem_sets),
        }
    }
}

/// The second side of a comparison: the RTL, or a model (broken or not).
enum Side {
    Rtl(Box<Rtl>),
    Model(Box<Coord>),
    /// The harness's adapter (`ZoruaPorts`) on either backend.
    Unit(Box<RtlUnit<ZoruaPorts>>),
}

impl Side {
    fn outputs(&mut self, i: &In) -> Out {
        match self {
            Side::Rtl(r) => r.outputs(i),
            Side::Model(m) => m.outputs(i),
            Side::Unit(u) => u.outputs(i),
        }
    }
    fn clock(&mut self, i: &In) {
        match self {
            Side::Rtl(r) => r.clock(i),
            Side::Model(m) => m.clock(i),
            Side::Unit(u) => u.clock(i),
        }
    }
    fn state(&self) -> State {
        match self {
            Side::Rtl(r) => r.state(),
            Side::Model(m) => m.state(),
            Side::Unit(u) => u.state(),
        }
    }
}

/// The Fermi configuration's SM (256 register sets, 48 scratchpad sets) with `slots` warp
/// slots and threshold `o`.
fn geometry(slots: u32, o: u32) -> Geometry {
    sized(256, 48, slots, o)
}

fn sized(reg_sets: u32, smem_sets: u32, slots: u32, o: u32) -> Geometry {
    Geometry { lwarps: 64, lblocks: 16, reg_sets, smem_sets, slots, thresh: ThreshParams { o_default: o, ..ThreshParams::default() }, pipelined: true }
}

/// The RTL's parameters for the model's geometry.
fn params(g: &Geometry) -> ZoruaParams {
    let t = g.thresh;
    ZoruaParams { slots: g.slots as usize, reg_sets: g.reg_sets as usize, smem_sets: g.smem_sets as usize, o_default: t.o_default as u64, o_thresh_step: t.o_thresh_step as u64, c_delta_thresh: t.c_delta_thresh }
}

/// The first field in which two debug renderings differ.
fn first_diff<T: std::fmt::Debug>(a: &T, b: &T) -> String {
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    let k = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let start = a[..k].rfind(|c| c == '{' || c == ',').map_or(0, |p| p + 1);
    let name: String = a[start..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    name
}

/// Runs random blocks (`blocks` of them, `mpgpu_ref::units::zorua_random`, phases of up to a
/// third of the SM's scratchpad sets, or all of them with `whole`) against the model `m` (its
/// outputs decide the stimulus) and `other` in lockstep; returns the first mismatch as
/// (cycle, "outputs" or "state", field), the model (its counters) and the barrier arrivals.
fn lockstep(seed: u64, blocks: usize, m: Coord, other: Side) -> (Option<(u64, &'static str, String)>, Coord, u64) {
    lockstep_with(seed, blocks, false, 0.0, m, other).0
}

/// [`lockstep`], with warps ending early at `exit_chance` an action; with the most scratchpad
/// sets a block held and the most physical register sets in use at once (and, with early
/// ends, the count of them in place of the barriers).
fn lockstep_with(seed: u64, blocks: usize, whole: bool, exit_chance: f64, mut m: Coord, mut other: Side) -> ((Option<(u64, &'static str, String)>, Coord, u64), (u32, u32)) {
    let g = *m.geometry();
    let phase_smem = if whole { g.smem_sets } else { (g.smem_sets / 3).max(4) };
    let p = RandomParams { blocks, warps: 1..=16, start_chance: 0.02, actions: 1..=5, bar_chance: 0.35, regs: 64, start_smem: 8, phase_smem, epochs: true, latency: 39, slots: g.slots as usize, exit_chance };
    let (mut held, mut in_use) = (0, 0);
    let mut sm = RandomSm::new(seed, p);
    for now in 0..2_000_000u64 {
        let i = sm.input(now, m.outputs(&In::default()).ready);
        let (om, oo) = (m.outputs(&i), other.outputs(&i));
        if om != oo {
            return ((Some((now, "outputs", first_diff(&om, &oo))), m, if exit_chance > 0.0 { sm.exits } else { sm.bars }), (held, in_use));
        }
        sm.outputs(now, &om);
        m.clock(&i);
        other.clock(&i);
        assert_eq!(m.error(), None, "seed {seed}, cycle {now}: the stimulus broke the protocol");
        let (sm_state, so) = (m.state(), other.state());
        if sm_state != so {
            return ((Some((now, "state", first_diff(&sm_state, &so))), m, if exit_chance > 0.0 { sm.exits } else { sm.bars }), (held, in_use));
        }
        held = sm_state.block_info.iter().map(|b| (b >> 16 & 0xff) as u32).fold(held, u32::max);
        in_use = in_use.max(g.reg_sets - sm_state.reg_free);
        if sm.done() {
            return ((None, m, if exit_chance > 0.0 { sm.exits } else { sm.bars }), (held, in_use));
        }
    }
    panic!("seed {seed}: the blocks did not all end");
}

#[test]
fn the_rtl_matches_the_model_every_cycle_on_random_blocks() {
    let mut valves = 0;
    // (12 slots: blocks of up to 16 warps, some of which give their slots up at barriers)
    for (seed, slots, o) in [(1u64, 48u32, 2u32), (2, 32, 0), (3, 64, 6), (4, 12, 2)] {
        let g = geometry(slots, o);
        let rtl = Rtl::new(&g, ZoruaFaults::default());
        let (mismatch, m, bars) = lockstep(seed, 40, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(mismatch, None, "seed {seed}");
        let (grants, swaps) = (m.grants, m.reg_allocs[1] + m.smem_allocs[1]);
        assert!(grants > 200 && m.releases > 100 && swaps > 0 && bars > 50, "seed {seed}: grants {grants}, releases {}, sets in swap {swaps}, barriers {bars}", m.releases);
        valves += m.valve_grants;
    }
    // (the forward-progress rule's grants past the threshold, in the RTL too)
    assert!(valves > 0, "no grant past the threshold");
}

/// The RTL built for other SMs than Fermi's: Kepler's and Maxwell's (512 register sets, 64
/// scratchpad sets, 64 slots; in one run a block holds the whole scratchpad), the HeteroCore
/// small SM's (128, 32, 24), and sets that fill no 64-set word of the free map and give
/// fractional limits (200, 40, 20; a block holds the whole scratchpad).
#[test]
fn the_rtl_matches_the_model_on_other_sms() {
    for (seed, reg_sets, smem_sets, slots, o, whole) in [(5u64, 512u32, 64u32, 64u32, 6u32, false), (12, 512, 64, 64, 16, true), (7, 128, 32, 24, 2, false), (8, 200, 40, 20, 6, true)] {
        let g = sized(reg_sets, smem_sets, slots, o);
        let rtl = Rtl::new(&g, ZoruaFaults::default());
        let ((mismatch, m, bars), (held, in_use)) = lockstep_with(seed, 40, whole, 0.0, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(mismatch, None, "seed {seed}: {reg_sets} register sets, {smem_sets} scratchpad sets, {slots} slots");
        let (grants, rswaps, sswaps) = (m.grants, m.reg_allocs[1], m.smem_allocs[1]);
        assert!(grants > 200 && m.releases > 100 && rswaps > 0 && sswaps > 0 && bars > 50, "seed {seed}: grants {grants}, releases {}, register sets in swap {rswaps}, scratchpad {sswaps}, barriers {bars}", m.releases);
        // (the sets past the first 256: the free map's upper words, the tables' ninth bit)
        if reg_sets > 256 {
            assert!(in_use > 256, "seed {seed}: at most {in_use} physical register sets in use");
        }
        if whole {
            assert_eq!(held, smem_sets, "seed {seed}: no block held the whole scratchpad");
        }
    }
}

/// Warps that end before a barrier their block's other warps reach (an exit on one path):
/// the end opens the barrier once the others have all arrived, in the RTL as in the model.
#[test]
fn a_warp_that_ends_early_opens_the_barrier_its_block_waits_at() {
    for (seed, o) in [(21u64, 2u32), (22, 8)] {
        let g = geometry(48, o);
        let rtl = Rtl::new(&g, ZoruaFaults::default());
        let ((mismatch, m, exits), _) = lockstep_with(seed, 40, false, 0.05, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(mismatch, None, "seed {seed}");
        assert!(exits > 20 && m.grants > 200, "seed {seed}: {exits} early ends, {} grants", m.grants);
    }
}

#[test]
fn broken_rtl_variants_are_caught_where_the_broken_model_parts() {
    for (faults, broken) in [
        (ZoruaFaults { rescan_from_thread: true, ..Default::default() }, Broken { rescan_from_thread: true, ..Default::default() }),
        (ZoruaFaults { smem_at_warp_end: true, ..Default::default() }, Broken { smem_at_warp_end: true, ..Default::default() }),
    ] {
        let g = geometry(48, 2);
        // the prediction: where the broken model parts from the correct one
        let mut bm = Coord::new(g);
        bm.broken = broken;
        let (predicted, ..) = lockstep(1, 40, Coord::new(g), Side::Model(Box::new(bm)));
        let predicted = predicted.unwrap_or_else(|| panic!("{broken:?} never changes the model"));
        let rtl = Rtl::new(&g, faults);
        let (caught, ..) = lockstep(1, 40, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(caught, Some(predicted.clone()), "{faults:?}: predicted {predicted:?}");
    }
}

/// The harness's adapter (port mapping, state read back from the registers) on rust-hdl and
/// on the generated Verilog through Verilator, against the model.
#[test]
fn the_adapter_matches_the_model_on_both_backends() {
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let g = geometry(48, 2);
        let ports = ZoruaPorts { params: params(&g), faults: ZoruaFaults::default() };
        let u = RtlUnit::with_backend(ports, backend).unwrap_or_else(|e| panic!("{e}"));
        let (mismatch, m, _) = lockstep(4, 24, Coord::new(g), Side::Unit(Box::new(u)));
        let grants = m.grants;
        assert_eq!(mismatch, None, "{backend:?}");
        assert!(grants > 200, "{backend:?}: {grants} grants");
    }
}
