//! RTL adapter for the lowest-index-first arbiter: drives the rust-hdl block from the unit's
//! `In`, settles it, and reads `Out`.

use mpgpu_rtl::LowestFirst;
use mpgpu_spec::units::lowest_first::{In, Out};
use mpgpu_spec::Unit;
use rust_hdl::prelude::*;
use std::cell::RefCell;

pub struct LowestFirstRtl {
    uut: RefCell<LowestFirst>,
}

impl Default for LowestFirstRtl {
    fn default() -> Self {
        Self::new()
    }
}

impl LowestFirstRtl {
    pub fn new() -> Self {
        let mut uut = LowestFirst::new();
        uut.connect_inputs();
        let s = LowestFirstRtl { uut: RefCell::new(uut) };
        s.settle(&In::default(), false);
        s
    }

    fn settle(&self, i: &In, clock: bool) {
        let mut u = self.uut.borrow_mut();
        u.request.next = (i.request as u64).into();
        u.clock.next = Clock::from(clock);
        assert!(simulate(&mut *u, 100), "lowest_first did not settle");
    }
}

impl Unit for LowestFirstRtl {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        *self = Self::new();
    }
    fn outputs(&self, i: &In) -> Out {
        self.settle(i, false);
        let u = self.uut.borrow();
        Out { valid: u.valid.val(), index: u.index.val().to_u64() as u8 }
    }
    fn clock(&mut self, i: &In) {
        self.settle(i, false);
        self.settle(i, true);
    }
}
