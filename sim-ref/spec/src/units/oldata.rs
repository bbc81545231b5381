//! Interface of the operand log's data array (`rtl/src/oldata.rs`; model
//! `mpgpu_ref::units::oldata`): Tanasić's thesis §6.3.3 and `docs/faults.md` O11.
//!
//! One instance per SM, beside the log's bookkeeping (`oplog`). An entry holds one operand of
//! each of the 32 lanes (32 x 32 bits, `docs/faults.md` O12); the array is 32 lane RAMs of as
//! many words x 32 bits as the log has entries (at most [`MAX_ENTRIES`]), each with one write
//! port and one registered read port, as FPGA block RAM has. Per clocked cycle the unit takes one whole entry written and one read:
//! the entry named by `raddr` at an edge is on `rdata` after it, as the word stood before
//! that edge's write. The SM reads an entry only when no write to it is waiting, so a read
//! never meets a write of the same entry (block RAM does not define that case; the
//! simulations give the old word). With `re` low the read port looks at `waddr` instead, and
//! what it gives is not used.
//!
//! The SM feeds the writes through a queue of [`WRITE_QUEUE`] places (an instruction
//! reserves its places at issue and fills them at its operand read) and schedules the reads
//! (a context save's entries first, then a replay's, before it issues): `docs/faults.md` O11.
//!
//! A cycle whose input is all zero is not clocked (the unit is then not asked for anything).

use serde::Serialize;

/// Lanes of an entry.
pub const LANES: usize = 32;
/// Bits of a lane's operand word.
pub const WORD_BITS: usize = 32;
/// Entries the array can hold: 64 x 128 B = 8 KB (`oplog::MAX_ENTRIES`). The array holds as
/// many as the configuration's log has (`oplog_bytes / 128`); addresses are [`INDEX_BITS`]
/// wide whatever the size.
pub const MAX_ENTRIES: usize = super::oplog::MAX_ENTRIES;
/// Bits of an entry index.
pub const INDEX_BITS: usize = super::oplog::INDEX_BITS;
/// Places of the SM's write queue in front of the array (not part of the unit).
pub const WRITE_QUEUE: usize = 4;

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// Entry `waddr` takes `wdata` (lane k's operand in word k) at this edge.
    pub we: bool,
    pub waddr: u8,
    pub wdata: [u32; LANES],
    /// Entry `raddr` is read at this edge: on `rdata` after it.
    pub re: bool,
    pub raddr: u8,
}

/// Driven every clocked cycle, from the read port's register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// The entry read at the last clocked edge (with `re` low: the written entry's old word).
    pub rdata: [u32; LANES],
}

/// The architectural state, compared with the RTL's RAMs (after a write only): lane k's word
/// of entry e at `words[k * entries + e]`, for a log of `entries` entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub words: Vec<u32>,
}

// The ports (`crate::port`), in wire order.

crate::wires! { In as i {
    /// Write entry `waddr` with one word per lane.
    we(1) = i.we,
    waddr(INDEX_BITS) = i.waddr,
    /// Read entry `raddr` (its words on `rd*` from the next cycle).
    re(1) = i.re,
    raddr(INDEX_BITS) = i.raddr,
    /// The words written, one port per lane.
    wd # LANES (WORD_BITS) = |k| i.wdata[k],
} }

crate::wires! { Out as o {
    /// The words read, one port per lane.
    rd # LANES (WORD_BITS) = |k| o.rdata[k],
} unpack {
    Out { rdata: std::array::from_fn(|k| rd[k] as u32) }
} }
