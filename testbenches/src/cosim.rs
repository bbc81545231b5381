//! Whole-GPU co-simulation: an RTL block runs inside the cycle-level GPU model, its outputs
//! driving the GPU (RTL in the loop) while its reference model runs beside it on the same
//! inputs and every cycle's outputs are compared. The waveform (RTL ports and registers, the
//! model's expected outputs, a mismatch marker) is recorded as it goes.
//!
//! The unit co-simulated now is the DSS policy engine of the scheduling framework.

use crate::dss::{fields, DssRtl};
use crate::lockstep::{InLoop, Mismatch};
use crate::vcd::VcdRecorder;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::units::dss::Dss;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use mpgpu_spec::units::sched::dss::{In, Out};
use mpgpu_spec::Unit;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The DSS pair in the loop, recording a waveform of the clocked cycles from `record_from` on.
pub struct DssCosim {
    pub pair: InLoop<Dss, DssRtl>,
    pub vcd: Option<VcdRecorder>,
    pub record_from: u64,
    pub record_until: u64,
}

impl DssCosim {
    pub fn new(sms: usize, broken_rtl: bool, record_from: u64) -> DssCosim {
        DssCosim { pair: InLoop::new(Dss::new(sms), DssRtl::new(sms, broken_rtl), 16), vcd: None, record_from, record_until: u64::MAX }
    }
}

/// A handle on a [`DssCosim`] that the GPU model holds as its DSS unit while the caller keeps
/// another to read the outcome.
#[derive(Clone)]
pub struct SharedDss(pub Rc<RefCell<DssCosim>>);

impl Unit for SharedDss {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.0.borrow_mut().pair.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        self.0.borrow().pair.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        let mut c = self.0.borrow_mut();
        if c.pair.cycle < c.record_from || c.pair.cycle > c.record_until {
            c.pair.clock(i);
            return;
        }
        let expected = c.pair.model.outputs(i);
        let got = c.pair.rtl.outputs(i);
        let f = fields(&expected);
        let cycle = c.pair.cycle;
        let DssCosim { pair, vcd, .. } = &mut *c;
        let blk = pair.rtl.block();
        vcd.get_or_insert_with(|| VcdRecorder::new(&*blk, &f)).sample(cycle, &*blk, &f, expected != got);
        drop(blk);
        c.pair.clock(i);
    }
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

/// Runs `w` on `cfg` with the scheduling framework, its DSS engine in RTL in the loop. The
/// waveform of the whole run goes to `vcd` if given. When the RTL and the model part and no
/// waveform was asked for, the (deterministic) run is repeated with recording from
/// [`MISMATCH_WINDOW`] cycles before the mismatch, into `mismatch_vcd`.
pub fn run_dss(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Policy,
    mechanism: Mechanism,
    broken_rtl: bool,
    vcd: Option<&Path>,
    mismatch_vcd: &Path,
) -> Result<CosimReport, String> {
    let once = |record_from: u64, record_until: u64| -> Result<(SharedDss, Gpu, Result<(), SimError>), String> {
        let unit = SharedDss(Rc::new(RefCell::new(DssCosim::new(cfg.num_sms() as usize, broken_rtl, record_from))));
        unit.0.borrow_mut().record_until = record_until;
        let mut gpu = Gpu::with_framework_unit(cfg, policy, mechanism, w.processes.len(), Some(Box::new(unit.clone())))?;
        gpu.add_workload(w).map_err(|e| e.to_string())?;
        let run = gpu.run(RunLimits::default(), &mut |_, _, _| {});
        Ok((unit, gpu, run))
    };
    let (mut unit, gpu, run) = once(if vcd.is_some() { 0 } else { u64::MAX }, u64::MAX)?;
    let mismatch = unit.0.borrow().pair.mismatch();
    let path = match (vcd, &mismatch) {
        (Some(p), _) => Some(p.to_path_buf()),
        (None, Some(m)) => {
            unit = once(m.cycle.saturating_sub(MISMATCH_WINDOW), m.cycle + MISMATCH_WINDOW)?.0;
            Some(mismatch_vcd.to_path_buf())
        }
        (None, None) => None,
    };
    let c = unit.0.borrow();
    if let (Some(p), Some(rec)) = (&path, &c.vcd) {
        rec.write(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    let cycles_checked = gpu_cycles_checked(&unit, &mismatch);
    let (result, error) = match run {
        Ok(()) => (Some(gpu.result()), None),
        Err(e) => (None, Some(e)),
    };
    Ok(CosimReport { result, cycles_checked, mismatch, vcd: path, error })
}

fn gpu_cycles_checked(unit: &SharedDss, mismatch: &Option<Mismatch>) -> u64 {
    match mismatch {
        Some(m) => m.cycle + 1,
        None => unit.0.borrow().pair.cycle,
    }
}
