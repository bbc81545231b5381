//! `Share`: slicing inside the kernel scheduling framework (`docs/warped-slicer.md`, "Inside
//! the scheduling framework"), a sub-block of `Sched` built with sharing on: an SM's holder
//! (the SMST's kernel) shares it with the other kernels that hold quotas, each up to its quota
//! on that SM. The reference model is `mpgpu_ref::units::framework` (`share.rs`), whose notes
//! give the rules; this block keeps their registers and computes them from the registers:
//! - `res`: blocks of each kernel resident on each SM (`res[16 s + k]`), one more at the edge
//!   that issues one (the block in flight, `flight_*`), one fewer at the edge a block of it
//!   finishes (`done_*`) or is saved (`saved_*`) there;
//! - `qv`, `qon`: each KSRT entry's quota on each SM (`qv[16 k + s]`, taken as T_k when
//!   larger) and whether it has quotas, written through the quota port (`qw_*`: the entry
//!   the KSRT matched the handle to, one-hot) and cleared when the entry retires or is
//!   admitted;
//! - `older`: per entry, the entries admitted before it (set at its admission from the valid
//!   entries then; its own column cleared in every other row), so that the oldest of a set C
//!   is the k in C with no entry of C older than it: an AND-OR, no compare of ages;
//! - each cell's cap (the holder: its quota, or T_k without one; another kernel: its quota
//!   while it and the holder have quotas and the holder has a block left after the block in
//!   flight; 0 on an SM that does not run and for an invalid entry), and from it whether the
//!   kernel is below its cap and eligible (a block left after the block in flight) and
//!   whether it is over its cap (the counts without the block in flight: its SM is changing
//!   and not read); the cap is never formed as a value: every count is compared with its
//!   quota and with the SM's T_k (which only the holder's cell reads), from the registers,
//!   and the cap's choice then picks one of those results (a 1-bit choice after the
//!   compares, not a 5-bit one before them, and no holder's count chosen before its compare:
//!   `docs/fpga.md`, "`sched --sharing`");
//! - `rdy`/`lt2`: the SMs that run with no kernel over its cap and an eligible kernel (and
//!   those with an eligible kernel with under two left), the first stage;
//! - `elq`: each SM's eligible kernels, registered; `g_any`/`g_k`: the oldest of the SM
//!   picked (`pick_oh`, picked at the edge that wrote them), the second stage;
//! - `heir_v`: the SMs with an heir (an entry other than the holder, which has a quota, valid,
//!   with a quota above 0 there and work), and `h_any`/`h_k`: the oldest heir of the SM the
//!   event picks (`ev_sel`).
//! Sizes: mpgpu-spec `fw` (MAX_SMS SMs by MAX_SMS entries, TBS_PER_SM_BITS-wide counts and
//! quotas); `update` indexes the cells as [`res_cell`] and [`quota_cell`] lay them out, with
//! a literal 16.

use crate::reg::Reg;
use mpgpu_spec::units::sched::fw::{INDEX_BITS, MAX_SMS, QUOTA_BITS, TBS_PER_SM_BITS};
use rust_hdl::prelude::*;

/// SM x entry cells.
pub const CELLS: usize = MAX_SMS * MAX_SMS;

/// The cell of `res` holding entry `k`'s blocks on SM `s`.
pub const fn res_cell(s: usize, k: usize) -> usize {
    MAX_SMS * s + k
}

/// The cell of `qv` holding entry `k`'s quota on SM `s`.
pub const fn quota_cell(k: usize, s: usize) -> usize {
    MAX_SMS * k + s
}
const _: () = assert!(MAX_SMS == 16, "update indexes the cells as 16 s + k by a literal 16");
const _: () = assert!(QUOTA_BITS == TBS_PER_SM_BITS, "a quota and a resident count share one width (caps compare with counts)");

type B4 = Bits<INDEX_BITS>;
type Rt = Bits<TBS_PER_SM_BITS>;
type V = Bits<MAX_SMS>;

#[derive(LogicBlock)]
pub struct Share {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Each SM's holder (the SMST's kernel) and the holder's T_k.
    pub ksr: [Signal<In, B4>; MAX_SMS],
    pub tk: [Signal<In, Rt>; MAX_SMS],
    /// Bit s: SM s runs its holder.
    pub run: Signal<In, V>,
    /// Bit k: KSRT entry k is valid; has blocks to issue; has at least one, two, three left
    /// (the block in flight not taken off).
    pub valid: Signal<In, V>,
    pub has_work: Signal<In, V>,
    pub rem_ge1: Signal<In, V>,
    pub rem_ge2: Signal<In, V>,
    pub rem_ge3: Signal<In, V>,
    /// The block in flight, issued at this edge: its SM and kernel.
    pub flight_valid: Signal<In, Bit>,
    pub flight_sm: Signal<In, B4>,
    pub flight_k: Signal<In, B4>,
    /// A block of kernel `done_k` finished on SM `done_sm`; one of `saved_k` was saved from
    /// `saved_sm`.
    pub done_valid: Signal<In, Bit>,
    pub done_sm: Signal<In, B4>,
    pub done_k: Signal<In, B4>,
    pub saved_valid: Signal<In, Bit>,
    pub saved_sm: Signal<In, B4>,
    pub saved_k: Signal<In, B4>,
    /// The quota write: the entry written (one-hot, 0 for none), whether it gets quotas (else
    /// they are taken away), its T_k, and its quota on each SM.
    pub qw_hit: Signal<In, V>,
    pub qw_on: Signal<In, Bit>,
    pub qw_tk: Signal<In, Rt>,
    pub quota: [Signal<In, Rt>; MAX_SMS],
    /// A command enters entry `admit_k`; entry `retire_k` retires (each at this edge).
    pub admit: Signal<In, Bit>,
    pub admit_k: Signal<In, B4>,
    pub retire: Signal<In, Bit>,
    pub retire_k: Signal<In, B4>,
    /// One-hot: the SM in the second stage; the SM the event picks now.
    pub pick_oh: Signal<In, V>,
    pub ev_sel: Signal<In, V>,
    /// Bit s: SM s may take a block; of those, an eligible kernel has under two left.
    pub rdy: Signal<Out, V>,
    pub lt2: Signal<Out, V>,
    /// The SM picked has an eligible kernel; the oldest.
    pub g_any: Signal<Out, Bit>,
    pub g_k: Signal<Out, B4>,
    /// `g_k` one-hot (0 without an eligible kernel): the framework's `gr_koh`, the PTBQ's pop
    /// enables, taken before the encoder.
    pub g_oh: Signal<Out, V>,
    /// Bit s: SM s has an heir.
    pub heir_v: Signal<Out, V>,
    /// The SM the event picks has an heir; the oldest.
    pub h_any: Signal<Out, Bit>,
    pub h_k: Signal<Out, B4>,
    /// Bit s: SM s had an eligible kernel at the last edge (its `elq` row is not empty).
    pub el_any: Signal<Out, V>,
    /// Blocks of entry k on SM s (`res[16 s + k]`). (The cell arrays are vectors, on the
    /// heap: as arrays they made `Sched` too large to build on a thread's stack.)
    pub res: Vec<Reg<Rt>>,
    /// Entry k's quota on SM s (`qv[16 k + s]`), meaningful while its `qon` bit is set.
    pub qv: Vec<Reg<Rt>>,
    pub qon: Reg<V>,
    /// Per entry, the entries admitted before it.
    pub older: [Reg<V>; MAX_SMS],
    /// Each SM's eligible kernels, registered: the second stage reads the picked SM's
    /// (the round robin picked it at the edge that wrote them).
    pub elq: [Reg<V>; MAX_SMS],
    /// Bit k: kernel k has a block left after the block in flight, and two.
    lf1: Signal<Local, V>,
    lf2: Signal<Local, V>,
    f_koh: Signal<Local, V>,
    f_soh: Signal<Local, V>,
    d_soh: Signal<Local, V>,
    d_koh: Signal<Local, V>,
    v_soh: Signal<Local, V>,
    v_koh: Signal<Local, V>,
    /// Bit s: SM s's holder has quotas; has a block left after the block in flight.
    hq: Signal<Local, V>,
    hw1: Signal<Local, V>,
    /// Per SM, bit k: entry k is its holder.
    ish: [Signal<Local, V>; MAX_SMS],
    /// Per SM, bit k: entry k's blocks there against its quota there (over, below), against
    /// the SM's T_k (over, below: read for the holder only), and whether it has any there.
    gq: [Signal<Local, V>; MAX_SMS],
    lq: [Signal<Local, V>; MAX_SMS],
    gt: [Signal<Local, V>; MAX_SMS],
    lt: [Signal<Local, V>; MAX_SMS],
    nz: [Signal<Local, V>; MAX_SMS],
    /// Per SM, bit k: entry k's cap there is its quota; is the holder's T_k (the holder
    /// without quotas); neither (0). Its cell over that cap; eligible below it.
    ca: [Signal<Local, V>; MAX_SMS],
    cb: [Signal<Local, V>; MAX_SMS],
    ovc: [Signal<Local, V>; MAX_SMS],
    elc: [Signal<Local, V>; MAX_SMS],
    /// Bit s: SM s runs and no kernel on it is over its cap.
    ok: Signal<Local, V>,
    /// Per SM, its eligible kernels (none unless it runs with no kernel over its cap), and its
    /// heirs.
    el: [Signal<Local, V>; MAX_SMS],
    hr: [Signal<Local, V>; MAX_SMS],
    ge: Signal<Local, V>,
    he: Signal<Local, V>,
    qmin: [Signal<Local, Rt>; MAX_SMS],
    qon_n: Signal<Local, V>,
    ids: [Constant<B4>; MAX_SMS],
    one16: Constant<V>,
}

impl Share {
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            ksr: Default::default(),
            tk: Default::default(),
            run: Default::default(),
            valid: Default::default(),
            has_work: Default::default(),
            rem_ge1: Default::default(),
            rem_ge2: Default::default(),
            rem_ge3: Default::default(),
            flight_valid: Default::default(),
            flight_sm: Default::default(),
            flight_k: Default::default(),
            done_valid: Default::default(),
            done_sm: Default::default(),
            done_k: Default::default(),
            saved_valid: Default::default(),
            saved_sm: Default::default(),
            saved_k: Default::default(),
            qw_hit: Default::default(),
            qw_on: Default::default(),
            qw_tk: Default::default(),
            quota: Default::default(),
            admit: Default::default(),
            admit_k: Default::default(),
            retire: Default::default(),
            retire_k: Default::default(),
            pick_oh: Default::default(),
            ev_sel: Default::default(),
            rdy: Default::default(),
            lt2: Default::default(),
            g_any: Default::default(),
            g_k: Default::default(),
            g_oh: Default::default(),
            heir_v: Default::default(),
            h_any: Default::default(),
            h_k: Default::default(),
            el_any: Default::default(),
            res: (0..CELLS).map(|_| Default::default()).collect(),
            qv: (0..CELLS).map(|_| Default::default()).collect(),
            qon: Default::default(),
            older: Default::default(),
            elq: Default::default(),
            lf1: Default::default(),
            lf2: Default::default(),
            f_koh: Default::default(),
            f_soh: Default::default(),
            d_soh: Default::default(),
            d_koh: Default::default(),
            v_soh: Default::default(),
            v_koh: Default::default(),
            hq: Default::default(),
            hw1: Default::default(),
            ish: Default::default(),
            gq: Default::default(),
            lq: Default::default(),
            gt: Default::default(),
            lt: Default::default(),
            nz: Default::default(),
            ca: Default::default(),
            cb: Default::default(),
            ovc: Default::default(),
            elc: Default::default(),
            ok: Default::default(),
            el: Default::default(),
            hr: Default::default(),
            ge: Default::default(),
            he: Default::default(),
            qmin: Default::default(),
            qon_n: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            one16: Constant::new(1u64.into()),
        }
    }
}

impl Default for Share {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Share {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, qon);
        for i in 0..CELLS {
            self.res[i].clock.next = self.clock.val();
            self.qv[i].clock.next = self.clock.val();
            self.res[i].d.next = self.res[i].q.val();
            self.qv[i].d.next = self.qv[i].q.val();
        }
        for k in 0..MAX_SMS {
            self.older[k].clock.next = self.clock.val();
            self.older[k].d.next = self.older[k].q.val();
            self.elq[k].clock.next = self.clock.val();
        }
        // Blocks left after the block in flight (one fewer for its kernel: the next vector).
        self.f_koh.next = 0.into();
        self.f_soh.next = 0.into();
        if self.flight_valid.val() {
            self.f_koh.next = self.one16.val() << self.flight_k.val();
            self.f_soh.next = self.one16.val() << self.flight_sm.val();
        }
        self.lf1.next = (self.rem_ge1.val() & !self.f_koh.val()) | (self.rem_ge2.val() & self.f_koh.val());
        self.lf2.next = (self.rem_ge2.val() & !self.f_koh.val()) | (self.rem_ge3.val() & self.f_koh.val());
        // Each SM's holder (one-hot, `ish`): has quotas; has a block left after the block in
        // flight (its kernel's flags read and the flight's kernel compared with it side by
        // side, as the SMST's `l1_s` does, rather than `lf1` read through the flight's decode).
        self.hq.next = 0.into();
        self.hw1.next = 0.into();
        for s in 0..MAX_SMS {
            self.ish[s].next = 0.into();
            for k in 0..MAX_SMS {
                self.ish[s].next = self.ish[s].val().replace_bit(k, self.ksr[s].val() == self.ids[k].val());
            }
            self.hq.next = self.hq.val().replace_bit(s, (self.qon.q.val() & self.ish[s].val()).any());
            self.hw1.next = self.hw1.val().replace_bit(s, self.rem_ge1.val().get_bit(self.ksr[s].val().index()));
            if self.flight_valid.val() & (self.flight_k.val() == self.ksr[s].val()) {
                self.hw1.next = self.hw1.val().replace_bit(s, self.rem_ge2.val().get_bit(self.ksr[s].val().index()));
            }
        }
        // Every cell's count compared, from the registers and side by side, with its quota and
        // with the SM's T_k (the holder's: only the holder's cell reads it), so that no count is
        // chosen before a compare. Each cell's cap is its quota (`ca`: the holder with quotas,
        // or another kernel with quotas while the holder has them and a block left after the
        // block in flight), the holder's T_k (`cb`: without quotas), or 0 (an SM that does not
        // run, an invalid entry, or neither); its cap's results are then chosen bit by bit:
        // over its cap (`ovc`), eligible (`elc`: below it with a block left after the block in
        // flight). An SM may take a block (`ok`) when it runs and no cell of it is over its cap,
        // found beside its eligible cells rather than before them. (The block in flight's own
        // cell is compared without it: its SM is changing, so the SMST takes no pick of it this
        // cycle and its row is not read.)
        self.ok.next = 0.into();
        self.rdy.next = 0.into();
        self.lt2.next = 0.into();
        for s in 0..MAX_SMS {
            self.gq[s].next = 0.into();
            self.lq[s].next = 0.into();
            self.gt[s].next = 0.into();
            self.lt[s].next = 0.into();
            self.nz[s].next = 0.into();
            for k in 0..MAX_SMS {
                self.gq[s].next = self.gq[s].val().replace_bit(k, self.res[s * 16 + k].q.val() > self.qv[k * 16 + s].q.val());
                self.lq[s].next = self.lq[s].val().replace_bit(k, self.res[s * 16 + k].q.val() < self.qv[k * 16 + s].q.val());
                self.gt[s].next = self.gt[s].val().replace_bit(k, self.res[s * 16 + k].q.val() > self.tk[s].val());
                self.lt[s].next = self.lt[s].val().replace_bit(k, self.res[s * 16 + k].q.val() < self.tk[s].val());
                self.nz[s].next = self.nz[s].val().replace_bit(k, self.res[s * 16 + k].q.val().any());
            }
            self.ca[s].next = 0.into();
            self.cb[s].next = 0.into();
            if self.run.val().get_bit(s) & self.hq.val().get_bit(s) {
                self.ca[s].next = self.valid.val() & self.ish[s].val();
                if self.hw1.val().get_bit(s) {
                    self.ca[s].next = self.ca[s].val() | (self.valid.val() & self.qon.q.val());
                }
            }
            if self.run.val().get_bit(s) & !self.hq.val().get_bit(s) {
                self.cb[s].next = self.valid.val() & self.ish[s].val();
            }
            self.ovc[s].next = (self.ca[s].val() & self.gq[s].val()) | (self.cb[s].val() & self.gt[s].val()) | (!(self.ca[s].val() | self.cb[s].val()) & self.nz[s].val());
            self.elc[s].next = self.ca[s].val() & self.lq[s].val() & self.lf1.val();
            if self.hw1.val().get_bit(s) {
                self.elc[s].next = self.elc[s].val() | (self.cb[s].val() & self.lt[s].val());
            }
            self.ok.next = self.ok.val().replace_bit(s, self.run.val().get_bit(s) & !self.ovc[s].val().any());
            self.el[s].next = 0.into();
            if self.ok.val().get_bit(s) {
                self.el[s].next = self.elc[s].val();
            }
            self.rdy.next = self.rdy.val().replace_bit(s, self.ok.val().get_bit(s) & self.elc[s].val().any());
            self.lt2.next = self.lt2.val().replace_bit(s, self.ok.val().get_bit(s) & (self.elc[s].val() & !self.lf2.val()).any());
            self.elq[s].d.next = self.el[s].val();
        }
        // (for the clock request: the SMs with an eligible kernel at the last edge)
        self.el_any.next = 0.into();
        for s in 0..MAX_SMS {
            self.el_any.next = self.el_any.val().replace_bit(s, self.elq[s].q.val().any());
        }
        // The second stage: the oldest of the kernels the SM picked could take a block
        // of when it was picked.
        self.ge.next = 0.into();
        for s in 0..MAX_SMS {
            if self.pick_oh.val().get_bit(s) {
                self.ge.next = self.ge.val() | self.elq[s].q.val();
            }
        }
        self.g_any.next = self.ge.val().any();
        self.g_k.next = 0.into();
        self.g_oh.next = 0.into();
        for k in 0..MAX_SMS {
            if self.ge.val().get_bit(k) & !(self.older[k].q.val() & self.ge.val()).any() {
                self.g_k.next = self.g_k.val() | self.ids[k].val();
                self.g_oh.next = self.g_oh.val().replace_bit(k, true);
            }
        }
        // Heirs, and the oldest heir of the SM the event picks.
        self.heir_v.next = 0.into();
        self.he.next = 0.into();
        for s in 0..MAX_SMS {
            self.hr[s].next = 0.into();
            for k in 0..MAX_SMS {
                if self.valid.val().get_bit(k)
                    & self.qon.q.val().get_bit(k)
                    & (self.qv[k * 16 + s].q.val() != 0)
                    & self.has_work.val().get_bit(k)
                    & (self.ksr[s].val() != self.ids[k].val())
                    & self.hq.val().get_bit(s)
                {
                    self.hr[s].next = self.hr[s].val().replace_bit(k, true);
                }
            }
            self.heir_v.next = self.heir_v.val().replace_bit(s, self.hr[s].val().any());
            if self.ev_sel.val().get_bit(s) {
                self.he.next = self.he.val() | self.hr[s].val();
            }
        }
        self.h_any.next = self.he.val().any();
        self.h_k.next = 0.into();
        for k in 0..MAX_SMS {
            if self.he.val().get_bit(k) & !(self.older[k].q.val() & self.he.val()).any() {
                self.h_k.next = self.h_k.val() | self.ids[k].val();
            }
        }

        // Next state. Resident counts: one more for the block issued, one fewer for each
        // block finished or saved.
        self.d_soh.next = 0.into();
        self.v_soh.next = 0.into();
        if self.done_valid.val() {
            self.d_soh.next = self.one16.val() << self.done_sm.val();
        }
        if self.saved_valid.val() {
            self.v_soh.next = self.one16.val() << self.saved_sm.val();
        }
        self.d_koh.next = self.one16.val() << self.done_k.val();
        self.v_koh.next = self.one16.val() << self.saved_k.val();
        for s in 0..MAX_SMS {
            for k in 0..MAX_SMS {
                if self.f_soh.val().get_bit(s) & self.f_koh.val().get_bit(k) {
                    if !(self.d_soh.val().get_bit(s) & self.d_koh.val().get_bit(k)) & !(self.v_soh.val().get_bit(s) & self.v_koh.val().get_bit(k)) {
                        self.res[s * 16 + k].d.next = self.res[s * 16 + k].q.val() + 1;
                    }
                    if self.d_soh.val().get_bit(s) & self.d_koh.val().get_bit(k) & self.v_soh.val().get_bit(s) & self.v_koh.val().get_bit(k) {
                        self.res[s * 16 + k].d.next = self.res[s * 16 + k].q.val() - 1;
                    }
                } else {
                    if (self.d_soh.val().get_bit(s) & self.d_koh.val().get_bit(k)) ^ (self.v_soh.val().get_bit(s) & self.v_koh.val().get_bit(k)) {
                        self.res[s * 16 + k].d.next = self.res[s * 16 + k].q.val() - 1;
                    }
                    if self.d_soh.val().get_bit(s) & self.d_koh.val().get_bit(k) & self.v_soh.val().get_bit(s) & self.v_koh.val().get_bit(k) {
                        self.res[s * 16 + k].d.next = self.res[s * 16 + k].q.val() - 2;
                    }
                }
            }
        }
        // Quotas written (at most T_k), taken away, cleared at retirement and admission.
        for s in 0..MAX_SMS {
            self.qmin[s].next = self.quota[s].val();
            if self.quota[s].val() > self.qw_tk.val() {
                self.qmin[s].next = self.qw_tk.val();
            }
        }
        for k in 0..MAX_SMS {
            if self.qw_hit.val().get_bit(k) & self.qw_on.val() {
                for s in 0..MAX_SMS {
                    self.qv[k * 16 + s].d.next = self.qmin[s].val();
                }
            }
        }
        self.qon_n.next = self.qon.q.val() & !self.qw_hit.val();
        if self.qw_on.val() {
            self.qon_n.next = self.qon.q.val() | self.qw_hit.val();
        }
        if self.retire.val() {
            self.qon_n.next = self.qon_n.val() & !(self.one16.val() << self.retire_k.val());
        }
        if self.admit.val() {
            self.qon_n.next = self.qon_n.val() & !(self.one16.val() << self.admit_k.val());
        }
        self.qon.d.next = self.qon_n.val();
        // Admission order: the entry admitted is younger than every valid entry.
        if self.admit.val() {
            for k in 0..MAX_SMS {
                self.older[k].d.next = self.older[k].q.val() & !(self.one16.val() << self.admit_k.val());
                if self.admit_k.val() == self.ids[k].val() {
                    self.older[k].d.next = self.valid.val() & !(self.one16.val() << self.admit_k.val());
                }
            }
        }
    }
}
