//! The priority policies' scan engine (`Prio`: FCFS, NPQ, PPQ) alone: its ports and unit interface
//! (`mpgpu_spec::units::sched::prio`).

use crate::hdl_block;
use crate::host::{Cosim, Outcome, Shared};
use crate::entry::{v, variant, Block, Scope};
use crate::rtl::RtlUnit;
use crate::runs::policy_runs;
use crate::entry::{framework_fits, Build, GpuKind, Host};
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

pub(super) const BLOCK: Block = Block {
    name: "prio",
    about: "the framework's priority policy engine (FCFS, NPQ, PPQ) alone",
    scope: Scope::GpuPart,
    // (PPQ shared keeps every path; the mode is a constant of the block)
    verilog: |s| Ok(v(PrioPorts { sms: s.sms, mode: PolicyCode::PpqShared, broken_victim: false })),
    broken: &[variant("lifo", "the victim is the oldest kernel's SM", |b| b.edit("prio", |f: &mut bool| *f = true))],
    host: Some(Host {
        about: "only the priority policy engine in RTL, inside the framework's model, under the policies fcfs, npq, ppq-exclusive and ppq-shared",
        gpu: GpuKind::Framework,
        default_config: "k20c",
        setup: |_| {},
        fits: framework_fits,
        install,
        soak: |_, cfg, _| policy_runs(cfg, |p| !p.uses_dss()),
        lockstep_only: true,
        clock_gated: false,
        testbench: crate::entry::TbRun { policy: mpgpu_ref::units::framework::Policy::PpqShared, ..crate::entry::TbRun::of(crate::entry::TB_PRIORITY) },
    }),
};

/// The engine's RTL beside its model, in a framework model of the run's policy, if the policy
/// is one of the priority policies.
fn install(b: &mut Build) -> Result<Option<Box<dyn Outcome>>, String> {
    let p = b.o.policy;
    if p.uses_dss() {
        return Ok(None);
    }
    let mode = p.code();
    let rtl = RtlUnit::with_backend(PrioPorts { sms: b.n, mode, broken_victim: b.o.broken.of("prio") }, b.o.backend)?;
    let h = Shared::new(Cosim::outputs_only("prio", mpgpu_ref::units::prio::Prio::new(b.n, mode), rtl).recording(b.rec.clone()).tracing(b.trace.as_deref())?);
    b.gpu.set_framework_engines(None, Some(Box::new(h.clone())))?;
    Ok(Some(Box::new(h)))
}
