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
    /// Place each kernel's values under this register cap with the unified allocator
    /// (docs/unified.md): what does not fit in registers goes to shared-memory spill slots
    /// (--slots), then to local memory. Prints a line per kernel, and the code with --disasm.
    #[arg(long, value_name = "REGS", conflicts_with = "place_phases")]
    cap: Option<u32>,
    /// With --cap: 4-byte shared-memory spill slots per thread (0: every spill in local memory).
    #[arg(long, requires = "cap", default_value_t = 0)]
    slots: u32,
    /// Run the paper's concurrency search for each kernel on this GPU configuration (a preset
    /// or a file; its first SM kind): the levels it looked at, CI_pred at each, and the register
    /// cap and spill slots it chooses (docs/unified.md, "The concurrency search").
    #[arg(long, value_name = "CONFIG", conflicts_with_all = ["place_phases", "cap"])]
    auto: Option<String>,
}

pub fn asm_cmd(a: AsmArgs) -> Result<ExitCode> {
    let AsmArgs { file, disasm, place_phases, renumber, cap, slots, auto } = a;
    let sm = match &auto {
        Some(c) => Some(mpgpu_ref::config::GpuConfig::from_arg(c).map_err(|e| anyhow::anyhow!("--auto: {e}"))?.sm[0].clone()),
        None => None,
    };
    let text = crate::checks::read_asm(&file)?;
    let ks = crate::checks::assemble(&file, &text)?;
    for k in &ks {
        if let Some(sm) = &sm {
            let c = mpgpu_ref::unified::search::search(k, sm);
            println!("kernel `{}`: demand {} registers, AD_int {:.2}, {} threads per SM as written, the search starts at {}", k.name, mpgpu_ref::unified::demand(k), c.ad_int, c.original, c.start);
            for l in &c.levels {
                println!(
                    "  {:>5} threads: cap {:>3}, {:>3} slots: {} to shared, {} to local, {} instructions; CI_pred {:.1} {} {}",
                    l.threads, l.budget.regs, l.budget.slots, l.placed.in_shared, l.placed.in_local, l.placed.after, l.ratio, if l.passes { ">" } else { "<=" }, mpgpu_ref::unified::search::MAX_CMRATIO
                );
            }
            match (&c.untouched, c.budget) {
                (Some(why), _) => println!("  chosen: as written ({why})"),
                (None, Some(b)) => println!("  chosen: {} threads per SM, cap {} registers, {} spill slots", c.threads, b.regs, b.slots),
                (None, None) => unreachable!("a chosen level has a budget"),
            }
            if disasm {
                print!("{}", mpgpu_ref::disassemble(c.placed().unwrap_or(k)));
            }
        } else if let Some(regs) = cap {
            let budget = mpgpu_ref::unified::Budget { regs, slots };
            let a = mpgpu_ref::unified::allocate(k, budget).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let line = format!(
                "kernel `{}`: demand {} registers; under a cap of {regs} with {slots} shared slots: {} registers, {} of {} values spilled ({} to {} shared slots, {} to {} local slots), {} B shared/block, {} B local/thread, {} instructions ({:.2}x)",
                k.name, a.demand, a.kernel.regs, a.in_shared + a.in_local, a.values, a.in_shared, a.shared_slots, a.in_local, a.local_slots, a.kernel.shared_bytes, a.kernel.local_bytes, a.after, a.growth()
            );
            if disasm {
                println!("// {line}");
                print!("{}", mpgpu_ref::disassemble(&a.kernel));
            } else {
                println!("{}: {line}", file.display());
            }
        } else if place_phases {
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
