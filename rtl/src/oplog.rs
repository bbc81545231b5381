//! `Oplog`: the operand log's bookkeeping for one SM (Tanasić's thesis §6.3.3; interface and
//! timing in `mpgpu_spec::units::oplog`, decisions in `docs/faults.md`, O10-O12).
//!
//! State: `valid` (one bit per log entry: in use by an issued global memory instruction) and
//! `own[b]` (one mask per block slot: the entries of its partition). The log's data array is
//! not here: the SM keeps it (`docs/faults.md`, "The operand log in RTL").
//!
//! Outputs, combinational on the state and on this cycle's `free` (which bypasses `valid`) and
//! on the block (`alloc_block`) or count (`claim_n`) asked for:
//! - `pool_free`: entries no partition owns;
//! - `room`: per block slot b, bits 2b+1..2b, its free entries saturated at 3;
//! - `alloc_idx0..2`: the lowest three free entries of `alloc_block`'s partition;
//! - `claim_mask`: the lowest `claim_n` entries no partition owns.
//!
//! At the rising edge: `free` and released partitions' entries leave `valid`; `alloc` marks
//! `alloc_need` entries (the lowest free ones) in use; `claim` gives `claim_block` the claim
//! mask, its lowest `claim_used` entries in use; `release` empties partitions. Loop bounds are
//! literal (64 entries, 16 block slots) because rust-hdl's Verilog generator needs them; the
//! widths come from `mpgpu_spec::units::oplog`.

use mpgpu_spec::units::oplog::{BLOCK_BITS, COUNT_BITS, INDEX_BITS, MAX_BLOCKS, MAX_ENTRIES};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_ENTRIES == 64 && MAX_BLOCKS == 16 && INDEX_BITS == 6 && COUNT_BITS == 7 && BLOCK_BITS == 4);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OplogFaults {
    /// A store's second entry is not marked in use: freed at once instead of at the last TLB
    /// check.
    pub drop_second: bool,
    /// Allocation takes the highest free entry of the partition first instead of the lowest.
    pub highest_first: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Oplog {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Entries freed this cycle (their instruction's last TLB check).
    pub free: Signal<In, Bits<64>>,
    /// An instruction of block slot `alloc_block` takes `alloc_need` entries.
    pub alloc: Signal<In, Bit>,
    pub alloc_block: Signal<In, Bits<4>>,
    pub alloc_need: Signal<In, Bits<2>>,
    /// Block slot `claim_block` takes a partition of `claim_n` entries, `claim_used` in use.
    pub claim: Signal<In, Bit>,
    pub claim_block: Signal<In, Bits<4>>,
    pub claim_n: Signal<In, Bits<7>>,
    pub claim_used: Signal<In, Bits<7>>,
    /// Block slots whose partitions return to the pool (`release` in the interface; the port
    /// is not called that because `release` is a Verilog keyword).
    pub part_release: Signal<In, Bits<16>>,
    /// Entries no partition owns.
    pub pool_free: Signal<Out, Bits<7>>,
    /// Per block slot, its free entries saturated at 3 (2 bits each).
    pub room: Signal<Out, Bits<32>>,
    /// The lowest three free entries of `alloc_block`'s partition.
    pub alloc_idx0: Signal<Out, Bits<6>>,
    pub alloc_idx1: Signal<Out, Bits<6>>,
    pub alloc_idx2: Signal<Out, Bits<6>>,
    /// The lowest `claim_n` entries no partition owns.
    pub claim_mask: Signal<Out, Bits<64>>,
    /// The entries the configuration has.
    present: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    ones: Constant<Bits<64>>,
    highest_first: Constant<Bit>,
    drop_second: Constant<Bit>,
    /// Index constants (rust-hdl's generator takes no casts of loop variables).
    ids: [Constant<Bits<6>>; 64],
    blk: [Constant<Bits<4>>; 16],
    owned: Signal<Local, Bits<64>>,
    pool: Signal<Local, Bits<64>>,
    live: Signal<Local, Bits<64>>,
    part_free: Signal<Local, Bits<64>>,
    rest1: Signal<Local, Bits<64>>,
    rest2: Signal<Local, Bits<64>>,
    room_acc: Signal<Local, Bits<32>>,
    sel: Signal<Local, Bits<64>>,
    x0: Signal<Local, Bits<64>>,
    x1: Signal<Local, Bits<64>>,
    x2: Signal<Local, Bits<64>>,
    l0: Signal<Local, Bits<64>>,
    l1: Signal<Local, Bits<64>>,
    l2: Signal<Local, Bits<64>>,
    i0: Signal<Local, Bits<6>>,
    i1: Signal<Local, Bits<6>>,
    i2: Signal<Local, Bits<6>>,
    abits: Signal<Local, Bits<64>>,
    cmask: Signal<Local, Bits<64>>,
    umask: Signal<Local, Bits<64>>,
    released: Signal<Local, Bits<64>>,
    back: Signal<Local, Bits<64>>,
    /// Each entry's rank in the pool (pool entries below it), as kept (`rank ^ base`).
    rk: [Signal<Local, Bits<7>>; 65],
    /// The count a claim takes out of every rank (0 without a claim).
    nc: Signal<Local, Bits<7>>,
    /// Each rank less the claim's count, saturated at 0.
    sub: [Signal<Local, Bits<7>>; 65],
    /// The released entries' prefix counts, level by level of a Sklansky tree (`p6[i]`:
    /// released entries at or below `i`).
    p0: [Signal<Local, Bits<7>>; 64],
    p1: [Signal<Local, Bits<7>>; 64],
    p2: [Signal<Local, Bits<7>>; 64],
    p3: [Signal<Local, Bits<7>>; 64],
    p4: [Signal<Local, Bits<7>>; 64],
    p5: [Signal<Local, Bits<7>>; 64],
    p6: [Signal<Local, Bits<7>>; 64],
    /// Each entry's rank at reset (`min(i, entries)`: every entry is in the pool).
    base: [Constant<Bits<7>>; 65],
    /// Entries in use.
    pub valid: DFF<Bits<64>>,
    /// Each block slot's partition.
    pub own: [DFF<Bits<64>>; 16],
    /// Each entry's rank in the pool: the pool entries below it, kept XORed with `base` so
    /// that the flip-flops start at zero (`rank[64]`: the pool's size). Derived from `own` (not part of the compared state);
    /// with it a claim is a compare per entry, not a count along the pool.
    pub rank: [DFF<Bits<7>>; 65],
}

impl Oplog {
    /// A log of `entries` (1..=64) entries.
    pub fn new(entries: usize, faults: OplogFaults) -> Self {
        assert!((1..=MAX_ENTRIES).contains(&entries), "an operand log of {entries} entries (1..={MAX_ENTRIES})");
        let present = if entries == 64 { u64::MAX } else { (1u64 << entries) - 1 };
        Self {
            clock: Default::default(),
            free: Default::default(),
            alloc: Default::default(),
            alloc_block: Default::default(),
            alloc_need: Default::default(),
            claim: Default::default(),
            claim_block: Default::default(),
            claim_n: Default::default(),
            claim_used: Default::default(),
            part_release: Default::default(),
            pool_free: Default::default(),
            room: Default::default(),
            alloc_idx0: Default::default(),
            alloc_idx1: Default::default(),
            alloc_idx2: Default::default(),
            claim_mask: Default::default(),
            present: Constant::new(present.into()),
            one: Constant::new(1u64.into()),
            ones: Constant::new(u64::MAX.into()),
            highest_first: Constant::new(faults.highest_first),
            drop_second: Constant::new(faults.drop_second),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            blk: std::array::from_fn(|i| Constant::new((i as u64).into())),
            owned: Default::default(),
            pool: Default::default(),
            live: Default::default(),
            part_free: Default::default(),
            rest1: Default::default(),
            rest2: Default::default(),
            room_acc: Default::default(),
            sel: Default::default(),
            x0: Default::default(),
            x1: Default::default(),
            x2: Default::default(),
            l0: Default::default(),
            l1: Default::default(),
            l2: Default::default(),
            i0: Default::default(),
            i1: Default::default(),
            i2: Default::default(),
            abits: Default::default(),
            cmask: Default::default(),
            umask: Default::default(),
            released: Default::default(),
            back: Default::default(),
            rk: std::array::from_fn(|_| Default::default()),
            nc: Default::default(),
            sub: std::array::from_fn(|_| Default::default()),
            p0: std::array::from_fn(|_| Default::default()),
            p1: std::array::from_fn(|_| Default::default()),
            p2: std::array::from_fn(|_| Default::default()),
            p3: std::array::from_fn(|_| Default::default()),
            p4: std::array::from_fn(|_| Default::default()),
            p5: std::array::from_fn(|_| Default::default()),
            p6: std::array::from_fn(|_| Default::default()),
            base: std::array::from_fn(|i| Constant::new((i.min(entries) as u64).into())),
            valid: Default::default(),
            own: Default::default(),
            rank: std::array::from_fn(|_| Default::default()),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.free.connect();
        self.alloc.connect();
        self.alloc_block.connect();
        self.alloc_need.connect();
        self.claim.connect();
        self.claim_block.connect();
        self.claim_n.connect();
        self.claim_used.connect();
        self.part_release.connect();
        self.connect_all();
    }
}

impl Logic for Oplog {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid);
        for b in 0..16 {
            self.own[b].clock.next = self.clock.val();
            self.own[b].d.next = self.own[b].q.val();
        }
        for i in 0..65 {
            self.rank[i].clock.next = self.clock.val();
            self.rk[i].next = self.rank[i].q.val() ^ self.base[i].val();
        }
        // Entries in use, with this cycle's frees let through.
        self.live.next = self.valid.q.val() & !self.free.val();
        // The pool: entries no partition owns. Released: the released partitions' entries;
        // back: the entries that return to the pool (with a claimed block slot's old
        // partition, should it have one).
        self.owned.next = 0.into();
        self.released.next = 0.into();
        self.back.next = 0.into();
        for b in 0..16 {
            self.owned.next = self.owned.val() | self.own[b].q.val();
            if self.part_release.val().get_bit(b) {
                self.released.next = self.released.val() | self.own[b].q.val();
            }
            if self.part_release.val().get_bit(b) | (self.claim.val() & (self.claim_block.val() == self.blk[b].val())) {
                self.back.next = self.back.val() | self.own[b].q.val();
            }
        }
        self.pool.next = self.present.val() & !self.owned.val();
        self.pool_free.next = self.rk[64].val();
        // Each partition's free entries, saturated at 3 (clearing the lowest set bit twice).
        self.room_acc.next = 0.into();
        for b in 0..16 {
            self.part_free.next = self.own[b].q.val() & !self.live.val();
            self.rest1.next = self.part_free.val() & (self.part_free.val() + self.ones.val());
            self.rest2.next = self.rest1.val() & (self.rest1.val() + self.ones.val());
            self.room_acc.next = self.room_acc.val().replace_bit(2 * b, (self.part_free.val().any() & !self.rest1.val().any()) | self.rest2.val().any());
            self.room_acc.next = self.room_acc.val().replace_bit(2 * b + 1, self.rest1.val().any());
        }
        self.room.next = self.room_acc.val();
        // Allocation: the lowest three free entries of the asking block's partition.
        self.sel.next = 0.into();
        for b in 0..16 {
            if self.alloc_block.val() == self.blk[b].val() {
                self.sel.next = self.own[b].q.val();
            }
        }
        self.x0.next = self.sel.val() & !self.live.val();
        self.l0.next = self.x0.val() & (!self.x0.val() + self.one.val());
        if self.highest_first.val() {
            self.l0.next = 0.into();
            for i in 0..64 {
                if self.x0.val().get_bit(i) {
                    self.l0.next = 0.into();
                    self.l0.next = self.l0.val().replace_bit(i, true);
                }
            }
        }
        self.x1.next = self.x0.val() & !self.l0.val();
        self.l1.next = self.x1.val() & (!self.x1.val() + self.one.val());
        self.x2.next = self.x1.val() & !self.l1.val();
        self.l2.next = self.x2.val() & (!self.x2.val() + self.one.val());
        self.i0.next = 0.into();
        self.i1.next = 0.into();
        self.i2.next = 0.into();
        for i in 0..64 {
            if self.l0.val().get_bit(i) {
                self.i0.next = self.ids[i].val();
            }
            if self.l1.val().get_bit(i) {
                self.i1.next = self.ids[i].val();
            }
            if self.l2.val().get_bit(i) {
                self.i2.next = self.ids[i].val();
            }
        }
        self.alloc_idx0.next = self.i0.val();
        self.alloc_idx1.next = self.i1.val();
        self.alloc_idx2.next = self.i2.val();
        self.abits.next = 0.into();
        if self.alloc.val() {
            if self.alloc_need.val() == 1 {
                self.abits.next = self.l0.val();
            }
            if self.alloc_need.val() == 2 {
                self.abits.next = self.l0.val() | self.l1.val();
                if self.drop_second.val() {
                    self.abits.next = self.l0.val();
                }
            }
            if self.alloc_need.val() == 3 {
                self.abits.next = self.l0.val() | self.l1.val() | self.l2.val();
            }
        }
        // A partition: the pool entries whose rank is below `claim_n` (its lowest `claim_n`),
        // of which those ranked below `claim_used` are in use.
        self.cmask.next = 0.into();
        self.umask.next = 0.into();
        for i in 0..64 {
            self.cmask.next = self.cmask.val().replace_bit(i, self.pool.val().get_bit(i) & (self.rk[i].val() < self.claim_n.val()));
            self.umask.next = self.umask.val().replace_bit(i, self.pool.val().get_bit(i) & (self.rk[i].val() < self.claim_n.val()) & (self.rk[i].val() < self.claim_used.val()));
        }
        self.claim_mask.next = self.cmask.val();
        // The ranks at the edge: a claim takes its entries, the lowest ranks, out of every rank
        // (saturating); entries back in the pool add their prefix counts (a Sklansky tree, six levels).
        self.nc.next = 0.into();
        if self.claim.val() {
            self.nc.next = self.claim_n.val();
        }
        for i in 0..65 {
            self.sub[i].next = 0.into();
            if self.rk[i].val() >= self.nc.val() {
                self.sub[i].next = self.rk[i].val() - self.nc.val();
            }
        }
        for i in 0..64 {
            self.p0[i].next = 0.into();
            if self.back.val().get_bit(i) {
                self.p0[i].next = 1.into();
            }
        }
        for j in 0..32 {
            self.p1[2 * j].next = self.p0[2 * j].val();
            self.p1[2 * j + 1].next = self.p0[2 * j + 1].val() + self.p0[2 * j].val();
        }
        for j in 0..16 {
            for k in 0..2 {
                self.p2[4 * j + k].next = self.p1[4 * j + k].val();
                self.p2[4 * j + 2 + k].next = self.p1[4 * j + 2 + k].val() + self.p1[4 * j + 1].val();
            }
        }
        for j in 0..8 {
            for k in 0..4 {
                self.p3[8 * j + k].next = self.p2[8 * j + k].val();
                self.p3[8 * j + 4 + k].next = self.p2[8 * j + 4 + k].val() + self.p2[8 * j + 3].val();
            }
        }
        for j in 0..4 {
            for k in 0..8 {
                self.p4[16 * j + k].next = self.p3[16 * j + k].val();
                self.p4[16 * j + 8 + k].next = self.p3[16 * j + 8 + k].val() + self.p3[16 * j + 7].val();
            }
        }
        for j in 0..2 {
            for k in 0..16 {
                self.p5[32 * j + k].next = self.p4[32 * j + k].val();
                self.p5[32 * j + 16 + k].next = self.p4[32 * j + 16 + k].val() + self.p4[32 * j + 15].val();
            }
        }
        for k in 0..32 {
            self.p6[k].next = self.p5[k].val();
            self.p6[32 + k].next = self.p5[32 + k].val() + self.p5[31].val();
        }
        self.rank[0].d.next = self.sub[0].val() ^ self.base[0].val();
        for i in 0..64 {
            self.rank[i + 1].d.next = (self.sub[i + 1].val() + self.p6[i].val()) ^ self.base[i + 1].val();
        }
        // The edge.
        self.valid.d.next = (self.live.val() & !self.released.val()) | self.abits.val();
        if self.claim.val() {
            self.valid.d.next = (self.live.val() & !self.released.val()) | self.abits.val() | self.umask.val();
        }
        for b in 0..16 {
            if self.part_release.val().get_bit(b) {
                self.own[b].d.next = 0.into();
            }
            if self.claim.val() & (self.claim_block.val() == self.blk[b].val()) {
                self.own[b].d.next = self.cmask.val();
            }
        }
    }
}
