//! mpgpu-tb: the only crate that knows both the reference model and the RTL: RTL adapters,
//! lockstep co-simulation and testbenches.

pub mod cosim;
pub mod dss;
pub mod lockstep;
pub mod lowest_first;
pub mod prio;
pub mod sched;
pub mod vcd;

pub use lockstep::{InLoop, Lockstep, Mismatch};
