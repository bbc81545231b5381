//! Interface of Warped-Slicer's per-SM sampling counters (RTL `rtl/src/prof.rs`, model
//! `mpgpu_ref::units::prof`): Xu et al., "Warped-Slicer", ISCA 2016, §IV-A and §V-I (714 um^2
//! per SM), with the decisions in `docs/warped-slicer.md`.
//!
//! One instance per SM. The water-filling unit (`mpgpu_spec::units::wf`) times the window:
//! in a cycle with `run`, the counters add the cycle's warp-instructions issued and whether
//! the cycle is a long-memory stall, starting from zero when `first` is high; in a cycle with
//! `last` they latch, the cycle's own events included, with the SM's resident CTA count.
//! The outputs are the latched values, from registers.

use serde::Serialize;

/// Bits of the running and latched counts (as the water-filling unit reads them).
pub const INST_BITS: usize = super::wf::INST_BITS;
pub const STALL_BITS: usize = super::wf::WINDOW_BITS;
/// Bits of the CTA count.
pub const BLOCK_BITS: usize = 5;
/// Warp-instructions an SM issues in a cycle at most (its schedulers).
pub const MAX_ISSUE: u8 = 4;
/// Bits of the warp-instructions issued in a cycle (0..=`MAX_ISSUE`).
pub const ISSUED_BITS: usize = crate::unit::clog2(MAX_ISSUE as u64 + 1) as usize;

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// From the water-filling unit: the window's cycles, its first, its last.
    pub run: bool,
    pub first: bool,
    pub last: bool,
    /// Warp-instructions the SM issued this cycle (0..=[`MAX_ISSUE`]).
    pub issued: u8,
    /// This cycle is a long-memory stall: nothing issued, and a warp waits on a global load.
    pub stall: bool,
    /// CTAs resident on the SM.
    pub blocks: u8,
}

/// Driven every clocked cycle: the counts latched at the last window's last cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    pub insts: u32,
    pub stalls: u32,
    pub blocks: u8,
}

/// The registers: running counts and latched ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub cnt_insts: u32,
    pub cnt_stalls: u32,
    pub insts: u32,
    pub stalls: u32,
    pub blocks: u8,
}

crate::wires! { In as i {
    /// The window's cycles (from the water-filling unit).
    run(1) = i.run,
    /// The window's first cycle: the counts restart from this cycle's events.
    first(1) = i.first,
    /// The window's last cycle: the counts latch, this cycle's events included.
    last(1) = i.last,
    /// Warp-instructions the SM issued this cycle.
    issued(ISSUED_BITS) = i.issued,
    /// This cycle is a long-memory stall.
    stall(1) = i.stall,
    /// CTAs resident on the SM.
    blocks_in(BLOCK_BITS) = i.blocks,
} }

crate::wires! { Out as o {
    /// Warp-instructions issued in the last window.
    insts(INST_BITS) = o.insts,
    /// Long-memory stall cycles in the last window.
    stalls(STALL_BITS) = o.stalls,
    /// CTAs resident at the last window's last cycle.
    blocks(BLOCK_BITS) = o.blocks,
} unpack {
    Out { insts: insts as u32, stalls: stalls as u32, blocks: blocks as u8 }
} }
