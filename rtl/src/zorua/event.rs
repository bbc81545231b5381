//! `Zorua`'s logic for an event: taken when idle (its inputs and the fields it reads
//! registered), applied in the next cycle, and the release step that follows an event releasing
//! warps (`docs/zorua.md`, "Timing").

use super::{Zorua, GAP_BITS, SMEM_DEC_BITS, THR_BITS};
use mpgpu_spec::units::zorua::{EPOCH_BITS, LREG_COUNT_BITS, NWARPS_BITS, RSETS_BITS, SMEM_SETS, SSETS_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// An event taken, applied, and the release step.
pub struct Event;

impl LogicPart<Event> for Zorua {
    #[hdl_gen]
    fn update(&mut self) {
        // Idle: an event is taken; its inputs are registered with the warp's fields (through
        // its index) and its block's.
        self.ev_rsets.next = 0.into();
        self.ev_psets.next = 0.into();
        self.ev_ssets.next = 0.into();
        self.th_new.next = self.eff_o.val();
        self.h_bytes.next = 0.into();
        self.th_idle.next = 0.into();
        self.th_mem.next = 0.into();
        self.th_up.next = 0.into();
        self.g_rneed.next = 0.into();
        self.g_rheld.next = 0.into();
        self.g_bpeak.next = 0.into();
        self.g_slot6.next = 0.into();
        self.g_sneed.next = 0.into();
        self.g_sheld.next = 0.into();
        self.g_nw.next = 0.into();
        self.g_narr.next = 0.into();
        self.g_bmask.next = 0.into();
        self.e_bbit.next = 0.into();
        self.sx.next = 0.into();
        self.bx.next = false;
        if (self.is_idle.val()) & self.ev.val().any() {
            self.sx.next = self.h_ev.val();
            self.bx.next = true;
            // (needs: register sets = registers / 4, up; scratchpad sets = KB, up)
            for j in 0..5 {
                self.ev_rsets.next = self.ev_rsets.val().replace_bit(j, self.regs.val().get_bit(j + 2));
                self.ev_psets.next = self.ev_psets.val().replace_bit(j, self.peak.val().get_bit(j + 2));
            }
            if self.regs.val().get_bit(0) | self.regs.val().get_bit(1) {
                self.ev_rsets.next = self.ev_rsets.val() + 1;
            }
            if self.peak.val().get_bit(0) | self.peak.val().get_bit(1) {
                self.ev_psets.next = self.ev_psets.val() + 1;
            }
            for j in 0..7 {
                self.ev_ssets.next = self.ev_ssets.val().replace_bit(j, self.smem.val().get_bit(j + 10));
            }
            if (self.smem.val() & self.low10.val()).any() {
                self.ev_ssets.next = self.ev_ssets.val() + 1;
            }
            // (Algorithm 1's comparisons; the new threshold is computed when applied)
            self.th_idle.next = bit_cast::<THR_BITS, EPOCH_BITS>(self.idle.val());
            self.th_mem.next = bit_cast::<THR_BITS, EPOCH_BITS>(self.mem.val());
            self.e_up.d.next = self.th_idle.val() > self.th_mem.val() + self.c_delta.val();
            self.e_down.d.next = self.th_mem.val() > self.th_idle.val() + self.c_delta.val();
            self.e_kstart.d.next = self.ev.val() == self.c_start.val();
            self.e_kphase.d.next = self.ev.val() == self.c_phase.val();
            self.e_kbar.d.next = self.ev.val() == self.c_bar.val();
            self.e_kwend.d.next = self.ev.val() == self.c_wend.val();
            self.e_kbend.d.next = self.ev.val() == self.c_bend.val();
            self.e_kepoch.d.next = self.ev.val() == self.c_epoch.val();
            self.e_warps.d.next = self.warps.val();
            self.e_rsets.d.next = self.ev_rsets.val();
            self.e_rsets1.d.next = self.ev_rsets.val() + 1;
            self.e_ssets.d.next = self.ev_ssets.val();
            self.e_psets.d.next = self.ev_psets.val();
            self.fw.d.next = self.warp.val();
            self.fb.d.next = self.block.val();
            self.cur1h.d.next = self.one64.val() << self.warp.val();
            self.e_oth.d.next = (self.sched.q.val() & !(self.one64.val() << self.warp.val())).any();
            for i in 0..16 {
                self.e_bbit.next = self.e_bbit.val().replace_bit(i, self.block.val() == self.ids16[i].val());
            }
            self.eb_bbit.d.next = self.e_bbit.val();
            for j in 0..5 {
                self.g_rneed.next = self.g_rneed.val().replace_bit(j, self.rneed[j].q.val().get_bit(self.warp.val().index()));
                self.g_rheld.next = self.g_rheld.val().replace_bit(j, self.rheld[j].q.val().get_bit(self.warp.val().index()));
                self.g_bpeak.next = self.g_bpeak.val().replace_bit(j, self.bpeak[j].q.val().get_bit(self.block.val().index()));
            }
            for j in 0..6 {
                self.g_slot6.next = self.g_slot6.val().replace_bit(j, self.slot[j].q.val().get_bit(self.warp.val().index()));
            }
            self.e_slotv.d.next = self.slotv.q.val().get_bit(self.warp.val().index());
            self.e_big.d.next = self.nwarps_in.val() > self.n_slots.val();
            self.eb_give.d.next = self.bgive.q.val().get_bit(self.block.val().index());
            self.e_started.d.next = self.started.q.val().get_bit(self.warp.val().index());
            for j in 0..7 {
                self.g_sneed.next = self.g_sneed.val().replace_bit(j, self.sneed[j].q.val().get_bit(self.block.val().index()));
                self.g_sheld.next = self.g_sheld.val().replace_bit(j, self.sheld[j].q.val().get_bit(self.block.val().index()));
                self.g_nw.next = self.g_nw.val().replace_bit(j, self.nwarps[j].q.val().get_bit(self.block.val().index()));
                self.g_narr.next = self.g_narr.val().replace_bit(j, self.narr[j].q.val().get_bit(self.block.val().index()));
            }
            // (the warps of the block: those whose block-field slices match its bits)
            self.g_bmask.next = self.ones64.val();
            for j in 0..4 {
                if self.block.val().get_bit(j) {
                    self.g_bmask.next = self.g_bmask.val() & self.wblock[j].q.val();
                } else {
                    self.g_bmask.next = self.g_bmask.val() & !self.wblock[j].q.val();
                }
            }
            self.e_rheld.d.next = self.g_rheld.val();
            self.e_slot.d.next = self.g_slot6.val();
            self.eb_bpeak.d.next = self.g_bpeak.val();
            self.eb_sneed.d.next = self.g_sneed.val();
            self.eb_sheld.d.next = self.g_sheld.val();
            self.eb_nw.d.next = self.g_nw.val();
            self.eb_narr.d.next = self.g_narr.val();
            // (the block's barrier opens with one more arrival or one warp fewer, kept per
            // block, and whether any of its warps has arrived)
            self.e_open.d.next = self.bopen.q.val().get_bit(self.block.val().index());
            self.e_nany.d.next = self.g_narr.val().any();
            // (ceil(regs / 4) <= held: regs <= 4 held; ceil(smem / 1 KB) <= held: smem <= held
            // KB)
            for j in 0..7 {
                self.h_bytes.next = self.h_bytes.val().replace_bit(j + 10, self.g_sheld.val().get_bit(j));
            }
            self.e_hs.d.next = self.smem.val() <= self.h_bytes.val();
            self.e_hb.d.next = self.g_sneed.val() <= self.g_sheld.val();
            self.bmask.d.next = self.g_bmask.val();
            self.e_nw.d.next = self.nwarps_in.val();
            // (the block's arrivals once one more arrives)
            self.e_narr1.d.next = self.g_narr.val() + 1;
            self.e_gap.d.next = bit_cast::<GAP_BITS, NWARPS_BITS>(self.g_nw.val()) - bit_cast::<GAP_BITS, NWARPS_BITS>(self.g_narr.val());
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // The event applied, from those registers.
        // (the barrier's test: all the block's warps arrived once one more arrives, warps <=
        // arrivals + 1, read from `bopen` at the take)
        self.ev_open.next = self.e_open.q.val();
        // (the block's new `bopen`: warps <= arrivals + 1 once they move; after one more
        // arrival, or one warp fewer, without the barrier opening: the difference now at most
        // 2; after it opens (no arrivals left): at most one warp, or two before a warp end)
        self.gap_le2.next = self.e_gap.q.val().get_bit(7) | (!(self.e_gap.q.val() & self.gap_hi2.val()).any() & !(self.e_gap.q.val().get_bit(1) & self.e_gap.q.val().get_bit(0)));
        self.bop_w.next = false;
        self.bop_v.next = false;
        self.narr_new.next = self.e_narr1.q.val();
        self.nw_new.next = self.eb_nw.q.val() - 1;
        self.bar_open.next = false;
        self.rel_m.next = 0.into();
        self.ph_held.next = false;
        self.rel_go.next = false;
        self.slot_clr.next = 0.into();
        // (the first entry a freeing selects: the highest held, registered from the event's
        // fields; a freeing starts a cycle after them)
        // (entry h - 1 for h held: a decoder; h is at most 16 register sets, 64 scratchpad sets)
        self.rg_sel0.next = (self.one64.val() << self.e_rheld.q.val()) >> 1;
        self.sm_dec.next = (self.one65.val() << self.eb_sheld.q.val()) >> 1;
        self.sm_sel0.next = bit_cast::<SMEM_SETS, SMEM_DEC_BITS>(self.sm_dec.val());
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(1) {
            self.sx.next = self.h_w.val();
            self.bx.next = true;
            if self.e_slotv.q.val() {
                self.slot_clr.next = self.one64.val() << self.e_slot.q.val();
            }
            if self.e_kstart.q.val() {
                self.blocks.d.next = self.blocks.q.val() | self.eb_bbit.q.val();
                self.live.d.next = self.live.q.val() | self.e_warps.q.val();
                self.tq.d.next = self.tq.q.val() | self.e_warps.q.val();
                self.w_wb_m.next = self.e_warps.q.val();
                self.wr_wb.next = true;
                self.w_wb_v.next = self.fb.q.val();
                self.w_rn_m.next = self.e_warps.q.val();
                self.wr_rn.next = true;
                self.w_rn_v.next = self.e_rsets.q.val();
                self.w_rh_m.next = self.e_warps.q.val();
                self.wr_rh.next = true;
                self.w_sv_m.next = self.e_warps.q.val();
                self.wr_sv.next = true;
                self.w_wp_m.next = self.e_warps.q.val();
                self.wr_wp.next = true;
                self.w_wp_v.next = self.e_psets.q.val();
                self.w_sn_m.next = self.eb_bbit.q.val();
                self.wr_sn.next = true;
                self.w_sn_v.next = self.e_ssets.q.val();
                self.w_sh_m.next = self.eb_bbit.q.val();
                self.wr_sh.next = true;
                self.w_nw_m.next = self.eb_bbit.q.val();
                self.wr_nw.next = true;
                self.w_nw_v.next = self.e_nw.q.val();
                self.w_na_m.next = self.eb_bbit.q.val();
                self.wr_na.next = true;
                self.w_bp_m.next = self.eb_bbit.q.val();
                self.wr_bp.next = true;
                self.w_bp_v.next = self.e_psets.q.val();
                self.n_want.d.next = self.n_want.q.val() + self.e_nw.q.val();
                self.bop_w.next = true;
                self.bop_v.next = !(self.e_nw.q.val() & self.nw_hi1.val()).any();
                self.bgive.d.next = self.bgive.q.val() & !self.eb_bbit.q.val();
                if self.e_big.q.val() {
                    self.bgive.d.next = self.bgive.q.val() | self.eb_bbit.q.val();
                }
            }
            if self.e_kphase.q.val() {
                // (the warp leaves the schedulable set for the scratchpad queue in any case; if
                // it holds its needs, and its block the scratchpad, the release step takes it
                // back, with no scan unless sets are freed)
                self.ph_held.next = (self.e_rsets.q.val() <= self.e_rheld.q.val()) & self.e_hs.q.val() & self.e_hb.q.val();
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.sq.d.next = self.sq.q.val() | self.cur1h.q.val();
                if self.ph_held.val() {
                    self.rel_ph.d.next = true;
                    self.rel_go.next = true;
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                if self.e_ssets.q.val() > self.eb_sneed.q.val() {
                    self.w_sn_m.next = self.eb_bbit.q.val();
                    self.wr_sn.next = true;
                    self.w_sn_v.next = self.e_ssets.q.val();
                }
                self.w_rn_m.next = self.cur1h.q.val();
                self.wr_rn.next = true;
                self.w_rn_v.next = self.e_rsets.q.val();
                if self.e_rheld.q.val() > self.e_rsets.q.val() {
                    self.fr_k.d.next = bit_cast::<SSETS_BITS, RSETS_BITS>(self.e_rheld.q.val() - self.e_rsets.q.val());
                    self.fr_last.d.next = self.e_rheld.q.val() == self.e_rsets1.q.val();
                    self.fr_h.d.next = bit_cast::<SSETS_BITS, RSETS_BITS>(self.e_rheld.q.val());
                    self.fthen.d.next = false;
                    self.fsm.d.next = false;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
            }
            if self.e_kbar.q.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.tq.d.next = self.tq.q.val() | self.cur1h.q.val();
                self.bar.d.next = self.bar.q.val() | self.cur1h.q.val();
                // (only a block of more warps than slots gives them up)
                if self.eb_give.q.val() {
                    self.w_sv_m.next = self.cur1h.q.val();
                    self.wr_sv.next = true;
                    self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                    if self.e_slotv.q.val() {
                        self.n_used.d.next = self.n_used.q.val() - 1;
                    }
                }
                self.bar_open.next = self.ev_open.val();
                self.bop_w.next = true;
                self.bop_v.next = self.gap_le2.val();
                if self.bar_open.val() {
                    self.bop_v.next = !(self.eb_nw.q.val() & self.nw_hi1.val()).any();
                }
                self.w_na_m.next = self.eb_bbit.q.val();
                self.wr_na.next = true;
                // (no scan, unless a slot was given up or no warp is left schedulable: the
                // forward-progress rule)
                if !self.eb_give.q.val() & self.e_oth.q.val() {
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                self.rel_m.next = (self.bar.q.val() | self.cur1h.q.val()) & self.bmask.q.val();
                if !self.bar_open.val() {
                    self.w_na_v.next = self.narr_new.val();
                } else {
                    self.bar.d.next = (self.bar.q.val() | self.cur1h.q.val()) & !self.bmask.q.val();
                    if self.eb_give.q.val() {
                        self.n_want.d.next = self.n_want.q.val() + self.narr_new.val();
                    } else {
                        // (the block's warps released together, on what they kept, in the
                        // release step)
                        self.rel.d.next = self.rel_m.val();
                        self.rel_go.next = true;
                        self.sx.next = self.h_idle.val();
                        self.bx.next = false;
                    }
                }
            }
            if self.e_kwend.q.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.live.d.next = self.live.q.val() & !self.cur1h.q.val();
                self.w_sv_m.next = self.cur1h.q.val();
                self.wr_sv.next = true;
                self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                if self.e_slotv.q.val() {
                    self.n_used.d.next = self.n_used.q.val() - 1;
                }
                if self.e_started.q.val() {
                    self.started.d.next = self.started.q.val() & !self.cur1h.q.val();
                    self.reg_resv.d.next = self.reg_resv.q.val() - bit_cast::<LREG_COUNT_BITS, RSETS_BITS>(self.eb_bpeak.q.val());
                }
                self.w_nw_m.next = self.eb_bbit.q.val();
                self.wr_nw.next = true;
                self.w_nw_v.next = self.nw_new.val();
                self.bar_open.next = self.e_nany.q.val() & self.ev_open.val();
                self.bop_w.next = true;
                self.bop_v.next = self.gap_le2.val();
                if self.bar_open.val() {
                    self.bop_v.next = !(self.eb_nw.q.val() & self.nw_hi2.val()).any() & !(self.eb_nw.q.val().get_bit(1) & self.eb_nw.q.val().get_bit(0));
                    self.w_na_m.next = self.eb_bbit.q.val();
                    self.wr_na.next = true;
                    self.bar.d.next = self.bar.q.val() & !self.bmask.q.val();
                    if self.eb_give.q.val() {
                        self.n_want.d.next = self.n_want.q.val() + self.eb_narr.q.val();
                    } else {
                        self.rel_m.next = self.bar.q.val() & self.bmask.q.val();
                        self.rel.d.next = self.rel_m.val();
                        self.rel_go.next = true;
                    }
                }
                self.w_rn_m.next = self.cur1h.q.val();
                self.wr_rn.next = true;
                self.fthen.d.next = self.smem_at_warp_end.val() & self.eb_sheld.q.val().any();
                if self.e_rheld.q.val().any() {
                    self.fr_k.d.next = bit_cast::<SSETS_BITS, RSETS_BITS>(self.e_rheld.q.val());
                    self.fr_last.d.next = self.e_rheld.q.val() == self.rs_ids[1].val();
                    self.fr_h.d.next = bit_cast::<SSETS_BITS, RSETS_BITS>(self.e_rheld.q.val());
                    self.fsm.d.next = false;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                } else if self.smem_at_warp_end.val() & self.eb_sheld.q.val().any() {
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.fend.d.next = false;
                    self.fsm.d.next = true;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
            }
            if self.e_kbend.q.val() {
                if self.eb_sheld.q.val().any() {
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.fend.d.next = true;
                    self.fthen.d.next = false;
                    self.fsm.d.next = true;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                } else {
                    self.blocks.d.next = self.blocks.q.val() & !self.eb_bbit.q.val();
                }
            }
            if self.e_kepoch.q.val() {
                self.th_up.next = self.eff_o.val() + self.o_step.val();
                if self.th_up.val() > self.o_max.val() {
                    self.th_up.next = self.o_max.val();
                }
                if self.e_up.q.val() {
                    self.th_new.next = self.th_up.val();
                } else if self.e_down.q.val() {
                    self.th_new.next = 0.into();
                    if self.eff_o.val() > self.o_step.val() {
                        self.th_new.next = self.eff_o.val() - self.o_step.val();
                    }
                }
                self.th_q.d.next = self.th_new.val();
                self.th_set.d.next = true;
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
            // (an event that releases warps goes through the release step first, keeping the
            // step it chose: kept in any case, used only then)
            self.rthen.d.next = self.sx.val();
            self.rbusy.d.next = self.bx.val();
            if self.rel_go.val() {
                self.sx.next = self.h_rel.val();
                self.bx.next = true;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        if self.bop_w.val() {
            self.bopen.d.next = self.bopen.q.val() & !self.eb_bbit.q.val();
            if self.bop_v.val() {
                self.bopen.d.next = self.bopen.q.val() | self.eb_bbit.q.val();
            }
        }

        // The release step: the warps released become schedulable (and leave the
        // thread/barrier or scratchpad queue); then the step the event chose.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(15) {
            self.sched.d.next = self.sched.q.val() | self.rel_q.val();
            self.tq.d.next = self.tq.q.val() & !self.rel_q.val();
            self.sq.d.next = self.sq.q.val() & !self.rel_q.val();
            self.sx.next = self.rthen.q.val();
            self.bx.next = self.rbusy.q.val();
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
    }
}
