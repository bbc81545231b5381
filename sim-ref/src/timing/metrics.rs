//! Multiprogram metrics (Eyerman & Eeckhout, IEEE Micro 28(3), 2008; the thesis's §5.3.1;
//! `docs/timing.md`, Metrics):
//! NTT_i = T_shared_i / T_alone_i, ANTT = mean NTT, STP = sum of T_alone_i / T_shared_i,
//! fairness = min over i, j of progress_i / progress_j with progress_i = T_alone_i / T_shared_i.
//! T is a process's turnaround: from its arrival to the end of its last launch (in a workload
//! that replays its processes, `min_runs`, the mean over its completed runs; with an
//! instruction target, from its arrival to its halt); T_alone comes from running the process
//! by itself on the same GPU (once, or to the same target).

use super::gpu::RunResult;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct ProcMetrics {
    pub name: String,
    pub t_shared: u64,
    pub t_alone: u64,
    pub ntt: f64,
    /// Normalised progress T_alone / T_shared.
    pub progress: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Metrics {
    pub processes: Vec<ProcMetrics>,
    pub antt: f64,
    pub stp: f64,
    pub fairness: f64,
}

/// Metrics of a shared run given each process's alone run (in the same order).
pub fn metrics(shared: &RunResult, alone: &[RunResult]) -> Metrics {
    let processes: Vec<ProcMetrics> = shared
        .processes
        .iter()
        .zip(alone)
        .map(|(p, a)| {
            let t_alone = a.processes[0].turnaround.max(1);
            let t_shared = p.turnaround.max(1);
            ProcMetrics {
                name: p.name.clone(),
                t_shared,
                t_alone,
                ntt: t_shared as f64 / t_alone as f64,
                progress: t_alone as f64 / t_shared as f64,
            }
        })
        .collect();
    let n = processes.len().max(1) as f64;
    let antt = processes.iter().map(|p| p.ntt).sum::<f64>() / n;
    let stp = processes.iter().map(|p| p.progress).sum();
    let max = processes.iter().map(|p| p.progress).fold(0.0, f64::max);
    let min = processes.iter().map(|p| p.progress).fold(f64::INFINITY, f64::min);
    let fairness = if max > 0.0 { min / max } else { 0.0 };
    Metrics { processes, antt, stp, fairness }
}
