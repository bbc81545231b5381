//! sad: Parboil-style sums of absolute differences for block motion estimation.
//!
//! For every 16x16 macroblock of a `size` x `size` current frame and every displacement in a
//! +-8 pixel search window (17 x 17 = 289), the SAD against the reference frame, coordinates
//! clamped at the frame's edge. A block stages a 2x2 group of macroblocks and their search area
//! in shared memory, then its 64 threads share the group's 1156 SADs. Integer results, checked
//! exactly.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// Macroblock side (pixels).
const MB: usize = 16;
/// Search range: displacements -R..=R in x and y.
const R: i32 = 8;
/// Displacements per macroblock.
pub const DISPS: usize = ((2 * R + 1) * (2 * R + 1)) as usize;
const MAX_SIZE: u32 = 512;

pub const BENCH: Bench = Bench {
    name: "sad",
    description: "motion-estimation SADs: every 16x16 macroblock of a `size` x `size` frame (multiple of 16) at 17x17 displacements",
    character: "integer ALU with heavy shared-memory reuse (16 KB search area per 64-thread block); limited by shared memory",
    source: include_str!("../../../kernels/sad.s"),
    default_size: 192,
    test_sizes: [16, 32],
    threads: Some((64, 1024)),
    make,
};

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    check_size(size)?;
    // (the frames are drawn when the program is set up, not when it is made: checking a
    // workload makes its programs)
    program(ks, size, move || frames(size as usize, seed))
}

fn check_size(size: u32) -> Result<(), String> {
    if size == 0 || !size.is_multiple_of(MB as u32) || size > MAX_SIZE {
        return Err(format!("expected a multiple of {MB} in {MB}..={MAX_SIZE} pixels per side"));
    }
    Ok(())
}

/// A random reference frame, and a current frame that is the reference moved by a random
/// global motion within the search range, plus noise.
fn frames(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut r = rng(seed);
    let reference: Vec<u32> = (0..n * n).map(|_| r.gen_range(0..256)).collect();
    let (mx, my) = (r.gen_range(-R..=R), r.gen_range(-R..=R));
    let clamp = |v: i32| v.clamp(0, n as i32 - 1) as usize;
    let mut cur = vec![0; n * n];
    for y in 0..n {
        for x in 0..n {
            let v = reference[clamp(y as i32 + my) * n + clamp(x as i32 + mx)] as i32 + r.gen_range(-6..=6);
            cur[y * n + x] = v.clamp(0, 255) as u32;
        }
    }
    (cur, reference)
}

/// The SADs in the kernel's output order: macroblock (row-major), then displacement
/// d = (dy+R)*(2R+1) + (dx+R).
fn reference_sads(n: usize, cur: &[u32], reference: &[u32]) -> Vec<u32> {
    let clamp = |v: i32| v.clamp(0, n as i32 - 1) as usize;
    let mbw = n / MB;
    let mut out = Vec::with_capacity(mbw * mbw * DISPS);
    for my in 0..mbw {
        for mx in 0..mbw {
            for dy in -R..=R {
                for dx in -R..=R {
                    let mut s = 0;
                    for y in my * MB..(my + 1) * MB {
                        let ry = clamp(y as i32 + dy);
                        for x in mx * MB..(mx + 1) * MB {
                            s += cur[y * n + x].abs_diff(reference[ry * n + clamp(x as i32 + dx)]);
                        }
                    }
                    out.push(s);
                }
            }
        }
    }
    out
}

fn program(ks: &Kernels, size: u32, frames: impl FnOnce() -> (Vec<u32>, Vec<u32>) + Send + 'static) -> Result<Box<dyn Program>, String> {
    check_size(size)?;
    let k = ks.get("sad");
    Ok(Box::new(StaticProgram::new(move |mem| {
        let (cur, reference) = frames();
        let n = size as usize;
        let expected = reference_sads(n, &cur, &reference);
        let (pcur, pref) = (mem.alloc_u32s(&cur), mem.alloc_u32s(&reference));
        let psad = mem.alloc(4 * expected.len() as u32);
        let groups = size.div_ceil(2 * MB as u32);
        let launch = Launch { kernel: k.clone(), grid: [groups, groups, 1], block: [k.threads, 1, 1], params: vec![pcur, pref, psad, size] };
        (vec![launch], vec![Output { name: "sad".into(), addr: psad, expected: Expected::U32(expected) }])
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    #[test]
    fn finds_a_known_motion() {
        // The current frame is the reference moved by (dx, dy) = (3, -5), without noise: every
        // macroblock whose search stays inside the frame matches exactly there, and only there.
        let n = 48;
        let (_, reference) = frames(n, 9);
        let mut cur = vec![0; n * n];
        for y in 0..n {
            for x in 0..n {
                cur[y * n + x] = reference[(y as i32 - 5).clamp(0, 47) as usize * n + (x as i32 + 3).clamp(0, 47) as usize];
            }
        }
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, n as u32, move || (cur, reference)).unwrap();
        let mut gpu = FuncGpu::new();
        gpu.run(p.as_mut()).unwrap();
        p.verify(&gpu.mem).unwrap();
        let got = gpu.mem.read_u32s(p.outputs()[0].addr, 9 * DISPS);
        let centre = &got[4 * DISPS..5 * DISPS]; // macroblock (1, 1): search fully inside
        let d = ((-5 + R) * (2 * R + 1) + (3 + R)) as usize;
        assert_eq!(centre[d], 0);
        assert!(centre.iter().enumerate().all(|(i, &s)| i == d || s > 0));
    }

    #[test]
    fn partial_groups() {
        // 48 pixels: a 2x2 grid of blocks whose right and bottom groups hold one macroblock
        // column or row.
        let ks = BENCH.kernels().unwrap();
        let mut p = make(&ks, 48, 4).unwrap();
        let mut gpu = FuncGpu::new();
        gpu.run(p.as_mut()).unwrap();
        p.verify(&gpu.mem).unwrap();
        assert!(make(&ks, 40, 1).is_err());
    }

    #[test]
    fn phases() {
        let k = BENCH.kernels().unwrap().get("sad");
        let ph = k.phases();
        assert_eq!(ph.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(), [(10, 16384), (20, 16384)]);
        assert_eq!(ph[0].0, 0);
        for (pc, inst) in k.code.iter().enumerate() {
            let regs = ph.iter().rev().find(|p| p.0 as usize <= pc).unwrap().1;
            for r in inst.dst_reg().into_iter().chain(inst.src_regs()) {
                assert!((r as u16) < regs, "pc {pc}: r{r} outside its phase's {regs} registers");
            }
        }
    }
}
