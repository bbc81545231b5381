//! mpgpu-spec: the one definition shared by the reference model (mpgpu-ref) and the RTL
//! (mpgpu-rtl): the instruction set, parameters and derived widths, and the cycle interface of
//! every RTL-backed unit.

pub mod isa;
pub mod port;
pub mod unit;
pub mod units;

pub use unit::Unit;
