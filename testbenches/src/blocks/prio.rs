//! The priority policies' scan engine (`Prio`: FCFS, NPQ, PPQ) alone: its ports and unit interface
//! (`mpgpu_spec::units::sched::prio`).

use crate::hdl_block;
use crate::serial::{wrapper, Wrapper};
use mpgpu_rtl::board::BoardConfig;
use mpgpu_rtl::BoardPrio;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::Prio;
use mpgpu_spec::units::sched::{dss, prio, PolicyCode};

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
    fn encode(&self, i: &prio::In, v: &mut [u64]) {
        let w = [
            i.trigger as u64,
            i.sm_state as u64,
            i.sm_ksr_valid as u64,
            i.sm_ksr as u64 & 15,
            i.smk_priority as u64 & 15,
            i.smk_age as u64,
            i.k_valid as u64,
            i.k_has_work as u64,
            i.k_priority as u64 & 15,
            i.k_age as u64,
            i.k_wants_more as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &prio::Out, v: &mut [u64]) {
        let w = [o.busy as u64, o.next_addr as u64, o.act.code() as u64, o.act_sm as u64, o.act_kernel as u64, o.act_from as u64];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> prio::Out {
        prio::Out { busy: v[0] != 0, next_addr: v[1] as u8, act: dss::Act::from_code(v[2]), act_sm: v[3] as u8, act_kernel: v[4] as u8, act_from: v[5] as u8 }
    }
    fn state(&self, _: &Regs) {}
    fn board(&self, config: BoardConfig) -> Option<Box<dyn Wrapper>> {
        let e = *self;
        Some(wrapper(config, move || BoardPrio::new(Prio::new(e.sms, e.mode, e.broken_victim), config)))
    }
}
