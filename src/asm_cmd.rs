//! `mpgpu asm`: assemble a file and report its kernels (or print them back, or with the phase
//! specifiers the placement pass puts in them).

use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct AsmArgs {
    file: PathBuf,
    /// Print the program back in canonical form.
    #[arg(long)]
    disasm: bool,
    /// Replace each kernel's `phase` specifiers with those the placement pass puts by Zorua's
    /// rule (25 % change in live registers or scratchpad, 10 instructions apart, no divergence;
    /// docs/zorua.md) and print it back, with a line per kernel comparing them to the file's.
    #[arg(long, conflicts_with = "disasm")]
    place_phases: bool,
    /// With --place-phases: first renumber the registers so that the live ones are the lowest
    /// (`[zorua] renumber = true` in a configuration; docs/zorua.md, "Phase specifiers").
    #[arg(long, requires = "place_phases")]
    renumber: bool,
}

pub fn asm_cmd(a: AsmArgs) -> Result<ExitCode> {
    let AsmArgs { file, disasm, place_phases, renumber } = a;
    let text = crate::checks::read_asm(&file)?;
    let ks = crate::checks::assemble(&file, &text)?;
    for k in &ks {
        if place_phases {
            use mpgpu_ref::phases::{addressed, place, renumbered, rewrite, without_phases};
            let renamed;
            let k = if renumber {
                renamed = renumbered(k);
                &renamed
            } else {
                k
            };
            let smem = addressed(k);
            let placed = place(&without_phases(k), smem);
            let file = k.phases().iter().map(|&(_, r, s)| format!("{r},{s}")).collect::<Vec<_>>().join(" ");
            let ours = placed.iter().map(|p| format!("{}({}),{}", p.regs, p.live, p.smem)).collect::<Vec<_>>().join(" ");
            println!("// kernel `{}`: the file's specifiers [{file}]; placed [{ours}] (registers: highest live + 1, and in brackets the most live at once; scratchpad: the {} B it addresses where live, of {} B declared)", k.name, smem, k.shared_bytes);
            print!("{}", mpgpu_ref::disassemble(&rewrite(k, &placed)));
        } else if disasm {
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
