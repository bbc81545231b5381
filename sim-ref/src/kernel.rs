//! A kernel: decoded code plus the resource declaration it was assembled with, and a launch of
//! it (grid, block shape, parameters).

use mpgpu_spec::isa::Inst;
use std::sync::Arc;

/// One assembled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    /// Registers per thread (`.regs`).
    pub regs: u32,
    /// Shared memory per block in bytes (`.shared`).
    pub shared_bytes: u32,
    /// Of `shared_bytes`, the spill slots the unified allocator added (`docs/unified.md`): the
    /// admission unit's descriptor carries the two parts.
    pub spill_shared: u32,
    /// Local memory per thread in bytes (`.local`).
    pub local_bytes: u32,
    /// Threads per block (`.threads`); a launch's block dimensions must multiply to this.
    pub threads: u32,
    /// Parameter bytes (`.params`).
    pub param_bytes: u32,
    pub code: Vec<Inst>,
    /// Label names and the instruction index they mark, in order of index.
    pub labels: Vec<(String, u32)>,
    /// Source file the kernel came from, and the source line of each instruction.
    pub file: String,
    pub lines: Vec<u32>,
}

/// Resource footprint of a kernel, as the occupancy rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Footprint {
    pub regs_per_thread: u32,
    pub shared_per_block: u32,
    pub threads_per_block: u32,
    pub local_per_thread: u32,
}

impl Kernel {
    pub fn footprint(&self) -> Footprint {
        Footprint {
            regs_per_thread: self.regs,
            shared_per_block: self.shared_bytes,
            threads_per_block: self.threads,
            local_per_thread: self.local_bytes,
        }
    }

    /// A block's descriptor for the admission unit (`mpgpu_spec::units::admit`) of an SM that
    /// rounds registers per thread up to a multiple of `reg_round`.
    pub fn admit_desc(&self, reg_round: u32) -> mpgpu_spec::units::admit::Desc {
        use mpgpu_spec::units::admit::{block_rows, Desc};
        let user = self.shared_bytes - self.spill_shared;
        Desc { rows: block_rows(self.regs, self.warps(), reg_round) as u16, warps: self.warps() as u8, user, spill: self.spill_shared }
    }

    /// Warps per block.
    pub fn warps(&self) -> u32 {
        self.threads.div_ceil(mpgpu_spec::isa::WARP_SIZE as u32)
    }

    /// Same program and declaration (source positions ignored).
    pub fn same_program(&self, other: &Kernel) -> bool {
        self.name == other.name
            && self.regs == other.regs
            && self.shared_bytes == other.shared_bytes
            && self.spill_shared == other.spill_shared
            && self.local_bytes == other.local_bytes
            && self.threads == other.threads
            && self.param_bytes == other.param_bytes
            && self.code == other.code
    }

    /// Source line of instruction `pc`, if known.
    pub fn line_of(&self, pc: u32) -> Option<u32> {
        self.lines.get(pc as usize).copied()
    }

    /// The `phase` specifiers in program order: (pc, live registers, scratchpad bytes).
    pub fn phases(&self) -> Vec<(u32, u16, u32)> {
        self.code
            .iter()
            .enumerate()
            .filter_map(|(pc, i)| match i.op {
                mpgpu_spec::isa::Op::Phase { regs, smem } => Some((pc as u32, regs, smem)),
                _ => None,
            })
            .collect()
    }
}

/// One kernel launch: the grid, the block shape and the parameter words.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: Arc<Kernel>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub params: Vec<u32>,
}

impl Launch {
    /// A 1-D launch of `blocks` blocks of the kernel's declared thread count.
    pub fn linear(kernel: &Arc<Kernel>, blocks: u32, params: Vec<u32>) -> Launch {
        Launch { kernel: kernel.clone(), grid: [blocks, 1, 1], block: [kernel.threads, 1, 1], params }
    }

    pub fn num_blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// Block coordinates of the linear block index `b` (x fastest).
    pub fn block_coords(&self, b: u64) -> [u32; 3] {
        let gx = self.grid[0] as u64;
        let gy = self.grid[1] as u64;
        [(b % gx) as u32, ((b / gx) % gy) as u32, (b / (gx * gy)) as u32]
    }

    /// Checks the launch against the kernel's declaration.
    pub fn validate(&self) -> Result<(), String> {
        let k = &self.kernel;
        if self.grid.contains(&0) || self.block.contains(&0) {
            return Err(format!("launch of `{}`: grid {:?} and block {:?} must have no zero dimension", k.name, self.grid, self.block));
        }
        let threads = self.block.iter().map(|&b| b as u64).product::<u64>();
        if threads != k.threads as u64 {
            return Err(format!(
                "launch of `{}`: block {:?} has {threads} threads but the kernel declares `.threads {}`",
                k.name, self.block, k.threads
            ));
        }
        if self.params.len() * 4 != k.param_bytes as usize {
            return Err(format!(
                "launch of `{}`: {} parameter words given but the kernel declares `.params {}` ({} words)",
                k.name,
                self.params.len(),
                k.param_bytes,
                k.param_bytes / 4
            ));
        }
        Ok(())
    }
}
