//! `mpgpu cosim` and `mpgpu replay`: an RTL block in the loop of the whole GPU, and a recorded
//! trace replayed in Icarus.

use crate::args::{BackendArg, MechanismArg, PolicyArg};
use crate::{load_workload, print_result};
use anyhow::{anyhow, bail, Result};
use mpgpu_ref::config::GpuConfig;
use mpgpu_tb::cosim::{run_with, CosimOptions, SlotMode, UnitKind};
use mpgpu_tb::unit::GpuKind;
use mpgpu_tb::fpga::{default_venv, gate_replay, Tools};
use mpgpu_tb::trace::{replay, Replay};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What the slot holds.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModeArg {
    /// The RTL in the loop with the model beside it, compared every clocked cycle.
    Lockstep,
    /// The RTL alone drives the GPU, unchecked (sched only).
    Rtl,
    /// The reference model alone (sched only; for comparison).
    Model,
}

#[derive(clap::Args)]
pub struct CosimArgs {
    /// Workload TOML file; the embedded default when absent.
    workload: Option<PathBuf>,
    /// The unit in the loop.
    #[arg(long, value_parser = crate::args::unit_name(), default_value = "sched")]
    unit: UnitKind,
    /// The framework's policy (default: equal), for --unit sched and engine, for the per-SM
    /// units with --framework, and with --slicing for slicing inside the framework.
    #[arg(long, value_enum)]
    policy: Option<PolicyArg>,
    /// Preemption mechanism. Default: ctxsw, or drain under --alloc zorua or wlm (the only one
    /// they run with).
    #[arg(long, value_enum)]
    preempt: Option<MechanismArg>,
    /// The simulator of the RTL: rust-hdl's own, the generated Verilog compiled by Verilator
    /// (built once per configuration and cached under target/verilator/), or the block on an
    /// FPGA (`--device`; without it, the board wrapper's simulation). On the FPGA only outputs
    /// are compared: its registers cannot be read over the link.
    #[arg(long, value_enum, default_value = "rust-hdl")]
    backend: BackendArg,
    /// With `--backend fpga`: the board's serial device (e.g. /dev/ttyUSB0; docs/board.md).
    #[arg(long)]
    device: Option<String>,
    /// With `--backend fpga --device`: the UART's baud rate (default: the bitstream's, 115200).
    #[arg(long)]
    baud: Option<u32>,
    /// What the framework's slot holds.
    #[arg(long, value_enum, default_value = "lockstep")]
    mode: ModeArg,
    /// A preset or a TOML file: at most 16 SMs for the GPU-wide blocks (the framework, its
    /// engines and the steering unit also on SMs of two kinds; the slice table and the
    /// water-filling unit on identical SMs); the per-SM blocks take any number of identical SMs.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Write the run's waveform: for the units of one global block (sched, engine, dss, prio,
    /// slice) one VCD file, PATH (with a GTKWave save file beside it); for the units with one
    /// waveform per SM (oplog, oldata, rq, rq-ol, zorua, prof) and for wf, PATH is a folder,
    /// and each SM with the RTL gets PATH/sm<k>-<block>.vcd (wf also PATH/wf.vcd). Missing
    /// folders are created.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// With --vcd: record only from this GPU cycle on.
    #[arg(long, requires = "vcd")]
    vcd_from: Option<u64>,
    /// With --vcd: record only up to this GPU cycle (inclusive).
    #[arg(long, requires = "vcd")]
    vcd_to: Option<u64>,
    /// With --vcd and a per-SM unit: record the waveforms of these SMs only (`0,3,5-7`; of
    /// those that carry the RTL, `--sms`).
    #[arg(long, requires = "vcd")]
    vcd_sms: Option<String>,
    /// Record the clocked cycles (inputs, expected outputs) into this directory, for
    /// `mpgpu replay`.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Clock and compare the framework on every GPU cycle, instead of gating its clock while it
    /// is idle with no input (same results, slower); --unit sched and engine.
    #[arg(long)]
    every_cycle: bool,
    /// Per-SM units (and wf's counters): the SMs whose slot carries the RTL (`all`, or
    /// `0,3,5-7`).
    #[arg(long)]
    sms: Option<String>,
    /// Per-SM units: blocks scheduled by the scheduling framework's model under `--policy`
    /// and `--preempt` (under Zorua: `--preempt drain`), instead of the baseline dispatcher.
    #[arg(long)]
    framework: bool,
    #[command(flatten)]
    vm: crate::args::VmArgs,
    /// With --unit steer: the steering dispatcher's (docs/heterocore.md; default dynamic).
    #[command(flatten)]
    steer: crate::args::SteerArgs,
    /// With --unit slice: the intra-SM slicing policy (--unit wf runs warped-slicer). With
    /// --policy too: slicing inside the framework, this policy its quota controller, for any
    /// unit but sched and slice (docs/warped-slicer.md, "Inside the scheduling framework").
    #[arg(long, value_enum)]
    slicing: Option<crate::args::SlicingArg>,
    /// With --unit wf or slice: Warped-Slicer's parameters.
    #[command(flatten)]
    ws: crate::args::WsArgs,
    #[command(flatten)]
    limit: crate::args::LimitArgs,
    /// Test-only: co-simulate a deliberately broken RTL variant (the registry's, of a block
    /// the unit hosts).
    #[arg(long, hide = true)]
    broken: Option<String>,
}

pub fn cosim_cmd(a: CosimArgs) -> Result<ExitCode> {
    let w = load_workload(&a.workload)?;
    let mut cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    // (`--policy` with `--slicing`: slicing inside the framework, docs/warped-slicer.md)
    let sliced = a.policy.is_some() && a.slicing.is_some();
    // (`--unit all` with --slicing: the slicing dispatcher's blocks in the framework's place;
    // with --policy too, every block but the slice table)
    let unit = match (a.unit.is_all(), sliced, a.slicing.is_some()) {
        (true, false, false) if a.steer.steer.is_some() && a.policy.is_some() => UnitKind::every_block_steered_in_framework(),
        (true, false, false) if a.steer.steer.is_some() => UnitKind::every_block_steered(),
        (true, true, _) => UnitKind::every_block_in_framework(),
        (true, false, true) => UnitKind::every_block(true),
        _ => a.unit,
    };
    unit.setup(&mut cfg);
    a.vm.apply(&mut cfg)?;
    // (`--policy` with `--steer`, or with the steering unit: steering inside the framework,
    // docs/heterocore.md)
    let steer_flags = a.steer.steer.is_some() || a.steer.steer_warmup.is_some() || a.steer.steer_window.is_some() || a.steer.steer_preempt.is_some();
    let steered = a.policy.is_some() && !sliced && (steer_flags || unit.has(GpuKind::Steer));
    // (each broken variant belongs to the blocks of some units: the registry's)
    let broken = a.broken.as_deref().map(|b| mpgpu_tb::registry::broken(unit, b)).transpose().map_err(|e| anyhow!(e))?.unwrap_or_default();
    let mode = match a.mode {
        ModeArg::Lockstep => SlotMode::Lockstep,
        ModeArg::Rtl if !unit.lockstep_only() => SlotMode::RtlAlone,
        ModeArg::Model if !unit.lockstep_only() => SlotMode::ModelAlone,
        ModeArg::Rtl | ModeArg::Model => {
            bail!("--mode {:?}: --unit {unit} runs only in lockstep", a.mode)
        }
    };
    if (a.trace.is_some() || a.vcd.is_some()) && mode != SlotMode::Lockstep {
        bail!("--trace and --vcd record the RTL beside the model: use --mode lockstep");
    }
    // (a flag that the unit's run would not use is refused, with the reason)
    let uses_framework = unit.gpu() == GpuKind::Framework || (unit.gpu() == GpuKind::PerSm && a.framework) || sliced || steered;
    if !uses_framework && (a.policy.is_some() || a.preempt.is_some()) {
        bail!(
            "--policy and --preempt choose the scheduling framework's policy: --unit {} {}",
            unit.name(),
            if unit.gpu() == GpuKind::PerSm { "runs under the baseline dispatcher unless --framework is given (or --policy with --slicing, slicing inside the framework)" } else { "runs under its slicing dispatcher (--slicing); --policy with --slicing puts it under slicing inside the framework" }
        );
    }
    if a.ws.given() && unit.gpu() != GpuKind::Slicer && !sliced {
        bail!("the --ws-* flags are Warped-Slicer's parameters: they apply to the units under the slicing dispatcher ({})", slicing_units());
    }
    if a.sms.is_some() && !unit.has_per_sm() {
        bail!("--sms picks the SMs whose slot carries a per-SM unit's RTL: --unit {} is one block for the whole GPU", unit.name());
    }
    if a.every_cycle && unit.gpu() != GpuKind::Framework {
        bail!("--every-cycle clocks the framework on every GPU cycle: --unit {} is clocked when its SMs ask something of it", unit.name());
    }
    if a.baud.is_some() && a.device.is_none() {
        bail!("--baud sets the UART's rate to a board: it needs --backend fpga --device PATH");
    }
    let preempt = MechanismArg::or_default_for(a.preempt, &cfg);
    let policy = a.policy.unwrap_or(PolicyArg::Equal);
    let mut o = CosimOptions::new(policy.into(), preempt.into());
    o.unit = unit;
    o.mode = mode;
    o.backend = a.backend.into();
    if a.device.is_some() && a.backend != BackendArg::Fpga {
        bail!("--device names an FPGA board's serial port; it needs --backend fpga");
    }
    if a.backend == BackendArg::Fpga {
        mpgpu_tb::board_link::set_fpga_target(match &a.device {
            Some(path) => mpgpu_tb::board_link::FpgaTarget::Device { path: path.clone(), baud: a.baud.unwrap_or(115_200) },
            None => mpgpu_tb::board_link::FpgaTarget::Simulation,
        });
    }
    o.broken = broken;
    o.slice = a.ws.params();
    if a.slicing.is_some() && unit.gpu() != GpuKind::Slicer && !sliced {
        bail!("--slicing picks the slicing policy of the units under the slicing dispatcher ({}), or with --policy the quota controller of slicing inside the framework; --unit {} runs under {}", slicing_units(), a.unit, if unit.gpu() == GpuKind::Framework || a.framework { "the framework's --policy: give it too" } else { "the baseline dispatcher: give --policy too" });
    }
    o.sliced = sliced;
    if steer_flags && unit.gpu() != GpuKind::Steer && !steered {
        bail!("the --steer flags choose the steering dispatcher's policy, profile and preemption: they apply to --unit steer, which runs under it (--unit {} does not; with --policy, steering inside the framework)", a.unit);
    }
    let mut st = a.steer;
    st.steer = st.steer.or(Some(crate::args::SteerArg::Dynamic));
    if let Some((s, p)) = st.choice(steered)? {
        (o.steering, o.steer) = (s, p);
    }
    o.steered = steered;
    o.slicing = a.slicing.map_or(mpgpu_ref::timing::slicer::Slicing::WarpedSlicer, Into::into);
    o.sms = mpgpu_ref::slots::SmSet::parse(a.sms.as_deref().unwrap_or("all"), cfg.num_sms() as usize).map_err(|e| anyhow!("--sms: {e}"))?;
    if (unit.gpu() != GpuKind::Framework || unit.has_per_sm()) && a.backend == BackendArg::Fpga {
        bail!("--backend fpga carries the scheduling framework's blocks; --unit {} runs on rust-hdl or verilator", a.unit);
    }
    if a.framework && unit.gpu() != GpuKind::PerSm {
        let per_sm: Vec<&str> = UnitKind::all().into_iter().filter(|u| u.gpu() == GpuKind::PerSm).map(|u| u.name()).collect();
        bail!("--framework is for the per-SM units ({}): --unit {} runs under {}", per_sm.join(", "), a.unit, if unit.gpu() == GpuKind::Framework { "the framework of its own" } else { "the slicing dispatcher" });
    }
    o.framework = a.framework;
    o.every_cycle = a.every_cycle;
    o.limits = a.limit.limits();
    o.vcd_window = (a.vcd_from.unwrap_or(0), a.vcd_to.unwrap_or(u64::MAX));
    if o.vcd_window.0 > o.vcd_window.1 {
        bail!("--vcd-from {} is after --vcd-to {}", o.vcd_window.0, o.vcd_window.1);
    }
    if let Some(v) = &a.vcd_sms {
        if !unit.waveform_folder() {
            bail!("--vcd-sms picks the SMs whose waveforms are written: --unit {} has one waveform", unit.name());
        }
        o.vcd_sms = mpgpu_ref::slots::SmSet::parse(v, cfg.num_sms() as usize).map_err(|e| anyhow!("--vcd-sms: {e}"))?;
        if let Some(k) = (0..cfg.num_sms() as usize).find(|&k| o.vcd_sms.contains(k) && !o.sms.contains(k)) {
            bail!("--vcd-sms {v}: SM {k} does not carry the RTL (--sms {}); only SMs with the RTL have waveforms", a.sms.as_deref().unwrap_or("all"));
        }
    }
    // (the outputs are checked before the run: a waveform or trace that cannot be written is
    // refused now, not found out after the simulation)
    if let Some(p) = &a.vcd {
        if unit.waveform_folder() {
            if p.extension().is_some_and(|x| x == "vcd") {
                bail!("--vcd {}: --unit {} writes {}: name a folder (each goes in as FOLDER/sm<k>-<block>.vcd), not a .vcd file", p.display(), unit.name(), waveform_list(unit));
            }
            crate::checks::output_dir(p, "--vcd")?;
        } else {
            crate::checks::output_file(p, "--vcd")?;
        }
    }
    if let Some(d) = &a.trace {
        crate::checks::output_dir(d, "--trace")?;
    }
    o.vcd = a.vcd.clone();
    o.trace = a.trace.clone();
    let pb = crate::common::progress_bar("cosim");
    let bar = pb.clone();
    o.progress = Some(mpgpu_tb::cosim::Progress(std::rc::Rc::new(move |cycle, done, total| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(format!("cycle {cycle}"));
    })));
    println!("workload: {}", crate::checks::shown(&w.description));
    println!(
        "config:   {} ({} SMs); unit {:?} ({}) on {}{}",
        cfg.name,
        cfg.num_sms(),
        a.unit,
        match mode {
            SlotMode::Lockstep if o.backend == mpgpu_tb::Backend::Fpga => "lockstep with the model, outputs only: the board's registers cannot be read",
            SlotMode::Lockstep => "lockstep with the model",
            SlotMode::RtlAlone => "RTL alone",
            SlotMode::ModelAlone => "model alone",
        },
        o.backend,
        if uses_framework { format!(", policy {}, {:?}", o.policy.name(), o.mechanism) } else { String::new() }
    );
    if steered {
        println!(
            "blocks:   the scheduling framework, {} with {:?}, its kernels steered to SMs by {} steering as its quota controller (warm-up {}, window {}; SMs change owner by draining; docs/heterocore.md, \"Inside the scheduling framework\")",
            o.policy.name(),
            o.mechanism,
            o.steering.name(),
            o.steer.warmup,
            o.steer.window
        );
    } else if sliced {
        println!(
            "blocks:   the scheduling framework, {} with {:?}, its SMs shared by {} quotas (docs/warped-slicer.md, \"Inside the scheduling framework\")",
            o.policy.name(),
            o.mechanism,
            o.slicing.name()
        );
    } else if unit.gpu() == GpuKind::Slicer {
        println!(
            "blocks:   the {} slicing dispatcher (Warped-Slicer's window {}, delay {}, fallback {} %, settle {}, grid cap {})",
            o.slicing.name(),
            o.slice.window,
            o.slice.delay,
            o.slice.pct,
            o.slice.settle,
            if o.slice.grid_cap { "on" } else { "off" }
        );
    } else if unit.gpu() == GpuKind::Steer {
        println!("blocks:   the steering dispatcher, {} (warm-up {}, window {}, preemption {})", o.steering.name(), o.steer.warmup, o.steer.window, o.steer.preempt.name());
    } else if unit.gpu() == GpuKind::PerSm {
        println!("blocks:   {}", if a.framework { format!("the scheduling framework's model, {} with {:?}", o.policy.name(), o.mechanism) } else { "the baseline dispatcher".to_string() });
    }
    let rep = run_with(&cfg, &w, &o).map_err(|e| anyhow!(e));
    pb.finish_and_clear();
    let rep = rep?;
    for x in &rep.warnings {
        eprintln!("error: {x}");
    }
    let secs = rep.seconds;
    let gpu_cycles = rep.result.as_ref().map_or(String::new(), |r| format!(" in {} GPU cycles", r.cycles));
    let gated = if unit.clock_gated() && !a.every_cycle { if unit.gpu() == GpuKind::Steer { "; the steering unit is clocked in profiles and when the kernels or their blocks change" } else { "; the framework's clock is gated while it is idle" } } else { "" };
    // (a unit with several instances counts the clocked cycles of all of them)
    let instances = if rep.mismatch.is_some() {
        // (the count stops at the mismatch, in the instance that parted)
        if unit.waveform_folder() { ", to the mismatch, in the slot that parted".to_string() } else { ", to the mismatch".to_string() }
    } else if unit.has_per_sm() {
        let n = (0..cfg.num_sms() as usize).filter(|&k| o.sms.contains(k)).count();
        let each = unit.per_sm_blocks().len();
        let units = if each > 1 { format!(" ({each} blocks each)") } else { String::new() };
        // (those the run used: of the framework's policy engines, the one the policy runs)
        let mut globals = unit.global_blocks();
        globals.retain(|b| rep.blocks.contains(b));
        format!(", summed over {n} SMs' slots{units}{}", if globals.is_empty() { String::new() } else { format!(" and {}", globals.join(", ")) })
    } else {
        String::new()
    };
    let what = match mode {
        SlotMode::Lockstep => "clocked cycles checked",
        SlotMode::RtlAlone => "clocked cycles (unchecked)",
        SlotMode::ModelAlone => "clocked cycles checked (none: the model alone)",
    };
    println!("{what}: {}{instances}{gpu_cycles}{gated}  mismatches: {}", rep.cycles_checked, rep.mismatch.is_some() as u32);
    if let Some(r) = &rep.result {
        println!("simulated {} GPU cycles in {:.2} s ({:.0} K cycles/s; {:.2} s to build the units before)", r.cycles, secs, r.cycles as f64 / secs / 1e3, rep.setup_seconds);
        print_result(r, None, secs);
        crate::run_cmd::print_slicing(r);
        crate::run_cmd::print_steering(r);
    }
    if let Some(p) = rep.vcd.as_ref().filter(|_| rep.mismatch.is_none()) {
        println!("{}", waveforms(p, &rep.vcd_files, unit));
    }
    if let Some(p) = &rep.trace {
        let dir = a.trace.as_ref().map_or(String::new(), |d| d.display().to_string());
        let several = unit.blocks().len() > 1;
        // (several blocks each under DIR/<block>/; a per-SM block's SMs each under sm<k>/)
        let places: Vec<String> = unit
            .blocks()
            .iter()
            .map(|b| {
                let sub = if several { format!("{dir}/{b}") } else { dir.clone() };
                if unit.per_sm_blocks().contains(b) {
                    format!("one per SM with the RTL under {sub}/sm<k>/")
                } else {
                    format!("{sub}/")
                }
            })
            .collect();
        if unit.waveform_folder() {
            println!("traces: {} (replay in Icarus: mpgpu replay {})", places.join(", "), p.display());
        } else {
            println!("trace: {} (replay in Icarus: mpgpu replay {})", p.display(), p.display());
        }
    }
    if let Some(m) = &rep.mismatch {
        eprintln!("{m}");
        if let Some(p) = &rep.vcd {
            eprintln!("around the mismatch: {}", waveforms(p, &rep.vcd_files, unit));
        }
        return Ok(ExitCode::FAILURE);
    }
    if let Some(e) = &rep.error {
        bail!("{e}");
    }
    if !rep.warnings.is_empty() {
        // (an output asked for and not written fails the command, whatever the run found)
        eprintln!("FAIL: {} requested output(s) could not be written", rep.warnings.len());
        return Ok(ExitCode::FAILURE);
    }
    let ok = rep.result.as_ref().is_some_and(|r| r.processes.iter().all(|p| p.verified));
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Where a run's waveforms went: a file, or a folder of one per SM with the RTL.
fn waveforms(p: &Path, files: &[PathBuf], unit: UnitKind) -> String {
    if !unit.waveform_folder() {
        return format!("waveform: {} (GTKWave: gtkwave {})", p.display(), p.with_extension("gtkw").display());
    }
    let files: Vec<String> = files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    let shown = if files.len() > 4 { format!("{}, ... {}", files[..3].join(", "), files[files.len() - 1]) } else { files.join(", ") };
    format!("waveforms: {} files in {}/ ({shown}; GTKWave: gtkwave {}/<name>.gtkw)", files.len(), p.display(), p.display())
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// A trace directory written by `mpgpu cosim --trace DIR`.
    dir: PathBuf,
    /// Replay on the block's ECP5 netlist instead of its Verilog: synthesize its Verilog (`mpgpu_<block>.v`) with yosys
    /// `synth_ecp5` (into DIR/gate/) and simulate the netlist with yosys's ECP5 cell models.
    /// Installs the FPGA tools under target/ when missing (see `mpgpu fpga`).
    #[arg(long)]
    gate: bool,
}

pub fn replay_cmd(a: ReplayArgs) -> Result<ExitCode> {
    if !a.dir.join("trace.json").exists() {
        bail!("{}: no trace.json; write a trace with `mpgpu cosim --trace {}`", a.dir.display(), a.dir.display());
    }
    let (what, log, result) = if a.gate {
        let tools = Tools::ensure(&default_venv(Path::new(".")), |m| eprintln!("{m}")).map_err(|e| anyhow!(e))?;
        let (r, synth) = gate_replay(&tools, &a.dir).map_err(|e| anyhow!(e))?;
        println!(
            "ECP5 netlist: {} LUT4, {} flip-flops, {} carry, {} distributed RAM, {} block RAM (synthesized in {:.1} s)",
            synth.group("lut"),
            synth.group("ff"),
            synth.group("carry"),
            synth.group("dist_ram"),
            synth.group("bram"),
            synth.seconds
        );
        ("replay of the ECP5 netlist in Icarus", a.dir.join("replay-gate.log"), r)
    } else {
        ("replay in Icarus", a.dir.join("replay.log"), replay(&a.dir).map_err(|e| anyhow!(e))?)
    };
    match result {
        Replay::Pass { cycles } => {
            println!("{what}: {cycles} cycles, every output matched: PASS");
            Ok(ExitCode::SUCCESS)
        }
        Replay::Mismatch { line, .. } => {
            eprintln!("{line}");
            eprintln!("{what}: FAIL (log: {})", log.display());
            Ok(ExitCode::FAILURE)
        }
    }
}

#[derive(clap::Args)]
pub struct BenchCosimArgs {
    /// Workload TOML file; the embedded default when absent.
    workload: Option<PathBuf>,
    #[arg(long, default_value = "gtx480")]
    config: String,
    #[arg(long, value_enum, default_value = "equal")]
    policy: PolicyArg,
    /// The framework's preemption mechanism. Default: ctxsw, or drain under --alloc zorua or
    /// wlm (the only one they run with).
    #[arg(long, value_enum)]
    preempt: Option<MechanismArg>,
    /// Repetitions of each measurement (the fastest is kept; 1..=100).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    reps: u32,
    /// The block measured: the framework (`sched`) or its engine, or a per-SM block on every
    /// SM (`oplog`, `oldata`, `rq`, `rq-ol`, with the fault scheme each implies; `--config thesis16`).
    #[arg(long, value_parser = crate::args::unit_name(), default_value = "sched")]
    unit: UnitKind,
    /// Slicing inside the framework under `--policy`, this slicing policy its quota
    /// controller (as for `mpgpu cosim --policy P --slicing S`; units but sched and slice).
    #[arg(long, value_enum)]
    slicing: Option<crate::args::SlicingArg>,
    #[command(flatten)]
    vm: crate::args::VmArgs,
}

/// Co-simulation speed: the slot holding the model alone, then each backend in the loop with
/// the clock gated and (the framework) clocked every cycle, then each backend's RTL alone.
pub fn bench_cosim(a: BenchCosimArgs) -> Result<()> {
    use mpgpu_tb::Backend;
    let w = load_workload(&a.workload)?;
    let mut cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    let unit = if a.unit.is_all() && a.slicing.is_some() { UnitKind::every_block_in_framework() } else { a.unit };
    unit.setup(&mut cfg);
    a.vm.apply(&mut cfg)?;
    let preempt = MechanismArg::or_default_for(a.preempt, &cfg);
    // (every run's options: the policy, and slicing inside the framework when asked)
    let options = || {
        let mut o = CosimOptions::new(a.policy.into(), preempt.into());
        o.unit = unit;
        if let Some(s) = a.slicing {
            (o.sliced, o.slicing) = (true, s.into());
        }
        o
    };
    // (Warped-Slicer's units are clocked while a repartition runs, like a per-SM block when
    // its SM asks: no every-cycle rows; clocking every cycle is the framework's)
    let per_sm = unit.gpu() != GpuKind::Framework;
    println!(
        "workload: {}\nconfig: {} ({} SMs), {}, best of {} runs each; the Verilator models are built first (cached)",
        w.description,
        cfg.name,
        cfg.num_sms(),
        if let Some(s) = a.slicing {
            format!("{unit}, policy {} with {} slicing inside the framework", mpgpu_ref::units::framework::Policy::from(a.policy).name(), mpgpu_ref::timing::slicer::Slicing::from(s).name())
        } else if unit.gpu() == GpuKind::Slicer {
            format!("{unit}: {}", unit.about())
        } else if per_sm { format!("{unit} on every SM, faults {:?}, paging {:?}", cfg.faults, cfg.paging.link) } else { format!("policy {}", mpgpu_ref::units::framework::Policy::from(a.policy).name()) },
        a.reps
    );
    // (a per-SM block is clocked when its SM asks something of it; "every cycle" is the
    // framework's)
    let mut rows = vec![("model alone", SlotMode::ModelAlone, Backend::RustHdl, false)];
    if !per_sm {
        rows.push(("model alone, every cycle", SlotMode::ModelAlone, Backend::RustHdl, true));
    }
    for b in [Backend::RustHdl, Backend::Verilator] {
        rows.push((if b == Backend::RustHdl { "rust-hdl in the loop, gated" } else { "verilator in the loop, gated" }, SlotMode::Lockstep, b, false));
        if !per_sm {
            rows.push((if b == Backend::RustHdl { "rust-hdl in the loop, every cycle" } else { "verilator in the loop, every cycle" }, SlotMode::Lockstep, b, true));
        }
        rows.push((if b == Backend::RustHdl { "rust-hdl alone, gated" } else { "verilator alone, gated" }, SlotMode::RtlAlone, b, false));
    }
    // Build the Verilator model before timing anything.
    let mut o = options();
    o.backend = Backend::Verilator;
    o.limits.max_cycles = 1;
    let _ = run_with(&cfg, &w, &o);
    println!("{:<36} {:>10} {:>10} {:>8} {:>12} {:>8}", "slot", "GPU cycles", "clocked", "seconds", "K cycles/s", "x model");
    let mut base = None;
    for (name, mode, backend, every) in rows {
        let mut best = f64::MAX;
        let mut last = None;
        for _ in 0..a.reps.max(1) {
            let mut o = options();
            o.mode = mode;
            o.backend = backend;
            o.every_cycle = every;
            let rep = run_with(&cfg, &w, &o).map_err(|e| anyhow!(e))?;
            if let Some(m) = &rep.mismatch {
                bail!("{name}: {m}");
            }
            best = best.min(rep.seconds);
            last = Some(rep);
        }
        let rep = last.unwrap();
        let cycles = rep.result.as_ref().map_or(0, |r| r.cycles);
        let rate = cycles as f64 / best;
        let b = *base.get_or_insert(rate);
        println!("{:<36} {:>10} {:>10} {:>8.3} {:>12.1} {:>8.2}", name, cycles, rep.cycles_checked, best, rate / 1e3, b / rate);
    }
    Ok(())
}

/// The units under the slicing dispatcher, for messages.
fn slicing_units() -> String {
    UnitKind::all().into_iter().filter(|u| u.gpu() == GpuKind::Slicer).map(|u| u.name()).collect::<Vec<_>>().join(", ")
}

/// The waveforms a unit of several writes, for messages: one per SM with the RTL of its per-SM
/// blocks, one of each global block.
fn waveform_list(unit: UnitKind) -> String {
    let mut parts = Vec::new();
    if unit.has_per_sm() {
        parts.push("one waveform per SM with the RTL".to_string());
    }
    parts.extend(unit.global_blocks().iter().map(|b| format!("one of {b}")));
    parts.join(" and ")
}
