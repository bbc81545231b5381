//! The kernel scheduling framework (thesis §5.2.3; spec/scheduling-framework.md §3), as a
//! cycle-stepped reference model of the hardware: command intake, the active queue, the Kernel
//! Status Register Table (KSRT), the SM Status Table (SMST), the Preempted Thread Block Queues
//! (PTBQ), the SM driver's issue logic and the policies (FCFS, NPQ, PPQ exclusive and shared,
//! DSS, and DSS in the Equal Spatial Sharing configuration), with preemption by context switch
//! or by draining.
//!
//! One call of [`Framework::tick`] is one clock cycle. Each cycle it takes at most one kernel
//! command, one finished block and one saved block (the GPU queues the rest), and issues at
//! most one block. SMs are shared spatially: an SM runs blocks of one kernel at a time.
//! Decisions are those of `docs/sched-framework.md`: preempted blocks are issued before new
//! ones (the PTBQ is FIFO), ties go to the lowest index, a decision of a priority policy takes
//! as long as the DSS scan (N_SM + 1 cycles), setup takes one cycle.

use super::dss::Dss;
use super::prio::Prio;
use mpgpu_spec::units::sched::prio::{In as PrioIn, Out as PrioOut, MODE_FCFS, MODE_NPQ, MODE_PPQ_EXCLUSIVE, MODE_PPQ_SHARED};
use mpgpu_spec::units::sched::dss::{Act, In as DssIn, Out as DssOut};
use mpgpu_spec::units::sched::{SchedParams, SmEntry, SmState};
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
    fn uses_dss(self) -> bool {
        matches!(self, Policy::Dss | Policy::Equal)
    }
    /// The priority scan engine's mode code (DSS policies use the DSS engine instead).
    pub fn prio_mode(self) -> u8 {
        match self {
            Policy::Npq => MODE_NPQ,
            Policy::PpqExclusive => MODE_PPQ_EXCLUSIVE,
            Policy::PpqShared => MODE_PPQ_SHARED,
            _ => MODE_FCFS,
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

/// A kernel launch as a command buffer presents it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelCmd {
    /// The GPU's name for the launch.
    pub handle: usize,
    /// Thread blocks in the grid.
    pub tbs: u64,
    /// Blocks of this kernel an SM holds (the occupancy rule), T_k.
    pub tk: u32,
    pub priority: u32,
    /// DSS tokens (ignored by the priority policies). For Equal Spatial Sharing the command
    /// processor gives each process floor(N_SM / N_p) tokens, one more to the first N_SM mod N_p
    /// processes (`units::dss::equal_share_tokens`).
    pub tokens: i8,
}

/// One cycle's inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FwIn {
    pub cmd: Option<KernelCmd>,
    /// A block finished on this SM.
    pub tb_done: Option<u8>,
    /// The context of block `tb` of the SM's kernel has been saved.
    pub tb_saved: Option<(u8, u64)>,
}

/// One block to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TbIssue {
    pub sm: u8,
    pub handle: usize,
    pub tb: u64,
    /// The block comes from the PTBQ: restore its context.
    pub restore: bool,
}

/// One cycle's outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FwOut {
    pub cmd_taken: bool,
    pub issue: Option<TbIssue>,
    /// Start preempting this SM (context switch: save its blocks; drain: nothing to do).
    pub preempt: Option<u8>,
    /// This launch has finished and left the KSRT.
    pub retired: Option<usize>,
}

#[derive(Clone, Debug, Default)]
struct Ksr {
    valid: bool,
    handle: usize,
    tbs: u64,
    next_tb: u64,
    done_tbs: u64,
    tk: u32,
    priority: u32,
    /// Admission order.
    age: u64,
    count: i8,
    running_sms: u8,
    ptbq: VecDeque<u64>,
}

impl Ksr {
    fn has_work(&self) -> bool {
        self.valid && (self.next_tb < self.tbs || !self.ptbq.is_empty())
    }
    fn remaining(&self) -> u64 {
        self.tbs - self.next_tb + self.ptbq.len() as u64
    }
}

pub struct Framework {
    pub params: SchedParams,
    pub policy: Policy,
    pub mechanism: Mechanism,
    ksrt: Vec<Ksr>,
    smst: Vec<SmEntry>,
    /// KSR indices in admission order.
    active: Vec<u8>,
    admitted: u64,
    /// The DSS policy engine: the reference model, or (in a co-simulation) anything with its
    /// cycle interface, such as the RTL in the loop.
    dss: Box<dyn Unit<In = DssIn, Out = DssOut>>,
    dss_trigger: bool,
    /// The DSS engine's `busy` output of the last cycle.
    dss_busy: bool,
    /// The scan engine of the priority policies.
    prio: Box<dyn Unit<In = PrioIn, Out = PrioOut>>,
    prio_trigger: bool,
    prio_busy: bool,
    issue_ptr: usize,
    pub cycle: u64,
}

impl Framework {
    pub fn new(params: SchedParams, policy: Policy, mechanism: Mechanism) -> Framework {
        let dss: Box<dyn Unit<In = DssIn, Out = DssOut>> = Box::new(Dss::new(params.sms));
        Framework {
            params,
            policy,
            mechanism,
            ksrt: vec![Ksr::default(); params.sms],
            smst: vec![SmEntry::default(); params.sms],
            active: Vec::new(),
            admitted: 0,
            dss,
            dss_trigger: false,
            dss_busy: false,
            prio: Box::new(Prio::new(params.sms, policy.prio_mode())),
            prio_trigger: false,
            prio_busy: false,
            issue_ptr: 0,
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

    /// SMs running each active launch, by handle, in admission order.
    pub fn partition(&self) -> Vec<(usize, usize)> {
        self.active
            .iter()
            .map(|&k| (self.ksrt[k as usize].handle, self.smst.iter().filter(|e| e.state == SmState::Running && e.ksr == Some(k)).count()))
            .collect()
    }

    /// SMs each active launch owns as the policy sees it (running or setting up for it, or
    /// reserved for it and still being preempted), by handle, in admission order.
    pub fn allocation(&self) -> Vec<(usize, usize)> {
        self.active
            .iter()
            .map(|&k| {
                let n = self
                    .smst
                    .iter()
                    .filter(|e| match e.state {
                        SmState::Running | SmState::Setup => e.ksr == Some(k),
                        SmState::Reserved => e.next == Some(k),
                        SmState::Idle => false,
                    })
                    .count();
                (self.ksrt[k as usize].handle, n)
            })
            .collect()
    }

    /// Blocks waiting in each PTBQ, by handle.
    pub fn ptbq_lengths(&self) -> Vec<(usize, usize)> {
        self.active.iter().map(|&k| (self.ksrt[k as usize].handle, self.ksrt[k as usize].ptbq.len())).collect()
    }

    /// Whether anything is under way (a decision, a setup or a preemption).
    pub fn busy(&self) -> bool {
        self.dss_busy
            || self.dss_trigger
            || self.prio_busy
            || self.prio_trigger
            || self.smst.iter().any(|e| matches!(e.state, SmState::Setup | SmState::Reserved))
    }

    fn trigger(&mut self) {
        if self.policy.uses_dss() {
            self.dss_trigger = true;
        } else {
            self.prio_trigger = true;
        }
    }

    /// Gives an SM back: idle, its token returned, the policy told.
    fn release_sm(&mut self, sm: usize) {
        if let Some(k) = self.smst[sm].ksr {
            let k = &mut self.ksrt[k as usize];
            k.count = k.count.saturating_add(1);
            if self.smst[sm].state == SmState::Running {
                k.running_sms -= 1;
            }
        }
        self.smst[sm] = SmEntry::default();
        self.trigger();
    }

    fn preemption_done(&mut self, sm: usize) {
        let next = self.smst[sm].next;
        match next {
            Some(k) if self.ksrt[k as usize].has_work() => {
                self.smst[sm] = SmEntry { state: SmState::Setup, ksr: Some(k), next: None, running_tbs: 0 };
            }
            _ => {
                // The kernel it was reserved for ran out of work meanwhile: the token it paid
                // at the reservation comes back, and the SM is free.
                if let Some(k) = next {
                    let k = &mut self.ksrt[k as usize];
                    if k.valid {
                        k.count = k.count.saturating_add(1);
                    }
                }
                self.smst[sm] = SmEntry::default();
                self.trigger();
            }
        }
    }

    fn retire_if_done(&mut self, k: usize, out: &mut FwOut) {
        let e = &self.ksrt[k];
        if !e.valid || e.done_tbs < e.tbs {
            return;
        }
        assert!(e.ptbq.is_empty(), "kernel retired with preempted blocks queued");
        out.retired = Some(e.handle);
        for sm in 0..self.params.sms {
            if self.smst[sm].ksr == Some(k as u8) && self.smst[sm].state != SmState::Reserved {
                self.release_sm(sm);
            }
        }
        self.ksrt[k].valid = false;
        self.active.retain(|&a| a as usize != k);
        self.trigger();
    }

    /// One clock cycle.
    pub fn tick(&mut self, i: &FwIn) -> FwOut {
        let mut out = FwOut::default();
        let n = self.params.sms;
        // Setup finishes (SMs that entered setup in an earlier cycle).
        for sm in 0..n {
            if self.smst[sm].state == SmState::Setup {
                self.smst[sm].state = SmState::Running;
                let k = self.smst[sm].ksr.unwrap() as usize;
                self.ksrt[k].running_sms += 1;
            }
        }
        // A finished block.
        if let Some(sm) = i.tb_done {
            let sm = sm as usize;
            let k = self.smst[sm].ksr.expect("a block finished on an SM with no kernel") as usize;
            assert!(self.smst[sm].running_tbs > 0, "SM {sm} reported more finished blocks than it ran");
            self.smst[sm].running_tbs -= 1;
            self.ksrt[k].done_tbs += 1;
            if self.smst[sm].state == SmState::Running && self.smst[sm].running_tbs == 0 && !self.ksrt[k].has_work() {
                self.release_sm(sm);
            }
            self.retire_if_done(k, &mut out);
        }
        // A saved block goes to its kernel's PTBQ.
        if let Some((sm, tb)) = i.tb_saved {
            let sm = sm as usize;
            let k = self.smst[sm].ksr.expect("a block was saved on an SM with no kernel") as usize;
            self.smst[sm].running_tbs -= 1;
            self.ksrt[k].ptbq.push_back(tb);
            assert!(self.ksrt[k].ptbq.len() <= self.params.ptbq_entries(), "PTBQ overflow");
        }
        // Preemptions that have completed (every block gone), and SMs whose kernel has nothing
        // left to give them.
        for sm in 0..n {
            let e = self.smst[sm];
            if e.state == SmState::Reserved && e.running_tbs == 0 {
                self.preemption_done(sm);
            } else if e.state == SmState::Running && e.running_tbs == 0 && !self.ksrt[e.ksr.unwrap() as usize].has_work() {
                self.release_sm(sm);
            }
        }
        // Admission: a command enters the active queue (the KSRT's lowest free entry).
        if let Some(c) = i.cmd {
            if let Some(k) = (self.active.len() < n).then(|| self.ksrt.iter().position(|k| !k.valid)).flatten() {
                // (Equal Spatial Sharing tokens are per process: the command carries them.)
                let tokens = c.tokens;
                self.ksrt[k] = Ksr {
                    valid: true,
                    handle: c.handle,
                    tbs: c.tbs,
                    next_tb: 0,
                    done_tbs: 0,
                    tk: c.tk.max(1),
                    priority: c.priority,
                    age: self.admitted,
                    count: tokens,
                    running_sms: 0,
                    ptbq: VecDeque::new(),
                };
                self.admitted += 1;
                self.active.push(k as u8);
                out.cmd_taken = true;
                self.trigger();
            }
        }
        // The policy.
        if self.policy.uses_dss() {
            self.step_dss(&mut out);
        } else {
            self.step_priority(&mut out);
        }
        // Issue one block: the next running SM, round robin, with room and a kernel with work.
        for d in 0..n {
            let sm = (self.issue_ptr + d) % n;
            let e = self.smst[sm];
            if e.state != SmState::Running {
                continue;
            }
            let k = e.ksr.unwrap() as usize;
            let ks = &mut self.ksrt[k];
            if (e.running_tbs as u32) < ks.tk && ks.has_work() {
                let (tb, restore) = match ks.ptbq.pop_front() {
                    Some(tb) => (tb, true),
                    None => {
                        ks.next_tb += 1;
                        (ks.next_tb - 1, false)
                    }
                };
                self.smst[sm].running_tbs += 1;
                out.issue = Some(TbIssue { sm: sm as u8, handle: ks.handle, tb, restore });
                self.issue_ptr = (sm + 1) % n;
                break;
            }
        }
        self.cycle += 1;
        out
    }

    fn step_dss(&mut self, out: &mut FwOut) {
        // The DSS block reads the tables through its ports.
        let probe = self.dss.outputs(&Default::default());
        let (sm, k) = (self.smst[probe.addr as usize], &self.ksrt[probe.addr as usize]);
        let inp = DssIn {
            trigger: self.dss_trigger,
            sm_state: sm.state.code(),
            sm_ksr_valid: sm.ksr.is_some(),
            sm_ksr: sm.ksr.unwrap_or(0),
            k_valid: k.valid,
            k_count: k.count,
            k_has_work: k.has_work(),
            k_running: k.running_sms > 0,
            count_max: self.ksrt[probe.kmax as usize].count,
            count_min: self.ksrt[probe.kmin as usize].count,
        };
        let o = self.dss.outputs(&inp);
        self.dss.clock(&inp);
        self.dss_trigger = false;
        // Busy after the clock edge (its `busy` output depends on its registers only).
        self.dss_busy = self.dss.outputs(&DssIn::default()).busy;
        match o.act {
            Act::None => {}
            Act::Assign => {
                let (sm, k) = (o.act_sm as usize, o.act_kernel as usize);
                self.smst[sm] = SmEntry { state: SmState::Setup, ksr: Some(k as u8), next: None, running_tbs: 0 };
                self.ksrt[k].count -= 1;
            }
            Act::Reserve => {
                let (sm, k, from) = (o.act_sm as usize, o.act_kernel as usize, o.act_from as usize);
                self.reserve(sm, k, out);
                self.ksrt[from].count += 1;
                self.ksrt[k].count -= 1;
            }
        }
    }

    fn reserve(&mut self, sm: usize, k: usize, out: &mut FwOut) {
        let from = self.smst[sm].ksr.unwrap() as usize;
        self.smst[sm].state = SmState::Reserved;
        self.smst[sm].next = Some(k as u8);
        self.ksrt[from].running_sms -= 1;
        out.preempt = Some(sm as u8);
    }

    fn step_priority(&mut self, out: &mut FwOut) {
        let n = self.params.sms;
        let probe = self.prio.outputs(&PrioIn::default());
        let a = probe.addr as usize;
        let sm = self.smst[a];
        let k = &self.ksrt[a];
        let smk = sm.ksr.map(|x| &self.ksrt[x as usize]);
        let inp = PrioIn {
            trigger: self.prio_trigger,
            sm_state: sm.state.code(),
            sm_ksr_valid: sm.ksr.is_some(),
            sm_ksr: sm.ksr.unwrap_or(0),
            smk_priority: smk.map_or(0, |k| prio4(k.priority)),
            smk_age: smk.map_or(0, |k| k.age as u16),
            k_valid: k.valid,
            k_has_work: k.has_work(),
            k_priority: prio4(k.priority),
            k_age: k.age as u16,
            k_wants_more: k.valid && self.wants_more(a),
        };
        let o = self.prio.outputs(&inp);
        self.prio.clock(&inp);
        self.prio_trigger = false;
        self.prio_busy = self.prio.outputs(&PrioIn::default()).busy;
        match o.act {
            Act::None => {}
            Act::Assign => {
                let (sm, k) = (o.act_sm as usize, o.act_kernel as usize);
                debug_assert!(sm < n);
                self.smst[sm] = SmEntry { state: SmState::Setup, ksr: Some(k as u8), next: None, running_tbs: 0 };
            }
            Act::Reserve => self.reserve(o.act_sm as usize, o.act_kernel as usize, out),
        }
    }

    /// Whether kernel `k` could use more SMs than it has or is getting.
    fn wants_more(&self, k: usize) -> bool {
        let b = &self.ksrt[k];
        let have = self.smst.iter().filter(|e| (e.ksr == Some(k as u8) && e.state != SmState::Reserved) || e.next == Some(k as u8)).count() as u64;
        have < b.remaining().div_ceil(b.tk as u64)
    }
}

/// Priorities travel as 4 bits; larger ones saturate.
fn prio4(p: u32) -> u8 {
    p.min(15) as u8
}
