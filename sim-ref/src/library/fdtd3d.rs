//! fdtd3d: a CUDA SDK FDTD3d-like radius-10 star stencil, each thread marching along z with the
//! 21 values of its column and the 11 coefficients in registers: the library's register-heavy
//! kernel (44 registers), for the unified allocation paper (docs/unified.md).

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// The stencil's radius, as the kernel's source has it.
const R: usize = 10;

pub const BENCH: Bench = Bench {
    name: "fdtd3d",
    description: "one sweep of a radius-10 star stencil on a `size`^3 f32 grid (size 21..=256; cells within 10 of a face copied)",
    character: "register-heavy streaming stencil (44 registers: the column's 21 values and 11 coefficients held in registers); limited by registers",
    source: include_str!("../../../kernels/fdtd3d.s"),
    // (128: 128 blocks, more than the 80 a gtx480 holds at once as written)
    default_size: 128,
    test_sizes: [21, 40],
    threads: None,
    make,
};

/// The sweep on the host, with the GPU's f32 operation order.
fn sweep(n: usize, c: &[f32; R + 1], a: &[f32]) -> Vec<f32> {
    let at = |i: usize, j: usize, k: usize| (k * n + j) * n + i;
    let inner = |x: usize| x >= R && x < n - R;
    let mut b = a.to_vec();
    for k in (0..n).filter(|&k| inner(k)) {
        for j in (0..n).filter(|&j| inner(j)) {
            for i in (0..n).filter(|&i| inner(i)) {
                let mut acc = c[0] * a[at(i, j, k)];
                for r in 1..=R {
                    let mut s = a[at(i, j, k - r)] + a[at(i, j, k + r)];
                    s += a[at(i - r, j, k)];
                    s += a[at(i + r, j, k)];
                    s += a[at(i, j - r, k)];
                    s += a[at(i, j + r, k)];
                    acc += c[r] * s;
                }
                b[at(i, j, k)] = acc;
            }
        }
    }
    b
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if !(2 * R as u32 + 1..=256).contains(&size) {
        return Err(format!("expected a grid edge of {}..=256 cells", 2 * R + 1));
    }
    let k = ks.get("fdtd3d");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let input: Vec<f32> = (0..n * n * n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let c: [f32; R + 1] = std::array::from_fn(|i| 0.5 / (i + 1) as f32);
        let result = sweep(n, &c, &input);
        let pa = mem.alloc_f32s(&input);
        let pb = mem.alloc(4 * size * size * size);
        let mut params = vec![pa, pb, size];
        params.extend(c.iter().map(|x| x.to_bits()));
        let launch = Launch { kernel: k.clone(), grid: [size.div_ceil(32), size.div_ceil(4), 1], block: [32, 4, 1], params };
        // (the same f32 operations in the same order as the kernel: the results are identical)
        let out = Output { name: "grid".into(), addr: pb, expected: Expected::F32 { vals: result, abs: 0.0, rel: 0.0 } };
        (vec![launch], vec![out])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    /// The smallest grid (one interior cell) and a larger one pass, the interior really
    /// changes, and the boundary stays as input.
    #[test]
    fn the_smallest_grid_and_a_larger_one_verify_and_the_interior_changes() {
        for size in [21, 33] {
            let mut p = BENCH.program(size, 4).unwrap();
            let mut g = FuncGpu::new();
            g.run(p.as_mut()).unwrap();
            p.verify(&g.mem).unwrap_or_else(|e| panic!("size {size}: {e}"));
        }
        let n = 21;
        let a: Vec<f32> = (0..n * n * n).map(|x| (x % 7) as f32).collect();
        let b = sweep(n, &[1.0; R + 1], &a);
        let centre = (10 * n + 10) * n + 10;
        assert_ne!(a[centre], b[centre]);
        assert_eq!(a[0], b[0]);
        assert!(BENCH.program(20, 1).is_err() && BENCH.program(257, 1).is_err());
    }
}
