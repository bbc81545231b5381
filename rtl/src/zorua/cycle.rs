//! `Zorua`'s logic that runs whatever the step: first (the defaults of the registers set every
//! cycle and of the locals, the tables' read ports, the threshold, the fit, the queues'
//! candidates, the needs of the warp examined, the outputs), and last (the slack, registered;
//! the fields' writes through their masks). The parts run in the order `super`'s `flat_block!`
//! lists them.

use super::{Zorua, LR_BITS, LS_BITS, RHR_BITS, RROOM_BITS, SHSR_BITS, SHS_BITS, SLACK_BITS, SROOM_BITS, SSW_BITS};
use mpgpu_spec::units::zorua::{LREG_COUNT_BITS, LSMEM_COUNT_BITS, PREG_COUNT_BITS, PSMEM_COUNT_BITS, RSETS_BITS, SSETS_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// First: the defaults and what every cycle computes from the state.
pub struct Cycle;

impl LogicPart<Cycle> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // The next step and busy bit: each stage's choice (`sx`, `bx`) ORed in below.
        self.stn.next = 0.into();
        self.bsn.next = false;
        // (a release lasts one cycle)
        self.rel.d.next = 0.into();
        self.rel_ph.d.next = false;
        // (the warps in the release step)
        self.rel_q.next = self.rel.q.val();
        if self.rel_ph.q.val() {
            self.rel_q.next = self.rel.q.val() | self.cur1h.q.val();
        }

        // The tables' RAMs: read the current warp's and block's rows; written only where a
        // step says.
        // (the register table's data is an allocation's, a cycle late, or 0: a freeing's)
        self.wq_data.d.next = 0.into();
        self.wq_en.d.next = 0.into();
        self.wq_m.next = 0.into();
        self.byp_en.d.next = self.wq_en.q.val();
        self.byp_data.d.next = self.wq_data.q.val();
        for k in 0..16 {
            self.reg_ram[k].write_enable.next = self.wq_en.q.val().get_bit(k);
            self.reg_ram[k].write_address.next = self.fw.q.val();
            self.reg_ram[k].write_data.next = self.wq_data.q.val();
            self.reg_ram[k].read_address.next = self.fw.q.val();
        }
        for k in 0..64 {
            self.smem_ram[k].write_enable.next = false;
            self.smem_ram[k].write_address.next = self.fb.q.val();
            self.smem_ram[k].write_data.next = 0.into();
            self.smem_ram[k].read_address.next = self.fb.q.val();
        }
        self.wr_wb.next = false;
        self.wr_rn.next = false;
        self.wr_rh.next = false;
        self.wr_sv.next = false;
        self.wr_sl.next = false;
        self.wr_wp.next = false;
        self.wr_sn.next = false;
        self.wr_sh.next = false;
        self.wr_nw.next = false;
        self.wr_na.next = false;
        self.wr_bp.next = false;
        self.w_wb_m.next = 0.into();
        self.w_wb_v.next = 0.into();
        self.w_rn_m.next = 0.into();
        self.w_rn_v.next = 0.into();
        self.w_rh_m.next = 0.into();
        self.w_rh_v.next = 0.into();
        self.w_sv_m.next = 0.into();
        self.w_sv_v.next = false;
        self.w_sl_m.next = 0.into();
        self.w_sl_v.next = 0.into();
        self.w_wp_m.next = 0.into();
        self.w_wp_v.next = 0.into();
        self.w_sn_m.next = 0.into();
        self.w_sn_v.next = 0.into();
        self.w_sh_m.next = 0.into();
        self.w_sh_v.next = 0.into();
        self.w_nw_m.next = 0.into();
        self.w_nw_v.next = 0.into();
        self.w_na_m.next = 0.into();
        self.w_na_v.next = 0.into();
        self.w_bp_m.next = 0.into();
        self.w_bp_v.next = 0.into();

        // (the step is one-hot; idle is none)
        self.is_idle.next = !self.busy.q.val();

        // The threshold (o_default until the first epoch) and what follows from it: the swap
        // limits floor(physical x o / 16) and the virtual register space, physical + its
        // limit (a table of the configuration's values, one per threshold).
        self.eff_o.next = self.o_default.val();
        if self.th_set.q.val() {
            self.eff_o.next = self.th_q.q.val();
        }
        self.o_thresh.next = self.eff_o.val();
        // (registered: used two cycles or more after the threshold moves)
        self.l_s.next = 0.into();
        self.l_r.next = 0.into();
        self.l_cap.next = 0.into();
        for o in 0..17 {
            if self.eff_o.val() == self.o_ids[o].val() {
                self.l_s.next = self.ls_tab[o].val();
                self.l_r.next = self.lr_tab[o].val();
                self.l_cap.next = self.cap_tab[o].val();
            }
        }
        self.q_ls.d.next = self.l_s.val();
        self.q_lr.d.next = self.l_r.val();
        self.q_cap.d.next = self.l_cap.val();
        // (the same lookup, the table in the other order: its own register for the fit)
        self.l_capf.next = 0.into();
        for i in 0..17 {
            if self.eff_o.val() == self.o_ids[16 - i].val() {
                self.l_capf.next = self.cap_tab[16 - i].val();
            }
        }
        self.q_capf.d.next = self.l_capf.val();
        self.valve.next = !self.sched.q.val().any();
        self.slot_free.next = self.slot_present.val() & !self.slot_used.q.val();
        self.smem_free_map.next = self.smem_present.val() & !self.smem_used.q.val();
        self.slot_any.next = self.slot_free.val().any();
        self.n_sfree.next = self.smem_total.val() - self.smem_cnt.q.val();
        self.n_rfree.next = self.reg_total.val() - self.reg_cnt.q.val();

        // Every cycle, from the state: the warps whose block's peak fits the virtual space
        // (peak <= physical + its limit - reserved; all under the forward-progress rule), a bit-sliced
        // comparison of the warps' peaks with the slack.
        self.lt_m.next = 0.into();
        self.eq_m.next = 0.into();
        if self.step.q.val().get_bit(2) | self.step.q.val().get_bit(5) {
            self.eq_m.next = self.ones64.val();
            for i in 0..5 {
                if self.slack5q.q.val().get_bit(4 - i) {
                    self.lt_m.next = self.lt_m.val() | (self.eq_m.val() & !self.wpeak[4 - i].q.val());
                    self.eq_m.next = self.eq_m.val() & self.wpeak[4 - i].q.val();
                } else {
                    self.eq_m.next = self.eq_m.val() & !self.wpeak[4 - i].q.val();
                }
            }
            self.wfit.d.next = self.lt_m.val() | self.eq_m.val();
            if self.sneg.q.val() {
                self.wfit.d.next = 0.into();
            }
            if self.valve.val() {
                self.wfit.d.next = self.ones64.val();
            }
        }
        // The queues' candidates (those not seen; in the thread/barrier queue not at a barrier,
        // and started or fitting), and whether each has one (taken the next cycle).
        self.mr.next = 0.into();
        self.ms.next = 0.into();
        self.mt.next = 0.into();
        if self.step.q.val().get_bit(3) | self.step.q.val().get_bit(6) {
            self.mr.next = self.rq.q.val() & !self.seen.q.val();
            self.ms.next = self.sq.q.val() & !self.seen.q.val();
            self.mt.next = self.tq.q.val() & !self.bar.q.val() & !self.seen.q.val() & (self.started.q.val() | self.wfit.q.val());
            self.m_rq.d.next = self.mr.val();
            self.m_sq.d.next = self.ms.val();
            self.m_tq.d.next = self.mt.val();
            self.a_rq.d.next = self.mr.val().any();
            self.a_sq.d.next = self.ms.val().any();
            self.a_tq.d.next = self.mt.val().any();
            self.p_slot.d.next = self.slot_any.val();
        }
        // The rooms the threshold leaves (free sets, and the swap still allowed).
        self.q_sfree.d.next = self.n_sfree.val();
        self.q_rfree.d.next = self.n_rfree.val();
        self.sw_s.next = bit_cast::<SSW_BITS, LS_BITS>(self.q_ls.q.val()) - bit_cast::<SSW_BITS, LSMEM_COUNT_BITS>(self.smem_swap.q.val());
        self.s_room.d.next = bit_cast::<SROOM_BITS, PSMEM_COUNT_BITS>(self.n_sfree.val());
        if bit_cast::<LSMEM_COUNT_BITS, LS_BITS>(self.q_ls.q.val()) > self.smem_swap.q.val() {
            self.s_room.d.next = bit_cast::<SROOM_BITS, PSMEM_COUNT_BITS>(self.n_sfree.val()) + bit_cast::<SROOM_BITS, SSW_BITS>(self.sw_s.val());
        }
        self.sw_r.next = bit_cast::<SLACK_BITS, LR_BITS>(self.q_lr.q.val()) - bit_cast::<SLACK_BITS, LREG_COUNT_BITS>(self.reg_swap.q.val());
        self.r_room.d.next = bit_cast::<RROOM_BITS, PREG_COUNT_BITS>(self.n_rfree.val());
        if bit_cast::<LREG_COUNT_BITS, LR_BITS>(self.q_lr.q.val()) > self.reg_swap.q.val() {
            self.r_room.d.next = bit_cast::<RROOM_BITS, PREG_COUNT_BITS>(self.n_rfree.val()) + bit_cast::<RROOM_BITS, SLACK_BITS>(self.sw_r.val());
        }
        // What the examined warp needs and may take (its fields and its block's registered):
        // scratchpad sets needed, physical (up to the free ones) and in swap, and whether the
        // threshold allows that swap; the same for registers; whether a warp not started fits.
        self.c1s.next = false;
        self.ds.next = 0.into();
        self.c2s.next = false;
        self.es.next = 0.into();
        self.c1r.next = false;
        self.dr.next = 0.into();
        self.c2r.next = false;
        self.er.next = 0.into();
        if self.step.q.val().get_bit(7) {
            self.c1s.next = self.b_sneed.q.val() <= self.b_sheld.q.val();
            self.ds.next = self.b_sneed.q.val() - self.b_sheld.q.val();
            self.c2s.next = bit_cast::<SHS_BITS, SSETS_BITS>(self.b_sneed.q.val()) <= self.pb_hs.q.val();
            self.es.next = bit_cast::<SHS_BITS, SSETS_BITS>(self.b_sneed.q.val()) - self.pb_hs.q.val();
            self.n_need_s.d.next = 0.into();
            self.n_phys_s.d.next = 0.into();
            self.n_swap_s.d.next = 0.into();
            if !self.c1s.val() {
                self.n_need_s.d.next = self.ds.val();
                self.n_phys_s.d.next = self.q_sfree.q.val();
                if self.c2s.val() {
                    self.n_phys_s.d.next = self.ds.val();
                } else {
                    self.n_swap_s.d.next = bit_cast::<SSETS_BITS, SHS_BITS>(self.es.val());
                }
            }
            self.n_sok.d.next = self.valve.val() | (bit_cast::<SHSR_BITS, SSETS_BITS>(self.b_sneed.q.val()) <= self.pb_hsr.q.val());
            self.c1r.next = self.f_rneed.q.val() <= self.f_rheld.q.val();
            self.dr.next = self.f_rneed.q.val() - self.f_rheld.q.val();
            self.c2r.next = bit_cast::<RHR_BITS, RSETS_BITS>(self.f_rneed.q.val()) <= self.pb_hr.q.val();
            self.er.next = bit_cast::<RHR_BITS, RSETS_BITS>(self.f_rneed.q.val()) - self.pb_hr.q.val();
            self.n_need_r.d.next = 0.into();
            self.n_phys_r.d.next = 0.into();
            self.n_swap_r.d.next = 0.into();
            if !self.c1r.val() {
                self.n_need_r.d.next = self.dr.val();
                self.n_phys_r.d.next = bit_cast::<RSETS_BITS, PREG_COUNT_BITS>(self.q_rfree.q.val());
                if self.c2r.val() {
                    self.n_phys_r.d.next = self.dr.val();
                } else {
                    self.n_swap_r.d.next = bit_cast::<RSETS_BITS, RHR_BITS>(self.er.val());
                }
            }
            self.n_rok.d.next = self.valve.val() | (bit_cast::<SLACK_BITS, RSETS_BITS>(self.f_rneed.q.val()) <= self.pb_hrr.q.val());
            self.n_tok.d.next = self.slot_any.val() & (!(self.f_tq.q.val() & !self.f_started.q.val()) | self.valve.val() | (self.pb_rpk.q.val() <= self.q_cap.q.val()));
            self.n_ns_any.d.next = !self.c1s.val();
            self.n_nr_any.d.next = !self.c1r.val();
            self.n_ns_one.d.next = !self.c1s.val() & (self.ds.val() == self.ss_ids[1].val());
            self.n_nr_one.d.next = !self.c1r.val() & (self.dr.val() == self.rs_ids[1].val());
            self.n_ps_any.d.next = !self.c1s.val() & (self.c2s.val() | self.q_sfree.q.val().any());
            self.n_pr_any.d.next = !self.c1r.val() & (self.c2r.val() | self.q_rfree.q.val().any());
            self.slot_low.d.next = self.slot_free.val() & (!self.slot_free.val() + self.one64.val());
        }

        // The candidate taken: the first queue in scan order with one, its lowest warp (at a
        // scan's start, and while a warp is examined: the next).
        if (self.step.q.val().get_bit(4)) | (self.step.q.val().get_bit(7)) {
            self.sel.next = 0.into();
            self.sel_any.next = self.a_rq.q.val() | self.a_sq.q.val() | (self.a_tq.q.val() & self.p_slot.q.val());
            if self.rescan_from_thread.val() {
                if self.a_rq.q.val() {
                    self.sel.next = self.m_rq.q.val();
                }
                if self.a_sq.q.val() {
                    self.sel.next = self.m_sq.q.val();
                }
                if self.a_tq.q.val() & self.p_slot.q.val() {
                    self.sel.next = self.m_tq.q.val();
                }
            } else {
                if self.a_tq.q.val() & self.p_slot.q.val() {
                    self.sel.next = self.m_tq.q.val();
                }
                if self.a_sq.q.val() {
                    self.sel.next = self.m_sq.q.val();
                }
                if self.a_rq.q.val() {
                    self.sel.next = self.m_rq.q.val();
                }
            }
            self.nxt.d.next = self.sel.val() & (!self.sel.val() + self.one64.val());
            self.nxt_none.d.next = !self.sel_any.val();
        } else {
            self.sel.next = 0.into();
            self.sel_any.next = false;
        }

        // Outputs.
        self.ready.next = self.is_idle.val();
        self.waiting.next = (self.sq.q.val() | self.rq.q.val()).any();
        self.slot_room.next = 0.into();
        if !(self.sq.q.val() | self.rq.q.val()).any() & (self.n_used.q.val() + self.n_want.q.val() < self.n_slots.val()) {
            self.slot_room.next = self.n_slots.val() - self.n_used.q.val() - self.n_want.q.val();
        }
        self.grant.next = false;
        self.grant_warp.next = 0.into();
        self.grant_slot.next = 0.into();
        self.reg_phys.next = 0.into();
        self.rd_ent.next = 0.into();
        self.smem_phys.next = 0.into();
        for k in 0..16 {
            self.reg_set[k].next = 0.into();
        }
        for k in 0..64 {
            self.smem_set[k].next = 0.into();
        }
        self.released.next = self.rel_q.val();
        if self.step.q.val().get_bit(12) {
            self.grant.next = true;
            self.grant_warp.next = self.fw.q.val();
            self.grant_slot.next = self.g_slot.q.val();
            for k in 0..16 {
                // (a column written as the row was read: the write's entry)
                self.rd_ent.next = self.reg_ram[k].read_data.val();
                if self.byp_en.q.val().get_bit(k) {
                    self.rd_ent.next = self.byp_data.q.val();
                }
                self.reg_phys.next = self.reg_phys.val().replace_bit(k, self.rd_ent.val().get_bit(9));
                for j in 0..9 {
                    self.reg_set[k].next = self.reg_set[k].val().replace_bit(j, self.rd_ent.val().get_bit(j));
                }
            }
        }
        // (a grant's and a release's block row: the RAMs read at the block of the step before)
        if self.step.q.val().get_bit(12) | self.step.q.val().get_bit(15) {
            for k in 0..64 {
                self.smem_phys.next = self.smem_phys.val().replace_bit(k, self.smem_ram[k].read_data.val().get_bit(6));
                for j in 0..6 {
                    self.smem_set[k].next = self.smem_set[k].val().replace_bit(j, self.smem_ram[k].read_data.val().get_bit(j));
                }
            }
        }
    }
}

/// Last: the slack the fit compares peaks with, and the per-warp and per-block fields' writes.
pub struct Commit;

impl LogicPart<Commit> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // The slack the fit compares peaks with (physical + limit - reserved, clamped to 0..=31),
        // registered as it will be after this cycle: a decision that starts a warp reserves its
        // peak, a warp's end releases it.
        // (each of the three values clamped, then the one the step chooses: the decision only
        // selects)
        self.sl3[0].next = self.q_capf.q.val() - bit_cast::<SLACK_BITS, LREG_COUNT_BITS>(self.reg_resv.q.val());
        self.slk.d.next = self.sl3[0].val();
        self.sl3[1].next = self.q_capf.q.val() - self.pb_rpk.q.val();
        self.sl3[2].next = self.slk.q.val() + bit_cast::<SLACK_BITS, RSETS_BITS>(self.eb_bpeak.q.val());
        self.sl5[0].next = bit_cast::<RSETS_BITS, SLACK_BITS>(self.sl3[0].val());
        if (self.sl3[0].val() & self.sl_hi.val()).any() {
            self.sl5[0].next = 31.into();
        }
        self.sl5[1].next = bit_cast::<RSETS_BITS, SLACK_BITS>(self.sl3[1].val());
        if (self.sl3[1].val() & self.sl_hi.val()).any() {
            self.sl5[1].next = 31.into();
        }
        self.sl5[2].next = bit_cast::<RSETS_BITS, SLACK_BITS>(self.sl3[2].val());
        if (self.sl3[2].val() & self.sl_hi.val()).any() {
            self.sl5[2].next = 31.into();
        }
        self.sk_c[0].next = self.step.q.val().get_bit(8) & self.t_pass.val() & self.fresh.val();
        self.sk_c[1].next = self.step.q.val().get_bit(1) & self.e_kwend.q.val() & self.e_started.q.val();
        self.sk_t[0].next = 0.into();
        self.sk_t[1].next = 0.into();
        self.sk_t[2].next = 0.into();
        if !(self.sk_c[0].val() | self.sk_c[1].val()) {
            self.sk_t[0].next = self.sl5[0].val();
        }
        if self.sk_c[0].val() {
            self.sk_t[1].next = self.sl5[1].val();
        }
        if self.sk_c[1].val() {
            self.sk_t[2].next = self.sl5[2].val();
        }
        self.slack5q.d.next = self.sk_t[0].val() | self.sk_t[1].val() | self.sk_t[2].val();
        self.sneg.d.next = (!(self.sk_c[0].val() | self.sk_c[1].val()) & self.sl3[0].val().get_bit(11))
            | (self.sk_c[0].val() & self.sl3[1].val().get_bit(11))
            | (self.sk_c[1].val() & self.sl3[2].val().get_bit(11));

        // The fields' writes, through their masks (a field not written holds).
        if self.wr_wb.val() {
            for j in 0..4 {
                self.wblock[j].d.next = self.wblock[j].q.val() & !self.w_wb_m.val();
                if self.w_wb_v.val().get_bit(j) {
                    self.wblock[j].d.next = self.wblock[j].q.val() | self.w_wb_m.val();
                }
            }
        }
        if self.wr_rn.val() {
            for j in 0..5 {
                self.rneed[j].d.next = self.rneed[j].q.val() & !self.w_rn_m.val();
                if self.w_rn_v.val().get_bit(j) {
                    self.rneed[j].d.next = self.rneed[j].q.val() | self.w_rn_m.val();
                }
            }
        }
        if self.wr_rh.val() {
            for j in 0..5 {
                self.rheld[j].d.next = self.rheld[j].q.val() & !self.w_rh_m.val();
                if self.w_rh_v.val().get_bit(j) {
                    self.rheld[j].d.next = self.rheld[j].q.val() | self.w_rh_m.val();
                }
            }
        }
        if self.wr_wp.val() {
            for j in 0..5 {
                self.wpeak[j].d.next = self.wpeak[j].q.val() & !self.w_wp_m.val();
                if self.w_wp_v.val().get_bit(j) {
                    self.wpeak[j].d.next = self.wpeak[j].q.val() | self.w_wp_m.val();
                }
            }
        }
        if self.wr_bp.val() {
            for j in 0..5 {
                self.bpeak[j].d.next = self.bpeak[j].q.val() & !self.w_bp_m.val();
                if self.w_bp_v.val().get_bit(j) {
                    self.bpeak[j].d.next = self.bpeak[j].q.val() | self.w_bp_m.val();
                }
            }
        }
        if self.wr_sv.val() {
            self.slotv.d.next = self.slotv.q.val() & !self.w_sv_m.val();
            if self.w_sv_v.val() {
                self.slotv.d.next = self.slotv.q.val() | self.w_sv_m.val();
            }
        }
        if self.wr_sl.val() {
            for j in 0..6 {
                self.slot[j].d.next = self.slot[j].q.val() & !self.w_sl_m.val();
                if self.w_sl_v.val().get_bit(j) {
                    self.slot[j].d.next = self.slot[j].q.val() | self.w_sl_m.val();
                }
            }
        }
        if self.wr_sn.val() {
            for j in 0..7 {
                self.sneed[j].d.next = self.sneed[j].q.val() & !self.w_sn_m.val();
                if self.w_sn_v.val().get_bit(j) {
                    self.sneed[j].d.next = self.sneed[j].q.val() | self.w_sn_m.val();
                }
            }
        }
        if self.wr_sh.val() {
            for j in 0..7 {
                self.sheld[j].d.next = self.sheld[j].q.val() & !self.w_sh_m.val();
                if self.w_sh_v.val().get_bit(j) {
                    self.sheld[j].d.next = self.sheld[j].q.val() | self.w_sh_m.val();
                }
            }
        }
        if self.wr_nw.val() {
            for j in 0..7 {
                self.nwarps[j].d.next = self.nwarps[j].q.val() & !self.w_nw_m.val();
                if self.w_nw_v.val().get_bit(j) {
                    self.nwarps[j].d.next = self.nwarps[j].q.val() | self.w_nw_m.val();
                }
            }
        }
        if self.wr_na.val() {
            for j in 0..7 {
                self.narr[j].d.next = self.narr[j].q.val() & !self.w_na_m.val();
                if self.w_na_v.val().get_bit(j) {
                    self.narr[j].d.next = self.narr[j].q.val() | self.w_na_m.val();
                }
            }
        }
    }
}
