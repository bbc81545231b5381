//! `Admit`: one SM's admission unit (Hayes and Zhang, "Unified On-chip Memory Allocation for
//! SIMT Architecture", ICS 2014, §4's occupancy rule; interface and timing in
//! `mpgpu_spec::units::admit`, decisions in `docs/unified.md`, "The admission unit").
//!
//! Per block slot the registers hold whether it is resident and its two ranges (register-file
//! rows, shared-memory bytes) and warps; one register holds the shared-memory configuration in
//! force. Everything the outputs say is combinational on those and the cycle's inputs:
//! - the descriptor's rows (`roundup(regs, reg_round) * warps`, one 16 x 16 multiply) and
//!   shared bytes (`user + spill`), and the configuration an empty SM would take;
//! - per resource, the live slots' amounts masked (a slot freed in this cycle is not live) and,
//!   for rows and bytes, their prefix sums in four Kogge-Stone levels: the last is the total
//!   the occupancy rule compares, and each slot's exclusive sum is its base after a packing
//!   (the warps need the total only: a tree);
//! - per resource, the 17 candidates (0, then each live slot's end), each checked against
//!   every live slot's range (256 pairs of compares), and the first that is clear picked by a
//!   tree (candidate 0 first, then slot order).
//!
//! At the rising edge the freed slots are cleared, a packing writes each live slot's base from
//! its exclusive sum, and the placed block's slot takes its ranges. The widths come from
//! `mpgpu_spec::units::admit`; indices and loop bounds the generator reads are literals written
//! for [`MAX_BLOCKS`] = 16 (asserted below).

use crate::reg::Reg;
use mpgpu_spec::units::admit::{Params, MAX_BLOCKS, MAX_CONFIGS, REGS_BITS, ROW_BITS, SHARED_BITS, SLOT_BITS, WARPS_BITS, WARP_BITS};
use rust_hdl::prelude::*;

/// Widths of the arithmetic inside: rows (a descriptor asks up to 255 x 32 = 8160 rows, and a
/// candidate's end adds up to 4096 more), shared bytes (two 17-bit amounts), warps.
const RW: usize = 16;
const SW: usize = 18;
const WW: usize = 8;
const _: () = assert!(MAX_BLOCKS == 16 && MAX_CONFIGS == 4, "the logic's indices and loop bounds are literals written for 16 block slots and 4 shared-memory configurations");
const _: () = assert!(ROW_BITS < RW && SHARED_BITS < SW && WARP_BITS < WW);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AdmitFaults {
    /// The cycle's frees are not seen: a slot freed in this cycle still holds its room, so a
    /// block that would take it waits a cycle.
    pub no_bypass: bool,
    /// A candidate that ends exactly where a live range begins counts as overlapping it
    /// (`<` for `<=`): a hole the block fills exactly is passed over.
    pub touching: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Admit {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// The block's descriptor.
    pub regs: Signal<In, Bits<REGS_BITS>>,
    pub warps: Signal<In, Bits<WARPS_BITS>>,
    pub user: Signal<In, Bits<SHARED_BITS>>,
    pub spill: Signal<In, Bits<SHARED_BITS>>,
    /// Place it in slot `slot` at this edge.
    pub alloc: Signal<In, Bit>,
    pub slot: Signal<In, Bits<SLOT_BITS>>,
    /// Slots whose blocks leave.
    pub free: Signal<In, Bits<MAX_BLOCKS>>,
    pub fits: Signal<Out, Bit>,
    pub rf_base: Signal<Out, Bits<ROW_BITS>>,
    pub sh_base: Signal<Out, Bits<SHARED_BITS>>,
    pub sp_base: Signal<Out, Bits<SHARED_BITS>>,
    pub rf_move: Signal<Out, Bit>,
    pub sh_move: Signal<Out, Bit>,
    /// The SM's parameters.
    present: Constant<Bits<MAX_BLOCKS>>,
    rows_c: Constant<Bits<RW>>,
    wcap_c: Constant<Bits<WW>>,
    rr_mask: Constant<Bits<16>>,
    cfg: [Constant<Bits<SW>>; MAX_CONFIGS],
    total_c: Constant<Bits<SW>>,
    /// Slot numbers (rust-hdl's generator takes no casts of loop variables).
    ids: [Constant<Bits<SLOT_BITS>>; MAX_BLOCKS],
    onehot: [Constant<Bits<MAX_BLOCKS>>; MAX_BLOCKS],
    no_bypass: Constant<Bit>,
    touching: Constant<Bit>,
    live: Signal<Local, Bits<MAX_BLOCKS>>,
    empty: Signal<Local, Bit>,
    rreg: Signal<Local, Bits<16>>,
    prod: Signal<Local, Bits<32>>,
    need_r: Signal<Local, Bits<RW>>,
    need_s: Signal<Local, Bits<SW>>,
    cap_new: Signal<Local, Bits<SW>>,
    cap_eff: Signal<Local, Bits<SW>>,
    /// The live slots' amounts (0 for the others), their prefix sums level by level (`*4`
    /// inclusive), and each range's base and end widened.
    mw: [Signal<Local, Bits<WW>>; MAX_BLOCKS],
    mr: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    ms: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    /// The warps' sum: a tree (only the total is needed).
    tw1: [Signal<Local, Bits<WW>>; 8],
    tw2: [Signal<Local, Bits<WW>>; 4],
    tw3: [Signal<Local, Bits<WW>>; 2],
    wsum: Signal<Local, Bits<WW>>,
    pr1: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    pr2: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    pr3: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    pr4: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    ps1: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    ps2: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    ps3: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    ps4: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    br: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    er: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    bs: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    es: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    /// Candidate k+1 (slot k's end) plus the block's amount, and whether it is clear; the
    /// same for candidate 0 (`*0`).
    cer: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    ces: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    okr: [Signal<Local, Bit>; MAX_BLOCKS],
    oks: [Signal<Local, Bit>; MAX_BLOCKS],
    okr0: Signal<Local, Bit>,
    oks0: Signal<Local, Bit>,
    /// The pick tree over the slot candidates: level k's node j, whether a candidate below is
    /// clear and the first one's value.
    vr1: [Signal<Local, Bit>; 8],
    xr1: [Signal<Local, Bits<RW>>; 8],
    vr2: [Signal<Local, Bit>; 4],
    xr2: [Signal<Local, Bits<RW>>; 4],
    vr3: [Signal<Local, Bit>; 2],
    xr3: [Signal<Local, Bits<RW>>; 2],
    vs1: [Signal<Local, Bit>; 8],
    xs1: [Signal<Local, Bits<SW>>; 8],
    vs2: [Signal<Local, Bit>; 4],
    xs2: [Signal<Local, Bits<SW>>; 4],
    vs3: [Signal<Local, Bit>; 2],
    xs3: [Signal<Local, Bits<SW>>; 2],
    base_r: Signal<Local, Bits<RW>>,
    base_s: Signal<Local, Bits<SW>>,
    move_r: Signal<Local, Bit>,
    move_s: Signal<Local, Bit>,
    /// The occupancy rule's answer (without the one-a-cycle term), and a placement at this edge.
    rule: Signal<Local, Bit>,
    dw: Signal<Local, Bits<WW>>,
    place: Signal<Local, Bit>,
    /// The registers: resident slots, each slot's ranges and warps, the configuration in force.
    pub valid: Reg<Bits<MAX_BLOCKS>>,
    /// (at the widths of the arithmetic: rust-hdl's generator takes no casts inside loops; the
    /// top bits stay 0)
    pub rf_b: [Reg<Bits<RW>>; MAX_BLOCKS],
    pub rf_l: [Reg<Bits<RW>>; MAX_BLOCKS],
    pub sh_b: [Reg<Bits<SW>>; MAX_BLOCKS],
    pub sh_l: [Reg<Bits<SW>>; MAX_BLOCKS],
    pub wp: [Reg<Bits<WW>>; MAX_BLOCKS],
    pub cap: Reg<Bits<SHARED_BITS>>,
}

/// A constant of `x`.
fn c<const N: usize>(x: u64) -> Constant<Bits<N>> {
    Constant::new(x.into())
}

impl Admit {
    /// The unit for an SM of parameters `p` (within `Params::rtl_limits`).
    pub fn new(p: &Params, faults: AdmitFaults) -> Self {
        if let Err(e) = p.rtl_limits() {
            panic!("{e}");
        }
        Self {
            clock: Default::default(),
            regs: Default::default(),
            warps: Default::default(),
            user: Default::default(),
            spill: Default::default(),
            alloc: Default::default(),
            slot: Default::default(),
            free: Default::default(),
            fits: Default::default(),
            rf_base: Default::default(),
            sh_base: Default::default(),
            sp_base: Default::default(),
            rf_move: Default::default(),
            sh_move: Default::default(),
            present: c((1u64 << p.slots) - 1),
            rows_c: c(p.rows as u64),
            wcap_c: c(p.warps as u64),
            rr_mask: c(p.reg_round as u64 - 1),
            cfg: std::array::from_fn(|k| c(p.configs[k] as u64)),
            total_c: c(p.shared as u64),
            ids: std::array::from_fn(|k| c(k as u64)),
            onehot: std::array::from_fn(|k| c(1 << k)),
            no_bypass: Constant::new(faults.no_bypass),
            touching: Constant::new(faults.touching),
            live: Default::default(),
            empty: Default::default(),
            rreg: Default::default(),
            prod: Default::default(),
            need_r: Default::default(),
            need_s: Default::default(),
            cap_new: Default::default(),
            cap_eff: Default::default(),
            mw: Default::default(),
            mr: Default::default(),
            ms: Default::default(),
            tw1: Default::default(),
            tw2: Default::default(),
            tw3: Default::default(),
            wsum: Default::default(),
            pr1: Default::default(),
            pr2: Default::default(),
            pr3: Default::default(),
            pr4: Default::default(),
            ps1: Default::default(),
            ps2: Default::default(),
            ps3: Default::default(),
            ps4: Default::default(),
            br: Default::default(),
            er: Default::default(),
            bs: Default::default(),
            es: Default::default(),
            cer: Default::default(),
            ces: Default::default(),
            okr: Default::default(),
            oks: Default::default(),
            okr0: Default::default(),
            oks0: Default::default(),
            vr1: Default::default(),
            xr1: Default::default(),
            vr2: Default::default(),
            xr2: Default::default(),
            vr3: Default::default(),
            xr3: Default::default(),
            vs1: Default::default(),
            xs1: Default::default(),
            vs2: Default::default(),
            xs2: Default::default(),
            vs3: Default::default(),
            xs3: Default::default(),
            base_r: Default::default(),
            base_s: Default::default(),
            move_r: Default::default(),
            move_s: Default::default(),
            rule: Default::default(),
            dw: Default::default(),
            place: Default::default(),
            valid: Default::default(),
            rf_b: Default::default(),
            rf_l: Default::default(),
            sh_b: Default::default(),
            sh_l: Default::default(),
            wp: Default::default(),
            cap: Default::default(),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.regs.connect();
        self.warps.connect();
        self.user.connect();
        self.spill.connect();
        self.alloc.connect();
        self.slot.connect();
        self.free.connect();
        self.connect_all();
    }
}

impl Logic for Admit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, valid, cap);
        for k in 0..16 {
            self.rf_b[k].clock.next = self.clock.val();
            self.rf_l[k].clock.next = self.clock.val();
            self.sh_b[k].clock.next = self.clock.val();
            self.sh_l[k].clock.next = self.clock.val();
            self.wp[k].clock.next = self.clock.val();
            self.rf_b[k].d.next = self.rf_b[k].q.val();
            self.rf_l[k].d.next = self.rf_l[k].q.val();
            self.sh_b[k].d.next = self.sh_b[k].q.val();
            self.sh_l[k].d.next = self.sh_l[k].q.val();
            self.wp[k].d.next = self.wp[k].q.val();
        }
        // The live slots, and the descriptor's amounts.
        // (masked by the slots the SM has: the logic of the others is constant, and synthesis
        // drops it)
        self.live.next = self.valid.q.val() & !self.free.val() & self.present.val();
        if self.no_bypass.val() {
            self.live.next = self.valid.q.val() & self.present.val();
        }
        self.empty.next = !self.live.val().any();
        self.rreg.next = (bit_cast::<16, REGS_BITS>(self.regs.val()) + self.rr_mask.val()) & !self.rr_mask.val();
        self.prod.next = self.rreg.val() * bit_cast::<16, WARPS_BITS>(self.warps.val());
        self.need_r.next = bit_cast::<RW, 32>(self.prod.val());
        self.dw.next = bit_cast::<WW, WARPS_BITS>(self.warps.val());
        self.need_s.next = bit_cast::<SW, SHARED_BITS>(self.user.val()) + bit_cast::<SW, SHARED_BITS>(self.spill.val());
        // (the smallest configuration that holds the block, else the whole)
        self.cap_new.next = self.total_c.val();
        for k in 0..4 {
            if self.need_s.val() <= self.cfg[3 - k].val() {
                self.cap_new.next = self.cfg[3 - k].val();
            }
        }
        self.cap_eff.next = bit_cast::<SW, SHARED_BITS>(self.cap.q.val());
        if self.empty.val() {
            self.cap_eff.next = self.cap_new.val();
        }
        // Each slot's amounts when live, its range widened.
        for k in 0..16 {
            self.br[k].next = self.rf_b[k].q.val();
            self.er[k].next = self.rf_b[k].q.val() + self.rf_l[k].q.val();
            self.bs[k].next = self.sh_b[k].q.val();
            self.es[k].next = self.sh_b[k].q.val() + self.sh_l[k].q.val();
            self.mw[k].next = 0.into();
            self.mr[k].next = 0.into();
            self.ms[k].next = 0.into();
            if self.live.val().get_bit(k) {
                self.mw[k].next = self.wp[k].q.val();
                self.mr[k].next = self.rf_l[k].q.val();
                self.ms[k].next = self.sh_l[k].q.val();
            }
        }
        // Prefix sums (Kogge-Stone: level l adds the sum 2^(l-1) places below).
        for k in 0..1 {
            self.pr1[k].next = self.mr[k].val();
            self.ps1[k].next = self.ms[k].val();
        }
        for k in 1..16 {
            self.pr1[k].next = self.mr[k].val() + self.mr[k - 1].val();
            self.ps1[k].next = self.ms[k].val() + self.ms[k - 1].val();
        }
        for k in 0..2 {
            self.pr2[k].next = self.pr1[k].val();
            self.ps2[k].next = self.ps1[k].val();
        }
        for k in 2..16 {
            self.pr2[k].next = self.pr1[k].val() + self.pr1[k - 2].val();
            self.ps2[k].next = self.ps1[k].val() + self.ps1[k - 2].val();
        }
        for k in 0..4 {
            self.pr3[k].next = self.pr2[k].val();
            self.ps3[k].next = self.ps2[k].val();
        }
        for k in 4..16 {
            self.pr3[k].next = self.pr2[k].val() + self.pr2[k - 4].val();
            self.ps3[k].next = self.ps2[k].val() + self.ps2[k - 4].val();
        }
        for k in 0..8 {
            self.pr4[k].next = self.pr3[k].val();
            self.ps4[k].next = self.ps3[k].val();
        }
        for k in 8..16 {
            self.pr4[k].next = self.pr3[k].val() + self.pr3[k - 8].val();
            self.ps4[k].next = self.ps3[k].val() + self.ps3[k - 8].val();
        }
        for j in 0..8 {
            self.tw1[j].next = self.mw[2 * j].val() + self.mw[2 * j + 1].val();
        }
        for j in 0..4 {
            self.tw2[j].next = self.tw1[2 * j].val() + self.tw1[2 * j + 1].val();
        }
        for j in 0..2 {
            self.tw3[j].next = self.tw2[2 * j].val() + self.tw2[2 * j + 1].val();
        }
        self.wsum.next = self.tw3[0].val() + self.tw3[1].val();
        // The occupancy rule.
        self.rule.next = ((self.wsum.val() + self.dw.val()) <= self.wcap_c.val())
            & ((self.pr4[15].val() + self.need_r.val()) <= self.rows_c.val())
            & ((self.ps4[15].val() + self.need_s.val()) <= self.cap_eff.val());
        self.place.next = self.alloc.val() & self.rule.val();
        // The candidates: 0, then each live slot's end; clear when below the size and apart
        // from every live range of some length.
        self.okr0.next = self.need_r.val() <= self.rows_c.val();
        self.oks0.next = self.need_s.val() <= self.cap_eff.val();
        for i in 0..16 {
            self.cer[i].next = self.er[i].val() + self.need_r.val();
            self.ces[i].next = self.es[i].val() + self.need_s.val();
            self.okr[i].next = self.live.val().get_bit(i) & (self.cer[i].val() <= self.rows_c.val());
            self.oks[i].next = self.live.val().get_bit(i) & (self.ces[i].val() <= self.cap_eff.val());
        }
        for j in 0..16 {
            if self.live.val().get_bit(j) & self.rf_l[j].q.val().any() {
                if !((self.need_r.val() <= self.br[j].val()) & !(self.touching.val() & (self.need_r.val() == self.br[j].val())) | !self.er[j].val().any()) {
                    self.okr0.next = false;
                }
                for i in 0..16 {
                    if !((self.cer[i].val() <= self.br[j].val()) & !(self.touching.val() & (self.cer[i].val() == self.br[j].val())) | (self.er[i].val() >= self.er[j].val())) {
                        self.okr[i].next = false;
                    }
                }
            }
            if self.live.val().get_bit(j) & self.sh_l[j].q.val().any() {
                if !((self.need_s.val() <= self.bs[j].val()) & !(self.touching.val() & (self.need_s.val() == self.bs[j].val())) | !self.es[j].val().any()) {
                    self.oks0.next = false;
                }
                for i in 0..16 {
                    if !((self.ces[i].val() <= self.bs[j].val()) & !(self.touching.val() & (self.ces[i].val() == self.bs[j].val())) | (self.es[i].val() >= self.es[j].val())) {
                        self.oks[i].next = false;
                    }
                }
            }
        }
        // The pick: candidate 0, else the first clear slot end (a tree).
        for j in 0..8 {
            self.vr1[j].next = self.okr[2 * j].val() | self.okr[2 * j + 1].val();
            self.xr1[j].next = self.er[2 * j + 1].val();
            if self.okr[2 * j].val() {
                self.xr1[j].next = self.er[2 * j].val();
            }
            self.vs1[j].next = self.oks[2 * j].val() | self.oks[2 * j + 1].val();
            self.xs1[j].next = self.es[2 * j + 1].val();
            if self.oks[2 * j].val() {
                self.xs1[j].next = self.es[2 * j].val();
            }
        }
        for j in 0..4 {
            self.vr2[j].next = self.vr1[2 * j].val() | self.vr1[2 * j + 1].val();
            self.xr2[j].next = self.xr1[2 * j + 1].val();
            if self.vr1[2 * j].val() {
                self.xr2[j].next = self.xr1[2 * j].val();
            }
            self.vs2[j].next = self.vs1[2 * j].val() | self.vs1[2 * j + 1].val();
            self.xs2[j].next = self.xs1[2 * j + 1].val();
            if self.vs1[2 * j].val() {
                self.xs2[j].next = self.xs1[2 * j].val();
            }
        }
        for j in 0..2 {
            self.vr3[j].next = self.vr2[2 * j].val() | self.vr2[2 * j + 1].val();
            self.xr3[j].next = self.xr2[2 * j + 1].val();
            if self.vr2[2 * j].val() {
                self.xr3[j].next = self.xr2[2 * j].val();
            }
            self.vs3[j].next = self.vs2[2 * j].val() | self.vs2[2 * j + 1].val();
            self.xs3[j].next = self.xs2[2 * j + 1].val();
            if self.vs2[2 * j].val() {
                self.xs3[j].next = self.xs2[2 * j].val();
            }
        }
        // (no candidate clear: the block goes after the live ranges, packed)
        self.move_r.next = !(self.okr0.val() | self.vr3[0].val() | self.vr3[1].val());
        self.base_r.next = self.pr4[15].val();
        if self.vr3[1].val() {
            self.base_r.next = self.xr3[1].val();
        }
        if self.vr3[0].val() {
            self.base_r.next = self.xr3[0].val();
        }
        if self.okr0.val() {
            self.base_r.next = 0.into();
        }
        self.move_s.next = !(self.oks0.val() | self.vs3[0].val() | self.vs3[1].val());
        self.base_s.next = self.ps4[15].val();
        if self.vs3[1].val() {
            self.base_s.next = self.xs3[1].val();
        }
        if self.vs3[0].val() {
            self.base_s.next = self.xs3[0].val();
        }
        if self.oks0.val() {
            self.base_s.next = 0.into();
        }
        self.fits.next = self.rule.val() & !self.alloc.val();
        self.rf_base.next = bit_cast::<ROW_BITS, RW>(self.base_r.val());
        self.sh_base.next = bit_cast::<SHARED_BITS, SW>(self.base_s.val());
        self.sp_base.next = bit_cast::<SHARED_BITS, SW>(self.base_s.val() + bit_cast::<SW, SHARED_BITS>(self.user.val()));
        self.rf_move.next = self.move_r.val();
        self.sh_move.next = self.move_s.val();
        // The edge: frees, a packing, the placed block.
        self.valid.d.next = self.valid.q.val() & !self.free.val();
        for k in 0..16 {
            if self.free.val().get_bit(k) {
                self.rf_b[k].d.next = 0.into();
                self.rf_l[k].d.next = 0.into();
                self.sh_b[k].d.next = 0.into();
                self.sh_l[k].d.next = 0.into();
                self.wp[k].d.next = 0.into();
            }
            if self.place.val() & self.live.val().get_bit(k) {
                if self.move_r.val() {
                    self.rf_b[k].d.next = self.pr4[k].val() - self.mr[k].val();
                }
                if self.move_s.val() {
                    self.sh_b[k].d.next = self.ps4[k].val() - self.ms[k].val();
                }
            }
            if self.place.val() & (self.slot.val() == self.ids[k].val()) & self.present.val().get_bit(k) {
                self.valid.d.next = (self.valid.q.val() & !self.free.val()) | self.onehot[k].val();
                self.rf_b[k].d.next = self.base_r.val();
                self.rf_l[k].d.next = self.need_r.val();
                self.sh_b[k].d.next = self.base_s.val();
                self.sh_l[k].d.next = self.need_s.val();
                self.wp[k].d.next = self.dw.val();
            }
        }
        if self.place.val() & self.empty.val() {
            self.cap.d.next = bit_cast::<SHARED_BITS, SW>(self.cap_new.val());
        }
    }
}
