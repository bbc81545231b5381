//! Helpers shared by the subcommands: loading a workload, running the timing model with a
//! progress bar, and printing a run's results.

use anyhow::{anyhow, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::run_workload_with;
use mpgpu_ref::timing::metrics::Metrics;
use mpgpu_ref::timing::{RunLimits, RunResult};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use std::path::PathBuf;
use std::time::Instant;

use crate::checks::shown;

/// The default `--max-cycles` of `run`, `cosim` and `sweep`: a run still going at this GPU
/// cycle stops with a report of where every unfinished launch's warps are (kernel, block, PC).
/// About six minutes of simulation at the model's speed, far above any shipped workload.
pub(crate) const DEFAULT_MAX_CYCLES: u64 = 50_000_000;

/// Run limits with `--max-cycles` as given.
pub(crate) fn limits(max_cycles: u64) -> RunLimits {
    RunLimits { max_cycles, ..RunLimits::default() }
}

/// The workload in `path`, or the embedded default when there is none.
pub(crate) fn load_workload(path: &Option<PathBuf>) -> Result<Workload> {
    match path {
        Some(p) => Workload::load(p).map_err(|e| anyhow!("{e}")),
        None => Ok(Workload::default_workload()),
    }
}

pub(crate) fn progress_bar(label: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(1);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} programs, {msg} ({elapsed})")
            .unwrap()
            .progress_chars("=> "),
    );
    pb.set_prefix(label.to_string());
    pb
}

/// Run `w` on the timing model with the baseline dispatcher; the result and the wall-clock seconds.
pub(crate) fn simulate(cfg: &GpuConfig, w: &Workload, limits: RunLimits, label: &str) -> Result<(RunResult, f64)> {
    simulate_with(cfg, w, None, limits, label)
}

/// Run `w` on the timing model, under the scheduling framework when `sched` is given, showing
/// a progress bar labelled `label`; the result and the wall-clock seconds.
pub(crate) fn simulate_with(cfg: &GpuConfig, w: &Workload, sched: Option<(Policy, Mechanism)>, limits: RunLimits, label: &str) -> Result<(RunResult, f64)> {
    simulate_any(cfg, w, sched, None, limits, label)
}

/// An intra-SM slicing policy with its parameters, or none.
pub(crate) type SliceChoice = Option<(mpgpu_ref::timing::slicer::Slicing, mpgpu_ref::timing::slicer::SliceParams)>;

/// [`simulate_with`], or under an intra-SM slicing policy when `slicing` names one.
pub(crate) fn simulate_any(cfg: &GpuConfig, w: &Workload, sched: Option<(Policy, Mechanism)>, slicing: SliceChoice, limits: RunLimits, label: &str) -> Result<(RunResult, f64)> {
    let pb = progress_bar(label);
    let r = run_any(cfg, w, sched, slicing, limits, label, &mut |cycle, done, total| {
        pb.set_length(total);
        pb.set_position(done);
        pb.set_message(format!("cycle {cycle}"));
    });
    pb.finish_and_clear();
    r
}

/// [`simulate_any`] reporting its progress to `progress` (cycle, programs done, programs)
/// rather than to a bar of its own.
pub(crate) fn run_any(
    cfg: &GpuConfig,
    w: &Workload,
    sched: Option<(Policy, Mechanism)>,
    slicing: SliceChoice,
    limits: RunLimits,
    label: &str,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<(RunResult, f64)> {
    let t = Instant::now();
    let r = match slicing {
        Some((p, params)) => mpgpu_ref::timing::slicer::run_workload_sliced_with(cfg, w, sched, p, params, limits, progress),
        None => run_workload_with(cfg, w, sched, limits, progress),
    };
    let secs = t.elapsed().as_secs_f64();
    r.map(|r| (r, secs)).map_err(|e| anyhow!("{label}: {e}"))
}

/// Print a run: totals, simulation speed, per-process turnaround (with alone time and NTT when
/// `m` is given), ANTT/STP/fairness, the scheduler stall breakdown and every launch.
pub(crate) fn print_result(r: &RunResult, m: Option<&Metrics>, secs: f64) {
    println!(
        "cycles {}  warp-insts {}  thread-insts {}  IPC {:.2}  occupancy {:.1}%  DRAM {:.1} B/cycle ({:.1}% of peak)  L1 hit {:.1}%  L2 hit {:.1}%",
        r.cycles,
        r.warp_insts,
        r.thread_insts,
        r.ipc,
        100.0 * r.occupancy,
        r.dram_bytes_per_cycle,
        100.0 * r.dram_utilisation,
        100.0 * r.sm.l1_hits as f64 / (r.sm.l1_hits + r.sm.l1_misses).max(1) as f64,
        100.0 * r.mem.l2_hits as f64 / (r.mem.l2_hits + r.mem.l2_misses).max(1) as f64
    );
    println!(
        "simulated in {:.2} s: {:.2} M warp-inst/s, {:.0} K cycles/s ({:.1}% of cycles stepped, SMs awake {:.1}% of SM-cycles)",
        secs,
        r.warp_insts as f64 / secs / 1e6,
        r.cycles as f64 / secs / 1e3,
        100.0 * r.stepped_cycles as f64 / r.cycles.max(1) as f64,
        100.0 * r.sm.awake_cycles as f64 / (r.cycles.max(1) as f64 * r.sm_count as f64)
    );
    let v = &r.vm;
    if v.translations > 0 {
        let l1 = v.l1_tlb_hits + v.l1_tlb_joins;
        println!(
            "translations {}  L1 TLB hit {:.1}%  L2 TLB hit {:.1}% of L1 misses  walks {} (queued {:.0} cycles each)",
            v.translations,
            100.0 * l1 as f64 / v.translations as f64,
            100.0 * (v.l2_tlb_hits + v.l2_tlb_joins) as f64 / v.l1_tlb_misses.max(1) as f64,
            v.walks,
            v.walk_queue_cycles as f64 / v.walks.max(1) as f64
        );
    }
    if r.paging.link != mpgpu_ref::config::PagingLink::Off {
        println!(
            "paging {:?}, {} KB units: {} faulting walks, {} migrations ({} with data, {} pages), fault latency mean {:.0} max {} cycles, handler busy {:.1}%",
            r.paging.link,
            r.paging.migration_bytes / 1024,
            v.faults,
            v.migrations,
            v.data_migrations,
            v.migrated_pages,
            v.fault_latency_cycles as f64 / v.migrations.max(1) as f64,
            v.max_fault_latency,
            100.0 * v.handler_busy_cycles as f64 / r.cycles.max(1) as f64
        );
        if v.local_allocations > 0 {
            println!("local fault handling: {} units with no data allocated on the GPU", v.local_allocations);
        }
    }
    if r.paging.link != mpgpu_ref::config::PagingLink::Off || r.sm.faulted_insts > 0 {
        println!(
            "faults under {}: {} faulted instructions ({} squashed and replayed), {} faulted warp-cycles ({:.1}% of resident warp-cycles)",
            r.faults.name(),
            r.sm.faulted_insts,
            r.sm.squashed,
            r.sm.faulted_warp_cycles,
            100.0 * r.sm.faulted_warp_cycles as f64 / r.sm.warp_cycles.max(1) as f64
        );
        if r.faults.replays() {
            println!("replay queue: {} instructions replayed; issue refused {} times for a full replay queue, {} for a full log partition; {} queued instructions saved with contexts", r.sm.replayed, r.sm.rq_full, r.sm.log_full, r.sm.saved_queued);
            if r.faults == mpgpu_ref::config::FaultScheme::Ol {
                println!(
                    "operand log data array: {} entries written, {} read ({} for context saves, the rest for replays); {} of the full-log refusals for a full write queue; {} issue attempts of replays waiting for their entries",
                    r.sm.ol_writes, r.sm.ol_reads, r.sm.ol_save_reads, r.sm.ol_queue_full, r.sm.ol_replay_wait
                );
            }
            if r.sm.switched_out > 0 {
                println!("thread-block switching on faults: {} blocks switched out, {} back in", r.sm.switched_out, r.sm.switched_in);
            }
        }
    }
    println!("{:<14} {:>10} {:>12} {:>12} {:>7} {:>9}  {}", "process", "arrival", "turnaround", "alone", "NTT", "launches", "output");
    for (i, p) in r.processes.iter().enumerate() {
        let (alone, ntt) = m.map_or((String::from("-"), String::from("-")), |m| (m.processes[i].t_alone.to_string(), format!("{:.3}", m.processes[i].ntt)));
        let out = if p.halted && p.runs.is_empty() && p.verified {
            "- (halted before a run completed: nothing to verify)".to_string()
        } else if p.verified {
            "PASS".to_string()
        } else {
            format!("FAIL {}", p.failures.join("; "))
        };
        println!("{:<14} {:>10} {:>12} {:>12} {:>7} {:>9}  {}", shown(&p.name), p.arrival, p.turnaround, alone, ntt, p.launches, out);
    }
    if r.processes.iter().any(|p| p.halted) {
        let h: Vec<String> = r.processes.iter().filter(|p| p.halted).map(|p| format!("{} at cycle {} ({} warp-instructions, {} runs completed, {} blocks dropped)", shown(&p.name), p.end, p.insts, p.runs.len(), p.dropped)).collect();
        println!("halted at their instruction targets (turnaround: to the halt): {}", h.join(", "));
    } else if r.processes.iter().any(|p| p.runs.len() > 1) {
        let runs: Vec<String> = r.processes.iter().map(|p| format!("{} {}", shown(&p.name), p.runs.len())).collect();
        println!("replayed (turnaround: the mean of the completed runs): completed runs {}", runs.join(", "));
    }
    if let Some(m) = m {
        println!("ANTT {:.3}  STP {:.3}  fairness {:.3}", m.antt, m.stp, m.fairness);
    }
    let total: u64 = r.stalls.iter().map(|s| s.1).sum::<u64>().max(1);
    let parts: Vec<String> = r.stalls.iter().map(|(n, v)| format!("{n} {:.1}%", 100.0 * *v as f64 / total as f64)).collect();
    println!("scheduler cycles: {}", parts.join(", "));
    if r.sm.admit_packs > 0 {
        println!("admission: {} blocks placed after packing the resident blocks' ranges ({} KB moved, not charged time; docs/unified.md)", r.sm.admit_packs, r.sm.admit_moved.div_ceil(1024));
    }
    println!("{:<14} {:<14} {:>7} {:>10} {:>10} {:>10}", "launch of", "kernel", "blocks", "ready", "start", "end");
    for l in &r.launches {
        println!("{:<14} {:<14} {:>7} {:>10} {:>10} {:>10}", shown(&l.process), shown(&l.kernel), l.blocks, l.ready, l.start, l.end);
    }
}
