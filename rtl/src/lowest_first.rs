//! `LowestFirst`: a registered lowest-index-first arbiter over 16 requests.
//!
//! Latency: 1 cycle (the grant for the requests sampled at a rising edge is visible after it).
//! Handshake: none; `valid` is low when no request was set. Tie-break: the lowest index wins,
//! which is the rule every mpgpu scheduling table applies when several entries qualify
//! (`docs/sched-framework.md`, Decisions). Widths come from `mpgpu_spec::units::lowest_first`.
//! rust-hdl's Verilog generator takes constants as widths and loop bounds (it evaluates them
//! in Rust), but an array or bit index inside `update` is evaluated by the generator with only
//! the loop variables known, so the top index there is the literal 15 (= `WIDTH - 1`).

pub use mpgpu_spec::units::lowest_first::{INDEX_BITS as LOWEST_FIRST_INDEX_BITS, WIDTH as LOWEST_FIRST_WIDTH};
use crate::reg::Reg;
use rust_hdl::prelude::*;

const _: () = assert!(
    LOWEST_FIRST_WIDTH - 1 == 15,
    "update's index expressions spell WIDTH - 1 as the literal 15 (the Verilog generator evaluates indices with only loop variables known)"
);

#[derive(Clone, Debug, LogicBlock)]
pub struct LowestFirst {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// One bit per requester.
    pub request: Signal<In, Bits<LOWEST_FIRST_WIDTH>>,
    /// A request was present in the last sampled cycle.
    pub valid: Signal<Out, Bit>,
    /// Index of the lowest set request bit in the last sampled cycle.
    pub index: Signal<Out, Bits<LOWEST_FIRST_INDEX_BITS>>,
    pick: Signal<Local, Bits<LOWEST_FIRST_INDEX_BITS>>,
    /// The index constants 0..WIDTH (rust-hdl's generator takes no casts of loop variables).
    ids: [Constant<Bits<LOWEST_FIRST_INDEX_BITS>>; LOWEST_FIRST_WIDTH],
    granted_valid: Reg<Bit>,
    granted_index: Reg<Bits<LOWEST_FIRST_INDEX_BITS>>,
}

impl Default for LowestFirst {
    fn default() -> Self {
        Self::new()
    }
}

impl LowestFirst {
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            request: Default::default(),
            valid: Default::default(),
            index: Default::default(),
            pick: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            granted_valid: Default::default(),
            granted_index: Default::default(),
        }
    }
}

impl LowestFirst {
    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.request.connect();
        self.connect_all();
    }
}

impl Logic for LowestFirst {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, granted_valid, granted_index);
        // Scan from the top down so that the lowest set bit is assigned last and wins (15 is
        // LOWEST_FIRST_WIDTH - 1: the generator needs literals in index expressions).
        self.pick.next = 0.into();
        for i in 0..LOWEST_FIRST_WIDTH {
            if self.request.val().get_bit(15 - i) {
                self.pick.next = self.ids[15 - i].val();
            }
        }
        self.granted_valid.d.next = self.request.val().any();
        self.granted_index.d.next = self.pick.val();
        self.valid.next = self.granted_valid.q.val();
        self.index.next = self.granted_index.q.val();
    }
}
