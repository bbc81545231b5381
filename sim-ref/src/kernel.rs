//! A kernel: decoded code plus the resource declaration it was assembled with.

use mpgpu_spec::isa::Inst;

/// One assembled kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    /// Registers per thread (`.regs`).
    pub regs: u32,
    /// Shared memory per block in bytes (`.shared`).
    pub shared_bytes: u32,
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

    /// Warps per block.
    pub fn warps(&self) -> u32 {
        self.threads.div_ceil(mpgpu_spec::isa::WARP_SIZE as u32)
    }

    /// Same program and declaration (source positions ignored).
    pub fn same_program(&self, other: &Kernel) -> bool {
        self.name == other.name
            && self.regs == other.regs
            && self.shared_bytes == other.shared_bytes
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
