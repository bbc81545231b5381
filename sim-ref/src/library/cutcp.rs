//! cutcp: the Parboil cutoff Coulombic potential, on a 2-D lattice of `size` x `size` points.
//!
//! Atoms (x, y, z, charge) are scattered over and around the lattice plane z = 0. Parboil bins
//! the atoms spatially so that a block only visits atoms near its points; here the host gives
//! each block the list of atoms within the cutoff of its region of 32 x (threads / 8) points
//! (32 x 16 at the kernel's 128 threads; a conservative superset, in increasing atom order). The kernel stages each list through shared memory in
//! tiles of up to 768 atoms and every point sums q/r, smoothed, over the atoms with r < cutoff
//! (a data-dependent branch per point and atom). The host reference visits *all* atoms, so a
//! list that missed an atom would show; it repeats the kernel's f32 operations in order.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Lattice spacing (angstrom).
const H: f32 = 0.5;
const CUTOFF: f32 = 8.0;
const CUTOFF2: f32 = CUTOFF * CUTOFF;
const INV_CUTOFF2: f32 = 1.0 / CUTOFF2;
/// Atoms per square angstrom of the plane, over the lattice plus a cutoff-wide border.
const DENSITY: f64 = 0.25;
/// Atoms lie within this distance of the plane.
const Z_RANGE: f32 = 4.0;
/// Lattice points per block in x; in y, a row per 8 threads (the kernel's layout).
const BLOCK_X: u32 = 32;
const MAX_SIZE: u32 = 256;

pub const BENCH: Bench = Bench {
    name: "cutcp",
    description: "cutoff Coulombic potential on a `size` x `size` lattice (0.5 A spacing, 8 A cutoff, 0.25 atoms/A^2)",
    character: "compute with shared-memory atom tiles, data-dependent cutoff branch, rsqrt; 28 regs x 128 threads, 12 KB shared",
    source: include_str!("../../../kernels/cutcp.s"),
    default_size: 192,
    test_sizes: [16, 24],
    threads: Some((128, 1024)),
    make,
};

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    program(ks, size, seed, DENSITY)
}

type Atom = [f32; 4];

fn atoms(size: u32, seed: u64, density: f64) -> Vec<Atom> {
    let mut r = rng(seed);
    let (lo, hi) = (-CUTOFF, size as f32 * H + CUTOFF);
    let n = (density * ((hi - lo) as f64).powi(2)).round().max(1.0) as usize;
    (0..n)
        .map(|_| [r.gen_range(lo..hi), r.gen_range(lo..hi), r.gen_range(-Z_RANGE..Z_RANGE), r.gen_range(-1.0..1.0)])
        .collect()
}

/// The grid for blocks of `rows` rows.
fn grid(size: u32, rows: u32) -> [u32; 2] {
    [size.div_ceil(BLOCK_X), size.div_ceil(rows)]
}

/// Each block's atom list: the concatenated lists, and per block its start and length.
fn block_lists(size: u32, rows: u32, atoms: &[Atom]) -> (Vec<Atom>, Vec<u32>, Vec<u32>) {
    let [gx, gy] = grid(size, rows);
    // A little slack over the cutoff keeps the list a superset whatever the f32 rounding.
    let reach = (CUTOFF as f64 + 0.01).powi(2);
    let (mut list, mut start, mut count) = (Vec::new(), Vec::new(), Vec::new());
    for by in 0..gy {
        for bx in 0..gx {
            let x0 = (bx * BLOCK_X) as f64 * H as f64;
            let x1 = (bx * BLOCK_X + BLOCK_X - 1) as f64 * H as f64;
            let y0 = (by * rows) as f64 * H as f64;
            let y1 = (by * rows + rows - 1) as f64 * H as f64;
            start.push(list.len() as u32);
            for a in atoms {
                let dx = (x0 - a[0] as f64).max(a[0] as f64 - x1).max(0.0);
                let dy = (y0 - a[1] as f64).max(a[1] as f64 - y1).max(0.0);
                if dx * dx + dy * dy <= reach {
                    list.push(*a);
                }
            }
            count.push(list.len() as u32 - start.last().unwrap());
        }
    }
    (list, start, count)
}

/// The potential at every lattice point, over all atoms, as the kernel computes it.
fn reference(size: u32, atoms: &[Atom]) -> Vec<f32> {
    let n = size as usize;
    let mut out = vec![0f32; n * n];
    let mut dyz = vec![0f32; atoms.len()];
    for iy in 0..n {
        let py = iy as f32 * H;
        for (d, a) in dyz.iter_mut().zip(atoms) {
            let dy = a[1] - py;
            *d = dy * dy + a[2] * a[2];
        }
        for ix in 0..n {
            let px = ix as f32 * H;
            let mut e = 0f32;
            for (a, d) in atoms.iter().zip(&dyz) {
                let dx = a[0] - px;
                if dx.abs() > CUTOFF + 1.0 {
                    continue; // far outside the cutoff: the test below fails anyway
                }
                let r2 = dx * dx + d;
                if r2 < CUTOFF2 {
                    let s = 1.0 - r2 * INV_CUTOFF2;
                    e += a[3] * (1.0 / r2.sqrt()) * s * s;
                }
            }
            out[iy * n + ix] = e;
        }
    }
    out
}

fn program(ks: &Kernels, size: u32, seed: u64, density: f64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > MAX_SIZE {
        return Err(format!("expected 1..={MAX_SIZE} lattice points per side"));
    }
    let k = ks.get("cutcp");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let atoms = atoms(size, seed, density);
        let expected = reference(size, &atoms);
        let rows = k.threads / 8;
        let (list, start, count) = block_lists(size, rows, &atoms);
        let words: Vec<f32> = list.iter().flatten().copied().collect();
        let patoms = mem.alloc_f32s(&words);
        let (pstart, pcount) = (mem.alloc_u32s(&start), mem.alloc_u32s(&count));
        let pout = mem.alloc(4 * size * size);
        let [gx, gy] = grid(size, rows);
        let launch = Launch {
            kernel: k.clone(),
            grid: [gx, gy, 1],
            block: [k.threads, 1, 1],
            params: vec![patoms, pstart, pcount, pout, size, H.to_bits(), CUTOFF2.to_bits(), INV_CUTOFF2.to_bits()],
        };
        // Same f32 operations in the same order: exact but for the last-place slack an SFU with
        // a differently rounded rsqrt would need.
        let out = Output { name: "potential".into(), addr: pout, expected: Expected::F32 { vals: expected, abs: 1e-5, rel: 1e-5 } };
        (vec![launch], vec![out])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    /// Atoms per shared-memory tile (the kernel's).
    const TILE_ATOMS: u32 = 768;

    fn run(size: u32, seed: u64, density: f64) {
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, size, seed, density).unwrap();
        let mut gpu = FuncGpu::new();
        gpu.run(p.as_mut()).unwrap();
        p.verify(&gpu.mem).unwrap_or_else(|e| panic!("size {size}, density {density}: {e}"));
    }

    #[test]
    fn several_tiles_per_block() {
        let (_, _, count) = block_lists(16, 16, &atoms(16, 5, 2.0));
        assert!(count[0] > TILE_ATOMS, "the list must span two tiles, has {} atoms", count[0]);
        run(16, 5, 2.0);
    }

    #[test]
    fn blocks_without_atoms() {
        let (_, _, count) = block_lists(64, 16, &atoms(64, 2, 0.001));
        assert!(count.contains(&0) && count.iter().any(|&c| c > 0), "counts {count:?}");
        run(64, 2, 0.001);
    }

    #[test]
    fn cutoff_branch_diverges() {
        // At the default density the cutoff test splits warps: well under 32 lanes are active
        // on average. Every point still has atoms within the cutoff.
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, 32, 3, DENSITY).unwrap();
        let mut gpu = FuncGpu::new();
        let c = gpu.run(p.as_mut()).unwrap();
        p.verify(&gpu.mem).unwrap();
        let lanes = c.thread_insts as f64 / c.warp_insts as f64;
        assert!(lanes > 8.0 && lanes < 31.0, "{lanes} active lanes per warp-instruction");
        let out = gpu.mem.read_f32s(p.outputs()[0].addr, 32 * 32);
        assert!(out.iter().all(|e| *e != 0.0));
    }

    #[test]
    fn phases() {
        let k = BENCH.kernels().unwrap().get("cutcp");
        let ph = k.phases();
        assert_eq!(ph.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(), [(8, 0), (28, 12288), (8, 0)]);
        assert_eq!(ph[0].0, 0);
        for (pc, inst) in k.code.iter().enumerate() {
            let regs = ph.iter().rev().find(|p| p.0 as usize <= pc).unwrap().1;
            for r in inst.dst_reg().into_iter().chain(inst.src_regs()) {
                assert!((r as u16) < regs, "pc {pc}: r{r} outside its phase's {regs} registers");
            }
        }
    }
}
