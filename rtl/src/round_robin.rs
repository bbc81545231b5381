//! `RoundRobin`: the SM driver's issue arbiter in the kernel scheduling framework: grants one of
//! 16 requests per cycle, round robin; a sub-block of `Sched`.
//!
//! - The grant is combinational (`valid`, `index` and the one-hot `grant` in the same cycle as
//!   `request`): the lowest requesting index at or above `pointer`, else the lowest requesting
//!   index.
//! - On a grant the pointer moves past the granted index at the clock edge (wrapping to 0 after
//!   `sms - 1`); without one it stays.
//! - Structure, for timing (`docs/fpga.md`): the pointer is also kept as a mask of the indices
//!   above the last grant (`above`), and each of the two candidates, the lowest request in that
//!   mask and the lowest request, is isolated as `x & -x` on the carry chain, not by a priority
//!   chain; the next mask is `x ^ -x` of the
//!   candidate granted, from the same carry chains.
//! - Each requester brings a 4-bit `data` word (the framework's: the kernel of the SM); the
//!   granted one's is on `data_out`. It and `index` come from two trees of 2:1 multiplexers
//!   (the lowest requester in `above`, the lowest requester), four levels each, selected by
//!   whether any request is in `above`: not from an encoder behind the one-hot grant.
//! Parameters: `sms` (1..=16), the requests in use (the others are never set).

use mpgpu_spec::units::sched::{INDEX_BITS, MAX_SMS};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_SMS == 16 && INDEX_BITS == 4);

#[derive(LogicBlock)]
pub struct RoundRobin {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Bit s: requester s asks for a grant.
    pub request: Signal<In, Bits<16>>,
    /// A request is granted.
    pub valid: Signal<Out, Bit>,
    /// The requester granted.
    pub index: Signal<Out, Bits<INDEX_BITS>>,
    /// Requester s's data word, at bits 4s+3..4s.
    pub data: Signal<In, Bits<64>>,
    /// The granted requester's data word (0 without a grant).
    pub data_out: Signal<Out, Bits<4>>,
    /// The requester granted, one-hot (0 without a grant).
    pub grant: Signal<Out, Bits<16>>,
    /// The first index to consider next.
    pub pointer: DFF<Bits<INDEX_BITS>>,
    /// Bit s: s is at or above the pointer and below `sms` (all clear when the pointer is 0:
    /// then the lowest request wins anyway).
    above: DFF<Bits<16>>,
    ids: [Constant<Bits<INDEX_BITS>>; 16],
    /// sms - 1: the pointer wraps after it.
    last: Constant<Bits<INDEX_BITS>>,
    one: Constant<Bits<16>>,
    hi: Signal<Local, Bits<16>>,
    hi_first: Signal<Local, Bits<16>>,
    /// -hi and -request (two's complement): `x & -x` is x's lowest set bit, `x ^ -x` the bits
    /// above it.
    hi_neg: Signal<Local, Bits<16>>,
    req_neg: Signal<Local, Bits<16>>,
    lo_first: Signal<Local, Bits<16>>,
    /// The two trees, level by level (`*v`: a request below the node; `*i`: the lowest's index;
    /// `*d`: its data): `h*` over the requests in `above`, `r*` over all of them.
    hv1: [Signal<Local, Bit>; 8],
    hi1: [Signal<Local, Bits<INDEX_BITS>>; 8],
    hd1: [Signal<Local, Bits<4>>; 8],
    hv2: [Signal<Local, Bit>; 4],
    hi2: [Signal<Local, Bits<INDEX_BITS>>; 4],
    hd2: [Signal<Local, Bits<4>>; 4],
    hv3: [Signal<Local, Bit>; 2],
    hi3: [Signal<Local, Bits<INDEX_BITS>>; 2],
    hd3: [Signal<Local, Bits<4>>; 2],
    rv1: [Signal<Local, Bit>; 8],
    ri1: [Signal<Local, Bits<INDEX_BITS>>; 8],
    rd1: [Signal<Local, Bits<4>>; 8],
    rv2: [Signal<Local, Bit>; 4],
    ri2: [Signal<Local, Bits<INDEX_BITS>>; 4],
    rd2: [Signal<Local, Bits<4>>; 4],
    rv3: [Signal<Local, Bit>; 2],
    ri3: [Signal<Local, Bits<INDEX_BITS>>; 2],
    rd3: [Signal<Local, Bits<4>>; 2],
    word: [Signal<Local, Bits<4>>; 16],
}

impl RoundRobin {
    /// An arbiter over requesters 0..sms (1..=16).
    pub fn new(sms: usize) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "RoundRobin supports 1..={MAX_SMS} requesters, not {sms}");
        Self {
            clock: Default::default(),
            request: Default::default(),
            valid: Default::default(),
            index: Default::default(),
            grant: Default::default(),
            pointer: Default::default(),
            above: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            last: Constant::new(((sms - 1) as u64).into()),
            one: Constant::new(1u64.into()),
            data: Default::default(),
            data_out: Default::default(),
            hi: Default::default(),
            hi_first: Default::default(),
            hi_neg: Default::default(),
            req_neg: Default::default(),
            lo_first: Default::default(),
            hv1: Default::default(),
            hi1: Default::default(),
            hd1: Default::default(),
            hv2: Default::default(),
            hi2: Default::default(),
            hd2: Default::default(),
            hv3: Default::default(),
            hi3: Default::default(),
            hd3: Default::default(),
            rv1: Default::default(),
            ri1: Default::default(),
            rd1: Default::default(),
            rv2: Default::default(),
            ri2: Default::default(),
            rd2: Default::default(),
            rv3: Default::default(),
            ri3: Default::default(),
            rd3: Default::default(),
            word: Default::default(),
        }
    }
}

impl Logic for RoundRobin {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pointer, above);
        // The lowest set bit of each candidate set: x & -x (literal bounds: 16 = MAX_SMS).
        self.hi.next = self.request.val() & self.above.q.val();
        self.hi_neg.next = !self.hi.val() + self.one.val();
        self.req_neg.next = !self.request.val() + self.one.val();
        self.hi_first.next = self.hi.val() & self.hi_neg.val();
        self.lo_first.next = self.request.val() & self.req_neg.val();
        self.grant.next = self.lo_first.val();
        if self.hi.val().any() {
            self.grant.next = self.hi_first.val();
        }
        self.valid.next = self.request.val().any();
        // The two trees: at each node the lower half's lowest request if it has one, else the
        // upper half's.
        for s in 0..16 {
            self.word[s].next = self.data.val().get_bits::<4>(4 * s);
        }
        for j in 0..8 {
            self.hv1[j].next = self.hi.val().get_bit(2 * j) | self.hi.val().get_bit(2 * j + 1);
            self.hi1[j].next = self.ids[2 * j + 1].val();
            self.hd1[j].next = self.word[2 * j + 1].val();
            if self.hi.val().get_bit(2 * j) {
                self.hi1[j].next = self.ids[2 * j].val();
                self.hd1[j].next = self.word[2 * j].val();
            }
            self.rv1[j].next = self.request.val().get_bit(2 * j) | self.request.val().get_bit(2 * j + 1);
            self.ri1[j].next = self.ids[2 * j + 1].val();
            self.rd1[j].next = self.word[2 * j + 1].val();
            if self.request.val().get_bit(2 * j) {
                self.ri1[j].next = self.ids[2 * j].val();
                self.rd1[j].next = self.word[2 * j].val();
            }
        }
        for j in 0..4 {
            self.hv2[j].next = self.hv1[2 * j].val() | self.hv1[2 * j + 1].val();
            self.hi2[j].next = self.hi1[2 * j + 1].val();
            self.hd2[j].next = self.hd1[2 * j + 1].val();
            if self.hv1[2 * j].val() {
                self.hi2[j].next = self.hi1[2 * j].val();
                self.hd2[j].next = self.hd1[2 * j].val();
            }
            self.rv2[j].next = self.rv1[2 * j].val() | self.rv1[2 * j + 1].val();
            self.ri2[j].next = self.ri1[2 * j + 1].val();
            self.rd2[j].next = self.rd1[2 * j + 1].val();
            if self.rv1[2 * j].val() {
                self.ri2[j].next = self.ri1[2 * j].val();
                self.rd2[j].next = self.rd1[2 * j].val();
            }
        }
        for j in 0..2 {
            self.hv3[j].next = self.hv2[2 * j].val() | self.hv2[2 * j + 1].val();
            self.hi3[j].next = self.hi2[2 * j + 1].val();
            self.hd3[j].next = self.hd2[2 * j + 1].val();
            if self.hv2[2 * j].val() {
                self.hi3[j].next = self.hi2[2 * j].val();
                self.hd3[j].next = self.hd2[2 * j].val();
            }
            self.rv3[j].next = self.rv2[2 * j].val() | self.rv2[2 * j + 1].val();
            self.ri3[j].next = self.ri2[2 * j + 1].val();
            self.rd3[j].next = self.rd2[2 * j + 1].val();
            if self.rv2[2 * j].val() {
                self.ri3[j].next = self.ri2[2 * j].val();
                self.rd3[j].next = self.rd2[2 * j].val();
            }
        }
        // (the roots; without a request the index is meaningless and the data 0)
        self.index.next = self.ri3[1].val();
        self.data_out.next = 0.into();
        if self.rv3[1].val() {
            self.data_out.next = self.rd3[1].val();
        }
        if self.rv3[0].val() {
            self.index.next = self.ri3[0].val();
            self.data_out.next = self.rd3[0].val();
        }
        if self.hv3[1].val() {
            self.index.next = self.hi3[1].val();
            self.data_out.next = self.hd3[1].val();
        }
        if self.hv3[0].val() {
            self.index.next = self.hi3[0].val();
            self.data_out.next = self.hd3[0].val();
        }
        if self.valid.val() {
            // The indices above the grant, x ^ -x of the candidate granted (the same carry
            // chains that isolate it; not a second one on the grant).
            self.above.d.next = self.request.val() ^ self.req_neg.val();
            if self.hi.val().any() {
                self.above.d.next = self.hi.val() ^ self.hi_neg.val();
            }
            self.pointer.d.next = self.index.val() + 1;
            if self.index.val() == self.last.val() {
                self.pointer.d.next = 0.into();
            }
        }
    }
}
