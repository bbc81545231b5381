//! The Dynamic Spatial Sharing policy engine, cycle by cycle, as reconstructed in
//! spec/scheduling-framework.md §4.4 (the decision in ARCHITECTURE.md; the literal Algorithm 1
//! leaves a lone kernel with no SM).
//!
//! A trigger (a kernel entered the active queue, or an SM became idle) starts a decision: a
//! counter steps through the SMST and the KSRT one entry per cycle (N_SM cycles), keeping
//! - `idle`: the lowest-index idle SM,
//! - `kmax`: the valid kernel with work left and the most tokens (ties: lowest index),
//! - `kmin`: the valid kernel running on at least one SM with the fewest tokens (ties: lowest),
//! - for every kernel, its lowest-index running SM;
//! then, in one more cycle, it acts: an idle SM always goes to `kmax` (debt allowed); otherwise,
//! if `kmax` has at least two tokens more than `kmin`, `kmin`'s lowest running SM is reserved for
//! `kmax` and a token moves from `kmax` to `kmin` (at the reservation, not again at the release).
//! After an action the engine scans again; it stops when there is nothing to do. A trigger that
//! arrives while it works sets a pending bit and causes one more decision.
//!
//! The engine reads and writes the tables it is given; the framework around it owns them, runs
//! the preemption of reserved SMs and changes SM states as blocks finish.

use mpgpu_spec::units::sched::{KsrEntry, SchedParams, SmEntry, SmState};

/// What a decision did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DssAction {
    /// An idle SM was given to a kernel (it goes through setup to running).
    Assign { sm: u8, kernel: u8 },
    /// A running SM was reserved: it is to be preempted and handed to `kernel`.
    Reserve { sm: u8, from: u8, kernel: u8 },
}

/// The engine's registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DssEngine {
    params: SchedParams,
    busy: bool,
    pending: bool,
    /// Scan position; `sms` means "decide this cycle".
    pos: usize,
    idle: Option<u8>,
    kmax: Option<(i8, u8)>,
    kmin: Option<(i8, u8)>,
    first_running: Vec<Option<u8>>,
    /// Decisions taken, for statistics.
    pub decisions: u64,
}

impl DssEngine {
    pub fn new(params: SchedParams) -> DssEngine {
        DssEngine {
            params,
            busy: false,
            pending: false,
            pos: 0,
            idle: None,
            kmax: None,
            kmin: None,
            first_running: vec![None; params.sms],
            decisions: 0,
        }
    }

    /// A kernel entered the active queue, or an SM became idle.
    pub fn trigger(&mut self) {
        if self.busy {
            self.pending = true;
        } else {
            self.start();
        }
    }

    pub fn busy(&self) -> bool {
        self.busy
    }

    fn start(&mut self) {
        self.busy = true;
        self.pos = 0;
        self.idle = None;
        self.kmax = None;
        self.kmin = None;
        self.first_running.iter_mut().for_each(|f| *f = None);
    }

    /// One clock cycle: one scan step, or the decision.
    pub fn step(&mut self, smst: &mut [SmEntry], ksrt: &mut [KsrEntry]) -> Option<DssAction> {
        if !self.busy {
            return None;
        }
        let n = self.params.sms;
        if self.pos < n {
            let i = self.pos;
            let s = smst[i];
            if s.state == SmState::Idle && self.idle.is_none() {
                self.idle = Some(i as u8);
            }
            if s.state == SmState::Running {
                if let Some(k) = s.ksr {
                    let f = &mut self.first_running[k as usize];
                    if f.is_none() {
                        *f = Some(i as u8);
                    }
                }
            }
            let k = ksrt[i];
            if k.valid && k.has_work && self.kmax.is_none_or(|(c, _)| k.count > c) {
                self.kmax = Some((k.count, i as u8));
            }
            if k.valid && k.running_sms > 0 && self.kmin.is_none_or(|(c, _)| k.count < c) {
                self.kmin = Some((k.count, i as u8));
            }
            self.pos += 1;
            return None;
        }
        // Decide.
        self.decisions += 1;
        let action = self.decide(smst, ksrt);
        if action.is_some() {
            self.start(); // loop: scan again
        } else if self.pending {
            self.pending = false;
            self.start();
        } else {
            self.busy = false;
        }
        action
    }

    fn decide(&self, smst: &mut [SmEntry], ksrt: &mut [KsrEntry]) -> Option<DssAction> {
        let (_, kmax) = self.kmax?;
        if let Some(sm) = self.idle {
            let e = &mut smst[sm as usize];
            *e = SmEntry { state: SmState::Setup, ksr: Some(kmax), next: None, running_tbs: 0 };
            ksrt[kmax as usize].count -= 1;
            return Some(DssAction::Assign { sm, kernel: kmax });
        }
        let (_, kmin) = self.kmin?;
        // Counts are read live: the scan's copies may be stale by one action of the framework.
        let (cmax, cmin) = (ksrt[kmax as usize].count, ksrt[kmin as usize].count);
        if kmin == kmax || cmax <= cmin + 1 {
            return None;
        }
        let sm = self.first_running[kmin as usize]?;
        let e = &mut smst[sm as usize];
        e.state = SmState::Reserved;
        e.next = Some(kmax);
        ksrt[kmin as usize].count += 1;
        ksrt[kmin as usize].running_sms -= 1;
        ksrt[kmax as usize].count -= 1;
        Some(DssAction::Reserve { sm, from: kmin, kernel: kmax })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A table-level model of the framework around the engine: kernels always have work, setup
    /// takes one cycle, and the preemption of a reserved SM completes `preempt_cycles` after
    /// the reservation (drain or context switch alike).
    struct Harness {
        p: SchedParams,
        smst: Vec<SmEntry>,
        ksrt: Vec<KsrEntry>,
        dss: DssEngine,
        reserved_at: Vec<u64>,
        cycle: u64,
        preempt_cycles: u64,
    }

    impl Harness {
        fn new(sms: usize, preempt_cycles: u64) -> Harness {
            let p = SchedParams::new(sms, 16).unwrap();
            Harness {
                p,
                smst: vec![SmEntry::default(); sms],
                ksrt: vec![KsrEntry::default(); sms],
                dss: DssEngine::new(p),
                reserved_at: vec![0; sms],
                cycle: 0,
                preempt_cycles,
            }
        }

        fn insert(&mut self, tokens: i8) -> u8 {
            let k = self.ksrt.iter().position(|k| !k.valid).unwrap();
            self.ksrt[k] = KsrEntry { valid: true, count: tokens, has_work: true, running_sms: 0 };
            self.dss.trigger();
            k as u8
        }

        fn tick(&mut self) {
            for i in 0..self.p.sms {
                let e = self.smst[i];
                match e.state {
                    SmState::Setup => {
                        self.smst[i].state = SmState::Running;
                        self.ksrt[e.ksr.unwrap() as usize].running_sms += 1;
                    }
                    SmState::Reserved if self.cycle >= self.reserved_at[i] + self.preempt_cycles => {
                        self.smst[i] = SmEntry { state: SmState::Setup, ksr: e.next, next: None, running_tbs: 0 };
                    }
                    _ => {}
                }
            }
            if let Some(DssAction::Reserve { sm, .. }) = self.dss.step(&mut self.smst, &mut self.ksrt) {
                self.reserved_at[sm as usize] = self.cycle;
            }
            self.cycle += 1;
        }

        fn settle(&mut self) {
            let mut quiet = 0;
            while quiet < 3 * self.p.sms {
                self.tick();
                let moving = self.dss.busy() || self.smst.iter().any(|e| matches!(e.state, SmState::Setup | SmState::Reserved));
                quiet = if moving { 0 } else { quiet + 1 };
                assert!(self.cycle < 100_000, "never settles");
            }
        }

        /// SMs per kernel, in KSR order.
        fn partition(&self, kernels: usize) -> Vec<usize> {
            (0..kernels).map(|k| self.smst.iter().filter(|e| e.state == SmState::Running && e.ksr == Some(k as u8)).count()).collect()
        }
    }

    #[test]
    fn a_lone_kernel_takes_every_sm() {
        let mut h = Harness::new(13, 5);
        h.insert(7);
        h.settle();
        assert_eq!(h.partition(1), vec![13]);
        assert_eq!(h.ksrt[0].count, 7 - 13, "the kernel is in debt for the SMs beyond its budget");
    }

    #[test]
    fn equal_spatial_sharing_on_13_sms() {
        // Thesis §5.3.4 (spec Table in §4.5): 7/6, 4/3/3/3, 3/2/2/2/2/2, 2/2/2/2/2/1/1/1.
        let expect: [(usize, Vec<usize>); 4] = [
            (2, vec![7, 6]),
            (4, vec![4, 3, 3, 3]),
            (6, vec![3, 2, 2, 2, 2, 2]),
            (8, vec![2, 2, 2, 2, 2, 1, 1, 1]),
        ];
        for (n, want) in expect {
            for preempt in [1, 40] {
                let mut h = Harness::new(13, preempt);
                for order in 0..n {
                    h.insert(equal_share_tokens(13, n, order));
                    // Kernels arrive while the previous decisions are still under way.
                    for _ in 0..7 {
                        h.tick();
                    }
                }
                h.settle();
                assert_eq!(h.partition(n), want, "{n} processes, preemption in {preempt} cycles");
                assert!(h.ksrt[..n].iter().all(|k| k.count == 0), "{n}: counts {:?}", h.ksrt.iter().map(|k| k.count).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_decision_takes_one_cycle_per_sm_plus_one() {
        let mut h = Harness::new(13, 1);
        h.insert(13);
        // Nothing happens before the scan has visited every entry.
        for _ in 0..13 {
            h.tick();
            assert!(h.smst.iter().all(|e| e.state == SmState::Idle));
        }
        h.tick();
        assert_eq!(h.smst[0].state, SmState::Setup, "the lowest idle SM goes first");
        assert_eq!(h.dss.decisions, 1);
    }

    #[test]
    fn a_difference_of_one_token_moves_nothing() {
        // The literal Algorithm 1 swaps an SM when counts differ by one; the reconstruction
        // does not.
        let mut h = Harness::new(3, 1);
        h.insert(2); // takes all 3 SMs, count -1
        h.settle();
        h.insert(0); // count 0 = -1 + 1: steady already
        h.settle();
        assert_eq!(h.partition(2), vec![3, 0]);
        assert!(h.smst.iter().all(|e| e.state == SmState::Running));
    }

    #[test]
    fn ties_go_to_the_lowest_index() {
        let mut h = Harness::new(4, 1);
        h.insert(2);
        h.insert(2);
        h.settle();
        // Both have 2 tokens: kernel 0 wins every tie while counts are equal.
        assert_eq!(h.partition(2), vec![2, 2]);
        assert_eq!(h.smst[0].ksr, Some(0));
    }
}
