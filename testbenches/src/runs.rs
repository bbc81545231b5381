//! The runs a soak gives each random workload (`crate::soak`): each block's host lists its own
//! (`crate::entry::Host::soak`) from the helpers here.

use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::timing::slicer::Slicing;
use mpgpu_ref::units::framework::{Mechanism, Policy};

/// Every policy and mechanism a soak runs each workload under.
pub const POLICIES: [Policy; 6] = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
pub const MECHANISMS: [Mechanism; 2] = [Mechanism::ContextSwitch, Mechanism::Drain];
/// The slicing policies a soak of the slice table runs (the online ones: the Oracle's curves
/// take every process's isolated runs first).
pub const SLICINGS: [Slicing; 4] = [Slicing::LeftOver, Slicing::Even, Slicing::Spatial, Slicing::WarpedSlicer];

/// One co-simulation of a soak's workload.
pub struct Run {
    pub policy: Policy,
    pub mechanism: Mechanism,
    pub cfg: GpuConfig,
    /// The flags that set it apart (`mpgpu cosim`'s), for the report.
    pub variant: String,
    pub framework: bool,
    pub slicing: Slicing,
    /// Slicing inside the framework: `policy` and `mechanism` the framework's, `slicing` its
    /// quota controller.
    pub sliced: bool,
    /// The steering dispatcher's profile and preemption (the steering unit's runs).
    pub steer: mpgpu_ref::timing::steer::SteerParams,
    /// Steering inside the framework: `policy` and `mechanism` the framework's, the steering
    /// (dynamic, `steer`) its quota controller.
    pub steered: bool,
}

impl Run {
    /// A run on `cfg` under `policy` and `mechanism`, set apart by the flags `variant`.
    pub fn new(policy: Policy, mechanism: Mechanism, cfg: &GpuConfig, variant: impl Into<String>) -> Run {
        Run { policy, mechanism, cfg: cfg.clone(), variant: variant.into(), framework: false, slicing: Slicing::WarpedSlicer, sliced: false, steer: Default::default(), steered: false }
    }

    /// A run on `cfg` with the default policy (FCFS, context switching: a per-SM block's or a
    /// slicing dispatcher's run does not read them).
    pub fn fcfs(cfg: &GpuConfig, variant: impl Into<String>) -> Run {
        Run::new(Policy::Fcfs, Mechanism::ContextSwitch, cfg, variant)
    }

    /// Whether `other` is the same run (a unit of several blocks runs each once).
    pub fn same(&self, other: &Run) -> bool {
        (self.policy, self.mechanism, &self.variant, self.framework, self.slicing, self.sliced, self.steer, self.steered) == (other.policy, other.mechanism, &other.variant, other.framework, other.slicing, other.sliced, other.steer, other.steered)
    }
}

/// The framework's runs: every policy `keep` takes, under every mechanism.
pub fn policy_runs(cfg: &GpuConfig, keep: fn(Policy) -> bool) -> Vec<Run> {
    POLICIES.iter().filter(|&&p| keep(p)).flat_map(|&p| MECHANISMS.iter().map(move |&m| (p, m))).map(|(p, m)| Run::new(p, m, cfg, "")).collect()
}

/// A fault-handling block's runs of workload `index` of the soak of `seed` under its fault
/// scheme (`cfg.faults`):
/// injected faults (at a rate and seed drawn from the workload's index), and demand paging
/// with thread-block switching.
pub fn fault_runs(seed: u64, cfg: &GpuConfig, index: u64) -> Vec<Run> {
    let scheme = cfg.faults;
    let name = scheme.name();
    let rate = [0.01, 0.02, 0.05][(index % 3) as usize];
    let seed = seed.wrapping_mul(1_000_003).wrapping_add(index) % 1_000_000_007;
    let mut injected = cfg.clone();
    injected.inject.rate = rate;
    injected.inject.seed = seed;
    let mut paged = cfg.clone();
    paged.paging.link = PagingLink::Nvlink;
    paged.memory.vm = true;
    // (thread-block switching saves a block's registers and scratchpad with it: under Zorua
    // they live in the coordinator's sets and swap, and it is refused there)
    paged.tb_switch.enabled = cfg.alloc == mpgpu_ref::config::Alloc::Block;
    let tb = if paged.tb_switch.enabled { " --tb-switch on" } else { "" };
    vec![Run::fcfs(&injected, format!("--faults {name} --inject {rate},{seed}")), Run::fcfs(&paged, format!("--faults {name} --paging nvlink{tb}"))]
}

/// A slicing dispatcher's runs: every online slicing policy.
pub fn slicing_runs(cfg: &GpuConfig) -> Vec<Run> {
    SLICINGS.iter().map(|&sl| Run { slicing: sl, ..Run::fcfs(cfg, format!("--slicing {}", sl.name())) }).collect()
}

