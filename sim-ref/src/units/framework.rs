//! The kernel scheduling framework (Tanasić, "Towards Multiprogrammed GPUs", PhD thesis, 2016,
//! §5.2.3; `docs/sched-framework.md`), as a cycle-stepped reference model of the hardware:
//! command intake, the active queue, the Kernel Status Register Table (KSRT), the SM Status
//! Table (SMST), the Preempted Thread Block Queues (PTBQ), the SM driver's issue logic and the
//! policies (FCFS, NPQ, PPQ exclusive and shared, DSS, and DSS in the Equal Spatial Sharing
//! configuration), with preemption by context switch or by draining.
//!
//! The framework is a [`Unit`] with the interface `mpgpu_spec::units::sched::fw`, and the RTL
//! block `rtl/src/sched.rs` implements the same cycle contract (`docs/sched-framework.md`):
//! everything a cycle does is computed from the registers at the start of the cycle and the
//! inputs, and takes effect at the clock edge. The framework is pipelined so that the hardware
//! meets its clock (`docs/fpga.md`): what a cycle chooses from the registers is kept in
//! pipeline registers ([`fw::Pipe`](mpgpu_spec::units::sched::fw::Pipe), compared like the
//! tables) and applied in a later cycle. Each cycle it takes at most one kernel command, one
//! finished block and one saved block (the GPU queues the rest), and
//! - retires the finished block's kernel if that was its last block;
//! - admits the command registered in the cycle before (the GPU presents a command until it
//!   is taken) into the entry picked in the cycle before, if it is still free;
//! - applies the SM event picked in the cycle before: a running SM with no blocks whose kernel
//!   had no work is released (idle, its token back to its kernel), a reserved SM with no blocks
//!   has finished its preemption (setup for the kernel it was reserved for, or idle, the token
//!   back, if that kernel had no work);
//! - applies the decision checked in the cycle before, and checks the policy engine's decision
//!   of the cycle before (its kernel has a block left after the block in flight; an
//!   assignment's SM is idle; a reservation's SM still runs the kernel it is taken from, with no
//!   event in flight to it);
//! - issues the block picked two cycles before (preempted blocks, the PTBQ's FIFO, before new
//!   ones): the pick rules out whatever could stop it;
//! - takes the SM picked in the cycle before through the pick's second stage (its kernel read,
//!   the pick dropped if the registered decision reserves the SM);
//! - finds the SMs with an event and the SMs ready for an issue, and picks among those found in
//!   the cycle before the next SM event and, unless a pick is in its second stage, the next
//!   issue (round robin); picks the next free entry; runs the policy engine on the table entry
//!   it reads a cycle ahead, and registers its trigger and its decision.
//!
//! SMs in setup run the cycle after. SMs are shared spatially: an SM runs blocks of one kernel
//! at a time, unless the framework shares its SMs (slicing inside it, `share`: quotas written
//! through the `quota` input, the issue's second stage taking the oldest of the kernels the SM
//! could take a block of when it was picked, and the handover as an SM event). Ties go to the
//! lowest index; a decision of a priority policy takes as long as the DSS scan but for the DSS
//! engine's two cycles that read and compare its candidates' live counts (N_SM + 1 cycles
//! against N_SM + 3, and four more after an action).

use super::dss::Dss;
use super::prio::Prio;
use mpgpu_spec::units::sched::prio::{In as PrioIn, Out as PrioOut};
use mpgpu_spec::units::sched::dss::{Act, In as DssIn, Out as DssOut};
use mpgpu_spec::units::sched::fw::{KsrState, Pipe, SmState as SmWire, State};
pub use mpgpu_spec::units::sched::fw::{In as FwIn, KernelCmd, Out as FwOut, TbDone, TbIssue, TbSaved};
use mpgpu_spec::units::sched::{PolicyCode, SchedParams, SmEntry, SmState};
use mpgpu_spec::Unit;
use std::collections::VecDeque;

// The framework's concerns, each an `impl Framework` block over the state declared here; a
// child module depends on this one (`use super::*`) and on none of its siblings.
mod comb;
mod observe;
mod share;

/// Scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Fcfs,
    /// Non-preemptive priority queues.
    Npq,
    /// Preemptive priority, exclusive access: lower-priority kernels get no SM while a
    /// higher-priority kernel is active.
    PpqExclusive,
    /// Preemptive priority, shared access: free SMs go to lower-priority kernels too.
    PpqShared,
    /// Dynamic Spatial Sharing with the tokens each command carries.
    Dss,
    /// DSS with Equal Spatial Sharing tokens.
    Equal,
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "fcfs" => Policy::Fcfs,
            "npq" => Policy::Npq,
            "ppq-excl" => Policy::PpqExclusive,
            "ppq-shared" => Policy::PpqShared,
            "dss" => Policy::Dss,
            "equal" => Policy::Equal,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fcfs => "fcfs",
            Policy::Npq => "npq",
            Policy::PpqExclusive => "ppq-excl",
            Policy::PpqShared => "ppq-shared",
            Policy::Dss => "dss",
            Policy::Equal => "equal",
        }
    }
    /// Whether the policy runs on the DSS engine (else on the priority scan engine).
    pub fn uses_dss(self) -> bool {
        self.code().uses_dss()
    }
    /// The policy as the framework's blocks take it (Equal Spatial Sharing is DSS with equal
    /// tokens).
    pub fn code(self) -> PolicyCode {
        match self {
            Policy::Fcfs => PolicyCode::Fcfs,
            Policy::Npq => PolicyCode::Npq,
            Policy::PpqExclusive => PolicyCode::PpqExclusive,
            Policy::PpqShared => PolicyCode::PpqShared,
            Policy::Dss | Policy::Equal => PolicyCode::Dss,
        }
    }
}

/// How an SM is taken from a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// Save every resident block's context, to be restored later (the PTBQ keeps them).
    ContextSwitch,
    /// Stop issuing and let the resident blocks finish.
    Drain,
}

impl Mechanism {
    /// The mechanism a run on `cfg` takes unless one is named: context switching, or draining
    /// under Zorua's and WLM's allocations (the only mechanism the framework runs with there,
    /// `Gpu::framework_refusal`).
    pub fn default_for(cfg: &crate::config::GpuConfig) -> Mechanism {
        if cfg.alloc == crate::config::Alloc::Block {
            Mechanism::ContextSwitch
        } else {
            Mechanism::Drain
        }
    }

    pub fn parse(s: &str) -> Option<Mechanism> {
        [Mechanism::ContextSwitch, Mechanism::Drain].into_iter().find(|m| m.name() == s)
    }

    /// Its name on the command line (`--preempt`).
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::ContextSwitch => "ctxsw",
            Mechanism::Drain => "drain",
        }
    }
}

/// The framework in the GPU's block-scheduler slot: its model reports the policy's
/// statistics, and it is quiet (its clock may be gated) while it is not busy.
impl crate::slots::Hosted for Framework {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
    fn quiet(&self) -> bool {
        !self.busy()
    }
}

#[derive(Clone, Debug, Default)]
struct Ksr {
    valid: bool,
    handle: u16,
    tbs: u32,
    next_tb: u32,
    done_tbs: u32,
    tk: u8,
    priority: u8,
    /// Admission order modulo 2^16 (what the hardware keeps).
    age: u16,
    /// Admission order, unbounded (reports only).
    seq: u64,
    count: i8,
    /// The tokens the command carried (model only: what token conservation is checked
    /// against; the hardware keeps just `count`).
    tokens: i8,
    /// Preempted blocks, each with its save slot.
    ptbq: VecDeque<(u32, u8)>,
}

impl Ksr {
    fn has_work(&self) -> bool {
        self.valid && (self.next_tb < self.tbs || !self.ptbq.is_empty())
    }
    fn remaining(&self) -> u32 {
        self.tbs - self.next_tb + self.ptbq.len() as u32
    }
}

/// A policy engine's decision (as made, registered, or applied).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Action {
    act: Act,
    sm: usize,
    kernel: usize,
    from: usize,
}

/// Everything one cycle decides (combinational), before the clock edge applies it.
#[derive(Clone, Copy, Debug, Default)]
struct Comb {
    out: FwOut,
    /// The SM with this cycle's event, and whether it goes to setup (a completed preemption
    /// whose kernel has work) rather than idle.
    event: Option<(usize, bool)>,
    /// Under slicing, the SM handed over this cycle and its new holder (`share`).
    handover: Option<(usize, usize)>,
    retire: Option<usize>,
    admit: Option<usize>,
    trigger: bool,
    dss_in: DssIn,
    prio_in: PrioIn,
    action: Action,
    /// The engine's decision made this cycle (checked in the next cycle, applied in the one
    /// after if it held).
    decision: Action,
    /// The registered decision if it holds (applied in the next cycle).
    checked: Option<Action>,
    /// (SM, kernel, from the PTBQ)
    issue: Option<(usize, usize, bool)>,
    /// The block issued at this edge, for the issue ports of the next cycle.
    issued: Option<TbIssue>,
    /// The round robin's pick, registered for its second stage: its SM, and under slicing the
    /// kernels it may take a block of now.
    pick: Option<usize>,
    pick_el: u16,
    /// The pick of the cycle before, in its second stage, if it holds: (SM, kernel), for the
    /// next cycle's issue.
    grant: Option<(usize, usize)>,
    /// The SMs that may take a block two cycles on (bit s), and those of them whose kernel may
    /// then have fewer than two blocks left; registered for the next cycle's pick.
    ready: u16,
    last: u16,
    /// The table reads for the entry the engine scans next cycle.
    snap: Snap,
    /// The SM event for the next cycle: (SM, its state now, whether it goes to setup).
    ev_pick: Option<(usize, SmState, bool)>,
    /// Under slicing, the heir of the SM picked for a handover (`share`).
    ev_heir: Option<usize>,
    /// The KSRT entry a command may enter next cycle.
    free_pick: Option<usize>,
    /// The SMs with an event (bit s), for the next cycle's pick.
    ev_ready: u16,
    /// Of those, the reserved SMs whose next kernel has work now (bit s).
    ev_work: u16,
    /// The KSRT entries some SM names now (bit k).
    named: u16,
    /// The kernels that could use more SMs now (bit k).
    wants: u16,
}

/// The policy engine's table inputs for the entry it scans, read in the cycle before from the
/// tables as they were then (the `trigger` and live-count fields are unused; only the engine
/// in use has its inputs read).
#[derive(Clone, Copy, Debug, Default)]
struct Snap {
    dss: DssIn,
    prio: PrioIn,
}

pub struct Framework {
    pub params: SchedParams,
    pub policy: Policy,
    pub mechanism: Mechanism,
    ksrt: Vec<Ksr>,
    smst: Vec<SmEntry>,
    admitted: u64,
    /// The DSS policy engine: the reference model, or anything with its cycle interface.
    dss: Box<dyn Unit<In = DssIn, Out = DssOut>>,
    /// The scan engine of the priority policies.
    prio: Box<dyn Unit<In = PrioIn, Out = PrioOut>>,
    issue_ptr: usize,
    /// Pipeline registers (`docs/sched-framework.md`, "The cycle contract"), each from the cycle
    /// before: the engine's trigger, its decision and the checked one, the issue's and the SM
    /// event's two stages, the admission entry, the names and "wants more", and the engine's
    /// table reads.
    trig: bool,
    dec: Option<Action>,
    /// The decision checked in the cycle before: applied in this one with no further check.
    app: Option<Action>,
    /// The SM the round robin picked in the cycle before (the pick's second stage), and under
    /// slicing the kernels it could take a block of then.
    pick: Option<usize>,
    pick_el: u16,
    /// The command presented in the cycle before and not taken then: admission takes it (the
    /// GPU presents it until it is taken).
    cmd: Option<KernelCmd>,
    /// The block picked two cycles before, issued in this one: (SM, kernel).
    grant: Option<(usize, usize)>,
    /// The block issued at the last edge: the issue ports drive it in this cycle (the issue's
    /// outputs are registered, `docs/sched-framework.md`).
    issued: Option<TbIssue>,
    /// The SMs that could take a block, from the registers of the cycle before (the pick
    /// chooses among them), and those whose kernel then had under two blocks left after the
    /// issue in flight.
    ready: u16,
    last: u16,
    ev: Option<(usize, SmState, bool)>,
    /// The heir the SM event hands its SM to (a handover, under slicing), found with it.
    ev_heir: Option<usize>,
    /// The SMs found with an event in the cycle before (the event's first stage).
    ev_ready: u16,
    /// Of those, the reserved SMs whose next kernel had work then: they go to setup if picked.
    ev_work: u16,
    /// The KSRT entries some SM named (as its kernel or its next kernel) in the cycle before.
    named: u16,
    /// The kernels that could use more SMs in the cycle before (bit k).
    wants: u16,
    /// The lowest KSRT entry that was free and named by no SM in the cycle before.
    free: Option<usize>,
    /// The block saved in the cycle before: its kernel (the saving SM's, read then), index and
    /// save slot; it enters its kernel's PTBQ (and its blocks left) at this edge.
    saved: Option<(usize, u32, u8)>,
    /// The kernel of the block finished in the cycle before (the finishing SM's, read then): it
    /// is counted done, and retires the kernel if it was its last, in this cycle.
    done: Option<usize>,
    snap: Snap,
    /// Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling
    /// framework"): each KSRT entry's quotas and each SM's blocks per kernel. `None`: an SM
    /// holds its holder's blocks only.
    share: Option<share::Share>,
    /// The clock request's registers (`busy`): each SM's "its kernel has work" (bit s), under
    /// slicing whether it had an eligible kernel (bit s, the RTL's `elq` rows, each OR-ed),
    /// some SM's need computed from them, and activity at the last two clocked edges.
    had_work: u16,
    had_el: u16,
    sm_need: bool,
    act1: bool,
    act2: bool,
    pub cycle: u64,
}

impl Framework {
    pub fn new(params: SchedParams, policy: Policy, mechanism: Mechanism) -> Framework {
        Framework {
            params,
            policy,
            mechanism,
            ksrt: vec![Ksr::default(); params.sms],
            smst: vec![SmEntry::default(); params.sms],
            admitted: 0,
            dss: Box::new(Dss::new(params.sms)),
            prio: Box::new(Prio::new(params.sms, policy.code().prio_engine_mode())),
            issue_ptr: 0,
            trig: false,
            dec: None,
            app: None,
            pick: None,
            pick_el: 0,
            cmd: None,
            grant: None,
            issued: None,
            ready: 0,
            last: 0,
            ev: None,
            ev_heir: None,
            ev_ready: 0,
            ev_work: 0,
            named: 0,
            wants: 0,
            // (entry 0 is free at reset)
            free: Some(0),
            saved: None,
            done: None,
            snap: Snap::default(),
            share: None,
            had_work: 0,
            had_el: 0,
            sm_need: false,
            act1: false,
            act2: false,
            cycle: 0,
        }
    }

    /// Replaces the DSS engine (with anything of its cycle interface scanning as many SMs,
    /// such as its RTL in the loop).
    pub fn set_dss(&mut self, dss: Box<dyn Unit<In = DssIn, Out = DssOut>>) {
        self.dss = dss;
    }

    /// Replaces the priority policies' engine (likewise).
    pub fn set_prio(&mut self, prio: Box<dyn Unit<In = PrioIn, Out = PrioOut>>) {
        self.prio = prio;
    }

    /// The SMST.
    pub fn smst(&self) -> &[SmEntry] {
        &self.smst
    }

    /// Token counts of the KSRT entries (0 for invalid entries).
    pub fn counts(&self) -> Vec<i8> {
        self.ksrt.iter().map(|k| if k.valid { k.count } else { 0 }).collect()
    }

    /// Valid KSR indices in admission order.
    fn active(&self) -> Vec<usize> {
        let mut a: Vec<usize> = (0..self.ksrt.len()).filter(|&k| self.ksrt[k].valid).collect();
        a.sort_by_key(|&k| self.ksrt[k].seq);
        a
    }

    /// SMs running each active launch, by handle, in admission order.
    pub fn partition(&self) -> Vec<(u16, usize)> {
        self.active()
            .into_iter()
            .map(|k| (self.ksrt[k].handle, self.smst.iter().filter(|e| e.state == SmState::Running && e.ksr == Some(k as u8)).count()))
            .collect()
    }

    /// SMs each active launch owns as the policy sees it (running or setting up for it, or
    /// reserved for it and still being preempted), by handle, in admission order.
    pub fn allocation(&self) -> Vec<(u16, usize)> {
        self.active().into_iter().map(|k| (self.ksrt[k].handle, self.owned(k))).collect()
    }

    /// Blocks waiting in each PTBQ, by handle.
    pub fn ptbq_lengths(&self) -> Vec<(u16, usize)> {
        self.active().into_iter().map(|k| (self.ksrt[k].handle, self.ksrt[k].ptbq.len())).collect()
    }

    /// SMs kernel `k` has or is getting: in setup or running for it, or reserved for it.
    fn owned(&self, k: usize) -> usize {
        let k = Some(k as u8);
        self.smst
            .iter()
            .filter(|e| match e.state {
                SmState::Running | SmState::Setup => e.ksr == k,
                SmState::Reserved => e.next == k,
                SmState::Idle => false,
            })
            .count()
    }

    /// Whether kernel `k` could use more SMs than it has or is getting (PPQ preempts only
    /// then): owned x T_k < blocks left.
    fn wants_more(&self, k: usize) -> bool {
        let b = &self.ksrt[k];
        b.valid && (self.owned(k) as u32) * (b.tk as u32) < b.remaining()
    }

    /// The KSRT entries some SM names now, as its kernel or its next kernel (bit k).
    fn named_now(&self) -> u16 {
        self.smst.iter().flat_map(|e| [e.ksr, e.next]).flatten().fold(0, |m, k| m | 1 << k)
    }

    /// Blocks kernel `k` has left to issue after the block in flight (0 if its entry is
    /// invalid).
    fn left_after_flight(&self, k: usize) -> u32 {
        let ks = &self.ksrt[k];
        if !ks.valid {
            return 0;
        }
        ks.remaining() - u32::from(self.grant.is_some_and(|(_, gk)| gk == k))
    }

    /// The kernels that could use more SMs now (bit k).
    fn wants_now(&self) -> u16 {
        (0..self.params.sms).filter(|&k| self.wants_more(k)).fold(0, |m, k| m | 1 << k)
    }

    /// Whether some SM runs kernel `k`.
    fn running(&self, k: usize) -> bool {
        self.smst.iter().any(|e| e.state == SmState::Running && e.ksr == Some(k as u8))
    }

    /// Whether anything is under way that needs the clock (a decision, a setup, a
    /// preemption, a release or an issue pending): when not, the GPU may skip cycles. A
    /// function of registers only, and conservative (`docs/sched-framework.md`, "The clock
    /// request"): the work in flight, the SMs' needs as of the cycle before (`sm_need`), and
    /// the two clocked cycles after any activity (`act1`, `act2`), which cover whatever the
    /// SMs' needs and the registered copies of the names and "wants more" lag behind.
    pub fn busy(&self) -> bool {
        self.in_flight() || self.act1 || self.act2
    }

    /// The part of [`Framework::busy`] that counts as activity for the cycles after it.
    fn in_flight(&self) -> bool {
        self.trig
            || self.saved.is_some()
            || self.done.is_some()
            || self.dec.is_some()
            || self.app.is_some()
            || self.grant.is_some()
            || self.pick.is_some()
            || self.cmd.is_some()
            || self.ready != 0
            || self.ev.is_some()
            || self.ev_ready != 0
            || self.sm_need
            || self.dss.outputs(&DssIn::default()).busy
            || self.prio.outputs(&PrioIn::default()).busy
    }

    /// Whether some SM needs the clock, with each SM's "its kernel has work" as `had_work`
    /// holds it, under slicing its eligible kernels as `had_el` does, and `full` the SMs
    /// reporting no room: one in setup, one reserved that holds no block (its event), a running
    /// one that holds no block and whose kernel has none left (to release), or one with room
    /// whose kernel has work (to issue: under T_k with work, or under slicing with an eligible
    /// kernel, and not reported full). (A reserved SM still holding blocks waits for their
    /// completions or saves, each an input that clocks the framework; an SM with no eligible
    /// kernel waits for a quota written, a block leaving or a kernel admitted, each an input;
    /// an SM reported full needs no clock either: while the reports stay the same the
    /// framework is not clocked for them, and a report that changes is an input that clocks
    /// it. The registers' lag behind an input is covered by the two clocked cycles after it.)
    fn sm_needs(&self, had_work: u16, had_el: u16, full: u16) -> bool {
        self.smst.iter().enumerate().any(|(s, e)| match e.state {
            SmState::Setup => true,
            SmState::Reserved => e.running_tbs == 0,
            SmState::Running => {
                let k = &self.ksrt[e.ksr.unwrap() as usize];
                let hw = had_work >> s & 1 != 0;
                let room = if self.sharing() { had_el >> s & 1 != 0 } else { e.running_tbs < k.tk && hw };
                (e.running_tbs == 0 && !hw) || (room && full >> s & 1 == 0)
            }
            SmState::Idle => false,
        })
    }

    /// Bit s: SM s's kernel has work now.
    fn has_work_now(&self) -> u16 {
        self.smst.iter().enumerate().fold(0, |m, (s, e)| match e.ksr {
            Some(k) if self.ksrt[k as usize].has_work() => m | 1 << s,
            _ => m,
        })
    }
}

impl Unit for Framework {
    type In = FwIn;
    type Out = FwOut;

    /// Passed on to the policy engines (their co-simulation is timed in GPU cycles).
    fn at_cycle(&mut self, gpu_cycle: u64) {
        self.dss.at_cycle(gpu_cycle);
        self.prio.at_cycle(gpu_cycle);
    }

    fn reset(&mut self) {
        let n = self.params.sms;
        self.ksrt = vec![Ksr::default(); n];
        self.smst = vec![SmEntry::default(); n];
        self.admitted = 0;
        self.dss.reset();
        self.prio.reset();
        self.issue_ptr = 0;
        self.trig = false;
        self.dec = None;
        self.app = None;
        self.pick = None;
        self.pick_el = 0;
        self.cmd = None;
        self.grant = None;
        self.issued = None;
        self.ready = 0;
        self.last = 0;
        self.ev = None;
        self.ev_heir = None;
        self.ev_ready = 0;
        self.ev_work = 0;
        self.named = 0;
        self.wants = 0;
        self.free = Some(0);
        self.saved = None;
        self.done = None;
        self.snap = Snap::default();
        if let Some(sh) = &mut self.share {
            *sh = share::Share::new(n);
        }
        (self.had_work, self.had_el, self.sm_need, self.act1, self.act2) = (0, 0, false, false, false);
        self.cycle = 0;
    }

    fn outputs(&self, i: &FwIn) -> FwOut {
        self.comb(i).out
    }

    fn clock(&mut self, i: &FwIn) {
        // The clock request's registers, from this cycle's registers and inputs (read before
        // the cycle's combinational pass, whose engine outputs are the last looked at before
        // the engine's edge: a co-simulated engine records its cycle from them).
        let act = self.in_flight() || i.cmd.is_some() || i.tb_done.is_some() || i.tb_saved.is_some() || i.quota.is_some();
        let (sm_need, had_work) = (self.sm_needs(self.had_work, self.had_el, i.full), self.has_work_now());
        let had_el = if self.sharing() { (0..self.params.sms).fold(0u16, |m, s| m | u16::from(self.eligible(s) != 0) << s) } else { 0 };
        let c = self.comb(i);
        let n = self.params.sms;
        (self.act2, self.act1) = (self.act1, act);
        (self.sm_need, self.had_work, self.had_el) = (sm_need, had_work, had_el);
        if self.policy.uses_dss() {
            self.dss.clock(&c.dss_in);
        } else {
            self.prio.clock(&c.prio_in);
        }
        let left: Vec<u8> = (0..n).map(|s| self.left_after(s, i)).collect();
        // Completions and saves.
        // The block finished in the cycle before is counted; this cycle's is registered with
        // its kernel.
        if let Some(k) = self.done.take() {
            self.ksrt[k].done_tbs += 1;
        }
        // (the SM names the block's kernel: while each SM holds one kernel's blocks it is the
        // SM's kernel, which the GPU's driver is held to; under slicing, a kernel with a block
        // on the SM)
        if let Some(d) = i.tb_done {
            self.block_left(d.sm, d.kernel, "finished");
            self.done = Some(d.kernel as usize);
        }
        // The block saved in the cycle before enters its kernel's PTBQ; this cycle's is
        // registered with its kernel.
        if let Some((k, tb, slot)) = self.saved.take() {
            self.ksrt[k].ptbq.push_back((tb, slot));
        }
        if let Some(b) = i.tb_saved {
            self.block_left(b.sm, b.kernel, "saved");
            self.saved = Some((b.kernel as usize, b.tb, b.slot));
        }
        // Tokens.
        if let Some((s, false)) = c.event {
            let e = self.smst[s];
            let back = if e.state == SmState::Running { e.ksr } else { e.next };
            if let Some(k) = back {
                self.ksrt[k as usize].count = self.ksrt[k as usize].count.wrapping_add(1);
            }
        }
        // (a handover: the SM's token passes from its holder to its heir)
        if let Some((s, k)) = c.handover {
            let h = self.smst[s].ksr.expect("a handed-over SM has a holder") as usize;
            self.ksrt[h].count = self.ksrt[h].count.wrapping_add(1);
            self.ksrt[k].count = self.ksrt[k].count.wrapping_sub(1);
        }
        let a = c.action;
        match a.act {
            Act::None => {}
            Act::Assign => self.ksrt[a.kernel].count = self.ksrt[a.kernel].count.wrapping_sub(1),
            Act::Reserve => {
                self.ksrt[a.kernel].count = self.ksrt[a.kernel].count.wrapping_sub(1);
                self.ksrt[a.from].count = self.ksrt[a.from].count.wrapping_add(1);
            }
        }
        // Issue.
        if let Some((s, k, restore)) = c.issue {
            if let Some(sh) = &mut self.share {
                sh.res[s][k] += 1;
            }
            if restore {
                self.ksrt[k].ptbq.pop_front();
            } else {
                self.ksrt[k].next_tb += 1;
            }
        }
        // The pipeline registers.
        if let Some(s) = self.pick {
            self.issue_ptr = (s + 1) % n;
        }
        self.pick = c.pick;
        self.pick_el = c.pick_el;
        self.grant = c.grant;
        self.issued = c.issued;
        self.ready = c.ready;
        self.last = c.last;
        self.ev = c.ev_pick;
        self.ev_heir = c.ev_heir;
        self.ev_ready = c.ev_ready;
        self.ev_work = c.ev_work;
        self.named = c.named;
        self.wants = c.wants;
        // (a kernel admitted at this edge: nothing owned yet, all its blocks left; its entry was
        // invalid, so its bit is clear)
        if let (Some(k), Some(cmd)) = (c.admit, self.cmd) {
            if cmd.tbs > 0 {
                self.wants |= 1 << k;
            }
        }
        self.free = c.free_pick;
        self.dec = (c.decision.act != Act::None).then_some(c.decision);
        self.app = c.checked;
        self.trig = c.trigger;
        self.snap = c.snap;
        for k in 0..n {
            assert!(self.ksrt[k].ptbq.len() <= self.params.ptbq_entries(), "PTBQ {k} overflowed ({} entries)", self.params.ptbq_entries());
        }
        // The SMST.
        for s in 0..n {
            let e = self.smst[s];
            let mut next = SmEntry { running_tbs: left[s], ..e };
            if let Some((es, setup)) = c.event.filter(|&(es, _)| es == s) {
                debug_assert_eq!(es, s);
                next = if setup { SmEntry { state: SmState::Setup, ksr: e.next, next: None, running_tbs: 0 } } else { SmEntry::default() };
            } else if a.act == Act::Reserve && a.sm == s {
                next.state = SmState::Reserved;
                next.next = Some(a.kernel as u8);
            } else if a.act == Act::Assign && a.sm == s {
                next = SmEntry { state: SmState::Setup, ksr: Some(a.kernel as u8), next: None, running_tbs: 0 };
            } else if e.state == SmState::Setup {
                next.state = SmState::Running;
            } else if let Some((_, k)) = c.handover.filter(|&(hs, _)| hs == s) {
                next.ksr = Some(k as u8);
            }
            if c.issue.is_some_and(|(is, _, _)| is == s) {
                next.running_tbs += 1;
            }
            self.smst[s] = next;
        }
        // Quotas written (by handle, into the entry valid now), then retirement and admission
        // (an entry leaving or entering the KSRT has no quotas).
        if let Some(w) = &i.quota {
            self.write_quota(w);
        }
        if let Some(k) = c.retire {
            self.ksrt[k].valid = false;
            self.clear_quota(k);
        }
        if let (Some(k), Some(cmd)) = (c.admit, self.cmd) {
            self.ksrt[k] = Ksr {
                valid: true,
                handle: cmd.handle,
                tbs: cmd.tbs,
                next_tb: 0,
                done_tbs: 0,
                tk: cmd.tk,
                priority: cmd.priority.min(15),
                age: self.admitted as u16,
                seq: self.admitted,
                count: cmd.tokens,
                tokens: cmd.tokens,
                ptbq: VecDeque::new(),
            };
            self.admitted += 1;
            self.clear_quota(k);
        }
        // The command presented now is registered unless it was taken now.
        self.cmd = if c.out.cmd_taken { None } else { i.cmd };
        if let Err(e) = self.check_invariants() {
            panic!("framework invariant broken at the edge of cycle {}: {e}", self.cycle);
        }
        self.cycle += 1;
    }
}
