//! mpgpu-rtl: synthesizable rust-hdl blocks. Depends on mpgpu-spec (widths, parameters), never
//! on the reference model. Every block has a Verilog generation and yosys check in the tests.

pub mod check;
pub mod dss;
pub mod lowest_first;
pub mod prio;
pub mod ram;
pub mod scan;
pub mod sched;
pub mod verilog;

pub use dss::Dss;
pub use lowest_first::LowestFirst;
pub use prio::Prio;
pub use ram::AsyncRam;
pub use scan::ScanControl;
pub use sched::{Sched, SchedFaults};
