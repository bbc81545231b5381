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

fn biased(c: i8) -> u64 {
    (c as i16 + dss::COUNT_BIAS) as u64
}

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
    fn encode(&self, i: &dss::In, v: &mut [u64]) {
        let w = [
            i.trigger as u64,
            i.sm_state as u64,
            i.sm_ksr_valid as u64,
            i.sm_ksr as u64 & 15,
            i.k_valid as u64,
            biased(i.k_count),
            i.k_has_work as u64,
            i.k_running as u64,
            biased(i.count_max),
            biased(i.count_min),
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &dss::Out, v: &mut [u64]) {
        let w = [o.busy as u64, o.next_addr as u64, o.kmax as u64, o.kmin as u64, o.act.code() as u64, o.act_sm as u64, o.act_kernel as u64, o.act_from as u64];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> dss::Out {
        dss::Out {
            busy: v[0] != 0,
            next_addr: v[1] as u8,
            kmax: v[2] as u8,
            kmin: v[3] as u8,
            act: dss::Act::from_code(v[4]),
            act_sm: v[5] as u8,
            act_kernel: v[6] as u8,
            act_from: v[7] as u8,
        }
    }
    fn state(&self, _: &Regs) {}
    fn board(&self, config: BoardConfig) -> Option<Box<dyn Wrapper>> {
        let d = *self;
        Some(wrapper(config, move || BoardDss::new(Dss::new(d.sms, d.broken_tie), config)))
    }
}
