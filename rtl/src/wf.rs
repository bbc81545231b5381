//! `Wf`: Warped-Slicer's global water-filling unit (Xu et al., ISCA 2016, §IV, Algorithm 1,
//! Eq. 4, §IV-A; interface and cycle behaviour in `mpgpu_spec::units::wf`, decisions in
//! `docs/warped-slicer.md`).
//!
//! One FSM (`phase`), one 16 x 16 multiplier shared by every product (W A, n j, s |d| and the
//! four partial products of a score), a restoring divider (one quotient bit a cycle), a
//! shift-and-add tree per resource component for a count times a request, and a two-level
//! comparator for Select. Three distributed RAMs of 64 words (kernel x count): the scores
//! (compacted into each kernel's staircase by Build), the steps' counts and their normalised
//! performance. The per-kernel state sits in registers. Every output comes from a register.

use crate::ram::LutRam;
use crate::reg::{any_q, Reg};
use mpgpu_spec::units::wf::{INST_BITS, J_BITS, KMAX, MAX_SMS, NEED_BITS, NMAX, Q_BITS, RES, RES_BITS, SCORE_BITS, SM_BITS, WINDOW_BITS};
use rust_hdl::prelude::*;

const _: () = assert!(KMAX == 4 && NMAX == 16 && J_BITS == 5 && SM_BITS == 4 && MAX_SMS == 16 && WINDOW_BITS == 16 && INST_BITS == 18);
const _: () = assert!(SCORE_BITS == 43 && Q_BITS == 17 && RES == 4 && RES_BITS == 17 && NEED_BITS == 32);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WfFaults {
    /// Select's comparator takes `<=`: a tie goes to the higher kernel index.
    pub tie_high: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Wf {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    pub start: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    pub kernels: Signal<In, Bits<3>>,
    pub window: Signal<In, Bits<16>>,
    pub fallback_pct: Signal<In, Bits<8>>,
    pub delay: Signal<In, Bits<16>>,
    pub total0: Signal<In, Bits<17>>,
    pub total1: Signal<In, Bits<17>>,
    pub total2: Signal<In, Bits<17>>,
    pub total3: Signal<In, Bits<17>>,
    pub sm_k: Signal<In, Bits<2>>,
    pub sm_j: Signal<In, Bits<5>>,
    pub sm_insts: Signal<In, Bits<18>>,
    pub sm_stalls: Signal<In, Bits<16>>,
    pub k_req0: Signal<In, Bits<17>>,
    pub k_req1: Signal<In, Bits<17>>,
    pub k_req2: Signal<In, Bits<17>>,
    pub k_req3: Signal<In, Bits<17>>,
    pub busy: Signal<Out, Bit>,
    pub round_wait: Signal<Out, Bit>,
    pub win_run: Signal<Out, Bit>,
    pub win_first: Signal<Out, Bit>,
    pub win_last: Signal<Out, Bit>,
    pub rd_sm: Signal<Out, Bits<4>>,
    pub rd_k: Signal<Out, Bits<2>>,
    pub done_out: Signal<Out, Bit>,
    pub quota0: Signal<Out, Bits<5>>,
    pub quota1: Signal<Out, Bits<5>>,
    pub quota2: Signal<Out, Bits<5>>,
    pub quota3: Signal<Out, Bits<5>>,
    pub spatial_out: Signal<Out, Bit>,
    c_idle: Constant<Bits<4>>,
    c_window: Constant<Bits<4>>,
    c_sum: Constant<Bits<4>>,
    c_scale: Constant<Bits<4>>,
    c_collect: Constant<Bits<4>>,
    c_round_wait: Constant<Bits<4>>,
    c_build: Constant<Bits<4>>,
    c_norm: Constant<Bits<4>>,
    c_init: Constant<Bits<4>>,
    c_select: Constant<Bits<4>>,
    c_read: Constant<Bits<4>>,
    c_mul: Constant<Bits<4>>,
    c_fit: Constant<Bits<4>>,
    c_final: Constant<Bits<4>>,
    c_wait: Constant<Bits<4>>,
    c0_16: Constant<Bits<16>>,
    c1_16: Constant<Bits<16>>,
    c_max16: Constant<Bits<16>>,
    c0_3: Constant<Bits<3>>,
    c1_3: Constant<Bits<3>>,
    c4_3: Constant<Bits<3>>,
    c0_5: Constant<Bits<5>>,
    c1_5: Constant<Bits<5>>,
    c2_5: Constant<Bits<5>>,
    c3_5: Constant<Bits<5>>,
    c5_5: Constant<Bits<5>>,
    c16_5: Constant<Bits<5>>,
    c18_5: Constant<Bits<5>>,
    c6_5: Constant<Bits<5>>,
    c7_5: Constant<Bits<5>>,
    c8_5: Constant<Bits<5>>,
    c9_5: Constant<Bits<5>>,
    c10_5: Constant<Bits<5>>,
    c11_5: Constant<Bits<5>>,
    c1_4: Constant<Bits<4>>,
    c15_4: Constant<Bits<4>>,
    c1_2: Constant<Bits<2>>,
    c2_16: Constant<Bits<16>>,
    c1_17: Constant<Bits<17>>,
    one64: Constant<Bits<64>>,
    ids: [Constant<Bits<2>>; 4],
    ids3: [Constant<Bits<3>>; 4],
    /// The last SM's index.
    last_sm: Constant<Bits<4>>,
    /// Test-only: a tie at Select goes to the higher index.
    tie_high: Constant<Bit>,
    is_idle: Signal<Local, Bit>,
    is_window: Signal<Local, Bit>,
    is_sum: Signal<Local, Bit>,
    is_scale: Signal<Local, Bit>,
    is_collect: Signal<Local, Bit>,
    is_round_wait: Signal<Local, Bit>,
    is_build: Signal<Local, Bit>,
    is_norm: Signal<Local, Bit>,
    is_init: Signal<Local, Bit>,
    is_select: Signal<Local, Bit>,
    is_read: Signal<Local, Bit>,
    is_mul: Signal<Local, Bit>,
    is_fit: Signal<Local, Bit>,
    is_final: Signal<Local, Bit>,
    is_wait: Signal<Local, Bit>,
    win_end: Signal<Local, Bit>,
    kernels_m1: Signal<Local, Bits<3>>,
    k_last: Signal<Local, Bit>,
    len_k: Signal<Local, Bits<5>>,
    t_s: Signal<Local, Bits<5>>,
    len_s: Signal<Local, Bits<5>>,
    acc43: Signal<Local, Bits<43>>,
    prof: Signal<Local, Bit>,
    i0: Signal<Local, Bits<16>>,
    i1: Signal<Local, Bits<16>>,
    f0: Signal<Local, Bits<16>>,
    f1: Signal<Local, Bits<16>>,
    prod: Signal<Local, Bits<32>>,
    prod44: Signal<Local, Bits<44>>,
    nj: Signal<Local, Bits<9>>,
    nj_lt: Signal<Local, Bit>,
    dm: Signal<Local, Bits<9>>,
    jm1: Signal<Local, Bits<4>>,
    p25: Signal<Local, Bits<25>>,
    fv: Signal<Local, Bits<25>>,
    sc: Signal<Local, Bits<43>>,
    at_kj: Signal<Local, Bits<6>>,
    at_klen: Signal<Local, Bits<6>>,
    at_sm: Signal<Local, Bits<6>>,
    rv: Signal<Local, Bits<43>>,
    top44: Signal<Local, Bits<44>>,
    take: Signal<Local, Bit>,
    rem: Signal<Local, Bits<44>>,
    qd: Signal<Local, Bits<17>>,
    t0: Signal<Local, Bits<5>>,
    dt: Signal<Local, Bits<5>>,
    first: Signal<Local, Bit>,
    cand_k: Signal<Local, Bit>,
    found_k: Signal<Local, Bit>,
    lt: Signal<Local, Bit>,
    better: Signal<Local, Bit>,
    hv: Signal<Local, Bits<44>>,
    fits: Signal<Local, Bit>,
    thr: Signal<Local, Bits<44>>,
    q_k: Signal<Local, Bits<17>>,
    hk: Signal<Local, Bits<16>>,
    cnt16: Signal<Local, Bits<16>>,
    cnt22: Signal<Local, Bits<32>>,
    req_lo: [Signal<Local, Bits<16>>; 4],
    req_hi: [Signal<Local, Bit>; 4],
    rp: [Signal<Local, Bits<32>>; 4],
    c100: Constant<Bits<16>>,
    c200: Constant<Bits<16>>,
    c300: Constant<Bits<16>>,
    c400: Constant<Bits<16>>,
    c2_3: Constant<Bits<3>>,
    c3_3: Constant<Bits<3>>,
    go: Signal<Local, Bit>,
    kernels_in: Signal<Local, Bits<3>>,
    advance: Signal<Local, Bit>,
    next_kernel: Signal<Local, Bit>,
    prod_c: [Signal<Local, Bits<32>>; 4],
    base: [Signal<Local, Bits<32>>; 4],
    left: [Signal<Local, Bits<17>>; 4],
    need17: [Signal<Local, Bits<17>>; 4],
    rl22: [Signal<Local, Bits<32>>; 4],
    base17: [Signal<Local, Bits<17>>; 4],
    pub phase: Reg<Bits<4>>,
    pub kern: Reg<Bits<3>>,
    pub last_r: Reg<Bit>,
    pub window_r: Reg<Bits<16>>,
    pub pct: Reg<Bits<8>>,
    pub delay_r: Reg<Bits<16>>,
    pub wcount: Reg<Bits<16>>,
    pub since: Reg<Bits<16>>,
    pub sm: Reg<Bits<4>>,
    pub sub: Reg<Bits<5>>,
    pub k: Reg<Bits<2>>,
    pub j: Reg<Bits<4>>,
    pub sel: Reg<Bits<2>>,
    pub n: Reg<Bits<5>>,
    pub a: Reg<Bits<9>>,
    pub wa: Reg<Bits<25>>,
    pub dneg: Reg<Bit>,
    pub dmag: Reg<Bits<9>>,
    pub f: Reg<Bits<25>>,
    pub acc: Reg<Bits<44>>,
    pub top: Reg<Bits<43>>,
    pub quo: Reg<Bits<17>>,
    pub valid: Reg<Bits<64>>,
    pub full: Reg<Bits<4>>,
    pub ma: Reg<Bits<16>>,
    pub pr: Reg<Bits<32>>,
    pub mb: Reg<Bits<16>>,
    pub qhi: Reg<Bit>,
    pub cnt: Reg<Bits<5>>,
    pub bq: Reg<Bits<17>>,
    pub found: Reg<Bit>,
    pub m_next: Reg<Bits<5>>,
    pub q_next: Reg<Bits<17>>,
    pub over: Reg<Bit>,
    /// Whether need fitted R_L at the last edge (the fit check, registered: Init and Fit act
    /// on it a cycle after need is set).
    pub fit_r: Reg<Bit>,
    /// Whether `j` is kernel `k`'s last step (j + 1 = its staircase length), registered every
    /// cycle: Norm reads it at a step's last division cycle, when `j` and the length have
    /// held for 17 cycles, so it equals the comparison (a pipeline register, derived from the
    /// state the co-simulation compares).
    pub jlast: Reg<Bit>,
    /// The selected kernel's next step index, g + 1, taken with `sel` at Select: Read's
    /// table address and peak check use it instead of a multiplexer and an adder in front of
    /// the tables (a pipeline register: g does not change between Select and Read).
    pub gn: Reg<Bits<5>>,
    /// The count times the request, registered every cycle (need takes it a cycle later): the
    /// request's low 16 bits' product, and its top bit's part (count << 16, or 0).
    pub prod_r: [Reg<Bits<32>>; 4],
    pub ph_r: [Reg<Bits<32>>; 4],
    c4_5: Constant<Bits<5>>,
    g_k: Signal<Local, Bits<4>>,
    pub res_spatial: Reg<Bit>,
    pub done: Reg<Bit>,
    pub spatial: Reg<Bit>,
    pub total: [Reg<Bits<17>>; 4],
    pub len: [Reg<Bits<5>>; 4],
    pub t: [Reg<Bits<5>>; 4],
    pub g: [Reg<Bits<4>>; 4],
    pub cur_q: [Reg<Bits<17>>; 4],
    pub need: [Reg<Bits<32>>; 4],
    pub rl: [Reg<Bits<17>>; 4],
    pub quota: [Reg<Bits<5>>; 4],
    pub score_ram: LutRam<Bits<43>, 6>,
    pub m_ram: LutRam<Bits<5>, 6>,
    pub qn_ram: LutRam<Bits<17>, 6>,
    /// Evaluate the logic in every pass (the plain simulation, for tests; not hardware).
    pub _always: bool,
    _ran: bool,
    /// Passes in which the logic was skipped (not hardware).
    pub _skips: u64,
}

impl Wf {
    /// The unit for `sms` SMs (1..=16).
    pub fn new(sms: usize, faults: WfFaults) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "a water-filling unit for {sms} SMs (1..={MAX_SMS})");
        Self {
            clock: Default::default(),
            start: Default::default(),
            last: Default::default(),
            kernels: Default::default(),
            window: Default::default(),
            fallback_pct: Default::default(),
            delay: Default::default(),
            total0: Default::default(),
            total1: Default::default(),
            total2: Default::default(),
            total3: Default::default(),
            sm_k: Default::default(),
            sm_j: Default::default(),
            sm_insts: Default::default(),
            sm_stalls: Default::default(),
            k_req0: Default::default(),
            k_req1: Default::default(),
            k_req2: Default::default(),
            k_req3: Default::default(),
            busy: Default::default(),
            round_wait: Default::default(),
            win_run: Default::default(),
            win_first: Default::default(),
            win_last: Default::default(),
            rd_sm: Default::default(),
            rd_k: Default::default(),
            done_out: Default::default(),
            quota0: Default::default(),
            quota1: Default::default(),
            quota2: Default::default(),
            quota3: Default::default(),
            spatial_out: Default::default(),
            c_idle: Constant::new((0u64).into()),
            c_window: Constant::new((1u64).into()),
            c_sum: Constant::new((2u64).into()),
            c_scale: Constant::new((3u64).into()),
            c_collect: Constant::new((4u64).into()),
            c_round_wait: Constant::new((5u64).into()),
            c_build: Constant::new((6u64).into()),
            c_norm: Constant::new((7u64).into()),
            c_init: Constant::new((8u64).into()),
            c_select: Constant::new((9u64).into()),
            c_read: Constant::new((10u64).into()),
            c_mul: Constant::new((11u64).into()),
            c_fit: Constant::new((12u64).into()),
            c_final: Constant::new((13u64).into()),
            c_wait: Constant::new((14u64).into()),
            c0_16: Constant::new((0u64).into()),
            c1_16: Constant::new((1u64).into()),
            c_max16: Constant::new((0xFFFFu64).into()),
            c0_3: Constant::new((0u64).into()),
            c1_3: Constant::new((1u64).into()),
            c4_3: Constant::new((4u64).into()),
            c0_5: Constant::new((0u64).into()),
            c1_5: Constant::new((1u64).into()),
            c2_5: Constant::new((2u64).into()),
            c3_5: Constant::new((3u64).into()),
            c5_5: Constant::new((5u64).into()),
            c16_5: Constant::new((16u64).into()),
            c18_5: Constant::new((18u64).into()),
            c6_5: Constant::new(6u64.into()),
            c7_5: Constant::new(7u64.into()),
            c8_5: Constant::new(8u64.into()),
            c9_5: Constant::new(9u64.into()),
            c10_5: Constant::new(10u64.into()),
            c11_5: Constant::new(11u64.into()),
            c1_4: Constant::new((1u64).into()),
            c15_4: Constant::new((15u64).into()),
            c1_2: Constant::new((1u64).into()),
            c2_16: Constant::new(2u64.into()),
            c1_17: Constant::new((1u64).into()),
            one64: Constant::new((1u64).into()),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            ids3: std::array::from_fn(|i| Constant::new((i as u64).into())),
            last_sm: Constant::new(((sms - 1) as u64).into()),
            tie_high: Constant::new(faults.tie_high),
            is_idle: Default::default(),
            is_window: Default::default(),
            is_sum: Default::default(),
            is_scale: Default::default(),
            is_collect: Default::default(),
            is_round_wait: Default::default(),
            is_build: Default::default(),
            is_norm: Default::default(),
            is_init: Default::default(),
            is_select: Default::default(),
            is_read: Default::default(),
            is_mul: Default::default(),
            is_fit: Default::default(),
            is_final: Default::default(),
            is_wait: Default::default(),
            win_end: Default::default(),
            kernels_m1: Default::default(),
            k_last: Default::default(),
            len_k: Default::default(),
            t_s: Default::default(),
            len_s: Default::default(),
            acc43: Default::default(),
            prof: Default::default(),
            i0: Default::default(),
            i1: Default::default(),
            f0: Default::default(),
            f1: Default::default(),
            prod: Default::default(),
            prod44: Default::default(),
            nj: Default::default(),
            nj_lt: Default::default(),
            dm: Default::default(),
            jm1: Default::default(),
            p25: Default::default(),
            fv: Default::default(),
            sc: Default::default(),
            at_kj: Default::default(),
            at_klen: Default::default(),
            at_sm: Default::default(),
            rv: Default::default(),
            top44: Default::default(),
            take: Default::default(),
            rem: Default::default(),
            qd: Default::default(),
            t0: Default::default(),
            dt: Default::default(),
            first: Default::default(),
            cand_k: Default::default(),
            found_k: Default::default(),
            lt: Default::default(),
            better: Default::default(),
            hv: Default::default(),
            fits: Default::default(),
            thr: Default::default(),
            q_k: Default::default(),
            hk: Default::default(),
            cnt16: Default::default(),
            cnt22: Default::default(),
            req_lo: Default::default(),
            req_hi: Default::default(),
            rp: Default::default(),
            c100: Constant::new(100u64.into()),
            c200: Constant::new(200u64.into()),
            c300: Constant::new(300u64.into()),
            c400: Constant::new(400u64.into()),
            c2_3: Constant::new(2u64.into()),
            c3_3: Constant::new(3u64.into()),
            go: Default::default(),
            kernels_in: Default::default(),
            advance: Default::default(),
            next_kernel: Default::default(),
            prod_c: Default::default(),
            base: Default::default(),
            left: Default::default(),
            need17: Default::default(),
            rl22: Default::default(),
            base17: Default::default(),
            phase: Default::default(),
            kern: Default::default(),
            last_r: Default::default(),
            window_r: Default::default(),
            pct: Default::default(),
            delay_r: Default::default(),
            wcount: Default::default(),
            since: Default::default(),
            sm: Default::default(),
            sub: Default::default(),
            k: Default::default(),
            j: Default::default(),
            sel: Default::default(),
            n: Default::default(),
            a: Default::default(),
            wa: Default::default(),
            dneg: Default::default(),
            dmag: Default::default(),
            f: Default::default(),
            acc: Default::default(),
            top: Default::default(),
            quo: Default::default(),
            valid: Default::default(),
            full: Default::default(),
            ma: Default::default(),
            pr: Default::default(),
            mb: Default::default(),
            qhi: Default::default(),
            cnt: Default::default(),
            bq: Default::default(),
            found: Default::default(),
            m_next: Default::default(),
            q_next: Default::default(),
            over: Default::default(),
            fit_r: Default::default(),
            jlast: Default::default(),
            gn: Default::default(),
            prod_r: Default::default(),
            ph_r: Default::default(),
            c4_5: Constant::new((4u64).into()),
            g_k: Default::default(),
            res_spatial: Default::default(),
            done: Default::default(),
            spatial: Default::default(),
            total: Default::default(),
            len: Default::default(),
            t: Default::default(),
            g: Default::default(),
            cur_q: Default::default(),
            need: Default::default(),
            rl: Default::default(),
            quota: Default::default(),
            score_ram: Default::default(),
            m_ram: Default::default(),
            qn_ram: Default::default(),
            _always: false,
            _ran: false,
            _skips: 0,
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.start.connect();
        self.last.connect();
        self.kernels.connect();
        self.window.connect();
        self.fallback_pct.connect();
        self.delay.connect();
        self.total0.connect();
        self.total1.connect();
        self.total2.connect();
        self.total3.connect();
        self.sm_k.connect();
        self.sm_j.connect();
        self.sm_insts.connect();
        self.sm_stalls.connect();
        self.k_req0.connect();
        self.k_req1.connect();
        self.k_req2.connect();
        self.k_req3.connect();
        self.connect_all();
    }

    /// Whether a signal the logic reads, other than the clock, changed in the last pass.
    pub fn read_changed(&self) -> bool {
        self.start.has_changed()
            || self.last.has_changed()
            || self.kernels.has_changed()
            || self.window.has_changed()
            || self.fallback_pct.has_changed()
            || self.delay.has_changed()
            || self.total0.has_changed()
            || self.total1.has_changed()
            || self.total2.has_changed()
            || self.total3.has_changed()
            || self.sm_k.has_changed()
            || self.sm_j.has_changed()
            || self.sm_insts.has_changed()
            || self.sm_stalls.has_changed()
            || self.k_req0.has_changed()
            || self.k_req1.has_changed()
            || self.k_req2.has_changed()
            || self.k_req3.has_changed()
            || self.phase.q.has_changed()
            || self.kern.q.has_changed()
            || self.last_r.q.has_changed()
            || self.window_r.q.has_changed()
            || self.pct.q.has_changed()
            || self.delay_r.q.has_changed()
            || self.wcount.q.has_changed()
            || self.since.q.has_changed()
            || self.sm.q.has_changed()
            || self.sub.q.has_changed()
            || self.k.q.has_changed()
            || self.j.q.has_changed()
            || self.sel.q.has_changed()
            || self.n.q.has_changed()
            || self.a.q.has_changed()
            || self.wa.q.has_changed()
            || self.dneg.q.has_changed()
            || self.dmag.q.has_changed()
            || self.f.q.has_changed()
            || self.acc.q.has_changed()
            || self.top.q.has_changed()
            || self.quo.q.has_changed()
            || self.valid.q.has_changed()
            || self.full.q.has_changed()
            || self.ma.q.has_changed()
            || self.pr.q.has_changed()
            || self.mb.q.has_changed()
            || self.qhi.q.has_changed()
            || self.cnt.q.has_changed()
            || self.bq.q.has_changed()
            || self.found.q.has_changed()
            || self.m_next.q.has_changed()
            || self.q_next.q.has_changed()
            || self.over.q.has_changed()
            || self.fit_r.q.has_changed()
            || self.jlast.q.has_changed()
            || self.gn.q.has_changed()
            || self.res_spatial.q.has_changed()
            || self.done.q.has_changed()
            || self.spatial.q.has_changed()
            || any_q(&self.total)
            || any_q(&self.len)
            || any_q(&self.t)
            || any_q(&self.g)
            || any_q(&self.cur_q)
            || any_q(&self.need)
            || any_q(&self.rl)
            || any_q(&self.quota)
            || any_q(&self.prod_r)
            || any_q(&self.ph_r)
            || self.score_ram.read_data.has_changed()
            || self.m_ram.read_data.has_changed()
            || self.qn_ram.read_data.has_changed()
    }

    /// The clock to every register and RAM (a pass in which only the clock changed).
    fn fan_clock(&mut self) {
        let c = self.clock.val();
        self.phase.clock.next = c;
        self.kern.clock.next = c;
        self.last_r.clock.next = c;
        self.window_r.clock.next = c;
        self.pct.clock.next = c;
        self.delay_r.clock.next = c;
        self.wcount.clock.next = c;
        self.since.clock.next = c;
        self.sm.clock.next = c;
        self.sub.clock.next = c;
        self.k.clock.next = c;
        self.j.clock.next = c;
        self.sel.clock.next = c;
        self.n.clock.next = c;
        self.a.clock.next = c;
        self.wa.clock.next = c;
        self.dneg.clock.next = c;
        self.dmag.clock.next = c;
        self.f.clock.next = c;
        self.acc.clock.next = c;
        self.top.clock.next = c;
        self.quo.clock.next = c;
        self.valid.clock.next = c;
        self.full.clock.next = c;
        self.ma.clock.next = c;
        self.pr.clock.next = c;
        self.mb.clock.next = c;
        self.qhi.clock.next = c;
        self.cnt.clock.next = c;
        self.bq.clock.next = c;
        self.found.clock.next = c;
        self.m_next.clock.next = c;
        self.q_next.clock.next = c;
        self.over.clock.next = c;
        self.fit_r.clock.next = c;
        self.jlast.clock.next = c;
        self.gn.clock.next = c;
        for r in self.prod_r.iter_mut() {
            r.clock.next = c;
        }
        for r in self.ph_r.iter_mut() {
            r.clock.next = c;
        }
        self.res_spatial.clock.next = c;
        self.done.clock.next = c;
        self.spatial.clock.next = c;
        for r in self.total.iter_mut() {
            r.clock.next = c;
        }
        for r in self.len.iter_mut() {
            r.clock.next = c;
        }
        for r in self.t.iter_mut() {
            r.clock.next = c;
        }
        for r in self.g.iter_mut() {
            r.clock.next = c;
        }
        for r in self.cur_q.iter_mut() {
            r.clock.next = c;
        }
        for r in self.need.iter_mut() {
            r.clock.next = c;
        }
        for r in self.rl.iter_mut() {
            r.clock.next = c;
        }
        for r in self.quota.iter_mut() {
            r.clock.next = c;
        }
        self.score_ram.clock.next = c;
        self.m_ram.clock.next = c;
        self.qn_ram.clock.next = c;
    }
}

crate::flat_logic!(Wf);

impl Logic for Wf {
    #[hdl_gen]
    fn update(&mut self) {
        // Every register holds unless a phase below changes it.
        self.phase.clock.next = self.clock.val();
        self.phase.d.next = self.phase.q.val();
        self.kern.clock.next = self.clock.val();
        self.kern.d.next = self.kern.q.val();
        self.last_r.clock.next = self.clock.val();
        self.last_r.d.next = self.last_r.q.val();
        self.window_r.clock.next = self.clock.val();
        self.window_r.d.next = self.window_r.q.val();
        self.pct.clock.next = self.clock.val();
        self.pct.d.next = self.pct.q.val();
        self.delay_r.clock.next = self.clock.val();
        self.delay_r.d.next = self.delay_r.q.val();
        self.wcount.clock.next = self.clock.val();
        self.wcount.d.next = self.wcount.q.val();
        self.since.clock.next = self.clock.val();
        self.since.d.next = self.since.q.val();
        self.sm.clock.next = self.clock.val();
        self.sm.d.next = self.sm.q.val();
        self.sub.clock.next = self.clock.val();
        self.sub.d.next = self.sub.q.val();
        self.k.clock.next = self.clock.val();
        self.k.d.next = self.k.q.val();
        self.j.clock.next = self.clock.val();
        self.j.d.next = self.j.q.val();
        self.sel.clock.next = self.clock.val();
        self.sel.d.next = self.sel.q.val();
        self.n.clock.next = self.clock.val();
        self.n.d.next = self.n.q.val();
        self.a.clock.next = self.clock.val();
        self.a.d.next = self.a.q.val();
        self.wa.clock.next = self.clock.val();
        self.wa.d.next = self.wa.q.val();
        self.dneg.clock.next = self.clock.val();
        self.dneg.d.next = self.dneg.q.val();
        self.dmag.clock.next = self.clock.val();
        self.dmag.d.next = self.dmag.q.val();
        self.f.clock.next = self.clock.val();
        self.f.d.next = self.f.q.val();
        self.acc.clock.next = self.clock.val();
        self.acc.d.next = self.acc.q.val();
        self.top.clock.next = self.clock.val();
        self.top.d.next = self.top.q.val();
        self.quo.clock.next = self.clock.val();
        self.quo.d.next = self.quo.q.val();
        self.valid.clock.next = self.clock.val();
        self.valid.d.next = self.valid.q.val();
        self.full.clock.next = self.clock.val();
        self.full.d.next = self.full.q.val();
        self.pr.clock.next = self.clock.val();
        self.ma.clock.next = self.clock.val();
        self.ma.d.next = self.ma.q.val();
        self.mb.clock.next = self.clock.val();
        self.mb.d.next = self.mb.q.val();
        self.qhi.clock.next = self.clock.val();
        self.qhi.d.next = self.qhi.q.val();
        self.cnt.clock.next = self.clock.val();
        self.cnt.d.next = self.cnt.q.val();
        self.bq.clock.next = self.clock.val();
        self.bq.d.next = self.bq.q.val();
        self.found.clock.next = self.clock.val();
        self.found.d.next = self.found.q.val();
        self.m_next.clock.next = self.clock.val();
        self.m_next.d.next = self.m_next.q.val();
        self.q_next.clock.next = self.clock.val();
        self.q_next.d.next = self.q_next.q.val();
        self.over.clock.next = self.clock.val();
        self.over.d.next = self.over.q.val();
        self.fit_r.clock.next = self.clock.val();
        self.jlast.clock.next = self.clock.val();
        self.gn.clock.next = self.clock.val();
        self.gn.d.next = self.gn.q.val();
        self.res_spatial.clock.next = self.clock.val();
        self.res_spatial.d.next = self.res_spatial.q.val();
        self.done.clock.next = self.clock.val();
        self.done.d.next = false;
        self.spatial.clock.next = self.clock.val();
        self.spatial.d.next = self.spatial.q.val();
        for i in 0..4 {
            self.total[i].clock.next = self.clock.val();
            self.total[i].d.next = self.total[i].q.val();
            self.len[i].clock.next = self.clock.val();
            self.len[i].d.next = self.len[i].q.val();
            self.t[i].clock.next = self.clock.val();
            self.t[i].d.next = self.t[i].q.val();
            self.g[i].clock.next = self.clock.val();
            self.g[i].d.next = self.g[i].q.val();
            self.cur_q[i].clock.next = self.clock.val();
            self.cur_q[i].d.next = self.cur_q[i].q.val();
            self.need[i].clock.next = self.clock.val();
            self.need[i].d.next = self.need[i].q.val();
            self.rl[i].clock.next = self.clock.val();
            self.rl[i].d.next = self.rl[i].q.val();
            self.quota[i].clock.next = self.clock.val();
            self.quota[i].d.next = self.quota[i].q.val();
        }
        self.score_ram.clock.next = self.clock.val();
        self.m_ram.clock.next = self.clock.val();
        self.qn_ram.clock.next = self.clock.val();

        // The phase decoded.
        self.is_idle.next = self.phase.q.val() == self.c_idle.val();
        self.is_window.next = self.phase.q.val() == self.c_window.val();
        self.is_sum.next = self.phase.q.val() == self.c_sum.val();
        self.is_scale.next = self.phase.q.val() == self.c_scale.val();
        self.is_collect.next = self.phase.q.val() == self.c_collect.val();
        self.is_round_wait.next = self.phase.q.val() == self.c_round_wait.val();
        self.is_build.next = self.phase.q.val() == self.c_build.val();
        self.is_norm.next = self.phase.q.val() == self.c_norm.val();
        self.is_init.next = self.phase.q.val() == self.c_init.val();
        self.is_select.next = self.phase.q.val() == self.c_select.val();
        self.is_read.next = self.phase.q.val() == self.c_read.val();
        self.is_mul.next = self.phase.q.val() == self.c_mul.val();
        self.is_fit.next = self.phase.q.val() == self.c_fit.val();
        self.is_final.next = self.phase.q.val() == self.c_final.val();
        self.is_wait.next = self.phase.q.val() == self.c_wait.val();

        // Outputs, from the registers.
        self.win_end.next = self.wcount.q.val() == (self.window_r.q.val() - self.c1_16.val());
        self.busy.next = !self.is_idle.val();
        self.round_wait.next = self.is_round_wait.val();
        self.win_run.next = self.is_window.val();
        self.win_first.next = self.is_window.val() & (self.wcount.q.val() == self.c0_16.val());
        self.win_last.next = self.is_window.val() & self.win_end.val();
        self.rd_sm.next = 0.into();
        if self.is_sum.val() | self.is_collect.val() {
            self.rd_sm.next = self.sm.q.val();
        }
        self.rd_k.next = 0.into();
        if self.is_init.val() {
            self.rd_k.next = self.k.q.val();
        }
        if self.is_read.val() | self.is_mul.val() {
            self.rd_k.next = self.sel.q.val();
        }
        self.done_out.next = self.done.q.val();
        self.quota0.next = self.quota[0].q.val();
        self.quota1.next = self.quota[1].q.val();
        self.quota2.next = self.quota[2].q.val();
        self.quota3.next = self.quota[3].q.val();
        self.spatial_out.next = self.spatial.q.val();

        // Per-kernel registers of kernel `k` and of the selected kernel.
        self.kernels_m1.next = self.kern.q.val() - self.c1_3.val();
        self.k_last.next = bit_cast::<3, 2>(self.k.q.val()) == self.kernels_m1.val();
        self.len_k.next = 0.into();
        self.g_k.next = 0.into();
        self.t_s.next = 0.into();
        self.len_s.next = 0.into();
        for i in 0..4 {
            if self.k.q.val() == self.ids[i].val() {
                self.len_k.next = self.len[i].q.val();
                self.g_k.next = self.g[i].q.val();
            }
            if self.sel.q.val() == self.ids[i].val() {
                self.t_s.next = self.t[i].q.val();
                self.len_s.next = self.len[i].q.val();
            }
        }

        // SM `rd_sm` profiles a kernel of this decision.
        self.prof.next = (self.sm_j.val() != self.c0_5.val()) & (self.sm_j.val() <= self.c16_5.val()) & (bit_cast::<3, 2>(self.sm_k.val()) < self.kern.q.val());

        // The one multiplier (16 x 16): its operands are registers (`ma`, `mb`), set a cycle
        // before the product is used.
        self.i0.next = self.sm_insts.val().get_bits::<16>(0);
        self.i1.next = bit_cast::<16, 2>(self.sm_insts.val().get_bits::<2>(16));
        self.f0.next = self.f.q.val().get_bits::<16>(0);
        self.f1.next = bit_cast::<16, 9>(self.f.q.val().get_bits::<9>(16));
        self.prod.next = self.ma.q.val() * self.mb.q.val();
        self.pr.d.next = self.prod.val();
        self.prod44.next = bit_cast::<44, 32>(self.pr.q.val());

        // Collect's arithmetic: d = n j - A, F = max(0, W A + s d), the score.
        self.nj.next = self.pr.q.val().get_bits::<9>(0);
        self.nj_lt.next = self.nj.val() < self.a.q.val();
        self.dm.next = self.nj.val() - self.a.q.val();
        if self.nj_lt.val() {
            self.dm.next = self.a.q.val() - self.nj.val();
        }
        self.p25.next = self.pr.q.val().get_bits::<25>(0);
        self.fv.next = self.wa.q.val() + self.p25.val();
        if self.dneg.q.val() {
            self.fv.next = 0.into();
            if self.wa.q.val() >= self.p25.val() {
                self.fv.next = self.wa.q.val() - self.p25.val();
            }
        }
        self.sc.next = self.acc.q.val().get_bits::<43>(0) + (bit_cast::<43, 32>(self.pr.q.val()) << 32);

        // The division step: one quotient bit.
        self.top44.next = bit_cast::<44, 43>(self.top.q.val());
        self.acc43.next = self.acc.q.val().get_bits::<43>(0);
        self.take.next = self.acc.q.val() >= self.top44.val();
        self.rem.next = self.acc.q.val();
        if self.take.val() {
            self.rem.next = self.acc.q.val() - self.top44.val();
        }
        self.qd.next = self.quo.q.val() << 1;
        if self.take.val() {
            self.qd.next = (self.quo.q.val() << 1) | self.c1_17.val();
        }

        // The score table's ports.
        self.at_kj.next = (bit_cast::<6, 2>(self.k.q.val()) << 4) | bit_cast::<6, 4>(self.j.q.val());
        self.at_klen.next = (bit_cast::<6, 2>(self.k.q.val()) << 4) | bit_cast::<6, 4>(self.len_k.val().get_bits::<4>(0));
        self.jlast.d.next = (bit_cast::<5, 4>(self.j.q.val()) + self.c1_5.val()) == self.len_k.val();
        self.jm1.next = self.sm_j.val().get_bits::<4>(0) - self.c1_4.val();
        self.at_sm.next = (bit_cast::<6, 2>(self.sm_k.val()) << 4) | bit_cast::<6, 4>(self.jm1.val());
        self.score_ram.read_address.next = self.at_kj.val();
        self.rv.next = 0.into();
        if self.valid.q.val().get_bit(self.at_kj.val().index()) {
            self.rv.next = self.score_ram.read_data.val();
        }
        self.score_ram.write_enable.next = false;
        self.score_ram.write_address.next = self.at_sm.val();
        self.score_ram.write_data.next = self.sc.val();
        self.m_ram.write_enable.next = false;
        self.m_ram.write_address.next = self.at_klen.val();
        self.m_ram.write_data.next = bit_cast::<5, 4>(self.j.q.val()) + self.c1_5.val();
        self.qn_ram.write_enable.next = false;
        self.qn_ram.write_address.next = self.at_kj.val();
        self.qn_ram.write_data.next = self.qd.val();
        // The step tables' read port: kernel `k`'s first step (Init), the selected kernel's
        // next step (Read).
        self.m_ram.read_address.next = bit_cast::<6, 2>(self.k.q.val()) << 4;
        self.qn_ram.read_address.next = bit_cast::<6, 2>(self.k.q.val()) << 4;
        if self.is_read.val() {
            self.m_ram.read_address.next = (bit_cast::<6, 2>(self.sel.q.val()) << 4) | bit_cast::<6, 4>(self.gn.q.val().get_bits::<4>(0));
            self.qn_ram.read_address.next = (bit_cast::<6, 2>(self.sel.q.val()) << 4) | bit_cast::<6, 4>(self.gn.q.val().get_bits::<4>(0));
        }

        // A count times each request component (Init: the first step's count; Mul: dT).
        self.t0.next = self.c1_5.val();
        if self.len_k.val() != self.c0_5.val() {
            self.t0.next = self.m_ram.read_data.val();
        }
        self.dt.next = self.m_next.q.val() - self.t_s.val();
        // (the low 16 bits of each request through a 16 x 16 multiplier, its top bit added; the
        // count a register)
        self.cnt16.next = bit_cast::<16, 5>(self.cnt.q.val());
        self.cnt22.next = bit_cast::<32, 5>(self.cnt.q.val()) << 16;
        self.req_lo[0].next = self.k_req0.val().get_bits::<16>(0);
        self.req_lo[1].next = self.k_req1.val().get_bits::<16>(0);
        self.req_lo[2].next = self.k_req2.val().get_bits::<16>(0);
        self.req_lo[3].next = self.k_req3.val().get_bits::<16>(0);
        self.req_hi[0].next = self.k_req0.val().get_bit(16);
        self.req_hi[1].next = self.k_req1.val().get_bit(16);
        self.req_hi[2].next = self.k_req2.val().get_bit(16);
        self.req_hi[3].next = self.k_req3.val().get_bit(16);
        self.rp[0].next = self.req_lo[0].val() * self.cnt16.val();
        self.rp[1].next = self.req_lo[1].val() * self.cnt16.val();
        self.rp[2].next = self.req_lo[2].val() * self.cnt16.val();
        self.rp[3].next = self.req_lo[3].val() * self.cnt16.val();
        // (registered: the low product and the request's top bit's part, added when need takes
        // them)
        for c in 0..4 {
            self.prod_r[c].clock.next = self.clock.val();
            self.prod_r[c].d.next = self.rp[c].val();
            self.ph_r[c].clock.next = self.clock.val();
            self.ph_r[c].d.next = 0.into();
            if self.req_hi[c].val() {
                self.ph_r[c].d.next = self.cnt22.val();
            }
            self.prod_c[c].next = self.prod_r[c].q.val() + self.ph_r[c].q.val();
        }

        // The fit check: R_L (or, at Init of kernel 0, the SM's total) against need.
        self.rl22[0].next = bit_cast::<32, 17>(self.rl[0].q.val());
        self.rl22[1].next = bit_cast::<32, 17>(self.rl[1].q.val());
        self.rl22[2].next = bit_cast::<32, 17>(self.rl[2].q.val());
        self.rl22[3].next = bit_cast::<32, 17>(self.rl[3].q.val());
        self.need17[0].next = self.need[0].q.val().get_bits::<17>(0);
        self.need17[1].next = self.need[1].q.val().get_bits::<17>(0);
        self.need17[2].next = self.need[2].q.val().get_bits::<17>(0);
        self.need17[3].next = self.need[3].q.val().get_bits::<17>(0);
        self.fits.next = true;
        for c in 0..4 {
            self.base[c].next = self.rl22[c].val();
            self.base17[c].next = self.rl[c].q.val();
            if self.base[c].val() < self.need[c].q.val() {
                self.fits.next = false;
            }
            self.left[c].next = self.base17[c].val() - self.need17[c].val();
        }
        self.fit_r.d.next = self.fits.val();


        // Kernel `k`'s current Qn (Select, Final).
        self.q_k.next = 0.into();
        for i in 0..4 {
            if self.k.q.val() == self.ids[i].val() {
                self.q_k.next = self.cur_q[i].q.val();
            }
        }

        // Select's scan: kernel `k` against the best so far (strict `<`: the lowest index wins
        // a tie; the broken variant's `<=` lets a later equal one win).
        self.first.next = self.k.q.val() == self.ids[0].val();
        self.cand_k.next = (bit_cast::<3, 2>(self.k.q.val()) < self.kern.q.val()) & !self.full.q.val().get_bit(self.k.q.val().index());
        self.found_k.next = !self.first.val() & self.found.q.val();
        self.lt.next = self.q_k.val() < self.bq.q.val();
        if self.tie_high.val() {
            self.lt.next = self.q_k.val() <= self.bq.q.val();
        }
        self.better.next = self.cand_k.val() & (!self.found_k.val() | self.lt.val());

        // The fallback, one kernel in two cycles: 100 K Qn (a 16 x 16 product, Qn's top bit
        // added), then its comparison with pct x 2^16.
        self.hk.next = self.c100.val();
        if self.kern.q.val() == self.c2_3.val() {
            self.hk.next = self.c200.val();
        }
        if self.kern.q.val() == self.c3_3.val() {
            self.hk.next = self.c300.val();
        }
        if self.kern.q.val() == self.c4_3.val() {
            self.hk.next = self.c400.val();
        }
        self.hv.next = self.prod44.val();
        if self.qhi.q.val() {
            self.hv.next = bit_cast::<44, 16>(self.hk.val()) << 16;
        }
        self.thr.next = bit_cast::<44, 8>(self.pct.q.val()) << 16;

        // The decision delay.
        self.go.next = self.since.q.val() >= self.delay_r.q.val();

        // `since`: cycles from the last window's last edge.
        if !self.is_idle.val() {
            if self.is_window.val() & self.win_end.val() {
                self.since.d.next = 0.into();
            } else if self.since.q.val() != self.c_max16.val() {
                self.since.d.next = self.since.q.val() + self.c1_16.val();
            }
        }

        self.kernels_in.next = self.kernels.val();
        if self.kernels.val() == self.c0_3.val() {
            self.kernels_in.next = self.c1_3.val();
        }
        if self.kernels.val() > self.c4_3.val() {
            self.kernels_in.next = self.c4_3.val();
        }

        // Idle, RoundWait: `start` samples the configuration and opens a window.
        if (self.is_idle.val() | self.is_round_wait.val()) & self.start.val() {
            if self.is_idle.val() {
                self.valid.d.next = 0.into();
                self.full.d.next = 0.into();
                self.over.d.next = false;
                for i in 0..4 {
                    self.len[i].d.next = 0.into();
                    self.t[i].d.next = 0.into();
                    self.g[i].d.next = 0.into();
                    self.cur_q[i].d.next = 0.into();
                }
            }
            self.kern.d.next = self.kernels_in.val();
            self.last_r.d.next = self.last.val();
            self.window_r.d.next = self.window.val();
            if self.window.val() == self.c0_16.val() {
                self.window_r.d.next = self.c1_16.val();
            }
            self.pct.d.next = self.fallback_pct.val();
            // (delay - 2, saturating: the cycles `since` must reach)
            self.delay_r.d.next = 0.into();
            if self.delay.val() >= self.c2_16.val() {
                self.delay_r.d.next = self.delay.val() - self.c2_16.val();
            }
            self.total[0].d.next = self.total0.val();
            self.total[1].d.next = self.total1.val();
            self.total[2].d.next = self.total2.val();
            self.total[3].d.next = self.total3.val();
            self.phase.d.next = self.c_window.val();
            self.wcount.d.next = 0.into();
        }
        // Window.
        if self.is_window.val() {
            if self.win_end.val() {
                self.phase.d.next = self.c_sum.val();
                self.sm.d.next = 0.into();
                self.n.d.next = 0.into();
                self.a.d.next = 0.into();
            } else {
                self.wcount.d.next = self.wcount.q.val() + self.c1_16.val();
            }
        }

        // Sum.
        if self.is_sum.val() {
            if self.prof.val() {
                self.n.d.next = self.n.q.val() + self.c1_5.val();
                self.a.d.next = self.a.q.val() + bit_cast::<9, 5>(self.sm_j.val());
            }
            if self.sm.q.val() == self.last_sm.val() {
                self.phase.d.next = self.c_scale.val();
                self.sub.d.next = 0.into();
            } else {
                self.sm.d.next = self.sm.q.val() + self.c1_4.val();
            }
        }

        // Scale: the operands, the product, then W A.
        if self.is_scale.val() {
            self.sub.d.next = self.sub.q.val() + self.c1_5.val();
            if self.sub.q.val() == self.c0_5.val() {
                self.ma.d.next = self.window_r.q.val();
                self.mb.d.next = bit_cast::<16, 9>(self.a.q.val());
            }
            if self.sub.q.val() == self.c2_5.val() {
                self.wa.d.next = self.p25.val();
                self.phase.d.next = self.c_collect.val();
                self.sm.d.next = 0.into();
                self.sub.d.next = 0.into();
            }
        }

        // Collect.
        self.advance.next = false;
        if self.is_collect.val() {
            self.advance.next = !self.prof.val();
            if self.prof.val() {
                self.sub.d.next = self.sub.q.val() + self.c1_5.val();
                if self.sub.q.val() == self.c0_5.val() {
                    self.ma.d.next = bit_cast::<16, 5>(self.n.q.val());
                    self.mb.d.next = bit_cast::<16, 5>(self.sm_j.val());
                }
                if self.sub.q.val() == self.c2_5.val() {
                    self.dneg.d.next = self.nj_lt.val();
                    self.dmag.d.next = self.dm.val();
                }
                if self.sub.q.val() == self.c3_5.val() {
                    self.ma.d.next = self.sm_stalls.val();
                    self.mb.d.next = bit_cast::<16, 9>(self.dmag.q.val());
                }
                if self.sub.q.val() == self.c5_5.val() {
                    self.f.d.next = self.fv.val();
                }
                if self.sub.q.val() == self.c6_5.val() {
                    self.ma.d.next = self.i0.val();
                    self.mb.d.next = self.f0.val();
                }
                if self.sub.q.val() == self.c7_5.val() {
                    self.ma.d.next = self.i0.val();
                    self.mb.d.next = self.f1.val();
                }
                if self.sub.q.val() == self.c8_5.val() {
                    self.acc.d.next = self.prod44.val();
                    self.ma.d.next = self.i1.val();
                    self.mb.d.next = self.f0.val();
                }
                if self.sub.q.val() == self.c9_5.val() {
                    self.acc.d.next = self.acc.q.val() + (self.prod44.val() << 16);
                    self.ma.d.next = self.i1.val();
                    self.mb.d.next = self.f1.val();
                }
                if self.sub.q.val() == self.c10_5.val() {
                    self.acc.d.next = self.acc.q.val() + (self.prod44.val() << 16);
                }
                if self.sub.q.val() == self.c11_5.val() {
                    self.score_ram.write_enable.next = true;
                    self.valid.d.next = self.valid.q.val() | (self.one64.val() << self.at_sm.val());
                    self.advance.next = true;
                }
            }
            if self.advance.val() {
                self.sub.d.next = 0.into();
                if self.sm.q.val() == self.last_sm.val() {
                    if self.last_r.q.val() {
                        self.phase.d.next = self.c_build.val();
                        self.k.d.next = 0.into();
                        self.j.d.next = 0.into();
                        self.top.d.next = 0.into();
                    } else {
                        self.phase.d.next = self.c_round_wait.val();
                    }
                } else {
                    self.sm.d.next = self.sm.q.val() + self.c1_4.val();
                }
            }
        }

        // Build: kernel k's staircase; then its normalisation (Norm); then the next kernel.
        self.next_kernel.next = false;
        if self.is_build.val() {
            if self.sub.q.val() == self.c0_5.val() {
                // (the score read, a valid score or 0)
                self.acc.d.next = bit_cast::<44, 43>(self.rv.val());
                self.sub.d.next = self.c1_5.val();
            } else {
                if self.acc.q.val() > self.top44.val() {
                    self.top.d.next = self.acc43.val();
                    self.score_ram.write_enable.next = true;
                    self.score_ram.write_address.next = self.at_klen.val();
                    self.score_ram.write_data.next = self.acc43.val();
                    self.m_ram.write_enable.next = true;
                    for i in 0..4 {
                        if self.k.q.val() == self.ids[i].val() {
                            self.len[i].d.next = self.len[i].q.val() + self.c1_5.val();
                        }
                    }
                }
                self.sub.d.next = 0.into();
                if self.j.q.val() == self.c15_4.val() {
                    // (Norm next: `top` is the peak, the staircase's last step)
                    self.j.d.next = 0.into();
                    self.phase.d.next = self.c_norm.val();
                    self.sub.d.next = self.c1_5.val();
                } else {
                    self.j.d.next = self.j.q.val() + self.c1_4.val();
                }
            }
        }

        // Norm: per step, a load and 17 division steps.
        if self.is_norm.val() {
            if self.len_k.val() == self.c0_5.val() {
                // (no staircase: the kernel never scored)
                self.next_kernel.next = true;
            } else if self.sub.q.val() == self.c1_5.val() {
                self.acc.d.next = bit_cast::<44, 43>(self.score_ram.read_data.val());
                self.quo.d.next = 0.into();
                self.sub.d.next = self.c2_5.val();
            } else {
                self.quo.d.next = self.qd.val();
                self.acc.d.next = self.rem.val() << 1;
                if self.sub.q.val() == self.c18_5.val() {
                    self.qn_ram.write_enable.next = true;
                    if self.jlast.q.val() {
                        self.next_kernel.next = true;
                    } else {
                        self.j.d.next = self.j.q.val() + self.c1_4.val();
                        self.sub.d.next = self.c1_5.val();
                    }
                } else {
                    self.sub.d.next = self.sub.q.val() + self.c1_5.val();
                }
            }
        }
        if self.next_kernel.val() {
            self.top.d.next = 0.into();
            self.j.d.next = 0.into();
            self.sub.d.next = 0.into();
            if self.k_last.val() {
                self.phase.d.next = self.c_init.val();
                self.k.d.next = 0.into();
            } else {
                self.k.d.next = self.k.q.val() + self.c1_2.val();
                self.phase.d.next = self.c_build.val();
            }
        }

        // Init: four cycles per kernel.
        if self.is_init.val() {
            if self.sub.q.val() == self.c0_5.val() {
                for i in 0..4 {
                    if self.k.q.val() == self.ids[i].val() {
                        self.t[i].d.next = self.t0.val();
                        self.g[i].d.next = 0.into();
                        self.cur_q[i].d.next = 0.into();
                        if self.len_k.val() != self.c0_5.val() {
                            self.cur_q[i].d.next = self.qn_ram.read_data.val();
                        }
                    }
                }
                self.cnt.d.next = self.t0.val();
                if self.k.q.val() == self.ids[0].val() {
                    // (R_L starts from the SM's resources)
                    for c in 0..4 {
                        self.rl[c].d.next = self.total[c].q.val();
                    }
                }
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                // (the product registers)
                self.sub.d.next = self.c2_5.val();
            } else if self.sub.q.val() == self.c2_5.val() {
                for c in 0..4 {
                    self.need[c].d.next = self.prod_c[c].val();
                }
                self.sub.d.next = self.c3_5.val();
            } else if self.sub.q.val() == self.c3_5.val() {
                // (the fit check registers)
                self.sub.d.next = self.c4_5.val();
            } else {
                if self.fit_r.q.val() {
                    for c in 0..4 {
                        self.rl[c].d.next = self.left[c].val();
                    }
                }
                self.over.d.next = self.over.q.val() | !self.fit_r.q.val();
                self.sub.d.next = 0.into();
                if self.k_last.val() {
                    self.phase.d.next = self.c_select.val();
                    if self.over.q.val() | !self.fit_r.q.val() {
                        self.phase.d.next = self.c_final.val();
                    }
                    self.res_spatial.d.next = self.over.q.val() | !self.fit_r.q.val();
                    self.k.d.next = 0.into();
                } else {
                    self.k.d.next = self.k.q.val() + self.c1_2.val();
                }
            }
        }

        // Select: one kernel per cycle.
        if self.is_select.val() {
            if self.better.val() {
                self.sel.d.next = self.k.q.val();
                self.gn.d.next = bit_cast::<5, 4>(self.g_k.val()) + self.c1_5.val();
                self.bq.d.next = self.q_k.val();
            }
            self.found.d.next = self.better.val() | self.found_k.val();
            if self.k_last.val() {
                self.k.d.next = 0.into();
                if self.better.val() | self.found_k.val() {
                    self.phase.d.next = self.c_read.val();
                } else {
                    self.phase.d.next = self.c_final.val();
                    self.sub.d.next = 0.into();
                    self.res_spatial.d.next = self.over.q.val();
                }
            } else {
                self.k.d.next = self.k.q.val() + self.c1_2.val();
            }
        }

        // Read.
        if self.is_read.val() {
            if self.gn.q.val() >= self.len_s.val() {
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.full.d.next = self.full.q.val().replace_bit(i, true);
                    }
                }
                self.phase.d.next = self.c_select.val();
                self.k.d.next = 0.into();
            } else {
                self.m_next.d.next = self.m_ram.read_data.val();
                self.q_next.d.next = self.qn_ram.read_data.val();
                self.phase.d.next = self.c_mul.val();
                self.sub.d.next = 0.into();
            }
        }

        // Mul: dT, then dT x R.
        if self.is_mul.val() {
            if self.sub.q.val() == self.c0_5.val() {
                self.cnt.d.next = self.dt.val();
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                // (the product registers)
                self.sub.d.next = self.c2_5.val();
            } else {
                for c in 0..4 {
                    self.need[c].d.next = self.prod_c[c].val();
                }
                self.sub.d.next = 0.into();
                self.phase.d.next = self.c_fit.val();
            }
        }

        // Fit: the check registers, then it acts.
        if self.is_fit.val() & (self.sub.q.val() == self.c0_5.val()) {
            self.sub.d.next = self.c1_5.val();
        }
        if self.is_fit.val() & (self.sub.q.val() != self.c0_5.val()) {
            self.sub.d.next = 0.into();
            if self.fit_r.q.val() {
                for c in 0..4 {
                    self.rl[c].d.next = self.left[c].val();
                }
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.g[i].d.next = self.g[i].q.val() + self.c1_4.val();
                        self.t[i].d.next = self.m_next.q.val();
                        self.cur_q[i].d.next = self.q_next.q.val();
                    }
                }
            } else {
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.full.d.next = self.full.q.val().replace_bit(i, true);
                    }
                }
            }
            self.phase.d.next = self.c_select.val();
            self.k.d.next = 0.into();
        }

        // Final: three cycles per kernel.
        if self.is_final.val() {
            if self.sub.q.val() == self.c0_5.val() {
                self.ma.d.next = self.q_k.val().get_bits::<16>(0);
                self.mb.d.next = self.hk.val();
                self.qhi.d.next = self.q_k.val().get_bit(16);
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                self.sub.d.next = self.c2_5.val();
            } else {
                if self.hv.val() < self.thr.val() {
                    self.res_spatial.d.next = true;
                }
                self.sub.d.next = 0.into();
                if self.k_last.val() {
                    self.phase.d.next = self.c_wait.val();
                    self.k.d.next = 0.into();
                } else {
                    self.k.d.next = self.k.q.val() + self.c1_2.val();
                }
            }
        }

        // Wait: publish.
        if self.is_wait.val() & self.go.val() {
            for i in 0..4 {
                self.quota[i].d.next = 0.into();
                if self.ids3[i].val() < self.kern.q.val() {
                    self.quota[i].d.next = self.t[i].q.val();
                }
            }
            self.spatial.d.next = self.res_spatial.q.val();
            self.done.d.next = true;
            self.phase.d.next = self.c_idle.val();
        }
    }
}
