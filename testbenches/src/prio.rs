//! RTL adapter for the priority policies' scan engine.

use mpgpu_rtl::Prio;
use mpgpu_spec::units::sched::prio::{Act, In, Out};
use mpgpu_spec::Unit;
use rust_hdl::prelude::*;
use std::cell::RefCell;

pub struct PrioRtl {
    uut: RefCell<Prio>,
    sms: usize,
    mode: u8,
    broken_victim: bool,
}

impl PrioRtl {
    pub fn new(sms: usize, mode: u8, broken_victim: bool) -> Self {
        let mut uut = Prio::new(sms, mode, broken_victim);
        uut.connect_inputs();
        let s = PrioRtl { uut: RefCell::new(uut), sms, mode, broken_victim };
        s.drive(&In::default(), false);
        s
    }

    /// The rust-hdl block (for waveforms).
    pub fn block(&self) -> std::cell::Ref<'_, Prio> {
        self.uut.borrow()
    }

    fn drive(&self, i: &In, clock: bool) {
        let mut u = self.uut.borrow_mut();
        u.trigger.next = i.trigger;
        u.sm_state.next = (i.sm_state as u64).into();
        u.sm_ksr_valid.next = i.sm_ksr_valid;
        u.sm_ksr.next = (i.sm_ksr as u64 & 15).into();
        u.smk_priority.next = (i.smk_priority as u64 & 15).into();
        u.smk_age.next = (i.smk_age as u64).into();
        u.k_valid.next = i.k_valid;
        u.k_has_work.next = i.k_has_work;
        u.k_priority.next = (i.k_priority as u64 & 15).into();
        u.k_age.next = (i.k_age as u64).into();
        u.k_wants_more.next = i.k_wants_more;
        u.clock.next = Clock::from(clock);
        assert!(simulate(&mut *u, 200), "prio did not settle");
    }
}

impl Unit for PrioRtl {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        *self = PrioRtl::new(self.sms, self.mode, self.broken_victim);
    }
    fn outputs(&self, i: &In) -> Out {
        self.drive(i, false);
        let u = self.uut.borrow();
        let v = |b: u64| b as u8;
        Out {
            busy: u.busy.val(),
            addr: v(u.addr.val().to_u64()),
            act: Act::from_code(u.act.val().to_u64()),
            act_sm: v(u.act_sm.val().to_u64()),
            act_kernel: v(u.act_kernel.val().to_u64()),
            act_from: v(u.act_from.val().to_u64()),
        }
    }
    fn clock(&mut self, i: &In) {
        self.drive(i, false);
        self.drive(i, true);
    }
}
