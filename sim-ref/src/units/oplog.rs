//! The operand log's bookkeeping as a unit (interface and timing `mpgpu_spec::units::oplog`,
//! RTL `rtl/src/oplog/`): per-block quotas, one free list of entries, freed entries coming
//! back through a pending set two per clocked cycle. The SM asks it for room and entries and
//! tells it what was freed; the log's data array stays in the SM (docs/faults.md O10, O11, "The
//! operand log in RTL").

use mpgpu_spec::units::oplog::{In, Out, State, MAX_BLOCKS, MAX_ENTRIES, MAX_NEED};
use mpgpu_spec::Unit;

/// Slots of the free list (a ring).
const SLOTS: usize = MAX_ENTRIES;
/// Counts and quotas are kept in 7 bits, as in the RTL.
const MASK7: u8 = 0x7f;

/// The bookkeeping of one SM's operand log.
#[derive(Clone, Debug)]
pub struct Oplog {
    /// The entries the configuration has (the lowest `entries` of [`MAX_ENTRIES`]).
    entries: u8,
    valid: u64,
    pend: u64,
    cred: u64,
    owner: [u8; MAX_ENTRIES],
    slot: [u8; SLOTS],
    head: u8,
    count: u8,
    pool: u8,
    back: u8,
    quota: [u8; MAX_BLOCKS],
    left: [u8; MAX_BLOCKS],
    ret: u16,
    pick_v: [bool; 2],
    pick: [u8; 2],
    cr: [bool; 2],
    cown: [u8; 2],
    relq: u16,
}

impl Oplog {
    /// A log of `entries` entries (at most [`MAX_ENTRIES`]).
    pub fn new(entries: u32) -> Oplog {
        assert!(entries as usize <= MAX_ENTRIES, "an operand log of {entries} entries (at most {MAX_ENTRIES})");
        Oplog::fresh(entries as u8)
    }

    /// The log at reset: no quota claimed, every entry on the free list.
    fn fresh(e: u8) -> Oplog {
        Oplog {
            entries: e,
            valid: 0,
            pend: 0,
            cred: 0,
            owner: [0; MAX_ENTRIES],
            // (every entry on the list, in order: the RTL's list RAM starts at zero and holds
            // each entry XORed with its slot)
            slot: std::array::from_fn(|s| s as u8),
            head: 0,
            count: e,
            pool: e,
            back: 0,
            quota: [0; MAX_BLOCKS],
            left: [0; MAX_BLOCKS],
            ret: 0,
            pick_v: [false; 2],
            pick: [0; 2],
            cr: [false; 2],
            cown: [0; 2],
            relq: 0,
        }
    }

    pub fn state(&self) -> State {
        State {
            valid: self.valid,
            pend: self.pend,
            cred: self.cred,
            owner: self.owner.to_vec(),
            slot: self.slot.to_vec(),
            head: self.head,
            count: self.count,
            pool: self.pool,
            back: self.back,
            quota: self.quota.to_vec(),
            left: self.left.to_vec(),
            ret: self.ret,
            pick_v: self.pick_v.to_vec(),
            pick: self.pick.to_vec(),
            cr: self.cr.to_vec(),
            cown: self.cown.to_vec(),
            relq: self.relq,
        }
    }
}

impl Unit for Oplog {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Oplog::fresh(self.entries);
    }

    fn outputs(&self, _: &In) -> Out {
        let list = self.count.min(3);
        let mut room = 0u32;
        for b in 0..MAX_BLOCKS {
            room |= (self.left[b].min(list) as u32) << (2 * b);
        }
        let mut alloc_idx = [0u8; MAX_NEED];
        for (j, a) in alloc_idx.iter_mut().enumerate() {
            if (j as u8) < self.count {
                *a = self.slot[(self.head as usize + j) % SLOTS];
            }
        }
        let busy = self.ret != 0 || self.pend != 0 || self.pick_v[0] || self.pick_v[1] || self.cr[0] || self.cr[1];
        Out { pool_free: self.pool.wrapping_add(self.back) & MASK7, room, list_room: list, alloc_idx, busy, returning: self.ret }
    }

    fn clock(&mut self, i: &In) {
        if *i == In::default() {
            return;
        }
        let old = self.clone();
        let released = |b: u8| i.release >> (b as usize % MAX_BLOCKS) & 1 != 0;
        // The entries of blocks leaving now.
        let mut relent = 0u64;
        for e in 0..MAX_ENTRIES {
            if released(old.owner[e]) {
                relent |= 1 << e;
            }
        }
        // The entries pushed at the last edge go back to their block's quota (not if the block
        // left at that edge; one leaving now has its quota emptied below).
        let mut inc = [0u8; MAX_BLOCKS];
        for p in 0..2 {
            if old.cr[p] && old.relq >> (old.cown[p] as usize % MAX_BLOCKS) & 1 == 0 {
                inc[old.cown[p] as usize % MAX_BLOCKS] += 1;
            }
        }
        // Last cycle's picks go onto the list; those of a resident block are to be credited.
        let mut pushed = 0u8;
        for p in 0..2 {
            let e = old.pick[p] as usize;
            self.cr[p] = old.pick_v[p] && old.cred >> e & 1 != 0;
            self.cown[p] = if old.pick_v[p] { old.owner[e] } else { 0 };
            if old.pick_v[p] {
                self.slot[(old.head as usize + old.count as usize + pushed as usize) % SLOTS] = old.pick[p];
                pushed += 1;
            }
        }
        self.relq = i.release;
        // This cycle's picks: the lowest and the highest pending entry.
        let lo = old.pend.trailing_zeros() as u8;
        // (no pending entry: no pick, and `hi` is not used)
        let hi = (63 - old.pend.leading_zeros().min(63)) as u8;
        self.pick_v = [old.pend != 0, old.pend.count_ones() >= 2];
        self.pick = [if self.pick_v[0] { lo } else { 0 }, if self.pick_v[1] { hi } else { 0 }];
        let mut picked = 0u64;
        for p in 0..2 {
            if self.pick_v[p] {
                picked |= 1 << self.pick[p];
            }
        }
        // The allocation: the list's first `alloc_need` entries.
        let mut take = 0u64;
        let need = if i.alloc { i.alloc_need.min(MAX_NEED as u8) } else { 0 };
        let ab = i.alloc_block as usize % MAX_BLOCKS;
        for j in 0..need {
            let e = old.slot[(old.head as usize + j as usize) % SLOTS] as usize % MAX_ENTRIES;
            take |= 1 << e;
            self.owner[e] = ab as u8;
        }
        let mut dec = [0u8; MAX_BLOCKS];
        if !i.alloc_res {
            dec[ab] = need;
        }
        // Frees and leaving blocks' entries become pending.
        let f = i.free & old.valid;
        let moved = old.valid & relent;
        self.valid = (old.valid & !f & !moved) | take;
        self.pend = (old.pend & !picked) | f | moved;
        self.cred = (old.cred & !relent) | take;
        // One returning quota is unclaimed at this edge, the lowest slot's; those leaving now
        // join them. (A claim is never into either: the SM's rule.)
        let cb = i.claim_block as usize % MAX_BLOCKS;
        let r = if old.ret != 0 { Some(old.ret.trailing_zeros() as usize) } else { None };
        let mut pool = old.pool.wrapping_add(old.back);
        self.back = r.map_or(0, |r| old.quota[r]);
        self.ret = (old.ret & !r.map_or(0, |r| 1u16 << r)) | i.release;
        for b in 0..MAX_BLOCKS {
            if i.claim && cb == b {
                self.quota[b] = i.claim_n & MASK7;
                self.left[b] = i.claim_n.wrapping_sub(i.claim_used) & MASK7;
            } else {
                if r == Some(b) {
                    self.quota[b] = 0;
                }
                self.left[b] = if released(b as u8) || r == Some(b) { 0 } else { old.left[b].wrapping_add(inc[b]).wrapping_sub(dec[b]) & MASK7 };
            }
        }
        if i.claim {
            pool = pool.wrapping_sub(i.claim_n);
        }
        self.pool = pool & MASK7;
        self.head = (old.head + need) % SLOTS as u8;
        self.count = old.count.wrapping_sub(need).wrapping_add(pushed) & MASK7;
    }
}

impl crate::slots::Hosted for Oplog {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list, the quotas and the unclaimed count add up, every cycle of a random run that
    /// keeps to the interface's rules.
    #[test]
    fn quotas_never_promise_more_than_the_list_holds() {
        let mut o = Oplog::new(40);
        let mut rnd = crate::test_rng(12345u64);
        let mut resident = [false; MAX_BLOCKS];
        let mut allocs = 0;
        let mut claims = 0;
        for _ in 0..20000 {
            let out = o.outputs(&In::default());
            let mut i = In::default();
            // free a few entries in use
            for e in 0..MAX_ENTRIES {
                if o.valid >> e & 1 != 0 && rnd(8) == 0 {
                    i.free |= 1 << e;
                }
            }
            let b = rnd(MAX_BLOCKS as u64) as usize;
            let need = 1 + rnd(3) as u8;
            if resident[b] && out.room_of(b as u32) >= need && rnd(2) == 0 {
                i.alloc = true;
                i.alloc_block = b as u8;
                i.alloc_need = need;
                allocs += 1;
            } else if resident[b] && rnd(50) == 0 {
                i.release = 1 << b;
                resident[b] = false;
            } else if !resident[b] && out.returning >> b & 1 == 0 && out.pool_free >= 5 && rnd(4) == 0 {
                i.claim = true;
                i.claim_block = b as u8;
                i.claim_n = 5;
                resident[b] = true;
                claims += 1;
            }
            i.tick = out.busy;
            o.clock(&i);
            let quota: u32 = o.pool as u32 + o.back as u32 + o.quota.iter().map(|&x| x as u32).sum::<u32>();
            assert_eq!(quota, 40, "{quota} entries claimed or unclaimed");
            for b in 0..MAX_BLOCKS {
                let held = (0..MAX_ENTRIES).filter(|&e| (o.cred & (o.valid | o.pend)) >> e & 1 != 0 && o.owner[e] as usize == b).count() as u32;
                let picked = (0..2).filter(|&p| o.pick_v[p] && o.cred >> o.pick[p] & 1 != 0 && o.owner[o.pick[p] as usize] as usize == b).count() as u32;
                let pushed = (0..2).filter(|&p| o.cr[p] && o.cown[p] as usize == b).count() as u32;
                if resident[b] {
                    assert_eq!(o.left[b] as u32 + held + picked + pushed, o.quota[b] as u32, "block slot {b}'s quota");
                }
            }
            let on_list = (0..o.count).fold(0u64, |m, j| m | 1 << o.slot[(o.head as usize + j as usize) % SLOTS]);
            let picked = (0..2).filter(|&p| o.pick_v[p]).fold(0u64, |m, p| m | 1 << o.pick[p]);
            assert_eq!(on_list.count_ones(), o.count as u32, "an entry twice on the list");
            assert_eq!(on_list & (o.valid | o.pend | picked), 0, "an entry on the list is also in use, pending or picked");
            assert_eq!((on_list | o.valid | o.pend | picked).count_ones(), 40, "an entry lost");
        }
        assert!(allocs > 1000 && claims > 50, "only {allocs} allocations, {claims} claims");
    }
}
