//! Warped-Slicer's water-filling unit as a unit (interface and cycle behaviour
//! `mpgpu_spec::units::wf`, RTL `rtl/src/wf/`): the profiling window, Eq. 4 scaling, the
//! staircase, normalisation and Algorithm 1's loop, one step per cycle.

use mpgpu_spec::units::wf::{
    phase, times, In, Out, State, INST_BITS, KMAX, NEED_BITS, NMAX, Q_BITS, RES, RES_BITS, SCORE_BITS, TABLE, WINDOW_BITS,
};
use mpgpu_spec::Unit;

fn mask(bits: usize) -> u64 {
    (1u64 << bits) - 1
}

/// The water-filling unit for `sms` SMs.
#[derive(Clone, Debug)]
pub struct Wf {
    sms: u8,
    s: State,
    /// Selects on a tie at Select, in order (for tests that predict where a broken tie-break
    /// shows): the cycle, the tied kernels' mask.
    pub ties: Vec<(u64, u8)>,
    cycle: u64,
    /// The GPU cycle of the coming edge, when the GPU says (`Unit::at_cycle`): ties are
    /// dated by it then.
    gpu_cycle: Option<u64>,
}

impl Wf {
    pub fn new(sms: usize) -> Wf {
        assert!((1..=mpgpu_spec::units::wf::MAX_SMS).contains(&sms), "a water-filling unit for {sms} SMs");
        let mut w = Wf { sms: sms as u8, s: State::default(), ties: Vec::new(), cycle: 0, gpu_cycle: None };
        w.reset();
        w
    }

    pub fn state(&self) -> State {
        self.s.clone()
    }

    /// Whether SM data (`sm_k`, `sm_j`) names a profiling SM of this decision.
    fn profiling(&self, i: &In) -> bool {
        let j = i.sm_j & 31;
        (1..=NMAX as u8).contains(&j) && (i.sm_k & 3) < self.s.kernels
    }

    /// Kernel `k`'s request, masked to the port's width.
    fn req(i: &In) -> [u32; RES] {
        i.k_req.map(|x| x & mask(RES_BITS) as u32)
    }

    fn sample(&mut self, i: &In) {
        let s = &mut self.s;
        s.kernels = (i.kernels & 7).clamp(1, KMAX as u8);
        s.last = i.last;
        s.window = i.window.max(1);
        s.pct = i.fallback_pct;
        // (kept as delay - 2: the cycles `since` must reach)
        s.delay = i.delay.saturating_sub(2);
        s.total = i.total.map(|x| x & mask(RES_BITS) as u32);
        s.phase = phase::WINDOW;
        s.wcount = 0;
    }

    /// After kernel `k`'s staircase and normalisation: the next kernel's Build, or Init.
    fn next_kernel(&mut self) {
        let s = &mut self.s;
        s.top = 0;
        s.j = 0;
        s.sub = 0;
        if s.k == s.kernels - 1 {
            s.phase = phase::INIT;
            s.k = 0;
        } else {
            s.k += 1;
            s.phase = phase::BUILD;
        }
    }

    /// Select's choice: the kernel not Full with the lowest current Qn (strict: the lowest
    /// index on a tie), and the kernels tied with it.
    fn select(&self) -> Option<(usize, u8)> {
        let s = &self.s;
        let mut best: Option<usize> = None;
        for k in 0..s.kernels as usize {
            if s.full >> k & 1 == 0 && best.is_none_or(|b| s.cur_q[k] < s.cur_q[b]) {
                best = Some(k);
            }
        }
        best.map(|b| {
            let tied = (0..s.kernels as usize).filter(|&k| s.full >> k & 1 == 0 && s.cur_q[k] == s.cur_q[b]).fold(0u8, |m, k| m | 1 << k);
            (b, tied)
        })
    }
}

impl crate::slots::Hosted for Wf {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

impl Unit for Wf {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        self.s = State { score: vec![0; TABLE], m: vec![0; TABLE], qn: vec![0; TABLE], ..State::default() };
        self.ties.clear();
        self.cycle = 0;
    }

    fn outputs(&self, _: &In) -> Out {
        let s = &self.s;
        let win = s.phase == phase::WINDOW;
        Out {
            busy: s.phase != phase::IDLE,
            round_wait: s.phase == phase::ROUND_WAIT,
            win_run: win,
            win_first: win && s.wcount == 0,
            win_last: win && s.wcount == s.window - 1,
            rd_sm: if matches!(s.phase, phase::SUM | phase::COLLECT) { s.sm } else { 0 },
            rd_k: match s.phase {
                phase::INIT => s.k,
                phase::READ | phase::MUL => s.sel,
                _ => 0,
            },
            done: s.done,
            quota: s.quota,
            spatial: s.spatial,
        }
    }

    fn at_cycle(&mut self, gpu_cycle: u64) {
        self.gpu_cycle = Some(gpu_cycle);
    }

    fn clock(&mut self, i: &In) {
        self.cycle += 1;
        let sms = self.sms;
        let prof = self.profiling(i);
        // (the comparator of the first design, now checking the scan in debug builds only)
        let sel = if cfg!(debug_assertions) && self.s.phase == phase::SELECT { self.select() } else { None };
        // The multiplier: its operands are registers, its product too (every cycle).
        let mp = (self.s.ma & 0xFFFF) as u64 * (self.s.mb & 0xFFFF) as u64;
        let s = &mut self.s;
        let ph = s.phase;
        s.done = false;
        // (this cycle's reads see the product registered at the last edge)
        let pr = s.pr;
        // The fit check registers every cycle: Init and Fit act on the last edge's.
        let fit_prev = s.fit;
        s.fit = (0..RES).all(|c| s.rl[c] >= s.need[c]);
        // The count times the request registers every cycle too: need takes it a cycle later.
        let prod_prev = s.prod;
        s.prod = Self::req(i).map(|x| times(x, s.cnt) & mask(NEED_BITS) as u32);
        s.pr = mp;
        let since = s.since;
        if ph != phase::IDLE {
            s.since = if ph == phase::WINDOW && s.wcount == s.window - 1 { 0 } else { s.since.saturating_add(1) };
        }
        match ph {
            phase::IDLE | phase::ROUND_WAIT => {
                if i.start {
                    if ph == phase::IDLE {
                        s.valid = 0;
                        s.len = [0; KMAX];
                        s.t = [0; KMAX];
                        s.g = [0; KMAX];
                        s.cur_q = [0; KMAX];
                        s.full = 0;
                        s.over = false;
                    }
                    self.sample(i);
                }
            }
            phase::WINDOW => {
                if s.wcount == s.window - 1 {
                    s.phase = phase::SUM;
                    s.sm = 0;
                    s.n = 0;
                    s.a = 0;
                } else {
                    s.wcount += 1;
                }
            }
            phase::SUM => {
                if prof {
                    s.n += 1;
                    s.a += (i.sm_j & 31) as u16;
                }
                if s.sm == sms - 1 {
                    s.phase = phase::SCALE;
                } else {
                    s.sm += 1;
                }
            }
            phase::SCALE => {
                // The multiplier: operands in registers (`ma`, `mb`), the product registered
                // (`pr`): a product is read two cycles after its operands are set.
                match s.sub {
                    0 => (s.ma, s.mb) = (s.window as u32, s.a as u32),
                    1 => {}
                    _ => {
                        s.wa = pr as u32;
                        s.phase = phase::COLLECT;
                        s.sm = 0;
                        s.sub = 0;
                    }
                }
                if s.phase == phase::SCALE {
                    s.sub += 1;
                }
            }
            phase::COLLECT => {
                let insts = i.sm_insts as u64 & mask(INST_BITS);
                let (i0, i1) = ((insts & 0xFFFF) as u32, (insts >> 16) as u32);
                let (f0, f1) = (s.f & 0xFFFF, s.f >> 16);
                let mut advance = !prof;
                if prof {
                    match s.sub {
                        0 => (s.ma, s.mb) = (s.n as u32, (i.sm_j & 31) as u32),
                        2 => {
                            let nj = pr as u16;
                            s.dneg = nj < s.a;
                            s.dmag = nj.abs_diff(s.a);
                        }
                        3 => (s.ma, s.mb) = (i.sm_stalls & mask(WINDOW_BITS) as u32, s.dmag as u32),
                        5 => {
                            let p = pr as u32;
                            s.f = if s.dneg { s.wa.saturating_sub(p) } else { s.wa + p };
                        }
                        6 => (s.ma, s.mb) = (i0, f0),
                        7 => (s.ma, s.mb) = (i0, f1),
                        8 => {
                            s.acc = pr;
                            (s.ma, s.mb) = (i1, f0);
                        }
                        9 => {
                            s.acc += pr << 16;
                            (s.ma, s.mb) = (i1, f1);
                        }
                        10 => s.acc += pr << 16,
                        11 => {
                            let score = (s.acc + (pr << 32)) & mask(SCORE_BITS);
                            let at = (i.sm_k & 3) as usize * NMAX + (i.sm_j & 31) as usize - 1;
                            s.score[at] = score;
                            s.valid |= 1 << at;
                            advance = true;
                        }
                        _ => {}
                    }
                    s.sub += 1;
                }
                if advance {
                    s.sub = 0;
                    if s.sm == sms - 1 {
                        if s.last {
                            s.phase = phase::BUILD;
                            s.k = 0;
                            s.j = 0;
                            s.top = 0;
                        } else {
                            s.phase = phase::ROUND_WAIT;
                        }
                    } else {
                        s.sm += 1;
                    }
                }
            }
            phase::BUILD => {
                // Kernel k's staircase, two cycles per count (the score read, then compared),
                // then (Norm) its normalisation, then the next kernel's.
                let k = s.k as usize;
                if s.sub == 0 {
                    let at = k * NMAX + s.j as usize;
                    s.acc = if s.valid >> at & 1 != 0 { s.score[at] } else { 0 };
                    s.sub = 1;
                } else {
                    let v = s.acc;
                    let len = s.len[k];
                    if v > s.top {
                        s.top = v;
                        let to = k * NMAX + len as usize;
                        s.score[to] = v;
                        s.m[to] = s.j as u64 + 1;
                        s.len[k] = len + 1;
                    }
                    s.sub = 0;
                    if s.j as usize == NMAX - 1 {
                        // (Norm next: `top` is the peak, the staircase's last step)
                        s.j = 0;
                        s.phase = phase::NORM;
                        s.sub = 1;
                    } else {
                        s.j += 1;
                    }
                }
            }
            phase::NORM => {
                let k = s.k as usize;
                if s.len[k] == 0 {
                    // (no staircase: the kernel never scored)
                    self.next_kernel();
                } else if s.sub == 1 {
                    s.acc = s.score[k * NMAX + s.j as usize];
                    s.q = 0;
                    s.sub = 2;
                } else {
                    let take = s.acc >= s.top;
                    if take {
                        s.acc -= s.top;
                    }
                    s.q = (s.q << 1 | take as u32) & mask(Q_BITS) as u32;
                    s.acc = (s.acc << 1) & mask(SCORE_BITS + 1);
                    if s.sub == 18 {
                        s.qn[k * NMAX + s.j as usize] = s.q as u64;
                        if s.j + 1 == s.len[k] {
                            self.next_kernel();
                        } else {
                            s.j += 1;
                            s.sub = 1;
                        }
                    } else {
                        s.sub += 1;
                    }
                }
            }
            phase::INIT => {
                let k = s.k as usize;
                match s.sub {
                    0 => {
                        let t0 = if s.len[k] > 0 { s.m[k * NMAX] as u8 } else { 1 };
                        s.t[k] = t0;
                        s.g[k] = 0;
                        s.cur_q[k] = if s.len[k] > 0 { s.qn[k * NMAX] as u32 } else { 0 };
                        s.cnt = t0;
                        if k == 0 {
                            // (R_L starts from the SM's resources)
                            s.rl = s.total;
                        }
                        s.sub = 1;
                    }
                    // (the product registers)
                    1 => s.sub = 2,
                    2 => {
                        s.need = prod_prev;
                        s.sub = 3;
                    }
                    // (the fit check registers)
                    3 => s.sub = 4,
                    _ => {
                        let fits = fit_prev;
                        if fits {
                            s.rl = std::array::from_fn(|c| s.rl[c] - s.need[c]);
                        }
                        s.over |= !fits;
                        s.sub = 0;
                        if s.k == s.kernels - 1 {
                            s.phase = if s.over { phase::FINAL } else { phase::SELECT };
                            s.res_spatial = s.over;
                            s.k = 0;
                        } else {
                            s.k += 1;
                        }
                    }
                }
            }
            phase::SELECT => {
                // One kernel per cycle (`k`): the lowest current Qn among the kernels not Full,
                // strict `<` (the lowest index wins a tie).
                let k = s.k as usize;
                let first = k == 0;
                let cand = k < s.kernels as usize && s.full >> k & 1 == 0;
                let found = !first && s.found;
                if cand && found && s.cur_q[k] == s.bq {
                    self.ties.push((self.gpu_cycle.unwrap_or(self.cycle), 1 << s.sel | 1 << k));
                }
                let better = cand && (!found || s.cur_q[k] < s.bq);
                if better {
                    s.sel = k as u8;
                    s.bq = s.cur_q[k];
                }
                s.found = better || found;
                if s.k == s.kernels - 1 {
                    debug_assert_eq!(sel.map(|x| x.0 as u8), s.found.then_some(s.sel));
                    s.k = 0;
                    if s.found {
                        s.phase = phase::READ;
                    } else {
                        s.phase = phase::FINAL;
                        s.sub = 0;
                        s.res_spatial = s.over;
                    }
                } else {
                    s.k += 1;
                }
            }
            phase::READ => {
                // (a kernel at its peak is marked Full instead)
                let k = s.sel as usize;
                if s.g[k] + 1 >= s.len[k] {
                    s.full |= 1 << k;
                    s.phase = phase::SELECT;
                    s.k = 0;
                } else {
                    let at = k * NMAX + s.g[k] as usize + 1;
                    s.m_next = s.m[at] as u8;
                    s.q_next = s.qn[at] as u32;
                    s.phase = phase::MUL;
                    s.sub = 0;
                }
            }
            phase::MUL => {
                // dT, then dT x R.
                if s.sub == 0 {
                    s.cnt = s.m_next.wrapping_sub(s.t[s.sel as usize]) & 31;
                    s.sub = 1;
                } else if s.sub == 1 {
                    // (the product registers)
                    s.sub = 2;
                } else {
                    s.need = prod_prev;
                    s.sub = 0;
                    s.phase = phase::FIT;
                }
            }
            phase::FIT if s.sub == 0 => s.sub = 1,
            phase::FIT => {
                let k = s.sel as usize;
                s.sub = 0;
                if fit_prev {
                    for c in 0..RES {
                        s.rl[c] -= s.need[c];
                    }
                    s.g[k] += 1;
                    s.t[k] = s.m_next;
                    s.cur_q[k] = s.q_next;
                } else {
                    s.full |= 1 << k;
                }
                s.phase = phase::SELECT;
                s.k = 0;
            }
            phase::FINAL => {
                // Three cycles per kernel: 100 K and Qn's low 16 bits into the multiplier, the
                // product, then it (2^16 x 100 K for Qn = 2^16) against pct x 2^16.
                let hk = 100 * s.kernels as u32;
                match s.sub {
                    0 => {
                        let q = s.cur_q[s.k as usize];
                        (s.ma, s.mb) = (q & 0xFFFF, hk);
                        s.qhi = q >> 16 & 1 != 0;
                        s.sub = 1;
                    }
                    1 => s.sub = 2,
                    _ => {
                        let v = if s.qhi { (hk as u64) << 16 } else { pr };
                        if v < (s.pct as u64) << 16 {
                            s.res_spatial = true;
                        }
                        s.sub = 0;
                        if s.k == s.kernels - 1 {
                            s.phase = phase::WAIT;
                            s.k = 0;
                        } else {
                            s.k += 1;
                        }
                    }
                }
            }
            phase::WAIT => {
                if since >= s.delay {
                    s.quota = std::array::from_fn(|k| if k < s.kernels as usize { s.t[k] } else { 0 });
                    s.spatial = s.res_spatial;
                    s.done = true;
                    s.phase = phase::IDLE;
                }
            }
            _ => unreachable!("phase {ph}"),
        }
    }
}
