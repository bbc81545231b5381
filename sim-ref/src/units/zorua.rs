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

/// A coordinator in an SM's slot: the model, or (in a co-simulation) its RTL or both.
pub trait ZoruaSlot: Unit<In = In, Out = Out> {
    /// The unit broke the protocol (or, in lockstep, disagreed with the model): what.
    fn halted(&self) -> Option<String>;
    /// Grants made past the threshold by the forward-progress rule (for reports).
    fn valve_grants(&self) -> u64 {
        0
    }
}

impl ZoruaSlot for Coord {
    fn halted(&self) -> Option<String> {
        self.error.clone()
    }

    fn valve_grants(&self) -> u64 {
        self.valve_grants
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

    fn fail(&mut self, what: String) {
        self.error.get_or_insert(what);
    }

    /// Opens the barrier of block `b` when every warp of it that has not ended waits there.
    /// Its warps kept their slots and sets, so they are released: schedulable together
    /// (`Out::release` the next cycle). A block that gives its slots up leaves them in the
    /// thread/barrier queue, to be examined. Whether warps were released.
    fn check_barrier(&mut self, b: u8) -> bool {
        let bi = b as usize;
        if self.narr[bi] > 0 && self.narr[bi] >= self.nwarps[bi] {
            let m = bits(self.bar).filter(|&w| self.wblock[w] == b).fold(0u64, |m, w| m | 1 << w);
            self.bar &= !m;
            self.narr[bi] = 0;
            if !self.bgive[bi] {
                self.release(m, b);
                return true;
            }
        }
        false
    }

    /// Released warps `m` become schedulable, out of the thread/barrier and scratchpad queues.
    fn make_schedulable(&mut self, m: u64) {
        self.sched |= m;
        self.tq &= !m;
        self.sq &= !m;
    }

    /// Warps `m` of block `b` become schedulable on what they hold (`Out::release`): at once
    /// (single-cycle), or in the release step that follows the event (pipelined).
    fn release(&mut self, m: u64, b: u8) {
        if !self.g.pipelined {
            self.make_schedulable(m);
        }
        self.rel = m;
        self.rel_b = b;
        self.releases += m.count_ones() as u64;
    }

    fn free_slot(&mut self, w: usize) {
        if let Some(s) = self.slot[w].take() {
            self.slot_map.set(s as usize, true);
        }
    }

    /// An event, taken in an idle cycle.
    fn event(&mut self, i: &In) {
        let scan = self.scan_start();
        let w = i.warp as usize;
        let bit = 1u64.checked_shl(i.warp as u32).unwrap_or(0);
        // (a warp's event names its block too: the RTL reads the block's fields while it reads
        // the warp's)
        let warp_ok = w < self.g.lwarps as usize && self.live & bit != 0 && i.block == self.wblock[w.min(MAX_LWARPS - 1)];
        match i.ev {
            Ev::None => {}
            Ev::BlockStart => {
                let b = i.block as usize;
                let lw_mask = if self.g.lwarps == 64 { u64::MAX } else { (1u64 << self.g.lwarps) - 1 };
                if b >= self.g.lblocks as usize || self.blocks >> b & 1 != 0 || i.warps == 0 || i.warps & !lw_mask != 0 || i.warps & self.live != 0 || i.warps.count_ones() != i.nwarps as u32 {
                    return self.fail(format!("block start of logical block {b} with warps {:#x} ({} counted): the block or a warp is in use or out of range, or the count is wrong", i.warps, i.nwarps));
                }
                if i.regs.max(i.peak) as usize > REG_SETS * SET_REGS as usize || smem_sets(i.smem) > SMEM_SETS as u32 {
                    return self.fail(format!("block start with {} registers and {} scratchpad bytes: at most {} and {}", i.regs, i.smem, REG_SETS * 4, SMEM_SETS * 1024));
                }
                self.blocks |= 1 << b;
                self.order.push(b as u8);
                self.live |= i.warps;
                self.tq |= i.warps;
                for w in bits(i.warps) {
                    self.wblock[w] = b as u8;
                    self.rneed[w] = reg_sets(i.regs as u32) as u8;
                    self.rheld[w] = 0;
                    self.slot[w] = None;
                }
                self.sneed[b] = smem_sets(i.smem) as u8;
                self.bpeak[b] = reg_sets(i.peak as u32) as u8;
                self.bgive[b] = i.nwarps as u32 > self.g.slots;
                self.sheld[b] = 0;
                self.nwarps[b] = i.warps.count_ones() as u8;
                self.narr[b] = 0;
                self.step = scan;
            }
            Ev::Phase => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("phase change of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                if i.regs as usize > REG_SETS * SET_REGS as usize || smem_sets(i.smem) > SMEM_SETS as u32 {
                    return self.fail(format!("phase change of logical warp {w} to {} registers and {} scratchpad bytes: at most {} and {}", i.regs, i.smem, REG_SETS * 4, SMEM_SETS * 1024));
                }
                let b = self.wblock[w] as usize;
                self.sneed[b] = self.sneed[b].max(smem_sets(i.smem) as u8);
                let to = reg_sets(i.regs as u32) as u8;
                self.rneed[w] = to;
                // (a warp that holds what its new phase needs, its block the scratchpad, is
                // released, on what it holds: it leaves the schedulable set for the scratchpad
                // queue, and the release takes it back; the sets above its need are then freed)
                let held = self.rheld[w] >= to && self.sheld[b] >= self.sneed[b];
                self.sched &= !bit;
                self.sq |= bit;
                if held {
                    self.release(bit, b as u8);
                }
                self.step = if self.rheld[w] > to {
                    self.free_step(Free::Regs { w: w as u8, to }, None)
                } else if held {
                    Step::Idle
                } else {
                    scan
                };
            }
            Ev::Barrier => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("barrier arrival of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                let others = self.sched & !bit != 0;
                self.sched &= !bit;
                self.tq |= bit;
                self.bar |= bit;
                let b = self.wblock[w];
                let gives = self.bgive[b as usize];
                if gives {
                    self.free_slot(w);
                }
                self.narr[b as usize] += 1;
                let released = self.check_barrier(b);
                // (a warp that keeps its slot frees nothing: no scan, unless no warp is left
                // schedulable, when the forward-progress rule may let a waiting warp pass)
                if gives || !others && !released {
                    self.step = scan;
                }
            }
            Ev::WarpEnd => {
                if !warp_ok || self.sched & bit == 0 {
                    return self.fail(format!("end of logical warp {w} in block {}, which is not schedulable or not of that block", i.block));
                }
                self.sched &= !bit;
                self.live &= !bit;
                self.free_slot(w);
                let b = self.wblock[w];
                if self.started & bit != 0 {
                    self.started &= !bit;
                    self.reg_resv -= self.bpeak[b as usize] as u32;
                }
                self.nwarps[b as usize] -= 1;
                self.check_barrier(b);
                self.rneed[w] = 0;
                let smem = (self.broken.smem_at_warp_end && self.sheld[b as usize] > 0).then_some(Free::Smem { b, end: false });
                self.step = match (self.rheld[w] > 0, smem) {
                    (true, then) => self.free_step(Free::Regs { w: w as u8, to: 0 }, then),
                    (false, Some(f)) => self.free_step(f, None),
                    (false, None) => scan,
                };
            }
            Ev::BlockEnd => {
                let b = i.block as usize;
                if b >= self.g.lblocks as usize || self.blocks >> b & 1 == 0 || self.nwarps[b] != 0 {
                    return self.fail(format!("end of logical block {b}, which is not resident or has warps left"));
                }
                self.step = if self.sheld[b] > 0 {
                    self.free_step(Free::Smem { b: b as u8, end: true }, None)
                } else {
                    self.blocks &= !(1 << b);
                    self.order.retain(|&x| x as usize != b);
                    scan
                };
            }
            Ev::Epoch => {
                self.th.epoch(i.idle as u64, i.mem as u64);
            }
        }
    }

    /// Frees one set; whether that was the last.
    fn free_one(&mut self, f: Free) -> bool {
        match f {
            Free::Regs { w, to } => {
                let w = w as usize;
                let s = self.rheld[w] as usize - 1;
                let e = std::mem::take(&mut self.rtab[w][s]);
                if e & REG_VALID != 0 {
                    self.reg_map.set((e & !REG_VALID) as usize, true);
                    self.reg_free += 1;
                } else {
                    self.reg_swap -= 1;
                }
                self.rheld[w] -= 1;
                self.rheld[w] == to
            }
            Free::Smem { b, end } => {
                let b = b as usize;
                let s = self.sheld[b] as usize - 1;
                let e = std::mem::take(&mut self.stab[b][s]);
                if e & SMEM_VALID != 0 {
                    self.smem_map.set((e & !SMEM_VALID) as usize, true);
                    self.smem_free += 1;
                } else {
                    self.smem_swap -= 1;
                }
                self.sheld[b] -= 1;
                let last = self.sheld[b] == 0;
                if last && end {
                    self.blocks &= !(1 << b);
                    self.order.retain(|&x| x as usize != b);
                }
                last
            }
        }
    }

    /// The next warp to examine: the first queue in scan order with a warp not yet seen, its
    /// lowest.
    fn candidate(&self, seen: u64) -> Option<usize> {
        if self.wlm {
            // (the oldest block's lowest waiting warp)
            let waiting = (self.tq | self.sq | self.rq) & !seen;
            return self.order.iter().find_map(|&b| {
                let m = bits(waiting).filter(|&w| self.wblock[w] == b).map(|w| 1u64 << w).fold(0, |a, x| a | x);
                (m != 0).then(|| m.trailing_zeros() as usize)
            });
        }
        // (a warp at a barrier its block has not all reached cannot pass, nor can one in the
        // thread/barrier queue while no physical slot is free, nor one not started whose
        // block's peak does not fit: the scan skips them)
        let tq = if self.slot_map.any() { self.tq & !self.bar & (self.started | self.fitting()) } else { 0 };
        let order = if self.broken.rescan_from_thread { [tq, self.sq, self.rq] } else { [self.rq, self.sq, tq] };
        order.iter().map(|q| q & !seen).find(|&q| q != 0).map(|q| q.trailing_zeros() as usize)
    }

    /// Of the warps in the thread/barrier queue not started yet, those whose block's peak fits
    /// the virtual space with the reservations made (all, with no warp schedulable: the
    /// forward-progress rule): only these may start (docs/zorua.md, "Admission").
    fn fitting(&self) -> u64 {
        if self.wlm || self.sched == 0 {
            return u64::MAX;
        }
        let blocks = (0..self.g.lblocks as usize).filter(|&b| self.fits(self.bpeak[b] as u32)).fold(0u32, |m, b| m | 1 << b);
        bits(self.tq & !self.started).filter(|&w| blocks >> self.wblock[w] & 1 != 0).fold(0, |m, w| m | 1 << w)
    }

    /// Splits `need` sets into physical and swap: `Some((physical, swap))` when allowed.
    fn split(&self, need: u32, free: u32, physical: u32, swapped: u32, valve: bool) -> Option<(u32, u32)> {
        let phys = need.min(free);
        let swap = need - phys;
        (swap == 0 || !self.wlm && (valve || self.th.may_swap(physical, swapped, swap))).then_some((phys, swap))
    }

    /// A scan's first step.
    fn scan_start(&self) -> Step {
        if self.g.pipelined {
            Step::Scan { stage: 0 }
        } else {
            Step::Pick { seen: 0 }
        }
    }

    /// The first step freeing `f`, then `then`.
    fn free_step(&self, f: Free, then: Option<Free>) -> Step {
        Step::Free(f, then, !self.g.pipelined)
    }

    /// The step after an examination, an allocation or a grant: examining `next` (pipelined:
    /// picked meanwhile; the scan's end if none), or picking it.
    fn after(&self, next: Option<u8>, seen: u64) -> Step {
        match (self.g.pipelined, next) {
            (false, _) => Step::Pick { seen },
            (true, Some(w)) => Step::Exam { w, seen: seen | 1 << w, stage: 0 },
            (true, None) => Step::Idle,
        }
    }

    /// Whether a warp not started, of a block whose warps reserve `peak` register sets, fits
    /// the virtual space with the reservations made.
    fn fits(&self, peak: u32) -> bool {
        let total = self.reg_resv + peak;
        total <= self.g.reg_sets || self.th.may_swap(self.g.reg_sets, 0, total - self.g.reg_sets)
    }

    /// Examines warp `w` (in a queue): it passes what it can. The scan's next warp is picked
    /// first, from the state before (as the RTL picks it while it examines this one).
    fn examine(&mut self, w: usize, seen: u64) {
        let next = if self.g.pipelined { self.candidate(seen).map(|n| n as u8) } else { None };
        let bit = 1u64 << w;
        let b = self.wblock[w] as usize;
        let valve = self.sched == 0;
        let from_t = self.tq & bit != 0;
        let mut moved = false;
        let (mut smem, mut smem_phys, mut regs, mut regs_phys, mut grant) = (0, 0, 0, 0, false);
        let mut at_t = from_t;
        // (a warp not started yet reserves its peak in the virtual space, and starts only if
        // that fits: docs/zorua.md, "Admission"; the scan picked it before the last decision,
        // which may have taken the room)
        let peak = self.bpeak[b] as u32;
        let fresh = from_t && self.started & bit == 0;
        if from_t && self.bar & bit == 0 && (!fresh || valve || self.wlm || self.fits(peak)) {
            if let Some(s) = self.slot_map.first_one() {
                self.slot_map.set(s, false);
                self.slot[w] = Some(s as u8);
                moved = true;
                at_t = false;
                if fresh {
                    self.started |= bit;
                    self.reg_resv += peak;
                }
            }
        }
        let mut at_s = !at_t && self.rq & bit == 0;
        if at_s {
            let need = self.sneed[b].saturating_sub(self.sheld[b]) as u32;
            if let Some((p, s)) = self.split(need, self.smem_free, self.g.smem_sets, self.smem_swap, valve) {
                self.smem_free -= p;
                self.smem_swap += s;
                (smem, smem_phys) = (need as u8, p as u8);
                moved |= need > 0 || self.sq & bit != 0;
                at_s = false;
            }
        }
        let mut at_r = false;
        if !at_t && !at_s {
            let need = self.rneed[w].saturating_sub(self.rheld[w]) as u32;
            if let Some((p, s)) = self.split(need, self.reg_free, self.g.reg_sets, self.reg_swap, valve) {
                self.reg_free -= p;
                self.reg_swap += s;
                (regs, regs_phys) = (need as u8, p as u8);
                moved = true;
                grant = true;
                if valve && s > 0 {
                    self.valve_grants += 1;
                }
            } else {
                at_r = true;
            }
        }
        self.tq &= !bit;
        self.sq &= !bit;
        self.rq &= !bit;
        if at_t {
            self.tq |= bit;
        } else if at_s {
            self.sq |= bit;
        } else if at_r {
            self.rq |= bit;
        }
        // (WLM: a warp that is not granted ends the scan)
        let (next, seen) = if self.wlm && !grant { (None, u64::MAX) } else { (next, seen) };
        let p = self.g.pipelined;
        self.step = if !moved {
            self.after(next, seen)
        } else if smem + regs > 0 {
            Step::Alloc { w: w as u8, smem, smem_phys, regs, regs_phys, grant, seen, late: !p, next }
        } else if grant && p {
            // (its rows were read while it was examined)
            Step::Finish { w: w as u8, seen, next }
        } else if grant {
            Step::Read { w: w as u8, seen, next }
        } else {
            self.after(next, seen)
        };
    }

    /// Allocates one set of an `Alloc` step.
    fn alloc_one(&mut self) {
        let Step::Alloc { w, mut smem, mut smem_phys, mut regs, mut regs_phys, grant, seen, next, .. } = self.step else { unreachable!() };
        let wi = w as usize;
        if smem > 0 {
            let b = self.wblock[wi] as usize;
            let s = self.sheld[b] as usize;
            self.stab[b][s] = if smem_phys > 0 {
                let p = self.smem_map.first_one().expect("a free scratchpad set was counted");
                self.smem_map.set(p, false);
                smem_phys -= 1;
                self.smem_allocs[0] += 1;
                SMEM_VALID | p as u8
            } else {
                self.smem_allocs[1] += 1;
                0
            };
            self.sheld[b] += 1;
            smem -= 1;
        } else {
            let s = self.rheld[wi] as usize;
            self.rtab[wi][s] = if regs_phys > 0 {
                let p = self.reg_map.first_one().expect("a free register set was counted");
                self.reg_map.set(p, false);
                regs_phys -= 1;
                self.reg_allocs[0] += 1;
                REG_VALID | p as u16
            } else {
                self.reg_allocs[1] += 1;
                0
            };
            self.rheld[wi] += 1;
            regs -= 1;
        }
        self.step = if smem + regs > 0 {
            Step::Alloc { w, smem, smem_phys, regs, regs_phys, grant, seen, late: true, next }
        } else if grant {
            Step::Read { w, seen, next }
        } else {
            self.after(next, seen)
        };
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
mod tests {
    use super::*;

    /// A small SM: 8 logical warps' worth of room on 4 slots, 8 register sets, 4 scratchpad
    /// sets.
    fn small() -> Coord {
        Coord::new(Geometry { lwarps: 64, lblocks: 16, reg_sets: 8, smem_sets: 4, slots: 4, thresh: ThreshParams { o_default: 4, ..ThreshParams::default() }, pipelined: false })
    }

    /// A release in `run`'s list (its slot field).
    const REL: u8 = 0xff;

    /// Presents `i` when the coordinator is ready and clocks until it is idle again; returns
    /// the grants as (cycle after the event was taken, warp, slot, register row's physical
    /// mask), with the warps released as (cycle, warp, [`REL`], 0), and the cycles taken.
    fn run(c: &mut Coord, mut i: In) -> (Vec<(u32, u8, u8, u16)>, u32) {
        assert!(c.outputs(&In::default()).ready, "busy");
        // (a warp's event names its block)
        if matches!(i.ev, Ev::Phase | Ev::Barrier | Ev::WarpEnd) {
            i.block = c.wblock[i.warp as usize];
        }
        let mut grants = Vec::new();
        c.clock(&i);
        let mut t = 1;
        loop {
            let o = c.outputs(&In::default());
            assert!(!(o.grant && o.release != 0), "a grant and a release in one cycle");
            if o.grant {
                grants.push((t, o.grant_warp, o.grant_slot, o.reg_phys));
            }
            grants.extend(bits(o.release).map(|w| (t, w as u8, REL, 0)));
            if o.ready {
                break;
            }
            c.clock(&In::default());
            t += 1;
            assert!(t < 10_000, "the coordinator does not return to idle");
        }
        assert_eq!(c.error(), None);
        (grants, t)
    }

    fn start(block: u8, warps: u64, regs: u8, smem: u32) -> In {
        In { ev: Ev::BlockStart, block, warps, nwarps: warps.count_ones() as u8, regs, smem, ..In::default() }
    }

    fn ev(ev: Ev, warp: u8) -> In {
        In { ev, warp, ..In::default() }
    }

    #[test]
    fn a_block_start_grants_its_warps_one_by_one_with_physical_sets_lowest_first() {
        let mut c = small();
        // two warps, 8 registers (2 sets) each, 1 KB of scratchpad
        let (g, t) = run(&mut c, start(0, 0b11, 8, 1000));
        // cycle 0 takes the event; warp 0: examine (1), a scratchpad set and 2 register sets
        // (2-4), the rows read (5), the grant (6); warp 1: examine (7), 2 sets (8, 9), read
        // (10), grant (11); a cycle finding none left (12); idle in 13.
        assert_eq!(g, vec![(6, 0, 0, 0b11), (11, 1, 1, 0b11)]);
        assert_eq!(t, 13);
        let s = c.state();
        assert_eq!((s.sched, s.reg_free, s.smem_free, s.slots_free), (0b11, 4, 3, 0b1100));
        // the rows: warp 1's sets are physical sets 2 and 3
        assert_eq!(c.rtab[1][..3], [REG_VALID | 2, REG_VALID | 3, 0]);
        assert_eq!(c.stab[0][..2], [SMEM_VALID, 0]);
    }

    #[test]
    fn the_pipelined_timing_takes_the_cycles_docs_zorua_md_gives() {
        let mut c = small();
        c.g.pipelined = true;
        let (g, t) = run(&mut c, start(0, 0b11, 8, 1000));
        // cycle 0 takes the event, 1 applies it; the scan's start: the fit (2), the queues'
        // candidates (3), the first (4); warp 0: its fields (5), its block's (6), its needs
        // (7), the decision (8, warp 1 picked meanwhile); the lowest free sets (9), a
        // scratchpad set and 2 register sets (10-12), the rows read (13), the grant (14);
        // warp 1: 15-18, its 2 register sets (19-21), read (22), grant (23); idle in 24 (no
        // warp was left when warp 1 was picked: no cycle ends the scan).
        assert_eq!(g, vec![(14, 0, 0, 0b11), (23, 1, 1, 0b11)]);
        assert_eq!(t, 24);
        let s = c.state();
        assert_eq!((s.sched, s.reg_free, s.smem_free, s.slots_free), (0b11, 4, 3, 0b1100));
        assert_eq!(c.rtab[1][..3], [REG_VALID | 2, REG_VALID | 3, 0]);
        // a warp's end: taken (0), applied (1), its register sets freed: the highest entry
        // selected (2), two sets freed (3, 4); the scan's start (5-7) finds nothing
        let (g, t) = run(&mut c, ev(Ev::WarpEnd, 1));
        assert_eq!((g, t), (vec![], 8));
        assert_eq!(c.state().reg_free, 6);
        // warp 0 at a barrier, the last of its block now: taken (0), applied (1, the barrier
        // opens), the release step (2), with no scan (nothing was freed)
        let (g, t) = run(&mut c, ev(Ev::Barrier, 0));
        assert_eq!((g, t), (vec![(2, 0, REL, 0)], 3));
        // a phase change whose needs it holds: released likewise; one to fewer sets is
        // released too, then its set is freed (3, 4) and a scan starts (5-7)
        let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, smem: 1000, ..In::default() });
        assert_eq!((g, t), (vec![(2, 0, REL, 0)], 3));
        let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, ..In::default() });
        assert_eq!((g, t), (vec![(2, 0, REL, 0)], 8));
        assert_eq!(c.state().reg_free, 7);
        // a grant needing no set goes from the decision to the grant: a phase change needing
        // a second scratchpad set... (none free here: one more register set, which is)
        let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
        // taken (0), applied (1), scan start (2-4), examined (5-8), the lowest free set (9), the
        // set (10), the rows read (11), the grant (12)
        assert_eq!((g, t), (vec![(12, 0, 0, 0b11)], 13));
    }

    #[test]
    fn a_warps_event_must_name_its_block() {
        let mut c = small();
        run(&mut c, start(0, 0b1, 8, 0));
        run(&mut c, start(1, 0b10, 8, 0));
        c.clock(&In { ev: Ev::Barrier, warp: 1, block: 0, ..In::default() });
        assert!(c.error().unwrap().contains("not of that block"), "{:?}", c.error());
    }

    #[test]
    fn registers_oversubscribe_within_the_threshold_and_a_warp_waits_past_it() {
        let mut c = small();
        // o_thresh 4/16 of 8 sets: 2 sets may be in swap. Three warps of 12 registers (3 sets):
        // 8 physical + 1 swap for the first three... the third gets 2 physical and 1 swap.
        let (g, _) = run(&mut c, start(0, 0b1111, 12, 0));
        assert_eq!(g.iter().map(|x| (x.1, x.3)).collect::<Vec<_>>(), vec![(0, 0b111), (1, 0b111), (2, 0b011)]);
        // the fourth needs 3 sets in swap, over the threshold: it waits in the register queue
        let s = c.state();
        assert_eq!((s.rq, s.reg_free, s.reg_swap), (0b1000, 0, 1));
        // warp 0 ends: its 3 physical sets free, and the rescan grants warp 3 on them
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
        assert_eq!(g.iter().map(|x| (x.1, x.3)).collect::<Vec<_>>(), vec![(3, 0b111)]);
        assert_eq!(c.reg_allocs, [11, 1]);
    }

    #[test]
    fn a_warp_starts_only_while_its_peak_fits_the_virtual_space() {
        let mut c = small();
        c.th.o_thresh = 0;
        // four warps of 4 registers (1 set) now, 16 (4 sets) at their peak: 8 sets hold two
        // peaks, so two start; the others wait in the thread queue with slots free
        let (g, t) = run(&mut c, In { peak: 16, ..start(0, 0b1111, 4, 0) });
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1]);
        // (the event (1); warps 0 and 1: examine, a set, read, grant (4 each); then warps 2
        // and 3 are not offered to the scan, their block's peak no longer fitting: none left
        // (1))
        assert_eq!(t, 10);
        let s = c.state();
        assert_eq!((s.tq, s.started, s.reg_resv, s.reg_free, s.slots_free.count_ones()), (0b1100, 0b11, 8, 6, 2));
        // with o_thresh 4 (a quarter of 8 in swap) the virtual space is 10 sets: still two (a
        // phase change of warp 0 to a second set rescans; it is granted again)
        c.th.o_thresh = 4;
        let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0]);
        // at 8, 12 sets: a third starts
        c.th.o_thresh = 8;
        let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 12, ..In::default() });
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!((c.state().started, c.state().reg_resv), (0b111, 12));
        // a warp's end returns its reservation: the fourth starts
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3]);
        assert_eq!((c.state().started, c.state().reg_resv), (0b1110, 12));
        assert_eq!(c.audit(), Ok(()));
        // without a peak (0) nothing is reserved: the old behaviour
        let mut c = small();
        c.th.o_thresh = 0;
        let (g, _) = run(&mut c, start(0, 0b1111, 4, 0));
        assert_eq!(g.len(), 4);
    }

    #[test]
    fn the_rescan_starts_from_the_register_queue() {
        for broken in [false, true] {
            let mut c = small();
            c.broken.rescan_from_thread = broken;
            c.th.o_thresh = 0;
            // warps 0..2 of block 0 and warp 3 of block 1 take every slot and 2 sets each
            run(&mut c, start(0, 0b0111, 8, 0));
            run(&mut c, start(1, 0b1000, 8, 0));
            // warp 1 asks for 2 more sets: none is free, it waits in the register queue
            run(&mut c, In { ev: Ev::Phase, warp: 1, regs: 16, ..In::default() });
            // warp 4 of block 2 waits for a slot in the thread queue
            run(&mut c, start(2, 0b1_0000, 8, 0));
            assert_eq!((c.state().rq, c.state().tq), (0b10, 0b1_0000));
            // warp 0 ends: a slot and 2 sets free
            let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
            let s = c.state();
            if broken {
                // from the thread queue: warp 4 takes both, warp 1 still waits
                assert_eq!((g[0].1, s.rq), (4, 0b10));
            } else {
                // from the register queue: warp 1 has its sets; warp 4 has the slot and waits
                // for sets
                assert_eq!((g[0].1, s.rq), (1, 0b1_0000));
            }
            assert_eq!(g.len(), 1);
        }
    }

    #[test]
    fn a_barrier_holds_the_block_until_every_warp_arrives_and_releases_it_together() {
        let mut c = small();
        run(&mut c, start(0, 0b111, 4, 0));
        // an arrival keeps its slot and sets, and frees nothing: no scan (taken, applied)
        let (g, t) = run(&mut c, ev(Ev::Barrier, 0));
        assert_eq!((g, t), (vec![], 1));
        run(&mut c, ev(Ev::Barrier, 2));
        let s = c.state();
        assert_eq!((s.sched, s.tq, s.bar, s.slots_free), (0b010, 0b101, 0b101, 0b1000));
        // the last warp arrives: the three are released together on what they kept, the cycle
        // after the event
        let (g, _) = run(&mut c, ev(Ev::Barrier, 1));
        assert_eq!(g, vec![(1, 0, REL, 0), (1, 1, REL, 0), (1, 2, REL, 0)]);
        let s = c.state();
        assert_eq!((s.sched, s.tq, s.bar, s.slots_free, c.reg_allocs, c.grants), (0b111, 0, 0, 0b1000, [3, 0], 3));
        // an ended warp no longer counts: warps 0 and 2 wait, warp 1 ends, the barrier opens
        run(&mut c, ev(Ev::Barrier, 0));
        run(&mut c, ev(Ev::Barrier, 2));
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 1));
        assert_eq!(g.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(), vec![(0, REL), (2, REL)]);
        // the last schedulable warp at a barrier its block has not all reached: a scan, for
        // the forward-progress rule (warp 1 waits for registers past the threshold: 6 sets of
        // 8 are warp 0's)
        let mut c = small();
        c.th.o_thresh = 0;
        let (g, _) = run(&mut c, start(0, 0b11, 24, 0));
        assert_eq!((g.len(), c.state().rq), (1, 0b10));
        let (g, _) = run(&mut c, ev(Ev::Barrier, 0));
        assert_eq!((g.iter().map(|x| x.1).collect::<Vec<_>>(), c.valve_grants), (vec![1], 1));
    }

    #[test]
    fn a_block_of_more_warps_than_slots_gives_them_up_at_barriers_and_takes_turns() {
        for pipelined in [false, true] {
            let mut c = small();
            c.g.pipelined = pipelined;
            // six warps on four slots: warps 0..3 run, 4 and 5 wait for slots
            let (g, _) = run(&mut c, start(0, 0b11_1111, 4, 0));
            assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
            assert_eq!(c.state().block_info[0] >> 40, 1);
            // an arrival gives its slot up; warp 4 takes it
            let (g, _) = run(&mut c, ev(Ev::Barrier, 0));
            assert_eq!(g.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(), vec![(4, 0)]);
            for w in [1, 2, 3] {
                run(&mut c, ev(Ev::Barrier, w));
            }
            run(&mut c, ev(Ev::Barrier, 4));
            // the last arrives: the six pass through the queues again, taking free slots
            let (g, _) = run(&mut c, ev(Ev::Barrier, 5));
            assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
            assert!(g.iter().all(|x| x.2 != REL));
            assert_eq!((c.state().tq, c.releases), (0b11_0000, 0));
            assert_eq!(c.audit(), Ok(()));
        }
    }

    #[test]
    fn scratchpad_is_freed_at_the_blocks_end_not_a_warps() {
        for broken in [false, true] {
            let mut c = small();
            c.broken.smem_at_warp_end = broken;
            run(&mut c, start(0, 0b11, 4, 2048));
            assert_eq!(c.state().smem_free, 2);
            run(&mut c, ev(Ev::WarpEnd, 0));
            assert_eq!(c.state().smem_free, if broken { 4 } else { 2 });
            run(&mut c, ev(Ev::WarpEnd, 1));
            run(&mut c, In { ev: Ev::BlockEnd, block: 0, ..In::default() });
            let s = c.state();
            assert_eq!((s.smem_free, s.blocks), (4, 0));
        }
    }

    #[test]
    fn scratchpad_grows_with_the_first_request_and_never_shrinks_before_the_end() {
        let mut c = small();
        run(&mut c, start(0, 0b11, 4, 0));
        // warp 0's phase asks for 3 KB: the block gets 3 sets; warp 1's later phase asks for 1 KB
        run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, smem: 3 * 1024, ..In::default() });
        assert_eq!(c.state().smem_free, 1);
        let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 1, regs: 4, smem: 1024, ..In::default() });
        assert_eq!(g.len(), 1);
        run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, smem: 0, ..In::default() });
        assert_eq!(c.state().smem_free, 1);
    }

    #[test]
    fn with_no_warp_schedulable_the_first_examined_goes_past_the_threshold() {
        let mut c = small();
        c.th.o_thresh = 0;
        // 12 register sets for one warp on 8: 4 in swap although the threshold allows none
        let (g, _) = run(&mut c, start(0, 0b1, 48, 0));
        assert_eq!(g[0].3, 0xff);
        assert_eq!((c.state().reg_swap, c.valve_grants), (4, 1));
        // a second warp then waits: one warp is schedulable
        run(&mut c, start(1, 0b10, 4, 0));
        assert_eq!(c.state().rq, 0b10);
        // a phase change freeing sets to 2 (physical 0,1 kept): warp 0 is released at once, and
        // the waiting warp gets a freed set
        let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
        assert_eq!(g.iter().map(|x| (x.1, x.2 == REL)).collect::<Vec<_>>(), vec![(0, true), (1, false)]);
        assert_eq!(c.state().reg_swap, 0);
    }

    #[test]
    fn an_epoch_moves_the_threshold_and_the_protocol_is_checked() {
        let mut c = small();
        run(&mut c, In { ev: Ev::Epoch, idle: 900, mem: 100, ..In::default() });
        assert_eq!(c.outputs(&In::default()).o_thresh, 5);
        run(&mut c, In { ev: Ev::Epoch, idle: 100, mem: 900, ..In::default() });
        assert_eq!(c.outputs(&In::default()).o_thresh, 4);
        c.clock(&ev(Ev::Phase, 3));
        assert!(c.error().unwrap().contains("not schedulable"));
    }

    #[test]
    fn wlm_grants_in_block_order_without_swap() {
        let mut c = Coord::wlm(small().g);
        // block 0 takes 6 of the 8 register sets
        run(&mut c, start(0, 0b11, 12, 0));
        // block 1's first warp needs 3 sets, 2 are free: no swap, and the scan ends there, so
        // block 2's warp, which one set would do, waits behind it
        let (g, _) = run(&mut c, start(1, 0b1100, 12, 0));
        assert!(g.is_empty());
        let (g, _) = run(&mut c, start(2, 0b1_0000, 4, 0));
        assert!(g.is_empty());
        assert_eq!((c.state().reg_swap, c.state().reg_free), (0, 2));
        // a warp of block 0 ends: block 1's first warp goes, then the scan stops at its second
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2]);
        // the other ends: block 1's second warp, then block 2's
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 1));
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(c.state().reg_free, 1);
    }

    /// Random blocks of warps running random phases and barriers against the coordinator,
    /// as an SM would: every cycle the tables, maps and counters agree, every block ends (no
    /// deadlock, with the threshold at zero too), and swap, barriers and the forward-progress
    /// rule were all exercised.
    #[test]
    fn random_blocks_all_finish_and_the_tables_stay_consistent() {
        use crate::units::zorua_random::{RandomParams, RandomSm};
        // (blocks of up to 16 warps on 12 slots: some give their slots up at barriers)
        let mut gave = false;
        for (seed, o, wlm, pipelined, most) in [(1u64, 2u32, false, false, 8), (2, 0, false, false, 8), (3, 8, false, false, 16), (4, 0, true, false, 8), (1, 2, false, true, 8), (2, 0, false, true, 16), (3, 8, false, true, 8), (4, 0, true, true, 8), (5, 0, false, true, 16)] {
            let g = Geometry { lwarps: 64, lblocks: 16, reg_sets: 24, smem_sets: 6, slots: 12, thresh: ThreshParams { o_default: o, ..ThreshParams::default() }, pipelined };
            let mut c = if wlm { Coord::wlm(g) } else { Coord::new(g) };
            let total_blocks = 60;
            // (a warp-level manager has no phases, and the SM keeps barriers)
            let p = RandomParams { blocks: total_blocks, warps: 1..=most, start_chance: 0.05, actions: if wlm { 0..=0 } else { 1..=4 }, bar_chance: 0.4, regs: 40, start_smem: 2, phase_smem: 3, epochs: false, latency: 19, slots: 12 };
            let mut sm = RandomSm::new(seed, p);
            let (mut swaps_seen, mut gave_here) = (false, false);
            for now in 0..400_000u64 {
                let o = c.outputs(&In::default());
                let i = sm.input(now, o.ready);
                sm.outputs(now, &o);
                c.clock(&i);
                swaps_seen |= c.reg_allocs[1] > 0;
                gave_here |= bits(c.bar).any(|w| c.slot[w].is_none());
                if let Err(e) = c.audit() {
                    panic!("seed {seed}, cycle {now}: {e}");
                }
                assert_eq!(c.error(), None, "seed {seed}, cycle {now}");
                if sm.done() {
                    break;
                }
            }
            assert_eq!(sm.ended, total_blocks, "seed {seed}: blocks left unfinished (deadlock)");
            if wlm {
                assert!(!swaps_seen && c.grants > 150, "seed {seed}: WLM swapped, or granted only {}", c.grants);
                continue;
            }
            assert!(swaps_seen && sm.bars > 50 && c.grants > 200 && c.releases > 50, "seed {seed}: swaps {swaps_seen}, barriers {}, grants {}, releases {}", sm.bars, c.grants, c.releases);
            assert!(most > 12 || !gave_here, "seed {seed}: a warp of a block that fits the slots gave its slot up");
            gave |= gave_here;
            if o == 0 {
                assert!(c.valve_grants > 0, "with the threshold at zero, only the forward-progress rule swaps");
            }
        }
        // (blocks of more warps than slots took turns: their warps gave slots up at barriers)
        assert!(gave, "no warp gave its slot up at a barrier");
    }
}
