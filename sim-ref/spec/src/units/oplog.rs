//! Interface of the operand log's bookkeeping (`rtl/src/oplog/`; model
//! `mpgpu_ref::units::oplog`): Tanasić's thesis §6.3.3 and `docs/faults.md` (O10, O11, and
//! "The operand log in RTL" for this design).
//!
//! One instance per SM. A block's partition of the log is a **quota**: a count of entries
//! its instructions may hold, claimed out of the log's unclaimed entries when the block is
//! placed and given back when it leaves (the thesis partitions the log per resident block; what
//! an instruction needs is how many entries its block has left, not which). The entries come
//! from one **free list** of the whole log, a FIFO of entry numbers, so an allocation reads the
//! list's head instead of searching a partition.
//!
//! An entry freed at its instruction's last TLB check first waits in a **pending** set; each
//! clocked cycle the lowest and the highest pending entry are picked, at the next clocked cycle
//! they are pushed onto the list, and at the one after credited back to their block's quota
//! (not if the block has left). A freed entry therefore serves its block again from the fourth
//! clocked cycle after its free. Quotas are promises: a leaving block's quota is unclaimed again at once (the lowest
//! leaving block slot at its edge, any others one per clocked cycle after it), while its
//! entries in use come back through the pending set. So `room` is also bounded by the list's
//! length: a block may wait for entries that are still on their way back.
//! While entries or quotas are on their way, the unit is `busy` and the SM clocks it (`tick`)
//! every cycle until it is not.
//!
//! Every output depends on the state only (registers). A cycle whose input is all zero changes
//! nothing (the unit is then not clocked, or clocked with its enable low).

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
/// Bits of an entry need (1..=MAX_NEED) and of a room saturated at MAX_NEED.
pub const NEED_BITS: usize = crate::unit::clog2(MAX_NEED as u64 + 1) as usize;
/// Bits of `room`: NEED_BITS per block slot.
pub const ROOM_BITS: usize = NEED_BITS * MAX_BLOCKS;
/// Pending entries picked per clocked cycle (the lowest and the highest).
pub const DRAIN: usize = 2;

/// Sampled every clocked cycle. A request field is ignored while its valid bit is low.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// Entries freed this cycle (their instruction's last TLB check succeeded). Entries not in
    /// use are ignored.
    pub free: u64,
    /// A global memory instruction of block slot `alloc_block` issues and takes `alloc_need`
    /// (1..=3) entries, the free list's first ones (`alloc_idx`), out of its block's quota
    /// (`room` must be at least `alloc_need`); with `alloc_res`, a restored faulted instruction
    /// taking entries for its logged operands again, out of its block's reservation (which
    /// the claim set aside; `list_room` must be at least `alloc_need`).
    pub alloc: bool,
    pub alloc_block: u8,
    pub alloc_need: u8,
    pub alloc_res: bool,
    /// A block placed or restored in slot `claim_block` takes a quota of `claim_n` entries
    /// (`pool_free` must be at least `claim_n`), of which `claim_used` are reserved for its
    /// restored instructions' logged operands. Not a slot leaving in this cycle or still
    /// `returning`.
    pub claim: bool,
    pub claim_block: u8,
    pub claim_n: u8,
    pub claim_used: u8,
    /// Block slots that leave (the block ended or was saved): their entries in use are freed
    /// and their quotas are unclaimed again.
    pub release: u16,
    /// Clocks the unit while it is `busy` and nothing else is asked of it.
    pub tick: bool,
}

/// Driven every clocked cycle, from the registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// Unclaimed entries.
    pub pool_free: u8,
    /// Per block slot b, bits 2b+1..2b: the entries it can take, saturated at 3 (its quota
    /// left, at most the list's length).
    pub room: u32,
    /// The list's length, saturated at 3 (what a reserved allocation can take).
    pub list_room: u8,
    /// The free list's first three entries (0 past its length): what an allocation takes.
    pub alloc_idx: [u8; MAX_NEED],
    /// Pending entries, entries picked from them, or returning quotas: the unit has work to do
    /// and must be clocked.
    pub busy: bool,
    /// Block slots whose quota is still to be unclaimed: not to be claimed until it is.
    pub returning: u16,
}

impl Out {
    /// The entries block slot `b` can take, saturated at 3.
    pub fn room_of(&self, b: u32) -> u8 {
        ((self.room >> (2 * b)) & 3) as u8
    }
}

/// The architectural state, compared with the RTL's registers (thesis §7.3 of the extraction:
/// the log's valid bits and each block's free count).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    /// Entries in use.
    pub valid: u64,
    /// Entries freed and not yet picked.
    pub pend: u64,
    /// Entries whose block is still resident (credited to its quota when they come back).
    pub cred: u64,
    /// Each entry's block slot (as last allocated).
    pub owner: Vec<u8>,
    /// The free list: its 64 slots (slot s holds entry `slot[s]`), its head and length.
    pub slot: Vec<u8>,
    pub head: u8,
    pub count: u8,
    /// Unclaimed entries: `pool` and the quota unclaimed at the last edge (`back`, added to
    /// `pool` at the next).
    pub pool: u8,
    pub back: u8,
    /// Per block slot: its quota, and what its instructions may still take of it.
    pub quota: Vec<u8>,
    pub left: Vec<u8>,
    /// Block slots whose quota is still to be unclaimed.
    pub ret: u16,
    /// The two entries picked at the last clocked edge: valid, entry.
    pub pick_v: Vec<bool>,
    pub pick: Vec<u8>,
    /// The two entries pushed onto the list at the last clocked edge that go back to their
    /// block's quota at this one (unless it left at that edge, `relq`): whether, and the block.
    pub cr: Vec<bool>,
    pub cown: Vec<u8>,
    pub relq: u16,
}

// The ports (`crate::port`), in wire order.

crate::wires! { In as i {
    /// Entries freed this cycle, one bit each.
    free(MAX_ENTRIES) = i.free,
    /// Allocate `alloc_need` entries for block `alloc_block` (`alloc_res`: from its reserve).
    alloc(1) = i.alloc,
    alloc_block(BLOCK_BITS) = i.alloc_block,
    alloc_need(NEED_BITS) = i.alloc_need,
    alloc_res(1) = i.alloc_res,
    /// Block `claim_block` claims its partition: `claim_n` entries, `claim_used` in use.
    claim(1) = i.claim,
    claim_block(BLOCK_BITS) = i.claim_block,
    claim_n(COUNT_BITS) = i.claim_n,
    claim_used(COUNT_BITS) = i.claim_used,
    /// Blocks whose partitions are released, one bit each.
    part_release(MAX_BLOCKS) = i.release,
    /// The drain tick.
    tick(1) = i.tick,
} }

crate::wires! { Out as o {
    /// Entries in the shared pool.
    pool_free(COUNT_BITS) = o.pool_free,
    /// Each block's room (two bits per block).
    room(ROOM_BITS) = o.room,
    /// Entries the free list can hand out this cycle.
    list_room(NEED_BITS) = o.list_room,
    /// The entries an allocation takes.
    alloc_idx # MAX_NEED (INDEX_BITS) = |k| o.alloc_idx[k],
    /// Work is under way.
    busy(1) = o.busy,
    /// Blocks whose partitions are returning, one bit each.
    returning(MAX_BLOCKS) = o.returning,
} unpack {
    Out { pool_free: pool_free as u8, room: room as u32, list_room: list_room as u8, alloc_idx: std::array::from_fn(|k| alloc_idx[k] as u8), busy: busy != 0, returning: returning as u16 }
} }
