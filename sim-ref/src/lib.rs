//! mpgpu-ref: the reference model of the whole GPU. It assembles and executes real kernels on
//! real data; later layers add timing, the memory system and the units whose RTL is verified
//! against it. Never depends on rust-hdl.

pub mod asm;
pub mod config;
pub mod exec;
pub mod files;
pub mod flow;
pub mod func;
pub mod heterocore;
pub mod kernel;
pub mod library;
pub mod mem;
pub mod phases;
pub mod program;
pub mod ranges;
pub mod regalloc;
pub mod unified;
pub mod slots;
pub mod mixgen;
pub mod soakgen;
pub mod text;
pub mod timing;
pub mod workload;
pub mod zorua;
pub mod units;
pub mod warped;

pub use asm::{assemble, assemble_one, disassemble, AsmError, AsmErrors};
pub use func::{Counts, ExecError, FuncGpu, Launch};
pub use kernel::Kernel;
pub use mem::GlobalMem;
pub use program::{Program, VerifyError};

/// The unit tests' seeded random numbers (xorshift64): `test_rng(seed)(n)` is in `0..n`, the
/// same sequence for the same seed on every machine.
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    }
}
