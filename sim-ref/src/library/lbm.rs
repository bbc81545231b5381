//! lbm: Parboil-style lattice-Boltzmann (D2Q9, pull streaming + BGK collision), memory streaming.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Time steps (launches), ping-ponging between two lattices.
const STEPS: usize = 2;
/// BGK relaxation parameter (1/tau).
const OMEGA: f32 = 1.7;
const CX: [i32; 9] = [0, 1, 0, -1, 0, 1, -1, -1, 1];
const CY: [i32; 9] = [0, 0, 1, 0, -1, 1, 1, -1, -1];
/// The weights exactly as the kernel's immediates spell them.
const W: [f32; 9] = [0.44444445, 0.11111111, 0.11111111, 0.11111111, 0.11111111, 0.027777778, 0.027777778, 0.027777778, 0.027777778];

pub const BENCH: Bench = Bench {
    name: "lbm",
    description: "2 D2Q9 lattice-Boltzmann steps (stream + BGK collide) on a periodic `size` x `size` grid (size 2..=2048), one thread per cell",
    character: "memory streaming: 9 scattered-neighbour loads and 9 stores per cell, many live registers; limited by registers",
    source: include_str!("../../../kernels/lbm.s"),
    default_size: 512,
    test_sizes: [16, 60],
    threads: Some((32, 1024)),
    make,
};

/// One time step on the host, with the kernel's f32 operation order.
fn step(n: usize, src: &[f32], dst: &mut [f32]) {
    let cells = n * n;
    for y in 0..n {
        for x in 0..n {
            let mut f = [0f32; 9];
            for q in 0..9 {
                let sx = (x as i32 - CX[q]).rem_euclid(n as i32) as usize;
                let sy = (y as i32 - CY[q]).rem_euclid(n as i32) as usize;
                f[q] = src[q * cells + sy * n + sx];
            }
            let mut rho = f[0];
            for v in &f[1..] {
                rho += v;
            }
            let ux = (((((f[1] - f[3]) + f[5]) - f[6]) - f[7]) + f[8]) / rho;
            let uy = (((((f[2] - f[4]) + f[5]) + f[6]) - f[7]) - f[8]) / rho;
            let base = (ux * ux + uy * uy) * -1.5 + 1.0;
            let cu = [0.0, ux, uy, -ux, -uy, ux + uy, uy - ux, -(ux + uy), -(uy - ux)];
            for q in 0..9 {
                let feq = (rho * W[q]) * ((cu[q] * cu[q]) * 4.5 + (cu[q] * 3.0 + base));
                dst[q * cells + y * n + x] = (f[q] - feq) * -OMEGA + f[q];
            }
        }
    }
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if !(2..=2048).contains(&size) {
        return Err("expected a grid edge of 2..=2048 cells".into());
    }
    let k = ks.get("lbm_d2q9");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let cells = n * n;
        // Near-equilibrium start: each distribution is its weight times a random factor.
        let mut init = vec![0f32; 9 * cells];
        for (q, plane) in init.chunks_mut(cells).enumerate() {
            for v in plane {
                *v = W[q] * r.gen_range(0.8..1.2);
            }
        }
        let mut bufs = [init.clone(), vec![0.0; 9 * cells]];
        for s in 0..STEPS {
            let (a, b) = bufs.split_at_mut(1);
            if s % 2 == 0 {
                step(n, &a[0], &mut b[0]);
            } else {
                step(n, &b[0], &mut a[0]);
            }
        }
        let result = bufs[STEPS % 2].clone();
        let pa = mem.alloc_f32s(&init);
        let pb = mem.alloc(4 * 9 * size * size);
        let addrs = [pa, pb];
        let blocks = (size * size).div_ceil(k.threads);
        let launches = (0..STEPS)
            .map(|s| Launch::linear(&k, blocks, vec![addrs[s % 2], addrs[(s + 1) % 2], size, (-OMEGA).to_bits()]))
            .collect();
        let out = Output {
            name: "f".into(),
            addr: addrs[STEPS % 2],
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

    /// Collision conserves mass: the total density after the GPU's steps equals the initial one
    /// (up to f32 rounding), and the smallest periodic grid (every neighbour wraps) passes.
    #[test]
    fn conserves_mass_and_wraps() {
        for size in [2, 16] {
            let mut p = BENCH.program(size, 5).unwrap();
            let mut gpu = FuncGpu::new();
            let c = gpu.run(p.as_mut()).unwrap();
            assert_eq!(c.launches, STEPS as u64);
            p.verify(&gpu.mem).unwrap();
            let n = (size * size * 9) as usize;
            let out = gpu.mem.read_f32s(p.outputs()[0].addr, n);
            let mut r = rng(5);
            let init: f64 = (0..n).map(|i| (W[i / (n / 9)] * r.gen_range(0.8f32..1.2)) as f64).sum();
            let after: f64 = out.iter().map(|&v| v as f64).sum();
            assert!((init - after).abs() < 1e-4 * init, "mass {init} -> {after}");
        }
    }
}
