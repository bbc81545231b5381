//! Zorua's coordinator and mapping tables as a unit (interface `mpgpu_spec::units::zorua`):
//! Vijaykumar et al., "Zorua", MICRO 2016, §4.2-§4.5, with the decisions of `docs/zorua.md`,
//! "The coordinator". One per SM.
//!
//! The three queues hold the logical warps waiting for resources: the thread/barrier queue
//! (a physical warp slot, and for a warp at a barrier its whole block's arrival), the
//! scratchpad queue (its block's scratchpad sets for the phase) and the register queue (its
//! register sets). A warp passes them in that order and keeps what it takes; once past the
//! register queue it is schedulable. At each event the coordinator scans the waiting warps, the
//! register queue's first. A set goes to swap when no physical set is free and the threshold
//! allows (`o_thresh` sixteenths of the resource's physical amount in swap at most), or when
//! no warp is schedulable (forward progress: swap in global memory has room for every logical
//! set, so the first warp examined then always gets its sets).

use crate::zorua::{ThreshParams, Threshold};
use bitvec::prelude::*;
use mpgpu_spec::units::zorua::*;
use mpgpu_spec::Unit;

// The coordinator's concerns, each an `impl Coord` block over the state declared here; a
// child module depends on this one (`use super::*`) and on none of its siblings.
mod events;
mod scan;

/// What the coordinator manages on one SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Logical warps and thread blocks.
    pub lwarps: u32,
    pub lblocks: u32,
    /// Physical register sets (registers / (4 x 32)), scratchpad sets (1 KB) and warp slots.
    pub reg_sets: u32,
    pub smem_sets: u32,
    pub slots: u32,
    pub thresh: ThreshParams,
    /// The pipelined coordinator's timing (docs/zorua.md, "Timing"), or the single-cycle one.
    pub pipelined: bool,
}

/// The physical resources of an SM that a geometry is made of. The configuration's SM
/// (`config::SmConfig`) implements it. A deliberate rule: the units do not depend on the
/// simulator's configuration; the configuration depends on them (it validates against
/// [`Geometry::of`]).
pub trait SmResources {
    /// 32-bit registers.
    fn registers(&self) -> u32;
    /// Scratchpad bytes.
    fn shared_bytes(&self) -> u32;
    /// Warp slots.
    fn warp_slots(&self) -> u32;
}

impl Geometry {
    /// The geometry of an SM of configuration `c`: the paper's 64 logical warps and 16 logical
    /// blocks, and the SM's physical registers, scratchpad and warp slots.
    pub fn of(c: &impl SmResources) -> Result<Geometry, String> {
        let g = Geometry {
            lwarps: MAX_LWARPS as u32,
            lblocks: MAX_LBLOCKS as u32,
            reg_sets: c.registers() / (SET_REGS * 32),
            smem_sets: c.shared_bytes() / SMEM_SET_BYTES,
            slots: c.warp_slots(),
            thresh: ThreshParams::default(),
            pipelined: false,
        };
        g.check()?;
        Ok(g)
    }

    pub fn check(&self) -> Result<(), String> {
        let bad = |what: &str, v: u32, lo: u32, hi: usize| {
            if v < lo || v as usize > hi {
                Err(format!("Zorua: {what} is {v}, expected {lo}..={hi}"))
            } else {
                Ok(())
            }
        };
        bad("the logical warps", self.lwarps, 1, MAX_LWARPS)?;
        bad("the logical blocks", self.lblocks, 1, MAX_LBLOCKS)?;
        bad("the physical register sets (registers / 128)", self.reg_sets, 1, MAX_PREG_SETS)?;
        bad("the physical scratchpad sets (shared_bytes / 1024)", self.smem_sets, 1, MAX_PSMEM_SETS)?;
        bad("the physical warp slots", self.slots, 1, MAX_PSLOTS)?;
        if self.slots > self.lwarps {
            return Err(format!("Zorua: {} physical warp slots but {} logical warps", self.slots, self.lwarps));
        }
        Ok(())
    }
}

impl crate::slots::Hosted for Coord {
    fn halted(&self) -> Option<String> {
        self.error.clone()
    }
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

/// Test-only broken variants (`docs/zorua.md`, "Broken variants").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Broken {
    /// The rescan starts from the thread/barrier queue.
    pub rescan_from_thread: bool,
    /// A warp's end frees its block's scratchpad.
    pub smem_at_warp_end: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Free {
    /// Warp `w`'s register sets down to `to`.
    Regs { w: u8, to: u8 },
    /// Block `b`'s scratchpad sets, all; `end`: the block ends when they are freed.
    Smem { b: u8, end: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Idle,
    /// An event taken at the last edge (its fields fetched), applied in this cycle.
    Event(In),
    /// Freeing sets, one per cycle after a first that selects the highest entry (`late`: past
    /// it), highest first; then `then` (a block's scratchpad after a broken warp end), then a
    /// scan.
    Free(Free, Option<Free>, bool),
    /// Single-cycle timing: examining the scan's next warp (or ending the scan), in one cycle.
    Pick { seen: u64 },
    /// A scan's start: `stage` 0 computes which warps not started fit, 1 the queues'
    /// candidates, 2 takes the first (or ends the scan).
    Scan { stage: u8 },
    /// Examining warp `w`; `seen`: the warps examined in this scan, `w` with them. `stage` 0
    /// reads its fields, 1 its block's, 2 what it needs, 3 decides and applies. Meanwhile the
    /// next warp is picked, from the state before the decision (docs/zorua.md, "Timing").
    Exam { w: u8, seen: u64, stage: u8 },
    /// Allocating warp `w`'s sets, one per cycle after a first that finds the lowest free
    /// (`late`: past it): `smem` scratchpad sets then `regs` register sets, of which the first
    /// `smem_phys` and `regs_phys` physical. `next`: the warp the scan examines next.
    Alloc { w: u8, smem: u8, smem_phys: u8, regs: u8, regs_phys: u8, grant: bool, seen: u64, late: bool, next: Option<u8> },
    /// The tables' rows of a warp to be granted are read (their RAMs read a cycle after the
    /// address: the last set allocated is in them).
    Read { w: u8, seen: u64, next: Option<u8> },
    /// Warp `w` becomes schedulable: the grant, with its rows.
    Finish { w: u8, seen: u64, next: Option<u8> },
    /// Pipelined: the warps an event released (`rel`) become schedulable, shown on
    /// `Out::release`; then `rel_then`.
    Release,
}

/// One SM's coordinator.
#[derive(Clone, Debug)]
pub struct Coord {
    g: Geometry,
    pub broken: Broken,
    /// The warp-level manager of the paper's comparison (WLM, Xiang et al., HPCA 2014): each
    /// warp gets its block's declared registers and its block the declared scratchpad, nothing
    /// goes to swap, and warps are granted in the order their blocks started, the first that
    /// cannot be ending the scan (so an older block is never starved by a younger one).
    pub wlm: bool,
    /// Logical blocks in the order they started.
    order: Vec<u8>,
    th: Threshold,
    tq: u64,
    sq: u64,
    rq: u64,
    sched: u64,
    bar: u64,
    live: u64,
    blocks: u16,
    wblock: [u8; MAX_LWARPS],
    rneed: [u8; MAX_LWARPS],
    rheld: [u8; MAX_LWARPS],
    slot: [Option<u8>; MAX_LWARPS],
    sneed: [u8; MAX_LBLOCKS],
    sheld: [u8; MAX_LBLOCKS],
    nwarps: [u8; MAX_LBLOCKS],
    narr: [u8; MAX_LBLOCKS],
    /// Register sets each warp of a block reserves when it starts (its peak).
    bpeak: [u8; MAX_LBLOCKS],
    /// The block has more warps than the SM has slots: its warps give their slots up at
    /// barriers (docs/zorua.md, "Warp slots").
    bgive: [bool; MAX_LBLOCKS],
    /// Warps released (`Out::release`), and their block: shown the cycle after the event
    /// is applied (single-cycle: released at the event's edge; pipelined: in the release
    /// step, which then goes on to `rel_then`, the step the event chose).
    rel: u64,
    rel_b: u8,
    rel_then: Step,

    /// Warps started (past the thread queue once) and not ended, and their reserved sets.
    started: u64,
    reg_resv: u32,
    /// Free maps (1: free) and their counts; sets in swap.
    reg_map: BitVec<u64>,
    smem_map: BitVec<u64>,
    slot_map: BitVec<u64>,
    reg_free: u32,
    reg_swap: u32,
    smem_free: u32,
    smem_swap: u32,
    /// The mapping tables: an entry is its physical set, with bit 15 (registers) or bit 7
    /// (scratchpad) set when physical; allocated iff below the warp's or block's held count.
    rtab: Vec<[u16; REG_SETS]>,
    stab: Vec<[u8; SMEM_SETS]>,
    step: Step,
    /// The SM broke the protocol (an event while busy, a phase change of a warp that is not
    /// schedulable, ...): the first time.
    error: Option<String>,
    /// Counters for reports: grants, sets allocated physical and in swap, forward-progress
    /// grants past the threshold.
    pub grants: u64,
    /// Warps released from barriers (not counted in `grants`).
    pub releases: u64,
    pub reg_allocs: [u64; 2],
    pub smem_allocs: [u64; 2],
    pub valve_grants: u64,
}

const REG_VALID: u16 = 0x8000;
const SMEM_VALID: u8 = 0x80;

fn bits(m: u64) -> impl Iterator<Item = usize> {
    let mut m = m;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

/// A free map as 64-bit words, bits past its length zero.
fn words(m: &BitVec<u64>) -> Vec<u64> {
    m.chunks(64).map(|c| c.load_le::<u64>()).collect()
}

impl Coord {
    pub fn new(g: Geometry) -> Coord {
        g.check().expect("Zorua geometry");
        Coord {
            g,
            broken: Broken::default(),
            wlm: false,
            order: Vec::new(),
            th: Threshold::new(g.thresh),
            tq: 0,
            sq: 0,
            rq: 0,
            sched: 0,
            bar: 0,
            live: 0,
            blocks: 0,
            wblock: [0; MAX_LWARPS],
            rneed: [0; MAX_LWARPS],
            rheld: [0; MAX_LWARPS],
            slot: [None; MAX_LWARPS],
            sneed: [0; MAX_LBLOCKS],
            sheld: [0; MAX_LBLOCKS],
            nwarps: [0; MAX_LBLOCKS],
            narr: [0; MAX_LBLOCKS],
            bpeak: [0; MAX_LBLOCKS],
            bgive: [false; MAX_LBLOCKS],
            rel: 0,
            rel_b: 0,
            rel_then: Step::Idle,

            started: 0,
            reg_resv: 0,
            reg_map: bitvec![u64, Lsb0; 1; g.reg_sets as usize],
            smem_map: bitvec![u64, Lsb0; 1; g.smem_sets as usize],
            slot_map: bitvec![u64, Lsb0; 1; g.slots as usize],
            reg_free: g.reg_sets,
            reg_swap: 0,
            smem_free: g.smem_sets,
            smem_swap: 0,
            rtab: vec![[0; REG_SETS]; MAX_LWARPS],
            stab: vec![[0; SMEM_SETS]; MAX_LBLOCKS],
            step: Step::Idle,
            error: None,
            grants: 0,
            releases: 0,
            reg_allocs: [0; 2],
            smem_allocs: [0; 2],
            valve_grants: 0,
        }
    }

    /// A warp-level manager (WLM) on geometry `g`.
    pub fn wlm(g: Geometry) -> Coord {
        Coord { wlm: true, ..Coord::new(g) }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.g
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Warps schedulable now.
    pub fn schedulable(&self) -> u64 {
        self.sched
    }

    /// Warps waiting in the queues.
    pub fn waiting(&self) -> u64 {
        self.tq | self.sq | self.rq
    }

    pub fn o_thresh(&self) -> u32 {
        self.th.o_thresh
    }

    /// Register and scratchpad sets in swap now.
    pub fn swapped(&self) -> (u32, u32) {
        (self.reg_swap, self.smem_swap)
    }

    pub fn state(&self) -> State {
        let lw = self.g.lwarps as usize;
        State {
            tq: self.tq,
            sq: self.sq,
            rq: self.rq,
            sched: self.sched,
            bar: self.bar,
            live: self.live,
            blocks: self.blocks,
            reg_free: self.reg_free,
            reg_swap: self.reg_swap,
            reg_resv: self.reg_resv,
            started: self.started,
            smem_free: self.smem_free,
            smem_swap: self.smem_swap,
            slots_free: words(&self.slot_map)[0],
            o_thresh: self.th.o_thresh as u8,
            warp_info: (0..lw).map(|w| pack_warp(self.wblock[w], self.rneed[w], self.rheld[w], self.slot[w])).collect(),
            block_info: (0..self.g.lblocks as usize).map(|b| pack_block(self.bpeak[b], self.sneed[b], self.sheld[b], self.nwarps[b], self.narr[b], self.bgive[b])).collect(),
            reg_map_free: words(&self.reg_map),
            smem_map_free: words(&self.smem_map)[0],
        }
    }

    /// Checks that the tables, free maps and counters agree: every physical set and slot is
    /// either free or held by exactly one allocated entry, and the swap counters count the
    /// allocated entries in swap.
    pub fn audit(&self) -> Result<(), String> {
        fn one(what: &str, free: &BitVec<u64>, free_n: u32, swap_n: u32, held: &mut dyn Iterator<Item = Option<usize>>) -> Result<(), String> {
            let mut owner = bitvec![u64, Lsb0; 0; free.len()];
            let mut swap = 0;
            for e in held {
                match e {
                    Some(p) if p >= free.len() || free[p] || owner[p] => return Err(format!("{what}: physical {p} is free, out of range or held twice")),
                    Some(p) => owner.set(p, true),
                    None => swap += 1,
                }
            }
            if free.count_ones() as u32 != free_n || owner.count_ones() + free.count_ones() != free.len() || swap != swap_n {
                return Err(format!("{what}: {} free in the map, {free_n} counted, {} held, {swap} in swap, {swap_n} counted", free.count_ones(), owner.count_ones()));
            }
            Ok(())
        }
        let lw = self.g.lwarps as usize;
        let regs = (0..lw).flat_map(|w| self.rtab[w][..self.rheld[w] as usize].iter().map(|&e| (e & REG_VALID != 0).then_some((e & !REG_VALID) as usize)));
        one("register sets", &self.reg_map, self.reg_free + self.pending_phys().0, self.reg_swap - self.pending_swap().0, &mut regs.into_iter())?;
        let smem = (0..self.g.lblocks as usize).flat_map(|b| self.stab[b][..self.sheld[b] as usize].iter().map(|&e| (e & SMEM_VALID != 0).then_some((e & !SMEM_VALID) as usize)));
        one("scratchpad sets", &self.smem_map, self.smem_free + self.pending_phys().1, self.smem_swap - self.pending_swap().1, &mut smem.into_iter())?;
        let slots = (0..lw).filter_map(|w| self.slot[w].map(|s| Some(s as usize)));
        one("warp slots", &self.slot_map, self.slot_map.count_ones() as u32, 0, &mut slots.into_iter())?;
        for w in bits(self.sched) {
            if self.slot[w].is_none() || self.rheld[w] < self.rneed[w] {
                return Err(format!("schedulable logical warp {w} lacks a slot or sets"));
            }
        }
        let resv: u32 = bits(self.started).map(|w| self.bpeak[self.wblock[w] as usize] as u32).sum();
        if resv != self.reg_resv || self.started & !self.live != 0 {
            return Err(format!("{} register sets reserved, {resv} by the warps started {:#x}, or a started warp is not live", self.reg_resv, self.started));
        }
        if (self.tq | self.sq | self.rq | self.sched) & !self.live != 0 || self.tq & self.sq != 0 || self.sq & self.rq != 0 || self.tq & self.rq != 0 || self.sched & (self.tq | self.sq | self.rq) != 0 {
            return Err("a warp is in two queues, or queued and not live".into());
        }
        Ok(())
    }

    /// Sets reserved by an `Alloc` step and not allocated yet: physical (registers,
    /// scratchpad), and in swap.
    fn pending_phys(&self) -> (u32, u32) {
        match self.step {
            Step::Alloc { smem_phys, regs_phys, .. } => (regs_phys as u32, smem_phys as u32),
            _ => (0, 0),
        }
    }

    fn pending_swap(&self) -> (u32, u32) {
        match self.step {
            Step::Alloc { smem, smem_phys, regs, regs_phys, .. } => ((regs - regs_phys) as u32, (smem - smem_phys) as u32),
            _ => (0, 0),
        }
    }
}

impl Unit for Coord {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        // (the variant and the mode are the instance's; everything else starts afresh)
        *self = Coord { broken: self.broken, wlm: self.wlm, ..Coord::new(self.g) };
    }

    fn outputs(&self, _i: &In) -> Out {
        // (warps in the release step want no slot: they kept theirs)
        let wanting = (self.tq & !self.bar & !self.rel).count_ones();
        // (a warp waiting for scratchpad or registers: no room for a new block meanwhile)
        let waiting = self.sq | self.rq != 0;
        let slot_room = if waiting { 0 } else { (self.slot_map.count_ones() as u32).saturating_sub(wanting) as u8 };
        let mut o = Out { ready: self.step == Step::Idle, o_thresh: self.th.o_thresh as u8, slot_room, waiting, release: self.rel, ..Out::default() };
        if self.rel != 0 {
            // (a release shows its block's scratchpad row)
            for (s, &e) in self.stab[self.rel_b as usize].iter().enumerate() {
                o.smem_phys |= ((e & SMEM_VALID != 0) as u64) << s;
                o.smem_set[s] = e & !SMEM_VALID;
            }
        }
        if let Step::Finish { w, .. } = self.step {
            let wi = w as usize;
            o.grant = true;
            o.grant_warp = w;
            o.grant_slot = self.slot[wi].unwrap_or(0);
            for (s, &e) in self.rtab[wi].iter().enumerate() {
                o.reg_phys |= ((e & REG_VALID != 0) as u16) << s;
                o.reg_set[s] = e & !REG_VALID;
            }
            for (s, &e) in self.stab[self.wblock[wi] as usize].iter().enumerate() {
                o.smem_phys |= ((e & SMEM_VALID != 0) as u64) << s;
                o.smem_set[s] = e & !SMEM_VALID;
            }
        }
        o
    }

    fn clock(&mut self, i: &In) {
        if i.ev != Ev::None && self.step != Step::Idle {
            self.fail(format!("event {:?} while the coordinator is busy", i.ev));
        }
        if self.step != Step::Release {
            self.rel = 0;
        }
        match self.step {
            Step::Idle if self.g.pipelined => {
                if i.ev != Ev::None {
                    self.step = Step::Event(*i);
                }
            }
            Step::Idle => self.event(i),
            Step::Event(e) => {
                self.step = Step::Idle;
                self.event(&e);
                if self.rel != 0 {
                    self.rel_then = self.step;
                    self.step = Step::Release;
                }
            }
            Step::Release => {
                self.make_schedulable(self.rel);
                self.rel = 0;
                self.step = self.rel_then;
            }
            Step::Free(f, then, false) => self.step = Step::Free(f, then, true),
            Step::Free(f, then, true) => {
                self.step = if self.free_one(f) {
                    match then {
                        Some(g) => self.free_step(g, None),
                        None => self.scan_start(),
                    }
                } else {
                    Step::Free(f, then, true)
                };
            }
            Step::Pick { seen } => match self.candidate(seen) {
                Some(w) => self.examine(w, seen | 1 << w),
                None => self.step = Step::Idle,
            },
            Step::Scan { stage: 2 } => self.step = self.after(self.candidate(0).map(|w| w as u8), 0),
            Step::Scan { stage } => self.step = Step::Scan { stage: stage + 1 },
            Step::Exam { w, seen, stage: 3 } => self.examine(w as usize, seen),
            Step::Exam { w, seen, stage } => self.step = Step::Exam { w, seen, stage: stage + 1 },
            Step::Alloc { late: false, .. } => {
                if let Step::Alloc { late, .. } = &mut self.step {
                    *late = true;
                }
            }
            Step::Alloc { .. } => self.alloc_one(),
            Step::Read { w, seen, next } => self.step = Step::Finish { w, seen, next },
            Step::Finish { w, seen, next } => {
                self.sched |= 1 << w;
                self.grants += 1;
                self.step = self.after(next, seen);
            }
        }
    }
}

#[cfg(test)]
mod tests;
