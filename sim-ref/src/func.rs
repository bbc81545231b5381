//! The functional GPU: launches grids of thread blocks and executes them to completion on real
//! data, without timing. Blocks run one after another in launch order; within a block, each
//! ready warp runs until it reaches a barrier or exits, and a barrier releases when every warp of
//! the block that has not exited has arrived.

use crate::exec::{self, BlockCtx, Event, Fault, Warp, WarpState};
// `Launch` lives with the kernel (so that host programs, `crate::program`, need not depend on
// the functional GPU, which runs them); re-exported here where it has always been named.
pub use crate::kernel::Launch;
use crate::mem::GlobalMem;
use std::fmt;

/// An execution error, located to the kernel, block, warp, lane and source line.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecError {
    BadLaunch(String),
    Fault { kernel: String, file: String, line: Option<u32>, block: [u32; 3], warp: u32, fault: Fault },
    /// The launch ran past its instruction budget (an endless loop, most likely): where the
    /// warp that crossed it was.
    Watchdog { kernel: String, limit: u64, file: String, line: Option<u32>, block: [u32; 3], warp: u32, pc: Option<u32> },
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::BadLaunch(m) => write!(f, "{m}"),
            ExecError::Fault { kernel, file, line, block, warp, fault } => {
                write!(
                    f,
                    "kernel `{kernel}`, block ({},{},{}), warp {warp}, lane {}, pc {}",
                    block[0], block[1], block[2], fault.lane, fault.pc
                )?;
                if let Some(l) = line {
                    write!(f, " ({file}:{l})")?;
                }
                write!(f, ": {fault}")
            }
            ExecError::Watchdog { kernel, limit, file, line, block, warp, pc } => {
                write!(f, "kernel `{kernel}` executed more than {limit} warp-instructions in one launch (an endless loop?); stopped in block ({},{},{}), warp {warp}, ", block[0], block[1], block[2])?;
                match pc {
                    Some(pc) => write!(f, "pc {pc}")?,
                    None => write!(f, "after its exit")?,
                }
                if let Some(l) = line {
                    write!(f, " ({file}:{l})")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ExecError {}

/// Instruction counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Warp-instructions issued (including ones whose guard was false in every lane).
    pub warp_insts: u64,
    /// Thread-instructions: the active lanes of every warp-instruction issued.
    pub thread_insts: u64,
    pub launches: u64,
    pub blocks: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.warp_insts += o.warp_insts;
        self.thread_insts += o.thread_insts;
        self.launches += o.launches;
        self.blocks += o.blocks;
    }
}

/// The functional GPU.
pub struct FuncGpu {
    pub mem: GlobalMem,
    /// Number of SMs blocks are spread over (only `%smid` sees it).
    pub num_sms: u32,
    /// Watchdog: most warp-instructions one launch may execute.
    pub max_warp_insts: u64,
    /// Called after every block with (blocks done, blocks in the launch): progress reports.
    pub progress: Option<Box<dyn FnMut(u64, u64)>>,
    pub counts: Counts,
}

impl Default for FuncGpu {
    fn default() -> Self {
        Self::new()
    }
}

impl FuncGpu {
    pub fn new() -> FuncGpu {
        FuncGpu { mem: GlobalMem::new(), num_sms: 15, max_warp_insts: 20_000_000_000, progress: None, counts: Counts::default() }
    }

    /// Runs one launch to completion.
    pub fn launch(&mut self, l: &Launch) -> Result<Counts, ExecError> {
        l.validate().map_err(ExecError::BadLaunch)?;
        let k = &*l.kernel;
        let mut counts = Counts { launches: 1, ..Counts::default() };
        let mut shared = vec![0u32; (k.shared_bytes / 4) as usize];
        let fresh: Vec<Warp> = (0..k.warps()).map(|w| Warp::new(k, w, l.block)).collect();
        let mut warps = fresh.clone();
        for b in 0..l.num_blocks() {
            let ctaid = l.block_coords(b);
            shared.fill(0);
            for (w, f) in warps.iter_mut().zip(&fresh) {
                w.reset_from(f);
            }
            let mut ctx = BlockCtx {
                kernel: k,
                params: &l.params,
                grid: l.grid,
                block: l.block,
                ctaid,
                smid: (b % self.num_sms as u64) as u32,
                shared: &mut shared,
            };
            run_block(&mut warps, &mut ctx, &mut self.mem, &mut counts, self.max_warp_insts).map_err(|e| match e {
                BlockError::Fault(warp, fault) => ExecError::Fault {
                    kernel: k.name.clone(),
                    file: k.file.clone(),
                    line: k.line_of(fault.pc),
                    block: ctaid,
                    warp,
                    fault,
                },
                BlockError::Watchdog(warp, pc) => ExecError::Watchdog {
                    kernel: k.name.clone(),
                    limit: self.max_warp_insts,
                    file: k.file.clone(),
                    line: pc.and_then(|pc| k.line_of(pc)),
                    block: ctaid,
                    warp,
                    pc,
                },
            })?;
            counts.blocks += 1;
            if let Some(p) = self.progress.as_mut() {
                p(b + 1, l.num_blocks());
            }
        }
        self.counts += counts;
        Ok(counts)
    }

    /// Runs a whole program (set-up, every launch in order) and returns its counts. The caller
    /// verifies with [`crate::program::Program::verify`].
    pub fn run(&mut self, p: &mut dyn crate::program::Program) -> Result<Counts, ExecError> {
        p.setup(&mut self.mem);
        let mut total = Counts::default();
        while let Some(l) = p.next_launch(&self.mem) {
            total += self.launch(&l)?;
        }
        Ok(total)
    }
}

enum BlockError {
    Fault(u32, Fault),
    /// The budget ran out: the warp that crossed it, and its PC.
    Watchdog(u32, Option<u32>),
}

fn run_block(
    warps: &mut [Warp],
    ctx: &mut BlockCtx,
    mem: &mut GlobalMem,
    counts: &mut Counts,
    budget: u64,
) -> Result<(), BlockError> {
    let mut f = exec::Flight::empty();
    loop {
        let mut live = 0;
        for w in warps.iter_mut() {
            if w.state != WarpState::Ready {
                live += (w.state == WarpState::AtBarrier) as u32;
                continue;
            }
            let mut n = 0u64;
            let mut lanes = 0u64;
            let ev = loop {
                lanes += w.active_mask().count_ones() as u64;
                n += 1;
                match exec::step(&mut f, w, ctx, mem) {
                    Ok(Event::Continue) => {
                        if n & 0xffff == 0 && counts.warp_insts + n > budget {
                            return Err(BlockError::Watchdog(w.id, w.pc()));
                        }
                    }
                    Ok(ev) => break Ok(ev),
                    Err(f) => break Err(f),
                }
            };
            counts.warp_insts += n;
            counts.thread_insts += lanes;
            match ev {
                Ok(Event::Barrier) => live += 1,
                Ok(_) => {}
                Err(f) => return Err(BlockError::Fault(w.id, f)),
            }
            if counts.warp_insts > budget {
                return Err(BlockError::Watchdog(w.id, w.pc()));
            }
        }
        if live == 0 {
            return Ok(());
        }
        // Every warp that has not exited is at the barrier: release them.
        for w in warps.iter_mut() {
            if w.state == WarpState::AtBarrier {
                w.state = WarpState::Ready;
            }
        }
    }
}
