//! The cycle-level timing model of the whole GPU (SMs, memory system, dispatcher), executing
//! kernels on real data.

pub mod cache;
pub mod context;
pub mod dispatch;
pub mod gpu;
pub mod memsys;
pub mod metrics;
pub mod mmu;
pub mod slicer;
pub mod sm;
pub mod steer;
pub mod wheel;

pub use dispatch::{Dispatcher, Fcfs};
pub use gpu::{insts_in, run_workload, Gpu, RunLimits, RunResult, SimError};
