//! `Oplog`'s logic: the list's first entries read, the allocation, the claim and the release
//! of a block's quota, the picks of the freed entries and their push onto the list.

use super::{Oplog, BANK_BITS, HALF};
use mpgpu_spec::units::oplog::{COUNT_BITS, INDEX_BITS, MAX_BLOCKS, MAX_ENTRIES, NEED_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// The whole logic, one part.
pub struct Bookkeeping;

impl LogicPart<Bookkeeping> for Oplog {
    #[hdl_gen]
    fn update(&mut self) {
        // Some request this cycle: the state moves.
        self.fr[0].next = self.free.val().get_bits::<HALF>(0);
        self.fr[1].next = self.free.val().get_bits::<HALF>(32);
        self.en.next = self.tick.val() | self.alloc.val() | self.claim.val() | self.part_release.val().any() | self.fr[0].val().any() | self.fr[1].val().any();
        // The list's first entries: each bank reads its row; a slot holds its entry XORed with
        // its number (row, bank).
        self.bank0.read_address.next = self.rrow[0].q.val();
        self.bank1.read_address.next = self.rrow[1].q.val();
        self.bank2.read_address.next = self.rrow[2].q.val();
        self.bank3.read_address.next = self.rrow[3].q.val();
        self.rs[0].next = bit_cast::<INDEX_BITS, BANK_BITS>(self.bank[0].val());
        self.rs[1].next = bit_cast::<INDEX_BITS, BANK_BITS>(self.bank[1].val());
        self.rs[2].next = bit_cast::<INDEX_BITS, BANK_BITS>(self.bank[2].val());
        self.rs[3].next = bit_cast::<INDEX_BITS, BANK_BITS>(self.bank[3].val());
        for j in 0..4 {
            for k in 0..4 {
                self.rs[j].next = self.rs[j].val().replace_bit(k + 2, self.rrow[j].q.val().get_bit(k));
            }
        }
        self.ent[0].next = self.bank0.read_data.val() ^ self.rs[0].val();
        self.ent[1].next = self.bank1.read_data.val() ^ self.rs[1].val();
        self.ent[2].next = self.bank2.read_data.val() ^ self.rs[2].val();
        self.ent[3].next = self.bank3.read_data.val() ^ self.rs[3].val();
        self.hb.next = bit_cast::<BANK_BITS, INDEX_BITS>(self.head.q.val());
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
            self.list.next = bit_cast::<NEED_BITS, COUNT_BITS>(self.cnt.val());
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
        for b in 0..MAX_BLOCKS {
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
            self.need.next = bit_cast::<COUNT_BITS, NEED_BITS>(self.alloc_need.val());
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
        self.tl_b.next = bit_cast::<BANK_BITS, INDEX_BITS>(self.tl.val());
        self.t1_b.next = bit_cast::<BANK_BITS, INDEX_BITS>(self.t1.val());
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
            for b in 0..MAX_BLOCKS {
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
        self.hn.next = self.head.q.val() + bit_cast::<INDEX_BITS, NEED_BITS>(self.alloc_need.val());
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
        self.hn_b.next = bit_cast::<BANK_BITS, INDEX_BITS>(self.hn.val());
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
        self.tail.d.next = (self.tl.val() + bit_cast::<INDEX_BITS, COUNT_BITS>(self.pushed.val())) ^ self.tail0.val();
        self.count.d.next = (self.cnt.val() - self.need.val() + self.pushed.val()) ^ self.entries.val();
        self.pool.d.next = self.pool_n.val() ^ self.entries.val();
        self.back.d.next = self.retq.val();
        self.ret.d.next = (self.all.val() & !self.r1h.val()) | self.part_release.val();
        for b in 0..MAX_BLOCKS {
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
            for i in 0..MAX_ENTRIES {
                self.owner[i].d.next = self.owner[i].q.val();
            }
            for k in 0..4 {
                self.rrow[k].d.next = self.rrow[k].q.val();
            }
            for b in 0..MAX_BLOCKS {
                self.quota[b].d.next = self.quota[b].q.val();
                self.left[b].d.next = self.left[b].q.val();
            }
        }
    }
}
