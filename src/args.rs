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
}

impl From<FaultsArg> for mpgpu_ref::config::FaultScheme {
    fn from(f: FaultsArg) -> Self {
        match f {
            FaultsArg::Stall => Self::Stall,
            FaultsArg::WdCommit => Self::WdCommit,
            FaultsArg::WdLastcheck => Self::WdLastcheck,
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
        cfg.validate().map_err(|e| anyhow::anyhow!("options --paging/--migration/--faults/--vm: {e}"))
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
