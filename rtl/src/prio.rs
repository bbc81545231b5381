//! `Prio`: the scan engine of the priority policies (FCFS, NPQ, PPQ exclusive and shared) of the
//! kernel scheduling framework, one table entry per cycle.
//!
//! Interface: `mpgpu_spec::units::sched::prio` (reference model: `mpgpu_ref::units::prio`).
//! Same protocol as `Dss`, with the same `ScanControl` sub-block (`scan`): a latched `trigger`
//! starts a decision the next cycle; the block
//! scans entries 0..sms-1 (naming the next one on `next_addr`, read there and registered by the
//! framework) and samples the SMST entry, the KSRT entry of the kernel on that SM (`smk_*`) and
//! the KSRT entry of the same index (`k_*`); one more cycle decides `act` (1 assign idle SM,
//! 2 reserve a running SM). Latency: sms + 1 cycles per decision, two more after an action.
//! Parameters: 1..=16 SMs; `mode` one of `PolicyCode::PRIORITY` (its code: 0 FCFS, 1 NPQ,
//! 2 PPQ exclusive, 3 PPQ shared); 4-bit priorities, 16-bit admission ages.

use crate::scan::ScanControl;
use mpgpu_spec::units::sched::dss::{ACT_BITS, STATE_BITS};
use mpgpu_spec::units::sched::prio::{PolicyCode, AGE_BITS, MODE_BITS, PRIORITY_BITS};
use mpgpu_spec::units::sched::{INDEX_BITS, MAX_SMS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Bits of a candidate's compare key: its priority above its age.
const KEY_BITS: usize = PRIORITY_BITS + AGE_BITS;
// rust-hdl's Verilog generator evaluates widths in Rust, so they are the spec's constants; a
// value inside `update` (here the keys' shift) it reads as a literal, so that is spelled 16.
const _: () = assert!(AGE_BITS == 16, "update shifts the priority above the age by the literal 16");

#[derive(Clone, Debug, LogicBlock)]
pub struct Prio {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A kernel entered the active queue, an SM became idle or a kernel retired.
    pub trigger: Signal<In, Bit>,
    /// SMST[addr].state (0 idle, 1 setup, 2 running, 3 reserved).
    pub sm_state: Signal<In, Bits<STATE_BITS>>,
    /// SMST[addr].ksr is valid.
    pub sm_ksr_valid: Signal<In, Bit>,
    /// SMST[addr].ksr.
    pub sm_ksr: Signal<In, Bits<INDEX_BITS>>,
    /// KSRT[SMST[addr].ksr].priority.
    pub smk_priority: Signal<In, Bits<PRIORITY_BITS>>,
    /// KSRT[SMST[addr].ksr].age.
    pub smk_age: Signal<In, Bits<AGE_BITS>>,
    /// KSRT[addr] is valid.
    pub k_valid: Signal<In, Bit>,
    /// KSRT[addr] has blocks to issue.
    pub k_has_work: Signal<In, Bit>,
    /// KSRT[addr].priority.
    pub k_priority: Signal<In, Bits<PRIORITY_BITS>>,
    /// KSRT[addr].age.
    pub k_age: Signal<In, Bits<AGE_BITS>>,
    /// KSRT[addr] could use more SMs.
    pub k_wants_more: Signal<In, Bit>,
    /// A decision is under way.
    pub busy: Signal<Out, Bit>,
    /// The table entry scanned next cycle (0 if none); the one scanned now is the one named
    /// here in the cycle before.
    pub next_addr: Signal<Out, Bits<INDEX_BITS>>,
    /// 0 none, 1 assign, 2 reserve.
    pub act: Signal<Out, Bits<ACT_BITS>>,
    pub act_sm: Signal<Out, Bits<INDEX_BITS>>,
    pub act_kernel: Signal<Out, Bits<INDEX_BITS>>,
    pub act_from: Signal<Out, Bits<INDEX_BITS>>,
    /// Trigger latch, scan address and decision cycle.
    scan: ScanControl,
    idle_valid: Reg<Bit>,
    idle_index: Reg<Bits<INDEX_BITS>>,
    top_valid: Reg<Bit>,
    top_priority: Reg<Bits<PRIORITY_BITS>>,
    best_valid: Reg<Bit>,
    best_index: Reg<Bits<INDEX_BITS>>,
    best_priority: Reg<Bits<PRIORITY_BITS>>,
    best_age: Reg<Bits<AGE_BITS>>,
    best_wants: Reg<Bit>,
    victim_valid: Reg<Bit>,
    victim_index: Reg<Bits<INDEX_BITS>>,
    victim_priority: Reg<Bits<PRIORITY_BITS>>,
    victim_age: Reg<Bits<AGE_BITS>>,
    victim_ksr: Reg<Bits<INDEX_BITS>>,
    /// The policy's code (0..=3).
    mode: Constant<Bits<MODE_BITS>>,
    act_code: Signal<Local, Bits<ACT_BITS>>,
    better_best: Signal<Local, Bit>,
    better_victim: Signal<Local, Bit>,
    /// The candidates' compares as one unsigned compare each, on one carry chain (not a
    /// priority compare, an age compare and the logic joining them); greater is better. A
    /// victim's key is its inverted priority above its age (the age inverted with the
    /// test-only fault `broken_victim`, which makes the oldest kernel's SM the victim); a
    /// kernel's is its priority (0 in FCFS) above its inverted age.
    cand_key: Signal<Local, Bits<KEY_BITS>>,
    vic_key: Signal<Local, Bits<KEY_BITS>>,
    k_key: Signal<Local, Bits<KEY_BITS>>,
    best_key: Signal<Local, Bits<KEY_BITS>>,
    /// The inverted ages, at their own width (inverted inside the 20-bit expression, Verilog
    /// would widen them first and set the priority's bits).
    k_age_n: Signal<Local, Bits<AGE_BITS>>,
    best_age_n: Signal<Local, Bits<AGE_BITS>>,
    /// All ones with the test-only fault (the ages inverted), else zero.
    age_flip: Constant<Bits<AGE_BITS>>,
    /// The priority's weight in a kernel's key: zero in FCFS (ages only), else all ones.
    prio_mask: Constant<Bits<PRIORITY_BITS>>,
}

impl Prio {
    /// A priority engine scanning `sms` SMs (1..=16) in policy `mode` (a priority policy, not
    /// DSS). `broken_victim` is the test-only fault.
    pub fn new(sms: usize, mode: PolicyCode, broken_victim: bool) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "Prio supports 1..={MAX_SMS} SMs, not {sms}");
        assert!(PolicyCode::PRIORITY.contains(&mode), "Prio does not run {mode:?}");
        Self {
            clock: Default::default(),
            trigger: Default::default(),
            sm_state: Default::default(),
            sm_ksr_valid: Default::default(),
            sm_ksr: Default::default(),
            smk_priority: Default::default(),
            smk_age: Default::default(),
            k_valid: Default::default(),
            k_has_work: Default::default(),
            k_priority: Default::default(),
            k_age: Default::default(),
            k_wants_more: Default::default(),
            busy: Default::default(),
            next_addr: Default::default(),
            act: Default::default(),
            act_sm: Default::default(),
            act_kernel: Default::default(),
            act_from: Default::default(),
            scan: ScanControl::new(sms, false),
            idle_valid: Default::default(),
            idle_index: Default::default(),
            top_valid: Default::default(),
            top_priority: Default::default(),
            best_valid: Default::default(),
            best_index: Default::default(),
            best_priority: Default::default(),
            best_age: Default::default(),
            best_wants: Default::default(),
            victim_valid: Default::default(),
            victim_index: Default::default(),
            victim_priority: Default::default(),
            victim_age: Default::default(),
            victim_ksr: Default::default(),
            mode: Constant::new((mode.code() as u64).into()),
            act_code: Default::default(),
            better_best: Default::default(),
            better_victim: Default::default(),
            cand_key: Default::default(),
            vic_key: Default::default(),
            k_key: Default::default(),
            best_key: Default::default(),
            k_age_n: Default::default(),
            best_age_n: Default::default(),
            age_flip: Constant::new((if broken_victim { 0xffffu64 } else { 0 }).into()),
            prio_mask: Constant::new((if mode.code() == 0 { 0u64 } else { 0xf }).into()),
        }
    }

    /// Marks every input as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.trigger.connect();
        self.sm_state.connect();
        self.sm_ksr_valid.connect();
        self.sm_ksr.connect();
        self.smk_priority.connect();
        self.smk_age.connect();
        self.k_valid.connect();
        self.k_has_work.connect();
        self.k_priority.connect();
        self.k_age.connect();
        self.k_wants_more.connect();
        self.connect_all();
    }
}

impl Logic for Prio {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, idle_valid, idle_index, top_valid, top_priority, best_valid, best_index, best_priority, best_age, best_wants,
            victim_valid, victim_index, victim_priority, victim_age, victim_ksr
        );
        self.scan.clock.next = self.clock.val();
        self.scan.trigger.next = self.trigger.val();
        // Outputs.
        self.busy.next = self.scan.busy.val();
        self.next_addr.next = self.scan.next_addr.val();
        self.act_code.next = 0.into();
        self.act_sm.next = 0.into();
        self.act_kernel.next = 0.into();
        self.act_from.next = 0.into();
        if self.scan.deciding.val()
            & self.best_valid.q.val()
            & !((self.mode.val() == 2) & self.top_valid.q.val() & (self.best_priority.q.val() < self.top_priority.q.val()))
        {
            if self.idle_valid.q.val() {
                self.act_code.next = 1.into();
                self.act_sm.next = self.idle_index.q.val();
                self.act_kernel.next = self.best_index.q.val();
            } else if (self.mode.val() >= 2)
                & self.best_wants.q.val()
                & self.victim_valid.q.val()
                & (self.victim_priority.q.val() < self.best_priority.q.val())
            {
                self.act_code.next = 2.into();
                self.act_sm.next = self.victim_index.q.val();
                self.act_kernel.next = self.best_index.q.val();
                self.act_from.next = self.victim_ksr.q.val();
            }
        }
        self.act.next = self.act_code.val();
        self.scan.act.next = self.act_code.val() != 0;
        // Candidate comparisons: a kernel is better than the best so far if its priority is
        // higher (not in FCFS), or equal and it is older; an SM's kernel is a better victim if
        // its priority is lower, or equal and it is younger (older with the fault).
        self.k_age_n.next = !self.k_age.val();
        self.best_age_n.next = !self.best_age.q.val();
        self.k_key.next = (bit_cast::<KEY_BITS, PRIORITY_BITS>(self.k_priority.val() & self.prio_mask.val()) << 16) | bit_cast::<KEY_BITS, AGE_BITS>(self.k_age_n.val());
        self.best_key.next = (bit_cast::<KEY_BITS, PRIORITY_BITS>(self.best_priority.q.val() & self.prio_mask.val()) << 16) | bit_cast::<KEY_BITS, AGE_BITS>(self.best_age_n.val());
        self.better_best.next = !self.best_valid.q.val() | (self.k_key.val() > self.best_key.val());
        self.cand_key.next = (bit_cast::<KEY_BITS, PRIORITY_BITS>(!self.smk_priority.val()) << 16) | bit_cast::<KEY_BITS, AGE_BITS>(self.smk_age.val() ^ self.age_flip.val());
        self.vic_key.next = (bit_cast::<KEY_BITS, PRIORITY_BITS>(!self.victim_priority.q.val()) << 16) | bit_cast::<KEY_BITS, AGE_BITS>(self.victim_age.q.val() ^ self.age_flip.val());
        self.better_victim.next = !self.victim_valid.q.val() | (self.cand_key.val() > self.vic_key.val());
        // Scan one entry.
        if self.scan.scanning.val() {
            if (self.sm_state.val() == 0) & !self.idle_valid.q.val() {
                self.idle_valid.d.next = true;
                self.idle_index.d.next = self.scan.addr.val();
            }
            if self.k_valid.val() & (!self.top_valid.q.val() | (self.k_priority.val() > self.top_priority.q.val())) {
                self.top_valid.d.next = true;
                self.top_priority.d.next = self.k_priority.val();
            }
            if self.k_valid.val() & self.k_has_work.val() & self.better_best.val() {
                self.best_valid.d.next = true;
                self.best_index.d.next = self.scan.addr.val();
                self.best_priority.d.next = self.k_priority.val();
                self.best_age.d.next = self.k_age.val();
                self.best_wants.d.next = self.k_wants_more.val();
            }
            if (self.sm_state.val() == 2) & self.sm_ksr_valid.val() & self.better_victim.val() {
                self.victim_valid.d.next = true;
                self.victim_index.d.next = self.scan.addr.val();
                self.victim_priority.d.next = self.smk_priority.val();
                self.victim_age.d.next = self.smk_age.val();
                self.victim_ksr.d.next = self.sm_ksr.val();
            }
        }
        // The end of a decision forgets the candidates (a scan starts with none).
        if self.scan.deciding.val() {
            self.idle_valid.d.next = false;
            self.idle_index.d.next = 0.into();
            self.top_valid.d.next = false;
            self.top_priority.d.next = 0.into();
            self.best_valid.d.next = false;
            self.best_index.d.next = 0.into();
            self.best_priority.d.next = 0.into();
            self.best_age.d.next = 0.into();
            self.best_wants.d.next = false;
            self.victim_valid.d.next = false;
            self.victim_index.d.next = 0.into();
            self.victim_priority.d.next = 0.into();
            self.victim_age.d.next = 0.into();
            self.victim_ksr.d.next = 0.into();
        }
    }
}
