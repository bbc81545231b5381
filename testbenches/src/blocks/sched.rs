//! The whole kernel scheduling framework (`Sched`): its ports and its unit interface
//! (`mpgpu_spec::units::sched::fw`).

use crate::hdl_block;
use crate::host::Outcome;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::policy_runs;
use crate::entry::{framework_fits, Build, GpuKind, Host};
use mpgpu_ref::timing::gpu::Gpu;
use mpgpu_ref::units::framework::Framework;
use crate::serial::{wrapper, Wrapper};
use mpgpu_rtl::board::BoardConfig;
use mpgpu_rtl::BoardSched;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Sched, SchedFaults};
use mpgpu_spec::units::sched::{fw, PolicyCode};

hdl_block!(Sched {
    inputs: [cmd_valid, cmd_handle, cmd_tbs, cmd_tk, cmd_priority, cmd_tokens, done_valid, done_sm, done_k, saved_valid, saved_sm, saved_k, saved_tb, saved_slot, full,
        quota_valid, quota_handle, quota_on, quota0, quota1, quota2, quota3, quota4, quota5, quota6, quota7, quota8, quota9, quota10, quota11, quota12, quota13, quota14, quota15],
    outputs: [busy, cmd_taken, issue_valid, issue_sm, issue_k, issue_handle, issue_tb, issue_restore, issue_slot, preempt_valid, preempt_sm, retired_valid, retired_handle],
    registers: [ksrt.admitted, issue.pointer, issue.last_grant, ksrt.cq_valid, ksrt.cq_handle, ksrt.cq_tbs, trig_q, dec_act, dec_sm, dec_k, dec_from, app_asg, app_rsv, app_sm, app_k, app_from, gr_valid, gr_sm, gr_k, smst.evq_valid, smst.evq_sm, smst.evq_setup, smst.evq_hand, smst.evq_hok, smst.evq_next, share.qon, ksrt.free_none, ksrt.free_k, smst.rdy_q, smst.lt2_q, smst.evc_q, smst.evw_q, smst.named_q, ksrt.wants_q, sv_valid, sv_k, sv_tb, sv_slot, dn_valid, dn_k],
    arrays: [
        smst.sm_state, smst.sm_ksr_valid, smst.sm_ksr, smst.sm_next_valid, smst.sm_next, smst.sm_running, smst.sm_tk,
        ksrt.k_valid, ksrt.k_handle, ksrt.k_tbs_m2, ksrt.k_next_tb, ksrt.k_done, ksrt.k_tk, ksrt.k_priority, ksrt.k_age, ksrt.k_count,
        ksrt.k_cap, ksrt.k_rem,
        ptbq.q_len,
        share.res, share.qv, share.elq,
    ],
});

/// The whole scheduling framework (`Sched`) for `sms` SMs, its policy and test-only faults;
/// `sharing`: with slicing inside it (`Sched::build`).
#[derive(Clone, Copy, Debug)]
pub struct SchedPorts {
    pub sms: usize,
    pub mode: PolicyCode,
    pub faults: SchedFaults,
    pub sharing: bool,
}

impl Ports for SchedPorts {
    type In = fw::In;
    type Out = fw::Out;
    type State = fw::State;
    type Block = Sched;
    fn name(&self) -> String {
        "sched".into()
    }
    fn block(&self) -> Sched {
        let mut b = Sched::build(self.sms, self.mode, self.faults, self.sharing);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> fw::State {
        let a = |n: &str| r.array(n);
        let (st, kv, kr, nv, nx, run) =
            (a("smst.sm_state"), a("smst.sm_ksr_valid"), a("smst.sm_ksr"), a("smst.sm_next_valid"), a("smst.sm_next"), a("smst.sm_running"));
        let smst = (0..self.sms)
            .map(|s| fw::SmState { state: st[s] as u8, ksr_valid: kv[s] != 0, ksr: kr[s] as u8, next_valid: nv[s] != 0, next: nx[s] as u8, running_tbs: run[s] as u8 })
            .collect();
        let (valid, handle, tbs, next_tb, done, tk) = (a("ksrt.k_valid"), a("ksrt.k_handle"), a("ksrt.k_tbs_m2"), a("ksrt.k_next_tb"), a("ksrt.k_done"), a("ksrt.k_tk"));
        let (prio, age, count, qlen) = (a("ksrt.k_priority"), a("ksrt.k_age"), a("ksrt.k_count"), a("ptbq.q_len"));
        let (cap, rem) = (a("ksrt.k_cap"), a("ksrt.k_rem"));
        let ksrt = (0..self.sms)
            .map(|k| {
                if valid[k] == 0 {
                    return fw::KsrState::default();
                }
                fw::KsrState {
                    valid: true,
                    handle: handle[k] as u16,
                    tbs: (tbs[k] as u32).wrapping_add(2) & ((1 << fw::TB_BITS) - 1),
                    next_tb: next_tb[k] as u32,
                    done_tbs: done[k] as u32,
                    tk: tk[k] as u8,
                    priority: prio[k] as u8,
                    age: age[k] as u16,
                    count: count[k] as u8 as i8,
                    ptbq_len: qlen[k] as u16,
                    cap: cap[k] as u16,
                    rem: rem[k] as u32,
                }
            })
            .collect();
        let app_act = if r.scalar("app_asg") != 0 { 1 } else if r.scalar("app_rsv") != 0 { 2 } else { 0 };
        let app = |name: &str| if app_act != 0 { r.scalar(name) as u8 } else { 0 };
        let pipe = fw::Pipe {
            trigger: r.scalar("trig_q") != 0,
            dec_act: r.scalar("dec_act") as u8,
            dec_sm: r.scalar("dec_sm") as u8,
            dec_kernel: r.scalar("dec_k") as u8,
            dec_from: r.scalar("dec_from") as u8,
            app_act,
            // (the RTL copies these every cycle; they mean something only with an act)
            app_sm: app("app_sm"),
            app_kernel: app("app_k"),
            app_from: app("app_from"),
            grant_valid: r.scalar("gr_valid") != 0,
            // (copied every cycle, like `app_*`: they mean something only with `gr_valid`)
            grant_sm: if r.scalar("gr_valid") != 0 { r.scalar("gr_sm") as u8 } else { 0 },
            grant_kernel: if r.scalar("gr_valid") != 0 { r.scalar("gr_k") as u8 } else { 0 },
            pick_valid: r.scalar("issue.last_grant") != 0,
            pick_sm: (r.scalar("issue.last_grant") as u16).trailing_zeros() as u8 & 15,
            // (under sharing, the registered eligible kernels of the SM picked)
            pick_el: match (self.sharing, r.scalar("issue.last_grant") as u16) {
                (true, g) if g != 0 => a("share.elq")[g.trailing_zeros() as usize] as u16,
                _ => 0,
            },
            cmd_valid: r.scalar("ksrt.cq_valid") != 0,
            // (copied every cycle: they mean something only with `cq_valid`)
            cmd_handle: if r.scalar("ksrt.cq_valid") != 0 { r.scalar("ksrt.cq_handle") as u16 } else { 0 },
            cmd_tbs: if r.scalar("ksrt.cq_valid") != 0 { r.scalar("ksrt.cq_tbs") as u32 } else { 0 },
            ev_valid: r.scalar("smst.evq_valid") != 0,
            // (the SM, kernels and flags mean something only with an event)
            ev_sm: if r.scalar("smst.evq_valid") != 0 { r.scalar("smst.evq_sm") as u8 } else { 0 },
            ev_setup: r.scalar("smst.evq_valid") != 0 && r.scalar("smst.evq_setup") != 0,
            ev_hand: r.scalar("smst.evq_valid") != 0 && r.scalar("smst.evq_hand") != 0,
            ev_heir: (r.scalar("smst.evq_valid") != 0 && r.scalar("smst.evq_hand") != 0 && r.scalar("smst.evq_hok") != 0).then(|| r.scalar("smst.evq_next") as u8),
            free_valid: r.scalar("ksrt.free_none") == 0,
            free: r.scalar("ksrt.free_k") as u8,
            ready: r.scalar("smst.rdy_q") as u16,
            last: r.scalar("smst.lt2_q") as u16,
            ev_ready: r.scalar("smst.evc_q") as u16,
            ev_work: r.scalar("smst.evw_q") as u16,
            named: r.scalar("smst.named_q") as u16,
            wants: r.scalar("ksrt.wants_q") as u16,
            saved_valid: r.scalar("sv_valid") != 0,
            saved_kernel: r.scalar("sv_k") as u8,
            saved_tb: r.scalar("sv_tb") as u32,
            saved_slot: r.scalar("sv_slot") as u8,
            done_valid: r.scalar("dn_valid") != 0,
            done_kernel: r.scalar("dn_k") as u8,
        };
        // (under sharing: the resident counts and the quotas, cells as `Share` lays them out)
        let n = self.sms;
        let (res, qv, qon) = (a("share.res"), a("share.qv"), r.scalar("share.qon"));
        let (rc, qc) = (mpgpu_rtl::share::res_cell, mpgpu_rtl::share::quota_cell);
        let resident = if self.sharing { (0..n).map(|s| (0..n).map(|k| res[rc(s, k)] as u8).collect()).collect() } else { Vec::new() };
        let quotas = if self.sharing { (0..n).map(|k| (qon >> k & 1 != 0).then(|| (0..n).map(|s| qv[qc(k, s)] as u8).collect())).collect() } else { Vec::new() };
        fw::State { smst, ksrt, admitted: r.scalar("ksrt.admitted") as u16, issue_ptr: r.scalar("issue.pointer") as u8, pipe, resident, quotas }
    }
    fn board(&self, config: BoardConfig) -> Option<Box<dyn Wrapper>> {
        let s = *self;
        Some(wrapper(config, move || BoardSched::new(Sched::build(s.sms, s.mode, s.faults, s.sharing), config)))
    }
}

pub(super) const BLOCK: Block = Block {
    name: "sched",
    about: "the whole kernel scheduling framework: SMST, KSRT, PTBQs, SM driver, policy engines",
    scope: Scope::Gpu,
    // (both policy engines; the DSS engine drives it, the priority engine's mode a constant
    // keeping all of its paths)
    verilog: |s| Ok(v(SchedPorts { sms: s.sms, mode: PolicyCode::Dss, faults: Default::default(), sharing: s.sharing })),
    broken: &[
        variant("lifo", "the PTBQ popped last in first out", |b| b.edit("sched", |f: &mut SchedFaults| f.ptbq_lifo = true)),
        variant("keep-token", "a released SM's token is not returned to its kernel", |b| b.edit("sched", |f: &mut SchedFaults| f.keep_token = true)),
    ],
    host: Some(Host {
        about: "the whole scheduling framework in RTL (tables, PTBQs, SM driver, policy engine); outputs and tables compared every clocked cycle",
        gpu: GpuKind::Framework,
        default_config: "k20c",
        setup: |_| {},
        fits: framework_fits,
        install,
        soak: |_, cfg, _| policy_runs(cfg, |_| true),
        lockstep_only: false,
        clock_gated: true,
        testbench: crate::entry::TbRun { policy: mpgpu_ref::units::framework::Policy::Dss, sharing: Some(crate::entry::TB_PAIR), ..crate::entry::TbRun::of(crate::entry::TB_PRIORITY) },
    }),
};

/// The framework's RTL in the GPU's framework slot (its clock gated while it is idle unless
/// `--every-cycle`).
fn install(b: &mut Build) -> Result<Option<Box<dyn Outcome>>, String> {
    let (p, m) = (b.o.policy, b.o.mechanism);
    // (under a quota controller, slicing or steering inside the framework, both share their
    // SMs)
    let ports = SchedPorts { sms: b.n, mode: p.code(), faults: b.o.broken.of("sched"), sharing: b.o.quota_controlled() };
    let model = Framework::new(Gpu::framework_params(b.cfg)?, p, m);
    let model = if b.o.quota_controlled() { model.with_sharing() } else { model };
    let out = b.global(ports, model, Framework::state, Some(|o: &fw::Out| o.busy))?;
    b.gpu.set_framework_clock_gating(!b.o.every_cycle);
    Ok(Some(out))
}
