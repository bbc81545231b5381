//! Whole-GPU co-simulation: an RTL block runs inside the cycle-level GPU model, its outputs
//! driving the GPU (RTL in the loop) while its reference model runs beside it on the same
//! inputs and every cycle's outputs are compared. The waveform (RTL ports and registers, the
//! model's expected outputs, a mismatch marker) is recorded as it goes.
//!
//! The units co-simulated: the whole scheduling framework ([`run_sched`]: `Sched` in place of
//! the framework model, its SMST, KSRT, PTBQ occupancy and tokens compared every cycle as well),
//! or only its policy engine ([`run`]: the DSS engine for `dss` and `equal`, the priority scan
//! engine for `fcfs`, `npq`, `ppq-excl`, `ppq-shared`).

use crate::dss::DssRtl;
use crate::lockstep::{InLoop, Mismatch};
use crate::prio::PrioRtl;
use crate::sched::SchedRtl;
use crate::vcd::{Field, VcdRecorder};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::units::dss::Dss;
use mpgpu_ref::units::framework::{Framework, Mechanism, Policy, SchedUnit};
use mpgpu_ref::units::prio::Prio;
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::SchedFaults;
use mpgpu_spec::units::sched::{dss, fw, prio};
use mpgpu_spec::Unit;
use rust_hdl::prelude::Block;
use serde::Serialize;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// An RTL adapter whose block can be probed for waveforms.
pub trait Probed {
    fn with_block(&self, f: &mut dyn FnMut(&dyn Block));
}

impl Probed for DssRtl {
    fn with_block(&self, f: &mut dyn FnMut(&dyn Block)) {
        f(&*self.block())
    }
}

impl Probed for SchedRtl {
    fn with_block(&self, f: &mut dyn FnMut(&dyn Block)) {
        f(&*self.block())
    }
}

impl Probed for PrioRtl {
    fn with_block(&self, f: &mut dyn FnMut(&dyn Block)) {
        f(&*self.block())
    }
}

/// A pair in the loop, recording a waveform of the clocked cycles in
/// `record_from..=record_until`.
pub struct Cosim<M: Unit, R: Unit<In = M::In, Out = M::Out>, S = ()> {
    pub pair: InLoop<M, R, S>,
    pub vcd: Option<VcdRecorder>,
    pub record_from: u64,
    pub record_until: u64,
    pub fields: fn(&M::Out) -> Vec<Field>,
}

/// A handle on a [`Cosim`] that the GPU model holds as its unit while the caller keeps another
/// to read the outcome.
pub struct Shared<M: Unit, R: Unit<In = M::In, Out = M::Out>, S = ()>(pub Rc<RefCell<Cosim<M, R, S>>>);

impl<M: Unit, R: Unit<In = M::In, Out = M::Out>, S> Clone for Shared<M, R, S> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<M, R, S> Unit for Shared<M, R, S>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out> + Probed,
    M::In: Serialize,
    M::Out: Serialize,
    S: Serialize + PartialEq,
{
    type In = M::In;
    type Out = M::Out;
    fn reset(&mut self) {
        self.0.borrow_mut().pair.reset();
    }
    fn outputs(&self, i: &M::In) -> M::Out {
        self.0.borrow().pair.outputs(i)
    }
    fn clock(&mut self, i: &M::In) {
        let mut c = self.0.borrow_mut();
        let cycle = c.pair.cycle;
        if (c.record_from..=c.record_until).contains(&cycle) {
            let expected = c.pair.model.outputs(i);
            let got = c.pair.rtl.outputs(i);
            let f = (c.fields)(&expected);
            // Marked where the outputs differ, and at the first mismatch (of state, too).
            let marked = expected != got || c.pair.mismatch().is_some_and(|m| m.cycle == cycle);
            let Cosim { pair, vcd, .. } = &mut *c;
            pair.rtl.with_block(&mut |blk| vcd.get_or_insert_with(|| VcdRecorder::new(blk, &f)).sample(cycle, blk, &f, marked));
        }
        c.pair.clock(i);
    }
}

/// The whole framework in the GPU's loop: its RTL drives the GPU, the model beside it is what
/// the GPU asks for reports and idle detection, and the run stops at the first mismatch.
impl SchedUnit for Shared<Framework, SchedRtl, fw::State> {
    fn model(&self) -> Box<dyn std::ops::Deref<Target = Framework> + '_> {
        Box::new(std::cell::Ref::map(self.0.borrow(), |c| &c.pair.model))
    }
    fn quiet(&self) -> bool {
        let c = self.0.borrow();
        let (model, rtl) = (c.pair.model.busy(), c.pair.rtl.busy_now());
        if model != rtl {
            c.pair.flag("busy (after the edge)", &model, &rtl);
        }
        !rtl
    }
    fn halted(&self) -> Option<String> {
        self.0.borrow().pair.mismatch().map(|m| format!("the RTL and the model parted at co-simulation cycle {}", m.cycle))
    }
}

/// The framework's outputs as waveform fields.
pub fn sched_fields(o: &fw::Out) -> Vec<Field> {
    let i = o.issue;
    vec![
        ("busy", 1, o.busy as u64),
        ("cmd_taken", 1, o.cmd_taken as u64),
        ("issue_valid", 1, i.is_some() as u64),
        ("issue_sm", 4, i.map_or(0, |i| i.sm as u64)),
        ("issue_handle", 16, i.map_or(0, |i| i.handle as u64)),
        ("issue_tb", 20, i.map_or(0, |i| i.tb as u64)),
        ("issue_restore", 1, i.is_some_and(|i| i.restore) as u64),
        ("preempt_valid", 1, o.preempt.is_some() as u64),
        ("preempt_sm", 4, o.preempt.unwrap_or(0) as u64),
        ("retired_valid", 1, o.retired.is_some() as u64),
        ("retired_handle", 16, o.retired.unwrap_or(0) as u64),
    ]
}

/// The DSS engine's outputs as waveform fields (`act`: 0 none, 1 assign, 2 reserve).
pub fn dss_fields(o: &dss::Out) -> Vec<Field> {
    let mut f = prio_like(o.busy, o.addr, o.act, o.act_sm, o.act_kernel, o.act_from);
    f.push(("kmax", 4, o.kmax as u64));
    f.push(("kmin", 4, o.kmin as u64));
    f
}

/// The priority engine's outputs as waveform fields.
pub fn prio_fields(o: &prio::Out) -> Vec<Field> {
    prio_like(o.busy, o.addr, o.act, o.act_sm, o.act_kernel, o.act_from)
}

fn prio_like(busy: bool, addr: u8, act: dss::Act, sm: u8, kernel: u8, from: u8) -> Vec<Field> {
    vec![("busy", 1, busy as u64), ("addr", 4, addr as u64), ("act", 2, act.code() as u64), ("act_sm", 4, sm as u64), ("act_kernel", 4, kernel as u64), ("act_from", 4, from as u64)]
}

/// What a co-simulation run found.
pub struct CosimReport {
    pub result: Option<RunResult>,
    /// Cycles the unit was clocked and checked.
    pub cycles_checked: u64,
    pub mismatch: Option<Mismatch>,
    /// Where the waveform went, if anywhere.
    pub vcd: Option<PathBuf>,
    pub error: Option<SimError>,
}

/// Cycles of waveform kept before a mismatch when no waveform was asked for.
pub const MISMATCH_WINDOW: u64 = 256;

/// Which engine an RTL in the loop replaces, and the outcome handle for each.
enum Handle {
    Dss(Shared<Dss, DssRtl>),
    Prio(Shared<Prio, PrioRtl>),
    Sched(Shared<Framework, SchedRtl, fw::State>),
}

impl Handle {
    fn mismatch(&self) -> Option<Mismatch> {
        match self {
            Handle::Dss(h) => h.0.borrow().pair.mismatch(),
            Handle::Prio(h) => h.0.borrow().pair.mismatch(),
            Handle::Sched(h) => h.0.borrow().pair.mismatch(),
        }
    }
    fn cycles(&self) -> u64 {
        match self {
            Handle::Dss(h) => h.0.borrow().pair.cycle,
            Handle::Prio(h) => h.0.borrow().pair.cycle,
            Handle::Sched(h) => h.0.borrow().pair.cycle,
        }
    }
    fn write_vcd(&self, p: &Path) -> Result<(), String> {
        let res = match self {
            Handle::Dss(h) => h.0.borrow().vcd.as_ref().map(|r| r.write(p)),
            Handle::Prio(h) => h.0.borrow().vcd.as_ref().map(|r| r.write(p)),
            Handle::Sched(h) => h.0.borrow().vcd.as_ref().map(|r| r.write(p)),
        };
        res.unwrap_or(Ok(())).map_err(|e| format!("cannot write {}: {e}", p.display()))
    }
}

/// Runs `w` on `cfg` with the scheduling framework, the RTL of the policy's engine in the loop
/// (the DSS engine for `dss` and `equal`, the priority engine otherwise). The waveform of the
/// whole run goes to `vcd` if given. When the RTL and the model part and no waveform was asked
/// for, the (deterministic) run is repeated recording the [`MISMATCH_WINDOW`] cycles around the
/// mismatch into `mismatch_vcd`. `broken_rtl` selects the RTL's test-only fault.
pub fn run(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Policy,
    mechanism: Mechanism,
    broken_rtl: bool,
    vcd: Option<&Path>,
    mismatch_vcd: &Path,
) -> Result<CosimReport, String> {
    let n = cfg.num_sms() as usize;
    let once = |from: u64, until: u64| -> Result<(Handle, Gpu), String> {
        let (handle, gpu) = if matches!(policy, Policy::Dss | Policy::Equal) {
            let c = Cosim { pair: InLoop::new(Dss::new(n), DssRtl::new(n, broken_rtl), 16), vcd: None, record_from: from, record_until: until, fields: dss_fields };
            let h = Shared(Rc::new(RefCell::new(c)));
            let gpu = Gpu::with_framework_units(cfg, policy, mechanism, w.processes.len(), Some(Box::new(h.clone())), None)?;
            (Handle::Dss(h), gpu)
        } else {
            let mode = policy.prio_mode();
            let c = Cosim { pair: InLoop::new(Prio::new(n, mode), PrioRtl::new(n, mode, broken_rtl), 16), vcd: None, record_from: from, record_until: until, fields: prio_fields };
            let h = Shared(Rc::new(RefCell::new(c)));
            let gpu = Gpu::with_framework_units(cfg, policy, mechanism, w.processes.len(), None, Some(Box::new(h.clone())))?;
            (Handle::Prio(h), gpu)
        };
        Ok((handle, gpu))
    };
    finish(w, vcd, mismatch_vcd, once)
}

/// Runs `w` on `cfg` with the whole scheduling framework's RTL in the loop, the reference model
/// beside it, outputs and architectural state compared every clocked cycle; the run stops at
/// the first mismatch. The framework's clock is gated while it is idle with no input (its
/// `busy` output, compared too, says when), unless `every_cycle`. Waveforms as for [`run`];
/// `faults` selects the RTL's test-only faults.
#[allow(clippy::too_many_arguments)]
pub fn run_sched(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Policy,
    mechanism: Mechanism,
    faults: SchedFaults,
    every_cycle: bool,
    vcd: Option<&Path>,
    mismatch_vcd: &Path,
) -> Result<CosimReport, String> {
    let n = cfg.num_sms() as usize;
    let once = |from: u64, until: u64| -> Result<(Handle, Gpu), String> {
        let mut handle = None;
        let mut gpu = Gpu::with_sched_unit(cfg, policy, mechanism, w.processes.len(), &mut |model| {
            let pair = InLoop::with_state(model, SchedRtl::new(n, policy, faults), 16, Framework::state, SchedRtl::state);
            let h = Shared(Rc::new(RefCell::new(Cosim { pair, vcd: None, record_from: from, record_until: until, fields: sched_fields })));
            handle = Some(h.clone());
            Box::new(h)
        })?;
        gpu.set_framework_clock_gating(!every_cycle);
        Ok((Handle::Sched(handle.expect("the GPU built its framework")), gpu))
    };
    finish(w, vcd, mismatch_vcd, once)
}

/// Runs the workload on the GPU `once(from, until)` builds (recording the waveform of cycles
/// `from..=until`), repeats it around the first mismatch when no waveform was asked for, and
/// writes the waveform.
fn finish(
    w: &Workload,
    vcd: Option<&Path>,
    mismatch_vcd: &Path,
    once: impl Fn(u64, u64) -> Result<(Handle, Gpu), String>,
) -> Result<CosimReport, String> {
    let once = |from: u64, until: u64| -> Result<(Handle, Gpu, Result<(), SimError>), String> {
        let (handle, mut gpu) = once(from, until)?;
        gpu.add_workload(w).map_err(|e| e.to_string())?;
        let run = gpu.run(RunLimits::default(), &mut |_, _, _| {});
        Ok((handle, gpu, run))
    };
    let (mut handle, gpu, run) = once(if vcd.is_some() { 0 } else { u64::MAX }, u64::MAX)?;
    let mismatch = handle.mismatch();
    let path = match (vcd, &mismatch) {
        (Some(p), _) => Some(p.to_path_buf()),
        (None, Some(m)) => {
            handle = once(m.cycle.saturating_sub(MISMATCH_WINDOW), m.cycle + MISMATCH_WINDOW)?.0;
            Some(mismatch_vcd.to_path_buf())
        }
        (None, None) => None,
    };
    if let Some(p) = &path {
        handle.write_vcd(p)?;
    }
    let cycles_checked = match &mismatch {
        Some(m) => m.cycle + 1,
        None => handle.cycles(),
    };
    let (result, error) = match run {
        Ok(()) => (Some(gpu.result()), None),
        Err(e) => (None, Some(e)),
    };
    Ok(CosimReport { result, cycles_checked, mismatch, vcd: path, error })
}
