//! `mpgpu kernels` and `mpgpu configs`: the kernel library and the GPU presets, as tables.

use anyhow::{anyhow, Result};
use mpgpu_ref::config::{GpuConfig, PRESETS};
use mpgpu_ref::library;
use std::process::ExitCode;

/// The kernel library, one row per kernel, with its resource footprint.
pub fn kernels_cmd() -> Result<ExitCode> {
    println!(
        "{:<10} {:<18} {:>6} {:>8} {:>8} {:>7} {:>6}  {}",
        "app", "kernel", "regs/t", "smem/blk", "thr/blk", "phases", "insts", "size: meaning (default)"
    );
    for b in library::library() {
        let ks = b.kernels().map_err(|e| anyhow!("{e}"))?;
        for (i, k) in ks.0.iter().enumerate() {
            let desc = if i == 0 { format!("{} ({})", b.description, b.default_size) } else { String::new() };
            println!(
                "{:<10} {:<18} {:>6} {:>8} {:>8} {:>7} {:>6}  {}",
                if i == 0 { b.name } else { "" },
                k.name,
                k.regs,
                k.shared_bytes,
                k.threads,
                k.phases().len(),
                k.code.len(),
                desc
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The GPU configuration presets, one row per SM group.
pub fn configs_cmd() -> Result<ExitCode> {
    println!("{:<11} {:>4} {:>6} {:>7} {:>7} {:>6} {:>7} {:>6} {:>8}  {}", "preset", "SMs", "MHz", "threads", "regs", "blocks", "smem", "sched", "DRAM GB/s", "description");
    for (name, _) in PRESETS {
        let c = GpuConfig::preset(name).unwrap();
        for (i, g) in c.sm.iter().enumerate() {
            println!(
                "{:<11} {:>4} {:>6} {:>7} {:>7} {:>6} {:>7} {:>6} {:>8}  {}",
                if i == 0 { name } else { "" },
                g.count,
                if i == 0 { format!("{}", c.core_clock_mhz) } else { String::new() },
                g.threads,
                g.registers,
                g.blocks,
                g.shared_bytes,
                format!("{}x{:?}", g.schedulers, g.scheduler).to_lowercase(),
                if i == 0 { format!("{}", c.memory.dram_bandwidth_gbs) } else { String::new() },
                if i == 0 { c.description.as_str() } else { "" }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
