//! The whole GPU, cycle by cycle: processes submit launches through per-process command
//! buffers (a process's launches run in order, like a CUDA stream), the block scheduler issues
//! thread blocks to SMs, the SMs execute them on real data, the memory system serves them.
//!
//! The block scheduler is one slot ([`BlockSched`]): the baseline dispatcher (anything that
//! implements [`Dispatcher`]; by default [`Fcfs`], which lets kernels share SMs), or the kernel
//! scheduling framework with its SM driver, the framework being a unit in a slot
//! (`crate::slots`) that holds its reference model, its RTL alone, or the two in lockstep. Every launch goes to the slot,
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
use crate::config::GpuConfig;
use crate::kernel::Launch;
use crate::mem::GlobalMem;
use crate::program::Program;
use crate::slots::Held;
use crate::units::framework::{Framework, FwIn, FwOut, KernelCmd, Mechanism, Policy, TbDone, TbSaved};
use mpgpu_spec::units::sched::fw::QuotaWrite;
use mpgpu_spec::units::sched::fw::{MAX_GRID_BLOCKS, MAX_TMAX};
use crate::workload::{self, Workload};
use mpgpu_spec::units::sched::SchedParams;
use std::collections::VecDeque;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

// The GPU's concerns, each in its own file, each an `impl Gpu` block over the state declared
// here. The rule: a child module depends on this one (`use super::*`) and on none of its
// siblings; what two of them share lives here.
mod framework;
mod preempt;
mod processes;
mod result;
mod switch;
mod units;
pub use result::{LaunchResult, ProcResult, RunResult};

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
    /// A library application; `placed`: its kernels as the run's `[compile]` places them.
    Library { bench: crate::library::Bench, size: u32, seed: u64, placed: Option<Arc<Vec<Arc<crate::kernel::Kernel>>>> },
    Custom { name: String, program: Option<Box<dyn Program>> },
}

impl Job {
    fn describe(&self) -> String {
        match self {
            Job::Library { bench, size, seed, .. } => format!("{} (size {size}, seed {seed})", bench.name),
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
    /// The cycle its current run (its launch list once) started, and the turnarounds of the
    /// runs it completed (the first from its arrival).
    run_start: u64,
    runs: Vec<u64>,
    /// Replayed under `min_runs` (`ProcessSpec::replay`).
    replay: bool,
    /// Its instruction target (`ProcessSpec::insts`): replayed until it has executed this many
    /// warp-instructions, then halted.
    target: Option<u64>,
    /// The warp-instructions it had executed when it halted.
    halted: Option<u64>,
    /// Blocks of its launches that ended without running, after its halt.
    dropped: u64,
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
    /// Replay until every process has completed this many runs (`Workload::min_runs`).
    min_runs: Option<u32>,
    /// Some process has an instruction target (`ProcessSpec::insts`).
    targets: bool,
    /// Blocks of halted processes the dispatcher issued this cycle (launch, SM).
    dropped: Vec<(usize, u32)>,
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
    /// The dispatcher makes context switches ([`Dispatcher::preempts`]), and the blocks they
    /// took off.
    preempting: bool,
    preempted: preempt::Preempted,
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
    fw: Held<FwIn, FwOut>,
    policy: Policy,
    mechanism: Mechanism,
    cmds: VecDeque<KernelCmd>,
    done: VecDeque<TbDone>,
    /// Each launch's KSRT entry, as its blocks' issues name it (`TbIssue::kernel`): an SM names
    /// it when one of them finishes or is saved.
    kernel_of: std::collections::HashMap<usize, u8>,
    /// Saves under way: (transfer, the block saved), in the order the blocks were taken off
    /// their SMs; the framework hears of each (`tb_saved`, with its slot for the
    /// PTBQ entry) once it and those before it have completed.
    saving_q: VecDeque<(u32, TbSaved)>,
    /// SMs whose blocks are being switched out.
    switching: Vec<bool>,
    /// Save slots per launch: the PTBQ's depth (N_SM × T_max).
    slots: u32,
    /// Gate the framework's clock while it is idle with its inputs unchanged but for no
    /// command, completion, save or quota (the `full` bits as at its last clocked cycle; on
    /// unless asked otherwise).
    gating: bool,
    /// The framework was idle after its last clock edge (`Hosted::quiet`, asked once per
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
    inbox: Vec<VecDeque<Inboxed>>,
    /// The launch each SM last got a block of.
    last: Vec<Option<usize>>,
    /// The `full` input of the framework's last clocked cycle (a change needs a clock).
    full: u16,
    /// Blocks that waited in an inbox, and cycles in which some SM reported no room (clocked
    /// or not).
    pub inbox_blocks: u64,
    pub full_cycles: u64,
    /// Cycles the framework was clocked (all of them without gating).
    pub clocked: u64,
    /// Slicing inside the framework, when it runs.
    slicing: Option<FwSlicing>,
}

/// A block waiting in an SM's inbox for room: a new one (launch, block index), or one to
/// restore from its launch's save slot (its context stays in the slot until it goes in).
#[derive(Clone, Copy, Debug)]
enum Inboxed {
    New(usize, u64),
    Restore { launch: usize, tb: u32, slot: u32 },
}

/// Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling framework"):
/// the quota controller (a slicing dispatcher in its controller role), the quotas it wants for
/// each launch and those the framework holds, the launches it partitions (the admitted
/// launches of the highest priority among them, in admission order) and every admitted launch
/// with its priority.
struct FwSlicing {
    ctl: Box<dyn Dispatcher>,
    /// The controller's quotas, by launch handle (absent: none).
    want: std::collections::HashMap<u16, [u8; mpgpu_spec::units::sched::MAX_SMS]>,
    /// The quotas the framework holds for each admitted launch, in admission order (a launch
    /// enters with none).
    held: Vec<(u16, Option<[u8; mpgpu_spec::units::sched::MAX_SMS]>)>,
    group: Vec<usize>,
    admitted: Vec<(usize, u8)>,
    /// The group's priority.
    top: Option<u8>,
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
            || self.slicing.as_ref().is_some_and(|s| s.next_write().is_some() || s.ctl.busy())
    }
}

impl Gpu {
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
                sm.set_fault_models(g);
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
        let preempting = dispatcher.preempts();
        Gpu {
            cfg: cfg.clone(),
            sms,
            mem: MemSys::new(cfg),
            gmem,
            now: 0,
            launches: Vec::new(),
            procs: Vec::new(),
            min_runs: None,
            targets: false,
            dropped: Vec::new(),
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
            preempting,
            preempted: preempt::Preempted::default(),
        }
    }

    /// Runs until every process has finished. `progress(cycle, programs done, programs)` is
    /// called now and then.
    pub fn run(&mut self, limits: RunLimits, progress: &mut dyn FnMut(u64, u64, u64)) -> Result<(), SimError> {
        let total_jobs: u64 = self.procs.iter().map(|p| p.jobs.len() as u64).sum::<u64>() * self.min_runs.unwrap_or(1) as u64;
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
            self.preempt_cycle(now)?;
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
                    if self.procs[ls.process].halted.is_some() {
                        // (a block of a halted process ends as it is issued, without running)
                        self.procs[ls.process].dropped += 1;
                        self.dropped.push((l, sm));
                        continue;
                    }
                    let info = ls.info.clone();
                    self.sms[sm as usize].place_block(now, &info, index);
                }
            }
            for k in 0..self.dropped.len() {
                let (l, sm) = self.dropped[k];
                if let BlockSched::Baseline { d, .. } = &mut self.sched {
                    d.block_done(now, l, sm);
                }
                self.block_done(l)?;
            }
            self.dropped.clear();
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
                            BlockSched::Framework(d) => {
                                let kernel = *d.kernel_of.get(&l).ok_or_else(|| SimError::Cosim { cycle: now, detail: format!("a block of launch {l} finished on SM {i}, but the framework never issued a block of that launch") })?;
                                d.done.push_back(TbDone { sm: i as u8, kernel });
                                if let Some(sl) = &mut d.slicing {
                                    sl.ctl.block_done(now, l, i as u32);
                                }
                            }
                            BlockSched::Baseline { d, dirty } => {
                                d.block_done(now, l, i as u32);
                                *dirty = true;
                            }
                        }
                        self.block_done(l)?;
                    }
                }
            }
            self.framework_observe(now)?;
            if self.targets {
                self.halt_check(now);
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
            let sched_pending = sched_pending || (self.cfg.tb_switch.enabled && self.sms.iter().any(|s| s.tb_check)) || self.preempted.pending();
            if limits.skip_idle && !active && !sched_pending {
                let mut t = self.next_arrival().min(self.mem.next_event().unwrap_or(u64::MAX));
                for o in &self.off {
                    t = t.min(o.resolved_at.max(now + 1));
                }
                for sm in &self.sms {
                    t = t.min(sm.wake_at);
                    if sm.units_pending() {
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
            if let Some((cycle, detail)) = sm.unit_edges(now) {
                return Err(SimError::Cosim { cycle, detail });
            }
            changed |= std::mem::take(&mut sm.ol_room_changed);
        }
        if changed {
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

    /// The baseline dispatcher, when the GPU has one (not the framework).
    pub fn dispatcher(&self) -> Option<&dyn Dispatcher> {
        match &self.sched {
            BlockSched::Baseline { d, .. } => Some(&**d),
            BlockSched::Framework(_) => None,
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
        for &h in &retired {
            d.kernel_of.remove(&(h as usize));
        }
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
    let mut gpu = workload_gpu(cfg, w, sched)?;
    gpu.run(limits, progress)?;
    Ok(gpu.result())
}

/// [`run_workload_with`], where a run that reaches `limits.max_cycles` is a result too: the
/// results so far (each process's turnaround the mean of its completed runs, the figure the
/// thesis's replayed workloads take, §5.3.1), with `false`; `true` when the workload finished.
pub fn run_workload_until(
    cfg: &GpuConfig,
    w: &Workload,
    sched: Option<(Policy, Mechanism)>,
    limits: RunLimits,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<(RunResult, bool), SimError> {
    let mut gpu = workload_gpu(cfg, w, sched)?;
    let finished = match gpu.run(limits, progress) {
        Ok(()) => true,
        Err(SimError::MaxCycles { .. }) => false,
        Err(e) => return Err(e),
    };
    Ok((gpu.result(), finished))
}

/// A GPU holding workload `w`, under the scheduling framework's `sched` or the baseline
/// dispatcher.
fn workload_gpu(cfg: &GpuConfig, w: &Workload, sched: Option<(Policy, Mechanism)>) -> Result<Gpu, SimError> {
    let mut gpu = match sched {
        Some((p, m)) => Gpu::with_framework(cfg, p, m, w.processes.len()).map_err(SimError::BadLaunch)?,
        None => Gpu::new(cfg),
    };
    gpu.add_workload(w)?;
    Ok(gpu)
}


/// The warp-instructions `p` issues alone on `cfg` in its first `cycles` cycles (0 to
/// `cycles` − 1), replayed as often as it ends before then: the instruction target
/// (`ProcessSpec::insts`) that halts it alone within those cycles (Warped-Slicer, §V-A: 2 M).
pub fn insts_in(cfg: &GpuConfig, p: &workload::ProcessSpec, cycles: u64, limits: RunLimits) -> Result<u64, SimError> {
    if cycles == 0 || cycles > limits.max_cycles {
        return Err(SimError::BadLaunch(format!("process `{}`: {cycles} cycles alone: expected 1 to the run's limit, {} (--max-cycles)", p.name, limits.max_cycles)));
    }
    let alone = Workload::alone(&workload::ProcessSpec { arrival: 0, insts: Some(workload::MAX_INSTS), replay: true, ..p.clone() });
    let mut gpu = Gpu::new(cfg);
    gpu.add_workload(&alone)?;
    match gpu.run(RunLimits { max_cycles: cycles - 1, ..limits }, &mut |_, _, _| {}) {
        Err(SimError::MaxCycles { .. }) => {}
        Err(e) => return Err(e),
        Ok(()) => return Err(SimError::BadLaunch(format!("process `{}` alone issued {} warp-instructions, the largest target, within {cycles} cycles: give fewer cycles", p.name, workload::MAX_INSTS))),
    }
    if let Some(f) = gpu.procs[0].failures.first() {
        return Err(SimError::BadLaunch(format!("process `{}` alone: wrong results: {f}", p.name)));
    }
    Ok(gpu.sms.iter().map(|s| s.insts_by_process.first().copied().unwrap_or(0)).sum())
}
