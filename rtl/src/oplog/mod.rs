//! `Oplog`: the operand log's bookkeeping for one SM (Tanasić's thesis §6.3.3; interface and
//! timing in `mpgpu_spec::units::oplog`, decisions in `docs/faults.md`, O10-O12 and "The
//! operand log in RTL").
//!
//! A block's partition is a quota (`quota`, `left`: counts per block slot, no entry masks);
//! the entries come from one free list, a ring of 64 slots in four banks of distributed RAM
//! (16 x 6 bits each), so the three entries an allocation takes are the list's first three,
//! read from the banks by registered row addresses (`rrow`), never searched for. A slot
//! holds its entry XORed with its own number, so that the RAMs' zero initial value is the full
//! list in order. Freed entries (and a leaving block's entries in use) wait in `pend`; each
//! clocked cycle the lowest and the highest are picked (`pick*`), and at the next one pushed at
//! the list's tail and credited to their block's `left` (if `cred`: the block has not left).
//! A leaving block's quota is unclaimed at once, one block slot per edge (`ret` holds the
//! others). Every output is a function of the registers. The state changes only in a cycle
//! with some request (`en`), so that a block that is not clocked, or clocked with an all-zero
//! input, stands still.
//!
//! The widths come from `mpgpu_spec::units::oplog` (rust-hdl's Verilog generator evaluates
//! widths and loop bounds in Rust), and the RTL's own from the named constants below. An index
//! or a value inside the logic the generator reads itself, with only the loop variables known,
//! so those are literals there (entries 0..64, block slots 0..16, banks 0..4, halves of 32).
//!
//! The block is flat (`crate::flat`): its registers and RAMs are listed once, at the end of this
//! file; its logic is in `bookkeeping`.

mod bookkeeping;

use crate::ram::LutRam;
use crate::reg::Reg;
use mpgpu_spec::units::oplog::{BLOCK_BITS, COUNT_BITS, DRAIN, INDEX_BITS, MAX_BLOCKS, MAX_ENTRIES, NEED_BITS, ROOM_BITS};
use rust_hdl::prelude::*;

/// The entry vectors are kept in halves of `HALF` entries (see `fr`).
const HALF: usize = MAX_ENTRIES / 2;
/// The free list's banks (`bank0`..`bank3`): bits of a bank number and of a row in a bank.
const BANK_BITS: usize = 2;
const ROW_BITS: usize = INDEX_BITS - BANK_BITS;
const _: () = assert!(
    MAX_ENTRIES == 64 && MAX_BLOCKS == 16,
    "the logic's indices and split points are literals written for 64 entries in halves of 32 and 16 block slots"
);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OplogFaults {
    /// A store's second entry is not marked in use: it is never freed into the pending set.
    pub drop_second: bool,
    /// A freed entry is credited to its block's quota at its push onto the list, a clocked
    /// cycle early (and not again at the edge after).
    pub early_credit: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Oplog {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Entries freed this cycle (their instruction's last TLB check). (One port of 64 bits,
    /// not two of 32, which rust-hdl would simulate a little faster, `docs/harness.md`: with
    /// two, yosys maps the pending set's highest pick 7 LUTs deep, over the 10 ns period.)
    pub free: Signal<In, Bits<MAX_ENTRIES>>,
    /// An instruction of block slot `alloc_block` takes `alloc_need` entries (from the
    /// block's reservation with `alloc_res`).
    pub alloc: Signal<In, Bit>,
    pub alloc_block: Signal<In, Bits<BLOCK_BITS>>,
    pub alloc_need: Signal<In, Bits<NEED_BITS>>,
    pub alloc_res: Signal<In, Bit>,
    /// Block slot `claim_block` takes a quota of `claim_n` entries, `claim_used` of them
    /// reserved.
    pub claim: Signal<In, Bit>,
    pub claim_block: Signal<In, Bits<BLOCK_BITS>>,
    pub claim_n: Signal<In, Bits<COUNT_BITS>>,
    pub claim_used: Signal<In, Bits<COUNT_BITS>>,
    /// Block slots that leave (`release` in the interface; the port is not called that
    /// because `release` is a Verilog keyword).
    pub part_release: Signal<In, Bits<MAX_BLOCKS>>,
    /// Clocks the block while it is busy and nothing else is asked of it.
    pub tick: Signal<In, Bit>,
    /// Unclaimed entries.
    pub pool_free: Signal<Out, Bits<COUNT_BITS>>,
    /// Per block slot, the entries it can take, saturated at 3 (2 bits each).
    pub room: Signal<Out, Bits<ROOM_BITS>>,
    /// The list's length, saturated at 3.
    pub list_room: Signal<Out, Bits<NEED_BITS>>,
    /// The list's first three entries.
    pub alloc_idx0: Signal<Out, Bits<INDEX_BITS>>,
    pub alloc_idx1: Signal<Out, Bits<INDEX_BITS>>,
    pub alloc_idx2: Signal<Out, Bits<INDEX_BITS>>,
    /// Entries pending or picked, or quotas still to be unclaimed.
    pub busy: Signal<Out, Bit>,
    /// The block slots whose quota is still to be unclaimed.
    pub returning: Signal<Out, Bits<MAX_BLOCKS>>,
    /// The entries the configuration has (reset values of `count` and `pool`, the tail's).
    entries: Constant<Bits<COUNT_BITS>>,
    tail0: Constant<Bits<INDEX_BITS>>,
    one: Constant<Bits<HALF>>,
    drop_second: Constant<Bit>,
    early_credit: Constant<Bit>,
    /// Index constants (rust-hdl's generator takes no casts of loop variables).
    ids: [Constant<Bits<INDEX_BITS>>; MAX_ENTRIES],
    blk: [Constant<Bits<BLOCK_BITS>>; MAX_BLOCKS],
    bank: [Constant<Bits<BANK_BITS>>; 4],
    /// `idbit[k]`: the entries of a half whose number has bit k set (bit 5 is the half).
    idbit: [Constant<Bits<HALF>>; 5],
    en: Signal<Local, Bit>,
    /// The entry vectors are kept in halves of 32 (entries 0-31, 32-63): rust-hdl simulates
    /// a vector of more than 32 bits as an array of booleans, many times slower
    /// (`docs/harness.md`, "What rust-hdl's simulator costs").
    /// The entries freed now.
    fr: [Signal<Local, Bits<HALF>>; 2],
    /// Each entry's block leaves now.
    rel_e: [Signal<Local, Bits<HALF>>; 2],
    /// The picks: the lowest pending entry, and the highest (through the reversed vector),
    /// each half's, then the whole vector's.
    lo_h: [Signal<Local, Bits<HALF>>; 2],
    lo1h: [Signal<Local, Bits<HALF>>; 2],
    rev: [Signal<Local, Bits<HALF>>; 2],
    rlo: [Signal<Local, Bits<HALF>>; 2],
    hi_h: [Signal<Local, Bits<HALF>>; 2],
    hi1h: [Signal<Local, Bits<HALF>>; 2],
    hi2: [Signal<Local, Bits<HALF>>; 2],
    /// The owners' bits, one vector per bit and half (`ob[2k + h]`).
    ob: [Signal<Local, Bits<HALF>>; 8],
    /// Last cycle's picks, pushed now: going back to a block, and which.
    n_cr: Signal<Local, Bits<DRAIN>>,
    n_own0: Signal<Local, Bits<BLOCK_BITS>>,
    n_own1: Signal<Local, Bits<BLOCK_BITS>>,
    /// The entries credited at this edge: those pushed at the last (the broken variant: those
    /// pushed now), whether, and their blocks.
    k_cr: Signal<Local, Bits<DRAIN>>,
    k_own0: Signal<Local, Bits<BLOCK_BITS>>,
    k_own1: Signal<Local, Bits<BLOCK_BITS>>,
    /// The list: its entries read from the banks, its head's bank, its length.
    ent: [Signal<Local, Bits<INDEX_BITS>>; 4],
    hb: Signal<Local, Bits<BANK_BITS>>,
    cnt: Signal<Local, Bits<COUNT_BITS>>,
    list: Signal<Local, Bits<NEED_BITS>>,
    a0: Signal<Local, Bits<INDEX_BITS>>,
    a1: Signal<Local, Bits<INDEX_BITS>>,
    a2: Signal<Local, Bits<INDEX_BITS>>,
    /// The allocation: entries it takes, the count it moves the head by.
    need: Signal<Local, Bits<COUNT_BITS>>,
    take: [Signal<Local, Bits<HALF>>; 2],
    /// Last cycle's picks pushed at the tail (`t0`, `t1`) and credited.
    tl: Signal<Local, Bits<INDEX_BITS>>,
    t1: Signal<Local, Bits<INDEX_BITS>>,
    pushed: Signal<Local, Bits<COUNT_BITS>>,
    /// The quota unclaimed at this edge: all leaving slots, the one picked (one-hot), its quota.
    all: Signal<Local, Bits<MAX_BLOCKS>>,
    ga: [Signal<Local, Bit>; 3],
    gp: [Signal<Local, Bit>; 4],
    r1h: Signal<Local, Bits<MAX_BLOCKS>>,
    retq: Signal<Local, Bits<COUNT_BITS>>,
    /// The block slots' quota bits, one vector per bit.
    qb: [Signal<Local, Bits<MAX_BLOCKS>>; 7],
    pool_n: Signal<Local, Bits<COUNT_BITS>>,
    inc: Signal<Local, Bits<COUNT_BITS>>,
    dec: Signal<Local, Bits<COUNT_BITS>>,
    room_acc: Signal<Local, Bits<ROOM_BITS>>,
    lq: Signal<Local, Bits<NEED_BITS>>,
    hn: Signal<Local, Bits<INDEX_BITS>>,
    /// The head's bank plus one and two; each bank's slot read; the next head's row and the
    /// row after it.
    hb1: Signal<Local, Bits<BANK_BITS>>,
    hb2: Signal<Local, Bits<BANK_BITS>>,
    rs: [Signal<Local, Bits<INDEX_BITS>>; 4],
    hr: Signal<Local, Bits<ROW_BITS>>,
    /// The tail's, the tail plus one's and the next head's bank and row (from bit selects:
    /// rust-hdl simulates a shift or a part select through big integers).
    tl_b: Signal<Local, Bits<BANK_BITS>>,
    tl_r: Signal<Local, Bits<ROW_BITS>>,
    t1_b: Signal<Local, Bits<BANK_BITS>>,
    t1_r: Signal<Local, Bits<ROW_BITS>>,
    hn_b: Signal<Local, Bits<BANK_BITS>>,
    /// Each bank's entry's place after the head, and whether the allocation takes it.
    tpos: [Signal<Local, Bits<BANK_BITS>>; 4],
    tsel: [Signal<Local, Bit>; 4],
    p1: Constant<Bits<BANK_BITS>>,
    hr1: Signal<Local, Bits<ROW_BITS>>,
    /// Last cycle's picks: valid, entry.
    pv0: Signal<Local, Bit>,
    pvn: Signal<Local, Bits<DRAIN>>,
    two_q: Signal<Local, Bit>,
    g_any: [Signal<Local, Bit>; MAX_BLOCKS],
    g_two: [Signal<Local, Bit>; MAX_BLOCKS],
    n_any: [Signal<Local, Bit>; 4],
    n_two: [Signal<Local, Bit>; 4],
    pv1: Signal<Local, Bit>,
    pk0: Signal<Local, Bits<INDEX_BITS>>,
    pk1: Signal<Local, Bits<INDEX_BITS>>,
    three: Constant<Bits<COUNT_BITS>>,
    two: Constant<Bits<COUNT_BITS>>,
    c7one: Constant<Bits<COUNT_BITS>>,
    zero7: Constant<Bits<COUNT_BITS>>,
    /// Entries in use, pending, and credited to a resident block.
    pub valid: [Reg<Bits<HALF>>; 2],
    pub pend: [Reg<Bits<HALF>>; 2],
    pub cred: [Reg<Bits<HALF>>; 2],
    /// Each entry's block slot.
    pub owner: [Reg<Bits<BLOCK_BITS>>; MAX_ENTRIES],
    /// The list: its head, its tail and length (kept XORed with their reset values), the row
    /// each bank reads (the rows of the slots head .. head + 3).
    pub head: Reg<Bits<INDEX_BITS>>,
    pub tail: Reg<Bits<INDEX_BITS>>,
    pub count: Reg<Bits<COUNT_BITS>>,
    pub rrow: [Reg<Bits<ROW_BITS>>; 4],
    /// Unclaimed entries (kept XORed with the entries) and the quota unclaimed at the last
    /// edge (added to them at the next; `pool_free` is their sum), each slot's quota and what
    /// is left of it, the slots whose quota is still to be unclaimed.
    pub pool: Reg<Bits<COUNT_BITS>>,
    pub back: Reg<Bits<COUNT_BITS>>,
    pub quota: [Reg<Bits<COUNT_BITS>>; MAX_BLOCKS],
    pub left: [Reg<Bits<COUNT_BITS>>; MAX_BLOCKS],
    pub ret: Reg<Bits<MAX_BLOCKS>>,
    /// The two entries picked at the last clocked edge (one-hot; the lowest, and the highest
    /// if it is another). Whether one goes back to a block is read from `cred` and `owner` at
    /// the push (a release clears `cred` there as it would have cleared the pick's).
    pub p0h: [Reg<Bits<HALF>>; 2],
    pub p1h: [Reg<Bits<HALF>>; 2],
    /// Whether each is valid (registered with them, so that the push counts them without a
    /// 64-bit OR).
    pub pv: Reg<Bits<DRAIN>>,
    /// The two entries pushed at the last clocked edge that go back to their block at this
    /// one (bits 0, 1), their blocks, and the block slots that left at that edge.
    pub cr: Reg<Bits<DRAIN>>,
    pub cown0: Reg<Bits<BLOCK_BITS>>,
    pub cown1: Reg<Bits<BLOCK_BITS>>,
    pub relq: Reg<Bits<MAX_BLOCKS>>,
    /// The list's four banks: slot 4r + k is bank k's word r.
    pub bank0: LutRam<Bits<INDEX_BITS>, ROW_BITS>,
    pub bank1: LutRam<Bits<INDEX_BITS>, ROW_BITS>,
    pub bank2: LutRam<Bits<INDEX_BITS>, ROW_BITS>,
    pub bank3: LutRam<Bits<INDEX_BITS>, ROW_BITS>,
    /// Evaluate the logic in every pass, not only in those after a change (for the test that
    /// the skipping changes nothing; not hardware).
    pub _always: bool,
    _ran: bool,
    /// Passes in which the logic was skipped (`crate::flat_logic!`; not hardware).
    pub _skips: u64,
}

impl Oplog {
    /// A log of `entries` (1..=64) entries.
    pub fn new(entries: usize, faults: OplogFaults) -> Self {
        assert!((1..=MAX_ENTRIES).contains(&entries), "an operand log of {entries} entries (1..={MAX_ENTRIES})");
        Self {
            clock: Default::default(),
            free: Default::default(),
            alloc: Default::default(),
            alloc_block: Default::default(),
            alloc_need: Default::default(),
            alloc_res: Default::default(),
            claim: Default::default(),
            claim_block: Default::default(),
            claim_n: Default::default(),
            claim_used: Default::default(),
            part_release: Default::default(),
            tick: Default::default(),
            pool_free: Default::default(),
            room: Default::default(),
            list_room: Default::default(),
            alloc_idx0: Default::default(),
            alloc_idx1: Default::default(),
            alloc_idx2: Default::default(),
            busy: Default::default(),
            returning: Default::default(),
            entries: Constant::new((entries as u64).into()),
            tail0: Constant::new((entries as u64 % 64).into()),
            one: Constant::new(1u64.into()),
            drop_second: Constant::new(faults.drop_second),
            early_credit: Constant::new(faults.early_credit),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            blk: std::array::from_fn(|i| Constant::new((i as u64).into())),
            bank: std::array::from_fn(|i| Constant::new((i as u64).into())),
            idbit: std::array::from_fn(|k| Constant::new((0..32u64).filter(|i| i >> k & 1 != 0).fold(0u64, |m, i| m | 1 << i).into())),
            en: Default::default(),
            fr: std::array::from_fn(|_| Default::default()),
            rel_e: std::array::from_fn(|_| Default::default()),
            lo_h: std::array::from_fn(|_| Default::default()),
            lo1h: std::array::from_fn(|_| Default::default()),
            rev: std::array::from_fn(|_| Default::default()),
            rlo: std::array::from_fn(|_| Default::default()),
            hi_h: std::array::from_fn(|_| Default::default()),
            hi1h: std::array::from_fn(|_| Default::default()),
            hi2: std::array::from_fn(|_| Default::default()),
            ob: std::array::from_fn(|_| Default::default()),
            n_cr: Default::default(),
            n_own0: Default::default(),
            n_own1: Default::default(),
            k_cr: Default::default(),
            k_own0: Default::default(),
            k_own1: Default::default(),
            ent: std::array::from_fn(|_| Default::default()),
            hb: Default::default(),
            cnt: Default::default(),
            list: Default::default(),
            a0: Default::default(),
            a1: Default::default(),
            a2: Default::default(),
            need: Default::default(),
            take: std::array::from_fn(|_| Default::default()),
            tl: Default::default(),
            t1: Default::default(),
            pushed: Default::default(),
            all: Default::default(),
            ga: std::array::from_fn(|_| Default::default()),
            gp: std::array::from_fn(|_| Default::default()),
            r1h: Default::default(),
            retq: Default::default(),
            qb: std::array::from_fn(|_| Default::default()),
            pool_n: Default::default(),
            inc: Default::default(),
            dec: Default::default(),
            room_acc: Default::default(),
            lq: Default::default(),
            hn: Default::default(),
            hb1: Default::default(),
            hb2: Default::default(),
            rs: std::array::from_fn(|_| Default::default()),
            hr: Default::default(),
            tl_b: Default::default(),
            tl_r: Default::default(),
            t1_b: Default::default(),
            t1_r: Default::default(),
            hn_b: Default::default(),
            tpos: std::array::from_fn(|_| Default::default()),
            tsel: std::array::from_fn(|_| Default::default()),
            p1: Constant::new(1u64.into()),
            hr1: Default::default(),
            pv0: Default::default(),
            pvn: Default::default(),
            two_q: Default::default(),
            g_any: std::array::from_fn(|_| Default::default()),
            g_two: std::array::from_fn(|_| Default::default()),
            n_any: std::array::from_fn(|_| Default::default()),
            n_two: std::array::from_fn(|_| Default::default()),
            pv1: Default::default(),
            pk0: Default::default(),
            pk1: Default::default(),
            three: Constant::new(3u64.into()),
            two: Constant::new(2u64.into()),
            c7one: Constant::new(1u64.into()),
            zero7: Constant::new(0u64.into()),
            valid: std::array::from_fn(|_| Default::default()),
            pend: std::array::from_fn(|_| Default::default()),
            cred: std::array::from_fn(|_| Default::default()),
            owner: std::array::from_fn(|_| Default::default()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            rrow: std::array::from_fn(|_| Default::default()),
            pool: Default::default(),
            back: Default::default(),
            quota: std::array::from_fn(|_| Default::default()),
            left: std::array::from_fn(|_| Default::default()),
            ret: Default::default(),
            p0h: std::array::from_fn(|_| Default::default()),
            p1h: std::array::from_fn(|_| Default::default()),
            pv: Default::default(),
            cr: Default::default(),
            cown0: Default::default(),
            cown1: Default::default(),
            relq: Default::default(),

            bank0: Default::default(),
            bank1: Default::default(),
            bank2: Default::default(),
            bank3: Default::default(),
            _always: false,
            _ran: false,
            _skips: 0,
        }
    }
}

// The registers and RAMs, once: `flat_block!` writes their clocking (the held registers
// keep their value unless the logic assigns it), the simulation's lists and the block's
// `Logic`.
crate::flat_block!(Oplog {
    inputs: [free, alloc, alloc_block, alloc_need, alloc_res, claim, claim_block, claim_n, claim_used, part_release, tick],
    held: [head, tail, count, pool, back, ret, pv, cr, cown0, cown1, relq],
    held_arrays: [valid, pend, cred, p0h, p1h, owner, rrow, quota, left],
    clocked: [bank0, bank1, bank2, bank3],
    clocked_arrays: [],
    logic: [bookkeeping::Bookkeeping],
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulation's shortcut is in effect: settling at reset and across clock edges, the
    /// logic is skipped in the passes where only the clock changed or nothing it reads did
    /// (a block whose derived `update_all` reached its logic directly would skip none).
    #[test]
    fn the_logic_is_skipped_where_nothing_it_reads_changed() {
        let mut b = Oplog::new(64, OplogFaults::default());
        b.connect_inputs();
        let settle = |b: &mut Oplog| {
            for _ in 0..100 {
                b.update_all();
                if !b.has_changed() {
                    return;
                }
            }
            panic!("no settle");
        };
        settle(&mut b);
        for k in 0..6 {
            b.clock.next = Clock::from(k % 2 == 0);
            settle(&mut b);
        }
        assert!(b._skips >= 4, "{} passes skipped", b._skips);
    }
}
