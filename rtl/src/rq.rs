//! `Rq`: one SM's replay queue (Tanasić's thesis §6.3.2; interface and timing in
//! `mpgpu_spec::units::rq`, decisions in `docs/faults.md`, O6-O9 and "The replay queue in RTL").
//!
//! A slot holds an issued global memory instruction from issue to commit, and across a fault
//! until its replay: its warp slot, age, lanes (`exec`) and `info` (pc, operand-log entry count
//! and entries). `valid` marks the slots in use, `faulted` the squashed ones waiting to be
//! replayed. Slots are split in two halves of 64 (`*_lo`, `*_hi`: slots 0-63 and 64-127)
//! because the generator names array entries by literal index.
//!
//! Outputs, combinational on the registers and on `warp`:
//! - `full`, `alloc_idx`: whether a slot is free, and the lowest free one (a slot freed in a
//!   cycle is free from the next: the free is registered);
//! - `head_valid`, `head`: warp `warp`'s oldest faulted slot (ages compared modulo 2^16).
//!
//! At the rising edge: `issue` writes the entry into `alloc_idx`; `replay` clears `head`'s
//! faulted bit; `fault` sets faulted bits; `free` clears slots. Loop bounds are literal
//! because rust-hdl's Verilog generator needs them; the widths come from
//! `mpgpu_spec::units::rq`.

use mpgpu_spec::units::rq::{AGE_BITS, LOG_BITS, MAX_SLOTS, MAX_WARPS, PC_BITS, SLOT_BITS, WARP_BITS};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_SLOTS == 128 && SLOT_BITS == 7 && MAX_WARPS == 64 && WARP_BITS == 6 && PC_BITS == 16 && AGE_BITS == 16 && LOG_BITS == 6);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RqFaults {
    /// A slot is free one cycle early: the cycle's `free` reaches `full` and `alloc_idx`, so an
    /// instruction issued in the cycle of a commit takes the committing one's slot.
    pub early_free: bool,
    /// Replay out of age order: the head is the warp's faulted slot of lowest index, not of
    /// lowest age.
    pub by_index: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Rq {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Slots freed (committed, or saved with their block), slots 0-63 and 64-127.
    pub free_lo: Signal<In, Bits<64>>,
    pub free_hi: Signal<In, Bits<64>>,
    /// Slots squashed by a fault.
    pub fault_lo: Signal<In, Bits<64>>,
    pub fault_hi: Signal<In, Bits<64>>,
    /// A global memory instruction issues into `alloc_idx` with the fields below.
    pub issue: Signal<In, Bit>,
    /// Warp `warp`'s oldest faulted instruction (`head`) issues again.
    pub replay: Signal<In, Bit>,
    pub warp: Signal<In, Bits<6>>,
    pub pc: Signal<In, Bits<16>>,
    pub exec: Signal<In, Bits<32>>,
    pub age: Signal<In, Bits<16>>,
    pub log0: Signal<In, Bits<6>>,
    pub log1: Signal<In, Bits<6>>,
    pub log2: Signal<In, Bits<6>>,
    pub nlog: Signal<In, Bits<2>>,
    /// No slot is free.
    pub full: Signal<Out, Bit>,
    /// The lowest free slot.
    pub alloc_idx: Signal<Out, Bits<7>>,
    /// Warp `warp`'s oldest faulted slot, if any.
    pub head_valid: Signal<Out, Bit>,
    pub head: Signal<Out, Bits<7>>,
    /// The slots the configuration has.
    present_lo: Constant<Bits<64>>,
    present_hi: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    /// 2^15: an age difference at least this is negative (modulo 2^16).
    half: Constant<Bits<16>>,
    early_free: Constant<Bit>,
    by_index: Constant<Bit>,
    /// Slot numbers (rust-hdl's generator takes no casts of loop variables).
    ids_lo: [Constant<Bits<7>>; 64],
    ids_hi: [Constant<Bits<7>>; 64],
    fr_lo: Signal<Local, Bits<64>>,
    fr_hi: Signal<Local, Bits<64>>,
    low_lo: Signal<Local, Bits<64>>,
    low_hi: Signal<Local, Bits<64>>,
    idx: Signal<Local, Bits<7>>,
    set_lo: Signal<Local, Bits<64>>,
    set_hi: Signal<Local, Bits<64>>,
    found: Signal<Local, Bit>,
    best_age: Signal<Local, Bits<16>>,
    diff: Signal<Local, Bits<16>>,
    hidx: Signal<Local, Bits<7>>,
    hm_lo: Signal<Local, Bits<64>>,
    hm_hi: Signal<Local, Bits<64>>,
    info: Signal<Local, Bits<36>>,
    /// Slots in use, and squashed ones waiting to be replayed.
    pub valid: [DFF<Bits<64>>; 2],
    pub faulted: [DFF<Bits<64>>; 2],
    /// Each slot's warp, age, lanes and pc with log entries (`mpgpu_spec::units::rq::pack_info`).
    pub warp_lo: [DFF<Bits<6>>; 64],
    pub warp_hi: [DFF<Bits<6>>; 64],
    pub age_lo: [DFF<Bits<16>>; 64],
    pub age_hi: [DFF<Bits<16>>; 64],
    pub exec_lo: [DFF<Bits<32>>; 64],
    pub exec_hi: [DFF<Bits<32>>; 64],
    pub info_lo: [DFF<Bits<36>>; 64],
    pub info_hi: [DFF<Bits<36>>; 64],
}

impl Rq {
    /// A replay queue of `slots` (1..=128) slots.
    pub fn new(slots: usize, faults: RqFaults) -> Self {
        assert!((1..=MAX_SLOTS).contains(&slots), "a replay queue of {slots} slots (1..={MAX_SLOTS})");
        let mask = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        Self {
            clock: Default::default(),
            free_lo: Default::default(),
            free_hi: Default::default(),
            fault_lo: Default::default(),
            fault_hi: Default::default(),
            issue: Default::default(),
            replay: Default::default(),
            warp: Default::default(),
            pc: Default::default(),
            exec: Default::default(),
            age: Default::default(),
            log0: Default::default(),
            log1: Default::default(),
            log2: Default::default(),
            nlog: Default::default(),
            full: Default::default(),
            alloc_idx: Default::default(),
            head_valid: Default::default(),
            head: Default::default(),
            present_lo: Constant::new(mask(slots).into()),
            present_hi: Constant::new(mask(slots.saturating_sub(64)).into()),
            one: Constant::new(1u64.into()),
            half: Constant::new(0x8000u64.into()),
            early_free: Constant::new(faults.early_free),
            by_index: Constant::new(faults.by_index),
            ids_lo: std::array::from_fn(|i| Constant::new((i as u64).into())),
            ids_hi: std::array::from_fn(|i| Constant::new((64 + i as u64).into())),
            fr_lo: Default::default(),
            fr_hi: Default::default(),
            low_lo: Default::default(),
            low_hi: Default::default(),
            idx: Default::default(),
            set_lo: Default::default(),
            set_hi: Default::default(),
            found: Default::default(),
            best_age: Default::default(),
            diff: Default::default(),
            hidx: Default::default(),
            hm_lo: Default::default(),
            hm_hi: Default::default(),
            info: Default::default(),
            valid: Default::default(),
            faulted: Default::default(),
            warp_lo: std::array::from_fn(|_| Default::default()),
            warp_hi: std::array::from_fn(|_| Default::default()),
            age_lo: std::array::from_fn(|_| Default::default()),
            age_hi: std::array::from_fn(|_| Default::default()),
            exec_lo: std::array::from_fn(|_| Default::default()),
            exec_hi: std::array::from_fn(|_| Default::default()),
            info_lo: std::array::from_fn(|_| Default::default()),
            info_hi: std::array::from_fn(|_| Default::default()),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.free_lo.connect();
        self.free_hi.connect();
        self.fault_lo.connect();
        self.fault_hi.connect();
        self.issue.connect();
        self.replay.connect();
        self.warp.connect();
        self.pc.connect();
        self.exec.connect();
        self.age.connect();
        self.log0.connect();
        self.log1.connect();
        self.log2.connect();
        self.nlog.connect();
        self.connect_all();
    }
}

impl Logic for Rq {
    #[hdl_gen]
    fn update(&mut self) {
        for k in 0..2 {
            self.valid[k].clock.next = self.clock.val();
            self.valid[k].d.next = self.valid[k].q.val();
            self.faulted[k].clock.next = self.clock.val();
            self.faulted[k].d.next = self.faulted[k].q.val();
        }
        for i in 0..64 {
            self.warp_lo[i].clock.next = self.clock.val();
            self.warp_lo[i].d.next = self.warp_lo[i].q.val();
            self.warp_hi[i].clock.next = self.clock.val();
            self.warp_hi[i].d.next = self.warp_hi[i].q.val();
            self.age_lo[i].clock.next = self.clock.val();
            self.age_lo[i].d.next = self.age_lo[i].q.val();
            self.age_hi[i].clock.next = self.clock.val();
            self.age_hi[i].d.next = self.age_hi[i].q.val();
            self.exec_lo[i].clock.next = self.clock.val();
            self.exec_lo[i].d.next = self.exec_lo[i].q.val();
            self.exec_hi[i].clock.next = self.clock.val();
            self.exec_hi[i].d.next = self.exec_hi[i].q.val();
            self.info_lo[i].clock.next = self.clock.val();
            self.info_lo[i].d.next = self.info_lo[i].q.val();
            self.info_hi[i].clock.next = self.clock.val();
            self.info_hi[i].d.next = self.info_hi[i].q.val();
        }
        // Free slots, and the lowest one.
        self.fr_lo.next = self.present_lo.val() & !self.valid[0].q.val();
        self.fr_hi.next = self.present_hi.val() & !self.valid[1].q.val();
        if self.early_free.val() {
            self.fr_lo.next = self.present_lo.val() & !(self.valid[0].q.val() & !self.free_lo.val());
            self.fr_hi.next = self.present_hi.val() & !(self.valid[1].q.val() & !self.free_hi.val());
        }
        self.low_lo.next = self.fr_lo.val() & (!self.fr_lo.val() + self.one.val());
        self.low_hi.next = self.fr_hi.val() & (!self.fr_hi.val() + self.one.val());
        if self.fr_lo.val().any() {
            self.low_hi.next = 0.into();
        }
        self.idx.next = 0.into();
        for i in 0..64 {
            if self.low_lo.val().get_bit(i) {
                self.idx.next = self.ids_lo[i].val();
            }
            if self.low_hi.val().get_bit(i) {
                self.idx.next = self.ids_hi[i].val();
            }
        }
        self.full.next = !(self.fr_lo.val().any() | self.fr_hi.val().any());
        self.alloc_idx.next = self.idx.val();
        // The warp's oldest faulted slot: a scan keeping the oldest age seen.
        self.found.next = false;
        self.best_age.next = 0.into();
        self.hidx.next = 0.into();
        self.hm_lo.next = 0.into();
        self.hm_hi.next = 0.into();
        for i in 0..64 {
            self.diff.next = self.age_lo[i].q.val() - self.best_age.val();
            if self.faulted[0].q.val().get_bit(i) & (self.warp_lo[i].q.val() == self.warp.val()) & (!self.found.val() | ((self.diff.val() >= self.half.val()) & !self.by_index.val())) {
                self.found.next = true;
                self.best_age.next = self.age_lo[i].q.val();
                self.hidx.next = self.ids_lo[i].val();
                self.hm_lo.next = 0.into();
                self.hm_lo.next = self.hm_lo.val().replace_bit(i, true);
            }
        }
        for i in 0..64 {
            self.diff.next = self.age_hi[i].q.val() - self.best_age.val();
            if self.faulted[1].q.val().get_bit(i) & (self.warp_hi[i].q.val() == self.warp.val()) & (!self.found.val() | ((self.diff.val() >= self.half.val()) & !self.by_index.val())) {
                self.found.next = true;
                self.best_age.next = self.age_hi[i].q.val();
                self.hidx.next = self.ids_hi[i].val();
                self.hm_lo.next = 0.into();
                self.hm_hi.next = 0.into();
                self.hm_hi.next = self.hm_hi.val().replace_bit(i, true);
            }
        }
        self.head_valid.next = self.found.val();
        self.head.next = self.hidx.val();
        // The edge.
        self.set_lo.next = 0.into();
        self.set_hi.next = 0.into();
        if self.issue.val() {
            self.set_lo.next = self.low_lo.val();
            self.set_hi.next = self.low_hi.val();
        }
        if !self.replay.val() {
            self.hm_lo.next = 0.into();
            self.hm_hi.next = 0.into();
        }
        self.valid[0].d.next = (self.valid[0].q.val() & !self.free_lo.val()) | self.set_lo.val();
        self.valid[1].d.next = (self.valid[1].q.val() & !self.free_hi.val()) | self.set_hi.val();
        self.faulted[0].d.next = ((self.faulted[0].q.val() & !self.hm_lo.val()) | self.fault_lo.val()) & !self.free_lo.val();
        self.faulted[1].d.next = ((self.faulted[1].q.val() & !self.hm_hi.val()) | self.fault_hi.val()) & !self.free_hi.val();
        self.info.next = (bit_cast::<36, 16>(self.pc.val()) << 20)
            | (bit_cast::<36, 2>(self.nlog.val()) << 18)
            | (bit_cast::<36, 6>(self.log2.val()) << 12)
            | (bit_cast::<36, 6>(self.log1.val()) << 6)
            | bit_cast::<36, 6>(self.log0.val());
        for i in 0..64 {
            if self.set_lo.val().get_bit(i) {
                self.warp_lo[i].d.next = self.warp.val();
                self.age_lo[i].d.next = self.age.val();
                self.exec_lo[i].d.next = self.exec.val();
                self.info_lo[i].d.next = self.info.val();
            }
            if self.set_hi.val().get_bit(i) {
                self.warp_hi[i].d.next = self.warp.val();
                self.age_hi[i].d.next = self.age.val();
                self.exec_hi[i].d.next = self.exec.val();
                self.info_hi[i].d.next = self.info.val();
            }
        }
    }
}
