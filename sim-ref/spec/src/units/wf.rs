//! Interface of Warped-Slicer's global water-filling unit (RTL `rtl/src/wf/`, model
//! `mpgpu_ref::units::wf`): Xu et al., "Warped-Slicer", ISCA 2016, §IV (Algorithm 1, Eq. 4)
//! and §IV-A (online profiling), with the decisions in `docs/warped-slicer.md`.
//!
//! One instance for the GPU. It times the profiling window that every SM's sampling counters
//! (`mpgpu_spec::units::prof`) follow, reads each SM's latched counters one SM per cycle,
//! scales them into a score per (kernel, CTA count) with Eq. 4 in exact integers, builds each
//! kernel's staircase, normalises it, and runs the water-filling loop to a CTA quota per
//! kernel, or to the Spatial fallback.
//!
//! Cycle behaviour (both sides implement exactly this; `phase` is the FSM state the
//! co-simulation compares every cycle):
//! - **Idle**: `start` samples the configuration (`kernels`, `window`, `fallback_pct`,
//!   `delay`, `total`, `last`), clears the score table's valid bits and the per-kernel
//!   registers, and opens a window.
//! - **Window**: `window` cycles. `win_run` is high in each, `win_first` in the first (the SMs'
//!   counters restart from this cycle's events), `win_last` in the last (they latch, this
//!   cycle's events included). `since` restarts at the last cycle's edge.
//! - **Sum**: one SM per cycle (`rd_sm`), n += 1 and A += j for every SM profiling (`sm_j` > 0).
//! - The multiplier (16 x 16) takes its operands from two registers (`ma`, `mb`) and its
//!   product goes to a register (`pr`) every cycle: a product is read two cycles after its
//!   operands are set.
//! - **Scale**: three cycles: `wa` = W x A.
//! - **Collect**: one cycle for an SM that does not profile a kernel of the decision, twelve
//!   for one that does: n j; d = n j - A (sign and magnitude); s |d|; F = max(0, W A + s d);
//!   the four 16 x 16 partial products of I x F, accumulated; the score written to the table
//!   at (kernel, j) with its valid bit at the twelfth edge. After the last SM: **RoundWait** (a
//!   further round of profiling follows: `start` opens its window, keeping the table) or,
//!   after a round started with `last`, **Build**.
//! - **Build**: per kernel, j = 1..[`NMAX`], two cycles each (the score read into a
//!   register, then compared): a valid score strictly above the kernel's best so far is
//!   appended to its staircase (compacted in place in the score table, its count j in the
//!   count table). Then the same kernel's **Norm** (if it has a staircase; its best is the
//!   peak), then the next kernel's Build.
//! - **Norm**: per step, one cycle loads the score and 17 cycles of restoring division give
//!   Qn = floor(score x 2^16 / peak), written at the 17th.
//! - **Init**: five cycles per kernel (`rd_k`): T = its first step's count (1 without a
//!   staircase); T x R registers (`prod`, every cycle); need takes it; the fit check
//!   registers (`fit`, every cycle); then R_L -= need
//!   (from `total` for kernel 0), or, if it did not fit, the decision is over-subscribed,
//!   which falls back after the last kernel.
//! - **Select**: one kernel per cycle (`k`), keeping the best so far (`sel`, `bq`, `found`):
//!   among the kernels not Full, the lowest current Qn, strict `<` (the lowest index wins a
//!   tie); none: Final.
//! - **Read**: a selected kernel at its peak is marked Full (back to Select); otherwise its
//!   next step (count and Qn) is read from the tables.
//! - **Mul**: three cycles: dT (the step's count less T), dT x R registers (`rd_k`), need
//!   takes it.
//! - **Fit**: two cycles: the fit check registers; then, if every component of need fitted
//!   R_L, the step is taken (R_L -= need, g += 1, T = the step's count, current Qn = the
//!   step's); otherwise the kernel is marked Full.
//! - **Final**: three cycles per kernel (100 K and Qn's low bits into the multiplier, the
//!   product, its comparison): Spatial if over-subscribed, or if 100 K Qn_i < pct x 2^16 for
//!   some kernel (its normalised performance below pct/100/K: the fallback,
//!   `docs/warped-slicer.md` O3).
//! - **Wait**: until `since >= delay - 2` (`State::delay` holds `delay - 2`, at least 0), then the quotas and the mode are published and
//!   `done` pulses in the next cycle: at the earliest `delay` cycles after the last window's
//!   last cycle (the decision delay of §V-H).
//!
//! Every output is a function of the registers (`rd_sm`, `rd_k` address the values the GPU
//! presents in the same cycle on `sm_*` and `k_req`).

use serde::Serialize;

/// Kernels a decision partitions at most.
pub const KMAX: usize = 4;
pub const K_BITS: usize = 2;
/// Bits of a kernel count K (0..=KMAX, as `kernels` carries it).
pub const KCOUNT_BITS: usize = crate::unit::clog2(KMAX as u64 + 1) as usize;
/// CTA counts profiled per kernel at most (a staircase's length).
pub const NMAX: usize = 16;
/// Bits of a CTA count (0..=16).
pub const J_BITS: usize = 5;
/// Bits of a step index within a staircase (0..NMAX), and of the score table's column.
pub const STEP_BITS: usize = crate::unit::clog2(NMAX as u64) as usize;
/// SMs the unit reads at most.
pub const MAX_SMS: usize = super::sched::MAX_SMS;
pub const SM_BITS: usize = 4;
/// Bits of n, the SMs profiling a kernel (0..=MAX_SMS).
pub const N_BITS: usize = crate::unit::clog2(MAX_SMS as u64 + 1) as usize;
/// Bits of a window length (cycles), of the stall counter and of the decision delay.
pub const WINDOW_BITS: usize = 16;
/// Bits of the fallback threshold `fallback_pct` (percent of 1/K).
pub const PCT_BITS: usize = 8;
/// Bits of each operand of the unit's one multiplier (16 x 16).
pub const MUL_BITS: usize = 16;
/// Bits of an SM's instruction count in a window (at most 4 warp-instructions a cycle).
pub const INST_BITS: usize = 18;
/// Bits of A, the sum of the profiling SMs' counts (at most 16 x 16).
pub const A_BITS: usize = 9;
/// Bits of F = W A + s d (W A and s |d| are each below 2^24).
pub const F_BITS: usize = 25;
/// Bits of a score I x F.
pub const SCORE_BITS: usize = INST_BITS + F_BITS;
/// Bits of a normalised step, Qn in 0..=2^16.
pub const Q_BITS: usize = 17;
/// Resource components: CTA slots, threads (warp-padded), registers, shared memory bytes.
pub const RES: usize = 4;
/// Bits of a resource amount (at most 98,304 bytes of shared memory).
pub const RES_BITS: usize = 17;
/// Bits of a request times a count (dT or T at most 31: below 2^22; held in 32, the
/// multiplier's width).
pub const NEED_BITS: usize = 32;
/// Score-table words: kernel k's entry for count j (1-based) is `k * NMAX + j - 1`.
pub const TABLE: usize = KMAX * NMAX;
/// Bits of a score-table address.
pub const TABLE_BITS: usize = K_BITS + STEP_BITS;
/// Bits of the FSM's phase code ([`phase`]).
pub const PHASE_BITS: usize = 4;

/// The FSM's phases (`State::phase`).
pub mod phase {
    pub const IDLE: u8 = 0;
    pub const WINDOW: u8 = 1;
    pub const SUM: u8 = 2;
    pub const SCALE: u8 = 3;
    pub const COLLECT: u8 = 4;
    pub const ROUND_WAIT: u8 = 5;
    pub const BUILD: u8 = 6;
    pub const NORM: u8 = 7;
    pub const INIT: u8 = 8;
    pub const SELECT: u8 = 9;
    pub const READ: u8 = 10;
    pub const MUL: u8 = 11;
    pub const FIT: u8 = 12;
    pub const FINAL: u8 = 13;
    pub const WAIT: u8 = 14;
    pub const NAMES: [&str; 15] = ["idle", "window", "sum", "scale", "collect", "round-wait", "build", "norm", "init", "select", "read", "mul", "fit", "final", "wait"];
}

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// Open a profiling window (in Idle: a new decision; in RoundWait: its next round).
    pub start: bool,
    /// With `start`: the decision follows this round.
    pub last: bool,
    /// With `start`: the kernels K (taken as 1..=KMAX).
    pub kernels: u8,
    /// With `start`: the window length W in cycles (0 is taken as 1).
    pub window: u16,
    /// With `start`: the fallback threshold, in percent of 1/K (the paper's 120).
    pub fallback_pct: u8,
    /// With `start`: the least cycles from the last window's last cycle to `done`.
    pub delay: u16,
    /// With `start`: one SM's resources (CTA slots, threads, registers, shared memory bytes).
    pub total: [u32; RES],
    /// SM `rd_sm`'s profiling assignment in this round: the kernel and its CTA count j
    /// (0: the SM does not profile).
    pub sm_k: u8,
    pub sm_j: u8,
    /// SM `rd_sm`'s latched counters (`mpgpu_spec::units::prof::Out`).
    pub sm_insts: u32,
    pub sm_stalls: u32,
    /// Kernel `rd_k`'s per-CTA request, in the components of `total`.
    pub k_req: [u32; RES],
}

/// Driven every clocked cycle (all from registers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// Not Idle.
    pub busy: bool,
    /// Waiting for the next round's `start`.
    pub round_wait: bool,
    /// To every SM's counters: the window's cycles, its first and its last.
    pub win_run: bool,
    pub win_first: bool,
    pub win_last: bool,
    /// The SM whose `sm_*` the unit reads this cycle (Sum, Collect; 0 otherwise).
    pub rd_sm: u8,
    /// The kernel whose `k_req` the unit reads this cycle (Init, Read, Mul; 0 otherwise).
    pub rd_k: u8,
    /// One cycle: `quota` and `spatial` hold a new decision from this cycle.
    pub done: bool,
    /// CTAs per SM of each kernel (0 past K), and the Spatial fallback.
    pub quota: [u8; KMAX],
    pub spatial: bool,
}

/// The registers compared with the RTL every cycle: the FSM's state trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub phase: u8,
    /// Sampled at `start`.
    pub kernels: u8,
    pub last: bool,
    pub window: u16,
    pub pct: u8,
    /// The decision delay less 2 (saturating): `since` reaching it ends Wait.
    pub delay: u16,
    pub total: [u32; RES],
    /// Cycle in the window; cycles since the last window's last edge (saturating).
    pub wcount: u16,
    pub since: u16,
    /// SM index (Sum, Collect), sub-step (Collect, Norm), kernel index (Build, Norm, Init),
    /// count or step index (Build, Norm), the selected kernel (Mul, Fit).
    pub sm: u8,
    pub sub: u8,
    pub k: u8,
    pub j: u8,
    pub sel: u8,
    /// n, A, W A; d's sign and magnitude; F; the product / the division's remainder; the best
    /// score so far / the peak; the quotient.
    pub n: u8,
    pub a: u16,
    pub wa: u32,
    pub dneg: bool,
    pub dmag: u16,
    pub f: u32,
    pub acc: u64,
    pub top: u64,
    pub q: u32,
    /// Valid bits of the score table (bit `k * NMAX + j - 1`).
    pub valid: u64,
    /// Per kernel: staircase length, T, g, current Qn; Full bits.
    pub len: [u8; KMAX],
    pub t: [u8; KMAX],
    pub g: [u8; KMAX],
    pub cur_q: [u32; KMAX],
    pub full: u8,
    /// The multiplier's operand registers (16 bits each; the product is read the cycle after
    /// they are set), Qn's top bit at Final, the count a request is multiplied by (Init: the
    /// first step's; Read: dT).
    pub ma: u32,
    pub mb: u32,
    /// The product of the last cycle's operands (registered every cycle).
    pub pr: u64,
    pub qhi: bool,
    pub cnt: u8,
    /// Read's reads for Mul and Fit: the next step's count and Qn; dT x R (Init, Mul).
    /// Select's running best: its Qn, and whether there is one.
    pub bq: u32,
    pub found: bool,
    pub m_next: u8,
    pub q_next: u32,
    pub need: [u32; RES],
    /// Resources left; over-subscribed at Init; the fallback decided at Final.
    pub rl: [u32; RES],
    pub over: bool,
    /// Whether need fitted R_L at the last edge (the fit check, registered every cycle).
    pub fit: bool,
    /// The count times the request (`k_req`), registered every cycle.
    pub prod: [u32; RES],
    pub res_spatial: bool,
    /// The published decision.
    pub done: bool,
    pub quota: [u8; KMAX],
    pub spatial: bool,
    /// The tables: scores (staircase steps after Build), the steps' counts, the steps' Qn.
    pub score: Vec<u64>,
    pub m: Vec<u64>,
    pub qn: Vec<u64>,
}

/// `x * c` for a small count `c` (0..=31), as the RTL forms it: shift and add.
pub fn times(x: u32, c: u8) -> u32 {
    (0..J_BITS).filter(|b| c >> b & 1 != 0).map(|b| x << b).sum()
}

/// `100 * K * q < pct * 2^16`: kernel performance `q / 2^16` below `pct / 100 / K`.
pub fn below_threshold(q: u32, kernels: u8, pct: u8) -> bool {
    let hundred = (q << 6) + (q << 5) + (q << 2);
    times(hundred, kernels) < (pct as u32) << 16
}

// The ports (`crate::port`), in wire order.

crate::wires! { In as i {
    /// Open a profiling window; with it, whether the decision follows this round.
    start(1) = i.start,
    last(1) = i.last,
    /// With `start`: the kernels, the window's cycles, the fallback threshold (percent of
    /// 1/K), the least cycles from the window's end to `done_out`.
    kernels(KCOUNT_BITS) = i.kernels,
    window(WINDOW_BITS) = i.window,
    fallback_pct(PCT_BITS) = i.fallback_pct,
    delay(WINDOW_BITS) = i.delay,
    /// With `start`: one SM's resources, one port per component.
    total # RES (RES_BITS) = |k| i.total[k],
    /// SM `rd_sm`'s profiling assignment (kernel, CTA count) and latched counters.
    sm_k(K_BITS) = i.sm_k,
    sm_j(J_BITS) = i.sm_j,
    sm_insts(INST_BITS) = i.sm_insts,
    sm_stalls(WINDOW_BITS) = i.sm_stalls,
    /// The kernel `rd_k`'s per-CTA request, one port per component.
    k_req # RES (RES_BITS) = |k| i.k_req[k],
} }

crate::wires! { Out as o {
    /// Work is under way; waiting for the next round.
    busy(1) = o.busy,
    round_wait(1) = o.round_wait,
    /// The sampling window: its cycles, first, last.
    win_run(1) = o.win_run,
    win_first(1) = o.win_first,
    win_last(1) = o.win_last,
    /// The SM and kernel whose counters are read.
    rd_sm(SM_BITS) = o.rd_sm,
    rd_k(K_BITS) = o.rd_k,
    /// One cycle: a new decision on `quota*` (CTAs per SM of each kernel) and `spatial_out`
    /// (the Spatial fallback).
    done_out(1) = o.done,
    quota # KMAX (J_BITS) = |k| o.quota[k],
    spatial_out(1) = o.spatial,
} unpack {
    Out {
        busy: busy != 0,
        round_wait: round_wait != 0,
        win_run: win_run != 0,
        win_first: win_first != 0,
        win_last: win_last != 0,
        rd_sm: rd_sm as u8,
        rd_k: rd_k as u8,
        done: done_out != 0,
        quota: std::array::from_fn(|k| quota[k] as u8),
        spatial: spatial_out != 0,
    }
} }
