//! `Sched`: the kernel scheduling framework (Tanasić, "Towards Multiprogrammed GPUs", PhD
//! thesis, 2016, §5.2.3; `docs/sched-framework.md`): command intake, the KSRT and SMST as
//! register arrays, the PTBQs in one RAM, the SM driver's issue logic, preemption, and the
//! policy engines (`Dss` for DSS and Equal Spatial Sharing, `Prio` for FCFS, NPQ and PPQ)
//! scanning the tables one entry per cycle.
//!
//! Interface: `mpgpu_spec::units::sched::fw`; the reference model is
//! `mpgpu_ref::units::framework::Framework`, and the co-simulation compares the two every cycle
//! (outputs, SMST, KSRT, PTBQ occupancy, tokens). The cycle contract (model docs): everything is
//! decided from the registers at the start of the cycle and the inputs, and written at the
//! edge. Each cycle:
//! - the finished block (`done_*`) may retire its kernel (its last block);
//! - one SM event, the lowest-index SM with one: a running SM left with no blocks whose kernel
//!   has no work is released (idle, a token back to its kernel); a reserved SM left with no
//!   blocks has finished its preemption (setup for its next kernel if that has work, else idle
//!   with the token back);
//! - the command (`cmd_*`) enters the lowest KSRT entry that is free and that no SM names;
//! - the policy engine's decision is applied if it still holds;
//! - at most one block is issued: the next running SM (round robin) with room whose kernel has
//!   work gets the head of the kernel's PTBQ, or else its next new block.
//!
//! Sizes (mpgpu-spec `fw`): 16 SMST and KSRT entries, 16 PTBQs of 256 entries in one
//! 4096 x 20-bit RAM (queue index, then entry), 4-bit priorities, 16-bit ages, 8-bit tokens.
//! Parameters: `sms` (1..=16) the SMs in use, `mode` the policy, and two test-only faults.

use crate::ram::AsyncRam;
use crate::{Dss, Prio};
use mpgpu_spec::units::sched::PolicyCode;
use mpgpu_spec::units::sched::fw::{
    AGE_BITS, HANDLE_BITS, INDEX_BITS, MAX_SMS, PRIORITY_BITS, PTBQ_ADDR_BITS, PTBQ_LEN_BITS, PTBQ_PTR_BITS, TBS_PER_SM_BITS, TB_BITS,
};
use rust_hdl::prelude::*;

const _: () = assert!(
    MAX_SMS == 16
        && INDEX_BITS == 4
        && TB_BITS == 20
        && HANDLE_BITS == 16
        && TBS_PER_SM_BITS == 5
        && PTBQ_PTR_BITS == 8
        && PTBQ_LEN_BITS == 9
        && PTBQ_ADDR_BITS == 12
        && PRIORITY_BITS == 4
        && AGE_BITS == 16
);

/// Test-only faults, for showing that the co-simulation catches a wrong block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedFaults {
    /// The PTBQ is popped last-in first-out.
    pub ptbq_lifo: bool,
    /// A released SM's token is not returned to its kernel.
    pub keep_token: bool,
}

type B4 = Bits<4>;
type Tb = Bits<20>;
type Rt = Bits<5>;

#[derive(LogicBlock)]
pub struct Sched {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A kernel launch is presented (held until `cmd_taken`).
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_handle: Signal<In, Bits<16>>,
    /// Blocks in the grid.
    pub cmd_tbs: Signal<In, Tb>,
    /// Blocks of the kernel one SM holds (1..=16).
    pub cmd_tk: Signal<In, Rt>,
    pub cmd_priority: Signal<In, B4>,
    /// DSS tokens, two's complement.
    pub cmd_tokens: Signal<In, Bits<8>>,
    /// A block finished on SM `done_sm`.
    pub done_valid: Signal<In, Bit>,
    pub done_sm: Signal<In, B4>,
    /// Block `saved_tb` of SM `saved_sm`'s kernel has been saved.
    pub saved_valid: Signal<In, Bit>,
    pub saved_sm: Signal<In, B4>,
    pub saved_tb: Signal<In, Tb>,
    /// The command enters the KSRT at this edge.
    pub cmd_taken: Signal<Out, Bit>,
    /// Start block `issue_tb` of launch `issue_handle` on SM `issue_sm` (restore its context if
    /// `issue_restore`).
    pub issue_valid: Signal<Out, Bit>,
    pub issue_sm: Signal<Out, B4>,
    pub issue_handle: Signal<Out, Bits<16>>,
    pub issue_tb: Signal<Out, Tb>,
    pub issue_restore: Signal<Out, Bit>,
    /// Start preempting SM `preempt_sm`.
    pub preempt_valid: Signal<Out, Bit>,
    pub preempt_sm: Signal<Out, B4>,
    /// Work is under way (a decision, an SM in setup or being preempted, an SM to release, a
    /// block to issue); from the registers only. While it is low and no input is present the
    /// clock may be gated.
    pub busy: Signal<Out, Bit>,
    /// Launch `retired_handle` has finished.
    pub retired_valid: Signal<Out, Bit>,
    pub retired_handle: Signal<Out, Bits<16>>,
    // SMST.
    pub sm_state: [DFF<Bits<2>>; 16],
    pub sm_ksr_valid: [DFF<Bit>; 16],
    pub sm_ksr: [DFF<B4>; 16],
    pub sm_next_valid: [DFF<Bit>; 16],
    pub sm_next: [DFF<B4>; 16],
    pub sm_running: [DFF<Rt>; 16],
    /// T_k of the SM's kernel (copied at setup).
    pub sm_tk: [DFF<Rt>; 16],
    // KSRT.
    pub k_valid: [DFF<Bit>; 16],
    pub k_handle: [DFF<Bits<16>>; 16],
    pub k_tbs: [DFF<Tb>; 16],
    pub k_next_tb: [DFF<Tb>; 16],
    pub k_done: [DFF<Tb>; 16],
    pub k_tk: [DFF<Rt>; 16],
    pub k_priority: [DFF<B4>; 16],
    pub k_age: [DFF<Bits<16>>; 16],
    pub k_count: [DFF<Bits<8>>; 16],
    pub q_head: [DFF<Bits<8>>; 16],
    pub q_len: [DFF<Bits<9>>; 16],
    pub admitted: DFF<Bits<16>>,
    pub issue_ptr: DFF<B4>,
    /// The PTBQs: entry `e` of queue `k` at address `k * 256 + e`.
    pub ptbq: AsyncRam<Tb, 12>,
    pub dss: Dss,
    pub prio: Prio,
    // Parameters.
    ids: [Constant<B4>; 16],
    /// Entry k is within the `sms` in use.
    in_use: [Constant<Bit>; 16],
    onehot: [Constant<Bits<16>>; 16],
    last: Constant<B4>,
    use_dss: Constant<Bit>,
    bias: Constant<Bits<8>>,
    all_ones: Constant<Bits<16>>,
    fault_lifo: Constant<Bit>,
    fault_keep_token: Constant<Bit>,
    // Per kernel.
    /// Kernel k's bit of `hw_vec` (it has blocks to issue).
    hw_bit: [Signal<Local, Bits<16>>; 16],
    hw_vec: Signal<Local, Bits<16>>,
    free: [Signal<Local, Bit>; 16],
    named: [Signal<Local, Bit>; 16],
    up_release: [Signal<Local, Bits<8>>; 16],
    up_from: [Signal<Local, Bits<8>>; 16],
    down_act: [Signal<Local, Bits<8>>; 16],
    push: [Signal<Local, Bit>; 16],
    pop: [Signal<Local, Bit>; 16],
    // Per SM.
    left: [Signal<Local, Rt>; 16],
    event: [Signal<Local, Bit>; 16],
    cand: [Signal<Local, Bit>; 16],
    owns: [Signal<Local, Rt>; 16],
    // Retirement.
    done_k: Signal<Local, B4>,
    retire: Signal<Local, Bit>,
    done_hit: Signal<Local, Bit>,
    // The SM event.
    ev_any: Signal<Local, Bit>,
    ev_sm: Signal<Local, B4>,
    ev_setup: Signal<Local, Bit>,
    ev_token: Signal<Local, Bit>,
    ev_back: Signal<Local, B4>,
    ev_tk: Signal<Local, Rt>,
    ev_state: Signal<Local, Bits<2>>,
    ev_ksr: Signal<Local, B4>,
    ev_next_valid: Signal<Local, Bit>,
    ev_next: Signal<Local, B4>,
    // Admission.
    admit: Signal<Local, Bit>,
    admit_k: Signal<Local, B4>,
    trigger: Signal<Local, Bit>,
    // Table reads for the engines.
    a: Signal<Local, B4>,
    a_state: Signal<Local, Bits<2>>,
    a_ksr_valid: Signal<Local, Bit>,
    a_ksr: Signal<Local, B4>,
    ak_valid: Signal<Local, Bit>,
    ak_count: Signal<Local, Bits<8>>,
    ak_running: Signal<Local, Bit>,
    ak_priority: Signal<Local, B4>,
    ak_age: Signal<Local, Bits<16>>,
    ak_tk: Signal<Local, Rt>,
    ak_tbs: Signal<Local, Tb>,
    ak_next_tb: Signal<Local, Tb>,
    ak_qlen: Signal<Local, Bits<9>>,
    ak_owned: Signal<Local, Rt>,
    ak_remaining: Signal<Local, Tb>,
    ak_product: Signal<Local, Tb>,
    partial: [Signal<Local, Tb>; 5],
    smk_priority: Signal<Local, B4>,
    smk_age: Signal<Local, Bits<16>>,
    count_max: Signal<Local, Bits<8>>,
    count_min: Signal<Local, Bits<8>>,
    // The decision.
    act: Signal<Local, Bits<2>>,
    act_sm: Signal<Local, B4>,
    act_k: Signal<Local, B4>,
    act_from: Signal<Local, B4>,
    act_k_valid: Signal<Local, Bit>,
    act_k_tk: Signal<Local, Rt>,
    act_sm_state: Signal<Local, Bits<2>>,
    act_sm_ksr_valid: Signal<Local, Bit>,
    act_sm_ksr: Signal<Local, B4>,
    target_ok: Signal<Local, Bit>,
    assign_ok: Signal<Local, Bit>,
    reserve_ok: Signal<Local, Bit>,
    // Issue.
    iss_any: Signal<Local, Bit>,
    iss_hi: Signal<Local, Bit>,
    hi_mask: Signal<Local, Bits<16>>,
    iss_sm_lo: Signal<Local, B4>,
    iss_sm_hi: Signal<Local, B4>,
    iss_sm: Signal<Local, B4>,
    iss_k: Signal<Local, B4>,
    iss_qlen: Signal<Local, Bits<9>>,
    iss_head: Signal<Local, Bits<8>>,
    iss_restore: Signal<Local, Bit>,
    // The PTBQ push.
    sv_k: Signal<Local, B4>,
    sv_head: Signal<Local, Bits<8>>,
    sv_len: Signal<Local, Bits<9>>,
}

impl Sched {
    /// A framework for `sms` SMs (1..=16) in policy `policy`, with the given test-only faults.
    pub fn new(sms: usize, policy: PolicyCode, faults: SchedFaults) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "Sched supports 1..={MAX_SMS} SMs, not {sms}");
        Self {
            clock: Default::default(),
            cmd_valid: Default::default(),
            cmd_handle: Default::default(),
            cmd_tbs: Default::default(),
            cmd_tk: Default::default(),
            cmd_priority: Default::default(),
            cmd_tokens: Default::default(),
            done_valid: Default::default(),
            done_sm: Default::default(),
            saved_valid: Default::default(),
            saved_sm: Default::default(),
            saved_tb: Default::default(),
            cmd_taken: Default::default(),
            issue_valid: Default::default(),
            issue_sm: Default::default(),
            issue_handle: Default::default(),
            issue_tb: Default::default(),
            issue_restore: Default::default(),
            preempt_valid: Default::default(),
            preempt_sm: Default::default(),
            busy: Default::default(),
            retired_valid: Default::default(),
            retired_handle: Default::default(),
            sm_state: Default::default(),
            sm_ksr_valid: Default::default(),
            sm_ksr: Default::default(),
            sm_next_valid: Default::default(),
            sm_next: Default::default(),
            sm_running: Default::default(),
            sm_tk: Default::default(),
            k_valid: Default::default(),
            k_handle: Default::default(),
            k_tbs: Default::default(),
            k_next_tb: Default::default(),
            k_done: Default::default(),
            k_tk: Default::default(),
            k_priority: Default::default(),
            k_age: Default::default(),
            k_count: Default::default(),
            q_head: Default::default(),
            q_len: Default::default(),
            admitted: Default::default(),
            issue_ptr: Default::default(),
            ptbq: Default::default(),
            dss: Dss::new(sms, false),
            prio: Prio::new(sms, policy.prio_engine_mode(), false),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            in_use: std::array::from_fn(|i| Constant::new(i < sms)),
            onehot: std::array::from_fn(|i| Constant::new((1u64 << i).into())),
            last: Constant::new(((sms - 1) as u64).into()),
            use_dss: Constant::new(policy.uses_dss()),
            bias: Constant::new(0x80u64.into()),
            all_ones: Constant::new(0xffffu64.into()),
            fault_lifo: Constant::new(faults.ptbq_lifo),
            fault_keep_token: Constant::new(faults.keep_token),
            hw_bit: Default::default(),
            hw_vec: Default::default(),
            free: Default::default(),
            named: Default::default(),
            up_release: Default::default(),
            up_from: Default::default(),
            down_act: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            left: Default::default(),
            event: Default::default(),
            cand: Default::default(),
            owns: Default::default(),
            done_k: Default::default(),
            retire: Default::default(),
            done_hit: Default::default(),
            ev_any: Default::default(),
            ev_sm: Default::default(),
            ev_setup: Default::default(),
            ev_token: Default::default(),
            ev_back: Default::default(),
            ev_tk: Default::default(),
            ev_state: Default::default(),
            ev_ksr: Default::default(),
            ev_next_valid: Default::default(),
            ev_next: Default::default(),
            admit: Default::default(),
            admit_k: Default::default(),
            trigger: Default::default(),
            a: Default::default(),
            a_state: Default::default(),
            a_ksr_valid: Default::default(),
            a_ksr: Default::default(),
            ak_valid: Default::default(),
            ak_count: Default::default(),
            ak_running: Default::default(),
            ak_priority: Default::default(),
            ak_age: Default::default(),
            ak_tk: Default::default(),
            ak_tbs: Default::default(),
            ak_next_tb: Default::default(),
            ak_qlen: Default::default(),
            ak_owned: Default::default(),
            ak_remaining: Default::default(),
            ak_product: Default::default(),
            partial: Default::default(),
            smk_priority: Default::default(),
            smk_age: Default::default(),
            count_max: Default::default(),
            count_min: Default::default(),
            act: Default::default(),
            act_sm: Default::default(),
            act_k: Default::default(),
            act_from: Default::default(),
            act_k_valid: Default::default(),
            act_k_tk: Default::default(),
            act_sm_state: Default::default(),
            act_sm_ksr_valid: Default::default(),
            act_sm_ksr: Default::default(),
            target_ok: Default::default(),
            assign_ok: Default::default(),
            reserve_ok: Default::default(),
            iss_any: Default::default(),
            iss_hi: Default::default(),
            hi_mask: Default::default(),
            iss_sm_lo: Default::default(),
            iss_sm_hi: Default::default(),
            iss_sm: Default::default(),
            iss_k: Default::default(),
            iss_qlen: Default::default(),
            iss_head: Default::default(),
            iss_restore: Default::default(),
            sv_k: Default::default(),
            sv_head: Default::default(),
            sv_len: Default::default(),
        }
    }

    /// Marks every input as driven from outside (a testbench or the Verilog's ports) and
    /// connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.cmd_valid.connect();
        self.cmd_handle.connect();
        self.cmd_tbs.connect();
        self.cmd_tk.connect();
        self.cmd_priority.connect();
        self.cmd_tokens.connect();
        self.done_valid.connect();
        self.done_sm.connect();
        self.saved_valid.connect();
        self.saved_sm.connect();
        self.saved_tb.connect();
        self.connect_all();
    }
}

impl Logic for Sched {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, admitted, issue_ptr);
        // (literal bounds: 16 = MAX_SMS)
        for s in 0..16 {
            self.sm_state[s].clock.next = self.clock.val();
            self.sm_ksr_valid[s].clock.next = self.clock.val();
            self.sm_ksr[s].clock.next = self.clock.val();
            self.sm_next_valid[s].clock.next = self.clock.val();
            self.sm_next[s].clock.next = self.clock.val();
            self.sm_running[s].clock.next = self.clock.val();
            self.sm_tk[s].clock.next = self.clock.val();
            self.sm_state[s].d.next = self.sm_state[s].q.val();
            self.sm_ksr_valid[s].d.next = self.sm_ksr_valid[s].q.val();
            self.sm_ksr[s].d.next = self.sm_ksr[s].q.val();
            self.sm_next_valid[s].d.next = self.sm_next_valid[s].q.val();
            self.sm_next[s].d.next = self.sm_next[s].q.val();
            self.sm_running[s].d.next = self.sm_running[s].q.val();
            self.sm_tk[s].d.next = self.sm_tk[s].q.val();
        }
        for k in 0..16 {
            self.k_valid[k].clock.next = self.clock.val();
            self.k_handle[k].clock.next = self.clock.val();
            self.k_tbs[k].clock.next = self.clock.val();
            self.k_next_tb[k].clock.next = self.clock.val();
            self.k_done[k].clock.next = self.clock.val();
            self.k_tk[k].clock.next = self.clock.val();
            self.k_priority[k].clock.next = self.clock.val();
            self.k_age[k].clock.next = self.clock.val();
            self.k_count[k].clock.next = self.clock.val();
            self.q_head[k].clock.next = self.clock.val();
            self.q_len[k].clock.next = self.clock.val();
            self.k_valid[k].d.next = self.k_valid[k].q.val();
            self.k_handle[k].d.next = self.k_handle[k].q.val();
            self.k_tbs[k].d.next = self.k_tbs[k].q.val();
            self.k_next_tb[k].d.next = self.k_next_tb[k].q.val();
            self.k_done[k].d.next = self.k_done[k].q.val();
            self.k_tk[k].d.next = self.k_tk[k].q.val();
            self.k_priority[k].d.next = self.k_priority[k].q.val();
            self.k_age[k].d.next = self.k_age[k].q.val();
            self.k_count[k].d.next = self.k_count[k].q.val();
            self.q_head[k].d.next = self.q_head[k].q.val();
            self.q_len[k].d.next = self.q_len[k].q.val();
        }
        self.ptbq.clock.next = self.clock.val();
        self.dss.clock.next = self.clock.val();
        self.prio.clock.next = self.clock.val();

        // Kernels with blocks to issue (new ones, or preempted ones in their PTBQ).
        for k in 0..16 {
            self.hw_bit[k].next = 0.into();
            if self.k_valid[k].q.val() & ((self.k_next_tb[k].q.val() < self.k_tbs[k].q.val()) | (self.q_len[k].q.val() != 0)) {
                self.hw_bit[k].next = self.onehot[k].val();
            }
        }
        self.hw_vec.next = self.hw_bit[0].val()
            | self.hw_bit[1].val()
            | self.hw_bit[2].val()
            | self.hw_bit[3].val()
            | self.hw_bit[4].val()
            | self.hw_bit[5].val()
            | self.hw_bit[6].val()
            | self.hw_bit[7].val()
            | self.hw_bit[8].val()
            | self.hw_bit[9].val()
            | self.hw_bit[10].val()
            | self.hw_bit[11].val()
            | self.hw_bit[12].val()
            | self.hw_bit[13].val()
            | self.hw_bit[14].val()
            | self.hw_bit[15].val();

        // Blocks left on each SM after this cycle's completion and save.
        for s in 0..16 {
            self.left[s].next = self.sm_running[s].q.val();
            if self.done_valid.val() & (self.done_sm.val() == self.ids[s].val()) {
                if self.saved_valid.val() & (self.saved_sm.val() == self.ids[s].val()) {
                    self.left[s].next = self.sm_running[s].q.val() - 2;
                } else {
                    self.left[s].next = self.sm_running[s].q.val() - 1;
                }
            } else if self.saved_valid.val() & (self.saved_sm.val() == self.ids[s].val()) {
                self.left[s].next = self.sm_running[s].q.val() - 1;
            }
        }

        // Retirement: the finished block was its kernel's last.
        self.done_k.next = 0.into();
        self.sv_k.next = 0.into();
        for s in 0..16 {
            if self.done_sm.val() == self.ids[s].val() {
                self.done_k.next = self.sm_ksr[s].q.val();
            }
            if self.saved_sm.val() == self.ids[s].val() {
                self.sv_k.next = self.sm_ksr[s].q.val();
            }
        }
        self.done_hit.next = false;
        self.retired_handle.next = 0.into();
        self.sv_head.next = 0.into();
        self.sv_len.next = 0.into();
        for k in 0..16 {
            if self.done_k.val() == self.ids[k].val() {
                self.done_hit.next = self.k_valid[k].q.val() & ((self.k_done[k].q.val() + 1) == self.k_tbs[k].q.val());
                self.retired_handle.next = self.k_handle[k].q.val();
            }
            if self.sv_k.val() == self.ids[k].val() {
                self.sv_head.next = self.q_head[k].q.val();
                self.sv_len.next = self.q_len[k].q.val();
            }
        }
        self.retire.next = self.done_valid.val() & self.done_hit.val();
        self.retired_valid.next = self.retire.val();

        // The SM event: the lowest-index SM with one.
        for s in 0..16 {
            self.event[s].next = (self.left[s].val() == 0)
                & (((self.sm_state[s].q.val() == 2) & !self.hw_vec.val().get_bit(self.sm_ksr[s].q.val().index()))
                    | (self.sm_state[s].q.val() == 3));
        }
        self.ev_any.next = false;
        self.ev_sm.next = 0.into();
        for j in 0..16 {
            if self.event[15 - j].val() {
                self.ev_any.next = true;
                self.ev_sm.next = self.ids[15 - j].val();
            }
        }
        self.ev_state.next = 0.into();
        self.ev_ksr.next = 0.into();
        self.ev_next_valid.next = false;
        self.ev_next.next = 0.into();
        for s in 0..16 {
            if self.ev_sm.val() == self.ids[s].val() {
                self.ev_state.next = self.sm_state[s].q.val();
                self.ev_ksr.next = self.sm_ksr[s].q.val();
                self.ev_next_valid.next = self.sm_next_valid[s].q.val();
                self.ev_next.next = self.sm_next[s].q.val();
            }
        }
        // A completed preemption goes to setup if its next kernel has work.
        self.ev_setup.next = (self.ev_state.val() == 3) & self.ev_next_valid.val() & self.hw_vec.val().get_bit(self.ev_next.val().index());
        // Otherwise the SM goes idle and a token goes back.
        self.ev_back.next = self.ev_ksr.val();
        if self.ev_state.val() == 3 {
            self.ev_back.next = self.ev_next.val();
        }
        self.ev_token.next = self.ev_any.val() & !self.ev_setup.val() & ((self.ev_state.val() == 2) | self.ev_next_valid.val());
        self.ev_tk.next = 0.into();
        for k in 0..16 {
            if self.ev_next.val() == self.ids[k].val() {
                self.ev_tk.next = self.k_tk[k].q.val();
            }
        }

        // Admission: the lowest free KSRT entry that no SM names.
        for k in 0..16 {
            self.named[k].next = false;
        }
        for s in 0..16 {
            for k in 0..16 {
                if (self.sm_ksr_valid[s].q.val() & (self.sm_ksr[s].q.val() == self.ids[k].val()))
                    | (self.sm_next_valid[s].q.val() & (self.sm_next[s].q.val() == self.ids[k].val()))
                {
                    self.named[k].next = true;
                }
            }
        }
        self.admit.next = false;
        self.admit_k.next = 0.into();
        for j in 0..16 {
            self.free[15 - j].next = !self.k_valid[15 - j].q.val() & !self.named[15 - j].val() & self.in_use[15 - j].val();
            if self.cmd_valid.val() & self.free[15 - j].val() {
                self.admit.next = true;
                self.admit_k.next = self.ids[15 - j].val();
            }
        }
        self.cmd_taken.next = self.admit.val();
        self.trigger.next = self.retire.val() | self.admit.val() | (self.ev_any.val() & !self.ev_setup.val());

        // The policy engine reads the tables at the addresses it drives.
        self.a.next = self.prio.addr.val();
        if self.use_dss.val() {
            self.a.next = self.dss.addr.val();
        }
        self.a_state.next = 0.into();
        self.a_ksr_valid.next = false;
        self.a_ksr.next = 0.into();
        for s in 0..16 {
            if self.a.val() == self.ids[s].val() {
                self.a_state.next = self.sm_state[s].q.val();
                self.a_ksr_valid.next = self.sm_ksr_valid[s].q.val();
                self.a_ksr.next = self.sm_ksr[s].q.val();
            }
        }
        self.ak_valid.next = false;
        self.ak_count.next = 0.into();
        self.ak_priority.next = 0.into();
        self.ak_age.next = 0.into();
        self.ak_tk.next = 0.into();
        self.ak_tbs.next = 0.into();
        self.ak_next_tb.next = 0.into();
        self.ak_qlen.next = 0.into();
        self.smk_priority.next = 0.into();
        self.smk_age.next = 0.into();
        self.count_max.next = 0.into();
        self.count_min.next = 0.into();
        for k in 0..16 {
            if self.a.val() == self.ids[k].val() {
                self.ak_valid.next = self.k_valid[k].q.val();
                self.ak_count.next = self.k_count[k].q.val();
                self.ak_priority.next = self.k_priority[k].q.val();
                self.ak_age.next = self.k_age[k].q.val();
                self.ak_tk.next = self.k_tk[k].q.val();
                self.ak_tbs.next = self.k_tbs[k].q.val();
                self.ak_next_tb.next = self.k_next_tb[k].q.val();
                self.ak_qlen.next = self.q_len[k].q.val();
            }
            if self.a_ksr_valid.val() & (self.a_ksr.val() == self.ids[k].val()) {
                self.smk_priority.next = self.k_priority[k].q.val();
                self.smk_age.next = self.k_age[k].q.val();
            }
            if self.dss.kmax.val() == self.ids[k].val() {
                self.count_max.next = self.k_count[k].q.val();
            }
            if self.dss.kmin.val() == self.ids[k].val() {
                self.count_min.next = self.k_count[k].q.val();
            }
        }
        // Whether the kernel at `a` runs anywhere, and the SMs it has or is getting.
        self.ak_running.next = false;
        for s in 0..16 {
            self.owns[s].next = 0.into();
            if self.sm_ksr_valid[s].q.val() & (self.sm_ksr[s].q.val() == self.a.val()) {
                if self.sm_state[s].q.val() == 2 {
                    self.ak_running.next = true;
                }
                if (self.sm_state[s].q.val() == 1) | (self.sm_state[s].q.val() == 2) {
                    self.owns[s].next = 1.into();
                }
            }
            if (self.sm_state[s].q.val() == 3) & self.sm_next_valid[s].q.val() & (self.sm_next[s].q.val() == self.a.val()) {
                self.owns[s].next = 1.into();
            }
        }
        self.ak_owned.next = self.owns[0].val()
            + self.owns[1].val()
            + self.owns[2].val()
            + self.owns[3].val()
            + self.owns[4].val()
            + self.owns[5].val()
            + self.owns[6].val()
            + self.owns[7].val()
            + self.owns[8].val()
            + self.owns[9].val()
            + self.owns[10].val()
            + self.owns[11].val()
            + self.owns[12].val()
            + self.owns[13].val()
            + self.owns[14].val()
            + self.owns[15].val();
        // Blocks left, and owned x T_k (shift and add: at most 16 x 16).
        self.ak_remaining.next = self.ak_tbs.val() - self.ak_next_tb.val() + bit_cast::<20, 9>(self.ak_qlen.val());
        for b in 0..5 {
            self.partial[b].next = 0.into();
        }
        if self.ak_tk.val().get_bit(0) {
            self.partial[0].next = bit_cast::<20, 5>(self.ak_owned.val());
        }
        if self.ak_tk.val().get_bit(1) {
            self.partial[1].next = bit_cast::<20, 5>(self.ak_owned.val()) << 1;
        }
        if self.ak_tk.val().get_bit(2) {
            self.partial[2].next = bit_cast::<20, 5>(self.ak_owned.val()) << 2;
        }
        if self.ak_tk.val().get_bit(3) {
            self.partial[3].next = bit_cast::<20, 5>(self.ak_owned.val()) << 3;
        }
        if self.ak_tk.val().get_bit(4) {
            self.partial[4].next = bit_cast::<20, 5>(self.ak_owned.val()) << 4;
        }
        self.ak_product.next = self.partial[0].val() + self.partial[1].val() + self.partial[2].val() + self.partial[3].val() + self.partial[4].val();
        // The engines' ports (the one not in use sees no trigger and stays idle).
        self.dss.trigger.next = self.trigger.val() & self.use_dss.val();
        self.dss.sm_state.next = self.a_state.val();
        self.dss.sm_ksr_valid.next = self.a_ksr_valid.val();
        self.dss.sm_ksr.next = self.a_ksr.val();
        self.dss.k_valid.next = self.ak_valid.val();
        self.dss.k_count.next = self.ak_count.val() ^ self.bias.val();
        self.dss.k_has_work.next = self.hw_vec.val().get_bit(self.a.val().index());
        self.dss.k_running.next = self.ak_running.val();
        self.dss.count_max.next = self.count_max.val() ^ self.bias.val();
        self.dss.count_min.next = self.count_min.val() ^ self.bias.val();
        self.prio.trigger.next = self.trigger.val() & !self.use_dss.val();
        self.prio.sm_state.next = self.a_state.val();
        self.prio.sm_ksr_valid.next = self.a_ksr_valid.val();
        self.prio.sm_ksr.next = self.a_ksr.val();
        self.prio.smk_priority.next = self.smk_priority.val();
        self.prio.smk_age.next = self.smk_age.val();
        self.prio.k_valid.next = self.ak_valid.val();
        self.prio.k_has_work.next = self.hw_vec.val().get_bit(self.a.val().index());
        self.prio.k_priority.next = self.ak_priority.val();
        self.prio.k_age.next = self.ak_age.val();
        self.prio.k_wants_more.next = self.ak_valid.val() & (self.ak_product.val() < self.ak_remaining.val());

        self.busy.next = self.dss.busy.val() | self.prio.busy.val();
        for s in 0..16 {
            if (self.sm_state[s].q.val() == 1)
                | (self.sm_state[s].q.val() == 3)
                | ((self.sm_state[s].q.val() == 2)
                    & (((self.sm_running[s].q.val() == 0) & !self.hw_vec.val().get_bit(self.sm_ksr[s].q.val().index()))
                        | ((self.sm_running[s].q.val() < self.sm_tk[s].q.val()) & self.hw_vec.val().get_bit(self.sm_ksr[s].q.val().index()))))
            {
                self.busy.next = true;
            }
        }
        // The decision, if it still holds.
        self.act.next = self.prio.act.val();
        self.act_sm.next = self.prio.act_sm.val();
        self.act_k.next = self.prio.act_kernel.val();
        self.act_from.next = self.prio.act_from.val();
        if self.use_dss.val() {
            self.act.next = self.dss.act.val();
            self.act_sm.next = self.dss.act_sm.val();
            self.act_k.next = self.dss.act_kernel.val();
            self.act_from.next = self.dss.act_from.val();
        }
        self.act_k_valid.next = false;
        self.act_k_tk.next = 0.into();
        for k in 0..16 {
            if self.act_k.val() == self.ids[k].val() {
                self.act_k_valid.next = self.k_valid[k].q.val();
                self.act_k_tk.next = self.k_tk[k].q.val();
            }
        }
        self.act_sm_state.next = 0.into();
        self.act_sm_ksr_valid.next = false;
        self.act_sm_ksr.next = 0.into();
        for s in 0..16 {
            if self.act_sm.val() == self.ids[s].val() {
                self.act_sm_state.next = self.sm_state[s].q.val();
                self.act_sm_ksr_valid.next = self.sm_ksr_valid[s].q.val();
                self.act_sm_ksr.next = self.sm_ksr[s].q.val();
            }
        }
        self.target_ok.next = self.act_k_valid.val() & !(self.retire.val() & (self.done_k.val() == self.act_k.val()));
        self.assign_ok.next = (self.act.val() == 1) & (self.act_sm_state.val() == 0) & self.target_ok.val();
        self.reserve_ok.next = (self.act.val() == 2)
            & (self.act_sm_state.val() == 2)
            & self.act_sm_ksr_valid.val()
            & (self.act_sm_ksr.val() == self.act_from.val())
            & self.target_ok.val()
            & !(self.ev_any.val() & (self.ev_sm.val() == self.act_sm.val()));
        self.preempt_valid.next = self.reserve_ok.val();
        self.preempt_sm.next = 0.into();
        if self.reserve_ok.val() {
            self.preempt_sm.next = self.act_sm.val();
        }

        // Issue: the next running SM, round robin, with room and a kernel with work.
        for s in 0..16 {
            self.cand[s].next = (self.sm_state[s].q.val() == 2)
                & (self.sm_running[s].q.val() < self.sm_tk[s].q.val())
                & self.hw_vec.val().get_bit(self.sm_ksr[s].q.val().index())
                & !(self.reserve_ok.val() & (self.act_sm.val() == self.ids[s].val()));
        }
        // SMs at or above the round-robin pointer.
        self.hi_mask.next = self.all_ones.val() << self.issue_ptr.q.val();
        self.iss_any.next = false;
        self.iss_hi.next = false;
        self.iss_sm_lo.next = 0.into();
        self.iss_sm_hi.next = 0.into();
        for j in 0..16 {
            if self.cand[15 - j].val() {
                self.iss_any.next = true;
                self.iss_sm_lo.next = self.ids[15 - j].val();
                if self.hi_mask.val().get_bit(15 - j) {
                    self.iss_hi.next = true;
                    self.iss_sm_hi.next = self.ids[15 - j].val();
                }
            }
        }
        self.iss_sm.next = self.iss_sm_lo.val();
        if self.iss_hi.val() {
            self.iss_sm.next = self.iss_sm_hi.val();
        }
        self.iss_k.next = 0.into();
        for s in 0..16 {
            if self.iss_sm.val() == self.ids[s].val() {
                self.iss_k.next = self.sm_ksr[s].q.val();
            }
        }
        self.issue_handle.next = 0.into();
        self.iss_qlen.next = 0.into();
        self.iss_head.next = 0.into();
        self.issue_tb.next = 0.into();
        for k in 0..16 {
            if self.iss_k.val() == self.ids[k].val() {
                self.issue_handle.next = self.k_handle[k].q.val();
                self.iss_qlen.next = self.q_len[k].q.val();
                self.iss_head.next = self.q_head[k].q.val();
                self.issue_tb.next = self.k_next_tb[k].q.val();
            }
        }
        self.iss_restore.next = self.iss_qlen.val() != 0;
        // FIFO: the head; the LIFO fault takes the tail.
        self.ptbq.read_address.next = (bit_cast::<12, 4>(self.iss_k.val()) << 8) | bit_cast::<12, 8>(self.iss_head.val());
        if self.fault_lifo.val() {
            self.ptbq.read_address.next = (bit_cast::<12, 4>(self.iss_k.val()) << 8)
                | bit_cast::<12, 8>(self.iss_head.val() + bit_cast::<8, 9>(self.iss_qlen.val()) - 1);
        }
        if self.iss_restore.val() {
            self.issue_tb.next = self.ptbq.read_data.val();
        }
        self.issue_valid.next = self.iss_any.val();
        self.issue_sm.next = self.iss_sm.val();
        self.issue_restore.next = self.iss_any.val() & self.iss_restore.val();
        if !self.iss_any.val() {
            self.issue_sm.next = 0.into();
            self.issue_handle.next = 0.into();
            self.issue_tb.next = 0.into();
        }

        // A saved block goes to the tail of its kernel's PTBQ.
        self.ptbq.write_enable.next = self.saved_valid.val();
        self.ptbq.write_address.next = (bit_cast::<12, 4>(self.sv_k.val()) << 8) | bit_cast::<12, 8>(self.sv_head.val() + bit_cast::<8, 9>(self.sv_len.val()));
        self.ptbq.write_data.next = self.saved_tb.val();

        // Next state: the KSRT.
        for k in 0..16 {
            self.up_release[k].next = 0.into();
            self.up_from[k].next = 0.into();
            self.down_act[k].next = 0.into();
            if self.ev_token.val() & !self.fault_keep_token.val() & (self.ev_back.val() == self.ids[k].val()) {
                self.up_release[k].next = 1.into();
            }
            if self.reserve_ok.val() & (self.act_from.val() == self.ids[k].val()) {
                self.up_from[k].next = 1.into();
            }
            if (self.assign_ok.val() | self.reserve_ok.val()) & (self.act_k.val() == self.ids[k].val()) {
                self.down_act[k].next = 1.into();
            }
            self.k_count[k].d.next = self.k_count[k].q.val() + self.up_release[k].val() + self.up_from[k].val() - self.down_act[k].val();
            if self.done_valid.val() & (self.done_k.val() == self.ids[k].val()) {
                self.k_done[k].d.next = self.k_done[k].q.val() + 1;
                if self.retire.val() {
                    self.k_valid[k].d.next = false;
                }
            }
            self.push[k].next = self.saved_valid.val() & (self.sv_k.val() == self.ids[k].val());
            self.pop[k].next = self.iss_any.val() & self.iss_restore.val() & (self.iss_k.val() == self.ids[k].val());
            if self.push[k].val() & !self.pop[k].val() {
                self.q_len[k].d.next = self.q_len[k].q.val() + 1;
            }
            if self.pop[k].val() & !self.push[k].val() {
                self.q_len[k].d.next = self.q_len[k].q.val() - 1;
            }
            if self.pop[k].val() & !self.fault_lifo.val() {
                self.q_head[k].d.next = self.q_head[k].q.val() + 1;
            }
            if self.iss_any.val() & !self.iss_restore.val() & (self.iss_k.val() == self.ids[k].val()) {
                self.k_next_tb[k].d.next = self.k_next_tb[k].q.val() + 1;
            }
            if self.admit.val() & (self.admit_k.val() == self.ids[k].val()) {
                self.k_valid[k].d.next = true;
                self.k_handle[k].d.next = self.cmd_handle.val();
                self.k_tbs[k].d.next = self.cmd_tbs.val();
                self.k_next_tb[k].d.next = 0.into();
                self.k_done[k].d.next = 0.into();
                self.k_tk[k].d.next = self.cmd_tk.val();
                self.k_priority[k].d.next = self.cmd_priority.val();
                self.k_age[k].d.next = self.admitted.q.val();
                self.k_count[k].d.next = self.cmd_tokens.val();
                self.q_head[k].d.next = 0.into();
                self.q_len[k].d.next = 0.into();
            }
        }
        if self.admit.val() {
            self.admitted.d.next = self.admitted.q.val() + 1;
        }
        if self.iss_any.val() {
            self.issue_ptr.d.next = self.iss_sm.val() + 1;
            if self.iss_sm.val() == self.last.val() {
                self.issue_ptr.d.next = 0.into();
            }
        }

        // Next state: the SMST.
        for s in 0..16 {
            self.sm_running[s].d.next = self.left[s].val();
            if self.sm_state[s].q.val() == 1 {
                self.sm_state[s].d.next = 2.into();
            }
            if self.assign_ok.val() & (self.act_sm.val() == self.ids[s].val()) {
                self.sm_state[s].d.next = 1.into();
                self.sm_ksr_valid[s].d.next = true;
                self.sm_ksr[s].d.next = self.act_k.val();
                self.sm_next_valid[s].d.next = false;
                self.sm_next[s].d.next = 0.into();
                self.sm_running[s].d.next = 0.into();
                self.sm_tk[s].d.next = self.act_k_tk.val();
            }
            if self.reserve_ok.val() & (self.act_sm.val() == self.ids[s].val()) {
                self.sm_state[s].d.next = 3.into();
                self.sm_next_valid[s].d.next = true;
                self.sm_next[s].d.next = self.act_k.val();
            }
            if self.ev_any.val() & (self.ev_sm.val() == self.ids[s].val()) {
                self.sm_next_valid[s].d.next = false;
                self.sm_next[s].d.next = 0.into();
                self.sm_running[s].d.next = 0.into();
                if self.ev_setup.val() {
                    self.sm_state[s].d.next = 1.into();
                    self.sm_ksr_valid[s].d.next = true;
                    self.sm_ksr[s].d.next = self.ev_next.val();
                    self.sm_tk[s].d.next = self.ev_tk.val();
                } else {
                    self.sm_state[s].d.next = 0.into();
                    self.sm_ksr_valid[s].d.next = false;
                    self.sm_ksr[s].d.next = 0.into();
                }
            }
            if self.iss_any.val() & (self.iss_sm.val() == self.ids[s].val()) {
                self.sm_running[s].d.next = self.left[s].val() + 1;
            }
        }
    }
}
