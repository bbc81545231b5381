//! Interface of the slice table (RTL `rtl/src/slice.rs`, model `mpgpu_ref::units::slice`): the
//! scheduling framework's per-SM, per-kernel columns that let several kernels share an SM under
//! block quotas (Xu et al., "Warped-Slicer", ISCA 2016, §III, §IV; decisions in
//! `docs/warped-slicer.md`, "Kernels sharing an SM").
//!
//! The table holds up to [`KMAX`] kernels (slots) in arrival order and, for every SM and
//! slot, a block quota T and a resident count n; for every SM, the resources its blocks use
//! (CTA slots, warp-padded threads, registers, shared bytes). It issues at most one block a
//! cycle GPU-wide, visiting the SMs round-robin:
//!
//! - **Read** (one SM a cycle, from `ptr`, which wraps at the GPU's SM count): the SM's used
//!   vector, counts and quotas into the read registers (`rd_*`). The read is marked invalid
//!   when, at the same edge, a command (Enter, Quota) rewrites quotas, or the SM read is one
//!   whose block could still be applied later: the one in the Fit stage, the one in the Read
//!   stage (with few SMs), or the one an issue is applied to. So a read never holds a value
//!   older than an edge that could raise it.
//! - **Fit** (the SM read the cycle before): slot i's fit bit (`f_e`) is set when the read is
//!   valid, the slot is valid, n < T, and the block fits: every component of the used vector
//!   is at most the slot's limit (SM total minus its request). The Fit stage is marked invalid
//!   (`f_valid`) when a command rewrites quotas at the same edge.
//! - **Pick** (the SM fitted the cycle before): slot i is eligible when its fit bit is set, it
//!   is still valid, and it has blocks left besides the one in flight. Of the eligible slots
//!   the oldest (lowest `rank`) wins, and the issue registers take (SM, slot) at the edge.
//! - **Apply**: the block on the issue outputs is applied at the edge that ends its cycle: n
//!   and the used vector grow, the slot's blocks left drop. A Read of that SM in that cycle is
//!   marked invalid too.
//! - **Completion** (`done`): registered at the edge, applied at the next (n and the used
//!   vector of that SM shrink). A read older than the completion only understates the room,
//!   so it is kept.
//! - **Commands**: Enter (a kernel takes a free slot, youngest rank, its quota on every SM),
//!   Leave (the slot is freed; the younger ranks close up), Quota (one SM's row of quotas, or
//!   every SM's).
//!
//! The scan sleeps: `quiet` counts clocked cycles since the last input, apply, or Read marked
//! invalid because its SM was in the Read or Fit stage, and saturates at the SM count; the
//! Read stage runs only while it is below that. So after a full round of valid Reads that all
//! saw the last change, `busy` falls and a cycle with no input changes nothing (the GPU may gate
//! the clock; a command or a completion wakes it).

use serde::Serialize;

/// Kernel slots (the paper's Kmax).
pub const KMAX: usize = super::wf::KMAX;
/// Resource components: CTA slots, warp-padded threads, registers, shared memory bytes.
pub const RES: usize = super::wf::RES;
/// Bits of a resource amount.
pub const RES_BITS: usize = super::wf::RES_BITS;
/// SMs at most.
pub const MAX_SMS: usize = super::sched::MAX_SMS;
pub const SM_BITS: usize = 4;
/// Bits of a quota and of a resident count (a quota of [`NO_QUOTA`] never binds).
pub const QUOTA_BITS: usize = 6;
pub const NO_QUOTA: u8 = (1 << QUOTA_BITS) - 1;
/// Bits of a kernel's blocks left to issue.
pub const LEFT_BITS: usize = super::sched::fw::TB_BITS;

/// Command codes (`In::cmd` on the wire).
pub const OP_NONE: u8 = 0;
pub const OP_ENTER: u8 = 1;
pub const OP_LEAVE: u8 = 2;
pub const OP_QUOTA: u8 = 3;
/// Bits of a command code and of a kernel slot number.
pub const OP_BITS: usize = crate::unit::clog2(OP_QUOTA as u64 + 1) as usize;
pub const SLOT_BITS: usize = crate::unit::clog2(KMAX as u64) as usize;

/// One command a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Cmd {
    #[default]
    None,
    /// A kernel takes slot `slot` (free): `blocks` to issue, its per-block request (every
    /// component at most the SM total), and its quota on every SM. On the wire the quota
    /// travels in `q[0]`.
    Enter { slot: u8, blocks: u32, req: [u32; RES], quota: u8 },
    /// Slot `slot` is freed (its kernel has no blocks left and none resident).
    Leave { slot: u8 },
    /// SM `sm`'s quotas (or every SM's, `all`), one per slot.
    Quota { sm: u8, all: bool, q: [u8; KMAX] },
}

impl Cmd {
    pub fn op(&self) -> u8 {
        match self {
            Cmd::None => OP_NONE,
            Cmd::Enter { .. } => OP_ENTER,
            Cmd::Leave { .. } => OP_LEAVE,
            Cmd::Quota { .. } => OP_QUOTA,
        }
    }
}

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    pub cmd: Cmd,
    /// A block of slot `.1` finished on SM `.0`.
    pub done: Option<(u8, u8)>,
}

/// Driven every clocked cycle, from registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// A cycle with no input could change something.
    pub busy: bool,
    /// The block issued at the last edge: (SM, slot).
    pub issue: Option<(u8, u8)>,
}

/// The registers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    /// Per SM (MAX_SMS entries): resources used, and per slot the resident count and quota.
    pub used: Vec<[u32; RES]>,
    pub n: Vec<[u8; KMAX]>,
    pub quota: Vec<[u8; KMAX]>,
    /// Per slot.
    pub valid: [bool; KMAX],
    pub rank: [u8; KMAX],
    pub left: [u32; KMAX],
    pub req: [[u32; RES]; KMAX],
    pub lim: [[u32; RES]; KMAX],
    /// The scan: the next SM to read, the cycles since anything happened.
    pub ptr: u8,
    pub quiet: u8,
    /// The Read stage's registers.
    pub rd_valid: bool,
    pub rd_sm: u8,
    pub rd_used: [u32; RES],
    pub rd_n: [u8; KMAX],
    pub rd_q: [u8; KMAX],
    /// The Fit stage's registers: the SM and, per slot, valid, below its quota and fitting.
    pub f_valid: bool,
    pub f_sm: u8,
    pub f_e: [bool; KMAX],
    /// The pick of the last edge: the block on the issue outputs this cycle, applied (n, the
    /// used vector, blocks left) at the edge that ends it.
    pub issue_valid: bool,
    pub issue_sm: u8,
    pub issue_slot: u8,
    /// The completion taken at the last edge, applied at the edge that ends this cycle.
    pub d_valid: bool,
    pub d_sm: u8,
    pub d_slot: u8,
}

// The ports (`crate::port`), in wire order.

impl Cmd {
    /// The slot an Enter or a Leave names (0 otherwise).
    pub fn slot(&self) -> u8 {
        match *self {
            Cmd::Enter { slot, .. } | Cmd::Leave { slot } => slot,
            _ => 0,
        }
    }

    /// Quota `k` on the wire: a Quota's, or an Enter's one quota in slot 0.
    pub fn wire_quota(&self, k: usize) -> u8 {
        match *self {
            Cmd::Enter { quota, .. } if k == 0 => quota,
            Cmd::Quota { q, .. } => q[k],
            _ => 0,
        }
    }
}

crate::wires! { In as i {
    /// The command (none, Enter, Leave, Quota) and the slot it names.
    cmd_op(OP_BITS) = i.cmd.op(),
    cmd_slot(SLOT_BITS) = i.cmd.slot(),
    /// Quota: the SM, or every SM.
    cmd_sm(SM_BITS) = match i.cmd { Cmd::Quota { sm, .. } => sm, _ => 0 },
    cmd_all(1) = matches!(i.cmd, Cmd::Quota { all: true, .. }),
    /// Enter: the kernel's blocks to issue.
    cmd_blocks(LEFT_BITS) = match i.cmd { Cmd::Enter { blocks, .. } => blocks, _ => 0 },
    /// Quota: one quota per slot; Enter: the quota on every SM in `cmd_q0`.
    cmd_q # KMAX (QUOTA_BITS) = |k| i.cmd.wire_quota(k),
    /// Enter: the per-block request, one port per resource.
    cmd_req # RES (RES_BITS) = |k| match i.cmd { Cmd::Enter { req, .. } => req[k], _ => 0 },
    /// A block of slot `done_slot` finished on SM `done_sm`.
    done_valid(1) = i.done.is_some(),
    done_sm(SM_BITS) = i.done.map_or(0, |d| d.0),
    done_slot(SLOT_BITS) = i.done.map_or(0, |d| d.1),
} }

crate::wires! { Out as o {
    /// A cycle with no input could change something.
    busy(1) = o.busy,
    /// The block issued at the last edge: SM, slot.
    issue_valid(1) = o.issue.is_some(),
    issue_sm(SM_BITS) = o.issue.map_or(0, |d| d.0); care o.issue.is_some(),
    issue_slot(SLOT_BITS) = o.issue.map_or(0, |d| d.1); care o.issue.is_some(),
} unpack {
    Out { busy: busy != 0, issue: (issue_valid != 0).then_some((issue_sm as u8, issue_slot as u8)) }
} }
