//! The soak workload generator: deterministic, always valid, round-trips through TOML, and
//! its workloads run to verified results on the `k20c` preset within a cycle bound.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::library;
use mpgpu_ref::soakgen::{est_work, random_workload, soak_size, SoakParams, SOAK_LEFT_OUT, SOAK_SIZES};
use mpgpu_ref::timing::gpu::{run_workload_with, RunLimits};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::{LaunchSpec, ProcessSpec, Workload};
use std::time::Instant;

/// Cycles a generated workload (default parameters) must finish in on `k20c`. Measured (the
/// `survey` below): over seed 1 x 300 workloads x 6 policies x 2 mechanisms the worst took 154k
/// cycles (PPQ exclusive; 135k under every other policy), over seed 99 x 1000 workloads 172k
/// (PPQ exclusive, context switch) and 140k (Equal/drain); the median is about 50k (65k PPQ
/// exclusive).
const CYCLE_BOUND: u64 = 250_000;

const PINNED: [&str; 4] = [
    "soak seed 1 index 0: 3 random processes (lbm, sad, reduction)",
    "soak seed 1 index 1: 2 random processes (mriq, cutcp)",
    "soak seed 1 index 2: 4 random processes (histo, sad, spmv, spmv)",
    "soak seed 1 index 3: 4 random processes (lbm, mriq, vecadd, stencil)",
];
/// FNV-1a of the four workloads' TOML, which pins every drawn value.
const PINNED_FNV: u64 = 6135378008567889908;

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

#[test]
fn the_same_seed_and_index_give_the_same_workload() {
    let p = SoakParams::default();
    for i in 0..20 {
        assert_eq!(random_workload(7, i, &p), random_workload(7, i, &p));
    }
    let a: Vec<_> = (0..20).map(|i| random_workload(7, i, &p)).collect();
    let b: Vec<_> = (0..20).map(|i| random_workload(8, i, &p)).collect();
    assert_ne!(a, b, "different seeds give different workloads");
    let distinct = a.iter().enumerate().filter(|(i, w)| a[..*i].iter().all(|v| v.processes != w.processes)).count();
    assert!(distinct >= 19, "indices give different workloads ({distinct} of 20 distinct)");
    assert!(a[3].description.contains("seed 7") && a[3].description.contains("index 3"), "{}", a[3].description);
    // Pinned: a soak reports failures as (seed, index), which reproduce only while the
    // generator draws the same. Update these when changing the generator on purpose.
    let pinned: Vec<String> = (0..4).map(|i| random_workload(1, i, &p).description).collect();
    assert_eq!(pinned, PINNED);
    let text: String = (0..4).map(|i| random_workload(1, i, &p).to_toml()).collect();
    assert_eq!(fnv1a(&text), PINNED_FNV, "{text}");
}

#[test]
fn two_hundred_workloads_validate_and_round_trip() {
    let p = SoakParams::default();
    let (mut procs, mut ties, mut tokens, mut together, mut repeats, mut multi) = (0, 0, 0, 0, 0, 0);
    let mut kernels = std::collections::BTreeSet::new();
    let mut max_procs = 0;
    for i in 0..200 {
        let w = random_workload(0x50a6, i, &p);
        w.validate().unwrap_or_else(|e| panic!("index {i}: {e}"));
        assert!(est_work(&w) <= p.max_work, "index {i}: estimated work {}", est_work(&w));
        let text = w.to_toml();
        let back = Workload::parse(&format!("soak-{i}.toml"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back, w, "index {i} does not round-trip:\n{text}");
        assert_eq!(back.to_toml(), text);
        // The shape stays within the parameters.
        assert!((1..=p.max_procs).contains(&w.processes.len()));
        assert_eq!(w.processes.iter().map(|q| q.arrival).min(), Some(0));
        max_procs = max_procs.max(w.processes.len());
        procs += w.processes.len();
        for (j, q) in w.processes.iter().enumerate() {
            assert!(q.arrival <= p.max_arrival && q.priority <= p.max_priority && (1..=p.max_repeat).contains(&q.repeat));
            assert!((1..=p.max_launches).contains(&q.launches.len()));
            assert!(q.tokens.is_none_or(|t| (1..=p.max_tokens).contains(&t)));
            tokens += q.tokens.is_some() as usize;
            repeats += (q.repeat > 1) as usize;
            multi += (q.launches.len() > 1) as usize;
            for l in &q.launches {
                let s = soak_size(&l.kernel).unwrap();
                let size = l.size.unwrap();
                assert!(size >= s.min && size <= s.max && (size - s.min).is_multiple_of(s.step));
                kernels.insert(l.kernel.clone());
            }
            if w.processes[..j].iter().any(|o| o.priority == q.priority) {
                ties += 1;
            }
        }
        if w.processes.len() > 1 && w.processes.iter().all(|q| q.arrival == 0) {
            together += 1;
        }
    }
    // Every feature shows up.
    assert_eq!(max_procs, p.max_procs);
    assert_eq!(kernels.len(), SOAK_SIZES.len(), "{kernels:?}");
    assert!(ties > 50 && tokens > 20 && tokens < procs / 2 && together > 10 && repeats > 50 && multi > 50, "ties {ties} tokens {tokens}/{procs} together {together} repeats {repeats} multi {multi}");
}

#[test]
fn every_soak_size_is_one_the_library_accepts() {
    // (every library kernel is in the soak or left out with a reason)
    for b in library::library() {
        assert!(SOAK_SIZES.iter().any(|s| s.kernel == b.name) != SOAK_LEFT_OUT.iter().any(|l| l.0 == b.name), "{}: in the soak or left out, not both or neither", b.name);
    }
    for s in &SOAK_SIZES {
        let b = library::find(s.kernel).unwrap_or_else(|| panic!("{} is not in the library", s.kernel));
        for size in [s.min, s.min + s.step, s.max - s.step.min(s.max - s.min), s.max] {
            b.program(size, 1).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn to_toml_round_trips_the_shipped_workloads_and_odd_fields() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../workloads");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let w = Workload::load(&path).unwrap();
            assert_eq!(Workload::parse("again.toml", &w.to_toml()).unwrap(), w, "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 5);
    let w = Workload {
        description: "quotes \" and \\ backslashes,\nnew lines, tabs\t and unicode: µ".into(),
        min_runs: Some(7),
        processes: vec![
            ProcessSpec { name: "a \"b\"".into(), arrival: 1 << 40, priority: u32::MAX, repeat: 1000, tokens: Some(0), replay: false, insts: None, launches: vec![LaunchSpec { kernel: "vecadd".into(), size: None, seed: i64::MAX as u64 }] },
            ProcessSpec { name: "b".into(), arrival: 0, priority: 0, repeat: 1, tokens: None, replay: true, insts: None, launches: vec![LaunchSpec { kernel: "sgemm".into(), size: Some(16), seed: 0 }, LaunchSpec { kernel: "vecadd".into(), size: Some(5), seed: 3 }] },
        ],
    };
    w.validate().unwrap();
    let text = w.to_toml();
    assert_eq!(Workload::parse("odd.toml", &text).unwrap(), w, "{text}");
    // The serde form (`[[process.launches]]` tables) reads back the same.
    let serde_text = toml::to_string(&w).unwrap();
    assert_eq!(Workload::parse("serde.toml", &serde_text).unwrap(), w, "{serde_text}");
    assert!(!text.contains("size = \n") && text.matches("tokens").count() == 1, "{text}");
}

#[test]
fn a_seed_toml_cannot_hold_is_rejected() {
    let mut w = random_workload(1, 1, &SoakParams::default());
    w.processes[0].launches[0].seed = 1 << 63;
    let e = w.validate().unwrap_err();
    assert!(e.contains("launches[0]: field `seed`"), "{e}");
}

fn run(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism) -> u64 {
    let r = run_workload_with(cfg, w, Some((p, m)), RunLimits { max_cycles: 2 * CYCLE_BOUND, ..RunLimits::default() }, &mut |_, _, _| {})
        .unwrap_or_else(|e| panic!("{p:?} {m:?}: {e}\n{}", w.to_toml()));
    for pr in &r.processes {
        assert!(pr.verified, "{p:?} {m:?}: {} failed: {:?}\n{}", pr.name, pr.failures, w.to_toml());
    }
    r.cycles
}

#[test]
fn generated_workloads_run_verified_on_k20c_within_the_bound() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let p = SoakParams::default();
    // The first three with three processes or more.
    let ws: Vec<Workload> = (0..).map(|i| random_workload(2024, i, &p)).filter(|w| w.processes.len() >= 3).take(3).collect();
    for (i, w) in ws.iter().enumerate() {
        let t = Instant::now();
        let cycles = run(&cfg, w, Policy::Equal, Mechanism::Drain);
        println!("{}: {cycles} cycles, {:.3} s", w.description, t.elapsed().as_secs_f64());
        assert!(cycles < CYCLE_BOUND, "workload {i}: {cycles} cycles\n{}", w.to_toml());
    }
}

/// Survey for planning a soak: cycles and wall time per workload per policy and mechanism,
/// `SOAK_SURVEY=count SOAK_SEED=seed SOAK_POLICIES=equal:drain,ppq-excl:ctxsw cargo test --release
/// -p mpgpu-ref --test soakgen -- --ignored --nocapture survey` (every pair when
/// `SOAK_POLICIES` is unset).
#[test]
#[ignore]
fn survey() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let p = SoakParams::default();
    let count: u64 = std::env::var("SOAK_SURVEY").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
    let seed: u64 = std::env::var("SOAK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let ests: Vec<u64> = (0..count).map(|i| est_work(&random_workload(seed, i, &p))).collect();
    let mut hist = vec![0; p.max_procs + 1];
    for i in 0..count {
        hist[random_workload(seed, i, &p).processes.len()] += 1;
    }
    println!("SURVEY processes per workload (count of workloads with 0, 1, ...): {hist:?}");
    let procs: usize = hist.iter().enumerate().map(|(n, c)| n * c).sum();
    println!("SURVEY est work: mean {} max {}; mean processes {:.2}", ests.iter().sum::<u64>() / count, ests.iter().max().unwrap(), procs as f64 / count as f64);
    let want = std::env::var("SOAK_POLICIES").unwrap_or_default();
    let pols = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
    for pol in pols {
        for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
            if !want.is_empty() && !want.split(',').any(|x| x == format!("{}:{}", pol.name(), m.name())) {
                continue;
            }
            let mut cyc = Vec::new();
            let mut worst = (0, 0);
            let t = Instant::now();
            for i in 0..count {
                let w = random_workload(seed, i, &p);
                let c = run(&cfg, &w, pol, m);
                if c > worst.0 {
                    worst = (c, i);
                }
                cyc.push(c);
            }
            let wall = t.elapsed().as_secs_f64() / count as f64;
            cyc.sort();
            let q = |f: f64| cyc[((cyc.len() - 1) as f64 * f) as usize];
            println!("SURVEY {pol:?}/{m:?}: n={count} min={} p50={} p90={} p99={} max={} (index {}) mean={} wall/workload={:.3}s", cyc[0], q(0.5), q(0.9), q(0.99), worst.0, worst.1, cyc.iter().sum::<u64>() / count, wall);
        }
    }
}

/// Re-measures the costs in `SOAK_SIZES` (cycles of one launch alone on `k20c`, plain dispatcher
/// and framework): `SOAK_MEASURE=spmv=512,mriq=1@7 cargo test --release -p mpgpu-ref --test
/// soakgen -- --ignored --nocapture measure_kernels` (`kernel=size[@seed]`, comma-separated).
#[test]
#[ignore]
fn measure_kernels() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let list = std::env::var("SOAK_MEASURE").unwrap();
    for item in list.split(',') {
        let (k, s) = item.split_once('=').unwrap();
        let (s, seed) = s.split_once('@').unwrap_or((s, "1"));
        let size: u32 = s.parse().unwrap();
        let seed: u64 = seed.parse().unwrap();
        let w = Workload {
            description: "m".into(),
            min_runs: None,
            processes: vec![ProcessSpec { name: "p".into(), arrival: 0, priority: 0, repeat: 1, tokens: None, replay: true, insts: None, launches: vec![LaunchSpec { kernel: k.into(), size: Some(size), seed }] }],
        };
        for sched in [None, Some((Policy::Equal, Mechanism::Drain))] {
            let t = Instant::now();
            let r = run_workload_with(&cfg, &w, sched, RunLimits::default(), &mut |_, _, _| {}).unwrap();
            assert!(r.processes[0].verified);
            println!("MEASURE {k} {size} seed {seed} fw={} cycles={} launches={} wall={:.3}s", sched.is_some(), r.cycles, r.launches.len(), t.elapsed().as_secs_f64());
        }
    }
}
