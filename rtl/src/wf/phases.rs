//! `Wf`'s logic per phase of its FSM (`phase`): what each phase does with the datapath's
//! results, and the phase it goes to (`docs/warped-slicer.md`).

use super::{Wf, ACC_BITS};
use mpgpu_spec::units::wf::{A_BITS, J_BITS, MUL_BITS, N_BITS, SCORE_BITS, STEP_BITS};
use crate::flat::LogicPart;
use rust_hdl::prelude::*;

/// Each phase's registers and its next phase.
pub struct Phases;

impl LogicPart<Phases> for Wf {
    #[hdl_gen]
    fn update(&mut self) {
        // Idle, RoundWait: `start` samples the configuration and opens a window.
        if (self.is_idle.val() | self.is_round_wait.val()) & self.start.val() {
            if self.is_idle.val() {
                self.valid.d.next = 0.into();
                self.full.d.next = 0.into();
                self.over.d.next = false;
                for i in 0..4 {
                    self.len[i].d.next = 0.into();
                    self.t[i].d.next = 0.into();
                    self.g[i].d.next = 0.into();
                    self.cur_q[i].d.next = 0.into();
                }
            }
            self.kern.d.next = self.kernels_in.val();
            self.last_r.d.next = self.last.val();
            self.window_r.d.next = self.window.val();
            if self.window.val() == self.c0_16.val() {
                self.window_r.d.next = self.c1_16.val();
            }
            self.pct.d.next = self.fallback_pct.val();
            // (delay - 2, saturating: the cycles `since` must reach)
            self.delay_r.d.next = 0.into();
            if self.delay.val() >= self.c2_16.val() {
                self.delay_r.d.next = self.delay.val() - self.c2_16.val();
            }
            self.total[0].d.next = self.total0.val();
            self.total[1].d.next = self.total1.val();
            self.total[2].d.next = self.total2.val();
            self.total[3].d.next = self.total3.val();
            self.phase.d.next = self.c_window.val();
            self.wcount.d.next = 0.into();
        }
        // Window.
        if self.is_window.val() {
            if self.win_end.val() {
                self.phase.d.next = self.c_sum.val();
                self.sm.d.next = 0.into();
                self.n.d.next = 0.into();
                self.a.d.next = 0.into();
            } else {
                self.wcount.d.next = self.wcount.q.val() + self.c1_16.val();
            }
        }

        // Sum.
        if self.is_sum.val() {
            if self.prof.val() {
                self.n.d.next = self.n.q.val() + self.c1_5.val();
                self.a.d.next = self.a.q.val() + bit_cast::<A_BITS, J_BITS>(self.sm_j.val());
            }
            if self.sm.q.val() == self.last_sm.val() {
                self.phase.d.next = self.c_scale.val();
                self.sub.d.next = 0.into();
            } else {
                self.sm.d.next = self.sm.q.val() + self.c1_4.val();
            }
        }

        // Scale: the operands, the product, then W A.
        if self.is_scale.val() {
            self.sub.d.next = self.sub.q.val() + self.c1_5.val();
            if self.sub.q.val() == self.c0_5.val() {
                self.ma.d.next = self.window_r.q.val();
                self.mb.d.next = bit_cast::<MUL_BITS, A_BITS>(self.a.q.val());
            }
            if self.sub.q.val() == self.c2_5.val() {
                self.wa.d.next = self.p25.val();
                self.phase.d.next = self.c_collect.val();
                self.sm.d.next = 0.into();
                self.sub.d.next = 0.into();
            }
        }

        // Collect.
        self.advance.next = false;
        if self.is_collect.val() {
            self.advance.next = !self.prof.val();
            if self.prof.val() {
                self.sub.d.next = self.sub.q.val() + self.c1_5.val();
                if self.sub.q.val() == self.c0_5.val() {
                    self.ma.d.next = bit_cast::<MUL_BITS, N_BITS>(self.n.q.val());
                    self.mb.d.next = bit_cast::<MUL_BITS, J_BITS>(self.sm_j.val());
                }
                if self.sub.q.val() == self.c2_5.val() {
                    self.dneg.d.next = self.nj_lt.val();
                    self.dmag.d.next = self.dm.val();
                }
                if self.sub.q.val() == self.c3_5.val() {
                    self.ma.d.next = self.sm_stalls.val();
                    self.mb.d.next = bit_cast::<MUL_BITS, A_BITS>(self.dmag.q.val());
                }
                if self.sub.q.val() == self.c5_5.val() {
                    self.f.d.next = self.fv.val();
                }
                if self.sub.q.val() == self.c6_5.val() {
                    self.ma.d.next = self.i0.val();
                    self.mb.d.next = self.f0.val();
                }
                if self.sub.q.val() == self.c7_5.val() {
                    self.ma.d.next = self.i0.val();
                    self.mb.d.next = self.f1.val();
                }
                if self.sub.q.val() == self.c8_5.val() {
                    self.acc.d.next = self.prod44.val();
                    self.ma.d.next = self.i1.val();
                    self.mb.d.next = self.f0.val();
                }
                if self.sub.q.val() == self.c9_5.val() {
                    self.acc.d.next = self.acc.q.val() + (self.prod44.val() << 16);
                    self.ma.d.next = self.i1.val();
                    self.mb.d.next = self.f1.val();
                }
                if self.sub.q.val() == self.c10_5.val() {
                    self.acc.d.next = self.acc.q.val() + (self.prod44.val() << 16);
                }
                if self.sub.q.val() == self.c11_5.val() {
                    self.score_ram.write_enable.next = true;
                    self.valid.d.next = self.valid.q.val() | (self.one64.val() << self.at_sm.val());
                    self.advance.next = true;
                }
            }
            if self.advance.val() {
                self.sub.d.next = 0.into();
                if self.sm.q.val() == self.last_sm.val() {
                    if self.last_r.q.val() {
                        self.phase.d.next = self.c_build.val();
                        self.k.d.next = 0.into();
                        self.j.d.next = 0.into();
                        self.top.d.next = 0.into();
                    } else {
                        self.phase.d.next = self.c_round_wait.val();
                    }
                } else {
                    self.sm.d.next = self.sm.q.val() + self.c1_4.val();
                }
            }
        }

        // Build: kernel k's staircase; then its normalisation (Norm); then the next kernel.
        self.next_kernel.next = false;
        if self.is_build.val() {
            if self.sub.q.val() == self.c0_5.val() {
                // (the score read, a valid score or 0)
                self.acc.d.next = bit_cast::<ACC_BITS, SCORE_BITS>(self.rv.val());
                self.sub.d.next = self.c1_5.val();
            } else {
                if self.acc.q.val() > self.top44.val() {
                    self.top.d.next = self.acc43.val();
                    self.score_ram.write_enable.next = true;
                    self.score_ram.write_address.next = self.at_klen.val();
                    self.score_ram.write_data.next = self.acc43.val();
                    self.m_ram.write_enable.next = true;
                    for i in 0..4 {
                        if self.k.q.val() == self.ids[i].val() {
                            self.len[i].d.next = self.len[i].q.val() + self.c1_5.val();
                        }
                    }
                }
                self.sub.d.next = 0.into();
                if self.j.q.val() == self.c15_4.val() {
                    // (Norm next: `top` is the peak, the staircase's last step)
                    self.j.d.next = 0.into();
                    self.phase.d.next = self.c_norm.val();
                    self.sub.d.next = self.c1_5.val();
                } else {
                    self.j.d.next = self.j.q.val() + self.c1_4.val();
                }
            }
        }

        // Norm: per step, a load and 17 division steps.
        if self.is_norm.val() {
            if self.len_k.val() == self.c0_5.val() {
                // (no staircase: the kernel never scored)
                self.next_kernel.next = true;
            } else if self.sub.q.val() == self.c1_5.val() {
                self.acc.d.next = bit_cast::<ACC_BITS, SCORE_BITS>(self.score_ram.read_data.val());
                self.quo.d.next = 0.into();
                self.sub.d.next = self.c2_5.val();
            } else {
                self.quo.d.next = self.qd.val();
                self.acc.d.next = self.rem.val() << 1;
                if self.sub.q.val() == self.c18_5.val() {
                    self.qn_ram.write_enable.next = true;
                    if self.jlast.q.val() {
                        self.next_kernel.next = true;
                    } else {
                        self.j.d.next = self.j.q.val() + self.c1_4.val();
                        self.sub.d.next = self.c1_5.val();
                    }
                } else {
                    self.sub.d.next = self.sub.q.val() + self.c1_5.val();
                }
            }
        }
        if self.next_kernel.val() {
            self.top.d.next = 0.into();
            self.j.d.next = 0.into();
            self.sub.d.next = 0.into();
            if self.k_last.val() {
                self.phase.d.next = self.c_init.val();
                self.k.d.next = 0.into();
            } else {
                self.k.d.next = self.k.q.val() + self.c1_2.val();
                self.phase.d.next = self.c_build.val();
            }
        }

        // Init: four cycles per kernel.
        if self.is_init.val() {
            if self.sub.q.val() == self.c0_5.val() {
                for i in 0..4 {
                    if self.k.q.val() == self.ids[i].val() {
                        self.t[i].d.next = self.t0.val();
                        self.g[i].d.next = 0.into();
                        self.cur_q[i].d.next = 0.into();
                        if self.len_k.val() != self.c0_5.val() {
                            self.cur_q[i].d.next = self.qn_ram.read_data.val();
                        }
                    }
                }
                self.cnt.d.next = self.t0.val();
                if self.k.q.val() == self.ids[0].val() {
                    // (R_L starts from the SM's resources)
                    for c in 0..4 {
                        self.rl[c].d.next = self.total[c].q.val();
                    }
                }
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                // (the product registers)
                self.sub.d.next = self.c2_5.val();
            } else if self.sub.q.val() == self.c2_5.val() {
                for c in 0..4 {
                    self.need[c].d.next = self.prod_c[c].val();
                }
                self.sub.d.next = self.c3_5.val();
            } else if self.sub.q.val() == self.c3_5.val() {
                // (the fit check registers)
                self.sub.d.next = self.c4_5.val();
            } else {
                if self.fit_r.q.val() {
                    for c in 0..4 {
                        self.rl[c].d.next = self.left[c].val();
                    }
                }
                self.over.d.next = self.over.q.val() | !self.fit_r.q.val();
                self.sub.d.next = 0.into();
                if self.k_last.val() {
                    self.phase.d.next = self.c_select.val();
                    if self.over.q.val() | !self.fit_r.q.val() {
                        self.phase.d.next = self.c_final.val();
                    }
                    self.res_spatial.d.next = self.over.q.val() | !self.fit_r.q.val();
                    self.k.d.next = 0.into();
                } else {
                    self.k.d.next = self.k.q.val() + self.c1_2.val();
                }
            }
        }

        // Select: one kernel per cycle.
        if self.is_select.val() {
            if self.better.val() {
                self.sel.d.next = self.k.q.val();
                self.gn.d.next = bit_cast::<J_BITS, STEP_BITS>(self.g_k.val()) + self.c1_5.val();
                self.bq.d.next = self.q_k.val();
            }
            self.found.d.next = self.better.val() | self.found_k.val();
            if self.k_last.val() {
                self.k.d.next = 0.into();
                if self.better.val() | self.found_k.val() {
                    self.phase.d.next = self.c_read.val();
                } else {
                    self.phase.d.next = self.c_final.val();
                    self.sub.d.next = 0.into();
                    self.res_spatial.d.next = self.over.q.val();
                }
            } else {
                self.k.d.next = self.k.q.val() + self.c1_2.val();
            }
        }

        // Read.
        if self.is_read.val() {
            if self.gn.q.val() >= self.len_s.val() {
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.full.d.next = self.full.q.val().replace_bit(i, true);
                    }
                }
                self.phase.d.next = self.c_select.val();
                self.k.d.next = 0.into();
            } else {
                self.m_next.d.next = self.m_ram.read_data.val();
                self.q_next.d.next = self.qn_ram.read_data.val();
                self.phase.d.next = self.c_mul.val();
                self.sub.d.next = 0.into();
            }
        }

        // Mul: dT, then dT x R.
        if self.is_mul.val() {
            if self.sub.q.val() == self.c0_5.val() {
                self.cnt.d.next = self.dt.val();
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                // (the product registers)
                self.sub.d.next = self.c2_5.val();
            } else {
                for c in 0..4 {
                    self.need[c].d.next = self.prod_c[c].val();
                }
                self.sub.d.next = 0.into();
                self.phase.d.next = self.c_fit.val();
            }
        }

        // Fit: the check registers, then it acts.
        if self.is_fit.val() & (self.sub.q.val() == self.c0_5.val()) {
            self.sub.d.next = self.c1_5.val();
        }
        if self.is_fit.val() & (self.sub.q.val() != self.c0_5.val()) {
            self.sub.d.next = 0.into();
            if self.fit_r.q.val() {
                for c in 0..4 {
                    self.rl[c].d.next = self.left[c].val();
                }
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.g[i].d.next = self.g[i].q.val() + self.c1_4.val();
                        self.t[i].d.next = self.m_next.q.val();
                        self.cur_q[i].d.next = self.q_next.q.val();
                    }
                }
            } else {
                for i in 0..4 {
                    if self.sel.q.val() == self.ids[i].val() {
                        self.full.d.next = self.full.q.val().replace_bit(i, true);
                    }
                }
            }
            self.phase.d.next = self.c_select.val();
            self.k.d.next = 0.into();
        }

        // Final: three cycles per kernel.
        if self.is_final.val() {
            if self.sub.q.val() == self.c0_5.val() {
                self.ma.d.next = self.q_k.val().get_bits::<MUL_BITS>(0);
                self.mb.d.next = self.hk.val();
                self.qhi.d.next = self.q_k.val().get_bit(16);
                self.sub.d.next = self.c1_5.val();
            } else if self.sub.q.val() == self.c1_5.val() {
                self.sub.d.next = self.c2_5.val();
            } else {
                if self.hv.val() < self.thr.val() {
                    self.res_spatial.d.next = true;
                }
                self.sub.d.next = 0.into();
                if self.k_last.val() {
                    self.phase.d.next = self.c_wait.val();
                    self.k.d.next = 0.into();
                } else {
                    self.k.d.next = self.k.q.val() + self.c1_2.val();
                }
            }
        }

        // Wait: publish.
        if self.is_wait.val() & self.go.val() {
            for i in 0..4 {
                self.quota[i].d.next = 0.into();
                if self.ids3[i].val() < self.kern.q.val() {
                    self.quota[i].d.next = self.t[i].q.val();
                }
            }
            self.spatial.d.next = self.res_spatial.q.val();
            self.done.d.next = true;
            self.phase.d.next = self.c_idle.val();
        }
    }
}
