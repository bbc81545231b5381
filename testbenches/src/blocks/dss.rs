//! The Dynamic Spatial Sharing policy engine (`Dss`) alone: its ports and unit interface
//! (`mpgpu_spec::units::sched::dss`).

use crate::hdl_block;
use crate::host::{Cosim, Outcome, Shared};
use crate::entry::{v, variant, Block, Scope};
use crate::rtl::RtlUnit;
use crate::runs::policy_runs;
use crate::entry::{framework_fits, Build, GpuKind, Host};
use mpgpu_ref::units::framework::Policy;
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

pub(super) const BLOCK: Block = Block {
    name: "dss",
    about: "the framework's Dynamic Spatial Sharing policy engine alone",
    scope: Scope::GpuPart,
    verilog: |s| Ok(v(DssPorts { sms: s.sms, broken_tie: false })),
    broken: &[variant("lifo", "DSS ties go to the highest index", |b| b.edit("dss", |f: &mut bool| *f = true))],
    host: Some(Host {
        about: "only the DSS policy engine in RTL, inside the framework's model, under the policies dss and equal",
        gpu: GpuKind::Framework,
        default_config: "k20c",
        setup: |_| {},
        fits: framework_fits,
        install,
        soak: |_, cfg, _| policy_runs(cfg, Policy::uses_dss),
        lockstep_only: true,
        clock_gated: false,
        testbench: crate::entry::TbRun { policy: mpgpu_ref::units::framework::Policy::Dss, ..crate::entry::TbRun::of(crate::entry::TB_PRIORITY) },
    }),
};

/// The engine's RTL beside its model, in a framework model of the run's policy, if the policy
/// runs DSS.
fn install(b: &mut Build) -> Result<Option<Box<dyn Outcome>>, String> {
    let p = b.o.policy;
    if !p.uses_dss() {
        return Ok(None);
    }
    let rtl = RtlUnit::with_backend(DssPorts { sms: b.n, broken_tie: b.o.broken.of("dss") }, b.o.backend)?;
    let h = Shared::new(Cosim::outputs_only("dss", mpgpu_ref::units::dss::Dss::new(b.n), rtl).recording(b.rec.clone()).tracing(b.trace.as_deref())?);
    b.gpu.set_framework_engines(Some(Box::new(h.clone())), None)?;
    Ok(Some(Box::new(h)))
}
