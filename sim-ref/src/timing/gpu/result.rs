//! What a run produced: its results ([`RunResult`], per process and per launch), the text
//! report, and the SMs' timelines.

use super::*;

/// Results of one run.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct RunResult {
    pub config: String,
    pub sm_count: u32,
    pub dispatcher: String,
    pub cycles: u64,
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub processes: Vec<ProcResult>,
    pub launches: Vec<LaunchResult>,
    pub sm: SmStats,
    pub mem: MemStats,
    /// Address translation and demand paging.
    pub vm: crate::timing::mmu::MmuStats,
    pub paging: crate::config::PagingConfig,
    pub faults: crate::config::FaultScheme,
    /// Per SM, resident and faulted warp-cycles over time (with demand paging).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<crate::timing::sm::Timeline>>,
    /// Warp-instructions per cycle, whole GPU.
    pub ipc: f64,
    /// Mean resident warps over warp slots, over all SMs and cycles.
    pub occupancy: f64,
    /// DRAM bytes per cycle used, and as a fraction of the peak.
    pub dram_bytes_per_cycle: f64,
    pub dram_utilisation: f64,
    /// Scheduler-cycles by outcome (issued, idle, memory, dependency, barrier, unit, fetch).
    pub stalls: Vec<(String, u64)>,
    /// Cycles the simulation loop stepped (the others were skipped: nothing could happen).
    pub stepped_cycles: u64,
    /// SMs the scheduling framework preempted and blocks it restored (0 without it).
    pub preemptions: u64,
    pub restores: u64,
    /// Under Zorua with the framework: cycles in which some SM reported no room
    /// (`fw::In::full`), and blocks issued that waited in their SM's inbox for room.
    pub fw_full_cycles: u64,
    pub fw_inbox_blocks: u64,
    /// Cycles the framework's clock ran (every cycle without gating; 0 without the framework).
    pub fw_clocked_cycles: u64,
    /// Zorua's counters, summed over the SMs (`alloc = "zorua"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zorua: Option<crate::timing::sm::ZoruaStats>,
    /// Intra-SM slicing (Warped-Slicer and the policies it is compared with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slicing: Option<SliceStats>,
    /// HeteroCore's steering of kernels to SMs (`docs/heterocore.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steering: Option<crate::timing::steer::SteerStats>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ProcResult {
    pub name: String,
    pub arrival: u64,
    /// The end of its last completed run (of the run when it did not complete one; with an
    /// instruction target, its halt).
    pub end: u64,
    /// The mean of its completed runs' turnarounds, to the nearest cycle (from its arrival
    /// to the end of its run when it runs once; to the run's end when it did not complete;
    /// with an instruction target, from its arrival to its halt).
    pub turnaround: u64,
    /// Each completed run's turnaround (the first from its arrival, each replay from the end
    /// of the run before): one entry unless the workload replays (`min_runs`).
    pub runs: Vec<u64>,
    pub launches: usize,
    /// Warp-instructions it issued (at its halt, when it has an instruction target).
    #[serde(default)]
    pub insts: u64,
    /// It reached its instruction target and halted (`ProcessSpec::insts`).
    #[serde(default)]
    pub halted: bool,
    /// Blocks of its launches that ended without running, issued after its halt.
    #[serde(default)]
    pub dropped: u64,
    pub verified: bool,
    pub failures: Vec<String>,
}

#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct LaunchResult {
    pub process: String,
    pub kernel: String,
    pub blocks: u64,
    pub ready: u64,
    pub start: u64,
    pub end: u64,
    pub turnaround: u64,
}

impl Gpu {
    /// A human-readable account of where every process and launch stands.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for p in &self.procs {
            let running = p.program.is_some() || p.next_job < p.jobs.len();
            let state = match (p.started, p.end) {
                (false, _) => format!("arrives at cycle {}", p.arrival),
                (true, Some(e)) if p.halted.is_some() => format!("halted at its instruction target at cycle {e}"),
                (true, Some(e)) if !running => format!("finished at cycle {e}"),
                (true, _) => format!("running, program {} of {}{}", p.next_job, p.jobs.len(), if p.runs.is_empty() { String::new() } else { format!(" of run {}", p.runs.len() + 1) }),
            };
            s += &format!("  process `{}`: {state}\n", p.name);
        }
        for l in &self.launches {
            if l.end_at.is_none() {
                s += &format!(
                    "  launch of `{}` (process `{}`): {} of {} blocks issued, {} done\n",
                    l.info.launch.kernel.name, self.procs[l.process].name, l.next_block, l.blocks, l.done_blocks
                );
            }
        }
        let resident: u32 = self.sms.iter().map(|s| s.resident_warps()).sum();
        s += &format!("  resident warps {resident}, {}\n", if self.mem.busy() { "memory requests in flight" } else { "no memory request in flight" });
        for sm in &self.sms {
            if let Some(r) = sm.stuck_report(self.now) {
                s += &format!("  SM {}: {r}\n", sm.id);
            }
        }
        s
    }

    /// Every SM's timeline, in bins of one width (with demand paging).
    pub fn timeline(&self) -> Option<Vec<crate::timing::sm::Timeline>> {
        let mut tl = self.sms.iter().map(|s| s.timeline.clone()).collect::<Option<Vec<_>>>().filter(|v| !v.is_empty())?;
        let w = tl.iter().map(|t| t.width).max().unwrap_or(1);
        for t in &mut tl {
            t.widen(w);
        }
        Some(tl)
    }

    /// The results of a finished run.
    pub fn result(&self) -> RunResult {
        let mut sm = SmStats::default();
        for s in &self.sms {
            sm.warp_insts += s.stats.warp_insts;
            sm.thread_insts += s.stats.thread_insts;
            sm.warp_cycles += s.stats.warp_cycles;
            sm.barrier_warp_cycles += s.stats.barrier_warp_cycles;
            sm.blocks_done += s.stats.blocks_done;
            sm.l1_hits += s.stats.l1_hits;
            sm.l1_misses += s.stats.l1_misses;
            sm.awake_cycles += s.stats.awake_cycles;
            sm.max_kernels_resident = sm.max_kernels_resident.max(s.stats.max_kernels_resident);
            sm.shared_conflict_cycles += s.stats.shared_conflict_cycles;
            sm.war_overwrites += s.stats.war_overwrites;
            sm.faulted_insts += s.stats.faulted_insts;
            sm.squashed += s.stats.squashed;
            sm.replayed += s.stats.replayed;
            sm.rq_full += s.stats.rq_full;
            sm.log_full += s.stats.log_full;
            sm.ol_writes += s.stats.ol_writes;
            sm.ol_reads += s.stats.ol_reads;
            sm.ol_save_reads += s.stats.ol_save_reads;
            sm.ol_queue_full += s.stats.ol_queue_full;
            sm.ol_replay_wait += s.stats.ol_replay_wait;
            sm.saved_queued += s.stats.saved_queued;
            sm.switched_out += s.stats.switched_out;
            sm.switched_in += s.stats.switched_in;
            sm.group_switches += s.stats.group_switches;
            sm.admit_packs += s.stats.admit_packs;
            sm.admit_moved += s.stats.admit_moved;
            sm.faulted_warp_cycles += s.stats.faulted_warp_cycles;
            for i in 0..7 {
                sm.stalls[i] += s.stats.stalls[i];
            }
        }
        let cycles = self.now.max(1);
        let slots: u64 = self.sms.iter().map(|s| s.config().warps as u64).sum();
        let dram = self.mem.stats.dram_bytes as f64 / cycles as f64;
        RunResult {
            config: self.cfg.name.clone(),
            sm_count: self.sms.len() as u32,
            dispatcher: match &self.sched {
                BlockSched::Framework(d) => {
                    let room = if d.room_from_sm { format!("; room from the SMs: some SM full in {} cycles, {} blocks waited in an inbox", d.full_cycles, d.inbox_blocks) } else { String::new() };
                    // (the quota controller: a slicing policy, or the steering)
                    let sliced = d.slicing.as_ref().map_or(String::new(), |s| format!(", {}{} inside it", if s.ctl.name().starts_with("steer") { "" } else { "slicing " }, s.ctl.name()));
                    format!("framework {}{sliced} ({:?}; {} preemptions, {} restores; clocked in {} cycles{room})", d.policy.name(), d.mechanism, d.preemptions, d.restores, d.clocked)
                }
                BlockSched::Baseline { d, .. } => d.name().to_string(),
            },
            cycles: self.now,
            warp_insts: sm.warp_insts,
            thread_insts: sm.thread_insts,
            processes: self
                .procs
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let end = p.end.unwrap_or(self.now);
                    let turnaround = match p.runs.len() {
                        _ if p.halted.is_some() => end.saturating_sub(p.arrival),
                        0 => end.saturating_sub(p.arrival),
                        n => (p.runs.iter().sum::<u64>() + n as u64 / 2) / n as u64,
                    };
                    let insts = p.halted.unwrap_or_else(|| self.sms.iter().map(|s| s.insts_by_process.get(i).copied().unwrap_or(0)).sum());
                    ProcResult {
                        name: p.name.clone(),
                        arrival: p.arrival,
                        end,
                        turnaround,
                        runs: p.runs.clone(),
                        launches: p.launches.len(),
                        insts,
                        halted: p.halted.is_some(),
                        dropped: p.dropped,
                        verified: p.failures.is_empty() && p.end.is_some(),
                        failures: p.failures.clone(),
                    }
                })
                .collect(),
            launches: self
                .launches
                .iter()
                .map(|l| {
                    let end = l.end_at.unwrap_or(self.now);
                    LaunchResult {
                        process: self.procs[l.process].name.clone(),
                        kernel: l.info.launch.kernel.name.clone(),
                        blocks: l.blocks,
                        ready: l.ready_at,
                        start: l.first_block_at.unwrap_or(end),
                        end,
                        turnaround: end - l.ready_at,
                    }
                })
                .collect(),
            ipc: sm.warp_insts as f64 / cycles as f64,
            occupancy: sm.warp_cycles as f64 / (cycles as f64 * slots as f64),
            dram_bytes_per_cycle: dram,
            dram_utilisation: dram / self.mem.peak_bytes_per_cycle(),
            stalls: STALL_NAMES.iter().zip(sm.stalls).map(|(n, v)| (n.to_string(), v)).collect(),
            sm,
            mem: self.mem.stats,
            vm: self.mem.mmu.stats,
            paging: self.cfg.paging.clone(),
            faults: self.cfg.faults,
            timeline: self.timeline(),
            stepped_cycles: self.stepped_cycles,
            preemptions: self.fw().map_or(0, |d| d.preemptions),
            restores: self.fw().map_or(0, |d| d.restores),
            fw_full_cycles: self.fw().map_or(0, |d| d.full_cycles),
            fw_inbox_blocks: self.fw().map_or(0, |d| d.inbox_blocks),
            fw_clocked_cycles: self.fw().map_or(0, |d| d.clocked),
            zorua: self.zorua_stats(),
            // (the slicer's, which it adds: `Slicer::result`)
            slicing: None,
            // (the steering's, which it adds: `Steer::result`)
            steering: None,
        }
    }
}
