//! The whole GPU, cycle by cycle: processes submit launches through per-process command
//! buffers (a process's launches run in order, like a CUDA stream), the block scheduler issues
//! thread blocks to SMs, the SMs execute them on real data, the memory system serves them.
//!
//! The block scheduler is one slot ([`BlockSched`]): the baseline dispatcher (anything that
//! implements [`Dispatcher`]; by default [`Fcfs`], which lets kernels share SMs), or the kernel
//! scheduling framework with its SM driver, the framework being a unit (`SchedUnit`) that is
//! its reference model, its RTL alone, or the two in lockstep. Every launch goes to the slot,
//! every finished block is reported to it, and it says when a launch has retired (the
//! framework's `retired` output), which is when the process's next launch is submitted.
//!
//! Idle time is cheap: an SM with nothing to do sleeps until its next writeback, a memory
//! response or a new block, and when the whole GPU waits (all warps on memory) the clock jumps
//! to the next event. Stall reasons and occupancy are accounted for the skipped cycles too, so
//! the results are the same as stepping every cycle.

use super::context::XferKind;
// The dispatcher interface is its own module so that dispatchers built on whole GPUs (the
// slicer's Oracle) can depend on this one without this one depending on them.
pub use super::dispatch::{DispatchView, Dispatcher, Fcfs, LaunchState};
use super::dispatch::SliceStats;
use super::memsys::{MemStats, MemSys};
use super::sm::{context_xfer, KernelTiming, LaunchInfo, Sm, SmFault, SmStats, STALL_NAMES};
use crate::config::{FaultScheme, GpuConfig};
use crate::kernel::Launch;
use crate::mem::GlobalMem;
use crate::program::Program;
use crate::units::framework::{Framework, FwIn, KernelCmd, Mechanism, Policy, SchedUnit};
use mpgpu_spec::units::sched::fw::{MAX_GRID_BLOCKS, MAX_TMAX};
use crate::workload::{self, Workload};
use mpgpu_spec::units::sched::SchedParams;
use std::collections::VecDeque;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// What stops a run.
#[derive(Clone, Debug)]
pub enum SimError {
    Fault { kernel: String, process: String, block: [u32; 3], warp: u32, sm: u32, cycle: u64, detail: String },
    BadLaunch(String),
    /// The run reached `--max-cycles`.
    MaxCycles { cycles: u64, report: String },
    /// Nothing can make progress (or nothing has for the watchdog interval).
    Stuck { cycle: u64, report: String },
    /// A co-simulated unit parted from its reference model; the run stopped there.
    Cosim { cycle: u64, detail: String },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Fault { kernel, process, block, warp, sm, cycle, detail } => write!(
                f,
                "cycle {cycle}: process `{process}`, kernel `{kernel}`, block ({},{},{}), warp {warp} on SM {sm}: {detail}",
                block[0], block[1], block[2]
            ),
            SimError::BadLaunch(m) => write!(f, "{m}"),
            SimError::MaxCycles { cycles, report } => write!(f, "stopped at --max-cycles {cycles} before the workload finished\n{report}"),
            SimError::Stuck { cycle, report } => write!(f, "no progress possible at cycle {cycle} (watchdog)\n{report}"),
            SimError::Cosim { cycle, detail } => write!(f, "co-simulation stopped at GPU cycle {cycle}: {detail}"),
        }
    }
}

impl std::error::Error for SimError {}

/// One host program of a process: a library application, or a program built by the caller.
enum Job {
    Library { bench: crate::library::Bench, size: u32, seed: u64 },
    Custom { name: String, program: Option<Box<dyn Program>> },
}

impl Job {
    fn describe(&self) -> String {
        match self {
            Job::Library { bench, size, seed } => format!("{} (size {size}, seed {seed})", bench.name),
            Job::Custom { name, .. } => name.clone(),
        }
    }
}

struct ProcState {
    name: String,
    /// DSS tokens, if the workload gives them.
    tokens: Option<i8>,
    arrival: u64,
    priority: u32,
    jobs: Vec<Job>,
    next_job: usize,
    program: Option<Box<dyn Program>>,
    started: bool,
    end: Option<u64>,
    launches: Vec<usize>,
    failures: Vec<String>,
    programs_done: u32,
}

/// A block's context saved in global memory by [`Gpu::save_block`].
#[derive(Clone, Debug)]
pub struct SavedBlock {
    /// Where in global memory, and its length in words.
    pub addr: u32,
    pub words: usize,
    /// The region holding it (free again once it has been restored).
    region: usize,
    /// Names the save ([`Gpu::save_done`]; a block is restored once).
    serial: u64,
    /// The launch and block index (what the PTBQ entry and the KSR keep).
    pub template: super::sm::BlockContext,
}

/// Run limits.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    pub max_cycles: u64,
    /// Cycles with work outstanding but no instruction issued before the run is declared stuck.
    pub watchdog: u64,
    /// Jump over cycles in which nothing can happen, let idle SMs sleep and skip scheduler
    /// scans that cannot issue (false: step every SM and scheduler every cycle; the results are
    /// identical either way, which a test checks).
    pub skip_idle: bool,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits { max_cycles: u64::MAX / 4, watchdog: 50_000_000, skip_idle: true }
    }
}

/// Processes a run can have (each has its own address space, named in the TLBs by a 12-bit
/// ASID).
pub const MAX_PROCESSES: usize = 4095;

pub struct Gpu {
    pub cfg: GpuConfig,
    pub sms: Vec<Sm>,
    pub mem: MemSys,
    pub gmem: GlobalMem,
    pub now: u64,
    pub launches: Vec<LaunchState>,
    procs: Vec<ProcState>,
    /// The block scheduler slot.
    sched: BlockSched,
    buf: Vec<(usize, u32)>,
    last_issue: u64,
    /// Cycles the loop actually stepped (the rest were skipped as idle).
    pub stepped_cycles: u64,
    /// Context save areas and the context transfers in flight.
    pub ctx: super::context::ContextUnit,
    /// Thread-block switching on a fault: the blocks switched out, off chip.
    off: Vec<OffBlock>,
}

/// A block switched out on a fault: its SM, its saved context (or, with ideal switching, the
/// context itself), and the cycle its faults are resolved.
struct OffBlock {
    sm: usize,
    saved: Option<SavedBlock>,
    ctx: Option<super::sm::BlockContext>,
    resolved_at: u64,
    /// Its SM has been told it is resolved (so the SM may switch out another block for it).
    told: bool,
}

/// The GPU's block-scheduler slot.
enum BlockSched {
    /// A dispatcher that sees the SMs and launches directly; `dirty`: something changed since
    /// it last found nothing to issue.
    Baseline { d: Box<dyn Dispatcher>, dirty: bool },
    /// The kernel scheduling framework behind its cycle interface, with the SM driver.
    Framework(Box<FwDriver>),
}

/// The kernel scheduling framework with the SM driver around it: the queues that feed it one
/// event of each kind per cycle, and the context switches in progress.
struct FwDriver {
    /// The framework: its reference model, or (in a co-simulation) its RTL in the loop.
    fw: Box<dyn SchedUnit>,
    policy: Policy,
    mechanism: Mechanism,
    cmds: VecDeque<KernelCmd>,
    done: VecDeque<u8>,
    /// Saves under way: (transfer, SM, block index, save slot), in the order the blocks were
    /// taken off their SMs; the framework hears of each (`tb_saved`, with its slot for the
    /// PTBQ entry) once it and those before it have completed.
    saving_q: VecDeque<(u32, u8, u32, u8)>,
    /// SMs whose blocks are being switched out.
    switching: Vec<bool>,
    /// Save slots per launch: the PTBQ's depth (N_SM × T_max).
    slots: u32,
    /// Gate the framework's clock while it is idle with no input (on unless asked otherwise).
    gating: bool,
    /// The framework was idle after its last clock edge (`SchedUnit::quiet`, asked once per
    /// edge: a gated cycle changes nothing).
    idle: bool,
    /// Tokens per process for DSS (Equal Spatial Sharing when a process gives none).
    procs: usize,
    pub preemptions: u64,
    pub restores: u64,
    /// Launches the framework retired, for the GPU to act on after the framework's cycle.
    retired: Vec<u16>,
    /// Under Zorua (or WLM) the SMs say when they have no room (`fw::In::full`), and a block
    /// issued on a report a few cycles old waits in its SM's inbox (launch, block index) until
    /// the SM has room (`docs/zorua.md`, "Under the scheduling framework"). Empty, and no bit
    /// set, under the block allocation.
    room_from_sm: bool,
    inbox: Vec<VecDeque<(usize, u64)>>,
    /// The launch each SM last got a block of.
    last: Vec<Option<usize>>,
    /// The `full` input of the framework's last clocked cycle (a change needs a clock).
    full: u16,
    /// Blocks that waited in an inbox, and cycles the framework saw an SM full.
    pub inbox_blocks: u64,
    pub full_cycles: u64,
}

impl FwDriver {
    fn pending(&self) -> bool {
        !self.idle
            || !self.cmds.is_empty()
            || !self.done.is_empty()
            || !self.saving_q.is_empty()
            || self.switching.iter().any(|&s| s)
            || self.full != 0
            || self.inbox.iter().any(|q| !q.is_empty())
    }
}

/// Results of one run.
#[derive(Clone, Debug, Serialize)]
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
    pub vm: super::mmu::MmuStats,
    pub paging: crate::config::PagingConfig,
    pub faults: crate::config::FaultScheme,
    /// Per SM, resident and faulted warp-cycles over time (with demand paging).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Vec<super::sm::Timeline>>,
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
    /// Under Zorua with the framework: framework cycles in which some SM reported no room
    /// (`fw::In::full`), and blocks issued that waited in their SM's inbox for room.
    pub fw_full_cycles: u64,
    pub fw_inbox_blocks: u64,
    /// Zorua's counters, summed over the SMs (`alloc = "zorua"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zorua: Option<super::sm::ZoruaStats>,
    /// Intra-SM slicing (Warped-Slicer and the policies it is compared with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slicing: Option<SliceStats>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProcResult {
    pub name: String,
    pub arrival: u64,
    pub end: u64,
    pub turnaround: u64,
    pub launches: usize,
    pub verified: bool,
    pub failures: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
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
    /// Puts `unit(k)` in SM k's Zorua coordinator slot (under `alloc = "zorua"`; before the
    /// run).
    pub fn set_zorua_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::zorua::ZoruaSlot>) -> Result<(), String> {
        for (k, sm) in self.sms.iter_mut().enumerate() {
            if !sm.replace_zorua_unit(unit(k)) {
                return Err(format!("SM {k} is not under Zorua (alloc = \"zorua\")"));
            }
        }
        Ok(())
    }

    /// Zorua's counters summed over the SMs (the threshold: the mean's floor).
    pub fn zorua_stats(&self) -> Option<super::sm::ZoruaStats> {
        let all: Vec<_> = self.sms.iter().filter_map(|s| s.zorua_stats()).collect();
        let mut t = all.first()?.clone();
        for s in &all[1..] {
            t.events += s.events;
            t.phase_events += s.phase_events;
            t.barrier_events += s.barrier_events;
            t.grants += s.grants;
            t.releases += s.releases;
            for k in 0..2 {
                t.reg_sets[k] += s.reg_sets[k];
                t.smem_sets[k] += s.smem_sets[k];
                t.reg_accesses[k] += s.reg_accesses[k];
                t.smem_accesses[k] += s.smem_accesses[k];
                t.thresh_moves[k] += s.thresh_moves[k];
            }
            t.swap_reads += s.swap_reads;
            t.swap_writes += s.swap_writes;
            t.swap_l1_hits += s.swap_l1_hits;
            t.smem_unheld += s.smem_unheld;
            t.valve_grants += s.valve_grants;
            t.drain_cycles += s.drain_cycles;
            t.coord_cycles += s.coord_cycles;
            t.offs += s.offs;
            t.bar_coord_cycles += s.bar_coord_cycles;
            t.bar_offs += s.bar_offs;
            t.busy_cycles += s.busy_cycles;
            t.queue_cycles += s.queue_cycles;
            t.sched_warp_cycles += s.sched_warp_cycles;
            t.waiting_warp_cycles += s.waiting_warp_cycles;
            t.c_idle += s.c_idle;
            t.c_mem += s.c_mem;
            t.o_thresh += s.o_thresh;
        }
        t.o_thresh /= all.len() as u32;
        Some(t)
    }

    pub fn new(cfg: &GpuConfig) -> Gpu {
        Gpu::with_dispatcher(cfg, Box::new(Fcfs::default()))
    }

    pub fn with_dispatcher(cfg: &GpuConfig, dispatcher: Box<dyn Dispatcher>) -> Gpu {
        let mut sms = Vec::new();
        let mut id = 0;
        for g in &cfg.sm {
            for _ in 0..g.count {
                let mut sm = Sm::new(id, g);
                sm.scheme = cfg.faults;
                if matches!(cfg.faults, FaultScheme::Rq | FaultScheme::Ol) {
                    sm.set_rq_unit(Box::new(crate::units::rq::Rq::new(g.rq_entries)));
                }
                if cfg.faults == FaultScheme::Ol {
                    let entries = g.oplog_bytes / crate::config::OPLOG_ENTRY_BYTES;
                    sm.set_oplog_unit(Box::new(crate::units::oplog::Oplog::new(entries)));
                    sm.set_oldata_unit(Box::new(crate::units::oldata::Oldata::new(entries as usize)));
                }
                sm.inject = cfg.inject;
                sm.tb_switch_wait = cfg.tb_switch.enabled.then_some(cfg.tb_switch.min_wait as u64);
                sm.vm = cfg.memory.vm;
                if cfg.paging.link != crate::config::PagingLink::Off {
                    sm.timeline = Some(super::sm::Timeline::new());
                }
                sms.push(sm);
                id += 1;
            }
        }
        let mut gmem = GlobalMem::new();
        if cfg.alloc != crate::config::Alloc::Block {
            // Each SM's coordinator, and its swap areas in global memory (outside every
            // process's allocations; docs/zorua.md, "Swap").
            for sm in &mut sms {
                let (unit, geom) = Sm::zorua_model(sm.config(), &cfg.zorua, cfg.alloc == crate::config::Alloc::Wlm).expect("validated configuration");
                let regs = gmem.alloc(geom.lwarps * super::sm::REG_SWAP_BYTES);
                let smem = gmem.alloc(geom.lblocks * super::sm::SMEM_SWAP_BYTES);
                sm.set_zorua(unit, geom, regs, smem, cfg.alloc == crate::config::Alloc::Wlm, cfg.zorua.table_latency);
                sm.set_swap_write_back(cfg.zorua.swap_writes == crate::config::SwapWrites::Back);
            }
        }
        Gpu {
            cfg: cfg.clone(),
            sms,
            mem: MemSys::new(cfg),
            gmem,
            now: 0,
            launches: Vec::new(),
            procs: Vec::new(),
            sched: BlockSched::Baseline { d: dispatcher, dirty: false },
            buf: Vec::new(),
            last_issue: 0,
            stepped_cycles: 0,
            ctx: {
                let mut c = super::context::ContextUnit::default();
                c.queue_room = matches!(cfg.faults, crate::config::FaultScheme::Rq | crate::config::FaultScheme::Ol).then(|| {
                    let s = &cfg.sm[0];
                    ((s.iq_entries + s.rq_entries) as usize, (s.oplog_bytes / crate::config::OPLOG_ENTRY_BYTES) as usize)
                });
                c
            },
            off: Vec::new(),
        }
    }

    /// A GPU whose blocks are scheduled by the kernel scheduling framework with `policy`,
    /// preempting by `mechanism`, for `procs` processes (Equal Spatial Sharing divides the SMs
    /// among them). The framework needs identical SMs, at most 16 of them.
    pub fn with_framework(cfg: &GpuConfig, policy: Policy, mechanism: Mechanism, procs: usize) -> Result<Gpu, String> {
        Gpu::with_framework_units(cfg, policy, mechanism, procs, None, None)
    }

    /// [`Gpu::with_framework`] with the policy engines given (RTL in the loop, in a
    /// co-simulation); `None` is the reference model.
    pub fn with_framework_units(
        cfg: &GpuConfig,
        policy: Policy,
        mechanism: Mechanism,
        procs: usize,
        dss: Option<Box<dyn mpgpu_spec::Unit<In = mpgpu_spec::units::sched::dss::In, Out = mpgpu_spec::units::sched::dss::Out>>>,
        prio: Option<Box<dyn mpgpu_spec::Unit<In = mpgpu_spec::units::sched::prio::In, Out = mpgpu_spec::units::sched::prio::Out>>>,
    ) -> Result<Gpu, String> {
        let (mut dss, mut prio) = (dss, prio);
        Gpu::with_sched_unit(cfg, policy, mechanism, procs, &mut |mut f| {
            if let Some(d) = dss.take() {
                f.set_dss(d);
            }
            if let Some(p) = prio.take() {
                f.set_prio(p);
            }
            Box::new(f)
        })
    }

    /// The scheduling framework's parameters for `cfg`, or why the framework cannot run on it
    /// (it needs identical SMs, at most 16 of them, at most 16 blocks each). Checked before any
    /// RTL is built for it.
    pub fn framework_params(cfg: &GpuConfig) -> Result<SchedParams, String> {
        if cfg.sm.len() != 1 {
            return Err(format!("the scheduling framework needs identical SMs; `{}` has {} kinds", cfg.name, cfg.sm.len()));
        }
        let n = cfg.num_sms() as usize;
        if n > mpgpu_spec::units::sched::MAX_SMS {
            return Err(format!("the scheduling framework supports at most {} SMs; `{}` has {n}", mpgpu_spec::units::sched::MAX_SMS, cfg.name));
        }
        if cfg.sm[0].blocks as usize > MAX_TMAX {
            return Err(format!("the scheduling framework supports at most {MAX_TMAX} blocks per SM; `{}` has {}", cfg.name, cfg.sm[0].blocks));
        }
        SchedParams::new(n, cfg.sm[0].blocks as usize)
    }

    /// A GPU with the framework `make` builds around its reference model (a co-simulation
    /// puts the framework's RTL in the loop this way).
    pub fn with_sched_unit(
        cfg: &GpuConfig,
        policy: Policy,
        mechanism: Mechanism,
        procs: usize,
        make: &mut dyn FnMut(Framework) -> Box<dyn SchedUnit>,
    ) -> Result<Gpu, String> {
        if cfg.tb_switch.enabled {
            return Err("thread-block switching on faults (tb_switch) runs with the baseline dispatcher, not the scheduling framework (--policy)".into());
        }
        let room_from_sm = cfg.alloc != crate::config::Alloc::Block;
        if room_from_sm && mechanism == Mechanism::ContextSwitch {
            return Err(format!(
                "--alloc {} runs with the scheduling framework's draining preemption (--preempt drain), not context switching: a block's registers and scratchpad live in the coordinator's physical sets and swap, which a save does not capture yet (docs/zorua.md, \"Under the scheduling framework\")",
                cfg.alloc.name()
            ));
        }
        let params = Gpu::framework_params(cfg)?;
        let n = params.sms;
        let mut g = Gpu::new(cfg);
        let fw = make(Framework::new(params, policy, mechanism));
        g.sched = BlockSched::Framework(Box::new(FwDriver {
            idle: fw.quiet(),
            fw,
            policy,
            mechanism,
            cmds: VecDeque::new(),
            done: VecDeque::new(),
            saving_q: VecDeque::new(),
            gating: true,
            switching: vec![false; n],
            slots: (n * cfg.sm[0].blocks as usize) as u32,
            procs,
            preemptions: 0,
            restores: 0,
            retired: Vec::new(),
            room_from_sm,
            inbox: vec![VecDeque::new(); n],
            last: vec![None; n],
            full: 0,
            inbox_blocks: 0,
            full_cycles: 0,
        }));
        Ok(g)
    }

    /// Clocks the framework every cycle (`false`) instead of gating its clock while it is idle
    /// with no input (the default). The results are the same; a co-simulation then compares
    /// the framework's idle cycles too.
    pub fn set_framework_clock_gating(&mut self, on: bool) {
        if let Some(d) = self.fw_mut() {
            d.gating = on;
        }
    }

    /// The framework's reference model, when the GPU has one (not when its RTL runs alone).
    pub fn framework(&self) -> Option<Box<dyn std::ops::Deref<Target = Framework> + '_>> {
        self.fw().and_then(|d| d.fw.model())
    }

    /// One cycle of the framework and its SM driver.
    fn framework_cycle(&mut self, now: u64) -> Result<(), SimError> {
        let BlockSched::Framework(d) = &mut self.sched else { return Ok(()) };
        // Context switches: save every block that has drained.
        for sm in 0..self.sms.len() {
            if !d.switching[sm] {
                continue;
            }
            for b in self.sms[sm].quiescent_blocks() {
                // Into a slot of the launch's save area, then out through the memory system.
                let ctx = self.sms[sm].capture_block(now, b).unwrap();
                let l = &ctx.info.launch;
                let c = ctx.ctaid;
                let tb = (c[0] as u64 + l.grid[0] as u64 * (c[1] as u64 + l.grid[1] as u64 * c[2] as u64)) as u32;
                let ctx_err = |e: String| SimError::Cosim { cycle: now, detail: format!("saving block {tb} of launch {} on SM {sm}: {e}", ctx.info.id) };
                let words = super::context::saved_words(&ctx).map_err(ctx_err)?;
                let mark = self.gmem.alloc_mark();
                let (slot, addr) = self.ctx.take_slot(&mut self.gmem, ctx.info.id, &l.kernel, d.slots, tb, &words).map_err(ctx_err)?;
                self.mem.mmu.adopt_system(mark, self.gmem.alloc_mark(), &self.gmem);
                let xfer = self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, XferKind::Save, addr, words.len(), now);
                d.saving_q.push_back((xfer, sm as u8, tb, slot as u8));
            }
            if self.sms[sm].is_empty() {
                d.switching[sm] = false;
            }
        }
        let saved_now = match d.saving_q.front() {
            Some(&(x, sm, tb, slot)) if self.ctx.xfer(x).is_some_and(|x| x.done.is_some()) => {
                d.saving_q.pop_front();
                self.ctx.end_xfer(x);
                Some((sm, tb, slot))
            }
            _ => None,
        };
        // Under Zorua (or WLM) a block waiting in an inbox goes in once its SM has room, oldest
        // first; then each SM reports whether it has room for another block of the launch it
        // last got (an SM that is empty has room for any).
        let mut full = 0u16;
        if d.room_from_sm {
            for sm in 0..self.sms.len() {
                while let Some(&(launch, tb)) = d.inbox[sm].front() {
                    let info = self.launches[launch].info.clone();
                    if !self.sms[sm].fits(&info.launch) {
                        break;
                    }
                    d.inbox[sm].pop_front();
                    self.sms[sm].place_block(now, &info, tb);
                }
                let room = d.inbox[sm].is_empty() && (self.sms[sm].is_empty() || d.last[sm].is_none_or(|l| self.sms[sm].fits(&self.launches[l].info.launch)));
                if !room {
                    full |= 1 << sm;
                }
            }
        }
        let input = FwIn { cmd: d.cmds.front().copied(), tb_done: d.done.pop_front(), tb_saved: saved_now, full };
        // Clock gating: an idle framework with no input would change nothing. (An SM's `full`
        // bit only masks SMs out of the issue; the cycle after a clocked cycle that masked some
        // is clocked, so the unmasked ones are found ready.)
        if d.gating && d.idle && input == FwIn::default() && d.full == 0 {
            return Ok(());
        }
        d.full = full;
        d.full_cycles += (full != 0) as u64;
        d.fw.at_cycle(now);
        let out = d.fw.outputs(&input);
        d.fw.clock(&input);
        d.idle = d.fw.quiet();
        if let Some(detail) = d.fw.halted() {
            return Err(SimError::Cosim { cycle: now, detail });
        }
        if out.cmd_taken {
            d.cmds.pop_front();
        }
        if let Some(h) = out.retired {
            d.retired.push(h);
        }
        // The framework's outputs drive the GPU; with its RTL alone nothing else checks them, so
        // one the GPU cannot carry out stops the run with an error naming it.
        let bad = |detail: String| Err(SimError::Cosim { cycle: now, detail });
        if let Some(t) = out.issue {
            let sm = t.sm as usize;
            if sm >= self.sms.len() {
                return bad(format!("the framework issued block {} of launch {} to SM {sm}; the GPU has {}", t.tb, t.handle, self.sms.len()));
            }
            if t.restore {
                let launch = t.handle as usize;
                let slot = t.slot as u32;
                let (addr, words) = match self.ctx.saved_slot(launch, t.tb, slot) {
                    Ok(at) => at,
                    Err(e) => return bad(format!("the framework restored block {} of launch {} from save slot {slot}: {e}", t.tb, t.handle)),
                };
                d.restores += 1;
                let info = self.launches[launch].info.clone();
                let template = super::sm::BlockContext { ctaid: info.launch.block_coords(t.tb as u64), info, shared: Vec::new(), warps: Vec::new(), queued: Vec::new(), ages: Vec::new() };
                let ctx = super::context::load(&self.gmem, addr, words, &template).map_err(SimError::BadLaunch)?;
                if !self.sms[sm].fits(&ctx.info.launch) {
                    return bad(format!("the framework restored block {} of launch {} onto SM {sm}, which has no room", t.tb, t.handle));
                }
                let bslot = self.sms[sm].restore_block_at(now, ctx, true);
                let kind = XferKind::Restore { bslot, slot: Some((launch, slot)), region: None };
                self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, kind, addr, words, now);
            } else {
                let Some(ls) = self.launches.get_mut(t.handle as usize) else {
                    return bad(format!("the framework issued a block of launch {}, which does not exist", t.handle));
                };
                if ls.retired || t.tb as u64 >= ls.blocks || ls.next_block >= ls.blocks {
                    return bad(format!("the framework issued block {} of launch {} ({} blocks, {} issued{})", t.tb, t.handle, ls.blocks, ls.next_block, if ls.retired { ", retired" } else { "" }));
                }
                // (under Zorua the SM's report of room is a few cycles old by the issue: a block
                // that does not fit yet waits in the SM's inbox)
                let fits = self.sms[sm].fits(&ls.info.launch);
                let wait = d.room_from_sm && (!d.inbox[sm].is_empty() || !fits);
                if !wait && !fits {
                    return bad(format!("the framework issued block {} of launch {} onto SM {sm}, which has no room", t.tb, t.handle));
                }
                ls.next_block += 1;
                ls.first_block_at.get_or_insert(now);
                let info = ls.info.clone();
                if d.room_from_sm {
                    d.last[sm] = Some(t.handle as usize);
                }
                if wait {
                    d.inbox[sm].push_back((t.handle as usize, t.tb as u64));
                    d.inbox_blocks += 1;
                } else {
                    self.sms[sm].place_block(now, &info, t.tb as u64);
                }
            }
        }
        // A preemption after the block issued in the same cycle: the issue's outputs are
        // registered, so the block picked before a reservation of its SM may arrive with the
        // preemption, and is then saved with the SM's other blocks.
        if let Some(sm) = out.preempt {
            if sm as usize >= self.sms.len() {
                return bad(format!("the framework preempted SM {sm}; the GPU has {}", self.sms.len()));
            }
            d.preemptions += 1;
            if d.mechanism == Mechanism::ContextSwitch {
                d.switching[sm as usize] = true;
                for b in self.sms[sm as usize].blocks_resident() {
                    self.sms[sm as usize].freeze_block(b);
                }
            }
        }
        Ok(())
    }

    /// Adds the processes of a workload (validated already).
    pub fn add_workload(&mut self, w: &Workload) -> Result<(), SimError> {
        for p in &w.processes {
            let mut jobs = Vec::new();
            for _ in 0..p.repeat {
                for l in &p.launches {
                    let bench = workload::find(&l.kernel).map_err(SimError::BadLaunch)?;
                    jobs.push(Job::Library { bench, size: l.size.unwrap_or(bench.default_size), seed: l.seed });
                }
            }
            self.push_process(&p.name, p.arrival, p.priority, jobs);
            self.procs.last_mut().unwrap().tokens = p.tokens;
        }
        Ok(())
    }

    /// Adds a process running the given host programs in order (for experiments and tests
    /// with kernels outside the library).
    pub fn add_process(&mut self, name: &str, arrival: u64, priority: u32, programs: Vec<(String, Box<dyn Program>)>) {
        let jobs = programs.into_iter().map(|(name, p)| Job::Custom { name, program: Some(p) }).collect();
        self.push_process(name, arrival, priority, jobs);
    }

    fn push_process(&mut self, name: &str, arrival: u64, priority: u32, jobs: Vec<Job>) {
        {
            self.procs.push(ProcState {
                name: name.to_string(),
                tokens: None,
                arrival,
                priority,
                jobs,
                next_job: 0,
                program: None,
                started: false,
                end: None,
                launches: Vec::new(),
                failures: Vec::new(),
                programs_done: 0,
            });
        }
    }

    /// Starts the process's next host program, or ends the process.
    fn next_program(&mut self, p: usize) -> Result<(), SimError> {
        let ps = &mut self.procs[p];
        if ps.next_job == ps.jobs.len() {
            ps.end = Some(self.now);
            return Ok(());
        }
        let job = &mut ps.jobs[ps.next_job];
        ps.next_job += 1;
        let mut prog = match job {
            Job::Library { bench, size, seed } => bench.program(*size, *seed).map_err(SimError::BadLaunch)?,
            Job::Custom { program, .. } => program.take().expect("a custom program runs once"),
        };
        if p >= MAX_PROCESSES {
            return Err(SimError::BadLaunch(format!("process `{}`: the model takes at most {MAX_PROCESSES} processes (one address space each)", self.procs[p].name)));
        }
        // The pages the program allocates are its process's (with demand paging, in host
        // memory until they fault in).
        let mark = self.gmem.alloc_mark();
        prog.setup(&mut self.gmem);
        self.mem.mmu.adopt(p as u16, mark, self.gmem.alloc_mark(), &self.gmem);
        self.procs[p].program = Some(prog);
        self.next_launch(p)
    }

    /// Submits the current program's next launch, or finishes the program.
    fn next_launch(&mut self, p: usize) -> Result<(), SimError> {
        let l = self.procs[p].program.as_mut().unwrap().next_launch(&self.gmem);
        match l {
            Some(l) => self.submit(p, l),
            None => {
                let prog = self.procs[p].program.take().unwrap();
                if let Err(e) = prog.verify(&self.gmem) {
                    let job = &self.procs[p].jobs[self.procs[p].next_job - 1];
                    let msg = format!("{}: {e}", job.describe());
                    self.procs[p].failures.push(msg);
                }
                self.procs[p].programs_done += 1;
                self.next_program(p)
            }
        }
    }

    fn submit(&mut self, p: usize, l: Launch) -> Result<(), SimError> {
        l.validate().map_err(SimError::BadLaunch)?;
        let mut l = l;
        let f = l.kernel.footprint();
        if self.cfg.alloc != crate::config::Alloc::Block {
            l = self.zorua_launch(p, l)?;
        }
        if self.cfg.alloc != crate::config::Alloc::Zorua && !self.sms.iter().any(|s| s.config().occupancy(&f).blocks > 0) {
            return Err(SimError::BadLaunch(format!(
                "kernel `{}` of process `{}`: one block ({} threads, {} registers/thread, {} B shared) fits on no SM of `{}`",
                l.kernel.name, self.procs[p].name, f.threads_per_block, f.regs_per_thread, f.shared_per_block, self.cfg.name
            )));
        }
        let id = self.launches.len();
        let blocks = l.num_blocks();
        if self.fw().is_some() && (id > u16::MAX as usize || blocks > MAX_GRID_BLOCKS) {
            return Err(SimError::BadLaunch(format!(
                "kernel `{}` of process `{}`: the scheduling framework takes at most {} launches of at most {MAX_GRID_BLOCKS} blocks (this is launch {id} with {blocks} blocks)",
                l.kernel.name, self.procs[p].name, u16::MAX as usize + 1
            )));
        }
        let timing = KernelTiming::new(&l.kernel);
        self.launches.push(LaunchState {
            info: Arc::new(LaunchInfo { id, process: p as u16, launch: l, timing }),
            process: p,
            priority: self.procs[p].priority,
            ready_at: self.now,
            first_block_at: None,
            end_at: None,
            next_block: 0,
            blocks,
            done_blocks: 0,
            retired: false,
        });
        self.procs[p].launches.push(id);
        if let BlockSched::Framework(d) = &mut self.sched {
            // (T_k: the occupancy rule under the block allocation; under Zorua the blocks whose
            // warps all have physical slots, the SM's `full` report deciding when)
            let tk = match self.sms[0].zorua_block_limit(f.threads_per_block.div_ceil(32)) {
                Some(n) => n.min(MAX_TMAX as u32),
                None => self.cfg.sm[0].occupancy(&f).blocks,
            };
            let order = self.procs[..p].len();
            let equal = crate::units::dss::equal_share_tokens(self.sms.len(), d.procs, order);
            let tokens = if d.policy == Policy::Dss { self.procs[p].tokens.unwrap_or(equal) } else { equal };
            let priority = self.procs[p].priority.min(15) as u8;
            d.cmds.push_back(KernelCmd { handle: id as u16, tbs: blocks as u32, tk: tk as u8, priority, tokens });
            return Ok(());
        }
        let view = DispatchView { sms: &self.sms, launches: &self.launches };
        if let BlockSched::Baseline { d, dirty } = &mut self.sched {
            d.launch_ready(self.now, id, &view);
            *dirty = true;
        }
        Ok(())
    }

    /// A launch under Zorua: within the coordinator's logical limits, and with phase
    /// specifiers it can allocate by: the kernel's own when they are sound
    /// ([`crate::phases::sound`]), else the compiler pass's (docs/zorua.md, "Which specifiers").
    fn zorua_launch(&mut self, p: usize, mut l: Launch) -> Result<Launch, SimError> {
        use mpgpu_spec::units::zorua::{MAX_LWARPS, REG_SETS, SET_REGS, SMEM_SETS, SMEM_SET_BYTES};
        let k = &l.kernel;
        let bad = |what: String| Err(SimError::BadLaunch(format!("kernel `{}` of process `{}` under --alloc zorua: {what}", k.name, self.procs[p].name)));
        if k.warps() as usize > MAX_LWARPS {
            return bad(format!("{} warps per block, more than the {MAX_LWARPS} logical warps of an SM", k.warps()));
        }
        let max_regs = REG_SETS as u32 * SET_REGS;
        let max_smem = SMEM_SETS as u32 * SMEM_SET_BYTES;
        if k.regs > max_regs || k.shared_bytes > max_smem {
            return bad(format!("{} registers per thread and {} B of scratchpad per block; the mapping tables take at most {max_regs} and {max_smem}", k.regs, k.shared_bytes));
        }
        if self.cfg.alloc == crate::config::Alloc::Zorua && crate::phases::sound(k).is_err() {
            l.kernel = Arc::new(if self.cfg.zorua.renumber { crate::phases::with_renumbered_phases(k) } else { crate::phases::with_placed_phases(k) });
        }
        Ok(l)
    }

    fn all_done(&self) -> bool {
        self.procs.iter().all(|p| p.end.is_some())
    }

    fn next_arrival(&self) -> u64 {
        self.procs.iter().filter(|p| !p.started).map(|p| p.arrival).min().unwrap_or(u64::MAX)
    }

    /// Runs until every process has finished. `progress(cycle, programs done, programs)` is
    /// called now and then.
    pub fn run(&mut self, limits: RunLimits, progress: &mut dyn FnMut(u64, u64, u64)) -> Result<(), SimError> {
        let total_jobs: u64 = self.procs.iter().map(|p| p.jobs.len() as u64).sum();
        for sm in &mut self.sms {
            sm.lazy = limits.skip_idle;
        }
        let mut next_report = 0;
        loop {
            let now = self.now;
            // The edge that ends the per-SM units' last clocked cycles.
            self.sm_unit_edges(now)?;
            // Arrivals.
            for p in 0..self.procs.len() {
                if !self.procs[p].started && self.procs[p].arrival <= now {
                    self.procs[p].started = true;
                    self.last_issue = now;
                    self.next_program(p)?;
                    // (new work: an SM may switch a faulted block out for it)
                    self.sms.iter_mut().for_each(|s| s.tb_check = true);
                }
            }
            // Requests performed at the L2, then memory responses.
            self.mem.tick(now);
            for k in 0..self.mem.performed.len() {
                let (sm, tag, line) = self.mem.performed[k];
                if let Err(f) = self.sms[sm as usize].mem_perform(now, tag, line, &mut self.gmem) {
                    return Err(self.fault(sm, f));
                }
            }
            self.mem.performed.clear();
            for k in 0..self.mem.ready.len() {
                let (sm, tag) = self.mem.ready[k];
                match context_xfer(tag) {
                    Some(x) => self.context_response(now, x),
                    None => self.sms[sm as usize].mem_response(now, tag),
                }
            }
            self.mem.ready.clear();
            // Thread-block switching on faults, then block dispatch: the slot's scheduler.
            self.tb_switch_cycle(now)?;
            self.framework_cycle(now)?;
            self.launches_retired()?;
            if let BlockSched::Baseline { d, dirty: dirty @ true } = &mut self.sched {
                self.buf.clear();
                let view = DispatchView { sms: &self.sms, launches: &self.launches };
                d.dispatch(now, &view, &mut self.buf);
                *dirty = !self.buf.is_empty() || d.busy();
                for k in 0..self.buf.len() {
                    let (l, sm) = self.buf[k];
                    let ls = &mut self.launches[l];
                    assert!(ls.remaining() > 0 && self.sms[sm as usize].fits(&ls.info.launch), "dispatcher issued a block that does not fit");
                    let index = ls.next_block;
                    ls.next_block += 1;
                    ls.first_block_at.get_or_insert(now);
                    let info = ls.info.clone();
                    self.sms[sm as usize].place_block(now, &info, index);
                }
            }
            // SMs.
            let mut active = false;
            for i in 0..self.sms.len() {
                let sm = &mut self.sms[i];
                if now < sm.wake_at {
                    continue;
                }
                let issued_before = sm.stats.warp_insts;
                match sm.cycle(now, &mut self.gmem, &mut self.mem) {
                    Ok(a) => {
                        if a {
                            active = true;
                        } else if limits.skip_idle {
                            sm.wake_at = sm.next_wake(now);
                        }
                    }
                    Err(f) => return Err(self.fault(i as u32, f)),
                }
                if sm.stats.warp_insts != issued_before {
                    self.last_issue = now;
                }
                if std::mem::take(&mut sm.room_changed) {
                    // (a block's end frees its coordinator's slots some cycles after the SM
                    // reports it: the dispatcher looks again then)
                    if let BlockSched::Baseline { dirty, .. } = &mut self.sched {
                        *dirty = true;
                    }
                }
                if !sm.finished.is_empty() {
                    let fin = std::mem::take(&mut sm.finished);
                    for l in fin {
                        match &mut self.sched {
                            BlockSched::Framework(d) => d.done.push_back(i as u8),
                            BlockSched::Baseline { d, dirty } => {
                                d.block_done(now, l, i as u32);
                                *dirty = true;
                            }
                        }
                        self.block_done(l)?;
                    }
                }
            }
            if let BlockSched::Baseline { d, dirty } = &mut self.sched {
                if d.busy() {
                    let view = DispatchView { sms: &self.sms, launches: &self.launches };
                    if d.observe(now, &view).map_err(|detail| SimError::Cosim { cycle: now, detail })? {
                        *dirty = true;
                    }
                }
            }
            self.stepped_cycles += 1;
            if self.all_done() {
                self.now = now + 1;
                break;
            }
            if now >= next_report {
                progress(now, self.procs.iter().map(|p| p.programs_done as u64).sum(), total_jobs);
                next_report = now + (1 << 16);
            }
            // Advance the clock.
            let mut next = now + 1;
            let sched_pending = match &self.sched {
                BlockSched::Baseline { d, dirty } => *dirty || d.busy(),
                // Without clock gating the framework is clocked on every GPU cycle, so none is
                // skipped.
                BlockSched::Framework(d) => d.pending() || !d.gating,
            };
            let sched_pending = sched_pending || self.sms.iter().any(|s| s.tb_check && self.cfg.tb_switch.enabled);
            if limits.skip_idle && !active && !sched_pending {
                let mut t = self.next_arrival().min(self.mem.next_event().unwrap_or(u64::MAX));
                for o in &self.off {
                    t = t.min(o.resolved_at.max(now + 1));
                }
                for sm in &self.sms {
                    t = t.min(sm.wake_at);
                    if sm.ol_pending() || sm.rq_pending() || sm.od_pending() {
                        t = t.min(now + 1);
                    }
                }
                if t == u64::MAX {
                    return Err(SimError::Stuck { cycle: now, report: self.report() });
                }
                next = t.max(now + 1);
            }
            if next.saturating_sub(self.last_issue) > limits.watchdog && self.next_arrival() > next {
                return Err(SimError::Stuck { cycle: now, report: self.report() });
            }
            if next > limits.max_cycles {
                // Stop after this cycle; a later `run` resumes with the next one.
                self.now = now + 1;
                for sm in &mut self.sms {
                    sm.account(self.now);
                }
                return Err(SimError::MaxCycles { cycles: limits.max_cycles, report: self.report() });
            }
            self.now = next;
        }
        for sm in &mut self.sms {
            sm.account(self.now);
        }
        self.sm_unit_edges(u64::MAX)?;
        progress(self.now, total_jobs, total_jobs);
        Ok(())
    }

    /// Clocks each SM's per-SM units on the requests of their last cycle before `now` (a cycle
    /// with no request leaves them as they are, so it is not clocked); a co-simulated unit
    /// whose RTL and model parted stops the run.
    fn sm_unit_edges(&mut self, now: u64) -> Result<(), SimError> {
        let mut changed = false;
        for sm in &mut self.sms {
            if let Some((cycle, detail)) = sm.ol_edge(now) {
                return Err(SimError::Cosim { cycle, detail });
            }
            if let Some((cycle, detail)) = sm.rq_edge(now) {
                return Err(SimError::Cosim { cycle, detail });
            }
            if let Some((cycle, detail)) = sm.od_edge(now) {
                return Err(SimError::Cosim { cycle, detail });
            }
            if let Some((cycle, detail)) = sm.zorua_error() {
                return Err(SimError::Cosim { cycle, detail });
            }
            changed |= std::mem::take(&mut sm.ol_room_changed);
        }
        if changed {
            self.touch();
        }
        Ok(())
    }

    /// Puts `unit(k)` in SM k's operand-log slot (under `faults = "ol"`; before the run).
    pub fn set_oplog_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::oplog::OplogSlot>) -> Result<(), String> {
        if self.cfg.faults != FaultScheme::Ol {
            return Err(format!("the operand log is used under faults = \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_oplog_unit(unit(k));
        }
        Ok(())
    }

    /// Puts `unit(k)` in SM k's operand-log data-array slot (under `faults = "ol"`; before the
    /// run).
    pub fn set_oldata_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::oldata::OldataSlot>) -> Result<(), String> {
        if self.cfg.faults != FaultScheme::Ol {
            return Err(format!("the operand log is used under faults = \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_oldata_unit(unit(k));
        }
        Ok(())
    }

    /// Puts `unit(k)` in SM k's replay-queue slot (under `faults = "rq"` or `"ol"`; before the
    /// run).
    pub fn set_rq_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::rq::ReplaySlot>) -> Result<(), String> {
        if !matches!(self.cfg.faults, FaultScheme::Rq | FaultScheme::Ol) {
            return Err(format!("the replay queue is used under faults = \"rq\" or \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_rq_unit(unit(k));
        }
        Ok(())
    }

    /// Stops a block issuing so that it drains (see `Sm::freeze_block`).
    pub fn freeze_block(&mut self, sm: usize, bslot: u32) {
        self.sms[sm].freeze_block(bslot);
    }

    /// Takes a block with nothing in flight off an SM (see `Sm::capture_block`).
    pub fn capture_block(&mut self, sm: usize, bslot: u32) -> Option<super::sm::BlockContext> {
        let ctx = self.sms[sm].capture_block(self.now, bslot)?;
        self.touch();
        Some(ctx)
    }

    /// Puts a captured block on an SM (which must have room for it).
    pub fn restore_block(&mut self, sm: usize, ctx: super::sm::BlockContext) {
        assert!(self.sms[sm].fits(&ctx.info.launch), "restore_block: no room on SM {sm}");
        self.sms[sm].restore_block(self.now, ctx);
    }

    /// One line of context transfer `x` has been answered. After the last, a restored block
    /// resumes and its save slot (or region) is free again; a save is then complete (the SM
    /// driver tells the framework in order, [`Gpu::save_done`] tells a caller).
    fn context_response(&mut self, now: u64, x: u32) {
        let Some(done) = self.ctx.line_answered(x, now) else { return };
        if let XferKind::Restore { bslot, slot, region } = done.kind {
            self.ctx.end_xfer(x);
            if let Some((launch, slot)) = slot {
                self.ctx.free_slot(launch, slot);
            }
            if let Some(r) = region {
                self.ctx.free_region(r);
            }
            self.sms[done.sm].resume_block(now, bslot);
            self.touch();
        }
    }

    /// Context switch, save half: takes a quiescent block off `sm` (see [`Gpu::freeze_block`]),
    /// writes its whole state into a region of global memory (a free one from the context pool
    /// when one is big enough), and sends it through the memory system from the SM as streamed
    /// writes. The save is complete at the last acknowledgement ([`Gpu::save_done`]). An error
    /// if the block is not quiescent, or its context cannot be saved (the block then stays).
    pub fn save_block(&mut self, sm: usize, bslot: u32) -> Result<SavedBlock, SimError> {
        let cycle = self.now;
        let err = |detail: String| SimError::Cosim { cycle, detail };
        let ctx = self.sms[sm].capture_block(self.now, bslot).ok_or_else(|| err(format!("save_block: block slot {bslot} of SM {sm} is empty or has instructions in flight")))?;
        let words = match super::context::saved_words(&ctx) {
            Ok(w) => w,
            Err(e) => {
                self.sms[sm].restore_block(self.now, ctx);
                return Err(err(format!("save_block: SM {sm}, block slot {bslot}: {e}")));
            }
        };
        let mark = self.gmem.alloc_mark();
        let region = self.ctx.take_region(&mut self.gmem, 4 * words.len() as u32);
        self.mem.mmu.adopt_system(mark, self.gmem.alloc_mark(), &self.gmem);
        let addr = self.ctx.region_addr(region);
        self.gmem.write_u32s(addr, &words);
        let xfer = self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, XferKind::Save, addr, words.len(), self.now);
        self.touch();
        let serial = self.ctx.next_serial;
        self.ctx.next_serial += 1;
        self.ctx.single.insert(serial, xfer);
        let template = super::sm::BlockContext { info: ctx.info, ctaid: ctx.ctaid, shared: Vec::new(), warps: Vec::new(), queued: Vec::new(), ages: Vec::new() };
        Ok(SavedBlock { addr, words: words.len(), region, serial, template })
    }

    /// The cycle a save's last line was acknowledged, once it has been (`None` too once the
    /// block has been restored).
    pub fn save_done(&self, saved: &SavedBlock) -> Option<u64> {
        self.ctx.single.get(&saved.serial).and_then(|&x| self.ctx.xfer(x)).and_then(|x| x.done)
    }

    /// Context switch, restore half: reads a saved block (whose save is complete) back from
    /// global memory and makes it resident on `sm`; its warps issue once the context's last
    /// line has arrived from memory, and then its region is free for later saves. A block is
    /// restored once: a second restore of the same save is refused.
    pub fn restore_saved(&mut self, sm: usize, saved: &SavedBlock) -> Result<(), SimError> {
        let cycle = self.now;
        let err = |detail: &str| SimError::Cosim { cycle, detail: format!("restore_saved: {detail}") };
        let Some(&save) = self.ctx.single.get(&saved.serial) else { return Err(err("the block was restored already")) };
        if self.ctx.xfer(save).is_none_or(|x| x.done.is_none()) {
            return Err(err("the save has not completed"));
        }
        let ctx = super::context::load(&self.gmem, saved.addr, saved.words, &saved.template).map_err(SimError::BadLaunch)?;
        if !self.sms[sm].fits(&ctx.info.launch) {
            return Err(err(&format!("no room on SM {sm}")));
        }
        self.ctx.single.remove(&saved.serial);
        self.ctx.end_xfer(save);
        let bslot = self.sms[sm].restore_block_at(self.now, ctx, true);
        let kind = XferKind::Restore { bslot, slot: None, region: Some(saved.region) };
        self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, kind, saved.addr, saved.words, self.now);
        Ok(())
    }

    /// Thread-block switching on faults (Tanasić's thesis §6.4.1, §6.5.3; `docs/faults.md`,
    /// "Thread-block switching"): first, each switched-out block whose faults are resolved
    /// (and whose save has completed) comes back to its SM if it fits, before the dispatcher
    /// can give the room to a new block; then each SM with fewer than `extra` blocks off chip
    /// switches out a block whose warps are all faulted or at a barrier, if there is other
    /// work to run: a block of a launch not yet fully issued, or one of its own resolved.
    fn tb_switch_cycle(&mut self, now: u64) -> Result<(), SimError> {
        let ts = self.cfg.tb_switch;
        if !ts.enabled {
            return Ok(());
        }
        let mut k = 0;
        while k < self.off.len() {
            let o = &self.off[k];
            let saved_done = o.saved.as_ref().is_none_or(|s| self.save_done(s).is_some());
            let launch = match (&o.saved, &o.ctx) {
                (Some(s), _) => &s.template.info.launch,
                (None, Some(c)) => &c.info.launch,
                (None, None) => unreachable!("a switched-out block has its context somewhere"),
            };
            if o.resolved_at <= now && saved_done && self.sms[o.sm].fits(launch) {
                let o = self.off.remove(k);
                match (o.saved, o.ctx) {
                    (Some(s), _) => self.restore_saved(o.sm, &s)?,
                    (None, Some(c)) => self.sms[o.sm].restore_block(now, c),
                    (None, None) => unreachable!(),
                }
                self.sms[o.sm].stats.switched_in += 1;
                self.touch();
            } else {
                k += 1;
            }
        }
        for o in &mut self.off {
            if o.resolved_at <= now && !o.told {
                o.told = true;
                self.sms[o.sm].tb_check = true;
            }
        }
        let new_work = self.launches.iter().any(|l| l.remaining() > 0);
        for sm in 0..self.sms.len() {
            if !self.sms[sm].tb_check {
                continue;
            }
            self.sms[sm].tb_check = false;
            let off_here = self.off.iter().filter(|o| o.sm == sm).count() as u32;
            let resolved_here = self.off.iter().any(|o| o.sm == sm && o.resolved_at <= now);
            if off_here >= ts.extra || !(new_work || resolved_here) {
                continue;
            }
            let Some((bslot, resolved_at)) = self.sms[sm].switch_candidate(now, ts.min_wait as u64) else { continue };
            let (saved, ctx) = if ts.ideal {
                (None, self.capture_block(sm, bslot))
            } else {
                (Some(self.save_block(sm, bslot)?), None)
            };
            if saved.is_none() && ctx.is_none() {
                continue;
            }
            self.sms[sm].stats.switched_out += 1;
            self.off.push(OffBlock { sm, saved, ctx, resolved_at, told: false });
            self.sms[sm].tb_check = true;
            self.touch();
        }
        Ok(())
    }

    /// The baseline dispatcher has something new to look at.
    fn touch(&mut self) {
        if let BlockSched::Baseline { dirty, .. } = &mut self.sched {
            *dirty = true;
        }
    }

    fn fw(&self) -> Option<&FwDriver> {
        match &self.sched {
            BlockSched::Framework(d) => Some(d),
            BlockSched::Baseline { .. } => None,
        }
    }

    fn fw_mut(&mut self) -> Option<&mut FwDriver> {
        match &mut self.sched {
            BlockSched::Framework(d) => Some(d),
            BlockSched::Baseline { .. } => None,
        }
    }

    /// A block of launch `l` has finished. Its last block ends the launch; the baseline
    /// dispatcher retires it at once, the framework when it says so.
    fn block_done(&mut self, l: usize) -> Result<(), SimError> {
        let ls = &mut self.launches[l];
        ls.done_blocks += 1;
        if ls.done_blocks == ls.blocks {
            ls.end_at = Some(self.now);
        }
        let last = ls.done_blocks == ls.blocks;
        match &mut self.sched {
            BlockSched::Baseline { d, dirty } => {
                *dirty = true;
                if last {
                    self.launches[l].retired = true;
                    d.launch_done(self.now, l);
                    let p = self.launches[l].process;
                    self.next_launch(p)?;
                }
            }
            BlockSched::Framework(_) => {}
        }
        Ok(())
    }

    /// The launches the framework retired this cycle: each must have finished all its blocks;
    /// its process submits its next launch.
    fn launches_retired(&mut self) -> Result<(), SimError> {
        let Some(d) = self.fw_mut() else { return Ok(()) };
        if d.retired.is_empty() {
            return Ok(());
        }
        let retired = std::mem::take(&mut d.retired);
        for h in retired {
            let ls = self.launches.get(h as usize).ok_or_else(|| SimError::Cosim { cycle: self.now, detail: format!("the framework retired launch {h}, which does not exist") })?;
            if ls.done_blocks != ls.blocks || ls.retired {
                let why = if ls.retired { "twice".to_string() } else { format!("with {} of its {} blocks finished", ls.done_blocks, ls.blocks) };
                return Err(SimError::Cosim { cycle: self.now, detail: format!("the framework retired launch {h} {why}") });
            }
            let p = ls.process;
            self.launches[h as usize].retired = true;
            self.ctx.retire(h as usize);
            self.next_launch(p)?;
        }
        Ok(())
    }

    fn fault(&self, sm: u32, f: SmFault) -> SimError {
        let ls = &self.launches[f.launch];
        let k = &ls.info.launch.kernel;
        let line = k.line_of(f.fault.pc).map(|l| format!(" ({}:{l})", k.file)).unwrap_or_default();
        let mut what = f.fault.to_string();
        if let crate::exec::FaultKind::NotOwned { owner } = f.fault.kind {
            let owner = match self.procs.get(owner as usize) {
                Some(p) => format!("process `{}`", p.name),
                None => "the GPU's context-save memory".to_string(),
            };
            what = format!(
                "{} {} address 0x{:08x}, in a page of {owner}: a process reaches only its own pages (isolation error)",
                f.fault.space.name(),
                if f.fault.store { "store to" } else { "load from" },
                f.fault.addr
            );
        }
        SimError::Fault {
            kernel: k.name.clone(),
            process: self.procs[ls.process].name.clone(),
            block: f.ctaid,
            warp: f.warp,
            sm,
            cycle: self.now,
            detail: format!("lane {}, pc {}{line}: {what}", f.fault.lane, f.fault.pc),
        }
    }

    /// A human-readable account of where every process and launch stands.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for p in &self.procs {
            let state = match (p.started, p.end) {
                (false, _) => format!("arrives at cycle {}", p.arrival),
                (true, Some(e)) => format!("finished at cycle {e}"),
                (true, None) => format!("running, program {} of {}", p.next_job, p.jobs.len()),
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
    pub fn timeline(&self) -> Option<Vec<super::sm::Timeline>> {
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
                    let room = if d.room_from_sm { format!("; room from the SMs: full in {} framework cycles, {} blocks waited in an inbox", d.full_cycles, d.inbox_blocks) } else { String::new() };
                    format!("framework {} ({:?}; {} preemptions, {} restores{room})", d.policy.name(), d.mechanism, d.preemptions, d.restores)
                }
                BlockSched::Baseline { d, .. } => d.name().to_string(),
            },
            cycles: self.now,
            warp_insts: sm.warp_insts,
            thread_insts: sm.thread_insts,
            processes: self
                .procs
                .iter()
                .map(|p| {
                    let end = p.end.unwrap_or(self.now);
                    ProcResult {
                        name: p.name.clone(),
                        arrival: p.arrival,
                        end,
                        turnaround: end.saturating_sub(p.arrival),
                        launches: p.launches.len(),
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
            zorua: self.zorua_stats(),
            slicing: match &self.sched {
                BlockSched::Baseline { d, .. } => d.slice_stats(),
                BlockSched::Framework(_) => None,
            },
        }
    }
}

/// Runs a workload on a configuration with the baseline dispatcher, or with the scheduling
/// framework when `sched` names a policy and a preemption mechanism.
pub fn run_workload(cfg: &GpuConfig, w: &Workload, limits: RunLimits, progress: &mut dyn FnMut(u64, u64, u64)) -> Result<RunResult, SimError> {
    run_workload_with(cfg, w, None, limits, progress)
}

/// [`run_workload`] with an optional scheduling framework.
pub fn run_workload_with(
    cfg: &GpuConfig,
    w: &Workload,
    sched: Option<(Policy, Mechanism)>,
    limits: RunLimits,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<RunResult, SimError> {
    let mut gpu = match sched {
        Some((p, m)) => Gpu::with_framework(cfg, p, m, w.processes.len()).map_err(SimError::BadLaunch)?,
        None => Gpu::new(cfg),
    };
    gpu.add_workload(w)?;
    gpu.run(limits, progress)?;
    Ok(gpu.result())
}

