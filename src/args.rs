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
