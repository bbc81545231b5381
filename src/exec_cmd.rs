//! `mpgpu exec`: a library application (or an assembly file) run functionally, its output
//! checked.

use anyhow::{anyhow, bail, Result};
use mpgpu_ref::func::{Counts, FuncGpu, Launch};
use mpgpu_ref::library::{self, Bench};
use mpgpu_ref::program::rng;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// The most blocks a `--file` launch may have unless `--max-blocks` says otherwise.
const DEFAULT_MAX_BLOCKS: u64 = 1 << 24;

/// The most words of `--param` buffers, one or all together (256 MiB).
const MAX_BUFFER_WORDS: u32 = 1 << 26;

#[derive(clap::Args)]
pub struct ExecArgs {
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
    /// With --file: grid dimensions X[,Y[,Z]] (default 1).
    #[arg(long)]
    grid: Option<String>,
    /// With --file: block dimensions X[,Y[,Z]] (default: the kernel's .threads).
    #[arg(long)]
    block: Option<String>,
    /// With --file: a parameter word, in order: an integer, a float (1.5f), or a buffer
    /// `buf:WORDS[=zero|seq|rand|frand]` whose address is passed.
    #[arg(long = "param")]
    params: Vec<String>,
    /// With --file: print the first N words of every buffer after the run (default 8).
    #[arg(long)]
    dump: Option<usize>,
    /// The most warp-instructions one launch may execute; a launch past it stops with an error
    /// naming the kernel, the block, the warp and the PC where it was (an endless loop, most
    /// likely). The library's largest sizes stay below a fifth of the default.
    #[arg(long, default_value_t = 500_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_warp_insts: u64,
    /// With --file: the most blocks the launch may have (the product of the --grid
    /// dimensions; default 16777216); a larger grid is refused before it runs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_blocks: Option<u64>,
}

/// A functional GPU with the budget of `a`, showing a launch's blocks as they finish when
/// standard error is a terminal (the bar stays hidden otherwise).
fn func_gpu(a: &ExecArgs, label: &str) -> (FuncGpu, indicatif::ProgressBar) {
    let mut gpu = FuncGpu::new();
    gpu.max_warp_insts = a.max_warp_insts;
    let pb = indicatif::ProgressBar::new(1);
    pb.set_style(indicatif::ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} blocks ({elapsed})").unwrap().progress_chars("=> "));
    pb.set_prefix(label.to_string());
    let bar = pb.clone();
    gpu.progress = Some(Box::new(move |done, total| {
        // (drawing is rate-limited by the bar; setting it is cheap)
        bar.set_length(total);
        bar.set_position(done);
    }));
    (gpu, pb)
}

pub fn exec_cmd(a: ExecArgs) -> Result<ExitCode> {
    if let Some(file) = &a.file {
        if a.kernel.is_some() {
            bail!("give either a library kernel or --file, not both");
        }
        if a.size.is_some() {
            bail!("--size is a library application's problem size; with --file the launch is --grid, --block and --param");
        }
        return exec_file(file, &a);
    }
    // (the launch options describe a --file's launch; a library application launches its own)
    for (given, flag) in [(a.max_blocks.is_some(), "--max-blocks"), (a.entry.is_some(), "--entry"), (a.grid.is_some(), "--grid"), (a.block.is_some(), "--block"), (!a.params.is_empty(), "--param"), (a.dump.is_some(), "--dump")] {
        if given {
            bail!("{flag} describes the launch of an assembly file: it needs --file (a library application launches its own kernels)");
        }
    }
    let Some(name) = &a.kernel else {
        // No kernel named: run the whole library at its default sizes.
        if a.size.is_some() {
            bail!("--size needs a kernel name (sizes mean different things per kernel; see `mpgpu kernels`)");
        }
        let mut failed = 0;
        for b in library::library() {
            let mut prog = b.program(b.default_size, a.seed).map_err(|e| anyhow!(e))?;
            let (mut gpu, pb) = func_gpu(&a, b.name);
            let t = Instant::now();
            let counts = gpu.run(prog.as_mut()).map_err(|e| anyhow!("{e}"));
            pb.finish_and_clear();
            let counts = counts?;
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
    let (mut gpu, pb) = func_gpu(&a, name);
    let t = Instant::now();
    let counts = gpu.run(prog.as_mut()).map_err(|e| anyhow!("{e}"));
    pb.finish_and_clear();
    let counts = counts?;
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
        anyhow!("unknown kernel {}; the library has: {}", crate::checks::quoted(name), names.join(", "))
    })
}

fn print_counts(name: &str, size: u32, seed: u64, c: &Counts, secs: f64) {
    println!(
        "{}: size {size}, seed {seed}: {} launches, {} blocks, {} warp-instructions, {} thread-instructions ({:.1} active lanes/warp-inst), {:.3} s, {:.2} M warp-inst/s",
        crate::checks::shown(name),
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
    let text = crate::checks::read_asm(file)?;
    let ks = crate::checks::assemble(file, &text)?;
    let k = match &a.entry {
        Some(n) => ks.iter().find(|k| &k.name == n).ok_or_else(|| anyhow!("{}: no kernel {}", file.display(), crate::checks::quoted(n)))?,
        None => &ks[0],
    };
    let k = Arc::new(k.clone());
    let (mut gpu, pb) = func_gpu(a, &k.name);
    let mut r = rng(a.seed);
    let grid = parse_dims(a.grid.as_deref().unwrap_or("1"), "grid")?;
    let blocks = grid.iter().map(|&d| d as u128).product::<u128>();
    crate::checks::bounded(blocks, "blocks (the --grid product)", a.max_blocks.unwrap_or(DEFAULT_MAX_BLOCKS), "--max-blocks")?;
    let mut params = Vec::new();
    let mut bufs = Vec::new();
    // (the buffers' words in all, bounded like one buffer's)
    let mut words = 0u64;
    for (i, p) in a.params.iter().enumerate() {
        let bad = || anyhow!("--param #{} {}: expected an integer, a float like 1.5f, or buf:WORDS[=zero|seq|rand|frand]", i + 1, crate::checks::quoted(p));
        if let Some(spec) = p.strip_prefix("buf:") {
            let (n, init) = spec.split_once('=').unwrap_or((spec, "zero"));
            let n: u32 = n.parse().map_err(|_| bad())?;
            if n == 0 || n > MAX_BUFFER_WORDS {
                bail!("--param #{} {}: buffer size must be 1..={MAX_BUFFER_WORDS} words", i + 1, crate::checks::quoted(p));
            }
            words += n as u64;
            if words > MAX_BUFFER_WORDS as u64 {
                bail!("--param #{}: the buffers hold {words} words in all, more than {MAX_BUFFER_WORDS} (256 MiB)", i + 1);
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
    let block = match &a.block {
        Some(b) => parse_dims(b, "block")?,
        None => [k.threads, 1, 1],
    };
    let launch = Launch { kernel: k.clone(), grid, block, params };
    let t = Instant::now();
    let counts = gpu.launch(&launch).map_err(|e| anyhow!("{e}"));
    pb.finish_and_clear();
    let counts = counts?;
    print_counts(&k.name, 0, a.seed, &counts, t.elapsed().as_secs_f64());
    for (i, addr, n) in bufs {
        let words = gpu.mem.read_u32s(addr, (n as usize).min(a.dump.unwrap_or(8)));
        let shown: Vec<String> = words.iter().map(|w| format!("{w:#010x}")).collect();
        println!("param #{} buffer @{addr:#010x} ({n} words): {}", i + 1, shown.join(" "));
    }
    println!("OK: ran without faults");
    Ok(ExitCode::SUCCESS)
}
