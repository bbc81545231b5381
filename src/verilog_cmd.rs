//! `mpgpu verilog`: write a block's Verilog.

use anyhow::{anyhow, bail, Context, Result};
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use mpgpu_rtl::verilog::BLOCKS;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct VerilogArgs {
    /// The block (`mpgpu verilog --help` describes each).
    #[arg(value_parser = BlockName)]
    block: String,
    /// The SMs a GPU-wide block serves (sched, dss, prio, wf, slice): 1..=16, default 16.
    #[arg(long)]
    sms: Option<usize>,
    /// Output directory.
    #[arg(long, default_value = "target/verilog")]
    out: PathBuf,
}

/// A block name from `mpgpu_rtl::verilog::BLOCKS`, the one list of the blocks that have
/// Verilog: clap lists them in the help and rejects any other name with
/// "unknown block `NAME`; blocks: ...".
#[derive(Clone)]
struct BlockName;

impl TypedValueParser for BlockName {
    type Value = String;

    fn parse_ref(&self, cmd: &clap::Command, _arg: Option<&clap::Arg>, value: &OsStr) -> Result<String, clap::Error> {
        let name = value.to_string_lossy();
        if BLOCKS.contains(&name.as_ref()) {
            Ok(name.into_owned())
        } else {
            let msg = format!("unknown block `{name}`; blocks: {}\n", BLOCKS.join(", "));
            Err(clap::Error::raw(ErrorKind::InvalidValue, msg).with_cmd(cmd))
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(BLOCKS.iter().map(|b| PossibleValue::new(*b).help(mpgpu_rtl::verilog::describe(b)))))
    }
}

pub fn verilog_cmd(a: VerilogArgs) -> Result<ExitCode> {
    let VerilogArgs { block, sms, out } = a;
    if sms.is_some() && !mpgpu_rtl::verilog::sized_by_sms(&block) {
        let sized: Vec<&str> = BLOCKS.iter().copied().filter(|b| mpgpu_rtl::verilog::sized_by_sms(b)).collect();
        bail!("--sms sizes the GPU-wide blocks ({}): `{block}` is {}", sized.join(", "), mpgpu_rtl::verilog::describe(&block));
    }
    let v = mpgpu_rtl::verilog::verilog_sized(&block, sms.unwrap_or(mpgpu_spec::units::sched::MAX_SMS)).map_err(|e| anyhow!(e))?;
    crate::checks::output_dir(&out, "--out")?;
    let path = out.join(format!("{block}.v"));
    std::fs::write(&path, v).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}
