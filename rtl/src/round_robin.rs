//! `RoundRobin`: the SM driver's issue arbiter in the kernel scheduling framework: grants one of
//! 16 requests per cycle, round robin; a sub-block of `Sched`.
//!
//! - The grant is combinational and one-hot (`valid` and `grant` in the same cycle as
//!   `request`): the lowest requesting index at or above the pointer, else the lowest
//!   requesting index. It is not encoded here: the framework registers the one-hot grant
//!   (`granted`, the pick's second stage) and encodes it in the next cycle (`docs/fpga.md`,
//!   tenth round).
//! - The priority is kept as a mask of the indices above the last grant (`above`), updated at
//!   the grant's edge; each of the two candidates, the lowest request in that mask and the
//!   lowest request, is isolated as `x & -x` on the carry chain, and the next mask is `x ^ -x`
//!   of the candidate granted, from the same carry chains.
//! - `pointer` (the first index to consider, as the model keeps it) follows a cycle later: it
//!   is the index after the grant registered in `granted` (wrapping to 0 after `sms - 1`).
//! Parameters: `sms` (1..=16), the requests in use (the others are never set).

use mpgpu_spec::units::sched::{INDEX_BITS, MAX_SMS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct RoundRobin {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Bit s: requester s asks for a grant.
    pub request: Signal<In, Bits<MAX_SMS>>,
    /// A request is granted.
    pub valid: Signal<Out, Bit>,
    /// The requester granted, one-hot (0 without a grant); the framework reads it registered
    /// (`granted`).
    pub grant: Signal<Local, Bits<MAX_SMS>>,
    /// The grant of the cycle before, one-hot (0 without one).
    pub granted: Signal<Out, Bits<MAX_SMS>>,
    /// Pipeline: the grant of the cycle before.
    pub last_grant: Reg<Bits<MAX_SMS>>,
    /// The first index to consider: the one after the grant in `last_grant` (a cycle after
    /// `above` moves; it is what the model keeps).
    pub pointer: Reg<Bits<INDEX_BITS>>,
    /// Bit s: s is above the last grant and below `sms` (all clear after a grant of the last
    /// requester: then the lowest request wins anyway).
    above: Reg<Bits<MAX_SMS>>,
    ids: [Constant<Bits<INDEX_BITS>>; MAX_SMS],
    /// sms - 1: the pointer wraps after it.
    last: Constant<Bits<INDEX_BITS>>,
    one: Constant<Bits<MAX_SMS>>,
    hi: Signal<Local, Bits<MAX_SMS>>,
    hi_first: Signal<Local, Bits<MAX_SMS>>,
    /// -hi and -request (two's complement): `x & -x` is x's lowest set bit, `x ^ -x` the bits
    /// above it.
    hi_neg: Signal<Local, Bits<MAX_SMS>>,
    req_neg: Signal<Local, Bits<MAX_SMS>>,
    lo_first: Signal<Local, Bits<MAX_SMS>>,
    /// The index of the grant in `last_grant`.
    index_q: Signal<Local, Bits<INDEX_BITS>>,
}

impl RoundRobin {
    /// An arbiter over requesters 0..sms (1..=16).
    pub fn new(sms: usize) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "RoundRobin supports 1..={MAX_SMS} requesters, not {sms}");
        Self {
            clock: Default::default(),
            request: Default::default(),
            valid: Default::default(),
            grant: Default::default(),
            granted: Default::default(),
            last_grant: Default::default(),
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
            index_q: Default::default(),
        }
    }
}

impl Logic for RoundRobin {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, last_grant, pointer, above);
        // The lowest set bit of each candidate set: x & -x.
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
        self.last_grant.d.next = self.grant.val();
        self.granted.next = self.last_grant.q.val();
        if self.valid.val() {
            // The indices above the grant, x ^ -x of the candidate granted (the same carry
            // chains that isolate it; not a second one on the grant).
            self.above.d.next = self.request.val() ^ self.req_neg.val();
            if self.hi.val().any() {
                self.above.d.next = self.hi.val() ^ self.hi_neg.val();
            }
        }
        // The pointer, a cycle after the grant: the index after the registered grant.
        self.index_q.next = 0.into();
        for s in 0..MAX_SMS {
            if self.last_grant.q.val().get_bit(s) {
                self.index_q.next = self.index_q.val() | self.ids[s].val();
            }
        }
        if self.last_grant.q.val().any() {
            self.pointer.d.next = self.index_q.val() + 1;
            if self.index_q.val() == self.last.val() {
                self.pointer.d.next = 0.into();
            }
        }
    }
}
