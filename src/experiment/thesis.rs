//! `mpgpu experiment thesis`: the scheduling framework's Chapter 5 results (Tanasić 2016,
//! §5.3.3 and §5.3.4) on the thesis's random multiprogrammed workloads (§5.3.1, `mpgpu
//! mixes`): preemptive priority (Fig. 5.4, Fig. 5.5a) and Equal Spatial Sharing against FCFS
//! (Figs. 5.6 to 5.8), on `k20c`.

use super::{mean, ratio_verdict, share_verdict, Claim, Ctx, Experiment, Report, Verdict};
use crate::par::Progress;
use anyhow::{anyhow, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::library::{find, PARBOIL};
use mpgpu_ref::mixgen::{mix, rounds_of, sizes, MixParams, COUNTS};
use mpgpu_ref::timing::metrics::{metrics, Metrics};
use mpgpu_ref::timing::RunResult;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::{ProcessSpec, Workload};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

pub const EXPERIMENT: Experiment = Experiment {
    name: "thesis",
    paper: "Tanasić, multiprogrammed GPUs (thesis, 2016), Chapter 5",
    page: "thesis",
    what: "preemptive priority (Fig. 5.4, 5.5a) and Equal Spatial Sharing against FCFS (Figs. 5.6-5.8) on random 2-8 process mixes",
    points,
    run,
};

/// The configuration the thesis measured on (a K20c, Table 5.1).
const CONFIG: &str = "k20c";
/// Workloads per process count at full scale.
const PER_COUNT: u64 = 5;
/// The mixes' seed.
const SEED: u64 = 1;
/// ANTT at least this much lower than FCFS's counts as a workload that improves (Fig. 5.7's
/// "improve significantly").
const IMPROVES: f64 = 1.10;

/// The scale: process counts, workloads per count and the mixes' parameters.
struct Scale {
    counts: Vec<usize>,
    per_count: u64,
    params: MixParams,
}

fn scale(quick: bool) -> Scale {
    if quick {
        Scale { counts: vec![2, 4], per_count: 1, params: MixParams { rounds: 1, min_runs: 2, priority: false } }
    } else {
        Scale { counts: COUNTS.to_vec(), per_count: PER_COUNT, params: MixParams::default() }
    }
}

/// The shared runs of a plain mix (sharing) and of its priority twin (the same draws, one
/// process at priority 1 and run once): FCFS, which ignores priorities, is the twin's baseline.
const SHARING: [(Policy, Mechanism); 3] = [(Policy::Fcfs, Mechanism::ContextSwitch), (Policy::Equal, Mechanism::ContextSwitch), (Policy::Equal, Mechanism::Drain)];
const PRIORITY: [(Policy, Mechanism); 4] = [(Policy::Fcfs, Mechanism::ContextSwitch), (Policy::Npq, Mechanism::ContextSwitch), (Policy::PpqExclusive, Mechanism::ContextSwitch), (Policy::PpqExclusive, Mechanism::Drain)];

/// The shared runs of every mix, in order: (on the priority twin, policy, mechanism).
fn mix_runs() -> impl Iterator<Item = (bool, Policy, Mechanism)> {
    SHARING.iter().map(|&(p, k)| (false, p, k)).chain(PRIORITY.iter().map(|&(p, k)| (true, p, k)))
}
/// The priority policies set against FCFS.
const PRIORITIES: [(Policy, Mechanism); 3] = [(Policy::Npq, Mechanism::ContextSwitch), (Policy::PpqExclusive, Mechanism::ContextSwitch), (Policy::PpqExclusive, Mechanism::Drain)];


/// A mix: its process count, index, the plain workload and its priority twin.
struct Mix {
    n: usize,
    index: u64,
    plain: Workload,
    prio: Workload,
}

fn mixes(quick: bool) -> Result<(GpuConfig, Scale, Vec<Mix>)> {
    let cfg = GpuConfig::from_arg(CONFIG).map_err(|e| anyhow!("{e}"))?;
    let s = scale(quick);
    // (quick: each application at the larger of its test sizes, one round of blocks or less)
    let sz = if quick {
        PARBOIL
            .iter()
            .map(|&n| {
                let b = find(n).ok_or_else(|| anyhow!("no application `{n}`"))?;
                let size = b.test_sizes[1];
                Ok((n, size, rounds_of(&b, &cfg, size).map_err(|e| anyhow!(e))?))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        sizes(&cfg, s.params.rounds).map_err(|e| anyhow!(e))?
    };
    let mut v = Vec::new();
    for &n in &s.counts {
        for i in 0..s.per_count {
            let plain = mix(&cfg.name, &sz, n, SEED, i, &s.params).map_err(|e| anyhow!(e))?;
            let prio = mix(&cfg.name, &sz, n, SEED, i, &MixParams { priority: true, ..s.params }).map_err(|e| anyhow!(e))?;
            v.push(Mix { n, index: i, plain, prio });
        }
    }
    Ok((cfg, s, v))
}

/// A simulation: a process alone, or a mix (plain or its priority twin) under a policy.
enum Point<'a> {
    Alone(&'a ProcessSpec),
    Shared(&'a Mix, bool, Policy, Mechanism),
}

/// A process's alone run depends on what it runs, not on its name, priority or replaying (an
/// alone run is one run).
fn alone_key(p: &ProcessSpec) -> String {
    format!("{:?}", ProcessSpec { name: String::new(), priority: 0, replay: true, ..p.clone() })
}

fn plan(ms: &[Mix]) -> Vec<Point<'_>> {
    let mut seen = std::collections::HashSet::new();
    let mut v = Vec::new();
    for m in ms {
        for p in &m.plain.processes {
            if seen.insert(alone_key(p)) {
                v.push(Point::Alone(p));
            }
        }
    }
    for m in ms {
        v.extend(mix_runs().map(|(prio, p, k)| Point::Shared(m, prio, p, k)));
    }
    v
}

fn points(quick: bool) -> Result<usize> {
    let (_, _, ms) = mixes(quick)?;
    Ok(plan(&ms).len())
}

/// A table cell: `x` to `places` decimals, or a dash where no mix gave the measure.
fn cell(x: f64, places: usize) -> String {
    if x.is_finite() {
        format!("{x:.places$}")
    } else {
        "–".into()
    }
}

/// A share as a table cell: `0.25` as `25 %`, or a dash where no mix gave it.
fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.0} %", 100.0 * x)
    } else {
        cell(x, 0)
    }
}

/// Whether a run's outputs verified: every process's, or, in a run stopped at the cycle limit,
/// those of the runs it completed (a process still running has not been checked whole).
fn verified(r: &RunResult, finished: bool) -> bool {
    r.processes.iter().all(|p| if finished { p.verified } else { p.failures.is_empty() })
}

/// One shared run with its metrics.
struct Done {
    run: RunResult,
    m: Metrics,
    /// Every process completed its runs before the cycle limit.
    finished: bool,
}

impl Done {
    /// Its statistics stand: every process completed a run (a run stopped at the cycle limit
    /// counts its completed runs only, as the thesis's statistics do, §5.3.1; a process that
    /// completed none has no turnaround to give).
    fn usable(&self) -> bool {
        self.finished || self.run.processes.iter().all(|p| !p.runs.is_empty())
    }

    /// Each process's completed runs, in the workload's order.
    fn runs(&self) -> String {
        self.run.processes.iter().map(|p| p.runs.len().to_string()).collect::<Vec<_>>().join(" ")
    }
}

fn run(ctx: &Ctx, pb: &Progress) -> Result<Report> {
    let (cfg, s, ms) = mixes(ctx.quick)?;
    let pts = plan(&ms);
    let limits = ctx.limits;
    let results = pb.map_points(
        &pts,
        |p| match p {
            Point::Alone(p) => format!("thesis: {} alone", p.name),
            Point::Shared(m, prio, p, k) => format!("thesis: mix {}-{}{} {} {}", m.n, m.index, if *prio { " priority" } else { "" }, p.name(), k.name()),
        },
        // (a shared run stopped at the cycle limit is a measurement, not a failure: FCFS can
        // starve a process for longer than any limit, the thesis's own finding, §5.3.4)
        |p| -> Result<(RunResult, bool, f64)> {
            let t = std::time::Instant::now();
            let (r, finished) = match p {
                Point::Alone(p) => (mpgpu_ref::timing::run_workload(&cfg, &Workload::alone(p), limits, &mut |_, _, _| {}).map_err(|e| anyhow!("{} alone: {e}", p.name))?, true),
                Point::Shared(m, prio, pol, k) => {
                    let w = if *prio { &m.prio } else { &m.plain };
                    mpgpu_ref::timing::gpu::run_workload_until(&cfg, w, Some((*pol, *k)), limits, &mut |_, _, _| {}).map_err(|e| anyhow!("mix {}-{} under {} ({}): {e}", m.n, m.index, pol.name(), k.name()))?
                }
            };
            Ok((r, finished, t.elapsed().as_secs_f64()))
        },
    );
    let results: Vec<(RunResult, bool, f64)> = results.into_iter().collect::<Result<_>>()?;
    let core_seconds = results.iter().map(|r| r.2).sum();
    let mut alone: BTreeMap<String, RunResult> = BTreeMap::new();
    let mut shared: BTreeMap<(usize, u64, bool, &'static str, &'static str), Done> = BTreeMap::new();
    let mut all_verified = true;
    for (p, (r, finished, _)) in pts.iter().zip(results) {
        all_verified &= verified(&r, finished);
        match p {
            Point::Alone(p) => {
                alone.insert(alone_key(p), r);
            }
            Point::Shared(m, prio, pol, k) => {
                let w = if *prio { &m.prio } else { &m.plain };
                let solo: Vec<RunResult> = w.processes.iter().map(|p| alone[&alone_key(p)].clone()).collect();
                let mm = metrics(&r, &solo);
                shared.insert((m.n, m.index, *prio, pol.name(), k.name()), Done { run: r, m: mm, finished });
            }
        }
    }
    let point = |m: &Mix, prio: bool, pol: Policy, k: Mechanism| &shared[&(m.n, m.index, prio, pol.name(), k.name())];
    // (a measure of a mix needs every run it reads usable; the mixes without are left out of
    // its mean, and listed)
    let get = |m: &Mix, prio: bool, pol: Policy, k: Mechanism| Some(point(m, prio, pol, k)).filter(|d| d.usable());
    // (the lead's turnaround, as the runs table gives it)
    let lead_turn = |d: &Done, m: &Mix| d.run.processes[m.index as usize % m.n].turnaround;
    // (the runs the measures read against, named once: the plain mix under FCFS, the priority
    // twin under FCFS and under NPQ, each with context switching)
    type Run = (bool, Policy, Mechanism);
    const PLAIN_FCFS: Run = (false, Policy::Fcfs, Mechanism::ContextSwitch);
    const TWIN_FCFS: Run = (true, Policy::Fcfs, Mechanism::ContextSwitch);
    const TWIN_NPQ: Run = (true, Policy::Npq, Mechanism::ContextSwitch);
    let at = |m: &Mix, (prio, pol, k): Run| get(m, prio, pol, k);
    // The runs, one row each.
    let mut csv = String::from("processes,index,applications,priority,lead,policy,preempt,cycles,finished,runs,antt,stp,fairness,lead_turnaround,preemptions,restores,verified\n");
    let mut unfinished = String::new();
    for m in &ms {
        let lead = m.index as usize % m.n;
        let names: Vec<&str> = m.plain.processes.iter().map(|p| p.name.as_str()).collect();
        for (prio, pol, k) in mix_runs() {
            let d = point(m, prio, pol, k);
            // (the metrics of a run without a usable result stay empty)
            let metric = |x: f64| if d.usable() { format!("{x:.4}") } else { String::new() };
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                m.n,
                m.index,
                names.join(" "),
                prio,
                names[lead],
                pol.name(),
                k.name(),
                d.run.cycles,
                d.finished,
                d.runs(),
                metric(d.m.antt),
                metric(d.m.stp),
                metric(d.m.fairness),
                // (a lead without a completed run has no turnaround)
                if d.run.processes[lead].runs.is_empty() { String::new() } else { d.run.processes[lead].turnaround.to_string() },
                d.run.preemptions,
                d.run.restores,
                verified(&d.run, d.finished)
            );
            if !d.finished {
                let _ = writeln!(
                    unfinished,
                    "| {}-{} | {}{} | {} ({}) | {} | {} |",
                    m.n,
                    m.index,
                    names.join(" "),
                    if prio { format!(" (lead {})", names[lead]) } else { String::new() },
                    pol.name(),
                    k.name(),
                    d.runs(),
                    if d.usable() { "completed runs only" } else { "left out" }
                );
            }
        }
    }
    // Per process count, the means over its workloads.
    struct Row {
        n: usize,
        /// The mixes of the count, and those whose seven runs are all usable.
        mixes: usize,
        whole: usize,
        hp: [f64; 3],
        stp_over: [f64; 2],
        ntt_gain: [f64; 2],
        improved: [f64; 2],
        fair_gain: [f64; 2],
        stp_loss: [f64; 2],
        drain_wins: f64,
        preempt: [f64; 2],
        /// The lead's NTT under FCFS and under PPQ (context switch, draining).
        lead_ntt: [f64; 3],
        /// PPQ's preemptions a run (context switch, draining).
        prio_preempt: [f64; 2],
        /// ANTT under FCFS and under Equal (context switch, draining).
        antt: [f64; 3],
    }
    let mut rows = Vec::new();
    for &n in &s.counts {
        let of: Vec<&Mix> = ms.iter().filter(|m| m.n == n).collect();
        // (the mean over the mixes whose runs the measure reads are usable)
        let per = |f: &dyn Fn(&Mix) -> Option<f64>| mean(&of.iter().filter_map(|m| f(m)).collect::<Vec<_>>());
        let fcfs = |m: &Mix| at(m, PLAIN_FCFS);
        let eq = |m: &Mix, k: Mechanism| get(m, false, Policy::Equal, k);
        let lead_t = |d: &Done, m: &Mix| lead_turn(d, m).max(1) as f64;
        let twin = |m: &Mix| at(m, TWIN_FCFS);
        let hp = PRIORITIES.map(|(pol, k)| per(&|m| Some(lead_t(twin(m)?, m) / lead_t(get(m, true, pol, k)?, m))));
        let npq = |m: &Mix| Some(at(m, TWIN_NPQ)?.m.stp);
        let ks = [Mechanism::ContextSwitch, Mechanism::Drain];
        let stp_over = ks.map(|k| per(&|m| Some(npq(m)? / get(m, true, Policy::PpqExclusive, k)?.m.stp)));
        // (Fig. 5.6: each process's NTT under FCFS over its NTT under Equal, averaged)
        let ntt_gain = ks.map(|k| per(&|m| Some(mean(&fcfs(m)?.m.processes.iter().zip(&eq(m, k)?.m.processes).map(|(f, e)| f.ntt / e.ntt).collect::<Vec<_>>()))));
        let improved = ks.map(|k| per(&|m| Some(f64::from(fcfs(m)?.m.antt / eq(m, k)?.m.antt >= IMPROVES))));
        let fair_gain = ks.map(|k| per(&|m| Some(eq(m, k)?.m.fairness / fcfs(m)?.m.fairness.max(1e-9))));
        let stp_loss = ks.map(|k| per(&|m| Some(fcfs(m)?.m.stp / eq(m, k)?.m.stp)));
        let drain_wins = per(&|m| Some(f64::from(eq(m, Mechanism::Drain)?.m.antt < eq(m, Mechanism::ContextSwitch)?.m.antt)));
        let preempt = ks.map(|k| per(&|m| Some(eq(m, k)?.run.preemptions as f64)));
        let lead_ntt_of = |d: Option<&Done>, m: &Mix| Some(d?.m.processes[m.index as usize % m.n].ntt);
        let lead_ntt = [per(&|m| lead_ntt_of(twin(m), m)), per(&|m| lead_ntt_of(get(m, true, Policy::PpqExclusive, Mechanism::ContextSwitch), m)), per(&|m| lead_ntt_of(get(m, true, Policy::PpqExclusive, Mechanism::Drain), m))];
        let prio_preempt = ks.map(|k| per(&|m| Some(get(m, true, Policy::PpqExclusive, k)?.run.preemptions as f64)));
        let antt = [per(&|m| Some(fcfs(m)?.m.antt)), per(&|m| Some(eq(m, Mechanism::ContextSwitch)?.m.antt)), per(&|m| Some(eq(m, Mechanism::Drain)?.m.antt))];
        // (the mixes every measure reads: all seven runs usable)
        let whole = of.iter().filter(|m| mix_runs().all(|(prio, p, k)| get(m, prio, p, k).is_some())).count();
        rows.push(Row { n, mixes: of.len(), whole, hp, stp_over, ntt_gain, improved, fair_gain, stp_loss, drain_wins, preempt, lead_ntt, prio_preempt, antt });
    }
    let mut sum = String::from("processes,hp_npq,hp_ppq_ctxsw,hp_ppq_drain,stp_overhead_ctxsw,stp_overhead_drain,ntt_gain_ctxsw,ntt_gain_drain,antt_improved_ctxsw,antt_improved_drain,fairness_gain_ctxsw,fairness_gain_drain,stp_loss_ctxsw,stp_loss_drain,drain_beats_ctxsw,preemptions_ctxsw,preemptions_drain\n");
    for r in &rows {
        let v = [r.hp[0], r.hp[1], r.hp[2], r.stp_over[0], r.stp_over[1], r.ntt_gain[0], r.ntt_gain[1], r.improved[0], r.improved[1], r.fair_gain[0], r.fair_gain[1], r.stp_loss[0], r.stp_loss[1], r.drain_wins, r.preempt[0], r.preempt[1]];
        let _ = writeln!(sum, "{},{}", r.n, v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(","));
    }
    let files_csv = [("thesis-runs.csv", csv), ("thesis-summary.csv", sum)];
    let mut files = Vec::new();
    for (f, text) in &files_csv {
        let p = ctx.out.join(f);
        std::fs::write(&p, text).map_err(|e| anyhow!("cannot write {}: {e}", p.display()))?;
        files.push(PathBuf::from(f));
    }
    // The claims: the paper's range from the fewest to the most processes against ours at the
    // same two ends.
    let (lo, hi) = (rows.first().ok_or_else(|| anyhow!("no process counts"))?, rows.last().unwrap());
    let (nlo, nhi) = (lo.n, hi.n);
    let times = |a: f64| if a.is_finite() { format!("{a:.2}x") } else { cell(a, 2) };
    let fmt = |a: f64, b: f64| format!("{} ({nlo}) → {} ({nhi})", times(a), times(b));
    // (why a count has no figure for a measure: of the runs the measure reads, those that
    // stopped at the cycle limit with a process that completed no run, by policy; empty when
    // every run it reads is usable)
    type Reads = [Run];
    let starved = |n: usize, reads: &Reads| -> Option<String> {
        let of: Vec<&Mix> = ms.iter().filter(|m| m.n == n).collect();
        let mut by: BTreeMap<String, (usize, std::collections::BTreeSet<&str>)> = BTreeMap::new();
        for m in &of {
            for &(prio, pol, k) in reads {
                let d = point(m, prio, pol, k);
                if d.usable() {
                    continue;
                }
                let w = if prio { &m.prio } else { &m.plain };
                let e = by.entry(format!("{}{} ({})", pol.name(), if prio { " on the priority twin" } else { "" }, k.name())).or_default();
                e.0 += 1;
                e.1.extend(d.run.processes.iter().zip(&w.processes).filter(|(p, _)| p.runs.is_empty()).map(|(_, s)| s.name.as_str()));
            }
        }
        if by.is_empty() {
            return None;
        }
        let each = by.iter().map(|(l, (c, apps))| format!("{l} in {c} of the {} mixes ({} completing none)", of.len(), apps.iter().copied().collect::<Vec<_>>().join(", "))).collect::<Vec<_>>().join("; ");
        Some(format!("no figure at {n} processes, where no mix has every run the measure reads usable: runs stopped at the cycle limit ({} cycles) with a process that completed no run under {each}", limits.max_cycles))
    };
    // (a cause for each end without a figure)
    let gaps = |ends: &[(usize, f64)], reads: &Reads| -> String { ends.iter().filter(|(_, x)| !x.is_finite()).filter_map(|&(n, _)| starved(n, reads)).map(|t| format!("; {t}")).collect() };
    // (the runs each measure reads: the plain mix under FCFS and Equal; the priority twin under
    // FCFS, NPQ and PPQ)
    let equal_reads = |k: Mechanism| [PLAIN_FCFS, (false, Policy::Equal, k)];
    let twin_reads = |pol: Policy, k: Mechanism| [TWIN_FCFS, (true, pol, k)];
    let npq_ppq_reads = |k: Mechanism| [TWIN_NPQ, (true, Policy::PpqExclusive, k)];
    let mut claims = Vec::new();
    let mut ratio = |what: &str, paper: (f64, f64), ours: (f64, f64), cause: String, reads: &Reads| {
        let v = ratio_verdict(paper, ours);
        let cause = cause + &gaps(&[(nlo, ours.0), (nhi, ours.1)], reads);
        claims.push(Claim { what: what.into(), paper: format!("{:.2}x (2) → {:.2}x (8)", paper.0, paper.1), ours: fmt(ours.0, ours.1), verdict: v, cause: if v == Verdict::Reproduced { String::new() } else { cause } });
    };
    // (the causes, in this run's figures: what FCFS leaves to win back, and what the policy
    // did)
    let both = |f: &dyn Fn(&Row) -> String| format!("{} → {} ({nlo} → {nhi} processes)", f(lo), f(hi));
    let lead = both(&|r| cell(r.lead_ntt[0], 2));
    let hp_cause = |i: usize| format!("FCFS leaves the lead an NTT of {lead} (what a priority can win back); under PPQ its NTT is {}; PPQ preempts {} times a run", both(&|r| cell(r.lead_ntt[i], 2)), both(&|r| cell(r.prio_preempt[i - 1], 1)));
    let room = both(&|r| cell(r.antt[0], 2));
    let eq_cause = |i: usize| format!("ANTT under FCFS (the slowdown Equal can share out) is {room}; under Equal it is {}; Equal preempts {} times a run", both(&|r| cell(r.antt[i + 1], 2)), both(&|r| cell(r.preempt[i], 1)));
    ratio("Fig. 5.4: high-priority turnaround gain, NPQ", (1.0, 1.6), (lo.hp[0], hi.hp[0]), format!("FCFS leaves the lead an NTT of {lead} (what a priority can win back); NPQ only reorders what is queued"), &twin_reads(Policy::Npq, Mechanism::ContextSwitch));
    ratio("Fig. 5.4: high-priority turnaround gain, PPQ, context switch", (2.0, 15.6), (lo.hp[1], hi.hp[1]), hp_cause(1), &twin_reads(Policy::PpqExclusive, Mechanism::ContextSwitch));
    ratio("Fig. 5.4: high-priority turnaround gain, PPQ, draining", (1.6, 6.0), (lo.hp[2], hi.hp[2]), hp_cause(2), &twin_reads(Policy::PpqExclusive, Mechanism::Drain));
    // (the overhead mix by mix at the two ends, with the lead's turnaround under NPQ, FCFS and
    // PPQ and PPQ's preemptions: a mean can hide one mix going the other way)
    let by_mix = |k: Mechanism| -> String {
        [nlo, nhi]
            .iter()
            .map(|&n| {
                let each: Vec<String> = ms
                    .iter()
                    .filter(|m| m.n == n)
                    .map(|m| {
                        let lead = &m.plain.processes[m.index as usize % m.n].name;
                        let fcfs = at(m, TWIN_FCFS).map_or("–".to_string(), |d| lead_turn(d, m).to_string());
                        match (at(m, TWIN_NPQ), get(m, true, Policy::PpqExclusive, k)) {
                            (Some(a), Some(b)) => format!("{:.2} (lead {lead}: {} cycles under NPQ, {fcfs} under FCFS, {} under PPQ, which preempts {} times)", a.m.stp / b.m.stp, lead_turn(a, m), lead_turn(b, m), b.run.preemptions),
                            _ => format!("– (lead {lead})"),
                        }
                    })
                    .collect();
                format!("at {n} processes {}", each.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    ratio("Fig. 5.5a: PPQ's STP overhead over NPQ, context switch", (1.08, 1.12), (lo.stp_over[0], hi.stp_over[0]), format!("PPQ gives the lead the whole GPU, preempting {} times a run; NPQ's STP over PPQ's mix by mix, {}", both(&|r| cell(r.prio_preempt[0], 1)), by_mix(Mechanism::ContextSwitch)), &npq_ppq_reads(Mechanism::ContextSwitch));
    ratio("Fig. 5.5a: PPQ's STP overhead over NPQ, draining", (1.09, 1.38), (lo.stp_over[1], hi.stp_over[1]), format!("PPQ gives the lead the whole GPU, preempting {} times a run; NPQ's STP over PPQ's mix by mix, {}", both(&|r| cell(r.prio_preempt[1], 1)), by_mix(Mechanism::Drain)), &npq_ppq_reads(Mechanism::Drain));
    ratio("Fig. 5.6: average NTT gain of Equal over FCFS, context switch", (1.5, 2.0), (lo.ntt_gain[0], hi.ntt_gain[0]), eq_cause(0), &equal_reads(Mechanism::ContextSwitch));
    ratio("Fig. 5.6: average NTT gain of Equal over FCFS, draining", (1.4, 1.65), (lo.ntt_gain[1], hi.ntt_gain[1]), eq_cause(1), &equal_reads(Mechanism::Drain));
    ratio("Fig. 5.8a: fairness gain of Equal over FCFS, context switch", (1.1, 3.35), (lo.fair_gain[0], hi.fair_gain[0]), eq_cause(0), &equal_reads(Mechanism::ContextSwitch));
    ratio("Fig. 5.8a: fairness gain of Equal over FCFS, draining", (1.05, 2.7), (lo.fair_gain[1], hi.fair_gain[1]), eq_cause(1), &equal_reads(Mechanism::Drain));
    ratio("Fig. 5.8b: STP loss of Equal against FCFS, context switch", (1.06, 1.34), (lo.stp_loss[0], hi.stp_loss[0]), eq_cause(0), &equal_reads(Mechanism::ContextSwitch));
    ratio("Fig. 5.8b: STP loss of Equal against FCFS, draining", (1.08, 1.5), (lo.stp_loss[1], hi.stp_loss[1]), eq_cause(1), &equal_reads(Mechanism::Drain));
    // Fig. 5.7: the share of workloads whose ANTT improves, at the counts the thesis names.
    let paper_share = |n: usize| match n {
        2 => 0.2,
        4 => 0.7,
        _ => 1.0,
    };
    let pp: Vec<f64> = rows.iter().map(|r| paper_share(r.n)).collect();
    for (i, k) in ["context switch", "draining"].iter().enumerate() {
        let ours: Vec<f64> = rows.iter().map(|r| r.improved[i]).collect();
        let v = share_verdict(&pp, &ours);
        let show = |v: &[f64]| rows.iter().zip(v).map(|(r, x)| format!("{} ({})", percent(*x), r.n)).collect::<Vec<_>>().join(", ");
        claims.push(Claim {
            what: format!("Fig. 5.7: workloads whose ANTT improves by {:.0} % or more under Equal, {k}", 100.0 * (IMPROVES - 1.0)),
            paper: show(&pp),
            ours: show(&ours),
            verdict: v,
            cause: if v == Verdict::Reproduced { String::new() } else { format!("{}; draining gives the lower ANTT in {}{}", eq_cause(i), rows.iter().map(|r| format!("{} of the {}-process workloads", percent(r.drain_wins), r.n)).collect::<Vec<_>>().join(", "), gaps(&rows.iter().map(|r| (r.n, r.improved[i])).collect::<Vec<_>>(), &equal_reads([Mechanism::ContextSwitch, Mechanism::Drain][i]))) },
        });
    }
    // The plots: each figure's measure over the process counts, the paper's two ends beside.
    let xs: Vec<f64> = rows.iter().map(|r| r.n as f64).collect();
    let ends = |a: f64, b: f64| rows.iter().map(|r| if r.n == 2 { Some(a) } else if r.n == 8 { Some(b) } else { None }).collect::<Vec<_>>();
    let ours = |f: &dyn Fn(&Row) -> f64| rows.iter().map(|r| Some(f(r))).collect::<Vec<_>>();
    let plots: Vec<(&str, &str, &str, Vec<(String, Vec<Option<f64>>)>)> = vec![
        (
            "fig5-4.svg",
            "High-priority turnaround gain over FCFS (Fig. 5.4)",
            "gain (x)",
            vec![
                ("NPQ".into(), ours(&|r| r.hp[0])),
                ("PPQ, context switch".into(), ours(&|r| r.hp[1])),
                ("PPQ, draining".into(), ours(&|r| r.hp[2])),
                ("paper: PPQ, context switch".into(), ends(2.0, 15.6)),
                ("paper: PPQ, draining".into(), ends(1.6, 6.0)),
            ],
        ),
        (
            "fig5-6.svg",
            "Average NTT gain of Equal over FCFS (Fig. 5.6)",
            "gain (x)",
            vec![("context switch".into(), ours(&|r| r.ntt_gain[0])), ("draining".into(), ours(&|r| r.ntt_gain[1])), ("paper: context switch".into(), ends(1.5, 2.0)), ("paper: draining".into(), ends(1.4, 1.65))],
        ),
        (
            "fig5-8.svg",
            "Fairness gain and STP loss of Equal against FCFS (Fig. 5.8)",
            "ratio (x)",
            vec![
                ("fairness gain, context switch".into(), ours(&|r| r.fair_gain[0])),
                ("fairness gain, draining".into(), ours(&|r| r.fair_gain[1])),
                ("STP loss, context switch".into(), ours(&|r| r.stp_loss[0])),
                ("STP loss, draining".into(), ours(&|r| r.stp_loss[1])),
                ("paper: fairness gain, context switch".into(), ends(1.1, 3.35)),
                ("paper: STP loss, context switch".into(), ends(1.06, 1.34)),
            ],
        ),
    ];
    if xs.len() >= 2 {
        for (f, title, ylabel, series) in &plots {
            let series: Vec<(String, Vec<Option<f64>>)> = series.iter().map(|(n, v)| (n.clone(), v.iter().map(|x| x.filter(|y| y.is_finite() && *y >= 0.0)).collect())).collect();
            crate::plot::lines(&ctx.out.join(f), title, "processes", ylabel, &xs, &series)?;
            files.push(PathBuf::from(f));
        }
    }
    // The page's tables.
    let mut body = String::from("## Per process count (means over the workloads)\n\n");
    body += "| processes | mixes (all runs usable) | hp gain NPQ | PPQ ctxsw | PPQ drain | STP overhead ctxsw | drain | NTT gain ctxsw | drain | fairness gain ctxsw | drain | STP loss ctxsw | drain | drain beats ctxsw |\n";
    body += "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for r in &rows {
        let _ = writeln!(
            body,
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.n,
            r.mixes,
            r.whole,
            cell(r.hp[0], 2),
            cell(r.hp[1], 2),
            cell(r.hp[2], 2),
            cell(r.stp_over[0], 3),
            cell(r.stp_over[1], 3),
            cell(r.ntt_gain[0], 2),
            cell(r.ntt_gain[1], 2),
            cell(r.fair_gain[0], 2),
            cell(r.fair_gain[1], 2),
            cell(r.stp_loss[0], 3),
            cell(r.stp_loss[1], 3),
            percent(r.drain_wins)
        );
    }
    body += "\nThe high-priority gain is the lead process's turnaround under FCFS (which ignores priorities) over its turnaround under the policy, both on the priority twin of the mix, where the lead runs once and the others are replayed; the STP overhead is NPQ's STP over PPQ's (both on the priority twin of each mix); the NTT gain is each process's NTT under FCFS over its NTT under Equal, averaged over the processes; the fairness gain and STP loss set Equal against FCFS. Metrics: docs/timing.md, \"Replayed workloads\" (each process's turnaround is the mean over its completed runs).\n\nOur processes are their GPU kernels only, where the thesis ran whole applications (CPU work and transfers between kernels): replayed as soon as it ended, the lead would leave the others, under PPQ exclusive, only the moments between its runs. So in the priority twin the lead runs once and the others are replayed until each has completed its runs (docs/results.md, \"The thesis's workloads\").\n";
    body += "\n## Runs stopped at the cycle limit\n\n";
    if unfinished.is_empty() {
        let _ = writeln!(body, "None: every run completed its workload within {} cycles (`--max-cycles`).", limits.max_cycles);
    } else {
        let _ = writeln!(
            body,
            "These runs reached the cycle limit ({} cycles, `--max-cycles`) before every process completed its runs. A run in which every process completed at least one run gives its statistics from the completed runs, as the thesis's do (§5.3.1); one in which some process completed none has no turnaround for it, and each measure leaves out the mixes whose runs it reads are not all usable (the table above counts the mixes every measure keeps). A process starved for that long is itself the finding that FCFS does not share the GPU (§5.3.4).\n\n| mix | applications | policy | completed runs (per application) | statistics |\n| --- | --- | --- | --- | --- |\n{unfinished}",
            limits.max_cycles
        );
    }
    let sizing = if ctx.quick {
        "every application at the larger of its test sizes".to_string()
    } else {
        format!("every application sized for {} rounds of blocks (`mpgpu mixes --config {CONFIG} --rounds {} --min-runs {} --per-count {}`)", s.params.rounds, s.params.rounds, s.params.min_runs, s.per_count)
    };
    let scale = format!(
        "{} ({} SMs); {} mixes of {} processes ({} each, seed {SEED}); {sizing}; each workload replayed until every process has completed {} runs; {} simulations",
        cfg.name,
        cfg.num_sms(),
        ms.len(),
        s.counts.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", "),
        s.per_count,
        s.params.min_runs,
        pts.len()
    );
    Ok(Report { scale, claims, body, files, points: pts.len(), core_seconds, verified: all_verified })
}
