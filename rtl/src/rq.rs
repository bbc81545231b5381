//! `Rq`: one SM's replay queue (Tanasić's thesis §6.3.2; interface and timing in
//! `mpgpu_spec::units::rq`, decisions in `docs/faults.md`, O6-O9 and "The replay queue in RTL").
//!
//! A slot holds an issued global memory instruction from issue to commit, and across a fault
//! until its replay: its warp slot, age, lanes (`exec`) and `info` (pc, operand-log entry count
//! and entries). `valid` marks the slots in use, `faulted` the squashed ones waiting to be
//! replayed. Slots are split in two halves of 64 (`*_lo`, `*_hi`: slots 0-63 and 64-127)
//! because the generator names array entries by literal index.
//!
//! Outputs, combinational on the registers and on `replay_idx`, `rd_idx`:
//! - `full`, `alloc_idx`: whether a slot is free, and the lowest free one (a slot freed in a
//!   cycle is free from the next: the free is registered);
//! - `replay_ok`: slot `replay_idx` is faulted (the slot a replay names must be);
//! - `rd_*`: slot `rd_idx`'s entry (warp slot, pc, lanes, age, log entries), the squashed instruction's
//!   entry that goes back to its warp.
//!
//! The slot a replay issues from comes with it (`replay_idx`): the warp's waiting entry in the
//! issue queue carries it, and the issue queue, sorted by age, gives the replay order
//! (`docs/faults.md`, O7). The block searches nothing: the entry fields sit in distributed RAM,
//! and the one path through logic is the lowest free slot.
//!
//! At the rising edge: `issue` writes the entry into `alloc_idx`; `replay` clears slot
//! `replay_idx`'s faulted bit; `fault` sets faulted bits; `free` clears slots. The widths come
//! from `mpgpu_spec::units::rq` (rust-hdl's Verilog generator evaluates widths in Rust); an
//! index, a bit offset or a shift inside the logic the generator reads itself, with only the
//! loop variables known, so those (and the loop bounds written with them) are literals.

use mpgpu_spec::units::rq::{AGE_BITS, LANES, LOG_BITS, MAX_LOG, MAX_SLOTS, NLOG_BITS, PC_BITS, SLOT_BITS, WARP_BITS};
use crate::ram::LutRam;
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Slots per half (`*_lo`, `*_hi`), and bits of a slot within its half.
const HALF: usize = MAX_SLOTS / 2;
const HALF_BITS: usize = SLOT_BITS - 1;
/// Slots of a leaf of the priority-encoder tree (`q4`).
const LEAF: usize = 4;
/// An entry's `info`: pc, log entry count, log entries (the last lowest).
const INFO_BITS: usize = PC_BITS + NLOG_BITS + MAX_LOG * LOG_BITS;
const _: () = assert!(
    MAX_SLOTS == 128 && MAX_LOG == 3 && LOG_BITS == 6 && NLOG_BITS == 2,
    "the logic's indices, loop bounds and info's field offsets are literals written for two halves of 64 slots and three 6-bit log entries"
);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RqFaults {
    /// A slot is free one cycle early: the cycle's `free` reaches `full` and `alloc_idx`, so an
    /// instruction issued in the cycle of a commit takes the committing one's slot.
    pub early_free: bool,
    /// The replay clears the faulted bit of the read port's slot (`rd_idx`), not its own
    /// (`replay_idx`): the two slot-index inputs crossed.
    pub wrong_slot: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Rq {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Slots freed (committed, or saved with their block), slots 0-63 and 64-127.
    pub free_lo: Signal<In, Bits<HALF>>,
    pub free_hi: Signal<In, Bits<HALF>>,
    /// Slots squashed by a fault.
    pub fault_lo: Signal<In, Bits<HALF>>,
    pub fault_hi: Signal<In, Bits<HALF>>,
    /// A global memory instruction issues into `alloc_idx` with the fields below.
    pub issue: Signal<In, Bit>,
    /// The faulted instruction in slot `replay_idx` issues again.
    pub replay: Signal<In, Bit>,
    pub replay_idx: Signal<In, Bits<SLOT_BITS>>,
    pub warp: Signal<In, Bits<WARP_BITS>>,
    pub pc: Signal<In, Bits<PC_BITS>>,
    pub exec: Signal<In, Bits<LANES>>,
    pub age: Signal<In, Bits<AGE_BITS>>,
    pub log0: Signal<In, Bits<LOG_BITS>>,
    pub log1: Signal<In, Bits<LOG_BITS>>,
    pub log2: Signal<In, Bits<LOG_BITS>>,
    pub nlog: Signal<In, Bits<NLOG_BITS>>,
    /// The slot read out on the `rd_*` outputs.
    pub rd_idx: Signal<In, Bits<SLOT_BITS>>,
    /// No slot is free.
    pub full: Signal<Out, Bit>,
    /// The lowest free slot.
    pub alloc_idx: Signal<Out, Bits<SLOT_BITS>>,
    /// Slot `replay_idx` is faulted.
    pub replay_ok: Signal<Out, Bit>,
    /// Slot `rd_idx`'s entry (a squashed instruction's, which goes back to its warp).
    pub rd_warp: Signal<Out, Bits<WARP_BITS>>,
    pub rd_pc: Signal<Out, Bits<PC_BITS>>,
    pub rd_exec: Signal<Out, Bits<LANES>>,
    pub rd_age: Signal<Out, Bits<AGE_BITS>>,
    pub rd_log0: Signal<Out, Bits<LOG_BITS>>,
    pub rd_log1: Signal<Out, Bits<LOG_BITS>>,
    pub rd_log2: Signal<Out, Bits<LOG_BITS>>,
    pub rd_nlog: Signal<Out, Bits<NLOG_BITS>>,
    /// The slots the configuration has.
    present_lo: Constant<Bits<HALF>>,
    present_hi: Constant<Bits<HALF>>,
    one: Constant<Bits<HALF>>,
    early_free: Constant<Bit>,
    wrong_slot: Constant<Bit>,
    /// The top bit of each level's index (the upper node chosen).
    b2: Constant<Bits<SLOT_BITS>>,
    b3: Constant<Bits<SLOT_BITS>>,
    b4: Constant<Bits<SLOT_BITS>>,
    b5: Constant<Bits<SLOT_BITS>>,
    b6: Constant<Bits<SLOT_BITS>>,
    /// Slot numbers (rust-hdl's generator takes no casts of loop variables).
    ids_lo: [Constant<Bits<SLOT_BITS>>; HALF],
    ids_hi: [Constant<Bits<SLOT_BITS>>; HALF],
    fr_lo: Signal<Local, Bits<HALF>>,
    fr_hi: Signal<Local, Bits<HALF>>,
    low_lo: Signal<Local, Bits<HALF>>,
    low_hi: Signal<Local, Bits<HALF>>,
    /// The priority-encoder tree: level k's node j covers 2^(k+2) slots, whether one is free
    /// (`vk`) and the lowest one's number within them (`ik`, its upper bits zero).
    q4: [Signal<Local, Bits<LEAF>>; 32],
    v0: [Signal<Local, Bit>; 32],
    i0: [Signal<Local, Bits<SLOT_BITS>>; 32],
    v1: [Signal<Local, Bit>; 16],
    i1: [Signal<Local, Bits<SLOT_BITS>>; 16],
    v2: [Signal<Local, Bit>; 8],
    i2: [Signal<Local, Bits<SLOT_BITS>>; 8],
    v3: [Signal<Local, Bit>; 4],
    i3: [Signal<Local, Bits<SLOT_BITS>>; 4],
    v4: [Signal<Local, Bit>; 2],
    i4: [Signal<Local, Bits<SLOT_BITS>>; 2],
    idx: Signal<Local, Bits<SLOT_BITS>>,
    set_lo: Signal<Local, Bits<HALF>>,
    set_hi: Signal<Local, Bits<HALF>>,
    /// The RAMs are written (an issue took a slot).
    wr: Signal<Local, Bit>,
    /// The half of `faulted` holding slot `replay_idx`.
    rp_word: Signal<Local, Bits<HALF>>,
    /// The slot whose faulted bit a replay clears (`replay_idx`), and it decoded.
    rp_idx: Signal<Local, Bits<SLOT_BITS>>,
    hm_lo: Signal<Local, Bits<HALF>>,
    hm_hi: Signal<Local, Bits<HALF>>,
    ent_info: Signal<Local, Bits<INFO_BITS>>,
    rinfo: Signal<Local, Bits<INFO_BITS>>,
    /// The replayed slot within its half.
    rp6: Signal<Local, Bits<HALF_BITS>>,
    /// Slots in use, and squashed ones waiting to be replayed.
    pub valid: [Reg<Bits<HALF>>; 2],
    pub faulted: [Reg<Bits<HALF>>; 2],
    /// Each slot's warp, age, lanes, and pc with log entries (`mpgpu_spec::units::rq::pack_info`):
    /// distributed RAM, written at issue and read by the read port; the co-simulation reads
    /// every word back as state. (One RAM of 36 bits, not a 16-bit and a 20-bit one, which
    /// rust-hdl would simulate faster, `docs/harness.md`: yosys maps the pair with an 8-LUT
    /// path to their write enables, over the 10 ns period.)
    pub warp_ram: LutRam<Bits<WARP_BITS>, SLOT_BITS>,
    pub age_ram: LutRam<Bits<AGE_BITS>, SLOT_BITS>,
    pub exec_ram: LutRam<Bits<LANES>, SLOT_BITS>,
    pub info_ram: LutRam<Bits<INFO_BITS>, SLOT_BITS>,
    /// Evaluate the logic in every pass, not only in those after a change (for the test that
    /// the skipping changes nothing; not hardware).
    pub _always: bool,
    _ran: bool,
    /// Passes in which the logic was skipped (`crate::flat_logic!`; not hardware).
    pub _skips: u64,
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
            replay_idx: Default::default(),
            warp: Default::default(),
            pc: Default::default(),
            exec: Default::default(),
            age: Default::default(),
            log0: Default::default(),
            log1: Default::default(),
            log2: Default::default(),
            nlog: Default::default(),
            rd_idx: Default::default(),
            full: Default::default(),
            alloc_idx: Default::default(),
            replay_ok: Default::default(),
            rd_warp: Default::default(),
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
            early_free: Constant::new(faults.early_free),
            wrong_slot: Constant::new(faults.wrong_slot),
            b2: Constant::new(4u64.into()),
            b3: Constant::new(8u64.into()),
            b4: Constant::new(16u64.into()),
            b5: Constant::new(32u64.into()),
            b6: Constant::new(64u64.into()),
            q4: std::array::from_fn(|_| Default::default()),
            v0: std::array::from_fn(|_| Default::default()),
            i0: std::array::from_fn(|_| Default::default()),
            v1: std::array::from_fn(|_| Default::default()),
            i1: std::array::from_fn(|_| Default::default()),
            v2: std::array::from_fn(|_| Default::default()),
            i2: std::array::from_fn(|_| Default::default()),
            v3: std::array::from_fn(|_| Default::default()),
            i3: std::array::from_fn(|_| Default::default()),
            v4: std::array::from_fn(|_| Default::default()),
            i4: std::array::from_fn(|_| Default::default()),
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
            rp_idx: Default::default(),
            rp_word: Default::default(),
            hm_lo: Default::default(),
            hm_hi: Default::default(),
            ent_info: Default::default(),
            rinfo: Default::default(),
            rp6: Default::default(),
            valid: Default::default(),
            faulted: Default::default(),
            warp_ram: Default::default(),
            age_ram: Default::default(),
            exec_ram: Default::default(),
            info_ram: Default::default(),
            _always: false,
            _ran: false,
            _skips: 0,
        }
    }
}

// The registers and RAMs, once: `flat_block!` writes their clocking (`valid` and `faulted`
// hold unless the logic assigns them), the simulation's lists and the block's `Logic`.
crate::flat_block!(Rq {
    inputs: [free_lo, free_hi, fault_lo, fault_hi, issue, replay, replay_idx, warp, pc, exec, age, log0, log1, log2, nlog, rd_idx],
    held: [],
    held_arrays: [valid, faulted],
    clocked: [warp_ram, age_ram, exec_ram, info_ram],
    clocked_arrays: [],
    logic: [Queue],
});

/// The whole logic, one part.
pub struct Queue;

impl crate::flat::LogicPart<Queue> for Rq {
    #[hdl_gen]
    fn update(&mut self) {
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
        // The lowest free slot's number, from a tree of priority encoders (no carry chain:
        // each level is one LUT deep): 4-slot groups, then pairs of nodes, the lower one
        // first, up to the 128 slots.
        // (from bit selects: rust-hdl simulates a part select as a shift, of a boolean array
        // for a vector of more than 32 bits, `docs/harness.md`)
        for j in 0..16 {
            self.q4[j].next = 0.into();
            self.q4[16 + j].next = 0.into();
            for k in 0..4 {
                self.q4[j].next = self.q4[j].val().replace_bit(k, self.fr_lo.val().get_bit(4 * j + k));
                self.q4[16 + j].next = self.q4[16 + j].val().replace_bit(k, self.fr_hi.val().get_bit(4 * j + k));
            }
        }
        for j in 0..32 {
            self.v0[j].next = self.q4[j].val().any();
            self.i0[j].next = 3.into();
            if self.q4[j].val().get_bit(2) {
                self.i0[j].next = 2.into();
            }
            if self.q4[j].val().get_bit(1) {
                self.i0[j].next = 1.into();
            }
            if self.q4[j].val().get_bit(0) {
                self.i0[j].next = 0.into();
            }
        }
        for j in 0..16 {
            self.v1[j].next = self.v0[2 * j].val() | self.v0[2 * j + 1].val();
            self.i1[j].next = self.i0[2 * j].val();
            if !self.v0[2 * j].val() {
                self.i1[j].next = self.i0[2 * j + 1].val() | self.b2.val();
            }
        }
        for j in 0..8 {
            self.v2[j].next = self.v1[2 * j].val() | self.v1[2 * j + 1].val();
            self.i2[j].next = self.i1[2 * j].val();
            if !self.v1[2 * j].val() {
                self.i2[j].next = self.i1[2 * j + 1].val() | self.b3.val();
            }
        }
        for j in 0..4 {
            self.v3[j].next = self.v2[2 * j].val() | self.v2[2 * j + 1].val();
            self.i3[j].next = self.i2[2 * j].val();
            if !self.v2[2 * j].val() {
                self.i3[j].next = self.i2[2 * j + 1].val() | self.b4.val();
            }
        }
        for j in 0..2 {
            self.v4[j].next = self.v3[2 * j].val() | self.v3[2 * j + 1].val();
            self.i4[j].next = self.i3[2 * j].val();
            if !self.v3[2 * j].val() {
                self.i4[j].next = self.i3[2 * j + 1].val() | self.b5.val();
            }
        }
        self.idx.next = self.i4[0].val();
        if !self.v4[0].val() {
            self.idx.next = self.i4[1].val() | self.b6.val();
        }
        if !self.v4[0].val() & !self.v4[1].val() {
            self.idx.next = 0.into();
        }
        self.full.next = !(self.fr_lo.val().any() | self.fr_hi.val().any());
        self.alloc_idx.next = self.idx.val();
        // Whether the replayed slot is faulted (a multiplexer on `replay_idx`).
        self.rp_word.next = self.faulted[0].q.val();
        if self.replay_idx.val().get_bit(6) {
            self.rp_word.next = self.faulted[1].q.val();
        }
        self.rp6.next = bit_cast::<HALF_BITS, SLOT_BITS>(self.replay_idx.val());
        self.replay_ok.next = self.rp_word.val().get_bit(self.rp6.val().index());
        // The replayed slot, decoded, leaves `faulted` at the edge.
        self.rp_idx.next = self.replay_idx.val();
        if self.wrong_slot.val() {
            self.rp_idx.next = self.rd_idx.val();
        }
        self.hm_lo.next = 0.into();
        self.hm_hi.next = 0.into();
        // (zero without a replay; the simulation skips the decode then)
        if self.replay.val() {
            for i in 0..64 {
                if self.rp_idx.val() == self.ids_lo[i].val() {
                    self.hm_lo.next = self.hm_lo.val().replace_bit(i, true);
                }
                if self.rp_idx.val() == self.ids_hi[i].val() {
                    self.hm_hi.next = self.hm_hi.val().replace_bit(i, true);
                }
            }
        }
        // The read port: slot `rd_idx`'s entry, from the RAMs.
        self.warp_ram.read_address.next = self.rd_idx.val();
        self.age_ram.read_address.next = self.rd_idx.val();
        self.exec_ram.read_address.next = self.rd_idx.val();
        self.info_ram.read_address.next = self.rd_idx.val();
        self.rd_warp.next = self.warp_ram.read_data.val();
        self.rd_exec.next = self.exec_ram.read_data.val();
        self.rd_age.next = self.age_ram.read_data.val();
        self.rinfo.next = self.info_ram.read_data.val();
        self.rd_pc.next = self.rinfo.val().get_bits::<PC_BITS>(20);
        self.rd_nlog.next = self.rinfo.val().get_bits::<NLOG_BITS>(18);
        self.rd_log2.next = self.rinfo.val().get_bits::<LOG_BITS>(12);
        self.rd_log1.next = self.rinfo.val().get_bits::<LOG_BITS>(6);
        self.rd_log0.next = self.rinfo.val().get_bits::<LOG_BITS>(0);
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
        // (written only at an issue; the simulation skips the packing otherwise)
        self.ent_info.next = 0.into();
        if self.issue.val() {
            self.ent_info.next = (bit_cast::<INFO_BITS, PC_BITS>(self.pc.val()) << 20)
                | (bit_cast::<INFO_BITS, NLOG_BITS>(self.nlog.val()) << 18)
                | (bit_cast::<INFO_BITS, LOG_BITS>(self.log2.val()) << 12)
                | (bit_cast::<INFO_BITS, LOG_BITS>(self.log1.val()) << 6)
                | bit_cast::<INFO_BITS, LOG_BITS>(self.log0.val());
        }
        // (the RAMs are written at the slot the issue takes: none when the queue is full)
        self.wr.next = self.issue.val() & (self.fr_lo.val().any() | self.fr_hi.val().any());
        self.warp_ram.write_enable.next = self.wr.val();
        self.age_ram.write_enable.next = self.wr.val();
        self.exec_ram.write_enable.next = self.wr.val();
        self.info_ram.write_enable.next = self.wr.val();
        self.warp_ram.write_address.next = self.idx.val();
        self.age_ram.write_address.next = self.idx.val();
        self.exec_ram.write_address.next = self.idx.val();
        self.info_ram.write_address.next = self.idx.val();
        self.warp_ram.write_data.next = self.warp.val();
        self.age_ram.write_data.next = self.age.val();
        self.exec_ram.write_data.next = self.exec.val();
        self.info_ram.write_data.next = self.ent_info.val();
    }
}
