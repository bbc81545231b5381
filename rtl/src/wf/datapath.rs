//! `Wf`'s logic that runs in every phase: the phase decoded, the outputs, the shared multiplier
//! and divider, the tables' ports, the count-times-request products, the fit check, Select's
//! comparator, the fallback's comparison, the decision delay. The parts run in the order
//! `super`'s `flat_block!` lists them.

use super::{Wf, ACC_BITS, F_HI_BITS, INST_HI_BITS, PROD_BITS};
use mpgpu_spec::units::wf::{A_BITS, F_BITS, J_BITS, KCOUNT_BITS, K_BITS, MUL_BITS, NEED_BITS, PCT_BITS, RES_BITS, SCORE_BITS, STEP_BITS, TABLE_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// The outputs and the datapath every phase shares.
pub struct Datapath;

impl LogicPart<Datapath> for Wf {
    #[hdl_gen]
    fn update(&mut self) {
        self.done.d.next = false;

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
        self.k_last.next = bit_cast::<KCOUNT_BITS, K_BITS>(self.k.q.val()) == self.kernels_m1.val();
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
        self.prof.next = (self.sm_j.val() != self.c0_5.val()) & (self.sm_j.val() <= self.c16_5.val()) & (bit_cast::<KCOUNT_BITS, K_BITS>(self.sm_k.val()) < self.kern.q.val());

        // The one multiplier (16 x 16): its operands are registers (`ma`, `mb`), set a cycle
        // before the product is used.
        self.i0.next = self.sm_insts.val().get_bits::<MUL_BITS>(0);
        self.i1.next = bit_cast::<MUL_BITS, INST_HI_BITS>(self.sm_insts.val().get_bits::<INST_HI_BITS>(16));
        self.f0.next = self.f.q.val().get_bits::<MUL_BITS>(0);
        self.f1.next = bit_cast::<MUL_BITS, F_HI_BITS>(self.f.q.val().get_bits::<F_HI_BITS>(16));
        self.prod.next = self.ma.q.val() * self.mb.q.val();
        self.pr.d.next = self.prod.val();
        self.prod44.next = bit_cast::<ACC_BITS, PROD_BITS>(self.pr.q.val());

        // Collect's arithmetic: d = n j - A, F = max(0, W A + s d), the score.
        self.nj.next = self.pr.q.val().get_bits::<A_BITS>(0);
        self.nj_lt.next = self.nj.val() < self.a.q.val();
        self.dm.next = self.nj.val() - self.a.q.val();
        if self.nj_lt.val() {
            self.dm.next = self.a.q.val() - self.nj.val();
        }
        self.p25.next = self.pr.q.val().get_bits::<F_BITS>(0);
        self.fv.next = self.wa.q.val() + self.p25.val();
        if self.dneg.q.val() {
            self.fv.next = 0.into();
            if self.wa.q.val() >= self.p25.val() {
                self.fv.next = self.wa.q.val() - self.p25.val();
            }
        }
        self.sc.next = self.acc.q.val().get_bits::<SCORE_BITS>(0) + (bit_cast::<SCORE_BITS, PROD_BITS>(self.pr.q.val()) << 32);

        // The division step: one quotient bit.
        self.top44.next = bit_cast::<ACC_BITS, SCORE_BITS>(self.top.q.val());
        self.acc43.next = self.acc.q.val().get_bits::<SCORE_BITS>(0);
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
        self.at_kj.next = (bit_cast::<TABLE_BITS, K_BITS>(self.k.q.val()) << 4) | bit_cast::<TABLE_BITS, STEP_BITS>(self.j.q.val());
        self.at_klen.next = (bit_cast::<TABLE_BITS, K_BITS>(self.k.q.val()) << 4) | bit_cast::<TABLE_BITS, STEP_BITS>(self.len_k.val().get_bits::<STEP_BITS>(0));
        self.jlast.d.next = (bit_cast::<J_BITS, STEP_BITS>(self.j.q.val()) + self.c1_5.val()) == self.len_k.val();
        self.jm1.next = self.sm_j.val().get_bits::<STEP_BITS>(0) - self.c1_4.val();
        self.at_sm.next = (bit_cast::<TABLE_BITS, K_BITS>(self.sm_k.val()) << 4) | bit_cast::<TABLE_BITS, STEP_BITS>(self.jm1.val());
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
        self.m_ram.write_data.next = bit_cast::<J_BITS, STEP_BITS>(self.j.q.val()) + self.c1_5.val();
        self.qn_ram.write_enable.next = false;
        self.qn_ram.write_address.next = self.at_kj.val();
        self.qn_ram.write_data.next = self.qd.val();
        // The step tables' read port: kernel `k`'s first step (Init), the selected kernel's
        // next step (Read).
        self.m_ram.read_address.next = bit_cast::<TABLE_BITS, K_BITS>(self.k.q.val()) << 4;
        self.qn_ram.read_address.next = bit_cast::<TABLE_BITS, K_BITS>(self.k.q.val()) << 4;
        if self.is_read.val() {
            self.m_ram.read_address.next = (bit_cast::<TABLE_BITS, K_BITS>(self.sel.q.val()) << 4) | bit_cast::<TABLE_BITS, STEP_BITS>(self.gn.q.val().get_bits::<STEP_BITS>(0));
            self.qn_ram.read_address.next = (bit_cast::<TABLE_BITS, K_BITS>(self.sel.q.val()) << 4) | bit_cast::<TABLE_BITS, STEP_BITS>(self.gn.q.val().get_bits::<STEP_BITS>(0));
        }

        // A count times each request component (Init: the first step's count; Mul: dT).
        self.t0.next = self.c1_5.val();
        if self.len_k.val() != self.c0_5.val() {
            self.t0.next = self.m_ram.read_data.val();
        }
        self.dt.next = self.m_next.q.val() - self.t_s.val();
        // (the low 16 bits of each request through a 16 x 16 multiplier, its top bit added; the
        // count a register)
        self.cnt16.next = bit_cast::<MUL_BITS, J_BITS>(self.cnt.q.val());
        self.cnt22.next = bit_cast::<NEED_BITS, J_BITS>(self.cnt.q.val()) << 16;
        self.req_lo[0].next = self.k_req0.val().get_bits::<MUL_BITS>(0);
        self.req_lo[1].next = self.k_req1.val().get_bits::<MUL_BITS>(0);
        self.req_lo[2].next = self.k_req2.val().get_bits::<MUL_BITS>(0);
        self.req_lo[3].next = self.k_req3.val().get_bits::<MUL_BITS>(0);
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
            self.prod_r[c].d.next = self.rp[c].val();
            self.ph_r[c].d.next = 0.into();
            if self.req_hi[c].val() {
                self.ph_r[c].d.next = self.cnt22.val();
            }
            self.prod_c[c].next = self.prod_r[c].q.val() + self.ph_r[c].q.val();
        }

        // The fit check: R_L (or, at Init of kernel 0, the SM's total) against need.
        self.rl22[0].next = bit_cast::<NEED_BITS, RES_BITS>(self.rl[0].q.val());
        self.rl22[1].next = bit_cast::<NEED_BITS, RES_BITS>(self.rl[1].q.val());
        self.rl22[2].next = bit_cast::<NEED_BITS, RES_BITS>(self.rl[2].q.val());
        self.rl22[3].next = bit_cast::<NEED_BITS, RES_BITS>(self.rl[3].q.val());
        self.need17[0].next = self.need[0].q.val().get_bits::<RES_BITS>(0);
        self.need17[1].next = self.need[1].q.val().get_bits::<RES_BITS>(0);
        self.need17[2].next = self.need[2].q.val().get_bits::<RES_BITS>(0);
        self.need17[3].next = self.need[3].q.val().get_bits::<RES_BITS>(0);
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
        self.cand_k.next = (bit_cast::<KCOUNT_BITS, K_BITS>(self.k.q.val()) < self.kern.q.val()) & !self.full.q.val().get_bit(self.k.q.val().index());
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
            self.hv.next = bit_cast::<ACC_BITS, MUL_BITS>(self.hk.val()) << 16;
        }
        self.thr.next = bit_cast::<ACC_BITS, PCT_BITS>(self.pct.q.val()) << 16;

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
    }
}
