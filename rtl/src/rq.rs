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
//! - `head_valid`, `head`: warp `warp`'s oldest faulted slot (ages compared modulo 2^16), from
//!   a tree of pairwise choices, seven levels deep;
//! - `rd_*`: slot `rd_idx`'s entry (pc, lanes, age, log entries), the squashed instruction's
//!   entry that goes back to its warp.
//!
//! At the rising edge: `issue` writes the entry into `alloc_idx`; `replay` clears `head`'s
//! faulted bit; `fault` sets faulted bits; `free` clears slots. Loop bounds are literal
//! because rust-hdl's Verilog generator needs them; the widths come from
//! `mpgpu_spec::units::rq`.

use mpgpu_spec::units::rq::{AGE_BITS, LOG_BITS, MAX_SLOTS, MAX_WARPS, PC_BITS, SLOT_BITS, WARP_BITS};
use crate::ram::LutRam;
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
    /// The slot read out on the `rd_*` outputs.
    pub rd_idx: Signal<In, Bits<7>>,
    /// No slot is free.
    pub full: Signal<Out, Bit>,
    /// The lowest free slot.
    pub alloc_idx: Signal<Out, Bits<7>>,
    /// Warp `warp`'s oldest faulted slot, if any.
    pub head_valid: Signal<Out, Bit>,
    pub head: Signal<Out, Bits<7>>,
    /// Slot `rd_idx`'s entry (a squashed instruction's, which goes back to its warp).
    pub rd_pc: Signal<Out, Bits<16>>,
    pub rd_exec: Signal<Out, Bits<32>>,
    pub rd_age: Signal<Out, Bits<16>>,
    pub rd_log0: Signal<Out, Bits<6>>,
    pub rd_log1: Signal<Out, Bits<6>>,
    pub rd_log2: Signal<Out, Bits<6>>,
    pub rd_nlog: Signal<Out, Bits<2>>,
    /// The slots the configuration has.
    present_lo: Constant<Bits<64>>,
    present_hi: Constant<Bits<64>>,
    one: Constant<Bits<64>>,
    /// 2^15: an age difference with this bit set is negative (modulo 2^16).
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
    /// The RAMs are written (an issue took a slot).
    wr: Signal<Local, Bit>,
    /// The head search, a tree of 7 levels over the 128 slots: at level k, node j holds
    /// whether its 2^k slots include a faulted one of the warp (`vk`), the oldest one's age
    /// (`ak`) and slot (`xk`).
    lv: Signal<Local, Bit>,
    rv: Signal<Local, Bit>,
    diff: Signal<Local, Bits<16>>,
    v1: [Signal<Local, Bit>; 64],
    a1: [Signal<Local, Bits<16>>; 64],
    x1: [Signal<Local, Bits<7>>; 64],
    v2: [Signal<Local, Bit>; 32],
    a2: [Signal<Local, Bits<16>>; 32],
    x2: [Signal<Local, Bits<7>>; 32],
    v3: [Signal<Local, Bit>; 16],
    a3: [Signal<Local, Bits<16>>; 16],
    x3: [Signal<Local, Bits<7>>; 16],
    v4: [Signal<Local, Bit>; 8],
    a4: [Signal<Local, Bits<16>>; 8],
    x4: [Signal<Local, Bits<7>>; 8],
    v5: [Signal<Local, Bit>; 4],
    a5: [Signal<Local, Bits<16>>; 4],
    x5: [Signal<Local, Bits<7>>; 4],
    v6: [Signal<Local, Bit>; 2],
    a6: [Signal<Local, Bits<16>>; 2],
    x6: [Signal<Local, Bits<7>>; 2],
    v7: Signal<Local, Bit>,
    x7: Signal<Local, Bits<7>>,
    hm_lo: Signal<Local, Bits<64>>,
    hm_hi: Signal<Local, Bits<64>>,
    ent_info: Signal<Local, Bits<36>>,
    rinfo: Signal<Local, Bits<36>>,
    /// Slots in use, and squashed ones waiting to be replayed.
    pub valid: [DFF<Bits<64>>; 2],
    pub faulted: [DFF<Bits<64>>; 2],
    /// Each slot's warp and age (flip-flops: the head search reads every slot's at once).
    pub warp_lo: [DFF<Bits<6>>; 64],
    pub warp_hi: [DFF<Bits<6>>; 64],
    pub age_lo: [DFF<Bits<16>>; 64],
    pub age_hi: [DFF<Bits<16>>; 64],
    /// Each slot's lanes, and pc with log entries (`mpgpu_spec::units::rq::pack_info`), and a
    /// copy of its age: distributed RAM, written at issue and read by the read port alone.
    pub exec_ram: LutRam<Bits<32>, 7>,
    pub info_ram: LutRam<Bits<36>, 7>,
    pub age_ram: LutRam<Bits<16>, 7>,
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
            rd_idx: Default::default(),
            rd_pc: Default::default(),
            rd_exec: Default::default(),
            rd_age: Default::default(),
            rd_log0: Default::default(),
            rd_log1: Default::default(),
            rd_log2: Default::default(),
            rd_nlog: Default::default(),
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
            wr: Default::default(),
            lv: Default::default(),
            rv: Default::default(),
            diff: Default::default(),
            v1: std::array::from_fn(|_| Default::default()),
            a1: std::array::from_fn(|_| Default::default()),
            x1: std::array::from_fn(|_| Default::default()),
            v2: std::array::from_fn(|_| Default::default()),
            a2: std::array::from_fn(|_| Default::default()),
            x2: std::array::from_fn(|_| Default::default()),
            v3: std::array::from_fn(|_| Default::default()),
            a3: std::array::from_fn(|_| Default::default()),
            x3: std::array::from_fn(|_| Default::default()),
            v4: std::array::from_fn(|_| Default::default()),
            a4: std::array::from_fn(|_| Default::default()),
            x4: std::array::from_fn(|_| Default::default()),
            v5: std::array::from_fn(|_| Default::default()),
            a5: std::array::from_fn(|_| Default::default()),
            x5: std::array::from_fn(|_| Default::default()),
            v6: std::array::from_fn(|_| Default::default()),
            a6: std::array::from_fn(|_| Default::default()),
            x6: std::array::from_fn(|_| Default::default()),
            v7: Default::default(),
            x7: Default::default(),
            hm_lo: Default::default(),
            hm_hi: Default::default(),
            ent_info: Default::default(),
            rinfo: Default::default(),
            valid: Default::default(),
            faulted: Default::default(),
            warp_lo: std::array::from_fn(|_| Default::default()),
            warp_hi: std::array::from_fn(|_| Default::default()),
            age_lo: std::array::from_fn(|_| Default::default()),
            age_hi: std::array::from_fn(|_| Default::default()),
            exec_ram: Default::default(),
            info_ram: Default::default(),
            age_ram: Default::default(),
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
        self.rd_idx.connect();
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
        // The warp's oldest faulted slot: a tree of pairwise choices, the right (higher) one
        // only if it is strictly older (ages modulo 2^16), so that a tie goes to the lower
        // slot as in the model's scan; the test-only by-index variant ignores ages.
        for j in 0..32 {
            self.lv.next = self.faulted[0].q.val().get_bit(2 * j) & (self.warp_lo[2 * j].q.val() == self.warp.val());
            self.rv.next = self.faulted[0].q.val().get_bit(2 * j + 1) & (self.warp_lo[2 * j + 1].q.val() == self.warp.val());
            self.diff.next = self.age_lo[2 * j + 1].q.val() - self.age_lo[2 * j].q.val();
            self.v1[j].next = self.lv.val() | self.rv.val();
            self.a1[j].next = self.age_lo[2 * j].q.val();
            self.x1[j].next = self.ids_lo[2 * j].val();
            if self.rv.val() & (!self.lv.val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a1[j].next = self.age_lo[2 * j + 1].q.val();
                self.x1[j].next = self.ids_lo[2 * j + 1].val();
            }
            self.lv.next = self.faulted[1].q.val().get_bit(2 * j) & (self.warp_hi[2 * j].q.val() == self.warp.val());
            self.rv.next = self.faulted[1].q.val().get_bit(2 * j + 1) & (self.warp_hi[2 * j + 1].q.val() == self.warp.val());
            self.diff.next = self.age_hi[2 * j + 1].q.val() - self.age_hi[2 * j].q.val();
            self.v1[32 + j].next = self.lv.val() | self.rv.val();
            self.a1[32 + j].next = self.age_hi[2 * j].q.val();
            self.x1[32 + j].next = self.ids_hi[2 * j].val();
            if self.rv.val() & (!self.lv.val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a1[32 + j].next = self.age_hi[2 * j + 1].q.val();
                self.x1[32 + j].next = self.ids_hi[2 * j + 1].val();
            }
        }
        for j in 0..32 {
            self.diff.next = self.a1[2 * j + 1].val() - self.a1[2 * j].val();
            self.v2[j].next = self.v1[2 * j].val() | self.v1[2 * j + 1].val();
            self.a2[j].next = self.a1[2 * j].val();
            self.x2[j].next = self.x1[2 * j].val();
            if self.v1[2 * j + 1].val() & (!self.v1[2 * j].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a2[j].next = self.a1[2 * j + 1].val();
                self.x2[j].next = self.x1[2 * j + 1].val();
            }
        }
        for j in 0..16 {
            self.diff.next = self.a2[2 * j + 1].val() - self.a2[2 * j].val();
            self.v3[j].next = self.v2[2 * j].val() | self.v2[2 * j + 1].val();
            self.a3[j].next = self.a2[2 * j].val();
            self.x3[j].next = self.x2[2 * j].val();
            if self.v2[2 * j + 1].val() & (!self.v2[2 * j].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a3[j].next = self.a2[2 * j + 1].val();
                self.x3[j].next = self.x2[2 * j + 1].val();
            }
        }
        for j in 0..8 {
            self.diff.next = self.a3[2 * j + 1].val() - self.a3[2 * j].val();
            self.v4[j].next = self.v3[2 * j].val() | self.v3[2 * j + 1].val();
            self.a4[j].next = self.a3[2 * j].val();
            self.x4[j].next = self.x3[2 * j].val();
            if self.v3[2 * j + 1].val() & (!self.v3[2 * j].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a4[j].next = self.a3[2 * j + 1].val();
                self.x4[j].next = self.x3[2 * j + 1].val();
            }
        }
        for j in 0..4 {
            self.diff.next = self.a4[2 * j + 1].val() - self.a4[2 * j].val();
            self.v5[j].next = self.v4[2 * j].val() | self.v4[2 * j + 1].val();
            self.a5[j].next = self.a4[2 * j].val();
            self.x5[j].next = self.x4[2 * j].val();
            if self.v4[2 * j + 1].val() & (!self.v4[2 * j].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a5[j].next = self.a4[2 * j + 1].val();
                self.x5[j].next = self.x4[2 * j + 1].val();
            }
        }
        for j in 0..2 {
            self.diff.next = self.a5[2 * j + 1].val() - self.a5[2 * j].val();
            self.v6[j].next = self.v5[2 * j].val() | self.v5[2 * j + 1].val();
            self.a6[j].next = self.a5[2 * j].val();
            self.x6[j].next = self.x5[2 * j].val();
            if self.v5[2 * j + 1].val() & (!self.v5[2 * j].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
                self.a6[j].next = self.a5[2 * j + 1].val();
                self.x6[j].next = self.x5[2 * j + 1].val();
            }
        }
        self.diff.next = self.a6[1].val() - self.a6[0].val();
        self.v7.next = self.v6[0].val() | self.v6[1].val();
        self.x7.next = self.x6[0].val();
        if self.v6[1].val() & (!self.v6[0].val() | ((self.diff.val() & self.half.val()).any() & !self.by_index.val())) {
            self.x7.next = self.x6[1].val();
        }
        self.head_valid.next = self.v7.val();
        self.head.next = self.x7.val();
        // The head's slot, decoded, leaves `faulted` when it is replayed.
        self.hm_lo.next = 0.into();
        self.hm_hi.next = 0.into();
        for i in 0..64 {
            if self.replay.val() & self.v7.val() & (self.x7.val() == self.ids_lo[i].val()) {
                self.hm_lo.next = self.hm_lo.val().replace_bit(i, true);
            }
            if self.replay.val() & self.v7.val() & (self.x7.val() == self.ids_hi[i].val()) {
                self.hm_hi.next = self.hm_hi.val().replace_bit(i, true);
            }
        }
        // The read port: slot `rd_idx`'s entry, from the RAMs.
        self.exec_ram.read_address.next = self.rd_idx.val();
        self.info_ram.read_address.next = self.rd_idx.val();
        self.age_ram.read_address.next = self.rd_idx.val();
        self.rd_exec.next = self.exec_ram.read_data.val();
        self.rd_age.next = self.age_ram.read_data.val();
        self.rinfo.next = self.info_ram.read_data.val();
        self.rd_pc.next = self.rinfo.val().get_bits::<16>(20);
        self.rd_nlog.next = self.rinfo.val().get_bits::<2>(18);
        self.rd_log2.next = self.rinfo.val().get_bits::<6>(12);
        self.rd_log1.next = self.rinfo.val().get_bits::<6>(6);
        self.rd_log0.next = self.rinfo.val().get_bits::<6>(0);
        // The edge.
        self.set_lo.next = 0.into();
        self.set_hi.next = 0.into();
        if self.issue.val() {
            self.set_lo.next = self.low_lo.val();
            self.set_hi.next = self.low_hi.val();
        }
        self.valid[0].d.next = (self.valid[0].q.val() & !self.free_lo.val()) | self.set_lo.val();
        self.valid[1].d.next = (self.valid[1].q.val() & !self.free_hi.val()) | self.set_hi.val();
        self.faulted[0].d.next = ((self.faulted[0].q.val() & !self.hm_lo.val()) | self.fault_lo.val()) & !self.free_lo.val();
        self.faulted[1].d.next = ((self.faulted[1].q.val() & !self.hm_hi.val()) | self.fault_hi.val()) & !self.free_hi.val();
        self.ent_info.next = (bit_cast::<36, 16>(self.pc.val()) << 20)
            | (bit_cast::<36, 2>(self.nlog.val()) << 18)
            | (bit_cast::<36, 6>(self.log2.val()) << 12)
            | (bit_cast::<36, 6>(self.log1.val()) << 6)
            | bit_cast::<36, 6>(self.log0.val());
        for i in 0..64 {
            if self.set_lo.val().get_bit(i) {
                self.warp_lo[i].d.next = self.warp.val();
                self.age_lo[i].d.next = self.age.val();
            }
            if self.set_hi.val().get_bit(i) {
                self.warp_hi[i].d.next = self.warp.val();
                self.age_hi[i].d.next = self.age.val();
            }
        }
        // (the RAMs are written at the slot the issue takes: none when the queue is full)
        self.exec_ram.clock.next = self.clock.val();
        self.info_ram.clock.next = self.clock.val();
        self.age_ram.clock.next = self.clock.val();
        // (`set_*` is the issue's slot, empty without an issue)
        self.wr.next = self.set_lo.val().any() | self.set_hi.val().any();
        self.exec_ram.write_enable.next = self.wr.val();
        self.info_ram.write_enable.next = self.wr.val();
        self.age_ram.write_enable.next = self.wr.val();
        self.exec_ram.write_address.next = self.idx.val();
        self.info_ram.write_address.next = self.idx.val();
        self.age_ram.write_address.next = self.idx.val();
        self.exec_ram.write_data.next = self.exec.val();
        self.info_ram.write_data.next = self.ent_info.val();
        self.age_ram.write_data.next = self.age.val();
    }
}
