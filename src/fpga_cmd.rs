//! `mpgpu fpga`: a block through the FPGA flow (yosys synthesis for the ECP5, Xilinx 7-series
//! and iCE40; nextpnr-ecp5 place and route on the LFE5U-85F), with its cost and Fmax.

use anyhow::{anyhow, Context, Result};
use mpgpu_tb::registry::Block;
use mpgpu_tb::fpga::{default_venv, path_estimate, place_and_route, synthesize, synthesize_ring, Family, PathFamily, PnrReport, SynthReport, Tools, DEVICE};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct FpgaArgs {
    /// Block name (as for `mpgpu verilog`).
    #[arg(value_parser = crate::args::block_name(), required_unless_present = "gpu")]
    block: Option<&'static Block>,
    /// The whole GPU instead of one block: the cost of all the multiprogramming hardware of
    /// this configuration (a preset or a TOML file): the GPU-wide blocks once, for its SMs, and
    /// the per-SM blocks times its SMs; each block synthesized for the ECP5 and placed and
    /// routed alone (--synth-only: synthesis only), its storage beside the papers'. Results
    /// are cached by each block's Verilog under OUT/gpu/.
    #[arg(long, conflicts_with_all = ["block", "sms", "families", "no_io_ring", "estimate"])]
    gpu: Option<String>,
    /// With --gpu: also the whole controller as one design, synthesized and placed and routed
    /// on the 85F: the GPU-wide blocks and the per-SM blocks of N SMs, each in its ring of
    /// port registers (the table's "at most" figure bounds N; docs/fpga.md has the N that
    /// routes).
    #[arg(long, value_name = "N", conflicts_with = "synth_only")]
    controller: Option<usize>,
    /// The SMs a GPU-wide block serves (as for `mpgpu verilog`): 1..=16, default 16.
    #[arg(long)]
    sms: Option<usize>,
    /// The configuration the block is generated for (as for `mpgpu verilog`; a per-SM block's
    /// geometry); its results go to OUT/<block>-<config>/. Default: the block's own, OUT/<block>/.
    #[arg(long, conflicts_with = "gpu")]
    config: Option<String>,
    /// The scheduling framework (`sched`) built to share its SMs, for slicing inside it
    /// (`--policy` with `--slicing`; docs/warped-slicer.md, "Inside the scheduling framework");
    /// with --gpu, in the table and the controller (the table's summary OUT/gpu/CONFIG-sharing.json).
    #[arg(long)]
    sharing: bool,
    /// nextpnr's placer seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Target clock frequency (MHz).
    #[arg(long, default_value_t = 100.0, value_parser = positive_mhz)]
    freq: f64,
    /// Families to synthesize for (ecp5 is always one: place and route needs it).
    #[arg(long, value_delimiter = ',', default_values_t = vec![FamilyArg::Ecp5, FamilyArg::Xc7, FamilyArg::Ice40])]
    families: Vec<FamilyArg>,
    /// Synthesis only; no place and route.
    #[arg(long)]
    synth_only: bool,
    /// Place and route the block alone, timing only its register-to-register paths (by
    /// default it sits in a ring of registers on every port, so that paths through its
    /// inputs and outputs are timed too).
    #[arg(long)]
    no_io_ring: bool,
    /// Exit non-zero when the routed Fmax is below --freq.
    #[arg(long, conflicts_with_all = ["synth_only", "estimate"])]
    check: bool,
    /// Synthesize the block in its I/O ring and rank its paths by a delay estimate (every
    /// family of paths the estimate puts over the --freq period), without place and route:
    /// a minute or two where place and route takes several. The ranking is also written
    /// after every ring synthesis (`ring/paths.json`).
    #[arg(long, conflicts_with_all = ["synth_only", "no_io_ring"])]
    estimate: bool,
    /// Families of paths to print from the ranking.
    #[arg(long, default_value_t = 12)]
    paths: usize,
    /// Output directory; the block's files go to OUT/<block>/.
    #[arg(long, default_value = "target/fpga")]
    out: PathBuf,
}

/// A clock frequency in MHz: a finite number above zero.
fn positive_mhz(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("`{s}` is not a frequency in MHz (a number above 0)")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum, Debug)]
enum FamilyArg {
    Ecp5,
    Xc7,
    Ice40,
}

impl std::fmt::Display for FamilyArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FamilyArg::Ecp5 => "ecp5",
            FamilyArg::Xc7 => "xc7",
            FamilyArg::Ice40 => "ice40",
        })
    }
}

/// What `summary.json` holds.
#[derive(Serialize)]
struct Summary<'a> {
    block: &'a str,
    sms: usize,
    device: &'a str,
    yosys: String,
    nextpnr: String,
    synth: Vec<SynthReport>,
    pnr: Option<PnrReport>,
    /// Flip-flops of the I/O ring the block was placed and routed in (0: none).
    io_ring_ffs: u64,
    /// The families of paths over the period by the estimate before place and route (in the
    /// ring; empty without it).
    estimate: Vec<PathFamily>,
    verilog_seconds: f64,
}

pub fn fpga_cmd(a: FpgaArgs) -> Result<ExitCode> {
    let Some(block) = a.block else {
        return gpu_cmd(&a);
    };
    if a.controller.is_some() {
        anyhow::bail!("--controller builds the whole controller of a configuration: it needs --gpu CONFIG, not a block");
    }
    if a.sms.is_some() && !block.sized_by_sms() {
        anyhow::bail!("--sms sizes the GPU-wide blocks: `{}` is {}", block.name, block.about);
    }
    if a.sharing && block.name != "sched" {
        anyhow::bail!("--sharing builds the scheduling framework to share its SMs: it applies to `sched`, not `{}`", block.name);
    }
    let sms = a.sms.unwrap_or(mpgpu_spec::units::sched::MAX_SMS);
    let start = Instant::now();
    let cfg = match &a.config {
        Some(c) => mpgpu_ref::config::GpuConfig::from_arg(c).map_err(|e| anyhow!("--config: {e}"))?,
        None => block.default_gpu().map_err(|e| anyhow!(e))?,
    };
    let verilog = block.verilog_with(sms, &cfg, a.sharing).map_err(|e| anyhow!("block `{}` for --config {}: {e}", block.name, cfg.name))?.verilog;
    let name = if a.sharing { format!("{}-sharing", block.name) } else { block.name.to_string() };
    let dir = match &a.config {
        Some(_) => a.out.join(format!("{name}-{}", cfg.name)),
        None => a.out.join(&name),
    };
    let verilog_seconds = start.elapsed().as_secs_f64();
    crate::checks::output_dir(&dir, "--out")?;
    let tools = Tools::ensure(&default_venv(Path::new(".")), |m| eprintln!("{m}")).map_err(|e| anyhow!(e))?;
    let (yosys, nextpnr) = tools.versions().map_err(|e| anyhow!(e))?;
    let vpath = dir.join(format!("{}.v", block.name));
    std::fs::write(&vpath, verilog).with_context(|| format!("cannot write {}", vpath.display()))?;
    println!("fpga {} ({} SMs): {DEVICE}; {yosys}; {nextpnr}", block.name, sms);
    println!("  verilog           {:>7.1} s  {}", verilog_seconds, vpath.display());

    let mut synth = Vec::new();
    for (family, arg) in [(Family::Ecp5, FamilyArg::Ecp5), (Family::Xilinx7, FamilyArg::Xc7), (Family::Ice40, FamilyArg::Ice40)] {
        if family != Family::Ecp5 && !a.families.contains(&arg) {
            continue;
        }
        let r = synthesize(&tools, &vpath, family, &dir).map_err(|e| anyhow!(e))?;
        println!("  synth {:<11} {:>7.1} s  {}", family.name(), r.seconds, dir.join(format!("{}.log", family.name())).display());
        synth.push(r);
    }
    let mut estimate = Vec::new();
    let pnr = if a.synth_only {
        None
    } else {
        let ring = if a.no_io_ring {
            0
        } else {
            let start = Instant::now();
            let bits = synthesize_ring(&tools, &vpath, &dir.join("ring")).map_err(|e| anyhow!(e))?;
            println!("  synth ecp5 ring   {:>7.1} s  {} ({bits} port bits registered)", start.elapsed().as_secs_f64(), dir.join("ring").join("ring.log").display());
            estimate = rank_paths(&dir.join("ring"), a.freq, a.paths)?;
            bits
        };
        if a.estimate {
            None
        } else {
            eprintln!("  placing and routing (large blocks take minutes) ...");
            let pdir = if a.no_io_ring { dir.clone() } else { dir.join("ring") };
            let r = place_and_route(&tools, &pdir, a.seed, a.freq).map_err(|e| anyhow!(e))?;
            println!("  place and route   {:>7.1} s  {}", r.seconds, pdir.join("pnr.log").display());
            Some((r, ring))
        }
    };

    println!();
    println!("  {:<6} {:>8} {:>8} {:>7} {:>7} {:>9} {:>5} {:>4}", "family", "LUTs", "FFs", "carry", "muxes", "dist RAM", "BRAM", "DSP");
    for r in &synth {
        println!(
            "  {:<6} {:>8} {:>8} {:>7} {:>7} {:>9} {:>5} {:>4}",
            r.family.name(),
            r.group("lut"),
            r.group("ff"),
            r.group("carry"),
            r.group("mux"),
            r.group("dist_ram"),
            r.group("bram"),
            r.group("dsp")
        );
    }
    println!("  (synthesis cell counts: LUT4 / LUT1-6 / SB_LUT4; ECP5 distributed RAM is TRELLIS_DPR16X4 (16x4 bits), block RAM DP16KD (18 Kbit); xc7 RAMB18/36; iCE40 SB_RAM40_4K)");
    let mut ok = true;
    if let Some((p, ring)) = &pnr {
        let u = |r: &str| {
            let (used, avail) = p.utilization.get(r).copied().unwrap_or((0, 0));
            format!("{used}/{avail}")
        };
        println!();
        let how = if *ring > 0 { format!("in a ring of {ring} I/O flip-flops, included in these counts") } else { "register-to-register paths only".to_string() };
        println!(
            "  routed on {DEVICE} (out of context, {how}, seed {}): {} logic cells, {} flip-flops, {} distributed-RAM cells, {} DP16KD",
            p.seed,
            u("TRELLIS_COMB"),
            u("TRELLIS_FF"),
            u("TRELLIS_RAMW"),
            u("DP16KD")
        );
        match p.fmax_mhz {
            Some(f) => {
                ok = f >= a.freq;
                println!("  Fmax {f:.1} MHz (target {} MHz: {})", a.freq, if ok { "PASS" } else { "FAIL" });
                if let (Some(first), Some(last)) = (p.critical_path.first(), p.critical_path.last()) {
                    let total: f64 = p.critical_path.iter().map(|h| h.1).sum();
                    println!("  critical path: {} -> {} ({} hops, {total:.2} ns)", first.0, last.0, p.critical_path.len());
                }
            }
            None => println!("  Fmax: no register-to-register path (a combinational block)"),
        }
    }
    let io_ring_ffs = pnr.as_ref().map(|p| p.1).unwrap_or(0);
    let summary = Summary { block: block.name, sms, device: DEVICE, yosys, nextpnr, synth, pnr: pnr.map(|p| p.0), io_ring_ffs, estimate, verilog_seconds };
    let spath = dir.join("summary.json");
    std::fs::write(&spath, serde_json::to_string_pretty(&summary)?).with_context(|| format!("cannot write {}", spath.display()))?;
    println!("  summary: {}", spath.display());
    Ok(if a.check && !ok { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Ranks the paths of the ring's ECP5 netlist (`dir/ecp5.json`) by the estimate of
/// [`path_estimate`], writes them to `dir/paths.json` and prints the worst `show` families.
fn rank_paths(dir: &Path, freq: f64, show: usize) -> Result<Vec<PathFamily>> {
    let path = dir.join("ecp5.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let period = 1000.0 / freq;
    let fams = path_estimate(&text, "mpgpu_io_ring", period).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let out = dir.join("paths.json");
    std::fs::write(&out, serde_json::to_string_pretty(&fams)?).with_context(|| format!("cannot write {}", out.display()))?;
    let bits: usize = fams.iter().map(|f| f.bits).sum();
    println!(
        "  path estimate: {} families of paths ({bits} endpoint bits) over the {period:.2} ns period, before place and route (LUT level {:.2} ns with routing); {}",
        fams.len(),
        mpgpu_tb::fpga::EST_LUT_NS,
        out.display()
    );
    for f in fams.iter().take(show) {
        println!("    {:>6.2} ns {:>2} LUTs {:>4} bits  {} -> {}.{}", f.ns, f.luts, f.bits, f.start, f.end, f.pin);
    }
    if fams.len() > show {
        println!("    ... {} more (--paths N)", fams.len() - show);
    }
    Ok(fams)
}

/// `mpgpu fpga --gpu CONFIG`: the whole GPU's multiprogramming hardware (`mpgpu_tb::gpu_cost`).
fn gpu_cmd(a: &FpgaArgs) -> Result<ExitCode> {
    use mpgpu_tb::gpu_cost::{block_cost, gpu_blocks, paper_storage, Row, DEVICE_DP16KD, DEVICE_FF, DEVICE_LUT4, DP16KD_BITS};
    use mpgpu_tb::registry::{Scope, BLOCKS};
    let arg = a.gpu.as_deref().expect("--gpu is given when no block is");
    let cfg = mpgpu_ref::config::GpuConfig::from_arg(arg).map_err(|e| anyhow!("--gpu: {e}"))?;
    let sms = cfg.num_sms() as usize;
    let max = mpgpu_spec::units::sched::MAX_SMS;
    if sms > max {
        anyhow::bail!("--gpu {arg}: `{}` has {sms} SMs; the GPU-wide blocks are built for 1..={max}", cfg.name);
    }
    if let Some(n) = a.controller {
        if !(1..=sms).contains(&n) {
            anyhow::bail!("--controller {n}: expected 1..={sms} (the SMs of `{}`)", cfg.name);
        }
    }
    let out = a.out.join("gpu");
    crate::checks::output_dir(&out, "--out")?;
    let tools = Tools::ensure(&default_venv(Path::new(".")), |m| eprintln!("{m}")).map_err(|e| anyhow!(e))?;
    let (yosys, nextpnr) = tools.versions().map_err(|e| anyhow!(e))?;
    let sharing = if a.sharing { ", the framework built to share its SMs (--sharing)" } else { "" };
    println!("fpga --gpu {} ({sms} SMs{sharing}): {DEVICE}; {yosys}; {nextpnr}", cfg.name);
    let route = (!a.synth_only).then_some((a.seed, a.freq));
    let mut rows = Vec::new();
    // (a block that cannot be built for this configuration is left out, with the reason)
    let mut left_out = Vec::new();
    let mut blocks = Vec::new();
    for b in gpu_blocks(BLOCKS) {
        match b.verilog_with(sms, &cfg, a.sharing) {
            Ok(rtl) => blocks.push((b, rtl.verilog)),
            Err(e) => left_out.push(format!("{}: {e}", b.name)),
        }
    }
    for &(b, ref verilog) in &blocks {
        let cost = block_cost(&tools, b, sms, verilog, &out, route, |m| eprintln!("{m}")).map_err(|e| anyhow!("{}: {e}", b.name))?;
        let count = if b.scope == Scope::PerSm { sms } else { 1 };
        rows.push(Row { cost, scope: b.scope, count });
    }
    let kbit = |bits: u64| format!("{:.1}", bits as f64 / 1024.0);
    println!();
    println!("  one of each                                                                     | all of them");
    println!(
        "  {:<7} {:<7} {:>3} {:>7} {:>7} {:>9} {:>9} {:>9} {:>8} | {:>7} {:>7} {:>9} {:>9} {:>10}",
        "block", "where", "n", "LUT4", "FF", "BRAM Kb", "dRAM Kb", "state B", "Fmax", "LUT4", "FF", "BRAM Kb", "dRAM Kb", "state B"
    );
    // One GPU-wide and one SM's worth: LUT4, FF, DP16KD, distributed-RAM bits, state bits.
    let (mut global, mut per_sm) = ([0u64; 5], [0u64; 5]);
    let mut slow = Vec::new();
    for r in &rows {
        let c = &r.cost;
        let n = r.count as u64;
        let fmax = match (c.routed, c.fmax_mhz) {
            (None, _) => "-".to_string(),
            (Some(_), None) => "comb.".to_string(),
            (Some((_, target)), Some(f)) => {
                if f < target {
                    slow.push(format!("{} {f:.1} MHz", c.block));
                }
                format!("{f:.1}")
            }
        };
        println!(
            "  {:<7} {:<7} {:>3} {:>7} {:>7} {:>9} {:>9} {:>9.0} {:>8} | {:>7} {:>7} {:>9} {:>9} {:>10.0}",
            c.block,
            if r.scope == Scope::PerSm { "per SM" } else { "GPU" },
            r.count,
            c.lut4(),
            c.ff(),
            kbit(c.bram_bits()),
            kbit(c.dist_ram_bits()),
            c.storage_bytes(),
            fmax,
            c.lut4() * n,
            c.ff() * n,
            kbit(c.bram_bits() * n),
            kbit(c.dist_ram_bits() * n),
            c.storage_bytes() * n as f64
        );
        let into = if r.scope == Scope::PerSm { &mut per_sm } else { &mut global };
        for (a, b) in into.iter_mut().zip([c.lut4(), c.ff(), c.dp16kd(), c.dist_ram_bits(), c.storage_bits()]) {
            *a += b;
        }
    }
    let [lut, ff, dp16, dram, state] = std::array::from_fn(|k| global[k] + sms as u64 * per_sm[k]);
    let pct = |x: u64, of: u64| 100.0 * x as f64 / of as f64;
    println!(
        "  total: {lut} LUT4 ({:.1}% of the 85F's {DEVICE_LUT4}), {ff} FF ({:.1}%), {dp16} DP16KD ({:.1}% of {DEVICE_DP16KD}; {} Kbit), {} Kbit of distributed RAM, {:.1} KB of state",
        pct(lut, DEVICE_LUT4),
        pct(ff, DEVICE_FF),
        pct(dp16, DEVICE_DP16KD),
        kbit(dp16 * DP16KD_BITS),
        kbit(dram),
        state as f64 / 8.0 / 1024.0
    );
    // The SMs whose per-SM blocks fit on the device beside the GPU-wide blocks, by the
    // synthesis counts: an upper bound, since place and route also spends LUT slots on carry
    // chains and distributed RAM and needs room beyond them (`--controller` measures it).
    let cap = [DEVICE_LUT4, DEVICE_FF, DEVICE_DP16KD];
    let fit = (0..3).filter(|&k| per_sm[k] > 0).map(|k| cap[k].saturating_sub(global[k]) / per_sm[k]).min().unwrap_or(0);
    println!(
        "  on the 85F: the GPU-wide blocks ({} LUT4, {} FF, {} DP16KD) and the per-SM blocks of at most {fit} SMs ({} LUT4, {} FF, {} DP16KD each), by these counts (an upper bound: --controller N places and routes them)",
        global[0], global[1], global[2], per_sm[0], per_sm[1], per_sm[2]
    );
    println!("  (synthesis cells, each block alone; Fmax: routed alone in its ring of I/O registers at seed {}, target {} MHz; state: flip-flops and memory bits)", a.seed, a.freq);
    for e in &left_out {
        println!("  left out (not built for `{}`): {e}", cfg.name);
    }
    println!();
    println!("  storage against the papers:");
    for r in &rows {
        if let Some(p) = paper_storage(&r.cost.block) {
            let each = r.cost.storage_bytes();
            let all = if r.count > 1 { format!(" ({:.1} KB for {} SMs)", each * r.count as f64 / 1024.0, r.count) } else { String::new() };
            println!("  {:<7} mpgpu {:.2} KB{all}; {p}", r.cost.block, each / 1024.0);
        }
    }
    let mut controller = None;
    if let Some(n) = a.controller {
        if n as u64 > fit {
            anyhow::bail!("--controller {n}: the per-SM blocks of at most {fit} SMs fit on the 85F beside the GPU-wide blocks by the synthesis counts above (and fewer once placed: docs/fpga.md, \"The whole controller\")");
        }
        let (r, dir) = mpgpu_tb::controller::build(&tools, &blocks.iter().map(|(b, _)| *b).collect::<Vec<_>>(), sms, &cfg, n, a.sharing, &out, a.seed, a.freq, |m| eprintln!("{m}")).map_err(|e| anyhow!("the controller: {e}"))?;
        println!();
        println!("  the whole controller ({}, {}): the GPU-wide blocks and the per-SM blocks of {n} SMs in one design, {} blocks, {} bits of ports", mpgpu_tb::controller::TOP, dir.display(), r.instances, r.port_bits);
        println!("  synthesis: {} LUT4, {} FF, {} DP16KD", r.synth.group("lut"), r.synth.group("ff"), r.synth.cell("DP16KD"));
        let used = |k: &str| r.pnr.utilization.get(k).map_or("-".to_string(), |(u, of)| format!("{u}/{of} ({:.1}%)", pct(*u, *of)));
        println!("  placed and routed: {} LUT4 (TRELLIS_COMB), {} FF (TRELLIS_FF), {} DP16KD", used("TRELLIS_COMB"), used("TRELLIS_FF"), used("DP16KD"));
        match r.pnr.fmax_mhz {
            Some(f) => {
                println!("  Fmax {f:.1} MHz (target {} MHz, seed {}; place and route took {:.0} s)", a.freq, a.seed, r.pnr.seconds);
                if f < a.freq {
                    slow.push(format!("the controller {f:.1} MHz"));
                }
            }
            None => println!("  no register-to-register path was timed"),
        }
        controller = Some(r);
    }
    let json: Vec<_> = rows.iter().map(|r| serde_json::json!({ "block": r.cost.block, "count": r.count, "cost": r.cost })).collect();
    let spath = out.join(format!("{}{}.json", cfg.name, if a.sharing { "-sharing" } else { "" }));
    let summary = serde_json::json!({ "config": cfg.name, "sms": sms, "sharing": a.sharing, "device": DEVICE, "yosys": yosys, "nextpnr": nextpnr, "blocks": json, "controller": controller });
    std::fs::write(&spath, serde_json::to_string_pretty(&summary)?).with_context(|| format!("cannot write {}", spath.display()))?;
    println!("  summary: {}", spath.display());
    if a.check && !slow.is_empty() {
        eprintln!("below the {} MHz target: {}", a.freq, slow.join(", "));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
