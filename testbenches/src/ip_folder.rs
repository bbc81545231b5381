//! IP folders (`docs/ip.md`): a block's packaged Verilog (`crate::ip`) with its lint waivers,
//! a file list, a FuseSoC core and, from a recorded co-simulation trace, a self-checking
//! testbench; and FuseSoC itself, from PyPI.

use crate::ip::waivers;
use crate::trace::TraceInfo;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What an IP folder holds, relative to it.
#[derive(Clone, Debug)]
pub struct Folder {
    pub dir: PathBuf,
    pub top: String,
    pub files: Vec<String>,
}

/// The trace testbench's files inside an IP folder.
pub const TB_DIR: &str = "tb";

/// Writes `dir` as the IP folder of `block`: `<top>.v`, `<top>.vlt`, `files.f`, the FuseSoC core
/// `<top>.core` ([`core_file`]), and with a recorded trace of the same Verilog (`trace`: a
/// directory `mpgpu cosim --trace` wrote) `tb/`: the trace and its self-checking testbench.
pub fn write_folder(dir: &Path, verilog: &str, top: &str, block: &str, about: &str, trace: Option<&Path>) -> Result<Folder, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let w = |f: &str, t: &str| std::fs::write(dir.join(f), t).map_err(|e| format!("cannot write {}: {e}", dir.join(f).display()));
    let v = format!("{top}.v");
    let vlt = format!("{top}.vlt");
    w(&v, verilog)?;
    w(&vlt, &waivers(&v))?;
    w("files.f", &format!("{vlt}\n{v}\n"))?;
    let mut files = vec![v.clone(), vlt.clone(), "files.f".to_string()];
    // (a testbench left by an earlier run of the folder is not this Verilog's)
    let old = dir.join(TB_DIR);
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| format!("cannot remove the old testbench {}: {e}", old.display()))?;
    }
    if let Some(t) = trace {
        let info = crate::trace::read(t)?;
        let tb = dir.join(TB_DIR);
        std::fs::create_dir_all(&tb).map_err(|e| format!("cannot create {}: {e}", tb.display()))?;
        std::fs::copy(t.join("trace.hex"), tb.join("trace.hex")).map_err(|e| format!("cannot copy the trace into {}: {e}", tb.display()))?;
        let info = TraceInfo { module: top.to_string(), ..info };
        let bench = crate::trace::testbench(&info, &format!("{top}_tb"));
        w(&format!("{TB_DIR}/{top}_tb.v"), &bench)?;
        w(&format!("{TB_DIR}/trace.json"), &serde_json::to_string_pretty(&info).unwrap())?;
        files.extend([format!("{TB_DIR}/{top}_tb.v"), format!("{TB_DIR}/trace.hex"), format!("{TB_DIR}/trace.json")]);
    }
    w(&format!("{top}.core"), &core_file(top, block, about, &v, &vlt, trace.is_some()))?;
    files.push(format!("{top}.core"));
    Ok(Folder { dir: dir.to_path_buf(), top: top.to_string(), files })
}

/// The FuseSoC (CAPI2) core of an IP folder: targets `default` (the RTL) and `lint`
/// (`verilator --lint-only -Wall` with the waivers), and with a testbench `sim` (Icarus) and
/// `sim_verilator`.
fn core_file(top: &str, block: &str, about: &str, v: &str, vlt: &str, tb: bool) -> String {
    let mut c = String::from("CAPI=2:\n");
    let _ = writeln!(c, "name: mpgpu:ip:{top}:{}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(c, "description: \"{} (mpgpu block `{block}`)\"\n", about.replace('"', "'"));
    let _ = writeln!(c, "filesets:\n  rtl:\n    files: [{v}]\n    file_type: verilogSource\n  waivers:\n    files: [{vlt}]\n    file_type: vlt");
    if tb {
        let _ = writeln!(c, "  tb:\n    files:\n      - {TB_DIR}/{top}_tb.v\n      - {TB_DIR}/trace.hex: {{file_type: user, copyto: trace.hex}}\n    file_type: verilogSource");
    }
    let _ = writeln!(c, "\ntargets:\n  default:\n    filesets: [rtl]\n    toplevel: {top}");
    let _ = writeln!(c, "  lint:\n    default_tool: verilator\n    filesets: [waivers, rtl]\n    toplevel: {top}\n    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]");
    if tb {
        let _ = writeln!(c, "  sim:\n    default_tool: icarus\n    filesets: [rtl, tb]\n    toplevel: {top}_tb\n    tools:\n      icarus:\n        iverilog_options: [-g2012]");
        // (the testbench's own warnings are not the block's: the block's lint is `lint`)
        let _ = writeln!(c, "  sim_verilator:\n    default_tool: verilator\n    filesets: [waivers, rtl, tb]\n    toplevel: {top}_tb\n    tools:\n      verilator:\n        mode: binary\n        verilator_options: [--timing, -Wno-fatal, -Wno-lint, -Wno-style]");
    }
    c
}

/// FuseSoC and its back end, from PyPI at the versions the IP folders are tested with.
pub const FUSESOC: &[&str] = &["fusesoc==2.4.7", "edalize==0.6.8"];

/// The `fusesoc` program of the virtual environment `venv` (the FPGA tools',
/// `crate::fpga::default_venv`), installed there first with pip when missing; `say` hears
/// what is being installed.
pub fn fusesoc(venv: &Path, say: impl FnMut(&str)) -> Result<PathBuf, String> {
    let venv = crate::fpga::pip_install(venv, "fusesoc", FUSESOC, &["fusesoc"], "FuseSoC", say)?;
    Ok(venv.join("bin").join("fusesoc"))
}

/// A block's testbench run, ready to record ([`testbench_run`]).
pub struct TbSetup {
    pub cfg: mpgpu_ref::config::GpuConfig,
    pub workload: mpgpu_ref::workload::Workload,
    pub options: crate::options::CosimOptions,
}

/// The testbench run of block `b` for its IP folder: its host's [`crate::entry::TbRun`] on
/// `cfg` (the GPU-wide blocks on a GPU of `sms` of its SMs; with `sharing`, a block whose run
/// has a `sharing` workload runs that, sharing its SMs under Warped-Slicer), RTL in the loop on SM 0
/// for a per-SM block (a GPU of several kinds of SM keeps their proportions). An error says why
/// the block cannot run there (a part with no run of its own, fewer SMs than kinds, a
/// configuration its unit refuses).
pub fn testbench_run(b: &crate::entry::Block, cfg: &mpgpu_ref::config::GpuConfig, sms: usize, sharing: bool) -> Result<TbSetup, String> {
    use crate::options::{CosimOptions, UnitKind};
    use mpgpu_ref::units::framework::Mechanism;
    let h = b.host.as_ref().ok_or_else(|| format!("`{}` ({}) has no run of its own: it runs inside the blocks that use it, whose testbenches exercise it", b.name, b.about))?;
    let t = h.testbench;
    let unit = UnitKind::named(b.name)?;
    let mut cfg = cfg.clone();
    if b.sized_by_sms() && cfg.num_sms() as usize != sms {
        // (SMs of several kinds keep their proportions, each kind one SM at least)
        let kinds = cfg.sm.len();
        if sms < kinds {
            return Err(format!("its run needs a GPU of {sms} SMs of configuration `{}`, whose SMs are of {kinds} kinds", cfg.name));
        }
        let total = cfg.num_sms() as usize;
        let mut left = sms;
        for g in 0..kinds {
            let n = if g + 1 == kinds { left } else { (cfg.sm[g].count as usize * sms / total).clamp(1, left - (kinds - 1 - g)) };
            cfg.sm[g].count = n as u32;
            left -= n;
        }
    }
    unit.setup(&mut cfg);
    if t.inject > 0.0 {
        cfg.inject.rate = t.inject;
        cfg.inject.seed = 5;
    }
    cfg.validate().map_err(|e| format!("its run's configuration: {e}"))?;
    let mut o = CosimOptions::new(t.policy, Mechanism::default_for(&cfg));
    o.unit = unit;
    let workload = match (sharing, t.sharing) {
        (true, Some(w)) => {
            o.sliced = true;
            w
        }
        _ => t.workload,
    };
    let workload = mpgpu_ref::workload::Workload::parse("testbench.toml", workload).map_err(|e| format!("its run's workload: {e}"))?;
    if unit.has_per_sm() {
        o.sms = mpgpu_ref::slots::SmSet::parse("0", cfg.num_sms() as usize)?;
    }
    unit.fits(&cfg, &o)?;
    Ok(TbSetup { cfg, workload, options: o })
}

/// Records block `b`'s testbench run `run` ([`testbench_run`]), rust-hdl's simulation in
/// lockstep with the model, traced into `dir`. Returns the block's trace directory there (for
/// [`write_folder`]) and the run's result; a mismatch or a failed run is an error, and so is a
/// run of other Verilog than `rtl` (the block's for that configuration, `Block::verilog_with`).
pub fn record_testbench(b: &crate::entry::Block, rtl: &crate::ip::Rtl, run: TbSetup, dir: &Path) -> Result<(PathBuf, mpgpu_ref::timing::gpu::RunResult), String> {
    let TbSetup { cfg, workload: w, options: mut o } = run;
    let _ = std::fs::remove_dir_all(dir);
    o.trace = Some(dir.to_path_buf());
    o.mismatch_vcd = dir.join("mismatch.vcd");
    let r = crate::cosim::run_with(&cfg, &w, &o)?;
    if let Some(m) = r.mismatch {
        return Err(format!("block `{}`: its testbench's run mismatched the model: {m} (the run's files, with the waveform around it, are kept in {})", b.name, dir.display()));
    }
    let result = match (r.result, r.error) {
        (Some(x), None) => x,
        (_, e) => return Err(format!("block `{}`: its testbench's run failed: {}", b.name, e.map_or("no result".to_string(), |e| e.to_string()))),
    };
    if let Some(w) = r.warnings.first() {
        return Err(format!("block `{}`: its testbench's trace: {w}", b.name));
    }
    // (a unit of several blocks traces each in `DIR/<block>/`, a per-SM block's SM 0 in `sm0/`)
    let found = [dir.to_path_buf(), dir.join("sm0"), dir.join(b.name), dir.join(b.name).join("sm0")]
        .into_iter()
        .find(|d| crate::trace::read(d).is_ok_and(|i| i.block == b.name));
    let found = found.ok_or_else(|| format!("block `{}`: its testbench's run left no trace of it in {}", b.name, dir.display()))?;
    if !of_design(b, rtl, &recorded(&found)?)? {
        return Err(format!("block `{}`: its testbench's run simulated other Verilog than the folder's (its configuration is not the one the Verilog is generated for)", b.name));
    }
    Ok((found, result))
}

/// A recorded trace's description and the Verilog it was recorded on.
pub fn recorded(t: &Path) -> Result<(TraceInfo, String), String> {
    let info = crate::trace::read(t)?;
    let v = std::fs::read_to_string(t.join(format!("{}.v", info.module))).map_err(|e| format!("{}: {e}", t.display()))?;
    Ok((info, v))
}

/// Whether a trace ([`recorded`]) is of block `b`'s design `rtl`: a co-simulation records the
/// packaged modules with the default prefix, which the folder's `--prefix` renames (the header
/// aside, the same Verilog).
pub fn of_design(b: &crate::entry::Block, rtl: &crate::ip::Rtl, (info, v): &(TraceInfo, String)) -> Result<bool, String> {
    Ok(info.module == crate::ip::module_name(crate::ip::PREFIX, b.name) && crate::ip::ip_verilog(rtl, b.name, b.about, crate::ip::PREFIX, "")?.ends_with(v.as_str()))
}
