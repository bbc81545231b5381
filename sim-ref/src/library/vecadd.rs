//! vecadd: element-wise f32 addition, the streaming baseline.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

pub const BENCH: Bench = Bench {
    name: "vecadd",
    description: "c = a + b over `size` f32 elements, one per thread",
    character: "memory streaming, no reuse; limited by threads per SM",
    source: include_str!("../../../kernels/vecadd.s"),
    default_size: 1 << 20,
    test_sizes: [1000, 4096],
    threads: Some((32, 1024)),
    make,
};

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > 1 << 24 {
        return Err("expected 1..=16777216 elements".into());
    }
    let k = ks.get("vecadd");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let mut r = rng(seed);
        let n = size as usize;
        let a: Vec<f32> = (0..n).map(|_| r.gen_range(-100.0..100.0)).collect();
        let b: Vec<f32> = (0..n).map(|_| r.gen_range(-100.0..100.0)).collect();
        let c: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let (pa, pb) = (mem.alloc_f32s(&a), mem.alloc_f32s(&b));
        let pc = mem.alloc(4 * size);
        let blocks = size.div_ceil(k.threads);
        let launch = Launch::linear(&k, blocks, vec![pa, pb, pc, size]);
        (vec![launch], vec![Output { name: "c".into(), addr: pc, expected: Expected::F32 { vals: c, abs: 0.0, rel: 0.0 } }])
    })))
}
