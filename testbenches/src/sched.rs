//! RTL adapter for the whole scheduling framework (`mpgpu_rtl::Sched`): drives the block from
//! the unit's `In`, settles it, reads `Out`, and reads its registers back as the architectural
//! state the co-simulation compares with the model's.

use mpgpu_ref::units::framework::Policy;
use mpgpu_rtl::{Sched, SchedFaults, SCHED_MODE_DSS};
use mpgpu_spec::units::sched::fw::{In, KsrState, Out, SmState, State, TbIssue};
use mpgpu_spec::Unit;
use rust_hdl::prelude::*;
use std::cell::RefCell;

pub struct SchedRtl {
    uut: RefCell<Sched>,
    /// What the block was last settled with (to skip settling it again).
    driven: std::cell::Cell<Option<(In, bool)>>,
    sms: usize,
    mode: u8,
    faults: SchedFaults,
}

/// The block's policy code for a framework policy.
pub fn sched_mode(p: Policy) -> u8 {
    if p.uses_dss() {
        SCHED_MODE_DSS
    } else {
        p.prio_mode()
    }
}

impl SchedRtl {
    pub fn new(sms: usize, policy: Policy, faults: SchedFaults) -> Self {
        Self::with_mode(sms, sched_mode(policy), faults)
    }

    fn with_mode(sms: usize, mode: u8, faults: SchedFaults) -> Self {
        let mut uut = Sched::new(sms, mode, faults);
        uut.connect_inputs();
        let s = SchedRtl { uut: RefCell::new(uut), driven: Default::default(), sms, mode, faults };
        s.drive(&In::default(), false);
        s
    }

    /// The `busy` output as last settled (it depends on the registers only, so after a clock
    /// edge it is the next cycle's).
    pub fn busy_now(&self) -> bool {
        self.uut.borrow().busy.val()
    }

    /// The rust-hdl block (for waveforms).
    pub fn block(&self) -> std::cell::Ref<'_, Sched> {
        self.uut.borrow()
    }

    fn drive(&self, i: &In, clock: bool) {
        if self.driven.get() == Some((*i, clock)) {
            return;
        }
        self.driven.set(Some((*i, clock)));
        let mut u = self.uut.borrow_mut();
        let c = i.cmd.unwrap_or_default();
        u.cmd_valid.next = i.cmd.is_some();
        u.cmd_handle.next = (c.handle as u64).into();
        u.cmd_tbs.next = (c.tbs as u64).into();
        u.cmd_tk.next = (c.tk as u64).into();
        u.cmd_priority.next = (c.priority as u64).into();
        u.cmd_tokens.next = (c.tokens as u8 as u64).into();
        u.done_valid.next = i.tb_done.is_some();
        u.done_sm.next = (i.tb_done.unwrap_or(0) as u64).into();
        let (ssm, stb) = i.tb_saved.unwrap_or((0, 0));
        u.saved_valid.next = i.tb_saved.is_some();
        u.saved_sm.next = (ssm as u64).into();
        u.saved_tb.next = (stb as u64).into();
        u.clock.next = Clock::from(clock);
        assert!(simulate(&mut *u, 400), "the scheduling framework's RTL did not settle");
    }

    /// The registers, in the model's terms (the first `sms` entries; invalid KSRT entries read
    /// as zero).
    pub fn state(&self) -> State {
        let u = self.uut.borrow();
        let smst = (0..self.sms)
            .map(|s| SmState {
                state: u.sm_state[s].q.val().to_u64() as u8,
                ksr_valid: u.sm_ksr_valid[s].q.val(),
                ksr: u.sm_ksr[s].q.val().to_u64() as u8,
                next_valid: u.sm_next_valid[s].q.val(),
                next: u.sm_next[s].q.val().to_u64() as u8,
                running_tbs: u.sm_running[s].q.val().to_u64() as u8,
            })
            .collect();
        let ksrt = (0..self.sms)
            .map(|k| {
                if !u.k_valid[k].q.val() {
                    return KsrState::default();
                }
                KsrState {
                    valid: true,
                    handle: u.k_handle[k].q.val().to_u64() as u16,
                    tbs: u.k_tbs[k].q.val().to_u64() as u32,
                    next_tb: u.k_next_tb[k].q.val().to_u64() as u32,
                    done_tbs: u.k_done[k].q.val().to_u64() as u32,
                    tk: u.k_tk[k].q.val().to_u64() as u8,
                    priority: u.k_priority[k].q.val().to_u64() as u8,
                    age: u.k_age[k].q.val().to_u64() as u16,
                    count: u.k_count[k].q.val().to_u64() as u8 as i8,
                    ptbq_len: u.q_len[k].q.val().to_u64() as u16,
                }
            })
            .collect();
        State { smst, ksrt, admitted: u.admitted.q.val().to_u64() as u16, issue_ptr: u.issue_ptr.q.val().to_u64() as u8 }
    }
}

impl Unit for SchedRtl {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        *self = SchedRtl::with_mode(self.sms, self.mode, self.faults);
    }
    fn outputs(&self, i: &In) -> Out {
        self.drive(i, false);
        let u = self.uut.borrow();
        let b4 = |b: Bits<4>| b.to_u64() as u8;
        Out {
            busy: u.busy.val(),
            cmd_taken: u.cmd_taken.val(),
            issue: u.issue_valid.val().then(|| TbIssue {
                sm: b4(u.issue_sm.val()),
                handle: u.issue_handle.val().to_u64() as u16,
                tb: u.issue_tb.val().to_u64() as u32,
                restore: u.issue_restore.val(),
            }),
            preempt: u.preempt_valid.val().then(|| b4(u.preempt_sm.val())),
            retired: u.retired_valid.val().then(|| u.retired_handle.val().to_u64() as u16),
        }
    }
    fn clock(&mut self, i: &In) {
        self.drive(i, false);
        self.drive(i, true);
    }
}
