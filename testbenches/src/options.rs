//! A co-simulation run's settings ([`CosimOptions`]) and the unit it names ([`UnitKind`]: a
//! name of the registry's units; `crate::unit` gives its blocks and what it needs).

use crate::backend::Backend;
use crate::broken::Broken;
use mpgpu_ref::slots::SmSet;
use mpgpu_ref::timing::gpu::RunLimits;
use mpgpu_ref::timing::slicer::{SliceParams, Slicing};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use std::path::PathBuf;
use std::rc::Rc;

pub use mpgpu_ref::slots::SlotMode;

/// A co-simulation unit (`mpgpu cosim --unit`), by its name: one of `UnitKind::all()`
/// (`crate::unit`, which gives its blocks, its GPU and what it needs).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnitKind(pub(crate) &'static str);

impl Default for UnitKind {
    /// The whole scheduling framework (`sched`).
    fn default() -> Self {
        UnitKind("sched")
    }
}

impl UnitKind {
    /// The name on the command line (`mpgpu cosim --unit`).
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for UnitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::fmt::Debug for UnitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// A run's progress reports: called with (GPU cycle, programs done, programs in all).
#[derive(Clone)]
pub struct Progress(pub Rc<dyn Fn(u64, u64, u64)>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// A co-simulation run's settings.
#[derive(Clone, Debug)]
pub struct CosimOptions {
    pub policy: Policy,
    pub mechanism: Mechanism,
    pub unit: UnitKind,
    pub mode: SlotMode,
    pub backend: Backend,
    /// The test-only broken variants of the blocks in the loop, by block
    /// (`crate::registry::broken` reads them from the registry by name).
    pub broken: Broken,
    /// Warped-Slicer's parameters (`--unit wf` and `slice`).
    pub slice: SliceParams,
    /// The slicing policy (`--unit slice`; `--unit wf` runs Warped-Slicer).
    pub slicing: Slicing,
    /// The steering dispatcher's policy, profile and preemption (`--unit steer`).
    pub steering: mpgpu_ref::timing::steer::Steering,
    pub steer: mpgpu_ref::timing::steer::SteerParams,
    /// For per-SM units: the SMs whose slot carries the RTL (the others hold the model).
    pub sms: SmSet,
    /// For per-SM units: blocks scheduled by the framework's model (`policy`, `mechanism`)
    /// instead of the baseline dispatcher.
    pub framework: bool,
    /// Slicing inside the framework (`--policy` with `--slicing`): the framework (`policy`,
    /// `mechanism`) issues, sharing its SMs, and `slicing` is its quota controller
    /// (`docs/warped-slicer.md`, "Inside the scheduling framework"). Every unit runs in that
    /// GPU but the slice table, which it does not use.
    pub sliced: bool,
    /// Steering inside the framework (`--policy` with `--steer`): the framework (`policy`,
    /// `mechanism`) issues, sharing its SMs, and the steering (`steering`, `steer`, its SMs
    /// changing owner by draining) is its quota controller (`docs/heterocore.md`, "Inside the
    /// scheduling framework").
    pub steered: bool,
    /// Clock the framework every GPU cycle instead of gating its clock while idle.
    pub every_cycle: bool,
    /// The whole run's waveform: a file, or for units with several waveforms (per-SM units,
    /// `Wf`; [`UnitKind::waveform_folder`]) a folder.
    pub vcd: Option<PathBuf>,
    /// The GPU cycles the waveform records (inclusive).
    pub vcd_window: (u64, u64),
    /// For per-SM units: the SMs whose waveforms are recorded (of those with the RTL).
    pub vcd_sms: SmSet,
    /// Called as the run goes with (GPU cycle, programs done, programs in all).
    pub progress: Option<Progress>,
    /// Where the waveform around a mismatch goes when no waveform was asked for.
    pub mismatch_vcd: PathBuf,
    /// A trace of the clocked cycles for replay.
    pub trace: Option<PathBuf>,
    pub limits: RunLimits,
}

impl CosimOptions {
    /// Whether the framework shares its SMs by a quota controller's quotas (slicing or
    /// steering inside it).
    pub fn quota_controlled(&self) -> bool {
        self.sliced || self.steered
    }

    pub fn new(policy: Policy, mechanism: Mechanism) -> Self {
        CosimOptions {
            policy,
            mechanism,
            unit: UnitKind::default(),
            mode: SlotMode::Lockstep,
            backend: Backend::RustHdl,
            broken: Broken::default(),
            slice: SliceParams::default(),
            slicing: Slicing::WarpedSlicer,
            steering: mpgpu_ref::timing::steer::Steering::Dynamic,
            steer: Default::default(),
            sms: SmSet::All,
            framework: false,
            sliced: false,
            steered: false,
            every_cycle: false,
            vcd: None,
            vcd_window: (0, u64::MAX),
            vcd_sms: SmSet::All,
            progress: None,
            mismatch_vcd: PathBuf::from("target/cosim/mismatch.vcd"),
            trace: None,
            limits: RunLimits::default(),
        }
    }
}

