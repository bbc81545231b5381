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
//!   chain; the index is encoded from the one-hot grant, and the next mask is `x ^ -x` of the
//!   candidate granted, from the same carry chains.
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
    id_bit: [Signal<Local, Bits<INDEX_BITS>>; 16],
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
            hi: Default::default(),
            hi_first: Default::default(),
            hi_neg: Default::default(),
            req_neg: Default::default(),
            lo_first: Default::default(),
            id_bit: Default::default(),
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
        for s in 0..16 {
            self.id_bit[s].next = 0.into();
            if self.grant.val().get_bit(s) {
                self.id_bit[s].next = self.ids[s].val();
            }
        }
        self.index.next = self.id_bit[0].val()
            | self.id_bit[1].val()
            | self.id_bit[2].val()
            | self.id_bit[3].val()
            | self.id_bit[4].val()
            | self.id_bit[5].val()
            | self.id_bit[6].val()
            | self.id_bit[7].val()
            | self.id_bit[8].val()
            | self.id_bit[9].val()
            | self.id_bit[10].val()
            | self.id_bit[11].val()
            | self.id_bit[12].val()
            | self.id_bit[13].val()
            | self.id_bit[14].val()
            | self.id_bit[15].val();
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
