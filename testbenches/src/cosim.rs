//! Whole-GPU co-simulation: an RTL block runs inside the cycle-level GPU model, its outputs
//! driving the GPU (RTL in the loop) while its reference model runs beside it on the same
//! inputs and every clocked cycle's outputs (and architectural state) are compared. The
//! machinery is generic: any block with a [`Ports`] mapping, on either [`Backend`], any number
//! of instances (each named in mismatch reports and waveforms).
//!
//! Each instance can record a waveform ([`VcdRecorder`], GPU cycle on the time axis, with a
//! GTKWave save file) and a trace of its clocked cycles for replay in Icarus
//! ([`TraceWriter`]).
//!
//! The GPU's framework slot can hold: the whole framework's RTL beside its model
//! ([`run_with`] with [`UnitKind::Sched`]), the RTL alone ([`SlotMode::RtlAlone`]), or only the
//! policy engine's RTL inside the framework model ([`UnitKind::Engine`]).

use crate::host::{Outcome, Rec, Several};
use crate::lockstep::Mismatch;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunResult, SimError};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use crate::broken::Broken;
use mpgpu_rtl::SchedFaults;
use mpgpu_ref::timing::slicer::Slicer;
use std::path::{Path, PathBuf};

/// What a co-simulation run found.
pub struct CosimReport {
    pub result: Option<RunResult>,
    /// Cycles the unit was clocked and checked.
    pub cycles_checked: u64,
    pub mismatch: Option<Mismatch>,
    /// Where the waveform went, if anywhere (its GTKWave save file is beside it).
    pub vcd: Option<PathBuf>,
    /// The waveform files written (with a GTKWave save file beside each).
    pub vcd_files: Vec<PathBuf>,
    /// Where the trace went, if anywhere.
    pub trace: Option<PathBuf>,
    pub error: Option<SimError>,
    /// Wall-clock seconds of the simulation, and of building the units before it (the RTL,
    /// and on first use the Verilator model); for speed reports only.
    pub seconds: f64,
    pub setup_seconds: f64,
    /// What could not be written (a waveform, a trace); the run's findings stand.
    pub warnings: Vec<String>,
    /// The blocks the run put in the GPU (of the unit's, those the run uses: a policy engine
    /// only under its policies).
    pub blocks: Vec<&'static str>,
}

/// Cycles of waveform kept before a mismatch when no waveform was asked for.
pub const MISMATCH_WINDOW: u64 = 256;

pub use crate::options::{CosimOptions, Progress, SlotMode, UnitKind};

/// Runs `w` on `cfg` with the RTL of the policy's engine in the loop (rust-hdl backend); see
/// [`run_with`].
pub fn run(cfg: &GpuConfig, w: &Workload, policy: Policy, mechanism: Mechanism, broken_rtl: bool, vcd: Option<&Path>, mismatch_vcd: &Path) -> Result<CosimReport, String> {
    let broken = if broken_rtl { Broken::default().with("dss", true).with("prio", true) } else { Broken::default() };
    let o = CosimOptions { unit: UnitKind::named("engine")?, broken, vcd: vcd.map(Path::to_path_buf), mismatch_vcd: mismatch_vcd.to_path_buf(), ..CosimOptions::new(policy, mechanism) };
    run_with(cfg, w, &o)
}

/// Runs `w` on `cfg` with the whole framework's RTL in the loop (rust-hdl backend); see
/// [`run_with`].
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
    let o = CosimOptions { broken: Broken::default().with("sched", faults), every_cycle, vcd: vcd.map(Path::to_path_buf), mismatch_vcd: mismatch_vcd.to_path_buf(), ..CosimOptions::new(policy, mechanism) };
    run_with(cfg, w, &o)
}

/// Runs `w` on `cfg` with an RTL block in the GPU's framework slot as `o` says. The waveform of
/// the whole run goes to `o.vcd` if given. When the RTL and the model part and no waveform was
/// asked for, the (deterministic) run is repeated recording the [`MISMATCH_WINDOW`] cycles
/// around the mismatch into `o.mismatch_vcd`.
pub fn run_with(cfg: &GpuConfig, w: &Workload, o: &CosimOptions) -> Result<CosimReport, String> {
    // Refuse a GPU the unit cannot run on before building any RTL for it.
    o.unit.fits(cfg, o)?;
    let times = std::cell::Cell::new((0.0, 0.0));
    let blocks = std::cell::RefCell::new(Vec::new());
    let once = |from: u64, until: u64, trace: Option<&Path>| -> Result<(Box<dyn Outcome>, Gpu, Result<(), SimError>), String> {
        let t0 = std::time::Instant::now();
        let rec = Rec { from, until, time: o.vcd_window, sms: o.vcd_sms.clone() };
        let (mut outcomes, mut gpu) = o.unit.build(cfg, w, o, &rec, trace)?;
        *blocks.borrow_mut() = outcomes.iter().map(|b| b.1).collect();
        let handle: Box<dyn Outcome> = if outcomes.len() == 1 { outcomes.pop().expect("one block").0 } else { Box::new(Several(outcomes)) };
        gpu.add_workload(w).map_err(|e| e.to_string())?;
        let t1 = std::time::Instant::now();
        let run = gpu.run(o.limits, &mut |cycle, done, all| {
            if let Some(p) = &o.progress {
                (p.0)(cycle, done, all)
            }
        });
        times.set(((t1 - t0).as_secs_f64(), t1.elapsed().as_secs_f64()));
        Ok((handle, gpu, run))
    };
    let (mut handle, gpu, run) = once(if o.vcd.is_some() { 0 } else { u64::MAX }, u64::MAX, o.trace.as_deref())?;
    let (setup_seconds, seconds) = times.get();
    let mut warnings = Vec::new();
    let trace = handle.finish_trace().unwrap_or_else(|e| {
        warnings.push(e);
        None
    });
    let mismatch = handle.mismatch();
    let path = match (&o.vcd, &mismatch) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(m)) => {
            handle = once(m.cycle.saturating_sub(MISMATCH_WINDOW), m.cycle + MISMATCH_WINDOW, None)?.0;
            // (several waveforms go into a folder of the file's name)
            Some(if handle.per_sm() { o.mismatch_vcd.with_extension("") } else { o.mismatch_vcd.clone() })
        }
        (None, None) => None,
    };
    let mut vcd_files = Vec::new();
    let path = path.filter(|p| match handle.write_vcd(p) {
        Ok(files) => {
            vcd_files = files;
            true
        }
        Err(e) => {
            warnings.push(e);
            false
        }
    });
    let cycles_checked = match &mismatch {
        Some(m) => m.cycle + 1,
        None => handle.cycles(),
    };
    let (result, error) = match run {
        // (the dispatcher's own statistics: the slicer's or the steering's)
        Ok(()) => (Some(RunResult { steering: mpgpu_ref::timing::steer::Steer::stats(&gpu), ..Slicer::result(&gpu) }), None),
        Err(e) => (None, Some(e)),
    };
    Ok(CosimReport { result, cycles_checked, mismatch, vcd: path, vcd_files, trace, error, seconds, setup_seconds, warnings, blocks: blocks.into_inner() })
}
