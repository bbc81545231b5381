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

use crate::ram::SyncRam;
use crate::reg::{any_q, Reg};
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

impl Zorua {
    pub fn new(p: ZoruaParams, faults: ZoruaFaults) -> Self {
        assert!((1..=64).contains(&p.slots), "Zorua's RTL: {} warp slots (1..=64)", p.slots);
        assert!(p.o_default <= 16 && p.o_thresh_step <= 16 && p.c_delta_thresh < 1 << 16, "Zorua's RTL: threshold constants out of range");
        let mask = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let c3 = |v: u64| Constant::new(v.into());
        let c4 = |v: u64| Constant::new(v.into());
        Self {
            clock: Default::default(),
            ev: Default::default(),
            warp: Default::default(),
            block: Default::default(),
            warps: Default::default(),
            regs: Default::default(),
            smem: Default::default(),
            peak: Default::default(),
            nwarps_in: Default::default(),
            idle: Default::default(),
            mem: Default::default(),
            ready: Default::default(),
            grant: Default::default(),
            grant_warp: Default::default(),
            grant_slot: Default::default(),
            reg_phys: Default::default(),
            reg_set: std::array::from_fn(|_| Default::default()),
            smem_phys: Default::default(),
            smem_set: std::array::from_fn(|_| Default::default()),
            o_thresh: Default::default(),
            slot_room: Default::default(),
            released: Default::default(),
            waiting: Default::default(),
            ids16: std::array::from_fn(|i| Constant::new((i as u64).into())),
            rs_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            ss_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            word_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            bitmask: std::array::from_fn(|b| Constant::new((0..64u64).filter(|i| i >> b & 1 != 0).fold(0u64, |m, i| m | 1 << i).into())),
            slot_present: Constant::new(mask(p.slots).into()),
            smem_present: Constant::new(mask(RTL_SMEM_SETS).into()),
            n_slots: Constant::new((p.slots as u64).into()),
            reg_total: Constant::new((RTL_REG_SETS as u64).into()),
            smem_total: Constant::new((RTL_SMEM_SETS as u64).into()),
            o_default: Constant::new(p.o_default.into()),
            o_step: Constant::new(p.o_thresh_step.into()),
            o_max: Constant::new(16u64.into()),
            c_delta: Constant::new(p.c_delta_thresh.into()),
            one64: Constant::new(1u64.into()),
            ones64: Constant::new(u64::MAX.into()),
            low10: Constant::new(0x3ffu64.into()),
            gap_hi: Constant::new(0x7eu64.into()),
            sl_hi: Constant::new(0x7e0u64.into()),
            v9: Constant::new(256u64.into()),
            v7: Constant::new(64u64.into()),
            rescan_from_thread: Constant::new(faults.rescan_from_thread),
            smem_at_warp_end: Constant::new(faults.smem_at_warp_end),
            c_start: c3(EV_START),
            c_phase: c3(EV_PHASE),
            c_bar: c3(EV_BARRIER),
            c_wend: c3(EV_WARP_END),
            c_bend: c3(EV_BLOCK_END),
            c_epoch: c3(EV_EPOCH),
            h_idle: c4(if S_IDLE == 0 { 0 } else { 1 << S_IDLE }),
            h_ev: c4(if S_EV == 0 { 0 } else { 1 << S_EV }),
            h_w: c4(if S_W == 0 { 0 } else { 1 << S_W }),
            h_p1: c4(if S_P1 == 0 { 0 } else { 1 << S_P1 }),
            h_p2: c4(if S_P2 == 0 { 0 } else { 1 << S_P2 }),
            h_f: c4(if S_F == 0 { 0 } else { 1 << S_F }),
            h_b: c4(if S_B == 0 { 0 } else { 1 << S_B }),
            h_n: c4(if S_N == 0 { 0 } else { 1 << S_N }),
            h_d: c4(if S_D == 0 { 0 } else { 1 << S_D }),
            h_al0: c4(if S_AL0 == 0 { 0 } else { 1 << S_AL0 }),
            h_al: c4(if S_AL == 0 { 0 } else { 1 << S_AL }),
            h_read: c4(if S_READ == 0 { 0 } else { 1 << S_READ }),
            h_fin: c4(if S_FIN == 0 { 0 } else { 1 << S_FIN }),
            h_free0: c4(if S_FREE0 == 0 { 0 } else { 1 << S_FREE0 }),
            h_free: c4(if S_FREE == 0 { 0 } else { 1 << S_FREE }),
            h_rel: c4(1 << S_REL),
            is_idle: Default::default(),
            eff_o: Default::default(),
            l_s: Default::default(),
            l_r: Default::default(),
            valve: Default::default(),
            slot_free: Default::default(),
            smem_free_map: Default::default(),
            sl3: std::array::from_fn(|_| Default::default()),
            sl5: std::array::from_fn(|_| Default::default()),
            sk_t: std::array::from_fn(|_| Default::default()),
            sk_c: std::array::from_fn(|_| Default::default()),
            sel: Default::default(),
            sel_any: Default::default(),
            slot_any: Default::default(),
            n_sfree: Default::default(),
            n_rfree: Default::default(),
            sw_s: Default::default(),
            sw_r: Default::default(),
            c1s: Default::default(),
            c2s: Default::default(),
            ds: Default::default(),
            es: Default::default(),
            c1r: Default::default(),
            c2r: Default::default(),
            dr: Default::default(),
            er: Default::default(),
            fresh: Default::default(),
            t_pass: Default::default(),
            at_t: Default::default(),
            s_act: Default::default(),
            s_go: Default::default(),
            at_s: Default::default(),
            r_act: Default::default(),
            gr: Default::default(),
            at_r: Default::default(),
            moved: Default::default(),
            slot_new: Default::default(),
            sx: Default::default(),
            rd_ent: Default::default(),
            wq_m: Default::default(),
            bx: Default::default(),
            stn: Default::default(),
            bsn: Default::default(),
            e_bbit: Default::default(),
            f_gw: Default::default(),
            f_gb: Default::default(),
            f_grn: Default::default(),
            f_grh: Default::default(),
            f_gsl: Default::default(),
            b_gpk: Default::default(),
            b_gsn: Default::default(),
            b_gsh: Default::default(),
            b_gbb: Default::default(),
            ev_rsets: Default::default(),
            ev_psets: Default::default(),
            ev_ssets: Default::default(),
            th_idle: Default::default(),
            th_mem: Default::default(),
            th_up: Default::default(),
            th_new: Default::default(),
            narr_new: Default::default(),
            nw_new: Default::default(),
            bar_open: Default::default(),
            slot_clr: Default::default(),
            fr_next: Default::default(),
            rlow6: Default::default(),
            rword: Default::default(),
            sentry6: Default::default(),
            s_idx: Default::default(),
            r_idx: Default::default(),
            went: Default::default(),
            sent: Default::default(),
            s_rest: Default::default(),
            take_s: Default::default(),
            take_r: Default::default(),
            r_first: Default::default(),
            w_wb_m: Default::default(),
            w_wb_v: Default::default(),
            w_rn_m: Default::default(),
            w_rn_v: Default::default(),
            w_rh_m: Default::default(),
            w_rh_v: Default::default(),
            w_sv_m: Default::default(),
            w_sv_v: Default::default(),
            w_sl_m: Default::default(),
            w_sl_v: Default::default(),
            w_wp_m: Default::default(),
            w_wp_v: Default::default(),
            w_sn_m: Default::default(),
            w_sn_v: Default::default(),
            w_sh_m: Default::default(),
            w_sh_v: Default::default(),
            w_nw_m: Default::default(),
            w_nw_v: Default::default(),
            w_na_m: Default::default(),
            w_na_v: Default::default(),
            w_bp_m: Default::default(),
            w_bp_v: Default::default(),
            r_enc: std::array::from_fn(|_| Default::default()),
            r_rest: std::array::from_fn(|_| Default::default()),
            tq: Default::default(),
            sq: Default::default(),
            rq: Default::default(),
            sched: Default::default(),
            bar: Default::default(),
            live: Default::default(),
            blocks: Default::default(),
            started: Default::default(),
            reg_resv: Default::default(),
            slotv: Default::default(),
            smem_used: Default::default(),
            slot_used: Default::default(),
            reg_cnt: Default::default(),
            reg_swap: Default::default(),
            smem_cnt: Default::default(),
            smem_swap: Default::default(),
            th_q: Default::default(),
            th_set: Default::default(),
            n_used: Default::default(),
            n_want: Default::default(),
            step: Default::default(),
            busy: Default::default(),
            seen: Default::default(),
            cur1h: Default::default(),
            fw: Default::default(),
            fb: Default::default(),
            e_kstart: Default::default(),
            e_kphase: Default::default(),
            e_kbar: Default::default(),
            e_big: Default::default(),
            eb_give: Default::default(),
            bgive: Default::default(),
            rel: Default::default(),
            rel_ph: Default::default(),
            e_hs: Default::default(),
            e_hb: Default::default(),
            h_bytes: Default::default(),
            rel_q: Default::default(),
            rel_m: Default::default(),
            ph_held: Default::default(),
            rel_go: Default::default(),
            rthen: Default::default(),
            rbusy: Default::default(),
            e_oth: Default::default(),
            e_kwend: Default::default(),
            e_kbend: Default::default(),
            e_kepoch: Default::default(),
            e_warps: Default::default(),
            e_rsets: Default::default(),
            e_ssets: Default::default(),
            e_psets: Default::default(),
            e_nw: Default::default(),
            e_rsets1: Default::default(),
            e_narr1: Default::default(),
            e_gap: Default::default(),
            ev_open: Default::default(),
            e_up: Default::default(),
            e_down: Default::default(),
            f_rneed: Default::default(),
            f_rheld: Default::default(),
            f_slot: Default::default(),
            pb_hs: Default::default(),
            pb_hsr: Default::default(),
            pb_rpk: Default::default(),
            pb_hr: Default::default(),
            pb_hrr: Default::default(),
            f_tq: Default::default(),
            f_sq: Default::default(),
            f_rq: Default::default(),
            f_bar: Default::default(),
            f_started: Default::default(),
            b_sneed: Default::default(),
            b_sheld: Default::default(),
            b_bpeak: Default::default(),
            bbit: Default::default(),
            bmask: Default::default(),
            wfit: Default::default(),
            m_rq: Default::default(),
            m_sq: Default::default(),
            m_tq: Default::default(),
            a_rq: Default::default(),
            a_sq: Default::default(),
            a_tq: Default::default(),
            p_slot: Default::default(),
            nxt: Default::default(),
            nxt_none: Default::default(),
            s_room: Default::default(),
            r_room: Default::default(),
            q_sfree: Default::default(),
            q_rfree: Default::default(),
            n_need_s: Default::default(),
            n_phys_s: Default::default(),
            n_swap_s: Default::default(),
            n_sok: Default::default(),
            n_need_r: Default::default(),
            n_phys_r: Default::default(),
            n_swap_r: Default::default(),
            n_rok: Default::default(),
            slot_low: Default::default(),
            a_smem: Default::default(),
            a_sphys: Default::default(),
            a_regs: Default::default(),
            a_rphys: Default::default(),
            a_grant: Default::default(),
            g_slot: Default::default(),
            al_s1h: Default::default(),
            slk: Default::default(),
            sneg: Default::default(),
            slack5q: Default::default(),
            as_on: Default::default(),
            al_last: Default::default(),
            n_ns_one: Default::default(),
            n_nr_one: Default::default(),
            asp_on: Default::default(),
            arp_on: Default::default(),
            n_tok: Default::default(),
            n_ns_any: Default::default(),
            n_nr_any: Default::default(),
            n_ps_any: Default::default(),
            n_pr_any: Default::default(),
            q_ls: Default::default(),
            q_lr: Default::default(),
            q_cap: Default::default(),
            fr_k: Default::default(),
            fr_last: Default::default(),
            fr_h: Default::default(),
            al_rh: Default::default(),
            al_sh: Default::default(),
            e_rheld: Default::default(),
            e_slot: Default::default(),
            e_slotv: Default::default(),
            e_started: Default::default(),
            eb_sneed: Default::default(),
            eb_sheld: Default::default(),
            eb_nw: Default::default(),
            eb_narr: Default::default(),
            eb_bpeak: Default::default(),
            eb_bbit: Default::default(),
            fr_e: Default::default(),
            fr_sel: Default::default(),
            fr_wr: Default::default(),
            fend: Default::default(),
            fthen: Default::default(),
            fsm: Default::default(),
            wblock: std::array::from_fn(|_| Default::default()),
            rneed: std::array::from_fn(|_| Default::default()),
            rheld: std::array::from_fn(|_| Default::default()),
            slot: std::array::from_fn(|_| Default::default()),
            wpeak: std::array::from_fn(|_| Default::default()),
            sneed: std::array::from_fn(|_| Default::default()),
            sheld: std::array::from_fn(|_| Default::default()),
            nwarps: std::array::from_fn(|_| Default::default()),
            narr: std::array::from_fn(|_| Default::default()),
            bpeak: std::array::from_fn(|_| Default::default()),
            reg_used: std::array::from_fn(|_| Default::default()),
            al_r1h: std::array::from_fn(|_| Default::default()),
            al_rany: std::array::from_fn(|_| Default::default()),
            wq_data: Default::default(),
            wq_en: Default::default(),
            byp_en: Default::default(),
            byp_data: Default::default(),
            reg_ram: std::array::from_fn(|_| SyncRam::default().zeroed()),
            smem_ram: std::array::from_fn(|_| SyncRam::default().zeroed()),
            mr: Default::default(),
            ms: Default::default(),
            mt: Default::default(),
            lt_m: Default::default(),
            eq_m: Default::default(),
            sel_sh: Default::default(),
            fs_r: Default::default(),
            fs_s: Default::default(),
            fs_h: Default::default(),
            fs_then: Default::default(),
            rg_sel0: Default::default(),
            sm_sel0: Default::default(),
            g_rneed: Default::default(),
            g_rheld: Default::default(),
            g_bpeak: Default::default(),
            g_slot6: Default::default(),
            g_sneed: Default::default(),
            g_sheld: Default::default(),
            g_nw: Default::default(),
            g_narr: Default::default(),
            g_bmask: Default::default(),
            wr_wb: Default::default(),
            wr_rn: Default::default(),
            wr_rh: Default::default(),
            wr_sv: Default::default(),
            wr_sl: Default::default(),
            wr_wp: Default::default(),
            wr_sn: Default::default(),
            wr_sh: Default::default(),
            wr_nw: Default::default(),
            wr_na: Default::default(),
            wr_bp: Default::default(),
            _always: false,
            _ran: false,
            _skips: 0,
        }
    }

    /// Marks the inputs as driven from outside and connects the block.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.ev.connect();
        self.warp.connect();
        self.block.connect();
        self.warps.connect();
        self.regs.connect();
        self.smem.connect();
        self.peak.connect();
        self.nwarps_in.connect();
        self.idle.connect();
        self.mem.connect();
        self.connect_all();
    }

    /// Whether a signal the logic reads, other than the clock, changed in the last pass.
    pub fn read_changed(&self) -> bool {
        self.ev.has_changed()
            || self.warp.has_changed()
            || self.block.has_changed()
            || self.warps.has_changed()
            || self.regs.has_changed()
            || self.smem.has_changed()
            || self.peak.has_changed()
            || self.nwarps_in.has_changed()
            || self.idle.has_changed()
            || self.mem.has_changed()
            || self.tq.q.has_changed()
            || self.sq.q.has_changed()
            || self.rq.q.has_changed()
            || self.sched.q.has_changed()
            || self.bar.q.has_changed()
            || self.live.q.has_changed()
            || self.blocks.q.has_changed()
            || self.started.q.has_changed()
            || self.reg_resv.q.has_changed()
            || self.slotv.q.has_changed()
            || self.smem_used.q.has_changed()
            || self.slot_used.q.has_changed()
            || self.reg_cnt.q.has_changed()
            || self.reg_swap.q.has_changed()
            || self.smem_cnt.q.has_changed()
            || self.smem_swap.q.has_changed()
            || self.th_q.q.has_changed()
            || self.th_set.q.has_changed()
            || self.n_used.q.has_changed()
            || self.n_want.q.has_changed()
            || self.step.q.has_changed()
            || self.busy.q.has_changed()
            || self.seen.q.has_changed()
            || self.cur1h.q.has_changed()
            || self.fw.q.has_changed()
            || self.fb.q.has_changed()
            || self.e_kstart.q.has_changed()
            || self.e_kphase.q.has_changed()
            || self.e_kbar.q.has_changed()
            || self.e_big.q.has_changed()
            || self.eb_give.q.has_changed()
            || self.bgive.q.has_changed()
            || self.rel.q.has_changed()
            || self.rel_ph.q.has_changed()
            || self.e_hs.q.has_changed()
            || self.e_hb.q.has_changed()
            || self.rthen.q.has_changed()
            || self.rbusy.q.has_changed()
            || self.e_oth.q.has_changed()
            || self.e_kwend.q.has_changed()
            || self.e_kbend.q.has_changed()
            || self.e_kepoch.q.has_changed()
            || self.e_warps.q.has_changed()
            || self.e_rsets.q.has_changed()
            || self.e_ssets.q.has_changed()
            || self.e_psets.q.has_changed()
            || self.e_nw.q.has_changed()
            || self.e_rsets1.q.has_changed()
            || self.e_narr1.q.has_changed()
            || self.e_gap.q.has_changed()
            || self.e_up.q.has_changed()
            || self.e_down.q.has_changed()
            || self.f_rneed.q.has_changed()
            || self.f_rheld.q.has_changed()
            || self.f_slot.q.has_changed()
            || self.pb_hs.q.has_changed()
            || self.pb_hsr.q.has_changed()
            || self.pb_rpk.q.has_changed()
            || self.pb_hr.q.has_changed()
            || self.pb_hrr.q.has_changed()
            || self.f_tq.q.has_changed()
            || self.f_sq.q.has_changed()
            || self.f_rq.q.has_changed()
            || self.f_bar.q.has_changed()
            || self.f_started.q.has_changed()
            || self.b_sneed.q.has_changed()
            || self.b_sheld.q.has_changed()
            || self.b_bpeak.q.has_changed()
            || self.bbit.q.has_changed()
            || self.bmask.q.has_changed()
            || self.wfit.q.has_changed()
            || self.m_rq.q.has_changed()
            || self.m_sq.q.has_changed()
            || self.m_tq.q.has_changed()
            || self.a_rq.q.has_changed()
            || self.a_sq.q.has_changed()
            || self.a_tq.q.has_changed()
            || self.p_slot.q.has_changed()
            || self.nxt.q.has_changed()
            || self.nxt_none.q.has_changed()
            || self.s_room.q.has_changed()
            || self.r_room.q.has_changed()
            || self.q_sfree.q.has_changed()
            || self.q_rfree.q.has_changed()
            || self.n_need_s.q.has_changed()
            || self.n_phys_s.q.has_changed()
            || self.n_swap_s.q.has_changed()
            || self.n_sok.q.has_changed()
            || self.n_need_r.q.has_changed()
            || self.n_phys_r.q.has_changed()
            || self.n_swap_r.q.has_changed()
            || self.n_rok.q.has_changed()
            || self.slot_low.q.has_changed()
            || self.a_smem.q.has_changed()
            || self.a_sphys.q.has_changed()
            || self.a_regs.q.has_changed()
            || self.a_rphys.q.has_changed()
            || self.a_grant.q.has_changed()
            || self.g_slot.q.has_changed()
            || self.al_s1h.q.has_changed()
            || self.slk.q.has_changed()
            || self.sneg.q.has_changed()
            || self.slack5q.q.has_changed()
            || self.as_on.q.has_changed()
            || self.al_last.q.has_changed()
            || self.n_ns_one.q.has_changed()
            || self.n_nr_one.q.has_changed()
            || self.asp_on.q.has_changed()
            || self.arp_on.q.has_changed()
            || self.n_tok.q.has_changed()
            || self.n_ns_any.q.has_changed()
            || self.n_nr_any.q.has_changed()
            || self.n_ps_any.q.has_changed()
            || self.n_pr_any.q.has_changed()
            || self.q_ls.q.has_changed()
            || self.q_lr.q.has_changed()
            || self.q_cap.q.has_changed()
            || self.fr_k.q.has_changed()
            || self.fr_last.q.has_changed()
            || self.fr_h.q.has_changed()
            || self.al_rh.q.has_changed()
            || self.al_sh.q.has_changed()
            || self.e_rheld.q.has_changed()
            || self.e_slot.q.has_changed()
            || self.e_slotv.q.has_changed()
            || self.e_started.q.has_changed()
            || self.eb_sneed.q.has_changed()
            || self.eb_sheld.q.has_changed()
            || self.eb_nw.q.has_changed()
            || self.eb_narr.q.has_changed()
            || self.eb_bpeak.q.has_changed()
            || self.eb_bbit.q.has_changed()
            || self.fr_e.q.has_changed()
            || self.fr_sel.q.has_changed()
            || self.fr_wr.q.has_changed()
            || self.fend.q.has_changed()
            || self.fthen.q.has_changed()
            || self.fsm.q.has_changed()
            || any_q(&self.wblock)
            || any_q(&self.rneed)
            || any_q(&self.rheld)
            || any_q(&self.slot)
            || any_q(&self.wpeak)
            || any_q(&self.sneed)
            || any_q(&self.sheld)
            || any_q(&self.nwarps)
            || any_q(&self.narr)
            || any_q(&self.bpeak)
            || any_q(&self.reg_used)
            || any_q(&self.al_r1h)
            || any_q(&self.al_rany)
            || self.wq_data.q.has_changed()
            || self.wq_en.q.has_changed()
            || self.byp_en.q.has_changed()
            || self.byp_data.q.has_changed()
            || self.reg_ram.iter().any(|r| r.read_data.has_changed())
            || self.smem_ram.iter().any(|r| r.read_data.has_changed())
    }

    /// The clock to every register and RAM (a pass in which only the clock changed).
    fn fan_clock(&mut self) {
        let c = self.clock.val();
        self.tq.clock.next = c;
        self.sq.clock.next = c;
        self.rq.clock.next = c;
        self.sched.clock.next = c;
        self.bar.clock.next = c;
        self.live.clock.next = c;
        self.blocks.clock.next = c;
        self.started.clock.next = c;
        self.reg_resv.clock.next = c;
        self.slotv.clock.next = c;
        self.smem_used.clock.next = c;
        self.slot_used.clock.next = c;
        self.reg_cnt.clock.next = c;
        self.reg_swap.clock.next = c;
        self.smem_cnt.clock.next = c;
        self.smem_swap.clock.next = c;
        self.th_q.clock.next = c;
        self.th_set.clock.next = c;
        self.n_used.clock.next = c;
        self.n_want.clock.next = c;
        self.step.clock.next = c;
        self.busy.clock.next = c;
        self.seen.clock.next = c;
        self.cur1h.clock.next = c;
        self.fw.clock.next = c;
        self.fb.clock.next = c;
        self.e_kstart.clock.next = c;
        self.e_kphase.clock.next = c;
        self.e_kbar.clock.next = c;
        self.e_big.clock.next = c;
        self.eb_give.clock.next = c;
        self.bgive.clock.next = c;
        self.rel.clock.next = c;
        self.rel_ph.clock.next = c;
        self.e_hs.clock.next = c;
        self.e_hb.clock.next = c;
        self.rthen.clock.next = c;
        self.rbusy.clock.next = c;
        self.e_oth.clock.next = c;
        self.e_kwend.clock.next = c;
        self.e_kbend.clock.next = c;
        self.e_kepoch.clock.next = c;
        self.e_warps.clock.next = c;
        self.e_rsets.clock.next = c;
        self.e_ssets.clock.next = c;
        self.e_psets.clock.next = c;
        self.e_nw.clock.next = c;
        self.e_rsets1.clock.next = c;
        self.e_narr1.clock.next = c;
        self.e_gap.clock.next = c;
        self.e_up.clock.next = c;
        self.e_down.clock.next = c;
        self.f_rneed.clock.next = c;
        self.f_rheld.clock.next = c;
        self.f_slot.clock.next = c;
        self.pb_hs.clock.next = c;
        self.pb_hsr.clock.next = c;
        self.pb_rpk.clock.next = c;
        self.pb_hr.clock.next = c;
        self.pb_hrr.clock.next = c;
        self.f_tq.clock.next = c;
        self.f_sq.clock.next = c;
        self.f_rq.clock.next = c;
        self.f_bar.clock.next = c;
        self.f_started.clock.next = c;
        self.b_sneed.clock.next = c;
        self.b_sheld.clock.next = c;
        self.b_bpeak.clock.next = c;
        self.bbit.clock.next = c;
        self.bmask.clock.next = c;
        self.wfit.clock.next = c;
        self.m_rq.clock.next = c;
        self.m_sq.clock.next = c;
        self.m_tq.clock.next = c;
        self.a_rq.clock.next = c;
        self.a_sq.clock.next = c;
        self.a_tq.clock.next = c;
        self.p_slot.clock.next = c;
        self.nxt.clock.next = c;
        self.nxt_none.clock.next = c;
        self.s_room.clock.next = c;
        self.r_room.clock.next = c;
        self.q_sfree.clock.next = c;
        self.q_rfree.clock.next = c;
        self.n_need_s.clock.next = c;
        self.n_phys_s.clock.next = c;
        self.n_swap_s.clock.next = c;
        self.n_sok.clock.next = c;
        self.n_need_r.clock.next = c;
        self.n_phys_r.clock.next = c;
        self.n_swap_r.clock.next = c;
        self.n_rok.clock.next = c;
        self.slot_low.clock.next = c;
        self.a_smem.clock.next = c;
        self.a_sphys.clock.next = c;
        self.a_regs.clock.next = c;
        self.a_rphys.clock.next = c;
        self.a_grant.clock.next = c;
        self.g_slot.clock.next = c;
        self.al_s1h.clock.next = c;
        self.slk.clock.next = c;
        self.sneg.clock.next = c;
        self.slack5q.clock.next = c;
        self.as_on.clock.next = c;
        self.al_last.clock.next = c;
        self.n_ns_one.clock.next = c;
        self.n_nr_one.clock.next = c;
        self.asp_on.clock.next = c;
        self.arp_on.clock.next = c;
        self.n_tok.clock.next = c;
        self.n_ns_any.clock.next = c;
        self.n_nr_any.clock.next = c;
        self.n_ps_any.clock.next = c;
        self.n_pr_any.clock.next = c;
        self.q_ls.clock.next = c;
        self.q_lr.clock.next = c;
        self.q_cap.clock.next = c;
        self.fr_k.clock.next = c;
        self.fr_last.clock.next = c;
        self.fr_h.clock.next = c;
        self.al_rh.clock.next = c;
        self.al_sh.clock.next = c;
        self.e_rheld.clock.next = c;
        self.e_slot.clock.next = c;
        self.e_slotv.clock.next = c;
        self.e_started.clock.next = c;
        self.eb_sneed.clock.next = c;
        self.eb_sheld.clock.next = c;
        self.eb_nw.clock.next = c;
        self.eb_narr.clock.next = c;
        self.eb_bpeak.clock.next = c;
        self.eb_bbit.clock.next = c;
        self.fr_e.clock.next = c;
        self.fr_sel.clock.next = c;
        self.fr_wr.clock.next = c;
        self.fend.clock.next = c;
        self.fthen.clock.next = c;
        self.fsm.clock.next = c;
        for r in &mut self.wblock {
            r.clock.next = c;
        }
        for r in &mut self.rneed {
            r.clock.next = c;
        }
        for r in &mut self.rheld {
            r.clock.next = c;
        }
        for r in &mut self.slot {
            r.clock.next = c;
        }
        for r in &mut self.wpeak {
            r.clock.next = c;
        }
        for r in &mut self.sneed {
            r.clock.next = c;
        }
        for r in &mut self.sheld {
            r.clock.next = c;
        }
        for r in &mut self.nwarps {
            r.clock.next = c;
        }
        for r in &mut self.narr {
            r.clock.next = c;
        }
        for r in &mut self.bpeak {
            r.clock.next = c;
        }
        for r in &mut self.reg_used {
            r.clock.next = c;
        }
        for r in &mut self.al_r1h {
            r.clock.next = c;
        }
        for r in &mut self.al_rany {
            r.clock.next = c;
        }
        self.wq_data.clock.next = c;
        self.wq_en.clock.next = c;
        self.byp_en.clock.next = c;
        self.byp_data.clock.next = c;
        for r in &mut self.reg_ram {
            r.clock.next = c;
        }
        for r in &mut self.smem_ram {
            r.clock.next = c;
        }
    }

    /// One simulation pass as `Block::update_all` makes it, less what no reader needs: the
    /// logic (skipped when nothing it reads changed), the inputs, and the registers and RAMs
    /// through their `pass_fast` (not their `d` and RAM inputs' settled values, which only
    /// waveforms show: the flip-flops and RAMs take the pending ones). The locals and outputs
    /// are not settled either: a local's or an output's value is its pending one, and the
    /// settle loop asks `read_changed`. For co-simulation without waveforms; a register or RAM
    /// missing here would never change, and the lockstep tests fail at once.
    pub fn pass_fast(&mut self) {
        use rust_hdl::core::block::Block;
        self.update();
        self.clock.update_all();
        self.ev.update_all();
        self.warp.update_all();
        self.block.update_all();
        self.warps.update_all();
        self.regs.update_all();
        self.smem.update_all();
        self.peak.update_all();
        self.nwarps_in.update_all();
        self.idle.update_all();
        self.mem.update_all();
        self.tq.pass_fast();
        self.sq.pass_fast();
        self.rq.pass_fast();
        self.sched.pass_fast();
        self.bar.pass_fast();
        self.live.pass_fast();
        self.blocks.pass_fast();
        self.started.pass_fast();
        self.reg_resv.pass_fast();
        self.slotv.pass_fast();
        self.smem_used.pass_fast();
        self.slot_used.pass_fast();
        self.reg_cnt.pass_fast();
        self.reg_swap.pass_fast();
        self.smem_cnt.pass_fast();
        self.smem_swap.pass_fast();
        self.th_q.pass_fast();
        self.th_set.pass_fast();
        self.n_used.pass_fast();
        self.n_want.pass_fast();
        self.step.pass_fast();
        self.busy.pass_fast();
        self.seen.pass_fast();
        self.cur1h.pass_fast();
        self.fw.pass_fast();
        self.fb.pass_fast();
        self.e_kstart.pass_fast();
        self.e_kphase.pass_fast();
        self.e_kbar.pass_fast();
        self.e_big.pass_fast();
        self.eb_give.pass_fast();
        self.bgive.pass_fast();
        self.rel.pass_fast();
        self.rel_ph.pass_fast();
        self.e_hs.pass_fast();
        self.e_hb.pass_fast();
        self.rthen.pass_fast();
        self.rbusy.pass_fast();
        self.e_oth.pass_fast();
        self.e_kwend.pass_fast();
        self.e_kbend.pass_fast();
        self.e_kepoch.pass_fast();
        self.e_warps.pass_fast();
        self.e_rsets.pass_fast();
        self.e_ssets.pass_fast();
        self.e_psets.pass_fast();
        self.e_nw.pass_fast();
        self.e_rsets1.pass_fast();
        self.e_narr1.pass_fast();
        self.e_gap.pass_fast();
        self.e_up.pass_fast();
        self.e_down.pass_fast();
        self.f_rneed.pass_fast();
        self.f_rheld.pass_fast();
        self.f_slot.pass_fast();
        self.pb_hs.pass_fast();
        self.pb_hsr.pass_fast();
        self.pb_rpk.pass_fast();
        self.pb_hr.pass_fast();
        self.pb_hrr.pass_fast();
        self.f_tq.pass_fast();
        self.f_sq.pass_fast();
        self.f_rq.pass_fast();
        self.f_bar.pass_fast();
        self.f_started.pass_fast();
        self.b_sneed.pass_fast();
        self.b_sheld.pass_fast();
        self.b_bpeak.pass_fast();
        self.bbit.pass_fast();
        self.bmask.pass_fast();
        self.wfit.pass_fast();
        self.m_rq.pass_fast();
        self.m_sq.pass_fast();
        self.m_tq.pass_fast();
        self.a_rq.pass_fast();
        self.a_sq.pass_fast();
        self.a_tq.pass_fast();
        self.p_slot.pass_fast();
        self.nxt.pass_fast();
        self.nxt_none.pass_fast();
        self.s_room.pass_fast();
        self.r_room.pass_fast();
        self.q_sfree.pass_fast();
        self.q_rfree.pass_fast();
        self.n_need_s.pass_fast();
        self.n_phys_s.pass_fast();
        self.n_swap_s.pass_fast();
        self.n_sok.pass_fast();
        self.n_need_r.pass_fast();
        self.n_phys_r.pass_fast();
        self.n_swap_r.pass_fast();
        self.n_rok.pass_fast();
        self.slot_low.pass_fast();
        self.a_smem.pass_fast();
        self.a_sphys.pass_fast();
        self.a_regs.pass_fast();
        self.a_rphys.pass_fast();
        self.a_grant.pass_fast();
        self.g_slot.pass_fast();
        self.al_s1h.pass_fast();
        self.slk.pass_fast();
        self.sneg.pass_fast();
        self.slack5q.pass_fast();
        self.as_on.pass_fast();
        self.al_last.pass_fast();
        self.n_ns_one.pass_fast();
        self.n_nr_one.pass_fast();
        self.asp_on.pass_fast();
        self.arp_on.pass_fast();
        self.n_tok.pass_fast();
        self.n_ns_any.pass_fast();
        self.n_nr_any.pass_fast();
        self.n_ps_any.pass_fast();
        self.n_pr_any.pass_fast();
        self.q_ls.pass_fast();
        self.q_lr.pass_fast();
        self.q_cap.pass_fast();
        self.fr_k.pass_fast();
        self.fr_last.pass_fast();
        self.fr_h.pass_fast();
        self.al_rh.pass_fast();
        self.al_sh.pass_fast();
        self.e_rheld.pass_fast();
        self.e_slot.pass_fast();
        self.e_slotv.pass_fast();
        self.e_started.pass_fast();
        self.eb_sneed.pass_fast();
        self.eb_sheld.pass_fast();
        self.eb_nw.pass_fast();
        self.eb_narr.pass_fast();
        self.eb_bpeak.pass_fast();
        self.eb_bbit.pass_fast();
        self.fr_e.pass_fast();
        self.fr_sel.pass_fast();
        self.fr_wr.pass_fast();
        self.fend.pass_fast();
        self.fthen.pass_fast();
        self.fsm.pass_fast();
        for r in &mut self.wblock {
            r.pass_fast();
        }
        for r in &mut self.rneed {
            r.pass_fast();
        }
        for r in &mut self.rheld {
            r.pass_fast();
        }
        for r in &mut self.slot {
            r.pass_fast();
        }
        for r in &mut self.wpeak {
            r.pass_fast();
        }
        for r in &mut self.sneed {
            r.pass_fast();
        }
        for r in &mut self.sheld {
            r.pass_fast();
        }
        for r in &mut self.nwarps {
            r.pass_fast();
        }
        for r in &mut self.narr {
            r.pass_fast();
        }
        for r in &mut self.bpeak {
            r.pass_fast();
        }
        for r in &mut self.reg_used {
            r.pass_fast();
        }
        for r in &mut self.al_r1h {
            r.pass_fast();
        }
        for r in &mut self.al_rany {
            r.pass_fast();
        }
        self.wq_data.pass_fast();
        self.wq_en.pass_fast();
        self.byp_en.pass_fast();
        self.byp_data.pass_fast();
        for r in &mut self.reg_ram {
            r.pass_fast();
        }
        for r in &mut self.smem_ram {
            r.pass_fast();
        }
    }
}

crate::flat_logic!(Zorua);

impl Logic for Zorua {
    /// The logic (the block's Verilog). The simulation calls it through the inherent `update`
    /// of `crate::flat_logic!`, only when a signal it reads changed.
    #[hdl_gen]
    fn update(&mut self) {
        // Registers hold unless a step says otherwise.
        self.tq.clock.next = self.clock.val();
        self.tq.d.next = self.tq.q.val();
        self.sq.clock.next = self.clock.val();
        self.sq.d.next = self.sq.q.val();
        self.rq.clock.next = self.clock.val();
        self.rq.d.next = self.rq.q.val();
        self.sched.clock.next = self.clock.val();
        self.sched.d.next = self.sched.q.val();
        self.bar.clock.next = self.clock.val();
        self.bar.d.next = self.bar.q.val();
        self.live.clock.next = self.clock.val();
        self.live.d.next = self.live.q.val();
        self.blocks.clock.next = self.clock.val();
        self.blocks.d.next = self.blocks.q.val();
        self.started.clock.next = self.clock.val();
        self.started.d.next = self.started.q.val();
        self.reg_resv.clock.next = self.clock.val();
        self.reg_resv.d.next = self.reg_resv.q.val();
        self.slotv.clock.next = self.clock.val();
        self.slotv.d.next = self.slotv.q.val();
        self.smem_used.clock.next = self.clock.val();
        self.smem_used.d.next = self.smem_used.q.val();
        self.slot_used.clock.next = self.clock.val();
        self.slot_used.d.next = self.slot_used.q.val();
        self.reg_cnt.clock.next = self.clock.val();
        self.reg_cnt.d.next = self.reg_cnt.q.val();
        self.reg_swap.clock.next = self.clock.val();
        self.reg_swap.d.next = self.reg_swap.q.val();
        self.smem_cnt.clock.next = self.clock.val();
        self.smem_cnt.d.next = self.smem_cnt.q.val();
        self.smem_swap.clock.next = self.clock.val();
        self.smem_swap.d.next = self.smem_swap.q.val();
        self.th_q.clock.next = self.clock.val();
        self.th_q.d.next = self.th_q.q.val();
        self.th_set.clock.next = self.clock.val();
        self.th_set.d.next = self.th_set.q.val();
        self.n_used.clock.next = self.clock.val();
        self.n_used.d.next = self.n_used.q.val();
        self.n_want.clock.next = self.clock.val();
        self.n_want.d.next = self.n_want.q.val();
        self.step.clock.next = self.clock.val();
        self.stn.next = 0.into();
        self.busy.clock.next = self.clock.val();
        self.bsn.next = false;
        self.seen.clock.next = self.clock.val();
        self.seen.d.next = self.seen.q.val();
        self.cur1h.clock.next = self.clock.val();
        self.cur1h.d.next = self.cur1h.q.val();
        self.fw.clock.next = self.clock.val();
        self.fw.d.next = self.fw.q.val();
        self.fb.clock.next = self.clock.val();
        self.fb.d.next = self.fb.q.val();
        self.e_kstart.clock.next = self.clock.val();
        self.e_kstart.d.next = self.e_kstart.q.val();
        self.e_kphase.clock.next = self.clock.val();
        self.e_kphase.d.next = self.e_kphase.q.val();
        self.e_kbar.clock.next = self.clock.val();
        self.e_kbar.d.next = self.e_kbar.q.val();
        self.e_big.clock.next = self.clock.val();
        self.e_big.d.next = self.e_big.q.val();
        self.eb_give.clock.next = self.clock.val();
        self.eb_give.d.next = self.eb_give.q.val();
        self.bgive.clock.next = self.clock.val();
        self.bgive.d.next = self.bgive.q.val();
        // (a release lasts one cycle)
        self.rel.clock.next = self.clock.val();
        self.rel.d.next = 0.into();
        self.rel_ph.clock.next = self.clock.val();
        self.rel_ph.d.next = false;
        self.e_hs.clock.next = self.clock.val();
        self.e_hs.d.next = self.e_hs.q.val();
        self.e_hb.clock.next = self.clock.val();
        self.e_hb.d.next = self.e_hb.q.val();
        // (the warps in the release step)
        self.rel_q.next = self.rel.q.val();
        if self.rel_ph.q.val() {
            self.rel_q.next = self.rel.q.val() | self.cur1h.q.val();
        }
        self.rthen.clock.next = self.clock.val();
        self.rthen.d.next = self.rthen.q.val();
        self.rbusy.clock.next = self.clock.val();
        self.rbusy.d.next = self.rbusy.q.val();
        self.e_oth.clock.next = self.clock.val();
        self.e_oth.d.next = self.e_oth.q.val();
        self.e_kwend.clock.next = self.clock.val();
        self.e_kwend.d.next = self.e_kwend.q.val();
        self.e_kbend.clock.next = self.clock.val();
        self.e_kbend.d.next = self.e_kbend.q.val();
        self.e_kepoch.clock.next = self.clock.val();
        self.e_kepoch.d.next = self.e_kepoch.q.val();
        self.e_warps.clock.next = self.clock.val();
        self.e_warps.d.next = self.e_warps.q.val();
        self.e_rsets.clock.next = self.clock.val();
        self.e_rsets.d.next = self.e_rsets.q.val();
        self.e_ssets.clock.next = self.clock.val();
        self.e_ssets.d.next = self.e_ssets.q.val();
        self.e_psets.clock.next = self.clock.val();
        self.e_psets.d.next = self.e_psets.q.val();
        self.e_nw.clock.next = self.clock.val();
        self.e_nw.d.next = self.e_nw.q.val();
        self.e_rsets1.clock.next = self.clock.val();
        self.e_rsets1.d.next = self.e_rsets1.q.val();
        self.e_narr1.clock.next = self.clock.val();
        self.e_narr1.d.next = self.e_narr1.q.val();
        self.e_gap.clock.next = self.clock.val();
        self.e_gap.d.next = self.e_gap.q.val();
        self.e_up.clock.next = self.clock.val();
        self.e_up.d.next = self.e_up.q.val();
        self.e_down.clock.next = self.clock.val();
        self.e_down.d.next = self.e_down.q.val();
        self.f_rneed.clock.next = self.clock.val();
        self.f_rneed.d.next = self.f_rneed.q.val();
        self.f_rheld.clock.next = self.clock.val();
        self.f_rheld.d.next = self.f_rheld.q.val();
        self.f_slot.clock.next = self.clock.val();
        self.f_slot.d.next = self.f_slot.q.val();
        self.pb_hs.clock.next = self.clock.val();
        self.pb_hs.d.next = self.pb_hs.q.val();
        self.pb_hsr.clock.next = self.clock.val();
        self.pb_hsr.d.next = self.pb_hsr.q.val();
        self.pb_rpk.clock.next = self.clock.val();
        self.pb_rpk.d.next = self.pb_rpk.q.val();
        self.pb_hr.clock.next = self.clock.val();
        self.pb_hr.d.next = self.pb_hr.q.val();
        self.pb_hrr.clock.next = self.clock.val();
        self.pb_hrr.d.next = self.pb_hrr.q.val();
        self.f_tq.clock.next = self.clock.val();
        self.f_tq.d.next = self.f_tq.q.val();
        self.f_sq.clock.next = self.clock.val();
        self.f_sq.d.next = self.f_sq.q.val();
        self.f_rq.clock.next = self.clock.val();
        self.f_rq.d.next = self.f_rq.q.val();
        self.f_bar.clock.next = self.clock.val();
        self.f_bar.d.next = self.f_bar.q.val();
        self.f_started.clock.next = self.clock.val();
        self.f_started.d.next = self.f_started.q.val();
        self.b_sneed.clock.next = self.clock.val();
        self.b_sneed.d.next = self.b_sneed.q.val();
        self.b_sheld.clock.next = self.clock.val();
        self.b_sheld.d.next = self.b_sheld.q.val();
        self.b_bpeak.clock.next = self.clock.val();
        self.b_bpeak.d.next = self.b_bpeak.q.val();
        self.bbit.clock.next = self.clock.val();
        self.bbit.d.next = self.bbit.q.val();
        self.bmask.clock.next = self.clock.val();
        self.bmask.d.next = self.bmask.q.val();
        self.wfit.clock.next = self.clock.val();
        self.wfit.d.next = self.wfit.q.val();
        self.m_rq.clock.next = self.clock.val();
        self.m_rq.d.next = self.m_rq.q.val();
        self.m_sq.clock.next = self.clock.val();
        self.m_sq.d.next = self.m_sq.q.val();
        self.m_tq.clock.next = self.clock.val();
        self.m_tq.d.next = self.m_tq.q.val();
        self.a_rq.clock.next = self.clock.val();
        self.a_rq.d.next = self.a_rq.q.val();
        self.a_sq.clock.next = self.clock.val();
        self.a_sq.d.next = self.a_sq.q.val();
        self.a_tq.clock.next = self.clock.val();
        self.a_tq.d.next = self.a_tq.q.val();
        self.p_slot.clock.next = self.clock.val();
        self.p_slot.d.next = self.p_slot.q.val();
        self.nxt.clock.next = self.clock.val();
        self.nxt.d.next = self.nxt.q.val();
        self.nxt_none.clock.next = self.clock.val();
        self.nxt_none.d.next = self.nxt_none.q.val();
        self.s_room.clock.next = self.clock.val();
        self.s_room.d.next = self.s_room.q.val();
        self.r_room.clock.next = self.clock.val();
        self.r_room.d.next = self.r_room.q.val();
        self.q_sfree.clock.next = self.clock.val();
        self.q_sfree.d.next = self.q_sfree.q.val();
        self.q_rfree.clock.next = self.clock.val();
        self.q_rfree.d.next = self.q_rfree.q.val();
        self.n_need_s.clock.next = self.clock.val();
        self.n_need_s.d.next = self.n_need_s.q.val();
        self.n_phys_s.clock.next = self.clock.val();
        self.n_phys_s.d.next = self.n_phys_s.q.val();
        self.n_swap_s.clock.next = self.clock.val();
        self.n_swap_s.d.next = self.n_swap_s.q.val();
        self.n_sok.clock.next = self.clock.val();
        self.n_sok.d.next = self.n_sok.q.val();
        self.n_need_r.clock.next = self.clock.val();
        self.n_need_r.d.next = self.n_need_r.q.val();
        self.n_phys_r.clock.next = self.clock.val();
        self.n_phys_r.d.next = self.n_phys_r.q.val();
        self.n_swap_r.clock.next = self.clock.val();
        self.n_swap_r.d.next = self.n_swap_r.q.val();
        self.n_rok.clock.next = self.clock.val();
        self.n_rok.d.next = self.n_rok.q.val();
        self.slot_low.clock.next = self.clock.val();
        self.slot_low.d.next = self.slot_low.q.val();
        self.a_smem.clock.next = self.clock.val();
        self.a_smem.d.next = self.a_smem.q.val();
        self.a_sphys.clock.next = self.clock.val();
        self.a_sphys.d.next = self.a_sphys.q.val();
        self.a_regs.clock.next = self.clock.val();
        self.a_regs.d.next = self.a_regs.q.val();
        self.a_rphys.clock.next = self.clock.val();
        self.a_rphys.d.next = self.a_rphys.q.val();
        self.a_grant.clock.next = self.clock.val();
        self.a_grant.d.next = self.a_grant.q.val();
        self.g_slot.clock.next = self.clock.val();
        self.g_slot.d.next = self.g_slot.q.val();
        self.al_s1h.clock.next = self.clock.val();
        self.al_s1h.d.next = self.al_s1h.q.val();
        self.slk.clock.next = self.clock.val();
        self.slk.d.next = self.slk.q.val();
        self.sneg.clock.next = self.clock.val();
        self.sneg.d.next = self.sneg.q.val();
        self.slack5q.clock.next = self.clock.val();
        self.slack5q.d.next = self.slack5q.q.val();
        self.as_on.clock.next = self.clock.val();
        self.as_on.d.next = self.as_on.q.val();
        self.al_last.clock.next = self.clock.val();
        self.al_last.d.next = self.al_last.q.val();
        self.n_ns_one.clock.next = self.clock.val();
        self.n_ns_one.d.next = self.n_ns_one.q.val();
        self.n_nr_one.clock.next = self.clock.val();
        self.n_nr_one.d.next = self.n_nr_one.q.val();
        self.asp_on.clock.next = self.clock.val();
        self.asp_on.d.next = self.asp_on.q.val();
        self.arp_on.clock.next = self.clock.val();
        self.arp_on.d.next = self.arp_on.q.val();
        self.n_tok.clock.next = self.clock.val();
        self.n_tok.d.next = self.n_tok.q.val();
        self.n_ns_any.clock.next = self.clock.val();
        self.n_ns_any.d.next = self.n_ns_any.q.val();
        self.n_nr_any.clock.next = self.clock.val();
        self.n_nr_any.d.next = self.n_nr_any.q.val();
        self.n_ps_any.clock.next = self.clock.val();
        self.n_ps_any.d.next = self.n_ps_any.q.val();
        self.n_pr_any.clock.next = self.clock.val();
        self.n_pr_any.d.next = self.n_pr_any.q.val();
        self.q_ls.clock.next = self.clock.val();
        self.q_ls.d.next = self.q_ls.q.val();
        self.q_lr.clock.next = self.clock.val();
        self.q_lr.d.next = self.q_lr.q.val();
        self.q_cap.clock.next = self.clock.val();
        self.q_cap.d.next = self.q_cap.q.val();
        self.fr_k.clock.next = self.clock.val();
        self.fr_k.d.next = self.fr_k.q.val();
        self.fr_last.clock.next = self.clock.val();
        self.fr_last.d.next = self.fr_last.q.val();
        self.fr_h.clock.next = self.clock.val();
        self.fr_h.d.next = self.fr_h.q.val();
        self.al_rh.clock.next = self.clock.val();
        self.al_rh.d.next = self.al_rh.q.val();
        self.al_sh.clock.next = self.clock.val();
        self.al_sh.d.next = self.al_sh.q.val();
        self.e_rheld.clock.next = self.clock.val();
        self.e_rheld.d.next = self.e_rheld.q.val();
        self.e_slot.clock.next = self.clock.val();
        self.e_slot.d.next = self.e_slot.q.val();
        self.e_slotv.clock.next = self.clock.val();
        self.e_slotv.d.next = self.e_slotv.q.val();
        self.e_started.clock.next = self.clock.val();
        self.e_started.d.next = self.e_started.q.val();
        self.eb_sneed.clock.next = self.clock.val();
        self.eb_sneed.d.next = self.eb_sneed.q.val();
        self.eb_sheld.clock.next = self.clock.val();
        self.eb_sheld.d.next = self.eb_sheld.q.val();
        self.eb_nw.clock.next = self.clock.val();
        self.eb_nw.d.next = self.eb_nw.q.val();
        self.eb_narr.clock.next = self.clock.val();
        self.eb_narr.d.next = self.eb_narr.q.val();
        self.eb_bpeak.clock.next = self.clock.val();
        self.eb_bpeak.d.next = self.eb_bpeak.q.val();
        self.eb_bbit.clock.next = self.clock.val();
        self.eb_bbit.d.next = self.eb_bbit.q.val();
        self.fr_e.clock.next = self.clock.val();
        self.fr_e.d.next = self.fr_e.q.val();
        self.fr_sel.clock.next = self.clock.val();
        self.fr_wr.clock.next = self.clock.val();
        self.fr_wr.d.next = self.fr_wr.q.val();
        self.fend.clock.next = self.clock.val();
        self.fend.d.next = self.fend.q.val();
        self.fthen.clock.next = self.clock.val();
        self.fthen.d.next = self.fthen.q.val();
        self.fsm.clock.next = self.clock.val();
        self.fsm.d.next = self.fsm.q.val();
        for k in 0..4 {
            self.wblock[k].clock.next = self.clock.val();
            self.wblock[k].d.next = self.wblock[k].q.val();
        }
        for k in 0..5 {
            self.rneed[k].clock.next = self.clock.val();
            self.rneed[k].d.next = self.rneed[k].q.val();
        }
        for k in 0..5 {
            self.rheld[k].clock.next = self.clock.val();
            self.rheld[k].d.next = self.rheld[k].q.val();
        }
        for k in 0..6 {
            self.slot[k].clock.next = self.clock.val();
            self.slot[k].d.next = self.slot[k].q.val();
        }
        for k in 0..5 {
            self.wpeak[k].clock.next = self.clock.val();
            self.wpeak[k].d.next = self.wpeak[k].q.val();
        }
        for k in 0..7 {
            self.sneed[k].clock.next = self.clock.val();
            self.sneed[k].d.next = self.sneed[k].q.val();
        }
        for k in 0..7 {
            self.sheld[k].clock.next = self.clock.val();
            self.sheld[k].d.next = self.sheld[k].q.val();
        }
        for k in 0..7 {
            self.nwarps[k].clock.next = self.clock.val();
            self.nwarps[k].d.next = self.nwarps[k].q.val();
        }
        for k in 0..7 {
            self.narr[k].clock.next = self.clock.val();
            self.narr[k].d.next = self.narr[k].q.val();
        }
        for k in 0..5 {
            self.bpeak[k].clock.next = self.clock.val();
            self.bpeak[k].d.next = self.bpeak[k].q.val();
        }
        for k in 0..4 {
            self.reg_used[k].clock.next = self.clock.val();
            self.reg_used[k].d.next = self.reg_used[k].q.val();
        }
        for k in 0..4 {
            self.al_r1h[k].clock.next = self.clock.val();
            self.al_r1h[k].d.next = self.al_r1h[k].q.val();
        }
        for k in 0..4 {
            self.al_rany[k].clock.next = self.clock.val();
            self.al_rany[k].d.next = self.al_rany[k].q.val();
        }

        // The tables' RAMs: read the current warp's and block's rows; written only where a
        // step says.
        // (the register table's data is an allocation's, a cycle late, or 0: a freeing's)
        self.wq_data.clock.next = self.clock.val();
        self.wq_data.d.next = 0.into();
        self.wq_en.clock.next = self.clock.val();
        self.wq_en.d.next = 0.into();
        self.wq_m.next = 0.into();
        self.byp_en.clock.next = self.clock.val();
        self.byp_en.d.next = self.wq_en.q.val();
        self.byp_data.clock.next = self.clock.val();
        self.byp_data.d.next = self.wq_data.q.val();
        for k in 0..16 {
            self.reg_ram[k].clock.next = self.clock.val();
            self.reg_ram[k].write_enable.next = self.wq_en.q.val().get_bit(k);
            self.reg_ram[k].write_address.next = self.fw.q.val();
            self.reg_ram[k].write_data.next = self.wq_data.q.val();
            self.reg_ram[k].read_address.next = self.fw.q.val();
        }
        for k in 0..48 {
            self.smem_ram[k].clock.next = self.clock.val();
            self.smem_ram[k].write_enable.next = false;
            self.smem_ram[k].write_address.next = self.fb.q.val();
            self.smem_ram[k].write_data.next = 0.into();
            self.smem_ram[k].read_address.next = self.fb.q.val();
        }
        self.wr_wb.next = false;
        self.wr_rn.next = false;
        self.wr_rh.next = false;
        self.wr_sv.next = false;
        self.wr_sl.next = false;
        self.wr_wp.next = false;
        self.wr_sn.next = false;
        self.wr_sh.next = false;
        self.wr_nw.next = false;
        self.wr_na.next = false;
        self.wr_bp.next = false;
        self.w_wb_m.next = 0.into();
        self.w_wb_v.next = 0.into();
        self.w_rn_m.next = 0.into();
        self.w_rn_v.next = 0.into();
        self.w_rh_m.next = 0.into();
        self.w_rh_v.next = 0.into();
        self.w_sv_m.next = 0.into();
        self.w_sv_v.next = false;
        self.w_sl_m.next = 0.into();
        self.w_sl_v.next = 0.into();
        self.w_wp_m.next = 0.into();
        self.w_wp_v.next = 0.into();
        self.w_sn_m.next = 0.into();
        self.w_sn_v.next = 0.into();
        self.w_sh_m.next = 0.into();
        self.w_sh_v.next = 0.into();
        self.w_nw_m.next = 0.into();
        self.w_nw_v.next = 0.into();
        self.w_na_m.next = 0.into();
        self.w_na_v.next = 0.into();
        self.w_bp_m.next = 0.into();
        self.w_bp_v.next = 0.into();

        // (the step is one-hot; idle is none)
        self.is_idle.next = !self.busy.q.val();

        // The threshold (o_default until the first epoch) and what follows from it: the swap
        // limits floor(physical x o / 16) (48 x o / 16 = 3 o; 256 x o / 16 = 16 o) and the
        // virtual register space 256 + 16 o.
        self.eff_o.next = self.o_default.val();
        if self.th_set.q.val() {
            self.eff_o.next = self.th_q.q.val();
        }
        self.o_thresh.next = self.eff_o.val();
        // (registered: used two cycles or more after the threshold moves)
        self.l_s.next = bit_cast::<7, 5>(self.eff_o.val()) + bit_cast::<7, 5>(self.eff_o.val()) + bit_cast::<7, 5>(self.eff_o.val());
        self.l_r.next = 0.into();
        for j in 0..5 {
            self.l_r.next = self.l_r.val().replace_bit(j + 4, self.eff_o.val().get_bit(j));
        }
        self.q_ls.d.next = self.l_s.val();
        self.q_lr.d.next = self.l_r.val();
        self.q_cap.d.next = bit_cast::<12, 10>(self.reg_total.val()) + bit_cast::<12, 9>(self.l_r.val());
        self.valve.next = !self.sched.q.val().any();
        self.slot_free.next = self.slot_present.val() & !self.slot_used.q.val();
        self.smem_free_map.next = self.smem_present.val() & !self.smem_used.q.val();
        self.slot_any.next = self.slot_free.val().any();
        self.n_sfree.next = self.smem_total.val() - self.smem_cnt.q.val();
        self.n_rfree.next = self.reg_total.val() - self.reg_cnt.q.val();

        // Every cycle, from the state: the warps whose block's peak fits the virtual space
        // (peak <= 256 + 16 o - reserved; all under the forward-progress rule), a bit-sliced
        // comparison of the warps' peaks with the slack.
        self.lt_m.next = 0.into();
        self.eq_m.next = 0.into();
        if self.step.q.val().get_bit(2) | self.step.q.val().get_bit(5) {
            self.eq_m.next = self.ones64.val();
            for i in 0..5 {
                if self.slack5q.q.val().get_bit(4 - i) {
                    self.lt_m.next = self.lt_m.val() | (self.eq_m.val() & !self.wpeak[4 - i].q.val());
                    self.eq_m.next = self.eq_m.val() & self.wpeak[4 - i].q.val();
                } else {
                    self.eq_m.next = self.eq_m.val() & !self.wpeak[4 - i].q.val();
                }
            }
            self.wfit.d.next = self.lt_m.val() | self.eq_m.val();
            if self.sneg.q.val() {
                self.wfit.d.next = 0.into();
            }
            if self.valve.val() {
                self.wfit.d.next = self.ones64.val();
            }
        }
        // The queues' candidates (those not seen; in the thread/barrier queue not at a barrier,
        // and started or fitting), and whether each has one (taken the next cycle).
        self.mr.next = 0.into();
        self.ms.next = 0.into();
        self.mt.next = 0.into();
        if self.step.q.val().get_bit(3) | self.step.q.val().get_bit(6) {
            self.mr.next = self.rq.q.val() & !self.seen.q.val();
            self.ms.next = self.sq.q.val() & !self.seen.q.val();
            self.mt.next = self.tq.q.val() & !self.bar.q.val() & !self.seen.q.val() & (self.started.q.val() | self.wfit.q.val());
            self.m_rq.d.next = self.mr.val();
            self.m_sq.d.next = self.ms.val();
            self.m_tq.d.next = self.mt.val();
            self.a_rq.d.next = self.mr.val().any();
            self.a_sq.d.next = self.ms.val().any();
            self.a_tq.d.next = self.mt.val().any();
            self.p_slot.d.next = self.slot_any.val();
        }
        // The rooms the threshold leaves (free sets, and the swap still allowed).
        self.q_sfree.d.next = self.n_sfree.val();
        self.q_rfree.d.next = self.n_rfree.val();
        self.sw_s.next = bit_cast::<12, 7>(self.q_ls.q.val()) - bit_cast::<12, 11>(self.smem_swap.q.val());
        self.s_room.d.next = self.n_sfree.val();
        if bit_cast::<11, 7>(self.q_ls.q.val()) > self.smem_swap.q.val() {
            self.s_room.d.next = self.n_sfree.val() + bit_cast::<7, 12>(self.sw_s.val());
        }
        self.sw_r.next = bit_cast::<12, 9>(self.q_lr.q.val()) - bit_cast::<12, 11>(self.reg_swap.q.val());
        self.r_room.d.next = self.n_rfree.val();
        if bit_cast::<11, 9>(self.q_lr.q.val()) > self.reg_swap.q.val() {
            self.r_room.d.next = self.n_rfree.val() + bit_cast::<10, 12>(self.sw_r.val());
        }
        // What the examined warp needs and may take (its fields and its block's registered):
        // scratchpad sets needed, physical (up to the free ones) and in swap, and whether the
        // threshold allows that swap; the same for registers; whether a warp not started fits.
        self.c1s.next = false;
        self.ds.next = 0.into();
        self.c2s.next = false;
        self.es.next = 0.into();
        self.c1r.next = false;
        self.dr.next = 0.into();
        self.c2r.next = false;
        self.er.next = 0.into();
        if self.step.q.val().get_bit(7) {
            self.c1s.next = self.b_sneed.q.val() <= self.b_sheld.q.val();
            self.ds.next = self.b_sneed.q.val() - self.b_sheld.q.val();
            self.c2s.next = bit_cast::<8, 7>(self.b_sneed.q.val()) <= self.pb_hs.q.val();
            self.es.next = bit_cast::<8, 7>(self.b_sneed.q.val()) - self.pb_hs.q.val();
            self.n_need_s.d.next = 0.into();
            self.n_phys_s.d.next = 0.into();
            self.n_swap_s.d.next = 0.into();
            if !self.c1s.val() {
                self.n_need_s.d.next = self.ds.val();
                self.n_phys_s.d.next = self.q_sfree.q.val();
                if self.c2s.val() {
                    self.n_phys_s.d.next = self.ds.val();
                } else {
                    self.n_swap_s.d.next = bit_cast::<7, 8>(self.es.val());
                }
            }
            self.n_sok.d.next = self.valve.val() | (bit_cast::<9, 7>(self.b_sneed.q.val()) <= self.pb_hsr.q.val());
            self.c1r.next = self.f_rneed.q.val() <= self.f_rheld.q.val();
            self.dr.next = self.f_rneed.q.val() - self.f_rheld.q.val();
            self.c2r.next = bit_cast::<11, 5>(self.f_rneed.q.val()) <= self.pb_hr.q.val();
            self.er.next = bit_cast::<11, 5>(self.f_rneed.q.val()) - self.pb_hr.q.val();
            self.n_need_r.d.next = 0.into();
            self.n_phys_r.d.next = 0.into();
            self.n_swap_r.d.next = 0.into();
            if !self.c1r.val() {
                self.n_need_r.d.next = self.dr.val();
                self.n_phys_r.d.next = bit_cast::<5, 10>(self.q_rfree.q.val());
                if self.c2r.val() {
                    self.n_phys_r.d.next = self.dr.val();
                } else {
                    self.n_swap_r.d.next = bit_cast::<5, 11>(self.er.val());
                }
            }
            self.n_rok.d.next = self.valve.val() | (bit_cast::<12, 5>(self.f_rneed.q.val()) <= self.pb_hrr.q.val());
            self.n_tok.d.next = self.slot_any.val() & (!(self.f_tq.q.val() & !self.f_started.q.val()) | self.valve.val() | (self.pb_rpk.q.val() <= self.q_cap.q.val()));
            self.n_ns_any.d.next = !self.c1s.val();
            self.n_nr_any.d.next = !self.c1r.val();
            self.n_ns_one.d.next = !self.c1s.val() & (self.ds.val() == self.ss_ids[1].val());
            self.n_nr_one.d.next = !self.c1r.val() & (self.dr.val() == self.rs_ids[1].val());
            self.n_ps_any.d.next = !self.c1s.val() & (self.c2s.val() | self.q_sfree.q.val().any());
            self.n_pr_any.d.next = !self.c1r.val() & (self.c2r.val() | self.q_rfree.q.val().any());
            self.slot_low.d.next = self.slot_free.val() & (!self.slot_free.val() + self.one64.val());
        }

        // The candidate taken: the first queue in scan order with one, its lowest warp (at a
        // scan's start, and while a warp is examined: the next).
        if (self.step.q.val().get_bit(4)) | (self.step.q.val().get_bit(7)) {
            self.sel.next = 0.into();
            self.sel_any.next = self.a_rq.q.val() | self.a_sq.q.val() | (self.a_tq.q.val() & self.p_slot.q.val());
            if self.rescan_from_thread.val() {
                if self.a_rq.q.val() {
                    self.sel.next = self.m_rq.q.val();
                }
                if self.a_sq.q.val() {
                    self.sel.next = self.m_sq.q.val();
                }
                if self.a_tq.q.val() & self.p_slot.q.val() {
                    self.sel.next = self.m_tq.q.val();
                }
            } else {
                if self.a_tq.q.val() & self.p_slot.q.val() {
                    self.sel.next = self.m_tq.q.val();
                }
                if self.a_sq.q.val() {
                    self.sel.next = self.m_sq.q.val();
                }
                if self.a_rq.q.val() {
                    self.sel.next = self.m_rq.q.val();
                }
            }
            self.nxt.d.next = self.sel.val() & (!self.sel.val() + self.one64.val());
            self.nxt_none.d.next = !self.sel_any.val();
        } else {
            self.sel.next = 0.into();
            self.sel_any.next = false;
        }

        // Outputs.
        self.ready.next = self.is_idle.val();
        self.waiting.next = (self.sq.q.val() | self.rq.q.val()).any();
        self.slot_room.next = 0.into();
        if !(self.sq.q.val() | self.rq.q.val()).any() & (self.n_used.q.val() + self.n_want.q.val() < self.n_slots.val()) {
            self.slot_room.next = self.n_slots.val() - self.n_used.q.val() - self.n_want.q.val();
        }
        self.grant.next = false;
        self.grant_warp.next = 0.into();
        self.grant_slot.next = 0.into();
        self.reg_phys.next = 0.into();
        self.rd_ent.next = 0.into();
        self.smem_phys.next = 0.into();
        for k in 0..16 {
            self.reg_set[k].next = 0.into();
        }
        for k in 0..48 {
            self.smem_set[k].next = 0.into();
        }
        self.released.next = self.rel_q.val();
        if self.step.q.val().get_bit(12) {
            self.grant.next = true;
            self.grant_warp.next = self.fw.q.val();
            self.grant_slot.next = self.g_slot.q.val();
            for k in 0..16 {
                // (a column written as the row was read: the write's entry)
                self.rd_ent.next = self.reg_ram[k].read_data.val();
                if self.byp_en.q.val().get_bit(k) {
                    self.rd_ent.next = self.byp_data.q.val();
                }
                self.reg_phys.next = self.reg_phys.val().replace_bit(k, self.rd_ent.val().get_bit(8));
                for j in 0..8 {
                    self.reg_set[k].next = self.reg_set[k].val().replace_bit(j, self.rd_ent.val().get_bit(j));
                }
            }
        }
        // (a grant's and a release's block row: the RAMs read at the block of the step before)
        if self.step.q.val().get_bit(12) | self.step.q.val().get_bit(15) {
            for k in 0..48 {
                self.smem_phys.next = self.smem_phys.val().replace_bit(k, self.smem_ram[k].read_data.val().get_bit(6));
                for j in 0..6 {
                    self.smem_set[k].next = self.smem_set[k].val().replace_bit(j, self.smem_ram[k].read_data.val().get_bit(j));
                }
            }
        }

        // Idle: an event is taken; its inputs are registered with the warp's fields (through
        // its index) and its block's.
        self.ev_rsets.next = 0.into();
        self.ev_psets.next = 0.into();
        self.ev_ssets.next = 0.into();
        self.th_new.next = self.eff_o.val();
        self.h_bytes.next = 0.into();
        self.th_idle.next = 0.into();
        self.th_mem.next = 0.into();
        self.th_up.next = 0.into();
        self.g_rneed.next = 0.into();
        self.g_rheld.next = 0.into();
        self.g_bpeak.next = 0.into();
        self.g_slot6.next = 0.into();
        self.g_sneed.next = 0.into();
        self.g_sheld.next = 0.into();
        self.g_nw.next = 0.into();
        self.g_narr.next = 0.into();
        self.g_bmask.next = 0.into();
        self.e_bbit.next = 0.into();
        self.sx.next = 0.into();
        self.bx.next = false;
        if (self.is_idle.val()) & self.ev.val().any() {
            self.sx.next = self.h_ev.val();
            self.bx.next = true;
            // (needs: register sets = registers / 4, up; scratchpad sets = KB, up)
            for j in 0..5 {
                self.ev_rsets.next = self.ev_rsets.val().replace_bit(j, self.regs.val().get_bit(j + 2));
                self.ev_psets.next = self.ev_psets.val().replace_bit(j, self.peak.val().get_bit(j + 2));
            }
            if self.regs.val().get_bit(0) | self.regs.val().get_bit(1) {
                self.ev_rsets.next = self.ev_rsets.val() + 1;
            }
            if self.peak.val().get_bit(0) | self.peak.val().get_bit(1) {
                self.ev_psets.next = self.ev_psets.val() + 1;
            }
            for j in 0..7 {
                self.ev_ssets.next = self.ev_ssets.val().replace_bit(j, self.smem.val().get_bit(j + 10));
            }
            if (self.smem.val() & self.low10.val()).any() {
                self.ev_ssets.next = self.ev_ssets.val() + 1;
            }
            // (Algorithm 1's comparisons; the new threshold is computed when applied)
            self.th_idle.next = bit_cast::<17, 16>(self.idle.val());
            self.th_mem.next = bit_cast::<17, 16>(self.mem.val());
            self.e_up.d.next = self.th_idle.val() > self.th_mem.val() + self.c_delta.val();
            self.e_down.d.next = self.th_mem.val() > self.th_idle.val() + self.c_delta.val();
            self.e_kstart.d.next = self.ev.val() == self.c_start.val();
            self.e_kphase.d.next = self.ev.val() == self.c_phase.val();
            self.e_kbar.d.next = self.ev.val() == self.c_bar.val();
            self.e_kwend.d.next = self.ev.val() == self.c_wend.val();
            self.e_kbend.d.next = self.ev.val() == self.c_bend.val();
            self.e_kepoch.d.next = self.ev.val() == self.c_epoch.val();
            self.e_warps.d.next = self.warps.val();
            self.e_rsets.d.next = self.ev_rsets.val();
            self.e_rsets1.d.next = self.ev_rsets.val() + 1;
            self.e_ssets.d.next = self.ev_ssets.val();
            self.e_psets.d.next = self.ev_psets.val();
            self.fw.d.next = self.warp.val();
            self.fb.d.next = self.block.val();
            self.cur1h.d.next = self.one64.val() << self.warp.val();
            self.e_oth.d.next = (self.sched.q.val() & !(self.one64.val() << self.warp.val())).any();
            for i in 0..16 {
                self.e_bbit.next = self.e_bbit.val().replace_bit(i, self.block.val() == self.ids16[i].val());
            }
            self.eb_bbit.d.next = self.e_bbit.val();
            for j in 0..5 {
                self.g_rneed.next = self.g_rneed.val().replace_bit(j, self.rneed[j].q.val().get_bit(self.warp.val().index()));
                self.g_rheld.next = self.g_rheld.val().replace_bit(j, self.rheld[j].q.val().get_bit(self.warp.val().index()));
                self.g_bpeak.next = self.g_bpeak.val().replace_bit(j, self.bpeak[j].q.val().get_bit(self.block.val().index()));
            }
            for j in 0..6 {
                self.g_slot6.next = self.g_slot6.val().replace_bit(j, self.slot[j].q.val().get_bit(self.warp.val().index()));
            }
            self.e_slotv.d.next = self.slotv.q.val().get_bit(self.warp.val().index());
            self.e_big.d.next = self.nwarps_in.val() > self.n_slots.val();
            self.eb_give.d.next = self.bgive.q.val().get_bit(self.block.val().index());
            self.e_started.d.next = self.started.q.val().get_bit(self.warp.val().index());
            for j in 0..7 {
                self.g_sneed.next = self.g_sneed.val().replace_bit(j, self.sneed[j].q.val().get_bit(self.block.val().index()));
                self.g_sheld.next = self.g_sheld.val().replace_bit(j, self.sheld[j].q.val().get_bit(self.block.val().index()));
                self.g_nw.next = self.g_nw.val().replace_bit(j, self.nwarps[j].q.val().get_bit(self.block.val().index()));
                self.g_narr.next = self.g_narr.val().replace_bit(j, self.narr[j].q.val().get_bit(self.block.val().index()));
            }
            // (the warps of the block: those whose block-field slices match its bits)
            self.g_bmask.next = self.ones64.val();
            for j in 0..4 {
                if self.block.val().get_bit(j) {
                    self.g_bmask.next = self.g_bmask.val() & self.wblock[j].q.val();
                } else {
                    self.g_bmask.next = self.g_bmask.val() & !self.wblock[j].q.val();
                }
            }
            self.e_rheld.d.next = self.g_rheld.val();
            self.e_slot.d.next = self.g_slot6.val();
            self.eb_bpeak.d.next = self.g_bpeak.val();
            self.eb_sneed.d.next = self.g_sneed.val();
            self.eb_sheld.d.next = self.g_sheld.val();
            self.eb_nw.d.next = self.g_nw.val();
            self.eb_narr.d.next = self.g_narr.val();
            // (ceil(regs / 4) <= held: regs <= 4 held; ceil(smem / 1 KB) <= held: smem <= held
            // KB)
            for j in 0..7 {
                self.h_bytes.next = self.h_bytes.val().replace_bit(j + 10, self.g_sheld.val().get_bit(j));
            }
            self.e_hs.d.next = self.smem.val() <= self.h_bytes.val();
            self.e_hb.d.next = self.g_sneed.val() <= self.g_sheld.val();
            self.bmask.d.next = self.g_bmask.val();
            self.e_nw.d.next = self.nwarps_in.val();
            // (the block's arrivals once one more arrives)
            self.e_narr1.d.next = self.g_narr.val() + 1;
            self.e_gap.d.next = bit_cast::<8, 7>(self.g_nw.val()) - bit_cast::<8, 7>(self.g_narr.val());
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // The event applied, from those registers.
        // (the barrier's test: all the block's warps arrived once one more arrives)
        // (warps <= arrivals + 1: their difference negative, 0 or 1)
        self.ev_open.next = self.e_gap.q.val().get_bit(7) | !(self.e_gap.q.val() & self.gap_hi.val()).any();
        self.narr_new.next = self.e_narr1.q.val();
        self.nw_new.next = self.eb_nw.q.val() - 1;
        self.bar_open.next = false;
        self.rel_m.next = 0.into();
        self.ph_held.next = false;
        self.rel_go.next = false;
        self.slot_clr.next = 0.into();
        // (the first entry a freeing selects: the highest held, registered from the event's
        // fields; a freeing starts a cycle after them)
        // (entry h - 1 for h held: a decoder; h is at most 16 register sets, 48 scratchpad sets)
        self.rg_sel0.next = (self.one64.val() << self.e_rheld.q.val()) >> 1;
        self.sm_sel0.next = (self.one64.val() << self.eb_sheld.q.val()) >> 1;
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(1) {
            self.sx.next = self.h_w.val();
            self.bx.next = true;
            if self.e_slotv.q.val() {
                self.slot_clr.next = self.one64.val() << self.e_slot.q.val();
            }
            if self.e_kstart.q.val() {
                self.blocks.d.next = self.blocks.q.val() | self.eb_bbit.q.val();
                self.live.d.next = self.live.q.val() | self.e_warps.q.val();
                self.tq.d.next = self.tq.q.val() | self.e_warps.q.val();
                self.w_wb_m.next = self.e_warps.q.val();
                self.wr_wb.next = true;
                self.w_wb_v.next = self.fb.q.val();
                self.w_rn_m.next = self.e_warps.q.val();
                self.wr_rn.next = true;
                self.w_rn_v.next = self.e_rsets.q.val();
                self.w_rh_m.next = self.e_warps.q.val();
                self.wr_rh.next = true;
                self.w_sv_m.next = self.e_warps.q.val();
                self.wr_sv.next = true;
                self.w_wp_m.next = self.e_warps.q.val();
                self.wr_wp.next = true;
                self.w_wp_v.next = self.e_psets.q.val();
                self.w_sn_m.next = self.eb_bbit.q.val();
                self.wr_sn.next = true;
                self.w_sn_v.next = self.e_ssets.q.val();
                self.w_sh_m.next = self.eb_bbit.q.val();
                self.wr_sh.next = true;
                self.w_nw_m.next = self.eb_bbit.q.val();
                self.wr_nw.next = true;
                self.w_nw_v.next = self.e_nw.q.val();
                self.w_na_m.next = self.eb_bbit.q.val();
                self.wr_na.next = true;
                self.w_bp_m.next = self.eb_bbit.q.val();
                self.wr_bp.next = true;
                self.w_bp_v.next = self.e_psets.q.val();
                self.n_want.d.next = self.n_want.q.val() + self.e_nw.q.val();
                self.bgive.d.next = self.bgive.q.val() & !self.eb_bbit.q.val();
                if self.e_big.q.val() {
                    self.bgive.d.next = self.bgive.q.val() | self.eb_bbit.q.val();
                }
            }
            if self.e_kphase.q.val() {
                // (the warp leaves the schedulable set for the scratchpad queue in any case; if
                // it holds its needs, and its block the scratchpad, the release step takes it
                // back, with no scan unless sets are freed)
                self.ph_held.next = (self.e_rsets.q.val() <= self.e_rheld.q.val()) & self.e_hs.q.val() & self.e_hb.q.val();
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.sq.d.next = self.sq.q.val() | self.cur1h.q.val();
                if self.ph_held.val() {
                    self.rel_ph.d.next = true;
                    self.rel_go.next = true;
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                if self.e_ssets.q.val() > self.eb_sneed.q.val() {
                    self.w_sn_m.next = self.eb_bbit.q.val();
                    self.wr_sn.next = true;
                    self.w_sn_v.next = self.e_ssets.q.val();
                }
                self.w_rn_m.next = self.cur1h.q.val();
                self.wr_rn.next = true;
                self.w_rn_v.next = self.e_rsets.q.val();
                if self.e_rheld.q.val() > self.e_rsets.q.val() {
                    self.fr_k.d.next = bit_cast::<7, 5>(self.e_rheld.q.val() - self.e_rsets.q.val());
                    self.fr_last.d.next = self.e_rheld.q.val() == self.e_rsets1.q.val();
                    self.fr_h.d.next = bit_cast::<7, 5>(self.e_rheld.q.val());
                    self.fthen.d.next = false;
                    self.fsm.d.next = false;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
            }
            if self.e_kbar.q.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.tq.d.next = self.tq.q.val() | self.cur1h.q.val();
                self.bar.d.next = self.bar.q.val() | self.cur1h.q.val();
                // (only a block of more warps than slots gives them up)
                if self.eb_give.q.val() {
                    self.w_sv_m.next = self.cur1h.q.val();
                    self.wr_sv.next = true;
                    self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                    if self.e_slotv.q.val() {
                        self.n_used.d.next = self.n_used.q.val() - 1;
                    }
                }
                self.bar_open.next = self.ev_open.val();
                self.w_na_m.next = self.eb_bbit.q.val();
                self.wr_na.next = true;
                // (no scan, unless a slot was given up or no warp is left schedulable: the
                // forward-progress rule)
                if !self.eb_give.q.val() & self.e_oth.q.val() {
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                self.rel_m.next = (self.bar.q.val() | self.cur1h.q.val()) & self.bmask.q.val();
                if !self.bar_open.val() {
                    self.w_na_v.next = self.narr_new.val();
                } else {
                    self.bar.d.next = (self.bar.q.val() | self.cur1h.q.val()) & !self.bmask.q.val();
                    if self.eb_give.q.val() {
                        self.n_want.d.next = self.n_want.q.val() + self.narr_new.val();
                    } else {
                        // (the block's warps released together, on what they kept, in the
                        // release step)
                        self.rel.d.next = self.rel_m.val();
                        self.rel_go.next = true;
                        self.sx.next = self.h_idle.val();
                        self.bx.next = false;
                    }
                }
            }
            if self.e_kwend.q.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur1h.q.val();
                self.live.d.next = self.live.q.val() & !self.cur1h.q.val();
                self.w_sv_m.next = self.cur1h.q.val();
                self.wr_sv.next = true;
                self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                if self.e_slotv.q.val() {
                    self.n_used.d.next = self.n_used.q.val() - 1;
                }
                if self.e_started.q.val() {
                    self.started.d.next = self.started.q.val() & !self.cur1h.q.val();
                    self.reg_resv.d.next = self.reg_resv.q.val() - bit_cast::<11, 5>(self.eb_bpeak.q.val());
                }
                self.w_nw_m.next = self.eb_bbit.q.val();
                self.wr_nw.next = true;
                self.w_nw_v.next = self.nw_new.val();
                self.bar_open.next = self.eb_narr.q.val().any() & self.ev_open.val();
                if self.bar_open.val() {
                    self.w_na_m.next = self.eb_bbit.q.val();
                    self.wr_na.next = true;
                    self.bar.d.next = self.bar.q.val() & !self.bmask.q.val();
                    if self.eb_give.q.val() {
                        self.n_want.d.next = self.n_want.q.val() + self.eb_narr.q.val();
                    } else {
                        self.rel_m.next = self.bar.q.val() & self.bmask.q.val();
                        self.rel.d.next = self.rel_m.val();
                        self.rel_go.next = true;
                    }
                }
                self.w_rn_m.next = self.cur1h.q.val();
                self.wr_rn.next = true;
                self.fthen.d.next = self.smem_at_warp_end.val() & self.eb_sheld.q.val().any();
                if self.e_rheld.q.val().any() {
                    self.fr_k.d.next = bit_cast::<7, 5>(self.e_rheld.q.val());
                    self.fr_last.d.next = self.e_rheld.q.val() == self.rs_ids[1].val();
                    self.fr_h.d.next = bit_cast::<7, 5>(self.e_rheld.q.val());
                    self.fsm.d.next = false;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                } else if self.smem_at_warp_end.val() & self.eb_sheld.q.val().any() {
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.fend.d.next = false;
                    self.fsm.d.next = true;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
            }
            if self.e_kbend.q.val() {
                if self.eb_sheld.q.val().any() {
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.fend.d.next = true;
                    self.fthen.d.next = false;
                    self.fsm.d.next = true;
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                } else {
                    self.blocks.d.next = self.blocks.q.val() & !self.eb_bbit.q.val();
                }
            }
            if self.e_kepoch.q.val() {
                self.th_up.next = self.eff_o.val() + self.o_step.val();
                if self.th_up.val() > self.o_max.val() {
                    self.th_up.next = self.o_max.val();
                }
                if self.e_up.q.val() {
                    self.th_new.next = self.th_up.val();
                } else if self.e_down.q.val() {
                    self.th_new.next = 0.into();
                    if self.eff_o.val() > self.o_step.val() {
                        self.th_new.next = self.eff_o.val() - self.o_step.val();
                    }
                }
                self.th_q.d.next = self.th_new.val();
                self.th_set.d.next = true;
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
            // (an event that releases warps goes through the release step first, keeping the
            // step it chose: kept in any case, used only then)
            self.rthen.d.next = self.sx.val();
            self.rbusy.d.next = self.bx.val();
            if self.rel_go.val() {
                self.sx.next = self.h_rel.val();
                self.bx.next = true;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // The release step: the warps released become schedulable (and leave the
        // thread/barrier or scratchpad queue); then the step the event chose.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(15) {
            self.sched.d.next = self.sched.q.val() | self.rel_q.val();
            self.tq.d.next = self.tq.q.val() & !self.rel_q.val();
            self.sq.d.next = self.sq.q.val() & !self.rel_q.val();
            self.sx.next = self.rthen.q.val();
            self.bx.next = self.rbusy.q.val();
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // Freeing, highest set first: the entry selected from the row (a one-hot over the
        // logical sets), then freed while the next is selected.
        self.fr_next.next = 0.into();
        self.rlow6.next = 0.into();
        self.rword.next = 0.into();
        self.sentry6.next = 0.into();
        self.sel_sh.next = 0.into();
        if (self.step.q.val().get_bit(13)) | (self.step.q.val().get_bit(14)) {
            if self.fsm.q.val() {
                for k in 0..48 {
                    if self.fr_sel.q.val().get_bit(k) {
                        for j in 0..7 {
                            if self.smem_ram[k].read_data.val().get_bit(j) {
                                self.fr_next.next = self.fr_next.val().replace_bit(j, true);
                            }
                        }
                    }
                }
            } else {
                for k in 0..16 {
                    if self.fr_sel.q.val().get_bit(k) {
                        self.fr_next.next = self.fr_next.val() | self.reg_ram[k].read_data.val();
                    }
                }
            }
            self.sel_sh.next = self.fr_sel.q.val() >> 1;
            self.fr_e.d.next = self.fr_next.val();
            self.fr_wr.d.next = self.fr_sel.q.val();
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(13) {
            self.sx.next = self.h_free.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(14) {
            // (the step held unless it ends)
            self.sx.next = self.step.q.val();
            self.bx.next = true;
            self.fr_k.d.next = self.fr_k.q.val() - 1;
            self.fr_last.d.next = self.fr_k.q.val() == self.ss_ids[2].val();
            self.fr_h.d.next = self.fr_h.q.val() - 1;
            if self.fsm.q.val() {
                self.sentry6.next = bit_cast::<6, 9>(self.fr_e.q.val());
                if self.fr_e.q.val().get_bit(6) {
                    self.smem_used.d.next = self.smem_used.q.val() & !(self.one64.val() << self.sentry6.val());
                    self.smem_cnt.d.next = self.smem_cnt.q.val() - 1;
                } else {
                    self.smem_swap.d.next = self.smem_swap.q.val() - 1;
                }
                for k in 0..48 {
                    if self.fr_wr.q.val().get_bit(k) {
                        self.smem_ram[k].write_enable.next = true;
                    }
                }
                self.w_sh_m.next = self.eb_bbit.q.val();
                self.wr_sh.next = true;
                self.w_sh_v.next = self.fr_h.q.val() - 1;
            } else {
                self.rlow6.next = bit_cast::<6, 9>(self.fr_e.q.val());
                self.rword.next = self.rword.val().replace_bit(0, self.fr_e.q.val().get_bit(6));
                self.rword.next = self.rword.val().replace_bit(1, self.fr_e.q.val().get_bit(7));
                if self.fr_e.q.val().get_bit(8) {
                    for k in 0..4 {
                        if self.rword.val() == self.word_ids[k].val() {
                            self.reg_used[k].d.next = self.reg_used[k].q.val() & !(self.one64.val() << self.rlow6.val());
                        }
                    }
                    self.reg_cnt.d.next = self.reg_cnt.q.val() - 1;
                } else {
                    self.reg_swap.d.next = self.reg_swap.q.val() - 1;
                }
                for k in 0..16 {
                    if self.fr_wr.q.val().get_bit(k) {
                        self.reg_ram[k].write_enable.next = true;
                    }
                }
                self.w_rh_m.next = self.cur1h.q.val();
                self.wr_rh.next = true;
                self.w_rh_v.next = bit_cast::<5, 7>(self.fr_h.q.val() - 1);
            }
            if self.fr_last.q.val() {
                self.sx.next = self.h_w.val();
                self.bx.next = true;
                if !self.fsm.q.val() & self.fthen.q.val() {
                    self.fsm.d.next = true;
                    self.fthen.d.next = false;
                    self.fend.d.next = false;
                    self.fr_k.d.next = self.eb_sheld.q.val();
                    self.fr_last.d.next = self.eb_sheld.q.val() == self.ss_ids[1].val();
                    self.fr_h.d.next = self.eb_sheld.q.val();
                    self.sx.next = self.h_free0.val();
                    self.bx.next = true;
                }
                if self.fsm.q.val() & self.fend.q.val() {
                    self.blocks.d.next = self.blocks.q.val() & !self.eb_bbit.q.val();
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        // The freeing's selection: when an event is applied, the first entry a freeing
        // selects, whether one follows or not (the register sets' highest, or the block's
        // scratchpad's for a block's end or a warp holding no set); while freeing, shifted
        // down a set, or the scratchpad's first when the registers' last is freed and the
        // block's scratchpad follows; held otherwise.
        self.fs_then.next = self.step.q.val().get_bit(14) & self.fr_last.q.val() & !self.fsm.q.val() & self.fthen.q.val();
        self.fs_r.next = 0.into();
        self.fs_s.next = 0.into();
        self.fs_h.next = 0.into();
        if self.step.q.val().get_bit(1) & !(self.e_kbend.q.val() | !self.e_rheld.q.val().any()) {
            self.fs_r.next = self.rg_sel0.val();
        }
        if (self.step.q.val().get_bit(1) & (self.e_kbend.q.val() | !self.e_rheld.q.val().any())) | self.fs_then.val() {
            self.fs_s.next = self.sm_sel0.val();
        }
        if (self.step.q.val().get_bit(13) | self.step.q.val().get_bit(14)) & !self.fs_then.val() {
            self.fs_h.next = self.sel_sh.val();
        }
        if !(self.step.q.val().get_bit(1) | self.step.q.val().get_bit(13) | self.step.q.val().get_bit(14)) {
            self.fs_h.next = self.fr_sel.q.val();
        }
        self.fr_sel.d.next = self.fs_r.val() | self.fs_s.val() | self.fs_h.val();

        // A scan's start: the fit (this cycle's, registered), the candidates, the first.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(2) {
            self.seen.d.next = 0.into();
            self.sx.next = self.h_p1.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(3) {
            self.sx.next = self.h_p2.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(4) {
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if !self.sel_any.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // A warp examined: its fields through the one-hot candidate, its block's, its needs,
        // the decision (the next candidate is picked meanwhile).
        self.sx.next = 0.into();
        self.bx.next = false;
        // (the examined warp's and its block's lookups, apart from the event's: no path runs
        // from the event's inputs into these stages)
        self.f_gw.next = 0.into();
        self.f_gb.next = 0.into();
        self.f_grn.next = 0.into();
        self.f_grh.next = 0.into();
        self.f_gsl.next = 0.into();
        self.b_gpk.next = 0.into();
        self.b_gsn.next = 0.into();
        self.b_gsh.next = 0.into();
        self.b_gbb.next = 0.into();
        if self.step.q.val().get_bit(5) {
            self.sx.next = self.h_b.val();
            self.bx.next = true;
            self.cur1h.d.next = self.nxt.q.val();
            self.seen.d.next = self.seen.q.val() | self.nxt.q.val();
            for b in 0..6 {
                self.f_gw.next = self.f_gw.val().replace_bit(b, (self.nxt.q.val() & self.bitmask[b].val()).any());
            }
            for j in 0..4 {
                self.f_gb.next = self.f_gb.val().replace_bit(j, (self.wblock[j].q.val() & self.nxt.q.val()).any());
            }
            for j in 0..5 {
                self.f_grn.next = self.f_grn.val().replace_bit(j, (self.rneed[j].q.val() & self.nxt.q.val()).any());
                self.f_grh.next = self.f_grh.val().replace_bit(j, (self.rheld[j].q.val() & self.nxt.q.val()).any());
            }
            for j in 0..6 {
                self.f_gsl.next = self.f_gsl.val().replace_bit(j, (self.slot[j].q.val() & self.nxt.q.val()).any());
            }
            self.fw.d.next = self.f_gw.val();
            self.fb.d.next = self.f_gb.val();
            self.f_rneed.d.next = self.f_grn.val();
            self.f_rheld.d.next = self.f_grh.val();
            self.f_slot.d.next = self.f_gsl.val();
            self.f_tq.d.next = (self.tq.q.val() & self.nxt.q.val()).any();
            self.f_sq.d.next = (self.sq.q.val() & self.nxt.q.val()).any();
            self.f_rq.d.next = (self.rq.q.val() & self.nxt.q.val()).any();
            self.f_bar.d.next = (self.bar.q.val() & self.nxt.q.val()).any();
            self.f_started.d.next = (self.started.q.val() & self.nxt.q.val()).any();
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(6) {
            self.sx.next = self.h_n.val();
            self.bx.next = true;
            for i in 0..16 {
                self.b_gbb.next = self.b_gbb.val().replace_bit(i, self.fb.q.val() == self.ids16[i].val());
            }
            self.bbit.d.next = self.b_gbb.val();
            for j in 0..5 {
                self.b_gpk.next = self.b_gpk.val().replace_bit(j, self.bpeak[j].q.val().get_bit(self.fb.q.val().index()));
            }
            for j in 0..7 {
                self.b_gsn.next = self.b_gsn.val().replace_bit(j, self.sneed[j].q.val().get_bit(self.fb.q.val().index()));
                self.b_gsh.next = self.b_gsh.val().replace_bit(j, self.sheld[j].q.val().get_bit(self.fb.q.val().index()));
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        if self.step.q.val().get_bit(6) {
            self.b_bpeak.d.next = self.b_gpk.val();
            self.b_sneed.d.next = self.b_gsn.val();
            self.b_sheld.d.next = self.b_gsh.val();
            // (the sums the needs are compared with)
            self.pb_hs.d.next = bit_cast::<8, 7>(self.b_gsh.val()) + bit_cast::<8, 7>(self.q_sfree.q.val());
            self.pb_hsr.d.next = bit_cast::<9, 7>(self.b_gsh.val()) + bit_cast::<9, 7>(self.s_room.q.val());
            self.pb_rpk.d.next = bit_cast::<12, 11>(self.reg_resv.q.val()) + bit_cast::<12, 5>(self.b_gpk.val());
            self.pb_hr.d.next = bit_cast::<11, 5>(self.f_rheld.q.val()) + bit_cast::<11, 10>(self.q_rfree.q.val());
            self.pb_hrr.d.next = bit_cast::<12, 5>(self.f_rheld.q.val()) + bit_cast::<12, 10>(self.r_room.q.val());
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(7) {
            self.sx.next = self.h_d.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.fresh.next = self.f_tq.q.val() & !self.f_started.q.val();
        self.t_pass.next = false;
        self.at_t.next = false;
        self.s_act.next = false;
        self.s_go.next = false;
        self.at_s.next = false;
        self.r_act.next = false;
        self.gr.next = false;
        self.at_r.next = false;
        self.moved.next = false;
        self.slot_new.next = 0.into();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(8) {
            self.t_pass.next = self.f_tq.q.val() & !self.f_bar.q.val() & self.n_tok.q.val();
            self.at_t.next = self.f_tq.q.val() & !self.t_pass.val();
            self.s_act.next = !self.at_t.val() & !self.f_rq.q.val();
            self.s_go.next = self.s_act.val() & self.n_sok.q.val();
            self.at_s.next = self.s_act.val() & !self.n_sok.q.val();
            self.r_act.next = !self.at_t.val() & !self.at_s.val();
            self.gr.next = self.r_act.val() & self.n_rok.q.val();
            self.at_r.next = self.r_act.val() & !self.n_rok.q.val();
            self.moved.next = self.t_pass.val() | (self.s_go.val() & (self.n_ns_any.q.val() | self.f_sq.q.val())) | self.gr.val();
            for b in 0..6 {
                self.slot_new.next = self.slot_new.val().replace_bit(b, (self.slot_low.q.val() & self.bitmask[b].val()).any());
            }
            self.tq.d.next = self.tq.q.val() & !self.cur1h.q.val();
            self.sq.d.next = self.sq.q.val() & !self.cur1h.q.val();
            self.rq.d.next = self.rq.q.val() & !self.cur1h.q.val();
            if self.at_t.val() {
                self.tq.d.next = self.tq.q.val();
            }
            if self.at_s.val() {
                self.sq.d.next = self.sq.q.val() | self.cur1h.q.val();
            }
            if self.at_r.val() {
                self.rq.d.next = self.rq.q.val() | self.cur1h.q.val();
            }
            self.g_slot.d.next = self.f_slot.q.val();
            if self.t_pass.val() {
                if self.fresh.val() {
                    self.started.d.next = self.started.q.val() | self.cur1h.q.val();
                    self.reg_resv.d.next = self.reg_resv.q.val() + bit_cast::<11, 5>(self.b_bpeak.q.val());
                }
                self.slot_used.d.next = self.slot_used.q.val() | self.slot_low.q.val();
                self.w_sv_m.next = self.cur1h.q.val();
                self.wr_sv.next = true;
                self.w_sv_v.next = true;
                self.w_sl_m.next = self.cur1h.q.val();
                self.wr_sl.next = true;
                self.w_sl_v.next = self.slot_new.val();
                self.g_slot.d.next = self.slot_new.val();
                self.n_used.d.next = self.n_used.q.val() + 1;
                self.n_want.d.next = self.n_want.q.val() - 1;
            }
            self.a_smem.d.next = 0.into();
            self.a_sphys.d.next = 0.into();
            if self.s_go.val() {
                self.smem_cnt.d.next = self.smem_cnt.q.val() + self.n_phys_s.q.val();
                self.smem_swap.d.next = self.smem_swap.q.val() + bit_cast::<11, 7>(self.n_swap_s.q.val());
                self.a_smem.d.next = self.n_need_s.q.val();
                self.a_sphys.d.next = self.n_phys_s.q.val();
            }
            self.a_regs.d.next = 0.into();
            self.a_rphys.d.next = 0.into();
            if self.gr.val() {
                self.reg_cnt.d.next = self.reg_cnt.q.val() + bit_cast::<10, 5>(self.n_phys_r.q.val());
                self.reg_swap.d.next = self.reg_swap.q.val() + bit_cast::<11, 5>(self.n_swap_r.q.val());
                self.a_regs.d.next = self.n_need_r.q.val();
                self.a_rphys.d.next = self.n_phys_r.q.val();
            }
            self.a_grant.d.next = self.gr.val();
            self.al_rh.d.next = self.f_rheld.q.val();
            self.al_sh.d.next = self.b_sheld.q.val();
            self.as_on.d.next = self.s_go.val() & self.n_ns_any.q.val();
            // (whether the first set allocated is the last)
            self.al_last.d.next = (self.s_go.val() & self.n_ns_one.q.val() & !(self.gr.val() & self.n_nr_any.q.val())) | (!(self.s_go.val() & self.n_ns_any.q.val()) & self.gr.val() & self.n_nr_one.q.val());
            self.asp_on.d.next = self.s_go.val() & self.n_ps_any.q.val();
            self.arp_on.d.next = self.gr.val() & self.n_pr_any.q.val();
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if self.nxt_none.q.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
            if self.moved.val() {
                if (self.s_go.val() & self.n_ns_any.q.val()) | (self.gr.val() & self.n_nr_any.q.val()) {
                    self.sx.next = self.h_al0.val();
                    self.bx.next = true;
                } else if self.gr.val() {
                    self.sx.next = self.h_fin.val();
                    self.bx.next = true;
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // Allocating: the lowest free sets found (per 64-set word of the register map), then
        // one set a cycle, the next lowest found meanwhile (scratchpad first, then registers).
        self.s_rest.next = 0.into();
        self.s_idx.next = 0.into();
        self.r_idx.next = 0.into();
        self.went.next = 0.into();
        self.sent.next = 0.into();
        self.take_s.next = false;
        self.take_r.next = false;
        self.r_first.next = 0.into();
        for k in 0..4 {
            self.r_rest[k].next = 0.into();
            self.r_enc[k].next = 0.into();
        }
        if (self.step.q.val().get_bit(9)) | (self.step.q.val().get_bit(10)) {
            self.take_s.next = (self.step.q.val().get_bit(10)) & self.as_on.q.val() & self.asp_on.q.val();
            self.take_r.next = (self.step.q.val().get_bit(10)) & !self.as_on.q.val() & self.arp_on.q.val();
            // (the first word with a free set, from last cycle's registers)
            self.r_first.next = 0.into();
            if self.al_rany[3].q.val() {
                self.r_first.next = 8.into();
            }
            if self.al_rany[2].q.val() {
                self.r_first.next = 4.into();
            }
            if self.al_rany[1].q.val() {
                self.r_first.next = 2.into();
            }
            if self.al_rany[0].q.val() {
                self.r_first.next = 1.into();
            }
            // (the lowest free set of each map, and of the map less the set taken now, both
            // from registers; the choice made last)
            self.s_rest.next = self.smem_free_map.val() & !self.al_s1h.q.val();
            self.al_s1h.d.next = self.smem_free_map.val() & (!self.smem_free_map.val() + self.one64.val());
            if self.take_s.val() {
                self.al_s1h.d.next = self.s_rest.val() & (!self.s_rest.val() + self.one64.val());
            }
            for k in 0..4 {
                self.r_rest[k].next = !self.reg_used[k].q.val() & !self.al_r1h[k].q.val();
                self.al_r1h[k].d.next = !self.reg_used[k].q.val() & (self.reg_used[k].q.val() + self.one64.val());
                self.al_rany[k].d.next = !self.reg_used[k].q.val().all();
                if self.take_r.val() & self.r_first.val().get_bit(k) {
                    self.al_r1h[k].d.next = self.r_rest[k].val() & (!self.r_rest[k].val() + self.one64.val());
                    self.al_rany[k].d.next = self.r_rest[k].val().any();
                }
            }
        }
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(9) {
            self.sx.next = self.h_al.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(10) {
            // (the step held unless it ends)
            self.sx.next = self.step.q.val();
            self.bx.next = true;
            for b in 0..6 {
                self.s_idx.next = self.s_idx.val().replace_bit(b, (self.al_s1h.q.val() & self.bitmask[b].val()).any());
                for k in 0..4 {
                    self.r_enc[k].next = self.r_enc[k].val().replace_bit(b, (self.al_r1h[k].q.val() & self.bitmask[b].val()).any());
                }
            }
            for k in 0..4 {
                if self.r_first.val().get_bit(k) & self.arp_on.q.val() {
                    for b in 0..6 {
                        self.r_idx.next = self.r_idx.val().replace_bit(b, self.r_enc[k].val().get_bit(b));
                    }
                    self.r_idx.next = self.r_idx.val().replace_bit(6, self.word_ids[k].val().get_bit(0));
                    self.r_idx.next = self.r_idx.val().replace_bit(7, self.word_ids[k].val().get_bit(1));
                }
            }
            if self.as_on.q.val() {
                if self.asp_on.q.val() {
                    self.sent.next = bit_cast::<7, 6>(self.s_idx.val()) | self.v7.val();
                    self.smem_used.d.next = self.smem_used.q.val() | self.al_s1h.q.val();
                    self.a_sphys.d.next = self.a_sphys.q.val() - 1;
                    self.asp_on.d.next = self.a_sphys.q.val() != self.ss_ids[1].val();
                }
                for k in 0..48 {
                    self.smem_ram[k].write_data.next = self.sent.val();
                    if self.al_sh.q.val() == self.ss_ids[k].val() {
                        self.smem_ram[k].write_enable.next = true;
                    }
                }
                self.w_sh_m.next = self.bbit.q.val();
                self.wr_sh.next = true;
                self.w_sh_v.next = self.al_sh.q.val() + 1;
                self.al_sh.d.next = self.al_sh.q.val() + 1;
                self.a_smem.d.next = self.a_smem.q.val() - 1;
                self.as_on.d.next = self.a_smem.q.val() != self.ss_ids[1].val();
            } else {
                self.went.next = bit_cast::<9, 8>(self.r_idx.val());
                if self.arp_on.q.val() {
                    self.went.next = bit_cast::<9, 8>(self.r_idx.val()) | self.v9.val();
                    for k in 0..4 {
                        if self.r_first.val().get_bit(k) {
                            self.reg_used[k].d.next = self.reg_used[k].q.val() | self.al_r1h[k].q.val();
                        }
                    }
                    self.a_rphys.d.next = self.a_rphys.q.val() - 1;
                    self.arp_on.d.next = self.a_rphys.q.val() != self.rs_ids[1].val();
                }
                self.wq_data.d.next = self.went.val();
                for k in 0..16 {
                    self.wq_m.next = self.wq_m.val().replace_bit(k, self.al_rh.q.val() == self.rs_ids[k].val());
                }
                self.wq_en.d.next = self.wq_m.val();
                self.w_rh_m.next = self.cur1h.q.val();
                self.wr_rh.next = true;
                self.w_rh_v.next = self.al_rh.q.val() + 1;
                self.al_rh.d.next = self.al_rh.q.val() + 1;
                self.a_regs.d.next = self.a_regs.q.val() - 1;
            }
            self.al_last.d.next = (self.as_on.q.val() & (((self.a_smem.q.val() == self.ss_ids[2].val()) & !self.a_regs.q.val().any()) | ((self.a_smem.q.val() == self.ss_ids[1].val()) & (self.a_regs.q.val() == self.rs_ids[1].val())))) | (!self.as_on.q.val() & (self.a_regs.q.val() == self.rs_ids[2].val()));
            if self.al_last.q.val() {
                self.sx.next = self.h_f.val();
                self.bx.next = true;
                if self.nxt_none.q.val() {
                    self.sx.next = self.h_idle.val();
                    self.bx.next = false;
                }
                if self.a_grant.q.val() {
                    self.sx.next = self.h_read.val();
                    self.bx.next = true;
                }
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();

        // The granted warp's rows are read; then the grant.
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(11) {
            self.sx.next = self.h_fin.val();
            self.bx.next = true;
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        self.sx.next = 0.into();
        self.bx.next = false;
        if self.step.q.val().get_bit(12) {
            self.sched.d.next = self.sched.q.val() | self.cur1h.q.val();
            self.sx.next = self.h_f.val();
            self.bx.next = true;
            if self.nxt_none.q.val() {
                self.sx.next = self.h_idle.val();
                self.bx.next = false;
            }
        }
        self.stn.next = self.stn.val() | self.sx.val();
        self.bsn.next = self.bsn.val() | self.bx.val();
        // (the next step: each stage's choice, or-ed; the stages are one-hot, so no priority
        // chain runs through them)
        self.step.d.next = self.stn.val();
        self.busy.d.next = self.bsn.val();

        // The slack the fit compares peaks with (256 + 16 o - reserved, clamped to 0..=31),
        // registered as it will be after this cycle: a decision that starts a warp reserves its
        // peak, a warp's end releases it.
        // (each of the three values clamped, then the one the step chooses: the decision only
        // selects)
        self.sl3[0].next = self.q_cap.q.val() - bit_cast::<12, 11>(self.reg_resv.q.val());
        self.slk.d.next = self.sl3[0].val();
        self.sl3[1].next = self.q_cap.q.val() - self.pb_rpk.q.val();
        self.sl3[2].next = self.slk.q.val() + bit_cast::<12, 5>(self.eb_bpeak.q.val());
        self.sl5[0].next = bit_cast::<5, 12>(self.sl3[0].val());
        if (self.sl3[0].val() & self.sl_hi.val()).any() {
            self.sl5[0].next = 31.into();
        }
        self.sl5[1].next = bit_cast::<5, 12>(self.sl3[1].val());
        if (self.sl3[1].val() & self.sl_hi.val()).any() {
            self.sl5[1].next = 31.into();
        }
        self.sl5[2].next = bit_cast::<5, 12>(self.sl3[2].val());
        if (self.sl3[2].val() & self.sl_hi.val()).any() {
            self.sl5[2].next = 31.into();
        }
        self.sk_c[0].next = self.step.q.val().get_bit(8) & self.t_pass.val() & self.fresh.val();
        self.sk_c[1].next = self.step.q.val().get_bit(1) & self.e_kwend.q.val() & self.e_started.q.val();
        self.sk_t[0].next = 0.into();
        self.sk_t[1].next = 0.into();
        self.sk_t[2].next = 0.into();
        if !(self.sk_c[0].val() | self.sk_c[1].val()) {
            self.sk_t[0].next = self.sl5[0].val();
        }
        if self.sk_c[0].val() {
            self.sk_t[1].next = self.sl5[1].val();
        }
        if self.sk_c[1].val() {
            self.sk_t[2].next = self.sl5[2].val();
        }
        self.slack5q.d.next = self.sk_t[0].val() | self.sk_t[1].val() | self.sk_t[2].val();
        self.sneg.d.next = (!(self.sk_c[0].val() | self.sk_c[1].val()) & self.sl3[0].val().get_bit(11))
            | (self.sk_c[0].val() & self.sl3[1].val().get_bit(11))
            | (self.sk_c[1].val() & self.sl3[2].val().get_bit(11));

        // The fields' writes, through their masks (a field not written holds).
        if self.wr_wb.val() {
            for j in 0..4 {
                self.wblock[j].d.next = self.wblock[j].q.val() & !self.w_wb_m.val();
                if self.w_wb_v.val().get_bit(j) {
                    self.wblock[j].d.next = self.wblock[j].q.val() | self.w_wb_m.val();
                }
            }
        }
        if self.wr_rn.val() {
            for j in 0..5 {
                self.rneed[j].d.next = self.rneed[j].q.val() & !self.w_rn_m.val();
                if self.w_rn_v.val().get_bit(j) {
                    self.rneed[j].d.next = self.rneed[j].q.val() | self.w_rn_m.val();
                }
            }
        }
        if self.wr_rh.val() {
            for j in 0..5 {
                self.rheld[j].d.next = self.rheld[j].q.val() & !self.w_rh_m.val();
                if self.w_rh_v.val().get_bit(j) {
                    self.rheld[j].d.next = self.rheld[j].q.val() | self.w_rh_m.val();
                }
            }
        }
        if self.wr_wp.val() {
            for j in 0..5 {
                self.wpeak[j].d.next = self.wpeak[j].q.val() & !self.w_wp_m.val();
                if self.w_wp_v.val().get_bit(j) {
                    self.wpeak[j].d.next = self.wpeak[j].q.val() | self.w_wp_m.val();
                }
            }
        }
        if self.wr_bp.val() {
            for j in 0..5 {
                self.bpeak[j].d.next = self.bpeak[j].q.val() & !self.w_bp_m.val();
                if self.w_bp_v.val().get_bit(j) {
                    self.bpeak[j].d.next = self.bpeak[j].q.val() | self.w_bp_m.val();
                }
            }
        }
        if self.wr_sv.val() {
            self.slotv.d.next = self.slotv.q.val() & !self.w_sv_m.val();
            if self.w_sv_v.val() {
                self.slotv.d.next = self.slotv.q.val() | self.w_sv_m.val();
            }
        }
        if self.wr_sl.val() {
            for j in 0..6 {
                self.slot[j].d.next = self.slot[j].q.val() & !self.w_sl_m.val();
                if self.w_sl_v.val().get_bit(j) {
                    self.slot[j].d.next = self.slot[j].q.val() | self.w_sl_m.val();
                }
            }
        }
        if self.wr_sn.val() {
            for j in 0..7 {
                self.sneed[j].d.next = self.sneed[j].q.val() & !self.w_sn_m.val();
                if self.w_sn_v.val().get_bit(j) {
                    self.sneed[j].d.next = self.sneed[j].q.val() | self.w_sn_m.val();
                }
            }
        }
        if self.wr_sh.val() {
            for j in 0..7 {
                self.sheld[j].d.next = self.sheld[j].q.val() & !self.w_sh_m.val();
                if self.w_sh_v.val().get_bit(j) {
                    self.sheld[j].d.next = self.sheld[j].q.val() | self.w_sh_m.val();
                }
            }
        }
        if self.wr_nw.val() {
            for j in 0..7 {
                self.nwarps[j].d.next = self.nwarps[j].q.val() & !self.w_nw_m.val();
                if self.w_nw_v.val().get_bit(j) {
                    self.nwarps[j].d.next = self.nwarps[j].q.val() | self.w_nw_m.val();
                }
            }
        }
        if self.wr_na.val() {
            for j in 0..7 {
                self.narr[j].d.next = self.narr[j].q.val() & !self.w_na_m.val();
                if self.w_na_v.val().get_bit(j) {
                    self.narr[j].d.next = self.narr[j].q.val() | self.w_na_m.val();
                }
            }
        }
    }
}
