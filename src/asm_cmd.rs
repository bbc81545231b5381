//! `mpgpu asm`: assemble a file and report its kernels (or print them back).

use anyhow::{anyhow, Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct AsmArgs {
    file: PathBuf,
    #[arg(long)]
    disasm: bool,
}

pub fn asm_cmd(a: AsmArgs) -> Result<ExitCode> {
    let AsmArgs { file, disasm } = a;
    let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let ks = mpgpu_ref::assemble(&file.display().to_string(), &text).map_err(|e| anyhow!("{e}"))?;
    for k in &ks {
        if disasm {
            print!("{}", mpgpu_ref::disassemble(k));
        } else {
            println!(
                "{}: kernel `{}`: {} instructions, {} regs/thread, {} B shared/block, {} B local/thread, {} threads/block, {} param bytes, {} phase specifiers",
                file.display(),
                k.name,
                k.code.len(),
                k.regs,
                k.shared_bytes,
                k.local_bytes,
                k.threads,
                k.param_bytes,
                k.phases().len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
