//! HeteroCore's steering unit as a unit (interface and cycle contract in
//! `mpgpu_spec::units::steer`, RTL `rtl/src/steer.rs`): the owner table, the profiling
//! counters per slot and SM kind, and the decision of Algorithm 2 (HeteroCore, §4.3; four
//! kernels §6.4).

use mpgpu_spec::units::steer::*;
use mpgpu_spec::Unit;

/// The unit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Steer {
    s: State,
    /// The decision taken at the window's last edge (the slots given the big SMs, and each
    /// slot's sums), out when the decision's cycles are over.
    pending: (u8, [u32; KMAX], [u32; KMAX]),
}

impl Steer {
    pub fn state(&self) -> State {
        self.s
    }
}

impl crate::slots::Hosted for Steer {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

/// One profiled kernel's inputs to the decision: its warp-instructions on its big and on its
/// small SMs in the window, its big and small SMs, and its blocks per SM on a big, a small and
/// a baseline SM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profiled {
    pub big_insts: u32,
    pub small_insts: u32,
    pub nb: u32,
    pub ns: u32,
    pub blocks: [u32; 3],
}

/// A kernel's estimated gain on big SMs as the fraction NUM / DEN (DEN >= 0), and whether it
/// runs faster on big SMs (the contract's decision, `mpgpu_spec::units::steer`).
pub fn gain(p: &Profiled) -> (i64, i64, bool) {
    let (mut b, mut s) = (p.big_insts as u64 * p.ns as u64, p.small_insts as u64 * p.nb as u64);
    let faster = b > s;
    while (b | s) >> NORM_BITS != 0 {
        b >>= 1;
        s >>= 1;
    }
    let [cb, cs, c0] = p.blocks.map(|x| x as i64 & ((1 << BLOCK_BITS) - 1));
    let (fnum, fden) = if cb > cs { ((c0 - cs).max(0).min(cb - cs), cb - cs) } else { (1, 2) };
    let (b, s) = (b as i64, s as i64);
    ((b - s) * fden, s * (fden - fnum) + b * fnum, faster)
}

/// The decision over the profiled kernels (in slot order): the indices given the big SMs.
pub fn decide(k: &[Profiled]) -> Vec<usize> {
    let g: Vec<(i64, i64, bool)> = k.iter().map(gain).collect();
    if g.iter().all(|x| x.2) {
        return Vec::new();
    }
    let mut rank = vec![0; k.len()];
    for i in 0..k.len() {
        for j in i + 1..k.len() {
            // (the later one ranks above unless the earlier one's product is strictly larger)
            if g[j].0 * g[i].1 >= g[i].0 * g[j].1 {
                rank[i] += 1;
            } else {
                rank[j] += 1;
            }
        }
    }
    (0..k.len()).filter(|&i| rank[i] < k.len() / 2).collect()
}

fn bit(m: u8, k: usize) -> bool {
    m >> k & 1 != 0
}

impl Steer {
    /// The decision from the state and the inputs at the window's last edge (the counters
    /// with that cycle's issue added): the slots given the big SMs, and each slot's sums.
    fn decision(&self, i: &In) -> (u8, [u32; KMAX], [u32; KMAX]) {
        let (mut bsum, mut ssum, mut nb, mut ns) = ([0u32; KMAX], [0u32; KMAX], [0u32; KMAX], [0u32; KMAX]);
        for s in 0..MAX_SMS {
            let o = self.s.owners[s];
            if o >> SLOT_BITS == 0 {
                continue;
            }
            let k = o as usize & (KMAX - 1);
            if i.big_sms >> s & 1 != 0 {
                (bsum[k], nb[k]) = (bsum[k] + self.s.sm_insts[s], nb[k] + 1);
            } else if i.small_sms >> s & 1 != 0 {
                (ssum[k], ns[k]) = (ssum[k] + self.s.sm_insts[s], ns[k] + 1);
            }
        }
        let slots: Vec<usize> = (0..KMAX).filter(|&k| bit(self.s.prof, k)).collect();
        let k: Vec<Profiled> = slots.iter().map(|&k| Profiled { big_insts: bsum[k], small_insts: ssum[k], nb: nb[k], ns: ns[k], blocks: [i.cb[k], i.cs[k], i.c0[k]].map(u32::from) }).collect();
        (decide(&k).into_iter().fold(0, |m, x| m | 1 << slots[x]), bsum, ssum)
    }

    /// Whether slot `k`'s blocks are short (the adaptive preemption drains them).
    fn short(&self, i: &In, k: usize) -> bool {
        if self.s.decided {
            return bit(self.s.ended, k);
        }
        bit(i.ends, k) || bit(self.s.last_valid, k) && (i.now as u64) < self.s.last_end[k] as u64 + (i.warmup & ((1 << WINDOW_BITS) - 1)) as u64
    }
}

impl Unit for Steer {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Steer::default();
    }

    fn outputs(&self, _: &In) -> Out {
        let s = &self.s;
        Out { owners: s.owners, modes: s.modes, phase: s.phase, decided: s.decided, big: s.big, ended: s.ended, big_insts: s.big_insts, small_insts: s.small_insts }
    }

    fn clock(&mut self, i: &In) {
        let old = *self;
        let s = &mut self.s;
        let wmask = (1u32 << WINDOW_BITS) - 1;
        let smask = (1u32 << SM_INST_BITS) - 1;
        // Slots.
        for k in 0..KMAX {
            if bit(i.fresh, k) {
                s.last_valid &= !(1 << k);
                s.ended &= !(1 << k);
            }
            if bit(i.ends, k) {
                s.last_valid |= 1 << k;
                s.last_end[k] = i.now;
                if old.s.phase == PHASE_WARM {
                    s.ended |= 1 << k;
                }
            }
        }
        // Load.
        if i.load {
            for sm in 0..MAX_SMS {
                let (prev, new) = (old.s.owners[sm], i.owners_in[sm] & ((1 << OWNER_BITS) - 1));
                s.modes[sm] = if new != prev && prev >> SLOT_BITS != 0 {
                    let drain = i.policy == POLICY_DRAIN || i.policy == POLICY_ADAPTIVE && old.short(i, prev as usize & (KMAX - 1));
                    if drain {
                        MODE_DRAIN
                    } else {
                        MODE_SWITCH
                    }
                } else {
                    MODE_KEEP
                };
                s.owners[sm] = new;
            }
        }
        // Phase.
        s.decided = false;
        if i.start {
            s.phase = PHASE_WARM;
            s.timer = i.warmup & wmask;
            s.prof = i.active & ((1 << KMAX) - 1);
            s.big_insts = [0; KMAX];
            s.small_insts = [0; KMAX];
            s.sm_insts = [0; MAX_SMS];
            s.ended = 0;
        } else if i.stop {
            s.phase = PHASE_IDLE;
            s.timer = 0;
        } else {
            let last = old.s.timer <= 1;
            match old.s.phase {
                PHASE_WARM if last => (s.phase, s.timer) = (PHASE_WINDOW, i.window & wmask),
                PHASE_WINDOW => {
                    for sm in 0..MAX_SMS {
                        let o = old.s.owners[sm];
                        let kind = (i.big_sms | i.small_sms) >> sm & 1 != 0;
                        if o >> SLOT_BITS != 0 && bit(old.s.prof, o as usize & (KMAX - 1)) && kind {
                            s.sm_insts[sm] = (s.sm_insts[sm] + (i.issued[sm] & ((1 << ISSUED_BITS) - 1)) as u32) & smask;
                        }
                    }
                    if last {
                        (s.phase, s.timer) = (PHASE_DECIDE, DECIDE_CYCLES);
                        // (the counters as they stand after this edge)
                        let at = Steer { s: State { owners: old.s.owners, ..*s }, pending: Default::default() };
                        self.pending = at.decision(i);
                    } else {
                        s.timer -= 1;
                    }
                }
                PHASE_DECIDE if last => {
                    (s.phase, s.timer) = (PHASE_IDLE, 0);
                    s.decided = true;
                    (s.big, s.big_insts, s.small_insts) = self.pending;
                }
                PHASE_IDLE => {}
                _ => s.timer -= 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(b: u32, s: u32, blocks: [u32; 3]) -> Profiled {
        Profiled { big_insts: b, small_insts: s, nb: 1, ns: 1, blocks }
    }

    #[test]
    fn the_gain_interpolates_the_baseline_ipc_on_blocks_per_sm() {
        // 10 blocks on a big SM, 6 on a small, 8 on the baseline: f = 1/2, IPC_base = 80,
        // gain = 40 / 80.
        let (n, d, faster) = gain(&p(100, 60, [10, 6, 8]));
        assert!(faster && n * 2 == d);
        // f = 0 (the baseline holds as many as the small SM): IPC_base = 60; f = 1: 100.
        let (n, d, _) = gain(&p(100, 60, [10, 6, 6]));
        assert_eq!(n * 3, d * 2);
        let (n, d, _) = gain(&p(100, 60, [10, 6, 10]));
        assert_eq!(n * 5, d * 2);
        // Big = small: f = 1/2.
        let (n, d, _) = gain(&p(100, 60, [4, 4, 4]));
        assert_eq!(n * 2, d);
        // Nothing issued: no gain, and not faster.
        assert_eq!(gain(&p(0, 0, [10, 6, 8])), (0, 0, false));
        // The rates count per SM: 100 insts on 2 big SMs against 60 on 1 small is 50 against 60.
        let (n, _, faster) = gain(&Profiled { nb: 2, ..p(100, 60, [10, 6, 8]) });
        assert!(!faster && n < 0);
        // Wide rates keep their ratio through the normalisation.
        let (n, d, _) = gain(&p(100 << 20, 60 << 20, [10, 6, 8]));
        assert_eq!(n * 2, d);
    }

    #[test]
    fn algorithm_2_gives_the_big_sms_to_the_larger_normalised_gain() {
        // Both faster on big SMs: no steering.
        assert!(decide(&[p(100, 60, [10, 6, 8]), p(90, 80, [10, 6, 8])]).is_empty());
        // K1 runs faster on small SMs: K0 gains.
        assert_eq!(decide(&[p(100, 60, [10, 6, 8]), p(70, 80, [10, 6, 8])]), vec![0]);
        // Equal raw losses (40): the one whose baseline holds as many blocks as the small SM
        // (f = 0, IPC_base 100) loses less per baseline IPC than the other (f = 1, 60).
        assert_eq!(decide(&[p(60, 100, [10, 6, 6]), p(60, 100, [10, 6, 10])]), vec![0]);
        assert_eq!(decide(&[p(60, 100, [10, 6, 10]), p(60, 100, [10, 6, 6])]), vec![1]);
        // A tie of the gains goes to K1 (Algorithm 2's else); a tie of one kernel's rates is
        // not faster on big SMs.
        assert_eq!(decide(&[p(60, 100, [10, 6, 8]), p(60, 100, [10, 6, 8])]), vec![1]);
        assert_eq!(decide(&[p(100, 60, [10, 6, 8]), p(60, 60, [10, 6, 8])]), vec![0]);
        // Four kernels: the two largest gains.
        assert_eq!(decide(&[p(60, 70, [10, 6, 8]), p(100, 50, [10, 6, 8]), p(50, 50, [10, 6, 8]), p(100, 60, [10, 6, 8])]), vec![1, 3]);
    }

    fn run(u: &mut Steer, i: &In, cycles: u32) {
        for _ in 0..cycles {
            u.clock(i);
        }
    }

    #[test]
    fn a_profile_counts_the_window_and_decides_after_its_budget() {
        let mut u = Steer::default();
        // SMs 0-1 big, 2-3 small; slot 0 owns 0 and 2, slot 1 owns 1 and 3.
        let base = In { warmup: 3, window: 4, big_sms: 0b0011, small_sms: 0b1100, active: 0b11, cb: [10, 10, 0, 0], cs: [6, 6, 0, 0], c0: [8, 8, 0, 0], ..In::default() };
        let mut owners = [0u8; MAX_SMS];
        owners[..4].copy_from_slice(&[4, 5, 4, 5]);
        u.clock(&In { load: true, owners_in: owners, start: true, ..base });
        assert_eq!((u.s.phase, u.s.timer), (PHASE_WARM, 3));
        // Issue in the warm-up is not counted; a block end is marked.
        let mut busy = base;
        busy.issued[..4].copy_from_slice(&[4, 1, 2, 3]);
        u.clock(&In { ends: 0b10, ..busy });
        run(&mut u, &busy, 2);
        assert_eq!((u.s.phase, u.s.timer, u.s.ended), (PHASE_WINDOW, 4, 0b10));
        run(&mut u, &busy, 4);
        assert_eq!(u.s.phase, PHASE_DECIDE);
        assert_eq!(&u.s.sm_insts[..4], &[16, 4, 8, 12]);
        run(&mut u, &base, DECIDE_CYCLES - 1);
        assert!(!u.s.decided);
        u.clock(&base);
        // Slot 0 runs faster on big SMs (16 against 8), slot 1 on small (4 against 12).
        assert_eq!((u.s.phase, u.s.decided, u.s.big), (PHASE_IDLE, true, 0b01));
        assert_eq!((u.s.big_insts, u.s.small_insts), ([16, 4, 0, 0], [8, 12, 0, 0]));
        // The decision's load: slot 0 takes SM 1 from slot 1, which ended a block in the
        // warm-up (adaptive: it drains); slot 1 takes SM 2 from slot 0 (switched).
        owners[..4].copy_from_slice(&[4, 4, 5, 5]);
        u.clock(&In { load: true, owners_in: owners, ..base });
        assert_eq!(&u.s.modes[..4], &[MODE_KEEP, MODE_DRAIN, MODE_SWITCH, MODE_KEEP]);
        assert!(!u.s.decided);
    }
}
