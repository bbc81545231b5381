//! stencil: Parboil-style 3-D 7-point Jacobi stencil with register tiling along z.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Jacobi sweeps (launches), ping-ponging between two grids.
const SWEEPS: usize = 2;
const C0: f32 = 0.4;
const C1: f32 = 0.1;

pub const BENCH: Bench = Bench {
    name: "stencil",
    description: "2 Jacobi sweeps of a 7-point stencil on a `size`^3 f32 grid (size 3..=256; boundary cells copied)",
    character: "regular streaming with neighbour reuse held in registers (2-D blocks marching along z); limited by registers",
    source: include_str!("../../../kernels/stencil.s"),
    default_size: 128,
    test_sizes: [5, 29],
    threads: None,
    make,
};

/// One sweep on the host, with the GPU's f32 operation order.
fn sweep(n: usize, a: &[f32], b: &mut [f32]) {
    let at = |i: usize, j: usize, k: usize| (k * n + j) * n + i;
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let c = a[at(i, j, k)];
                b[at(i, j, k)] = if i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1 {
                    c
                } else {
                    let mut s = a[at(i - 1, j, k)] + a[at(i + 1, j, k)];
                    s += a[at(i, j - 1, k)];
                    s += a[at(i, j + 1, k)];
                    s += a[at(i, j, k - 1)];
                    s += a[at(i, j, k + 1)];
                    C0 * c + C1 * s
                };
            }
        }
    }
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if !(3..=256).contains(&size) {
        return Err("expected a grid edge of 3..=256 cells".into());
    }
    let k = ks.get("stencil7");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let input: Vec<f32> = (0..n * n * n).map(|_| r.gen_range(0.0..1.0)).collect();
        let mut bufs = [input.clone(), vec![0.0; n * n * n]];
        for s in 0..SWEEPS {
            let (a, b) = bufs.split_at_mut(1);
            if s % 2 == 0 {
                sweep(n, &a[0], &mut b[0]);
            } else {
                sweep(n, &b[0], &mut a[0]);
            }
        }
        let result = bufs[SWEEPS % 2].clone();
        let pa = mem.alloc_f32s(&input);
        let pb = mem.alloc(4 * size * size * size);
        let addrs = [pa, pb];
        let grid = [size.div_ceil(32), size.div_ceil(4), 1];
        let launches = (0..SWEEPS)
            .map(|s| Launch {
                kernel: k.clone(),
                grid,
                block: [32, 4, 1],
                params: vec![addrs[s % 2], addrs[(s + 1) % 2], size, C0.to_bits(), C1.to_bits()],
            })
            .collect();
        let out = Output {
            name: "grid".into(),
            addr: addrs[SWEEPS % 2],
            // Same f32 operations in the same order as the kernel: the results are identical.
            expected: Expected::F32 { vals: result, abs: 0.0, rel: 1e-6 },
        };
        (launches, vec![out])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    /// The smallest grid (one interior cell) and a grid wider than one block in x both pass,
    /// and the interior really changes while the boundary stays as input.
    #[test]
    fn small_and_wide_grids() {
        for size in [3, 34] {
            let mut p = BENCH.program(size, 7).unwrap();
            let mut gpu = FuncGpu::new();
            let c = gpu.run(p.as_mut()).unwrap();
            assert_eq!(c.launches, SWEEPS as u64);
            p.verify(&gpu.mem).unwrap();
        }
        assert!(BENCH.program(2, 1).is_err());
        assert!(BENCH.program(257, 1).is_err());
    }

    #[test]
    fn interior_differs_from_input() {
        let n = 6usize;
        let mut r = rng(3);
        let input: Vec<f32> = (0..n * n * n).map(|_| r.gen_range(0.0..1.0)).collect();
        let mut out = vec![0.0; n * n * n];
        sweep(n, &input, &mut out);
        assert_eq!(out[0], input[0]);
        let mid = (2 * n + 2) * n + 2;
        assert_ne!(out[mid], input[mid]);
    }
}
