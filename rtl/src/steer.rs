//! `Steer`: HeteroCore's steering unit (Wang et al., "HeteroCore", §3.3, §4.3, Algorithm 2;
//! interface and cycle contract in `mpgpu_spec::units::steer`, decisions in
//! `docs/heterocore.md`, "The steering unit").
//!
//! The owner table (`own`, one entry per SM), each entry also kept decoded at its load
//! (`dsel`: one bit for its slot and its SM's kind), and each SM's preemption record (`mode`);
//! per SM its window count (`wc`); per slot its last block end (`last`, `lvalid`, and `lw`, the
//! end plus the warm-up, so that "recent" is one compare) and the last decision's sums
//! (`bi`, `si`); the phase and its timer. In the window an SM adds its issue to its count when
//! its decoded owner is a profiled slot: one short carry chain per SM.
//!
//! The decision is sequential over the decision's cycles, on three shift-and-add lanes
//! (`m*` multiplicand shifted left, `n*` multiplier shifted right, `a*` accumulator; a lane
//! adds when its multiplier's low bit is set; `lc` counts the multiplier's width down), so it
//! has no multiplier and no divider. SUM (17 cycles): one SM a cycle, registered, then added to
//! its owner's sum of its kind (`hb`, `hs`) and counted (`nbc`, `nsc`). Per profiled slot:
//! LOAD, RATE (5 cycles: B = big insts x small SMs and S = small insts x big SMs on lanes 0 and
//! 1; faster if B > S), NORM (B and S shifted right together until both fit in 16 bits, from
//! registered flags), NDI and ND (6 cycles: NUM = (B - S) fden on lane 0, S (fden - fnum) and
//! B fnum on lanes 1 and 2, DEN their sum; f from slot k's blocks in three registered stages).
//! Then per pair of profiled slots i < j: PLOAD (operands registered), PGO and PAIR (22 cycles:
//! NUM_i DEN_j and NUM_j DEN_i, 45-bit two's complement, compared with their sign bits
//! flipped); FINAL takes the slots whose rank is below half the profiled ones. Four slots take
//! at most 284 cycles (17 + 4 x 29 with NORM's 13 shifts at most + 6 x 25 + 1) of the
//! contract's 320; `big` and the sums are latched at the phase's end.

use crate::reg::Reg;
use mpgpu_spec::units::steer::{
    BLOCK_BITS, CYCLE_BITS, DECIDE_CYCLES, INST_BITS, SM_INST_BITS, ISSUED_BITS, KMAX, MAX_SMS, MODE_BITS, MODE_DRAIN, MODE_KEEP, MODE_SWITCH, NORM_BITS, OWNER_BITS, PHASE_BITS, PHASE_DECIDE,
    PHASE_IDLE, PHASE_WARM, PHASE_WINDOW, POLICY_ADAPTIVE, POLICY_BITS, POLICY_DRAIN, SLOT_BITS, WINDOW_BITS,
};
use rust_hdl::prelude::*;

/// The packed ports' widths.
const OWN_W: usize = MAX_SMS * OWNER_BITS;
const ISS_W: usize = MAX_SMS * ISSUED_BITS;
const MODE_W: usize = MAX_SMS * MODE_BITS;
const BLK_W: usize = KMAX * BLOCK_BITS;
/// The decision's widths: NUM (signed), DEN, and the lanes (a product of the two).
const NUM_BITS: usize = NORM_BITS + BLOCK_BITS + 1;
const DEN_BITS: usize = NORM_BITS + BLOCK_BITS;
const PROD_BITS: usize = NUM_BITS + DEN_BITS;
// (the logic writes the widths it slices by as literals: 3-bit owners and issue, 6-bit blocks,
// the sign bit of NUM, the normalisation's 16 bits)
const _: () = assert!(MAX_SMS == 16 && KMAX == 4 && OWNER_BITS == 3 && ISSUED_BITS == 3 && MODE_BITS == 2 && BLOCK_BITS == 6 && NUM_BITS == 23 && NORM_BITS == 16 && SLOT_BITS == 2);

/// The decision's steps (written as literals in the logic; 8 is SUM, 9 NDI, 10 PGO).
const ST_IDLE: u64 = 0;
const ST_LOAD: u64 = 1;
const ST_RATE: u64 = 2;
const ST_NORM: u64 = 3;
const ST_ND: u64 = 4;
const ST_PLOAD: u64 = 5;
const ST_PAIR: u64 = 6;
const ST_FINAL: u64 = 7;
const _: () = assert!(ST_IDLE == 0 && ST_LOAD == 1 && ST_RATE == 2 && ST_NORM == 3 && ST_ND == 4 && ST_PLOAD == 5 && ST_PAIR == 6 && ST_FINAL == 7);
// (the spec's codes, written as literals in the logic)
const _: () = assert!(PHASE_IDLE == 0 && PHASE_WARM == 1 && PHASE_WINDOW == 2 && PHASE_DECIDE == 3);
const _: () = assert!(MODE_KEEP == 0 && MODE_DRAIN == 1 && MODE_SWITCH == 2 && POLICY_ADAPTIVE == 0 && POLICY_DRAIN == 1);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SteerFaults {
    /// The window ends a cycle early (its last cycle's issue uncounted).
    pub short_window: bool,
    /// The pairs' products compare unsigned (a loss ranks above a gain).
    pub unsigned_compare: bool,
    /// An SM changing owner always context-switches (the adaptive choice ignored).
    pub always_switch: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Steer {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    pub now: Signal<In, Bits<CYCLE_BITS>>,
    pub warmup: Signal<In, Bits<WINDOW_BITS>>,
    pub window: Signal<In, Bits<WINDOW_BITS>>,
    pub policy: Signal<In, Bits<POLICY_BITS>>,
    pub big_sms: Signal<In, Bits<MAX_SMS>>,
    pub small_sms: Signal<In, Bits<MAX_SMS>>,
    pub active: Signal<In, Bits<KMAX>>,
    pub fresh: Signal<In, Bits<KMAX>>,
    pub ends: Signal<In, Bits<KMAX>>,
    pub start: Signal<In, Bit>,
    pub stop: Signal<In, Bit>,
    pub load: Signal<In, Bit>,
    pub owners_in: Signal<In, Bits<OWN_W>>,
    pub issued: Signal<In, Bits<ISS_W>>,
    pub cb: Signal<In, Bits<BLK_W>>,
    pub cs: Signal<In, Bits<BLK_W>>,
    pub c0: Signal<In, Bits<BLK_W>>,
    pub owners: Signal<Out, Bits<OWN_W>>,
    pub modes: Signal<Out, Bits<MODE_W>>,
    pub phase: Signal<Out, Bits<PHASE_BITS>>,
    pub decided: Signal<Out, Bit>,
    pub big: Signal<Out, Bits<KMAX>>,
    pub ended: Signal<Out, Bits<KMAX>>,
    pub big_insts0: Signal<Out, Bits<INST_BITS>>,
    pub big_insts1: Signal<Out, Bits<INST_BITS>>,
    pub big_insts2: Signal<Out, Bits<INST_BITS>>,
    pub big_insts3: Signal<Out, Bits<INST_BITS>>,
    pub small_insts0: Signal<Out, Bits<INST_BITS>>,
    pub small_insts1: Signal<Out, Bits<INST_BITS>>,
    pub small_insts2: Signal<Out, Bits<INST_BITS>>,
    pub small_insts3: Signal<Out, Bits<INST_BITS>>,
    f_short: Constant<Bit>,
    f_unsigned: Constant<Bit>,
    f_switch: Constant<Bit>,
    c_decide: Constant<Bits<WINDOW_BITS>>,
    c_flip: Constant<Bits<PROD_BITS>>,
    c_ext: Constant<Bits<PROD_BITS>>,
    c_z8: Constant<Bits<8>>,
    // The visible registers (`mpgpu_spec::units::steer::State`).
    pub own: [Reg<Bits<OWNER_BITS>>; MAX_SMS],
    pub mode: [Reg<Bits<MODE_BITS>>; MAX_SMS],
    pub ph: Reg<Bits<PHASE_BITS>>,
    pub timer: Reg<Bits<WINDOW_BITS>>,
    pub prof: Reg<Bits<KMAX>>,
    pub bi: [Reg<Bits<INST_BITS>>; KMAX],
    pub si: [Reg<Bits<INST_BITS>>; KMAX],
    pub wc: [Reg<Bits<SM_INST_BITS>>; MAX_SMS],
    pub endm: Reg<Bits<KMAX>>,
    pub lvalid: Reg<Bits<KMAX>>,
    pub last: [Reg<Bits<CYCLE_BITS>>; KMAX],
    pub dec: Reg<Bit>,
    pub bigr: Reg<Bits<KMAX>>,
    // The decision's datapath.
    /// Per SM, its owner decoded at the load: bit k, big SM of slot k; bit 4 + k, small SM.
    pub dsel: [Reg<Bits<8>>; MAX_SMS],
    pub step: Reg<Bits<4>>,
    /// SUM's SM; the sums per slot of its big and its small SMs' counts, and the SMs counted.
    pub sc: Reg<Bits<5>>,
    pub wcq: Reg<Bits<SM_INST_BITS>>,
    pub dsq: Reg<Bits<8>>,
    pub sv: Reg<Bit>,
    /// Slot k's blocks per SM, registered; the pair's operands, registered.
    pub cbq: Reg<Bits<BLOCK_BITS>>,
    pub csq: Reg<Bits<BLOCK_BITS>>,
    pub c0q: Reg<Bits<BLOCK_BITS>>,
    pub xiq: Reg<Bits<PROD_BITS>>,
    pub xjq: Reg<Bits<PROD_BITS>>,
    pub diq: Reg<Bits<DEN_BITS>>,
    pub djq: Reg<Bits<DEN_BITS>>,
    pub hb: [Reg<Bits<INST_BITS>>; KMAX],
    pub hs: [Reg<Bits<INST_BITS>>; KMAX],
    pub nbc: [Reg<Bits<5>>; KMAX],
    pub nsc: [Reg<Bits<5>>; KMAX],
    /// Slot k's f = fnum / fden and fden - fnum, registered.
    pub fdq: Reg<Bits<BLOCK_BITS>>,
    /// NORM's flags: B or S above 16 bits, above 17, and the last cycle shifted them.
    pub h16: Reg<Bit>,
    pub h17: Reg<Bit>,
    pub shl: Reg<Bit>,
    /// Per slot, its last block end plus the warm-up (33 bits, no wrap).
    pub lw: [Reg<Bits<33>>; KMAX],
    pub fnq: Reg<Bits<BLOCK_BITS>>,
    pub fdnq: Reg<Bits<BLOCK_BITS>>,
    /// Cycles left on the lanes.
    pub lc: Reg<Bits<5>>,
    pub k: Reg<Bits<SLOT_BITS>>,
    pub pi: Reg<Bits<SLOT_BITS>>,
    pub pj: Reg<Bits<SLOT_BITS>>,
    pub m0: Reg<Bits<PROD_BITS>>,
    pub m1: Reg<Bits<PROD_BITS>>,
    pub m2: Reg<Bits<PROD_BITS>>,
    pub n0: Reg<Bits<DEN_BITS>>,
    pub n1: Reg<Bits<DEN_BITS>>,
    pub n2: Reg<Bits<DEN_BITS>>,
    pub a0: Reg<Bits<PROD_BITS>>,
    pub a1: Reg<Bits<PROD_BITS>>,
    pub a2: Reg<Bits<PROD_BITS>>,
    pub fast: Reg<Bits<KMAX>>,
    pub num: [Reg<Bits<NUM_BITS>>; KMAX],
    pub den: [Reg<Bits<DEN_BITS>>; KMAX],
    pub rank: [Reg<Bits<2>>; KMAX],
    pub res: Reg<Bits<KMAX>>,
    // Combinational.
    recent: Signal<Local, Bits<KMAX>>,
    hi: Signal<Local, Bit>,
    short: Signal<Local, Bits<KMAX>>,
    drain: Signal<Local, Bits<KMAX>>,
    nw: Signal<Local, Bits<OWNER_BITS>>,
    po: Signal<Local, Bits<OWN_W>>,
    pm: Signal<Local, Bits<MODE_W>>,
    t3: Signal<Local, Bits<ISSUED_BITS>>,
    pm8: Signal<Local, Bits<8>>,
    cnt_on: [Signal<Local, Bit>; MAX_SMS],
    inc: [Signal<Local, Bits<SM_INST_BITS>>; MAX_SMS],
    sel_bs: Signal<Local, Bits<INST_BITS>>,
    sel_ss: Signal<Local, Bits<INST_BITS>>,
    sel_nb: Signal<Local, Bits<5>>,
    sel_ns: Signal<Local, Bits<5>>,
    sel_wc: Signal<Local, Bits<SM_INST_BITS>>,
    sel_ds: Signal<Local, Bits<8>>,
    sel_cb: Signal<Local, Bits<BLOCK_BITS>>,
    sel_cs: Signal<Local, Bits<BLOCK_BITS>>,
    sel_c0: Signal<Local, Bits<BLOCK_BITS>>,
    fden: Signal<Local, Bits<BLOCK_BITS>>,
    fnum: Signal<Local, Bits<BLOCK_BITS>>,
    over: Signal<Local, Bits<BLOCK_BITS>>,
    ni: Signal<Local, Bits<NUM_BITS>>,
    nj: Signal<Local, Bits<NUM_BITS>>,
    di: Signal<Local, Bits<DEN_BITS>>,
    dj: Signal<Local, Bits<DEN_BITS>>,
    xi: Signal<Local, Bits<PROD_BITS>>,
    xj: Signal<Local, Bits<PROD_BITS>>,
    dsum: Signal<Local, Bits<DEN_BITS>>,
    busy: Signal<Local, Bit>,
    ge: Signal<Local, Bit>,
    pboth: Signal<Local, Bit>,
    pcount: Signal<Local, Bits<3>>,
    half: Signal<Local, Bits<2>>,
    fin: Signal<Local, Bits<KMAX>>,
}

impl Steer {
    pub fn new(faults: SteerFaults) -> Self {
        Self {
            clock: Default::default(),
            now: Default::default(),
            warmup: Default::default(),
            window: Default::default(),
            policy: Default::default(),
            big_sms: Default::default(),
            small_sms: Default::default(),
            active: Default::default(),
            fresh: Default::default(),
            ends: Default::default(),
            start: Default::default(),
            stop: Default::default(),
            load: Default::default(),
            owners_in: Default::default(),
            issued: Default::default(),
            cb: Default::default(),
            cs: Default::default(),
            c0: Default::default(),
            owners: Default::default(),
            modes: Default::default(),
            phase: Default::default(),
            decided: Default::default(),
            big: Default::default(),
            ended: Default::default(),
            big_insts0: Default::default(),
            big_insts1: Default::default(),
            big_insts2: Default::default(),
            big_insts3: Default::default(),
            small_insts0: Default::default(),
            small_insts1: Default::default(),
            small_insts2: Default::default(),
            small_insts3: Default::default(),
            f_short: Constant::new(faults.short_window),
            f_unsigned: Constant::new(faults.unsigned_compare),
            f_switch: Constant::new(faults.always_switch),
            c_decide: Constant::new((DECIDE_CYCLES as u64).into()),
            c_flip: Constant::new((1u64 << (PROD_BITS - 1)).into()),
            c_z8: Constant::new(0u64.into()),
            c_ext: Constant::new((((1u64 << PROD_BITS) - 1) ^ ((1u64 << NUM_BITS) - 1)).into()),
            own: Default::default(),
            mode: Default::default(),
            ph: Default::default(),
            timer: Default::default(),
            prof: Default::default(),
            bi: Default::default(),
            si: Default::default(),
            endm: Default::default(),
            lvalid: Default::default(),
            last: Default::default(),
            dec: Default::default(),
            bigr: Default::default(),
            dsel: Default::default(),
            step: Default::default(),
            sc: Default::default(),
            wcq: Default::default(),
            dsq: Default::default(),
            sv: Default::default(),
            cbq: Default::default(),
            csq: Default::default(),
            c0q: Default::default(),
            xiq: Default::default(),
            xjq: Default::default(),
            diq: Default::default(),
            djq: Default::default(),
            hb: Default::default(),
            hs: Default::default(),
            nbc: Default::default(),
            nsc: Default::default(),
            fdq: Default::default(),
            h16: Default::default(),
            h17: Default::default(),
            shl: Default::default(),
            lw: Default::default(),
            fnq: Default::default(),
            fdnq: Default::default(),
            wc: Default::default(),
            lc: Default::default(),
            k: Default::default(),
            pi: Default::default(),
            pj: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            n0: Default::default(),
            n1: Default::default(),
            n2: Default::default(),
            a0: Default::default(),
            a1: Default::default(),
            a2: Default::default(),
            fast: Default::default(),
            num: Default::default(),
            den: Default::default(),
            rank: Default::default(),
            res: Default::default(),
            recent: Default::default(),
            hi: Default::default(),
            short: Default::default(),
            drain: Default::default(),
            nw: Default::default(),
            t3: Default::default(),
            pm8: Default::default(),
            cnt_on: Default::default(),
            inc: Default::default(),
            sel_bs: Default::default(),
            sel_ss: Default::default(),
            sel_nb: Default::default(),
            sel_ns: Default::default(),
            sel_wc: Default::default(),
            sel_ds: Default::default(),
            po: Default::default(),
            pm: Default::default(),
            sel_cb: Default::default(),
            sel_cs: Default::default(),
            sel_c0: Default::default(),
            fden: Default::default(),
            fnum: Default::default(),
            over: Default::default(),
            ni: Default::default(),
            nj: Default::default(),
            di: Default::default(),
            dj: Default::default(),
            xi: Default::default(),
            xj: Default::default(),
            dsum: Default::default(),
            busy: Default::default(),
            ge: Default::default(),
            pboth: Default::default(),
            pcount: Default::default(),
            half: Default::default(),
            fin: Default::default(),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.now.connect();
        self.warmup.connect();
        self.window.connect();
        self.policy.connect();
        self.big_sms.connect();
        self.small_sms.connect();
        self.active.connect();
        self.fresh.connect();
        self.ends.connect();
        self.start.connect();
        self.stop.connect();
        self.load.connect();
        self.owners_in.connect();
        self.issued.connect();
        self.cb.connect();
        self.cs.connect();
        self.c0.connect();
        self.connect_all();
    }
}

impl Logic for Steer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ph, timer, prof, endm, lvalid, dec, bigr, step, lc, sc, wcq, dsq, sv, cbq, csq, c0q, xiq, xjq, diq, djq, fdq, fnq, fdnq, h16, h17, shl, k, pi, pj, m0, m1, m2, n0, n1, n2, a0, a1, a2, fast, res);
        for s in 0..MAX_SMS {
            self.own[s].clock.next = self.clock.val();
            self.own[s].d.next = self.own[s].q.val();
            self.mode[s].clock.next = self.clock.val();
            self.mode[s].d.next = self.mode[s].q.val();
            self.dsel[s].clock.next = self.clock.val();
            self.dsel[s].d.next = self.dsel[s].q.val();
            self.wc[s].clock.next = self.clock.val();
            self.wc[s].d.next = self.wc[s].q.val();
        }
        for x in 0..KMAX {
            self.bi[x].clock.next = self.clock.val();
            self.bi[x].d.next = self.bi[x].q.val();
            self.si[x].clock.next = self.clock.val();
            self.si[x].d.next = self.si[x].q.val();
            self.last[x].clock.next = self.clock.val();
            self.last[x].d.next = self.last[x].q.val();
            self.lw[x].clock.next = self.clock.val();
            self.lw[x].d.next = self.lw[x].q.val();
            self.num[x].clock.next = self.clock.val();
            self.num[x].d.next = self.num[x].q.val();
            self.den[x].clock.next = self.clock.val();
            self.den[x].d.next = self.den[x].q.val();
            self.rank[x].clock.next = self.clock.val();
            self.rank[x].d.next = self.rank[x].q.val();
            self.hb[x].clock.next = self.clock.val();
            self.hb[x].d.next = self.hb[x].q.val();
            self.hs[x].clock.next = self.clock.val();
            self.hs[x].d.next = self.hs[x].q.val();
            self.nbc[x].clock.next = self.clock.val();
            self.nbc[x].d.next = self.nbc[x].q.val();
            self.nsc[x].clock.next = self.clock.val();
            self.nsc[x].d.next = self.nsc[x].q.val();
        }

        // (scratch values some branches set, defined in every path)
        self.nw.next = 0.into();
        self.t3.next = 0.into();

        // Outputs, from the registers.
        self.po.next = 0.into();
        self.pm.next = 0.into();
        for s in 0..MAX_SMS {
            self.po.next = self.po.val().replace_bit(3 * s, self.own[s].q.val().get_bit(0));
            self.po.next = self.po.val().replace_bit(3 * s + 1, self.own[s].q.val().get_bit(1));
            self.po.next = self.po.val().replace_bit(3 * s + 2, self.own[s].q.val().get_bit(2));
            self.pm.next = self.pm.val().replace_bit(2 * s, self.mode[s].q.val().get_bit(0));
            self.pm.next = self.pm.val().replace_bit(2 * s + 1, self.mode[s].q.val().get_bit(1));
        }
        self.owners.next = self.po.val();
        self.modes.next = self.pm.val();
        self.phase.next = self.ph.q.val();
        self.decided.next = self.dec.q.val();
        self.big.next = self.bigr.q.val();
        self.ended.next = self.endm.q.val();
        self.big_insts0.next = self.bi[0].q.val();
        self.big_insts1.next = self.bi[1].q.val();
        self.big_insts2.next = self.bi[2].q.val();
        self.big_insts3.next = self.bi[3].q.val();
        self.small_insts0.next = self.si[0].q.val();
        self.small_insts1.next = self.si[1].q.val();
        self.small_insts2.next = self.si[2].q.val();
        self.small_insts3.next = self.si[3].q.val();

        // Slots: which kernels' blocks are short, for the load's preemption records.
        self.recent.next = 0.into();
        for x in 0..KMAX {
            if self.lvalid.q.val().get_bit(x) & (bit_cast::<33, CYCLE_BITS>(self.now.val()) < self.lw[x].q.val()) {
                self.recent.next = self.recent.val().replace_bit(x, true);
            }
        }
        self.short.next = self.ends.val() | self.recent.val();
        if self.dec.q.val() {
            self.short.next = self.endm.q.val();
        }
        self.drain.next = 0.into();
        if self.policy.val() == 1 {
            self.drain.next = 15.into();
        }
        if self.policy.val() == 0 {
            self.drain.next = self.short.val();
        }
        // (a fresh slot forgets its ends; a block end stamps its slot)
        self.lvalid.d.next = (self.lvalid.q.val() & !self.fresh.val()) | self.ends.val();
        self.endm.d.next = self.endm.q.val() & !self.fresh.val();
        if self.ph.q.val() == 1 {
            self.endm.d.next = (self.endm.q.val() & !self.fresh.val()) | self.ends.val();
        }
        for x in 0..KMAX {
            if self.ends.val().get_bit(x) {
                self.last[x].d.next = self.now.val();
                self.lw[x].d.next = bit_cast::<33, CYCLE_BITS>(self.now.val()) + bit_cast::<33, WINDOW_BITS>(self.warmup.val());
            }
        }

        // Load.
        if self.load.val() {
            for s in 0..MAX_SMS {
                self.nw.next = self.owners_in.val().get_bits::<OWNER_BITS>(3 * s);
                self.own[s].d.next = self.nw.val();
                self.dsel[s].d.next = 0.into();
                for x in 0..KMAX {
                    if self.nw.val().get_bit(2) & (self.nw.val().get_bits::<SLOT_BITS>(0) == x.to_bits()) {
                        if self.big_sms.val().get_bit(s) {
                            self.dsel[s].d.next = self.c_z8.val().replace_bit(x, true);
                        } else if self.small_sms.val().get_bit(s) {
                            self.dsel[s].d.next = self.c_z8.val().replace_bit(x + 4, true);
                        }
                    }
                }
                self.mode[s].d.next = 0.into();
                if (self.nw.val() != self.own[s].q.val()) & self.own[s].q.val().get_bit(2) {
                    self.mode[s].d.next = 2.into();
                    if self.drain.val().get_bit(self.own[s].q.val().get_bits::<SLOT_BITS>(0).index()) & !self.f_switch.val() {
                        self.mode[s].d.next = 1.into();
                    }
                }
            }
        }

        // The window's counting: an SM counts if its kind is big or small and its owner is
        // profiled (its decoded owner against the profiled slots, both kinds).
        self.pm8.next = bit_cast::<8, KMAX>(self.prof.q.val()) | (bit_cast::<8, KMAX>(self.prof.q.val()) << 4);
        for s in 0..MAX_SMS {
            self.t3.next = self.issued.val().get_bits::<ISSUED_BITS>(3 * s);
            self.cnt_on[s].next = (self.dsel[s].q.val() & self.pm8.val()) != 0;
            self.inc[s].next = bit_cast::<SM_INST_BITS, ISSUED_BITS>(self.t3.val());
        }

        // The decision's datapath: the lanes step while `lc` counts down (each step loads its lanes'
        // multipliers and multiplicands, and clears the accumulators it reads, before it runs).
        self.busy.next = self.lc.q.val() != 0;
        if self.busy.val() {
            self.lc.d.next = self.lc.q.val() - 1;
            if self.n0.q.val().get_bit(0) {
                self.a0.d.next = self.a0.q.val() + self.m0.q.val();
            }
            if self.n1.q.val().get_bit(0) {
                self.a1.d.next = self.a1.q.val() + self.m1.q.val();
            }
            if self.n2.q.val().get_bit(0) {
                self.a2.d.next = self.a2.q.val() + self.m2.q.val();
            }
            self.m0.d.next = self.m0.q.val() << 1;
            self.m1.d.next = self.m1.q.val() << 1;
            self.m2.d.next = self.m2.q.val() << 1;
            self.n0.d.next = self.n0.q.val() >> 1;
            self.n1.d.next = self.n1.q.val() >> 1;
            self.n2.d.next = self.n2.q.val() >> 1;
        }
        // Slot k's sums, SMs and blocks per SM.
        self.sel_bs.next = 0.into();
        self.sel_ss.next = 0.into();
        self.sel_nb.next = 0.into();
        self.sel_ns.next = 0.into();
        self.sel_cb.next = 0.into();
        self.sel_cs.next = 0.into();
        self.sel_c0.next = 0.into();
        for x in 0..KMAX {
            if self.k.q.val() == x.to_bits() {
                self.sel_bs.next = self.hb[x].q.val();
                self.sel_ss.next = self.hs[x].q.val();
                self.sel_nb.next = self.nbc[x].q.val();
                self.sel_ns.next = self.nsc[x].q.val();
                self.sel_cb.next = self.cb.val().get_bits::<BLOCK_BITS>(6 * x);
                self.sel_cs.next = self.cs.val().get_bits::<BLOCK_BITS>(6 * x);
                self.sel_c0.next = self.c0.val().get_bits::<BLOCK_BITS>(6 * x);
            }
        }
        // SM `sc`'s count and decoded owner, for the sums.
        self.sel_wc.next = 0.into();
        self.sel_ds.next = 0.into();
        for s in 0..MAX_SMS {
            if self.sc.q.val() == s.to_bits() {
                self.sel_wc.next = self.wc[s].q.val();
                self.sel_ds.next = self.dsel[s].q.val();
            }
        }
        // f = fnum / fden: the baseline SM between the small and the big SM by blocks per SM.
        self.fden.next = 2.into();
        self.fnum.next = 1.into();
        // (in three registered stages from slot k's blocks: k holds from LOAD to NDI, eight
        // cycles at least)
        self.cbq.d.next = self.sel_cb.val();
        self.csq.d.next = self.sel_cs.val();
        self.c0q.d.next = self.sel_c0.val();
        self.over.next = 0.into();
        if self.c0q.q.val() > self.csq.q.val() {
            self.over.next = self.c0q.q.val() - self.csq.q.val();
        }
        if self.cbq.q.val() > self.csq.q.val() {
            self.fden.next = self.cbq.q.val() - self.csq.q.val();
            self.fnum.next = self.over.val();
            if self.over.val() > self.fden.val() {
                self.fnum.next = self.fden.val();
            }
        }
        self.fdq.d.next = self.fden.val();
        self.fnq.d.next = self.fnum.val();
        self.fdnq.d.next = self.fdq.q.val() - self.fnq.q.val();
        // The pair's operands (NUM sign-extended).
        self.ni.next = 0.into();
        self.nj.next = 0.into();
        self.di.next = 0.into();
        self.dj.next = 0.into();
        for x in 0..KMAX {
            if self.pi.q.val() == x.to_bits() {
                self.ni.next = self.num[x].q.val();
                self.di.next = self.den[x].q.val();
            }
            if self.pj.q.val() == x.to_bits() {
                self.nj.next = self.num[x].q.val();
                self.dj.next = self.den[x].q.val();
            }
        }
        self.xi.next = bit_cast::<PROD_BITS, NUM_BITS>(self.ni.val());
        if self.ni.val().get_bit(22) {
            self.xi.next = bit_cast::<PROD_BITS, NUM_BITS>(self.ni.val()) | self.c_ext.val();
        }
        self.xj.next = bit_cast::<PROD_BITS, NUM_BITS>(self.nj.val());
        if self.nj.val().get_bit(22) {
            self.xj.next = bit_cast::<PROD_BITS, NUM_BITS>(self.nj.val()) | self.c_ext.val();
        }
        // NUM_j DEN_i >= NUM_i DEN_j, signed (the sign bits flipped).
        self.ge.next = (self.a1.q.val() ^ self.c_flip.val()) >= (self.a0.q.val() ^ self.c_flip.val());
        if self.f_unsigned.val() {
            self.ge.next = self.a1.q.val() >= self.a0.q.val();
        }
        self.pboth.next = self.prof.q.val().get_bit(self.pi.q.val().index()) & self.prof.q.val().get_bit(self.pj.q.val().index());
        self.pcount.next = 0.into();
        for x in 0..KMAX {
            if self.prof.q.val().get_bit(x) {
                self.pcount.next = self.pcount.val() + 1;
            }
        }
        self.half.next = bit_cast::<2, 3>(self.pcount.val() >> 1);
        self.fin.next = 0.into();
        for x in 0..KMAX {
            if self.prof.q.val().get_bit(x) & (self.rank[x].q.val() < self.half.val()) {
                self.fin.next = self.fin.val().replace_bit(x, true);
            }
        }
        if (self.fast.q.val() & self.prof.q.val()) == self.prof.q.val() {
            self.fin.next = 0.into();
        }

        // The decision's steps. SUM: one SM a cycle, its count into its slot's sum of its
        // kind, and the SM counted.
        // (SM `sc`'s count and decoded owner are registered in one cycle, `sv` marking them,
        // and summed in the next)
        self.wcq.d.next = self.sel_wc.val();
        self.dsq.d.next = self.sel_ds.val();
        self.sv.d.next = (self.step.q.val() == 8) & !self.sc.q.val().get_bit(4);
        if (self.step.q.val() == 8) & self.sv.q.val() {
            for x in 0..KMAX {
                if self.dsq.q.val().get_bit(x) {
                    self.hb[x].d.next = self.hb[x].q.val() + bit_cast::<INST_BITS, SM_INST_BITS>(self.wcq.q.val());
                    self.nbc[x].d.next = self.nbc[x].q.val() + 1;
                }
                if self.dsq.q.val().get_bit(x + 4) {
                    self.hs[x].d.next = self.hs[x].q.val() + bit_cast::<INST_BITS, SM_INST_BITS>(self.wcq.q.val());
                    self.nsc[x].d.next = self.nsc[x].q.val() + 1;
                }
            }
        }
        if self.step.q.val() == 8 {
            if self.sc.q.val().get_bit(4) {
                self.step.d.next = 1.into();
            } else {
                self.sc.d.next = self.sc.q.val() + 1;
            }
        }
        if self.step.q.val() == 1 {
            if self.prof.q.val().get_bit(self.k.q.val().index()) {
                self.m0.d.next = bit_cast::<PROD_BITS, INST_BITS>(self.sel_bs.val());
                self.m1.d.next = bit_cast::<PROD_BITS, INST_BITS>(self.sel_ss.val());
                self.n0.d.next = bit_cast::<DEN_BITS, 5>(self.sel_ns.val());
                self.n1.d.next = bit_cast::<DEN_BITS, 5>(self.sel_nb.val());
                self.a0.d.next = 0.into();
                self.a1.d.next = 0.into();
                self.step.d.next = 2.into();
                self.lc.d.next = 5.into();
            } else if self.k.q.val() == 3 {
                self.step.d.next = 5.into();
                self.pi.d.next = 0.into();
                self.pj.d.next = 1.into();
            } else {
                self.k.d.next = self.k.q.val() + 1;
            }
        }
        if (self.step.q.val() == 2) & !self.busy.val() {
            for x in 0..KMAX {
                if (self.a0.q.val() > self.a1.q.val()) & (self.k.q.val() == x.to_bits()) {
                    self.fast.d.next = self.fast.q.val().replace_bit(x, true);
                }
            }
            self.step.d.next = 3.into();
        }
        // (whether B or S has a bit above the 16, from registered flags: the value as the last
        // edge left it, or as the NORM step before shifted it)
        self.h16.d.next = ((self.a0.q.val() | self.a1.q.val()) >> 16) != 0;
        self.h17.d.next = ((self.a0.q.val() | self.a1.q.val()) >> 17) != 0;
        self.hi.next = self.h16.q.val();
        if self.shl.q.val() {
            self.hi.next = self.h17.q.val();
        }
        self.shl.d.next = false;
        if self.step.q.val() == 3 {
            if self.hi.val() {
                self.shl.d.next = true;
                self.a0.d.next = self.a0.q.val() >> 1;
                self.a1.d.next = self.a1.q.val() >> 1;
            } else {
                self.step.d.next = 9.into();
            }
        }
        // NDI: NUM = (B - S) fden; DEN = S (fden - fnum) + B fnum (f registered from slot k's
        // blocks, which hold since its LOAD).
        if self.step.q.val() == 9 {
            self.m0.d.next = self.a0.q.val() - self.a1.q.val();
            self.n0.d.next = bit_cast::<DEN_BITS, BLOCK_BITS>(self.fdq.q.val());
            self.m1.d.next = self.a1.q.val();
            self.n1.d.next = bit_cast::<DEN_BITS, BLOCK_BITS>(self.fdnq.q.val());
            self.m2.d.next = self.a0.q.val();
            self.n2.d.next = bit_cast::<DEN_BITS, BLOCK_BITS>(self.fnq.q.val());
            self.a0.d.next = 0.into();
            self.a1.d.next = 0.into();
            self.a2.d.next = 0.into();
            self.step.d.next = 4.into();
            self.lc.d.next = 6.into();
        }
        self.dsum.next = self.a1.q.val().get_bits::<DEN_BITS>(0) + self.a2.q.val().get_bits::<DEN_BITS>(0);
        if (self.step.q.val() == 4) & !self.busy.val() {
            for x in 0..KMAX {
                if self.k.q.val() == x.to_bits() {
                    self.num[x].d.next = self.a0.q.val().get_bits::<NUM_BITS>(0);
                    self.den[x].d.next = self.dsum.val();
                }
            }
            self.step.d.next = 1.into();
            self.k.d.next = self.k.q.val() + 1;
            if self.k.q.val() == 3 {
                self.step.d.next = 5.into();
                self.pi.d.next = 0.into();
                self.pj.d.next = 1.into();
            }
        }
        // PLOAD registers the pair's operands; PGO loads them onto the lanes.
        if (self.step.q.val() == 5) & self.pboth.val() {
            self.xiq.d.next = self.xi.val();
            self.xjq.d.next = self.xj.val();
            self.diq.d.next = self.di.val();
            self.djq.d.next = self.dj.val();
            self.step.d.next = 10.into();
        }
        if self.step.q.val() == 10 {
            self.m0.d.next = self.xiq.q.val();
            self.n0.d.next = self.djq.q.val();
            self.m1.d.next = self.xjq.q.val();
            self.n1.d.next = self.diq.q.val();
            self.a0.d.next = 0.into();
            self.a1.d.next = 0.into();
            self.step.d.next = 6.into();
            self.lc.d.next = 22.into();
        }
        if (self.step.q.val() == 6) & !self.busy.val() {
            for x in 0..KMAX {
                if self.ge.val() & (self.pi.q.val() == x.to_bits()) {
                    self.rank[x].d.next = self.rank[x].q.val() + 1;
                }
                if !self.ge.val() & (self.pj.q.val() == x.to_bits()) {
                    self.rank[x].d.next = self.rank[x].q.val() + 1;
                }
            }
        }
        // (the next pair: after the pair's products, or at once if a slot of it is not profiled)
        if ((self.step.q.val() == 6) & !self.busy.val()) | ((self.step.q.val() == 5) & !self.pboth.val()) {
            self.step.d.next = 5.into();
            if self.pj.q.val() == 3 {
                if self.pi.q.val() == 2 {
                    self.step.d.next = 7.into();
                } else {
                    self.pi.d.next = self.pi.q.val() + 1;
                    self.pj.d.next = self.pi.q.val() + 2;
                }
            } else {
                self.pj.d.next = self.pj.q.val() + 1;
            }
        }
        if self.step.q.val() == 7 {
            self.res.d.next = self.fin.val();
            self.step.d.next = 0.into();
        }

        // The phase.
        self.dec.d.next = false;
        if self.start.val() {
            self.ph.d.next = 1.into();
            self.timer.d.next = self.warmup.val();
            self.prof.d.next = self.active.val();
            self.endm.d.next = 0.into();
            self.step.d.next = 0.into();
            self.lc.d.next = 0.into();
            for x in 0..KMAX {
                self.bi[x].d.next = 0.into();
                self.si[x].d.next = 0.into();
            }
            for s in 0..MAX_SMS {
                self.wc[s].d.next = 0.into();
            }
        } else if self.stop.val() {
            self.ph.d.next = 0.into();
            self.timer.d.next = 0.into();
            self.step.d.next = 0.into();
            self.lc.d.next = 0.into();
        } else if self.ph.q.val() == 1 {
            self.timer.d.next = self.timer.q.val() - 1;
            if self.timer.q.val() <= 1 {
                self.ph.d.next = 2.into();
                self.timer.d.next = self.window.val();
            }
        } else if self.ph.q.val() == 2 {
            for s in 0..MAX_SMS {
                if self.cnt_on[s].val() {
                    self.wc[s].d.next = self.wc[s].q.val() + self.inc[s].val();
                }
            }
            self.timer.d.next = self.timer.q.val() - 1;
            if (self.timer.q.val() <= 1) | (self.f_short.val() & (self.timer.q.val() == 2)) {
                self.ph.d.next = 3.into();
                self.timer.d.next = self.c_decide.val();
                self.step.d.next = 8.into();
                self.sc.d.next = 0.into();
                self.k.d.next = 0.into();
                self.fast.d.next = 0.into();
                for x in 0..KMAX {
                    self.hb[x].d.next = 0.into();
                    self.hs[x].d.next = 0.into();
                    self.nbc[x].d.next = 0.into();
                    self.nsc[x].d.next = 0.into();
                }
                for x in 0..KMAX {
                    self.rank[x].d.next = 0.into();
                }
            }
        } else if self.ph.q.val() == 3 {
            self.timer.d.next = self.timer.q.val() - 1;
            if self.timer.q.val() <= 1 {
                self.ph.d.next = 0.into();
                self.timer.d.next = 0.into();
                self.dec.d.next = true;
                self.bigr.d.next = self.res.q.val();
                for x in 0..KMAX {
                    self.bi[x].d.next = self.hb[x].q.val();
                    self.si[x].d.next = self.hs[x].q.val();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verilog_is_generated() {
        let mut b = Steer::new(SteerFaults::default());
        b.connect_inputs();
        let v = generate_verilog(&b);
        assert!(v.contains("module top"));
    }
}
