//! Interface of the replay queue (`rtl/src/rq.rs`; model `mpgpu_ref::units::rq`): Tanasić's
//! thesis §6.3.2 and `docs/faults.md` (O6-O9, "The replay queue in RTL").
//!
//! One instance per SM. A slot holds an issued global memory instruction from its issue to its
//! commit, and across a fault until its replay: the warp slot, pc, the lanes it executes, its
//! age in the warp and its operand-log entries (`valid`: slots in use; `faulted`: squashed,
//! waiting to be replayed). The warp's fetched, unissued instructions are not copied in: they
//! stay in the issue queue (O6).
//!
//! Outputs depend on the state and on this cycle's `replay_idx` and `rd_idx` only: a slot freed
//! in cycle t can be taken from t+1 (the free is registered). A replay names its slot: the
//! warp's waiting entry in the issue queue carries it, and the issue queue, sorted by age,
//! gives the replay order (`docs/faults.md`, O7), so the block searches nothing. `issue`,
//! `replay`, `fault` and `free` act at the rising edge. At most one of `issue` and `replay` per
//! cycle (an SM issues one global memory instruction per cycle: its load/store unit takes one
//! at a time).

use serde::Serialize;

/// Slots the block holds at most (the default `rq_entries`, two per warp slot: O6). A
/// configuration with fewer uses the lowest ones.
pub const MAX_SLOTS: usize = 128;
/// Bits of a slot index.
pub const SLOT_BITS: usize = crate::unit::clog2(MAX_SLOTS as u64) as usize;
/// Warp slots per SM at most.
pub const MAX_WARPS: usize = 64;
pub const WARP_BITS: usize = crate::unit::clog2(MAX_WARPS as u64) as usize;
/// Bits of a pc (kernels of up to 65,536 instructions).
pub const PC_BITS: usize = 16;
/// Bits of an age: ages are compared modulo 2^16 (`older`), which is exact while a warp's
/// instructions in flight and waiting span fewer than 2^15 ages (at most the issue queue's
/// 96 entries and the replay queue's 128 slots do).
pub const AGE_BITS: usize = 16;
/// Operand-log entry index bits, and entries an instruction holds at most.
pub const LOG_BITS: usize = 6;
pub const MAX_LOG: usize = 3;
/// Bits of an instruction's operand-log entry count (0..=MAX_LOG).
pub const NLOG_BITS: usize = crate::unit::clog2(MAX_LOG as u64 + 1) as usize;
/// Lanes of a warp (bits of an instruction's lane mask, `exec`).
pub use super::oldata::LANES;

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// Slots whose instruction committed (its writeback, or a store's last acknowledgement),
    /// or whose faulted instruction left with its block's saved context.
    pub free: u128,
    /// Slots whose instruction is squashed by a fault this cycle.
    pub fault: u128,
    /// A global memory instruction of warp slot `warp` issues: it takes the lowest free slot
    /// (`alloc_idx`) with `pc`, `exec`, `age` and its log entries.
    pub issue: bool,
    /// The faulted instruction in slot `replay_idx` issues again: in flight again. (It is its
    /// warp's oldest faulted one: the SM replays in age order.)
    pub replay: bool,
    pub replay_idx: u8,
    /// The issuing instruction's warp slot.
    pub warp: u8,
    pub pc: u16,
    pub exec: u32,
    pub age: u16,
    pub log: [u8; MAX_LOG],
    pub nlog: u8,
    /// The slot read out (`rd_*`): a squashed instruction's entry, which goes back to its warp
    /// to be replayed.
    pub rd_idx: u8,
}

/// Driven every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// No slot is free: a new global memory instruction does not issue.
    pub full: bool,
    /// The lowest free slot (0 when full).
    pub alloc_idx: u8,
    /// Slot `replay_idx` is faulted (the slot a replay names must be).
    pub replay_ok: bool,
    /// Slot `rd_idx`'s entry: warp slot, pc, lanes, age, log entries and their count.
    pub rd_warp: u8,
    pub rd_pc: u16,
    pub rd_exec: u32,
    pub rd_age: u16,
    pub rd_log: [u8; MAX_LOG],
    pub rd_nlog: u8,
}

/// The architectural state compared with the RTL's registers (the extraction's §7.3: the
/// replay queue's contents with their ages). Masks are two 64-bit halves (slots 0-63, 64-127);
/// `info[s]` packs pc (bits 35..20), the log entry count (19..18) and three log entries (six
/// bits each from bit 0).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub valid: Vec<u64>,
    pub faulted: Vec<u64>,
    pub warp: Vec<u64>,
    pub age: Vec<u64>,
    pub exec: Vec<u64>,
    pub info: Vec<u64>,
}

/// Whether age `a` is older than age `b` (modulo 2^16: `a - b` is negative).
pub fn older(a: u16, b: u16) -> bool {
    a.wrapping_sub(b) & 0x8000 != 0
}

/// `info` of a slot: pc, log entry count and entries.
pub fn pack_info(pc: u16, nlog: u8, log: [u8; MAX_LOG]) -> u64 {
    (pc as u64) << 20 | ((nlog & 3) as u64) << 18 | ((log[2] & 63) as u64) << 12 | ((log[1] & 63) as u64) << 6 | (log[0] & 63) as u64
}

/// A slot's `info` unpacked: pc, log entry count, log entries.
pub fn unpack_info(info: u64) -> (u16, u8, [u8; MAX_LOG]) {
    ((info >> 20) as u16, (info >> 18) as u8 & 3, [(info & 63) as u8, (info >> 6) as u8 & 63, (info >> 12) as u8 & 63])
}

// The ports (`crate::port`), in wire order.

crate::wires! { In as i {
    /// Slots freed this cycle (two 64-bit halves).
    free_lo(64) = i.free as u64,
    free_hi(MAX_SLOTS - 64) = (i.free >> 64) as u64,
    /// Slots squashed by a fault this cycle (two 64-bit halves).
    fault_lo(64) = i.fault as u64,
    fault_hi(MAX_SLOTS - 64) = (i.fault >> 64) as u64,
    /// A global memory instruction issues (into the lowest free slot).
    issue(1) = i.issue,
    /// The faulted instruction in slot `replay_idx` issues again.
    replay(1) = i.replay,
    replay_idx(SLOT_BITS) = i.replay_idx,
    /// The issuing instruction: warp slot, pc, lanes, age, log entries and their count.
    warp(WARP_BITS) = i.warp,
    pc(PC_BITS) = i.pc,
    exec(LANES) = i.exec,
    age(AGE_BITS) = i.age,
    log # MAX_LOG (LOG_BITS) = |k| i.log[k],
    nlog(NLOG_BITS) = i.nlog,
    /// The slot read out on `rd_*`.
    rd_idx(SLOT_BITS) = i.rd_idx,
} }

crate::wires! { Out as o {
    /// No slot is free.
    full(1) = o.full,
    /// The lowest free slot.
    alloc_idx(SLOT_BITS) = o.alloc_idx,
    /// Slot `replay_idx` is faulted.
    replay_ok(1) = o.replay_ok,
    /// Slot `rd_idx`'s entry: warp slot, pc, lanes, age, log entries and their count.
    rd_warp(WARP_BITS) = o.rd_warp,
    rd_pc(PC_BITS) = o.rd_pc,
    rd_exec(LANES) = o.rd_exec,
    rd_age(AGE_BITS) = o.rd_age,
    rd_log # MAX_LOG (LOG_BITS) = |k| o.rd_log[k],
    rd_nlog(NLOG_BITS) = o.rd_nlog,
} unpack {
    Out {
        full: full != 0,
        alloc_idx: alloc_idx as u8,
        replay_ok: replay_ok != 0,
        rd_warp: rd_warp as u8,
        rd_pc: rd_pc as u16,
        rd_exec: rd_exec as u32,
        rd_age: rd_age as u16,
        rd_log: std::array::from_fn(|k| rd_log[k] as u8),
        rd_nlog: rd_nlog as u8,
    }
} }
