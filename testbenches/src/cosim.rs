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

use crate::bank::{Bank, BankOutcome, Slot};
use crate::host::{trace_writer, Alone, AloneOutcome, Cosim, Outcome, Rec, Several, Shared};
use crate::blocks::{DssPorts, OldataPorts, OplogPorts, PrioPorts, ProfPorts, RqPorts, SchedPorts, SlicePorts, WfPorts, ZoruaPorts};
use crate::lockstep::Mismatch;
use crate::ports::Ports;
use crate::backend::Backend;
use crate::rtl::RtlUnit;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::units::dss::Dss;
use mpgpu_ref::units::framework::{Framework, Mechanism, Policy};
use mpgpu_ref::units::prio::Prio;
use mpgpu_ref::workload::Workload;
use mpgpu_ref::slots::SmSet;
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::units::oldata::Oldata;
use mpgpu_ref::units::oplog::Oplog;
use mpgpu_ref::units::rq::Rq;
use crate::broken::Broken;
use mpgpu_rtl::{SchedFaults, ZoruaParams};
use mpgpu_ref::timing::slicer::{SliceParams, Slicer, Slicing};
use mpgpu_ref::units::slice::Slice as SliceModel;
use mpgpu_ref::units::prof::Prof as ProfModel;
use mpgpu_ref::units::wf::Wf as WfModel;
use mpgpu_ref::units::zorua::Coord;
use mpgpu_spec::Unit;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
}

/// Cycles of waveform kept before a mismatch when no waveform was asked for.
pub const MISMATCH_WINDOW: u64 = 256;

/// Which unit the RTL replaces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnitKind {
    /// The whole scheduling framework (`Sched`).
    #[default]
    Sched,
    /// Only the policy's engine (DSS for `dss` and `equal`, the priority engine otherwise),
    /// inside the framework model.
    Engine,
    /// The operand log's bookkeeping (`Oplog`), one per SM, under `faults = "ol"`, with the
    /// baseline dispatcher.
    Oplog,
    /// The replay queue (`Rq`), one per SM, under `faults = "rq"` or `"ol"`, with the
    /// baseline dispatcher.
    Rq,
    /// The operand log's data array (`Oldata`), one per SM, under `faults = "ol"`, with the
    /// baseline dispatcher.
    Oldata,
    /// The replay queue and the operand log, bookkeeping and data array (`Rq`, `Oplog` and
    /// `Oldata`), on every SM, under `faults = "ol"`.
    RqOl,
    /// Zorua's coordinator and mapping tables (`Zorua`), one per SM, under `alloc = "zorua"`,
    /// with the baseline dispatcher.
    Zorua,
    /// Warped-Slicer's water-filling unit (`Wf`, global) and sampling counters (`Prof`, one
    /// per SM), under the Warped-Slicer dispatcher.
    Wf,
    /// The slice table (`Slice`, global: kernels sharing SMs under quotas), under any slicing
    /// policy (`CosimOptions::slicing`).
    Slice,
}

impl UnitKind {
    /// A per-SM block (one instance per SM, with the baseline dispatcher).
    pub fn per_sm(self) -> bool {
        matches!(self, UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl | UnitKind::Zorua)
    }

    /// Whether the unit's run has several waveforms (one per SM with the RTL; the
    /// water-filling unit's and each SM's counters'), written into one folder.
    pub fn waveform_folder(self) -> bool {
        self.per_sm() || self == UnitKind::Wf
    }

    /// The fault scheme the unit implies (the replay queue's is `rq`, which `ol` also has).
    pub fn implied_faults(self) -> Option<mpgpu_ref::config::FaultScheme> {
        match self {
            UnitKind::Oplog | UnitKind::Oldata | UnitKind::RqOl => Some(mpgpu_ref::config::FaultScheme::Ol),
            UnitKind::Rq => Some(mpgpu_ref::config::FaultScheme::Rq),
            UnitKind::Sched | UnitKind::Engine | UnitKind::Zorua | UnitKind::Wf | UnitKind::Slice => None,
        }
    }

    /// Every unit, in the order the command line lists them.
    pub const ALL: [UnitKind; 9] = [UnitKind::Sched, UnitKind::Engine, UnitKind::Oplog, UnitKind::Oldata, UnitKind::Rq, UnitKind::RqOl, UnitKind::Zorua, UnitKind::Wf, UnitKind::Slice];

    /// The unit named `name` on the command line; an error lists the units.
    pub fn parse(name: &str) -> Result<UnitKind, String> {
        UnitKind::ALL.into_iter().find(|u| u.name() == name).ok_or_else(|| format!("unknown unit `{name}`; units: {}", UnitKind::ALL.map(|u| u.name()).join(", ")))
    }

    /// The blocks (`crate::registry`) whose RTL the unit puts in the GPU.
    pub fn blocks(self) -> &'static [&'static str] {
        match self {
            UnitKind::Sched => &["sched"],
            UnitKind::Engine => &["dss", "prio"],
            UnitKind::Oplog => &["oplog"],
            UnitKind::Oldata => &["oldata"],
            UnitKind::Rq => &["rq"],
            UnitKind::RqOl => &["rq", "oplog", "oldata"],
            UnitKind::Zorua => &["zorua"],
            UnitKind::Wf => &["wf", "prof"],
            UnitKind::Slice => &["slice"],
        }
    }

    /// What the unit puts in the GPU and under what, in a sentence (the command line's help).
    pub fn about(self) -> &'static str {
        match self {
            UnitKind::Sched => "the whole scheduling framework in RTL (tables, PTBQs, SM driver, policy engine); outputs and tables compared every clocked cycle",
            UnitKind::Engine => "only the framework's policy engine in RTL (DSS for dss and equal, the priority engine for the others)",
            UnitKind::Oplog => "the operand log's bookkeeping in RTL on every SM (or the SMs --sms names), under the operand-log fault scheme (implied) with the baseline dispatcher; needs the thesis's pipeline (--config thesis16)",
            UnitKind::Oldata => "the operand log's data array in RTL on every SM (or the SMs --sms names): 32 lane RAMs, one entry written and one read per cycle; under the operand-log fault scheme (implied), needs the thesis's pipeline (--config thesis16)",
            UnitKind::Rq => "the replay queue in RTL on every SM (or the SMs --sms names), under the replay-queue fault scheme (implied; --faults ol runs it with the operand log) with the baseline dispatcher; needs the thesis's pipeline (--config thesis16)",
            UnitKind::RqOl => "the replay queue and the operand log (bookkeeping and data array) in RTL on every SM (or the SMs --sms names), under the operand-log fault scheme (implied)",
            UnitKind::Zorua => "Zorua's coordinator and mapping tables in RTL on every SM (or the SMs --sms names), under Zorua's allocation (implied) with the baseline dispatcher; the RTL's tables are the Fermi configuration's (--config fermi15)",
            UnitKind::Wf => "Warped-Slicer's water-filling unit (global) and sampling counters (every SM) in RTL, under the Warped-Slicer dispatcher (--ws-window, --ws-delay, --ws-fallback); the water-filling unit's FSM state and tables compared every clocked cycle",
            UnitKind::Slice => "the slice table (kernels sharing SMs under per-SM quotas: slots, quotas, resident counts, used resources, the issue) in RTL, under the slicing policy --slicing (default warped-slicer); every register compared every clocked cycle",
        }
    }

    /// The configuration a soak runs the unit on by default (`mpgpu soak --unit`): the
    /// thesis's pipeline for the fault-handling blocks, the Fermi configuration for Zorua's
    /// (its tables' geometry), Kepler's for the framework, the GTX 480 for Warped-Slicer's.
    pub fn default_config(self) -> &'static str {
        match self {
            UnitKind::Sched | UnitKind::Engine => "k20c",
            UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl => "thesis16",
            UnitKind::Zorua => "fermi15",
            UnitKind::Wf | UnitKind::Slice => "gtx480",
        }
    }

    /// Sets in `cfg` what the unit implies: the operand log's units its fault scheme, the
    /// replay queue's rq (`--faults ol` then runs it with the operand log), Zorua's its
    /// allocation.
    pub fn setup(self, cfg: &mut GpuConfig) {
        if let Some(f) = self.implied_faults() {
            cfg.faults = f;
        }
        if self == UnitKind::Zorua {
            cfg.alloc = mpgpu_ref::config::Alloc::Zorua;
        }
    }

    /// The name on the command line (`mpgpu cosim --unit`).
    pub fn name(self) -> &'static str {
        match self {
            UnitKind::Sched => "sched",
            UnitKind::Engine => "engine",
            UnitKind::Oplog => "oplog",
            UnitKind::Oldata => "oldata",
            UnitKind::Rq => "rq",
            UnitKind::RqOl => "rq-ol",
            UnitKind::Zorua => "zorua",
            UnitKind::Wf => "wf",
            UnitKind::Slice => "slice",
        }
    }
}

impl std::fmt::Display for UnitKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

pub use mpgpu_ref::slots::SlotMode;

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
    /// For per-SM units: the SMs whose slot carries the RTL (the others hold the model).
    pub sms: SmSet,
    /// For per-SM units: blocks scheduled by the framework's model (`policy`, `mechanism`)
    /// instead of the baseline dispatcher.
    pub framework: bool,
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
    pub fn new(policy: Policy, mechanism: Mechanism) -> Self {
        CosimOptions {
            policy,
            mechanism,
            unit: UnitKind::Sched,
            mode: SlotMode::Lockstep,
            backend: Backend::RustHdl,
            broken: Broken::default(),
            slice: SliceParams::default(),
            slicing: Slicing::WarpedSlicer,
            sms: SmSet::All,
            framework: false,
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

/// Runs `w` on `cfg` with the RTL of the policy's engine in the loop (rust-hdl backend); see
/// [`run_with`].
pub fn run(cfg: &GpuConfig, w: &Workload, policy: Policy, mechanism: Mechanism, broken_rtl: bool, vcd: Option<&Path>, mismatch_vcd: &Path) -> Result<CosimReport, String> {
    let broken = if broken_rtl { Broken::default().with("dss", true).with("prio", true) } else { Broken::default() };
    let o = CosimOptions { unit: UnitKind::Engine, broken, vcd: vcd.map(Path::to_path_buf), mismatch_vcd: mismatch_vcd.to_path_buf(), ..CosimOptions::new(policy, mechanism) };
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

/// The units of a per-SM block for `n` SMs as `o.mode` and `o.sms` say (the RTL alone, the
/// model alone, or both in lockstep; the model in the SMs without the RTL), each SM's trace in
/// its own directory (`DIR/sm<k>`, for `mpgpu replay`), and what the run will report.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn per_sm<M, P>(n: usize, mode: SlotMode, o: &CosimOptions, ports: P, model: &dyn Fn() -> M, state: fn(&M) -> P::State, rec: &Rec, trace: Option<&Path>) -> Result<(Box<dyn Outcome>, Vec<Held<P::In, P::Out>>), String>
where
    M: Unit<In = P::In, Out = P::Out> + Hosted + 'static,
    P: Ports + Copy + 'static,
{
    let mut units: Vec<Held<P::In, P::Out>> = Vec::with_capacity(n);
    if mode == SlotMode::RtlAlone {
        let mut counters = Vec::new();
        for k in 0..n {
            if o.sms.contains(k) {
                let a = Alone::new(RtlUnit::with_backend(ports, o.backend)?);
                counters.push(a.cycles.clone());
                units.push(Box::new(a));
            } else {
                units.push(Box::new(model()));
            }
        }
        return Ok((Box::new(AloneOutcome(counters)), units));
    }
    let name = ports.name();
    let bank = Bank::new(&name, n, mode, &o.sms, o.backend, |_| model(), |_| ports, state)?;
    for (k, s) in bank.slots.iter().enumerate() {
        match s {
            Slot::Pair(p) => {
                let tw = trace_writer(&p.0.borrow().pair.rtl, trace.map(|d| d.join(format!("sm{k}"))).as_deref())?;
                let mut c = p.0.borrow_mut();
                if rec.sms.contains(k) {
                    c.record_from = rec.from;
                    c.record_until = rec.until;
                    c.record_time = rec.time;
                }
                c.trace = tw;
                drop(c);
                units.push(Box::new(p.clone()));
            }
            _ => units.push(Box::new(model())),
        }
    }
    Ok((Box::new(BankOutcome(bank)), units))
}

/// The unit of a global block as `o.mode` says (the RTL alone, the model alone, or both in
/// lockstep, named `name`), and what the run will report.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn global<M, P>(name: &str, o: &CosimOptions, ports: P, model: M, state: fn(&M) -> P::State, rec: &Rec, trace: Option<&Path>) -> Result<(Box<dyn Outcome>, Held<P::In, P::Out>), String>
where
    M: Unit<In = P::In, Out = P::Out> + Hosted + 'static,
    P: Ports + 'static,
{
    Ok(match o.mode {
        SlotMode::Lockstep => {
            let rtl = RtlUnit::with_backend(ports, o.backend)?;
            let h = Shared::new(Cosim::with_state(name, model, rtl, state).recording(rec.clone()).tracing(trace)?);
            (Box::new(h.clone()), Box::new(h))
        }
        SlotMode::RtlAlone => {
            let a = Alone::new(RtlUnit::with_backend(ports, o.backend)?);
            (Box::new(AloneOutcome(vec![a.cycles.clone()])), Box::new(a))
        }
        SlotMode::ModelAlone => (Box::new(AloneOutcome(Vec::new())), Box::new(model)),
    })
}

/// Puts `units` in the GPU's slots of their interface, one per instance.
fn install<I: 'static, O: 'static>(gpu: &mut Gpu, units: Vec<Held<I, O>>) -> Result<(), String> {
    let mut it = units.into_iter();
    gpu.set_units(&mut |_| it.next().expect("one unit per instance"))
}

/// Builds the GPU for one run, recording the waveforms `rec` says.
fn build(cfg: &GpuConfig, w: &Workload, o: &CosimOptions, rec: &Rec, trace: Option<&Path>) -> Result<(Box<dyn Outcome>, Gpu), String> {
    let n = cfg.num_sms() as usize;
    let (p, m) = (o.policy, o.mechanism);
    let procs = w.processes.len();
    match (o.unit, o.mode) {
        (UnitKind::Sched, mode) => {
            let mut gpu = Gpu::with_framework(cfg, p, m, procs)?;
            let ports = SchedPorts { sms: n, mode: p.code(), faults: o.broken.of("sched") };
            let outcome: Box<dyn Outcome> = match mode {
                SlotMode::Lockstep => {
                    let rtl = RtlUnit::with_backend(ports, o.backend)?;
                    let tw = trace_writer(&rtl, trace)?;
                    let model = Framework::new(Gpu::framework_params(cfg)?, p, m);
                    let mut c = Cosim::with_state("sched", model, rtl, Framework::state).recording(rec.clone()).gated(|o| o.busy);
                    c.trace = tw;
                    let h = Shared::new(c);
                    install(&mut gpu, vec![Box::new(h.clone()) as Held<_, _>])?;
                    Box::new(h)
                }
                SlotMode::RtlAlone => {
                    let alone = Alone::new(RtlUnit::with_backend(ports, o.backend)?).gated(|o| o.busy);
                    let counter = alone.cycles.clone();
                    install(&mut gpu, vec![Box::new(alone) as Held<_, _>])?;
                    Box::new(AloneOutcome(vec![counter]))
                }
                SlotMode::ModelAlone => Box::new(AloneOutcome(Vec::new())),
            };
            gpu.set_framework_clock_gating(!o.every_cycle);
            Ok((outcome, gpu))
        }
        (UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl, mode) => {
            let mut gpu = per_sm_gpu(cfg, o, procs)?;
            let all = o.unit == UnitKind::RqOl;
            // (with several, each block's traces under DIR/<block>/)
            let sub = |b: &str| {
                if all {
                    trace.map(|d| d.join(b))
                } else {
                    trace.map(Path::to_path_buf)
                }
            };
            let mut outcomes: Vec<(Box<dyn Outcome>, &'static str)> = Vec::new();
            if matches!(o.unit, UnitKind::Oplog | UnitKind::RqOl) {
                let entries = cfg.sm[0].oplog_bytes / mpgpu_ref::config::OPLOG_ENTRY_BYTES;
                let ports = OplogPorts { entries: entries as usize, faults: o.broken.of("oplog") };
                let (outcome, units) = per_sm(n, mode, o, ports, &|| Oplog::new(entries), Oplog::state, rec, sub("oplog").as_deref())?;
                install(&mut gpu, units)?;
                outcomes.push((outcome, "oplog"));
            }
            if matches!(o.unit, UnitKind::Oldata | UnitKind::RqOl) {
                let entries = (cfg.sm[0].oplog_bytes / mpgpu_ref::config::OPLOG_ENTRY_BYTES) as usize;
                let ports = OldataPorts { entries, faults: o.broken.of("oldata") };
                let (outcome, units) = per_sm(n, mode, o, ports, &|| Oldata::new(entries), Oldata::state, rec, sub("oldata").as_deref())?;
                install(&mut gpu, units)?;
                outcomes.push((outcome, "oldata"));
            }
            if matches!(o.unit, UnitKind::Rq | UnitKind::RqOl) {
                let slots = cfg.sm[0].rq_entries;
                let ports = RqPorts { slots: slots as usize, faults: o.broken.of("rq") };
                let (outcome, units) = per_sm(n, mode, o, ports, &|| Rq::new(slots), Rq::state, rec, sub("rq").as_deref())?;
                install(&mut gpu, units)?;
                outcomes.push((outcome, "rq"));
            }
            let outcome: Box<dyn Outcome> = if outcomes.len() == 1 { outcomes.pop().expect("one per-SM unit").0 } else { Box::new(Several(outcomes)) };
            Ok((outcome, gpu))
        }
        (UnitKind::Zorua, mode) => {
            let mut gpu = per_sm_gpu(cfg, o, procs)?;
            let ports = ZoruaPorts { params: zorua_params(cfg), faults: o.broken.of("zorua") };
            // (the model takes the RTL's timing, the pipelined one, whatever the configuration says)
            let geom = mpgpu_ref::units::zorua::Geometry { thresh: cfg.zorua.thresh(), pipelined: true, ..mpgpu_ref::units::zorua::Geometry::of(&cfg.sm[0])? };
            let (outcome, units) = per_sm(n, mode, o, ports, &|| Coord::new(geom), Coord::state, rec, trace)?;
            install(&mut gpu, units)?;
            Ok((outcome, gpu))
        }
        (UnitKind::Wf, mode) => {
            let sub = |b: &str| trace.map(|d| d.join(b));
            let (wf_outcome, wf_unit) = global("wf", o, WfPorts { sms: n, faults: o.broken.of("wf") }, WfModel::new(n), WfModel::state, rec, sub("wf").as_deref())?;
            let pports = ProfPorts { faults: o.broken.of("prof") };
            let (prof_outcome, prof_units) = per_sm(n, mode, o, pports, &ProfModel::default, ProfModel::state, rec, sub("prof").as_deref())?;
            let mut gpu = Gpu::with_dispatcher(cfg, Box::new(Slicer::new(Slicing::WarpedSlicer, o.slice, n)));
            install(&mut gpu, vec![wf_unit])?;
            install(&mut gpu, prof_units)?;
            Ok((Box::new(Several(vec![(wf_outcome, "wf"), (prof_outcome, "prof")])), gpu))
        }
        (UnitKind::Slice, _) => {
            let total = Slicer::sm_total(&cfg.sm[0]);
            let (outcome, unit) = global("slice", o, SlicePorts { sms: n, total, faults: o.broken.of("slice") }, SliceModel::new(n, total), SliceModel::state, rec, trace)?;
            let slicer = match o.slicing {
                Slicing::Oracle => {
                    let curves = mpgpu_ref::timing::slicer::oracle_curves(cfg, w, o.limits, &mut Default::default()).map_err(|e| format!("the Oracle's isolated runs: {e}"))?;
                    Slicer::oracle(o.slice, n, curves)
                }
                p => Slicer::new(p, o.slice, n),
            };
            let mut gpu = Gpu::with_dispatcher(cfg, Box::new(slicer));
            install(&mut gpu, vec![unit])?;
            Ok((outcome, gpu))
        }
        (UnitKind::Engine, _) => {
            if p.uses_dss() {
                let rtl = RtlUnit::with_backend(DssPorts { sms: n, broken_tie: o.broken.of("dss") }, o.backend)?;
                let h = Shared::new(Cosim::outputs_only("dss", Dss::new(n), rtl).recording(rec.clone()).tracing(trace)?);
                let gpu = Gpu::with_framework_units(cfg, p, m, procs, Some(Box::new(h.clone())), None)?;
                Ok((Box::new(h), gpu))
            } else {
                let mode = p.code();
                let rtl = RtlUnit::with_backend(PrioPorts { sms: n, mode, broken_victim: o.broken.of("prio") }, o.backend)?;
                let h = Shared::new(Cosim::outputs_only("prio", Prio::new(n, mode), rtl).recording(rec.clone()).tracing(trace)?);
                let gpu = Gpu::with_framework_units(cfg, p, m, procs, None, Some(Box::new(h.clone())))?;
                Ok((Box::new(h), gpu))
            }
        }
    }
}

/// The GPU a per-SM unit runs in: with the baseline dispatcher, or with the framework's model
/// when `o.framework` (its policy and mechanism).
fn per_sm_gpu(cfg: &GpuConfig, o: &CosimOptions, procs: usize) -> Result<Gpu, String> {
    if o.framework {
        Gpu::with_framework(cfg, o.policy, o.mechanism, procs)
    } else {
        Ok(Gpu::new(cfg))
    }
}

/// The RTL coordinator's parameters for `cfg`: its warp slots and Algorithm 1's constants.
pub fn zorua_params(cfg: &GpuConfig) -> ZoruaParams {
    let z = &cfg.zorua;
    ZoruaParams { slots: cfg.sm[0].warps as usize, o_default: z.o_default as u64, o_thresh_step: z.o_thresh_step as u64, c_delta_thresh: z.c_delta_thresh }
}

/// Whether the RTL coordinator (built for the Fermi configuration's tables) can run on `cfg`.
pub fn zorua_fits(cfg: &GpuConfig) -> Result<(), String> {
    if cfg.alloc != mpgpu_ref::config::Alloc::Zorua {
        return Err(format!("--unit zorua: the coordinator runs under alloc = \"zorua\" (`{}` allocates by \"{}\"; add --alloc zorua)", cfg.name, cfg.alloc.name()));
    }
    if cfg.sm.len() != 1 {
        return Err(format!("--unit zorua needs identical SMs; `{}` has {} kinds", cfg.name, cfg.sm.len()));
    }
    let s = &cfg.sm[0];
    let (regs, smem) = (s.registers / 128, s.shared_bytes / 1024);
    if regs as usize != mpgpu_rtl::zorua::RTL_REG_SETS || smem as usize != mpgpu_rtl::zorua::RTL_SMEM_SETS || s.warps > 64 {
        return Err(format!(
            "--unit zorua: the RTL's tables are the Fermi configuration's ({} register sets of 128 registers, {} scratchpad sets of 1 KB, up to 64 warp slots); `{}` has {regs}, {smem} and {} (use --config fermi15)",
            mpgpu_rtl::zorua::RTL_REG_SETS,
            mpgpu_rtl::zorua::RTL_SMEM_SETS,
            cfg.name,
            s.warps
        ));
    }
    if cfg.zorua.o_default > 16 || cfg.zorua.o_thresh_step > 16 || cfg.zorua.c_delta_thresh >= 1 << 16 {
        return Err("--unit zorua: the RTL takes zorua.o_default and o_thresh_step up to 16 and c_delta_thresh below 65536".into());
    }
    Ok(())
}

/// Runs `w` on `cfg` with an RTL block in the GPU's framework slot as `o` says. The waveform of
/// the whole run goes to `o.vcd` if given. When the RTL and the model part and no waveform was
/// asked for, the (deterministic) run is repeated recording the [`MISMATCH_WINDOW`] cycles
/// around the mismatch into `o.mismatch_vcd`.
pub fn run_with(cfg: &GpuConfig, w: &Workload, o: &CosimOptions) -> Result<CosimReport, String> {
    // Refuse a GPU the unit cannot run on before building any RTL for it.
    match o.unit {
        UnitKind::Rq if !matches!(cfg.faults, mpgpu_ref::config::FaultScheme::Rq | mpgpu_ref::config::FaultScheme::Ol) => {
            return Err(format!("--unit rq: the replay queue is used under faults = \"rq\" or \"ol\" (`{}` runs \"{}\"; add --faults rq)", cfg.name, cfg.faults.name()));
        }
        UnitKind::Oplog | UnitKind::Oldata | UnitKind::RqOl if cfg.faults != mpgpu_ref::config::FaultScheme::Ol => {
            return Err(format!("--unit {}: the operand log is used under faults = \"ol\" (`{}` runs \"{}\"; add --faults ol)", o.unit.name(), cfg.name, cfg.faults.name()));
        }
        // (a per-SM unit is built once for every SM)
        UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl if cfg.sm.len() != 1 => {
            return Err(format!("--unit {:?} needs identical SMs; `{}` has {} kinds", o.unit, cfg.name, cfg.sm.len()));
        }
        UnitKind::Oplog | UnitKind::Oldata | UnitKind::Rq | UnitKind::RqOl => {}
        UnitKind::Zorua => zorua_fits(cfg)?,
        UnitKind::Wf if cfg.num_sms() as usize > mpgpu_spec::units::wf::MAX_SMS => {
            return Err(format!("--unit wf: the water-filling unit reads up to {} SMs; `{}` has {}", mpgpu_spec::units::wf::MAX_SMS, cfg.name, cfg.num_sms()));
        }
        UnitKind::Wf if cfg.sm.len() != 1 => {
            return Err(format!("--unit wf needs identical SMs; `{}` has {} kinds", cfg.name, cfg.sm.len()));
        }
        UnitKind::Wf if o.slicing != Slicing::WarpedSlicer => {
            return Err(format!("--unit wf runs under Warped-Slicer (the only policy that uses the water-filling unit); --slicing {} has it idle: use --unit slice", o.slicing.name()));
        }
        UnitKind::Wf => {}
        UnitKind::Slice if cfg.num_sms() as usize > mpgpu_spec::units::slice::MAX_SMS => {
            return Err(format!("--unit slice: the slice table holds up to {} SMs; `{}` has {}", mpgpu_spec::units::slice::MAX_SMS, cfg.name, cfg.num_sms()));
        }
        UnitKind::Slice if cfg.sm.len() != 1 => {
            return Err(format!("--unit slice needs identical SMs; `{}` has {} kinds", cfg.name, cfg.sm.len()));
        }
        UnitKind::Slice => {
            let t = Slicer::sm_total(&cfg.sm[0]);
            if let Some(c) = (0..t.len()).find(|&c| t[c] >= 1 << mpgpu_spec::units::slice::RES_BITS) {
                return Err(format!("--unit slice: `{}`'s SM resource {c} ({}) does not fit the table's {} bits", cfg.name, t[c], mpgpu_spec::units::slice::RES_BITS));
            }
        }
        _ => {
            Gpu::framework_params(cfg)?;
        }
    }
    let times = std::cell::Cell::new((0.0, 0.0));
    let once = |from: u64, until: u64, trace: Option<&Path>| -> Result<(Box<dyn Outcome>, Gpu, Result<(), SimError>), String> {
        let t0 = std::time::Instant::now();
        let rec = Rec { from, until, time: o.vcd_window, sms: o.vcd_sms.clone() };
        let (handle, mut gpu) = build(cfg, w, o, &rec, trace)?;
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
        Ok(()) => (Some(Slicer::result(&gpu)), None),
        Err(e) => (None, Some(e)),
    };
    Ok(CosimReport { result, cycles_checked, mismatch, vcd: path, vcd_files, trace, error, seconds, setup_seconds, warnings })
}
