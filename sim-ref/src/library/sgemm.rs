//! sgemm: dense single-precision matrix multiply with shared-memory tiles, after Parboil sgemm.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Tile edge: the block is TILE x TILE threads and N must be a multiple of it.
const TILE: u32 = 16;

pub const BENCH: Bench = Bench {
    name: "sgemm",
    description: "C = alpha*A*B + beta*C for `size` x `size` f32 matrices (size a multiple of 16), 16x16 shared-memory tiles",
    character: "compute-bound with shared-memory reuse and two barriers per tile; limited by registers (32/thread)",
    source: include_str!("../../../kernels/sgemm.s"),
    default_size: 256,
    test_sizes: [32, 64],
    threads: None,
    make,
};

/// The host's reference: the kernel's exact operation order (k ascending, unfused multiply-add,
/// then `beta*c + alpha*acc`), so the GPU result matches bit for bit.
fn reference(n: usize, a: &[f32], b: &[f32], c: &[f32], alpha: f32, beta: f32) -> Vec<f32> {
    let mut out = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += a[i * n + k] * b[k * n + j];
            }
            out[i * n + j] = c[i * n + j] * beta + alpha * acc;
        }
    }
    out
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || !size.is_multiple_of(TILE) || size > 1024 {
        return Err("expected a matrix size that is a multiple of 16 in 16..=1024".into());
    }
    let k = ks.get("sgemm");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let a: Vec<f32> = (0..n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let c: Vec<f32> = (0..n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let alpha: f32 = r.gen_range(0.5..2.0);
        let beta: f32 = r.gen_range(-1.0..1.0);
        let expected = reference(n, &a, &b, &c, alpha, beta);
        let (pa, pb, pc) = (mem.alloc_f32s(&a), mem.alloc_f32s(&b), mem.alloc_f32s(&c));
        let launch = Launch {
            kernel: k,
            grid: [size / TILE, size / TILE, 1],
            block: [TILE, TILE, 1],
            params: vec![pa, pb, pc, size, alpha.to_bits(), beta.to_bits()],
        };
        let out = Output { name: "C".into(), addr: pc, expected: Expected::F32 { vals: expected, abs: 0.0, rel: 0.0 } };
        (vec![launch], vec![out])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    #[test]
    fn rejects_sizes_that_are_not_whole_tiles() {
        let ks = BENCH.kernels().unwrap();
        for bad in [0, 8, 24, 100, 1040] {
            assert!(make(&ks, bad, 1).is_err(), "size {bad} accepted");
        }
    }

    /// A 48 x 48 product walks 3 tiles (an odd count, so an off-by-one in the tile loop or a
    /// tile skipped shows), and the result matches the k-ordered reference bit for bit. The
    /// phases are prologue (no scratchpad), tiled loop (2048 B), epilogue (none).
    #[test]
    fn three_tiles_match_bit_for_bit() {
        let ks = BENCH.kernels().unwrap();
        let mut p = make(&ks, 48, 7).unwrap();
        let mut gpu = FuncGpu::new();
        gpu.run(&mut *p).unwrap();
        p.verify(&gpu.mem).unwrap();
        let k = ks.get("sgemm");
        let phases = k.phases();
        assert_eq!(phases.len(), 3);
        assert_eq!(phases[0].0, 0, "the kernel must start with a phase specifier");
        assert_eq!(phases.iter().map(|p| p.2).collect::<Vec<_>>(), vec![0, 2048, 0]);
    }
}
