//! histo: a global histogram built with atomic adds, after Parboil histo.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Bins of the library run.
const BINS: u32 = 256;
/// Bins that receive most of the input, so that atomics on them contend.
const HOT_BINS: [u32; 4] = [0, 7, 128, 255];
/// Most blocks launched; larger inputs give each thread more values (grid-stride loop).
const MAX_BLOCKS: u32 = 60;
const MAX_SIZE: u32 = 1 << 24;

pub const BENCH: Bench = Bench {
    name: "histo",
    description: "256-bin histogram (bin = v % 256) of `size` u32 values, half of them in 4 hot bins, with global atomic adds",
    character: "atomic contention on a few hot words, grid-stride loop; no shared memory, limited by threads per SM (512/block)",
    source: include_str!("../../../kernels/histo.s"),
    default_size: 1 << 22,
    test_sizes: [5000, 40000],
    threads: Some((32, 1024)),
    make,
};

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > MAX_SIZE {
        return Err(format!("expected 1..={MAX_SIZE} values"));
    }
    // (the values are drawn when the program is set up, not when it is made: checking a
    // workload makes its programs)
    let values = move || {
        let mut r = rng(seed);
        (0..size)
            .map(|_| {
                if r.gen_bool(0.5) {
                    // A hot bin, reached through a large value so the kernel's modulo matters.
                    HOT_BINS[r.gen_range(0..HOT_BINS.len())] + BINS * r.gen_range(0..u32::MAX / BINS)
                } else {
                    r.gen()
                }
            })
            .collect()
    };
    Ok(program(ks, values, BINS))
}

/// The program counting the values `values` draws into `nbins` bins.
fn program(ks: &Kernels, values: impl FnOnce() -> Vec<u32> + Send + 'static, nbins: u32) -> Box<dyn Program> {
    let k = ks.get("histo");
    Box::new(StaticProgram::new(move |mem| {
        let values = values();
        let mut expected = vec![0u32; nbins as usize];
        for v in &values {
            expected[(v % nbins) as usize] += 1;
        }
        let n = values.len() as u32;
        let input = mem.alloc_u32s(&values);
        let bins = mem.alloc(4 * nbins); // zero-filled
        let blocks = n.div_ceil(4 * k.threads).clamp(1, MAX_BLOCKS);
        let launch = Launch::linear(&k, blocks, vec![input, bins, n, nbins]);
        (vec![launch], vec![Output { name: "bins".into(), addr: bins, expected: Expected::U32(expected) }])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    fn run(values: Vec<u32>, nbins: u32) -> Vec<u32> {
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, move || values, nbins);
        let mut gpu = FuncGpu::new();
        gpu.run(&mut *p).unwrap();
        p.verify(&gpu.mem).unwrap();
        let o = &p.outputs()[0];
        gpu.mem.read_u32s(o.addr, nbins as usize)
    }

    /// Every value in one bin: all threads' atomics hit one word and none is lost. The size
    /// leaves an uneven tail after the four-at-a-time loop.
    #[test]
    fn all_in_one_bin() {
        let n = 4 * 512 * 60 + 4 * 512 * 60 / 3 + 5;
        let got = run((0..n).map(|i| 3 + 256 * (i % 1000)).collect(), 256);
        assert_eq!(got[3], n);
        assert_eq!(got.iter().sum::<u32>(), n);
    }

    /// A bin count that is not a power of two, and fewer values than threads.
    #[test]
    fn odd_bin_count_and_tiny_input() {
        let got = run((0..100u32).map(|i| i * 37).collect(), 7);
        assert_eq!(got.iter().sum::<u32>(), 100);
        run(vec![6, 13, 20], 7);
    }
}
