//! `Zorua`: one SM's Zorua coordinator and its three mapping tables (Vijaykumar et al.,
//! "Zorua", MICRO 2016, §4.2-§4.5; interface and timing in `mpgpu_spec::units::zorua`, the
//! decisions in `docs/zorua.md`, "The coordinator"; model `mpgpu_ref::units::zorua::Coord`).
//!
//! Geometry: the paper's tables at the largest SM the presets have. 64 logical warps, 16
//! logical blocks; up to 512 physical register sets (registers / 128: Kepler's and Maxwell's
//! 65,536 registers), up to 64 physical scratchpad sets (1 KB: Maxwell's 64 KB), up to 64
//! physical warp slots. The configuration's own counts are parameters (`ZoruaParams`): the
//! physical sets and slots beyond them are never free, so synthesis removes what they would
//! use (the free maps' words past the last set, their finders).
//! - The register mapping table: 16 RAMs of 64 words x 10 bits, one per logical set of a warp
//!   (64 x 16 x 10 b = 1.25 KB), a word the valid (physical) bit and the physical set.
//! - The scratchpad mapping table: 64 RAMs of 16 words x 7 bits, one per logical set of a
//!   block (16 x 64 x 7 b = 896 B).
//! - The warp-slot mapping table: 64 x 7 bits of registers (a valid bit and the slot).
//!
//! Per logical warp (registers): its block, the register sets its phase needs and those it
//! holds. Per logical block: the scratchpad sets needed and held, the warps not ended, those
//! at the barrier. The three queues, the schedulable and barrier sets and the live warps are
//! 64-bit masks. Free maps are kept as used maps (zero at reset), with their counts (the sets
//! reserved by a warp being allocated counted). The threshold starts at `o_default`.
//!
//! Pipelined for 100 MHz (the model's `zorua.timing = "pipelined"`, `docs/zorua.md`,
//! "Timing"): an event's inputs and the fields it reads are registered in the cycle it is
//! taken and applied in the next; a scan starts with the fit, the queues' candidates and the
//! first (three cycles); a warp is examined in four (its fields, its block's, its needs, the
//! decision), the next candidate picked meanwhile from the same state; sets are allocated and
//! freed one per cycle after a first cycle that finds the lowest free set or selects the
//! highest entry. Every step reads registers the step before wrote. The tables' RAMs read a
//! cycle after the address (block or distributed RAM); their read addresses are the current
//! warp and block, registered.
//!
//! The widths come from `mpgpu_spec::units::zorua` and from the RTL's geometry constants below
//! (rust-hdl's Verilog generator evaluates widths in Rust). An index, a bit position or a loop
//! bound inside the logic is a literal written for that geometry: the generator evaluates
//! indices itself, with only the loop variables known (the assert below states the geometry).
//!
//! The block is flat (`crate::flat`): its registers and RAMs are listed once, at the end of this
//! file, and its logic is written in parts, run in order: `cycle` (the defaults and what every
//! cycle computes; last, the slack and the fields' writes), `event` (an event taken and
//! applied, the release step), `sets` (freeing and allocating sets, the grant) and `scan` (a
//! scan of the queues, a warp examined). The constructor is in `init`.

mod cycle;
mod event;
mod init;
mod scan;
mod sets;

use crate::ram::SyncRam;
use crate::reg::Reg;
use mpgpu_spec::units::zorua::{
    Ev, EPOCH_BITS, EV_BITS, LBLOCK_BITS, LREG_COUNT_BITS, LSMEM_COUNT_BITS, LWARP_BITS, MAX_LBLOCKS, MAX_LWARPS, MAX_PSLOTS, NWARPS_BITS, O_BITS, O_MAX, PREG_COUNT_BITS, PSLOT_BITS,
    PSLOT_COUNT_BITS, PSMEM_BITS, PSMEM_COUNT_BITS, REGS_BITS, REG_SETS, RSETS_BITS, SET_REGS, SMEM_BYTES_BITS, SMEM_SETS, SMEM_SET_BYTES, SSETS_BITS,
};
pub use mpgpu_spec::units::zorua::{MAX_PREG_SETS, MAX_PSMEM_SETS, PREG_BITS};
use rust_hdl::prelude::*;

const _: () = assert!(
    MAX_LWARPS == 64 && MAX_LBLOCKS == 16 && REG_SETS == 16 && SET_REGS == 4 && SMEM_SET_BYTES == 1 << 10 && MAX_PREG_SETS == 512 && SMEM_SETS == 64,
    "the logic's loop bounds, indices and bit positions are literals written for this geometry"
);
const _: () = assert!(MAX_PSLOTS == MAX_LWARPS && MAX_PSMEM_SETS == SMEM_SETS && MAX_PREG_SETS == 1 << PREG_BITS && O_MAX as usize == 16);

/// A word of the register table: its valid (physical) bit above the set.
const RENT_BITS: usize = PREG_BITS + 1;
/// A word of the scratchpad table: its valid bit above the physical set.
const SENT_BITS: usize = PSMEM_BITS + 1;
/// The register used map, in words of 64 sets (`reg_used`): bits of a set within its word,
/// the words, and bits of a word's number.
const REG_WORD_BITS: usize = 6;
const REG_WORD: usize = 1 << REG_WORD_BITS;
const REG_WORDS: usize = MAX_PREG_SETS >> REG_WORD_BITS;
const REG_WORDS_BITS: usize = PREG_BITS - REG_WORD_BITS;
/// The steps, one-hot (`step`: `S_IDLE..=S_REL`).
const STEPS: usize = S_REL as usize + 1;
/// The threshold's epoch statistics and constants, a carry above an epoch count.
const THR_BITS: usize = EPOCH_BITS + 1;
/// The virtual space's extra sets: floor(physical x o / 16) register sets (`l_r`) and
/// scratchpad sets (`l_s`), at most the physical sets.
const LR_BITS: usize = PREG_COUNT_BITS;
const LS_BITS: usize = PSMEM_COUNT_BITS;
/// The decoder of a block's highest held scratchpad set (`sm_dec`: one above the sets).
const SMEM_DEC_BITS: usize = SMEM_SETS + 1;
/// The threshold's values (0..=O_MAX).
const O_VALUES: usize = O_MAX as usize + 1;
/// A block's scratchpad sets held plus the free ones (`pb_hs`), plus the room (`pb_hsr`); a
/// warp's register sets held plus the free ones (`pb_hr`).
const SHS_BITS: usize = SSETS_BITS + 1;
const SHSR_BITS: usize = SSETS_BITS + 2;
const RHR_BITS: usize = PREG_COUNT_BITS + 1;
/// The slack and the register-swap room (`slk`, `sw_r`), the scratchpad-swap room (`sw_s`):
/// a sign bit above a count of logical sets.
const SLACK_BITS: usize = LREG_COUNT_BITS + 1;
const SSW_BITS: usize = LSMEM_COUNT_BITS + 1;
/// The rooms (`s_room`, `r_room`): the free sets plus the swap the threshold allows, up to
/// twice the physical sets.
const SROOM_BITS: usize = PSMEM_COUNT_BITS + 1;
const RROOM_BITS: usize = PREG_COUNT_BITS + 1;
/// A block's warps less its arrivals, two's complement.
const GAP_BITS: usize = NWARPS_BITS + 1;

/// Event codes (`ev`): `mpgpu_spec::units::zorua::Ev`'s.
pub const EV_START: u64 = Ev::BlockStart as u64;
pub const EV_PHASE: u64 = Ev::Phase as u64;
pub const EV_BARRIER: u64 = Ev::Barrier as u64;
pub const EV_WARP_END: u64 = Ev::WarpEnd as u64;
pub const EV_BLOCK_END: u64 = Ev::BlockEnd as u64;
pub const EV_EPOCH: u64 = Ev::Epoch as u64;

/// Steps (`step`).
pub const S_IDLE: u64 = 0;
pub const S_EV: u64 = 1;
pub const S_W: u64 = 2;
pub const S_P1: u64 = 3;
pub const S_P2: u64 = 4;
pub const S_F: u64 = 5;
pub const S_B: u64 = 6;
pub const S_N: u64 = 7;
pub const S_D: u64 = 8;
pub const S_AL0: u64 = 9;
pub const S_AL: u64 = 10;
pub const S_READ: u64 = 11;
pub const S_FIN: u64 = 12;
pub const S_FREE0: u64 = 13;
pub const S_FREE: u64 = 14;
pub const S_REL: u64 = 15;

/// Test-only broken variants (as the model's `Broken`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ZoruaFaults {
    /// The rescan starts from the thread/barrier queue.
    pub rescan_from_thread: bool,
    /// A warp's end frees its block's scratchpad.
    pub smem_at_warp_end: bool,
}

/// The SM's physical resources and the threshold's constants (Algorithm 1), in the units of
/// the model's `Geometry` and `ThreshParams`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoruaParams {
    /// Physical warp slots (1..=64).
    pub slots: usize,
    /// Physical register sets of 128 registers (1..=512) and scratchpad sets of 1 KB (1..=64).
    pub reg_sets: usize,
    pub smem_sets: usize,
    pub o_default: u64,
    pub o_thresh_step: u64,
    pub c_delta_thresh: u64,
}

/// One SM's coordinator (ports: `mpgpu_spec::units::zorua`'s `In` and `Out`; the rest is
/// state and the pipeline's registers, named as in `docs/zorua.md`, "Timing").
#[derive(Clone, Debug, LogicBlock)]
pub struct Zorua {
    pub clock: Signal<In, Clock>,
    pub ev: Signal<In, Bits<EV_BITS>>,
    pub warp: Signal<In, Bits<LWARP_BITS>>,
    pub block: Signal<In, Bits<LBLOCK_BITS>>,
    pub warps: Signal<In, Bits<MAX_LWARPS>>,
    pub regs: Signal<In, Bits<REGS_BITS>>,
    pub smem: Signal<In, Bits<SMEM_BYTES_BITS>>,
    pub peak: Signal<In, Bits<REGS_BITS>>,
    pub nwarps_in: Signal<In, Bits<NWARPS_BITS>>,
    pub idle: Signal<In, Bits<EPOCH_BITS>>,
    pub mem: Signal<In, Bits<EPOCH_BITS>>,
    pub ready: Signal<Out, Bit>,
    pub grant: Signal<Out, Bit>,
    pub grant_warp: Signal<Out, Bits<LWARP_BITS>>,
    pub grant_slot: Signal<Out, Bits<PSLOT_BITS>>,
    pub reg_phys: Signal<Out, Bits<REG_SETS>>,
    pub reg_set: [Signal<Out, Bits<PREG_BITS>>; REG_SETS],
    pub smem_phys: Signal<Out, Bits<SMEM_SETS>>,
    pub smem_set: [Signal<Out, Bits<PSMEM_BITS>>; SMEM_SETS],
    pub o_thresh: Signal<Out, Bits<O_BITS>>,
    pub slot_room: Signal<Out, Bits<PSLOT_COUNT_BITS>>,
    /// Warps released this cycle (`Out::release`; `release` is a Verilog keyword): a
    /// barrier's opening, or a phase change whose needs are held. Their block's scratchpad row
    /// is on `smem_phys`/`smem_set`.
    pub released: Signal<Out, Bits<MAX_LWARPS>>,
    /// A warp waits in the scratchpad or register queue (`Out::waiting`).
    pub waiting: Signal<Out, Bit>,
    ids16: [Constant<Bits<LBLOCK_BITS>>; MAX_LBLOCKS],
    rs_ids: [Constant<Bits<RSETS_BITS>>; REG_SETS],
    ss_ids: [Constant<Bits<SSETS_BITS>>; SMEM_SETS],
    word_ids: [Constant<Bits<REG_WORDS_BITS>>; REG_WORDS],
    word_1h: [Constant<Bits<REG_WORDS>>; REG_WORDS],
    bitmask: [Constant<Bits<MAX_LWARPS>>; LWARP_BITS],
    slot_present: Constant<Bits<MAX_PSLOTS>>,
    smem_present: Constant<Bits<SMEM_SETS>>,
    /// The physical register sets present, by word of the used map.
    reg_present: [Constant<Bits<REG_WORD>>; REG_WORDS],
    /// The threshold's values, and for each the swap limits floor(physical x o / 16) and the
    /// virtual register space, physical + that limit (constants of the configuration).
    o_ids: [Constant<Bits<O_BITS>>; O_VALUES],
    lr_tab: [Constant<Bits<LR_BITS>>; O_VALUES],
    ls_tab: [Constant<Bits<LS_BITS>>; O_VALUES],
    cap_tab: [Constant<Bits<SLACK_BITS>>; O_VALUES],
    n_slots: Constant<Bits<PSLOT_COUNT_BITS>>,
    reg_total: Constant<Bits<PREG_COUNT_BITS>>,
    smem_total: Constant<Bits<PSMEM_COUNT_BITS>>,
    o_default: Constant<Bits<O_BITS>>,
    o_step: Constant<Bits<O_BITS>>,
    o_max: Constant<Bits<O_BITS>>,
    c_delta: Constant<Bits<THR_BITS>>,
    one64: Constant<Bits<MAX_LWARPS>>,
    one65: Constant<Bits<SMEM_DEC_BITS>>,
    ones64: Constant<Bits<MAX_LWARPS>>,
    low10: Constant<Bits<THR_BITS>>,
    gap_hi2: Constant<Bits<GAP_BITS>>,
    nw_hi1: Constant<Bits<NWARPS_BITS>>,
    nw_hi2: Constant<Bits<NWARPS_BITS>>,
    sl_hi: Constant<Bits<SLACK_BITS>>,
    v9: Constant<Bits<RENT_BITS>>,
    v7: Constant<Bits<SENT_BITS>>,
    rescan_from_thread: Constant<Bit>,
    smem_at_warp_end: Constant<Bit>,
    c_start: Constant<Bits<EV_BITS>>,
    c_phase: Constant<Bits<EV_BITS>>,
    c_bar: Constant<Bits<EV_BITS>>,
    c_wend: Constant<Bits<EV_BITS>>,
    c_bend: Constant<Bits<EV_BITS>>,
    c_epoch: Constant<Bits<EV_BITS>>,
    h_idle: Constant<Bits<STEPS>>,
    h_ev: Constant<Bits<STEPS>>,
    h_w: Constant<Bits<STEPS>>,
    h_p1: Constant<Bits<STEPS>>,
    h_p2: Constant<Bits<STEPS>>,
    h_f: Constant<Bits<STEPS>>,
    h_b: Constant<Bits<STEPS>>,
    h_n: Constant<Bits<STEPS>>,
    h_d: Constant<Bits<STEPS>>,
    h_al0: Constant<Bits<STEPS>>,
    h_al: Constant<Bits<STEPS>>,
    h_read: Constant<Bits<STEPS>>,
    h_fin: Constant<Bits<STEPS>>,
    h_free0: Constant<Bits<STEPS>>,
    h_free: Constant<Bits<STEPS>>,
    h_rel: Constant<Bits<STEPS>>,
    is_idle: Signal<Local, Bit>,
    eff_o: Signal<Local, Bits<O_BITS>>,
    l_s: Signal<Local, Bits<LS_BITS>>,
    l_r: Signal<Local, Bits<LR_BITS>>,
    l_cap: Signal<Local, Bits<SLACK_BITS>>,
    l_capf: Signal<Local, Bits<SLACK_BITS>>,
    valve: Signal<Local, Bit>,
    slot_free: Signal<Local, Bits<MAX_PSLOTS>>,
    smem_free_map: Signal<Local, Bits<SMEM_SETS>>,
    sl3: [Signal<Local, Bits<SLACK_BITS>>; 3],
    sl5: [Signal<Local, Bits<RSETS_BITS>>; 3],
    /// The slack's choice as an OR of the three clamped values, each masked by its
    /// (exclusive) condition (`sk_c`: a decision starting a warp, a started warp's end),
    /// not a chain of multiplexers behind the clamps.
    sk_t: [Signal<Local, Bits<RSETS_BITS>>; 3],
    sk_c: [Signal<Local, Bit>; 2],
    sel: Signal<Local, Bits<MAX_LWARPS>>,
    sel_any: Signal<Local, Bit>,
    slot_any: Signal<Local, Bit>,
    n_sfree: Signal<Local, Bits<PSMEM_COUNT_BITS>>,
    n_rfree: Signal<Local, Bits<PREG_COUNT_BITS>>,
    sw_s: Signal<Local, Bits<SSW_BITS>>,
    sw_r: Signal<Local, Bits<SLACK_BITS>>,
    c1s: Signal<Local, Bit>,
    c2s: Signal<Local, Bit>,
    ds: Signal<Local, Bits<SSETS_BITS>>,
    es: Signal<Local, Bits<SHS_BITS>>,
    c1r: Signal<Local, Bit>,
    c2r: Signal<Local, Bit>,
    dr: Signal<Local, Bits<RSETS_BITS>>,
    er: Signal<Local, Bits<RHR_BITS>>,
    fresh: Signal<Local, Bit>,
    t_pass: Signal<Local, Bit>,
    at_t: Signal<Local, Bit>,
    s_act: Signal<Local, Bit>,
    s_go: Signal<Local, Bit>,
    at_s: Signal<Local, Bit>,
    r_act: Signal<Local, Bit>,
    gr: Signal<Local, Bit>,
    at_r: Signal<Local, Bit>,
    moved: Signal<Local, Bit>,
    slot_new: Signal<Local, Bits<PSLOT_BITS>>,
    sx: Signal<Local, Bits<STEPS>>,
    rd_ent: Signal<Local, Bits<RENT_BITS>>,
    wq_m: Signal<Local, Bits<REG_SETS>>,
    bx: Signal<Local, Bit>,
    stn: Signal<Local, Bits<STEPS>>,
    bsn: Signal<Local, Bit>,
    e_bbit: Signal<Local, Bits<MAX_LBLOCKS>>,
    f_gw: Signal<Local, Bits<LWARP_BITS>>,
    f_gb: Signal<Local, Bits<LBLOCK_BITS>>,
    f_grn: Signal<Local, Bits<RSETS_BITS>>,
    f_grh: Signal<Local, Bits<RSETS_BITS>>,
    f_gsl: Signal<Local, Bits<PSLOT_BITS>>,
    b_gpk: Signal<Local, Bits<RSETS_BITS>>,
    b_gsn: Signal<Local, Bits<SSETS_BITS>>,
    b_gsh: Signal<Local, Bits<SSETS_BITS>>,
    b_gbb: Signal<Local, Bits<MAX_LBLOCKS>>,
    ev_rsets: Signal<Local, Bits<RSETS_BITS>>,
    ev_psets: Signal<Local, Bits<RSETS_BITS>>,
    ev_ssets: Signal<Local, Bits<SSETS_BITS>>,
    th_idle: Signal<Local, Bits<THR_BITS>>,
    th_mem: Signal<Local, Bits<THR_BITS>>,
    th_up: Signal<Local, Bits<O_BITS>>,
    th_new: Signal<Local, Bits<O_BITS>>,
    narr_new: Signal<Local, Bits<NWARPS_BITS>>,
    nw_new: Signal<Local, Bits<NWARPS_BITS>>,
    bar_open: Signal<Local, Bit>,
    slot_clr: Signal<Local, Bits<MAX_PSLOTS>>,
    fr_next: Signal<Local, Bits<RENT_BITS>>,
    rlow6: Signal<Local, Bits<REG_WORD_BITS>>,
    rword: Signal<Local, Bits<REG_WORDS_BITS>>,
    sentry6: Signal<Local, Bits<PSMEM_BITS>>,
    s_idx: Signal<Local, Bits<PSMEM_BITS>>,
    r_idx: Signal<Local, Bits<PREG_BITS>>,
    went: Signal<Local, Bits<RENT_BITS>>,
    sent: Signal<Local, Bits<SENT_BITS>>,
    s_rest: Signal<Local, Bits<SMEM_SETS>>,
    take_s: Signal<Local, Bit>,
    take_r: Signal<Local, Bit>,
    r_first: Signal<Local, Bits<REG_WORDS>>,
    w_wb_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_wb_v: Signal<Local, Bits<LBLOCK_BITS>>,
    w_rn_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_rn_v: Signal<Local, Bits<RSETS_BITS>>,
    w_rh_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_rh_v: Signal<Local, Bits<RSETS_BITS>>,
    w_sv_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_sv_v: Signal<Local, Bit>,
    w_sl_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_sl_v: Signal<Local, Bits<PSLOT_BITS>>,
    w_wp_m: Signal<Local, Bits<MAX_LWARPS>>,
    w_wp_v: Signal<Local, Bits<RSETS_BITS>>,
    w_sn_m: Signal<Local, Bits<MAX_LBLOCKS>>,
    w_sn_v: Signal<Local, Bits<SSETS_BITS>>,
    w_sh_m: Signal<Local, Bits<MAX_LBLOCKS>>,
    w_sh_v: Signal<Local, Bits<SSETS_BITS>>,
    w_nw_m: Signal<Local, Bits<MAX_LBLOCKS>>,
    w_nw_v: Signal<Local, Bits<NWARPS_BITS>>,
    w_na_m: Signal<Local, Bits<MAX_LBLOCKS>>,
    w_na_v: Signal<Local, Bits<NWARPS_BITS>>,
    w_bp_m: Signal<Local, Bits<MAX_LBLOCKS>>,
    w_bp_v: Signal<Local, Bits<RSETS_BITS>>,
    r_enc: [Signal<Local, Bits<REG_WORD_BITS>>; REG_WORDS],
    r_rest: [Signal<Local, Bits<REG_WORD>>; REG_WORDS],
    /// Each word's free sets (present and not used).
    r_free: [Signal<Local, Bits<REG_WORD>>; REG_WORDS],
    pub tq: Reg<Bits<MAX_LWARPS>>,
    pub sq: Reg<Bits<MAX_LWARPS>>,
    pub rq: Reg<Bits<MAX_LWARPS>>,
    pub sched: Reg<Bits<MAX_LWARPS>>,
    pub bar: Reg<Bits<MAX_LWARPS>>,
    pub live: Reg<Bits<MAX_LWARPS>>,
    pub blocks: Reg<Bits<MAX_LBLOCKS>>,
    pub started: Reg<Bits<MAX_LWARPS>>,
    pub reg_resv: Reg<Bits<LREG_COUNT_BITS>>,
    pub slotv: Reg<Bits<MAX_LWARPS>>,
    pub smem_used: Reg<Bits<SMEM_SETS>>,
    pub slot_used: Reg<Bits<MAX_PSLOTS>>,
    pub reg_cnt: Reg<Bits<PREG_COUNT_BITS>>,
    pub reg_swap: Reg<Bits<LREG_COUNT_BITS>>,
    pub smem_cnt: Reg<Bits<PSMEM_COUNT_BITS>>,
    pub smem_swap: Reg<Bits<LSMEM_COUNT_BITS>>,
    pub th_q: Reg<Bits<O_BITS>>,
    pub th_set: Reg<Bit>,
    pub n_used: Reg<Bits<PSLOT_COUNT_BITS>>,
    pub n_want: Reg<Bits<PSLOT_COUNT_BITS>>,
    pub step: Reg<Bits<STEPS>>,
    pub busy: Reg<Bit>,
    pub seen: Reg<Bits<MAX_LWARPS>>,
    pub cur1h: Reg<Bits<MAX_LWARPS>>,
    pub fw: Reg<Bits<LWARP_BITS>>,
    pub fb: Reg<Bits<LBLOCK_BITS>>,
    /// The event taken, one register per kind.
    pub e_kstart: Reg<Bit>,
    pub e_kphase: Reg<Bit>,
    pub e_kbar: Reg<Bit>,
    /// A block start's block has more warps than slots; a warp event's block gives its slots
    /// up at barriers (read from `bgive`).
    pub e_big: Reg<Bit>,
    pub eb_give: Reg<Bit>,
    /// Per block: its warps give their slots up at barriers.
    pub bgive: Reg<Bits<MAX_LBLOCKS>>,
    /// The warps a barrier's opening released, shown in the release step (`released`).
    pub rel: Reg<Bits<MAX_LWARPS>>,
    /// A phase change released its warp (`cur1h`): the release mask is `rel | cur1h`.
    pub rel_ph: Reg<Bit>,
    /// A phase change's "needs held" test for the scratchpad, registered when the event is
    /// taken: its bytes no more than the KB its block holds, and the block's need no more than
    /// it holds (no rounding adder). The registers' test (the new sets no more than the warp
    /// holds) is made when the event is applied, from the registered sets, beside the freeing's
    /// test of the same two values: read through the 64-way warp mux at the take, it was the
    /// critical path.
    pub e_hs: Reg<Bit>,
    pub e_hb: Reg<Bit>,
    h_bytes: Signal<Local, Bits<SMEM_BYTES_BITS>>,
    rel_q: Signal<Local, Bits<MAX_LWARPS>>,
    rel_m: Signal<Local, Bits<MAX_LWARPS>>,
    ph_held: Signal<Local, Bit>,
    rel_go: Signal<Local, Bit>,
    /// The step an event that releases warps chose, taken after the release step.
    pub rthen: Reg<Bits<STEPS>>,
    pub rbusy: Reg<Bit>,
    /// A warp other than the event's is schedulable (registered when the event is taken;
    /// nothing changes the schedulable set between the take and the apply).
    pub e_oth: Reg<Bit>,
    pub e_kwend: Reg<Bit>,
    pub e_kbend: Reg<Bit>,
    pub e_kepoch: Reg<Bit>,
    pub e_warps: Reg<Bits<MAX_LWARPS>>,
    pub e_rsets: Reg<Bits<RSETS_BITS>>,
    pub e_ssets: Reg<Bits<SSETS_BITS>>,
    pub e_psets: Reg<Bits<RSETS_BITS>>,
    pub e_nw: Reg<Bits<NWARPS_BITS>>,
    pub e_rsets1: Reg<Bits<RSETS_BITS>>,
    pub e_narr1: Reg<Bits<NWARPS_BITS>>,
    /// The block's warps less its arrivals (8 bits, two's complement).
    pub e_gap: Reg<Bits<GAP_BITS>>,
    ev_open: Signal<Local, Bit>,
    gap_le2: Signal<Local, Bit>,
    bop_w: Signal<Local, Bit>,
    bop_v: Signal<Local, Bit>,
    /// Per block: its barrier opens with one more arrival or one warp fewer (its warps no
    /// more than its arrivals plus one), kept as the block's fields move, so that the event's
    /// test is a register read at the take (`e_open`) rather than a difference's test in the
    /// cycle applying it.
    pub bopen: Reg<Bits<MAX_LBLOCKS>>,
    pub e_open: Reg<Bit>,
    /// The event's block has warps at its barrier (`eb_narr` nonzero, registered at the take so
    /// that the cycle applying a warp's end does not OR its bits before the barrier's test).
    pub e_nany: Reg<Bit>,
    pub e_up: Reg<Bit>,
    pub e_down: Reg<Bit>,
    pub f_rneed: Reg<Bits<RSETS_BITS>>,
    pub f_rheld: Reg<Bits<RSETS_BITS>>,
    pub f_slot: Reg<Bits<PSLOT_BITS>>,
    pub pb_hs: Reg<Bits<SHS_BITS>>,
    pub pb_hsr: Reg<Bits<SHSR_BITS>>,
    pub pb_rpk: Reg<Bits<SLACK_BITS>>,
    pub pb_hr: Reg<Bits<RHR_BITS>>,
    pub pb_hrr: Reg<Bits<SLACK_BITS>>,
    pub f_tq: Reg<Bit>,
    pub f_sq: Reg<Bit>,
    pub f_rq: Reg<Bit>,
    pub f_bar: Reg<Bit>,
    pub f_started: Reg<Bit>,
    pub b_sneed: Reg<Bits<SSETS_BITS>>,
    pub b_sheld: Reg<Bits<SSETS_BITS>>,
    pub b_bpeak: Reg<Bits<RSETS_BITS>>,
    pub bbit: Reg<Bits<MAX_LBLOCKS>>,
    pub bmask: Reg<Bits<MAX_LWARPS>>,
    pub wfit: Reg<Bits<MAX_LWARPS>>,
    pub m_rq: Reg<Bits<MAX_LWARPS>>,
    pub m_sq: Reg<Bits<MAX_LWARPS>>,
    pub m_tq: Reg<Bits<MAX_LWARPS>>,
    pub a_rq: Reg<Bit>,
    pub a_sq: Reg<Bit>,
    pub a_tq: Reg<Bit>,
    pub p_slot: Reg<Bit>,
    pub nxt: Reg<Bits<MAX_LWARPS>>,
    pub nxt_none: Reg<Bit>,
    pub s_room: Reg<Bits<SROOM_BITS>>,
    pub r_room: Reg<Bits<RROOM_BITS>>,
    pub q_sfree: Reg<Bits<PSMEM_COUNT_BITS>>,
    pub q_rfree: Reg<Bits<PREG_COUNT_BITS>>,
    pub n_need_s: Reg<Bits<SSETS_BITS>>,
    pub n_phys_s: Reg<Bits<PSMEM_COUNT_BITS>>,
    pub n_swap_s: Reg<Bits<SSETS_BITS>>,
    pub n_sok: Reg<Bit>,
    pub n_need_r: Reg<Bits<RSETS_BITS>>,
    pub n_phys_r: Reg<Bits<RSETS_BITS>>,
    pub n_swap_r: Reg<Bits<RSETS_BITS>>,
    pub n_rok: Reg<Bit>,
    pub slot_low: Reg<Bits<MAX_PSLOTS>>,
    pub a_smem: Reg<Bits<SSETS_BITS>>,
    pub a_sphys: Reg<Bits<PSMEM_COUNT_BITS>>,
    pub a_regs: Reg<Bits<RSETS_BITS>>,
    pub a_rphys: Reg<Bits<RSETS_BITS>>,
    pub a_grant: Reg<Bit>,
    pub g_slot: Reg<Bits<PSLOT_BITS>>,
    pub al_s1h: Reg<Bits<SMEM_SETS>>,
    pub slk: Reg<Bits<SLACK_BITS>>,
    pub sneg: Reg<Bit>,
    pub slack5q: Reg<Bits<RSETS_BITS>>,
    pub as_on: Reg<Bit>,
    pub al_last: Reg<Bit>,
    pub n_ns_one: Reg<Bit>,
    pub n_nr_one: Reg<Bit>,
    pub asp_on: Reg<Bit>,
    pub arp_on: Reg<Bit>,
    pub n_tok: Reg<Bit>,
    pub n_ns_any: Reg<Bit>,
    pub n_nr_any: Reg<Bit>,
    pub n_ps_any: Reg<Bit>,
    pub n_pr_any: Reg<Bit>,
    pub q_ls: Reg<Bits<LS_BITS>>,
    pub q_lr: Reg<Bits<LR_BITS>>,
    pub q_cap: Reg<Bits<SLACK_BITS>>,
    /// `q_cap` again, for the fit's slack: its own register, placed by the slack's subtractors
    /// (`q_cap` sits by the scan's token test); its lookup runs the table in the other order so
    /// that synthesis keeps the two (`docs/zorua.md`, the structural steps).
    pub q_capf: Reg<Bits<SLACK_BITS>>,
    pub fr_k: Reg<Bits<SSETS_BITS>>,
    pub fr_last: Reg<Bit>,
    pub fr_h: Reg<Bits<SSETS_BITS>>,
    pub al_rh: Reg<Bits<RSETS_BITS>>,
    pub al_sh: Reg<Bits<SSETS_BITS>>,
    pub e_rheld: Reg<Bits<RSETS_BITS>>,
    pub e_slot: Reg<Bits<PSLOT_BITS>>,
    pub e_slotv: Reg<Bit>,
    pub e_started: Reg<Bit>,
    pub eb_sneed: Reg<Bits<SSETS_BITS>>,
    pub eb_sheld: Reg<Bits<SSETS_BITS>>,
    pub eb_nw: Reg<Bits<NWARPS_BITS>>,
    pub eb_narr: Reg<Bits<NWARPS_BITS>>,
    pub eb_bpeak: Reg<Bits<RSETS_BITS>>,
    pub eb_bbit: Reg<Bits<MAX_LBLOCKS>>,
    pub fr_e: Reg<Bits<RENT_BITS>>,
    pub fr_sel: Reg<Bits<SMEM_SETS>>,
    pub fr_wr: Reg<Bits<SMEM_SETS>>,
    pub fend: Reg<Bit>,
    pub fthen: Reg<Bit>,
    pub fsm: Reg<Bit>,
    pub wblock: [Reg<Bits<MAX_LWARPS>>; LBLOCK_BITS],
    pub rneed: [Reg<Bits<MAX_LWARPS>>; RSETS_BITS],
    pub rheld: [Reg<Bits<MAX_LWARPS>>; RSETS_BITS],
    pub slot: [Reg<Bits<MAX_LWARPS>>; PSLOT_BITS],
    pub wpeak: [Reg<Bits<MAX_LWARPS>>; RSETS_BITS],
    pub sneed: [Reg<Bits<MAX_LBLOCKS>>; SSETS_BITS],
    pub sheld: [Reg<Bits<MAX_LBLOCKS>>; SSETS_BITS],
    pub nwarps: [Reg<Bits<MAX_LBLOCKS>>; NWARPS_BITS],
    pub narr: [Reg<Bits<MAX_LBLOCKS>>; NWARPS_BITS],
    pub bpeak: [Reg<Bits<MAX_LBLOCKS>>; RSETS_BITS],
    pub reg_used: [Reg<Bits<REG_WORD>>; REG_WORDS],
    pub al_r1h: [Reg<Bits<REG_WORD>>; REG_WORDS],
    pub al_rany: [Reg<Bit>; REG_WORDS],
    /// An allocation's register-table write, a cycle after its set is taken: the entry, the
    /// columns written; and the last such write seen by the grant's read (`wq_*` copied at the
    /// read, which misses the write it coincides with).
    pub wq_data: Reg<Bits<RENT_BITS>>,
    pub wq_en: Reg<Bits<REG_SETS>>,
    pub byp_en: Reg<Bits<REG_SETS>>,
    pub byp_data: Reg<Bits<RENT_BITS>>,
    pub reg_ram: [SyncRam<Bits<RENT_BITS>, LWARP_BITS>; REG_SETS],
    pub smem_ram: [SyncRam<Bits<SENT_BITS>, LBLOCK_BITS>; SMEM_SETS],
    mr: Signal<Local, Bits<MAX_LWARPS>>,
    ms: Signal<Local, Bits<MAX_LWARPS>>,
    mt: Signal<Local, Bits<MAX_LWARPS>>,
    lt_m: Signal<Local, Bits<MAX_LWARPS>>,
    eq_m: Signal<Local, Bits<MAX_LWARPS>>,
    sel_sh: Signal<Local, Bits<SMEM_SETS>>,
    /// `fr_sel`'s next value as an OR of its writers' terms, each masked by its own
    /// condition (the conditions are exclusive: the step is one-hot), not a chain of
    /// multiplexers in statement order: the register sets' first entry (`fs_r`), the
    /// scratchpad's (`fs_s`), the selection shifted down or held (`fs_h`).
    fs_r: Signal<Local, Bits<SMEM_SETS>>,
    fs_s: Signal<Local, Bits<SMEM_SETS>>,
    fs_h: Signal<Local, Bits<SMEM_SETS>>,
    fs_then: Signal<Local, Bit>,
    rg_sel0: Signal<Local, Bits<SMEM_SETS>>,
    sm_sel0: Signal<Local, Bits<SMEM_SETS>>,
    /// (`sm_sel0` a bit wider: a block may hold all 64 sets)
    sm_dec: Signal<Local, Bits<SMEM_DEC_BITS>>,
    g_rneed: Signal<Local, Bits<RSETS_BITS>>,
    g_rheld: Signal<Local, Bits<RSETS_BITS>>,
    g_bpeak: Signal<Local, Bits<RSETS_BITS>>,
    g_slot6: Signal<Local, Bits<PSLOT_BITS>>,
    g_sneed: Signal<Local, Bits<SSETS_BITS>>,
    g_sheld: Signal<Local, Bits<SSETS_BITS>>,
    g_nw: Signal<Local, Bits<NWARPS_BITS>>,
    g_narr: Signal<Local, Bits<NWARPS_BITS>>,
    g_bmask: Signal<Local, Bits<MAX_LWARPS>>,
    wr_wb: Signal<Local, Bit>,
    wr_rn: Signal<Local, Bit>,
    wr_rh: Signal<Local, Bit>,
    wr_sv: Signal<Local, Bit>,
    wr_sl: Signal<Local, Bit>,
    wr_wp: Signal<Local, Bit>,
    wr_sn: Signal<Local, Bit>,
    wr_sh: Signal<Local, Bit>,
    wr_nw: Signal<Local, Bit>,
    wr_na: Signal<Local, Bit>,
    wr_bp: Signal<Local, Bit>,
    /// Evaluate the logic in every pass (not hardware; `crate::flat_logic!`).
    pub _always: bool,
    _ran: bool,
    pub _skips: u64,
}

// The registers and RAMs, once: `flat_block!` writes their clocking (the held registers
// keep their value unless a part of the logic assigns it), the simulation's lists and the
// block's `Logic`, the parts below in order.
crate::flat_block!(Zorua {
    inputs: [
        ev, warp, block, warps, regs, smem, peak, nwarps_in, idle, mem
    ],
    held: [
        tq, sq, rq, sched, bar, live, blocks, started, reg_resv, slotv, smem_used, slot_used,
        reg_cnt, reg_swap, smem_cnt, smem_swap, th_q, th_set, n_used, n_want, seen, cur1h, fw, fb,
        e_kstart, e_kphase, e_kbar, e_big, eb_give, bgive, e_hs, e_hb, bopen, e_open, e_nany, rthen, rbusy, e_oth,
        e_kwend, e_kbend, e_kepoch, e_warps, e_rsets, e_ssets, e_psets, e_nw, e_rsets1, e_narr1,
        e_gap, e_up, e_down, f_rneed, f_rheld, f_slot, pb_hs, pb_hsr, pb_rpk, pb_hr, pb_hrr, f_tq,
        f_sq, f_rq, f_bar, f_started, b_sneed, b_sheld, b_bpeak, bbit, bmask, wfit, m_rq, m_sq,
        m_tq, a_rq, a_sq, a_tq, p_slot, nxt, nxt_none, s_room, r_room, q_sfree, q_rfree, n_need_s,
        n_phys_s, n_swap_s, n_sok, n_need_r, n_phys_r, n_swap_r, n_rok, slot_low, a_smem, a_sphys,
        a_regs, a_rphys, a_grant, g_slot, al_s1h, slk, sneg, slack5q, as_on, al_last, n_ns_one,
        n_nr_one, asp_on, arp_on, n_tok, n_ns_any, n_nr_any, n_ps_any, n_pr_any, q_ls, q_lr, q_cap, q_capf,
        fr_k, fr_last, fr_h, al_rh, al_sh, e_rheld, e_slot, e_slotv, e_started, eb_sneed, eb_sheld,
        eb_nw, eb_narr, eb_bpeak, eb_bbit, fr_e, fr_wr, fend, fthen, fsm
    ],
    held_arrays: [
        wblock, rneed, rheld, slot, wpeak, sneed, sheld, nwarps, narr, bpeak, reg_used, al_r1h,
        al_rany
    ],
    // (set in every cycle by the logic: the step, the one-cycle release, the table writes)
    clocked: [
        step, busy, rel, rel_ph, fr_sel, wq_data, wq_en, byp_en, byp_data
    ],
    clocked_arrays: [reg_ram, smem_ram],
    logic: [cycle::Cycle, event::Event, sets::Free, scan::Scan, sets::Alloc, cycle::Commit],
});
