//! Interface of the operand log's bookkeeping (`rtl/src/oplog.rs`; model
//! `mpgpu_ref::units::oplog`): Tanasić's thesis §6.3.3 and `docs/faults.md` (O10, O11).
//!
//! One instance per SM. It holds, for the log's entries, which block's partition owns each
//! (`own`, one mask per block slot) and which are in use by an issued instruction (`valid`).
//! The outputs depend on the state and on this cycle's `free` (an entry freed in cycle t is
//! free for an instruction issued in t: the bypass keeps the log's timing that of the thesis,
//! where an entry freed at the last TLB check is available at once); the two that name
//! entries (`alloc_idx`, `claim_mask`) also depend on the block or count asked for. They never
//! depend on `alloc`, `claim` or `release`, which take effect at the rising edge: a partition
//! released in cycle t can be claimed from cycle t+1, and one partition is claimed per cycle.

use serde::Serialize;

/// Log entries the block holds at most: 64 x 128 B = 8 KB (32 lanes x 32 bits per entry; the
/// thesis's 16 KB of 64-bit operands, docs/faults.md O12). A configuration with fewer entries
/// uses the lowest ones.
pub const MAX_ENTRIES: usize = 64;
/// Block slots per SM at most.
pub const MAX_BLOCKS: usize = 16;
/// Bits of an entry index.
pub const INDEX_BITS: usize = crate::unit::clog2(MAX_ENTRIES as u64) as usize;
/// Bits of an entry count (0..=64).
pub const COUNT_BITS: usize = crate::unit::clog2(MAX_ENTRIES as u64 + 1) as usize;
/// Bits of a block slot.
pub const BLOCK_BITS: usize = crate::unit::clog2(MAX_BLOCKS as u64) as usize;
/// Entries one instruction takes at most (a compare-and-swap: address, compare, swap value).
pub const MAX_NEED: usize = 3;

/// Sampled every clocked cycle. A request field is ignored while its valid bit is low.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// Entries freed this cycle (their instruction's last TLB check succeeded).
    pub free: u64,
    /// A global memory instruction of block slot `alloc_block` issues and takes its
    /// `alloc_need` (1..=3) entries: the lowest free ones of the block's partition.
    pub alloc: bool,
    pub alloc_block: u8,
    pub alloc_need: u8,
    /// A block placed or restored in slot `claim_block` takes a partition of `claim_n` entries
    /// (the lowest entries no partition owns), of which the lowest `claim_used` are in use from
    /// the start (a restored block's logged operands).
    pub claim: bool,
    pub claim_block: u8,
    pub claim_n: u8,
    pub claim_used: u8,
    /// Block slots whose partitions return to the pool (the block ended or was saved); their
    /// entries are no longer in use.
    pub release: u16,
}

/// Driven every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// Entries no partition owns.
    pub pool_free: u8,
    /// Per block slot b, bits 2b+1..2b: its partition's free entries (with this cycle's
    /// `free`), saturated at 3.
    pub room: u32,
    /// The lowest three free entries of `alloc_block`'s partition, with this cycle's `free`
    /// (0 where there are fewer).
    pub alloc_idx: [u8; MAX_NEED],
    /// The lowest `claim_n` entries no partition owns (all of them where there are fewer).
    pub claim_mask: u64,
}

impl Out {
    /// Block slot `b`'s free entries, saturated at 3.
    pub fn room_of(&self, b: u32) -> u8 {
        ((self.room >> (2 * b)) & 3) as u8
    }
}

/// The architectural state compared with the RTL's registers (thesis §7.3 of the extraction:
/// the log's valid bits and each block's partition).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub valid: u64,
    pub own: Vec<u64>,
}

/// The `n` lowest set bits of `x` (all of them where there are fewer).
pub fn lowest_bits(mut x: u64, n: u32) -> u64 {
    let mut m = 0;
    for _ in 0..n {
        if x == 0 {
            break;
        }
        let b = x & x.wrapping_neg();
        m |= b;
        x &= !b;
    }
    m
}
