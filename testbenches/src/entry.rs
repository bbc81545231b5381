//! What a registry entry is ([`Block`]: a block's name, scope, Verilog, broken variants and
//! [`Host`]) and what a block's host works with to put it in the GPU ([`Build`]). Each block
//! writes its entry in its own harness file (`blocks/<name>.rs`); `crate::registry` lists them.

use crate::bank::{Bank, BankOutcome, Slot};
use crate::broken::Broken;
use crate::host::{trace_writer, Alone, AloneOutcome, Cosim, Outcome, Rec, Shared};
use crate::options::CosimOptions;
use crate::ports::{rtl_of, Ports};
use crate::rtl::RtlUnit;
use crate::runs::Run;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::slots::{Held, Hosted, SlotMode};
use mpgpu_ref::timing::gpu::Gpu;
use mpgpu_ref::timing::slicer::Slicer;
use mpgpu_ref::workload::Workload;
use mpgpu_spec::Unit;
use std::path::PathBuf;

/// Where a block sits in the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One for the whole GPU, sized by its number of SMs (`--sms`).
    Gpu,
    /// One in every SM, sized by one SM's configuration.
    PerSm,
    /// A part of another block, also built alone for its own tests and costs.
    Part,
    /// A GPU-wide part of another block, sized by the GPU's SMs, also built alone and hosted
    /// alone in the GPU (the framework's policy engines: `dss` and `prio` are inside `sched`).
    GpuPart,
}

/// A block of the registry.
pub struct Block {
    /// Its name everywhere (files, `mpgpu verilog <name>`, waveform scopes).
    pub name: &'static str,
    /// What it is, in one line.
    pub about: &'static str,
    pub scope: Scope,
    /// Its RTL (Verilog module `top`, inputs driven from outside; ports; configuration) for
    /// what [`Sizing`] says; an error when the block cannot be built for that configuration.
    pub verilog: fn(&Sizing) -> Result<crate::ip::Rtl, String>,
    /// Its test-only broken variants (`mpgpu cosim --broken NAME`).
    pub broken: &'static [Variant],
    /// How it runs in the whole GPU (`crate::unit`); `None` for a part built alone only.
    pub host: Option<Host>,
}

/// What a block's RTL is generated for.
pub struct Sizing<'a> {
    /// The SMs a GPU-wide block serves ([`Scope::Gpu`], [`Scope::GpuPart`]).
    pub sms: usize,
    /// The configuration: a per-SM block's geometry (Zorua's tables: the first SM's
    /// registers, scratchpad and warp slots, and the threshold's constants).
    pub cfg: &'a GpuConfig,
    /// The framework built to share its SMs (slicing inside it, `Sched::build`); the other
    /// blocks ignore it.
    pub sharing: bool,
}

/// A test-only broken variant of a block: its name on the command line, what it breaks, and
/// how it sets the block's faults in a run's map.
pub struct Variant {
    pub name: &'static str,
    pub about: &'static str,
    pub set: fn(&mut Broken),
}

pub const fn variant(name: &'static str, about: &'static str, set: fn(&mut Broken)) -> Variant {
    Variant { name, about, set }
}

/// The RTL of the block `p` describes (a registry entry's `verilog`).
pub fn v<P: Ports>(p: P) -> crate::ip::Rtl {
    rtl_of(&p)
}

/// The GPU a block runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKind {
    /// The scheduling framework's (`--policy`, `--preempt`).
    Framework,
    /// The baseline dispatcher, or the framework's model with `--framework`: a per-SM block's.
    PerSm,
    /// The slicing dispatcher (`--slicing`, Warped-Slicer's `--ws-*` parameters).
    Slicer,
    /// HeteroCore's steering dispatcher (`--steer`, `--steer-warmup`, `--steer-window`,
    /// `--steer-preempt`).
    Steer,
}

/// How a block runs in the whole GPU (the registry entry's part that `cosim`, `soak` and
/// `bench cosim` read).
pub struct Host {
    /// What the block's unit puts in the GPU and under what, in a sentence (the help of
    /// `--unit`).
    pub about: &'static str,
    pub gpu: GpuKind,
    /// The configuration a soak runs it on by default (`mpgpu soak --unit`).
    pub default_config: &'static str,
    /// What the block sets in the configuration (its fault scheme, its allocation); flags given
    /// on the command line apply after it.
    pub setup: fn(&mut GpuConfig),
    /// Refuses a configuration (or options) it cannot run on, with the reason, before any RTL
    /// is built.
    pub fits: fn(&GpuConfig, &CosimOptions) -> Result<(), String>,
    /// Puts the block's units in the GPU as the options say and returns what the run will
    /// report; `None` if the run does not use the block (a policy engine the policy does not
    /// run).
    pub install: fn(&mut Build) -> Result<Option<Box<dyn Outcome>>, String>,
    /// A soak's runs of random workload `index` of the soak of `seed`, on the configuration
    /// the unit has set up.
    pub soak: fn(seed: u64, cfg: &GpuConfig, index: u64) -> Vec<Run>,
    /// Whether it runs only in lockstep (no `--mode rtl` or `model`).
    pub lockstep_only: bool,
    /// Whether the GPU gates its clock while it is idle (unless `--every-cycle`).
    pub clock_gated: bool,
    /// The run whose trace becomes the self-checking testbench of its IP folder
    /// (`mpgpu verilog`, `crate::ip_folder::record_testbench`).
    pub testbench: TbRun,
}

/// The run that records a block's testbench (`docs/ip.md`, "The testbench"): a short workload
/// that exercises the block, the framework's policy (for the framework and its engines, the
/// policy their Verilog is generated for), and the rate of faults injected into global
/// accesses (0: none). The run is the block's unit's, on the configuration the Verilog is
/// generated for, RTL in the loop on SM 0 for a per-SM block.
#[derive(Clone, Copy, Debug)]
pub struct TbRun {
    /// The workload, as a workload file's text.
    pub workload: &'static str,
    pub policy: mpgpu_ref::units::framework::Policy,
    pub inject: f64,
    /// For a block whose Verilog `Sizing::sharing` changes (the framework): the workload of its
    /// run built to share its SMs, with Warped-Slicer's quotas inside it.
    pub sharing: Option<&'static str>,
}

impl TbRun {
    /// `workload` under FCFS, no faults injected.
    pub const fn of(workload: &'static str) -> TbRun {
        TbRun { workload, policy: mpgpu_ref::units::framework::Policy::Fcfs, inject: 0.0, sharing: None }
    }
}

/// Testbench workloads: two processes side by side (a memory-bound and a compute-bound kernel,
/// one round of blocks each).
pub const TB_TWO: &str = "description = \"the testbench's two processes\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 1 }]\n[[process]]\nname = \"sgemm\"\nlaunches = [{ kernel = \"sgemm\", size = 32, seed = 2 }]\n";
/// One memory-bound process (faults injected into its accesses).
pub const TB_ONE: &str = "description = \"the testbench's process\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 32, seed = 1 }]\n";
/// A high-priority process arriving while a low-priority one holds the GPU (a preemption).
pub const TB_PRIORITY: &str = "description = \"the testbench's priority pair\"\n[[process]]\nname = \"lbm-low\"\npriority = 0\nlaunches = [{ kernel = \"lbm\", size = 144, seed = 1 }]\n[[process]]\nname = \"sgemm-high\"\narrival = 1000\npriority = 1\nlaunches = [{ kernel = \"sgemm\", size = 32, seed = 2 }]\n";
/// Two processes whose blocks share SMs, some finding their room only in pieces (the admission
/// unit packs the ranges).
pub const TB_ADMIT: &str = "description = \"the testbench's sharing pair\"\n[[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 384, seed = 1 }]\n[[process]]\nname = \"sgemm\"\nlaunches = [{ kernel = \"sgemm\", size = 128, seed = 2 }]\n";
/// A Warped-Slicer pair (`workloads/slicing/mriq-cutcp.toml`): a profile and a decision.
pub const TB_PAIR: &str = include_str!("../../workloads/slicing/mriq-cutcp.toml");

/// What a block's [`Host::install`] works with: the GPU being built, the run's settings, and
/// where its waveforms and traces go.
pub struct Build<'a> {
    pub cfg: &'a GpuConfig,
    pub o: &'a CosimOptions,
    pub rec: &'a Rec,
    /// This block's trace: the run's, or with several blocks `DIR/<block>/`.
    pub trace: Option<PathBuf>,
    pub gpu: Gpu,
    /// The GPU's SMs.
    pub n: usize,
}

impl Build<'_> {
    /// Puts a per-SM block's units in every SM, as `o.mode` and `o.sms` say (the RTL alone, the
    /// model alone, or both in lockstep; the model in the SMs without the RTL), each SM's trace
    /// in its own directory (`DIR/sm<k>`, for `mpgpu replay`).
    pub fn per_sm<M, P>(&mut self, ports: P, model: &dyn Fn() -> M, state: fn(&M) -> P::State) -> Result<Box<dyn Outcome>, String>
    where
        M: Unit<In = P::In, Out = P::Out> + Hosted + 'static,
        P: Ports + Copy + 'static,
    {
        let (n, o) = (self.n, self.o);
        let mut units: Vec<Held<P::In, P::Out>> = Vec::with_capacity(n);
        let outcome: Box<dyn Outcome> = if o.mode == SlotMode::RtlAlone {
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
            Box::new(AloneOutcome(counters))
        } else {
            let bank = Bank::new(&ports.name(), n, o.mode, &o.sms, o.backend, |_| model(), |_| ports, state)?;
            for (k, s) in bank.slots.iter().enumerate() {
                match s {
                    Slot::Pair(p) => {
                        let tw = trace_writer(&p.0.borrow().pair.rtl, self.trace.as_ref().map(|d| d.join(format!("sm{k}"))).as_deref())?;
                        let mut c = p.0.borrow_mut();
                        if self.rec.sms.contains(k) {
                            c.record_from = self.rec.from;
                            c.record_until = self.rec.until;
                            c.record_time = self.rec.time;
                        }
                        c.trace = tw;
                        drop(c);
                        units.push(Box::new(p.clone()));
                    }
                    _ => units.push(Box::new(model())),
                }
            }
            Box::new(BankOutcome(bank))
        };
        self.install(units)?;
        Ok(outcome)
    }

    /// Puts a global block's unit in the GPU as `o.mode` says (the RTL alone, the model alone,
    /// or both in lockstep, named as the block), its clock gated while `busy` is low if given.
    pub fn global<M, P>(&mut self, ports: P, model: M, state: fn(&M) -> P::State, busy: Option<fn(&P::Out) -> bool>) -> Result<Box<dyn Outcome>, String>
    where
        M: Unit<In = P::In, Out = P::Out> + Hosted + 'static,
        P: Ports + 'static,
    {
        let o = self.o;
        let (outcome, unit): (Box<dyn Outcome>, Held<P::In, P::Out>) = match o.mode {
            SlotMode::Lockstep => {
                let rtl = RtlUnit::with_backend(ports, o.backend)?;
                let name = rtl.ports.name();
                let mut c = Cosim::with_state(&name, model, rtl, state).recording(self.rec.clone()).tracing(self.trace.as_deref())?;
                c.busy = busy;
                let h = Shared::new(c);
                (Box::new(h.clone()), Box::new(h))
            }
            SlotMode::RtlAlone => {
                let mut a = Alone::new(RtlUnit::with_backend(ports, o.backend)?);
                a.busy = busy;
                (Box::new(AloneOutcome(vec![a.cycles.clone()])), Box::new(a))
            }
            SlotMode::ModelAlone => (Box::new(AloneOutcome(Vec::new())), Box::new(model)),
        };
        self.install(vec![unit])?;
        Ok(outcome)
    }

    /// Puts `units` in the GPU's slots of their interface, one per instance.
    pub fn install<I: 'static, O: 'static>(&mut self, units: Vec<Held<I, O>>) -> Result<(), String> {
        let mut it = units.into_iter();
        self.gpu.set_units(&mut |_| it.next().expect("one unit per instance"))
    }
}

/// The GPU `kind` for a run of `w` on `cfg` as `o` says (its models in every slot).
pub fn gpu_of(kind: GpuKind, cfg: &GpuConfig, w: &Workload, o: &CosimOptions) -> Result<Gpu, String> {
    let procs = w.processes.len();
    let slicer = || Slicer::for_workload(cfg, w, o.slicing, o.slice, o.limits).map_err(|e| format!("the Oracle's isolated runs: {e}"));
    if o.sliced {
        return Gpu::with_framework_sliced(cfg, o.policy, o.mechanism, procs, Box::new(slicer()?.in_framework()));
    }
    // (a static steering policy decides from each process's isolated runs)
    let steer = || -> Result<mpgpu_ref::timing::steer::Steer, String> {
        let s = mpgpu_ref::timing::steer::Steer::new(cfg, o.steering, o.steer);
        Ok(if o.steering.is_static() { s.with_offline(mpgpu_ref::timing::steer::offline_for(cfg, w, o.limits).map_err(|e| format!("the static steering's isolated runs: {e}"))?) } else { s })
    };
    if o.steered {
        return Gpu::with_framework_sliced(cfg, o.policy, o.mechanism, procs, Box::new(steer()?.in_framework()));
    }
    Ok(match kind {
        GpuKind::Framework => Gpu::with_framework(cfg, o.policy, o.mechanism, procs)?,
        GpuKind::PerSm if o.framework => Gpu::with_framework(cfg, o.policy, o.mechanism, procs)?,
        GpuKind::PerSm => Gpu::new(cfg),
        GpuKind::Slicer => Gpu::with_dispatcher(cfg, Box::new(slicer()?)),
        // (the steering unit's `fits` has checked the configuration and the profile)
        GpuKind::Steer => Gpu::with_dispatcher(cfg, Box::new(steer()?)),
    })
}

/// Refuses a configuration of several kinds of SM for a unit built alike for every SM (or sized
/// by one SM's resources).
pub fn identical_sms(cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
    if cfg.sm.len() != 1 {
        return Err(format!("--unit {} needs identical SMs; `{}` has {} kinds", o.unit, cfg.name, cfg.sm.len()));
    }
    Ok(())
}

/// Refuses a configuration the scheduling framework cannot run on.
pub fn framework_fits(cfg: &GpuConfig, _: &CosimOptions) -> Result<(), String> {
    Gpu::framework_params(cfg).map(drop)
}
