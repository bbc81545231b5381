//! The priority policies' scan engine (`Prio`: FCFS, NPQ, PPQ) alone: its ports and unit interface
//! (`mpgpu_spec::units::sched::prio`).

use crate::hdl_block;
use crate::serial::{wrapper, Wrapper};
use mpgpu_rtl::board::BoardConfig;
use mpgpu_rtl::BoardPrio;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::Prio;
use mpgpu_spec::units::sched::{prio, PolicyCode};

hdl_block!(Prio {
    inputs: [trigger, sm_state, sm_ksr_valid, sm_ksr, smk_priority, smk_age, k_valid, k_has_work, k_priority, k_age, k_wants_more],
    outputs: [busy, next_addr, act, act_sm, act_kernel, act_from],
    registers: [],
    arrays: [],
});

/// The priority policies' scan engine in mode `mode` (one of `PolicyCode::PRIORITY`).
#[derive(Clone, Copy, Debug)]
pub struct PrioPorts {
    pub sms: usize,
    pub mode: PolicyCode,
    pub broken_victim: bool,
}

impl Ports for PrioPorts {
    type In = prio::In;
    type Out = prio::Out;
    type State = ();
    type Block = Prio;
    fn name(&self) -> String {
        "prio".into()
    }
    fn block(&self) -> Prio {
        let mut b = Prio::new(self.sms, self.mode, self.broken_victim);
        b.connect_inputs();
        b
    }
    fn state(&self, _: &Regs) {}
    fn board(&self, config: BoardConfig) -> Option<Box<dyn Wrapper>> {
        let e = *self;
        Some(wrapper(config, move || BoardPrio::new(Prio::new(e.sms, e.mode, e.broken_victim), config)))
    }
}
