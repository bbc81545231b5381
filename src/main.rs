//! The `mpgpu` command line.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use mpgpu_ref::func::{Counts, FuncGpu, Launch};
use mpgpu_ref::library::{self, Bench};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::program::rng;
use mpgpu_ref::timing::metrics::{metrics, Metrics};
use mpgpu_ref::timing::gpu::run_workload_with;
use mpgpu_ref::timing::{RunLimits, RunResult};
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

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
    Asm {
        file: PathBuf,
        #[arg(long)]
        disasm: bool,
    },
    /// List the GPU configuration presets.
    Configs,
    /// Run a multiprogrammed workload on the cycle-level GPU model; with no workload, the
    /// embedded default. Each process also runs alone for the metrics (NTT, ANTT, STP, fairness).
    Run(RunArgs),
    /// Co-simulate an RTL block inside the whole GPU: the RTL drives the GPU while its reference
    /// model runs beside it and every cycle is compared. Exits non-zero on the first mismatch
    /// (with a report and a waveform of the run).
    Cosim(CosimArgs),
    /// Write a block's Verilog to target/verilog/<block>.v.
    Verilog {
        /// Block name: sched (the whole scheduling framework), dss or prio (its policy engines
        /// alone) or lowest_first.
        block: String,
        /// SMs the scheduling blocks scan (1..=16).
        #[arg(long, default_value_t = 16)]
        sms: usize,
        /// Output directory.
        #[arg(long, default_value = "target/verilog")]
        out: PathBuf,
    },
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
    Run {
        workload: Option<PathBuf>,
        #[arg(long, default_value = "gtx480")]
        config: String,
        /// Also measure how run time grows with the number of SMs (1..64) and the workload length.
        #[arg(long)]
        scaling: bool,
    },
    /// Functional execution speed over the whole library, in warp-instructions per second.
    Exec {
        /// Repetitions per application (the best is kept).
        #[arg(long, default_value_t = 3)]
        reps: u32,
        /// Scale every application's default size by this factor (divides it when below 1).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Workload TOML file (see workloads/); the embedded default when absent.
    workload: Option<PathBuf>,
    /// A preset name (see `mpgpu configs`) or a TOML file.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Write the results as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Stop with a report if the workload has not finished by this cycle.
    #[arg(long)]
    max_cycles: Option<u64>,
    /// Skip the alone runs (no NTT/ANTT/STP/fairness).
    #[arg(long)]
    no_alone: bool,
    /// Schedule with the kernel scheduling framework: fcfs, npq, ppq-excl, ppq-shared, dss or
    /// equal (default: the baseline dispatcher, which lets kernels share SMs).
    #[arg(long)]
    policy: Option<String>,
    /// Preemption mechanism of the framework: ctxsw or drain.
    #[arg(long, default_value = "ctxsw")]
    preempt: String,
}

#[derive(clap::Args)]
struct CosimArgs {
    /// Workload TOML file; the embedded default when absent.
    workload: Option<PathBuf>,
    /// The unit in the loop: sched (the whole scheduling framework as RTL: tables, PTBQs, SM
    /// driver and policy engine; outputs and tables compared every cycle) or engine (only the
    /// framework's policy engine as RTL: the DSS engine for dss and equal, the priority engine
    /// for the others).
    #[arg(long, default_value = "sched")]
    unit: String,
    /// Framework policy: fcfs, npq, ppq-excl, ppq-shared, dss or equal.
    #[arg(long, default_value = "equal")]
    policy: String,
    /// Preemption mechanism: ctxsw or drain.
    #[arg(long, default_value = "ctxsw")]
    preempt: String,
    /// A preset (at most 16 identical SMs) or a TOML file.
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Write the run's waveform here (VCD).
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// With --unit sched: clock and compare the framework on every GPU cycle, instead of gating
    /// its clock while it is idle with no input (same results, slower).
    #[arg(long)]
    every_cycle: bool,
    /// Test-only: co-simulate a deliberately broken RTL variant (sched: the PTBQ popped last in
    /// first out; engine: DSS ties to the highest index, the priority engine's victim the
    /// oldest kernel's SM).
    #[arg(long, hide = true)]
    broken: bool,
}

#[derive(clap::Args)]
struct ExecArgs {
    /// Library application (see `mpgpu kernels`).
    kernel: Option<String>,
    /// Problem size (its meaning is given by `mpgpu kernels`).
    #[arg(long)]
    size: Option<u32>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run this assembly file instead, with the launch given by the options below.
    #[arg(long)]
    file: Option<PathBuf>,
    /// With --file: the kernel to launch (default: the file's only or first kernel).
    #[arg(long = "entry")]
    entry: Option<String>,
    /// With --file: grid dimensions X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// With --file: block dimensions X[,Y[,Z]] (default: the kernel's .threads).
    #[arg(long)]
    block: Option<String>,
    /// With --file: a parameter word, in order: an integer, a float (1.5f), or a buffer
    /// `buf:WORDS[=zero|seq|rand|frand]` whose address is passed.
    #[arg(long = "param")]
    params: Vec<String>,
    /// With --file: print the first N words of every buffer after the run.
    #[arg(long, default_value_t = 8)]
    dump: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Kernels => {
            kernels()?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Exec(a) => exec(a),
        Cmd::Asm { file, disasm } => {
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
        Cmd::Configs => {
            println!("{:<11} {:>4} {:>6} {:>7} {:>7} {:>6} {:>7} {:>6} {:>8}  {}", "preset", "SMs", "MHz", "threads", "regs", "blocks", "smem", "sched", "DRAM GB/s", "description");
            for (name, _) in mpgpu_ref::config::PRESETS {
                let c = mpgpu_ref::config::GpuConfig::preset(name).unwrap();
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
        Cmd::Run(a) => run_cmd(a),
        Cmd::Cosim(a) => cosim_cmd(a),
        Cmd::Bench { what: BenchCmd::Run { workload, config, scaling } } => {
            bench_run(workload, &config, scaling)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Verilog { block, sms, out } => {
            let v = mpgpu_rtl::verilog::verilog_sized(&block, sms).map_err(|e| anyhow!(e))?;
            std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
            let path = out.join(format!("{block}.v"));
            std::fs::write(&path, v).with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench { what: BenchCmd::Exec { reps, scale } } => {
            bench_exec(reps, scale)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn kernels() -> Result<()> {
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
    Ok(())
}

fn exec(a: ExecArgs) -> Result<ExitCode> {
    if let Some(file) = &a.file {
        if a.kernel.is_some() {
            bail!("give either a library kernel or --file, not both");
        }
        return exec_file(file, &a);
    }
    let Some(name) = &a.kernel else {
        // No kernel named: run the whole library at its default sizes.
        if a.size.is_some() {
            bail!("--size needs a kernel name (sizes mean different things per kernel; see `mpgpu kernels`)");
        }
        let mut failed = 0;
        for b in library::library() {
            let mut prog = b.program(b.default_size, a.seed).map_err(|e| anyhow!(e))?;
            let mut gpu = FuncGpu::new();
            let t = Instant::now();
            let counts = gpu.run(prog.as_mut()).map_err(|e| anyhow!("{e}"))?;
            print_counts(b.name, b.default_size, a.seed, &counts, t.elapsed().as_secs_f64());
            match prog.verify(&gpu.mem) {
                Ok(()) => println!("  PASS"),
                Err(e) => {
                    failed += 1;
                    println!("  FAIL: {e}");
                }
            }
        }
        println!("{}", if failed == 0 { "all PASS".to_string() } else { format!("{failed} FAILED") });
        return Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    };
    let bench = find_bench(name)?;
    let size = a.size.unwrap_or(bench.default_size);
    let mut prog = bench.program(size, a.seed).map_err(|e| anyhow!(e))?;
    let mut gpu = FuncGpu::new();
    let t = Instant::now();
    let counts = gpu.run(prog.as_mut()).map_err(|e| anyhow!("{e}"))?;
    let secs = t.elapsed().as_secs_f64();
    print_counts(name, size, a.seed, &counts, secs);
    match prog.verify(&gpu.mem) {
        Ok(()) => {
            println!("PASS");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            println!("FAIL: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn find_bench(name: &str) -> Result<Bench> {
    library::find(name).ok_or_else(|| {
        let names: Vec<_> = library::library().iter().map(|b| b.name).collect();
        anyhow!("unknown kernel `{name}`; the library has: {}", names.join(", "))
    })
}

fn print_counts(name: &str, size: u32, seed: u64, c: &Counts, secs: f64) {
    println!(
        "{name}: size {size}, seed {seed}: {} launches, {} blocks, {} warp-instructions, {} thread-instructions ({:.1} active lanes/warp-inst), {:.3} s, {:.2} M warp-inst/s",
        c.launches,
        c.blocks,
        c.warp_insts,
        c.thread_insts,
        c.thread_insts as f64 / c.warp_insts.max(1) as f64,
        secs,
        c.warp_insts as f64 / secs / 1e6
    );
}

fn parse_dims(s: &str, what: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("--{what} `{s}`: expected X[,Y[,Z]]");
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p.parse().map_err(|_| anyhow!("--{what} `{s}`: `{p}` is not a positive integer"))?;
        if d[i] == 0 {
            bail!("--{what} `{s}`: dimensions must be at least 1");
        }
    }
    Ok(d)
}

fn exec_file(file: &PathBuf, a: &ExecArgs) -> Result<ExitCode> {
    use rand::Rng;
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let ks = mpgpu_ref::assemble(&file.display().to_string(), &text).map_err(|e| anyhow!("{e}"))?;
    let k = match &a.entry {
        Some(n) => ks.iter().find(|k| &k.name == n).ok_or_else(|| anyhow!("{}: no kernel `{n}`", file.display()))?,
        None => &ks[0],
    };
    let k = Arc::new(k.clone());
    let mut gpu = FuncGpu::new();
    let mut r = rng(a.seed);
    let mut params = Vec::new();
    let mut bufs = Vec::new();
    for (i, p) in a.params.iter().enumerate() {
        let bad = || anyhow!("--param #{} `{p}`: expected an integer, a float like 1.5f, or buf:WORDS[=zero|seq|rand|frand]", i + 1);
        if let Some(spec) = p.strip_prefix("buf:") {
            let (n, init) = spec.split_once('=').unwrap_or((spec, "zero"));
            let n: u32 = n.parse().map_err(|_| bad())?;
            if n == 0 || n > 1 << 26 {
                bail!("--param #{} `{p}`: buffer size must be 1..=67108864 words", i + 1);
            }
            let data: Vec<u32> = match init {
                "zero" => vec![0; n as usize],
                "seq" => (0..n).collect(),
                "rand" => (0..n).map(|_| r.gen()).collect(),
                "frand" => (0..n).map(|_| r.gen::<f32>().to_bits()).collect(),
                _ => return Err(bad()),
            };
            let addr = gpu.mem.alloc_u32s(&data);
            bufs.push((i, addr, n));
            params.push(addr);
        } else if let Some(f) = p.strip_suffix('f') {
            params.push(f.parse::<f32>().map_err(|_| bad())?.to_bits());
        } else if let Some(h) = p.strip_prefix("0x") {
            params.push(u32::from_str_radix(h, 16).map_err(|_| bad())?);
        } else {
            let v: i64 = p.parse().map_err(|_| bad())?;
            if v < i32::MIN as i64 || v > u32::MAX as i64 {
                return Err(bad());
            }
            params.push(v as u32);
        }
    }
    let grid = parse_dims(&a.grid, "grid")?;
    let block = match &a.block {
        Some(b) => parse_dims(b, "block")?,
        None => [k.threads, 1, 1],
    };
    let launch = Launch { kernel: k.clone(), grid, block, params };
    let t = Instant::now();
    let counts = gpu.launch(&launch).map_err(|e| anyhow!("{e}"))?;
    print_counts(&k.name, 0, a.seed, &counts, t.elapsed().as_secs_f64());
    for (i, addr, n) in bufs {
        let words = gpu.mem.read_u32s(addr, (n as usize).min(a.dump));
        let shown: Vec<String> = words.iter().map(|w| format!("{w:#010x}")).collect();
        println!("param #{} buffer @{addr:#010x} ({n} words): {}", i + 1, shown.join(" "));
    }
    println!("OK: ran without faults");
    Ok(ExitCode::SUCCESS)
}

fn bench_exec(reps: u32, scale: f64) -> Result<()> {
    println!("functional execution, single-threaded, best of {reps}");
    println!("{:<10} {:>9} {:>14} {:>10} {:>14}", "app", "size", "warp-insts", "seconds", "M warp-inst/s");
    let mut rates = Vec::new();
    let (mut total_insts, mut total_secs) = (0u64, 0f64);
    for b in library::library() {
        let size = ((b.default_size as f64 * scale).round() as u32).max(1);
        let mut best = f64::INFINITY;
        let mut insts = 0;
        for _ in 0..reps.max(1) {
            let mut prog = b.program(size, 1).map_err(|e| anyhow!(e))?;
            let mut gpu = FuncGpu::new();
            prog.setup(&mut gpu.mem);
            // Time the launches only, not the host's input generation.
            let t = Instant::now();
            let mut c = Counts::default();
            while let Some(l) = prog.next_launch(&gpu.mem) {
                c += gpu.launch(&l).map_err(|e| anyhow!("{e}"))?;
            }
            best = best.min(t.elapsed().as_secs_f64());
            prog.verify(&gpu.mem).map_err(|e| anyhow!("{}: {e}", b.name))?;
            insts = c.warp_insts;
        }
        let rate = insts as f64 / best;
        rates.push(rate);
        total_insts += insts;
        total_secs += best;
        println!("{:<10} {:>9} {:>14} {:>10.4} {:>14.2}", b.name, size, insts, best, rate / 1e6);
    }
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    println!("mean of per-application rates: {:.2} M warp-inst/s", mean / 1e6);
    println!("aggregate (all instructions / all time): {:.2} M warp-inst/s", total_insts as f64 / total_secs / 1e6);
    Ok(())
}

fn load_workload(path: &Option<PathBuf>) -> Result<Workload> {
    match path {
        Some(p) => Workload::load(p).map_err(|e| anyhow!("{e}")),
        None => Ok(Workload::default_workload()),
    }
}

fn progress_bar(label: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(1);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} programs, {msg} ({elapsed})")
            .unwrap()
            .progress_chars("=> "),
    );
    pb.set_prefix(label.to_string());
    pb
}

fn simulate(cfg: &GpuConfig, w: &Workload, limits: RunLimits, label: &str) -> Result<(RunResult, f64)> {
    simulate_with(cfg, w, None, limits, label)
}

fn simulate_with(cfg: &GpuConfig, w: &Workload, sched: Option<(Policy, Mechanism)>, limits: RunLimits, label: &str) -> Result<(RunResult, f64)> {
    let pb = progress_bar(label);
    let t = Instant::now();
    let r = run_workload_with(cfg, w, sched, limits, &mut |cycle, done, total| {
        pb.set_length(total);
        pb.set_position(done);
        pb.set_message(format!("cycle {cycle}"));
    });
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    r.map(|r| (r, secs)).map_err(|e| anyhow!("{label}: {e}"))
}

fn run_cmd(a: RunArgs) -> Result<ExitCode> {
    let w = load_workload(&a.workload)?;
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    let limits = RunLimits { max_cycles: a.max_cycles.unwrap_or(RunLimits::default().max_cycles), ..RunLimits::default() };
    let sched = match &a.policy {
        None => None,
        Some(p) => {
            let policy = Policy::parse(p).ok_or_else(|| anyhow!("--policy `{p}`: expected fcfs, npq, ppq-excl, ppq-shared, dss or equal"))?;
            let mech = Mechanism::parse(&a.preempt).ok_or_else(|| anyhow!("--preempt `{}`: expected ctxsw or drain", a.preempt))?;
            Some((policy, mech))
        }
    };
    println!("workload: {}", w.description);
    println!("config:   {} ({} SMs at {} MHz, {} GB/s)", cfg.name, cfg.num_sms(), cfg.core_clock_mhz, cfg.memory.dram_bandwidth_gbs);
    let (shared, secs) = simulate_with(&cfg, &w, sched, limits, "shared")?;
    println!("blocks scheduled by {}", shared.dispatcher);
    let mut alone = Vec::new();
    if !a.no_alone && w.processes.len() > 1 {
        for p in &w.processes {
            // Alone, a process has the whole GPU whatever the policy: the baseline measures it.
            let solo = Workload { description: format!("{} alone", p.name), processes: vec![p.clone()] };
            alone.push(simulate_with(&cfg, &solo, sched, limits, &p.name)?.0);
        }
    } else if !a.no_alone {
        alone.push(shared.clone());
    }
    let m = (!alone.is_empty()).then(|| metrics(&shared, &alone));
    print_result(&shared, m.as_ref(), secs);
    if let Some(path) = &a.json {
        let j = serde_json::json!({ "workload": w.description, "run": shared, "metrics": m, "alone": alone });
        std::fs::write(path, serde_json::to_string_pretty(&j)?).with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let ok = shared.processes.iter().all(|p| p.verified);
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn print_result(r: &RunResult, m: Option<&Metrics>, secs: f64) {
    println!(
        "cycles {}  warp-insts {}  thread-insts {}  IPC {:.2}  occupancy {:.1}%  DRAM {:.1} B/cycle ({:.1}% of peak)  L1 hit {:.1}%  L2 hit {:.1}%",
        r.cycles,
        r.warp_insts,
        r.thread_insts,
        r.ipc,
        100.0 * r.occupancy,
        r.dram_bytes_per_cycle,
        100.0 * r.dram_utilisation,
        100.0 * r.sm.l1_hits as f64 / (r.sm.l1_hits + r.sm.l1_misses).max(1) as f64,
        100.0 * r.mem.l2_hits as f64 / (r.mem.l2_hits + r.mem.l2_misses).max(1) as f64
    );
    println!(
        "simulated in {:.2} s: {:.2} M warp-inst/s, {:.0} K cycles/s ({:.1}% of cycles stepped, SMs awake {:.1}% of SM-cycles)",
        secs,
        r.warp_insts as f64 / secs / 1e6,
        r.cycles as f64 / secs / 1e3,
        100.0 * r.stepped_cycles as f64 / r.cycles.max(1) as f64,
        100.0 * r.sm.awake_cycles as f64 / (r.cycles.max(1) as f64 * r.sm_count as f64)
    );
    println!("{:<14} {:>10} {:>12} {:>12} {:>7} {:>9}  {}", "process", "arrival", "turnaround", "alone", "NTT", "launches", "output");
    for (i, p) in r.processes.iter().enumerate() {
        let (alone, ntt) = m.map_or((String::from("-"), String::from("-")), |m| (m.processes[i].t_alone.to_string(), format!("{:.3}", m.processes[i].ntt)));
        let out = if p.verified { "PASS".to_string() } else { format!("FAIL {}", p.failures.join("; ")) };
        println!("{:<14} {:>10} {:>12} {:>12} {:>7} {:>9}  {}", p.name, p.arrival, p.turnaround, alone, ntt, p.launches, out);
    }
    if let Some(m) = m {
        println!("ANTT {:.3}  STP {:.3}  fairness {:.3}", m.antt, m.stp, m.fairness);
    }
    let total: u64 = r.stalls.iter().map(|s| s.1).sum::<u64>().max(1);
    let parts: Vec<String> = r.stalls.iter().map(|(n, v)| format!("{n} {:.1}%", 100.0 * *v as f64 / total as f64)).collect();
    println!("scheduler cycles: {}", parts.join(", "));
    println!("{:<14} {:<14} {:>7} {:>10} {:>10} {:>10}", "launch of", "kernel", "blocks", "ready", "start", "end");
    for l in &r.launches {
        println!("{:<14} {:<14} {:>7} {:>10} {:>10} {:>10}", l.process, l.kernel, l.blocks, l.ready, l.start, l.end);
    }
}

fn bench_run(workload: Option<PathBuf>, config: &str, scaling: bool) -> Result<()> {
    let w = load_workload(&workload)?;
    let cfg = GpuConfig::from_arg(config).map_err(|e| anyhow!("{e}"))?;
    let limits = RunLimits::default();
    let measure = |cfg: &GpuConfig, w: &Workload| -> Result<(RunResult, f64)> {
        // Best of 3 wall-clock times of the same deterministic run.
        let mut best = None;
        for _ in 0..3 {
            let (r, s) = simulate(cfg, w, limits, "bench")?;
            if best.as_ref().is_none_or(|(_, b): &(RunResult, f64)| s < *b) {
                best = Some((r, s));
            }
        }
        Ok(best.unwrap())
    };
    let (r, s) = measure(&cfg, &w)?;
    println!("timing model, single-threaded, best of 3: {} on {} ({} SMs)", w.description, cfg.name, cfg.num_sms());
    println!(
        "{} cycles, {} warp-insts in {:.3} s: {:.3} M warp-inst/s, {:.1} K cycles/s",
        r.cycles,
        r.warp_insts,
        s,
        r.warp_insts as f64 / s / 1e6,
        r.cycles as f64 / s / 1e3
    );
    if scaling {
        println!("\nscaling with the number of SMs (one SM group of {}, same workload):", cfg.name);
        println!("{:>5} {:>12} {:>14} {:>10} {:>14} {:>12}", "SMs", "cycles", "warp-insts", "seconds", "M warp-inst/s", "us/SM-cycle");
        for n in [1u32, 2, 4, 8, 16, 32, 64] {
            let mut c = cfg.clone();
            c.sm.truncate(1);
            c.sm[0].count = n;
            let (r, s) = measure(&c, &w)?;
            println!("{:>5} {:>12} {:>14} {:>10.3} {:>14.3} {:>12.4}", n, r.cycles, r.warp_insts, s, r.warp_insts as f64 / s / 1e6, s * 1e6 / (r.cycles as f64 * n as f64));
        }
        println!("\nscaling with the workload length (every process repeated k times):");
        println!("{:>5} {:>12} {:>14} {:>10} {:>14}", "k", "cycles", "warp-insts", "seconds", "M warp-inst/s");
        for k in [1u32, 2, 4] {
            let mut w2 = w.clone();
            for p in &mut w2.processes {
                p.repeat *= k;
            }
            let (r, s) = measure(&cfg, &w2)?;
            println!("{:>5} {:>12} {:>14} {:>10.3} {:>14.3}", k, r.cycles, r.warp_insts, s, r.warp_insts as f64 / s / 1e6);
        }
    }
    Ok(())
}

fn cosim_cmd(a: CosimArgs) -> Result<ExitCode> {
    if a.unit != "sched" && a.unit != "engine" {
        bail!("--unit `{}`: expected sched (the whole scheduling framework in RTL) or engine (only its policy engine)", a.unit);
    }
    let policy = Policy::parse(&a.policy).ok_or_else(|| anyhow!("--policy `{}`: expected fcfs, npq, ppq-excl, ppq-shared, dss or equal", a.policy))?;
    let mech = Mechanism::parse(&a.preempt).ok_or_else(|| anyhow!("--preempt `{}`: expected ctxsw or drain", a.preempt))?;
    let w = load_workload(&a.workload)?;
    let cfg = GpuConfig::from_arg(&a.config).map_err(|e| anyhow!("{e}"))?;
    println!("workload: {}", w.description);
    println!("config:   {} ({} SMs); unit {} in the loop, policy {}, {:?}", cfg.name, cfg.num_sms(), a.unit, a.policy, mech);
    let t = Instant::now();
    let mismatch_vcd = PathBuf::from("target/cosim/mismatch.vcd");
    let rep = if a.unit == "sched" {
        let faults = mpgpu_rtl::SchedFaults { ptbq_lifo: a.broken, ..Default::default() };
        mpgpu_tb::cosim::run_sched(&cfg, &w, policy, mech, faults, a.every_cycle, a.vcd.as_deref(), &mismatch_vcd)
    } else {
        mpgpu_tb::cosim::run(&cfg, &w, policy, mech, a.broken, a.vcd.as_deref(), &mismatch_vcd)
    }
    .map_err(|e| anyhow!(e))?;
    let secs = t.elapsed().as_secs_f64();
    let gpu_cycles = rep.result.as_ref().map_or(String::new(), |r| format!(" of {} GPU cycles", r.cycles));
    let gated = if a.unit == "sched" && !a.every_cycle { "; the framework's clock is gated while it is idle" } else { "" };
    println!("cycles checked: {}{gpu_cycles}{gated}  mismatches: {}", rep.cycles_checked, rep.mismatch.is_some() as u32);
    if let Some(r) = &rep.result {
        println!("simulated {} GPU cycles in {:.2} s ({:.0} K cycles/s with the RTL in the loop)", r.cycles, secs, r.cycles as f64 / secs / 1e3);
        print_result(r, None, secs);
    }
    if let Some(p) = &rep.vcd {
        println!("waveform: {}", p.display());
    }
    if let Some(m) = &rep.mismatch {
        eprintln!("{m}");
        if let Some(p) = &rep.vcd {
            eprintln!("waveform around the mismatch: {}", p.display());
        }
        return Ok(ExitCode::FAILURE);
    }
    if let Some(e) = &rep.error {
        bail!("{e}");
    }
    let ok = rep.result.as_ref().is_some_and(|r| r.processes.iter().all(|p| p.verified));
    println!("{}", if ok { "all outputs verified: PASS" } else { "FAIL: some outputs are wrong" });
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
