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
//! at a time. Ties go to the lowest index; a decision of a priority policy takes as long as the
//! DSS scan but for the DSS engine's two cycles that read and compare its candidates' live
//! counts (N_SM + 1 cycles against N_SM + 3, and four more after an action).

use super::dss::Dss;
use super::prio::Prio;
use mpgpu_spec::units::sched::prio::{In as PrioIn, Out as PrioOut};
use mpgpu_spec::units::sched::dss::{Act, In as DssIn, Out as DssOut};
use mpgpu_spec::units::sched::fw::{KsrState, Pipe, SmState as SmWire, State};
pub use mpgpu_spec::units::sched::fw::{In as FwIn, KernelCmd, Out as FwOut, TbIssue};
use mpgpu_spec::units::sched::{PolicyCode, SchedParams, SmEntry, SmState};
use mpgpu_spec::Unit;
use std::collections::VecDeque;

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
    pub fn parse(s: &str) -> Option<Mechanism> {
        match s {
            "ctxsw" => Some(Mechanism::ContextSwitch),
            "drain" => Some(Mechanism::Drain),
            _ => None,
        }
    }
}

/// The framework as the GPU holds it (its unit slot): a unit with its cycle interface, and,
/// when there is one, a view of its reference model (for the policy's reports). The slot holds
/// the model alone, the RTL alone, or the lockstep pair with the RTL in the loop.
pub trait SchedUnit: Unit<In = FwIn, Out = FwOut> {
    /// The reference model, unless the RTL runs alone.
    fn model(&self) -> Option<Box<dyn std::ops::Deref<Target = Framework> + '_>>;
    /// Whether the framework is idle after the last clock edge (`Out::busy` low): with no
    /// input, its clock may be gated.
    fn quiet(&self) -> bool {
        self.model().is_some_and(|m| !m.busy())
    }
    /// Set when a co-simulation has found the RTL and the model apart: the run stops.
    fn halted(&self) -> Option<String> {
        None
    }
}

impl SchedUnit for Framework {
    fn model(&self) -> Option<Box<dyn std::ops::Deref<Target = Framework> + '_>> {
        Some(Box::new(self))
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
    /// The round robin's pick, registered for its second stage: its SM.
    pick: Option<usize>,
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
    /// The SM the round robin picked in the cycle before (the pick's second stage).
    pick: Option<usize>,
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
    /// The clock request's registers (`busy`): each SM's "its kernel has work" (bit s), some
    /// SM's need computed from them, and activity at the last two clocked edges.
    had_work: u16,
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
            cmd: None,
            grant: None,
            issued: None,
            ready: 0,
            last: 0,
            ev: None,
            ev_ready: 0,
            ev_work: 0,
            named: 0,
            wants: 0,
            // (entry 0 is free at reset)
            free: Some(0),
            saved: None,
            done: None,
            snap: Snap::default(),
            had_work: 0,
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
    /// holds it: one in setup or reserved, a running one that holds no block and whose kernel
    /// has none left (to release), or one with room whose kernel has work (to issue).
    fn sm_needs(&self, had_work: u16) -> bool {
        self.smst.iter().enumerate().any(|(s, e)| match e.state {
            SmState::Setup | SmState::Reserved => true,
            SmState::Running => {
                let k = &self.ksrt[e.ksr.unwrap() as usize];
                let hw = had_work >> s & 1 != 0;
                (e.running_tbs == 0 && !hw) || (e.running_tbs < k.tk && hw)
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

    /// The architectural state the co-simulation compares (invalid KSRT entries read as zero).
    pub fn state(&self) -> State {
        State {
            smst: self
                .smst
                .iter()
                .map(|e| SmWire {
                    state: e.state.code(),
                    ksr_valid: e.ksr.is_some(),
                    ksr: e.ksr.unwrap_or(0),
                    next_valid: e.next.is_some(),
                    next: e.next.unwrap_or(0),
                    running_tbs: e.running_tbs,
                })
                .collect(),
            ksrt: self
                .ksrt
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    if !k.valid {
                        return KsrState::default();
                    }
                    KsrState {
                        valid: true,
                        handle: k.handle,
                        tbs: k.tbs,
                        next_tb: k.next_tb,
                        done_tbs: k.done_tbs,
                        tk: k.tk,
                        priority: k.priority,
                        age: k.age,
                        count: k.count,
                        ptbq_len: k.ptbq.len() as u16,
                        cap: (self.owned(i) as u32 * k.tk as u32) as u16,
                        rem: k.remaining(),
                    }
                })
                .collect(),
            admitted: self.admitted as u16,
            issue_ptr: self.issue_ptr as u8,
            pipe: {
                let d = self.dec.unwrap_or_default();
                let a = self.app.unwrap_or_default();
                let g = self.grant;
                Pipe {
                    trigger: self.trig,
                    dec_act: d.act.code(),
                    dec_sm: d.sm as u8,
                    dec_kernel: d.kernel as u8,
                    dec_from: d.from as u8,
                    app_act: a.act.code(),
                    app_sm: a.sm as u8,
                    app_kernel: a.kernel as u8,
                    app_from: a.from as u8,
                    grant_valid: g.is_some(),
                    grant_sm: g.map_or(0, |g| g.0 as u8),
                    grant_kernel: g.map_or(0, |g| g.1 as u8),
                    pick_valid: self.pick.is_some(),
                    pick_sm: self.pick.map_or(0, |s| s as u8),
                    cmd_valid: self.cmd.is_some(),
                    cmd_handle: self.cmd.map_or(0, |c| c.handle),
                    cmd_tbs: self.cmd.map_or(0, |c| c.tbs),
                    ev_valid: self.ev.is_some(),
                    ev_sm: self.ev.map_or(0, |e| e.0 as u8),
                    ev_setup: self.ev.is_some_and(|e| e.2),
                    free_valid: self.free.is_some(),
                    free: self.free.map_or(0, |k| k as u8),
                    ready: self.ready,
                    ev_ready: self.ev_ready,
                    ev_work: self.ev_work,
                    named: self.named,
                    wants: self.wants,
                    last: self.last,
                    saved_valid: self.saved.is_some(),
                    saved_kernel: self.saved.map_or(0, |v| v.0 as u8),
                    saved_tb: self.saved.map_or(0, |v| v.1),
                    saved_slot: self.saved.map_or(0, |v| v.2),
                    done_valid: self.done.is_some(),
                    done_kernel: self.done.map_or(0, |k| k as u8),
                }
            },
        }
    }

    /// The policy engine's decision checked this cycle (made in the cycle before and
    /// registered: `act`, SM, kernel, from; applied in the next cycle if it holds)
    /// (`Act::None` when there is none). A probe for testbenches, which steer stimulus into the
    /// cycle that applies a decision and count the corners around it; it changes nothing.
    pub fn engine_decision(&self) -> (Act, u8, u8, u8) {
        self.dec.map_or((Act::None, 0, 0, 0), |d| (d.act, d.sm as u8, d.kernel as u8, d.from as u8))
    }

    /// The policy engine's decision this cycle (from its registers; registered at the edge and
    /// checked in the next cycle) (`Act::None` when there is none). A probe for testbenches like
    /// [`Framework::engine_decision`]; it changes nothing.
    pub fn engine_act(&self) -> (Act, u8, u8, u8) {
        let (act, sm, kernel, from) = if self.policy.uses_dss() {
            let o = self.dss.outputs(&DssIn::default());
            (o.act, o.act_sm, o.act_kernel, o.act_from)
        } else {
            let o = self.prio.outputs(&PrioIn::default());
            (o.act, o.act_sm, o.act_kernel, o.act_from)
        };
        (act, sm, kernel, from)
    }

    /// The decision applied this cycle (checked in the cycle before; `Act::None` when there is
    /// none). A probe for testbenches like [`Framework::engine_decision`]; it changes nothing.
    pub fn applied_decision(&self) -> (Act, u8, u8, u8) {
        self.app.map_or((Act::None, 0, 0, 0), |d| (d.act, d.sm as u8, d.kernel as u8, d.from as u8))
    }

    /// The model's invariants, checked after every clock edge (a violation panics there with
    /// this message); `Err` names the first one broken, its kernel and the values. For every
    /// valid KSRT entry k (T_k its blocks per SM):
    /// - **occupancy**: the blocks resident on SMs that run it (running, or reserved and being
    ///   taken from it) plus the blocks in its PTBQ never exceed N_SM x T_k, and no SM holds
    ///   more than T_k of them (preempted blocks are restored before new ones are issued, so
    ///   the PTBQ only ever holds blocks that had a slot);
    /// - **blocks conserved**: every new block issued is done, resident or queued:
    ///   `next_tb == done + resident + queued`;
    /// - **tokens conserved**: `count + held == tokens`, `tokens` the DSS tokens its command
    ///   carried (for Equal Spatial Sharing its process's share) and `held` the SMs it has or
    ///   is getting (setup or running for it, or reserved for it). Every token move pairs with
    ///   a change of owner: an assignment costs the taker one for an idle SM; a reservation
    ///   costs the taker one and pays the loser one as the SM passes to the taker; a release
    ///   (or a preemption completing for a kernel with no work left) pays one back as the SM
    ///   goes idle; a preemption completing into setup moves neither. All policies move
    ///   tokens this way (the priority policies just ignore them), so it holds for all; the
    ///   count is 8-bit and compared modulo 256 as the hardware keeps it.
    ///
    /// And for every SM: an idle or setting-up SM holds no blocks.
    pub fn check_invariants(&self) -> Result<(), String> {
        const N: usize = mpgpu_spec::units::sched::MAX_SMS;
        let n = self.params.sms;
        let (mut resident, mut held) = ([0u32; N], [0u32; N]);
        for (s, e) in self.smst.iter().enumerate() {
            if matches!(e.state, SmState::Idle | SmState::Setup) && e.running_tbs != 0 {
                return Err(format!("SM {s} is {:?} with {} blocks resident", e.state, e.running_tbs));
            }
            if let Some(k) = e.ksr {
                let (k, kr) = (k as usize, &self.ksrt[k as usize]);
                resident[k] += e.running_tbs as u32;
                if kr.valid && e.running_tbs > kr.tk {
                    return Err(format!("SM {s} holds {} blocks of kernel {k} (handle {}), more than T_k = {}", e.running_tbs, kr.handle, kr.tk));
                }
            }
            let owner = match e.state {
                SmState::Running | SmState::Setup => e.ksr,
                SmState::Reserved => e.next,
                SmState::Idle => None,
            };
            if let Some(k) = owner {
                held[k as usize] += 1;
            }
        }
        for (k, e) in self.ksrt.iter().enumerate().filter(|(_, e)| e.valid) {
            // (queued: in the PTBQ, or saved in the cycle before and on its way to it)
            let queued = e.ptbq.len() as u32 + u32::from(self.saved.is_some_and(|v| v.0 == k));
            let cap = n as u32 * e.tk as u32;
            if resident[k] + queued > cap {
                return Err(format!(
                    "kernel {k} (handle {}): {} blocks resident + {queued} queued exceed N_SM x T_k = {n} x {} = {cap}",
                    e.handle, resident[k], e.tk
                ));
            }
            // (done: counted, or finished in the cycle before and counted in this one)
            let done = e.done_tbs + u32::from(self.done == Some(k));
            if e.next_tb != done + resident[k] + queued {
                return Err(format!(
                    "kernel {k} (handle {}): blocks not conserved: {} issued new != {} done + {} resident + {queued} queued",
                    e.handle, e.next_tb, e.done_tbs, resident[k]
                ));
            }
            if e.count.wrapping_add(held[k] as i8) != e.tokens {
                return Err(format!(
                    "kernel {k} (handle {}): tokens not conserved: count {} + {} SMs held != {} tokens given",
                    e.handle, e.count, held[k], e.tokens
                ));
            }
        }
        Ok(())
    }

    /// Blocks resident on SM `s` after this cycle's completions and saves.
    fn left_after(&self, s: usize, i: &FwIn) -> u8 {
        let gone = u8::from(i.tb_done == Some(s as u8)) + u8::from(i.tb_saved.is_some_and(|(x, _, _)| x == s as u8));
        self.smst[s].running_tbs.checked_sub(gone).unwrap_or_else(|| panic!("SM {s} reported more finished or saved blocks than it ran"))
    }

    /// The cycle's decisions and outputs. Since the command is registered before admission
    /// (the tenth timing round, `docs/fpga.md`) they come from the registers alone: no output
    /// depends on this cycle's inputs, which only enter registers at the edge.
    fn comb(&self, i: &FwIn) -> Comb {
        let n = self.params.sms;
        let mut c = Comb::default();
        c.out.busy = self.busy();
        c.out.issue = self.issued;
        // Retirement: the block finished in the cycle before was its kernel's last.
        if let Some(k) = self.done {
            let e = &self.ksrt[k];
            if e.valid && e.done_tbs + 1 == e.tbs {
                debug_assert!(e.ptbq.is_empty(), "kernel retired with preempted blocks queued");
                c.retire = Some(k);
                c.out.retired = Some(e.handle);
            }
        }
        // The decision checked in the cycle before is applied (`docs/sched-framework.md`).
        if let Some(a) = self.app {
            c.action = a;
            if a.act == Act::Reserve {
                c.out.preempt = Some(a.sm as u8);
            }
        }
        // The engine's decision of the cycle before is checked (from the registers) and, if it
        // holds, registered to be applied in the next cycle: its kernel has a block left after
        // the block in flight; an assignment's SM is idle; a reservation's SM still runs the
        // kernel it is taken from and no event is in flight to it. (The edge between changes
        // nothing else the check covers: the decision before was applied cycles ago, and the
        // issue and the SM event picked now leave this SM alone.)
        if let Some(d) = self.dec {
            debug_assert!(self.app.is_none(), "two decisions in flight: {:?} then {d:?}", self.app);
            let target_ok = d.kernel < n && self.left_after_flight(d.kernel) >= 1;
            let holds = d.sm < n
                && target_ok
                && match d.act {
                    Act::None => false,
                    Act::Assign => self.smst[d.sm].state == SmState::Idle,
                    Act::Reserve => {
                        self.smst[d.sm].state == SmState::Running
                            && self.smst[d.sm].ksr == Some(d.from as u8)
                            && self.ev.is_none_or(|(es, _, _)| es != d.sm)
                    }
                };
            if holds {
                c.checked = Some(d);
            }
        }
        // The SM event picked in the cycle before is applied: both its stages left out the SMs
        // an edge between could change, so its SM is in the state it was picked in.
        if let Some((s, st, setup)) = self.ev {
            assert!(self.smst[s].state == st, "the event picked for SM {s} ({st:?}) no longer holds: {:?}", self.smst[s]);
            c.event = Some((s, setup));
        }
        // The SMs the edge ahead may change (the SM issued to at it, the SM a reservation names,
        // registered or applied at it, the SM of the event in flight) or the one after it (the
        // SM of the pick in its second stage): the SM event's and the issue's stages leave them
        // out (`docs/sched-framework.md`).
        let changing = |s: usize| {
            self.grant.is_some_and(|(gs, _)| gs == s)
                || self.pick == Some(s)
                || self.dec.is_some_and(|a| a.act == Act::Reserve && a.sm == s)
                || self.app.is_some_and(|a| a.act == Act::Reserve && a.sm == s)
                || self.ev.is_some_and(|(es, _, _)| es == s)
        };
        // The SM event for the next cycle: the lowest-index SM found with an event in the cycle
        // before, not changing now; a reserved one goes to setup if its next kernel had work
        // when it was found (registered with it: `docs/sched-framework.md`, item 3).
        for s in 0..n {
            if self.ev_ready >> s & 1 == 0 || changing(s) {
                continue;
            }
            let e = self.smst[s];
            c.ev_pick = match e.state {
                SmState::Running => Some((s, e.state, false)),
                SmState::Reserved => Some((s, e.state, self.ev_work >> s & 1 != 0)),
                _ => unreachable!("SM {s} was found with an event but is {:?}", e.state),
            };
            break;
        }
        // The SMs with an event, from the registers, for the next cycle's pick: no blocks, and
        // running a kernel with no work (release) or reserved (its preemption is complete),
        // not changing now.
        for s in 0..n {
            let e = self.smst[s];
            if e.running_tbs != 0 || changing(s) {
                continue;
            }
            let event = match e.state {
                SmState::Running => !self.ksrt[e.ksr.unwrap() as usize].has_work(),
                SmState::Reserved => true,
                _ => false,
            };
            if event {
                c.ev_ready |= 1 << s;
                if e.state == SmState::Reserved && e.next.is_some_and(|k| self.ksrt[k as usize].has_work()) {
                    c.ev_work |= 1 << s;
                }
            }
        }
        // Admission of the command registered in the cycle before (the GPU still presents it)
        // into the entry picked in the cycle before (the lowest that was free and that no SM
        // named), if it is still free (a command may have entered it at the edge between; an
        // SM names only valid entries, so one free then is not named now). The entry for the
        // next cycle, from the registers.
        if self.cmd.is_some() {
            c.admit = self.free.filter(|&k| !self.ksrt[k].valid);
            c.out.cmd_taken = c.admit.is_some();
        }
        // (`named`: the entries some SM named in the cycle before; an entry named now but not
        // then is valid now, so not free either)
        c.free_pick = (0..n).find(|&k| !self.ksrt[k].valid && self.named >> k & 1 == 0);
        c.named = self.named_now();
        c.wants = self.wants_now();
        // The engine's trigger, registered (it sees it next cycle): a kernel retires or is
        // admitted, or an SM goes idle. (After an action the engine waits for it to be applied
        // before it scans again, `units::scan`.)
        c.trigger = c.retire.is_some() || c.admit.is_some() || matches!(c.event, Some((_, false)));
        // The policy engine, on the table reads of the cycle before (and the live counts of its
        // candidates); its decision is registered. The reads for the next cycle are taken at the
        // address it scans then.
        let (o, next) = if self.policy.uses_dss() {
            let probe = self.dss.outputs(&DssIn::default());
            c.dss_in = DssIn {
                trigger: self.trig,
                count_max: self.ksrt[probe.kmax as usize].count,
                count_min: self.ksrt[probe.kmin as usize].count,
                ..self.snap.dss
            };
            let o = self.dss.outputs(&c.dss_in);
            ((o.act, o.act_sm, o.act_kernel, o.act_from), probe.next_addr)
        } else {
            let probe = self.prio.outputs(&PrioIn::default());
            c.prio_in = PrioIn { trigger: self.trig, ..self.snap.prio };
            let o = self.prio.outputs(&c.prio_in);
            ((o.act, o.act_sm, o.act_kernel, o.act_from), probe.next_addr)
        };
        c.decision = Action { act: o.0, sm: o.1 as usize, kernel: o.2 as usize, from: o.3 as usize };
        c.snap = self.read_tables(next as usize);
        // Issue: the pick of the cycle before. Its SM still runs its kernel with room and the
        // kernel still has work (the pick ruled out everything that could change that at the
        // edge between). The head of its PTBQ first, else its next new block.
        if let Some((s, k)) = self.grant {
            let (e, ks) = (self.smst[s], &self.ksrt[k]);
            assert!(
                e.state == SmState::Running && e.ksr == Some(k as u8) && e.running_tbs < ks.tk && ks.has_work(),
                "the issue picked for SM {s} (kernel {k}) no longer holds: {e:?}"
            );
            let (tb, restore, slot) = match ks.ptbq.front() {
                Some(&(tb, slot)) => (tb, true, slot),
                None => (ks.next_tb, false, 0),
            };
            c.issue = Some((s, k, restore));
            c.issued = Some(TbIssue { sm: s as u8, handle: ks.handle, tb, restore, slot });
        }
        // The issue's two stages (`docs/sched-framework.md`), which leave out the changing SMs
        // too.
        // The pick's second stage: the SM picked in the cycle before, with its kernel, for the
        // next cycle's issue, unless the registered decision reserves that SM (it was decided
        // as the SM was picked, and would be applied at the edge that issues to it). (The
        // pick left out every other change up to that edge: the SMs the edge ahead changed
        // then, and the SMs whose changes were registered then; the SM event's first stage
        // never finds a picked SM, whose kernel had work.)
        if let Some(s) = self.pick {
            if !self.dec.is_some_and(|a| a.act == Act::Reserve && a.sm == s) {
                c.grant = Some((s, self.smst[s].ksr.expect("a picked SM runs a kernel") as usize));
            }
        }
        // The round robin's pick, among the SMs found ready in the cycle before, unless a pick
        // is in its second stage (one every other cycle at most): not one the edge ahead
        // changes, and not one whose kernel had under two blocks left while a block is in
        // flight (it may be that kernel's last).
        for d in 0..n {
            let s = (self.issue_ptr + d) % n;
            if self.pick.is_some() || self.ready >> s & 1 == 0 || changing(s) || (self.last >> s & 1 == 1 && self.grant.is_some()) {
                continue;
            }
            c.pick = Some(s);
            break;
        }
        // The SMs ready for the pick of the next cycle, from the registers: running with room
        // (under T_k, and not reported full by the SM), not changed by the edge ahead, and with
        // a kernel that has a block left after the block in flight (`last`: under two left
        // then).
        for s in 0..n {
            let e = self.smst[s];
            if e.state != SmState::Running || changing(s) || i.full >> s & 1 != 0 {
                continue;
            }
            let k = e.ksr.unwrap() as usize;
            let left = self.left_after_flight(k);
            if e.running_tbs < self.ksrt[k].tk && left >= 1 {
                c.ready |= 1 << s;
                if left < 2 {
                    c.last |= 1 << s;
                }
            }
        }
        c
    }

    /// The table inputs of the policy engine in use for entry `a`, from the tables as they are
    /// now (the other engine's stay at their defaults: it never scans).
    fn read_tables(&self, a: usize) -> Snap {
        let (sm, k) = (self.smst[a], &self.ksrt[a]);
        if self.policy.uses_dss() {
            let dss = DssIn {
                sm_state: sm.state.code(),
                sm_ksr_valid: sm.ksr.is_some(),
                sm_ksr: sm.ksr.unwrap_or(0),
                k_valid: k.valid,
                k_count: k.count,
                k_has_work: k.has_work(),
                k_running: self.running(a),
                ..DssIn::default()
            };
            return Snap { dss, ..Snap::default() };
        }
        let smk = sm.ksr.map(|x| &self.ksrt[x as usize]);
        let prio = PrioIn {
            sm_state: sm.state.code(),
            sm_ksr_valid: sm.ksr.is_some(),
            sm_ksr: sm.ksr.unwrap_or(0),
            smk_priority: smk.map_or(0, |k| k.priority),
            smk_age: smk.map_or(0, |k| k.age),
            k_valid: k.valid,
            k_has_work: k.has_work(),
            k_priority: k.priority,
            k_age: k.age,
            k_wants_more: self.wants >> a & 1 == 1,
            ..PrioIn::default()
        };
        Snap { prio, ..Snap::default() }
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
        self.cmd = None;
        self.grant = None;
        self.issued = None;
        self.ready = 0;
        self.last = 0;
        self.ev = None;
        self.ev_ready = 0;
        self.ev_work = 0;
        self.named = 0;
        self.wants = 0;
        self.free = Some(0);
        self.saved = None;
        self.done = None;
        self.snap = Snap::default();
        self.cycle = 0;
    }

    fn outputs(&self, i: &FwIn) -> FwOut {
        self.comb(i).out
    }

    fn clock(&mut self, i: &FwIn) {
        // The clock request's registers, from this cycle's registers and inputs (read before
        // the cycle's combinational pass, whose engine outputs are the last looked at before
        // the engine's edge: a co-simulated engine records its cycle from them).
        let act = self.in_flight() || i.cmd.is_some() || i.tb_done.is_some() || i.tb_saved.is_some();
        let (sm_need, had_work) = (self.sm_needs(self.had_work), self.has_work_now());
        let c = self.comb(i);
        let n = self.params.sms;
        (self.act2, self.act1) = (self.act1, act);
        (self.sm_need, self.had_work) = (sm_need, had_work);
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
        if let Some(s) = i.tb_done {
            self.done = Some(self.smst[s as usize].ksr.expect("a block finished on an SM with no kernel") as usize);
        }
        // The block saved in the cycle before enters its kernel's PTBQ; this cycle's is
        // registered with its kernel.
        if let Some((k, tb, slot)) = self.saved.take() {
            self.ksrt[k].ptbq.push_back((tb, slot));
        }
        if let Some((s, tb, slot)) = i.tb_saved {
            let k = self.smst[s as usize].ksr.expect("a block was saved on an SM with no kernel") as usize;
            self.saved = Some((k, tb, slot));
        }
        // Tokens.
        if let Some((s, false)) = c.event {
            let e = self.smst[s];
            let back = if e.state == SmState::Running { e.ksr } else { e.next };
            if let Some(k) = back {
                self.ksrt[k as usize].count = self.ksrt[k as usize].count.wrapping_add(1);
            }
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
        if let Some((_, k, restore)) = c.issue {
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
        self.grant = c.grant;
        self.issued = c.issued;
        self.ready = c.ready;
        self.last = c.last;
        self.ev = c.ev_pick;
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
            }
            if c.issue.is_some_and(|(is, _, _)| is == s) {
                next.running_tbs += 1;
            }
            self.smst[s] = next;
        }
        // Retirement and admission.
        if let Some(k) = c.retire {
            self.ksrt[k].valid = false;
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
        }
        // The command presented now is registered unless it was taken now.
        self.cmd = if c.out.cmd_taken { None } else { i.cmd };
        if let Err(e) = self.check_invariants() {
            panic!("framework invariant broken at the edge of cycle {}: {e}", self.cycle);
        }
        self.cycle += 1;
    }
}
