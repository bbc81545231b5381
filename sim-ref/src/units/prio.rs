//! The scan engine of the priority policies (FCFS, NPQ, PPQ exclusive and shared), cycle by
//! cycle. Interface: `mpgpu_spec::units::sched::prio`; the RTL block is `rtl/src/prio.rs`.
//!
//! Like the DSS engine (and with the same control, [`ScanControl`]), a latched trigger starts a
//! decision the next cycle; a decision scans the SMST and KSRT one entry per cycle (N_SM cycles)
//! and acts in one more. It keeps
//! - `idle`: the lowest-index idle SM,
//! - `top`: the highest priority of any valid kernel,
//! - `best`: the valid kernel with work that comes first: the oldest (FCFS), or the highest
//!   priority and then the oldest (NPQ, PPQ),
//! - `victim`: the running SM whose kernel comes last: lowest priority, then youngest, then
//!   lowest SM index.
//!
//! Then: nothing if there is no `best`, or (PPQ exclusive) if `best` is below `top`; else an
//! idle SM goes to `best`; else, under PPQ, if `best` could use more SMs and the victim's kernel
//! has a lower priority, the victim SM is reserved for `best`. After an action, or a trigger
//! meanwhile, it scans again.

use super::scan::{ScanControl, Step};
use mpgpu_spec::units::sched::prio::{Act, In, Out, PolicyCode, MAX_SMS, STATE_IDLE, STATE_RUNNING};
use mpgpu_spec::Unit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cand {
    index: u8,
    priority: u8,
    age: u16,
    ksr: u8,
    wants: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prio {
    /// Trigger latch and scan position (1..=MAX_SMS SMs scanned).
    scan: ScanControl,
    /// One of [`PolicyCode::PRIORITY`].
    mode: PolicyCode,
    idle: Option<u8>,
    top: Option<u8>,
    best: Option<Cand>,
    victim: Option<Cand>,
    /// Test-only fault injection: the victim is the oldest kernel's SM instead of the youngest.
    pub broken_victim: bool,
}

impl Prio {
    /// An engine scanning `sms` SMs in policy `mode` (a priority policy, not DSS).
    pub fn new(sms: usize, mode: PolicyCode) -> Prio {
        assert!((1..=MAX_SMS).contains(&sms), "the priority engine supports 1..={MAX_SMS} SMs");
        assert!(!mode.uses_dss(), "the priority engine does not run {mode:?}");
        Prio { scan: ScanControl::new(sms), mode, idle: None, top: None, best: None, victim: None, broken_victim: false }
    }

    /// The end of a decision: no candidates for the next scan.
    fn start(&mut self) {
        self.idle = None;
        self.top = None;
        self.best = None;
        self.victim = None;
    }

    /// Scans the table entries at `p`.
    fn scan_entry(&mut self, i: &In, p: u8) {
        if i.sm_state == STATE_IDLE && self.idle.is_none() {
            self.idle = Some(p);
        }
        if i.k_valid && self.top.is_none_or(|t| i.k_priority > t) {
            self.top = Some(i.k_priority);
        }
        if i.k_valid && i.k_has_work {
            let c = Cand { index: p, priority: i.k_priority, age: i.k_age, ksr: p, wants: i.k_wants_more };
            let better = match self.best {
                None => true,
                Some(b) if self.mode == PolicyCode::Fcfs => c.age < b.age,
                Some(b) => c.priority > b.priority || (c.priority == b.priority && c.age < b.age),
            };
            if better {
                self.best = Some(c);
            }
        }
        if i.sm_state == STATE_RUNNING && i.sm_ksr_valid {
            let c = Cand { index: p, priority: i.smk_priority, age: i.smk_age, ksr: i.sm_ksr, wants: false };
            let younger = |a: u16, b: u16| if self.broken_victim { a < b } else { a > b };
            let better = match self.victim {
                None => true,
                Some(v) => c.priority < v.priority || (c.priority == v.priority && younger(c.age, v.age)),
            };
            if better {
                self.victim = Some(c);
            }
        }
    }
}

impl Unit for Prio {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        let broken = self.broken_victim;
        *self = Prio::new(self.scan.sms(), self.mode);
        self.broken_victim = broken;
    }

    fn outputs(&self, _i: &In) -> Out {
        let mut o = Out { busy: self.scan.busy(), next_addr: self.scan.next_addr(), ..Out::default() };
        if !self.scan.deciding() {
            return o;
        }
        let Some(best) = self.best else { return o };
        if self.mode == PolicyCode::PpqExclusive && self.top.is_some_and(|t| best.priority < t) {
            return o;
        }
        if let Some(sm) = self.idle {
            o.act = Act::Assign;
            o.act_sm = sm;
            o.act_kernel = best.index;
            return o;
        }
        if let Some(v) = self.victim {
            if self.mode.preempts() && best.wants && v.priority < best.priority {
                o.act = Act::Reserve;
                o.act_sm = v.index;
                o.act_kernel = best.index;
                o.act_from = v.ksr;
            }
        }
        o
    }

    fn clock(&mut self, i: &In) {
        let o = self.outputs(i);
        // The candidates are forgotten at the end of every decision cycle, whatever it
        // decided, so a scan always starts with none (the RTL clears them from its registers,
        // not from the decision).
        let deciding = self.scan.deciding();
        match self.scan.clock(i.trigger, o.act != Act::None) {
            Step::Scan(p) => self.scan_entry(i, p),
            Step::Start | Step::Hold => {}
        }
        if deciding {
            self.start();
        }
    }
}
