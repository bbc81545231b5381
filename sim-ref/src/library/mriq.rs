//! mriq: the Parboil MRI-Q non-Cartesian reconstruction (compute-bound, SFU-heavy).
//!
//! Two launches as in Parboil: `mriq_phimag` squares the k-space samples' phases, then `mriq_q`
//! gives every voxel i
//!   Qr[i] = sum_k phiMag[k] cos(2pi (kx[k] x[i] + ky[k] y[i] + kz[k] z[i])),
//!   Qi[i] = the same with sin,
//! staging the samples through shared memory 256 at a time. The host computes the same f32
//! operations in the same order with `f32::sin`/`f32::cos`, so the check is tight.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::program::{rng, Expected, Output, Program, StaticProgram};
use rand::Rng;

/// k-space samples per run: one full tile of 256 and a partial one.
pub const NUM_K: u32 = 320;
/// Largest voxel count (bounds the host reference's work).
const MAX_VOXELS: u32 = 1 << 18;

pub const BENCH: Bench = Bench {
    name: "mriq",
    description: "MRI-Q: Q at `size` voxels from 320 k-space samples (sin/cos per voxel-sample pair)",
    character: "compute-bound, SFU-heavy (sin+cos per pair), shared-memory tiles with barriers; 24 regs x 256 threads",
    source: include_str!("../../../kernels/mriq.s"),
    default_size: 16384,
    test_sizes: [40, 300],
    threads: None,
    make,
};

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    program(ks, size, seed, NUM_K)
}

/// The inputs of one run.
struct Inputs {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    kx: Vec<f32>,
    ky: Vec<f32>,
    kz: Vec<f32>,
    phi_r: Vec<f32>,
    phi_i: Vec<f32>,
}

fn inputs(voxels: usize, num_k: usize, seed: u64) -> Inputs {
    let mut r = rng(seed);
    let mut v = |n: usize, lim: f32| -> Vec<f32> { (0..n).map(|_| r.gen_range(-lim..lim)).collect() };
    Inputs {
        x: v(voxels, 1.0),
        y: v(voxels, 1.0),
        z: v(voxels, 1.0),
        kx: v(num_k, 4.0),
        ky: v(num_k, 4.0),
        kz: v(num_k, 4.0),
        phi_r: v(num_k, 1.0),
        phi_i: v(num_k, 1.0),
    }
}

/// phiMag, Qr and Qi as the kernels compute them.
fn reference(inp: &Inputs) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let phi_mag: Vec<f32> = inp.phi_r.iter().zip(&inp.phi_i).map(|(r, i)| r * r + i * i).collect();
    let mut qr = Vec::with_capacity(inp.x.len());
    let mut qi = Vec::with_capacity(inp.x.len());
    for v in 0..inp.x.len() {
        let (x, y, z) = (inp.x[v], inp.y[v], inp.z[v]);
        let (mut sr, mut si) = (0f32, 0f32);
        for (k, phi) in phi_mag.iter().enumerate() {
            let arg = std::f32::consts::TAU * (inp.kx[k] * x + inp.ky[k] * y + inp.kz[k] * z);
            sr += phi * arg.cos();
            si += phi * arg.sin();
        }
        qr.push(sr);
        qi.push(si);
    }
    (phi_mag, qr, qi)
}

fn program(ks: &Kernels, size: u32, seed: u64, num_k: u32) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > MAX_VOXELS {
        return Err(format!("expected 1..={MAX_VOXELS} voxels"));
    }
    let (kphi, kq) = (ks.get("mriq_phimag"), ks.get("mriq_q"));
    Ok(Box::new(StaticProgram::new(move |mem| {
        let inp = inputs(size as usize, num_k as usize, seed);
        let (phi_mag, qr, qi) = reference(&inp);
        let [px, py, pz, pkx, pky, pkz, pr, pi] =
            [&inp.x, &inp.y, &inp.z, &inp.kx, &inp.ky, &inp.kz, &inp.phi_r, &inp.phi_i].map(|v| mem.alloc_f32s(v));
        let pmag = mem.alloc(4 * num_k);
        let (pqr, pqi) = (mem.alloc(4 * size), mem.alloc(4 * size));
        let launches = vec![
            Launch::linear(&kphi, num_k.div_ceil(kphi.threads), vec![pr, pi, pmag, num_k]),
            Launch::linear(&kq, size.div_ceil(kq.threads), vec![num_k, size, pkx, pky, pkz, pmag, px, py, pz, pqr, pqi]),
        ];
        // phiMag is one multiply and one add, computed identically: exact. Q repeats the same
        // f32 operations in the same order, so it matches too; the small tolerance only allows
        // for an SFU whose sin/cos round differently in the last place.
        let q = |name: &str, addr, vals| Output { name: name.into(), addr, expected: Expected::F32 { vals, abs: 1e-4, rel: 1e-5 } };
        let outputs = vec![
            Output { name: "phiMag".into(), addr: pmag, expected: Expected::F32 { vals: phi_mag, abs: 0.0, rel: 0.0 } },
            q("Qr", pqr, qr),
            q("Qi", pqi, qi),
        ];
        (launches, outputs)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    fn run(size: u32, seed: u64, num_k: u32) -> (FuncGpu, Box<dyn Program>) {
        let ks = BENCH.kernels().unwrap();
        let mut p = program(&ks, size, seed, num_k).unwrap();
        let mut gpu = FuncGpu::new();
        gpu.run(p.as_mut()).unwrap();
        (gpu, p)
    }

    #[test]
    fn tile_boundaries() {
        // One sample, exactly one tile, one sample into a third tile; a partial block.
        for num_k in [1, 256, 513] {
            let (gpu, p) = run(70, 3, num_k);
            p.verify(&gpu.mem).unwrap_or_else(|e| panic!("numK {num_k}: {e}"));
        }
    }

    #[test]
    fn wrong_q_fails() {
        let (mut gpu, p) = run(40, 1, NUM_K);
        p.verify(&gpu.mem).unwrap();
        // Drop one sample's contribution from one voxel: the check must notice.
        let qi = &p.outputs()[2];
        let got = f32::from_bits(gpu.mem.read(qi.addr + 4 * 7).unwrap());
        gpu.mem.write(qi.addr + 4 * 7, (got + 1e-3).to_bits()).unwrap();
        assert!(p.verify(&gpu.mem).is_err());
    }

    #[test]
    fn phases() {
        let k = BENCH.kernels().unwrap().get("mriq_q");
        let ph = k.phases();
        assert_eq!(ph.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(), [(8, 0), (24, 4096), (8, 0)]);
        assert_eq!(ph[0].0, 0, "the kernel starts with its first phase");
        // Each phase touches only the registers it declares.
        for (pc, inst) in k.code.iter().enumerate() {
            let regs = ph.iter().rev().find(|p| p.0 as usize <= pc).unwrap().1;
            for r in inst.dst_reg().into_iter().chain(inst.src_regs()) {
                assert!((r as u16) < regs, "pc {pc}: r{r} outside its phase's {regs} registers");
            }
        }
        assert_eq!(std::f32::consts::TAU.to_bits(), 0x40C9_0FDB, "the kernel's 2pi literal");
    }
}
