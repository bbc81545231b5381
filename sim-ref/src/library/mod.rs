//! The kernel library: GPU applications modelled on the Parboil and Rodinia kernels the source
//! papers use. Each is assembly text under `kernels/` plus a host program that makes seeded
//! inputs, launches the kernels and checks the outputs against plain Rust.

use crate::asm::{assemble, AsmErrors};
use crate::kernel::Kernel;
use crate::program::Program;
use std::sync::Arc;

mod bfs;
mod blur;
mod cutcp;
mod fdtd3d;
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
#[derive(Clone)]
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
    /// The block sizes its host program can launch the same work at (multiples of 32 from
    /// the first to the second), if it can change its kernels' block size.
    pub threads: Option<(u32, u32)>,
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
        self.program_at(size, seed, Spec::default())
    }

    /// [`Bench::program`] with its kernels at resource specification `spec` (the same work).
    pub fn program_at(&self, size: u32, seed: u64, spec: Spec) -> Result<Box<dyn Program>, String> {
        let ks = self.kernels().map_err(|e| e.to_string())?;
        self.program_of(size, seed, spec.apply(self, ks)?)
    }

    /// [`Bench::program`] with each kernel as `place` compiles it (the same work).
    pub fn program_placed(&self, size: u32, seed: u64, place: impl Fn(&Kernel) -> Result<Kernel, String>) -> Result<Box<dyn Program>, String> {
        let ks = self.kernels().map_err(|e| e.to_string())?;
        let ks = Kernels(ks.0.iter().map(|k| place(k).map(Arc::new).map_err(|e| format!("{}: {e}", self.name))).collect::<Result<_, _>>()?);
        self.program_of(size, seed, ks)
    }

    fn program_of(&self, size: u32, seed: u64, ks: Kernels) -> Result<Box<dyn Program>, String> {
        (self.make)(&ks, size, seed).map_err(|e| format!("{}: --size {size}: {e}", self.name))
    }
}

/// A resource specification an application's kernels are launched at (Zorua, §2.1, §5.2: the
/// same work at other registers per thread, threads per block and scratchpad per block). A
/// field left `None` keeps the kernel's declaration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Spec {
    /// Registers per thread allocated (at least the highest the code uses, plus one).
    pub regs: Option<u32>,
    /// Threads per block (a multiple of 32 in the application's [`Bench::threads`] range).
    pub threads: Option<u32>,
    /// Scratchpad bytes per block allocated, for the kernels that use scratchpad (at least
    /// their declaration).
    pub smem: Option<u32>,
    /// A register cap and shared-memory spill slots per thread: each kernel whose values need
    /// more registers is placed by the unified allocator ([`crate::unified`]), after the
    /// fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc: Option<crate::unified::Budget>,
}

/// The registers a kernel's code names: the highest plus one.
pub fn regs_used(k: &Kernel) -> u32 {
    regs_named(&k.code)
}

pub use crate::flow::regs_named;

impl Spec {
    /// `ks` at this specification, or why an application's kernels cannot take it.
    pub fn apply(&self, b: &Bench, ks: Kernels) -> Result<Kernels, String> {
        let mut out = Vec::with_capacity(ks.0.len());
        for k in ks.0 {
            let mut k = (*k).clone();
            if let Some(r) = self.regs {
                let used = regs_used(&k);
                if r < used || r > 255 {
                    return Err(format!("{}: kernel `{}` names registers r0..r{}: --regs must be {used}..=255, not {r}", b.name, k.name, used - 1));
                }
                k.regs = r;
            }
            if let Some(t) = self.threads {
                let Some((lo, hi)) = b.threads else {
                    return Err(format!("{}: its host program launches fixed blocks of {} threads; --threads cannot change them", b.name, k.threads));
                };
                if t % 32 != 0 || t < lo || t > hi {
                    return Err(format!("{}: --threads must be a multiple of 32 in {lo}..={hi}, not {t}", b.name));
                }
                k.threads = t;
            }
            if let Some(s) = self.smem {
                if k.shared_bytes > 0 {
                    if s < k.shared_bytes {
                        return Err(format!("{}: kernel `{}` uses {} B of scratchpad: --smem must be at least that, not {s}", b.name, k.name, k.shared_bytes));
                    }
                    k.shared_bytes = s;
                }
            }
            if let Some(budget) = self.alloc {
                k = crate::unified::allocate(&k, budget).map_err(|e| format!("{}: {e}", b.name))?.kernel;
            }
            out.push(Arc::new(k));
        }
        if self.smem.is_some() && out.iter().all(|k| k.shared_bytes == 0) {
            return Err(format!("{}: its kernels use no scratchpad; --smem does not apply", b.name));
        }
        Ok(Kernels(out))
    }
}

/// Every application in the library.
pub fn library() -> Vec<Bench> {
    vec![vecadd::BENCH, sgemm::BENCH, reduction::BENCH, histo::BENCH, stencil::BENCH, lbm::BENCH, spmv::BENCH, bfs::BENCH, mriq::BENCH, cutcp::BENCH, sad::BENCH, blur::BENCH, fdtd3d::BENCH]
}

/// The applications of the thesis's Parboil set (Tanasić 2016, Table 4.1) that the library
/// has, in its order: the fault study's kernels (`mpgpu faults`) and the thesis's random
/// workloads (`mixgen`).
pub const PARBOIL: &[&str] = &["sgemm", "cutcp", "histo", "sad", "stencil", "lbm", "spmv", "bfs", "mriq"];

/// The application called `name`.
pub fn find(name: &str) -> Option<Bench> {
    library().into_iter().find(|b| b.name == name)
}
