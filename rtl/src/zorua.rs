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
//! One step per cycle, as the model: idle (an event taken), freeing one set, examining one
//! warp, allocating one set, reading a granted warp's rows, driving the grant. The tables'
//! RAMs read a cycle after the address (block or distributed RAM): the event's cycle presents
//! the row a freeing will read, and the cycle before a grant presents the rows it drives. A
//! freeing writes a zero where it frees; the read of that word in the same cycle is never used.
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
pub const S_FREE_REGS: u64 = 1;
pub const S_FREE_SMEM: u64 = 2;
pub const S_SCAN: u64 = 3;
pub const S_ALLOC: u64 = 4;
pub const S_READ: u64 = 5;
pub const S_FINISH: u64 = 6;

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

#[derive(Clone, Debug, LogicBlock)]
pub struct Zorua {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// The event taken when `ready` (`EV_*`; 0: none) and its fields.
    pub ev: Signal<In, Bits<3>>,
    pub warp: Signal<In, Bits<6>>,
    pub block: Signal<In, Bits<4>>,
    pub warps: Signal<In, Bits<64>>,
    pub regs: Signal<In, Bits<7>>,
    pub smem: Signal<In, Bits<17>>,
    /// At a block start: the most registers per thread its warps' phases need (their
    /// reservation when they start; 0: none).
    pub peak: Signal<In, Bits<7>>,
    pub idle: Signal<In, Bits<16>>,
    pub mem: Signal<In, Bits<16>>,
    /// Idle: an event is taken this cycle.
    pub ready: Signal<Out, Bit>,
    /// Logical warp `grant_warp` becomes schedulable on physical slot `grant_slot`, with its
    /// register row and its block's scratchpad row (all zero without a grant).
    pub grant: Signal<Out, Bit>,
    pub grant_warp: Signal<Out, Bits<6>>,
    pub grant_slot: Signal<Out, Bits<6>>,
    pub reg_phys: Signal<Out, Bits<16>>,
    pub reg_set: [Signal<Out, Bits<8>>; 16],
    pub smem_phys: Signal<Out, Bits<64>>,
    pub smem_set: [Signal<Out, Bits<6>>; 48],
    pub o_thresh: Signal<Out, Bits<5>>,
    /// Free physical slots not wanted by a warp waiting for one (0 while a warp waits for
    /// scratchpad or registers).
    pub slot_room: Signal<Out, Bits<7>>,
    // Constants.
    ids16: [Constant<Bits<4>>; 16],
    /// Register set numbers 1..=16 (a warp holding `k` sets frees set `k - 1`, allocates set
    /// `k`), scratchpad set numbers 0..48.
    rs_ids: [Constant<Bits<5>>; 17],
    ss_ids: [Constant<Bits<7>>; 49],
    slot_present: Constant<Bits<64>>,
    smem_present: Constant<Bits<64>>,
    reg_total: Constant<Bits<16>>,
    smem_total: Constant<Bits<16>>,
    /// The physical amounts times 2^k (the threshold's product).
    reg_sh: [Constant<Bits<16>>; 5],
    smem_sh: [Constant<Bits<16>>; 5],
    o_default: Constant<Bits<5>>,
    /// The products at o_default (before the first epoch).
    lim_r_def: Constant<Bits<16>>,
    lim_s_def: Constant<Bits<16>>,
    o_step: Constant<Bits<5>>,
    o_max: Constant<Bits<5>>,
    c_delta: Constant<Bits<17>>,
    one64: Constant<Bits<64>>,
    ones64: Constant<Bits<64>>,
    ones16: Constant<Bits<16>>,
    low10: Constant<Bits<17>>,
    /// A table entry's valid (physical) bit.
    v9: Constant<Bits<9>>,
    v7: Constant<Bits<7>>,
    c_start: Constant<Bits<3>>,
    c_phase: Constant<Bits<3>>,
    c_bar: Constant<Bits<3>>,
    c_wend: Constant<Bits<3>>,
    c_bend: Constant<Bits<3>>,
    c_epoch: Constant<Bits<3>>,
    c_idle: Constant<Bits<3>>,
    c_free_regs: Constant<Bits<3>>,
    c_free_smem: Constant<Bits<3>>,
    c_scan: Constant<Bits<3>>,
    c_alloc: Constant<Bits<3>>,
    c_read: Constant<Bits<3>>,
    c_finish: Constant<Bits<3>>,
    rescan_from_thread: Constant<Bit>,
    smem_at_warp_end: Constant<Bit>,
    // Logic.
    eff_o: Signal<Local, Bits<5>>,
    slot_free: Signal<Local, Bits<64>>,
    smem_free_map: Signal<Local, Bits<64>>,
    /// The register free map in four words, each word's lowest free set, and the first word
    /// with one.
    reg_free_map: [Signal<Local, Bits<64>>; 4],
    reg_low4: [Signal<Local, Bits<64>>; 4],
    reg_word: Signal<Local, Bits<2>>,
    word_ids: [Constant<Bits<2>>; 4],
    n_slot_free: Signal<Local, Bits<7>>,
    /// Popcount trees of the free slots, the warps wanting one and a block's warps (each
    /// level's nodes for the three side by side).
    pc1: [Signal<Local, Bits<7>>; 96],
    pc2: [Signal<Local, Bits<7>>; 48],
    pc3: [Signal<Local, Bits<7>>; 24],
    pc4: [Signal<Local, Bits<7>>; 12],
    pc5: [Signal<Local, Bits<7>>; 6],
    n_want: Signal<Local, Bits<7>>,
    waiting_t: Signal<Local, Bits<64>>,
    m_rq: Signal<Local, Bits<64>>,
    m_sq: Signal<Local, Bits<64>>,
    m_tq: Signal<Local, Bits<64>>,
    m_sel: Signal<Local, Bits<64>>,
    cand_bit: Signal<Local, Bits<64>>,
    cand_w: Signal<Local, Bits<6>>,
    cur_w: Signal<Local, Bits<6>>,
    cur_bit: Signal<Local, Bits<64>>,
    cur_wb: Signal<Local, Bits<4>>,
    cur_rneed: Signal<Local, Bits<5>>,
    cur_rheld: Signal<Local, Bits<5>>,
    cur_slot: Signal<Local, Bits<6>>,
    cur_b: Signal<Local, Bits<4>>,
    cur_bbit: Signal<Local, Bits<16>>,
    cur_sneed: Signal<Local, Bits<7>>,
    cur_sheld: Signal<Local, Bits<7>>,
    cur_nw: Signal<Local, Bits<7>>,
    cur_narr: Signal<Local, Bits<7>>,
    bmask: Signal<Local, Bits<64>>,
    ev_rsets: Signal<Local, Bits<5>>,
    ev_ssets: Signal<Local, Bits<7>>,
    ev_psets: Signal<Local, Bits<5>>,
    cur_bpeak: Signal<Local, Bits<5>>,
    /// The candidate has not started: it reserves its block's peak.
    fresh: Signal<Local, Bit>,
    resv_new: Signal<Local, Bits<11>>,
    /// The blocks whose peak fits the virtual space with the reservations ((reserved + peak)
    /// x 16 <= physical x (16 + o_thresh), i.e. peak <= physical x (16 + o_thresh) / 16 -
    /// reserved), and their warps: only those may start.
    lim_r_hi: Signal<Local, Bits<12>>,
    cap: Signal<Local, Bits<16>>,
    resv16: Signal<Local, Bits<16>>,
    slack: Signal<Local, Bits<16>>,
    slack5: Signal<Local, Bits<5>>,
    pk: Signal<Local, Bits<5>>,
    bfit: Signal<Local, Bits<16>>,
    wf1: [Signal<Local, Bits<64>>; 8],
    wf2: [Signal<Local, Bits<64>>; 4],
    wf3: [Signal<Local, Bits<64>>; 2],
    wfit: Signal<Local, Bits<64>>,
    w_bp_m: Signal<Local, Bits<16>>,
    w_bp_v: Signal<Local, Bits<5>>,
    pop_w: Signal<Local, Bits<7>>,
    narr_new: Signal<Local, Bits<7>>,
    nw_new: Signal<Local, Bits<7>>,
    bar_open: Signal<Local, Bit>,
    // Examine.
    valve: Signal<Local, Bit>,
    from_t: Signal<Local, Bit>,
    in_sq: Signal<Local, Bit>,
    in_rq: Signal<Local, Bit>,
    t_pass: Signal<Local, Bit>,
    at_t: Signal<Local, Bit>,
    s_act: Signal<Local, Bit>,
    need_s: Signal<Local, Bits<7>>,
    n_smem_free: Signal<Local, Bits<7>>,
    phys_s: Signal<Local, Bits<7>>,
    swap_s: Signal<Local, Bits<7>>,
    s_ok: Signal<Local, Bit>,
    at_s: Signal<Local, Bit>,
    r_act: Signal<Local, Bit>,
    need_r: Signal<Local, Bits<5>>,
    n_reg_free: Signal<Local, Bits<10>>,
    need_r10: Signal<Local, Bits<10>>,
    phys_r: Signal<Local, Bits<5>>,
    swap_r: Signal<Local, Bits<5>>,
    r_ok: Signal<Local, Bit>,
    gr: Signal<Local, Bit>,
    at_r: Signal<Local, Bit>,
    moved: Signal<Local, Bit>,
    lim_r: Signal<Local, Bits<16>>,
    lim_s: Signal<Local, Bits<16>>,
    lhs_r: Signal<Local, Bits<16>>,
    lhs_s: Signal<Local, Bits<16>>,
    sum_r: Signal<Local, Bits<12>>,
    sum_s: Signal<Local, Bits<12>>,
    /// The freed register entry's set within its 64-bit word of the free map, and the word;
    /// the freed scratchpad entry's set (its 7 bits less the valid bit).
    rlow6: Signal<Local, Bits<6>>,
    rword: Signal<Local, Bits<2>>,
    sentry6: Signal<Local, Bits<6>>,
    slot_low: Signal<Local, Bits<64>>,
    slot_new: Signal<Local, Bits<6>>,
    reg_new: Signal<Local, Bits<8>>,
    smem_low: Signal<Local, Bits<64>>,
    smem_new: Signal<Local, Bits<6>>,
    rentry: Signal<Local, Bits<9>>,
    /// One-hot index to bits, and the columns of the fields' bits (warps: block, need, held,
    /// slot; blocks: need, held, warps, arrived; the freed entries).
    bitmask: [Constant<Bits<64>>; 6],
    h_reg: Signal<Local, Bits<64>>,
    /// This cycle's writes of the per-warp and per-block fields: the entries written (a mask)
    /// and the value they all take.
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
    w_sn_m: Signal<Local, Bits<16>>,
    w_sn_v: Signal<Local, Bits<7>>,
    w_sh_m: Signal<Local, Bits<16>>,
    w_sh_v: Signal<Local, Bits<7>>,
    w_nw_m: Signal<Local, Bits<16>>,
    w_nw_v: Signal<Local, Bits<7>>,
    w_na_m: Signal<Local, Bits<16>>,
    w_na_v: Signal<Local, Bits<7>>,
    bm_t: Signal<Local, Bits<64>>,
    cur_slotv: Signal<Local, Bit>,
    rsel: Signal<Local, Bits<16>>,
    col_re: [Signal<Local, Bits<16>>; 9],
    ssel: Signal<Local, Bits<64>>,
    col_se: [Signal<Local, Bits<64>>; 7],
    slot_clr: Signal<Local, Bits<64>>,
    smem_clr: Signal<Local, Bits<64>>,
    reg_clr: [Signal<Local, Bits<64>>; 4],
    sentry: Signal<Local, Bits<7>>,
    went: Signal<Local, Bits<9>>,
    sent: Signal<Local, Bits<7>>,
    th_idle: Signal<Local, Bits<17>>,
    th_mem: Signal<Local, Bits<17>>,
    th_up: Signal<Local, Bits<5>>,
    /// An epoch's new threshold, and its products.
    th_new: Signal<Local, Bits<5>>,
    lim_r_new: Signal<Local, Bits<16>>,
    lim_s_new: Signal<Local, Bits<16>>,
    // State.
    pub tq: Reg<Bits<64>>,
    pub sq: Reg<Bits<64>>,
    pub rq: Reg<Bits<64>>,
    pub sched: Reg<Bits<64>>,
    pub bar: Reg<Bits<64>>,
    pub live: Reg<Bits<64>>,
    pub blocks: Reg<Bits<16>>,
    /// Per logical warp, bit-sliced (slice `j` holds bit `j` of every warp's field, warp `w` at
    /// bit `w`): its block, its register sets needed and held, its physical slot and whether it
    /// has one (the warp-slot mapping table). Per logical block likewise: scratchpad sets
    /// needed and held, warps not ended, warps at the barrier. A field is read by ANDing its
    /// slices with a one-hot select, and written through a mask.
    pub wblock: [Reg<Bits<64>>; 4],
    pub rneed: [Reg<Bits<64>>; 5],
    pub rheld: [Reg<Bits<64>>; 5],
    pub slotv: Reg<Bits<64>>,
    pub slot: [Reg<Bits<64>>; 6],
    pub sneed: [Reg<Bits<16>>; 7],
    pub sheld: [Reg<Bits<16>>; 7],
    pub nwarps: [Reg<Bits<16>>; 7],
    pub narr: [Reg<Bits<16>>; 7],
    /// Per logical block: the register sets each of its warps reserves (bit-sliced).
    pub bpeak: [Reg<Bits<16>>; 5],
    /// Warps started and not ended, and the register sets they reserve.
    pub started: Reg<Bits<64>>,
    pub reg_resv: Reg<Bits<11>>,
    /// The register sets in use, 64 per word.
    pub reg_used: [Reg<Bits<64>>; 4],
    pub smem_used: Reg<Bits<64>>,
    pub slot_used: Reg<Bits<64>>,
    /// Register and scratchpad sets in use or reserved, and in swap.
    pub reg_cnt: Reg<Bits<10>>,
    pub reg_swap: Reg<Bits<11>>,
    pub smem_cnt: Reg<Bits<7>>,
    pub smem_swap: Reg<Bits<11>>,
    pub th_q: Reg<Bits<5>>,
    pub th_set: Reg<Bit>,
    /// The threshold's products physical x o_thresh (registers, scratchpad), taken with the
    /// threshold at an epoch: the scan reads them from registers, not through the adders.
    pub lim_r_q: Reg<Bits<16>>,
    pub lim_s_q: Reg<Bits<16>>,
    pub step: Reg<Bits<3>>,
    pub fw: Reg<Bits<6>>,
    pub fto: Reg<Bits<5>>,
    pub fb: Reg<Bits<4>>,
    pub fend: Reg<Bit>,
    pub fthen: Reg<Bit>,
    pub seen: Reg<Bits<64>>,
    pub a_smem: Reg<Bits<7>>,
    pub a_sphys: Reg<Bits<7>>,
    pub a_regs: Reg<Bits<5>>,
    pub a_rphys: Reg<Bits<5>>,
    pub a_grant: Reg<Bit>,
    /// The register mapping table (RAM `s`: logical set `s` of each warp) and the scratchpad
    /// mapping table (RAM `s`: logical set `s` of each block).
    pub reg_ram: [SyncRam<Bits<9>, 6>; 16],
    pub smem_ram: [SyncRam<Bits<7>, 4>; 48],
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
        Self {
            clock: Default::default(),
            ev: Default::default(),
            warp: Default::default(),
            block: Default::default(),
            warps: Default::default(),
            regs: Default::default(),
            smem: Default::default(),
            peak: Default::default(),
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
            ids16: std::array::from_fn(|i| Constant::new((i as u64).into())),
            rs_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            ss_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            slot_present: Constant::new(mask(p.slots).into()),
            smem_present: Constant::new(mask(RTL_SMEM_SETS).into()),
            reg_total: Constant::new((RTL_REG_SETS as u64).into()),
            smem_total: Constant::new((RTL_SMEM_SETS as u64).into()),
            reg_sh: std::array::from_fn(|k| Constant::new(((RTL_REG_SETS as u64) << k).into())),
            smem_sh: std::array::from_fn(|k| Constant::new(((RTL_SMEM_SETS as u64) << k).into())),
            o_default: Constant::new(p.o_default.into()),
            lim_r_def: Constant::new(((RTL_REG_SETS as u64 * p.o_default) & 0xffff).into()),
            lim_s_def: Constant::new(((RTL_SMEM_SETS as u64 * p.o_default) & 0xffff).into()),
            o_step: Constant::new(p.o_thresh_step.into()),
            o_max: Constant::new(16u64.into()),
            c_delta: Constant::new(p.c_delta_thresh.into()),
            one64: Constant::new(1u64.into()),
            ones64: Constant::new(u64::MAX.into()),
            ones16: Constant::new(0xffffu64.into()),
            low10: Constant::new(0x3ffu64.into()),
            v9: Constant::new(256u64.into()),
            v7: Constant::new(64u64.into()),
            c_start: c3(EV_START),
            c_phase: c3(EV_PHASE),
            c_bar: c3(EV_BARRIER),
            c_wend: c3(EV_WARP_END),
            c_bend: c3(EV_BLOCK_END),
            c_epoch: c3(EV_EPOCH),
            c_idle: c3(S_IDLE),
            c_free_regs: c3(S_FREE_REGS),
            c_free_smem: c3(S_FREE_SMEM),
            c_scan: c3(S_SCAN),
            c_alloc: c3(S_ALLOC),
            c_read: c3(S_READ),
            c_finish: c3(S_FINISH),
            rescan_from_thread: Constant::new(faults.rescan_from_thread),
            smem_at_warp_end: Constant::new(faults.smem_at_warp_end),
            eff_o: Default::default(),
            slot_free: Default::default(),
            smem_free_map: Default::default(),
            reg_free_map: std::array::from_fn(|_| Default::default()),
            reg_low4: std::array::from_fn(|_| Default::default()),
            reg_word: Default::default(),
            word_ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            n_slot_free: Default::default(),
            pc1: std::array::from_fn(|_| Default::default()),
            pc2: std::array::from_fn(|_| Default::default()),
            pc3: std::array::from_fn(|_| Default::default()),
            pc4: std::array::from_fn(|_| Default::default()),
            pc5: std::array::from_fn(|_| Default::default()),
            n_want: Default::default(),
            waiting_t: Default::default(),
            m_rq: Default::default(),
            m_sq: Default::default(),
            m_tq: Default::default(),
            m_sel: Default::default(),
            cand_bit: Default::default(),
            cand_w: Default::default(),
            cur_w: Default::default(),
            cur_bit: Default::default(),
            cur_wb: Default::default(),
            cur_rneed: Default::default(),
            cur_rheld: Default::default(),
            cur_slot: Default::default(),
            cur_b: Default::default(),
            cur_bbit: Default::default(),
            cur_sneed: Default::default(),
            cur_sheld: Default::default(),
            cur_nw: Default::default(),
            cur_narr: Default::default(),
            bmask: Default::default(),
            ev_rsets: Default::default(),
            ev_ssets: Default::default(),
            ev_psets: Default::default(),
            cur_bpeak: Default::default(),
            fresh: Default::default(),
            resv_new: Default::default(),
            lim_r_hi: Default::default(),
            cap: Default::default(),
            resv16: Default::default(),
            slack: Default::default(),
            slack5: Default::default(),
            pk: Default::default(),
            bfit: Default::default(),
            wf1: Default::default(),
            wf2: Default::default(),
            wf3: Default::default(),
            wfit: Default::default(),
            w_bp_m: Default::default(),
            w_bp_v: Default::default(),
            pop_w: Default::default(),
            narr_new: Default::default(),
            nw_new: Default::default(),
            bar_open: Default::default(),
            valve: Default::default(),
            from_t: Default::default(),
            in_sq: Default::default(),
            in_rq: Default::default(),
            t_pass: Default::default(),
            at_t: Default::default(),
            s_act: Default::default(),
            need_s: Default::default(),
            n_smem_free: Default::default(),
            phys_s: Default::default(),
            swap_s: Default::default(),
            s_ok: Default::default(),
            at_s: Default::default(),
            r_act: Default::default(),
            need_r: Default::default(),
            n_reg_free: Default::default(),
            need_r10: Default::default(),
            phys_r: Default::default(),
            swap_r: Default::default(),
            r_ok: Default::default(),
            gr: Default::default(),
            at_r: Default::default(),
            moved: Default::default(),
            lim_r: Default::default(),
            lim_s: Default::default(),
            lhs_r: Default::default(),
            lhs_s: Default::default(),
            sum_r: Default::default(),
            sum_s: Default::default(),
            rlow6: Default::default(),
            rword: Default::default(),
            sentry6: Default::default(),
            slot_low: Default::default(),
            slot_new: Default::default(),
            reg_new: Default::default(),
            smem_low: Default::default(),
            smem_new: Default::default(),
            rentry: Default::default(),
            bitmask: std::array::from_fn(|b| Constant::new((0..64u64).filter(|i| i >> b & 1 != 0).fold(0u64, |m, i| m | 1 << i).into())),
            h_reg: Default::default(),
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
            w_sn_m: Default::default(),
            w_sn_v: Default::default(),
            w_sh_m: Default::default(),
            w_sh_v: Default::default(),
            w_nw_m: Default::default(),
            w_nw_v: Default::default(),
            w_na_m: Default::default(),
            w_na_v: Default::default(),
            bm_t: Default::default(),
            cur_slotv: Default::default(),
            rsel: Default::default(),
            col_re: std::array::from_fn(|_| Default::default()),
            ssel: Default::default(),
            col_se: std::array::from_fn(|_| Default::default()),
            slot_clr: Default::default(),
            smem_clr: Default::default(),
            reg_clr: std::array::from_fn(|_| Default::default()),
            sentry: Default::default(),
            went: Default::default(),
            sent: Default::default(),
            th_idle: Default::default(),
            th_mem: Default::default(),
            th_up: Default::default(),
            th_new: Default::default(),
            lim_r_new: Default::default(),
            lim_s_new: Default::default(),
            tq: Default::default(),
            sq: Default::default(),
            rq: Default::default(),
            sched: Default::default(),
            bar: Default::default(),
            live: Default::default(),
            blocks: Default::default(),
            wblock: std::array::from_fn(|_| Default::default()),
            rneed: std::array::from_fn(|_| Default::default()),
            rheld: std::array::from_fn(|_| Default::default()),
            slotv: Default::default(),
            slot: std::array::from_fn(|_| Default::default()),
            sneed: std::array::from_fn(|_| Default::default()),
            sheld: std::array::from_fn(|_| Default::default()),
            nwarps: std::array::from_fn(|_| Default::default()),
            narr: std::array::from_fn(|_| Default::default()),
            bpeak: std::array::from_fn(|_| Default::default()),
            started: Default::default(),
            reg_resv: Default::default(),
            reg_used: std::array::from_fn(|_| Default::default()),
            smem_used: Default::default(),
            slot_used: Default::default(),
            reg_cnt: Default::default(),
            reg_swap: Default::default(),
            smem_cnt: Default::default(),
            smem_swap: Default::default(),
            th_q: Default::default(),
            th_set: Default::default(),
            lim_r_q: Default::default(),
            lim_s_q: Default::default(),
            step: Default::default(),
            fw: Default::default(),
            fto: Default::default(),
            fb: Default::default(),
            fend: Default::default(),
            fthen: Default::default(),
            seen: Default::default(),
            a_smem: Default::default(),
            a_sphys: Default::default(),
            a_regs: Default::default(),
            a_rphys: Default::default(),
            a_grant: Default::default(),
            reg_ram: std::array::from_fn(|_| SyncRam::default().zeroed()),
            smem_ram: std::array::from_fn(|_| SyncRam::default().zeroed()),
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
            || any_q(&self.bpeak)
            || self.started.q.has_changed()
            || self.reg_resv.q.has_changed()
            || self.idle.has_changed()
            || self.mem.has_changed()
            || self.tq.q.has_changed()
            || self.sq.q.has_changed()
            || self.rq.q.has_changed()
            || self.sched.q.has_changed()
            || self.bar.q.has_changed()
            || self.live.q.has_changed()
            || self.seen.q.has_changed()
            || self.smem_used.q.has_changed()
            || self.slot_used.q.has_changed()
            || self.blocks.q.has_changed()
            || any_q(&self.wblock)
            || any_q(&self.rneed)
            || any_q(&self.rheld)
            || self.slotv.q.has_changed()
            || any_q(&self.slot)
            || any_q(&self.sneed)
            || any_q(&self.sheld)
            || any_q(&self.nwarps)
            || any_q(&self.narr)
            || any_q(&self.reg_used)
            || self.reg_cnt.q.has_changed()
            || self.reg_swap.q.has_changed()
            || self.smem_cnt.q.has_changed()
            || self.smem_swap.q.has_changed()
            || self.th_q.q.has_changed()
            || self.th_set.q.has_changed()
            || self.lim_r_q.q.has_changed()
            || self.lim_s_q.q.has_changed()
            || self.step.q.has_changed()
            || self.fw.q.has_changed()
            || self.fto.q.has_changed()
            || self.fb.q.has_changed()
            || self.fend.q.has_changed()
            || self.fthen.q.has_changed()
            || self.a_smem.q.has_changed()
            || self.a_sphys.q.has_changed()
            || self.a_regs.q.has_changed()
            || self.a_rphys.q.has_changed()
            || self.a_grant.q.has_changed()
            || self.reg_ram.iter().any(|r| r.read_data.has_changed())
            || self.smem_ram.iter().any(|r| r.read_data.has_changed())
    }

    /// The clock to every register and RAM (a pass in which only the clock changed).
    fn fan_clock(&mut self) {
        let c = self.clock.val();
        for r in [&mut self.tq, &mut self.sq, &mut self.rq, &mut self.sched, &mut self.bar, &mut self.live, &mut self.seen, &mut self.smem_used, &mut self.slot_used, &mut self.started] {
            r.clock.next = c;
        }
        self.blocks.clock.next = c;
        for r in self.wblock.iter_mut().chain(&mut self.rneed).chain(&mut self.rheld).chain(&mut self.slot) {
            r.clock.next = c;
        }
        self.slotv.clock.next = c;
        for r in self.sneed.iter_mut().chain(&mut self.sheld).chain(&mut self.nwarps).chain(&mut self.narr).chain(&mut self.bpeak) {
            r.clock.next = c;
        }
        for r in &mut self.reg_used {
            r.clock.next = c;
        }
        self.reg_cnt.clock.next = c;
        self.reg_resv.clock.next = c;
        self.reg_swap.clock.next = c;
        self.smem_cnt.clock.next = c;
        self.smem_swap.clock.next = c;
        self.th_q.clock.next = c;
        self.th_set.clock.next = c;
        self.lim_r_q.clock.next = c;
        self.lim_s_q.clock.next = c;
        self.step.clock.next = c;
        self.fw.clock.next = c;
        self.fto.clock.next = c;
        self.fb.clock.next = c;
        self.fend.clock.next = c;
        self.fthen.clock.next = c;
        self.a_smem.clock.next = c;
        self.a_sphys.clock.next = c;
        self.a_regs.clock.next = c;
        self.a_rphys.clock.next = c;
        self.a_grant.clock.next = c;
        for r in &mut self.reg_ram {
            r.clock.next = c;
        }
        for r in &mut self.smem_ram {
            r.clock.next = c;
        }
    }
}

crate::flat_logic!(Zorua);

impl Logic for Zorua {
    /// The logic (the block's Verilog). The simulation calls it through the inherent `update`
    /// of `crate::flat_logic!`, only when a signal it reads changed.
    #[hdl_gen]
    fn update(&mut self) {
        // Registers hold, RAMs are not written, unless a step says otherwise.
        self.tq.clock.next = self.clock.val();
        self.sq.clock.next = self.clock.val();
        self.rq.clock.next = self.clock.val();
        self.sched.clock.next = self.clock.val();
        self.bar.clock.next = self.clock.val();
        self.live.clock.next = self.clock.val();
        self.blocks.clock.next = self.clock.val();
        self.seen.clock.next = self.clock.val();
        self.started.clock.next = self.clock.val();
        self.reg_resv.clock.next = self.clock.val();
        self.started.d.next = self.started.q.val();
        self.reg_resv.d.next = self.reg_resv.q.val();
        for j in 0..5 {
            self.bpeak[j].clock.next = self.clock.val();
        }
        self.smem_used.clock.next = self.clock.val();
        self.slot_used.clock.next = self.clock.val();
        self.reg_cnt.clock.next = self.clock.val();
        self.reg_swap.clock.next = self.clock.val();
        self.smem_cnt.clock.next = self.clock.val();
        self.smem_swap.clock.next = self.clock.val();
        self.th_q.clock.next = self.clock.val();
        self.th_set.clock.next = self.clock.val();
        self.lim_r_q.clock.next = self.clock.val();
        self.lim_s_q.clock.next = self.clock.val();
        self.step.clock.next = self.clock.val();
        self.fw.clock.next = self.clock.val();
        self.fto.clock.next = self.clock.val();
        self.fb.clock.next = self.clock.val();
        self.fend.clock.next = self.clock.val();
        self.fthen.clock.next = self.clock.val();
        self.a_smem.clock.next = self.clock.val();
        self.a_sphys.clock.next = self.clock.val();
        self.a_regs.clock.next = self.clock.val();
        self.a_rphys.clock.next = self.clock.val();
        self.a_grant.clock.next = self.clock.val();
        self.tq.d.next = self.tq.q.val();
        self.sq.d.next = self.sq.q.val();
        self.rq.d.next = self.rq.q.val();
        self.sched.d.next = self.sched.q.val();
        self.bar.d.next = self.bar.q.val();
        self.live.d.next = self.live.q.val();
        self.blocks.d.next = self.blocks.q.val();
        self.seen.d.next = self.seen.q.val();
        for k in 0..4 {
            self.reg_used[k].clock.next = self.clock.val();
            self.reg_used[k].d.next = self.reg_used[k].q.val();
        }
        self.smem_used.d.next = self.smem_used.q.val();
        self.slot_used.d.next = self.slot_used.q.val();
        self.reg_cnt.d.next = self.reg_cnt.q.val();
        self.reg_swap.d.next = self.reg_swap.q.val();
        self.smem_cnt.d.next = self.smem_cnt.q.val();
        self.smem_swap.d.next = self.smem_swap.q.val();
        self.th_q.d.next = self.th_q.q.val();
        self.th_set.d.next = self.th_set.q.val();
        self.lim_r_q.d.next = self.lim_r_q.q.val();
        self.lim_s_q.d.next = self.lim_s_q.q.val();
        self.step.d.next = self.step.q.val();
        self.fw.d.next = self.fw.q.val();
        self.fto.d.next = self.fto.q.val();
        self.fb.d.next = self.fb.q.val();
        self.fend.d.next = self.fend.q.val();
        self.fthen.d.next = self.fthen.q.val();
        self.a_smem.d.next = self.a_smem.q.val();
        self.a_sphys.d.next = self.a_sphys.q.val();
        self.a_regs.d.next = self.a_regs.q.val();
        self.a_rphys.d.next = self.a_rphys.q.val();
        self.a_grant.d.next = self.a_grant.q.val();
        for j in 0..4 {
            self.wblock[j].clock.next = self.clock.val();
        }
        for j in 0..5 {
            self.rneed[j].clock.next = self.clock.val();
            self.rheld[j].clock.next = self.clock.val();
        }
        for j in 0..6 {
            self.slot[j].clock.next = self.clock.val();
        }
        self.slotv.clock.next = self.clock.val();
        for j in 0..7 {
            self.sneed[j].clock.next = self.clock.val();
            self.sheld[j].clock.next = self.clock.val();
            self.nwarps[j].clock.next = self.clock.val();
            self.narr[j].clock.next = self.clock.val();
        }
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
        for k in 0..16 {
            self.reg_ram[k].clock.next = self.clock.val();
            self.reg_ram[k].write_enable.next = false;
            self.reg_ram[k].write_address.next = self.fw.q.val();
            self.reg_ram[k].write_data.next = 0.into();
        }
        for k in 0..48 {
            self.smem_ram[k].clock.next = self.clock.val();
            self.smem_ram[k].write_enable.next = false;
            self.smem_ram[k].write_address.next = self.fb.q.val();
            self.smem_ram[k].write_data.next = 0.into();
        }

        // The threshold (o_default until the first epoch), the free maps and their counts.
        self.eff_o.next = self.o_default.val();
        if self.th_set.q.val() {
            self.eff_o.next = self.th_q.q.val();
        }
        self.o_thresh.next = self.eff_o.val();
        self.slot_free.next = self.slot_present.val() & !self.slot_used.q.val();
        self.smem_free_map.next = self.smem_present.val() & !self.smem_used.q.val();
        for k in 0..4 {
            self.reg_free_map[k].next = !self.reg_used[k].q.val();
        }
        self.n_reg_free.next = bit_cast::<10, 16>(self.reg_total.val()) - self.reg_cnt.q.val();
        self.n_smem_free.next = bit_cast::<7, 16>(self.smem_total.val()) - self.smem_cnt.q.val();
        // (popcounts: free slots, and warps in the thread/barrier queue not at a barrier)
        self.waiting_t.next = self.tq.q.val() & !self.bar.q.val();
        // (popcounts by adder trees: pairs, then sums of 2, 4, ... 32)
        for j in 0..32 {
            self.pc1[j].next = 0.into();
            self.pc1[32 + j].next = 0.into();
            self.pc1[64 + j].next = 0.into();
            for h in 0..2 {
                if self.slot_free.val().get_bit(2 * j + h) {
                    self.pc1[j].next = self.pc1[j].val() + 1;
                }
                if self.waiting_t.val().get_bit(2 * j + h) {
                    self.pc1[32 + j].next = self.pc1[32 + j].val() + 1;
                }
                if self.warps.val().get_bit(2 * j + h) {
                    self.pc1[64 + j].next = self.pc1[64 + j].val() + 1;
                }
            }
        }
        for j in 0..48 {
            self.pc2[j].next = self.pc1[2 * j].val() + self.pc1[2 * j + 1].val();
        }
        for j in 0..24 {
            self.pc3[j].next = self.pc2[2 * j].val() + self.pc2[2 * j + 1].val();
        }
        for j in 0..12 {
            self.pc4[j].next = self.pc3[2 * j].val() + self.pc3[2 * j + 1].val();
        }
        for j in 0..6 {
            self.pc5[j].next = self.pc4[2 * j].val() + self.pc4[2 * j + 1].val();
        }
        self.n_slot_free.next = self.pc5[0].val() + self.pc5[1].val();
        self.n_want.next = self.pc5[2].val() + self.pc5[3].val();
        self.pop_w.next = self.pc5[4].val() + self.pc5[5].val();
        self.slot_room.next = 0.into();
        if !(self.sq.q.val() | self.rq.q.val()).any() & (self.n_slot_free.val() > self.n_want.val()) {
            self.slot_room.next = self.n_slot_free.val() - self.n_want.val();
        }
        // The lowest free slot, scratchpad set and register set.
        self.slot_low.next = self.slot_free.val() & (!self.slot_free.val() + self.one64.val());
        self.smem_low.next = self.smem_free_map.val() & (!self.smem_free_map.val() + self.one64.val());
        for k in 0..4 {
            self.reg_low4[k].next = self.reg_free_map[k].val() & (!self.reg_free_map[k].val() + self.one64.val());
        }
        // (the first word with a free set)
        self.reg_word.next = 3.into();
        for k in 0..3 {
            if self.reg_free_map[2 - k].val().any() {
                self.reg_word.next = self.word_ids[2 - k].val();
            }
        }
        // (one-hot to index: bit b is whether the set bit is at an index with bit b set)
        self.h_reg.next = 0.into();
        for k in 0..4 {
            if self.reg_word.val() == self.word_ids[k].val() {
                self.h_reg.next = self.h_reg.val() | self.reg_low4[k].val();
            }
        }
        self.slot_new.next = 0.into();
        self.smem_new.next = 0.into();
        self.reg_new.next = 0.into();
        for b in 0..6 {
            self.slot_new.next = self.slot_new.val().replace_bit(b, (self.slot_low.val() & self.bitmask[b].val()).any());
            self.smem_new.next = self.smem_new.val().replace_bit(b, (self.smem_low.val() & self.bitmask[b].val()).any());
            self.reg_new.next = self.reg_new.val().replace_bit(b, (self.h_reg.val() & self.bitmask[b].val()).any());
        }
        self.reg_new.next = self.reg_new.val().replace_bit(6, self.reg_word.val().get_bit(0));
        self.reg_new.next = self.reg_new.val().replace_bit(7, self.reg_word.val().get_bit(1));

        // The forward-progress rule (no warp schedulable), and physical x o_thresh, the product
        // by shifts and adds: (swapped + n) x 16 may not exceed it.
        self.valve.next = !self.sched.q.val().any();
        self.lim_s.next = self.lim_s_def.val();
        self.lim_r.next = self.lim_r_def.val();
        if self.th_set.q.val() {
            self.lim_s.next = self.lim_s_q.q.val();
            self.lim_r.next = self.lim_r_q.q.val();
        }
        // The warps that may start: those whose block's peak fits (all, under the
        // forward-progress rule).
        // (shifts and `get_bits` as bit loops and `bit_cast`: rust-hdl simulates those through
        // a BigUint, these as machine words; the hardware is the same wires)
        // ((physical x 16 + limit) / 16 = physical + limit / 16)
        self.lim_r_hi.next = 0.into();
        for j in 0..12 {
            self.lim_r_hi.next = self.lim_r_hi.val().replace_bit(j, self.lim_r.val().get_bit(j + 4));
        }
        self.cap.next = self.reg_total.val() + bit_cast::<16, 12>(self.lim_r_hi.val());
        self.resv16.next = bit_cast::<16, 11>(self.reg_resv.q.val());
        self.slack.next = self.cap.val() - self.resv16.val();
        self.slack5.next = bit_cast::<5, 16>(self.slack.val());
        if self.slack.val() > 31 {
            self.slack5.next = 31.into();
        }
        self.bfit.next = 0.into();
        for b in 0..16 {
            self.pk.next = 0.into();
            for j in 0..5 {
                self.pk.next = self.pk.val().replace_bit(j, self.bpeak[j].q.val().get_bit(b));
            }
            self.bfit.next = self.bfit.val().replace_bit(b, self.pk.val() <= self.slack5.val());
        }
        if self.resv16.val() > self.cap.val() {
            self.bfit.next = 0.into();
        }
        if self.valve.val() {
            self.bfit.next = self.ones16.val();
        }
        // (each warp's block's bit: a 16-to-1 multiplexer per warp, selected by its
        // block-field slices, one slice a level)
        for k in 0..8 {
            self.wf1[k].next = 0.into();
            if self.bfit.val().get_bit(2 * k) {
                self.wf1[k].next = !self.wblock[0].q.val();
            }
            if self.bfit.val().get_bit(2 * k + 1) {
                self.wf1[k].next = self.wf1[k].val() | self.wblock[0].q.val();
            }
        }
        for k in 0..4 {
            self.wf2[k].next = (self.wf1[2 * k].val() & !self.wblock[1].q.val()) | (self.wf1[2 * k + 1].val() & self.wblock[1].q.val());
        }
        for k in 0..2 {
            self.wf3[k].next = (self.wf2[2 * k].val() & !self.wblock[2].q.val()) | (self.wf2[2 * k + 1].val() & self.wblock[2].q.val());
        }
        self.wfit.next = (self.wf3[0].val() & !self.wblock[3].q.val()) | (self.wf3[1].val() & self.wblock[3].q.val());
        // The scan's next warp: the first queue in scan order with a warp not yet seen, its
        // lowest (the thread/barrier queue without the warps at a barrier or not started whose
        // block's peak does not fit, and empty while no slot is free).
        self.m_rq.next = self.rq.q.val() & !self.seen.q.val();
        self.m_sq.next = self.sq.q.val() & !self.seen.q.val();
        self.m_tq.next = 0.into();
        if self.slot_free.val().any() {
            self.m_tq.next = self.tq.q.val() & !self.bar.q.val() & !self.seen.q.val() & (self.started.q.val() | self.wfit.val());
        }
        if self.rescan_from_thread.val() {
            self.m_sel.next = self.m_rq.val();
            if self.m_sq.val().any() {
                self.m_sel.next = self.m_sq.val();
            }
            if self.m_tq.val().any() {
                self.m_sel.next = self.m_tq.val();
            }
        } else {
            self.m_sel.next = self.m_tq.val();
            if self.m_sq.val().any() {
                self.m_sel.next = self.m_sq.val();
            }
            if self.m_rq.val().any() {
                self.m_sel.next = self.m_rq.val();
            }
        }
        self.cand_bit.next = self.m_sel.val() & (!self.m_sel.val() + self.one64.val());
        self.cand_w.next = 0.into();
        for b in 0..6 {
            self.cand_w.next = self.cand_w.val().replace_bit(b, (self.cand_bit.val() & self.bitmask[b].val()).any());
        }

        // The warp this cycle is about (the event's, the scan's candidate, or the one being
        // freed or allocated) and its fields; its block's.
        self.cur_w.next = self.fw.q.val();
        if self.step.q.val() == self.c_idle.val() {
            self.cur_w.next = self.warp.val();
        }
        if self.step.q.val() == self.c_scan.val() {
            self.cur_w.next = self.cand_w.val();
        }
        self.cur_bit.next = 0.into();
        self.cur_wb.next = 0.into();
        self.cur_rneed.next = 0.into();
        self.cur_rheld.next = 0.into();
        self.cur_slot.next = 0.into();
        // (a one-hot select (a decoder, written as a shift: rust-hdl simulates a 64-bit shift
        // in one pass over the bits, a bit-by-bit decoder in 64), and OR-multiplexers: no
        // priority chain)
        self.cur_bit.next = self.one64.val() << self.cur_w.val();
        // (each field bit: its slice ANDed with the one-hot select)
        for j in 0..4 {
            self.cur_wb.next = self.cur_wb.val().replace_bit(j, (self.wblock[j].q.val() & self.cur_bit.val()).any());
        }
        for j in 0..5 {
            self.cur_rneed.next = self.cur_rneed.val().replace_bit(j, (self.rneed[j].q.val() & self.cur_bit.val()).any());
            self.cur_rheld.next = self.cur_rheld.val().replace_bit(j, (self.rheld[j].q.val() & self.cur_bit.val()).any());
        }
        for j in 0..6 {
            self.cur_slot.next = self.cur_slot.val().replace_bit(j, (self.slot[j].q.val() & self.cur_bit.val()).any());
        }
        self.cur_slotv.next = (self.slotv.q.val() & self.cur_bit.val()).any();
        self.cur_b.next = self.cur_wb.val();
        if (self.step.q.val() == self.c_idle.val()) & ((self.ev.val() == self.c_start.val()) | (self.ev.val() == self.c_bend.val())) {
            self.cur_b.next = self.block.val();
        }
        if (self.step.q.val() == self.c_free_smem.val()) | (self.step.q.val() == self.c_alloc.val()) {
            self.cur_b.next = self.fb.q.val();
        }
        self.cur_bbit.next = 0.into();
        self.cur_sneed.next = 0.into();
        self.cur_sheld.next = 0.into();
        self.cur_nw.next = 0.into();
        self.cur_narr.next = 0.into();
        self.cur_bpeak.next = 0.into();
        for i in 0..16 {
            self.cur_bbit.next = self.cur_bbit.val().replace_bit(i, self.cur_b.val() == self.ids16[i].val());
        }
        for j in 0..7 {
            self.cur_sneed.next = self.cur_sneed.val().replace_bit(j, (self.sneed[j].q.val() & self.cur_bbit.val()).any());
            self.cur_sheld.next = self.cur_sheld.val().replace_bit(j, (self.sheld[j].q.val() & self.cur_bbit.val()).any());
            self.cur_nw.next = self.cur_nw.val().replace_bit(j, (self.nwarps[j].q.val() & self.cur_bbit.val()).any());
            self.cur_narr.next = self.cur_narr.val().replace_bit(j, (self.narr[j].q.val() & self.cur_bbit.val()).any());
        }
        for j in 0..5 {
            self.cur_bpeak.next = self.cur_bpeak.val().replace_bit(j, (self.bpeak[j].q.val() & self.cur_bbit.val()).any());
        }
        // The warps of that block (a barrier's release).
        // (here and below, what only one step uses is computed in that step: zero otherwise, the
        // same hardware with an enable, and a faster simulation)
        // (the warps whose block-field slices match the block's bits)
        self.bmask.next = self.ones64.val();
        for j in 0..4 {
            self.bm_t.next = !self.wblock[j].q.val();
            if self.cur_b.val().get_bit(j) {
                self.bm_t.next = self.wblock[j].q.val();
            }
            self.bmask.next = self.bmask.val() & self.bm_t.val();
        }
        // The rows the RAMs read: the current warp's and block's (a freeing reads the row the
        // event's cycle presented; a grant the rows its read cycle presented).
        for k in 0..16 {
            self.reg_ram[k].read_address.next = self.cur_w.val();
        }
        for k in 0..48 {
            self.smem_ram[k].read_address.next = self.cur_b.val();
        }
        // The entries being freed: the highest held set's.
        self.rsel.next = 0.into();
        for j in 0..9 {
            self.col_re[j].next = 0.into();
        }
        if self.step.q.val() == self.c_free_regs.val() {
            for k in 0..16 {
                self.rsel.next = self.rsel.val().replace_bit(k, self.cur_rheld.val() == self.rs_ids[k + 1].val());
                for j in 0..9 {
                    self.col_re[j].next = self.col_re[j].val().replace_bit(k, self.reg_ram[k].read_data.val().get_bit(j));
                }
            }
        }
        self.rentry.next = 0.into();
        for j in 0..9 {
            self.rentry.next = self.rentry.val().replace_bit(j, (self.col_re[j].val() & self.rsel.val()).any());
        }
        self.ssel.next = 0.into();
        for j in 0..7 {
            self.col_se[j].next = 0.into();
        }
        if self.step.q.val() == self.c_free_smem.val() {
            for k in 0..48 {
                self.ssel.next = self.ssel.val().replace_bit(k, self.cur_sheld.val() == self.ss_ids[k + 1].val());
                for j in 0..7 {
                    self.col_se[j].next = self.col_se[j].val().replace_bit(k, self.smem_ram[k].read_data.val().get_bit(j));
                }
            }
        }
        self.sentry.next = 0.into();
        for j in 0..7 {
            self.sentry.next = self.sentry.val().replace_bit(j, (self.col_se[j].val() & self.ssel.val()).any());
        }
        // The free maps' bits a freeing clears: the freed entry's set, the leaving warp's slot.
        self.slot_clr.next = 0.into();
        self.smem_clr.next = 0.into();
        if (self.step.q.val() == self.c_idle.val()) & self.cur_slotv.val() {
            self.slot_clr.next = self.one64.val() << self.cur_slot.val();
        }
        self.sentry6.next = bit_cast::<6, 7>(self.sentry.val());
        self.rlow6.next = bit_cast::<6, 9>(self.rentry.val());
        self.rword.next = 0.into();
        self.rword.next = self.rword.val().replace_bit(0, self.rentry.val().get_bit(6));
        self.rword.next = self.rword.val().replace_bit(1, self.rentry.val().get_bit(7));
        if self.sentry.val().get_bit(6) {
            self.smem_clr.next = self.one64.val() << self.sentry6.val();
        }
        for k in 0..4 {
            self.reg_clr[k].next = 0.into();
        }
        if self.rentry.val().get_bit(8) {
            for k in 0..4 {
                if self.rword.val() == self.word_ids[k].val() {
                    self.reg_clr[k].next = self.one64.val() << self.rlow6.val();
                }
            }
        }
        // An event's needs: register sets (registers / 4, up), scratchpad sets (KB, up).
        self.ev_rsets.next = 0.into();
        self.ev_psets.next = 0.into();
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
        self.ev_ssets.next = 0.into();
        for j in 0..7 {
            self.ev_ssets.next = self.ev_ssets.val().replace_bit(j, self.smem.val().get_bit(j + 10));
        }
        if (self.smem.val() & self.low10.val()).any() {
            self.ev_ssets.next = self.ev_ssets.val() + 1;
        }

        // Outputs.
        self.ready.next = self.step.q.val() == self.c_idle.val();
        self.grant.next = false;
        self.grant_warp.next = 0.into();
        self.grant_slot.next = 0.into();
        self.reg_phys.next = 0.into();
        self.smem_phys.next = 0.into();
        for k in 0..16 {
            self.reg_set[k].next = 0.into();
        }
        for k in 0..48 {
            self.smem_set[k].next = 0.into();
        }
        if self.step.q.val() == self.c_finish.val() {
            self.grant.next = true;
            self.grant_warp.next = self.fw.q.val();
            self.grant_slot.next = self.cur_slot.val();
            for k in 0..16 {
                self.reg_phys.next = self.reg_phys.val().replace_bit(k, self.reg_ram[k].read_data.val().get_bit(8));
                for j in 0..8 {
                    self.reg_set[k].next = self.reg_set[k].val().replace_bit(j, self.reg_ram[k].read_data.val().get_bit(j));
                }
            }
            for k in 0..48 {
                self.smem_phys.next = self.smem_phys.val().replace_bit(k, self.smem_ram[k].read_data.val().get_bit(6));
                for j in 0..6 {
                    self.smem_set[k].next = self.smem_set[k].val().replace_bit(j, self.smem_ram[k].read_data.val().get_bit(j));
                }
            }
        }

        // Examining the scan's candidate: the queues it passes, what it takes.
        self.from_t.next = (self.tq.q.val() & self.cur_bit.val()).any();
        self.in_sq.next = (self.sq.q.val() & self.cur_bit.val()).any();
        self.in_rq.next = (self.rq.q.val() & self.cur_bit.val()).any();
        self.fresh.next = self.from_t.val() & !(self.started.q.val() & self.cur_bit.val()).any();
        self.resv_new.next = self.reg_resv.q.val() + bit_cast::<11, 5>(self.cur_bpeak.val());
        self.t_pass.next = self.from_t.val() & !(self.bar.q.val() & self.cur_bit.val()).any() & self.slot_free.val().any();
        self.at_t.next = self.from_t.val() & !self.t_pass.val();
        self.s_act.next = !self.at_t.val() & !self.in_rq.val();
        self.need_s.next = 0.into();
        if self.cur_sneed.val() > self.cur_sheld.val() {
            self.need_s.next = self.cur_sneed.val() - self.cur_sheld.val();
        }
        self.phys_s.next = self.need_s.val();
        if self.n_smem_free.val() < self.need_s.val() {
            self.phys_s.next = self.n_smem_free.val();
        }
        self.swap_s.next = self.need_s.val() - self.phys_s.val();
        self.sum_s.next = bit_cast::<12, 11>(self.smem_swap.q.val()) + bit_cast::<12, 7>(self.swap_s.val());
        self.lhs_s.next = 0.into();
        for j in 0..12 {
            self.lhs_s.next = self.lhs_s.val().replace_bit(j + 4, self.sum_s.val().get_bit(j));
        }
        self.s_ok.next = !self.swap_s.val().any() | self.valve.val() | (self.lhs_s.val() <= self.lim_s.val());
        self.at_s.next = self.s_act.val() & !self.s_ok.val();
        self.r_act.next = !self.at_t.val() & !self.at_s.val();
        self.need_r.next = 0.into();
        if self.cur_rneed.val() > self.cur_rheld.val() {
            self.need_r.next = self.cur_rneed.val() - self.cur_rheld.val();
        }
        self.need_r10.next = bit_cast::<10, 5>(self.need_r.val());
        self.phys_r.next = self.need_r.val();
        if self.n_reg_free.val() < self.need_r10.val() {
            self.phys_r.next = bit_cast::<5, 10>(self.n_reg_free.val());
        }
        self.swap_r.next = self.need_r.val() - self.phys_r.val();
        self.sum_r.next = bit_cast::<12, 11>(self.reg_swap.q.val()) + bit_cast::<12, 5>(self.swap_r.val());
        self.lhs_r.next = 0.into();
        for j in 0..12 {
            self.lhs_r.next = self.lhs_r.val().replace_bit(j + 4, self.sum_r.val().get_bit(j));
        }
        self.r_ok.next = !self.swap_r.val().any() | self.valve.val() | (self.lhs_r.val() <= self.lim_r.val());
        self.gr.next = self.r_act.val() & self.r_ok.val();
        self.at_r.next = self.r_act.val() & !self.r_ok.val();
        self.moved.next = self.t_pass.val() | (self.s_act.val() & self.s_ok.val() & (self.need_s.val().any() | self.in_sq.val())) | self.gr.val();

        // The barrier of the current block after an arrival or a warp's end.
        self.narr_new.next = self.cur_narr.val() + 1;
        self.nw_new.next = self.cur_nw.val() - 1;
        self.bar_open.next = false;

        // Algorithm 1 at an epoch's end.
        self.th_idle.next = bit_cast::<17, 16>(self.idle.val());
        self.th_mem.next = bit_cast::<17, 16>(self.mem.val());
        self.th_up.next = self.eff_o.val() + self.o_step.val();
        if self.th_up.val() > self.o_max.val() {
            self.th_up.next = self.o_max.val();
        }
        // (an epoch's new threshold (Algorithm 1), and physical x it by shifts and adds)
        self.th_new.next = self.eff_o.val();
        if self.th_idle.val() > self.th_mem.val() + self.c_delta.val() {
            self.th_new.next = self.th_up.val();
        } else if self.th_mem.val() > self.th_idle.val() + self.c_delta.val() {
            self.th_new.next = 0.into();
            if self.eff_o.val() > self.o_step.val() {
                self.th_new.next = self.eff_o.val() - self.o_step.val();
            }
        }
        self.lim_s_new.next = 0.into();
        self.lim_r_new.next = 0.into();
        for k in 0..5 {
            if self.th_new.val().get_bit(k) {
                self.lim_s_new.next = self.lim_s_new.val() + self.smem_sh[k].val();
                self.lim_r_new.next = self.lim_r_new.val() + self.reg_sh[k].val();
            }
        }

        // The entry an allocation writes.
        self.went.next = 0.into();
        if self.a_rphys.q.val().any() {
            self.went.next = bit_cast::<9, 8>(self.reg_new.val()) | self.v9.val();
        }
        self.sent.next = 0.into();
        if self.a_sphys.q.val().any() {
            self.sent.next = bit_cast::<7, 6>(self.smem_new.val()) | self.v7.val();
        }

        if self.step.q.val() == self.c_idle.val() {
            if self.ev.val() == self.c_start.val() {
                self.blocks.d.next = self.blocks.q.val() | self.cur_bbit.val();
                self.live.d.next = self.live.q.val() | self.warps.val();
                self.tq.d.next = self.tq.q.val() | self.warps.val();
                self.w_wb_m.next = self.warps.val();
                self.w_wb_v.next = self.block.val();
                self.w_rn_m.next = self.warps.val();
                self.w_rn_v.next = self.ev_rsets.val();
                self.w_rh_m.next = self.warps.val();
                self.w_sv_m.next = self.warps.val();
                self.w_sn_m.next = self.cur_bbit.val();
                self.w_sn_v.next = self.ev_ssets.val();
                self.w_sh_m.next = self.cur_bbit.val();
                self.w_nw_m.next = self.cur_bbit.val();
                self.w_nw_v.next = self.pop_w.val();
                self.w_na_m.next = self.cur_bbit.val();
                self.w_bp_m.next = self.cur_bbit.val();
                self.w_bp_v.next = self.ev_psets.val();
                self.seen.d.next = 0.into();
                self.step.d.next = self.c_scan.val();
            }
            if self.ev.val() == self.c_phase.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur_bit.val();
                self.sq.d.next = self.sq.q.val() | self.cur_bit.val();
                if self.ev_ssets.val() > self.cur_sneed.val() {
                    self.w_sn_m.next = self.cur_bbit.val();
                    self.w_sn_v.next = self.ev_ssets.val();
                }
                self.w_rn_m.next = self.cur_bit.val();
                self.w_rn_v.next = self.ev_rsets.val();
                self.seen.d.next = 0.into();
                self.step.d.next = self.c_scan.val();
                if self.cur_rheld.val() > self.ev_rsets.val() {
                    self.fw.d.next = self.warp.val();
                    self.fto.d.next = self.ev_rsets.val();
                    self.fthen.d.next = false;
                    self.step.d.next = self.c_free_regs.val();
                }
            }
            if self.ev.val() == self.c_bar.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur_bit.val();
                self.tq.d.next = self.tq.q.val() | self.cur_bit.val();
                self.bar.d.next = self.bar.q.val() | self.cur_bit.val();
                self.w_sv_m.next = self.cur_bit.val();
                self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                self.bar_open.next = self.narr_new.val() >= self.cur_nw.val();
                self.w_na_m.next = self.cur_bbit.val();
                if !self.bar_open.val() {
                    self.w_na_v.next = self.narr_new.val();
                }
                if self.bar_open.val() {
                    self.bar.d.next = (self.bar.q.val() | self.cur_bit.val()) & !self.bmask.val();
                }
                self.seen.d.next = 0.into();
                self.step.d.next = self.c_scan.val();
            }
            if self.ev.val() == self.c_wend.val() {
                self.sched.d.next = self.sched.q.val() & !self.cur_bit.val();
                self.live.d.next = self.live.q.val() & !self.cur_bit.val();
                if (self.started.q.val() & self.cur_bit.val()).any() {
                    self.started.d.next = self.started.q.val() & !self.cur_bit.val();
                    self.reg_resv.d.next = self.reg_resv.q.val() - bit_cast::<11, 5>(self.cur_bpeak.val());
                }
                self.w_sv_m.next = self.cur_bit.val();
                self.w_rn_m.next = self.cur_bit.val();
                self.slot_used.d.next = self.slot_used.q.val() & !self.slot_clr.val();
                self.bar_open.next = self.cur_narr.val().any() & (self.cur_narr.val() >= self.nw_new.val());
                self.w_nw_m.next = self.cur_bbit.val();
                self.w_nw_v.next = self.nw_new.val();
                if self.bar_open.val() {
                    self.w_na_m.next = self.cur_bbit.val();
                }
                if self.bar_open.val() {
                    self.bar.d.next = self.bar.q.val() & !self.bmask.val();
                }
                self.seen.d.next = 0.into();
                self.fw.d.next = self.warp.val();
                self.fb.d.next = self.cur_b.val();
                self.fto.d.next = 0.into();
                self.fend.d.next = false;
                self.fthen.d.next = self.smem_at_warp_end.val() & self.cur_sheld.val().any();
                self.step.d.next = self.c_scan.val();
                if self.smem_at_warp_end.val() & self.cur_sheld.val().any() {
                    self.step.d.next = self.c_free_smem.val();
                }
                if self.cur_rheld.val().any() {
                    self.step.d.next = self.c_free_regs.val();
                }
            }
            if self.ev.val() == self.c_bend.val() {
                self.seen.d.next = 0.into();
                self.fb.d.next = self.block.val();
                self.fend.d.next = true;
                self.step.d.next = self.c_scan.val();
                if self.cur_sheld.val().any() {
                    self.step.d.next = self.c_free_smem.val();
                } else {
                    self.blocks.d.next = self.blocks.q.val() & !self.cur_bbit.val();
                }
            }
            if self.ev.val() == self.c_epoch.val() {
                self.th_set.d.next = true;
                self.th_q.d.next = self.th_new.val();
                self.lim_r_q.d.next = self.lim_r_new.val();
                self.lim_s_q.d.next = self.lim_s_new.val();
            }
        }

        // Freeing the highest held register set of warp `fw`.
        if self.step.q.val() == self.c_free_regs.val() {
            if self.rentry.val().get_bit(8) {
                for k in 0..4 {
                    self.reg_used[k].d.next = self.reg_used[k].q.val() & !self.reg_clr[k].val();
                }
                self.reg_cnt.d.next = self.reg_cnt.q.val() - 1;
            } else {
                self.reg_swap.d.next = self.reg_swap.q.val() - 1;
            }
            for k in 0..16 {
                if self.cur_rheld.val() == self.rs_ids[k + 1].val() {
                    self.reg_ram[k].write_enable.next = true;
                }
            }
            self.w_rh_m.next = self.cur_bit.val();
            self.w_rh_v.next = self.cur_rheld.val() - 1;
            if self.cur_rheld.val() - 1 == self.fto.q.val() {
                self.seen.d.next = 0.into();
                self.step.d.next = self.c_scan.val();
                if self.fthen.q.val() {
                    self.fend.d.next = false;
                    self.step.d.next = self.c_free_smem.val();
                }
            }
        }

        // Freeing the highest held scratchpad set of block `fb`.
        if self.step.q.val() == self.c_free_smem.val() {
            if self.sentry.val().get_bit(6) {
                self.smem_used.d.next = self.smem_used.q.val() & !self.smem_clr.val();
                self.smem_cnt.d.next = self.smem_cnt.q.val() - 1;
            } else {
                self.smem_swap.d.next = self.smem_swap.q.val() - 1;
            }
            for k in 0..48 {
                if self.cur_sheld.val() == self.ss_ids[k + 1].val() {
                    self.smem_ram[k].write_enable.next = true;
                }
            }
            self.w_sh_m.next = self.cur_bbit.val();
            self.w_sh_v.next = self.cur_sheld.val() - 1;
            if self.cur_sheld.val() == self.ss_ids[1].val() {
                self.seen.d.next = 0.into();
                self.step.d.next = self.c_scan.val();
                if self.fend.q.val() {
                    self.blocks.d.next = self.blocks.q.val() & !self.cur_bbit.val();
                }
            }
        }

        // Examining the scan's next warp.
        if self.step.q.val() == self.c_scan.val() {
            if !self.m_sel.val().any() {
                self.step.d.next = self.c_idle.val();
            } else {
                self.seen.d.next = self.seen.q.val() | self.cand_bit.val();
                self.tq.d.next = self.tq.q.val() & !self.cand_bit.val();
                self.sq.d.next = self.sq.q.val() & !self.cand_bit.val();
                self.rq.d.next = self.rq.q.val() & !self.cand_bit.val();
                if self.at_t.val() {
                    self.tq.d.next = self.tq.q.val();
                }
                if self.at_s.val() {
                    self.sq.d.next = self.sq.q.val() | self.cand_bit.val();
                }
                if self.at_r.val() {
                    self.rq.d.next = self.rq.q.val() | self.cand_bit.val();
                }
                if self.t_pass.val() & self.fresh.val() {
                    self.started.d.next = self.started.q.val() | self.cand_bit.val();
                    self.reg_resv.d.next = self.resv_new.val();
                }
                if self.t_pass.val() {
                    self.slot_used.d.next = self.slot_used.q.val() | self.slot_low.val();
                    self.w_sv_m.next = self.cand_bit.val();
                    self.w_sv_v.next = true;
                    self.w_sl_m.next = self.cand_bit.val();
                    self.w_sl_v.next = self.slot_new.val();
                }
                self.a_smem.d.next = 0.into();
                self.a_sphys.d.next = 0.into();
                if self.s_act.val() & self.s_ok.val() {
                    self.smem_cnt.d.next = self.smem_cnt.q.val() + self.phys_s.val();
                    self.smem_swap.d.next = self.smem_swap.q.val() + bit_cast::<11, 7>(self.swap_s.val());
                    self.a_smem.d.next = self.need_s.val();
                    self.a_sphys.d.next = self.phys_s.val();
                }
                self.a_regs.d.next = 0.into();
                self.a_rphys.d.next = 0.into();
                if self.gr.val() {
                    self.reg_cnt.d.next = self.reg_cnt.q.val() + bit_cast::<10, 5>(self.phys_r.val());
                    self.reg_swap.d.next = self.reg_swap.q.val() + bit_cast::<11, 5>(self.swap_r.val());
                    self.a_regs.d.next = self.need_r.val();
                    self.a_rphys.d.next = self.phys_r.val();
                }
                self.a_grant.d.next = self.gr.val();
                self.fw.d.next = self.cand_w.val();
                self.fb.d.next = self.cur_wb.val();
                if self.moved.val() {
                    if (self.s_act.val() & self.s_ok.val() & self.need_s.val().any()) | (self.gr.val() & self.need_r.val().any()) {
                        self.step.d.next = self.c_alloc.val();
                    } else if self.gr.val() {
                        self.step.d.next = self.c_read.val();
                    }
                }
            }
        }

        // Allocating one set: the block's scratchpad first, then the warp's registers.
        if self.step.q.val() == self.c_alloc.val() {
            if self.a_smem.q.val().any() {
                for k in 0..48 {
                    if self.cur_sheld.val() == self.ss_ids[k].val() {
                        self.smem_ram[k].write_enable.next = true;
                        self.smem_ram[k].write_data.next = self.sent.val();
                    }
                }
                if self.a_sphys.q.val().any() {
                    self.smem_used.d.next = self.smem_used.q.val() | self.smem_low.val();
                    self.a_sphys.d.next = self.a_sphys.q.val() - 1;
                }
                self.w_sh_m.next = self.cur_bbit.val();
                self.w_sh_v.next = self.cur_sheld.val() + 1;
                self.a_smem.d.next = self.a_smem.q.val() - 1;
            } else {
                for k in 0..16 {
                    if self.cur_rheld.val() == self.rs_ids[k].val() {
                        self.reg_ram[k].write_enable.next = true;
                        self.reg_ram[k].write_data.next = self.went.val();
                    }
                }
                if self.a_rphys.q.val().any() {
                    for k in 0..4 {
                        if self.reg_word.val() == self.word_ids[k].val() {
                            self.reg_used[k].d.next = self.reg_used[k].q.val() | self.reg_low4[k].val();
                        }
                    }
                    self.a_rphys.d.next = self.a_rphys.q.val() - 1;
                }
                self.w_rh_m.next = self.cur_bit.val();
                self.w_rh_v.next = self.cur_rheld.val() + 1;
                self.a_regs.d.next = self.a_regs.q.val() - 1;
            }
            // (the last set: the rows are read next if the warp is granted)
            if (self.a_smem.q.val() + bit_cast::<7, 5>(self.a_regs.q.val())) == self.ss_ids[1].val() {
                self.step.d.next = self.c_scan.val();
                if self.a_grant.q.val() {
                    self.step.d.next = self.c_read.val();
                }
            }
        }

        // The granted warp's rows are read; then the grant.
        if self.step.q.val() == self.c_read.val() {
            self.step.d.next = self.c_finish.val();
        }
        if self.step.q.val() == self.c_finish.val() {
            self.sched.d.next = self.sched.q.val() | self.cur_bit.val();
            self.step.d.next = self.c_scan.val();
        }

        // The fields' writes, through their masks.
        for j in 0..4 {
            self.wblock[j].d.next = self.wblock[j].q.val() & !self.w_wb_m.val();
            if self.w_wb_v.val().get_bit(j) {
                self.wblock[j].d.next = self.wblock[j].q.val() | self.w_wb_m.val();
            }
        }
        for j in 0..5 {
            self.rneed[j].d.next = self.rneed[j].q.val() & !self.w_rn_m.val();
            if self.w_rn_v.val().get_bit(j) {
                self.rneed[j].d.next = self.rneed[j].q.val() | self.w_rn_m.val();
            }
            self.rheld[j].d.next = self.rheld[j].q.val() & !self.w_rh_m.val();
            if self.w_rh_v.val().get_bit(j) {
                self.rheld[j].d.next = self.rheld[j].q.val() | self.w_rh_m.val();
            }
        }
        self.slotv.d.next = self.slotv.q.val() & !self.w_sv_m.val();
        if self.w_sv_v.val() {
            self.slotv.d.next = self.slotv.q.val() | self.w_sv_m.val();
        }
        for j in 0..6 {
            self.slot[j].d.next = self.slot[j].q.val() & !self.w_sl_m.val();
            if self.w_sl_v.val().get_bit(j) {
                self.slot[j].d.next = self.slot[j].q.val() | self.w_sl_m.val();
            }
        }
        for j in 0..7 {
            self.sneed[j].d.next = self.sneed[j].q.val() & !self.w_sn_m.val();
            if self.w_sn_v.val().get_bit(j) {
                self.sneed[j].d.next = self.sneed[j].q.val() | self.w_sn_m.val();
            }
            self.sheld[j].d.next = self.sheld[j].q.val() & !self.w_sh_m.val();
            if self.w_sh_v.val().get_bit(j) {
                self.sheld[j].d.next = self.sheld[j].q.val() | self.w_sh_m.val();
            }
            self.nwarps[j].d.next = self.nwarps[j].q.val() & !self.w_nw_m.val();
            if self.w_nw_v.val().get_bit(j) {
                self.nwarps[j].d.next = self.nwarps[j].q.val() | self.w_nw_m.val();
            }
            self.narr[j].d.next = self.narr[j].q.val() & !self.w_na_m.val();
            if self.w_na_v.val().get_bit(j) {
                self.narr[j].d.next = self.narr[j].q.val() | self.w_na_m.val();
            }
        }
        for j in 0..5 {
            self.bpeak[j].d.next = self.bpeak[j].q.val() & !self.w_bp_m.val();
            if self.w_bp_v.val().get_bit(j) {
                self.bpeak[j].d.next = self.bpeak[j].q.val() | self.w_bp_m.val();
            }
        }
    }
}
