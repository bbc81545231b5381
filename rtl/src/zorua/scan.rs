//! `Zorua`'s logic for a scan of the queues: its start (the fit, the candidates, the first) and
//! a warp examined in four cycles (its fields, its block's, its needs, the decision), the next
//! candidate picked meanwhile (`docs/zorua.md`, "The coordinator").

use super::{Zorua, RHR_BITS, RROOM_BITS, SHSR_BITS, SHS_BITS, SLACK_BITS, SROOM_BITS};
use mpgpu_spec::units::zorua::{LREG_COUNT_BITS, LSMEM_COUNT_BITS, PREG_COUNT_BITS, PSMEM_COUNT_BITS, RSETS_BITS, SSETS_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// A scan's start and a warp examined.
pub struct Scan;

impl LogicPart<Scan> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // A scan's start: the fit (this cycle's, registered), the candidates, the first.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(2) {
            self.seen.d.next = 0.into();
            self.sx.next = self.h_p1.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(3) {
            self.sx.next = self.h_p2.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(4) {
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if !self.sel_any.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // A warp examined: its fields through the one-hot candidate, its block's, its needs,
        // the decision (the next candidate is picked meanwhile).
        self.sx.next = 0.into();
        self.bx.next = false;
        // (the examined warp's and its block's lookups, apart from the event's: no path runs
        // from the event's inputs into these stages)
        self.f_gw.next = 0.into();
        self.f_gb.next = 0.into();
        self.f_grn.next = 0.into();
        self.f_grh.next = 0.into();
        self.f_gsl.next = 0.into();
        self.b_gpk.next = 0.into();
        self.b_gsn.next = 0.into();
        self.b_gsh.next = 0.into();
        self.b_gbb.next = 0.into();
        if self.step.q.val().get_bit(5) {
            self.sx.next = self.h_b.val();
            self.bx.next = true;
            self.cur1h.d.next = self.nxt.q.val();
            self.seen.d.next = self.seen.q.val() | self.nxt.q.val();
            for b in 0..6 {
                self.f_gw.next = self.f_gw.val().replace_bit(b, (self.nxt.q.val() & self.bitmask[b].val()).any());
            }
            for j in 0..4 {
                self.f_gb.next = self.f_gb.val().replace_bit(j, (self.wblock[j].q.val() & self.nxt.q.val()).any());
            }
            for j in 0..5 {
                self.f_grn.next = self.f_grn.val().replace_bit(j, (self.rneed[j].q.val() & self.nxt.q.val()).any());
                self.f_grh.next = self.f_grh.val().replace_bit(j, (self.rheld[j].q.val() & self.nxt.q.val()).any());
            }
            for j in 0..6 {
                self.f_gsl.next = self.f_gsl.val().replace_bit(j, (self.slot[j].q.val() & self.nxt.q.val()).any());
            }
            self.fw.d.next = self.f_gw.val();
            self.fb.d.next = self.f_gb.val();
            self.f_rneed.d.next = self.f_grn.val();
            self.f_rheld.d.next = self.f_grh.val();
            self.f_slot.d.next = self.f_gsl.val();
            self.f_tq.d.next = (self.tq.q.val() & self.nxt.q.val()).any();
            self.f_sq.d.next = (self.sq.q.val() & self.nxt.q.val()).any();
            self.f_rq.d.next = (self.rq.q.val() & self.nxt.q.val()).any();
            self.f_bar.d.next = (self.bar.q.val() & self.nxt.q.val()).any();
            self.f_started.d.next = (self.started.q.val() & self.nxt.q.val()).any();
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(6) {
            self.sx.next = self.h_n.val();
            self.bx.next = true;
            for i in 0..16 {
                self.b_gbb.next = self.b_gbb.val().replace_bit(i, self.fb.q.val() == self.ids16[i].val());
            }
            self.bbit.d.next = self.b_gbb.val();
            for j in 0..5 {
                self.b_gpk.next = self.b_gpk.val().replace_bit(j, self.bpeak[j].q.val().get_bit(self.fb.q.val().index()));
            }
            for j in 0..7 {
                self.b_gsn.next = self.b_gsn.val().replace_bit(j, self.sneed[j].q.val().get_bit(self.fb.q.val().index()));
                self.b_gsh.next = self.b_gsh.val().replace_bit(j, self.sheld[j].q.val().get_bit(self.fb.q.val().index()));
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        if self.step.q.val().get_bit(6) {
            self.b_bpeak.d.next = self.b_gpk.val();
            self.b_sneed.d.next = self.b_gsn.val();
            self.b_sheld.d.next = self.b_gsh.val();
            // (the sums the needs are compared with)
            self.pb_hs.d.next = bit_cast::<SHS_BITS, SSETS_BITS>(self.b_gsh.val()) + bit_cast::<SHS_BITS, PSMEM_COUNT_BITS>(self.q_sfree.q.val());
            self.pb_hsr.d.next = bit_cast::<SHSR_BITS, SSETS_BITS>(self.b_gsh.val()) + bit_cast::<SHSR_BITS, SROOM_BITS>(self.s_room.q.val());
            self.pb_rpk.d.next = bit_cast::<SLACK_BITS, LREG_COUNT_BITS>(self.reg_resv.q.val()) + bit_cast::<SLACK_BITS, RSETS_BITS>(self.b_gpk.val());
            self.pb_hr.d.next = bit_cast::<RHR_BITS, RSETS_BITS>(self.f_rheld.q.val()) + bit_cast::<RHR_BITS, PREG_COUNT_BITS>(self.q_rfree.q.val());
            self.pb_hrr.d.next = bit_cast::<SLACK_BITS, RSETS_BITS>(self.f_rheld.q.val()) + bit_cast::<SLACK_BITS, RROOM_BITS>(self.r_room.q.val());
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(7) {
            self.sx.next = self.h_d.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.fresh.next = self.f_tq.q.val() & !self.f_started.q.val();
        self.t_pass.next = false;
        self.at_t.next = false;
        self.s_act.next = false;
        self.s_go.next = false;
        self.at_s.next = false;
        self.r_act.next = false;
        self.gr.next = false;
        self.at_r.next = false;
        self.moved.next = false;
        self.slot_new.next = 0.into();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(8) {
            self.t_pass.next = self.f_tq.q.val() & !self.f_bar.q.val() & self.n_tok.q.val();
            self.at_t.next = self.f_tq.q.val() & !self.t_pass.val();
            self.s_act.next = !self.at_t.val() & !self.f_rq.q.val();
            self.s_go.next = self.s_act.val() & self.n_sok.q.val();
            self.at_s.next = self.s_act.val() & !self.n_sok.q.val();
            self.r_act.next = !self.at_t.val() & !self.at_s.val();
            self.gr.next = self.r_act.val() & self.n_rok.q.val();
            self.at_r.next = self.r_act.val() & !self.n_rok.q.val();
            self.moved.next = self.t_pass.val() | (self.s_go.val() & (self.n_ns_any.q.val() | self.f_sq.q.val())) | self.gr.val();
            for b in 0..6 {
                self.slot_new.next = self.slot_new.val().replace_bit(b, (self.slot_low.q.val() & self.bitmask[b].val()).any());
            }
            self.tq.d.next = self.tq.q.val() & !self.cur1h.q.val();
            self.sq.d.next = self.sq.q.val() & !self.cur1h.q.val();
            self.rq.d.next = self.rq.q.val() & !self.cur1h.q.val();
            if self.at_t.val() {
                self.tq.d.next = self.tq.q.val();
            }
            if self.at_s.val() {
                self.sq.d.next = self.sq.q.val() | self.cur1h.q.val();
            }
            if self.at_r.val() {
                self.rq.d.next = self.rq.q.val() | self.cur1h.q.val();
            }
            self.g_slot.d.next = self.f_slot.q.val();
            if self.t_pass.val() {
                if self.fresh.val() {
                    self.started.d.next = self.started.q.val() | self.cur1h.q.val();
                    self.reg_resv.d.next = self.reg_resv.q.val() + bit_cast::<LREG_COUNT_BITS, RSETS_BITS>(self.b_bpeak.q.val());
                }
                self.slot_used.d.next = self.slot_used.q.val() | self.slot_low.q.val();
                self.w_sv_m.next = self.cur1h.q.val();
                self.wr_sv.next = true;
                self.w_sv_v.next = true;
                self.w_sl_m.next = self.cur1h.q.val();
                self.wr_sl.next = true;
                self.w_sl_v.next = self.slot_new.val();
                self.g_slot.d.next = self.slot_new.val();
                self.n_used.d.next = self.n_used.q.val() + 1;
                self.n_want.d.next = self.n_want.q.val() - 1;
            }
            self.a_smem.d.next = 0.into();
            self.a_sphys.d.next = 0.into();
            if self.s_go.val() {
                self.smem_cnt.d.next = self.smem_cnt.q.val() + self.n_phys_s.q.val();
                self.smem_swap.d.next = self.smem_swap.q.val() + bit_cast::<LSMEM_COUNT_BITS, SSETS_BITS>(self.n_swap_s.q.val());
                self.a_smem.d.next = self.n_need_s.q.val();
                self.a_sphys.d.next = self.n_phys_s.q.val();
            }
            self.a_regs.d.next = 0.into();
            self.a_rphys.d.next = 0.into();
            if self.gr.val() {
                self.reg_cnt.d.next = self.reg_cnt.q.val() + bit_cast::<PREG_COUNT_BITS, RSETS_BITS>(self.n_phys_r.q.val());
                self.reg_swap.d.next = self.reg_swap.q.val() + bit_cast::<LREG_COUNT_BITS, RSETS_BITS>(self.n_swap_r.q.val());
                self.a_regs.d.next = self.n_need_r.q.val();
                self.a_rphys.d.next = self.n_phys_r.q.val();
            }
            self.a_grant.d.next = self.gr.val();
            self.al_rh.d.next = self.f_rheld.q.val();
            self.al_sh.d.next = self.b_sheld.q.val();
            self.as_on.d.next = self.s_go.val() & self.n_ns_any.q.val();
            // (whether the first set allocated is the last)
            self.al_last.d.next = (self.s_go.val() & self.n_ns_one.q.val() & !(self.gr.val() & self.n_nr_any.q.val())) | (!(self.s_go.val() & self.n_ns_any.q.val()) & self.gr.val() & self.n_nr_one.q.val());
            self.asp_on.d.next = self.s_go.val() & self.n_ps_any.q.val();
            self.arp_on.d.next = self.gr.val() & self.n_pr_any.q.val();
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if self.nxt_none.q.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
            if self.moved.val() {
                if (self.s_go.val() & self.n_ns_any.q.val()) | (self.gr.val() & self.n_nr_any.q.val()) {
                    self.sx.next = self.h_al0.val();
                    self.bx.next = true;
                } else if self.gr.val() {
                    self.sx.next = self.h_fin.val();
                    self.bx.next = true;
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
    }
}
