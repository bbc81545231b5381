//! `mpgpu verilog`: write a block's Verilog.

use anyhow::{anyhow, bail, Context, Result};
use mpgpu_tb::registry::{Block, BLOCKS};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct VerilogArgs {
    /// The block (`mpgpu verilog --help` describes each).
    #[arg(value_parser = crate::args::block_name())]
    block: &'static Block,
    /// The SMs a GPU-wide block serves (sched, dss, prio, wf, slice): 1..=16, default 16.
    #[arg(long)]
    sms: Option<usize>,
    /// Output directory.
    #[arg(long, default_value = "target/verilog")]
    out: PathBuf,
}

pub fn verilog_cmd(a: VerilogArgs) -> Result<ExitCode> {
    let VerilogArgs { block, sms, out } = a;
    if sms.is_some() && !block.sized_by_sms() {
        let sized: Vec<&str> = BLOCKS.iter().filter(|b| b.sized_by_sms()).map(|b| b.name).collect();
        bail!("--sms sizes the GPU-wide blocks ({}): `{}` is {}", sized.join(", "), block.name, block.about);
    }
    let v = block.verilog_sized(sms.unwrap_or(mpgpu_spec::units::sched::MAX_SMS)).map_err(|e| anyhow!(e))?;
    crate::checks::output_dir(&out, "--out")?;
    let path = out.join(format!("{}.v", block.name));
    std::fs::write(&path, v).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}
