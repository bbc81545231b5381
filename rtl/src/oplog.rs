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
//! Loop bounds are literal (64 entries, 16 block slots, 4 banks) because rust-hdl's Verilog
//! generator needs them; the widths come from `mpgpu_spec::units::oplog`.

use crate::ram::LutRam;
use crate::reg::{any_q, Reg};
use mpgpu_spec::units::oplog::{BLOCK_BITS, COUNT_BITS, INDEX_BITS, MAX_BLOCKS, MAX_ENTRIES};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_ENTRIES == 64 && MAX_BLOCKS == 16 && INDEX_BITS == 6 && COUNT_BITS == 7 && BLOCK_BITS == 4);

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
    pub free: Signal<In, Bits<64>>,
    /// An instruction of block slot `alloc_block` takes `alloc_need` entries (from the
    /// block's reservation with `alloc_res`).
    pub alloc: Signal<In, Bit>,
    pub alloc_block: Signal<In, Bits<4>>,
    pub alloc_need: Signal<In, Bits<2>>,
    pub alloc_res: Signal<In, Bit>,
    /// Block slot `claim_block` takes a quota of `claim_n` entries, `claim_used` of them
    /// reserved.
    pub claim: Signal<In, Bit>,
    pub claim_block: Signal<In, Bits<4>>,
    pub claim_n: Signal<In, Bits<7>>,
    pub claim_used: Signal<In, Bits<7>>,
    /// Block slots that leave (`release` in the interface; the port is not called that
    /// because `release` is a Verilog keyword).
    pub part_release: Signal<In, Bits<16>>,
    /// Clocks the block while it is busy and nothing else is asked of it.
    pub tick: Signal<In, Bit>,
    /// Unclaimed entries.
    pub pool_free: Signal<Out, Bits<7>>,
    /// Per block slot, the entries it can take, saturated at 3 (2 bits each).
    pub room: Signal<Out, Bits<32>>,
    /// The list's length, saturated at 3.
    pub list_room: Signal<Out, Bits<2>>,
    /// The list's first three entries.
    pub alloc_idx0: Signal<Out, Bits<6>>,
    pub alloc_idx1: Signal<Out, Bits<6>>,
    pub alloc_idx2: Signal<Out, Bits<6>>,
    /// Entries pending or picked, or quotas still to be unclaimed.
    pub busy: Signal<Out, Bit>,
    /// The block slots whose quota is still to be unclaimed.
    pub returning: Signal<Out, Bits<16>>,
    /// The entries the configuration has (reset values of `count` and `pool`, the tail's).
    entries: Constant<Bits<7>>,
    tail0: Constant<Bits<6>>,
    one: Constant<Bits<32>>,
    drop_second: Constant<Bit>,
    early_credit: Constant<Bit>,
    /// Index constants (rust-hdl's generator takes no casts of loop variables).
    ids: [Constant<Bits<6>>; 64],
    blk: [Constant<Bits<4>>; 16],
    bank: [Constant<Bits<2>>; 4],
    /// `idbit[k]`: the entries of a half whose number has bit k set (bit 5 is the half).
    idbit: [Constant<Bits<32>>; 5],
    en: Signal<Local, Bit>,
    /// The entry vectors are kept in halves of 32 (entries 0-31, 32-63): rust-hdl simulates
    /// a vector of more than 32 bits as an array of booleans, many times slower
    /// (`docs/harness.md`, "What rust-hdl's simulator costs").
    /// The entries freed now.
    fr: [Signal<Local, Bits<32>>; 2],
    /// Each entry's block leaves now.
    rel_e: [Signal<Local, Bits<32>>; 2],
    /// The picks: the lowest pending entry, and the highest (through the reversed vector),
    /// each half's, then the whole vector's.
    lo_h: [Signal<Local, Bits<32>>; 2],
    lo1h: [Signal<Local, Bits<32>>; 2],
    rev: [Signal<Local, Bits<32>>; 2],
    rlo: [Signal<Local, Bits<32>>; 2],
    hi_h: [Signal<Local, Bits<32>>; 2],
    hi1h: [Signal<Local, Bits<32>>; 2],
    hi2: [Signal<Local, Bits<32>>; 2],
    /// The owners' bits, one vector per bit and half (`ob[2k + h]`).
    ob: [Signal<Local, Bits<32>>; 8],
    /// Last cycle's picks, pushed now: going back to a block, and which.
    n_cr: Signal<Local, Bits<2>>,
    n_own0: Signal<Local, Bits<4>>,
    n_own1: Signal<Local, Bits<4>>,
    /// The entries credited at this edge: those pushed at the last (the broken variant: those
    /// pushed now), whether, and their blocks.
    k_cr: Signal<Local, Bits<2>>,
    k_own0: Signal<Local, Bits<4>>,
    k_own1: Signal<Local, Bits<4>>,
    /// The list: its entries read from the banks, its head's bank, its length.
    ent: [Signal<Local, Bits<6>>; 4],
    hb: Signal<Local, Bits<2>>,
    cnt: Signal<Local, Bits<7>>,
    list: Signal<Local, Bits<2>>,
    a0: Signal<Local, Bits<6>>,
    a1: Signal<Local, Bits<6>>,
    a2: Signal<Local, Bits<6>>,
    /// The allocation: entries it takes, the count it moves the head by.
    need: Signal<Local, Bits<7>>,
    take: [Signal<Local, Bits<32>>; 2],
    /// Last cycle's picks pushed at the tail (`t0`, `t1`) and credited.
    tl: Signal<Local, Bits<6>>,
    t1: Signal<Local, Bits<6>>,
    pushed: Signal<Local, Bits<7>>,
    /// The quota unclaimed at this edge: all leaving slots, the one picked (one-hot), its quota.
    all: Signal<Local, Bits<16>>,
    ga: [Signal<Local, Bit>; 3],
    gp: [Signal<Local, Bit>; 4],
    r1h: Signal<Local, Bits<16>>,
    retq: Signal<Local, Bits<7>>,
    /// The block slots' quota bits, one vector per bit.
    qb: [Signal<Local, Bits<16>>; 7],
    pool_n: Signal<Local, Bits<7>>,
    inc: Signal<Local, Bits<7>>,
    dec: Signal<Local, Bits<7>>,
    room_acc: Signal<Local, Bits<32>>,
    lq: Signal<Local, Bits<2>>,
    hn: Signal<Local, Bits<6>>,
    /// The head's bank plus one and two; each bank's slot read; the next head's row and the
    /// row after it.
    hb1: Signal<Local, Bits<2>>,
    hb2: Signal<Local, Bits<2>>,
    rs: [Signal<Local, Bits<6>>; 4],
    hr: Signal<Local, Bits<4>>,
    /// The tail's, the tail plus one's and the next head's bank and row (from bit selects:
    /// rust-hdl simulates a shift or a part select through big integers).
    tl_b: Signal<Local, Bits<2>>,
    tl_r: Signal<Local, Bits<4>>,
    t1_b: Signal<Local, Bits<2>>,
    t1_r: Signal<Local, Bits<4>>,
    hn_b: Signal<Local, Bits<2>>,
    /// Each bank's entry's place after the head, and whether the allocation takes it.
    tpos: [Signal<Local, Bits<2>>; 4],
    tsel: [Signal<Local, Bit>; 4],
    p1: Constant<Bits<2>>,
    hr1: Signal<Local, Bits<4>>,
    /// Last cycle's picks: valid, entry.
    pv0: Signal<Local, Bit>,
    pvn: Signal<Local, Bits<2>>,
    two_q: Signal<Local, Bit>,
    g_any: [Signal<Local, Bit>; 16],
    g_two: [Signal<Local, Bit>; 16],
    n_any: [Signal<Local, Bit>; 4],
    n_two: [Signal<Local, Bit>; 4],
    pv1: Signal<Local, Bit>,
    pk0: Signal<Local, Bits<6>>,
    pk1: Signal<Local, Bits<6>>,
    three: Constant<Bits<7>>,
    two: Constant<Bits<7>>,
    c7one: Constant<Bits<7>>,
    zero7: Constant<Bits<7>>,
    /// Entries in use, pending, and credited to a resident block.
    pub valid: [Reg<Bits<32>>; 2],
    pub pend: [Reg<Bits<32>>; 2],
    pub cred: [Reg<Bits<32>>; 2],
    /// Each entry's block slot.
    pub owner: [Reg<Bits<4>>; 64],
    /// The list: its head, its tail and length (kept XORed with their reset values), the row
    /// each bank reads (the rows of the slots head .. head + 3).
    pub head: Reg<Bits<6>>,
    pub tail: Reg<Bits<6>>,
    pub count: Reg<Bits<7>>,
    pub rrow: [Reg<Bits<4>>; 4],
    /// Unclaimed entries (kept XORed with the entries) and the quota unclaimed at the last
    /// edge (added to them at the next; `pool_free` is their sum), each slot's quota and what
    /// is left of it, the slots whose quota is still to be unclaimed.
    pub pool: Reg<Bits<7>>,
    pub back: Reg<Bits<7>>,
    pub quota: [Reg<Bits<7>>; 16],
    pub left: [Reg<Bits<7>>; 16],
    pub ret: Reg<Bits<16>>,
    /// The two entries picked at the last clocked edge (one-hot; the lowest, and the highest
    /// if it is another). Whether one goes back to a block is read from `cred` and `owner` at
    /// the push (a release clears `cred` there as it would have cleared the pick's).
    pub p0h: [Reg<Bits<32>>; 2],
    pub p1h: [Reg<Bits<32>>; 2],
    /// Whether each is valid (registered with them, so that the push counts them without a
    /// 64-bit OR).
    pub pv: Reg<Bits<2>>,
    /// The two entries pushed at the last clocked edge that go back to their block at this
    /// one (bits 0, 1), their blocks, and the block slots that left at that edge.
    pub cr: Reg<Bits<2>>,
    pub cown0: Reg<Bits<4>>,
    pub cown1: Reg<Bits<4>>,
    pub relq: Reg<Bits<16>>,
    /// The list's four banks: slot 4r + k is bank k's word r.
    pub bank0: LutRam<Bits<6>, 4>,
    pub bank1: LutRam<Bits<6>, 4>,
    pub bank2: LutRam<Bits<6>, 4>,
    pub bank3: LutRam<Bits<6>, 4>,
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

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.free.connect();
        self.alloc.connect();
        self.alloc_block.connect();
        self.alloc_need.connect();
        self.alloc_res.connect();
        self.claim.connect();
        self.claim_block.connect();
        self.claim_n.connect();
        self.claim_used.connect();
        self.part_release.connect();
        self.tick.connect();
        self.connect_all();
    }
}

crate::flat_logic!(Oplog);

impl Oplog {
    /// Whether a signal the logic reads, other than the clock, changed in the last pass
    /// (`crate::reg::any_q`).
    pub fn read_changed(&self) -> bool {
        self.free.has_changed()
            || self.alloc.has_changed()
            || self.alloc_block.has_changed()
            || self.alloc_need.has_changed()
            || self.alloc_res.has_changed()
            || self.claim.has_changed()
            || self.claim_block.has_changed()
            || self.claim_n.has_changed()
            || self.claim_used.has_changed()
            || self.part_release.has_changed()
            || self.tick.has_changed()
            || any_q(&self.valid)
            || any_q(&self.pend)
            || any_q(&self.cred)
            || any_q(&self.owner)
            || self.head.q.has_changed()
            || self.tail.q.has_changed()
            || self.count.q.has_changed()
            || any_q(&self.rrow)
            || self.pool.q.has_changed()
            || self.back.q.has_changed()
            || any_q(&self.quota)
            || any_q(&self.left)
            || self.ret.q.has_changed()
            || any_q(&self.p0h)
            || any_q(&self.p1h)
            || self.pv.q.has_changed()
            || self.cr.q.has_changed()
            || self.cown0.q.has_changed()
            || self.cown1.q.has_changed()
            || self.relq.q.has_changed()
            || self.bank0.read_data.has_changed()
            || self.bank1.read_data.has_changed()
            || self.bank2.read_data.has_changed()
            || self.bank3.read_data.has_changed()
    }

    /// The clock to every register and RAM, as `update` drives it.
    fn fan_clock(&mut self) {
        let c = self.clock.val();
        for r in [&mut self.head, &mut self.tail] {
            r.clock.next = c;
        }
        for r in [&mut self.count, &mut self.pool, &mut self.back] {
            r.clock.next = c;
        }
        for r in [&mut self.ret, &mut self.relq] {
            r.clock.next = c;
        }
        for r in [&mut self.pv, &mut self.cr] {
            r.clock.next = c;
        }
        for r in [&mut self.cown0, &mut self.cown1] {
            r.clock.next = c;
        }
        for r in self.valid.iter_mut().chain(&mut self.pend).chain(&mut self.cred).chain(&mut self.p0h).chain(&mut self.p1h) {
            r.clock.next = c;
        }
        for r in &mut self.owner {
            r.clock.next = c;
        }
        for r in &mut self.rrow {
            r.clock.next = c;
        }
        for r in self.quota.iter_mut().chain(&mut self.left) {
            r.clock.next = c;
        }
        for m in [&mut self.bank0, &mut self.bank1, &mut self.bank2, &mut self.bank3] {
            m.clock.next = c;
        }
    }

}

impl Logic for Oplog {
    /// The logic (the block's Verilog). The simulation calls it through the inherent
    /// `update` of `crate::flat_logic!`, only when a signal it reads changed.
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, tail, count, pool, back, ret, pv, cr, cown0, cown1, relq);
        for h in 0..2 {
            self.valid[h].clock.next = self.clock.val();
            self.valid[h].d.next = self.valid[h].q.val();
            self.pend[h].clock.next = self.clock.val();
            self.pend[h].d.next = self.pend[h].q.val();
            self.cred[h].clock.next = self.clock.val();
            self.cred[h].d.next = self.cred[h].q.val();
            self.p0h[h].clock.next = self.clock.val();
            self.p0h[h].d.next = self.p0h[h].q.val();
            self.p1h[h].clock.next = self.clock.val();
            self.p1h[h].d.next = self.p1h[h].q.val();
        }
        for i in 0..64 {
            self.owner[i].clock.next = self.clock.val();
            self.owner[i].d.next = self.owner[i].q.val();
        }
        for k in 0..4 {
            self.rrow[k].clock.next = self.clock.val();
            self.rrow[k].d.next = self.rrow[k].q.val();
        }
        for b in 0..16 {
            self.quota[b].clock.next = self.clock.val();
            self.quota[b].d.next = self.quota[b].q.val();
            self.left[b].clock.next = self.clock.val();
            self.left[b].d.next = self.left[b].q.val();
        }
        self.bank0.clock.next = self.clock.val();
        self.bank1.clock.next = self.clock.val();
        self.bank2.clock.next = self.clock.val();
        self.bank3.clock.next = self.clock.val();
        // Some request this cycle: the state moves.
        self.fr[0].next = self.free.val().get_bits::<32>(0);
        self.fr[1].next = self.free.val().get_bits::<32>(32);
        self.en.next = self.tick.val() | self.alloc.val() | self.claim.val() | self.part_release.val().any() | self.fr[0].val().any() | self.fr[1].val().any();
        // The list's first entries: each bank reads its row; a slot holds its entry XORed with
        // its number (row, bank).
        self.bank0.read_address.next = self.rrow[0].q.val();
        self.bank1.read_address.next = self.rrow[1].q.val();
        self.bank2.read_address.next = self.rrow[2].q.val();
        self.bank3.read_address.next = self.rrow[3].q.val();
        self.rs[0].next = bit_cast::<6, 2>(self.bank[0].val());
        self.rs[1].next = bit_cast::<6, 2>(self.bank[1].val());
        self.rs[2].next = bit_cast::<6, 2>(self.bank[2].val());
        self.rs[3].next = bit_cast::<6, 2>(self.bank[3].val());
        for j in 0..4 {
            for k in 0..4 {
                self.rs[j].next = self.rs[j].val().replace_bit(k + 2, self.rrow[j].q.val().get_bit(k));
            }
        }
        self.ent[0].next = self.bank0.read_data.val() ^ self.rs[0].val();
        self.ent[1].next = self.bank1.read_data.val() ^ self.rs[1].val();
        self.ent[2].next = self.bank2.read_data.val() ^ self.rs[2].val();
        self.ent[3].next = self.bank3.read_data.val() ^ self.rs[3].val();
        self.hb.next = bit_cast::<2, 6>(self.head.q.val());
        self.hb1.next = self.hb.val() + 1;
        self.hb2.next = self.hb.val() + 2;
        self.a0.next = self.ent[0].val();
        self.a1.next = self.ent[0].val();
        self.a2.next = self.ent[0].val();
        for k in 0..4 {
            if self.hb.val() == self.bank[k].val() {
                self.a0.next = self.ent[k].val();
            }
            if self.hb1.val() == self.bank[k].val() {
                self.a1.next = self.ent[k].val();
            }
            if self.hb2.val() == self.bank[k].val() {
                self.a2.next = self.ent[k].val();
            }
        }
        self.cnt.next = self.count.q.val() ^ self.entries.val();
        self.list.next = 3.into();
        if self.cnt.val() < self.three.val() {
            self.list.next = bit_cast::<2, 7>(self.cnt.val());
        }
        self.alloc_idx0.next = 0.into();
        self.alloc_idx1.next = 0.into();
        self.alloc_idx2.next = 0.into();
        if self.cnt.val() > self.zero7.val() {
            self.alloc_idx0.next = self.a0.val();
        }
        if self.cnt.val() > self.c7one.val() {
            self.alloc_idx1.next = self.a1.val();
        }
        if self.cnt.val() > self.two.val() {
            self.alloc_idx2.next = self.a2.val();
        }
        self.list_room.next = self.list.val();
        // What each block slot can take: its quota left, saturated at 3, at most the list's length.
        self.room_acc.next = 0.into();
        for b in 0..16 {
            self.lq.next = 3.into();
            if self.left[b].q.val() < self.three.val() {
                self.lq.next = 0.into();
                self.lq.next = self.lq.val().replace_bit(0, self.left[b].q.val().get_bit(0));
                self.lq.next = self.lq.val().replace_bit(1, self.left[b].q.val().get_bit(1));
            }
            if self.list.val() < self.lq.val() {
                self.lq.next = self.list.val();
            }
            self.room_acc.next = self.room_acc.val().replace_bit(2 * b, self.lq.val().get_bit(0));
            self.room_acc.next = self.room_acc.val().replace_bit(2 * b + 1, self.lq.val().get_bit(1));
        }
        self.room.next = self.room_acc.val();
        self.pool_free.next = (self.pool.q.val() ^ self.entries.val()) + self.back.q.val();
        self.returning.next = self.ret.q.val();
        self.busy.next = self.ret.q.val().any() | self.pend[0].q.val().any() | self.pend[1].q.val().any() | self.pv.q.val().any() | self.cr.q.val().any();
        // Each entry's block leaves now: the release bit its slot selects (zero when no slot
        // leaves, which the simulation skips).
        for h in 0..2 {
            self.rel_e[h].next = 0.into();
            if self.part_release.val().any() {
                for i in 0..32 {
                    self.rel_e[h].next = self.rel_e[h].val().replace_bit(i, self.part_release.val().get_bit(self.owner[32 * h + i].q.val().index()));
                }
            }
        }
        // The picks: the lowest pending entry, and the highest (the lowest of the reversed),
        // in each half, then the low half's lowest and the high half's highest first.
        // (the reversals are wiring; the simulation skips them for an empty half)
        for h in 0..2 {
            self.lo_h[h].next = self.pend[h].q.val() & (!self.pend[h].q.val() + self.one.val());
            self.rev[h].next = 0.into();
            self.rlo[h].next = 0.into();
            self.hi_h[h].next = 0.into();
            if self.pend[h].q.val().any() {
                for i in 0..32 {
                    self.rev[h].next = self.rev[h].val().replace_bit(31 - i, self.pend[h].q.val().get_bit(i));
                }
                self.rlo[h].next = self.rev[h].val() & (!self.rev[h].val() + self.one.val());
                for i in 0..32 {
                    self.hi_h[h].next = self.hi_h[h].val().replace_bit(31 - i, self.rlo[h].val().get_bit(i));
                }
            }
        }
        self.lo1h[0].next = self.lo_h[0].val();
        self.lo1h[1].next = self.lo_h[1].val();
        if self.pend[0].q.val().any() {
            self.lo1h[1].next = 0.into();
        }
        self.hi1h[0].next = self.hi_h[0].val();
        self.hi1h[1].next = self.hi_h[1].val();
        if self.pend[1].q.val().any() {
            self.hi1h[0].next = 0.into();
        }
        // (the second pick, the highest unless it is the lowest, written per half so that a
        // half's emptiness and the carry chains meet in one LUT)
        self.hi2[0].next = self.hi_h[0].val() & !self.lo_h[0].val();
        self.hi2[1].next = self.hi_h[1].val() & !self.lo_h[1].val();
        if self.pend[1].q.val().any() {
            self.hi2[0].next = 0.into();
        }
        if self.pend[0].q.val().any() {
            self.hi2[1].next = self.hi_h[1].val();
        }
        // (whether two or more are pending, from a tree beside the carry chains: 4-entry
        // groups, then groups of four groups)
        for h in 0..2 {
            for j in 0..8 {
                self.g_any[8 * h + j].next = self.pend[h].q.val().get_bit(4 * j) | self.pend[h].q.val().get_bit(4 * j + 1) | self.pend[h].q.val().get_bit(4 * j + 2) | self.pend[h].q.val().get_bit(4 * j + 3);
                self.g_two[8 * h + j].next = (self.pend[h].q.val().get_bit(4 * j) & (self.pend[h].q.val().get_bit(4 * j + 1) | self.pend[h].q.val().get_bit(4 * j + 2) | self.pend[h].q.val().get_bit(4 * j + 3)))
                    | (self.pend[h].q.val().get_bit(4 * j + 1) & (self.pend[h].q.val().get_bit(4 * j + 2) | self.pend[h].q.val().get_bit(4 * j + 3)))
                    | (self.pend[h].q.val().get_bit(4 * j + 2) & self.pend[h].q.val().get_bit(4 * j + 3));
            }
        }
        for j in 0..4 {
            self.n_any[j].next = self.g_any[4 * j].val() | self.g_any[4 * j + 1].val() | self.g_any[4 * j + 2].val() | self.g_any[4 * j + 3].val();
            self.n_two[j].next = self.g_two[4 * j].val()
                | self.g_two[4 * j + 1].val()
                | self.g_two[4 * j + 2].val()
                | self.g_two[4 * j + 3].val()
                | (self.g_any[4 * j].val() & (self.g_any[4 * j + 1].val() | self.g_any[4 * j + 2].val() | self.g_any[4 * j + 3].val()))
                | (self.g_any[4 * j + 1].val() & (self.g_any[4 * j + 2].val() | self.g_any[4 * j + 3].val()))
                | (self.g_any[4 * j + 2].val() & self.g_any[4 * j + 3].val());
        }
        self.two_q.next = self.n_two[0].val()
            | self.n_two[1].val()
            | self.n_two[2].val()
            | self.n_two[3].val()
            | (self.n_any[0].val() & (self.n_any[1].val() | self.n_any[2].val() | self.n_any[3].val()))
            | (self.n_any[1].val() & (self.n_any[2].val() | self.n_any[3].val()))
            | (self.n_any[2].val() & self.n_any[3].val());
        // The allocation: the list's first `alloc_need` entries.
        self.need.next = 0.into();
        if self.alloc.val() {
            self.need.next = bit_cast::<7, 2>(self.alloc_need.val());
        }
        // (per bank: whether the allocation takes its entry, the entry's place after the head
        // being below the need; then each bank's entry decoded, without the head's multiplexer)
        for k in 0..4 {
            self.tpos[k].next = self.bank[k].val() - self.hb.val();
            self.tsel[k].next = self.alloc.val() & (self.tpos[k].val() < self.alloc_need.val());
            if self.drop_second.val() & (self.need.val() == self.two.val()) & (self.tpos[k].val() == self.p1.val()) {
                self.tsel[k].next = false;
            }
        }
        // (zero without an allocation: every `tsel` is low; the simulation skips the decode)
        for h in 0..2 {
            self.take[h].next = 0.into();
            if self.alloc.val() {
                for i in 0..32 {
                    self.take[h].next = self.take[h].val().replace_bit(
                        i,
                        (self.tsel[0].val() & (self.ent[0].val() == self.ids[32 * h + i].val()))
                            | (self.tsel[1].val() & (self.ent[1].val() == self.ids[32 * h + i].val()))
                            | (self.tsel[2].val() & (self.ent[2].val() == self.ids[32 * h + i].val()))
                            | (self.tsel[3].val() & (self.ent[3].val() == self.ids[32 * h + i].val())),
                    );
                }
            }
        }
        // Last cycle's picks: pushed at the tail, credited to their block if it stays.
        self.tl.next = self.tail.q.val() ^ self.tail0.val();
        self.t1.next = self.tl.val() + 1;
        self.tl_b.next = bit_cast::<2, 6>(self.tl.val());
        self.t1_b.next = bit_cast::<2, 6>(self.t1.val());
        self.tl_r.next = 0.into();
        self.t1_r.next = 0.into();
        for k in 0..4 {
            self.tl_r.next = self.tl_r.val().replace_bit(k, self.tl.val().get_bit(k + 2));
            self.t1_r.next = self.t1_r.val().replace_bit(k, self.t1.val().get_bit(k + 2));
        }
        self.pv0.next = self.pv.q.val().get_bit(0);
        self.pv1.next = self.pv.q.val().get_bit(1);
        // (the picks' numbers, and below whether they go back to a block and which: zero
        // without a pick, which the simulation skips)
        self.pk0.next = 0.into();
        self.pk1.next = 0.into();
        self.n_cr.next = 0.into();
        self.n_own0.next = 0.into();
        self.n_own1.next = 0.into();
        for j in 0..8 {
            self.ob[j].next = 0.into();
        }
        if self.pv.q.val().any() {
            // (the owners' bits as vectors)
            for h in 0..2 {
                for i in 0..32 {
                    for k in 0..4 {
                        self.ob[2 * k + h].next = self.ob[2 * k + h].val().replace_bit(i, self.owner[32 * h + i].q.val().get_bit(k));
                    }
                }
            }
            for k in 0..5 {
                self.pk0.next = self.pk0.val().replace_bit(k, ((self.p0h[0].q.val() | self.p0h[1].q.val()) & self.idbit[k].val()).any());
                self.pk1.next = self.pk1.val().replace_bit(k, ((self.p1h[0].q.val() | self.p1h[1].q.val()) & self.idbit[k].val()).any());
            }
            self.pk0.next = self.pk0.val().replace_bit(5, self.p0h[1].q.val().any());
            self.pk1.next = self.pk1.val().replace_bit(5, self.p1h[1].q.val().any());
            // (AND-ORs of the one-hot picks)
            self.n_cr.next = self.n_cr.val().replace_bit(0, ((self.p0h[0].q.val() & self.cred[0].q.val()) | (self.p0h[1].q.val() & self.cred[1].q.val())).any());
            self.n_cr.next = self.n_cr.val().replace_bit(1, ((self.p1h[0].q.val() & self.cred[0].q.val()) | (self.p1h[1].q.val() & self.cred[1].q.val())).any());
            for k in 0..4 {
                self.n_own0.next = self.n_own0.val().replace_bit(k, ((self.p0h[0].q.val() & self.ob[2 * k].val()) | (self.p0h[1].q.val() & self.ob[2 * k + 1].val())).any());
                self.n_own1.next = self.n_own1.val().replace_bit(k, ((self.p1h[0].q.val() & self.ob[2 * k].val()) | (self.p1h[1].q.val() & self.ob[2 * k + 1].val())).any());
            }
        }
        self.pushed.next = 0.into();
        if self.pv0.val() {
            self.pushed.next = 1.into();
        }
        if self.pv1.val() {
            self.pushed.next = 2.into();
        }
        self.k_cr.next = self.cr.q.val();
        self.k_own0.next = self.cown0.q.val();
        self.k_own1.next = self.cown1.q.val();
        if self.early_credit.val() {
            self.k_cr.next = self.n_cr.val();
            self.k_own0.next = self.n_own0.val();
            self.k_own1.next = self.n_own1.val();
        }
        self.bank0.write_enable.next = false;
        self.bank1.write_enable.next = false;
        self.bank2.write_enable.next = false;
        self.bank3.write_enable.next = false;
        self.bank0.write_address.next = self.tl_r.val();
        self.bank1.write_address.next = self.tl_r.val();
        self.bank2.write_address.next = self.tl_r.val();
        self.bank3.write_address.next = self.tl_r.val();
        self.bank0.write_data.next = self.pk0.val() ^ self.tl.val();
        self.bank1.write_data.next = self.pk0.val() ^ self.tl.val();
        self.bank2.write_data.next = self.pk0.val() ^ self.tl.val();
        self.bank3.write_data.next = self.pk0.val() ^ self.tl.val();
        if self.en.val() & self.pv0.val() {
            if self.tl_b.val() == 0 {
                self.bank0.write_enable.next = true;
            }
            if self.tl_b.val() == 1 {
                self.bank1.write_enable.next = true;
            }
            if self.tl_b.val() == 2 {
                self.bank2.write_enable.next = true;
            }
            if self.tl_b.val() == 3 {
                self.bank3.write_enable.next = true;
            }
        }
        if self.en.val() & self.pv1.val() {
            if self.t1_b.val() == 0 {
                self.bank0.write_enable.next = true;
                self.bank0.write_address.next = self.t1_r.val();
                self.bank0.write_data.next = self.pk1.val() ^ self.t1.val();
            }
            if self.t1_b.val() == 1 {
                self.bank1.write_enable.next = true;
                self.bank1.write_address.next = self.t1_r.val();
                self.bank1.write_data.next = self.pk1.val() ^ self.t1.val();
            }
            if self.t1_b.val() == 2 {
                self.bank2.write_enable.next = true;
                self.bank2.write_address.next = self.t1_r.val();
                self.bank2.write_data.next = self.pk1.val() ^ self.t1.val();
            }
            if self.t1_b.val() == 3 {
                self.bank3.write_enable.next = true;
                self.bank3.write_address.next = self.t1_r.val();
                self.bank3.write_data.next = self.pk1.val() ^ self.t1.val();
            }
        }
        // One returning quota is unclaimed at this edge, the lowest slot's (slots leaving now
        // join them; a claim is never into either).
        self.all.next = self.ret.q.val();
        // (the lowest: a two-level priority over groups of four, no carry chain)
        for j in 0..3 {
            self.ga[j].next = self.all.val().get_bit(4 * j) | self.all.val().get_bit(4 * j + 1) | self.all.val().get_bit(4 * j + 2) | self.all.val().get_bit(4 * j + 3);
        }
        self.gp[0].next = false;
        self.gp[1].next = self.ga[0].val();
        self.gp[2].next = self.ga[0].val() | self.ga[1].val();
        self.gp[3].next = self.ga[0].val() | self.ga[1].val() | self.ga[2].val();
        self.r1h.next = 0.into();
        for j in 0..4 {
            self.r1h.next = self.r1h.val().replace_bit(4 * j, self.all.val().get_bit(4 * j) & !self.gp[j].val());
            self.r1h.next = self.r1h.val().replace_bit(4 * j + 1, self.all.val().get_bit(4 * j + 1) & !self.all.val().get_bit(4 * j) & !self.gp[j].val());
            self.r1h.next =
                self.r1h.val().replace_bit(4 * j + 2, self.all.val().get_bit(4 * j + 2) & !self.all.val().get_bit(4 * j + 1) & !self.all.val().get_bit(4 * j) & !self.gp[j].val());
            self.r1h.next = self.r1h.val().replace_bit(
                4 * j + 3,
                self.all.val().get_bit(4 * j + 3) & !self.all.val().get_bit(4 * j + 2) & !self.all.val().get_bit(4 * j + 1) & !self.all.val().get_bit(4 * j) & !self.gp[j].val(),
            );
        }
        // (its quota, from the slot's one-hot: an AND-OR per bit)
        // (zero when no quota returns; the simulation skips it then)
        for k in 0..7 {
            self.qb[k].next = 0.into();
        }
        self.retq.next = 0.into();
        if self.all.val().any() {
            for b in 0..16 {
                for k in 0..7 {
                    self.qb[k].next = self.qb[k].val().replace_bit(b, self.quota[b].q.val().get_bit(k));
                }
            }
            for k in 0..7 {
                self.retq.next = self.retq.val().replace_bit(k, (self.r1h.val() & self.qb[k].val()).any());
            }
        }
        self.pool_n.next = (self.pool.q.val() ^ self.entries.val()) + self.back.q.val();
        if self.claim.val() {
            self.pool_n.next = (self.pool.q.val() ^ self.entries.val()) + self.back.q.val() - self.claim_n.val();
        }
        // The list's head moves by the allocation; each bank's row follows it.
        self.hn.next = self.head.q.val() + bit_cast::<6, 2>(self.alloc_need.val());
        if !self.alloc.val() {
            self.hn.next = self.head.q.val();
        }
        // The edge (held below when nothing is asked).
        for h in 0..2 {
            self.valid[h].d.next = (self.valid[h].q.val() & !self.fr[h].val() & !self.rel_e[h].val()) | self.take[h].val();
            self.pend[h].d.next = (self.pend[h].q.val() & !self.lo1h[h].val() & !self.hi1h[h].val()) | (self.valid[h].q.val() & (self.fr[h].val() | self.rel_e[h].val()));
            self.cred[h].d.next = (self.cred[h].q.val() & !self.rel_e[h].val()) | self.take[h].val();
            for i in 0..32 {
                if self.take[h].val().get_bit(i) {
                    self.owner[32 * h + i].d.next = self.alloc_block.val();
                }
            }
            self.p0h[h].d.next = self.lo1h[h].val();
            self.p1h[h].d.next = self.hi2[h].val();
        }
        self.pvn.next = 0.into();
        self.pvn.next = self.pvn.val().replace_bit(0, self.pend[0].q.val().any() | self.pend[1].q.val().any());
        self.pvn.next = self.pvn.val().replace_bit(1, self.two_q.val());
        self.pv.d.next = self.pvn.val();
        self.cr.d.next = self.n_cr.val();
        self.cown0.d.next = self.n_own0.val();
        self.cown1.d.next = self.n_own1.val();
        self.relq.d.next = self.part_release.val();
        self.head.d.next = self.hn.val();
        // (bank k holds the list's slot head + ((k - head) mod 4): in the head's row, or the
        // next row for the banks below the head's)
        self.hn_b.next = bit_cast::<2, 6>(self.hn.val());
        self.hr.next = 0.into();
        for k in 0..4 {
            self.hr.next = self.hr.val().replace_bit(k, self.hn.val().get_bit(k + 2));
        }
        self.hr1.next = self.hr.val() + 1;
        for k in 0..4 {
            self.rrow[k].d.next = self.hr.val();
        }
        for k in 1..3 {
            if self.bank[k].val() < self.hn_b.val() {
                self.rrow[k].d.next = self.hr1.val();
            }
        }
        if self.hn_b.val().any() {
            self.rrow[0].d.next = self.hr1.val();
        }
        self.tail.d.next = (self.tl.val() + bit_cast::<6, 7>(self.pushed.val())) ^ self.tail0.val();
        self.count.d.next = (self.cnt.val() - self.need.val() + self.pushed.val()) ^ self.entries.val();
        self.pool.d.next = self.pool_n.val() ^ self.entries.val();
        self.back.d.next = self.retq.val();
        self.ret.d.next = (self.all.val() & !self.r1h.val()) | self.part_release.val();
        for b in 0..16 {
            self.inc.next = 0.into();
            if self.k_cr.val().get_bit(0) & (self.k_own0.val() == self.blk[b].val()) & !self.relq.q.val().get_bit(b) {
                self.inc.next = 1.into();
            }
            if self.k_cr.val().get_bit(1) & (self.k_own1.val() == self.blk[b].val()) & !self.relq.q.val().get_bit(b) {
                self.inc.next = self.inc.val() + 1;
            }
            self.dec.next = 0.into();
            if self.alloc.val() & !self.alloc_res.val() & (self.alloc_block.val() == self.blk[b].val()) {
                self.dec.next = self.need.val();
            }
            self.left[b].d.next = self.left[b].q.val() + self.inc.val() - self.dec.val();
            if self.part_release.val().get_bit(b) | self.r1h.val().get_bit(b) {
                self.left[b].d.next = 0.into();
            }
            if self.r1h.val().get_bit(b) {
                self.quota[b].d.next = 0.into();
            }
            if self.claim.val() & (self.claim_block.val() == self.blk[b].val()) {
                self.quota[b].d.next = self.claim_n.val();
                self.left[b].d.next = self.claim_n.val() - self.claim_used.val();
            }
        }
        if !self.en.val() {
            for h in 0..2 {
                self.valid[h].d.next = self.valid[h].q.val();
                self.pend[h].d.next = self.pend[h].q.val();
                self.cred[h].d.next = self.cred[h].q.val();
                self.p0h[h].d.next = self.p0h[h].q.val();
                self.p1h[h].d.next = self.p1h[h].q.val();
            }
            self.head.d.next = self.head.q.val();
            self.tail.d.next = self.tail.q.val();
            self.count.d.next = self.count.q.val();
            self.pool.d.next = self.pool.q.val();
            self.back.d.next = self.back.q.val();
            self.ret.d.next = self.ret.q.val();
            self.pv.d.next = self.pv.q.val();
            self.cr.d.next = self.cr.q.val();
            self.cown0.d.next = self.cown0.q.val();
            self.cown1.d.next = self.cown1.q.val();
            self.relq.d.next = self.relq.q.val();
            for i in 0..64 {
                self.owner[i].d.next = self.owner[i].q.val();
            }
            for k in 0..4 {
                self.rrow[k].d.next = self.rrow[k].q.val();
            }
            for b in 0..16 {
                self.quota[b].d.next = self.quota[b].q.val();
                self.left[b].d.next = self.left[b].q.val();
            }
        }
    }
}

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
