//! `Ptbq`: the Preempted Thread Block Queues of the kernel scheduling framework (thesis
//! §5.2.3; `docs/sched-framework.md`), one FIFO per KSRT entry; a sub-block of `Sched`, whose
//! header states the cycle contract.
//!
//! The 16 queues of 256 entries share one block RAM (`SyncRam`, registered reads: entry `e` of
//! queue `k` at address `k * 256 + e`), with a head pointer and an occupancy per queue in
//! registers:
//! - push: a saved block's entry (`push_entry`: its index, and above it its save slot) goes to
//!   the tail of queue `push_k` at the edge;
//! - head: the head entry of queue `pop_k` is on `head_entry` in the same cycle, `head_valid`
//!   when the queue holds one; with `pop` it leaves at the edge;
//! - `clear`: queue `clear_k` is emptied at the edge (its kernel's entry is reused), over any
//!   push or pop of it;
//! - `queued` (internal): which queues hold blocks; `q_len`, each queue's occupancy.
//!
//! The head is read in the cycle it is needed although the RAM's reads are registered: each
//! queue keeps its first two entries in registers (`h0`, `h1`), and a pop reads the entry that
//! becomes the second (head + 2) from the RAM, which arrives the next cycle (`pend`,
//! `pend_k`): while it is on its way it stands in for the queue's `h1`. A block pushed to a
//! queue holding fewer than two goes to those registers as well as to the RAM. So the
//! interface and its timing are those of a queue with a combinational read (`docs/fpga.md`),
//! with one RAM read and one RAM write at most per cycle.
//!
//! The RAM's write is registered (`wr_*`): a block pushed at an edge is written to the RAM at
//! the next one, so that the push's queue pointers (read through the saved SM's kernel) end in a
//! register, not in the RAM's address pins (`docs/fpga.md`). Only the RAM lags: a queue's
//! pointers, length and head registers move at the push's edge, as before. The one read that can
//! ask for the entry still in the write register (a pop of a queue of three that was pushed the
//! cycle before) takes it from there (`byp`, `byp_data`), so the interface does not change.
//! Parameters: the `lifo` test-only fault (the head read is the block pushed last).
use crate::ram::SyncRam;
use mpgpu_spec::units::sched::fw::{INDEX_BITS, MAX_SMS, PTBQ_ADDR_BITS, PTBQ_ENTRY_BITS, PTBQ_LEN_BITS, PTBQ_PTR_BITS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

// rust-hdl's Verilog generator evaluates widths, array lengths and loop bounds in Rust, so they
// are the spec's constants; a value or index inside `update` it reads itself (with only the
// loop variables known), so the OR tree there names the queues 0..=15 and the RAM address's
// queue field sits at the literal bit 8 (= PTBQ_PTR_BITS).
const _: () = assert!(MAX_SMS == 16, "update's OR tree names the queues 0..=15 by literal indices");
const _: () = assert!(PTBQ_PTR_BITS == 8, "update places the queue index at the literal bit 8 of a RAM address");

type B4 = Bits<INDEX_BITS>;
/// A PTBQ entry: the block index (TB_BITS), its save slot above it (SLOT_BITS).
type Tb = Bits<PTBQ_ENTRY_BITS>;

#[derive(LogicBlock)]
pub struct Ptbq {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Push `push_entry` to queue `push_k` at this edge.
    pub push: Signal<In, Bit>,
    /// The queue pushed.
    pub push_k: Signal<In, B4>,
    /// The entry pushed.
    pub push_entry: Signal<In, Tb>,
    /// `push_k` one-hot, 0 without a push: the parent keeps it in a register of its own, so
    /// that each queue's push enable is one flip-flop's bit rather than a compare of a 4-bit
    /// register read by all 16 queues (`docs/fpga.md`, "The tables' registers").
    pub push_oh: Signal<In, Bits<MAX_SMS>>,
    /// The queue whose head is read (and popped with `pop`).
    pub pop_k: Signal<In, B4>,
    /// `pop_k` one-hot, likewise (each queue's pop enable and its term of the head read).
    pub pop_oh: Signal<In, Bits<MAX_SMS>>,
    /// Pop the head of queue `pop_k` at this edge, if it holds one.
    pub pop: Signal<In, Bit>,
    /// Empty queue `clear_k` at this edge.
    pub clear: Signal<In, Bit>,
    /// The queue emptied.
    pub clear_k: Signal<In, B4>,
    /// Queue `pop_k` holds a block.
    pub head_valid: Signal<Out, Bit>,
    /// The head entry of queue `pop_k` (the one pushed to it last with the `lifo` fault).
    pub head_entry: Signal<Out, Tb>,
    /// Bit k: queue k holds a block (read inside for a pop; the KSRT keeps its own "blocks
    /// left" flags, so this is no longer a port).
    pub queued: Signal<Local, Bits<MAX_SMS>>,
    /// Each queue's head pointer, kept as head + 2 (the entry a pop reads from the RAM) so
    /// that the read address is a multiplexer of registers with no adder, and XORed with 2 so
    /// that the flip-flops start at zero.
    q_h2: [Reg<Bits<PTBQ_PTR_BITS>>; MAX_SMS],
    /// Occupancy of each queue.
    pub q_len: [Reg<Bits<PTBQ_LEN_BITS>>; MAX_SMS],
    /// Each queue's tail (head + occupancy, mod 256: where its next push goes), kept beside
    /// them so that a push's address is a read of one register, with no adder.
    pub q_tail: [Reg<Bits<PTBQ_PTR_BITS>>; MAX_SMS],
    /// Each queue's occupancy is not zero (kept beside `q_len`, so that `queued` comes
    /// straight from flip-flops).
    pub q_nz: [Reg<Bit>; MAX_SMS],
    /// Each queue's occupancy is over two, and is three (kept likewise, so that a pop's read
    /// of the entry after next needs a multiplexer of one bit, not of the occupancy and then
    /// a compare: `docs/fpga.md`, seventh round).
    q_gt2: [Reg<Bit>; MAX_SMS],
    q_eq3: [Reg<Bit>; MAX_SMS],
    /// Each queue holds exactly one, exactly two blocks: the push's choice of head register
    /// reads a flag, not a compare of `q_len` that drives both registers' 28 enables
    /// (`docs/fpga.md`, eleventh round).
    q_eq1: [Reg<Bit>; MAX_SMS],
    q_eq2: [Reg<Bit>; MAX_SMS],
    /// The queues' entries: entry `e` of queue `k` at address `k * 256 + e`.
    pub ram: SyncRam<Tb, PTBQ_ADDR_BITS>,
    /// Each queue's head entry, and the one after it.
    pub h0: [Reg<Tb>; MAX_SMS],
    pub h1: [Reg<Tb>; MAX_SMS],
    /// The RAM read that arrived at the last edge (`land`), and which queue's head (`p0`) or
    /// second entry (`p1`) it is (at most one bit of the two set): that register stands for
    /// it in this cycle and takes it at the next edge. The RAM's output, 5.8 ns after its
    /// clock on the ECP5, goes into this one register, not through the queues' multiplexers.
    land: Reg<Tb>,
    p0: Reg<Bits<MAX_SMS>>,
    p1: Reg<Bits<MAX_SMS>>,
    /// A RAM read of queue `pend_k`'s next-but-one entry arrives on the RAM's read port in this
    /// cycle (it is that queue's second entry).
    pub pend: Reg<Bit>,
    pub pend_k: Reg<B4>,
    /// The RAM write of the block pushed at the last edge (enable, address, entry).
    pub wr_en: Reg<Bit>,
    pub wr_addr: Reg<Bits<PTBQ_ADDR_BITS>>,
    pub wr_data: Reg<Tb>,
    /// The RAM read on its way reads the entry written at the same edge (`wr_*`): its data is
    /// `byp_data`, not the RAM's.
    pub byp: Reg<Bit>,
    pub byp_data: Reg<Tb>,
    /// The block pushed to each queue last (for the `lifo` fault only).
    tail: [Reg<Tb>; MAX_SMS],
    ids: [Constant<B4>; MAX_SMS],
    onehot: [Constant<Bits<MAX_SMS>>; MAX_SMS],
    fault_lifo: Constant<Bit>,
    queued_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    pushes: [Signal<Local, Bit>; MAX_SMS],
    pops: [Signal<Local, Bit>; MAX_SMS],
    pop_gt2: Signal<Local, Bit>,
    pop_eq3: Signal<Local, Bit>,
    /// Queue `pop_k` is not empty.
    pop_nz: Signal<Local, Bit>,
    pop_h2: Signal<Local, Bits<PTBQ_PTR_BITS>>,
    two: Constant<Bits<PTBQ_PTR_BITS>>,
    push_tail: Signal<Local, Bits<PTBQ_PTR_BITS>>,
    pop_h0: Signal<Local, Tb>,
    pop_tail: Signal<Local, Tb>,
    /// Each queue's head and second entry as they are now (in `h0`/`h1`, or in `land`).
    e0: [Signal<Local, Tb>; MAX_SMS],
    e1: [Signal<Local, Tb>; MAX_SMS],
    p0n: Signal<Local, Bits<MAX_SMS>>,
    p1n: Signal<Local, Bits<MAX_SMS>>,
    arriving: [Signal<Local, Bit>; MAX_SMS],
    /// The RAM read arriving now, or the entry it bypassed.
    rd: Signal<Local, Tb>,
}

impl Ptbq {
    /// The PTBQs; `lifo` is the test-only fault.
    pub fn new(lifo: bool) -> Self {
        Self {
            clock: Default::default(),
            push: Default::default(),
            push_k: Default::default(),
            push_oh: Default::default(),
            pop_oh: Default::default(),
            push_entry: Default::default(),
            pop_k: Default::default(),
            pop: Default::default(),
            clear: Default::default(),
            clear_k: Default::default(),
            head_valid: Default::default(),
            head_entry: Default::default(),
            queued: Default::default(),
            q_h2: Default::default(),
            q_len: Default::default(),
            q_tail: Default::default(),
            q_nz: Default::default(),
            q_gt2: Default::default(),
            q_eq3: Default::default(),
            q_eq1: Default::default(),
            q_eq2: Default::default(),
            ram: Default::default(),
            h0: Default::default(),
            h1: Default::default(),
            land: Default::default(),
            p0: Default::default(),
            p1: Default::default(),
            pend: Default::default(),
            pend_k: Default::default(),
            wr_en: Default::default(),
            wr_addr: Default::default(),
            wr_data: Default::default(),
            byp: Default::default(),
            byp_data: Default::default(),
            tail: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            onehot: std::array::from_fn(|i| Constant::new((1u64 << i).into())),
            fault_lifo: Constant::new(lifo),
            queued_bit: Default::default(),
            pushes: Default::default(),
            pops: Default::default(),
            pop_gt2: Default::default(),
            pop_eq3: Default::default(),
            pop_nz: Default::default(),
            pop_h2: Default::default(),
            two: Constant::new(2u64.into()),
            push_tail: Default::default(),
            pop_h0: Default::default(),
            pop_tail: Default::default(),
            e0: Default::default(),
            e1: Default::default(),
            p0n: Default::default(),
            p1n: Default::default(),
            arriving: Default::default(),
            rd: Default::default(),
        }
    }
}

impl Logic for Ptbq {
    #[hdl_gen]
    fn update(&mut self) {
        for k in 0..MAX_SMS {
            self.q_len[k].clock.next = self.clock.val();
            self.q_tail[k].clock.next = self.clock.val();
            self.q_tail[k].d.next = self.q_tail[k].q.val();
            self.h0[k].clock.next = self.clock.val();
            self.h1[k].clock.next = self.clock.val();
            self.tail[k].clock.next = self.clock.val();
            self.q_h2[k].clock.next = self.clock.val();
            self.q_h2[k].d.next = self.q_h2[k].q.val();
            self.q_len[k].d.next = self.q_len[k].q.val();
            self.q_nz[k].clock.next = self.clock.val();
            self.q_nz[k].d.next = self.q_nz[k].q.val();
            self.q_gt2[k].clock.next = self.clock.val();
            self.q_gt2[k].d.next = self.q_gt2[k].q.val();
            self.q_eq3[k].clock.next = self.clock.val();
            self.q_eq3[k].d.next = self.q_eq3[k].q.val();
            self.q_eq1[k].clock.next = self.clock.val();
            self.q_eq1[k].d.next = self.q_eq1[k].q.val();
            self.q_eq2[k].clock.next = self.clock.val();
            self.q_eq2[k].d.next = self.q_eq2[k].q.val();
            // (an entry standing in `land` moves into its register at the edge, unless it is
            // replaced)
            self.e0[k].next = self.h0[k].q.val();
            if self.p0.q.val().get_bit(k) {
                self.e0[k].next = self.land.q.val();
            }
            self.e1[k].next = self.h1[k].q.val();
            if self.p1.q.val().get_bit(k) {
                self.e1[k].next = self.land.q.val();
            }
            self.h0[k].d.next = self.e0[k].val();
            self.h1[k].d.next = self.e1[k].val();
            self.tail[k].d.next = self.tail[k].q.val();
        }
        self.pend.clock.next = self.clock.val();
        self.pend_k.clock.next = self.clock.val();
        self.ram.clock.next = self.clock.val();
        dff_setup!(self, clock, wr_en, wr_addr, wr_data, byp, byp_data, land, p0, p1);

        // Which queues hold blocks.
        for k in 0..MAX_SMS {
            self.queued_bit[k].next = 0.into();
            if self.q_nz[k].q.val() {
                self.queued_bit[k].next = self.onehot[k].val();
            }
        }
        self.queued.next = self.queued_bit[0].val()
            | self.queued_bit[1].val()
            | self.queued_bit[2].val()
            | self.queued_bit[3].val()
            | self.queued_bit[4].val()
            | self.queued_bit[5].val()
            | self.queued_bit[6].val()
            | self.queued_bit[7].val()
            | self.queued_bit[8].val()
            | self.queued_bit[9].val()
            | self.queued_bit[10].val()
            | self.queued_bit[11].val()
            | self.queued_bit[12].val()
            | self.queued_bit[13].val()
            | self.queued_bit[14].val()
            | self.queued_bit[15].val();

        // The RAM read arriving now, or the entry written at the edge it was read at.
        self.rd.next = self.ram.read_data.val();
        if self.byp.q.val() {
            self.rd.next = self.byp_data.q.val();
        }

        // Pointers and head registers of the queues read and written.
        self.pop_gt2.next = false;
        self.pop_eq3.next = false;
        // (queue `pop_k` not empty: a bit select, which yosys builds as a tree on `pop_k`'s bits,
        // not the chain of the reads below: it ends in the KSRT's enables through `head_valid`)
        self.pop_nz.next = self.queued.val().get_bit(self.pop_k.val().index());
        self.pop_h2.next = 0.into();
        self.pop_h0.next = 0.into();
        self.pop_tail.next = 0.into();
        self.push_tail.next = 0.into();
        for k in 0..MAX_SMS {
            if self.pop_k.val() == self.ids[k].val() {
                self.pop_gt2.next = self.q_gt2[k].q.val();
                self.pop_eq3.next = self.q_eq3[k].q.val();
                self.pop_h2.next = self.q_h2[k].q.val() ^ self.two.val();
                self.pop_tail.next = self.tail[k].q.val();
            }
            // (the head: an AND-OR with the one-hot `pop_oh`, each queue's term local to it)
            if self.pop_oh.val().get_bit(k) {
                self.pop_h0.next = self.pop_h0.val() | self.e0[k].val();
            }
            if self.push_k.val() == self.ids[k].val() {
                self.push_tail.next = self.q_tail[k].q.val();
            }
            // Queue k's second entry is arriving from the RAM (it lands in `land`).
            self.arriving[k].next = self.pend.q.val() & (self.pend_k.q.val() == self.ids[k].val());
        }
        self.head_valid.next = self.pop_nz.val();
        // FIFO: the head; the LIFO fault reads the block pushed last.
        self.head_entry.next = self.pop_h0.val();
        if self.fault_lifo.val() {
            self.head_entry.next = self.pop_tail.val();
        }
        // A pushed block goes to the tail.
        self.wr_en.d.next = self.push.val();
        self.wr_addr.d.next = (bit_cast::<PTBQ_ADDR_BITS, INDEX_BITS>(self.push_k.val()) << 8) | bit_cast::<PTBQ_ADDR_BITS, PTBQ_PTR_BITS>(self.push_tail.val());
        self.wr_data.d.next = self.push_entry.val();
        self.ram.write_enable.next = self.wr_en.q.val();
        self.ram.write_address.next = self.wr_addr.q.val();
        self.ram.write_data.next = self.wr_data.q.val();
        // A pop of a queue holding three or more reads the entry that becomes its second.
        self.ram.read_address.next = (bit_cast::<PTBQ_ADDR_BITS, INDEX_BITS>(self.pop_k.val()) << 8) | bit_cast::<PTBQ_ADDR_BITS, PTBQ_PTR_BITS>(self.pop_h2.val());
        // (the entry being written is the last of its queue; it is the one read, head + 2, when
        // that queue now holds three: no address compare)
        self.byp.d.next = self.wr_en.q.val() & (self.wr_addr.q.val().get_bits::<INDEX_BITS>(8) == self.pop_k.val()) & self.pop_eq3.val();
        self.byp_data.d.next = self.wr_data.q.val();
        self.pend.d.next = self.pop.val() & self.pop_gt2.val() & !(self.clear.val() & (self.clear_k.val() == self.pop_k.val()));
        self.pend_k.d.next = self.pop_k.val();

        // Next state.
        self.land.d.next = self.rd.val();
        self.p0n.next = 0.into();
        self.p1n.next = 0.into();
        for k in 0..MAX_SMS {
            self.pushes[k].next = self.push_oh.val().get_bit(k);
            // (queue k's own non-empty flag, not `head_valid`, the multiplexer's output: the
            // same value when `pop_k` is k, one multiplexer shorter)
            self.pops[k].next = self.pop.val() & self.q_nz[k].q.val() & self.pop_oh.val().get_bit(k);
            if self.pushes[k].val() & !self.pops[k].val() {
                self.q_len[k].d.next = self.q_len[k].q.val() + 1;
                self.q_nz[k].d.next = true;
                self.q_gt2[k].d.next = self.q_len[k].q.val() >= 2;
                self.q_eq3[k].d.next = self.q_len[k].q.val() == 2;
                self.q_eq1[k].d.next = !self.q_nz[k].q.val();
                self.q_eq2[k].d.next = self.q_eq1[k].q.val();
            }
            if self.pops[k].val() & !self.pushes[k].val() {
                self.q_len[k].d.next = self.q_len[k].q.val() - 1;
                self.q_nz[k].d.next = self.q_len[k].q.val() != 1;
                self.q_gt2[k].d.next = self.q_len[k].q.val() >= 4;
                self.q_eq3[k].d.next = self.q_len[k].q.val() == 4;
                self.q_eq1[k].d.next = self.q_eq2[k].q.val();
                self.q_eq2[k].d.next = self.q_eq3[k].q.val();
            }
            if self.pushes[k].val() {
                self.tail[k].d.next = self.push_entry.val();
                self.q_tail[k].d.next = self.q_tail[k].q.val() + 1;
            }
            if self.pops[k].val() {
                self.q_h2[k].d.next = ((self.q_h2[k].q.val() ^ self.two.val()) + 1) ^ self.two.val();
                // The second entry moves up (the one arriving lands in `land` as the head); a
                // block pushed now lands where the queue ends.
                self.h0[k].d.next = self.e1[k].val();
                if self.arriving[k].val() {
                    self.p0n.next = self.p0n.val().replace_bit(k, true);
                }
                if self.pushes[k].val() & self.q_eq1[k].q.val() {
                    self.h0[k].d.next = self.push_entry.val();
                    self.p0n.next = self.p0n.val().replace_bit(k, false);
                }
                if self.pushes[k].val() & self.q_eq2[k].q.val() {
                    self.h1[k].d.next = self.push_entry.val();
                }
            } else {
                if self.arriving[k].val() {
                    self.p1n.next = self.p1n.val().replace_bit(k, true);
                }
                if self.pushes[k].val() & !self.q_nz[k].q.val() {
                    self.h0[k].d.next = self.push_entry.val();
                }
                if self.pushes[k].val() & self.q_eq1[k].q.val() {
                    self.h1[k].d.next = self.push_entry.val();
                    self.p1n.next = self.p1n.val().replace_bit(k, false);
                }
            }
            if self.clear.val() & (self.clear_k.val() == self.ids[k].val()) {
                self.q_h2[k].d.next = 0.into();
                self.q_tail[k].d.next = 0.into();
                self.q_len[k].d.next = 0.into();
                self.q_nz[k].d.next = false;
                self.q_gt2[k].d.next = false;
                self.q_eq3[k].d.next = false;
                self.q_eq1[k].d.next = false;
                self.q_eq2[k].d.next = false;
            }
        }
        self.p0.d.next = self.p0n.val();
        self.p1.d.next = self.p1n.val();
    }
}
