//! The Dynamic Spatial Sharing policy engine (`Dss`) alone: its ports and unit interface
//! (`mpgpu_spec::units::sched::dss`).

use crate::hdl_block;
use crate::serial::{wrapper, Wrapper};
use mpgpu_rtl::board::BoardConfig;
use mpgpu_rtl::BoardDss;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::Dss;
use mpgpu_spec::units::sched::dss;

hdl_block!(Dss {
    inputs: [trigger, sm_state, sm_ksr_valid, sm_ksr, k_valid, k_count, k_has_work, k_running, count_max, count_min],
    outputs: [busy, next_addr, kmax, kmin, act, act_sm, act_kernel, act_from],
    registers: [],
    arrays: [],
});

/// The DSS policy engine (token counts biased by 128 on the wire).
#[derive(Clone, Copy, Debug)]
pub struct DssPorts {
    pub sms: usize,
    pub broken_tie: bool,
}

impl Ports for DssPorts {
    type In = dss::In;
    type Out = dss::Out;
    type State = ();
    type Block = Dss;
    fn name(&self) -> String {
        "dss".into()
    }
    fn block(&self) -> Dss {
        let mut b = Dss::new(self.sms, self.broken_tie);
        b.connect_inputs();
        b
    }
    fn state(&self, _: &Regs) {}
    fn board(&self, config: BoardConfig) -> Option<Box<dyn Wrapper>> {
        let d = *self;
        Some(wrapper(config, move || BoardDss::new(Dss::new(d.sms, d.broken_tie), config)))
    }
}
