//! HeteroCore's GPUs and kernel classes (the HeteroCore paper, §2, §3.1, §4.2.1, §6.5;
//! `docs/heterocore.md`): the area-equivalent conventional GPU of a HeteroCore configuration,
//! GPUs of one SM kind, the §6.5 splits, and the static classification of a kernel as thick or
//! lean in thread-level parallelism (TLP).

use crate::config::{GpuConfig, SmConfig};
use crate::timing::gpu::{run_workload, RunLimits, RunResult, SimError};
use crate::workload::{ProcessSpec, Workload};
use serde::{Deserialize, Serialize};

/// The SM of the area-equivalent conventional GPU: every TLP resource (threads, warps,
/// registers, block slots, shared memory) the count-weighted mean of the configuration's SM
/// kinds, everything else the first kind's (§3.1: HeteroCore moves TLP resources between SMs
/// and keeps the totals; for Table 1 this is the GTX480 SM: 1536 threads, 48 warps, 32768
/// registers, 8 blocks, 48 KB).
pub fn baseline_sm(cfg: &GpuConfig) -> SmConfig {
    let n: u64 = cfg.sm.iter().map(|k| k.count as u64).sum();
    let mean = |f: fn(&SmConfig) -> u32| (cfg.sm.iter().map(|k| f(k) as u64 * k.count as u64).sum::<u64>() / n) as u32;
    SmConfig {
        count: n as u32,
        threads: mean(|k| k.threads),
        warps: mean(|k| k.warps),
        registers: mean(|k| k.registers),
        blocks: mean(|k| k.blocks),
        shared_bytes: mean(|k| k.shared_bytes),
        shared_configs: Vec::new(),
        group_warps: 0,
        ..cfg.sm[0].clone()
    }
}

/// The big and the small kind of a configuration (the most and the fewest registers; the
/// first of equals): their indices in `cfg.sm`.
pub fn big_and_small(cfg: &GpuConfig) -> (usize, usize) {
    let big = (0..cfg.sm.len()).max_by_key(|&k| (cfg.sm[k].registers, std::cmp::Reverse(k))).unwrap();
    let small = (0..cfg.sm.len()).min_by_key(|&k| (cfg.sm[k].registers, k)).unwrap();
    (big, small)
}

/// The area-equivalent conventional GPU: as many SMs, each the [`baseline_sm`].
pub fn conventional(cfg: &GpuConfig) -> GpuConfig {
    GpuConfig { name: format!("{}-conventional", cfg.name), sm: vec![baseline_sm(cfg)], ..cfg.clone() }
}

/// An SM kind of a HeteroCore configuration, or the conventional GPU's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Big,
    Small,
    Base,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Big => "big",
            Kind::Small => "small",
            Kind::Base => "base",
        }
    }
}

/// A GPU of `count` SMs of one kind (§4.2.1's classification runs on 8 of each).
pub fn of_kind(cfg: &GpuConfig, kind: Kind, count: u32) -> GpuConfig {
    let (b, s) = big_and_small(cfg);
    let sm = match kind {
        Kind::Big => cfg.sm[b].clone(),
        Kind::Small => cfg.sm[s].clone(),
        Kind::Base => baseline_sm(cfg),
    };
    GpuConfig { name: format!("{}-{}x{count}", cfg.name, kind.name()), sm: vec![SmConfig { count, ..sm }], ..cfg.clone() }
}

/// §6.5's splits: `big` big SMs and the rest small, the small SM as it is and the big SM
/// resized so that every TLP total stays the configuration's (rounded down: 12 big + 4 small
/// has 38,229 registers and 53 KB of shared memory a big SM, as the paper gives, and 8 block
/// slots). The big SM's first scheduler group stays the baseline's (and it has none when its
/// slots no longer exceed the group: 15 big + 1 small).
pub fn split(cfg: &GpuConfig, big: u32) -> Result<GpuConfig, String> {
    let (b, s) = big_and_small(cfg);
    let n: u32 = cfg.sm.iter().map(|k| k.count).sum();
    if big == 0 || big >= n {
        return Err(format!("a split needs 1..={} big SMs of {n}, not {big}", n - 1));
    }
    let small = cfg.sm[s].clone();
    let total = |f: fn(&SmConfig) -> u32| cfg.sm.iter().map(|k| f(k) as u64 * k.count as u64).sum::<u64>();
    let rest = |f: fn(&SmConfig) -> u32| ((total(f) - f(&small) as u64 * (n - big) as u64) / big as u64) as u32;
    let warps = rest(|k| k.warps);
    // (the first scheduler group stays the baseline's where a second one is left beside it)
    let group_warps = cfg.sm[b].group_warps;
    let resized = SmConfig {
        count: big,
        warps,
        group_warps: if group_warps < warps / cfg.sm[b].schedulers { group_warps } else { 0 },
        threads: rest(|k| k.threads).min(32 * warps),
        registers: rest(|k| k.registers),
        blocks: rest(|k| k.blocks),
        shared_bytes: rest(|k| k.shared_bytes) / 1024 * 1024,
        ..cfg.sm[b].clone()
    };
    let c = GpuConfig { name: format!("{}-{big}b{}s", cfg.name, n - big), sm: vec![resized, SmConfig { count: n - big, ..small }], ..cfg.clone() };
    c.validate()?;
    Ok(c)
}

/// A kernel's class in thread-level parallelism (§2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TlpClass {
    /// Faster with more TLP resources: slower on small SMs than on baseline ones.
    Thick,
    /// As fast or faster with fewer (memory-bound, or cache-sensitive).
    Lean,
}

impl TlpClass {
    pub fn name(self) -> &'static str {
        match self {
            TlpClass::Thick => "thick",
            TlpClass::Lean => "lean",
        }
    }
}

/// §4.2.1's static classification from a kernel's isolated runs on 8 baseline, 8 big and 8
/// small SMs: lean if it does not slow down on the small SMs against the baseline ones (its
/// run takes no more cycles), thick otherwise.
pub fn class_of(base_cycles: u64, small_cycles: u64) -> TlpClass {
    if small_cycles <= base_cycles {
        TlpClass::Lean
    } else {
        TlpClass::Thick
    }
}

/// A process's isolated runs for its classification: alone on `count` SMs of each kind
/// (base, big, small), and its class.
pub fn classify(cfg: &GpuConfig, p: &ProcessSpec, count: u32, limits: RunLimits) -> Result<(TlpClass, [RunResult; 3]), SimError> {
    let alone = Workload::alone(&ProcessSpec { arrival: 0, ..p.clone() });
    let run = |k: Kind| run_workload(&of_kind(cfg, k, count), &alone, limits, &mut |_, _, _| {});
    let runs = [run(Kind::Base)?, run(Kind::Big)?, run(Kind::Small)?];
    Ok((class_of(runs[0].cycles, runs[2].cycles), runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conventional_sm_of_table_1_is_the_gtx480_sm() {
        let hc = GpuConfig::preset("heterocore").unwrap();
        let b = baseline_sm(&hc);
        assert_eq!((b.count, b.threads, b.warps, b.registers, b.blocks, b.shared_bytes), (16, 1536, 48, 32768, 8, 49152));
        assert_eq!((b.l1_bytes, b.schedulers, b.group_warps), (16384, 2, 0));
        conventional(&hc).validate().unwrap();
        assert_eq!(big_and_small(&hc), (0, 1));
    }

    #[test]
    fn the_splits_keep_every_total_as_section_6_5_gives_them() {
        let hc = GpuConfig::preset("heterocore").unwrap();
        let s8 = split(&hc, 8).unwrap();
        assert_eq!(s8.sm, hc.sm, "8 big + 8 small is Table 1");
        let s4 = split(&hc, 4).unwrap();
        let b = &s4.sm[0];
        assert_eq!((b.count, b.registers, b.shared_bytes, b.warps, b.threads, b.blocks), (4, 81920, 96 * 1024, 120, 3840, 14));
        let s12 = split(&hc, 12).unwrap();
        let b = &s12.sm[0];
        assert_eq!((b.count, b.registers, b.shared_bytes, b.warps, b.threads, b.blocks), (12, 38229, 53 * 1024, 56, 1792, 8));
        assert_eq!(s12.sm[1], SmConfig { count: 4, ..hc.sm[1].clone() });
        assert!(split(&hc, 16).is_err() && split(&hc, 0).is_err());
        // (at 15 big SMs a big SM has 49 warps, too few for a second group; at 1 or 2, more
        // warps than an SM may have)
        for big in 3..16 {
            let s = split(&hc, big).unwrap_or_else(|e| panic!("{big}: {e}"));
            assert_eq!(s.sm[0].group_warps, if big == 15 { 0 } else { 24 }, "{big}");
        }
        assert!(split(&hc, 1).unwrap_err().contains("sm[0].warps"));
    }

    #[test]
    fn a_kernel_is_lean_when_the_small_sms_do_not_slow_it() {
        assert_eq!(class_of(1000, 1000), TlpClass::Lean);
        assert_eq!(class_of(1000, 900), TlpClass::Lean);
        assert_eq!(class_of(1000, 1001), TlpClass::Thick);
    }
}
