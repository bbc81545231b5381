//! `mpgpu run`: a multiprogrammed workload on the cycle-level GPU model, with each process also
//! run alone for the metrics.

use crate::args::{MechanismArg, PolicyArg, SliceArgs, SteerArgs, VmArgs};
use crate::common::{load_workload, print_result, run_any, simulate_any};
use anyhow::{anyhow, bail, Context, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::metrics::metrics;
use mpgpu_ref::workload::Workload;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Workload TOML file (see workloads/); the embedded default when absent.
    workload: Option<PathBuf>,
    /// A preset name (see `mpgpu configs`) or a TOML file.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    /// Skip the alone runs (no NTT/ANTT/STP/fairness).
    #[arg(long)]
    no_alone: bool,
    #[command(flatten)]
    jobs: crate::par::JobsArgs,
    #[command(flatten)]
    slurm: crate::slurm::SlurmArgs,
    /// Schedule with the kernel scheduling framework under this policy (default: the baseline
    /// dispatcher, which lets kernels share SMs); with --slicing, kernels of one priority
    /// share the framework's SMs by the slicing policy's quotas.
    #[arg(long, value_enum)]
    policy: Option<PolicyArg>,
    /// Preemption mechanism of the framework (with --policy). Default: ctxsw, or drain under
    /// --alloc zorua or wlm (the only one they run with).
    #[arg(long, value_enum)]
    preempt: Option<MechanismArg>,
    #[command(flatten)]
    slice: SliceArgs,
    #[command(flatten)]
    steer: SteerArgs,
    #[command(flatten)]
    vm: VmArgs,
    /// Write each SM's resident and faulted warps over time (with --paging) to this CSV file.
    #[arg(long)]
    timeline: Option<PathBuf>,
}

pub fn run_cmd(a: RunArgs) -> Result<ExitCode> {
    let w = load_workload(&a.workload)?;
    let mut cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    a.vm.apply(&mut cfg)?;
    // (every output is checked before the run, so none is lost after it)
    if a.slice.ws.given() && a.slice.slicing.is_none() {
        bail!("the --ws-* flags are Warped-Slicer's parameters: they need --slicing");
    }
    if a.preempt.is_some() && a.policy.is_none() {
        bail!("--preempt chooses how the scheduling framework preempts: it needs --policy (the baseline dispatcher and --slicing never preempt)");
    }
    // (with --policy, inside the framework: an SM changes owner by draining)
    let steer = a.steer.choice(a.policy.is_some())?;
    if steer.is_some() && a.slice.slicing.is_some() {
        bail!("--steer gives kernels SMs of their own: it cannot go with --slicing, which shares SMs among them");
    }
    if a.timeline.is_some() && cfg.paging.link == mpgpu_ref::config::PagingLink::Off {
        bail!("--timeline needs demand paging (--paging nvlink or pcie)");
    }
    // (the outputs last, once every option is known good)
    if let Some(p) = &a.json {
        crate::checks::output_file(p, "--json")?;
    }
    if let Some(p) = &a.timeline {
        crate::checks::output_file(p, "--timeline")?;
    }
    let limits = a.limit.limits();
    let preempt = MechanismArg::or_default_for(a.preempt, &cfg);
    let sched = a.policy.map(|p| (p.into(), preempt.into()));
    let slicing = a.slice.slicing.map(|p| (p.into(), a.slice.ws.params()));
    println!("workload: {}", crate::checks::shown(&w.description));
    println!("config:   {} ({} SMs at {} MHz, {} GB/s)", cfg.name, cfg.num_sms(), cfg.core_clock_mhz, cfg.memory.dram_bandwidth_gbs);
    // The shared run and each process alone (for the metrics) on every core (`--jobs`): alone,
    // a process has the whole GPU whatever the policy.
    let solos: Vec<Workload> = if !a.no_alone && w.processes.len() > 1 { w.processes.iter().map(Workload::alone).collect() } else { Vec::new() };
    let runs: Vec<(&Workload, String)> = std::iter::once((&w, "shared".to_string())).chain(solos.iter().map(|s| (s, crate::checks::shown(&mpgpu_ref::text::clip(&s.processes[0].name, mpgpu_ref::text::QUOTE_CHARS)).into_owned()))).collect();
    // (a static steering policy decides from each process's isolated runs, made first)
    if let Some((s, _)) = steer {
        mpgpu_ref::timing::steer::check_policy(&cfg, s).map_err(|e| anyhow!("--steer: {e}"))?;
    }
    let offline = match steer {
        Some((s, _)) if s.is_static() => {
            let pb = crate::par::Progress::new("isolated runs", w.processes.len(), a.jobs.workers());
            let per = pb.map_points(&w.processes.iter().collect::<Vec<_>>(), |p| format!("{} alone", crate::checks::shown(&p.name)), |p| mpgpu_ref::timing::steer::offline(&cfg, p, limits).map_err(|e| anyhow!("{} alone: {e}", crate::checks::shown(&p.name))));
            pb.finish();
            let per = per.into_iter().collect::<Result<Vec<_>>>()?;
            let t = mpgpu_ref::timing::steer::offline_table(&w, &per).map_err(|e| anyhow!("{e}"))?;
            for (p, o) in w.processes.iter().zip(&per) {
                println!("isolated: {} {} (IPC {:.2} conventional, {:.2} on the big SMs, {:.2} on the small)", crate::checks::shown(&p.name), o.class.name(), o.base, o.big, o.small);
            }
            t
        }
        _ => Vec::new(),
    };
    let run_steered = |cfg: &GpuConfig, w: &Workload, s, p, limits, label: &str| run_steered(cfg, w, sched, s, p, &offline, limits, label);
    let (shared, secs, alone) = if runs.len() == 1 && a.slurm.slurm.is_none() && a.slurm.resume.is_none() {
        let (r, secs) = match steer {
            Some((s, p)) => run_steered(&cfg, &w, s, p, limits, "shared")?,
            None => simulate_any(&cfg, &w, sched, slicing, limits, "shared")?,
        };
        (r, secs, Vec::new())
    } else {
        let pb = crate::par::Progress::new("run", runs.len(), a.jobs.workers()).with_slurm(&a.slurm);
        let done = pb.map_points(
            &runs,
            |(_, label)| label.clone(),
            |(w, label)| match steer {
                Some((s, p)) => run_steered(&cfg, w, s, p, limits, label),
                None => run_any(&cfg, w, sched, slicing, limits, label, &mut |_, _, _| {}),
            },
        );
        pb.finish();
        let mut done = done.into_iter();
        let (shared, secs) = done.next().expect("the shared run")?;
        let alone = done.map(|r| r.map(|r| r.0)).collect::<Result<Vec<_>>>()?;
        (shared, secs, alone)
    };
    println!("blocks scheduled by {}", shared.dispatcher);
    print_slicing(&shared);
    print_steering(&shared);
    let mut alone = alone;
    if !a.no_alone && w.processes.len() == 1 {
        alone.push(shared.clone());
    }
    let m = (!alone.is_empty()).then(|| metrics(&shared, &alone));
    print_result(&shared, m.as_ref(), secs);
    if let Some(path) = &a.json {
        let j = serde_json::json!({ "workload": w.description, "run": shared, "metrics": m, "alone": alone });
        std::fs::write(path, serde_json::to_string_pretty(&j)?).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = &a.timeline {
        let tl = shared.timeline.as_ref().expect("demand paging keeps a timeline (checked before the run)");
        std::fs::write(path, timeline_csv(tl)).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let ok = shared.processes.iter().all(|p| p.verified);
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The per-SM timeline as CSV: one row per bin and SM, with the mean resident, faulted and
/// active (resident, not faulted) warps over the bin.
pub fn timeline_csv(tl: &[mpgpu_ref::timing::sm::Timeline]) -> String {
    let mut out = String::from("cycle,sm,resident,faulted,active\n");
    let bins = tl.iter().map(|t| t.bins.len()).max().unwrap_or(0);
    for b in 0..bins {
        for (sm, t) in tl.iter().enumerate() {
            let (r, f) = t.bins.get(b).copied().unwrap_or((0, 0));
            let w = t.width as f64;
            let (r, f) = (r as f64 / w, f as f64 / w);
            out += &format!("{},{sm},{r:.2},{f:.2},{:.2}\n", b as u64 * t.width, (r - f).max(0.0));
        }
    }
    out
}

/// `w` under HeteroCore's steering (a static policy deciding from `offline`; with `framework`,
/// as the scheduling framework's quota controller): the result and the wall-clock seconds.
#[allow(clippy::too_many_arguments)]
fn run_steered(
    cfg: &GpuConfig,
    w: &Workload,
    framework: Option<(mpgpu_ref::units::framework::Policy, mpgpu_ref::units::framework::Mechanism)>,
    s: mpgpu_ref::timing::steer::Steering,
    p: mpgpu_ref::timing::steer::SteerParams,
    offline: &[(String, mpgpu_ref::timing::steer::Offline)],
    limits: mpgpu_ref::timing::RunLimits,
    label: &str,
) -> Result<(mpgpu_ref::timing::RunResult, f64)> {
    let t = std::time::Instant::now();
    let r = mpgpu_ref::timing::steer::steered_gpu(cfg, w, s, p, offline, framework).and_then(|g| g.run_steered(limits, &mut |_, _, _| {})).map_err(|e| anyhow!("{label}: {e}"))?;
    Ok((r, t.elapsed().as_secs_f64()))
}

/// A run's steering: its layouts, profiling and decisions (under --steer).
pub fn print_steering(r: &mpgpu_ref::timing::gpu::RunResult) {
    if let Some(st) = &r.steering {
        println!(
            "  {} layouts, {} profiling phases ({} cycles); SMs changing owner: {} drained, {} context-switched ({} blocks saved, {} restored)",
            st.layouts, st.profiles, st.profile_cycles, st.drains, st.switches, st.saved_blocks, st.restored_blocks
        );
        for d in &st.decisions {
            // (a static policy's decision has no measurements)
            let k: Vec<String> = (0..d.launches.len())
                .map(|i| match (d.big_insts.get(i), d.small_insts.get(i), d.blocks.get(i)) {
                    (Some(b), Some(s), Some(c)) => format!("launch {}: {b} big / {s} small warp-insts, blocks/SM {c:?}{}", d.launches[i], if d.ended_in_warmup.get(i) == Some(&true) { ", ended a block in the warm-up" } else { "" }),
                    _ => format!("launch {}", d.launches[i]),
                })
                .collect();
            let to = if d.big.is_empty() { "each keeps its share of both kinds".to_string() } else { format!("big SMs to launches {:?}", d.big) };
            println!("  cycle {}: {} -> {to}", d.cycle, k.join("; "));
        }
    }
}

/// A run's slicing decisions, profile windows, ties and profiling rounds (under a slicing
/// policy), as `run` and `cosim` print them.
pub fn print_slicing(r: &mpgpu_ref::timing::gpu::RunResult) {
    if let Some(st) = &r.slicing {
        for d in &st.decisions {
            println!("  cycle {}: launches {:?} -> {}", d.cycle, d.launches, if d.spatial { "spatial".to_string() } else { format!("quotas {:?}", d.quota) });
        }
        for (at, v) in &st.samples {
            println!("  window ending at cycle {at}: (kernel, CTAs: warp-insts, memory stalls, resident) {}", v.iter().filter(|x| x.1 > 0).map(|x| format!("{}x{}: {} {} {}", x.0, x.1, x.2, x.3, x.4)).collect::<Vec<_>>().join(", "));
        }
        if !st.ties.is_empty() {
            println!("  ties at Select (lowest index wins) at cycles {:?}", st.ties);
        }
        if st.rounds > 0 {
            println!("  {} profiling rounds ({} unsettled), {} cycles from repartition to decision", st.rounds, st.unsettled, st.profile_cycles);
        }
    }
}
