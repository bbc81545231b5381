//! The thesis's multiprogrammed workloads (Tanasić 2016, §5.3.1): mixes of 2, 4, 6 and 8
//! processes drawn at random from the Parboil-like applications, each replayed until every one
//! has completed at least three runs, with inputs large enough for several rounds of thread
//! blocks on the GPU they run on. [`mix`] turns (configuration, process count, seed, index)
//! into a [`Workload`]; the same arguments always give the same workload.
//!
//! What the thesis leaves open (`docs/results.md`, "The thesis's workloads"): how many
//! workloads per process count, the seed, whether a benchmark may appear twice in one mix. We
//! draw without replacement while the pool lasts (8 processes of 9 applications), so that a
//! mix is as varied as it can be, and give each workload of a count its own stream.

use crate::config::GpuConfig;
use crate::kernel::Footprint;
use crate::library::{find, Bench, PARBOIL};
use crate::mem::GlobalMem;
use crate::workload::{LaunchSpec, ProcessSpec, Workload};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The process counts of the thesis's workloads.
pub const COUNTS: &[usize] = &[2, 4, 6, 8];

/// Runs every process completes at least (the thesis: three).
pub const MIN_RUNS: u32 = 3;

/// What a mix is drawn with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MixParams {
    /// Rounds of blocks the first launch of every process fills on the configuration at the
    /// least: its blocks over (SMs x the blocks of it an SM holds).
    pub rounds: u32,
    /// Runs every process completes at least (`Workload::min_runs`).
    pub min_runs: u32,
    /// One process at priority 1, the others at 0: in mix `index` the `index % n`th (so that
    /// over `n` workloads every position, and with the draws every application, leads in
    /// turn, as the thesis's priority experiments do).
    pub priority: bool,
}

impl Default for MixParams {
    fn default() -> Self {
        MixParams { rounds: 3, min_runs: MIN_RUNS, priority: false }
    }
}

/// The multiples of an application's default size [`sized`] tries, smallest first.
const MULTIPLES: &[(u32, u32)] = &[(1, 1), (3, 2), (2, 1), (5, 2), (3, 1), (4, 1), (5, 1), (6, 1), (8, 1), (10, 1), (12, 1), (16, 1)];

/// An application's size for a mix, with the rounds of blocks it fills: the smallest multiple
/// of its default size ([`MULTIPLES`], rounded down to a multiple of 16, or of the largest
/// power of two dividing the default if that is smaller) that it accepts and at which its
/// largest launch fills `rounds` rounds of blocks on `cfg`; if none does, the smallest of
/// those with the most rounds.
pub fn sized(b: &Bench, cfg: &GpuConfig, rounds: u32) -> Result<(u32, f64), String> {
    let grain = 1u32 << b.default_size.trailing_zeros().min(4);
    let mut best: Option<(u32, f64)> = None;
    let mut last = 0;
    for &(num, den) in MULTIPLES {
        let Some(size) = (b.default_size as u64 * num as u64 / den as u64 / grain as u64).checked_mul(grain as u64).and_then(|s| u32::try_from(s).ok()) else { break };
        if size == last {
            continue;
        }
        last = size;
        let Ok(r) = rounds_of(b, cfg, size) else { continue };
        if r >= rounds as f64 {
            return Ok((size, r));
        }
        // (short of the rounds everywhere: the smallest size with the most, since a larger
        // input that adds no blocks only lengthens each block)
        if best.is_none_or(|(_, x)| r > x) {
            best = Some((size, r));
        }
    }
    best.ok_or_else(|| format!("{}: no size from {} up is accepted", b.name, b.default_size))
}

/// The rounds of blocks the largest of the first launches of `b` at `size` (up to four, as
/// its host program submits them before any has run) fills on `cfg`.
pub fn rounds_of(b: &Bench, cfg: &GpuConfig, size: u32) -> Result<f64, String> {
    let launches = first_launches(b, size)?;
    let mut best: Option<f64> = None;
    for (f, kernel, blocks) in launches.iter() {
        let per_gpu: u64 = (0..cfg.num_sms()).map(|s| cfg.sm_config(s).occupancy(f).blocks as u64).sum();
        if per_gpu == 0 {
            return Err(format!("{}: a block of `{kernel}` fits on no SM of {}", b.name, cfg.name));
        }
        let r = *blocks as f64 / per_gpu as f64;
        best = Some(best.map_or(r, |x| x.max(r)));
    }
    best.ok_or_else(|| format!("{} at size {size} launches nothing", b.name))
}

/// The first launches (up to four) of `b` at `size`, seed 1: each kernel's footprint, name
/// and blocks. They do not depend on the GPU, and building an application's input is most of
/// [`rounds_of`]'s time, so each is built once per process (an experiment's plan, its point
/// count and `experiment --list` ask for the same ones).
fn first_launches(b: &Bench, size: u32) -> Result<Arc<Vec<(Footprint, String, u64)>>, String> {
    type Cache = Mutex<HashMap<(&'static str, u32), Arc<Vec<(Footprint, String, u64)>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&(b.name, size)) {
        return Ok(v.clone());
    }
    let mut p = b.program(size, 1)?;
    let mut mem = GlobalMem::new();
    p.setup(&mut mem);
    let mut v = Vec::new();
    for _ in 0..4 {
        let Some(l) = p.next_launch(&mem) else { break };
        v.push((l.kernel.footprint(), l.kernel.name.to_string(), l.num_blocks() as u64));
    }
    let v = Arc::new(v);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert((b.name, size), v.clone());
    Ok(v)
}

/// Every application of [`PARBOIL`] with its [`sized`] size and the rounds it fills on `cfg`.
pub fn sizes(cfg: &GpuConfig, rounds: u32) -> Result<Vec<(&'static str, u32, f64)>, String> {
    PARBOIL
        .iter()
        .map(|&name| {
            let b = find(name).ok_or_else(|| format!("no application `{name}` in the library"))?;
            let (size, r) = sized(&b, cfg, rounds)?;
            Ok((name, size, r))
        })
        .collect()
}

/// Mix `index` of `n` processes for the GPU named `gpu`: `n` applications of [`PARBOIL`]
/// drawn at random (without replacement while the pool lasts), each at its size in `sizes`
/// ([`sizes`] for that GPU), all arriving at cycle 0, replayed to `p.min_runs` runs.
pub fn mix(gpu: &str, sizes: &[(&'static str, u32, f64)], n: usize, seed: u64, index: u64, p: &MixParams) -> Result<Workload, String> {
    if n == 0 || n > crate::workload::MAX_PROCESSES {
        return Err(format!("{n} processes: expected 1..={}", crate::workload::MAX_PROCESSES));
    }
    let mut r = ChaCha8Rng::seed_from_u64(seed ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ index.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    let mut names: Vec<&str> = Vec::new();
    while names.len() < n {
        let mut pool: Vec<&str> = PARBOIL.to_vec();
        pool.shuffle(&mut r);
        names.extend(pool.into_iter().take(n - names.len()));
    }
    let lead = index as usize % n;
    let mut processes = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let size = sizes.iter().find(|x| x.0 == *name).ok_or_else(|| format!("no size for `{name}`"))?.1;
        // (an application twice in a mix gets its own name and input)
        let twice = names[..i].iter().filter(|x| *x == name).count();
        let pname = if twice == 0 { name.to_string() } else { format!("{name}-{}", twice + 1) };
        processes.push(ProcessSpec {
            name: pname,
            arrival: 0,
            priority: u32::from(p.priority && i == lead),
            repeat: 1,
            tokens: None,
            // (the high-priority process runs once: replayed at once it would hold the GPU
            // from the others under PPQ, where the thesis's applications leave it between
            // their kernels)
            replay: !(p.priority && i == lead),
            insts: None,
            launches: vec![LaunchSpec { kernel: name.to_string(), size: Some(size), seed: 1 + twice as u64 }],
        });
    }
    let w = Workload {
        description: format!("thesis mix: {n} processes ({}), seed {seed}, index {index}, on {gpu}, replayed to {} runs each", names.join(", "), p.min_runs),
        min_runs: Some(p.min_runs),
        processes,
    };
    w.validate()?;
    Ok(w)
}
