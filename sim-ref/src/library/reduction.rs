//! reduction: tree sum of f32 values in shared memory, after the CUDA sample `reduce3`.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Threads per block; each block sums twice as many elements.
const THREADS: usize = 512;
const PER_BLOCK: usize = 2 * THREADS;
const MAX_SIZE: u32 = 1 << 24;

pub const BENCH: Bench = Bench {
    name: "reduction",
    description: "sum of `size` f32 values: a tree in shared memory per 1024 values, relaunched on the partial sums until one is left",
    character: "barrier-heavy (one per tree level) with a shrinking active thread count; limited by threads per SM (512/block)",
    source: include_str!("../../../kernels/reduction.s"),
    default_size: 1 << 20,
    test_sizes: [3000, 20000],
    threads: None,
    make,
};

/// One launch of the kernel on the host: each block's sum in the kernel's order (pair sums
/// `x[t] + x[t+512]`, 0.0 past the end, then strided adds with s = 256, 128, ..., 1).
fn block_sums(x: &[f32]) -> Vec<f32> {
    x.chunks(PER_BLOCK)
        .map(|c| {
            let at = |i: usize| c.get(i).copied().unwrap_or(0.0);
            let mut s: Vec<f32> = (0..THREADS).map(|t| at(t) + at(t + THREADS)).collect();
            let mut stride = THREADS / 2;
            while stride > 0 {
                for t in 0..stride {
                    s[t] += s[t + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect()
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > MAX_SIZE {
        return Err(format!("expected 1..={MAX_SIZE} elements"));
    }
    // (the values are drawn when the program is set up, not when it is made: checking a
    // workload makes its programs)
    Ok(program(ks, move || {
        let mut r = rng(seed);
        (0..size).map(|_| r.gen_range(-1.0..1.0)).collect()
    }))
}

/// The program summing `x`: launches until a single block is left; the outputs are the first
/// level's partial sums and the total.
fn program(ks: &Kernels, x: impl FnOnce() -> Vec<f32> + Send + 'static) -> Box<dyn Program> {
    let k = ks.get("reduce");
    Box::new(StaticProgram::new(move |mem| {
        let mut launches = Vec::new();
        let mut outputs = Vec::new();
        let mut vals = x();
        let mut src = mem.alloc_f32s(&vals);
        loop {
            let n = vals.len() as u32;
            let blocks = n.div_ceil(PER_BLOCK as u32);
            let dst = mem.alloc(4 * blocks);
            launches.push(Launch::linear(&k, blocks, vec![src, dst, n]));
            vals = block_sums(&vals);
            let name = match (blocks, launches.len()) {
                (1, _) => "sum",
                (_, 1) => "partials",
                _ => "",
            };
            if !name.is_empty() {
                outputs.push(Output { name: name.into(), addr: dst, expected: Expected::F32 { vals: vals.clone(), abs: 0.0, rel: 0.0 } });
            }
            if blocks == 1 {
                break;
            }
            src = dst;
        }
        (launches, outputs)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    fn run(x: Vec<f32>) -> (f32, u64) {
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, move || x);
        let mut gpu = FuncGpu::new();
        let c = gpu.run(&mut *p).unwrap();
        p.verify(&gpu.mem).unwrap();
        let sum = p.outputs().iter().find(|o| o.name == "sum").unwrap();
        (gpu.mem.read_f32s(sum.addr, 1)[0], c.launches)
    }

    /// Sizes that do not fill the last block (1, 1025: a block with one element) and sizes that
    /// need a second and a third launch; the total is a real sum (close to an f64 sum).
    #[test]
    fn partial_blocks_and_relaunches() {
        for (n, launches) in [(1, 1), (513, 1), (1025, 2), (1024 * 1024 + 1, 3)] {
            let mut r = rng(n as u64);
            let x: Vec<f32> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
            let exact: f64 = x.iter().map(|&v| v as f64).sum();
            let (got, l) = run(x);
            assert_eq!(l, launches, "size {n}");
            assert!((got as f64 - exact).abs() < 1e-3, "size {n}: {got} vs {exact}");
        }
    }

    /// Integers-valued floats sum exactly whatever the order: 1..=5000 gives 12502500.
    #[test]
    fn exact_integer_sum() {
        let (got, _) = run((1..=5000).map(|v| v as f32).collect());
        assert_eq!(got, 12_502_500.0);
    }
}
