//! Enumerated command-line values (clap `ValueEnum`) and what they stand for in the model.

use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_tb::Backend;

/// A policy of the kernel scheduling framework.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// First come, first served.
    Fcfs,
    /// Non-preemptive priority.
    Npq,
    /// Preemptive priority, the high-priority kernel takes the whole GPU.
    PpqExcl,
    /// Preemptive priority, sharing the SMs a high-priority kernel cannot use.
    PpqShared,
    /// Dynamic Spatial Sharing with the workload's tokens.
    Dss,
    /// Equal Spatial Sharing.
    Equal,
}

impl From<PolicyArg> for Policy {
    fn from(p: PolicyArg) -> Policy {
        match p {
            PolicyArg::Fcfs => Policy::Fcfs,
            PolicyArg::Npq => Policy::Npq,
            PolicyArg::PpqExcl => Policy::PpqExclusive,
            PolicyArg::PpqShared => Policy::PpqShared,
            PolicyArg::Dss => Policy::Dss,
            PolicyArg::Equal => Policy::Equal,
        }
    }
}

/// A preemption mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MechanismArg {
    /// Context switch through global memory.
    Ctxsw,
    /// Draining: the SM gets no more blocks and is taken when its blocks finish.
    Drain,
}

impl MechanismArg {
    /// `--preempt` as given, else the default for `cfg` (`Mechanism::default_for`).
    pub fn or_default_for(m: Option<MechanismArg>, cfg: &mpgpu_ref::config::GpuConfig) -> MechanismArg {
        m.unwrap_or(match Mechanism::default_for(cfg) {
            Mechanism::ContextSwitch => MechanismArg::Ctxsw,
            Mechanism::Drain => MechanismArg::Drain,
        })
    }
}

impl From<MechanismArg> for Mechanism {
    fn from(m: MechanismArg) -> Mechanism {
        match m {
            MechanismArg::Ctxsw => Mechanism::ContextSwitch,
            MechanismArg::Drain => Mechanism::Drain,
        }
    }
}

/// The simulator of an RTL block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// rust-hdl's own simulation of the Rust block.
    RustHdl,
    /// The generated Verilog, compiled by Verilator.
    Verilator,
    /// The block on an FPGA behind the UART step protocol (`docs/board.md`): the board on
    /// `--device`, or without it the board wrapper's own simulation.
    Fpga,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::RustHdl => Backend::RustHdl,
            BackendArg::Verilator => Backend::Verilator,
            BackendArg::Fpga => Backend::Fpga,
        }
    }
}

/// Demand paging: where data start and what a fault costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PagingArg {
    /// Every page resident from the start.
    Off,
    /// Data start in host memory; NVLink fault costs (12 µs with data, 10 µs without).
    Nvlink,
    /// PCIe 3.0 fault costs (25 µs, 12 µs).
    Pcie,
}

impl From<PagingArg> for mpgpu_ref::config::PagingLink {
    fn from(p: PagingArg) -> Self {
        match p {
            PagingArg::Off => Self::Off,
            PagingArg::Nvlink => Self::Nvlink,
            PagingArg::Pcie => Self::Pcie,
        }
    }
}

/// How an SM takes a page fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaultsArg {
    /// Stall on the fault (the baseline).
    Stall,
    /// Warp Disable, fetch re-enabled at commit.
    WdCommit,
    /// Warp Disable, fetch re-enabled at the last TLB check.
    WdLastcheck,
    /// The replay queue (thesis pipeline).
    Rq,
    /// The operand log with the replay queue (thesis pipeline).
    Ol,
    /// A naive squash-and-restart that is wrong on purpose, to show the hazards (thesis pipeline).
    Naive,
}

impl From<FaultsArg> for mpgpu_ref::config::FaultScheme {
    fn from(f: FaultsArg) -> Self {
        match f {
            FaultsArg::Stall => Self::Stall,
            FaultsArg::WdCommit => Self::WdCommit,
            FaultsArg::WdLastcheck => Self::WdLastcheck,
            FaultsArg::Rq => Self::Rq,
            FaultsArg::Ol => Self::Ol,
            FaultsArg::Naive => Self::Naive,
        }
    }
}

/// The virtual-memory options of a run, applied over the configuration's.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct VmArgs {
    /// Demand paging: data start in host memory and fault in (default: the configuration's,
    /// off in every preset).
    #[arg(long, value_enum)]
    pub paging: Option<PagingArg>,
    /// Bytes migrated per fault: 4k (a page) or 64k (the thesis's chunk), or any power of two
    /// from 4k to 2m.
    #[arg(long, value_parser = parse_bytes)]
    pub migration: Option<u32>,
    /// How the SMs take a fault (default: the configuration's, stall).
    #[arg(long, value_enum)]
    pub faults: Option<FaultsArg>,
    /// Address translation on or off (default: the configuration's, on in thesis16; demand
    /// paging switches it on). Off: an ideal MMU, every translation an L1 TLB hit.
    #[arg(long, value_parser = ["on", "off"])]
    pub vm: Option<String>,
    /// The operand log's size per SM for `--faults ol` (128-byte entries; e.g. 4k and 8k are
    /// the thesis's 8 KB and 16 KB logs at 32-bit operands).
    #[arg(long, value_parser = parse_bytes)]
    pub oplog_bytes: Option<u32>,
    /// With `--faults ol`, a global memory instruction whose block's log partition is full:
    /// `stall` (does not issue) or `hold` (issues unlogged, holding its sources as under the
    /// replay queue).
    #[arg(long, value_parser = ["stall", "hold"])]
    pub oplog_full: Option<String>,
    /// Local fault handling: faults on pages with no data are handled on the GPU (20 µs each,
    /// in parallel), not by the host (needs a preemptible --faults).
    #[arg(long)]
    pub local_faults: bool,
    /// Thread-block switching on faults (needs --faults rq|ol): `on` (contexts saved and
    /// restored through memory) or `ideal` (1-cycle switches).
    #[arg(long, value_parser = ["off", "on", "ideal"])]
    pub tb_switch: Option<String>,
    /// Replay-queue slots per SM for `--faults rq|ol`.
    #[arg(long)]
    pub rq_entries: Option<u32>,
    /// Inject faults: RATE (probability per global memory instruction) or RATE,SEED or
    /// RATE,SEED,LATENCY (cycles until the page is in; default 2000).
    #[arg(long, value_parser = parse_inject)]
    pub inject: Option<mpgpu_ref::config::FaultInjection>,
    /// How SMs allocate registers, scratchpad and warp slots: `block` (the occupancy rule),
    /// `zorua` (Zorua's coordinator and mapping tables, docs/zorua.md) or `wlm` (a warp-level
    /// manager, the paper's comparison).
    #[arg(long, value_parser = ["block", "zorua", "wlm"])]
    pub alloc: Option<String>,
    /// Every SM's pipeline: `gpgpusim` (per-scheduler warps, in-order issue per warp) or
    /// `thesis` (the thesis's unified issue queue, out-of-order issue within a warp, which the
    /// replaying fault schemes need; docs/faults.md). Default: the configuration's.
    #[arg(long, value_parser = ["gpgpusim", "thesis"])]
    pub pipeline: Option<String>,
    /// Compile every kernel under this many registers per thread with the unified allocator
    /// (docs/unified.md): values that do not fit go to shared-memory spill slots
    /// (--spill-slots), then to local memory. `auto`: each kernel at the cap and slots the
    /// paper's concurrency search chooses for the GPU's SMs.
    #[arg(long, value_name = "REGS|auto", value_parser = parse_reg_cap)]
    pub reg_cap: Option<RegCap>,
    /// With --reg-cap: 4-byte shared-memory spill slots per thread (default 0: every spill in
    /// local memory).
    #[arg(long, value_name = "SLOTS", requires = "reg_cap")]
    pub spill_slots: Option<u32>,
}

/// `--reg-cap`: a register count or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegCap {
    Regs(u32),
    Auto,
}

pub fn parse_reg_cap(s: &str) -> Result<RegCap, String> {
    match s.trim() {
        "auto" => Ok(RegCap::Auto),
        t => t.parse().map(RegCap::Regs).map_err(|_| format!("`{s}` is neither a register count nor `auto`")),
    }
}

/// The pipeline `--pipeline` names (`gpgpusim` or `thesis`, as its value parser allows).
pub fn pipeline(name: &str) -> mpgpu_ref::config::Pipeline {
    if name == "thesis" {
        mpgpu_ref::config::Pipeline::Thesis
    } else {
        mpgpu_ref::config::Pipeline::Gpgpusim
    }
}

/// `RATE[,SEED[,LATENCY]]` for `--inject`.
pub fn parse_inject(s: &str) -> Result<mpgpu_ref::config::FaultInjection, String> {
    let mut it = s.split(',');
    let mut inj = mpgpu_ref::config::FaultInjection::default();
    let rate = it.next().unwrap_or("");
    inj.rate = rate.trim().parse().map_err(|_| format!("`{rate}` is not a probability (expected e.g. 0.01, or 0.01,SEED,LATENCY)"))?;
    if !(0.0..1.0).contains(&inj.rate) {
        return Err(format!("rate {} is not a probability in [0, 1) (at 1 every replay faults again)", inj.rate));
    }
    if let Some(seed) = it.next() {
        inj.seed = seed.trim().parse().map_err(|_| format!("seed `{seed}` is not a whole number"))?;
    }
    if let Some(lat) = it.next() {
        inj.latency = lat.trim().parse().map_err(|_| format!("latency `{lat}` is not a cycle count"))?;
    }
    if it.next().is_some() {
        return Err(format!("`{s}`: expected RATE[,SEED[,LATENCY]]"));
    }
    Ok(inj)
}

impl VmArgs {
    /// Applies the options to a configuration, and checks the result.
    pub fn apply(&self, cfg: &mut mpgpu_ref::config::GpuConfig) -> anyhow::Result<()> {
        if let Some(p) = self.paging {
            cfg.paging.link = p.into();
            if p != PagingArg::Off {
                cfg.memory.vm = true;
            }
        }
        if let Some(m) = self.migration {
            cfg.paging.migration_bytes = m;
        }
        if let Some(f) = self.faults {
            cfg.faults = f.into();
        }
        if let Some(v) = &self.vm {
            cfg.memory.vm = v == "on";
        }
        for g in &mut cfg.sm {
            if let Some(p) = &self.pipeline {
                g.pipeline = pipeline(p);
            }
            if let Some(b) = self.oplog_bytes {
                g.oplog_bytes = b;
            }
            if let Some(n) = self.rq_entries {
                g.rq_entries = n;
            }
            if let Some(f) = &self.oplog_full {
                g.oplog_full = if f == "hold" { mpgpu_ref::config::OplogFull::Hold } else { mpgpu_ref::config::OplogFull::Stall };
            }
        }
        if let Some(i) = self.inject {
            cfg.inject = i;
        }
        if let Some(a) = &self.alloc {
            cfg.alloc = mpgpu_ref::config::Alloc::parse(a).map_err(|e| anyhow::anyhow!(e))?;
        }
        if self.local_faults {
            cfg.paging.local = true;
        }
        // (the flags replace the configuration's [compile] section: a cap from the flags with
        // the file's auto, or the other way round, is the flag's)
        match self.reg_cap {
            Some(RegCap::Regs(r)) => cfg.compile = mpgpu_ref::config::CompileConfig { reg_cap: Some(r), spill_slots: self.spill_slots.unwrap_or(0), auto: false },
            Some(RegCap::Auto) if self.spill_slots.is_some() => anyhow::bail!("--spill-slots: the search chooses each kernel's spill slots under --reg-cap auto; leave --spill-slots out"),
            Some(RegCap::Auto) => cfg.compile = mpgpu_ref::config::CompileConfig { auto: true, ..Default::default() },
            None => {}
        }
        if let Some(t) = &self.tb_switch {
            cfg.tb_switch.enabled = t != "off";
            cfg.tb_switch.ideal = t == "ideal";
        }
        cfg.validate().map_err(|e| anyhow::anyhow!("{}", in_flags(&e, &self.given())))
    }

    /// The flags given (an error about a field they set is told as the flag).
    fn given(&self) -> Vec<&'static str> {
        let flags = [
            (self.paging.is_some(), "--paging"),
            (self.migration.is_some(), "--migration"),
            (self.faults.is_some(), "--faults"),
            (self.oplog_bytes.is_some(), "--oplog-bytes"),
            (self.local_faults, "--local-faults"),
            (self.tb_switch.is_some(), "--tb-switch"),
            (self.rq_entries.is_some(), "--rq-entries"),
            (self.inject.is_some(), "--inject"),
            (self.alloc.is_some(), "--alloc"),
            (self.pipeline.is_some(), "--pipeline"),
            (self.reg_cap.is_some(), "--reg-cap"),
            (self.spill_slots.is_some(), "--spill-slots"),
        ];
        flags.iter().filter(|f| f.0).map(|f| f.1).collect()
    }
}

/// The configuration fields the command-line flags set (an `sm[k].` prefix stands for every
/// SM kind): a configuration's validation error about one of them is told as the flag's.
const FLAG_FIELDS: &[(&str, &str)] = &[
    ("rq_entries", "--rq-entries"),
    ("oplog_bytes", "--oplog-bytes"),
    ("paging.migration_bytes", "--migration"),
    ("paging.link", "--paging"),
    ("paging.local", "--local-faults"),
    ("inject.rate", "--inject"),
    ("inject.latency", "--inject"),
    ("tb_switch", "--tb-switch"),
    ("faults", "--faults"),
    ("alloc", "--alloc"),
    ("pipeline", "--pipeline"),
    ("compile.reg_cap", "--reg-cap"),
    ("compile.spill_slots", "--spill-slots"),
    ("compile.auto", "--reg-cap"),
];

/// A configuration's validation error (`field `sm[0].rq_entries`: 0 is out of range ...`)
/// told in the terms of the flag that set the field (`--rq-entries: 0 is out of range ...`)
/// when it is among the flags `given`, or else as the configuration's field.
pub fn in_flags(e: &str, given: &[&str]) -> String {
    let Some((field, rest)) = e.strip_prefix("field `").and_then(|r| r.split_once("`: ")) else {
        return e.to_string();
    };
    let plain = match field.strip_prefix("sm[") {
        Some(r) => r.split_once("].").map_or(field, |(_, f)| f),
        None => field,
    };
    match FLAG_FIELDS.iter().find(|(f, flag)| *f == plain && given.contains(flag)) {
        Some((_, flag)) => format!("{flag}: {rest}"),
        None => format!("the configuration's field `{field}`: {rest}"),
    }
}

/// A byte count: a number, optionally with k or m (binary).
pub fn parse_bytes(s: &str) -> Result<u32, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mul) = if let Some(n) = t.strip_suffix(['k']) {
        (n, 1024u64)
    } else if let Some(n) = t.strip_suffix(['m']) {
        (n, 1024 * 1024)
    } else {
        (t.as_str(), 1)
    };
    let v: u64 = num.parse().map_err(|_| format!("`{s}` is not a byte count (expected e.g. 4096, 4k, 64k)"))?;
    v.checked_mul(mul).and_then(|b| u32::try_from(b).ok()).ok_or_else(|| format!("`{s}` is too large"))
}

/// The cycle budget of a command that runs the timing model (`--max-cycles`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct LimitArgs {
    /// Stop with a report (each unfinished launch's kernel, blocks and PCs) if a run has not
    /// finished by this GPU cycle.
    #[arg(long, default_value_t = crate::common::DEFAULT_MAX_CYCLES, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_cycles: u64,
}

impl LimitArgs {
    pub fn limits(&self) -> mpgpu_ref::timing::RunLimits {
        crate::common::limits(self.max_cycles)
    }
}

/// An intra-SM slicing policy (Warped-Slicer and the policies it is compared with).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SlicingArg {
    /// The oldest kernel takes all it fits; later kernels what is left.
    LeftOver,
    /// Each of K kernels gets 1/K of every SM resource.
    Even,
    /// The SMs split into one contiguous group per kernel.
    Spatial,
    /// Quotas from an online profile and the water-filling unit (ISCA 2016).
    WarpedSlicer,
    /// Water-filling on curves from isolated runs of each process (at 1, 2, ... blocks per SM).
    Oracle,
}

impl From<SlicingArg> for mpgpu_ref::timing::slicer::Slicing {
    fn from(a: SlicingArg) -> Self {
        use mpgpu_ref::timing::slicer::Slicing;
        match a {
            SlicingArg::LeftOver => Slicing::LeftOver,
            SlicingArg::Even => Slicing::Even,
            SlicingArg::Spatial => Slicing::Spatial,
            SlicingArg::WarpedSlicer => Slicing::WarpedSlicer,
            SlicingArg::Oracle => Slicing::Oracle,
        }
    }
}

/// Warped-Slicer's parameters: `mpgpu run --slicing warped-slicer`, `mpgpu cosim --unit wf`,
/// `mpgpu slicing`. A parameter not given takes the model's default ([`SliceParams::default`]).
///
/// [`SliceParams::default`]: mpgpu_ref::timing::slicer::SliceParams
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct WsArgs {
    /// Warped-Slicer's profiling window, cycles (default 5000).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub ws_window: Option<u16>,
    /// Cycles from the last profiling window's end to the decision (default 0).
    #[arg(long)]
    pub ws_delay: Option<u16>,
    /// Fallback to Spatial when a kernel keeps less than this percent of 1/K of its peak
    /// (default 120).
    #[arg(long)]
    pub ws_fallback: Option<u8>,
    /// Profile every kernel up to its occupancy, even past the blocks per SM its grid can fill
    /// (the paper's layout; by default a kernel's counts stop at ⌈blocks left / SMs⌉).
    #[arg(long)]
    pub ws_no_grid_cap: bool,
    /// Cycles a profiling round's layout may take to settle (every SM holding only its kernel's
    /// blocks at its count) before its window opens anyway (default 5000).
    #[arg(long)]
    pub ws_settle: Option<u64>,
}

impl WsArgs {
    pub fn params(&self) -> mpgpu_ref::timing::slicer::SliceParams {
        let d = mpgpu_ref::timing::slicer::SliceParams::default();
        mpgpu_ref::timing::slicer::SliceParams {
            window: self.ws_window.unwrap_or(d.window),
            delay: self.ws_delay.unwrap_or(d.delay),
            pct: self.ws_fallback.unwrap_or(d.pct),
            grid_cap: d.grid_cap && !self.ws_no_grid_cap,
            settle: self.ws_settle.unwrap_or(d.settle),
        }
    }

    /// Whether any of Warped-Slicer's parameters was given.
    pub fn given(&self) -> bool {
        self.ws_window.is_some() || self.ws_delay.is_some() || self.ws_fallback.is_some() || self.ws_no_grid_cap || self.ws_settle.is_some()
    }
}

/// The slicing policy of `mpgpu run`, with Warped-Slicer's parameters.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct SliceArgs {
    /// Intra-SM slicing of the SMs among the kernels (instead of the baseline dispatcher; with
    /// --policy, inside the scheduling framework: docs/warped-slicer.md).
    #[arg(long, value_enum)]
    pub slicing: Option<SlicingArg>,
    #[command(flatten)]
    pub ws: WsArgs,
}

/// HeteroCore's kernel steering (`docs/heterocore.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SteerArg {
    /// Every kernel an equal share of every SM kind (TLP-agnostic; on identical SMs, even
    /// spatial partitioning).
    Even,
    /// Spatial profiling on both SM kinds, then the big SMs to the kernel that gains most
    /// (the HeteroCore paper's Algorithm 2).
    Dynamic,
    /// Static, by class (§4.2.1): the thick kernel to the big SMs, the lean one to the small;
    /// two of a class split them. Each process first runs alone (on the conventional GPU and
    /// on half the SMs of each kind) to classify it.
    Classified,
    /// Static, STP-optimised (§4.2.2, Algorithm 1): the assignment of the larger estimated STP
    /// from the isolated runs, never split.
    StpOptimized,
    /// Static, STP/ANTT-balanced (§4.2.3): split when both kernels run faster on big SMs than
    /// on small ones, else as STP-optimised.
    Balanced,
}

/// The longest profiling phase the steering unit's timer counts.
const STEER_CYCLES_MAX: u64 = (1 << mpgpu_spec::units::steer::WINDOW_BITS) - 1;

/// The steering of `mpgpu run`, with its profiling phase's lengths.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct SteerArgs {
    /// Steer kernels to SMs of their own (instead of the baseline dispatcher): HeteroCore's
    /// policies (docs/heterocore.md).
    #[arg(long, value_enum)]
    pub steer: Option<SteerArg>,
    /// The profiling warm-up of --steer dynamic, cycles (default 20000; at most 262143, the
    /// steering unit's timer).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=STEER_CYCLES_MAX))]
    pub steer_warmup: Option<u64>,
    /// The measured window that follows it, cycles (default 20000; at most 262143).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=STEER_CYCLES_MAX))]
    pub steer_window: Option<u64>,
    /// How an SM that changes owner gives up another kernel's blocks (default adaptive: drain
    /// a kernel that ended a block in the profiling warm-up, context-switch the others).
    #[arg(long, value_enum)]
    pub steer_preempt: Option<SteerPreemptArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SteerPreemptArg {
    Adaptive,
    Drain,
    Switch,
}

impl SteerArgs {
    /// The steering asked for, or an error when a steering flag comes without it.
    /// The steering policy and its parameters as given (`in_framework`: the steering is the
    /// framework's quota controller, `--policy` given, and a steered SM changes owner by
    /// draining: another `--steer-preempt` is refused).
    pub fn choice(&self, in_framework: bool) -> anyhow::Result<Option<(mpgpu_ref::timing::steer::Steering, mpgpu_ref::timing::steer::SteerParams)>> {
        use mpgpu_ref::timing::steer::{SteerParams, Steering};
        if self.steer != Some(SteerArg::Dynamic) && (self.steer_warmup.is_some() || self.steer_window.is_some()) {
            anyhow::bail!("--steer-warmup and --steer-window time the profiling of --steer dynamic: they need it");
        }
        if self.steer.is_none() && self.steer_preempt.is_some() {
            anyhow::bail!("--steer-preempt chooses how a steered SM changes owner: it needs --steer");
        }
        if in_framework && self.steer_preempt.is_some_and(|p| p != SteerPreemptArg::Drain) {
            anyhow::bail!("--steer-preempt: with --policy the steering is the framework's quota controller, and a steered SM changes owner by draining (--steer-preempt drain, the default there)");
        }
        let d = SteerParams::default();
        let preempt = match self.steer_preempt {
            None => d.preempt,
            Some(SteerPreemptArg::Adaptive) => mpgpu_ref::timing::steer::Preempt::Adaptive,
            Some(SteerPreemptArg::Drain) => mpgpu_ref::timing::steer::Preempt::Drain,
            Some(SteerPreemptArg::Switch) => mpgpu_ref::timing::steer::Preempt::Switch,
        };
        let params = SteerParams { warmup: self.steer_warmup.unwrap_or(d.warmup), window: self.steer_window.unwrap_or(d.window), preempt };
        let params = if in_framework { params.in_framework() } else { params };
        Ok(self.steer.map(|s| {
            let s = match s {
                SteerArg::Even => Steering::Even,
                SteerArg::Dynamic => Steering::Dynamic,
                SteerArg::Classified => Steering::Classified,
                SteerArg::StpOptimized => Steering::StpOptimized,
                SteerArg::Balanced => Steering::Balanced,
            };
            (s, params)
        }))
    }
}

/// A name from the registry (`mpgpu_tb::registry`): clap lists the names with what each is in
/// the help and rejects any other with "unknown NOUN `NAME`; NOUNs: ...".
#[derive(Clone)]
pub struct Registered<T: Clone + Send + Sync + 'static> {
    noun: &'static str,
    all: fn() -> Vec<(&'static str, &'static str, T)>,
    /// A list of names (`a,b`), where the registry takes lists; an error names the part.
    list: Option<fn(&str) -> Result<T, String>>,
}

/// `mpgpu verilog`'s and `mpgpu fpga`'s block: a block of the registry.
pub fn block_name() -> Registered<&'static mpgpu_tb::registry::Block> {
    Registered { noun: "block", all: || mpgpu_tb::registry::BLOCKS.iter().map(|b| (b.name, b.about, b)).collect(), list: None }
}

/// Blocks of the registry (a newtype: clap reads a bare `Vec` as repeated values).
#[derive(Clone)]
pub struct BlockSet(pub Vec<&'static mpgpu_tb::registry::Block>);

/// `mpgpu verilog`'s blocks: one block of the registry, or `all`.
pub fn blocks_or_all() -> Registered<BlockSet> {
    Registered {
        noun: "block",
        all: || {
            let blocks = &mpgpu_tb::registry::BLOCKS;
            blocks.iter().map(|b| (b.name, b.about, BlockSet(vec![b]))).chain(std::iter::once(("all", "every block, each in its own folder", BlockSet(blocks.iter().collect())))).collect()
        },
        list: None,
    }
}

/// `--unit`: a co-simulation unit (`mpgpu_tb::cosim::UnitKind`), or a list of them put in the
/// GPU together (`sched,rq-ol`).
pub fn unit_name() -> Registered<mpgpu_tb::cosim::UnitKind> {
    Registered {
        noun: "unit",
        all: || {
            let every = mpgpu_tb::cosim::UnitKind::every_block(false);
            mpgpu_tb::cosim::UnitKind::all().into_iter().map(|u| (u.name(), u.about(), u)).chain(std::iter::once((every.name(), every.about(), every))).collect()
        },
        list: Some(mpgpu_tb::cosim::UnitKind::named),
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Registered<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<T, clap::Error> {
        let name = value.to_string_lossy();
        let all = (self.all)();
        let flag = arg.map_or_else(|| self.noun.to_string(), |a| a.to_string());
        match all.iter().find(|(n, _, _)| *n == name) {
            Some((_, _, t)) => Ok(t.clone()),
            None if name.contains(',') && self.list.is_some() => (self.list.expect("checked"))(&name).map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("invalid value '{name}' for '{flag}': {e}\n")).with_cmd(cmd)),
            None => {
                let names: Vec<&str> = all.iter().map(|(n, _, _)| *n).collect();
                let msg = format!("invalid value '{name}' for '{flag}': unknown {} `{name}`; {}s: {}\n", self.noun, self.noun, names.join(", "));
                Err(clap::Error::raw(clap::error::ErrorKind::InvalidValue, msg).with_cmd(cmd))
            }
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new((self.all)().into_iter().map(|(n, about, _)| clap::builder::PossibleValue::new(n).help(about))))
    }
}
