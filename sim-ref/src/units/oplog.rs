//! The operand log's bookkeeping as a unit (interface `mpgpu_spec::units::oplog`, RTL
//! `rtl/src/oplog.rs`): per-block partitions, the entries in use, allocation lowest entry
//! first. The SM asks it for room and entries and tells it what was freed; the log's data
//! array stays in the SM (docs/faults.md O10, O11).

use mpgpu_spec::units::oplog::{lowest_bits, In, Out, State, MAX_BLOCKS, MAX_ENTRIES, MAX_NEED};
use mpgpu_spec::Unit;

/// The bookkeeping of one SM's operand log.
#[derive(Clone, Debug)]
pub struct Oplog {
    /// The entries the configuration has (the lowest `entries` of [`MAX_ENTRIES`]).
    present: u64,
    valid: u64,
    own: [u64; MAX_BLOCKS],
}

impl Oplog {
    /// A log of `entries` entries (at most [`MAX_ENTRIES`]).
    pub fn new(entries: u32) -> Oplog {
        assert!(entries as usize <= MAX_ENTRIES, "an operand log of {entries} entries (at most {MAX_ENTRIES})");
        let present = if entries as usize == MAX_ENTRIES { u64::MAX } else { (1u64 << entries) - 1 };
        Oplog { present, valid: 0, own: [0; MAX_BLOCKS] }
    }

    pub fn state(&self) -> State {
        State { valid: self.valid, own: self.own.to_vec() }
    }

    fn pool(&self) -> u64 {
        self.present & !self.own.iter().fold(0, |a, &o| a | o)
    }

    /// Block slot `b`'s free entries, counting those freed in this cycle (`free` bypasses
    /// the valid bits, so an entry freed in cycle t serves an instruction issued in t).
    fn free_of(&self, b: usize, free: u64) -> u64 {
        self.own[b] & !(self.valid & !free)
    }
}

impl Unit for Oplog {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        self.valid = 0;
        self.own = [0; MAX_BLOCKS];
    }

    fn outputs(&self, i: &In) -> Out {
        let mut room = 0u32;
        for b in 0..MAX_BLOCKS {
            room |= (self.free_of(b, i.free).count_ones().min(3)) << (2 * b);
        }
        let mut x = self.free_of(i.alloc_block as usize % MAX_BLOCKS, i.free);
        let mut alloc_idx = [0u8; MAX_NEED];
        for a in &mut alloc_idx {
            if x != 0 {
                *a = x.trailing_zeros() as u8;
                x &= x - 1;
            }
        }
        let pool = self.pool();
        Out { pool_free: pool.count_ones() as u8, room, alloc_idx, claim_mask: lowest_bits(pool, i.claim_n as u32) }
    }

    fn clock(&mut self, i: &In) {
        let claim_mask = lowest_bits(self.pool(), i.claim_n as u32);
        let mut released = 0;
        for b in 0..MAX_BLOCKS {
            if i.release >> b & 1 != 0 {
                released |= self.own[b];
            }
        }
        let mut set = 0;
        if i.alloc {
            set |= lowest_bits(self.free_of(i.alloc_block as usize % MAX_BLOCKS, i.free), i.alloc_need as u32);
        }
        if i.claim {
            set |= lowest_bits(claim_mask, i.claim_used as u32);
        }
        self.valid = (self.valid & !i.free & !released) | set;
        for b in 0..MAX_BLOCKS {
            if i.claim && i.claim_block as usize == b {
                self.own[b] = claim_mask;
            } else if i.release >> b & 1 != 0 {
                self.own[b] = 0;
            }
        }
    }
}

/// What an SM's operand-log slot holds: the model, the RTL, or both in lockstep.
pub trait OplogSlot: Unit<In = In, Out = Out> {
    /// Why the run must stop (a co-simulated RTL parted from the model).
    fn halted(&self) -> Option<String> {
        None
    }
}

impl OplogSlot for Oplog {}
