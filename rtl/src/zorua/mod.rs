//! `Zorua`: one SM's Zorua coordinator and its three mapping tables (Vijaykumar et al.,
//! "Zorua", MICRO 2016, §4.2-§4.5; interface and timing in `mpgpu_spec::units::zorua`, the
//! decisions in `docs/zorua.md`, "The coordinator"; model `mpgpu_ref::units::zorua::Coord`).
//!
//! Geometry: the Fermi configuration's, the paper's tables. 64 logical warps, 16 logical
//! blocks; 256 physical register sets (registers / 128), 48 physical scratchpad sets (1 KB),
//! up to 64 physical warp slots (the configuration's, `slots`).
//! - The register mapping table: 16 RAMs of 64 words x 9 bits, one per logical set of a warp
//!   (64 x 16 x 9 b = 1.125 KB), a word the valid (physical) bit and the physical set.
//! - The scratchpad mapping table: 48 RAMs of 16 words x 7 bits, one per logical set of a
//!   block (16 x 48 x 7 b = 672 B).
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
//! Loop bounds are literal because rust-hdl's Verilog generator needs them; the widths come
//! from `mpgpu_spec::units::zorua`.
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
use mpgpu_spec::units::zorua::{Ev, LBLOCK_BITS, LWARP_BITS, MAX_LBLOCKS, MAX_LWARPS, REG_SETS, SET_REGS, SMEM_SET_BYTES};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_LWARPS == 64 && LWARP_BITS == 6 && MAX_LBLOCKS == 16 && LBLOCK_BITS == 4 && REG_SETS == 16 && SET_REGS == 4 && SMEM_SET_BYTES == 1024);

/// Physical register sets and scratchpad sets the block is built for (the Fermi
/// configuration: 32,768 registers, 48 KB).
pub const RTL_REG_SETS: usize = 256;
pub const RTL_SMEM_SETS: usize = 48;

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

/// The threshold's constants (Algorithm 1), in the units of the model's `ThreshParams`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoruaParams {
    /// Physical warp slots (1..=64).
    pub slots: usize,
    pub o_default: u64,
    pub o_thresh_step: u64,
    pub c_delta_thresh: u64,
}

/// One SM's coordinator (ports: `mpgpu_spec::units::zorua`'s `In` and `Out`; the rest is
/// state and the pipeline's registers, named as in `docs/zorua.md`, "Timing").
#[derive(Clone, Debug, LogicBlock)]
pub struct Zorua {
    pub clock: Signal<In, Clock>,
    pub ev: Signal<In, Bits<3>>,
    pub warp: Signal<In, Bits<6>>,
    pub block: Signal<In, Bits<4>>,
    pub warps: Signal<In, Bits<64>>,
    pub regs: Signal<In, Bits<7>>,
    pub smem: Signal<In, Bits<17>>,
    pub peak: Signal<In, Bits<7>>,
    pub nwarps_in: Signal<In, Bits<7>>,
    pub idle: Signal<In, Bits<16>>,
    pub mem: Signal<In, Bits<16>>,
    pub ready: Signal<Out, Bit>,
    pub grant: Signal<Out, Bit>,
    pub grant_warp: Signal<Out, Bits<6>>,
    pub grant_slot: Signal<Out, Bits<6>>,
    pub reg_phys: Signal<Out, Bits<16>>,
    pub reg_set: [Signal<Out, Bits<8>>; 16],
    pub smem_phys: Signal<Out, Bits<64>>,
    pub smem_set: [Signal<Out, Bits<6>>; 48],
    pub o_thresh: Signal<Out, Bits<5>>,
    pub slot_room: Signal<Out, Bits<7>>,
    /// Warps released this cycle (`Out::release`; `release` is a Verilog keyword): a
    /// barrier's opening, or a phase change whose needs are held. Their block's scratchpad row
    /// is on `smem_phys`/`smem_set`.
    pub released: Signal<Out, Bits<64>>,
    /// A warp waits in the scratchpad or register queue (`Out::waiting`).
    pub waiting: Signal<Out, Bit>,
    ids16: [Constant<Bits<4>>; 16],
    rs_ids: [Constant<Bits<5>>; 16],
    ss_ids: [Constant<Bits<7>>; 48],
    word_ids: [Constant<Bits<2>>; 4],
    bitmask: [Constant<Bits<64>>; 6],
    slot_present: Constant<Bits<64>>,
    smem_present: Constant<Bits<64>>,
    n_slots: Constant<Bits<7>>,
    reg_total: Constant<Bits<10>>,
    smem_total: Constant<Bits<7>>,
    o_default: Constant<Bits<5>>,
    o_step: Constant<Bits<5>>,
    o_max: Constant<Bits<5>>,
    c_delta: Constant<Bits<17>>,
    one64: Constant<Bits<64>>,
    ones64: Constant<Bits<64>>,
    low10: Constant<Bits<17>>,
    gap_hi: Constant<Bits<8>>,
    sl_hi: Constant<Bits<12>>,
    v9: Constant<Bits<9>>,
    v7: Constant<Bits<7>>,
    rescan_from_thread: Constant<Bit>,
    smem_at_warp_end: Constant<Bit>,
    c_start: Constant<Bits<3>>,
    c_phase: Constant<Bits<3>>,
    c_bar: Constant<Bits<3>>,
    c_wend: Constant<Bits<3>>,
    c_bend: Constant<Bits<3>>,
    c_epoch: Constant<Bits<3>>,
    h_idle: Constant<Bits<16>>,
    h_ev: Constant<Bits<16>>,
    h_w: Constant<Bits<16>>,
    h_p1: Constant<Bits<16>>,
    h_p2: Constant<Bits<16>>,
    h_f: Constant<Bits<16>>,
    h_b: Constant<Bits<16>>,
    h_n: Constant<Bits<16>>,
    h_d: Constant<Bits<16>>,
    h_al0: Constant<Bits<16>>,
    h_al: Constant<Bits<16>>,
    h_read: Constant<Bits<16>>,
    h_fin: Constant<Bits<16>>,
    h_free0: Constant<Bits<16>>,
    h_free: Constant<Bits<16>>,
    h_rel: Constant<Bits<16>>,
    is_idle: Signal<Local, Bit>,
    eff_o: Signal<Local, Bits<5>>,
    l_s: Signal<Local, Bits<7>>,
    l_r: Signal<Local, Bits<9>>,
    valve: Signal<Local, Bit>,
    slot_free: Signal<Local, Bits<64>>,
    smem_free_map: Signal<Local, Bits<64>>,
    sl3: [Signal<Local, Bits<12>>; 3],
    sl5: [Signal<Local, Bits<5>>; 3],
    /// The slack's choice as an OR of the three clamped values, each masked by its
    /// (exclusive) condition (`sk_c`: a decision starting a warp, a started warp's end),
    /// not a chain of multiplexers behind the clamps.
    sk_t: [Signal<Local, Bits<5>>; 3],
    sk_c: [Signal<Local, Bit>; 2],
    sel: Signal<Local, Bits<64>>,
    sel_any: Signal<Local, Bit>,
    slot_any: Signal<Local, Bit>,
    n_sfree: Signal<Local, Bits<7>>,
    n_rfree: Signal<Local, Bits<10>>,
    sw_s: Signal<Local, Bits<12>>,
    sw_r: Signal<Local, Bits<12>>,
    c1s: Signal<Local, Bit>,
    c2s: Signal<Local, Bit>,
    ds: Signal<Local, Bits<7>>,
    es: Signal<Local, Bits<8>>,
    c1r: Signal<Local, Bit>,
    c2r: Signal<Local, Bit>,
    dr: Signal<Local, Bits<5>>,
    er: Signal<Local, Bits<11>>,
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
    slot_new: Signal<Local, Bits<6>>,
    sx: Signal<Local, Bits<16>>,
    rd_ent: Signal<Local, Bits<9>>,
    wq_m: Signal<Local, Bits<16>>,
    bx: Signal<Local, Bit>,
    stn: Signal<Local, Bits<16>>,
    bsn: Signal<Local, Bit>,
    e_bbit: Signal<Local, Bits<16>>,
    f_gw: Signal<Local, Bits<6>>,
    f_gb: Signal<Local, Bits<4>>,
    f_grn: Signal<Local, Bits<5>>,
    f_grh: Signal<Local, Bits<5>>,
    f_gsl: Signal<Local, Bits<6>>,
    b_gpk: Signal<Local, Bits<5>>,
    b_gsn: Signal<Local, Bits<7>>,
    b_gsh: Signal<Local, Bits<7>>,
    b_gbb: Signal<Local, Bits<16>>,
    ev_rsets: Signal<Local, Bits<5>>,
    ev_psets: Signal<Local, Bits<5>>,
    ev_ssets: Signal<Local, Bits<7>>,
    th_idle: Signal<Local, Bits<17>>,
    th_mem: Signal<Local, Bits<17>>,
    th_up: Signal<Local, Bits<5>>,
    th_new: Signal<Local, Bits<5>>,
    narr_new: Signal<Local, Bits<7>>,
    nw_new: Signal<Local, Bits<7>>,
    bar_open: Signal<Local, Bit>,
    slot_clr: Signal<Local, Bits<64>>,
    fr_next: Signal<Local, Bits<9>>,
    rlow6: Signal<Local, Bits<6>>,
    rword: Signal<Local, Bits<2>>,
    sentry6: Signal<Local, Bits<6>>,
    s_idx: Signal<Local, Bits<6>>,
    r_idx: Signal<Local, Bits<8>>,
    went: Signal<Local, Bits<9>>,
    sent: Signal<Local, Bits<7>>,
    s_rest: Signal<Local, Bits<64>>,
    take_s: Signal<Local, Bit>,
    take_r: Signal<Local, Bit>,
    r_first: Signal<Local, Bits<4>>,
    w_wb_m: Signal<Local, Bits<64>>,
    w_wb_v: Signal<Local, Bits<4>>,
    w_rn_m: Signal<Local, Bits<64>>,
    w_rn_v: Signal<Local, Bits<5>>,
    w_rh_m: Signal<Local, Bits<64>>,
    w_rh_v: Signal<Local, Bits<5>>,
    w_sv_m: Signal<Local, Bits<64>>,
    w_sv_v: Signal<Local, Bit>,
    w_sl_m: Signal<Local, Bits<64>>,
    w_sl_v: Signal<Local, Bits<6>>,
    w_wp_m: Signal<Local, Bits<64>>,
    w_wp_v: Signal<Local, Bits<5>>,
    w_sn_m: Signal<Local, Bits<16>>,
    w_sn_v: Signal<Local, Bits<7>>,
    w_sh_m: Signal<Local, Bits<16>>,
    w_sh_v: Signal<Local, Bits<7>>,
    w_nw_m: Signal<Local, Bits<16>>,
    w_nw_v: Signal<Local, Bits<7>>,
    w_na_m: Signal<Local, Bits<16>>,
    w_na_v: Signal<Local, Bits<7>>,
    w_bp_m: Signal<Local, Bits<16>>,
    w_bp_v: Signal<Local, Bits<5>>,
    r_enc: [Signal<Local, Bits<6>>; 4],
    r_rest: [Signal<Local, Bits<64>>; 4],
    pub tq: Reg<Bits<64>>,
    pub sq: Reg<Bits<64>>,
    pub rq: Reg<Bits<64>>,
    pub sched: Reg<Bits<64>>,
    pub bar: Reg<Bits<64>>,
    pub live: Reg<Bits<64>>,
    pub blocks: Reg<Bits<16>>,
    pub started: Reg<Bits<64>>,
    pub reg_resv: Reg<Bits<11>>,
    pub slotv: Reg<Bits<64>>,
    pub smem_used: Reg<Bits<64>>,
    pub slot_used: Reg<Bits<64>>,
    pub reg_cnt: Reg<Bits<10>>,
    pub reg_swap: Reg<Bits<11>>,
    pub smem_cnt: Reg<Bits<7>>,
    pub smem_swap: Reg<Bits<11>>,
    pub th_q: Reg<Bits<5>>,
    pub th_set: Reg<Bit>,
    pub n_used: Reg<Bits<7>>,
    pub n_want: Reg<Bits<7>>,
    pub step: Reg<Bits<16>>,
    pub busy: Reg<Bit>,
    pub seen: Reg<Bits<64>>,
    pub cur1h: Reg<Bits<64>>,
    pub fw: Reg<Bits<6>>,
    pub fb: Reg<Bits<4>>,
    /// The event taken, one register per kind.
    pub e_kstart: Reg<Bit>,
    pub e_kphase: Reg<Bit>,
    pub e_kbar: Reg<Bit>,
    /// A block start's block has more warps than slots; a warp event's block gives its slots
    /// up at barriers (read from `bgive`).
    pub e_big: Reg<Bit>,
    pub eb_give: Reg<Bit>,
    /// Per block: its warps give their slots up at barriers.
    pub bgive: Reg<Bits<16>>,
    /// The warps a barrier's opening released, shown in the release step (`released`).
    pub rel: Reg<Bits<64>>,
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
    h_bytes: Signal<Local, Bits<17>>,
    rel_q: Signal<Local, Bits<64>>,
    rel_m: Signal<Local, Bits<64>>,
    ph_held: Signal<Local, Bit>,
    rel_go: Signal<Local, Bit>,
    /// The step an event that releases warps chose, taken after the release step.
    pub rthen: Reg<Bits<16>>,
    pub rbusy: Reg<Bit>,
    /// A warp other than the event's is schedulable (registered when the event is taken;
    /// nothing changes the schedulable set between the take and the apply).
    pub e_oth: Reg<Bit>,
    pub e_kwend: Reg<Bit>,
    pub e_kbend: Reg<Bit>,
    pub e_kepoch: Reg<Bit>,
    pub e_warps: Reg<Bits<64>>,
    pub e_rsets: Reg<Bits<5>>,
    pub e_ssets: Reg<Bits<7>>,
    pub e_psets: Reg<Bits<5>>,
    pub e_nw: Reg<Bits<7>>,
    pub e_rsets1: Reg<Bits<5>>,
    pub e_narr1: Reg<Bits<7>>,
    /// The block's warps less its arrivals (8 bits, two's complement).
    pub e_gap: Reg<Bits<8>>,
    ev_open: Signal<Local, Bit>,
    pub e_up: Reg<Bit>,
    pub e_down: Reg<Bit>,
    pub f_rneed: Reg<Bits<5>>,
    pub f_rheld: Reg<Bits<5>>,
    pub f_slot: Reg<Bits<6>>,
    pub pb_hs: Reg<Bits<8>>,
    pub pb_hsr: Reg<Bits<9>>,
    pub pb_rpk: Reg<Bits<12>>,
    pub pb_hr: Reg<Bits<11>>,
    pub pb_hrr: Reg<Bits<12>>,
    pub f_tq: Reg<Bit>,
    pub f_sq: Reg<Bit>,
    pub f_rq: Reg<Bit>,
    pub f_bar: Reg<Bit>,
    pub f_started: Reg<Bit>,
    pub b_sneed: Reg<Bits<7>>,
    pub b_sheld: Reg<Bits<7>>,
    pub b_bpeak: Reg<Bits<5>>,
    pub bbit: Reg<Bits<16>>,
    pub bmask: Reg<Bits<64>>,
    pub wfit: Reg<Bits<64>>,
    pub m_rq: Reg<Bits<64>>,
    pub m_sq: Reg<Bits<64>>,
    pub m_tq: Reg<Bits<64>>,
    pub a_rq: Reg<Bit>,
    pub a_sq: Reg<Bit>,
    pub a_tq: Reg<Bit>,
    pub p_slot: Reg<Bit>,
    pub nxt: Reg<Bits<64>>,
    pub nxt_none: Reg<Bit>,
    pub s_room: Reg<Bits<7>>,
    pub r_room: Reg<Bits<10>>,
    pub q_sfree: Reg<Bits<7>>,
    pub q_rfree: Reg<Bits<10>>,
    pub n_need_s: Reg<Bits<7>>,
    pub n_phys_s: Reg<Bits<7>>,
    pub n_swap_s: Reg<Bits<7>>,
    pub n_sok: Reg<Bit>,
    pub n_need_r: Reg<Bits<5>>,
    pub n_phys_r: Reg<Bits<5>>,
    pub n_swap_r: Reg<Bits<5>>,
    pub n_rok: Reg<Bit>,
    pub slot_low: Reg<Bits<64>>,
    pub a_smem: Reg<Bits<7>>,
    pub a_sphys: Reg<Bits<7>>,
    pub a_regs: Reg<Bits<5>>,
    pub a_rphys: Reg<Bits<5>>,
    pub a_grant: Reg<Bit>,
    pub g_slot: Reg<Bits<6>>,
    pub al_s1h: Reg<Bits<64>>,
    pub slk: Reg<Bits<12>>,
    pub sneg: Reg<Bit>,
    pub slack5q: Reg<Bits<5>>,
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
    pub q_ls: Reg<Bits<7>>,
    pub q_lr: Reg<Bits<9>>,
    pub q_cap: Reg<Bits<12>>,
    pub fr_k: Reg<Bits<7>>,
    pub fr_last: Reg<Bit>,
    pub fr_h: Reg<Bits<7>>,
    pub al_rh: Reg<Bits<5>>,
    pub al_sh: Reg<Bits<7>>,
    pub e_rheld: Reg<Bits<5>>,
    pub e_slot: Reg<Bits<6>>,
    pub e_slotv: Reg<Bit>,
    pub e_started: Reg<Bit>,
    pub eb_sneed: Reg<Bits<7>>,
    pub eb_sheld: Reg<Bits<7>>,
    pub eb_nw: Reg<Bits<7>>,
    pub eb_narr: Reg<Bits<7>>,
    pub eb_bpeak: Reg<Bits<5>>,
    pub eb_bbit: Reg<Bits<16>>,
    pub fr_e: Reg<Bits<9>>,
    pub fr_sel: Reg<Bits<64>>,
    pub fr_wr: Reg<Bits<64>>,
    pub fend: Reg<Bit>,
    pub fthen: Reg<Bit>,
    pub fsm: Reg<Bit>,
    pub wblock: [Reg<Bits<64>>; 4],
    pub rneed: [Reg<Bits<64>>; 5],
    pub rheld: [Reg<Bits<64>>; 5],
    pub slot: [Reg<Bits<64>>; 6],
    pub wpeak: [Reg<Bits<64>>; 5],
    pub sneed: [Reg<Bits<16>>; 7],
    pub sheld: [Reg<Bits<16>>; 7],
    pub nwarps: [Reg<Bits<16>>; 7],
    pub narr: [Reg<Bits<16>>; 7],
    pub bpeak: [Reg<Bits<16>>; 5],
    pub reg_used: [Reg<Bits<64>>; 4],
    pub al_r1h: [Reg<Bits<64>>; 4],
    pub al_rany: [Reg<Bit>; 4],
    /// An allocation's register-table write, a cycle after its set is taken: the entry, the
    /// columns written; and the last such write seen by the grant's read (`wq_*` copied at the
    /// read, which misses the write it coincides with).
    pub wq_data: Reg<Bits<9>>,
    pub wq_en: Reg<Bits<16>>,
    pub byp_en: Reg<Bits<16>>,
    pub byp_data: Reg<Bits<9>>,
    pub reg_ram: [SyncRam<Bits<9>, 6>; 16],
    pub smem_ram: [SyncRam<Bits<7>, 4>; 48],
    mr: Signal<Local, Bits<64>>,
    ms: Signal<Local, Bits<64>>,
    mt: Signal<Local, Bits<64>>,
    lt_m: Signal<Local, Bits<64>>,
    eq_m: Signal<Local, Bits<64>>,
    sel_sh: Signal<Local, Bits<64>>,
    /// `fr_sel`'s next value as an OR of its writers' terms, each masked by its own
    /// condition (the conditions are exclusive: the step is one-hot), not a chain of
    /// multiplexers in statement order: the register sets' first entry (`fs_r`), the
    /// scratchpad's (`fs_s`), the selection shifted down or held (`fs_h`).
    fs_r: Signal<Local, Bits<64>>,
    fs_s: Signal<Local, Bits<64>>,
    fs_h: Signal<Local, Bits<64>>,
    fs_then: Signal<Local, Bit>,
    rg_sel0: Signal<Local, Bits<64>>,
    sm_sel0: Signal<Local, Bits<64>>,
    g_rneed: Signal<Local, Bits<5>>,
    g_rheld: Signal<Local, Bits<5>>,
    g_bpeak: Signal<Local, Bits<5>>,
    g_slot6: Signal<Local, Bits<6>>,
    g_sneed: Signal<Local, Bits<7>>,
    g_sheld: Signal<Local, Bits<7>>,
    g_nw: Signal<Local, Bits<7>>,
    g_narr: Signal<Local, Bits<7>>,
    g_bmask: Signal<Local, Bits<64>>,
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
        e_kstart, e_kphase, e_kbar, e_big, eb_give, bgive, e_hs, e_hb, rthen, rbusy, e_oth,
        e_kwend, e_kbend, e_kepoch, e_warps, e_rsets, e_ssets, e_psets, e_nw, e_rsets1, e_narr1,
        e_gap, e_up, e_down, f_rneed, f_rheld, f_slot, pb_hs, pb_hsr, pb_rpk, pb_hr, pb_hrr, f_tq,
        f_sq, f_rq, f_bar, f_started, b_sneed, b_sheld, b_bpeak, bbit, bmask, wfit, m_rq, m_sq,
        m_tq, a_rq, a_sq, a_tq, p_slot, nxt, nxt_none, s_room, r_room, q_sfree, q_rfree, n_need_s,
        n_phys_s, n_swap_s, n_sok, n_need_r, n_phys_r, n_swap_r, n_rok, slot_low, a_smem, a_sphys,
        a_regs, a_rphys, a_grant, g_slot, al_s1h, slk, sneg, slack5q, as_on, al_last, n_ns_one,
        n_nr_one, asp_on, arp_on, n_tok, n_ns_any, n_nr_any, n_ps_any, n_pr_any, q_ls, q_lr, q_cap,
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
