//! Interface of Zorua's coordinator and its three mapping tables (model
//! `mpgpu_ref::units::zorua`): Vijaykumar et al., "Zorua", MICRO 2016, §4.1-§4.5, and the
//! decisions in `docs/zorua.md`, "The coordinator".
//!
//! One instance per SM. The SM gives the coordinator its three events, one per cycle when
//! `ready`: a block's start (its logical block and warps, and its first phase's needs), a
//! warp's phase change (a `phase` specifier, or a fence with the current needs), a warp's
//! arrival at a barrier, a warp's end, a block's end; and, every epoch, the epoch's idle and
//! memory cycles (Algorithm 1). The coordinator answers with grants and releases. A grant: a
//! logical warp becomes schedulable on a physical warp slot, with its register-set mapping row and its block's
//! scratchpad mapping row, which the SM uses for every register and scratchpad access the
//! warp makes until it leaves the schedulable set at its next event (the rows cannot change
//! meanwhile: a warp's register row changes only while it is not schedulable, and a block's
//! scratchpad row only grows, by sets no schedulable warp of the block may use yet). A
//! release: a block's warps waiting at a barrier become schedulable together on what they
//! kept there (slots and rows), when the barrier opens.
//!
//! Cycle behaviour (both sides implement exactly this; `docs/zorua.md`):
//! - **Idle** (`ready`): an event is taken at the edge. Block start, barrier and epoch take
//!   one cycle; a phase change to fewer register sets, a warp end and a block end then free
//!   one set per cycle, highest logical set first.
//! - **Release**: the event that opens a barrier (the last arrival, or a warp's end) releases
//!   the block's warps, and a phase change whose needs are held releases its warp, at the edge
//!   that applies it; `release` shows them the next cycle.
//! - **Scan** (after every event but an epoch, a barrier arrival that neither gives a slot up
//!   nor leaves no warp schedulable, and a phase change that releases its warp and frees no
//!   set): one waiting warp examined per cycle, the
//!   register queue's first, then the scratchpad queue's, then the thread/barrier queue's,
//!   lowest logical warp first within a queue, each warp once. An examined warp passes as many
//!   of its remaining queues as it can (incremental: it keeps what it took; a warp that has
//!   not started yet passes the thread queue only while its block's `peak` sets, with those
//!   the started warps reserve, fit the virtual space). If it moved, one
//!   cycle per set allocated follows (scratchpad first, then registers; physical sets lowest
//!   first, then swap); if it became schedulable, a cycle reading its rows and a cycle driving
//!   `grant` with them. A cycle that finds no warp left to examine ends the scan.
//!
//! That is the single-cycle timing (a configuration's `zorua.timing = "single-cycle"`). The
//! RTL has the pipelined timing, the model's default (and a co-simulation's always): an
//! event applied the cycle after it is taken, a scan's start in three cycles,
//! each warp examined in four (the next picked meanwhile), sets allocated and freed one per
//! cycle after a first cycle, and a grant needing no set driven the cycle after its decision
//! (`docs/zorua.md`, "Timing").

use serde::Serialize;

/// Logical warps per SM at most (the paper's 64, §4.5.1).
pub const MAX_LWARPS: usize = 64;
pub const LWARP_BITS: usize = crate::unit::clog2(MAX_LWARPS as u64) as usize;
/// Logical thread blocks per SM at most (the paper's 16).
pub const MAX_LBLOCKS: usize = 16;
pub const LBLOCK_BITS: usize = crate::unit::clog2(MAX_LBLOCKS as u64) as usize;
/// Registers per thread in a register set (a set is 4 x warp size registers, §4.5.1).
pub const SET_REGS: u32 = 4;
/// Logical register sets per warp (64 registers per thread).
pub const REG_SETS: usize = 16;
/// Bytes in a scratchpad set.
pub const SMEM_SET_BYTES: u32 = 1024;
/// Logical scratchpad sets per block at most (64 KB, Maxwell's scratchpad).
pub const SMEM_SETS: usize = 64;
/// Physical register sets at most (the Kepler and Maxwell presets' 65,536 registers).
pub const MAX_PREG_SETS: usize = 512;
/// Physical scratchpad sets and physical warp slots at most.
pub const MAX_PSMEM_SETS: usize = 64;
pub const MAX_PSLOTS: usize = 64;
/// The highest threshold, in sixteenths of a resource's physical amount.
pub const O_MAX: u8 = 16;
/// Bits of the threshold (0..=O_MAX).
pub const O_BITS: usize = crate::unit::clog2(O_MAX as u64 + 1) as usize;
/// Bits of an event code ([`Ev`]).
pub const EV_BITS: usize = 3;
/// Bits of registers per thread (0..=REG_SETS x SET_REGS) and of scratchpad bytes per block
/// (0..=SMEM_SETS x SMEM_SET_BYTES).
pub const REGS_BITS: usize = crate::unit::clog2(REG_SETS as u64 * SET_REGS as u64 + 1) as usize;
pub const SMEM_BYTES_BITS: usize = crate::unit::clog2(SMEM_SETS as u64 * SMEM_SET_BYTES as u64 + 1) as usize;
/// Bits of a block's warp count (0..=MAX_LWARPS).
pub const NWARPS_BITS: usize = crate::unit::clog2(MAX_LWARPS as u64 + 1) as usize;
/// Bits of a warp's register-set count (0..=REG_SETS) and of a block's scratchpad-set count
/// (0..=SMEM_SETS).
pub const RSETS_BITS: usize = crate::unit::clog2(REG_SETS as u64 + 1) as usize;
pub const SSETS_BITS: usize = crate::unit::clog2(SMEM_SETS as u64 + 1) as usize;
/// Bits of a count of logical register sets over all warps (reserved, in swap) and of logical
/// scratchpad sets over all blocks (in swap).
pub const LREG_COUNT_BITS: usize = crate::unit::clog2((MAX_LWARPS * REG_SETS) as u64 + 1) as usize;
pub const LSMEM_COUNT_BITS: usize = crate::unit::clog2((MAX_LBLOCKS * SMEM_SETS) as u64 + 1) as usize;
/// Bits of a count of physical register sets (0..=MAX_PREG_SETS).
pub const PREG_COUNT_BITS: usize = crate::unit::clog2(MAX_PREG_SETS as u64 + 1) as usize;
/// Bits of a physical scratchpad set, and of a count of them (0..=MAX_PSMEM_SETS).
pub const PSMEM_BITS: usize = crate::unit::clog2(MAX_PSMEM_SETS as u64) as usize;
pub const PSMEM_COUNT_BITS: usize = crate::unit::clog2(MAX_PSMEM_SETS as u64 + 1) as usize;
/// Bits of a physical warp slot, and of a count of them (0..=MAX_PSLOTS).
pub const PSLOT_BITS: usize = crate::unit::clog2(MAX_PSLOTS as u64) as usize;
pub const PSLOT_COUNT_BITS: usize = crate::unit::clog2(MAX_PSLOTS as u64 + 1) as usize;
/// Bits of an epoch's cycle counts (`idle`, `mem`).
pub const EPOCH_BITS: usize = 16;

/// Register sets a phase of `regs` registers per thread needs.
pub const fn reg_sets(regs: u32) -> u32 {
    regs.div_ceil(SET_REGS)
}

/// Scratchpad sets a phase of `bytes` per block needs.
pub const fn smem_sets(bytes: u32) -> u32 {
    bytes.div_ceil(SMEM_SET_BYTES)
}

/// An event (`In::ev`); `ev as u64` is its code on the RTL's `ev` port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[repr(u8)]
pub enum Ev {
    #[default]
    None = 0,
    /// Block `block` starts with logical warps `warps`, its first phase needing `regs` per
    /// thread and `smem` bytes.
    BlockStart = 1,
    /// Warp `warp` (schedulable) begins a phase needing `regs` and `smem` (a specifier, or a
    /// fence with the needs unchanged).
    Phase = 2,
    /// Warp `warp` (schedulable) arrives at a barrier: it waits in the thread/barrier queue
    /// until every warp of its block that has not ended arrives. It keeps its physical slot and
    /// sets, and the block's warps are then released together (`Out::release`); only a block
    /// of more warps than the SM has slots gives the slots up, its warps then taking turns
    /// through the queues (`docs/zorua.md`, "Warp slots").
    Barrier = 3,
    /// Warp `warp` ends: its slot and register sets are freed.
    WarpEnd = 4,
    /// Block `block` ends (after its warps): its scratchpad sets are freed.
    BlockEnd = 5,
    /// An epoch ended with `idle` idle and `mem` memory cycles (Algorithm 1).
    Epoch = 6,
}

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    pub ev: Ev,
    pub warp: u8,
    /// The event's logical block: a block start's or end's, a warp event's warp's (the
    /// coordinator checks it; a pipelined coordinator reads the block's fields with the warp's).
    pub block: u8,
    pub warps: u64,
    /// Registers per thread (0..=64) and scratchpad bytes per block of the phase.
    pub regs: u8,
    pub smem: u32,
    /// At a block start: the most registers per thread any phase of its warps needs (the
    /// kernel's declaration; 0: no reservation). A warp of the block starts (first leaves the
    /// thread queue) only while the register sets reserved by the warps started and not ended,
    /// with its own, fit the virtual space the threshold allows.
    pub peak: u8,
    /// At a block start: its warps' count (the ones in `warps`; the coordinator checks it, the
    /// RTL takes it rather than counting 64 bits).
    pub nwarps: u8,
    /// Epoch statistics.
    pub idle: u16,
    pub mem: u16,
}

/// Driven every clocked cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Out {
    /// An event is taken this cycle.
    pub ready: bool,
    /// Logical warp `grant_warp` becomes schedulable on physical slot `grant_slot`.
    pub grant: bool,
    pub grant_warp: u8,
    pub grant_slot: u8,
    /// Its register mapping row: set `s` is physical (bit `s` of `reg_phys`) at physical set
    /// `reg_set[s]`, or in swap. Sets at or above its phase's need are unallocated (0).
    pub reg_phys: u16,
    pub reg_set: [u16; REG_SETS],
    /// Its block's scratchpad mapping row, likewise.
    pub smem_phys: u64,
    #[serde(with = "serde_big_array")]
    pub smem_set: [u8; SMEM_SETS],
    /// Logical warps released this cycle, all of one block: schedulable again on the slots and
    /// register rows they kept since their last grant (up to their phase's need), without
    /// being examined, with their block's scratchpad row on `smem_phys` and `smem_set`. A
    /// barrier's opening releases the block's warps waiting there; a phase change (or fence)
    /// whose needs the warp and its block already hold releases the warp. Driven for one
    /// cycle, the cycle after the event was applied; never with `grant`.
    pub release: u64,
    /// The oversubscription threshold.
    pub o_thresh: u8,
    /// Physical warp slots free and not wanted by a warp waiting in the thread/barrier queue
    /// (one at a barrier not counted): the room for a new block's warps (§4.2: the coordinator
    /// asks for a block when it has free warp slots for it).
    pub slot_room: u8,
    /// A warp waits in the scratchpad or register queue: it was examined, and the sets it
    /// needs are neither free nor allowed in swap. The SM counts Algorithm 1's idle cycles
    /// only while this holds: idle cycles that more oversubscription could fill
    /// (`docs/zorua.md`, "The oversubscription threshold").
    pub waiting: bool,
}

impl Default for Out {
    fn default() -> Self {
        Out { ready: false, grant: false, grant_warp: 0, grant_slot: 0, reg_phys: 0, reg_set: [0; REG_SETS], smem_phys: 0, smem_set: [0; SMEM_SETS], release: 0, o_thresh: 0, slot_room: 0, waiting: false }
    }
}

mod serde_big_array {
    use serde::Serializer;
    pub fn serialize<S: Serializer>(a: &[u8; super::SMEM_SETS], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(a.iter())
    }
}

/// The architectural state compared with the RTL's registers: the queues, the counters, the
/// threshold and the per-warp and per-block bookkeeping (`warp_info`: block, need and held
/// register sets, physical slot and its valid bit; `block_info`: need and held scratchpad sets,
/// warps not ended, warps at the barrier), and the free maps of the three physical resources.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub tq: u64,
    pub sq: u64,
    pub rq: u64,
    pub sched: u64,
    pub bar: u64,
    pub live: u64,
    pub blocks: u16,
    pub reg_free: u32,
    pub reg_swap: u32,
    /// Register sets reserved by the warps started and not ended (their peaks), and those warps.
    pub reg_resv: u32,
    pub started: u64,
    pub smem_free: u32,
    pub smem_swap: u32,
    pub slots_free: u64,
    pub o_thresh: u8,
    pub warp_info: Vec<u32>,
    pub block_info: Vec<u64>,
    pub reg_map_free: Vec<u64>,
    pub smem_map_free: u64,
}

/// `warp_info` of a warp.
pub fn pack_warp(block: u8, need: u8, held: u8, slot: Option<u8>) -> u32 {
    (block as u32) << 24 | (need as u32) << 16 | (held as u32) << 8 | slot.map_or(0, |s| 0x80 | s as u32)
}

/// `block_info` of a block (`peak`: register sets its warps reserve each; `gives`: it has more
/// warps than the SM has slots, so its warps give their slots up at barriers).
pub fn pack_block(peak: u8, need: u8, held: u8, warps: u8, arrived: u8, gives: bool) -> u64 {
    (gives as u64) << 40 | (peak as u64) << 32 | (need as u64) << 24 | (held as u64) << 16 | (warps as u64) << 8 | arrived as u64
}

// The ports (`crate::port`), in wire order.

/// Bits of a physical register set (`reg_set`: 0..[`MAX_PREG_SETS`]). The RTL's tables are
/// built for the largest geometry (512 register sets, 64 scratchpad sets, 64 warp slots); a
/// configuration's own counts are its parameters (the sets beyond them are never free).
pub const PREG_BITS: usize = crate::unit::clog2(MAX_PREG_SETS as u64) as usize;

crate::wires! { In as i {
    /// The event (`Ev`'s code).
    ev(EV_BITS) = i.ev as u8,
    /// The event's logical warp and block.
    warp(LWARP_BITS) = i.warp,
    block(LBLOCK_BITS) = i.block,
    /// At a block start: its logical warps, one bit each.
    warps(MAX_LWARPS) = i.warps,
    /// The phase's registers per thread and scratchpad bytes per block.
    regs(REGS_BITS) = i.regs,
    smem(SMEM_BYTES_BITS) = i.smem,
    /// An epoch's idle and memory cycles.
    idle(EPOCH_BITS) = i.idle,
    mem(EPOCH_BITS) = i.mem,
    /// At a block start: the most registers per thread any phase needs, and its warp count.
    peak(REGS_BITS) = i.peak,
    nwarps_in(NWARPS_BITS) = i.nwarps,
} }

crate::wires! { Out as o {
    /// An event is taken this cycle.
    ready(1) = o.ready,
    /// Logical warp `grant_warp` becomes schedulable on physical slot `grant_slot`.
    grant(1) = o.grant,
    grant_warp(LWARP_BITS) = o.grant_warp,
    grant_slot(PSLOT_BITS) = o.grant_slot,
    /// Which sets of its register mapping row are physical.
    reg_phys(REG_SETS) = o.reg_phys,
    /// Which sets of its block's scratchpad mapping row are physical.
    smem_phys(SMEM_SETS) = o.smem_phys,
    /// The oversubscription threshold.
    o_thresh(O_BITS) = o.o_thresh,
    /// Physical warp slots free and not wanted by a waiting warp.
    slot_room(PSLOT_COUNT_BITS) = o.slot_room,
    /// Its register mapping row: the physical set of each logical set.
    reg_set [REG_SETS] (PREG_BITS) = |k| o.reg_set[k],
    /// Its block's scratchpad mapping row: the physical set of each logical set.
    smem_set [SMEM_SETS] (PSMEM_BITS) = |k| o.smem_set[k],
    /// Logical warps released this cycle, one bit each.
    released(MAX_LWARPS) = o.release,
    /// A warp waits in the scratchpad or register queue.
    waiting(1) = o.waiting,
} unpack {
    let mut o = Out {
        ready: ready != 0,
        grant: grant != 0,
        grant_warp: grant_warp as u8,
        grant_slot: grant_slot as u8,
        reg_phys: reg_phys as u16,
        smem_phys,
        o_thresh: o_thresh as u8,
        slot_room: slot_room as u8,
        release: released,
        waiting: waiting != 0,
        ..Out::default()
    };
    for (k, w) in reg_set.iter().enumerate() {
        o.reg_set[k] = *w as u16;
    }
    for (k, w) in smem_set.iter().enumerate() {
        o.smem_set[k] = *w as u8;
    }
    o
} }
