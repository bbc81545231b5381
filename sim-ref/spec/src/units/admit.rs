//! Interface of the admission unit (RTL `rtl/src/admit.rs`, model `mpgpu_ref::units::admit`):
//! one per SM, the block admission of Hayes and Zhang, "Unified On-chip Memory Allocation for
//! SIMT Architecture" (ICS 2014; §4's occupancy rule, which its search solves backwards) with the register-file and shared-memory ranges a block is given (decisions in
//! `docs/unified.md`, "The admission unit").
//!
//! A block is described by its kernel's descriptor ([`Desc`]): the register-file rows a block
//! takes (a row is one register of each of a warp's 32 lanes: `roundup(regs, reg_round) x
//! warps`, [`Params::rows_of`], computed once a launch from the kernel's registers per thread,
//! not at every look), warps per block, and the shared memory it uses, the program's own
//! (`user`) and the spill slots the unified allocator gave it (`spill`). The unit keeps, per
//! block slot, whether it is resident, its rows and bytes (base and length) and its warps; the
//! shared-memory configuration in force (`cap`: the smallest of the configuration's sizes that
//! holds the first block placed on an empty SM, as the occupancy rule takes it); and per
//! resource a bump pointer (`top`): where the next block goes.
//!
//! Combinational on the registers and the inputs of the cycle (so a block that ends frees its
//! room for a block placed in the same cycle, as the occupancy rule's counters do):
//! - a slot is *live* when it is resident and not freed in this cycle (`free`); the SM is
//!   *empty* when none is;
//! - `fits`, the occupancy rule: the live slots' warps, rows and shared bytes plus the block's
//!   are at most the warp limit, the register file's rows and `cap` (the configuration
//!   `cap_for(user + spill)` when the SM is empty), and no block is being placed in this cycle
//!   (`alloc`: one a cycle);
//! - `rf_base`: 0 on an empty SM; else `top` when the block's rows fit between `top` and the
//!   register file's end; else (`rf_move`) the live slots' rows summed: placing the block packs
//!   the live ranges from 0 in slot order, and it goes after them. `sh_base` and `sh_move` the
//!   same for its shared bytes below `cap`;
//! - `sp_base = sh_base + user`: where the block's spill area starts, the value the warp launch
//!   writes into the spill pointer (the allocator's `r0 = U + 4 t` with the block's base).
//!
//! So the unit admits exactly what the occupancy rule admits (the paper's admission, and
//! every figure of the model), and the ranges never overlap; a packing stands for the moves of
//! the live blocks' registers or shared memory that a hardware compaction makes, which the
//! model counts but does not charge time for (`docs/unified.md`, "The admission unit").
//!
//! At the rising edge: the slots in `free` are cleared; with `alloc`, the live ranges are
//! packed if `rf_move` (`sh_move`), slot `slot` takes the block on `desc` at `rf_base`,
//! `sh_base` (its ranges and warps), `top` moves past it, and `cap` is set when the SM was
//! empty. An `alloc` the outputs did not grant, into a slot still live, or a free of a slot not
//! resident breaks the protocol (the model stops the run; the unit places the block anyway).
//!
//! A cycle whose input is all zero changes nothing and is not clocked.

use serde::Serialize;

/// Block slots the RTL holds (`k20c`, `kepler15`: 16; `gtx480`: 8). The model takes any count
/// up to 64.
pub const MAX_BLOCKS: usize = 16;
/// Bits of a block slot number.
pub const SLOT_BITS: usize = crate::unit::clog2(MAX_BLOCKS as u64) as usize;
/// Bits of warps per block (at most 32: 1024 threads).
pub const WARPS_BITS: usize = 6;
/// Register-file rows the RTL can hold (4096 x 32 = 131,072 registers), and the bits of a row
/// address or count (a count of `MAX_ROWS` included; a block asks at most 255 x 32 = 8160).
pub const MAX_ROWS: u32 = 4096;
pub const ROW_BITS: usize = crate::unit::clog2(MAX_ROWS as u64 * 2) as usize;
/// Shared-memory bytes the RTL can hold (64 KB), and the bits of an address or size.
pub const MAX_SHARED: u32 = 64 * 1024;
pub const SHARED_BITS: usize = crate::unit::clog2(MAX_SHARED as u64 + 1) as usize;
/// Resident warps the RTL can count (the warp limit is at most this).
pub const MAX_WARPS: u32 = 127;
pub const WARP_BITS: usize = crate::unit::clog2(MAX_WARPS as u64 + 1) as usize;
/// Shared-memory configurations besides the whole (`shared_configs`).
pub const MAX_CONFIGS: usize = 4;

/// The SM the unit is built for (the RTL's constants, the model's limits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Params {
    /// Block slots.
    pub slots: u32,
    /// Register-file rows (registers / 32).
    pub rows: u32,
    /// Resident warps at most: the fewer of the warp slots and threads / 32.
    pub warps: u32,
    /// Registers per thread are rounded up to a multiple of this (a power of two).
    pub reg_round: u32,
    /// The shared-memory configurations, ascending, the unused ones at `shared`; and the whole.
    pub configs: [u32; MAX_CONFIGS],
    pub shared: u32,
}

impl Params {
    /// The shared-memory configuration for a block of `bytes` (the smallest that holds it; the
    /// whole when none does).
    pub fn cap_for(&self, bytes: u32) -> u32 {
        self.configs.iter().copied().find(|&c| c >= bytes).unwrap_or(self.shared)
    }

    /// Register-file rows a block of `warps` warps of `regs` registers per thread takes (the
    /// descriptor's `rows`).
    pub fn rows_of(&self, regs: u32, warps: u32) -> u32 {
        block_rows(regs, warps, self.reg_round)
    }

    /// Why the RTL cannot be built for these parameters, if it cannot.
    pub fn rtl_limits(&self) -> Result<(), String> {
        let over = |what: &str, v: u32, max: u32| if v > max { Err(format!("{what} {v} is over the admission unit's {max}")) } else { Ok(()) };
        over("block slots", self.slots, MAX_BLOCKS as u32)?;
        over("register-file rows (registers / 32)", self.rows, MAX_ROWS)?;
        over("resident warps", self.warps, MAX_WARPS)?;
        over("shared-memory bytes", self.shared, MAX_SHARED)?;
        if !self.reg_round.is_power_of_two() || self.reg_round > 64 {
            return Err(format!("reg_round {} is not a power of two up to 64 (the unit rounds with a mask)", self.reg_round));
        }
        Ok(())
    }
}

/// Register-file rows a block of `warps` warps of `regs` registers per thread takes on an SM
/// that rounds registers per thread up to a multiple of `reg_round`.
pub fn block_rows(regs: u32, warps: u32, reg_round: u32) -> u32 {
    regs.div_ceil(reg_round) * reg_round * warps
}

/// A block's descriptor, from its kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Desc {
    /// Register-file rows a block takes ([`Params::rows_of`]).
    pub rows: u16,
    /// Warps per block.
    pub warps: u8,
    /// Shared-memory bytes per block: the program's own, and its spill slots'.
    pub user: u32,
    pub spill: u32,
}

/// Sampled every clocked cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// The block asked about (and placed, with `alloc`).
    pub desc: Desc,
    /// The block on `desc` goes into block slot `slot` at this edge.
    pub alloc: bool,
    pub slot: u8,
    /// Block slots whose blocks leave (ended, or saved for a context switch); bit k: slot k.
    pub free: u64,
}

/// Driven every cycle, combinational on the registers and the inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    /// A block on `desc` may be placed in this cycle.
    pub fits: bool,
    /// Its first register-file row, its first shared-memory byte, and its spill area's.
    pub rf_base: u32,
    pub sh_base: u32,
    pub sp_base: u32,
    /// No hole holds the block's register-file rows (shared bytes): the live slots' ranges are
    /// packed from 0 in slot order at the edge that places it, and it goes after them.
    pub rf_move: bool,
    pub sh_move: bool,
}

/// The registers, per block slot ([`MAX_BLOCKS`] entries in the RTL, the SM's slots in the
/// model; a slot not resident holds zeros).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct State {
    /// Bit k: slot k is resident.
    pub valid: u64,
    pub rf_base: Vec<u32>,
    pub rf_len: Vec<u32>,
    pub sh_base: Vec<u32>,
    pub sh_len: Vec<u32>,
    pub warps: Vec<u32>,
    /// The shared-memory configuration in force, and the bump pointers: the next block's first
    /// row and byte.
    pub cap: u32,
    pub top_rf: u32,
    pub top_sh: u32,
}

// The ports (`crate::port`), in wire order.

crate::wires! { In as i {
    /// The block's descriptor: register-file rows, warps, shared bytes of the program and of
    /// its spill slots.
    rows(ROW_BITS) = i.desc.rows,
    warps(WARPS_BITS) = i.desc.warps,
    user(SHARED_BITS) = i.desc.user,
    spill(SHARED_BITS) = i.desc.spill,
    /// Place the block in slot `slot` at this edge.
    alloc(1) = i.alloc,
    slot(SLOT_BITS) = i.slot,
    /// Block slots whose blocks leave (bit k: slot k).
    free(MAX_BLOCKS) = i.free,
} }

crate::wires! { Out as o {
    /// The block on the descriptor may be placed in this cycle.
    fits(1) = o.fits,
    /// Its first register-file row (32 registers), shared-memory byte and spill-area byte.
    rf_base(ROW_BITS) = o.rf_base,
    sh_base(SHARED_BITS) = o.sh_base,
    sp_base(SHARED_BITS) = o.sp_base,
    /// Placing it packs the live register-file ranges (shared-memory ranges) first.
    rf_move(1) = o.rf_move,
    sh_move(1) = o.sh_move,
} unpack {
    Out { fits: fits != 0, rf_base: rf_base as u32, sh_base: sh_base as u32, sp_base: sp_base as u32, rf_move: rf_move != 0, sh_move: sh_move != 0 }
} }
