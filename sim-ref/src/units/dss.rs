//! The Dynamic Spatial Sharing policy engine, cycle by cycle: Algorithm 1 of the thesis (§5.2.4)
//! as reconstructed in `docs/sched-framework.md` (the literal Algorithm 1 leaves a lone kernel
//! with no SM). Its cycle interface is `mpgpu_spec::units::sched::dss`;
//! the RTL block `rtl/src/dss.rs` implements the same interface and is checked against this
//! model every cycle.
//!
//! A trigger (a kernel entered the active queue, or an SM became idle) is latched; when the
//! engine is free it starts a decision the next cycle. A decision scans the SMST and the KSRT one
//! entry per cycle (N_SM cycles, each entry named the cycle before on `next_addr`; the control is [`ScanControl`], shared
//! with the priority engine), keeping
//! - `idle`: the lowest-index idle SM,
//! - `kmax`: the valid kernel with work left and the most tokens (ties: lowest index),
//! - `kmin`: the valid kernel running on at least one SM with the fewest tokens (ties: lowest),
//! - for every kernel, its lowest-index running SM;
//!
//! then, in one more cycle, it reads back the live token counts of `kmax` and `kmin`
//! (`count_max`, `count_min`) and registers whether `kmax` has at least two more (a cycle of its
//! own since 2026-11-24, so that the test ends in a register: `docs/fpga.md`), and in the cycle
//! after that it acts (on `act`): an idle SM always goes to `kmax` (debt allowed); otherwise, if
//! `kmax` had at least two tokens more than `kmin` in the cycle before, `kmin`'s lowest running
//! SM is reserved for `kmax`, and a token moves
//! from `kmax` to `kmin` (at the reservation, not again at the release). After an action (two cycles
//! later, `units::scan::SETTLE`), or if a trigger arrived meanwhile, it scans again; otherwise
//! it stops.
//!
//! The framework around it owns the tables and applies the actions ([`Tables::apply`] does it
//! for tests and testbenches).

use super::scan::{ScanControl, Step};
use mpgpu_spec::units::sched::dss::{Act, In, Out, MAX_SMS, STATE_IDLE, STATE_RUNNING};
use mpgpu_spec::units::sched::{KsrEntry, SmEntry, SmState};
use mpgpu_spec::Unit;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dss {
    /// Trigger latch and scan position (1..=MAX_SMS SMs scanned).
    scan: ScanControl,
    idle: Option<u8>,
    kmax: Option<(i8, u8)>,
    kmin: Option<(i8, u8)>,
    first_running: [Option<u8>; MAX_SMS],
    /// `kmax` had at least two tokens more than `kmin` (their live counts, read in the first
    /// of the two cycles between the scan and the decision).
    gap: bool,
    /// Test-only fault injection: ties for `kmax` go to the highest index (the co-simulation
    /// tests use it to show that the checker catches a wrong block).
    pub broken_tie: bool,
}

impl Dss {
    pub fn new(sms: usize) -> Dss {
        assert!((1..=MAX_SMS).contains(&sms), "the DSS block supports 1..={MAX_SMS} SMs");
        Dss { scan: ScanControl::with_hold(sms), idle: None, kmax: None, kmin: None, first_running: [None; MAX_SMS], gap: false, broken_tie: false }
    }

    /// The end of a decision: no candidates for the next scan.
    fn start(&mut self) {
        self.idle = None;
        self.kmax = None;
        self.kmin = None;
        self.first_running = [None; MAX_SMS];
        self.gap = false;
    }

    /// Scans the table entry at `p`.
    fn scan_entry(&mut self, i: &In, p: u8) {
        if i.sm_state == STATE_IDLE && self.idle.is_none() {
            self.idle = Some(p);
        }
        if i.sm_state == STATE_RUNNING && i.sm_ksr_valid {
            let f = &mut self.first_running[i.sm_ksr as usize % MAX_SMS];
            if f.is_none() {
                *f = Some(p);
            }
        }
        let better_max = |c: i8, best: i8| if self.broken_tie { c >= best } else { c > best };
        if i.k_valid && i.k_has_work && self.kmax.is_none_or(|(c, _)| better_max(i.k_count, c)) {
            self.kmax = Some((i.k_count, p));
        }
        if i.k_valid && i.k_running && self.kmin.is_none_or(|(c, _)| i.k_count < c) {
            self.kmin = Some((i.k_count, p));
        }
    }
}

impl Unit for Dss {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        let (sms, broken) = (self.scan.sms(), self.broken_tie);
        *self = Dss::new(sms);
        self.broken_tie = broken;
    }

    fn outputs(&self, _i: &In) -> Out {
        let mut o = Out {
            busy: self.scan.busy(),
            next_addr: self.scan.next_addr(),
            kmax: self.kmax.map_or(0, |k| k.1),
            kmin: self.kmin.map_or(0, |k| k.1),
            ..Out::default()
        };
        if !self.scan.deciding() {
            return o;
        }
        let Some((_, kmax)) = self.kmax else { return o };
        if let Some(sm) = self.idle {
            o.act = Act::Assign;
            o.act_sm = sm;
            o.act_kernel = kmax;
            return o;
        }
        let Some((_, kmin)) = self.kmin else { return o };
        if kmin == kmax || !self.gap {
            return o;
        }
        if let Some(sm) = self.first_running[kmin as usize] {
            o.act = Act::Reserve;
            o.act_sm = sm;
            o.act_kernel = kmax;
            o.act_from = kmin;
        }
        o
    }

    fn clock(&mut self, i: &In) {
        let o = self.outputs(i);
        // The candidates are forgotten at the end of every decision cycle, whatever it
        // decided, so a scan always starts with none (the RTL clears them from its registers,
        // not from the decision).
        let deciding = self.scan.deciding();
        if self.scan.holding() {
            self.gap = i.count_max as i16 > i.count_min as i16 + 1;
        }
        match self.scan.clock(i.trigger, o.act != Act::None) {
            Step::Scan(p) => self.scan_entry(i, p),
            Step::Start | Step::Hold => {}
        }
        if deciding {
            self.start();
        }
    }
}

/// The tables the DSS engine reads and acts on, as the framework holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tables {
    pub smst: Vec<SmEntry>,
    pub ksrt: Vec<KsrEntry>,
}


impl Tables {
    pub fn new(sms: usize) -> Tables {
        Tables { smst: vec![SmEntry::default(); sms], ksrt: vec![KsrEntry::default(); sms] }
    }

    /// The block's inputs for this cycle: the tables at `addr`, the entry it scans (what it
    /// drove on `next_addr` in the cycle before), and the live counts at the addresses it drives
    /// now (from its registers only, so they can be read from any `Out` of this cycle).
    pub fn inputs(&self, trigger: bool, addr: u8, o: &Out) -> In {
        let s = self.smst[addr as usize];
        let k = self.ksrt[addr as usize];
        In {
            trigger,
            sm_state: s.state.code(),
            sm_ksr_valid: s.ksr.is_some(),
            sm_ksr: s.ksr.unwrap_or(0),
            k_valid: k.valid,
            k_count: k.count,
            k_has_work: k.has_work,
            k_running: k.running_sms > 0,
            count_max: self.ksrt[o.kmax as usize].count,
            count_min: self.ksrt[o.kmin as usize].count,
        }
    }

    /// Applies the block's action at the clock edge.
    pub fn apply(&mut self, o: &Out) {
        match o.act {
            Act::None => {}
            Act::Assign => {
                self.smst[o.act_sm as usize] = SmEntry { state: SmState::Setup, ksr: Some(o.act_kernel), next: None, running_tbs: 0 };
                self.ksrt[o.act_kernel as usize].count -= 1;
            }
            Act::Reserve => {
                let e = &mut self.smst[o.act_sm as usize];
                e.state = SmState::Reserved;
                e.next = Some(o.act_kernel);
                let from = &mut self.ksrt[o.act_from as usize];
                from.count += 1;
                from.running_sms -= 1;
                self.ksrt[o.act_kernel as usize].count -= 1;
            }
        }
    }
}

/// Equal Spatial Sharing (thesis §5.3.4): with `procs` processes on `sms` SMs every process gets
/// floor(sms / procs) tokens, and the sms mod procs left over go, one each, to the kernels that
/// reach the active queue first. `order` is a process's arrival rank (0 = first).
pub fn equal_share_tokens(sms: usize, procs: usize, order: usize) -> i8 {
    let tc = sms / procs;
    let r = sms % procs;
    (tc + usize::from(order < r)) as i8
}

/// A table-level model of the framework around a DSS block, for tests and testbenches: kernels
/// always have work, setup takes one cycle, and a reserved SM's preemption completes
/// `preempt_cycles` after the reservation (draining or context switch alike).
pub struct Harness<U: Unit<In = In, Out = Out>> {
    pub tables: Tables,
    pub dss: U,
    pub cycle: u64,
    reserved_at: Vec<u64>,
    preempt_cycles: u64,
    trigger: bool,
    /// The entry the block scans this cycle (its `next_addr` of the cycle before).
    addr: u8,
}

impl<U: Unit<In = In, Out = Out>> Harness<U> {
    pub fn new(sms: usize, preempt_cycles: u64, dss: U) -> Self {
        Harness { tables: Tables::new(sms), dss, cycle: 0, reserved_at: vec![0; sms], preempt_cycles, trigger: false, addr: 0 }
    }

    /// A kernel with `tokens` enters the KSRT (lowest free entry) and triggers the policy.
    pub fn insert(&mut self, tokens: i8) -> u8 {
        let k = self.tables.ksrt.iter().position(|k| !k.valid).expect("KSRT full");
        self.tables.ksrt[k] = KsrEntry { valid: true, count: tokens, has_work: true, running_sms: 0 };
        self.trigger = true;
        k as u8
    }

    /// One cycle: the block's outputs, then the clock edge for the block and the framework.
    /// Returns the block's outputs of the cycle.
    pub fn tick(&mut self) -> Out {
        self.tick_with(|_, _, _| {})
    }

    /// [`Harness::tick`], calling `f(block, inputs, outputs)` after the outputs settle and
    /// before the clock edge (for waveforms).
    pub fn tick_with(&mut self, mut f: impl FnMut(&U, &In, &Out)) -> Out {
        let probe = self.dss.outputs(&In::default());
        let i = self.tables.inputs(self.trigger, self.addr, &probe);
        self.addr = probe.next_addr;
        let o = self.dss.outputs(&i);
        f(&self.dss, &i, &o);
        self.dss.clock(&i);
        self.trigger = false;
        self.tables.apply(&o);
        if o.act == Act::Reserve {
            self.reserved_at[o.act_sm as usize] = self.cycle;
        }
        // The framework: setup completes, reserved SMs finish their preemption.
        for s in 0..self.tables.smst.len() {
            let e = self.tables.smst[s];
            match e.state {
                SmState::Setup if !(o.act == Act::Assign && o.act_sm as usize == s) => {
                    self.tables.smst[s].state = SmState::Running;
                    self.tables.ksrt[e.ksr.unwrap() as usize].running_sms += 1;
                }
                SmState::Reserved if self.cycle >= self.reserved_at[s] + self.preempt_cycles => {
                    self.tables.smst[s] = SmEntry { state: SmState::Setup, ksr: e.next, next: None, running_tbs: 0 };
                }
                _ => {}
            }
        }
        self.cycle += 1;
        o
    }

    fn moving(&self, o: &Out) -> bool {
        o.busy || self.trigger || self.tables.smst.iter().any(|e| matches!(e.state, SmState::Setup | SmState::Reserved))
    }

    /// Runs until the policy and every SM are at rest.
    pub fn settle(&mut self) {
        let mut quiet = 0;
        while quiet < 3 * self.tables.smst.len() + 3 {
            let o = self.tick();
            quiet = if self.moving(&o) { 0 } else { quiet + 1 };
            assert!(self.cycle < 1_000_000, "the policy never settles");
        }
    }

    /// Running SMs per kernel, in KSR order.
    pub fn partition(&self, kernels: usize) -> Vec<usize> {
        (0..kernels).map(|k| self.tables.smst.iter().filter(|e| e.state == SmState::Running && e.ksr == Some(k as u8)).count()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn harness(sms: usize, preempt: u64) -> Harness<Dss> {
        Harness::new(sms, preempt, Dss::new(sms))
    }

    #[test]
    fn a_lone_kernel_takes_every_sm() {
        let mut h = harness(13, 5);
        h.insert(7);
        h.settle();
        assert_eq!(h.partition(1), vec![13]);
        assert_eq!(h.tables.ksrt[0].count, 7 - 13, "the kernel is in debt for the SMs beyond its budget");
    }

    #[test]
    fn equal_spatial_sharing_on_13_sms() {
        // Thesis §5.3.4 (`docs/sched-framework.md`): 7/6, 4/3/3/3, 3/2/2/2/2/2, 2/2/2/2/2/1/1/1.
        let expect: [(usize, Vec<usize>); 4] = [
            (2, vec![7, 6]),
            (4, vec![4, 3, 3, 3]),
            (6, vec![3, 2, 2, 2, 2, 2]),
            (8, vec![2, 2, 2, 2, 2, 1, 1, 1]),
        ];
        for (n, want) in expect {
            for preempt in [1, 40] {
                let mut h = harness(13, preempt);
                for order in 0..n {
                    h.insert(equal_share_tokens(13, n, order));
                    // Kernels arrive while earlier decisions are still under way.
                    for _ in 0..7 {
                        h.tick();
                    }
                }
                h.settle();
                assert_eq!(h.partition(n), want, "{n} processes, preemption in {preempt} cycles");
                assert!(h.tables.ksrt[..n].iter().all(|k| k.count == 0));
            }
        }
    }

    #[test]
    fn a_decision_takes_one_cycle_per_sm_plus_three() {
        let mut h = harness(13, 1);
        h.insert(13);
        // The trigger is latched in cycle 0; the scan runs in cycles 1..=13, the live counts
        // are read in cycle 14 and compared in cycle 15, the decision is cycle 16.
        for c in 0..16 {
            let o = h.tick();
            assert_eq!(o.act, Act::None, "cycle {c}");
            assert!(h.tables.smst.iter().all(|e| e.state == SmState::Idle));
        }
        let o = h.tick();
        assert_eq!((o.act, o.act_sm, o.act_kernel), (Act::Assign, 0, 0), "the lowest idle SM goes first");
    }

    #[test]
    fn a_difference_of_one_token_moves_nothing() {
        // The literal Algorithm 1 swaps an SM when counts differ by one; the reconstruction
        // does not.
        let mut h = harness(3, 1);
        h.insert(2); // takes all 3 SMs: count -1
        h.settle();
        h.insert(0); // 0 = -1 + 1: steady already
        h.settle();
        assert_eq!(h.partition(2), vec![3, 0]);
    }

    #[test]
    fn ties_go_to_the_lowest_index_and_the_broken_variant_differs() {
        let mut h = harness(5, 1);
        h.insert(3);
        h.insert(3);
        h.settle();
        assert_eq!(h.partition(2), vec![3, 2], "kernel 0 wins the tie for the odd SM");
        let mut b = Dss::new(5);
        b.broken_tie = true;
        let mut h = Harness::new(5, 1, b);
        h.insert(3);
        h.insert(3);
        h.settle();
        assert_eq!(h.partition(2), vec![2, 3]);
    }
}
