//! Interface of HeteroCore's steering unit (RTL `rtl/src/steer.rs`, model
//! `mpgpu_ref::units::steer`): the spatial profiling counters, the steering decision and the
//! per-SM owner table of Wang et al., "HeteroCore", §3.3 and §4.3 (Algorithm 2), with the
//! decisions in `docs/heterocore.md`, "The steering unit".
//!
//! One unit for the GPU. It holds up to [`KMAX`] kernels in slots the steering dispatcher
//! assigns (a kernel keeps its slot from its arrival to its end). Every clocked cycle, at the
//! edge, in this order:
//!
//! - **Slots**: a slot in `fresh` forgets its block ends (a new kernel took it); a slot in
//!   `ends` ended a block this cycle: its last end becomes `now`, and if the phase is the
//!   warm-up it is marked in `ended`.
//! - **Load** (`load`): the owner table takes `owners_in`. Every SM whose owner changes from a
//!   valid one records how its previous owner's blocks leave (`modes`): by draining when the
//!   preemption `policy` is drain, or adaptive and the previous owner's blocks are short, else
//!   by a context switch; every other SM records keep. A kernel's blocks are short when it
//!   ended a block during the warm-up (`ended`), if the load is the decision's (in the cycle
//!   `decided` is high), else when it ended one in this cycle or less than `warmup` cycles
//!   before `now` (`now` < its last end + `warmup`, without wrapping: a block end a warm-up
//!   before the 32-bit stamp wraps is not recent after it).
//! - **Phase**: `start` begins a profile of the slots in `active` (counters cleared, `ended`
//!   cleared after the slots' step): `warmup` cycles of warm-up, then `window` cycles in which
//!   every SM's counter (`sm_insts`) adds its `issued` warp-instructions if the SM is big or
//!   small (`big_sms`, `small_sms`) and its owner is profiled, then [`DECIDE_CYCLES`] cycles of
//!   decision, after which `decided` is high for one cycle with `big`, and `big_insts` and
//!   `small_insts` hold each slot's sums of its big and of its small SMs' counters (until the
//!   next `start`). `stop` ends a profile (and `start` restarts one). `warmup` and `window` are
//!   at least 1.
//! - **Decision** (from the counters at the window's last edge, the owner table, the kinds and
//!   the slots' blocks per SM, which hold while it runs): per profiled slot, the rates on a common
//!   per-SM scale, B = big insts x its small SMs and S = small insts x its big SMs; it runs
//!   faster on big SMs if B > S. B and S are shifted right together until both are below
//!   2^[`NORM_BITS`] (the gain depends only on their ratio). With f = fnum / fden the
//!   baseline SM's place between the small and the big SM by blocks per SM (fden = cb - cs,
//!   fnum = min(max(c0 - cs, 0), fden) if cb > cs; else 1 / 2), the gain (B - S) / (S + f (B -
//!   S)) is NUM / DEN with NUM = (B - S) fden and DEN = S (fden - fnum) + B fnum. Every pair of
//!   profiled slots i < j compares NUM_i DEN_j with NUM_j DEN_i (signed); the later one ranks
//!   above unless the earlier one's product is strictly larger. `big` takes the slots whose
//!   rank is below half the profiled slots (one of two, two of four), or none if every
//!   profiled slot runs faster on big SMs (Algorithm 2; §6.4 for four kernels).
//!
//! Every output is a register's. The outputs change only at edges with an input or in a
//! profile, so a cycle with no input outside a profile may go unclocked.

use serde::Serialize;

/// SMs at most.
pub const MAX_SMS: usize = super::sched::MAX_SMS;
/// Kernel slots.
pub const KMAX: usize = 4;
pub const SLOT_BITS: usize = crate::unit::clog2(KMAX as u64) as usize;
/// An owner entry: valid (the high bit) and a slot.
pub const OWNER_BITS: usize = SLOT_BITS + 1;
/// An SM's preemption record.
pub const MODE_BITS: usize = 2;
pub const MODE_KEEP: u8 = 0;
pub const MODE_DRAIN: u8 = 1;
pub const MODE_SWITCH: u8 = 2;
/// The preemption policy (`policy`).
pub const POLICY_BITS: usize = 2;
pub const POLICY_ADAPTIVE: u8 = 0;
pub const POLICY_DRAIN: u8 = 1;
pub const POLICY_SWITCH: u8 = 2;
/// The phase.
pub const PHASE_BITS: usize = 2;
pub const PHASE_IDLE: u8 = 0;
pub const PHASE_WARM: u8 = 1;
pub const PHASE_WINDOW: u8 = 2;
pub const PHASE_DECIDE: u8 = 3;
/// Warp-instructions an SM issues in a cycle (at most 7).
pub const ISSUED_BITS: usize = 3;
/// Bits of the warm-up and window lengths (cycles, 1 ..= 2^18 - 1) and of the phase timer.
pub const WINDOW_BITS: usize = 18;
/// Bits of an SM's window counter, and of a slot's sum over the SMs of one kind.
pub const SM_INST_BITS: usize = WINDOW_BITS + ISSUED_BITS;
pub const INST_BITS: usize = SM_INST_BITS + crate::unit::clog2(MAX_SMS as u64) as usize;
/// Bits of a kernel's blocks per SM (0 ..= 63).
pub const BLOCK_BITS: usize = 6;
/// Bits of the cycle stamps (`now`, a slot's last block end).
pub const CYCLE_BITS: usize = 32;
/// The rates' bits after normalisation.
pub const NORM_BITS: usize = 16;
/// Cycles from the window's last edge to `decided` (the datapath's budget: it is sequential,
/// shift-and-add products over a few hundred cycles).
pub const DECIDE_CYCLES: u32 = 320;

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// The GPU cycle (its low [`CYCLE_BITS`] bits).
    pub now: u32,
    /// Configuration: the profile's warm-up and window (cycles), the preemption policy, and
    /// the big and the small SMs (bit s: SM s).
    pub warmup: u32,
    pub window: u32,
    pub policy: u8,
    pub big_sms: u16,
    pub small_sms: u16,
    /// Slots holding a kernel; slots a new kernel took this cycle; slots that ended a block.
    pub active: u8,
    pub fresh: u8,
    pub ends: u8,
    /// Begin a profile of `active`; end the profile.
    pub start: bool,
    pub stop: bool,
    /// Load the owner table from `owners_in` (per SM: valid << SLOT_BITS | slot).
    pub load: bool,
    pub owners_in: [u8; MAX_SMS],
    /// Per SM, the warp-instructions it issued this cycle for its owner.
    pub issued: [u8; MAX_SMS],
    /// Per slot, its kernel's blocks per SM on a big, a small and a baseline SM.
    pub cb: [u8; KMAX],
    pub cs: [u8; KMAX],
    pub c0: [u8; KMAX],
}

/// Driven every clocked cycle, from registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    pub owners: [u8; MAX_SMS],
    pub modes: [u8; MAX_SMS],
    pub phase: u8,
    /// The decision is out (one cycle): the slots given the big SMs (none: each kernel keeps
    /// its share of both kinds).
    pub decided: bool,
    pub big: u8,
    /// The profiled slots that ended a block in the warm-up.
    pub ended: u8,
    /// Per slot, the last decision's sums of its big and of its small SMs' window counts.
    pub big_insts: [u32; KMAX],
    pub small_insts: [u32; KMAX],
}

/// The registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    pub owners: [u8; MAX_SMS],
    pub modes: [u8; MAX_SMS],
    pub phase: u8,
    /// Cycles left in the phase.
    pub timer: u32,
    /// The slots profiled.
    pub prof: u8,
    pub big_insts: [u32; KMAX],
    pub small_insts: [u32; KMAX],
    /// Per SM, its warp-instructions in the window.
    pub sm_insts: [u32; MAX_SMS],
    pub ended: u8,
    /// Per slot, whether it ended a block since it was fresh, and its last end.
    pub last_valid: u8,
    pub last_end: [u32; KMAX],
    pub decided: bool,
    pub big: u8,
}

/// `v`'s entries of `bits` bits each, packed from entry 0 up.
pub fn pack<const N: usize>(v: &[u8; N], bits: usize) -> u64 {
    v.iter().enumerate().fold(0, |a, (k, &x)| a | (x as u64 & ((1 << bits) - 1)) << (k * bits))
}

/// The entries `pack` packed.
pub fn unpack<const N: usize>(w: u64, bits: usize) -> [u8; N] {
    std::array::from_fn(|k| (w >> (k * bits) & ((1 << bits) - 1)) as u8)
}

crate::wires! { In as i {
    /// The GPU cycle's low bits.
    now(CYCLE_BITS) = i.now,
    /// The profile's warm-up and window, in cycles.
    warmup(WINDOW_BITS) = i.warmup,
    window(WINDOW_BITS) = i.window,
    /// The preemption policy: adaptive, drain, switch.
    policy(POLICY_BITS) = i.policy,
    /// The big SMs and the small SMs (bit s: SM s).
    big_sms(MAX_SMS) = i.big_sms,
    small_sms(MAX_SMS) = i.small_sms,
    /// Slots holding a kernel, slots a new kernel took, slots that ended a block (bit k).
    active(KMAX) = i.active,
    fresh(KMAX) = i.fresh,
    ends(KMAX) = i.ends,
    /// Begin a profile of the active slots; end it.
    start(1) = i.start,
    stop(1) = i.stop,
    /// Load the owner table.
    load(1) = i.load,
    /// The owner table to load: per SM, valid and slot.
    owners_in(MAX_SMS * OWNER_BITS) = pack(&i.owners_in, OWNER_BITS),
    /// Per SM, the warp-instructions it issued this cycle for its owner.
    issued(MAX_SMS * ISSUED_BITS) = pack(&i.issued, ISSUED_BITS),
    /// Per slot, its kernel's blocks per SM on a big, a small and a baseline SM.
    cb(KMAX * BLOCK_BITS) = pack(&i.cb, BLOCK_BITS),
    cs(KMAX * BLOCK_BITS) = pack(&i.cs, BLOCK_BITS),
    c0(KMAX * BLOCK_BITS) = pack(&i.c0, BLOCK_BITS),
} }

crate::wires! { Out as o {
    /// The owner table: per SM, valid and slot.
    owners(MAX_SMS * OWNER_BITS) = pack(&o.owners, OWNER_BITS),
    /// Per SM, how its previous owner's blocks left at the last load: keep, drain, switch.
    modes(MAX_SMS * MODE_BITS) = pack(&o.modes, MODE_BITS),
    /// Idle, warm-up, window, decision.
    phase(PHASE_BITS) = o.phase,
    /// The decision is out, with the slots given the big SMs.
    decided(1) = o.decided,
    big(KMAX) = o.big,
    /// The profiled slots that ended a block in the warm-up.
    ended(KMAX) = o.ended,
    /// Per slot, the last decision's warp-instructions on its big SMs and on its small SMs.
    big_insts # KMAX (INST_BITS) = |k| o.big_insts[k],
    small_insts # KMAX (INST_BITS) = |k| o.small_insts[k],
} unpack {
    Out {
        owners: unpack(owners, OWNER_BITS),
        modes: unpack(modes, MODE_BITS),
        phase: phase as u8,
        decided: decided != 0,
        big: big as u8,
        ended: ended as u8,
        big_insts: std::array::from_fn(|k| big_insts[k] as u32),
        small_insts: std::array::from_fn(|k| small_insts[k] as u32),
    }
} }

const _: () = assert!(KMAX == 4 && MAX_SMS * OWNER_BITS <= 64 && INST_BITS <= 32);
