//! blur: a 5-tap 1-D convolution staged through a 20 KB shared tile per block: few, heavy
//! blocks per SM, latency-bound at a baseline SM's occupancy (the HeteroCore paper's thick
//! class, §2, Table 3: docs/heterocore.md).

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// The filter's weights.
const W: [f32; 5] = [0.0625, 0.25, 0.375, 0.25, 0.0625];
/// Outputs per block.
const PER_BLOCK: u32 = 4096;

pub const BENCH: Bench = Bench {
    name: "blur",
    description: "a 5-tap f32 convolution of `size` elements, each block staging 4100 inputs in a 20 KB shared tile",
    character: "heavy blocks (20 KB of shared memory: 2 per GTX480 SM), one load in flight per warp: latency-bound at low occupancy (HeteroCore's thick class)",
    source: include_str!("../../../kernels/blur.s"),
    default_size: 1 << 20,
    test_sizes: [5000, 40000],
    threads: None,
    make,
};

/// The convolution on the host, with the GPU's f32 operation order.
fn reference(x: &[f32]) -> Vec<f32> {
    let at = |i: isize| if i >= 0 && (i as usize) < x.len() { x[i as usize] } else { 0.0 };
    (0..x.len() as isize)
        .map(|i| {
            let mut acc = W[0] * at(i - 2);
            for k in 1..5 {
                acc = W[k] * at(i - 2 + k as isize) + acc;
            }
            acc
        })
        .collect()
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > 1 << 24 {
        return Err("expected 1..=16777216 elements".into());
    }
    let k = ks.get("blur");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let x: Vec<f32> = (0..size).map(|_| r.gen_range(-1.0..1.0)).collect();
        let y = reference(&x);
        let px = mem.alloc_f32s(&x);
        let py = mem.alloc(4 * size);
        let mut params = vec![px, py, size];
        params.extend(W.iter().map(|w| w.to_bits()));
        let launch = Launch::linear(&k, size.div_ceil(PER_BLOCK), params);
        (vec![launch], vec![Output { name: "out".into(), addr: py, expected: Expected::F32 { vals: y, abs: 0.0, rel: 0.0 } }])
    })))
}
