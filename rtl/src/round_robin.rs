//! `RoundRobin`: the SM driver's issue arbiter in the kernel scheduling framework: grants one of
//! 16 requests per cycle, round robin; a sub-block of `Sched`.
//!
//! - The grant is combinational (`valid`, `index` in the same cycle as `request`): the lowest
//!   requesting index at or above `pointer`, else the lowest requesting index.
//! - On a grant the pointer moves past the granted index at the clock edge (wrapping to 0 after
//!   `sms - 1`); without one it stays.
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
    /// The first index to consider next.
    pub pointer: DFF<Bits<INDEX_BITS>>,
    ids: [Constant<Bits<INDEX_BITS>>; 16],
    /// sms - 1: the pointer wraps after it.
    last: Constant<Bits<INDEX_BITS>>,
    all_ones: Constant<Bits<16>>,
    /// The requests at or above the pointer.
    hi_mask: Signal<Local, Bits<16>>,
    hi_valid: Signal<Local, Bit>,
    hi_index: Signal<Local, Bits<INDEX_BITS>>,
    lo_index: Signal<Local, Bits<INDEX_BITS>>,
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
            pointer: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            last: Constant::new(((sms - 1) as u64).into()),
            all_ones: Constant::new(0xffffu64.into()),
            hi_mask: Default::default(),
            hi_valid: Default::default(),
            hi_index: Default::default(),
            lo_index: Default::default(),
        }
    }
}

impl Logic for RoundRobin {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pointer);
        // Scan from the top down so that the lowest index is assigned last and wins (literal
        // bounds: 16 = MAX_SMS).
        self.hi_mask.next = self.all_ones.val() << self.pointer.q.val();
        self.valid.next = false;
        self.hi_valid.next = false;
        self.lo_index.next = 0.into();
        self.hi_index.next = 0.into();
        for j in 0..16 {
            if self.request.val().get_bit(15 - j) {
                self.valid.next = true;
                self.lo_index.next = self.ids[15 - j].val();
                if self.hi_mask.val().get_bit(15 - j) {
                    self.hi_valid.next = true;
                    self.hi_index.next = self.ids[15 - j].val();
                }
            }
        }
        self.index.next = self.lo_index.val();
        if self.hi_valid.val() {
            self.index.next = self.hi_index.val();
        }
        if self.valid.val() {
            self.pointer.d.next = self.index.val() + 1;
            if self.index.val() == self.last.val() {
                self.pointer.d.next = 0.into();
            }
        }
    }
}
