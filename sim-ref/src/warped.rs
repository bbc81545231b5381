//! Warped-Slicer's arithmetic as plain functions (Xu et al., ISCA 2016, §IV; decisions in
//! `docs/warped-slicer.md`): Eq. 4's score in exact integers, the staircase and its
//! normalisation, Algorithm 1 (water-filling) with the Spatial fallback, and a brute-force
//! max-min search to measure how far the greedy loop is from the optimum. The unit
//! (`units::wf`) computes the same one step per cycle; tests hold the two together.

use mpgpu_spec::units::wf::{below_threshold, times, NMAX, RES};

/// Eq. 4 in exact integers: an SM that issued `insts` warp-instructions and stalled on long
/// memory latency for `stalls` of the `window` cycles, running `j` CTAs while the `n`
/// profiling SMs ran `a` CTAs in all, scores `I x (W A + s (n j - A))`: its IPC times
/// `1 + phi_mem (CTA_j / CTA_avg - 1)`, times the common `W A` (dropped by the per-kernel
/// normalisation). The factor is floored at zero (it is not negative while `stalls <= window`).
pub fn score(insts: u32, stalls: u32, window: u16, n: u8, a: u16, j: u8) -> u64 {
    let wa = window as i64 * a as i64;
    let d = n as i64 * j as i64 - a as i64;
    let f = (wa + stalls as i64 * d).max(0);
    insts as u64 * f as u64
}

/// A kernel's staircase: the counts at which its score rises strictly above every smaller
/// count's (`scores[j - 1]` for count j; 0 is not profiled), and each step's normalised
/// performance `floor(score x 2^16 / peak)`.
pub fn staircase(scores: &[u64; NMAX]) -> Vec<(u8, u32)> {
    let mut steps: Vec<(u8, u64)> = Vec::new();
    for (j, &v) in scores.iter().enumerate() {
        if v > steps.last().map_or(0, |s| s.1) {
            steps.push((j as u8 + 1, v));
        }
    }
    let peak = steps.last().map_or(1, |s| s.1) as u128;
    steps.iter().map(|&(j, v)| (j, ((v as u128) << 16).div_euclid(peak) as u32)).collect()
}

/// A decision: CTAs per SM of each kernel, and whether the kernels fall back to Spatial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub quota: Vec<u8>,
    pub spatial: bool,
    /// Each kernel's normalised performance at its quota (2^16 = its peak).
    pub perf: Vec<u32>,
}

/// Algorithm 1 as `docs/warped-slicer.md` fixes it: each kernel starts at its first step, the
/// kernel not Full with the lowest normalised performance (lowest index on a tie) takes its
/// next step if all its extra CTAs fit, else it is Full; a kernel at its peak is Full. Spatial
/// if the first steps do not fit together, or some kernel ends below `pct / 100 / K`.
pub fn water_fill(scores: &[[u64; NMAX]], req: &[[u32; RES]], total: [u32; RES], pct: u8) -> Decision {
    let k = scores.len();
    let stairs: Vec<Vec<(u8, u32)>> = scores.iter().map(staircase).collect();
    let mut t: Vec<u8> = stairs.iter().map(|s| s.first().map_or(1, |x| x.0)).collect();
    let mut q: Vec<u32> = stairs.iter().map(|s| s.first().map_or(0, |x| x.1)).collect();
    let mut g = vec![0usize; k];
    let mut full = vec![false; k];
    let mut rl = total.map(|x| x as i64);
    for i in 0..k {
        for c in 0..RES {
            rl[c] -= times(req[i][c], t[i]) as i64;
        }
    }
    let over = rl.iter().any(|&x| x < 0);
    if !over {
        while let Some(s) = (0..k).filter(|&i| !full[i]).fold(None, |b: Option<usize>, i| if b.is_none_or(|b| q[i] < q[b]) { Some(i) } else { b }) {
            if g[s] + 1 >= stairs[s].len() {
                full[s] = true;
                continue;
            }
            let (mn, qn) = stairs[s][g[s] + 1];
            let dt = mn - t[s];
            let need: Vec<i64> = (0..RES).map(|c| times(req[s][c], dt) as i64).collect();
            if (0..RES).all(|c| rl[c] >= need[c]) {
                for c in 0..RES {
                    rl[c] -= need[c];
                }
                g[s] += 1;
                t[s] = mn;
                q[s] = qn;
            } else {
                full[s] = true;
            }
        }
    }
    let spatial = over || q.iter().any(|&x| below_threshold(x, k as u8, pct));
    Decision { quota: t, spatial, perf: q }
}

/// The best max-min over every quota vector that fits (each kernel 1..=NMAX CTAs, a count
/// never profiled scoring 0): the highest `min_i P(i, T_i)`, with P normalised as the
/// staircase does. O(NMAX^K); for measuring the greedy loop, not for hardware.
pub fn brute_force(scores: &[[u64; NMAX]], req: &[[u32; RES]], total: [u32; RES]) -> (u32, Vec<u8>) {
    let k = scores.len();
    let perf: Vec<Vec<u32>> = scores
        .iter()
        .map(|s| {
            let peak = *s.iter().max().unwrap_or(&0);
            s.iter().map(|&v| if peak == 0 { 0 } else { ((v as u128) << 16).div_euclid(peak as u128) as u32 }).collect()
        })
        .collect();
    let mut best = (0u32, vec![1u8; k]);
    let mut t = vec![1u8; k];
    loop {
        let fits = (0..RES).all(|c| (0..k).map(|i| times(req[i][c], t[i]) as u64).sum::<u64>() <= total[c] as u64);
        if fits {
            let m = (0..k).map(|i| perf[i][t[i] as usize - 1]).min().unwrap_or(0);
            if m > best.0 {
                best = (m, t.clone());
            }
        }
        let mut i = 0;
        while i < k && t[i] as usize == NMAX {
            t[i] = 1;
            i += 1;
        }
        if i == k {
            return best;
        }
        t[i] += 1;
    }
}

/// One profiling round as the water-filling unit reads it: per SM, the kernel and CTA count
/// it profiled (count 0: not profiling) and its latched counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub map: Vec<(u8, u8)>,
    pub insts: Vec<u32>,
    pub stalls: Vec<u32>,
}

/// A decision's inputs, for driving the unit alone (tests, benchmarks): the configuration it
/// samples at `start`, the kernels' requests, and the rounds' counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scenario {
    pub kernels: u8,
    pub window: u16,
    pub pct: u8,
    pub delay: u16,
    pub total: [u32; RES],
    pub req: Vec<[u32; RES]>,
    pub rounds: Vec<Round>,
}

impl Scenario {
    /// The unit's inputs in a cycle of round `round` in which it drives `o`, with `start`.
    pub fn input(&self, o: &mpgpu_spec::units::wf::Out, round: usize, start: bool) -> mpgpu_spec::units::wf::In {
        let r = &self.rounds[round.min(self.rounds.len() - 1)];
        let sm = o.rd_sm as usize;
        let (sm_k, sm_j) = r.map.get(sm).copied().unwrap_or((0, 0));
        mpgpu_spec::units::wf::In {
            start,
            last: round + 1 == self.rounds.len(),
            kernels: self.kernels,
            window: self.window,
            fallback_pct: self.pct,
            delay: self.delay,
            total: self.total,
            sm_k,
            sm_j,
            sm_insts: r.insts.get(sm).copied().unwrap_or(0),
            sm_stalls: r.stalls.get(sm).copied().unwrap_or(0),
            k_req: self.req.get(o.rd_k as usize).copied().unwrap_or_default(),
        }
    }

    /// The scores the unit computes from the rounds (Eq. 4 per round; a later SM or round
    /// profiling the same count overwrites an earlier one), per kernel and count.
    pub fn scores(&self) -> Vec<[u64; NMAX]> {
        let k = (self.kernels & 7).clamp(1, mpgpu_spec::units::wf::KMAX as u8);
        let mut s = vec![[0u64; NMAX]; k as usize];
        for r in &self.rounds {
            let on = |&(kk, j): &(u8, u8)| (1..=NMAX as u8).contains(&(j & 31)) && (kk & 3) < k;
            let n = r.map.iter().filter(|m| on(m)).count() as u8;
            let a: u16 = r.map.iter().filter(|m| on(m)).map(|m| (m.1 & 31) as u16).sum();
            for (sm, m) in r.map.iter().enumerate() {
                if on(m) {
                    let i = r.insts[sm] & ((1 << mpgpu_spec::units::wf::INST_BITS) - 1);
                    let st = r.stalls[sm] & 0xFFFF;
                    s[(m.0 & 3) as usize][(m.1 & 31) as usize - 1] = score(i, st, self.window.max(1), n, a, m.1 & 31);
                }
            }
        }
        s
    }

    /// What the unit should decide: Algorithm 1 on [`Scenario::scores`].
    pub fn expected(&self) -> Decision {
        let s = self.scores();
        let req: Vec<[u32; RES]> = (0..s.len()).map(|k| self.req.get(k).copied().unwrap_or_default().map(|x| x & ((1 << mpgpu_spec::units::wf::RES_BITS) - 1))).collect();
        water_fill(&s, &req, self.total.map(|x| x & ((1 << mpgpu_spec::units::wf::RES_BITS) - 1)), self.pct)
    }
}

/// Drives `unit` through `sc` from idle: `start` in the first cycle and whenever the unit
/// waits for a round. Returns the cycles until `done` (the cycle it shows), the quotas and the
/// mode, or None if it is not done within `limit` cycles. `each` sees every cycle's inputs
/// and outputs.
pub fn drive<U: mpgpu_spec::Unit<In = mpgpu_spec::units::wf::In, Out = mpgpu_spec::units::wf::Out>>(
    unit: &mut U,
    sc: &Scenario,
    limit: u64,
    each: &mut dyn FnMut(u64, &mpgpu_spec::units::wf::In, &mpgpu_spec::units::wf::Out),
) -> Option<(u64, Vec<u8>, bool)> {
    let mut round = 0;
    let mut started = false;
    for cycle in 0..limit {
        let o = unit.outputs(&mpgpu_spec::units::wf::In::default());
        if o.done {
            return Some((cycle, o.quota[..sc.kernels.clamp(1, 4) as usize].to_vec(), o.spatial));
        }
        let start = if !started {
            started = true;
            true
        } else if o.round_wait {
            round += 1;
            true
        } else {
            false
        };
        let i = sc.input(&o, round, start);
        let o = unit.outputs(&i);
        each(cycle, &i, &o);
        unit.clock(&i);
    }
    None
}

/// A random decision for testing the unit: `k` kernels on `sms` SMs, one to three rounds of
/// profiling, each SM profiling a random (kernel, count) or nothing; curves rising,
/// saturating (equal scores: ties inside a curve), peaked (cache-sensitive: kernels past their
/// peak), flat or random, often shared by two kernels with no stalls (equal normalised steps:
/// ties across kernels); random requests (sometimes too large for the first steps: the
/// fallback), thresholds, windows and delays.
pub fn random_scenario(rng: &mut impl rand::Rng, k: u8, sms: usize) -> Scenario {
    let window: u16 = if rng.gen_range(0..8) == 0 { rng.gen_range(1..=5000) } else { rng.gen_range(1..=120) };
    let classes: Vec<u8> = (0..k).map(|_| rng.gen_range(0..5)).collect();
    let sat: Vec<u8> = (0..k).map(|_| rng.gen_range(1..=8)).collect();
    let noise: Vec<u64> = (0..k).map(|_| rng.gen()).collect();
    // Kernel 1 copies kernel 0's curve in half the scenarios (cross-kernel ties).
    let twin = k >= 2 && rng.gen_range(0..2) == 0;
    let stall_free: Vec<bool> = (0..k).map(|kk| twin && kk < 2 || rng.gen_range(0..3) == 0).collect();
    let curve = |kk: usize, j: u8| -> u32 {
        let kk = if twin && kk == 1 { 0 } else { kk.min(k as usize - 1) };
        let j = j.min(NMAX as u8);
        let top = 4 * window as u64 - 1;
        let v = match classes[kk] {
            0 => top * j as u64 / NMAX as u64,
            1 => top * j.min(sat[kk]) as u64 / 8,
            2 => top * (if j <= sat[kk] { j as u64 } else { (2 * sat[kk] as u64).saturating_sub(j as u64).max(1) }) / 16,
            3 => top / 2,
            _ => noise[kk].wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(j as u32 * 7) % (top + 1),
        };
        v as u32
    };
    let rounds = (0..rng.gen_range(1..=3))
        .map(|r| {
            // Each kernel's group of SMs runs rising counts from a random start (the layout of
            // the profiling rounds), with some SMs idle or on a random (kernel, count).
            let group = (sms / k as usize).max(1);
            let base: Vec<u8> = (0..k).map(|_| if rng.gen_range(0..4) == 0 { rng.gen_range(0..=(NMAX - group) as u8) } else { (r * group).min(NMAX - 1) as u8 }).collect();
            let map: Vec<(u8, u8)> = (0..sms)
                .map(|s| match rng.gen_range(0..12) {
                    0 => (0, 0),
                    1 => (rng.gen_range(0..k), rng.gen_range(1..=NMAX as u8)),
                    // (a kernel past K, or a count past NMAX: the unit ignores the SM)
                    2 if rng.gen_range(0..3) == 0 => if k < 4 && rng.gen() { (k, rng.gen_range(1..=NMAX as u8)) } else { (rng.gen_range(0..k), rng.gen_range(NMAX as u8 + 1..32)) },
                    _ => {
                        let kk = ((s / group) as u8).min(k - 1);
                        (kk, (base[kk as usize] + (s % group) as u8 + 1).min(NMAX as u8))
                    }
                })
                .collect();
            let insts = map.iter().map(|&(kk, j)| if j == 0 { rng.gen() } else { curve(kk as usize, j) }).collect();
            let stalls = map.iter().map(|&(kk, _)| if stall_free[(kk as usize).min(k as usize - 1)] { 0 } else { rng.gen_range(0..=window as u32) }).collect();
            Round { map, insts, stalls }
        })
        .collect();
    let total = if rng.gen_range(0..2) == 0 { [8, 1536, 32768, 49152] } else { [rng.gen_range(4..=32), 2048, 65536, 98304] };
    let req = (0..k)
        .map(|_| {
            let threads = 32 * rng.gen_range(1..=8u32);
            [1, threads, threads * rng.gen_range(4..=32u32), 256 * rng.gen_range(0..=48u32)]
        })
        .collect();
    let pct = if rng.gen_range(0..4) == 0 { rng.gen() } else { 120 };
    Scenario { kernels: k, window, pct, delay: rng.gen_range(0..=600), total, req, rounds }
}
