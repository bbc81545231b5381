//! The kernel library: GPU applications modelled on the Parboil and Rodinia kernels the source
//! papers use. Each is assembly text under `kernels/` plus a host program that makes seeded
//! inputs, launches the kernels and checks the outputs against plain Rust.

use crate::asm::{assemble, AsmErrors};
use crate::kernel::Kernel;
use crate::program::Program;
use std::sync::Arc;

mod bfs;
mod cutcp;
mod mriq;
mod sad;
mod histo;
mod lbm;
mod spmv;
mod stencil;
mod reduction;
mod sgemm;
mod vecadd;

/// The assembled kernels of one application.
pub struct Kernels(pub Vec<Arc<Kernel>>);

impl Kernels {
    /// The kernel called `name` (the library's own sources always define it).
    pub fn get(&self, name: &str) -> Arc<Kernel> {
        self.0.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("library kernel `{name}` missing")).clone()
    }
}

/// One application of the library.
#[derive(Clone, Copy)]
pub struct Bench {
    pub name: &'static str,
    /// What it computes and what `size` means.
    pub description: &'static str,
    /// What the paper workload it is modelled on stresses.
    pub character: &'static str,
    /// The assembly source.
    pub source: &'static str,
    pub default_size: u32,
    /// Two small sizes the test suite runs.
    pub test_sizes: [u32; 2],
    /// Builds the host program for a size and seed, or says why the size is not allowed.
    pub make: fn(&Kernels, u32, u64) -> Result<Box<dyn Program>, String>,
}

impl Bench {
    pub fn file(&self) -> String {
        format!("kernels/{}.s", self.name)
    }

    pub fn kernels(&self) -> Result<Kernels, AsmErrors> {
        Ok(Kernels(assemble(&self.file(), self.source)?.into_iter().map(Arc::new).collect()))
    }

    /// The host program at `size` with inputs drawn from `seed`.
    pub fn program(&self, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
        let ks = self.kernels().map_err(|e| e.to_string())?;
        (self.make)(&ks, size, seed).map_err(|e| format!("{}: --size {size}: {e}", self.name))
    }
}

/// Every application in the library.
pub fn library() -> Vec<Bench> {
    vec![vecadd::BENCH, sgemm::BENCH, reduction::BENCH, histo::BENCH, stencil::BENCH, lbm::BENCH, spmv::BENCH, bfs::BENCH, mriq::BENCH, cutcp::BENCH, sad::BENCH]
}

/// The application called `name`.
pub fn find(name: &str) -> Option<Bench> {
    library().into_iter().find(|b| b.name == name)
}
