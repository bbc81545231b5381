//! `Sched`: the kernel scheduling framework (Tanasić, "Towards Multiprogrammed GPUs", PhD
//! thesis, 2016, §5.2.3; `docs/sched-framework.md`): command intake, the KSRT and SMST as
//! register arrays, the PTBQs in one RAM, the SM driver's issue logic, preemption, and the
//! policy engines (`Dss` for DSS and Equal Spatial Sharing, `Prio` for FCFS, NPQ and PPQ)
//! scanning the tables one entry per cycle.
//!
//! Interface: `mpgpu_spec::units::sched::fw`; the reference model is
//! `mpgpu_ref::units::framework::Framework`, and the co-simulation compares the two every cycle
//! (outputs, SMST, KSRT, PTBQ occupancy, tokens, pipeline registers). The cycle contract (model
//! docs, `docs/sched-framework.md`): everything is decided from the registers at the start of
//! the cycle and the inputs, and written at the edge; what a cycle chooses from the registers
//! is kept in a pipeline register and applied in the next cycle. Each cycle:
//! - the block finished the cycle before (`dn_*`, registered with the finishing SM's kernel)
//!   is counted and may retire its kernel (its last block); the block finished now
//!   (`done_*`) leaves its SM and is registered;
//! - the block saved the cycle before (`sv_*`, registered with the saving SM's kernel) enters
//!   that kernel's PTBQ and blocks left; the block saved now (`saved_*`) is registered;
//! - the command (`cmd_*`) enters the entry picked the cycle before (`ksrt.free_*`) if it is
//!   still free;
//! - the SM event picked the cycle before (`smst.evq_*`) is applied (both its stages left out
//!   every SM an edge between could change): a released SM goes idle with a token back to its
//!   kernel; a reserved SM with no blocks goes to setup for its next kernel (if that had work
//!   when the SM was found with the event, `smst.evw_q`) or idle with the token back;
//! - the decision checked the cycle before (`app_*`) is applied, and the engine's decision of
//!   the cycle before (`dec_*`) is checked into `app_*` if it holds;
//! - the block picked two cycles before (`gr_*`) is issued: the head of the kernel's PTBQ, or
//!   else its next new block;
//! - the SM picked the cycle before (`issue.granted`, one-hot) is encoded with its kernel into
//!   `gr_*`, unless the registered decision reserves it;
//! - the SMs with an event and those ready for an issue are found (`smst.evc_q`, `rdy_q`), and
//!   the next event and pick (none while a pick is in its second stage) are chosen among those
//!   found the cycle before; the next free entry is chosen; the engine scans the entry read
//!   for it the cycle before (`s_*`), and its trigger and decision are registered.
//!
//! Sizes (mpgpu-spec `fw`): 16 SMST and KSRT entries, 16 PTBQs of 256 entries in one
//! 4096 x 20-bit RAM (queue index, then entry), 4-bit priorities, 16-bit ages, 8-bit tokens.
//! Parameters: `sms` (1..=16) the SMs in use, `policy` (a `PolicyCode`), and two test-only
//! faults.
//!
//! Structure (after rust-hdl's own FIFO, which composes its read and write logic and a RAM):
//! the top level wires sub-blocks together, holds the engine's and the issue's pipeline
//! registers and checks the registered decision.
//! - `smst` (`Smst`): the SMST registers, the SM event, the issue requests, and its read ports;
//! - `ksrt` (`Ksrt`): the KSRT registers, admission, retirement, token counts, read ports;
//! - `ptbq` (`Ptbq`): the PTBQ RAM with each queue's head and occupancy;
//! - `issue` (`RoundRobin`): the SM driver's round-robin pick among the SMs that can take a
//!   block;
//! - `dss` (`Dss`) and `prio` (`Prio`): the policy engines; a constant selects the one in use,
//!   the other sees no trigger and stays idle;
//! - `share` (`Share`): slicing inside the framework, when built with sharing (a constant):
//!   the resident counts per SM and kernel, the quotas (`quota_*` ports), the issue's first
//!   stage and the kernel of its second in place of the SMST's own, and the heirs of the SM
//!   event's handover (a running SM whose holder has no work left passes to its heir, with
//!   its token); built without, its outputs are unused and synthesis removes it.
//! The sub-blocks' outputs feed each other within the cycle; the pipeline registers are where
//! the contract puts them (`docs/fpga.md`, "Timing of the framework").

use crate::{Dss, Ksrt, Prio, Ptbq, RoundRobin, Share, Smst};
use mpgpu_spec::units::sched::dss::{ACT_BITS, STATE_BITS, TOKEN_BITS};
use mpgpu_spec::units::sched::fw::{AGE_BITS, HANDLE_BITS, INDEX_BITS, MAX_SMS, PRIORITY_BITS, PTBQ_ENTRY_BITS, QUOTA_BITS, SLOT_BITS, TBS_PER_SM_BITS, TB_BITS};
use mpgpu_spec::units::sched::PolicyCode;
use crate::reg::Reg;
use rust_hdl::prelude::*;

// rust-hdl's Verilog generator evaluates widths in Rust, so they are the spec's constants; a
// value inside `update` (a shift, a bit offset) it reads as a literal, so the PTBQ entry's slot
// field is placed at the literal bit 20 (= TB_BITS).
const _: () = assert!(PTBQ_ENTRY_BITS == TB_BITS + SLOT_BITS && TB_BITS == 20, "update places a PTBQ entry's save slot at the literal bit 20");

/// Test-only faults, for showing that the co-simulation catches a wrong block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedFaults {
    /// The PTBQ's head reads the block pushed to it last (as if it were last-in first-out).
    pub ptbq_lifo: bool,
    /// A released SM's token is not returned to its kernel.
    pub keep_token: bool,
}

type B4 = Bits<INDEX_BITS>;
type Tb = Bits<TB_BITS>;
type Rt = Bits<TBS_PER_SM_BITS>;

#[derive(LogicBlock)]
pub struct Sched {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A kernel launch is presented (held until `cmd_taken`).
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_handle: Signal<In, Bits<HANDLE_BITS>>,
    /// Blocks in the grid.
    pub cmd_tbs: Signal<In, Tb>,
    /// Blocks of the kernel one SM holds (1..=16).
    pub cmd_tk: Signal<In, Rt>,
    pub cmd_priority: Signal<In, Bits<PRIORITY_BITS>>,
    /// DSS tokens, two's complement.
    pub cmd_tokens: Signal<In, Bits<TOKEN_BITS>>,
    /// A block of kernel `done_k` (the KSRT entry its issue named) finished on SM `done_sm`.
    pub done_valid: Signal<In, Bit>,
    pub done_sm: Signal<In, B4>,
    pub done_k: Signal<In, B4>,
    /// Block `saved_tb` of kernel `saved_k` has been saved from SM `saved_sm`, in save slot
    /// `saved_slot`.
    pub saved_valid: Signal<In, Bit>,
    pub saved_sm: Signal<In, B4>,
    pub saved_k: Signal<In, B4>,
    pub saved_tb: Signal<In, Tb>,
    pub saved_slot: Signal<In, Bits<SLOT_BITS>>,
    /// Bit s: SM s reports no room for another block of its kernel (not ready for an issue,
    /// whatever T_k allows).
    pub full: Signal<In, Bits<MAX_SMS>>,
    /// Slicing inside the framework (a block built with sharing; otherwise ignored): launch
    /// `quota_handle`'s quotas are written at this edge into its KSRT entry, if a valid one
    /// holds it: `quota<s>` on SM s (taken as T_k when larger) if `quota_on`, else none.
    pub quota_valid: Signal<In, Bit>,
    pub quota_handle: Signal<In, Bits<HANDLE_BITS>>,
    pub quota_on: Signal<In, Bit>,
    pub quota0: Signal<In, Bits<QUOTA_BITS>>,
    pub quota1: Signal<In, Bits<QUOTA_BITS>>,
    pub quota2: Signal<In, Bits<QUOTA_BITS>>,
    pub quota3: Signal<In, Bits<QUOTA_BITS>>,
    pub quota4: Signal<In, Bits<QUOTA_BITS>>,
    pub quota5: Signal<In, Bits<QUOTA_BITS>>,
    pub quota6: Signal<In, Bits<QUOTA_BITS>>,
    pub quota7: Signal<In, Bits<QUOTA_BITS>>,
    pub quota8: Signal<In, Bits<QUOTA_BITS>>,
    pub quota9: Signal<In, Bits<QUOTA_BITS>>,
    pub quota10: Signal<In, Bits<QUOTA_BITS>>,
    pub quota11: Signal<In, Bits<QUOTA_BITS>>,
    pub quota12: Signal<In, Bits<QUOTA_BITS>>,
    pub quota13: Signal<In, Bits<QUOTA_BITS>>,
    pub quota14: Signal<In, Bits<QUOTA_BITS>>,
    pub quota15: Signal<In, Bits<QUOTA_BITS>>,
    /// The command enters the KSRT at this edge.
    pub cmd_taken: Signal<Out, Bit>,
    /// Start block `issue_tb` of launch `issue_handle` (KSRT entry `issue_k`) on SM `issue_sm`
    /// (restore its context from save slot `issue_slot` if `issue_restore`).
    pub issue_valid: Signal<Out, Bit>,
    pub issue_sm: Signal<Out, B4>,
    pub issue_k: Signal<Out, B4>,
    pub issue_handle: Signal<Out, Bits<HANDLE_BITS>>,
    pub issue_tb: Signal<Out, Tb>,
    pub issue_restore: Signal<Out, Bit>,
    pub issue_slot: Signal<Out, Bits<SLOT_BITS>>,
    /// Start preempting SM `preempt_sm`.
    pub preempt_valid: Signal<Out, Bit>,
    pub preempt_sm: Signal<Out, B4>,
    /// Work is under way (a decision, an SM in setup or being preempted, an SM to release, a
    /// block to issue); from the registers only. While it is low and the inputs are those of
    /// the last clocked cycle with no command, completion, save or quota among them (the
    /// `full` bits may be set) the clock may be gated.
    pub busy: Signal<Out, Bit>,
    /// Launch `retired_handle` has finished.
    pub retired_valid: Signal<Out, Bit>,
    pub retired_handle: Signal<Out, Bits<HANDLE_BITS>>,
    /// The SM Status Table.
    pub smst: Smst,
    /// The Kernel Status Register Table.
    pub ksrt: Ksrt,
    /// The preempted thread block queues.
    pub ptbq: Ptbq,
    /// The SM driver's round-robin issue pick.
    pub issue: RoundRobin,
    /// The DSS policy engine.
    pub dss: Dss,
    /// The priority policies' engine.
    pub prio: Prio,
    /// Slicing inside the framework: resident counts, quotas, caps, heirs.
    pub share: Share,
    /// The SMs are shared (`Sched::build`).
    sh_on: Constant<Bit>,
    /// The DSS engine decides (else the priority engine).
    use_dss: Constant<Bit>,
    /// Token counts travel to the DSS engine biased by 128.
    bias: Constant<Bits<TOKEN_BITS>>,
    /// The table address read for the policy engine's next cycle.
    a: Signal<Local, B4>,
    /// A kernel entered the KSRT, an SM went idle or a kernel retired.
    trigger: Signal<Local, Bit>,
    /// Pipeline: the engine's trigger, raised the cycle before.
    pub trig_q: Reg<Bit>,
    /// Pipeline: the engine's decision of the cycle before (act 0 none, 1 assign, 2 reserve).
    pub dec_act: Reg<Bits<ACT_BITS>>,
    pub dec_sm: Reg<B4>,
    pub dec_k: Reg<B4>,
    pub dec_from: Reg<B4>,
    /// Pipeline: the decision checked in the cycle before (it held), applied now with no further
    /// check: an assignment (`app_asg`) or a reservation (`app_rsv`), each the check's own
    /// result, with no multiplexer after it (`docs/fpga.md`, eleventh round; the compared state
    /// shows them as one act, 0 none, 1 assign, 2 reserve). The SM and kernels are the
    /// registered decision's of the cycle before whether or not it held (meaningful only with
    /// an act; the compared state shows them as 0 without one).
    pub app_asg: Reg<Bit>,
    pub app_rsv: Reg<Bit>,
    pub app_sm: Reg<B4>,
    pub app_k: Reg<B4>,
    pub app_from: Reg<B4>,
    /// ... and its kernel's T_k, priority and age, read at the check (the SMST copies them at
    /// the apply's edge: no KSRT read on the path from `app_k` into every SM's registers).
    app_tk: Reg<Rt>,
    app_prio: Reg<Bits<PRIORITY_BITS>>,
    app_age: Reg<Bits<AGE_BITS>>,
    /// Pipeline: the block saved in the cycle before, with its kernel (the saving SM's then),
    /// index and save slot; it enters the kernel's PTBQ and blocks left at this edge.
    pub sv_valid: Reg<Bit>,
    pub sv_k: Reg<B4>,
    /// `sv_k` one-hot, 0 without a save: the PTBQ's push enables.
    sv_koh: Reg<Bits<MAX_SMS>>,
    pub sv_tb: Reg<Tb>,
    pub sv_slot: Reg<Bits<SLOT_BITS>>,
    /// Pipeline: the block finished in the cycle before, with its kernel (the finishing SM's
    /// then); it is counted, and may retire the kernel, in this cycle.
    pub dn_valid: Reg<Bit>,
    pub dn_k: Reg<B4>,
    /// The clock request: activity (work in flight or an input) at the last clocked edge and
    /// at the one before.
    pub act1_q: Reg<Bit>,
    pub act2_q: Reg<Bit>,
    in_flight: Signal<Local, Bit>,
    /// The issue's outputs, registered: the block issued at an edge is driven on the issue
    /// ports in the cycle after it (`docs/sched-framework.md`, "The cycle contract").
    pub iq_valid: Reg<Bit>,
    pub iq_sm: Reg<B4>,
    pub iq_k: Reg<B4>,
    pub iq_handle: Reg<Bits<HANDLE_BITS>>,
    pub iq_tb: Reg<Tb>,
    pub iq_restore: Reg<Bit>,
    pub iq_slot: Reg<Bits<SLOT_BITS>>,
    /// Pipeline: the issue's pick of the cycle before (SM, kernel).
    pub gr_valid: Reg<Bit>,
    pub gr_sm: Reg<B4>,
    pub gr_k: Reg<B4>,
    /// A copy of `gr_k` for the PTBQ's reads alone, kept inverted so that synthesis does not
    /// merge it with `gr_k`: each copy drives half the multiplexers (`docs/fpga.md`, seventh
    /// round).
    gr_kn: Reg<B4>,
    /// `gr_k` one-hot: the PTBQ's pop enables and head read, the KSRT's issue terms and read.
    gr_koh: Reg<Bits<MAX_SMS>>,
    /// One-hot copy of the pick in flight's SM, for the SMST's "changing" mask.
    gr_oh: Reg<Bits<MAX_SMS>>,
    /// The pick in its second stage holds: a reservation of its SM registered now (decided in
    /// the cycle before, applied at the edge that would issue to it) cancels it.
    pick_ok: Signal<Local, Bit>,
    /// The registered decision's SM, one-hot (for its check).
    dec_oh: Reg<Bits<MAX_SMS>>,
    /// The registered decision's kernel, one-hot: its check's "blocks left" is an AND-OR of
    /// the blocks-left vectors with it, not a 16-way multiplexer on `dec_k`.
    dec_koh: Reg<Bits<MAX_SMS>>,
    /// The SMs of the reservation decided now and of the reservation checked now, one-hot (0
    /// when there is none): the SMST registers them with its event's SM for its "changing"
    /// mask of the next cycle.
    chg_nx: Signal<Local, Bits<MAX_SMS>>,
    one16: Constant<Bits<MAX_SMS>>,
    /// Pipeline: the engine's table inputs for the entry it scans, read the cycle before.
    pub s_sm_state: Reg<Bits<STATE_BITS>>,
    pub s_sm_ksr_valid: Reg<Bit>,
    pub s_sm_ksr: Reg<B4>,
    pub s_k_valid: Reg<Bit>,
    pub s_k_count: Reg<Bits<TOKEN_BITS>>,
    pub s_k_has_work: Reg<Bit>,
    pub s_k_running: Reg<Bit>,
    pub s_smk_priority: Reg<Bits<PRIORITY_BITS>>,
    pub s_smk_age: Reg<Bits<AGE_BITS>>,
    pub s_k_priority: Reg<Bits<PRIORITY_BITS>>,
    pub s_k_age: Reg<Bits<AGE_BITS>>,
    pub s_k_wants_more: Reg<Bit>,
    // The engine in use's outputs.
    e_act: Signal<Local, Bits<ACT_BITS>>,
    e_sm: Signal<Local, B4>,
    e_k: Signal<Local, B4>,
    e_from: Signal<Local, B4>,
    target_ok: Signal<Local, Bit>,
    assign_ok: Signal<Local, Bit>,
    reserve_ok: Signal<Local, Bit>,
    /// The checked decision applied at this edge.
    apply_assign: Signal<Local, Bit>,
    apply_reserve: Signal<Local, Bit>,
}

impl Sched {
    /// A framework for `sms` SMs (1..=16) in policy `policy`, with the given test-only faults.
    pub fn new(sms: usize, policy: PolicyCode, faults: SchedFaults) -> Self {
        Sched::build(sms, policy, faults, false)
    }

    /// [`Sched::new`], with slicing inside it if `sharing`: an SM's holder shares it with the
    /// kernels that hold quotas (`Share`; `docs/warped-slicer.md`, "Inside the scheduling
    /// framework").
    pub fn build(sms: usize, policy: PolicyCode, faults: SchedFaults, sharing: bool) -> Self {
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
            done_k: Default::default(),
            saved_valid: Default::default(),
            saved_sm: Default::default(),
            saved_k: Default::default(),
            saved_tb: Default::default(),
            saved_slot: Default::default(),
            full: Default::default(),
            cmd_taken: Default::default(),
            issue_valid: Default::default(),
            issue_sm: Default::default(),
            issue_k: Default::default(),
            issue_handle: Default::default(),
            issue_tb: Default::default(),
            issue_restore: Default::default(),
            issue_slot: Default::default(),
            preempt_valid: Default::default(),
            preempt_sm: Default::default(),
            busy: Default::default(),
            retired_valid: Default::default(),
            retired_handle: Default::default(),
            smst: Smst::new(),
            ksrt: Ksrt::new(sms, faults.keep_token),
            ptbq: Ptbq::new(faults.ptbq_lifo),
            issue: RoundRobin::new(sms),
            dss: Dss::new(sms, false),
            prio: Prio::new(sms, policy.prio_engine_mode(), false),
            share: Share::new(),
            sh_on: Constant::new(sharing),
            quota_valid: Default::default(),
            quota_handle: Default::default(),
            quota_on: Default::default(),
            quota0: Default::default(),
            quota1: Default::default(),
            quota2: Default::default(),
            quota3: Default::default(),
            quota4: Default::default(),
            quota5: Default::default(),
            quota6: Default::default(),
            quota7: Default::default(),
            quota8: Default::default(),
            quota9: Default::default(),
            quota10: Default::default(),
            quota11: Default::default(),
            quota12: Default::default(),
            quota13: Default::default(),
            quota14: Default::default(),
            quota15: Default::default(),

            use_dss: Constant::new(policy.uses_dss()),
            bias: Constant::new(0x80u64.into()),
            a: Default::default(),
            trigger: Default::default(),
            trig_q: Default::default(),
            dec_act: Default::default(),
            dec_sm: Default::default(),
            dec_k: Default::default(),
            dec_from: Default::default(),
            app_asg: Default::default(),
            app_rsv: Default::default(),
            app_sm: Default::default(),
            app_k: Default::default(),
            app_from: Default::default(),
            app_tk: Default::default(),
            app_prio: Default::default(),
            app_age: Default::default(),
            dn_valid: Default::default(),
            dn_k: Default::default(),
            sv_valid: Default::default(),
            act1_q: Default::default(),
            act2_q: Default::default(),
            in_flight: Default::default(),
            sv_k: Default::default(),
            sv_koh: Default::default(),
            sv_tb: Default::default(),
            sv_slot: Default::default(),
            iq_valid: Default::default(),
            iq_sm: Default::default(),
            iq_k: Default::default(),
            iq_handle: Default::default(),
            iq_tb: Default::default(),
            iq_restore: Default::default(),
            iq_slot: Default::default(),
            gr_valid: Default::default(),
            gr_sm: Default::default(),
            gr_k: Default::default(),
            gr_kn: Default::default(),
            gr_koh: Default::default(),
            gr_oh: Default::default(),
            chg_nx: Default::default(),
            pick_ok: Default::default(),
            dec_oh: Default::default(),
            dec_koh: Default::default(),
            one16: Constant::new(1u64.into()),
            s_sm_state: Default::default(),
            s_sm_ksr_valid: Default::default(),
            s_sm_ksr: Default::default(),
            s_k_valid: Default::default(),
            s_k_count: Default::default(),
            s_k_has_work: Default::default(),
            s_k_running: Default::default(),
            s_smk_priority: Default::default(),
            s_smk_age: Default::default(),
            s_k_priority: Default::default(),
            s_k_age: Default::default(),
            s_k_wants_more: Default::default(),
            e_act: Default::default(),
            e_sm: Default::default(),
            e_k: Default::default(),
            e_from: Default::default(),
            target_ok: Default::default(),
            assign_ok: Default::default(),
            reserve_ok: Default::default(),
            apply_assign: Default::default(),
            apply_reserve: Default::default(),
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
        self.done_k.connect();
        self.saved_valid.connect();
        self.saved_sm.connect();
        self.saved_k.connect();
        self.saved_tb.connect();
        self.saved_slot.connect();
        self.full.connect();
        self.quota_valid.connect();
        self.quota_handle.connect();
        self.quota_on.connect();
        self.quota0.connect();
        self.quota1.connect();
        self.quota2.connect();
        self.quota3.connect();
        self.quota4.connect();
        self.quota5.connect();
        self.quota6.connect();
        self.quota7.connect();
        self.quota8.connect();
        self.quota9.connect();
        self.quota10.connect();
        self.quota11.connect();
        self.quota12.connect();
        self.quota13.connect();
        self.quota14.connect();
        self.quota15.connect();
        self.connect_all();
    }
}

impl Logic for Sched {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, smst, ksrt, ptbq, issue, dss, prio, share);
        dff_setup!(
            self, clock, act1_q, act2_q, dn_valid, dn_k, sv_valid, sv_k, sv_tb, sv_slot, gr_oh, dec_oh, dec_koh, trig_q, dec_act, dec_sm, dec_k, dec_from, app_asg, app_rsv, app_sm, app_k, app_from, app_tk, app_prio, app_age, iq_valid, iq_sm, iq_k, iq_handle, iq_tb, iq_restore, iq_slot, gr_valid, gr_sm, gr_k, gr_kn, sv_koh, gr_koh, s_sm_state, s_sm_ksr_valid, s_sm_ksr, s_k_valid, s_k_count,
            s_k_has_work, s_k_running, s_smk_priority, s_smk_age, s_k_priority, s_k_age, s_k_wants_more
        );
        // The policy engine in use: the address it scans next cycle (the tables are read there
        // now and registered) and its decision (registered, applied next cycle).
        self.a.next = self.prio.next_addr.val();
        self.e_act.next = self.prio.act.val();
        self.e_sm.next = self.prio.act_sm.val();
        self.e_k.next = self.prio.act_kernel.val();
        self.e_from.next = self.prio.act_from.val();
        if self.use_dss.val() {
            self.a.next = self.dss.next_addr.val();
            self.e_act.next = self.dss.act.val();
            self.e_sm.next = self.dss.act_sm.val();
            self.e_k.next = self.dss.act_kernel.val();
            self.e_from.next = self.dss.act_from.val();
        }
        self.dec_act.d.next = self.e_act.val();
        self.dec_sm.d.next = self.e_sm.val();
        self.dec_k.d.next = self.e_k.val();
        self.dec_from.d.next = self.e_from.val();
        self.dec_oh.d.next = self.one16.val() << self.e_sm.val();
        self.dec_koh.d.next = self.one16.val() << self.e_k.val();
        // The registered decision is checked (from the registers) and, if it holds, registered
        // to be applied in the next cycle: its kernel has a block left after the block in
        // flight; an assignment's SM is idle; a reservation's SM still runs the kernel it is
        // taken from and no event is in flight to it.
        // (one fewer left if the block in flight is of that kernel: the next vector's bit)
        self.target_ok.next = (self.ksrt.rem_ge1.val() & self.dec_koh.q.val()).any();
        if self.gr_valid.q.val() & (self.gr_k.q.val() == self.dec_k.q.val()) {
            self.target_ok.next = (self.ksrt.rem_ge2.val() & self.dec_koh.q.val()).any();
        }
        self.assign_ok.next = (self.dec_act.q.val() == 1) & self.smst.chk_idle.val() & self.target_ok.val();
        self.reserve_ok.next = (self.dec_act.q.val() == 2)
            & self.smst.chk_runs.val()
            & self.target_ok.val()
            & !(self.smst.ev_any.val() & (self.smst.ev_sm.val() == self.dec_sm.q.val()));
        // Only the act is gated by the check: the SM and kernels are copied every cycle (each
        // use of them is gated by the act), so the check drives 2 bits, not 14.
        self.app_asg.d.next = self.assign_ok.val();
        self.app_rsv.d.next = self.reserve_ok.val();
        self.app_sm.d.next = self.dec_sm.q.val();
        self.app_k.d.next = self.dec_k.q.val();
        self.app_from.d.next = self.dec_from.q.val();
        self.app_tk.d.next = self.ksrt.chk_tk.val();
        self.app_prio.d.next = self.ksrt.chk_priority.val();
        self.app_age.d.next = self.ksrt.chk_age.val();
        self.chg_nx.next = 0.into();
        if self.reserve_ok.val() {
            self.chg_nx.next = self.dec_oh.q.val();
        }
        if self.e_act.val() == 2 {
            self.chg_nx.next = self.chg_nx.val() | (self.one16.val() << self.e_sm.val());
        }
        self.smst.chg_in.next = self.gr_oh.q.val();
        self.smst.chg_next.next = self.chg_nx.val();
        self.apply_assign.next = self.app_asg.q.val();
        self.apply_reserve.next = self.app_rsv.q.val();
        self.trigger.next = self.ksrt.retire.val()
            | self.ksrt.admit.val()
            | (self.smst.ev_any.val() & !self.smst.ev_setup.val() & !self.smst.ev_noop.val());
        self.trig_q.d.next = self.trigger.val();

        // The SMST.
        self.smst.done_valid.next = self.done_valid.val();
        self.smst.full.next = self.full.val();
        self.smst.done_sm.next = self.done_sm.val();
        self.smst.saved_valid.next = self.saved_valid.val();
        self.smst.saved_sm.next = self.saved_sm.val();
        self.smst.has_work.next = self.ksrt.has_work.val();
        self.smst.a.next = self.a.val();
        self.smst.act_sm.next = self.app_sm.q.val();
        self.smst.act_k.next = self.app_k.q.val();
        self.smst.chk_oh.next = self.dec_oh.q.val();
        self.smst.dec_from.next = self.e_from.val();
        self.smst.act_k_tk.next = self.app_tk.q.val();
        self.smst.act_k_priority.next = self.app_prio.q.val();
        self.smst.act_k_age.next = self.app_age.q.val();
        self.smst.assign_ok.next = self.apply_assign.val();
        self.smst.reserve_ok.next = self.apply_reserve.val();
        self.smst.flight_valid.next = self.gr_valid.q.val();
        self.smst.grant_sm.next = self.gr_sm.q.val();
        self.smst.flight_k.next = self.gr_k.q.val();
        self.smst.rem_ge1.next = self.ksrt.rem_ge1.val();
        self.smst.rem_ge2.next = self.ksrt.rem_ge2.val();
        self.smst.rem_ge3.next = self.ksrt.rem_ge3.val();

        // The KSRT.
        self.ksrt.cmd_valid.next = self.cmd_valid.val();
        self.ksrt.cmd_handle.next = self.cmd_handle.val();
        self.ksrt.cmd_tbs.next = self.cmd_tbs.val();
        self.ksrt.cmd_tk.next = self.cmd_tk.val();
        self.ksrt.cmd_priority.next = self.cmd_priority.val();
        self.ksrt.cmd_tokens.next = self.cmd_tokens.val();
        self.ksrt.named.next = self.smst.named.val();
        // A finished block is registered with its kernel (as its SM names it), and counted in
        // the KSRT (retiring its kernel if it was the last) in the next cycle.
        self.dn_valid.d.next = self.done_valid.val();
        self.dn_k.d.next = 0.into();
        if self.done_valid.val() {
            self.dn_k.d.next = self.done_k.val();
        }
        self.ksrt.done_valid.next = self.dn_valid.q.val();
        self.ksrt.done_k.next = self.dn_k.q.val();
        self.ksrt.a.next = self.a.val();
        self.ksrt.kmax.next = self.dss.kmax.val();
        self.ksrt.kmin.next = self.dss.kmin.val();
        self.ksrt.act_k.next = self.app_k.q.val();
        self.ksrt.chk_k.next = self.dec_k.q.val();
        self.ksrt.act_from.next = self.app_from.q.val();
        self.ksrt.assign_ok.next = self.apply_assign.val();
        self.ksrt.reserve_ok.next = self.apply_reserve.val();
        self.ksrt.ev_token.next = self.smst.ev_token.val();
        self.ksrt.ev_back.next = self.smst.ev_back.val();
        self.ksrt.iss_oh.next = self.gr_koh.q.val();
        self.ksrt.iss_new.next = self.gr_valid.q.val() & !self.ptbq.head_valid.val();
        self.ksrt.iss_any.next = self.gr_valid.q.val();
        self.ksrt.saved_valid.next = self.sv_valid.q.val();
        self.ksrt.saved_k.next = self.sv_k.q.val();

        // A saved block is registered with its kernel (as its SM names it), and enters the
        // kernel's PTBQ and blocks left at the next edge.
        self.sv_valid.d.next = self.saved_valid.val();
        self.sv_k.d.next = 0.into();
        self.sv_koh.d.next = 0.into();
        self.sv_tb.d.next = 0.into();
        self.sv_slot.d.next = 0.into();
        if self.saved_valid.val() {
            self.sv_k.d.next = self.saved_k.val();
            self.sv_koh.d.next = self.one16.val() << self.saved_k.val();
            self.sv_tb.d.next = self.saved_tb.val();
            self.sv_slot.d.next = self.saved_slot.val();
        }

        // The PTBQs: a saved block goes to the tail of its kernel's queue; an issue restores the
        // head of its kernel's queue if it holds one; an admitted kernel's queue starts empty.
        self.ptbq.push.next = self.sv_valid.q.val();
        self.ptbq.push_k.next = self.sv_k.q.val();
        self.ptbq.push_oh.next = self.sv_koh.q.val();
        self.ptbq.pop_oh.next = self.gr_koh.q.val();
        self.ptbq.push_entry.next = (bit_cast::<PTBQ_ENTRY_BITS, SLOT_BITS>(self.sv_slot.q.val()) << 20) | bit_cast::<PTBQ_ENTRY_BITS, TB_BITS>(self.sv_tb.q.val());
        self.ptbq.pop_k.next = !self.gr_kn.q.val();
        self.ptbq.pop.next = self.gr_valid.q.val();
        self.ptbq.clear.next = self.ksrt.admit.val();
        self.ptbq.clear_k.next = self.ksrt.admit_k.val();

        // The SM driver's issue in three stages (`docs/sched-framework.md`): the round robin
        // picks an SM from the registers (one-hot, registered in `issue.granted`; no pick in
        // the cycle after a pick); in the next cycle its SM and kernel are encoded into `gr_*`
        // unless a reservation of that SM was registered at the edge between; the cycle after
        // issues.
        self.issue.request.next = self.smst.ready.val();
        self.smst.pick_now.next = self.issue.valid.val();
        self.smst.pick_oh.next = self.issue.granted.val();
        // (under sharing, the SM picked takes a block of the oldest of the kernels it could
        // take a block of when it was picked, if any)
        self.pick_ok.next = self.issue.granted.val().any() & !((self.issue.granted.val() & self.dec_oh.q.val()).any() & (self.dec_act.q.val() == 2)) & (!self.sh_on.val() | self.share.g_any.val());
        self.gr_valid.d.next = self.pick_ok.val();
        self.gr_oh.d.next = 0.into();
        if self.pick_ok.val() {
            self.gr_oh.d.next = self.issue.granted.val();
        }
        // (copied every cycle: each use of them is gated by `gr_valid`; 0 without a pick)
        self.gr_sm.d.next = self.smst.pick_sm.val();
        self.gr_k.d.next = self.smst.pick_k.val();
        self.gr_kn.d.next = !self.smst.pick_k.val();
        self.gr_koh.d.next = self.one16.val() << self.smst.pick_k.val();
        if self.sh_on.val() {
            self.gr_k.d.next = self.share.g_k.val();
            self.gr_kn.d.next = !self.share.g_k.val();
            self.gr_koh.d.next = self.share.g_oh.val();
        }

        // Slicing inside the framework (`Share`).
        self.smst.sh_on.next = self.sh_on.val();
        self.smst.sh_rdy.next = self.share.rdy.val();
        self.smst.sh_lt2.next = self.share.lt2.val();
        self.smst.sh_heir.next = self.share.heir_v.val();
        self.smst.sh_el.next = self.share.el_any.val();
        self.smst.h_any.next = self.share.h_any.val();
        self.smst.h_k.next = self.share.h_k.val();
        self.smst.dec_pending.next = self.dec_act.q.val() != 0;
        self.smst.hk_tk.next = self.ksrt.hk_tk.val();
        self.smst.hk_priority.next = self.ksrt.hk_priority.val();
        self.smst.hk_age.next = self.ksrt.hk_age.val();
        self.ksrt.qw_valid.next = self.quota_valid.val();
        self.ksrt.qw_handle.next = self.quota_handle.val();
        self.ksrt.hand.next = self.smst.ev_hand.val();
        self.ksrt.hand_k.next = self.smst.ev_next.val();
        self.ksrt.hk.next = self.smst.ev_next.val();
        for s in 0..MAX_SMS {
            self.share.ksr[s].next = self.smst.o_ksr[s].val();
            self.share.tk[s].next = self.smst.o_tk[s].val();
        }
        self.share.run.next = self.smst.run_v.val();
        self.share.valid.next = self.ksrt.valid_v.val();
        self.share.has_work.next = self.ksrt.has_work.val();
        self.share.rem_ge1.next = self.ksrt.rem_ge1.val();
        self.share.rem_ge2.next = self.ksrt.rem_ge2.val();
        self.share.rem_ge3.next = self.ksrt.rem_ge3.val();
        self.share.flight_valid.next = self.gr_valid.q.val();
        self.share.flight_sm.next = self.gr_sm.q.val();
        self.share.flight_k.next = self.gr_k.q.val();
        self.share.done_valid.next = self.done_valid.val();
        self.share.done_sm.next = self.done_sm.val();
        self.share.done_k.next = self.done_k.val();
        self.share.saved_valid.next = self.saved_valid.val();
        self.share.saved_sm.next = self.saved_sm.val();
        self.share.saved_k.next = self.saved_k.val();
        self.share.qw_hit.next = self.ksrt.qw_hit.val();
        self.share.qw_on.next = self.quota_on.val();
        self.share.qw_tk.next = self.ksrt.qw_tk.val();
        self.share.quota[0].next = self.quota0.val();
        self.share.quota[1].next = self.quota1.val();
        self.share.quota[2].next = self.quota2.val();
        self.share.quota[3].next = self.quota3.val();
        self.share.quota[4].next = self.quota4.val();
        self.share.quota[5].next = self.quota5.val();
        self.share.quota[6].next = self.quota6.val();
        self.share.quota[7].next = self.quota7.val();
        self.share.quota[8].next = self.quota8.val();
        self.share.quota[9].next = self.quota9.val();
        self.share.quota[10].next = self.quota10.val();
        self.share.quota[11].next = self.quota11.val();
        self.share.quota[12].next = self.quota12.val();
        self.share.quota[13].next = self.quota13.val();
        self.share.quota[14].next = self.quota14.val();
        self.share.quota[15].next = self.quota15.val();
        self.share.admit.next = self.ksrt.admit.val();
        self.share.admit_k.next = self.ksrt.admit_k.val();
        self.share.retire.next = self.ksrt.retire.val();
        self.share.retire_k.next = self.dn_k.q.val();
        self.share.pick_oh.next = self.issue.granted.val();
        self.share.ev_sel.next = self.smst.ev_sel_o.val();

        // The engines' table reads for next cycle, registered.
        self.s_sm_state.d.next = self.smst.a_state.val();
        self.s_sm_ksr_valid.d.next = self.smst.a_ksr_valid.val();
        self.s_sm_ksr.d.next = self.smst.a_ksr.val();
        self.s_k_valid.d.next = self.ksrt.a_valid.val();
        self.s_k_count.d.next = self.ksrt.a_count.val() ^ self.bias.val();
        self.s_k_has_work.d.next = self.ksrt.a_has_work.val();
        self.s_k_running.d.next = self.smst.a_running.val();
        self.s_smk_priority.d.next = self.smst.a_priority.val();
        self.s_smk_age.d.next = self.smst.a_age.val();
        self.s_k_priority.d.next = self.ksrt.a_priority.val();
        self.s_k_age.d.next = self.ksrt.a_age.val();
        self.s_k_wants_more.d.next = self.ksrt.a_wants_more.val();

        // The engines' ports (the one not in use sees no trigger and stays idle).
        self.dss.trigger.next = self.trig_q.q.val() & self.use_dss.val();
        self.dss.sm_state.next = self.s_sm_state.q.val();
        self.dss.sm_ksr_valid.next = self.s_sm_ksr_valid.q.val();
        self.dss.sm_ksr.next = self.s_sm_ksr.q.val();
        self.dss.k_valid.next = self.s_k_valid.q.val();
        self.dss.k_count.next = self.s_k_count.q.val();
        self.dss.k_has_work.next = self.s_k_has_work.q.val();
        self.dss.k_running.next = self.s_k_running.q.val();
        self.dss.count_max.next = self.ksrt.count_max.val() ^ self.bias.val();
        self.dss.count_min.next = self.ksrt.count_min.val() ^ self.bias.val();
        self.prio.trigger.next = self.trig_q.q.val() & !self.use_dss.val();
        self.prio.sm_state.next = self.s_sm_state.q.val();
        self.prio.sm_ksr_valid.next = self.s_sm_ksr_valid.q.val();
        self.prio.sm_ksr.next = self.s_sm_ksr.q.val();
        self.prio.smk_priority.next = self.s_smk_priority.q.val();
        self.prio.smk_age.next = self.s_smk_age.q.val();
        self.prio.k_valid.next = self.s_k_valid.q.val();
        self.prio.k_has_work.next = self.s_k_has_work.q.val();
        self.prio.k_priority.next = self.s_k_priority.q.val();
        self.prio.k_age.next = self.s_k_age.q.val();
        self.prio.k_wants_more.next = self.s_k_wants_more.q.val();

        // Outputs.
        self.cmd_taken.next = self.ksrt.admit.val();
        // The block issued at this edge (the head of its kernel's PTBQ, else its next new
        // block), registered: the issue ports drive it in the next cycle.
        self.iq_valid.d.next = self.gr_valid.q.val();
        self.iq_sm.d.next = self.gr_sm.q.val();
        self.iq_k.d.next = self.gr_k.q.val();
        self.iq_handle.d.next = self.ksrt.iss_handle.val();
        self.iq_tb.d.next = self.ksrt.iss_next_tb.val();
        self.iq_slot.d.next = 0.into();
        if self.ptbq.head_valid.val() {
            self.iq_tb.d.next = self.ptbq.head_entry.val().get_bits::<TB_BITS>(0);
            self.iq_slot.d.next = self.ptbq.head_entry.val().get_bits::<SLOT_BITS>(20);
        }
        self.iq_restore.d.next = self.gr_valid.q.val() & self.ptbq.head_valid.val();
        if !self.gr_valid.q.val() {
            self.iq_sm.d.next = 0.into();
            self.iq_k.d.next = 0.into();
            self.iq_handle.d.next = 0.into();
            self.iq_tb.d.next = 0.into();
            self.iq_slot.d.next = 0.into();
        }
        self.issue_valid.next = self.iq_valid.q.val();
        self.issue_sm.next = self.iq_sm.q.val();
        self.issue_k.next = self.iq_k.q.val();
        self.issue_handle.next = self.iq_handle.q.val();
        self.issue_tb.next = self.iq_tb.q.val();
        self.issue_restore.next = self.iq_restore.q.val();
        self.issue_slot.next = self.iq_slot.q.val();
        self.preempt_valid.next = self.apply_reserve.val();
        self.preempt_sm.next = 0.into();
        if self.apply_reserve.val() {
            self.preempt_sm.next = self.app_sm.q.val();
        }
        // The clock request (`docs/sched-framework.md`, "The clock request"): the work in
        // flight, from registers, and the two clocked cycles after any activity (work in
        // flight or an input), which cover the lag of the SMST's registered needs and of the
        // registered names and "wants more".
        self.in_flight.next = self.sv_valid.q.val()
            | self.dn_valid.q.val()
            | self.dss.busy.val()
            | self.prio.busy.val()
            | self.smst.busy.val()
            | self.trig_q.q.val()
            | (self.dec_act.q.val() != 0)
            | self.app_asg.q.val()
            | self.app_rsv.q.val()
            | self.gr_valid.q.val()
            | self.issue.granted.val().any()
            | self.ksrt.cmd_pending.val()
            | self.smst.ev_any.val();
        self.act1_q.d.next = self.in_flight.val() | self.cmd_valid.val() | self.done_valid.val() | self.saved_valid.val() | self.quota_valid.val();
        self.act2_q.d.next = self.act1_q.q.val();
        self.busy.next = self.in_flight.val() | self.act1_q.q.val() | self.act2_q.q.val();
        self.retired_valid.next = self.ksrt.retire.val();
        self.retired_handle.next = self.ksrt.retired_handle.val();
    }
}
