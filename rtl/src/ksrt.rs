//! `Ksrt`: the Kernel Status Register Table of the kernel scheduling framework (thesis §5.2.3;
//! `docs/sched-framework.md`) as register arrays, with admission, retirement, token counts and
//! its read ports; a sub-block of `Sched`, whose header states the cycle contract.
//!
//! Each entry: valid bit, launch handle, grid size (as `k_tbs_m2`, less two), the next new block to issue, the
//! blocks done, T_k, priority, age (admission order modulo 2^16) and DSS token count (8-bit two's
//! complement). Every output is combinational from the registers and this cycle's inputs; the
//! entries change at the clock edge:
//! - `has_work`: the entries with blocks to issue (new ones, or preempted ones in their PTBQ);
//!   `rem_ge1..3`: those with at least one, two, three left (flags of `k_rem` kept in
//!   registers, so that no reader waits for the PTBQ's flags; the readers take off the block
//!   in flight, `iss_*`), for the readiness and the decision's check;
//! - retirement: the block finishing on `done_k` is its kernel's last (`retire`);
//! - admission: the command registered the cycle before (`cq_*`, from `cmd_*`, with its grid
//!   size's compares) enters the entry picked the cycle before (`free_*`: the lowest that was
//!   free, in use (below `sms`) and named by no SM in the cycle before (`named`)): `admit`,
//!   `admit_k`; the entry's age is `admitted`, which then counts up. The pick is still free
//!   when it is used: the only way an entry turns valid is an admission, and a cycle after
//!   one admits nothing (the command taken is not registered again), so a pick made in the
//!   cycle of an admission, which may name the entry being filled, is never used;
//! - read ports at the table address `a` (and whether that kernel could use more SMs than it
//!   has: `k_cap` = owned x T_k < `k_rem` = blocks left, both kept in registers), at
//!   the DSS engine's `kmax`/`kmin`, at the kernel of the decision being checked `chk_k` (T_k,
//!   priority and age, which the framework registers with the checked decision and the SMST
//!   copies as it names the kernel, for an assignment at once and for a reservation when the
//!   preemption completes) and at the issuing kernel `iss_oh`;
//! - token counts: +1 to `ev_back` on a release (`ev_token`; kept by the `keep_token` test
//!   fault), +1 to `act_from` on a reservation, -1 to `act_k` on an assignment or reservation.
//! Parameters: `sms` (1..=16) entries in use, and the `keep_token` test-only fault.

use mpgpu_spec::units::sched::dss::TOKEN_BITS;
use mpgpu_spec::units::sched::fw::{AGE_BITS, HANDLE_BITS, INDEX_BITS, MAX_SMS, MAX_TMAX, PRIORITY_BITS, PTBQ_ENTRIES, PTBQ_LEN_BITS, TBS_PER_SM_BITS, TB_BITS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Bits of owned x T_k (`k_cap`): at most MAX_SMS x MAX_TMAX = PTBQ_ENTRIES blocks, a PTBQ's
/// occupancy.
const CAP_BITS: usize = PTBQ_LEN_BITS;
const _: () = assert!(MAX_SMS * MAX_TMAX == PTBQ_ENTRIES && PTBQ_ENTRIES < 1 << CAP_BITS);
/// Bits of `k_rem` above `k_cap`'s, and above its lowest two.
const REM_HI_BITS: usize = TB_BITS - CAP_BITS;
const REM_GE4_BITS: usize = TB_BITS - 2;

// rust-hdl's Verilog generator evaluates widths, array lengths and loop bounds in Rust, so they
// are the spec's constants; a value or index inside `update` it reads itself (with only the loop
// variables known), so the OR trees there name the entries 0..=15, and `k_rem`'s bits above
// `k_cap`'s start at the literal bit 9 (= CAP_BITS).
const _: () = assert!(MAX_SMS == 16, "update's OR trees name the KSRT entries 0..=15 by literal indices");
const _: () = assert!(CAP_BITS == 9, "update splits k_rem at the literal bit 9");

type B4 = Bits<INDEX_BITS>;
type Tb = Bits<TB_BITS>;
type Rt = Bits<TBS_PER_SM_BITS>;

#[derive(LogicBlock)]
pub struct Ksrt {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A kernel launch is presented.
    pub cmd_valid: Signal<In, Bit>,
    /// The launch's handle.
    pub cmd_handle: Signal<In, Bits<HANDLE_BITS>>,
    /// Blocks in the grid.
    pub cmd_tbs: Signal<In, Tb>,
    /// T_k: blocks of the kernel one SM holds.
    pub cmd_tk: Signal<In, Rt>,
    /// The launch's priority.
    pub cmd_priority: Signal<In, Bits<PRIORITY_BITS>>,
    /// The launch's DSS tokens, two's complement.
    pub cmd_tokens: Signal<In, Bits<TOKEN_BITS>>,
    /// Bit k: an SM names KSR index k (the entry cannot be reused yet).
    pub named: Signal<In, Bits<MAX_SMS>>,
    /// A block finished on an SM of kernel `done_k`.
    pub done_valid: Signal<In, Bit>,
    /// The kernel of the finished block.
    pub done_k: Signal<In, B4>,
    /// The policy engine's table address.
    pub a: Signal<In, B4>,
    /// The DSS engine's candidate with the most tokens.
    pub kmax: Signal<In, B4>,
    /// The DSS engine's candidate with the fewest tokens.
    pub kmin: Signal<In, B4>,
    /// The kernel of the engine's decision.
    pub act_k: Signal<In, B4>,
    /// The kernel of the decision checked in this cycle (applied in the next if it holds).
    pub chk_k: Signal<In, B4>,
    /// The kernel a reservation takes its SM from.
    pub act_from: Signal<In, B4>,
    /// The decision assigns an idle SM to `act_k` at this edge.
    pub assign_ok: Signal<In, Bit>,
    /// The decision reserves an SM of `act_from` for `act_k` at this edge.
    pub reserve_ok: Signal<In, Bit>,
    /// The SM event returns a token to `ev_back`.
    pub ev_token: Signal<In, Bit>,
    /// The kernel the SM event's token goes back to.
    pub ev_back: Signal<In, B4>,
    /// The kernel issuing a block this cycle, one-hot (0 or one bit), from a register of the
    /// parent's own (`Sched::gr_koh`): each entry's issue terms read one bit of it, not a
    /// compare of a 4-bit index (`docs/fpga.md`, "The tables' registers").
    pub iss_oh: Signal<In, Bits<MAX_SMS>>,
    /// A new block of `iss_oh`'s kernel is issued at this edge.
    pub iss_new: Signal<In, Bit>,
    /// A block of `iss_oh`'s kernel, new or restored, is issued at this edge.
    pub iss_any: Signal<In, Bit>,
    /// A block of kernel `saved_k` is saved (to its PTBQ) at this edge.
    pub saved_valid: Signal<In, Bit>,
    pub saved_k: Signal<In, B4>,
    /// Under sharing: a quota write names launch `qw_handle`; the SM event hands an SM over
    /// to `hand_k` at this edge (it takes a token, as an assignment does: never at the edge
    /// that applies a decision); the heir read (`hk`).
    pub qw_valid: Signal<In, Bit>,
    pub qw_handle: Signal<In, Bits<HANDLE_BITS>>,
    pub hand: Signal<In, Bit>,
    pub hand_k: Signal<In, B4>,
    pub hk: Signal<In, B4>,
    /// One-hot: the valid entry holding `qw_handle` (0 if none, or no write), and its T_k.
    pub qw_hit: Signal<Out, Bits<MAX_SMS>>,
    pub qw_tk: Signal<Out, Rt>,
    /// Bit k: entry k is valid.
    pub valid_v: Signal<Out, Bits<MAX_SMS>>,
    /// KSRT[hk].tk, priority and age.
    pub hk_tk: Signal<Out, Rt>,
    pub hk_priority: Signal<Out, Bits<PRIORITY_BITS>>,
    pub hk_age: Signal<Out, Bits<AGE_BITS>>,
    /// Bit k: entry k has blocks to issue.
    pub has_work: Signal<Out, Bits<MAX_SMS>>,
    /// Bit k: entry k has at least one, two, three blocks left to issue, from registers (the
    /// block in flight not taken off: its readers take it off by reading the next vector when
    /// the block in flight is of that kernel, with the compare in parallel with the read).
    pub rem_ge1: Signal<Out, Bits<MAX_SMS>>,
    pub rem_ge2: Signal<Out, Bits<MAX_SMS>>,
    pub rem_ge3: Signal<Out, Bits<MAX_SMS>>,
    /// The finished block is its kernel's last: the entry leaves at this edge.
    pub retire: Signal<Out, Bit>,
    /// The handle of `done_k` (of the retiring launch).
    pub retired_handle: Signal<Out, Bits<HANDLE_BITS>>,
    /// The command enters entry `admit_k` at this edge.
    pub admit: Signal<Out, Bit>,
    /// The entry the command enters.
    pub admit_k: Signal<Out, B4>,
    /// KSRT[a] is valid.
    pub a_valid: Signal<Out, Bit>,
    /// KSRT[a].count.
    pub a_count: Signal<Out, Bits<TOKEN_BITS>>,
    /// KSRT[a] has blocks to issue.
    pub a_has_work: Signal<Out, Bit>,
    /// KSRT[a].priority.
    pub a_priority: Signal<Out, Bits<PRIORITY_BITS>>,
    /// KSRT[a].age.
    pub a_age: Signal<Out, Bits<AGE_BITS>>,
    /// KSRT[a] could use more SMs than it has or is getting (as of the cycle before: `wants_q`).
    pub a_wants_more: Signal<Out, Bit>,
    /// Pipeline: bit k, kernel k could use more SMs (valid, owned x T_k < blocks left).
    pub wants_q: Reg<Bits<MAX_SMS>>,
    /// KSRT[kmax].count.
    pub count_max: Signal<Out, Bits<TOKEN_BITS>>,
    /// KSRT[kmin].count.
    pub count_min: Signal<Out, Bits<TOKEN_BITS>>,
    /// KSRT[chk_k].tk, priority and age (set at the kernel's admission and fixed while it is
    /// valid; a kernel that passes the check has blocks left, so it is still valid when the
    /// decision is applied a cycle later).
    pub chk_tk: Signal<Out, Rt>,
    pub chk_priority: Signal<Out, Bits<PRIORITY_BITS>>,
    pub chk_age: Signal<Out, Bits<AGE_BITS>>,
    /// KSRT[iss_oh].handle.
    pub iss_handle: Signal<Out, Bits<HANDLE_BITS>>,
    /// KSRT[iss_oh].next_tb: its next new block.
    pub iss_next_tb: Signal<Out, Tb>,
    /// The entry holds a launch.
    pub k_valid: [Reg<Bit>; MAX_SMS],
    /// The launch's handle.
    pub k_handle: [Reg<Bits<HANDLE_BITS>>; MAX_SMS],
    /// Blocks in the grid, less two (modulo 2^20): after a finish the next block to finish
    /// is the last iff `k_done` equalled it, an equality of two registers in place of an
    /// increment and a compare (`docs/fpga.md`, eleventh round).
    pub k_tbs_m2: [Reg<Tb>; MAX_SMS],
    /// The next new block to issue.
    pub k_next_tb: [Reg<Tb>; MAX_SMS],
    /// Blocks finished.
    pub k_done: [Reg<Tb>; MAX_SMS],
    /// T_k.
    pub k_tk: [Reg<Rt>; MAX_SMS],
    /// Priority.
    pub k_priority: [Reg<Bits<PRIORITY_BITS>>; MAX_SMS],
    /// Admission order modulo 2^16.
    pub k_age: [Reg<Bits<AGE_BITS>>; MAX_SMS],
    /// DSS tokens, two's complement.
    pub k_count: [Reg<Bits<TOKEN_BITS>>; MAX_SMS],
    /// A flag kept beside the counters so that no compare of them is on the paths of a cycle's
    /// decisions (`docs/fpga.md`): the next block to finish is the kernel's last
    /// (`k_done + 1 ==` the grid size), set at the edges that change the counters it follows. (A flag
    /// for "new blocks left", `k_next_tb <` the grid size, was read with the PTBQ's flags for "has
    /// work" until the ninth timing round; `k_ge1` replaces both.)
    pub k_last: [Reg<Bit>; MAX_SMS],
    /// owned x T_k: the blocks the SMs the kernel has or is getting hold (setup, running, or
    /// reserved for it), kept as the owner changes: by T_k whenever its token count moves (every
    /// token move pairs with a change of owner, `Framework::check_invariants`).
    pub k_cap: [Reg<Bits<CAP_BITS>>; MAX_SMS],
    /// Blocks left to issue, new or preempted: `tbs - next_tb + queued`, kept as blocks are
    /// issued and saved.
    pub k_rem: [Reg<Tb>; MAX_SMS],
    /// `k_rem` >= 1, 2 and 3, kept as flags set at the edges that move `k_rem` (as `k_last`
    /// is), so that the readiness needs no 20-bit compare. `k_ge1` is "has work"
    /// (a new block left, or a block in the PTBQ) without a read of the PTBQ's flags
    /// (`docs/fpga.md`, ninth round).
    k_ge1: [Reg<Bit>; MAX_SMS],
    k_ge2: [Reg<Bit>; MAX_SMS],
    k_ge3: [Reg<Bit>; MAX_SMS],
    /// Admission counter (the next launch's age).
    pub admitted: Reg<Bits<AGE_BITS>>,
    /// Pipeline: the entry a command may enter (picked in the cycle before), unless `free_none`
    /// (stored inverted, so that the reset value names entry 0, free at reset).
    pub free_none: Reg<Bit>,
    pub free_k: Reg<B4>,
    /// The admission of this cycle as a one-hot entry enable (`admit` at `free_k`),
    /// registered from the values `admit` and `free_k` are registered from: each entry's
    /// writes take one flip-flop's bit in place of `admit`, a function of three registers
    /// driving every entry (`docs/fpga.md`, eleventh round).
    adm_en: Reg<Bits<MAX_SMS>>,
    admit_nx: Signal<Local, Bit>,
    free_neg: Signal<Local, Bits<MAX_SMS>>,
    /// Pipeline: the command presented in the cycle before and not taken then (the GPU still
    /// presents it), which admission takes; its fields are copied every cycle, with the grid
    /// size's compares for the new entry's flags (`tenth round`, `docs/fpga.md`).
    pub cq_valid: Reg<Bit>,
    pub cq_handle: Reg<Bits<HANDLE_BITS>>,
    pub cq_tbs: Reg<Tb>,
    /// The grid size less two (for `k_tbs_m2`).
    cq_tbs_m2: Reg<Tb>,
    cq_tk: Reg<Rt>,
    cq_priority: Reg<Bits<PRIORITY_BITS>>,
    cq_tokens: Reg<Bits<TOKEN_BITS>>,
    cq_ge1: Reg<Bit>,
    cq_ge2: Reg<Bit>,
    cq_ge3: Reg<Bit>,
    cq_eq1: Reg<Bit>,
    /// A command is registered (`cq_valid`): the clock request.
    pub cmd_pending: Signal<Out, Bit>,
    ids: [Constant<B4>; MAX_SMS],
    onehot: [Constant<Bits<MAX_SMS>>; MAX_SMS],
    /// Entry k is within the `sms` in use.
    in_use: [Constant<Bit>; MAX_SMS],
    fault_keep_token: Constant<Bit>,
    hw_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    ge1_acc: Signal<Local, Bits<MAX_SMS>>,
    ge2_acc: Signal<Local, Bits<MAX_SMS>>,
    ge3_acc: Signal<Local, Bits<MAX_SMS>>,
    /// The block in flight is kernel k's.
    iss_hit: [Signal<Local, Bit>; MAX_SMS],
    free_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    free_vec: Signal<Local, Bits<MAX_SMS>>,
    free_first: Signal<Local, Bits<MAX_SMS>>,
    free_id: [Signal<Local, B4>; MAX_SMS],
    one16: Constant<Bits<MAX_SMS>>,
    done_hit: Signal<Local, Bit>,
    /// The entries whose next finished block is their last (`k_valid & k_last`), read at
    /// `done_k` by a bit select (a tree on `done_k`'s bits, not a chain: `docs/fpga.md`, eighth
    /// round).
    last_v: Signal<Local, Bits<MAX_SMS>>,
    /// Kernel k's token count moves: a released SM's token back, a reserved SM's token from
    /// it, a token to it by the applied decision.
    up_release: [Signal<Local, Bit>; MAX_SMS],
    up_from: [Signal<Local, Bit>; MAX_SMS],
    down_act: [Signal<Local, Bit>; MAX_SMS],
    /// The counters' candidate next values, from the registers only (so that the late
    /// selects, not the carry chains, end each path): count + 1, + 2, - 1; owned x T_k + T_k,
    /// - T_k, - 2 T_k; blocks left + 1, - 1.
    cnt_p1: [Signal<Local, Bits<TOKEN_BITS>>; MAX_SMS],
    cnt_p2: [Signal<Local, Bits<TOKEN_BITS>>; MAX_SMS],
    cnt_m1: [Signal<Local, Bits<TOKEN_BITS>>; MAX_SMS],
    cap_p1: [Signal<Local, Bits<CAP_BITS>>; MAX_SMS],
    cap_m1: [Signal<Local, Bits<CAP_BITS>>; MAX_SMS],
    cap_m2: [Signal<Local, Bits<CAP_BITS>>; MAX_SMS],
    rem_p1: [Signal<Local, Tb>; MAX_SMS],
    rem_m1: [Signal<Local, Tb>; MAX_SMS],
    w_bit: [Signal<Local, Bits<MAX_SMS>>; MAX_SMS],
    wants_now: Signal<Local, Bits<MAX_SMS>>,
    /// T_k, as a cap step.
    tk9: [Signal<Local, Bits<CAP_BITS>>; MAX_SMS],
    /// owned x T_k moves: its SM returned (the token back, also under the keep_token fault).
    cap_back: [Signal<Local, Bit>; MAX_SMS],
    rem_up: [Signal<Local, Bit>; MAX_SMS],
    rem_down: [Signal<Local, Bit>; MAX_SMS],
}

impl Ksrt {
    /// The KSRT with entries 0..sms in use (1..=16); `keep_token` is the test-only fault.
    pub fn new(sms: usize, keep_token: bool) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "Ksrt supports 1..={MAX_SMS} entries, not {sms}");
        Self {
            clock: Default::default(),
            cmd_valid: Default::default(),
            cmd_handle: Default::default(),
            cmd_tbs: Default::default(),
            cmd_tk: Default::default(),
            cmd_priority: Default::default(),
            cmd_tokens: Default::default(),
            named: Default::default(),
            done_valid: Default::default(),
            done_k: Default::default(),
            a: Default::default(),
            kmax: Default::default(),
            kmin: Default::default(),
            act_k: Default::default(),
            chk_k: Default::default(),
            act_from: Default::default(),
            assign_ok: Default::default(),
            reserve_ok: Default::default(),
            ev_token: Default::default(),
            ev_back: Default::default(),
            iss_oh: Default::default(),
            iss_new: Default::default(),
            iss_any: Default::default(),
            saved_valid: Default::default(),
            saved_k: Default::default(),
            has_work: Default::default(),
            rem_ge1: Default::default(),
            rem_ge2: Default::default(),
            rem_ge3: Default::default(),
            retire: Default::default(),
            retired_handle: Default::default(),
            admit: Default::default(),
            admit_k: Default::default(),
            a_valid: Default::default(),
            a_count: Default::default(),
            a_has_work: Default::default(),
            a_priority: Default::default(),
            a_age: Default::default(),
            a_wants_more: Default::default(),
            count_max: Default::default(),
            count_min: Default::default(),
            chk_tk: Default::default(),
            chk_priority: Default::default(),
            chk_age: Default::default(),
            iss_handle: Default::default(),
            iss_next_tb: Default::default(),
            qw_valid: Default::default(),
            qw_handle: Default::default(),
            hand: Default::default(),
            hand_k: Default::default(),
            hk: Default::default(),
            qw_hit: Default::default(),
            qw_tk: Default::default(),
            valid_v: Default::default(),
            hk_tk: Default::default(),
            hk_priority: Default::default(),
            hk_age: Default::default(),
            k_valid: Default::default(),
            k_handle: Default::default(),
            k_tbs_m2: Default::default(),
            k_next_tb: Default::default(),
            k_done: Default::default(),
            k_tk: Default::default(),
            k_priority: Default::default(),
            k_age: Default::default(),
            k_count: Default::default(),
            k_last: Default::default(),
            k_cap: Default::default(),
            k_rem: Default::default(),
            admitted: Default::default(),
            free_none: Default::default(),
            free_k: Default::default(),
            adm_en: Default::default(),
            admit_nx: Default::default(),
            free_neg: Default::default(),
            cq_valid: Default::default(),
            cq_handle: Default::default(),
            cq_tbs: Default::default(),
            cq_tbs_m2: Default::default(),
            cq_tk: Default::default(),
            cq_priority: Default::default(),
            cq_tokens: Default::default(),
            cq_ge1: Default::default(),
            cq_ge2: Default::default(),
            cq_ge3: Default::default(),
            cq_eq1: Default::default(),
            cmd_pending: Default::default(),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            onehot: std::array::from_fn(|i| Constant::new((1u64 << i).into())),
            in_use: std::array::from_fn(|i| Constant::new(i < sms)),
            fault_keep_token: Constant::new(keep_token),
            one16: Constant::new(1u64.into()),
            hw_bit: Default::default(),
            ge1_acc: Default::default(),
            ge2_acc: Default::default(),
            ge3_acc: Default::default(),
            iss_hit: Default::default(),
            free_bit: Default::default(),
            free_vec: Default::default(),
            free_first: Default::default(),
            free_id: Default::default(),
            done_hit: Default::default(),
            last_v: Default::default(),
            up_release: Default::default(),
            up_from: Default::default(),
            down_act: Default::default(),
            cnt_p1: Default::default(),
            cnt_p2: Default::default(),
            cnt_m1: Default::default(),
            cap_p1: Default::default(),
            cap_m1: Default::default(),
            cap_m2: Default::default(),
            rem_p1: Default::default(),
            rem_m1: Default::default(),
            w_bit: Default::default(),
            wants_now: Default::default(),
            wants_q: Default::default(),
            tk9: Default::default(),
            cap_back: Default::default(),
            rem_up: Default::default(),
            k_ge1: Default::default(),
            k_ge2: Default::default(),
            k_ge3: Default::default(),
            rem_down: Default::default(),
        }
    }
}

impl Logic for Ksrt {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, admitted, free_none, free_k, adm_en, wants_q, cq_valid, cq_handle, cq_tbs, cq_tbs_m2, cq_tk, cq_priority, cq_tokens, cq_ge1, cq_ge2, cq_ge3, cq_eq1);
        for k in 0..MAX_SMS {
            self.k_valid[k].clock.next = self.clock.val();
            self.k_handle[k].clock.next = self.clock.val();
            self.k_tbs_m2[k].clock.next = self.clock.val();
            self.k_next_tb[k].clock.next = self.clock.val();
            self.k_done[k].clock.next = self.clock.val();
            self.k_tk[k].clock.next = self.clock.val();
            self.k_priority[k].clock.next = self.clock.val();
            self.k_age[k].clock.next = self.clock.val();
            self.k_count[k].clock.next = self.clock.val();
            self.k_last[k].clock.next = self.clock.val();
            self.k_cap[k].clock.next = self.clock.val();
            self.k_rem[k].clock.next = self.clock.val();
            self.k_ge1[k].clock.next = self.clock.val();
            self.k_ge2[k].clock.next = self.clock.val();
            self.k_ge3[k].clock.next = self.clock.val();
            self.k_ge1[k].d.next = self.k_ge1[k].q.val();
            self.k_ge2[k].d.next = self.k_ge2[k].q.val();
            self.k_ge3[k].d.next = self.k_ge3[k].q.val();
            self.k_cap[k].d.next = self.k_cap[k].q.val();
            self.k_rem[k].d.next = self.k_rem[k].q.val();
            self.k_valid[k].d.next = self.k_valid[k].q.val();
            self.k_handle[k].d.next = self.k_handle[k].q.val();
            self.k_tbs_m2[k].d.next = self.k_tbs_m2[k].q.val();
            self.k_next_tb[k].d.next = self.k_next_tb[k].q.val();
            self.k_done[k].d.next = self.k_done[k].q.val();
            self.k_tk[k].d.next = self.k_tk[k].q.val();
            self.k_priority[k].d.next = self.k_priority[k].q.val();
            self.k_age[k].d.next = self.k_age[k].q.val();
            self.k_count[k].d.next = self.k_count[k].q.val();
            self.k_last[k].d.next = self.k_last[k].q.val();
        }

        // Kernels with blocks to issue (new ones, or preempted ones in their PTBQ), and with at
        // least one, two, three left (the block in flight not taken off: see `rem_ge1`).
        self.ge1_acc.next = 0.into();
        self.ge2_acc.next = 0.into();
        self.ge3_acc.next = 0.into();
        for k in 0..MAX_SMS {
            // (the block in flight is this kernel's: its k_rem goes down at the edge)
            self.iss_hit[k].next = self.iss_any.val() & self.iss_oh.val().get_bit(k);
            // (k_rem >= 1 is "has work": a new block left or a block queued. The flags are the
            // registers themselves, with no valid bit: an entry retires only when all its blocks are done,
            // so with none left, and an invalid entry's flags are clear; `docs/fpga.md`, ninth
            // round.)
            self.ge1_acc.next = self.ge1_acc.val().replace_bit(k, self.k_ge1[k].q.val());
            self.ge2_acc.next = self.ge2_acc.val().replace_bit(k, self.k_ge2[k].q.val());
            self.ge3_acc.next = self.ge3_acc.val().replace_bit(k, self.k_ge3[k].q.val());
            self.hw_bit[k].next = 0.into();
            if self.k_ge1[k].q.val() {
                self.hw_bit[k].next = self.onehot[k].val();
            }
        }
        self.has_work.next = self.hw_bit[0].val()
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
        self.rem_ge1.next = self.ge1_acc.val();
        self.rem_ge2.next = self.ge2_acc.val();
        self.rem_ge3.next = self.ge3_acc.val();

        // Retirement: the finished block was its kernel's last.
        self.last_v.next = 0.into();
        self.retired_handle.next = 0.into();
        for k in 0..MAX_SMS {
            self.last_v.next = self.last_v.val().replace_bit(k, self.k_valid[k].q.val() & self.k_last[k].q.val());
            if self.done_k.val() == self.ids[k].val() {
                self.retired_handle.next = self.k_handle[k].q.val();
            }
        }
        self.done_hit.next = self.last_v.val().get_bit(self.done_k.val().index());
        self.retire.next = self.done_valid.val() & self.done_hit.val();

        // Admission: the command registered in the cycle before, into the entry picked in the
        // cycle before, if it is still free (an SM names only valid entries, so it is not
        // named). The command presented now is registered unless it is taken now (the GPU
        // presents a command until it is taken). The entry for the next cycle: the lowest free
        // entry in use that no SM names.
        self.admit_k.next = self.free_k.q.val();
        self.admit.next = self.cq_valid.q.val() & !self.free_none.q.val();
        self.cq_valid.d.next = self.cmd_valid.val() & !self.admit.val();
        self.cq_handle.d.next = self.cmd_handle.val();
        self.cq_tbs.d.next = self.cmd_tbs.val();
        self.cq_tbs_m2.d.next = self.cmd_tbs.val() - 2;
        self.cq_tk.d.next = self.cmd_tk.val();
        self.cq_priority.d.next = self.cmd_priority.val();
        self.cq_tokens.d.next = self.cmd_tokens.val();
        self.cq_ge1.d.next = self.cmd_tbs.val() != 0;
        self.cq_ge2.d.next = self.cmd_tbs.val() > 1;
        self.cq_ge3.d.next = self.cmd_tbs.val() > 2;
        self.cq_eq1.d.next = self.cmd_tbs.val() == 1;
        self.cmd_pending.next = self.cq_valid.q.val();
        // (the lowest isolated as x & -x on the carry chain, then encoded)
        for k in 0..MAX_SMS {
            self.free_bit[k].next = 0.into();
            if !self.k_valid[k].q.val() & self.in_use[k].val() {
                self.free_bit[k].next = self.onehot[k].val();
            }
        }
        self.free_vec.next = (self.free_bit[0].val() | self.free_bit[1].val() | self.free_bit[2].val() | self.free_bit[3].val() | self.free_bit[4].val() | self.free_bit[5].val() | self.free_bit[6].val() | self.free_bit[7].val() | self.free_bit[8].val() | self.free_bit[9].val() | self.free_bit[10].val() | self.free_bit[11].val() | self.free_bit[12].val() | self.free_bit[13].val() | self.free_bit[14].val() | self.free_bit[15].val()) & !self.named.val();
        self.free_neg.next = !self.free_vec.val() + self.one16.val();
        self.free_first.next = self.free_vec.val() & self.free_neg.val();
        for k in 0..MAX_SMS {
            self.free_id[k].next = 0.into();
            if self.free_first.val().get_bit(k) {
                self.free_id[k].next = self.ids[k].val();
            }
        }
        self.free_none.d.next = !self.free_vec.val().any();
        self.admit_nx.next = self.cq_valid.d.val() & !self.free_none.d.val();
        self.adm_en.d.next = 0.into();
        if self.admit_nx.val() {
            self.adm_en.d.next = self.free_first.val();
        }
        self.free_k.d.next = self.free_id[0].val() | self.free_id[1].val() | self.free_id[2].val() | self.free_id[3].val() | self.free_id[4].val() | self.free_id[5].val() | self.free_id[6].val() | self.free_id[7].val() | self.free_id[8].val() | self.free_id[9].val() | self.free_id[10].val() | self.free_id[11].val() | self.free_id[12].val() | self.free_id[13].val() | self.free_id[14].val() | self.free_id[15].val();

        // Read ports.
        self.a_valid.next = false;
        self.a_count.next = 0.into();
        self.a_priority.next = 0.into();
        self.a_age.next = 0.into();
        self.count_max.next = 0.into();
        self.count_min.next = 0.into();
        self.chk_tk.next = 0.into();
        self.chk_priority.next = 0.into();
        self.chk_age.next = 0.into();
        self.iss_handle.next = 0.into();
        self.iss_next_tb.next = 0.into();
        self.qw_hit.next = 0.into();
        self.qw_tk.next = 0.into();
        self.valid_v.next = 0.into();
        self.hk_tk.next = 0.into();
        self.hk_priority.next = 0.into();
        self.hk_age.next = 0.into();
        for k in 0..MAX_SMS {
            self.valid_v.next = self.valid_v.val().replace_bit(k, self.k_valid[k].q.val());
            if self.qw_valid.val() & self.k_valid[k].q.val() & (self.k_handle[k].q.val() == self.qw_handle.val()) {
                self.qw_hit.next = self.qw_hit.val().replace_bit(k, true);
                self.qw_tk.next = self.qw_tk.val() | self.k_tk[k].q.val();
            }
            if self.hk.val() == self.ids[k].val() {
                self.hk_tk.next = self.k_tk[k].q.val();
                self.hk_priority.next = self.k_priority[k].q.val();
                self.hk_age.next = self.k_age[k].q.val();
            }
            if self.a.val() == self.ids[k].val() {
                self.a_valid.next = self.k_valid[k].q.val();
                self.a_count.next = self.k_count[k].q.val();
                self.a_priority.next = self.k_priority[k].q.val();
                self.a_age.next = self.k_age[k].q.val();
            }
            if self.kmax.val() == self.ids[k].val() {
                self.count_max.next = self.k_count[k].q.val();
            }
            if self.kmin.val() == self.ids[k].val() {
                self.count_min.next = self.k_count[k].q.val();
            }
            if self.chk_k.val() == self.ids[k].val() {
                self.chk_tk.next = self.k_tk[k].q.val();
                self.chk_priority.next = self.k_priority[k].q.val();
                self.chk_age.next = self.k_age[k].q.val();
            }
            // (an AND-OR with the one-hot `iss_oh`)
            if self.iss_oh.val().get_bit(k) {
                self.iss_handle.next = self.iss_handle.val() | self.k_handle[k].q.val();
                self.iss_next_tb.next = self.iss_next_tb.val() | self.k_next_tb[k].q.val();
            }
        }
        self.a_has_work.next = self.has_work.val().get_bit(self.a.val().index());
        // Whether each kernel could use more SMs (owned x T_k < blocks left), registered: the
        // read at `a` is of the cycle before's tables.
        for k in 0..MAX_SMS {
            self.w_bit[k].next = 0.into();
            // (owned x T_k has 9 bits: blocks left at 512 or more are more than it; the
            // compare's carry chain is 9 bits long, not 20. No valid bit: an invalid entry has
            // no blocks left.)
            if (self.k_rem[k].q.val().get_bits::<REM_HI_BITS>(9) != 0) | (self.k_cap[k].q.val() < self.k_rem[k].q.val().get_bits::<CAP_BITS>(0)) {
                self.w_bit[k].next = self.onehot[k].val();
            }
        }
        self.wants_now.next = self.w_bit[0].val() | self.w_bit[1].val() | self.w_bit[2].val() | self.w_bit[3].val() | self.w_bit[4].val() | self.w_bit[5].val() | self.w_bit[6].val() | self.w_bit[7].val() | self.w_bit[8].val() | self.w_bit[9].val() | self.w_bit[10].val() | self.w_bit[11].val() | self.w_bit[12].val() | self.w_bit[13].val() | self.w_bit[14].val() | self.w_bit[15].val();
        self.wants_q.d.next = self.wants_now.val();
        // (a kernel admitted at this edge: nothing owned yet, all its blocks left; its entry was
        // invalid, so its bit is clear)
        if self.cq_ge1.q.val() {
            self.wants_q.d.next = self.wants_now.val() | self.adm_en.q.val();
        }
        self.a_wants_more.next = self.wants_q.q.val().get_bit(self.a.val().index());

        // T_k widened to the cap's width (unrolled: a cast takes no loop index).
        self.tk9[0].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[0].q.val());
        self.tk9[1].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[1].q.val());
        self.tk9[2].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[2].q.val());
        self.tk9[3].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[3].q.val());
        self.tk9[4].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[4].q.val());
        self.tk9[5].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[5].q.val());
        self.tk9[6].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[6].q.val());
        self.tk9[7].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[7].q.val());
        self.tk9[8].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[8].q.val());
        self.tk9[9].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[9].q.val());
        self.tk9[10].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[10].q.val());
        self.tk9[11].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[11].q.val());
        self.tk9[12].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[12].q.val());
        self.tk9[13].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[13].q.val());
        self.tk9[14].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[14].q.val());
        self.tk9[15].next = bit_cast::<CAP_BITS, TBS_PER_SM_BITS>(self.k_tk[15].q.val());
        // Next state.
        for k in 0..MAX_SMS {
            self.cap_back[k].next = self.ev_token.val() & (self.ev_back.val() == self.ids[k].val());
            self.up_release[k].next = self.cap_back[k].val() & !self.fault_keep_token.val();
            self.up_from[k].next = self.reserve_ok.val() & (self.act_from.val() == self.ids[k].val());
            self.down_act[k].next = ((self.assign_ok.val() | self.reserve_ok.val()) & (self.act_k.val() == self.ids[k].val())) | (self.hand.val() & (self.hand_k.val() == self.ids[k].val()));
            self.rem_up[k].next = self.saved_valid.val() & (self.saved_k.val() == self.ids[k].val());
            self.rem_down[k].next = self.iss_hit[k].val();
            self.cnt_p1[k].next = self.k_count[k].q.val() + 1;
            self.cnt_p2[k].next = self.k_count[k].q.val() + 2;
            self.cnt_m1[k].next = self.k_count[k].q.val() - 1;
            self.cap_p1[k].next = self.k_cap[k].q.val() + self.tk9[k].val();
            self.cap_m1[k].next = self.k_cap[k].q.val() - self.tk9[k].val();
            self.cap_m2[k].next = self.k_cap[k].q.val() - (self.tk9[k].val() << 1);
            self.rem_p1[k].next = self.k_rem[k].q.val() + 1;
            self.rem_m1[k].next = self.k_rem[k].q.val() - 1;
            // The token count: + released + from - to.
            if self.down_act[k].val() {
                if self.up_release[k].val() & self.up_from[k].val() {
                    self.k_count[k].d.next = self.cnt_p1[k].val();
                }
                if !self.up_release[k].val() & !self.up_from[k].val() {
                    self.k_count[k].d.next = self.cnt_m1[k].val();
                }
            } else {
                if self.up_release[k].val() & self.up_from[k].val() {
                    self.k_count[k].d.next = self.cnt_p2[k].val();
                }
                if self.up_release[k].val() ^ self.up_from[k].val() {
                    self.k_count[k].d.next = self.cnt_p1[k].val();
                }
            }
            // owned x T_k follows the owner changes: + T_k to it, - T_k from it, - T_k back
            // (the released SM's too under the keep_token fault, which only keeps the token).
            if self.down_act[k].val() {
                if !self.up_from[k].val() & !self.cap_back[k].val() {
                    self.k_cap[k].d.next = self.cap_p1[k].val();
                }
                if self.up_from[k].val() & self.cap_back[k].val() {
                    self.k_cap[k].d.next = self.cap_m1[k].val();
                }
            } else {
                if self.up_from[k].val() ^ self.cap_back[k].val() {
                    self.k_cap[k].d.next = self.cap_m1[k].val();
                }
                if self.up_from[k].val() & self.cap_back[k].val() {
                    self.k_cap[k].d.next = self.cap_m2[k].val();
                }
            }
            // Blocks left: one fewer per issue, one more per save.
            if self.rem_up[k].val() & !self.rem_down[k].val() {
                self.k_rem[k].d.next = self.rem_p1[k].val();
            }
            if !self.rem_up[k].val() & self.rem_down[k].val() {
                self.k_rem[k].d.next = self.rem_m1[k].val();
            }
            // The flags follow: up one (a save) or down one (an issue), or neither.
            if self.rem_up[k].val() & !self.rem_down[k].val() {
                self.k_ge1[k].d.next = true;
                self.k_ge2[k].d.next = self.k_ge1[k].q.val();
                self.k_ge3[k].d.next = self.k_ge2[k].q.val();
            }
            if !self.rem_up[k].val() & self.rem_down[k].val() {
                self.k_ge1[k].d.next = self.k_ge2[k].q.val();
                self.k_ge2[k].d.next = self.k_ge3[k].q.val();
                // (four or more: a bit above the lowest two, an OR, not a compare's carry chain)
                self.k_ge3[k].d.next = self.k_rem[k].q.val().get_bits::<REM_GE4_BITS>(2) != 0;
            }
            if self.done_valid.val() & (self.done_k.val() == self.ids[k].val()) {
                self.k_done[k].d.next = self.k_done[k].q.val() + 1;
                self.k_last[k].d.next = self.k_done[k].q.val() == self.k_tbs_m2[k].q.val();
                // (retirement, with this entry's own flag: not through `retire`, whose read of
                // the finished block's entry is a multiplexer)
                if self.k_last[k].q.val() {
                    self.k_valid[k].d.next = false;
                }
            }
            if self.iss_new.val() & self.iss_oh.val().get_bit(k) {
                self.k_next_tb[k].d.next = self.k_next_tb[k].q.val() + 1;
            }
            if self.adm_en.q.val().get_bit(k) {
                self.k_valid[k].d.next = true;
                self.k_handle[k].d.next = self.cq_handle.q.val();
                self.k_tbs_m2[k].d.next = self.cq_tbs_m2.q.val();
                self.k_next_tb[k].d.next = 0.into();
                self.k_done[k].d.next = 0.into();
                self.k_tk[k].d.next = self.cq_tk.q.val();
                self.k_priority[k].d.next = self.cq_priority.q.val();
                self.k_age[k].d.next = self.admitted.q.val();
                self.k_count[k].d.next = self.cq_tokens.q.val();
                self.k_last[k].d.next = self.cq_eq1.q.val();
                self.k_cap[k].d.next = 0.into();
                self.k_rem[k].d.next = self.cq_tbs.q.val();
                self.k_ge1[k].d.next = self.cq_ge1.q.val();
                self.k_ge2[k].d.next = self.cq_ge2.q.val();
                self.k_ge3[k].d.next = self.cq_ge3.q.val();
            }
        }
        if self.admit.val() {
            self.admitted.d.next = self.admitted.q.val() + 1;
        }
    }
}
