//! The multiprogramming hardware's cost for a whole GPU (`mpgpu fpga --gpu CONFIG`): every
//! block of the registry that is not a part of another, the GPU-wide ones once (generated for
//! the configuration's SMs) and the per-SM ones once for every SM, each synthesized for the
//! ECP5 and (unless synthesis only) placed and routed alone in its ring of I/O registers for its
//! Fmax; with the storage each holds (flip-flops and memory bits) beside the storage the papers
//! give. Results are cached by the block's Verilog, so a second run, or another configuration
//! that shares a block's Verilog, reuses them. `docs/fpga.md`, "The whole GPU", has the figures.

use crate::entry::{Block, Scope};
use crate::fpga::{place_and_route, synthesize, synthesize_ring, Family, SynthReport, Tools};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What the LFE5U-85F offers (Lattice's ECP5 family data sheet): LUT4s, flip-flops, DP16KD block
/// RAMs of 18 Kbit.
pub const DEVICE_LUT4: u64 = 83_640;
pub const DEVICE_FF: u64 = 83_640;
pub const DEVICE_DP16KD: u64 = 208;
/// Bits of one DP16KD (16 Kbit of data and 2 Kbit of parity) and of one distributed-RAM cell
/// (TRELLIS_DPR16X4: 16 words of 4 bits).
pub const DP16KD_BITS: u64 = 18 * 1024;
pub const DPR16X4_BITS: u64 = 64;

/// The storage a paper gives for what a block holds, by block name.
pub fn paper_storage(block: &str) -> Option<&'static str> {
    Some(match block {
        "sched" => "thesis (Tanasić 2016) §5.2.3: command buffers, KSRT, SMST and active queue under 0.5 KB for 13 SMs; PTBQs about 21 KB for the GPU",
        "zorua" => "Zorua (Vijaykumar et al. 2016) §4.5: 1.125 KB + 672 B + 56 B = 1.88 KB of mapping tables per SM",
        "oldata" => "thesis §6.3.3, §6.5.2: an operand log of 8 KB (the smallest) or 16 KB per SM",
        "prof" => "Warped-Slicer (Xu et al. 2016) §V-I: 714 µm² per SM in 45 nm, no storage given",
        "wf" => "Warped-Slicer §V-I: 0.04 mm² for the global counters and Algorithm 1, no storage given",
        _ => return None,
    })
}

/// One block's cost, for one instance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BlockCost {
    pub block: String,
    /// The SMs it was generated for (GPU-wide blocks) or 1.
    pub sms: usize,
    pub synth: SynthReport,
    /// Bits of the memories its Verilog declares (words times width).
    pub memory_bits: u64,
    /// Routed alone in its ring of I/O registers: Fmax (MHz; `None` when it has no
    /// register-to-register path) and the seed and target it was routed at.
    pub fmax_mhz: Option<f64>,
    pub routed: Option<(u64, f64)>,
}

impl BlockCost {
    pub fn lut4(&self) -> u64 {
        self.synth.group("lut")
    }
    pub fn ff(&self) -> u64 {
        self.synth.group("ff")
    }
    /// Block RAMs (DP16KD cells).
    pub fn dp16kd(&self) -> u64 {
        self.synth.cell("DP16KD")
    }
    /// Block-RAM bits (DP16KD cells times their size).
    pub fn bram_bits(&self) -> u64 {
        self.dp16kd() * DP16KD_BITS
    }
    /// Distributed-RAM bits (TRELLIS_DPR16X4 cells times their size).
    pub fn dist_ram_bits(&self) -> u64 {
        self.synth.cell("TRELLIS_DPR16X4") * DPR16X4_BITS
    }
    /// Bits of state: its flip-flops and its memories' bits.
    pub fn storage_bits(&self) -> u64 {
        self.ff() + self.memory_bits
    }
    /// Bytes of state.
    pub fn storage_bytes(&self) -> f64 {
        self.storage_bits() as f64 / 8.0
    }
}

/// A row of the whole GPU's table: a block and how many the GPU has.
pub struct Row {
    pub cost: BlockCost,
    pub scope: Scope,
    pub count: usize,
}

/// The blocks a GPU carries: every block of `blocks` but the parts of others and those
/// `--unit all` leaves out (the admission unit, which Zorua's coordinator replaces:
/// `crate::unit::OUTSIDE_ALL`), GPU-wide first.
pub fn gpu_blocks(blocks: &'static [Block]) -> Vec<&'static Block> {
    let mut v: Vec<&Block> = blocks.iter().filter(|b| matches!(b.scope, Scope::Gpu | Scope::PerSm) && !crate::unit::outside_all(b)).collect();
    v.sort_by_key(|b| b.scope != Scope::Gpu);
    v
}

/// The cost of `block` for `sms` SMs as `verilog` (its Verilog for them, `Block::verilog_for`): synthesized
/// (and, with `route`, placed and routed at `seed` and `freq` MHz) under `out/<block>-<hash>/`,
/// or read from there when an earlier run left it for the same Verilog (and the same seed and
/// target, if routed).
pub fn block_cost(tools: &Tools, block: &Block, sms: usize, verilog: &str, out: &Path, route: Option<(u64, f64)>, mut say: impl FnMut(&str)) -> Result<BlockCost, String> {
    let dir = out.join(format!("{}-{}", block.name, crate::verilator::short_hash(&[verilog])));
    let cached = dir.join("cost.json");
    let old: Option<BlockCost> = std::fs::read_to_string(&cached).ok().and_then(|t| serde_json::from_str(&t).ok());
    if let Some(c) = &old {
        if route.is_none() || c.routed == route {
            return Ok(c.clone());
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let vpath = dir.join(format!("{}.v", block.name));
    std::fs::write(&vpath, verilog).map_err(|e| format!("cannot write {}: {e}", vpath.display()))?;
    let (synth, memory_bits) = match old {
        Some(c) => (c.synth, c.memory_bits),
        None => {
            say(&format!("  synthesizing {} ...", block.name));
            (synthesize(tools, &vpath, Family::Ecp5, &dir)?, crate::ip::memory_bits(verilog)?)
        }
    };
    let sms = if block.sized_by_sms() { sms } else { 1 };
    let mut c = BlockCost { block: block.name.to_string(), sms, synth, memory_bits, fmax_mhz: None, routed: None };
    if let Some((seed, freq)) = route {
        say(&format!("  placing and routing {} in its I/O ring (large blocks take minutes) ...", block.name));
        synthesize_ring(tools, &vpath, &dir.join("ring"))?;
        let p = place_and_route(tools, &dir.join("ring"), seed, freq)?;
        c.fmax_mhz = p.fmax_mhz;
        c.routed = route;
    }
    let text = serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?;
    std::fs::write(&cached, text).map_err(|e| format!("cannot write {}: {e}", cached.display()))?;
    Ok(c)
}
