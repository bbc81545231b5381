//! `Zorua`'s logic for the sets of the mapping tables: freeing (highest set first, the entry
//! selected from the row, then freed while the next is selected) and allocating (the lowest
//! free sets found, then one set a cycle), and the grant that reads the granted warp's rows.

use super::{Zorua, PREG_BITS, REG_WORD_BITS, RENT_BITS, SENT_BITS};
use mpgpu_spec::units::zorua::{PSMEM_BITS, RSETS_BITS, SSETS_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// Freeing, and the selection of the entry it frees next.
pub struct Free;

impl LogicPart<Free> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // Freeing, highest set first: the entry selected from the row (a one-hot over the
        // logical sets), then freed while the next is selected.
        self.fr_next.next = 0.into();
        self.rlow6.next = 0.into();
        self.rword.next = 0.into();
        self.sentry6.next = 0.into();
        self.sel_sh.next = 0.into();
        if (self.step.q.val().get_bit(13)) | (self.step.q.val().get_bit(14)) {
            if self.fsm.q.val() {
                for k in 0..64 {
                    if self.fr_sel.q.val().get_bit(k) {
                        for j in 0..7 {
                            if self.smem_ram[k].read_data.val().get_bit(j) {
                                self.fr_next.next = self.fr_next.val().replace_bit(j, true);
                            }
                        }
                    }
                }
            } else {
                for k in 0..16 {
                    if self.fr_sel.q.val().get_bit(k) {
                        self.fr_next.next = self.fr_next.val() | self.reg_ram[k].read_data.val();
                    }
                }
            }
            self.sel_sh.next = self.fr_sel.q.val() >> 1;
            self.fr_e.d.next = self.fr_next.val();
            self.fr_wr.d.next = self.fr_sel.q.val();
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(13) {
            self.sx.next = self.h_free.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(14) {
            // (the step held unless it ends)
            self.sx.next = self.step.q.val();
            self.bx.next = true;
            self.fr_k.d.next = self.fr_k.q.val() - 1;
            self.fr_last.d.next = self.fr_k.q.val() == self.ss_ids[2].val();
            self.fr_h.d.next = self.fr_h.q.val() - 1;
            if self.fsm.q.val() {
                self.sentry6.next = bit_cast::<PSMEM_BITS, RENT_BITS>(self.fr_e.q.val());
                if self.fr_e.q.val().get_bit(6) {
                    self.smem_used.d.next = self.smem_used.q.val() & !(self.one64.val() << self.sentry6.val());
                    self.smem_cnt.d.next = self.smem_cnt.q.val() - 1;
                } else {
                    self.smem_swap.d.next = self.smem_swap.q.val() - 1;
                }
                for k in 0..64 {
                    if self.fr_wr.q.val().get_bit(k) {
                        self.smem_ram[k].write_enable.next = true;
                    }
                }
                self.w_sh_m.next = self.eb_bbit.q.val();
                self.wr_sh.next = true;
                self.w_sh_v.next = self.fr_h.q.val() - 1;
            } else {
                self.rlow6.next = bit_cast::<REG_WORD_BITS, RENT_BITS>(self.fr_e.q.val());
                self.rword.next = self.rword.val().replace_bit(0, self.fr_e.q.val().get_bit(6));
                self.rword.next = self.rword.val().replace_bit(1, self.fr_e.q.val().get_bit(7));
                self.rword.next = self.rword.val().replace_bit(2, self.fr_e.q.val().get_bit(8));
                if self.fr_e.q.val().get_bit(9) {
                    for k in 0..8 {
                        if self.rword.val() == self.word_ids[k].val() {
                            self.reg_used[k].d.next = self.reg_used[k].q.val() & !(self.one64.val() << self.rlow6.val());
                        }
                    }
                    self.reg_cnt.d.next = self.reg_cnt.q.val() - 1;
                } else {
                    self.reg_swap.d.next = self.reg_swap.q.val() - 1;
                }
                for k in 0..16 {
                    if self.fr_wr.q.val().get_bit(k) {
                        self.reg_ram[k].write_enable.next = true;
                    }
                }
                self.w_rh_m.next = self.cur1h.q.val();
                self.wr_rh.next = true;
                self.w_rh_v.next = bit_cast::<RSETS_BITS, SSETS_BITS>(self.fr_h.q.val() - 1);
            }
            if self.fr_last.q.val() {
                self.sx.next = self.h_w.val();
                self.bx.next = true;
                if !self.fsm.q.val() & self.fthen.q.val() {
                    self.fsm.d.next = true;
                    self.fthen.d.next = false;
                    self.fend.d.next = false;
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
                if self.fsm.q.val() & self.fend.q.val() {
                    self.blocks.d.next = self.blocks.q.val() & !self.eb_bbit.q.val();
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        // The freeing's selection: when an event is applied, the first entry a freeing
        // selects, whether one follows or not (the register sets' highest, or the block's
        // scratchpad's for a block's end or a warp holding no set); while freeing, shifted
        // down a set, or the scratchpad's first when the registers' last is freed and the
        // block's scratchpad follows; held otherwise.
        self.fs_then.next = self.step.q.val().get_bit(14) & self.fr_last.q.val() & !self.fsm.q.val() & self.fthen.q.val();
        self.fs_r.next = 0.into();
        self.fs_s.next = 0.into();
        self.fs_h.next = 0.into();
        if self.step.q.val().get_bit(1) & !(self.e_kbend.q.val() | !self.e_rheld.q.val().any()) {
            self.fs_r.next = self.rg_sel0.val();
        }
        if (self.step.q.val().get_bit(1) & (self.e_kbend.q.val() | !self.e_rheld.q.val().any())) | self.fs_then.val() {
            self.fs_s.next = self.sm_sel0.val();
        }
        if (self.step.q.val().get_bit(13) | self.step.q.val().get_bit(14)) & !self.fs_then.val() {
            self.fs_h.next = self.sel_sh.val();
        }
        if !(self.step.q.val().get_bit(1) | self.step.q.val().get_bit(13) | self.step.q.val().get_bit(14)) {
            self.fs_h.next = self.fr_sel.q.val();
        }
        self.fr_sel.d.next = self.fs_r.val() | self.fs_s.val() | self.fs_h.val();
    }
}

/// Allocating, the grant, and the next step.
pub struct Alloc;

impl LogicPart<Alloc> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // Allocating: the lowest free sets found (per 64-set word of the register map), then
        // one set a cycle, the next lowest found meanwhile (scratchpad first, then registers).
        self.s_rest.next = 0.into();
        self.s_idx.next = 0.into();
        self.r_idx.next = 0.into();
        self.went.next = 0.into();
        self.sent.next = 0.into();
        self.take_s.next = false;
        self.take_r.next = false;
        self.r_first.next = 0.into();
        for k in 0..8 {
            self.r_rest[k].next = 0.into();
            self.r_enc[k].next = 0.into();
            self.r_free[k].next = self.reg_present[k].val() & !self.reg_used[k].q.val();
        }
        if (self.step.q.val().get_bit(9)) | (self.step.q.val().get_bit(10)) {
            self.take_s.next = (self.step.q.val().get_bit(10)) & self.as_on.q.val() & self.asp_on.q.val();
            self.take_r.next = (self.step.q.val().get_bit(10)) & !self.as_on.q.val() & self.arp_on.q.val();
            // (the first word with a free set, from last cycle's registers)
            self.r_first.next = 0.into();
            for k in 0..8 {
                if self.al_rany[7 - k].q.val() {
                    self.r_first.next = self.word_1h[7 - k].val();
                }
            }
            // (the lowest free set of each map, and of the map less the set taken now, both
            // from registers; the choice made last)
            self.s_rest.next = self.smem_free_map.val() & !self.al_s1h.q.val();
            self.al_s1h.d.next = self.smem_free_map.val() & (!self.smem_free_map.val() + self.one64.val());
            if self.take_s.val() {
                self.al_s1h.d.next = self.s_rest.val() & (!self.s_rest.val() + self.one64.val());
            }
            for k in 0..8 {
                self.r_rest[k].next = self.r_free[k].val() & !self.al_r1h[k].q.val();
                self.al_r1h[k].d.next = self.r_free[k].val() & (!self.r_free[k].val() + self.one64.val());
                self.al_rany[k].d.next = self.r_free[k].val().any();
                if self.take_r.val() & self.r_first.val().get_bit(k) {
                    self.al_r1h[k].d.next = self.r_rest[k].val() & (!self.r_rest[k].val() + self.one64.val());
                    self.al_rany[k].d.next = self.r_rest[k].val().any();
                }
            }
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(9) {
            self.sx.next = self.h_al.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(10) {
            // (the step held unless it ends)
            self.sx.next = self.step.q.val();
            self.bx.next = true;
            for b in 0..6 {
                self.s_idx.next = self.s_idx.val().replace_bit(b, (self.al_s1h.q.val() & self.bitmask[b].val()).any());
                for k in 0..8 {
                    self.r_enc[k].next = self.r_enc[k].val().replace_bit(b, (self.al_r1h[k].q.val() & self.bitmask[b].val()).any());
                }
            }
            for k in 0..8 {
                if self.r_first.val().get_bit(k) & self.arp_on.q.val() {
                    for b in 0..6 {
                        self.r_idx.next = self.r_idx.val().replace_bit(b, self.r_enc[k].val().get_bit(b));
                    }
                    self.r_idx.next = self.r_idx.val().replace_bit(6, self.word_ids[k].val().get_bit(0));
                    self.r_idx.next = self.r_idx.val().replace_bit(7, self.word_ids[k].val().get_bit(1));
                    self.r_idx.next = self.r_idx.val().replace_bit(8, self.word_ids[k].val().get_bit(2));
                }
            }
            if self.as_on.q.val() {
                if self.asp_on.q.val() {
                    self.sent.next = bit_cast::<SENT_BITS, PSMEM_BITS>(self.s_idx.val()) | self.v7.val();
                    self.smem_used.d.next = self.smem_used.q.val() | self.al_s1h.q.val();
                    self.a_sphys.d.next = self.a_sphys.q.val() - 1;
                    self.asp_on.d.next = self.a_sphys.q.val() != self.ss_ids[1].val();
                }
                for k in 0..64 {
                    self.smem_ram[k].write_data.next = self.sent.val();
                    if self.al_sh.q.val() == self.ss_ids[k].val() {
                        self.smem_ram[k].write_enable.next = true;
                    }
                }
                self.w_sh_m.next = self.bbit.q.val();
                self.wr_sh.next = true;
                self.w_sh_v.next = self.al_sh.q.val() + 1;
                self.al_sh.d.next = self.al_sh.q.val() + 1;
                self.a_smem.d.next = self.a_smem.q.val() - 1;
                self.as_on.d.next = self.a_smem.q.val() != self.ss_ids[1].val();
            } else {
                self.went.next = bit_cast::<RENT_BITS, PREG_BITS>(self.r_idx.val());
                if self.arp_on.q.val() {
                    self.went.next = bit_cast::<RENT_BITS, PREG_BITS>(self.r_idx.val()) | self.v9.val();
                    for k in 0..8 {
                        if self.r_first.val().get_bit(k) {
                            self.reg_used[k].d.next = self.reg_used[k].q.val() | self.al_r1h[k].q.val();
                        }
                    }
                    self.a_rphys.d.next = self.a_rphys.q.val() - 1;
                    self.arp_on.d.next = self.a_rphys.q.val() != self.rs_ids[1].val();
                }
                self.wq_data.d.next = self.went.val();
                for k in 0..16 {
                    self.wq_m.next = self.wq_m.val().replace_bit(k, self.al_rh.q.val() == self.rs_ids[k].val());
                }
                self.wq_en.d.next = self.wq_m.val();
                self.w_rh_m.next = self.cur1h.q.val();
                self.wr_rh.next = true;
                self.w_rh_v.next = self.al_rh.q.val() + 1;
                self.al_rh.d.next = self.al_rh.q.val() + 1;
                self.a_regs.d.next = self.a_regs.q.val() - 1;
            }
            self.al_last.d.next = (self.as_on.q.val() & (((self.a_smem.q.val() == self.ss_ids[2].val()) & !self.a_regs.q.val().any()) | ((self.a_smem.q.val() == self.ss_ids[1].val()) & (self.a_regs.q.val() == self.rs_ids[1].val())))) | (!self.as_on.q.val() & (self.a_regs.q.val() == self.rs_ids[2].val()));
            if self.al_last.q.val() {
                self.sx.next = self.h_f.val();
                self.bx.next = true;
                if self.nxt_none.q.val() {
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                if self.a_grant.q.val() {
                    self.sx.next = self.h_read.val();
                    self.bx.next = true;
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // The granted warp's rows are read; then the grant.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(11) {
            self.sx.next = self.h_fin.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(12) {
            self.sched.d.next = self.sched.q.val() | self.cur1h.q.val();
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if self.nxt_none.q.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        // (the next step: each stage's choice, or-ed; the stages are one-hot, so no priority
        // chain runs through them)
        self.step.d.next = self.stn.val();
        self.busy.d.next = self.bsn.val();
    }
}
