//! spmv: Parboil-style sparse matrix-vector product, scalar CSR (one thread per row).

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, Rng as ProgRng, StaticProgram};
use rand::Rng;

pub const BENCH: Bench = Bench {
    name: "spmv",
    description: "y = A*x, A a random `size` x `size` CSR f32 matrix (1..=1048576 rows; 80% of rows hold 0..=8 nonzeros, 20% hold 24..=64), one thread per row",
    character: "irregular gathers and divergent loop trip counts; few registers, limited by threads per SM",
    source: include_str!("../../../kernels/spmv.s"),
    default_size: 1 << 17,
    test_sizes: [300, 2000],
    threads: Some((32, 1024)),
    make,
};

/// A CSR matrix.
struct Csr {
    rowptr: Vec<u32>,
    col: Vec<u32>,
    val: Vec<f32>,
}

/// Random matrix with high-variance row lengths; columns sorted within a row (repeats allowed).
fn random_csr(r: &mut ProgRng, rows: usize, cols: usize) -> Csr {
    let mut rowptr = vec![0u32];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for _ in 0..rows {
        let len = if r.gen_bool(0.2) { r.gen_range(24..=64) } else { r.gen_range(0..=8) };
        let mut cs: Vec<u32> = (0..len).map(|_| r.gen_range(0..cols as u32)).collect();
        cs.sort_unstable();
        for c in cs {
            col.push(c);
            val.push(r.gen_range(-1.0..1.0));
        }
        rowptr.push(col.len() as u32);
    }
    Csr { rowptr, col, val }
}

/// y = A*x with the kernel's f32 operation order.
fn spmv(a: &Csr, x: &[f32]) -> Vec<f32> {
    (0..a.rowptr.len() - 1)
        .map(|i| {
            let mut s = 0f32;
            for k in a.rowptr[i] as usize..a.rowptr[i + 1] as usize {
                s += a.val[k] * x[a.col[k] as usize]; // = (val*x) + s, as the kernel
            }
            s
        })
        .collect()
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > 1 << 20 {
        return Err("expected 1..=1048576 rows".into());
    }
    let k = ks.get("spmv_csr");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let a = random_csr(&mut r, n, n);
        let x: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let y = spmv(&a, &x);
        let prow = mem.alloc_u32s(&a.rowptr);
        // An empty matrix still gets (unread) mapped buffers.
        let pcol = if a.col.is_empty() { mem.alloc(4) } else { mem.alloc_u32s(&a.col) };
        let pval = if a.val.is_empty() { mem.alloc(4) } else { mem.alloc_f32s(&a.val) };
        let px = mem.alloc_f32s(&x);
        let py = mem.alloc(4 * size);
        let launch = Launch::linear(&k, size.div_ceil(k.threads), vec![prow, pcol, pval, px, py, size]);
        // Same f32 operations in the same order as the kernel: the results are identical.
        (vec![launch], vec![Output { name: "y".into(), addr: py, expected: Expected::F32 { vals: y, abs: 0.0, rel: 1e-6 } }])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    /// Row lengths really vary within warps (so the loop diverges), empty rows give exactly 0,
    /// and the GPU result passes.
    #[test]
    fn divergent_rows_and_empty_rows() {
        let mut r = rng(1);
        let a = random_csr(&mut r, 2000, 2000);
        let lens: Vec<u32> = a.rowptr.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(lens.contains(&0));
        assert!(lens.chunks(32).all(|w| w.iter().max().unwrap() - w.iter().min().unwrap() >= 16));

        let mut p = BENCH.program(2000, 1).unwrap();
        let mut gpu = FuncGpu::new();
        let c = gpu.run(p.as_mut()).unwrap();
        p.verify(&gpu.mem).unwrap();
        // Divergence shows as well under 32 active lanes per warp-instruction.
        assert!((c.thread_insts as f64) < 0.6 * 32.0 * c.warp_insts as f64);
        let y = gpu.mem.read_u32s(p.outputs()[0].addr, 2000);
        let mut r = rng(1);
        let a = random_csr(&mut r, 2000, 2000);
        for (i, w) in a.rowptr.windows(2).enumerate() {
            if w[0] == w[1] {
                assert_eq!(y[i], 0);
            }
        }
    }
}
