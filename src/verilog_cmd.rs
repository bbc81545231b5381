//! `mpgpu verilog`: write a block's IP folder (`docs/ip.md`).

use anyhow::{anyhow, bail, Result};
use mpgpu_tb::ip;
use mpgpu_tb::registry::BLOCKS;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct VerilogArgs {
    /// The block, or `all` (`mpgpu verilog --help` describes each).
    #[arg(value_parser = crate::args::blocks_or_all())]
    block: crate::args::BlockSet,
    /// The SMs a GPU-wide block serves (sched, dss, prio, wf, slice): 1..=16, default 16.
    #[arg(long)]
    sms: Option<usize>,
    /// The configuration the blocks are generated for (a preset or a TOML file): a per-SM
    /// block's geometry (Zorua's tables: the first SM's registers, scratchpad and warp slots;
    /// the slice table's totals). Default: each block's own (`mpgpu cosim --unit`'s default).
    #[arg(long)]
    config: Option<String>,
    /// The folder under which each block's IP folder (`<block>/`) is written.
    #[arg(long, default_value = "target/ip")]
    out: PathBuf,
    /// The module-name prefix: the block's module is `<prefix><block>`, its parts'
    /// `<prefix><block>_<part>`.
    #[arg(long, default_value = ip::PREFIX)]
    prefix: String,
    /// A trace recorded by `mpgpu cosim --unit <block> --trace DIR` (one block) for the folder's
    /// self-checking testbench (`tb/`), instead of the one recorded by default (the block's
    /// testbench run, `docs/ip.md`). The trace must be of the same Verilog (its configuration;
    /// `--prefix` renames the modules).
    #[arg(long, conflicts_with = "no_testbench")]
    trace: Option<PathBuf>,
    /// Write the folders without a testbench (none is recorded: the Verilog, its waivers, the
    /// file list and a FuseSoC core with its `default` and `lint` targets only).
    #[arg(long)]
    no_testbench: bool,
    /// The scheduling framework (`sched`) built to share its SMs, for slicing inside it
    /// (`--policy` with `--slicing`): its quota ports then take effect.
    #[arg(long)]
    sharing: bool,
}

pub fn verilog_cmd(a: VerilogArgs) -> Result<ExitCode> {
    let VerilogArgs { block: crate::args::BlockSet(blocks), sms, config, out, prefix, trace, no_testbench, sharing } = a;
    if sharing && !blocks.iter().any(|b| b.name == "sched") {
        anyhow::bail!("--sharing builds the scheduling framework to share its SMs: it applies to `sched`, which the blocks given leave out");
    }
    let given = match &config {
        Some(c) => Some(mpgpu_ref::config::GpuConfig::from_arg(c).map_err(|e| anyhow!("--config: {e}"))?),
        None => None,
    };
    ip::check_prefix(&prefix).map_err(|e| anyhow!(e))?;
    let one = blocks.len() == 1;
    if sms.is_some() && one && !blocks[0].sized_by_sms() {
        let sized: Vec<&str> = BLOCKS.iter().filter(|b| b.sized_by_sms()).map(|b| b.name).collect();
        bail!("--sms sizes the GPU-wide blocks ({}): `{}` is {}", sized.join(", "), blocks[0].name, blocks[0].about);
    }
    if trace.is_some() && !one {
        bail!("--trace gives one block's recorded trace: name that block, not `all`");
    }
    // (the trace and the Verilog it was recorded on)
    let recorded = match &trace {
        Some(t) => {
            let r = mpgpu_tb::ip_folder::recorded(t).map_err(|e| anyhow!("--trace {}: {e}", t.display()))?;
            if r.0.block != blocks[0].name {
                bail!("--trace {}: the trace is of block `{}`, not `{}`", t.display(), r.0.block, blocks[0].name);
            }
            Some(r)
        }
        None => None,
    };
    crate::checks::output_dir(&out, "--out")?;
    let n = sms.unwrap_or(mpgpu_spec::units::sched::MAX_SMS);
    for b in blocks {
        let cfg = match &given {
            Some(c) => c.clone(),
            None => b.default_gpu().map_err(|e| anyhow!(e))?,
        };
        let rtl = b.verilog_with(n, &cfg, sharing).map_err(|e| anyhow!("block `{}` for --config {}: {e}", b.name, cfg.name))?;
        // (the configuration named if given; the header's parameters say what it sized either way)
        let mut command = format!("mpgpu verilog {}", b.name);
        if let Some(c) = &config {
            command += &format!(" --config {c}");
        }
        if b.sized_by_sms() {
            command += &format!(" --sms {n}");
        }
        if sharing && b.name == "sched" {
            command += " --sharing";
        }
        if prefix != ip::PREFIX {
            command += &format!(" --prefix {prefix}");
        }
        let verilog = ip::ip_verilog(&rtl, b.name, b.about, &prefix, &command).map_err(|e| anyhow!("block `{}`: {e}", b.name))?;
        let top = ip::module_name(&prefix, b.name);
        if let (Some(t), Some(r)) = (&trace, &recorded) {
            if !mpgpu_tb::ip_folder::of_design(b, &rtl, r).map_err(|e| anyhow!("block `{}`: {e}", b.name))? {
                bail!("--trace {}: the trace was recorded on other Verilog than this (module `{}`, or another configuration): record it with `mpgpu cosim --unit {} --trace` at this configuration", t.display(), r.0.module, b.name);
            }
        }
        let dir = out.join(b.name);
        // The testbench: the trace given, or one recorded now (none where the block has no run
        // of its own there: said, and the folder written without it).
        let recording = dir.join(".recording");
        let tb = match (&trace, no_testbench) {
            (Some(t), _) => Some(t.clone()),
            (None, true) => None,
            (None, false) => match mpgpu_tb::ip_folder::testbench_run(b, &cfg, n, sharing) {
                Err(why) => {
                    eprintln!("no testbench for `{}` in its folder: {why}", b.name);
                    None
                }
                Ok(run) => {
                    println!("recording the testbench of `{}` (its run in the whole GPU, rust-hdl in lockstep with the model) ...", b.name);
                    Some(mpgpu_tb::ip_folder::record_testbench(b, &rtl, run, &recording).map_err(|e| anyhow!("{e}"))?.0)
                }
            },
        };
        let f = mpgpu_tb::ip_folder::write_folder(&dir, &verilog, &top, b.name, b.about, tb.as_deref());
        let cycles = tb.as_deref().and_then(|t| mpgpu_tb::trace::read(t).ok()).map(|i| i.cycles);
        let _ = std::fs::remove_dir_all(&recording);
        let f = f.map_err(|e| anyhow!(e))?;
        match cycles {
            Some(c) => println!("wrote {}/ ({}; the testbench replays {c} clocked cycles)", f.dir.display(), f.files.join(", ")),
            None => println!("wrote {}/ ({})", f.dir.display(), f.files.join(", ")),
        }
    }
    Ok(ExitCode::SUCCESS)
}
