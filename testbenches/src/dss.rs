//! RTL adapter for the DSS policy engine: drives the rust-hdl block from the unit's `In`
//! (token counts biased by 128), settles it, and reads `Out`.

use mpgpu_rtl::Dss;
use mpgpu_spec::units::sched::dss::{Act, In, Out, COUNT_BIAS};
use mpgpu_spec::Unit;
use rust_hdl::prelude::*;
use std::cell::RefCell;

pub struct DssRtl {
    uut: RefCell<Dss>,
    sms: usize,
    broken_tie: bool,
}

fn biased(c: i8) -> u64 {
    (c as i16 + COUNT_BIAS) as u64
}

impl DssRtl {
    pub fn new(sms: usize, broken_tie: bool) -> Self {
        let mut uut = Dss::new(sms, broken_tie);
        uut.connect_inputs();
        let s = DssRtl { uut: RefCell::new(uut), sms, broken_tie };
        s.drive(&In::default(), false);
        s
    }

    fn drive(&self, i: &In, clock: bool) {
        let mut u = self.uut.borrow_mut();
        u.trigger.next = i.trigger;
        u.sm_state.next = (i.sm_state as u64).into();
        u.sm_ksr_valid.next = i.sm_ksr_valid;
        u.sm_ksr.next = (i.sm_ksr as u64 & 15).into();
        u.k_valid.next = i.k_valid;
        u.k_count.next = biased(i.k_count).into();
        u.k_has_work.next = i.k_has_work;
        u.k_running.next = i.k_running;
        u.count_max.next = biased(i.count_max).into();
        u.count_min.next = biased(i.count_min).into();
        u.clock.next = Clock::from(clock);
        assert!(simulate(&mut *u, 200), "dss did not settle");
    }
}

impl DssRtl {
    /// The rust-hdl block (for waveforms).
    pub fn block(&self) -> std::cell::Ref<'_, Dss> {
        self.uut.borrow()
    }
}

impl Unit for DssRtl {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        *self = DssRtl::new(self.sms, self.broken_tie);
    }
    fn outputs(&self, i: &In) -> Out {
        self.drive(i, false);
        let u = self.uut.borrow();
        let v = |b: u64| b as u8;
        Out {
            busy: u.busy.val(),
            addr: v(u.addr.val().to_u64()),
            kmax: v(u.kmax.val().to_u64()),
            kmin: v(u.kmin.val().to_u64()),
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
