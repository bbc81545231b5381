//! `Slice`: the slice table, the scheduling framework's per-SM, per-kernel columns that let
//! several kernels share an SM under block quotas (Xu et al., "Warped-Slicer", ISCA 2016, §III,
//! §IV; interface and cycle behaviour in `mpgpu_spec::units::slice`, decisions in
//! `docs/warped-slicer.md`, "Kernels sharing an SM").
//!
//! Per SM: the used vector as two running sums per component, of the requests issued
//! (`inc0`..`inc3`) and of those completed (`dec0`..`dec3`), so that an issue and a
//! completion on one SM never need two adders in series; the resident counts (`n0`..`n3`,
//! one array per slot) and quotas (`t0`..`t3`). Per slot: request (`r*`), limit (`l*` = SM
//! total - request), blocks left, rank. One block issues a cycle at most, through four stages:
//!
//! - **Read**: SM `ptr`'s row, its use as inc - dec, into `ru`/`rn`/`rq`, and the quota
//!   compare into `rb`. Each field is read through a tree of four-way multiplexers on the
//!   pointer's bits (two low bits per group of four SMs, then two high bits over the groups).
//! - **Fit**: the four fit checks of each slot, into `fe` (with `fv`, `fsm`).
//! - **Pick**: the oldest slot whose fit bit is set, still valid with blocks left, into the
//!   issue registers (`iv`, `ism`, `isl`), which drive the outputs.
//! - **Apply**: at the edge that ends the issue's cycle, its SM's inc and n grow; a
//!   completion registered the cycle before (`dv`, `dsm`, `dsl`) grows its SM's dec.
//!
//! An SM read in cycle t is fitted in t + 1 and picked in t + 2; the issue registers drive the
//! outputs in t + 3 and the block is applied at that cycle's end. Commands (Enter, Leave,
//! Quota) and completions are sampled every clocked cycle and take effect at its edge. Every
//! output is a register's. Legal: 1..=MAX_SMS SMs; resource totals below 2^RES_BITS.
//!
//! The fields named per component and per slot (`inc0`, `cmd_q0`, ...) are the names the
//! harness reads; the logic is written once for all of them by `slice_logic!`.

use crate::reg::Reg;
use mpgpu_spec::units::slice::{KMAX, LEFT_BITS, MAX_SMS, OP_BITS, OP_ENTER, OP_LEAVE, OP_NONE, OP_QUOTA, QUOTA_BITS, RES, RES_BITS, SLOT_BITS, SM_BITS};
use rust_hdl::prelude::*;

/// Bits of an SM count (0..=MAX_SMS).
const COUNT_BITS: usize = clog2(MAX_SMS + 1);

// (the Read is two levels of four-way multiplexers, on the pointer's bits)
const _: () = assert!(MAX_SMS == 1 << SM_BITS && MAX_SMS == 4 * 4, "the Read's multiplexer tree is for 16 SMs");

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SliceFaults {
    /// The quota compare takes `<=`: an SM takes one block more than a kernel's quota.
    pub over_quota: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Slice {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// The command (`OP_NONE`, `OP_ENTER`, `OP_LEAVE`, `OP_QUOTA`) and its fields: the slot
    /// (Enter, Leave), the SM or all SMs (Quota), the blocks to issue (Enter), the quotas
    /// (one per slot for Quota; Enter's in `cmd_q0`), the per-block request (Enter).
    pub cmd_op: Signal<In, Bits<OP_BITS>>,
    pub cmd_slot: Signal<In, Bits<SLOT_BITS>>,
    pub cmd_sm: Signal<In, Bits<SM_BITS>>,
    pub cmd_all: Signal<In, Bit>,
    pub cmd_blocks: Signal<In, Bits<LEFT_BITS>>,
    pub cmd_q0: Signal<In, Bits<QUOTA_BITS>>,
    pub cmd_q1: Signal<In, Bits<QUOTA_BITS>>,
    pub cmd_q2: Signal<In, Bits<QUOTA_BITS>>,
    pub cmd_q3: Signal<In, Bits<QUOTA_BITS>>,
    pub cmd_req0: Signal<In, Bits<RES_BITS>>,
    pub cmd_req1: Signal<In, Bits<RES_BITS>>,
    pub cmd_req2: Signal<In, Bits<RES_BITS>>,
    pub cmd_req3: Signal<In, Bits<RES_BITS>>,
    /// A block of slot `done_slot` finished on SM `done_sm`.
    pub done_valid: Signal<In, Bit>,
    pub done_sm: Signal<In, Bits<SM_BITS>>,
    pub done_slot: Signal<In, Bits<SLOT_BITS>>,
    /// A cycle with no input could change something.
    pub busy: Signal<Out, Bit>,
    /// The block issued at the last edge: (SM, slot).
    pub issue_valid: Signal<Out, Bit>,
    pub issue_sm: Signal<Out, Bits<SM_BITS>>,
    pub issue_slot: Signal<Out, Bits<SLOT_BITS>>,
    // Parameters: the broken quota compare, the SM count and the last SM, the SM total.
    over: Constant<Bit>,
    sms_c: Constant<Bits<COUNT_BITS>>,
    last_c: Constant<Bits<SM_BITS>>,
    tot: [Constant<Bits<RES_BITS>>; RES],
    op_none: Constant<Bits<OP_BITS>>,
    op_enter: Constant<Bits<OP_BITS>>,
    op_leave: Constant<Bits<OP_BITS>>,
    op_quota: Constant<Bits<OP_BITS>>,
    // Per slot: the issue's, the completion's and the command's slot; fit and eligible
    // (Pick), the oldest eligible; the issue's and the completion's requests.
    ik: [Signal<Local, Bit>; KMAX],
    dk: [Signal<Local, Bit>; KMAX],
    ks: [Signal<Local, Bit>; KMAX],
    fit: [Signal<Local, Bit>; KMAX],
    e: [Signal<Local, Bit>; KMAX],
    win: [Signal<Local, Bit>; KMAX],
    pick: Signal<Local, Bit>,
    pk: Signal<Local, Bits<SLOT_BITS>>,
    add: [Signal<Local, Bits<RES_BITS>>; RES],
    sub: [Signal<Local, Bits<RES_BITS>>; RES],
    // Per SM: the issue's and the completion's SM, a Quota for it.
    hi: [Signal<Local, Bit>; MAX_SMS],
    hd: [Signal<Local, Bit>; MAX_SMS],
    qsel: [Signal<Local, Bit>; MAX_SMS],
    // The Read's first multiplexer level, per field and group of SMs, then the row.
    g_inc0: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_inc1: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_inc2: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_inc3: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_dec0: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_dec1: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_dec2: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_dec3: [Signal<Local, Bits<RES_BITS>>; MAX_SMS / 4],
    g_n0: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_n1: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_n2: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_n3: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_t0: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_t1: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_t2: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    g_t3: [Signal<Local, Bits<QUOTA_BITS>>; MAX_SMS / 4],
    mi: [Signal<Local, Bits<RES_BITS>>; RES],
    md: [Signal<Local, Bits<RES_BITS>>; RES],
    mn: [Signal<Local, Bits<QUOTA_BITS>>; KMAX],
    mt: [Signal<Local, Bits<QUOTA_BITS>>; KMAX],
    // The scan and the commands.
    reading: Signal<Local, Bit>,
    rewrites: Signal<Local, Bit>,
    pend: Signal<Local, Bit>,
    any_in: Signal<Local, Bit>,
    cnt: Signal<Local, Bits<SLOT_BITS>>,
    rsel: Signal<Local, Bits<SLOT_BITS>>,
    /// Per slot: valid (bit k), rank (0 the oldest), blocks left, request and limit.
    pub valid: Reg<Bits<KMAX>>,
    pub rank: [Reg<Bits<SLOT_BITS>>; KMAX],
    pub left: [Reg<Bits<LEFT_BITS>>; KMAX],
    pub r0: [Reg<Bits<RES_BITS>>; KMAX],
    pub r1: [Reg<Bits<RES_BITS>>; KMAX],
    pub r2: [Reg<Bits<RES_BITS>>; KMAX],
    pub r3: [Reg<Bits<RES_BITS>>; KMAX],
    pub l0: [Reg<Bits<RES_BITS>>; KMAX],
    pub l1: [Reg<Bits<RES_BITS>>; KMAX],
    pub l2: [Reg<Bits<RES_BITS>>; KMAX],
    pub l3: [Reg<Bits<RES_BITS>>; KMAX],
    /// Per SM: the issued and completed requests' sums, per slot resident count and quota.
    pub inc0: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub inc1: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub inc2: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub inc3: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub dec0: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub dec1: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub dec2: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub dec3: [Reg<Bits<RES_BITS>>; MAX_SMS],
    pub n0: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub n1: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub n2: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub n3: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub t0: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub t1: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub t2: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    pub t3: [Reg<Bits<QUOTA_BITS>>; MAX_SMS],
    /// The scan: the next SM to read, the clocked cycles since anything happened.
    pub ptr: Reg<Bits<SM_BITS>>,
    pub quiet: Reg<Bits<COUNT_BITS>>,
    /// The Read stage.
    pub rd_valid: Reg<Bit>,
    pub rd_sm: Reg<Bits<SM_BITS>>,
    pub ru: [Reg<Bits<RES_BITS>>; RES],
    pub rn: [Reg<Bits<QUOTA_BITS>>; KMAX],
    pub rq: [Reg<Bits<QUOTA_BITS>>; KMAX],
    pub rb: [Reg<Bit>; KMAX],
    /// The Fit stage.
    pub fv: Reg<Bit>,
    pub fsm: Reg<Bits<SM_BITS>>,
    pub fe: [Reg<Bit>; KMAX],
    /// The issue (the pick of the last edge) and the completion taken at the last edge.
    pub iv: Reg<Bit>,
    pub ism: Reg<Bits<SM_BITS>>,
    pub isl: Reg<Bits<SLOT_BITS>>,
    pub dv: Reg<Bit>,
    pub dsm: Reg<Bits<SM_BITS>>,
    pub dsl: Reg<Bits<SLOT_BITS>>,
}

impl Slice {
    /// The table for `sms` SMs (1..=MAX_SMS) of `total` resources each (CTA slots,
    /// warp-padded threads, registers, shared bytes; each below 2^RES_BITS).
    pub fn new(sms: usize, total: [u32; RES], faults: SliceFaults) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "a slice table for {sms} SMs (1..={MAX_SMS})");
        let op = |code: u8| Constant::new((code as u64).into());
        Self {
            clock: Default::default(),
            cmd_op: Default::default(),
            cmd_slot: Default::default(),
            cmd_sm: Default::default(),
            cmd_all: Default::default(),
            cmd_blocks: Default::default(),
            cmd_q0: Default::default(),
            cmd_q1: Default::default(),
            cmd_q2: Default::default(),
            cmd_q3: Default::default(),
            cmd_req0: Default::default(),
            cmd_req1: Default::default(),
            cmd_req2: Default::default(),
            cmd_req3: Default::default(),
            done_valid: Default::default(),
            done_sm: Default::default(),
            done_slot: Default::default(),
            busy: Default::default(),
            issue_valid: Default::default(),
            issue_sm: Default::default(),
            issue_slot: Default::default(),
            over: Constant::new(faults.over_quota),
            sms_c: Constant::new((sms as u64).into()),
            last_c: Constant::new((sms as u64 - 1).into()),
            tot: std::array::from_fn(|c| Constant::new((total[c] as u64 & ((1 << RES_BITS) - 1)).into())),
            op_none: op(OP_NONE),
            op_enter: op(OP_ENTER),
            op_leave: op(OP_LEAVE),
            op_quota: op(OP_QUOTA),
            ik: Default::default(),
            dk: Default::default(),
            ks: Default::default(),
            fit: Default::default(),
            e: Default::default(),
            win: Default::default(),
            pick: Default::default(),
            pk: Default::default(),
            add: Default::default(),
            sub: Default::default(),
            hi: Default::default(),
            hd: Default::default(),
            qsel: Default::default(),
            g_inc0: Default::default(),
            g_inc1: Default::default(),
            g_inc2: Default::default(),
            g_inc3: Default::default(),
            g_dec0: Default::default(),
            g_dec1: Default::default(),
            g_dec2: Default::default(),
            g_dec3: Default::default(),
            g_n0: Default::default(),
            g_n1: Default::default(),
            g_n2: Default::default(),
            g_n3: Default::default(),
            g_t0: Default::default(),
            g_t1: Default::default(),
            g_t2: Default::default(),
            g_t3: Default::default(),
            mi: Default::default(),
            md: Default::default(),
            mn: Default::default(),
            mt: Default::default(),
            reading: Default::default(),
            rewrites: Default::default(),
            pend: Default::default(),
            any_in: Default::default(),
            cnt: Default::default(),
            rsel: Default::default(),
            valid: Default::default(),
            rank: Default::default(),
            left: Default::default(),
            r0: Default::default(),
            r1: Default::default(),
            r2: Default::default(),
            r3: Default::default(),
            l0: Default::default(),
            l1: Default::default(),
            l2: Default::default(),
            l3: Default::default(),
            inc0: Default::default(),
            inc1: Default::default(),
            inc2: Default::default(),
            inc3: Default::default(),
            dec0: Default::default(),
            dec1: Default::default(),
            dec2: Default::default(),
            dec3: Default::default(),
            n0: Default::default(),
            n1: Default::default(),
            n2: Default::default(),
            n3: Default::default(),
            t0: Default::default(),
            t1: Default::default(),
            t2: Default::default(),
            t3: Default::default(),
            ptr: Default::default(),
            quiet: Default::default(),
            rd_valid: Default::default(),
            rd_sm: Default::default(),
            ru: Default::default(),
            rn: Default::default(),
            rq: Default::default(),
            rb: Default::default(),
            fv: Default::default(),
            fsm: Default::default(),
            fe: Default::default(),
            iv: Default::default(),
            ism: Default::default(),
            isl: Default::default(),
            dv: Default::default(),
            dsm: Default::default(),
            dsl: Default::default(),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.cmd_op.connect();
        self.cmd_slot.connect();
        self.cmd_sm.connect();
        self.cmd_all.connect();
        self.cmd_blocks.connect();
        self.cmd_q0.connect();
        self.cmd_q1.connect();
        self.cmd_q2.connect();
        self.cmd_q3.connect();
        self.cmd_req0.connect();
        self.cmd_req1.connect();
        self.cmd_req2.connect();
        self.cmd_req3.connect();
        self.done_valid.connect();
        self.done_sm.connect();
        self.done_slot.connect();
        self.connect_all();
    }
}

/// The block's logic, written once for the fields named per component and per slot:
/// `res` lists, per component c, (c, its issued and completed sums per SM, its request and
/// limit per slot, its request input, the Read's groups of the two sums); `slots` lists, per
/// slot k, (k, its resident counts and quotas per SM, its quota input, the Read's groups of
/// both). (`#[hdl_gen]` unrolls `for` loops over constant ranges, a bound with an operator in
/// parentheses, and evaluates index expressions of loop variables and literals; it cannot
/// choose a field by an index, nor expand a macro in the body.)
macro_rules! slice_logic {
    (res: [$(($c:tt, $inc:ident, $dec:ident, $r:ident, $l:ident, $req:ident, $gi:ident, $gd:ident)),* $(,)?],
     slots: [$(($k:tt, $n:ident, $t:ident, $q:ident, $gn:ident, $gt:ident)),* $(,)?] $(,)?) => {
        const _: () = assert!([$($c),*].len() == RES && [$($k),*].len() == KMAX);

        impl Logic for Slice {
            #[hdl_gen]
            fn update(&mut self) {
                // Every register holds unless an update below changes it.
                dff_setup!(self, clock, valid, ptr, quiet, rd_valid, rd_sm, fv, fsm, iv, ism, isl, dv, dsm, dsl);
                for k in 0..KMAX {
                    self.rank[k].clock.next = self.clock.val();
                    self.rank[k].d.next = self.rank[k].q.val();
                    self.left[k].clock.next = self.clock.val();
                    self.left[k].d.next = self.left[k].q.val();
                    $(
                        self.$r[k].clock.next = self.clock.val();
                        self.$r[k].d.next = self.$r[k].q.val();
                        self.$l[k].clock.next = self.clock.val();
                        self.$l[k].d.next = self.$l[k].q.val();
                    )*
                    self.rn[k].clock.next = self.clock.val();
                    self.rn[k].d.next = self.rn[k].q.val();
                    self.rq[k].clock.next = self.clock.val();
                    self.rq[k].d.next = self.rq[k].q.val();
                    self.rb[k].clock.next = self.clock.val();
                    self.rb[k].d.next = self.rb[k].q.val();
                    self.fe[k].clock.next = self.clock.val();
                    self.fe[k].d.next = self.fe[k].q.val();
                }
                for c in 0..RES {
                    self.ru[c].clock.next = self.clock.val();
                    self.ru[c].d.next = self.ru[c].q.val();
                }
                for s in 0..MAX_SMS {
                    $(
                        self.$inc[s].clock.next = self.clock.val();
                        self.$inc[s].d.next = self.$inc[s].q.val();
                        self.$dec[s].clock.next = self.clock.val();
                        self.$dec[s].d.next = self.$dec[s].q.val();
                    )*
                    $(
                        self.$n[s].clock.next = self.clock.val();
                        self.$n[s].d.next = self.$n[s].q.val();
                        self.$t[s].clock.next = self.clock.val();
                        self.$t[s].d.next = self.$t[s].q.val();
                    )*
                }

                // Pick: the SM fitted in the cycle before; the oldest eligible slot wins.
                for k in 0..KMAX {
                    self.ik[k].next = self.isl.q.val() == k.to_bits();
                    self.dk[k].next = self.dsl.q.val() == k.to_bits();
                    self.ks[k].next = self.cmd_slot.val() == k.to_bits();
                }
                for k in 0..KMAX {
                    self.fit[k].next = $((self.ru[$c].q.val() <= self.$l[k].q.val()))&*;
                    // (eligible: fitted, valid, and blocks left besides the one in flight)
                    self.e[k].next = self.fv.q.val()
                        & self.fe[k].q.val()
                        & self.valid.q.val().get_bit(k)
                        & (self.left[k].q.val() != 0)
                        & !(self.iv.q.val() & self.ik[k].val() & (self.left[k].q.val() == 1));
                }
                for i in 0..KMAX {
                    // (an eligible slot j beats slot i when it is older, or as old and before it)
                    self.win[i].next = self.e[i].val();
                    for j in 0..KMAX {
                        if self.e[j].val()
                            & (((j < i) & (self.rank[j].q.val() <= self.rank[i].q.val())) | ((j > i) & (self.rank[j].q.val() < self.rank[i].q.val())))
                        {
                            self.win[i].next = false;
                        }
                    }
                }
                self.pick.next = false;
                self.pk.next = 0.into();
                for k in 0..KMAX {
                    if self.win[k].val() {
                        self.pick.next = true;
                        self.pk.next = k.to_bits();
                    }
                }

                // Apply: the issue on the outputs (its SM's inc and n grow, its blocks left
                // drop) and the completion registered at the last edge (its SM's dec grows, n
                // drops).
                $(
                    self.add[$c].next = self.$r[0].q.val();
                    self.sub[$c].next = self.$r[0].q.val();
                    for k in 1..KMAX {
                        if self.ik[k].val() {
                            self.add[$c].next = self.$r[k].q.val();
                        }
                        if self.dk[k].val() {
                            self.sub[$c].next = self.$r[k].q.val();
                        }
                    }
                )*
                for s in 0..MAX_SMS {
                    self.hi[s].next = self.iv.q.val() & (self.ism.q.val() == s.to_bits());
                    self.hd[s].next = self.dv.q.val() & (self.dsm.q.val() == s.to_bits());
                    self.qsel[s].next = (self.cmd_op.val() == self.op_quota.val()) & (self.cmd_all.val() | (self.cmd_sm.val() == s.to_bits()));
                }
                for s in 0..MAX_SMS {
                    $(
                        if self.hi[s].val() {
                            self.$inc[s].d.next = self.$inc[s].q.val() + self.add[$c].val();
                        }
                        if self.hd[s].val() {
                            self.$dec[s].d.next = self.$dec[s].q.val() + self.sub[$c].val();
                        }
                    )*
                    $(
                        if (self.hi[s].val() & self.ik[$k].val()) & !(self.hd[s].val() & self.dk[$k].val()) {
                            self.$n[s].d.next = self.$n[s].q.val() + 1;
                        }
                        if !(self.hi[s].val() & self.ik[$k].val()) & (self.hd[s].val() & self.dk[$k].val()) {
                            self.$n[s].d.next = self.$n[s].q.val() - 1;
                        }
                    )*
                }
                for k in 0..KMAX {
                    if self.iv.q.val() & self.ik[k].val() {
                        self.left[k].d.next = self.left[k].q.val() - 1;
                    }
                }
                // (the pick and this cycle's completion register)
                self.iv.d.next = self.pick.val();
                self.ism.d.next = self.fsm.q.val();
                self.isl.d.next = self.pk.val();
                self.dv.d.next = self.done_valid.val();
                if self.done_valid.val() {
                    self.dsm.d.next = self.done_sm.val();
                    self.dsl.d.next = self.done_slot.val();
                }

                // Read: SM `ptr`'s row, through a tree of four-way multiplexers: per group of
                // four SMs, on the pointer's two low bits; then over the groups, on its two
                // high bits. (Nested `if`s on the bits, which yosys makes a tree of 2:1
                // multiplexers: a compare of the high bits per group made a slower chain.)
                for h in 0..(MAX_SMS / 4) {
                    if self.ptr.q.val().get_bit(1) {
                        if self.ptr.q.val().get_bit(0) {
                            $(self.$gi[h].next = self.$inc[4 * h + 3].q.val(); self.$gd[h].next = self.$dec[4 * h + 3].q.val();)*
                            $(self.$gn[h].next = self.$n[4 * h + 3].q.val(); self.$gt[h].next = self.$t[4 * h + 3].q.val();)*
                        } else {
                            $(self.$gi[h].next = self.$inc[4 * h + 2].q.val(); self.$gd[h].next = self.$dec[4 * h + 2].q.val();)*
                            $(self.$gn[h].next = self.$n[4 * h + 2].q.val(); self.$gt[h].next = self.$t[4 * h + 2].q.val();)*
                        }
                    } else {
                        if self.ptr.q.val().get_bit(0) {
                            $(self.$gi[h].next = self.$inc[4 * h + 1].q.val(); self.$gd[h].next = self.$dec[4 * h + 1].q.val();)*
                            $(self.$gn[h].next = self.$n[4 * h + 1].q.val(); self.$gt[h].next = self.$t[4 * h + 1].q.val();)*
                        } else {
                            $(self.$gi[h].next = self.$inc[4 * h].q.val(); self.$gd[h].next = self.$dec[4 * h].q.val();)*
                            $(self.$gn[h].next = self.$n[4 * h].q.val(); self.$gt[h].next = self.$t[4 * h].q.val();)*
                        }
                    }
                }
                if self.ptr.q.val().get_bit(3) {
                    if self.ptr.q.val().get_bit(2) {
                        $(self.mi[$c].next = self.$gi[3].val(); self.md[$c].next = self.$gd[3].val();)*
                        $(self.mn[$k].next = self.$gn[3].val(); self.mt[$k].next = self.$gt[3].val();)*
                    } else {
                        $(self.mi[$c].next = self.$gi[2].val(); self.md[$c].next = self.$gd[2].val();)*
                        $(self.mn[$k].next = self.$gn[2].val(); self.mt[$k].next = self.$gt[2].val();)*
                    }
                } else {
                    if self.ptr.q.val().get_bit(2) {
                        $(self.mi[$c].next = self.$gi[1].val(); self.md[$c].next = self.$gd[1].val();)*
                        $(self.mn[$k].next = self.$gn[1].val(); self.mt[$k].next = self.$gt[1].val();)*
                    } else {
                        $(self.mi[$c].next = self.$gi[0].val(); self.md[$c].next = self.$gd[0].val();)*
                        $(self.mn[$k].next = self.$gn[0].val(); self.mt[$k].next = self.$gt[0].val();)*
                    }
                }
                for c in 0..RES {
                    self.ru[c].d.next = self.mi[c].val() - self.md[c].val();
                }
                // (the quota check registers with the row: n < T, `<=` in the broken variant)
                for k in 0..KMAX {
                    self.rn[k].d.next = self.mn[k].val();
                    self.rq[k].d.next = self.mt[k].val();
                    self.rb[k].d.next = self.mn[k].val() < self.mt[k].val();
                    if self.over.val() {
                        self.rb[k].d.next = self.mn[k].val() <= self.mt[k].val();
                    }
                }
                self.reading.next = self.quiet.q.val() < self.sms_c.val();
                self.rewrites.next = (self.cmd_op.val() == self.op_enter.val()) | (self.cmd_op.val() == self.op_quota.val());
                // Fit: the SM read in the cycle before (its fit bits: valid, below quota, fitting).
                for k in 0..KMAX {
                    self.fe[k].d.next = self.rd_valid.q.val() & self.valid.q.val().get_bit(k) & self.rb[k].q.val() & self.fit[k].val();
                }
                self.fv.d.next = self.rd_valid.q.val() & !self.rewrites.val();
                self.fsm.d.next = self.rd_sm.q.val();
                // (a Read of an SM whose block is applied at or after this edge is marked
                // invalid: the SM in the Read or Fit stage, `pend`, or the one an issue is
                // applied to)
                self.pend.next = (self.rd_valid.q.val() & (self.rd_sm.q.val() == self.ptr.q.val())) | (self.fv.q.val() & (self.fsm.q.val() == self.ptr.q.val()));
                self.rd_valid.d.next = self.reading.val() & !self.rewrites.val() & !self.pend.val() & !(self.iv.q.val() & (self.ism.q.val() == self.ptr.q.val()));
                self.rd_sm.d.next = self.ptr.q.val();
                if self.reading.val() {
                    if self.ptr.q.val() == self.last_c.val() {
                        self.ptr.d.next = 0.into();
                    } else {
                        self.ptr.d.next = self.ptr.q.val() + 1;
                    }
                }
                // (news: an input, an apply, or a Read marked invalid because its SM is in a
                // stage)
                self.any_in.next = (self.cmd_op.val() != self.op_none.val()) | self.done_valid.val() | self.iv.q.val() | self.dv.q.val() | (self.reading.val() & self.pend.val());
                if self.any_in.val() {
                    self.quiet.d.next = 0.into();
                } else if self.quiet.q.val() != self.sms_c.val() {
                    self.quiet.d.next = self.quiet.q.val() + 1;
                }

                // Commands: Enter (the youngest rank, the quota on every SM), Leave (the
                // younger ranks close up), Quota (one SM's row, or every SM's).
                self.cnt.next = 0.into();
                self.rsel.next = self.rank[0].q.val();
                for k in 0..KMAX {
                    if self.valid.q.val().get_bit(k) {
                        self.cnt.next = self.cnt.val() + 1;
                    }
                    if self.ks[k].val() {
                        self.rsel.next = self.rank[k].q.val();
                    }
                }
                if self.cmd_op.val() == self.op_enter.val() {
                    for k in 0..KMAX {
                        if self.ks[k].val() {
                            self.valid.d.next = self.valid.q.val().replace_bit(k, true);
                            self.rank[k].d.next = self.cnt.val();
                            self.left[k].d.next = self.cmd_blocks.val();
                            $(
                                self.$r[k].d.next = self.$req.val();
                                self.$l[k].d.next = self.tot[$c].val() - self.$req.val();
                            )*
                        }
                    }
                    $(
                        if self.ks[$k].val() {
                            for s in 0..MAX_SMS {
                                self.$t[s].d.next = self.cmd_q0.val();
                            }
                        }
                    )*
                }
                if self.cmd_op.val() == self.op_leave.val() {
                    for k in 0..KMAX {
                        if self.ks[k].val() {
                            self.valid.d.next = self.valid.q.val().replace_bit(k, false);
                        }
                        if self.rank[k].q.val() > self.rsel.val() {
                            self.rank[k].d.next = self.rank[k].q.val() - 1;
                        }
                    }
                }
                for s in 0..MAX_SMS {
                    if self.qsel[s].val() {
                        $(self.$t[s].d.next = self.$q.val();)*
                    }
                }

                // Outputs, from registers.
                self.busy.next = self.reading.val() | self.rd_valid.q.val() | self.fv.q.val() | self.iv.q.val() | self.dv.q.val();
                self.issue_valid.next = self.iv.q.val();
                self.issue_sm.next = self.ism.q.val();
                self.issue_slot.next = self.isl.q.val();
            }
        }
    };
}

slice_logic! {
    res: [
        (0, inc0, dec0, r0, l0, cmd_req0, g_inc0, g_dec0),
        (1, inc1, dec1, r1, l1, cmd_req1, g_inc1, g_dec1),
        (2, inc2, dec2, r2, l2, cmd_req2, g_inc2, g_dec2),
        (3, inc3, dec3, r3, l3, cmd_req3, g_inc3, g_dec3),
    ],
    slots: [
        (0, n0, t0, cmd_q0, g_n0, g_t0),
        (1, n1, t1, cmd_q1, g_n1, g_t1),
        (2, n2, t2, cmd_q2, g_n2, g_t2),
        (3, n3, t3, cmd_q3, g_n3, g_t3),
    ],
}
