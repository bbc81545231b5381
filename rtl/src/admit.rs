//! `Admit`: one SM's admission unit (Hayes and Zhang, "Unified On-chip Memory Allocation for
//! SIMT Architecture", ICS 2014, §4's occupancy rule; interface and timing in
//! `mpgpu_spec::units::admit`, decisions in `docs/unified.md`, "The admission unit").
//!
//! Per block slot the registers hold whether it is resident and its two ranges (register-file
//! rows, shared-memory bytes) and warps; one register holds the shared-memory configuration in
//! force, two the bump pointers, and per pair of slots three registers the pair's warps, rows
//! and bytes summed (a copy, summed a cycle ahead). Everything the outputs say is
//! combinational on those and the cycle's inputs:
//! - the totals of the live slots (a slot freed in this cycle is not live): per pair of slots
//!   the live part picked from the slots' registers and the pair's sum (no adder on the frees'
//!   path), then two levels of adds;
//! - the rule compares each total against the room less the block's amount (computed beside
//!   the sums, not after them); an empty SM's rule (the block's own shared configuration)
//!   beside the other, picked last;
//! - the base: 0 on an empty SM, the bump pointer when the room above it holds the block, else
//!   the live total (a packing); slot k's base after a packing is the live slots' sum below it
//!   (prefix sums in four Kogge-Stone levels).
//!
//! Its timing on the ECP5, the steps taken and what closing 100 MHz needs: `docs/unified.md`,
//! "The admission unit".
//!
//! At the rising edge the freed slots are cleared, a packing writes each live slot's base from
//! its slot's exclusive sum, and the placed block's slot takes its ranges. The widths come from
//! `mpgpu_spec::units::admit`; indices and loop bounds the generator reads are literals written
//! for [`MAX_BLOCKS`] = 16 (asserted below).

use crate::reg::Reg;
use mpgpu_spec::units::admit::{Params, MAX_BLOCKS, MAX_CONFIGS, ROW_BITS, SHARED_BITS, SLOT_BITS, WARPS_BITS, WARP_BITS};
use rust_hdl::prelude::*;

/// Widths of the arithmetic inside: rows (a descriptor asks up to 8160 rows, and the pointer
/// plus that goes past the file), shared bytes (two 17-bit amounts), warps.
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
    /// No packing: a block goes at the bump pointer even when the room above it does not hold
    /// it (its range runs past the end).
    pub no_pack: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Admit {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// The block's descriptor.
    pub rows: Signal<In, Bits<ROW_BITS>>,
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
    cfg: [Constant<Bits<SW>>; MAX_CONFIGS],
    total_c: Constant<Bits<SW>>,
    /// Slot numbers and their one-hot masks (rust-hdl's generator takes no casts of loop
    /// variables).
    ids: [Constant<Bits<SLOT_BITS>>; MAX_BLOCKS],
    onehot: [Constant<Bits<MAX_BLOCKS>>; MAX_BLOCKS],
    no_bypass: Constant<Bit>,
    no_pack: Constant<Bit>,
    live: Signal<Local, Bits<MAX_BLOCKS>>,
    empty: Signal<Local, Bit>,
    need_r: Signal<Local, Bits<RW>>,
    need_s: Signal<Local, Bits<SW>>,
    dw: Signal<Local, Bits<WW>>,
    cap_new: Signal<Local, Bits<SW>>,
    cap_eff: Signal<Local, Bits<SW>>,
    /// The room less the block's amount, beside the sums.
    lim_r: Signal<Local, Bits<RW>>,
    lim_s: Signal<Local, Bits<SW>>,
    /// The live slots' amounts (0 for the others) and their prefix sums level by level (`*4`
    /// inclusive), for the bases after a packing.
    mr: [Signal<Local, Bits<RW>>; 15],
    ms: [Signal<Local, Bits<SW>>; 15],
    /// The totals: per pair of slots the live ones' sum picked from the registered pair sums
    /// (no adder on the frees' path), then two levels of adds.
    lw: [Signal<Local, Bits<WW>>; 8],
    lr: [Signal<Local, Bits<RW>>; 8],
    ls: [Signal<Local, Bits<SW>>; 8],
    tw2: [Signal<Local, Bits<WW>>; 4],
    tr2: [Signal<Local, Bits<RW>>; 4],
    ts2: [Signal<Local, Bits<SW>>; 4],
    tw3: [Signal<Local, Bits<WW>>; 2],
    tr3: [Signal<Local, Bits<RW>>; 2],
    ts3: [Signal<Local, Bits<SW>>; 2],
    wsum: Signal<Local, Bits<WW>>,
    rsum: Signal<Local, Bits<RW>>,
    ssum: Signal<Local, Bits<SW>>,
    /// Each slot's amounts after this edge (for the pair sums' registers).
    nw: [Signal<Local, Bits<WW>>; MAX_BLOCKS],
    nr: [Signal<Local, Bits<RW>>; MAX_BLOCKS],
    ns: [Signal<Local, Bits<SW>>; MAX_BLOCKS],
    pr1: [Signal<Local, Bits<RW>>; 15],
    pr2: [Signal<Local, Bits<RW>>; 15],
    pr3: [Signal<Local, Bits<RW>>; 15],
    pr4: [Signal<Local, Bits<RW>>; 15],
    ps1: [Signal<Local, Bits<SW>>; 15],
    ps2: [Signal<Local, Bits<SW>>; 15],
    ps3: [Signal<Local, Bits<SW>>; 15],
    ps4: [Signal<Local, Bits<SW>>; 15],
    /// The occupancy rule's answer (without the one-a-cycle term).
    rule: Signal<Local, Bit>,
    /// The bump pointers plus the block's amount, the packings, the bases.
    end_r: Signal<Local, Bits<RW>>,
    end_s: Signal<Local, Bits<SW>>,
    move_r: Signal<Local, Bit>,
    move_s: Signal<Local, Bit>,
    base_r: Signal<Local, Bits<RW>>,
    base_s: Signal<Local, Bits<SW>>,
    /// A block is placed at this edge (in a slot the SM has).
    go: Signal<Local, Bit>,
    /// The registers: resident slots, each slot's ranges and warps (at the widths of the
    /// arithmetic: rust-hdl's generator takes no casts inside loops; the top bits stay 0), the
    /// configuration in force, the bump pointers.
    pub valid: Reg<Bits<MAX_BLOCKS>>,
    pub rf_b: [Reg<Bits<RW>>; MAX_BLOCKS],
    pub rf_l: [Reg<Bits<RW>>; MAX_BLOCKS],
    pub sh_b: [Reg<Bits<SW>>; MAX_BLOCKS],
    pub sh_l: [Reg<Bits<SW>>; MAX_BLOCKS],
    pub wp: [Reg<Bits<WW>>; MAX_BLOCKS],
    pub cap: Reg<Bits<SHARED_BITS>>,
    pub top_r: Reg<Bits<RW>>,
    pub top_s: Reg<Bits<SW>>,
    /// Per pair of slots (2j, 2j+1), the sum of their warps, rows and bytes (a copy of the
    /// slots' registers, summed a cycle ahead).
    pub pw: [Reg<Bits<WW>>; 8],
    pub pr: [Reg<Bits<RW>>; 8],
    pub ps: [Reg<Bits<SW>>; 8],
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
            rows: Default::default(),
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
            cfg: std::array::from_fn(|k| c(p.configs[k] as u64)),
            total_c: c(p.shared as u64),
            ids: std::array::from_fn(|k| c(k as u64)),
            onehot: std::array::from_fn(|k| c(1 << k)),
            no_bypass: Constant::new(faults.no_bypass),
            no_pack: Constant::new(faults.no_pack),
            live: Default::default(),
            empty: Default::default(),
            need_r: Default::default(),
            need_s: Default::default(),
            dw: Default::default(),
            cap_new: Default::default(),
            cap_eff: Default::default(),
            lim_r: Default::default(),
            lim_s: Default::default(),
            mr: Default::default(),
            ms: Default::default(),
            lw: Default::default(),
            lr: Default::default(),
            ls: Default::default(),
            tw2: Default::default(),
            tr2: Default::default(),
            ts2: Default::default(),
            tw3: Default::default(),
            tr3: Default::default(),
            ts3: Default::default(),
            wsum: Default::default(),
            rsum: Default::default(),
            ssum: Default::default(),
            nw: Default::default(),
            nr: Default::default(),
            ns: Default::default(),
            pr1: Default::default(),
            pr2: Default::default(),
            pr3: Default::default(),
            pr4: Default::default(),
            ps1: Default::default(),
            ps2: Default::default(),
            ps3: Default::default(),
            ps4: Default::default(),
            rule: Default::default(),
            end_r: Default::default(),
            end_s: Default::default(),
            move_r: Default::default(),
            move_s: Default::default(),
            base_r: Default::default(),
            base_s: Default::default(),
            go: Default::default(),
            valid: Default::default(),
            rf_b: Default::default(),
            rf_l: Default::default(),
            sh_b: Default::default(),
            sh_l: Default::default(),
            wp: Default::default(),
            cap: Default::default(),
            top_r: Default::default(),
            top_s: Default::default(),
            pw: Default::default(),
            pr: Default::default(),
            ps: Default::default(),
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.rows.connect();
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
        dff_setup!(self, clock, valid, cap, top_r, top_s);
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
        for j in 0..8 {
            self.pw[j].clock.next = self.clock.val();
            self.pr[j].clock.next = self.clock.val();
            self.ps[j].clock.next = self.clock.val();
        }
        // The live slots (masked by the slots the SM has: the logic of the others is constant,
        // and synthesis drops it), and the descriptor's amounts.
        self.live.next = self.valid.q.val() & !self.free.val() & self.present.val();
        if self.no_bypass.val() {
            self.live.next = self.valid.q.val() & self.present.val();
        }
        self.empty.next = !self.live.val().any();
        self.need_r.next = bit_cast::<RW, ROW_BITS>(self.rows.val());
        self.dw.next = bit_cast::<WW, WARPS_BITS>(self.warps.val());
        self.need_s.next = bit_cast::<SW, SHARED_BITS>(self.user.val()) + bit_cast::<SW, SHARED_BITS>(self.spill.val());
        // (the smallest configuration that holds the block, else the whole)
        self.cap_new.next = self.total_c.val();
        for k in 0..4 {
            if self.need_s.val() <= self.cfg[3 - k].val() {
                self.cap_new.next = self.cfg[3 - k].val();
            }
        }
        // (the configuration in force; on an empty SM the rule takes the block's own, and the
        // total is 0: the two cases side by side, picked last)
        self.cap_eff.next = bit_cast::<SW, SHARED_BITS>(self.cap.q.val());
        self.lim_r.next = self.rows_c.val() - self.need_r.val();
        self.lim_s.next = self.cap_eff.val() - self.need_s.val();
        // Each live slot's amounts (the last slot's is in no exclusive sum).
        for k in 0..15 {
            self.mr[k].next = 0.into();
            self.ms[k].next = 0.into();
            if self.live.val().get_bit(k) {
                self.mr[k].next = self.rf_l[k].q.val();
                self.ms[k].next = self.sh_l[k].q.val();
            }
        }
        for j in 0..8 {
            self.lw[j].next = 0.into();
            self.lr[j].next = 0.into();
            self.ls[j].next = 0.into();
            if self.live.val().get_bit(2 * j) {
                self.lw[j].next = self.wp[2 * j].q.val();
                self.lr[j].next = self.rf_l[2 * j].q.val();
                self.ls[j].next = self.sh_l[2 * j].q.val();
            }
            if self.live.val().get_bit(2 * j + 1) {
                self.lw[j].next = self.wp[2 * j + 1].q.val();
                self.lr[j].next = self.rf_l[2 * j + 1].q.val();
                self.ls[j].next = self.sh_l[2 * j + 1].q.val();
                if self.live.val().get_bit(2 * j) {
                    self.lw[j].next = self.pw[j].q.val();
                    self.lr[j].next = self.pr[j].q.val();
                    self.ls[j].next = self.ps[j].q.val();
                }
            }
        }
        for j in 0..4 {
            self.tw2[j].next = self.lw[2 * j].val() + self.lw[2 * j + 1].val();
            self.tr2[j].next = self.lr[2 * j].val() + self.lr[2 * j + 1].val();
            self.ts2[j].next = self.ls[2 * j].val() + self.ls[2 * j + 1].val();
        }
        for j in 0..2 {
            self.tw3[j].next = self.tw2[2 * j].val() + self.tw2[2 * j + 1].val();
            self.tr3[j].next = self.tr2[2 * j].val() + self.tr2[2 * j + 1].val();
            self.ts3[j].next = self.ts2[2 * j].val() + self.ts2[2 * j + 1].val();
        }
        self.wsum.next = self.tw3[0].val() + self.tw3[1].val();
        self.rsum.next = self.tr3[0].val() + self.tr3[1].val();
        self.ssum.next = self.ts3[0].val() + self.ts3[1].val();
        // Prefix sums (Kogge-Stone: level l adds the sum 2^(l-1) places below).
        for k in 0..1 {
            self.pr1[k].next = self.mr[k].val();
            self.ps1[k].next = self.ms[k].val();
        }
        for k in 1..15 {
            self.pr1[k].next = self.mr[k].val() + self.mr[k - 1].val();
            self.ps1[k].next = self.ms[k].val() + self.ms[k - 1].val();
        }
        for k in 0..2 {
            self.pr2[k].next = self.pr1[k].val();
            self.ps2[k].next = self.ps1[k].val();
        }
        for k in 2..15 {
            self.pr2[k].next = self.pr1[k].val() + self.pr1[k - 2].val();
            self.ps2[k].next = self.ps1[k].val() + self.ps1[k - 2].val();
        }
        for k in 0..4 {
            self.pr3[k].next = self.pr2[k].val();
            self.ps3[k].next = self.ps2[k].val();
        }
        for k in 4..15 {
            self.pr3[k].next = self.pr2[k].val() + self.pr2[k - 4].val();
            self.ps3[k].next = self.ps2[k].val() + self.ps2[k - 4].val();
        }
        for k in 0..8 {
            self.pr4[k].next = self.pr3[k].val();
            self.ps4[k].next = self.ps3[k].val();
        }
        for k in 8..15 {
            self.pr4[k].next = self.pr3[k].val() + self.pr3[k - 8].val();
            self.ps4[k].next = self.ps3[k].val() + self.ps3[k - 8].val();
        }
        // The occupancy rule.
        self.rule.next = ((self.wsum.val() + self.dw.val()) <= self.wcap_c.val())
            & (self.need_r.val() <= self.rows_c.val())
            & (self.rsum.val() <= self.lim_r.val())
            & (self.need_s.val() <= self.cap_eff.val())
            & (self.ssum.val() <= self.lim_s.val());
        if self.empty.val() {
            self.rule.next = (self.dw.val() <= self.wcap_c.val()) & (self.need_r.val() <= self.rows_c.val()) & (self.need_s.val() <= self.cap_new.val());
        }
        // The bases: 0 on an empty SM, the bump pointer when the room above it holds the block,
        // else after the live ranges packed.
        self.end_r.next = self.top_r.q.val() + self.need_r.val();
        self.end_s.next = self.top_s.q.val() + self.need_s.val();
        self.move_r.next = !self.empty.val() & (self.end_r.val() > self.rows_c.val()) & !self.no_pack.val();
        self.move_s.next = !self.empty.val() & (self.end_s.val() > self.cap_eff.val()) & !self.no_pack.val();
        self.base_r.next = self.top_r.q.val();
        if self.move_r.val() {
            self.base_r.next = self.rsum.val();
        }
        if self.empty.val() {
            self.base_r.next = 0.into();
        }
        self.base_s.next = self.top_s.q.val();
        if self.move_s.val() {
            self.base_s.next = self.ssum.val();
        }
        if self.empty.val() {
            self.base_s.next = 0.into();
        }
        self.fits.next = self.rule.val() & !self.alloc.val();
        self.rf_base.next = bit_cast::<ROW_BITS, RW>(self.base_r.val());
        self.sh_base.next = bit_cast::<SHARED_BITS, SW>(self.base_s.val());
        self.sp_base.next = bit_cast::<SHARED_BITS, SW>(self.base_s.val() + bit_cast::<SW, SHARED_BITS>(self.user.val()));
        self.rf_move.next = self.move_r.val();
        self.sh_move.next = self.move_s.val();
        // The edge: frees, a packing, the placed block.
        self.go.next = false;
        for k in 0..16 {
            if self.alloc.val() & (self.slot.val() == self.ids[k].val()) & self.present.val().get_bit(k) {
                self.go.next = true;
            }
        }
        self.valid.d.next = self.valid.q.val() & !self.free.val();
        for k in 0..16 {
            if self.free.val().get_bit(k) {
                self.rf_b[k].d.next = 0.into();
                self.rf_l[k].d.next = 0.into();
                self.sh_b[k].d.next = 0.into();
                self.sh_l[k].d.next = 0.into();
                self.wp[k].d.next = 0.into();
            }
        }
        // (slot k's base after a packing: the sum of the live slots below it)
        for k in 0..1 {
            if self.go.val() & self.live.val().get_bit(k) {
                if self.move_r.val() {
                    self.rf_b[k].d.next = 0.into();
                }
                if self.move_s.val() {
                    self.sh_b[k].d.next = 0.into();
                }
            }
        }
        for k in 1..16 {
            if self.go.val() & self.live.val().get_bit(k) {
                if self.move_r.val() {
                    self.rf_b[k].d.next = self.pr4[k - 1].val();
                }
                if self.move_s.val() {
                    self.sh_b[k].d.next = self.ps4[k - 1].val();
                }
            }
        }
        for k in 0..16 {
            if self.alloc.val() & (self.slot.val() == self.ids[k].val()) & self.present.val().get_bit(k) {
                self.valid.d.next = (self.valid.q.val() & !self.free.val()) | self.onehot[k].val();
                self.rf_b[k].d.next = self.base_r.val();
                self.rf_l[k].d.next = self.need_r.val();
                self.sh_b[k].d.next = self.base_s.val();
                self.sh_l[k].d.next = self.need_s.val();
                self.wp[k].d.next = self.dw.val();
            }
        }
        // (each slot's amounts after the edge, as its registers take them, and the pairs' sums)
        for k in 0..16 {
            self.nw[k].next = self.wp[k].q.val();
            self.nr[k].next = self.rf_l[k].q.val();
            self.ns[k].next = self.sh_l[k].q.val();
            if self.free.val().get_bit(k) {
                self.nw[k].next = 0.into();
                self.nr[k].next = 0.into();
                self.ns[k].next = 0.into();
            }
            if self.alloc.val() & (self.slot.val() == self.ids[k].val()) & self.present.val().get_bit(k) {
                self.nw[k].next = self.dw.val();
                self.nr[k].next = self.need_r.val();
                self.ns[k].next = self.need_s.val();
            }
        }
        for j in 0..8 {
            self.pw[j].d.next = self.nw[2 * j].val() + self.nw[2 * j + 1].val();
            self.pr[j].d.next = self.nr[2 * j].val() + self.nr[2 * j + 1].val();
            self.ps[j].d.next = self.ns[2 * j].val() + self.ns[2 * j + 1].val();
        }
        if self.go.val() {
            self.top_r.d.next = self.base_r.val() + self.need_r.val();
            self.top_s.d.next = self.base_s.val() + self.need_s.val();
            if self.empty.val() {
                self.cap.d.next = bit_cast::<SHARED_BITS, SW>(self.cap_new.val());
            }
        }
    }
}
