//! mpgpu-tb: the only crate that knows both the reference model and the RTL: each block's port
//! mapping (written once, `blocks`), the generic RTL unit on either backend (rust-hdl's
//! simulator or the Verilated Verilog), lockstep and RTL-in-the-loop co-simulation, waveforms,
//! traces replayed in Icarus, and testbenches.

pub mod backend;
pub mod bank;
pub mod blocks;
pub mod board_link;
pub mod broken;
pub mod controller;
pub mod cosim;
pub mod entry;
pub mod fpga;
pub mod gpu_cost;
pub mod host;
pub mod ip;
pub mod ip_folder;
pub mod lockstep;
pub mod options;
pub mod ports;
pub mod registry;
pub mod rtl;
pub mod runs;
pub mod serial;
pub mod soak;
pub mod trace;
pub mod unit;
pub mod vcd;
pub mod verilator;
pub mod wire;

pub use lockstep::{InLoop, Lockstep, Mismatch};
pub use backend::Backend;
pub use rtl::RtlUnit;
