//! The port mapping of every RTL block, written once each: the rust-hdl block's port and
//! register lists ([`hdl_block!`](crate::hdl_block)) and the unit interface onto those ports
//! ([`Ports`]). Every backend, lockstep, RTL in the loop, waveforms and traces use these and
//! nothing else.

use crate::hdl_block;
use crate::ports::{Port, Ports, Regs};
use crate::rtl::RtlUnit;
use mpgpu_ref::units::framework::Policy;
use mpgpu_rtl::{Dss, LowestFirst, Oldata, OldataFaults, Oplog, OplogFaults, Prio, Prof, ProfFaults, Rq, RqFaults, Sched, SchedFaults, Slice, SliceFaults, Wf, WfFaults, Zorua, ZoruaFaults, ZoruaParams};
use mpgpu_spec::units::lowest_first as lf;
use mpgpu_spec::units::oldata;
use mpgpu_spec::units::oplog;
use mpgpu_spec::units::prof;
use mpgpu_spec::units::slice;
use mpgpu_spec::units::wf;
use mpgpu_spec::units::rq;
use mpgpu_spec::units::zorua;
use mpgpu_spec::units::sched::{dss, fw, prio, PolicyCode};

hdl_block!(Sched {
    inputs: [cmd_valid, cmd_handle, cmd_tbs, cmd_tk, cmd_priority, cmd_tokens, done_valid, done_sm, saved_valid, saved_sm, saved_tb, saved_slot, full],
    outputs: [busy, cmd_taken, issue_valid, issue_sm, issue_handle, issue_tb, issue_restore, issue_slot, preempt_valid, preempt_sm, retired_valid, retired_handle],
    registers: [ksrt.admitted, issue.pointer, issue.last_grant, ksrt.cq_valid, ksrt.cq_handle, ksrt.cq_tbs, trig_q, dec_act, dec_sm, dec_k, dec_from, app_asg, app_rsv, app_sm, app_k, app_from, gr_valid, gr_sm, gr_k, smst.evq_valid, smst.evq_sm, smst.evq_setup, ksrt.free_none, ksrt.free_k, smst.rdy_q, smst.lt2_q, smst.evc_q, smst.evw_q, smst.named_q, ksrt.wants_q, sv_valid, sv_k, sv_tb, sv_slot, dn_valid, dn_k],
    arrays: [
        smst.sm_state, smst.sm_ksr_valid, smst.sm_ksr, smst.sm_next_valid, smst.sm_next, smst.sm_running, smst.sm_tk,
        ksrt.k_valid, ksrt.k_handle, ksrt.k_tbs_m2, ksrt.k_next_tb, ksrt.k_done, ksrt.k_tk, ksrt.k_priority, ksrt.k_age, ksrt.k_count,
        ksrt.k_cap, ksrt.k_rem,
        ptbq.q_len,
    ],
});

hdl_block!(Dss {
    inputs: [trigger, sm_state, sm_ksr_valid, sm_ksr, k_valid, k_count, k_has_work, k_running, count_max, count_min],
    outputs: [busy, next_addr, kmax, kmin, act, act_sm, act_kernel, act_from],
    registers: [],
    arrays: [],
});

hdl_block!(Prio {
    inputs: [trigger, sm_state, sm_ksr_valid, sm_ksr, smk_priority, smk_age, k_valid, k_has_work, k_priority, k_age, k_wants_more],
    outputs: [busy, next_addr, act, act_sm, act_kernel, act_from],
    registers: [],
    arrays: [],
});

hdl_block!(LowestFirst { inputs: [request], outputs: [valid, index], registers: [], arrays: [] });

/// The whole scheduling framework (`Sched`) for `sms` SMs, its policy and test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct SchedPorts {
    pub sms: usize,
    pub mode: PolicyCode,
    pub faults: SchedFaults,
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
        let mut b = Sched::new(self.sms, self.mode, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &fw::In, v: &mut [u64]) {
        let c = i.cmd.unwrap_or_default();
        let (ssm, stb, sslot) = i.tb_saved.unwrap_or((0, 0, 0));
        let w = [
            i.cmd.is_some() as u64,
            c.handle as u64,
            c.tbs as u64,
            c.tk as u64,
            c.priority as u64,
            c.tokens as u8 as u64,
            i.tb_done.is_some() as u64,
            i.tb_done.unwrap_or(0) as u64,
            i.tb_saved.is_some() as u64,
            ssm as u64,
            stb as u64,
            sslot as u64,
            i.full as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &fw::Out, v: &mut [u64]) {
        let i = o.issue;
        let w = [
            o.busy as u64,
            o.cmd_taken as u64,
            i.is_some() as u64,
            i.map_or(0, |i| i.sm as u64),
            i.map_or(0, |i| i.handle as u64),
            i.map_or(0, |i| i.tb as u64),
            i.is_some_and(|i| i.restore) as u64,
            i.map_or(0, |i| i.slot as u64),
            o.preempt.is_some() as u64,
            o.preempt.unwrap_or(0) as u64,
            o.retired.is_some() as u64,
            o.retired.unwrap_or(0) as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> fw::Out {
        fw::Out {
            busy: v[0] != 0,
            cmd_taken: v[1] != 0,
            issue: (v[2] != 0).then(|| fw::TbIssue { sm: v[3] as u8, handle: v[4] as u16, tb: v[5] as u32, restore: v[6] != 0, slot: v[7] as u8 }),
            preempt: (v[8] != 0).then_some(v[9] as u8),
            retired: (v[10] != 0).then_some(v[11] as u16),
        }
    }
    fn care(&self, o: &fw::Out, care: &mut [bool]) {
        care.fill(true);
        care[3..8].fill(o.issue.is_some());
        care[9] = o.preempt.is_some();
        care[11] = o.retired.is_some();
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
            cmd_valid: r.scalar("ksrt.cq_valid") != 0,
            // (copied every cycle: they mean something only with `cq_valid`)
            cmd_handle: if r.scalar("ksrt.cq_valid") != 0 { r.scalar("ksrt.cq_handle") as u16 } else { 0 },
            cmd_tbs: if r.scalar("ksrt.cq_valid") != 0 { r.scalar("ksrt.cq_tbs") as u32 } else { 0 },
            ev_valid: r.scalar("smst.evq_valid") != 0,
            ev_sm: r.scalar("smst.evq_sm") as u8,
            ev_setup: r.scalar("smst.evq_setup") != 0,
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
        fw::State { smst, ksrt, admitted: r.scalar("ksrt.admitted") as u16, issue_ptr: r.scalar("issue.pointer") as u8, pipe }
    }
}

/// The whole framework's RTL as a unit.
pub type SchedRtl = RtlUnit<SchedPorts>;

fn biased(c: i8) -> u64 {
    (c as i16 + dss::COUNT_BIAS) as u64
}

/// The DSS policy engine (token counts biased by 128 on the wire).
#[derive(Clone, Copy, Debug)]
pub struct DssPorts {
    pub sms: usize,
    pub broken_tie: bool,
}

impl Ports for DssPorts {
    type In = dss::In;
    type Out = dss::Out;
    type State = ();
    type Block = Dss;
    fn name(&self) -> String {
        "dss".into()
    }
    fn block(&self) -> Dss {
        let mut b = Dss::new(self.sms, self.broken_tie);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &dss::In, v: &mut [u64]) {
        let w = [
            i.trigger as u64,
            i.sm_state as u64,
            i.sm_ksr_valid as u64,
            i.sm_ksr as u64 & 15,
            i.k_valid as u64,
            biased(i.k_count),
            i.k_has_work as u64,
            i.k_running as u64,
            biased(i.count_max),
            biased(i.count_min),
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &dss::Out, v: &mut [u64]) {
        let w = [o.busy as u64, o.next_addr as u64, o.kmax as u64, o.kmin as u64, o.act.code() as u64, o.act_sm as u64, o.act_kernel as u64, o.act_from as u64];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> dss::Out {
        dss::Out {
            busy: v[0] != 0,
            next_addr: v[1] as u8,
            kmax: v[2] as u8,
            kmin: v[3] as u8,
            act: dss::Act::from_code(v[4]),
            act_sm: v[5] as u8,
            act_kernel: v[6] as u8,
            act_from: v[7] as u8,
        }
    }
    fn state(&self, _: &Regs) {}
}

pub type DssRtl = RtlUnit<DssPorts>;

/// The priority policies' scan engine in mode `mode` (one of `PolicyCode::PRIORITY`).
#[derive(Clone, Copy, Debug)]
pub struct PrioPorts {
    pub sms: usize,
    pub mode: PolicyCode,
    pub broken_victim: bool,
}

impl Ports for PrioPorts {
    type In = prio::In;
    type Out = prio::Out;
    type State = ();
    type Block = Prio;
    fn name(&self) -> String {
        "prio".into()
    }
    fn block(&self) -> Prio {
        let mut b = Prio::new(self.sms, self.mode, self.broken_victim);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &prio::In, v: &mut [u64]) {
        let w = [
            i.trigger as u64,
            i.sm_state as u64,
            i.sm_ksr_valid as u64,
            i.sm_ksr as u64 & 15,
            i.smk_priority as u64 & 15,
            i.smk_age as u64,
            i.k_valid as u64,
            i.k_has_work as u64,
            i.k_priority as u64 & 15,
            i.k_age as u64,
            i.k_wants_more as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &prio::Out, v: &mut [u64]) {
        let w = [o.busy as u64, o.next_addr as u64, o.act.code() as u64, o.act_sm as u64, o.act_kernel as u64, o.act_from as u64];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> prio::Out {
        prio::Out { busy: v[0] != 0, next_addr: v[1] as u8, act: dss::Act::from_code(v[2]), act_sm: v[3] as u8, act_kernel: v[4] as u8, act_from: v[5] as u8 }
    }
    fn state(&self, _: &Regs) {}
}

pub type PrioRtl = RtlUnit<PrioPorts>;

/// The lowest-index-first arbiter.
#[derive(Clone, Copy, Debug, Default)]
pub struct LowestFirstPorts;

impl Ports for LowestFirstPorts {
    type In = lf::In;
    type Out = lf::Out;
    type State = ();
    type Block = LowestFirst;
    fn name(&self) -> String {
        "lowest_first".into()
    }
    fn block(&self) -> LowestFirst {
        let mut b = LowestFirst::new();
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &lf::In, v: &mut [u64]) {
        v[0] = i.request as u64;
    }
    fn encode_out(&self, o: &lf::Out, v: &mut [u64]) {
        v[0] = o.valid as u64;
        v[1] = o.index as u64;
    }
    fn decode(&self, v: &[u64]) -> lf::Out {
        lf::Out { valid: v[0] != 0, index: v[1] as u8 }
    }
    fn state(&self, _: &Regs) {}
}

pub type LowestFirstRtl = RtlUnit<LowestFirstPorts>;

impl SchedRtl {
    /// The framework's RTL on rust-hdl's simulator for `sms` SMs and `policy`.
    pub fn new(sms: usize, policy: Policy, faults: SchedFaults) -> Self {
        RtlUnit::rust_hdl(SchedPorts { sms, mode: policy.code(), faults })
    }
    /// The `busy` output as last settled (it depends on the registers only, so after a clock
    /// edge it is the next cycle's).
    pub fn busy_now(&self) -> bool {
        self.outputs_now().busy
    }
}

impl DssRtl {
    pub fn new(sms: usize, broken_tie: bool) -> Self {
        RtlUnit::rust_hdl(DssPorts { sms, broken_tie })
    }
}

impl PrioRtl {
    pub fn new(sms: usize, mode: PolicyCode, broken_victim: bool) -> Self {
        RtlUnit::rust_hdl(PrioPorts { sms, mode, broken_victim })
    }
}

impl LowestFirstRtl {
    pub fn new() -> Self {
        RtlUnit::rust_hdl(LowestFirstPorts)
    }
}

impl Default for LowestFirstRtl {
    fn default() -> Self {
        Self::new()
    }
}

hdl_block!(Oplog {
    inputs: [free, alloc, alloc_block, alloc_need, alloc_res, claim, claim_block, claim_n, claim_used, part_release, tick],
    outputs: [pool_free, room, list_room, alloc_idx0, alloc_idx1, alloc_idx2, busy, returning],
    registers: [head, tail, count, pool, back, ret, pv, cr, cown0, cown1, relq],
    arrays: [valid, pend, cred, p0h, p1h, owner, rrow, quota, left],
    memories: [bank0, bank1, bank2, bank3],
    flat: read_changed,
});

/// One SM's operand-log bookkeeping (`Oplog`) for a log of `entries` entries, with test-only
/// faults.
#[derive(Clone, Copy, Debug)]
pub struct OplogPorts {
    pub entries: usize,
    pub faults: OplogFaults,
}

impl Ports for OplogPorts {
    type In = oplog::In;
    type Out = oplog::Out;
    type State = oplog::State;
    type Block = Oplog;
    fn name(&self) -> String {
        "oplog".into()
    }
    fn block(&self) -> Oplog {
        let mut b = Oplog::new(self.entries, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &oplog::In, v: &mut [u64]) {
        let w = [
            i.free,
            i.alloc as u64,
            i.alloc_block as u64 & 15,
            i.alloc_need as u64 & 3,
            i.alloc_res as u64,
            i.claim as u64,
            i.claim_block as u64 & 15,
            i.claim_n as u64 & 127,
            i.claim_used as u64 & 127,
            i.release as u64,
            i.tick as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &oplog::Out, v: &mut [u64]) {
        let w = [o.pool_free as u64, o.room as u64, o.list_room as u64, o.alloc_idx[0] as u64, o.alloc_idx[1] as u64, o.alloc_idx[2] as u64, o.busy as u64, o.returning as u64];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> oplog::Out {
        oplog::Out { pool_free: v[0] as u8, room: v[1] as u32, list_room: v[2] as u8, alloc_idx: [v[3] as u8, v[4] as u8, v[5] as u8], busy: v[6] != 0, returning: v[7] as u16 }
    }
    fn state(&self, r: &Regs) -> oplog::State {
        // (the list's slot s is bank s mod 4's word s / 4, holding its entry XORed with s;
        // count and pool are kept XORed with the entries)
        let banks = [r.array("bank0.mem"), r.array("bank1.mem"), r.array("bank2.mem"), r.array("bank3.mem")];
        let e = self.entries as u64;
        // (the picks are kept one-hot)
        // (the entry vectors in halves of 32)
        let v64 = |name: &str| r.array(name)[0] | r.array(name)[1] << 32;
        let (p0, p1, cr) = (v64("p0h"), v64("p1h"), r.scalar("cr"));
        let at = |h: u64| if h == 0 { 0 } else { h.trailing_zeros() as u8 };
        oplog::State {
            valid: v64("valid"),
            pend: v64("pend"),
            cred: v64("cred"),
            owner: r.array("owner").iter().map(|&x| x as u8).collect(),
            slot: (0..64).map(|s| (banks[s % 4][s / 4] ^ s as u64) as u8).collect(),
            head: r.scalar("head") as u8,
            count: (r.scalar("count") ^ e) as u8,
            pool: (r.scalar("pool") ^ e) as u8,
            back: r.scalar("back") as u8,
            quota: r.array("quota").iter().map(|&x| x as u8).collect(),
            left: r.array("left").iter().map(|&x| x as u8).collect(),
            ret: r.scalar("ret") as u16,
            pick_v: vec![r.scalar("pv") & 1 != 0, r.scalar("pv") & 2 != 0],
            pick: vec![at(p0), at(p1)],
            cr: vec![cr & 1 != 0, cr & 2 != 0],
            cown: vec![r.scalar("cown0") as u8, r.scalar("cown1") as u8],
            relq: r.scalar("relq") as u16,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a function of the registers: `mpgpu_spec::units::oplog`)
        Some(&[])
    }
}

pub type OplogRtl = RtlUnit<OplogPorts>;

hdl_block!(Rq {
    inputs: [free_lo, free_hi, fault_lo, fault_hi, issue, replay, replay_idx, warp, pc, exec, age, log0, log1, log2, nlog, rd_idx],
    outputs: [full, alloc_idx, replay_ok, rd_warp, rd_pc, rd_exec, rd_age, rd_log0, rd_log1, rd_log2, rd_nlog],
    registers: [],
    arrays: [valid, faulted],
    memories: [warp_ram, age_ram, exec_ram, info_ram],
    flat: read_changed,
});

/// One SM's replay queue (`Rq`) of `slots` slots, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct RqPorts {
    pub slots: usize,
    pub faults: RqFaults,
}

impl Ports for RqPorts {
    type In = rq::In;
    type Out = rq::Out;
    type State = rq::State;
    type Block = Rq;
    fn name(&self) -> String {
        "rq".into()
    }
    fn block(&self) -> Rq {
        let mut b = Rq::new(self.slots, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &rq::In, v: &mut [u64]) {
        let w = [
            i.free as u64,
            (i.free >> 64) as u64,
            i.fault as u64,
            (i.fault >> 64) as u64,
            i.issue as u64,
            i.replay as u64,
            i.replay_idx as u64 & 127,
            i.warp as u64 & 63,
            i.pc as u64,
            i.exec as u64,
            i.age as u64,
            i.log[0] as u64 & 63,
            i.log[1] as u64 & 63,
            i.log[2] as u64 & 63,
            i.nlog as u64 & 3,
            i.rd_idx as u64 & 127,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &rq::Out, v: &mut [u64]) {
        let w = [
            o.full as u64,
            o.alloc_idx as u64,
            o.replay_ok as u64,
            o.rd_warp as u64,
            o.rd_pc as u64,
            o.rd_exec as u64,
            o.rd_age as u64,
            o.rd_log[0] as u64,
            o.rd_log[1] as u64,
            o.rd_log[2] as u64,
            o.rd_nlog as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> rq::Out {
        rq::Out {
            full: v[0] != 0,
            alloc_idx: v[1] as u8,
            replay_ok: v[2] != 0,
            rd_warp: v[3] as u8,
            rd_pc: v[4] as u16,
            rd_exec: v[5] as u32,
            rd_age: v[6] as u16,
            rd_log: [v[7] as u8, v[8] as u8, v[9] as u8],
            rd_nlog: v[10] as u8,
        }
    }
    fn state(&self, r: &Regs) -> rq::State {
        rq::State {
            valid: r.array("valid").to_vec(),
            faulted: r.array("faulted").to_vec(),
            warp: r.array("warp_ram.mem").to_vec(),
            age: r.array("age_ram.mem").to_vec(),
            exec: r.array("exec_ram.mem").to_vec(),
            info: r.array("info_ram.mem").to_vec(),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are the registers' and the read ports': `mpgpu_spec::units::rq`; the
        // broken `early_free` lets this cycle's `free` through)
        if self.faults.early_free {
            None
        } else {
            Some(&["replay_idx", "rd_idx"])
        }
    }
}

pub type RqRtl = RtlUnit<RqPorts>;

/// `Oldata`'s ports by hand rather than through `hdl_block!`: its data ports are one per lane
/// and its RAMs an array (`lane$k`, each read back as `lane$k.mem[w]`). It is flat
/// (`mpgpu_rtl::flat_logic!`).
impl crate::ports::HdlBlock for Oldata {
    fn flat(&self) -> bool {
        true
    }
    fn quiet(&self) -> bool {
        !self.read_changed()
    }
    fn input_ports(&self) -> Vec<Port> {
        let mut v = vec![Port::new("we", 1), Port::new("waddr", oldata::INDEX_BITS), Port::new("re", 1), Port::new("raddr", oldata::INDEX_BITS)];
        v.extend((0..oldata::LANES).map(|k| Port::new(&format!("wd{k}"), 32)));
        v
    }
    fn output_ports(&self) -> Vec<Port> {
        (0..oldata::LANES).map(|k| Port::new(&format!("rd{k}"), 32)).collect()
    }
    fn register_ports(&self) -> Vec<Port> {
        (0..oldata::LANES).flat_map(|k| (0..self.lane[k].words()).map(move |w| Port::new(&format!("lane${k}.mem[{w}]"), 32))).collect()
    }
    fn set_inputs(&mut self, v: &[u64]) {
        use crate::ports::Wire;
        use rust_hdl::core::block::Block;
        self.we.next = Wire::from_word(v[0]);
        self.we.update_all();
        self.waddr.next = Wire::from_word(v[1]);
        self.waddr.update_all();
        self.re.next = Wire::from_word(v[2]);
        self.re.update_all();
        self.raddr.next = Wire::from_word(v[3]);
        self.raddr.update_all();
        for k in 0..oldata::LANES {
            let s = self.wd_mut(k);
            s.next = Wire::from_word(v[4 + k]);
            s.update_all();
        }
    }
    fn set_clock(&mut self, high: bool) {
        self.clock.next = rust_hdl::prelude::Clock::from(high);
        rust_hdl::core::block::Block::update_all(&mut self.clock);
    }
    fn get_outputs(&self, v: &mut [u64]) {
        for (k, x) in v.iter_mut().enumerate().take(oldata::LANES) {
            *x = crate::ports::Wire::word(&self.rd(k).val());
        }
    }
    fn get_registers(&self, v: &mut [u64]) {
        // (a lane's words only when it was written since they were last read, and only the
        // one written when it was one)
        let mut at = 0;
        for l in &self.lane {
            match l.take_written_word() {
                None => {}
                Some(Some(w)) => v[at + w] = crate::ports::Wire::word(&l.word(w)),
                Some(None) => {
                    for w in 0..l.words() {
                        v[at + w] = crate::ports::Wire::word(&l.word(w));
                    }
                }
            }
            at += l.words();
        }
    }
}

/// One SM's operand-log data array (`Oldata`) of `entries` entries (the configuration's log),
/// with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct OldataPorts {
    pub entries: usize,
    pub faults: OldataFaults,
}

impl Ports for OldataPorts {
    type In = oldata::In;
    type Out = oldata::Out;
    type State = oldata::State;
    type Block = Oldata;
    fn name(&self) -> String {
        "oldata".into()
    }
    fn block(&self) -> Oldata {
        let mut b = Oldata::new(self.entries, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &oldata::In, v: &mut [u64]) {
        v[0] = i.we as u64;
        v[1] = i.waddr as u64 & 63;
        v[2] = i.re as u64;
        v[3] = i.raddr as u64 & 63;
        for k in 0..oldata::LANES {
            v[4 + k] = i.wdata[k] as u64;
        }
    }
    fn encode_out(&self, o: &oldata::Out, v: &mut [u64]) {
        for k in 0..oldata::LANES {
            v[k] = o.rdata[k] as u64;
        }
    }
    fn decode(&self, v: &[u64]) -> oldata::Out {
        oldata::Out { rdata: std::array::from_fn(|k| v[k] as u32) }
    }
    fn state(&self, r: &Regs) -> oldata::State {
        // (the registers are the lane RAMs' words and nothing else, lane after lane: the
        // state's layout)
        debug_assert_eq!(r.values.len(), oldata::LANES * self.entries);
        oldata::State { words: r.values.iter().map(|&x| x as u32).collect() }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are the read ports' registers)
        Some(&[])
    }
}

pub type OldataRtl = RtlUnit<OldataPorts>;

/// `Zorua`'s ports by hand rather than through `hdl_block!`: its rows are output arrays
/// (`reg_set$k`, `smem_set$k`). It is flat (`mpgpu_rtl::flat_logic!`).
impl crate::ports::HdlBlock for Zorua {
    fn flat(&self) -> bool {
        true
    }
    fn quiet(&self) -> bool {
        !self.read_changed()
    }
    fn input_ports(&self) -> Vec<Port> {
        [("ev", 3), ("warp", 6), ("block", 4), ("warps", 64), ("regs", 7), ("smem", 17), ("idle", 16), ("mem", 16), ("peak", 7), ("nwarps_in", 7)].iter().map(|&(n, w)| Port::new(n, w)).collect()
    }
    fn output_ports(&self) -> Vec<Port> {
        let mut v: Vec<Port> = [("ready", 1), ("grant", 1), ("grant_warp", 6), ("grant_slot", 6), ("reg_phys", 16), ("smem_phys", 64), ("o_thresh", 5), ("slot_room", 7)].iter().map(|&(n, w)| Port::new(n, w)).collect();
        v.extend((0..16).map(|k| Port::new(&format!("reg_set${k}"), 8)));
        v.extend((0..48).map(|k| Port::new(&format!("smem_set${k}"), 6)));
        v.push(Port::new("released", 64));
        v.push(Port::new("waiting", 1));
        v
    }
    fn register_ports(&self) -> Vec<Port> {
        let mut v: Vec<Port> = ZORUA_SCALARS.iter().map(|&(n, w)| Port::new(&format!("{n}$q"), w)).collect();
        for &(n, len, w) in ZORUA_ARRAYS {
            if len == 0 {
                v.push(Port::new(&format!("{n}$q"), w));
            }
            v.extend((0..len).map(|k| Port::new(&format!("{n}${k}$q"), w)));
        }
        v
    }
    fn set_inputs(&mut self, v: &[u64]) {
        use crate::ports::Wire;
        use rust_hdl::core::block::Block;
        self.ev.next = Wire::from_word(v[0]);
        self.ev.update_all();
        self.warp.next = Wire::from_word(v[1]);
        self.warp.update_all();
        self.block.next = Wire::from_word(v[2]);
        self.block.update_all();
        self.warps.next = Wire::from_word(v[3]);
        self.warps.update_all();
        self.regs.next = Wire::from_word(v[4]);
        self.regs.update_all();
        self.smem.next = Wire::from_word(v[5]);
        self.smem.update_all();
        self.idle.next = Wire::from_word(v[6]);
        self.idle.update_all();
        self.mem.next = Wire::from_word(v[7]);
        self.mem.update_all();
        self.peak.next = Wire::from_word(v[8]);
        self.peak.update_all();
        self.nwarps_in.next = Wire::from_word(v[9]);
        self.nwarps_in.update_all();
    }
    fn set_clock(&mut self, high: bool) {
        self.clock.next = rust_hdl::prelude::Clock::from(high);
        rust_hdl::core::block::Block::update_all(&mut self.clock);
    }
    fn sim_pass(&mut self, exact: bool) {
        match exact {
            true => rust_hdl::core::block::Block::update_all(self),
            false => self.pass_fast(),
        }
    }
    fn get_outputs(&self, v: &mut [u64]) {
        use crate::ports::Wire;
        let w = [
            self.ready.val().word(),
            self.grant.val().word(),
            self.grant_warp.val().word(),
            self.grant_slot.val().word(),
            self.reg_phys.val().word(),
            self.smem_phys.val().word(),
            self.o_thresh.val().word(),
            self.slot_room.val().word(),
        ];
        v[..8].copy_from_slice(&w);
        for k in 0..16 {
            v[8 + k] = self.reg_set[k].val().word();
        }
        for k in 0..48 {
            v[24 + k] = self.smem_set[k].val().word();
        }
        v[72] = self.released.val().word();
        v[73] = self.waiting.val().word();
    }
    fn get_registers(&self, v: &mut [u64]) {
        // (only the registers whose output changed since the last call are converted: `v`
        // holds the words of the last call, the harness's own buffer; a 64-bit value is 64
        // `bool`s in rust-hdl, slow to turn into a word)
        use crate::ports::Wire;
        use mpgpu_rtl::reg::Reg;
        fn put<T: rust_hdl::prelude::Synth + Wire>(r: &Reg<T>, w: &mut u64) {
            if r.take_changed() {
                *w = r.q.val().word();
            }
        }
        put(&self.tq, &mut v[0]);
        put(&self.sq, &mut v[1]);
        put(&self.rq, &mut v[2]);
        put(&self.sched, &mut v[3]);
        put(&self.bar, &mut v[4]);
        put(&self.live, &mut v[5]);
        put(&self.blocks, &mut v[6]);
        put(&self.reg_cnt, &mut v[7]);
        put(&self.reg_swap, &mut v[8]);
        put(&self.smem_cnt, &mut v[9]);
        put(&self.smem_swap, &mut v[10]);
        put(&self.smem_used, &mut v[11]);
        put(&self.slot_used, &mut v[12]);
        put(&self.th_q, &mut v[13]);
        put(&self.th_set, &mut v[14]);
        put(&self.started, &mut v[15]);
        put(&self.reg_resv, &mut v[16]);
        put(&self.bgive, &mut v[17]);
        let mut at = ZORUA_SCALARS.len();
        for r in self.wblock.iter().chain(&self.rneed).chain(&self.rheld).chain(std::iter::once(&self.slotv)).chain(&self.slot) {
            put(r, &mut v[at]);
            at += 1;
        }
        for r in self.sneed.iter().chain(&self.sheld).chain(&self.nwarps).chain(&self.narr).chain(&self.bpeak) {
            put(r, &mut v[at]);
            at += 1;
        }
        for k in 0..4 {
            put(&self.reg_used[k], &mut v[at + k]);
        }
    }
}

/// `Zorua`'s scalar registers read back as state (name, width), in `get_registers` order.
const ZORUA_SCALARS: &[(&str, usize)] = &[
    ("tq", 64),
    ("sq", 64),
    ("rq", 64),
    ("sched", 64),
    ("bar", 64),
    ("live", 64),
    ("blocks", 16),
    ("reg_cnt", 10),
    ("reg_swap", 11),
    ("smem_cnt", 7),
    ("smem_swap", 11),
    ("smem_used", 64),
    ("slot_used", 64),
    ("th_q", 5),
    ("th_set", 1),
    ("started", 64),
    ("reg_resv", 11),
    ("bgive", 16),
];

/// Its register arrays (name, entries, width), after the scalars.
/// (the per-warp and per-block fields are bit-sliced: entry `j` of `rneed` is bit `j` of every
/// warp's need; `slotv` is one slice, a scalar)
const ZORUA_ARRAYS: &[(&str, usize, usize)] = &[("wblock", 4, 64), ("rneed", 5, 64), ("rheld", 5, 64), ("slotv", 0, 64), ("slot", 6, 64), ("sneed", 7, 16), ("sheld", 7, 16), ("nwarps", 7, 16), ("narr", 7, 16), ("bpeak", 5, 16), ("reg_used", 4, 64)];

/// One SM's Zorua coordinator and mapping tables (`Zorua`, the Fermi geometry), with its
/// threshold constants and test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct ZoruaPorts {
    pub params: ZoruaParams,
    pub faults: ZoruaFaults,
}

impl Ports for ZoruaPorts {
    type In = zorua::In;
    type Out = zorua::Out;
    type State = zorua::State;
    type Block = Zorua;
    fn name(&self) -> String {
        "zorua".into()
    }
    fn block(&self) -> Zorua {
        let mut b = Zorua::new(self.params, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &zorua::In, v: &mut [u64]) {
        let w = [i.ev as u64, i.warp as u64 & 63, i.block as u64 & 15, i.warps, i.regs as u64 & 127, i.smem as u64 & 0x1ffff, i.idle as u64, i.mem as u64, i.peak as u64 & 127, i.nwarps as u64 & 127];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &zorua::Out, v: &mut [u64]) {
        let w = [o.ready as u64, o.grant as u64, o.grant_warp as u64, o.grant_slot as u64, o.reg_phys as u64, o.smem_phys, o.o_thresh as u64, o.slot_room as u64];
        v[..8].copy_from_slice(&w);
        for k in 0..16 {
            v[8 + k] = o.reg_set[k] as u64;
        }
        for k in 0..48 {
            v[24 + k] = o.smem_set[k] as u64;
        }
        v[72] = o.release;
        v[73] = o.waiting as u64;
    }
    fn decode(&self, v: &[u64]) -> zorua::Out {
        let mut o = zorua::Out {
            ready: v[0] != 0,
            grant: v[1] != 0,
            grant_warp: v[2] as u8,
            grant_slot: v[3] as u8,
            reg_phys: v[4] as u16,
            smem_phys: v[5],
            o_thresh: v[6] as u8,
            slot_room: v[7] as u8,
            release: v[72],
            waiting: v[73] != 0,
            ..zorua::Out::default()
        };
        for k in 0..16 {
            o.reg_set[k] = v[8 + k] as u16;
        }
        for k in 0..48 {
            o.smem_set[k] = v[24 + k] as u8;
        }
        o
    }
    fn state(&self, r: &Regs) -> zorua::State {
        let present = if self.params.slots >= 64 { u64::MAX } else { (1u64 << self.params.slots) - 1 };
        let th = if r.scalar("th_set") != 0 { r.scalar("th_q") } else { self.params.o_default };
        // (the fields are bit-sliced: warp w's value is bit w of each slice; only the set bits
        // are visited, most fields being small)
        let unslice = |slices: &[u64]| {
            let mut v = [0u64; 64];
            for (j, &x) in slices.iter().enumerate() {
                let mut m = x;
                while m != 0 {
                    v[m.trailing_zeros() as usize] |= 1 << j;
                    m &= m - 1;
                }
            }
            v
        };
        let (wbs, rns, rhs, sv, sls) = (unslice(r.array("wblock")), unslice(r.array("rneed")), unslice(r.array("rheld")), r.scalar("slotv"), unslice(r.array("slot")));
        let (sns, shs, nws, nas, bps) = (unslice(r.array("sneed")), unslice(r.array("sheld")), unslice(r.array("nwarps")), unslice(r.array("narr")), unslice(r.array("bpeak")));
        zorua::State {
            tq: r.scalar("tq"),
            sq: r.scalar("sq"),
            rq: r.scalar("rq"),
            sched: r.scalar("sched"),
            bar: r.scalar("bar"),
            live: r.scalar("live"),
            blocks: r.scalar("blocks") as u16,
            reg_free: mpgpu_rtl::zorua::RTL_REG_SETS as u32 - r.scalar("reg_cnt") as u32,
            reg_swap: r.scalar("reg_swap") as u32,
            reg_resv: r.scalar("reg_resv") as u32,
            started: r.scalar("started"),
            smem_free: mpgpu_rtl::zorua::RTL_SMEM_SETS as u32 - r.scalar("smem_cnt") as u32,
            smem_swap: r.scalar("smem_swap") as u32,
            slots_free: !r.scalar("slot_used") & present,
            o_thresh: th as u8,
            warp_info: (0..64).map(|w| zorua::pack_warp(wbs[w] as u8, rns[w] as u8, rhs[w] as u8, (sv >> w & 1 != 0).then_some(sls[w] as u8))).collect(),
            block_info: (0..16).map(|b| zorua::pack_block(bps[b] as u8, sns[b] as u8, shs[b] as u8, nws[b] as u8, nas[b] as u8, r.scalar("bgive") >> b & 1 != 0)).collect(),
            reg_map_free: r.array("reg_used").iter().map(|&u| !u).collect(),
            smem_map_free: !r.scalar("smem_used") & ((1u64 << mpgpu_rtl::zorua::RTL_SMEM_SETS) - 1),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are functions of the registers and the tables' read registers)
        Some(&[])
    }
}

pub type ZoruaRtl = RtlUnit<ZoruaPorts>;

hdl_block!(Wf {
    inputs: [start, last, kernels, window, fallback_pct, delay, total0, total1, total2, total3, sm_k, sm_j, sm_insts, sm_stalls, k_req0, k_req1, k_req2, k_req3],
    outputs: [busy, round_wait, win_run, win_first, win_last, rd_sm, rd_k, done_out, quota0, quota1, quota2, quota3, spatial_out],
    registers: [
        phase, kern, last_r, window_r, pct, delay_r, wcount, since, sm, sub, k, j, sel, n, a, wa, dneg, dmag, f, acc, top, quo, valid, full, ma, mb, pr, qhi, cnt, bq, found, m_next, q_next,
        over, fit_r, res_spatial, done, spatial,
    ],
    arrays: [total, len, t, g, cur_q, need, rl, quota, prod_r, ph_r],
    memories: [score_ram, m_ram, qn_ram],
    flat: read_changed,
});

/// Warped-Slicer's water-filling unit (`Wf`) for `sms` SMs, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct WfPorts {
    pub sms: usize,
    pub faults: WfFaults,
}

impl Ports for WfPorts {
    type In = wf::In;
    type Out = wf::Out;
    type State = wf::State;
    type Block = Wf;
    fn name(&self) -> String {
        "wf".into()
    }
    fn block(&self) -> Wf {
        let mut b = Wf::new(self.sms, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &wf::In, v: &mut [u64]) {
        let r = |x: u32| x as u64 & ((1 << wf::RES_BITS) - 1);
        let w = [
            i.start as u64,
            i.last as u64,
            i.kernels as u64 & 7,
            i.window as u64,
            i.fallback_pct as u64,
            i.delay as u64,
            r(i.total[0]),
            r(i.total[1]),
            r(i.total[2]),
            r(i.total[3]),
            i.sm_k as u64 & 3,
            i.sm_j as u64 & 31,
            i.sm_insts as u64 & ((1 << wf::INST_BITS) - 1),
            i.sm_stalls as u64 & 0xFFFF,
            r(i.k_req[0]),
            r(i.k_req[1]),
            r(i.k_req[2]),
            r(i.k_req[3]),
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &wf::Out, v: &mut [u64]) {
        let w = [
            o.busy as u64,
            o.round_wait as u64,
            o.win_run as u64,
            o.win_first as u64,
            o.win_last as u64,
            o.rd_sm as u64,
            o.rd_k as u64,
            o.done as u64,
            o.quota[0] as u64,
            o.quota[1] as u64,
            o.quota[2] as u64,
            o.quota[3] as u64,
            o.spatial as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> wf::Out {
        wf::Out {
            busy: v[0] != 0,
            round_wait: v[1] != 0,
            win_run: v[2] != 0,
            win_first: v[3] != 0,
            win_last: v[4] != 0,
            rd_sm: v[5] as u8,
            rd_k: v[6] as u8,
            done: v[7] != 0,
            quota: [v[8] as u8, v[9] as u8, v[10] as u8, v[11] as u8],
            spatial: v[12] != 0,
        }
    }
    fn state(&self, r: &Regs) -> wf::State {
        let a4 = |n: &str| -> [u32; 4] { std::array::from_fn(|k| r.array(n)[k] as u32) };
        let b4 = |n: &str| -> [u8; 4] { std::array::from_fn(|k| r.array(n)[k] as u8) };
        wf::State {
            phase: r.scalar("phase") as u8,
            kernels: r.scalar("kern") as u8,
            last: r.scalar("last_r") != 0,
            window: r.scalar("window_r") as u16,
            pct: r.scalar("pct") as u8,
            delay: r.scalar("delay_r") as u16,
            total: a4("total"),
            wcount: r.scalar("wcount") as u16,
            since: r.scalar("since") as u16,
            sm: r.scalar("sm") as u8,
            sub: r.scalar("sub") as u8,
            k: r.scalar("k") as u8,
            j: r.scalar("j") as u8,
            sel: r.scalar("sel") as u8,
            n: r.scalar("n") as u8,
            a: r.scalar("a") as u16,
            wa: r.scalar("wa") as u32,
            dneg: r.scalar("dneg") != 0,
            dmag: r.scalar("dmag") as u16,
            f: r.scalar("f") as u32,
            acc: r.scalar("acc"),
            top: r.scalar("top"),
            q: r.scalar("quo") as u32,
            valid: r.scalar("valid"),
            len: b4("len"),
            t: b4("t"),
            g: b4("g"),
            cur_q: a4("cur_q"),
            full: r.scalar("full") as u8,
            ma: r.scalar("ma") as u32,
            mb: r.scalar("mb") as u32,
            pr: r.scalar("pr"),
            qhi: r.scalar("qhi") != 0,
            cnt: r.scalar("cnt") as u8,
            bq: r.scalar("bq") as u32,
            found: r.scalar("found") != 0,
            m_next: r.scalar("m_next") as u8,
            q_next: r.scalar("q_next") as u32,
            need: a4("need"),
            rl: a4("rl"),
            over: r.scalar("over") != 0,
            fit: r.scalar("fit_r") != 0,
            prod: std::array::from_fn(|k| (r.array("prod_r")[k] + r.array("ph_r")[k]) as u32),
            res_spatial: r.scalar("res_spatial") != 0,
            done: r.scalar("done") != 0,
            quota: b4("quota"),
            spatial: r.scalar("spatial") != 0,
            score: r.array("score_ram.mem").to_vec(),
            m: r.array("m_ram.mem").to_vec(),
            qn: r.array("qn_ram.mem").to_vec(),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a register's: `mpgpu_spec::units::wf`)
        Some(&[])
    }
}

pub type WfRtl = RtlUnit<WfPorts>;

hdl_block!(Prof {
    inputs: [run, first, last, issued, stall, blocks_in],
    outputs: [insts, stalls, blocks],
    registers: [cnt_insts, cnt_stalls, lat_insts, lat_stalls, lat_blocks],
    arrays: [],
});

/// One SM's Warped-Slicer sampling counters (`Prof`), with test-only faults.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProfPorts {
    pub faults: ProfFaults,
}

impl Ports for ProfPorts {
    type In = prof::In;
    type Out = prof::Out;
    type State = prof::State;
    type Block = Prof;
    fn name(&self) -> String {
        "prof".into()
    }
    fn block(&self) -> Prof {
        let mut b = Prof::new(self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &prof::In, v: &mut [u64]) {
        v.copy_from_slice(&[i.run as u64, i.first as u64, i.last as u64, i.issued as u64 & 7, i.stall as u64, i.blocks as u64 & 31]);
    }
    fn encode_out(&self, o: &prof::Out, v: &mut [u64]) {
        v.copy_from_slice(&[o.insts as u64, o.stalls as u64, o.blocks as u64]);
    }
    fn decode(&self, v: &[u64]) -> prof::Out {
        prof::Out { insts: v[0] as u32, stalls: v[1] as u32, blocks: v[2] as u8 }
    }
    fn state(&self, r: &Regs) -> prof::State {
        prof::State {
            cnt_insts: r.scalar("cnt_insts") as u32,
            cnt_stalls: r.scalar("cnt_stalls") as u32,
            insts: r.scalar("lat_insts") as u32,
            stalls: r.scalar("lat_stalls") as u32,
            blocks: r.scalar("lat_blocks") as u8,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
}

pub type ProfRtl = RtlUnit<ProfPorts>;

hdl_block!(Slice {
    inputs: [
        cmd_op, cmd_slot, cmd_sm, cmd_all, cmd_blocks, cmd_q0, cmd_q1, cmd_q2, cmd_q3, cmd_req0, cmd_req1, cmd_req2, cmd_req3, done_valid, done_sm, done_slot,
    ],
    outputs: [busy, issue_valid, issue_sm, issue_slot],
    registers: [valid, ptr, quiet, rd_valid, rd_sm, fv, fsm, iv, ism, isl, dv, dsm, dsl],
    arrays: [rank, left, r0, r1, r2, r3, l0, l1, l2, l3, inc0, inc1, inc2, inc3, dec0, dec1, dec2, dec3, n0, n1, n2, n3, t0, t1, t2, t3, ru, rn, rq, fe],
});

/// The slice table (`Slice`) for `sms` SMs of `total` resources, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct SlicePorts {
    pub sms: usize,
    pub total: [u32; slice::RES],
    pub faults: SliceFaults,
}

impl Ports for SlicePorts {
    type In = slice::In;
    type Out = slice::Out;
    type State = slice::State;
    type Block = Slice;
    fn name(&self) -> String {
        "slice".into()
    }
    fn block(&self) -> Slice {
        let mut b = Slice::new(self.sms, self.total, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &slice::In, v: &mut [u64]) {
        use slice::Cmd;
        let r = |x: u32| x as u64 & ((1 << slice::RES_BITS) - 1);
        let q = |x: u8| x as u64 & ((1 << slice::QUOTA_BITS) - 1);
        // (op, slot, sm, all, blocks, q0..q3, req0..req3; Enter's quota travels in q0)
        let mut c = [0u64; 13];
        c[0] = i.cmd.op() as u64;
        match i.cmd {
            Cmd::None => {}
            Cmd::Enter { slot, blocks, req, quota } => {
                c[1] = slot as u64 & 3;
                c[4] = blocks as u64 & ((1 << slice::LEFT_BITS) - 1);
                c[5] = q(quota);
                for k in 0..4 {
                    c[9 + k] = r(req[k]);
                }
            }
            Cmd::Leave { slot } => c[1] = slot as u64 & 3,
            Cmd::Quota { sm, all, q: qs } => {
                c[2] = sm as u64 & 15;
                c[3] = all as u64;
                for k in 0..4 {
                    c[5 + k] = q(qs[k]);
                }
            }
        }
        v[..13].copy_from_slice(&c);
        let (dv, ds, dk) = i.done.map_or((0, 0, 0), |(s, k)| (1, s as u64 & 15, k as u64 & 3));
        v[13..16].copy_from_slice(&[dv, ds, dk]);
    }
    fn encode_out(&self, o: &slice::Out, v: &mut [u64]) {
        let (iv, s, k) = o.issue.map_or((0, 0, 0), |(s, k)| (1, s as u64, k as u64));
        v.copy_from_slice(&[o.busy as u64, iv, s, k]);
    }
    fn decode(&self, v: &[u64]) -> slice::Out {
        slice::Out { busy: v[0] != 0, issue: (v[1] != 0).then_some((v[2] as u8, v[3] as u8)) }
    }
    fn state(&self, r: &Regs) -> slice::State {
        use slice::{KMAX, MAX_SMS, RES};
        let a = |n: &str, k: usize| r.array(n)[k];
        let valid = r.scalar("valid");
        slice::State {
            // (the use is the issued requests' running sum less the completed ones')
            used: (0..MAX_SMS).map(|s| std::array::from_fn(|c| (a(&format!("inc{c}"), s).wrapping_sub(a(&format!("dec{c}"), s)) & ((1 << slice::RES_BITS) - 1)) as u32)).collect(),
            n: (0..MAX_SMS).map(|s| std::array::from_fn(|k| a(&format!("n{k}"), s) as u8)).collect(),
            quota: (0..MAX_SMS).map(|s| std::array::from_fn(|k| a(&format!("t{k}"), s) as u8)).collect(),
            valid: std::array::from_fn(|k| valid >> k & 1 != 0),
            rank: std::array::from_fn(|k| a("rank", k) as u8),
            left: std::array::from_fn(|k| a("left", k) as u32),
            req: std::array::from_fn(|k| std::array::from_fn(|c| a(&format!("r{c}"), k) as u32)),
            lim: std::array::from_fn(|k| std::array::from_fn(|c| a(&format!("l{c}"), k) as u32)),
            ptr: r.scalar("ptr") as u8,
            quiet: r.scalar("quiet") as u8,
            rd_valid: r.scalar("rd_valid") != 0,
            rd_sm: r.scalar("rd_sm") as u8,
            rd_used: std::array::from_fn::<u32, RES, _>(|c| a("ru", c) as u32),
            rd_n: std::array::from_fn::<u8, KMAX, _>(|k| a("rn", k) as u8),
            rd_q: std::array::from_fn::<u8, KMAX, _>(|k| a("rq", k) as u8),
            f_valid: r.scalar("fv") != 0,
            f_sm: r.scalar("fsm") as u8,
            f_e: std::array::from_fn::<bool, KMAX, _>(|k| a("fe", k) != 0),
            issue_valid: r.scalar("iv") != 0,
            issue_sm: r.scalar("ism") as u8,
            issue_slot: r.scalar("isl") as u8,
            d_valid: r.scalar("dv") != 0,
            d_sm: r.scalar("dsm") as u8,
            d_slot: r.scalar("dsl") as u8,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a register's: `mpgpu_spec::units::slice`)
        Some(&[])
    }
}

pub type SliceRtl = RtlUnit<SlicePorts>;
