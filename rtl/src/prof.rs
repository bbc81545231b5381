//! `Prof`: one SM's Warped-Slicer sampling counters (Xu et al., ISCA 2016, §IV-A, §V-I;
//! interface and timing in `mpgpu_spec::units::prof`, decisions in `docs/warped-slicer.md`).
//!
//! Two running counters (warp-instructions issued, long-memory stall cycles) that count in
//! the window's cycles and restart from the window's first cycle's events, and three latched
//! registers (the counts and the resident CTAs) taken at its last cycle's edge. The outputs
//! are the latched registers.

use crate::reg::Reg;
use mpgpu_spec::units::prof::{BLOCK_BITS, INST_BITS, ISSUED_BITS, STALL_BITS};
use rust_hdl::prelude::*;

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProfFaults {
    /// The counts latch one cycle late: at the edge after the window's last cycle, from the
    /// running counters (which the last cycle's events have already reached).
    pub late_latch: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Prof {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    pub run: Signal<In, Bit>,
    pub first: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub issued: Signal<In, Bits<ISSUED_BITS>>,
    pub stall: Signal<In, Bit>,
    pub blocks_in: Signal<In, Bits<BLOCK_BITS>>,
    pub insts: Signal<Out, Bits<INST_BITS>>,
    pub stalls: Signal<Out, Bits<STALL_BITS>>,
    pub blocks: Signal<Out, Bits<BLOCK_BITS>>,
    late: Constant<Bit>,
    ni: Signal<Local, Bits<INST_BITS>>,
    ns: Signal<Local, Bits<STALL_BITS>>,
    base_s: Signal<Local, Bits<STALL_BITS>>,
    one: Constant<Bits<STALL_BITS>>,
    pub cnt_insts: Reg<Bits<INST_BITS>>,
    pub cnt_stalls: Reg<Bits<STALL_BITS>>,
    pub lat_insts: Reg<Bits<INST_BITS>>,
    pub lat_stalls: Reg<Bits<STALL_BITS>>,
    pub lat_blocks: Reg<Bits<BLOCK_BITS>>,
    /// The broken variant's delayed latch (`last` a cycle later).
    pub last_q: Reg<Bit>,
}

impl Prof {
    pub fn new(faults: ProfFaults) -> Self {
        Self {
            clock: Default::default(),
            run: Default::default(),
            first: Default::default(),
            last: Default::default(),
            issued: Default::default(),
            stall: Default::default(),
            blocks_in: Default::default(),
            insts: Default::default(),
            stalls: Default::default(),
            blocks: Default::default(),
            late: Constant::new(faults.late_latch),
            ni: Default::default(),
            ns: Default::default(),
            base_s: Default::default(),
            one: Constant::new(1u64.into()),
            cnt_insts: Default::default(),
            cnt_stalls: Default::default(),
            lat_insts: Default::default(),
            lat_stalls: Default::default(),
            lat_blocks: Default::default(),
            last_q: Default::default(),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.run.connect();
        self.first.connect();
        self.last.connect();
        self.issued.connect();
        self.stall.connect();
        self.blocks_in.connect();
        self.connect_all();
    }
}

impl Logic for Prof {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, cnt_insts, cnt_stalls, lat_insts, lat_stalls, lat_blocks, last_q);
        self.insts.next = self.lat_insts.q.val();
        self.stalls.next = self.lat_stalls.q.val();
        self.blocks.next = self.lat_blocks.q.val();
        self.ni.next = self.cnt_insts.q.val() + bit_cast::<INST_BITS, ISSUED_BITS>(self.issued.val());
        self.base_s.next = self.cnt_stalls.q.val();
        if self.first.val() {
            self.ni.next = bit_cast::<INST_BITS, ISSUED_BITS>(self.issued.val());
            self.base_s.next = 0.into();
        }
        self.ns.next = self.base_s.val();
        if self.stall.val() {
            self.ns.next = self.base_s.val() + self.one.val();
        }
        self.last_q.d.next = self.run.val() & self.last.val();
        if self.run.val() {
            self.cnt_insts.d.next = self.ni.val();
            self.cnt_stalls.d.next = self.ns.val();
            if self.last.val() & !self.late.val() {
                self.lat_insts.d.next = self.ni.val();
                self.lat_stalls.d.next = self.ns.val();
                self.lat_blocks.d.next = self.blocks_in.val();
            }
        }
        if self.late.val() & self.last_q.q.val() {
            self.lat_insts.d.next = self.cnt_insts.q.val();
            self.lat_stalls.d.next = self.cnt_stalls.q.val();
            self.lat_blocks.d.next = self.blocks_in.val();
        }
    }
}
