//! `Smst`: the SM Status Table of the kernel scheduling framework (thesis §5.2.3;
//! `docs/sched-framework.md`) as register arrays, with the logic that reads it and the SM
//! events; a sub-block of `Sched`, whose header states the cycle contract.
//!
//! Each SM's entry: its state (0 idle, 1 setup, 2 running, 3 reserved), the KSR index of the
//! kernel it runs (`sm_ksr`, valid bit), the kernel a reserved SM goes to (`sm_next`), its
//! resident blocks and its kernel's T_k. Every output is combinational from the registers and
//! this cycle's inputs; the entries change at the clock edge:
//! - blocks resident after this cycle's completion (`done_*`) and save (`saved_*`);
//! - the SM event in two stages: the SMs with one registered (`evc_q`), less those the edge
//!   ahead may change (`changing`), with, for the reserved ones, whether their next kernel has
//!   work (`evw_q`); then the lowest of them not changing then picked into `evq_*` and applied
//!   the cycle after (`ev_*`): a running SM with no blocks whose kernel has no work (release:
//!   idle, a token back to `ev_back`), or a reserved SM with no blocks (its preemption is
//!   complete: setup for `sm_next` if its `evw_q` bit is set, else idle with the token back);
//!   under sharing also a running SM with blocks whose kernel has no work and that has an heir
//!   (`Share`: a handover, its heir found at the pick into `evq_next`, `evq_hok` clear if it
//!   found none or a decision was registered, when the event does nothing);
//! - read ports: the entry at the table address `a`
//!   (the entry the policy engine scans next cycle, with whether its kernel runs anywhere), the
//!   entry at the registered decision's SM `chk_oh` (for its check: idle, or running the
//!   kernel it is taken from, `from_q`), the kernel of the pick in its second stage;
//! - `named`: the KSR indices some SM named in the cycle before (admission skips them);
//!   `busy`: an SM needed the clock in the cycle before (`need_q`, one bit per SM), or an
//!   issue or event stage holds something;
//! - the first two stages: `rdy_q` registers the running SMs with room whose kernel
//!   has a block left after the block in flight, less those the edge ahead may change or the
//!   one after (the pick in its second stage, `pick_oh`), and `lt2_q` those of them whose
//!   kernel then had under two; `ready` (the round robin's requests) is `rq_q` (`rdy_q`, or
//!   nothing in the cycle after a pick) less `blk_q` and, while a block is in flight, less
//!   `lt2_q`. The SM event's requests are `evc_q` less `blk_q` (an SM picked for a block had one
//!   to take, so it is never found with an event while the pick is on its way);
//! - the pick's second stage: `pick_sm` and `pick_k`, the SM of the one-hot pick and its kernel
//!   (an AND-OR).
//! Parameters: 1..=16 SMs in use (the table always holds 16 entries).

use mpgpu_spec::units::sched::dss::STATE_BITS;
use mpgpu_spec::units::sched::fw::{AGE_BITS, INDEX_BITS, MAX_SMS, PRIORITY_BITS, TBS_PER_SM_BITS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

// rust-hdl's Verilog generator evaluates widths, array lengths and loop bounds in Rust, so they
// are the spec's constants; an index inside `update` it evaluates itself, with only the loop
// variables known, so the OR trees there name the entries 0..=15 one by one.
const _: () = assert!(MAX_SMS == 16, "update's OR trees name the SMST entries 0..=15 by literal indices");
const _: () = assert!(mpgpu_spec::units::sched::fw::MAX_TMAX == 1 << 4 && TBS_PER_SM_BITS == 5, "update reads an SM holding MAX_TMAX blocks as its count's bit 4");

type B4 = Bits<INDEX_BITS>;
type Rt = Bits<TBS_PER_SM_BITS>;

#[derive(LogicBlock)]
pub struct Smst {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A block finished on SM `done_sm`.
    pub done_valid: Signal<In, Bit>,
    /// The SM of the finished block.
    pub done_sm: Signal<In, B4>,
    /// A block of SM `saved_sm` has been saved.
    pub saved_valid: Signal<In, Bit>,
    /// The SM of the saved block.
    pub saved_sm: Signal<In, B4>,
    /// Bit k: KSRT entry k has blocks to issue.
    pub has_work: Signal<In, Bits<MAX_SMS>>,
    /// Bit s: SM s reports no room for another block (not ready for an issue).
    pub full: Signal<In, Bits<MAX_SMS>>,
    /// The policy engine's table address.
    pub a: Signal<In, B4>,
    /// The SM of the decision applied at this edge (checked in the cycle before).
    pub act_sm: Signal<In, B4>,
    /// The kernel of the decision applied at this edge.
    pub act_k: Signal<In, B4>,
    /// T_k, priority and age of `act_k`.
    pub act_k_tk: Signal<In, Rt>,
    pub act_k_priority: Signal<In, Bits<PRIORITY_BITS>>,
    pub act_k_age: Signal<In, Bits<AGE_BITS>>,
    /// The decision assigns idle SM `act_sm` to `act_k` at this edge.
    pub assign_ok: Signal<In, Bit>,
    /// The decision reserves running SM `act_sm` for `act_k` at this edge.
    pub reserve_ok: Signal<In, Bit>,
    /// The pick of the cycle before is in flight, to SM `grant_sm`; it is issued at
    /// this edge.
    pub flight_valid: Signal<In, Bit>,
    /// The SM of the pick in flight.
    pub grant_sm: Signal<In, B4>,
    /// The kernel of the pick in flight.
    pub flight_k: Signal<In, B4>,
    /// Bit k: kernel k has at least one, two, three blocks left to issue (the block in flight
    /// not taken off).
    pub rem_ge1: Signal<In, Bits<MAX_SMS>>,
    pub rem_ge2: Signal<In, Bits<MAX_SMS>>,
    pub rem_ge3: Signal<In, Bits<MAX_SMS>>,
    /// The SM of the registered decision, one-hot (read for its check).
    pub chk_oh: Signal<In, Bits<MAX_SMS>>,
    /// The kernel the engine's decision of this cycle takes its SM from (registered with it,
    /// and checked in the next cycle).
    pub dec_from: Signal<In, B4>,
    /// One-hot, from a register: the SM of the block in flight (the edge ahead may change it).
    pub chg_in: Signal<In, Bits<MAX_SMS>>,
    /// The round robin grants now: no request in the next cycle (the pick's second
    /// stage), so `rq_q` is cleared.
    pub pick_now: Signal<In, Bit>,
    /// One-hot: the SM picked by the round robin in the cycle before, in the pick's second
    /// stage now (the edge after next issues to it: it is changing).
    pub pick_oh: Signal<In, Bits<MAX_SMS>>,
    /// One-hot: the SMs of the reservation decided now and of the reservation checked now
    /// (registered in `blk_q`, with the event's SM picked now: the edge after next may change
    /// them).
    pub chg_next: Signal<In, Bits<MAX_SMS>>,
    /// Slicing inside the framework (`Share`): sharing is on; the SMs that may take a block
    /// and those with an eligible kernel with under two left (the first stage in
    /// place of the SMST's own); the SMs with an heir; the oldest heir of the SM the event
    /// picks (`ev_sel`), if any.
    pub sh_on: Signal<In, Bit>,
    pub sh_rdy: Signal<In, Bits<MAX_SMS>>,
    pub sh_lt2: Signal<In, Bits<MAX_SMS>>,
    pub sh_heir: Signal<In, Bits<MAX_SMS>>,
    /// Under sharing, bit s: SM s had an eligible kernel at the last edge (the clock request's
    /// "room with work").
    pub sh_el: Signal<In, Bits<MAX_SMS>>,
    pub h_any: Signal<In, Bit>,
    pub h_k: Signal<In, B4>,
    /// A decision is registered (it may be applied at the edge after next: no handover is
    /// picked now).
    pub dec_pending: Signal<In, Bit>,
    /// T_k, priority and age of the heir the event in flight hands its SM to (`ev_next`).
    pub hk_tk: Signal<In, Rt>,
    pub hk_priority: Signal<In, Bits<PRIORITY_BITS>>,
    pub hk_age: Signal<In, Bits<AGE_BITS>>,
    /// Each SM's kernel and its T_k (for `Share`); bit s: SM s runs.
    pub o_ksr: [Signal<Out, B4>; MAX_SMS],
    pub o_tk: [Signal<Out, Rt>; MAX_SMS],
    pub run_v: Signal<Out, Bits<MAX_SMS>>,
    /// One-hot: the SM the event picks now.
    pub ev_sel_o: Signal<Out, Bits<MAX_SMS>>,
    /// The event in flight hands its SM over (to `ev_next`); it was picked with no heir or
    /// beside a decision, and does nothing.
    pub ev_hand: Signal<Out, Bit>,
    pub ev_noop: Signal<Out, Bit>,
    pub ev_next: Signal<Out, B4>,
    /// Bit k: some SM ran or was reserved for KSR index k in the cycle before (`named_q`).
    pub named: Signal<Out, Bits<MAX_SMS>>,
    /// Pipeline: the KSR indices some SM names (`named` is this register: the names of the
    /// cycle before).
    pub named_q: Reg<Bits<MAX_SMS>>,
    named_now: Signal<Local, Bits<MAX_SMS>>,
    /// An SM event is applied at this edge (picked the cycle before; it always holds), on SM
    /// `ev_sm`.
    pub ev_any: Signal<Out, Bit>,
    pub ev_sm: Signal<Out, B4>,
    /// The event is a completed preemption going to setup for the kernel it was reserved for.
    pub ev_setup: Signal<Out, Bit>,
    /// The event returns a token to kernel `ev_back`.
    pub ev_token: Signal<Out, Bit>,
    /// The kernel the event's token goes back to.
    pub ev_back: Signal<Out, B4>,
    /// Pipeline: the event picked the cycle before, its SM and whether it goes to setup.
    pub evq_valid: Reg<Bit>,
    pub evq_sm: Reg<B4>,
    /// The SMs the edge ahead may change besides the pick in flight's, one-hot, registered:
    /// `evq_sm` (0 without an event), the registered reservation's and the checked
    /// reservation's SM (one gate less in front of the round robin than ORing them
    /// here).
    blk_q: Reg<Bits<MAX_SMS>>,
    /// Bit s: SM s names the kernel the engine's decision takes its SM from (`dec_from`), as
    /// of the edge that registered the decision (under sharing, after a handover at that
    /// edge). An SM's kernel changes only at an edge that makes it idle, sets it up or hands
    /// it over, so an SM running at the check runs the kernel it ran after that edge: the
    /// check's "runs it" is this bit and the SM's state, with no compare of kernels on its
    /// path.
    from_q: Reg<Bits<MAX_SMS>>,
    pub evq_setup: Reg<Bit>,
    /// ... and the kernel it names as its next (setup goes there), whether a token goes back
    /// and to which kernel.
    pub evq_next: Reg<B4>,
    evq_token: Reg<Bit>,
    evq_back: Reg<B4>,
    /// ... whether it is a handover (a running SM with blocks, under sharing) and whether it
    /// found an heir (`evq_next` is the heir) with no decision registered.
    pub evq_hand: Reg<Bit>,
    pub evq_hok: Reg<Bit>,
    f_hand: [Signal<Local, Bit>; MAX_SMS],
    hand_now: Signal<Local, Bit>,
    /// Bit s: SM s holds MAX_TMAX (16) blocks, its count's top bit.
    top_v: Signal<Local, Bits<MAX_SMS>>,
    /// SMST[a].state.
    pub a_state: Signal<Out, Bits<STATE_BITS>>,
    /// SMST[a].ksr is valid.
    pub a_ksr_valid: Signal<Out, Bit>,
    /// SMST[a].ksr.
    pub a_ksr: Signal<Out, B4>,
    /// The priority and age of SMST[a]'s kernel (0 unless it names one).
    pub a_priority: Signal<Out, Bits<PRIORITY_BITS>>,
    pub a_age: Signal<Out, Bits<AGE_BITS>>,
    /// Kernel `a` runs on some SM.
    pub a_running: Signal<Out, Bit>,
    /// The checked SM is idle; it runs the kernel its reservation takes it from (each SM
    /// tested in place, then ORed: no multiplexer on the SM before the compare).
    pub chk_idle: Signal<Out, Bit>,
    pub chk_runs: Signal<Out, Bit>,
    /// Bit s: SM s may take a block (it requests an issue): it was ready in the cycle before
    /// (`rdy_q`) and the edge ahead does not change it.
    pub ready: Signal<Out, Bits<MAX_SMS>>,
    /// Pipeline, the first stage: the SMs running with room, not changed by the edge
    /// ahead, whose kernel has a block left after the block in flight; and those of them whose
    /// kernel then has fewer than two (`lt2_q`).
    pub rdy_q: Reg<Bits<MAX_SMS>>,
    /// Pipeline, the SM event's first stage: the SMs with an event, less the changing ones.
    pub evc_q: Reg<Bits<MAX_SMS>>,
    /// Of those, the reserved SMs whose next kernel has work (read in the first stage: the
    /// pick sends these to setup, any other reserved one idle).
    pub evw_q: Reg<Bits<MAX_SMS>>,
    pub lt2_q: Reg<Bits<MAX_SMS>>,
    /// `rdy_q`, or nothing after a pick (the round robin picks at most every other cycle).
    rq_q: Reg<Bits<MAX_SMS>>,
    /// The SM of `pick_oh` and its kernel (0 when there is none).
    pub pick_sm: Signal<Out, B4>,
    pub pick_k: Signal<Out, B4>,
    /// Some SM needs the clock (in setup, reserved with no block left, to be released, or able
    /// to take a block and not reported full), as of the cycle before (`need_q`), or an issue
    /// or event stage is in flight.
    pub busy: Signal<Out, Bit>,
    /// The clock request's registers: each SM's "its kernel has work" (bit s), and each SM's
    /// need computed from them and the SMST (bit s; `docs/sched-framework.md`, "The clock
    /// request"). The need is kept per SM and ORed after the register, into `busy` (the same
    /// value as ORing before it, one OR fewer on the path from the SMST).
    pub hw_q: Reg<Bits<MAX_SMS>>,
    pub need_q: Reg<Bits<MAX_SMS>>,
    hw_now: Signal<Local, Bits<MAX_SMS>>,
    rdy_now: Signal<Local, Bits<MAX_SMS>>,
    need_now: Signal<Local, Bits<MAX_SMS>>,
    from_now: Signal<Local, Bits<MAX_SMS>>,
    /// SM state: 0 idle, 1 setup, 2 running, 3 reserved.
    pub sm_state: [Reg<Bits<STATE_BITS>>; MAX_SMS],
    /// `sm_ksr` is valid.
    pub sm_ksr_valid: [Reg<Bit>; MAX_SMS],
    /// The kernel the SM runs (or is being taken from).
    pub sm_ksr: [Reg<B4>; MAX_SMS],
    /// `sm_next` is valid.
    pub sm_next_valid: [Reg<Bit>; MAX_SMS],
    /// The kernel a reserved SM goes to.
    pub sm_next: [Reg<B4>; MAX_SMS],
    /// Blocks resident.
    pub sm_running: [Reg<Rt>; MAX_SMS],
    /// T_k of the SM's kernel (copied at setup).
    pub sm_tk: [Reg<Rt>; MAX_SMS],
    /// The priority and age of the SM's kernel (copied at setup; they do not change while the
    /// SM names it, and its entry is not reused until no SM does), so that the priority engine's
    /// read of them is one multiplexer, not two in a row.
    pub sm_prio: [Reg<Bits<PRIORITY_BITS>>; MAX_SMS],
    pub sm_age: [Reg<Bits<AGE_BITS>>; MAX_SMS],
    /// T_k, priority and age of `sm_next` (copied at the reservation, from the same read of
    /// the KSRT as an assignment's): a completed preemption's setup copies them within its own
    /// entry, with no read of the KSRT at the event's kernel. They cannot change in between:
    /// the reservation's kernel has blocks left (so it is not retired at that edge), and its
    /// entry is not reused while an SM names it (`named`).
    sm_ntk: [Reg<Rt>; MAX_SMS],
    sm_nprio: [Reg<Bits<PRIORITY_BITS>>; MAX_SMS],
    sm_nage: [Reg<Bits<AGE_BITS>>; MAX_SMS],
    ids: [Constant<B4>; MAX_SMS],
    onehot: [Constant<Bits<MAX_SMS>>; MAX_SMS],
    /// Blocks left on each SM after this cycle's completion and save.
    left: [Signal<Local, Rt>; MAX_SMS],
    ev_wk: Signal<Local, Bits<MAX_SMS>>,
    one: Constant<Bits<MAX_SMS>>,
    ev_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    ev_req: Signal<Local, Bits<MAX_SMS>>,
    ev_any_bits: Signal<Local, Bits<MAX_SMS>>,
    ev_sel: Signal<Local, Bits<MAX_SMS>>,
    f_sm: [Signal<Local, B4>; MAX_SMS],
    f_setup: [Signal<Local, Bit>; MAX_SMS],
    f_token: [Signal<Local, Bit>; MAX_SMS],
    f_back: [Signal<Local, B4>; MAX_SMS],
    f_next: [Signal<Local, B4>; MAX_SMS],
    named_k: [Signal<Local, Bit>; MAX_SMS],
    named_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    ready_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    lt2_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    /// Each SM's kernel has a block left after the block in flight, and two.
    l1_s: [Signal<Local, Bit>; MAX_SMS],
    l2_s: [Signal<Local, Bit>; MAX_SMS],
    /// Bit s: the edge ahead may change SM s (the block in flight, a reservation or the event in
    /// flight names it).
    changing: Signal<Local, Bits<MAX_SMS>>,
}

impl Smst {
    /// The SMST (16 entries, all in use: the SMs beyond the GPU's never leave idle).
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            done_valid: Default::default(),
            full: Default::default(),
            done_sm: Default::default(),
            saved_valid: Default::default(),
            saved_sm: Default::default(),
            has_work: Default::default(),
            a: Default::default(),
            act_sm: Default::default(),
            act_k: Default::default(),
            act_k_tk: Default::default(),
            act_k_priority: Default::default(),
            act_k_age: Default::default(),
            assign_ok: Default::default(),
            reserve_ok: Default::default(),
            flight_valid: Default::default(),
            grant_sm: Default::default(),
            flight_k: Default::default(),
            rem_ge1: Default::default(),
            rem_ge2: Default::default(),
            rem_ge3: Default::default(),
            chk_oh: Default::default(),
            dec_from: Default::default(),
            from_q: Default::default(),
            named: Default::default(),
            named_q: Default::default(),
            named_now: Default::default(),
            hw_q: Default::default(),
            need_q: Default::default(),
            hw_now: Default::default(),
            rdy_now: Default::default(),
            need_now: Default::default(),
            from_now: Default::default(),
            sh_on: Default::default(),
            sh_rdy: Default::default(),
            sh_lt2: Default::default(),
            sh_heir: Default::default(),
            sh_el: Default::default(),
            h_any: Default::default(),
            h_k: Default::default(),
            dec_pending: Default::default(),
            hk_tk: Default::default(),
            hk_priority: Default::default(),
            hk_age: Default::default(),
            o_ksr: Default::default(),
            o_tk: Default::default(),
            run_v: Default::default(),
            ev_sel_o: Default::default(),
            ev_hand: Default::default(),
            ev_noop: Default::default(),
            ev_next: Default::default(),
            evq_hand: Default::default(),
            evq_hok: Default::default(),
            f_hand: Default::default(),
            hand_now: Default::default(),
            top_v: Default::default(),
            ev_any: Default::default(),
            ev_sm: Default::default(),
            ev_setup: Default::default(),
            ev_token: Default::default(),
            ev_back: Default::default(),
            evq_valid: Default::default(),
            evq_sm: Default::default(),
            evq_setup: Default::default(),
            evq_next: Default::default(),
            evq_token: Default::default(),
            evq_back: Default::default(),
            a_state: Default::default(),
            a_ksr_valid: Default::default(),
            a_ksr: Default::default(),
            a_priority: Default::default(),
            a_age: Default::default(),
            a_running: Default::default(),
            chk_idle: Default::default(),
            chk_runs: Default::default(),
            ready: Default::default(),
            pick_sm: Default::default(),
            pick_k: Default::default(),
            busy: Default::default(),
            sm_state: Default::default(),
            sm_ksr_valid: Default::default(),
            sm_ksr: Default::default(),
            sm_next_valid: Default::default(),
            sm_next: Default::default(),
            sm_ntk: Default::default(),
            sm_nprio: Default::default(),
            sm_nage: Default::default(),
            sm_running: Default::default(),
            sm_tk: Default::default(),
            sm_prio: Default::default(),
            sm_age: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            onehot: std::array::from_fn(|i| Constant::new((1u64 << i).into())),
            left: Default::default(),
            ev_wk: Default::default(),
            one: Constant::new(1u64.into()),
            ev_bit: Default::default(),
            ev_req: Default::default(),
            ev_any_bits: Default::default(),
            evc_q: Default::default(),
            evw_q: Default::default(),
            rq_q: Default::default(),
            ev_sel: Default::default(),
            f_sm: Default::default(),
            f_setup: Default::default(),
            f_token: Default::default(),
            f_back: Default::default(),
            f_next: Default::default(),
            named_k: Default::default(),
            named_bit: Default::default(),
            ready_bit: Default::default(),
            rdy_q: Default::default(),
            lt2_q: Default::default(),
            lt2_bit: Default::default(),
            l1_s: Default::default(),
            l2_s: Default::default(),
            changing: Default::default(),
            chg_in: Default::default(),
            pick_now: Default::default(),
            pick_oh: Default::default(),
            chg_next: Default::default(),
            blk_q: Default::default(),
        }
    }
}

impl Default for Smst {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Smst {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, hw_q, need_q, named_q, blk_q, from_q, evq_valid, evq_sm, evq_setup, evq_next, evq_token, evq_back, evq_hand, evq_hok, rdy_q, lt2_q, evc_q, evw_q, rq_q);
        for s in 0..MAX_SMS {
            self.sm_state[s].clock.next = self.clock.val();
            self.sm_ksr_valid[s].clock.next = self.clock.val();
            self.sm_ksr[s].clock.next = self.clock.val();
            self.sm_next_valid[s].clock.next = self.clock.val();
            self.sm_next[s].clock.next = self.clock.val();
            self.sm_running[s].clock.next = self.clock.val();
            self.sm_tk[s].clock.next = self.clock.val();
            self.sm_prio[s].clock.next = self.clock.val();
            self.sm_age[s].clock.next = self.clock.val();
            self.sm_prio[s].d.next = self.sm_prio[s].q.val();
            self.sm_age[s].d.next = self.sm_age[s].q.val();
            self.sm_state[s].d.next = self.sm_state[s].q.val();
            self.sm_ksr_valid[s].d.next = self.sm_ksr_valid[s].q.val();
            self.sm_ksr[s].d.next = self.sm_ksr[s].q.val();
            self.sm_next_valid[s].d.next = self.sm_next_valid[s].q.val();
            self.sm_next[s].d.next = self.sm_next[s].q.val();
            self.sm_running[s].d.next = self.sm_running[s].q.val();
            self.sm_tk[s].d.next = self.sm_tk[s].q.val();
            self.sm_ntk[s].clock.next = self.clock.val();
            self.sm_nprio[s].clock.next = self.clock.val();
            self.sm_nage[s].clock.next = self.clock.val();
            self.sm_ntk[s].d.next = self.sm_ntk[s].q.val();
            self.sm_nprio[s].d.next = self.sm_nprio[s].q.val();
            self.sm_nage[s].d.next = self.sm_nage[s].q.val();
        }

        // Blocks left on each SM after this cycle's completion and save.
        for s in 0..MAX_SMS {
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

        // The SMs the edge ahead may change (the SM event's and the stages leave them
        // out): the SM of the block in flight, the SM a reservation names (registered and being
        // checked, or applied at this edge), the SM of the event in flight (one-hot registers:
        // no decoding on these paths).
        self.changing.next = self.chg_in.val() | self.blk_q.q.val() | self.pick_oh.val();
        // The SM event in two stages. First, registered (`evc_q`): the SMs with no blocks that
        // run a kernel with no work, or are reserved, less the changing ones, and of the
        // reserved ones those whose next kernel has work (`evw_q`). Then the event for the next
        // cycle: the lowest of them not changing now; a reserved one goes to setup if its bit
        // in `evw_q` is set (the kernel's "has work" is thus read a cycle before the pick, off
        // the pick's path: `docs/fpga.md`, seventh round).
        self.ev_wk.next = 0.into();
        for s in 0..MAX_SMS {
            self.ev_bit[s].next = 0.into();
            if (self.sm_running[s].q.val() == 0)
                & (((self.sm_state[s].q.val() == 2) & !self.has_work.val().get_bit(self.sm_ksr[s].q.val().index()))
                    | (self.sm_state[s].q.val() == 3))
            {
                self.ev_bit[s].next = self.onehot[s].val();
            }
            // (under sharing, a running SM with blocks whose holder has no work, and an heir:
            // a handover)
            if self.sh_on.val()
                & (self.sm_running[s].q.val() != 0)
                & (self.sm_state[s].q.val() == 2)
                & !self.has_work.val().get_bit(self.sm_ksr[s].q.val().index())
                & self.sh_heir.val().get_bit(s)
            {
                self.ev_bit[s].next = self.onehot[s].val();
            }
            self.ev_wk.next = self.ev_wk.val().replace_bit(
                s,
                (self.sm_state[s].q.val() == 3) & self.sm_next_valid[s].q.val() & self.has_work.val().get_bit(self.sm_next[s].q.val().index()),
            );
        }
        self.ev_any_bits.next = self.ev_bit[0].val() | self.ev_bit[1].val() | self.ev_bit[2].val() | self.ev_bit[3].val() | self.ev_bit[4].val() | self.ev_bit[5].val() | self.ev_bit[6].val() | self.ev_bit[7].val() | self.ev_bit[8].val() | self.ev_bit[9].val() | self.ev_bit[10].val() | self.ev_bit[11].val() | self.ev_bit[12].val() | self.ev_bit[13].val() | self.ev_bit[14].val() | self.ev_bit[15].val();
        self.evc_q.d.next = self.ev_any_bits.val() & !self.changing.val();
        self.evw_q.d.next = self.ev_any_bits.val() & self.ev_wk.val() & !self.changing.val();
        // (the SM picked at the edge, `chg_in`, is not in `evc_q`: it had a block to take, so it
        // had no event; `blk_q` is the rest of `changing`)
        self.ev_req.next = self.evc_q.q.val() & !self.blk_q.q.val();
        // The lowest: isolated as x & -x on the carry chain, its fields an AND-OR.
        self.ev_sel.next = self.ev_req.val() & (!self.ev_req.val() + self.one.val());
        for s in 0..MAX_SMS {
            self.f_sm[s].next = 0.into();
            self.f_setup[s].next = false;
            self.f_token[s].next = false;
            self.f_back[s].next = 0.into();
            self.f_next[s].next = 0.into();
            self.f_hand[s].next = false;
            if self.ev_sel.val().get_bit(s) {
                // (only under sharing: without it a running SM with blocks has no event, which
                // synthesis cannot see through the registers between, so the mask lets it
                // remove the handover and `Share` from the framework built without sharing)
                self.f_hand[s].next = self.sh_on.val() & (self.sm_state[s].q.val() == 2) & (self.sm_running[s].q.val() != 0);
                self.f_sm[s].next = self.ids[s].val();
                self.f_setup[s].next = self.evw_q.q.val().get_bit(s);
                // Unless it goes to setup the SM goes idle and a token goes back, to the kernel
                // it ran or was reserved for.
                self.f_token[s].next = !self.evw_q.q.val().get_bit(s) & ((self.sm_state[s].q.val() == 2) | self.sm_next_valid[s].q.val());
                self.f_back[s].next = self.sm_ksr[s].q.val();
                if self.sm_state[s].q.val() == 3 {
                    self.f_back[s].next = self.sm_next[s].q.val();
                }
                self.f_next[s].next = self.sm_next[s].q.val();
            }
        }
        self.evq_valid.d.next = self.ev_req.val().any();
        self.blk_q.d.next = self.ev_sel.val() | self.chg_next.val();
        self.evq_sm.d.next = self.f_sm[0].val() | self.f_sm[1].val() | self.f_sm[2].val() | self.f_sm[3].val() | self.f_sm[4].val() | self.f_sm[5].val() | self.f_sm[6].val() | self.f_sm[7].val() | self.f_sm[8].val() | self.f_sm[9].val() | self.f_sm[10].val() | self.f_sm[11].val() | self.f_sm[12].val() | self.f_sm[13].val() | self.f_sm[14].val() | self.f_sm[15].val();
        self.evq_setup.d.next = self.f_setup[0].val() | self.f_setup[1].val() | self.f_setup[2].val() | self.f_setup[3].val() | self.f_setup[4].val() | self.f_setup[5].val() | self.f_setup[6].val() | self.f_setup[7].val() | self.f_setup[8].val() | self.f_setup[9].val() | self.f_setup[10].val() | self.f_setup[11].val() | self.f_setup[12].val() | self.f_setup[13].val() | self.f_setup[14].val() | self.f_setup[15].val();
        self.evq_token.d.next = self.f_token[0].val() | self.f_token[1].val() | self.f_token[2].val() | self.f_token[3].val() | self.f_token[4].val() | self.f_token[5].val() | self.f_token[6].val() | self.f_token[7].val() | self.f_token[8].val() | self.f_token[9].val() | self.f_token[10].val() | self.f_token[11].val() | self.f_token[12].val() | self.f_token[13].val() | self.f_token[14].val() | self.f_token[15].val();
        self.evq_back.d.next = self.f_back[0].val() | self.f_back[1].val() | self.f_back[2].val() | self.f_back[3].val() | self.f_back[4].val() | self.f_back[5].val() | self.f_back[6].val() | self.f_back[7].val() | self.f_back[8].val() | self.f_back[9].val() | self.f_back[10].val() | self.f_back[11].val() | self.f_back[12].val() | self.f_back[13].val() | self.f_back[14].val() | self.f_back[15].val();
        self.hand_now.next = self.f_hand[0].val() | self.f_hand[1].val() | self.f_hand[2].val() | self.f_hand[3].val() | self.f_hand[4].val() | self.f_hand[5].val() | self.f_hand[6].val() | self.f_hand[7].val() | self.f_hand[8].val() | self.f_hand[9].val() | self.f_hand[10].val() | self.f_hand[11].val() | self.f_hand[12].val() | self.f_hand[13].val() | self.f_hand[14].val() | self.f_hand[15].val();
        self.evq_hand.d.next = self.hand_now.val();
        self.evq_hok.d.next = self.h_any.val() & !self.dec_pending.val();
        self.ev_sel_o.next = self.ev_sel.val();
        self.evq_next.d.next = self.f_next[0].val() | self.f_next[1].val() | self.f_next[2].val() | self.f_next[3].val() | self.f_next[4].val() | self.f_next[5].val() | self.f_next[6].val() | self.f_next[7].val() | self.f_next[8].val() | self.f_next[9].val() | self.f_next[10].val() | self.f_next[11].val() | self.f_next[12].val() | self.f_next[13].val() | self.f_next[14].val() | self.f_next[15].val();
        // (a handover's next kernel is the heir)
        if self.hand_now.val() {
            self.evq_next.d.next = self.h_k.val();
        }

        // The event picked the cycle before is applied: both its stages left out the SMs an
        // edge between could change, so its SM is in the state it was picked in.
        self.ev_sm.next = self.evq_sm.q.val();
        self.ev_any.next = self.evq_valid.q.val();
        self.ev_setup.next = self.evq_setup.q.val();
        self.ev_back.next = self.evq_back.q.val();
        // (a handover gives its holder's token back, as a release; one that found no heir does
        // nothing)
        self.ev_noop.next = self.evq_hand.q.val() & !self.evq_hok.q.val();
        self.ev_hand.next = self.ev_any.val() & self.evq_hand.q.val() & self.evq_hok.q.val();
        self.ev_next.next = self.evq_next.q.val();
        self.ev_token.next = self.ev_any.val() & self.evq_token.q.val() & !self.ev_noop.val();

        // The KSR indices some SM names.
        for k in 0..MAX_SMS {
            self.named_k[k].next = false;
        }
        for s in 0..MAX_SMS {
            for k in 0..MAX_SMS {
                if (self.sm_ksr_valid[s].q.val() & (self.sm_ksr[s].q.val() == self.ids[k].val()))
                    | (self.sm_next_valid[s].q.val() & (self.sm_next[s].q.val() == self.ids[k].val()))
                {
                    self.named_k[k].next = true;
                }
            }
        }
        for k in 0..MAX_SMS {
            self.named_bit[k].next = 0.into();
            if self.named_k[k].val() {
                self.named_bit[k].next = self.onehot[k].val();
            }
        }
        self.named_now.next = self.named_bit[0].val()
            | self.named_bit[1].val()
            | self.named_bit[2].val()
            | self.named_bit[3].val()
            | self.named_bit[4].val()
            | self.named_bit[5].val()
            | self.named_bit[6].val()
            | self.named_bit[7].val()
            | self.named_bit[8].val()
            | self.named_bit[9].val()
            | self.named_bit[10].val()
            | self.named_bit[11].val()
            | self.named_bit[12].val()
            | self.named_bit[13].val()
            | self.named_bit[14].val()
            | self.named_bit[15].val();
        self.named.next = self.named_q.q.val();
        self.named_q.d.next = self.named_now.val();

        // The policy engine's read port.
        self.a_state.next = 0.into();
        self.a_ksr_valid.next = false;
        self.a_ksr.next = 0.into();
        self.a_priority.next = 0.into();
        self.a_age.next = 0.into();
        for s in 0..MAX_SMS {
            if self.a.val() == self.ids[s].val() {
                self.a_state.next = self.sm_state[s].q.val();
                self.a_ksr_valid.next = self.sm_ksr_valid[s].q.val();
                self.a_ksr.next = self.sm_ksr[s].q.val();
                if self.sm_ksr_valid[s].q.val() {
                    self.a_priority.next = self.sm_prio[s].q.val();
                    self.a_age.next = self.sm_age[s].q.val();
                }
            }
        }
        // Whether the kernel at `a` runs anywhere.
        self.a_running.next = false;
        for s in 0..MAX_SMS {
            if self.sm_ksr_valid[s].q.val() & (self.sm_ksr[s].q.val() == self.a.val()) & (self.sm_state[s].q.val() == 2) {
                self.a_running.next = true;
            }
        }

        // The registered decision's SM, for its check.
        self.from_now.next = 0.into();
        self.chk_idle.next = false;
        self.chk_runs.next = false;
        for s in 0..MAX_SMS {
            if self.chk_oh.val().get_bit(s) & (self.sm_state[s].q.val() == 0) {
                self.chk_idle.next = true;
            }
            if self.chk_oh.val().get_bit(s) & (self.sm_state[s].q.val() == 2) & self.from_q.q.val().get_bit(s) {
                self.chk_runs.next = true;
            }
            self.from_now.next = self.from_now.val().replace_bit(s, self.sm_ksr_valid[s].q.val() & (self.sm_ksr[s].q.val() == self.dec_from.val()));
            // (under sharing a handover changes a running SM's kernel: the SM handed over at
            // this edge names its heir after it)
            if self.ev_hand.val() & (self.ev_sm.val() == self.ids[s].val()) {
                self.from_now.next = self.from_now.val().replace_bit(s, self.evq_next.q.val() == self.dec_from.val());
            }
        }
        self.from_q.d.next = self.from_now.val();

        // SMs that need the clock, registered: each SM's "its kernel has work" in one
        // register, the needs computed from it in the next (the clock request is conservative:
        // the framework keeps the clock for two cycles after any activity, which covers the lag).
        // A reserved SM needs it once it holds no block; a running one with room (under sharing:
        // an eligible kernel at the last edge, `sh_el`) unless the SM reports itself full: the
        // completions, saves, quotas and reports these wait for are inputs, which clock it.
        self.hw_now.next = 0.into();
        self.need_now.next = 0.into();
        for s in 0..MAX_SMS {
            self.hw_now.next = self.hw_now.val().replace_bit(s, self.has_work.val().get_bit(self.sm_ksr[s].q.val().index()));
            self.need_now.next = self.need_now.val().replace_bit(
                s,
                (self.sm_state[s].q.val() == 1)
                    | ((self.sm_state[s].q.val() == 3) & (self.sm_running[s].q.val() == 0))
                    | ((self.sm_state[s].q.val() == 2)
                        & (((self.sm_running[s].q.val() == 0) & !self.hw_q.q.val().get_bit(s))
                            | ((((self.sm_running[s].q.val() < self.sm_tk[s].q.val()) & self.hw_q.q.val().get_bit(s) & !self.sh_on.val()) | (self.sh_el.val().get_bit(s) & self.sh_on.val()))
                                & !self.full.val().get_bit(s)))),
            );
        }
        self.hw_q.d.next = self.hw_now.val();
        self.need_q.d.next = self.need_now.val();
        self.busy.next = (self.rdy_q.q.val() | self.evc_q.q.val() | self.need_q.q.val()).any();

        // The two stages.
        // First stage, registered: running SMs with room, not changing, whose kernel has a
        // block left after the block in flight (and whether it has two).
        for s in 0..MAX_SMS {
            self.ready_bit[s].next = 0.into();
            self.lt2_bit[s].next = 0.into();
            // (blocks left after the block in flight: one fewer if it is of this SM's kernel, so
            // the next vector's bit; the compare runs beside the reads)
            self.l1_s[s].next = self.rem_ge1.val().get_bit(self.sm_ksr[s].q.val().index());
            self.l2_s[s].next = self.rem_ge2.val().get_bit(self.sm_ksr[s].q.val().index());
            if self.flight_valid.val() & (self.flight_k.val() == self.sm_ksr[s].q.val()) {
                self.l1_s[s].next = self.rem_ge2.val().get_bit(self.sm_ksr[s].q.val().index());
                self.l2_s[s].next = self.rem_ge3.val().get_bit(self.sm_ksr[s].q.val().index());
            }
            if (self.sm_state[s].q.val() == 2) & (self.sm_running[s].q.val() < self.sm_tk[s].q.val()) & self.l1_s[s].val() {
                self.ready_bit[s].next = self.onehot[s].val();
                if !self.l2_s[s].val() {
                    self.lt2_bit[s].next = self.onehot[s].val();
                }
            }
        }
        self.rdy_now.next = (self.ready_bit[0].val()
            | self.ready_bit[1].val()
            | self.ready_bit[2].val()
            | self.ready_bit[3].val()
            | self.ready_bit[4].val()
            | self.ready_bit[5].val()
            | self.ready_bit[6].val()
            | self.ready_bit[7].val()
            | self.ready_bit[8].val()
            | self.ready_bit[9].val()
            | self.ready_bit[10].val()
            | self.ready_bit[11].val()
            | self.ready_bit[12].val()
            | self.ready_bit[13].val()
            | self.ready_bit[14].val()
            | self.ready_bit[15].val())
            & !self.changing.val()
            & !self.full.val();
        // (under sharing, `Share`'s first stage: the SMs with an eligible kernel)
        // (and the SM holds under 16 blocks in all, so that its count never wraps: the
        // count's top bit clear)
        self.top_v.next = 0.into();
        for s in 0..MAX_SMS {
            self.top_v.next = self.top_v.val().replace_bit(s, self.sm_running[s].q.val().get_bit(4));
        }
        if self.sh_on.val() {
            self.rdy_now.next = self.sh_rdy.val() & !self.changing.val() & !self.full.val() & !self.top_v.val();
        }
        self.rq_q.d.next = self.rdy_now.val();
        if self.pick_now.val() {
            self.rq_q.d.next = 0.into();
        }
        self.rdy_q.d.next = self.rdy_now.val();
        self.lt2_q.d.next = (self.lt2_bit[0].val()
            | self.lt2_bit[1].val()
            | self.lt2_bit[2].val()
            | self.lt2_bit[3].val()
            | self.lt2_bit[4].val()
            | self.lt2_bit[5].val()
            | self.lt2_bit[6].val()
            | self.lt2_bit[7].val()
            | self.lt2_bit[8].val()
            | self.lt2_bit[9].val()
            | self.lt2_bit[10].val()
            | self.lt2_bit[11].val()
            | self.lt2_bit[12].val()
            | self.lt2_bit[13].val()
            | self.lt2_bit[14].val()
            | self.lt2_bit[15].val())
            & !self.changing.val()
            & !self.full.val();
        if self.sh_on.val() {
            self.lt2_q.d.next = self.sh_lt2.val() & !self.changing.val() & !self.full.val();
        }
        // Second stage: the requests, those ready less any the edge ahead changes, and, while a
        // block is in flight, any whose kernel had under two left (it may be that kernel's last).
        // (`rq_q` is `rdy_q`, found with the pick in its second stage changing, so less the
        // SM in flight now; `blk_q` is the rest of `changing`)
        self.ready.next = self.rq_q.q.val() & !self.blk_q.q.val();
        if self.flight_valid.val() {
            self.ready.next = self.rq_q.q.val() & !self.blk_q.q.val() & !self.lt2_q.q.val();
        }
        // The pick's second stage: its SM and that SM's kernel, an AND-OR over the one-hot pick.
        self.pick_sm.next = 0.into();
        self.pick_k.next = 0.into();
        for s in 0..MAX_SMS {
            if self.pick_oh.val().get_bit(s) {
                self.pick_sm.next = self.pick_sm.val() | self.ids[s].val();
                self.pick_k.next = self.pick_k.val() | self.sm_ksr[s].q.val();
            }
        }

        // Each SM's kernel, T_k and running, for `Share`.
        self.run_v.next = 0.into();
        for s in 0..MAX_SMS {
            self.o_ksr[s].next = self.sm_ksr[s].q.val();
            self.o_tk[s].next = self.sm_tk[s].q.val();
            self.run_v.next = self.run_v.val().replace_bit(s, self.sm_state[s].q.val() == 2);
        }

        // Next state.
        for s in 0..MAX_SMS {
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
                self.sm_prio[s].d.next = self.act_k_priority.val();
                self.sm_age[s].d.next = self.act_k_age.val();
            }
            if self.reserve_ok.val() & (self.act_sm.val() == self.ids[s].val()) {
                self.sm_state[s].d.next = 3.into();
                self.sm_next_valid[s].d.next = true;
                self.sm_next[s].d.next = self.act_k.val();
                self.sm_ntk[s].d.next = self.act_k_tk.val();
                self.sm_nprio[s].d.next = self.act_k_priority.val();
                self.sm_nage[s].d.next = self.act_k_age.val();
            }
            if self.ev_hand.val() & (self.ev_sm.val() == self.ids[s].val()) {
                // (a handover: the heir holds the SM, which keeps running its blocks)
                self.sm_ksr[s].d.next = self.evq_next.q.val();
                self.sm_tk[s].d.next = self.hk_tk.val();
                self.sm_prio[s].d.next = self.hk_priority.val();
                self.sm_age[s].d.next = self.hk_age.val();
            }
            if self.ev_any.val() & !self.evq_hand.q.val() & (self.ev_sm.val() == self.ids[s].val()) {
                self.sm_next_valid[s].d.next = false;
                self.sm_next[s].d.next = 0.into();
                self.sm_running[s].d.next = 0.into();
                if self.ev_setup.val() {
                    self.sm_state[s].d.next = 1.into();
                    self.sm_ksr_valid[s].d.next = true;
                    self.sm_ksr[s].d.next = self.evq_next.q.val();
                    self.sm_tk[s].d.next = self.sm_ntk[s].q.val();
                    self.sm_prio[s].d.next = self.sm_nprio[s].q.val();
                    self.sm_age[s].d.next = self.sm_nage[s].q.val();
                } else {
                    self.sm_state[s].d.next = 0.into();
                    self.sm_ksr_valid[s].d.next = false;
                    self.sm_ksr[s].d.next = 0.into();
                }
            }
            // (the pick in flight is always issued: the pick ruled out what could stop it)
            if self.flight_valid.val() & (self.grant_sm.val() == self.ids[s].val()) {
                self.sm_running[s].d.next = self.left[s].val() + 1;
            }
        }
    }
}
