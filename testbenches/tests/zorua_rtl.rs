//! Zorua's coordinator in RTL (`mpgpu_rtl::Zorua`) against its model (`mpgpu_ref::units::zorua::
//! Coord`) on random event streams: an SM-like driver sends blocks, phase changes, barrier
//! arrivals and ends as the model grants, and every cycle the RTL's outputs and state must
//! equal the model's. The broken variants are caught.

use mpgpu_ref::units::zorua::{Broken, Coord, Geometry};
use mpgpu_ref::zorua::ThreshParams;
use mpgpu_rtl::{Zorua, ZoruaFaults, ZoruaParams};
use mpgpu_tb::blocks::{ZoruaPorts, ZoruaRtl};
use mpgpu_tb::rtl::Backend;
use mpgpu_spec::units::zorua::{pack_block, pack_warp, Ev, In, Out, State, REG_SETS};
use mpgpu_spec::Unit;
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;

struct Rtl {
    b: Zorua,
    /// The physical slots.
    present: u64,
}

fn u(b: impl Into<u64>) -> u64 {
    b.into()
}

/// Entry `e`'s value of a bit-sliced field.
fn field<const N: usize>(slices: &[mpgpu_rtl::Reg<Bits<N>>], e: usize) -> u8 {
    slices.iter().enumerate().fold(0u8, |v, (j, r)| v | ((r.q.val().to_u64() >> e & 1) as u8) << j)
}

impl Rtl {
    fn new(slots: usize, t: ThreshParams, f: ZoruaFaults) -> Rtl {
        let mut b = Zorua::new(ZoruaParams { slots, o_default: t.o_default as u64, o_thresh_step: t.o_thresh_step as u64, c_delta_thresh: t.c_delta_thresh }, f);
        b.connect_inputs();
        let present = if slots == 64 { u64::MAX } else { (1u64 << slots) - 1 };
        let mut r = Rtl { b, present };
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
            ..Out::default()
        };
        for k in 0..REG_SETS {
            o.reg_set[k] = b.reg_set[k].val().to_u64() as u16;
        }
        for k in 0..48 {
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
            reg_free: 256 - b.reg_cnt.q.val().to_u64() as u32,
            reg_swap: b.reg_swap.q.val().to_u64() as u32,
            reg_resv: b.reg_resv.q.val().to_u64() as u32,
            started: q64(&b.started),
            smem_free: 48 - b.smem_cnt.q.val().to_u64() as u32,
            smem_swap: b.smem_swap.q.val().to_u64() as u32,
            slots_free: !q64(&b.slot_used) & self.present,
            o_thresh: b.o_thresh.val().to_u64() as u8,
            warp_info: (0..64).map(|w| pack_warp(field(&b.wblock, w), field(&b.rneed, w), field(&b.rheld, w), (b.slotv.q.val().to_u64() >> w & 1 != 0).then(|| field(&b.slot, w)))).collect(),
            block_info: (0..16).map(|k| pack_block(field(&b.bpeak, k), field(&b.sneed, k), field(&b.sheld, k), field(&b.nwarps, k), field(&b.narr, k))).collect(),
            reg_map_free: (0..4).map(|k| !q64(&b.reg_used[k])).collect(),
            smem_map_free: !q64(&b.smem_used) & ((1u64 << 48) - 1),
        }
    }
}

/// The second side of a comparison: the RTL, or a model (broken or not).
enum Side {
    Rtl(Box<Rtl>),
    Model(Box<Coord>),
    /// The harness's adapter (`ZoruaPorts`) on either backend.
    Unit(Box<ZoruaRtl>),
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

fn geometry(slots: u32, o: u32) -> Geometry {
    Geometry { lwarps: 64, lblocks: 16, reg_sets: 256, smem_sets: 48, slots, thresh: ThreshParams { o_default: o, ..ThreshParams::default() } }
}

/// The first field in which two debug renderings differ.
fn first_diff<T: std::fmt::Debug>(a: &T, b: &T) -> String {
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    let k = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let start = a[..k].rfind(|c| c == '{' || c == ',').map_or(0, |p| p + 1);
    let name: String = a[start..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    name
}

/// Runs random blocks (up to `blocks` of them) against the model `m` (its outputs decide the
/// stimulus) and `other` in lockstep; returns the first mismatch as (cycle, "outputs" or
/// "state", field), and the model's grants, swap allocations and barrier releases.
fn lockstep(seed: u64, slots: u32, _o: u32, blocks: usize, mut m: Coord, mut other: Side) -> (Option<(u64, &'static str, String)>, u64, u64, u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    #[derive(Clone, Copy, Debug)]
    enum Act {
        Phase(u8, u32),
        Bar,
        End,
    }
    let (mut started, mut ended, mut bars) = (0, 0, 0u64);
    let mut evq: std::collections::VecDeque<In> = Default::default();
    let mut warp: Vec<Option<(usize, usize, Option<u64>)>> = vec![None; 64];
    let mut prog: Vec<Vec<Act>> = vec![Vec::new(); 16];
    let mut alive = [0u32; 16];
    let mut used_blocks = 0u16;
    let _ = slots;
    for now in 0..2_000_000u64 {
        let nw = rng.gen_range(1..=16);
        let free: Vec<usize> = (0..64).filter(|&w| warp[w].is_none()).collect();
        if started < blocks && rng.gen_bool(0.02) && free.len() >= nw {
            if let Some(b) = (0..16).find(|&b| used_blocks >> b & 1 == 0) {
                let mut p = Vec::new();
                for _ in 0..rng.gen_range(1..6) {
                    p.push(if rng.gen_bool(0.35) { Act::Bar } else { Act::Phase(rng.gen_range(0..=64), rng.gen_range(0..=16) * 1024) });
                }
                p.push(Act::End);
                prog[b] = p;
                let mut mask = 0u64;
                for &w in &free[..nw] {
                    warp[w] = Some((b, 0, None));
                    mask |= 1 << w;
                }
                alive[b] = nw as u32;
                used_blocks |= 1 << b;
                started += 1;
                // (the peak reservation: usually the most the block's phases need, sometimes none
                // or any value)
                let regs = rng.gen_range(0..=64);
                let most = prog[b].iter().fold(regs, |m, a| if let Act::Phase(r, _) = a { m.max(*r) } else { m });
                let peak = match rng.gen_range(0..5) {
                    0 => 0,
                    1 => rng.gen_range(0..=64),
                    _ => most,
                };
                evq.push_back(In { ev: Ev::BlockStart, block: b as u8, warps: mask, regs, smem: rng.gen_range(0..=8) * 1000, peak, ..In::default() });
            }
        }
        if now % 2048 == 2047 {
            // (often at the dead band's edges: a difference of exactly c_delta_thresh holds the
            // threshold, one more moves it)
            let base = rng.gen_range(0..1900u16);
            let (idle, mem) = match rng.gen_range(0..6) {
                0 => (base + 64, base),
                1 => (base, base + 64),
                2 => (base + 65, base),
                3 => (base, base + 65),
                _ => (rng.gen_range(0..2048), rng.gen_range(0..2048)),
            };
            evq.push_back(In { ev: Ev::Epoch, idle, mem, ..In::default() });
        }
        for w in 0..64 {
            if let Some((b, pos, Some(at))) = warp[w] {
                if at == now {
                    warp[w] = Some((b, pos + 1, None));
                    let e = match prog[b][pos] {
                        Act::Phase(r, s) => In { ev: Ev::Phase, warp: w as u8, regs: r, smem: s, ..In::default() },
                        Act::Bar => {
                            bars += 1;
                            In { ev: Ev::Barrier, warp: w as u8, ..In::default() }
                        }
                        Act::End => {
                            warp[w] = None;
                            alive[b] -= 1;
                            In { ev: Ev::WarpEnd, warp: w as u8, ..In::default() }
                        }
                    };
                    evq.push_back(e);
                    if e.ev == Ev::WarpEnd && alive[b] == 0 {
                        evq.push_back(In { ev: Ev::BlockEnd, block: b as u8, ..In::default() });
                    }
                }
            }
        }
        let o = m.outputs(&In::default());
        let i = if o.ready { evq.pop_front().unwrap_or_default() } else { In::default() };
        if i.ev == Ev::BlockEnd {
            used_blocks &= !(1 << i.block);
            ended += 1;
        }
        let (om, oo) = (m.outputs(&i), other.outputs(&i));
        if om != oo {
            return (Some((now, "outputs", first_diff(&om, &oo))), m.grants, m.reg_allocs[1] + m.smem_allocs[1], bars);
        }
        if om.grant {
            let w = om.grant_warp as usize;
            let (b, pos, _) = warp[w].expect("a grant to a warp that is not running");
            warp[w] = Some((b, pos, Some(now + rng.gen_range(1..40))));
        }
        m.clock(&i);
        other.clock(&i);
        assert_eq!(m.error(), None, "seed {seed}, cycle {now}: the stimulus broke the protocol");
        let (sm, so) = (m.state(), other.state());
        if sm != so {
            return (Some((now, "state", first_diff(&sm, &so))), m.grants, m.reg_allocs[1] + m.smem_allocs[1], bars);
        }
        if ended == blocks {
            return (None, m.grants, m.reg_allocs[1] + m.smem_allocs[1], bars);
        }
    }
    panic!("seed {seed}: the blocks did not all end");
}

#[test]
fn the_rtl_matches_the_model_every_cycle_on_random_blocks() {
    for (seed, slots, o) in [(1u64, 48u32, 2u32), (2, 32, 0), (3, 64, 6)] {
        let g = geometry(slots, o);
        let rtl = Rtl::new(slots as usize, g.thresh, ZoruaFaults::default());
        let (mismatch, grants, swaps, bars) = lockstep(seed, slots, o, 40, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(mismatch, None, "seed {seed}");
        assert!(grants > 500 && swaps > 0 && bars > 50, "seed {seed}: grants {grants}, sets in swap {swaps}, barriers {bars}");
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
        let (predicted, ..) = lockstep(1, 48, 2, 40, Coord::new(g), Side::Model(Box::new(bm)));
        let predicted = predicted.unwrap_or_else(|| panic!("{broken:?} never changes the model"));
        let rtl = Rtl::new(48, g.thresh, faults);
        let (caught, ..) = lockstep(1, 48, 2, 40, Coord::new(g), Side::Rtl(Box::new(rtl)));
        assert_eq!(caught, Some(predicted.clone()), "{faults:?}: predicted {predicted:?}");
    }
}

/// The harness's adapter (port mapping, state read back from the registers) on rust-hdl and
/// on the generated Verilog through Verilator, against the model.
#[test]
fn the_adapter_matches_the_model_on_both_backends() {
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let g = geometry(48, 2);
        let ports = ZoruaPorts { params: ZoruaParams { slots: 48, o_default: 2, o_thresh_step: 1, c_delta_thresh: 64 }, faults: ZoruaFaults::default() };
        let u = ZoruaRtl::with_backend(ports, backend).unwrap_or_else(|e| panic!("{e}"));
        let (mismatch, grants, ..) = lockstep(4, 48, 2, 24, Coord::new(g), Side::Unit(Box::new(u)));
        assert_eq!(mismatch, None, "{backend:?}");
        assert!(grants > 200, "{backend:?}: {grants} grants");
    }
}
