//! Checks every block's generated Verilog must pass: yosys (synthesizability, latches),
//! Icarus Verilog (parses as plain Verilog), and `verilator --lint-only -Wall`.
//!
//! Verilator warnings waived, each for a reason that holds for all rust-hdl output:
//! - `WIDTH`: rust-hdl writes integer literals as 32-bit constants (`pick = 32'h0` into a
//!   4-bit register); the value always fits, only the literal's width differs.
//! - `DECLFILENAME`: rust-hdl names the top module `top`; the file is named for the block.
//! - `UNOPTFLAT`: rust-hdl writes a module's logic as one `always @(*)` block, which Verilator
//!   schedules as one node: when a child block's combinational output (the policy engine's
//!   decision, the PTBQ RAM's read data) feeds logic in the same block that also drives the
//!   child's inputs, Verilator reports a loop that is not one at the level of signals. Real
//!   combinational loops are caught by yosys instead, on the flattened design (`check -assert`
//!   after `flatten`; a test shows it rejects one).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Verilator warnings waived for rust-hdl output (see the module documentation).
pub const VERILATOR_WAIVERS: &[&str] = &["-Wno-WIDTH", "-Wno-DECLFILENAME", "-Wno-UNOPTFLAT"];

fn run(dir: &Path, tool: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(tool)
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {tool} ({e}); run scripts/setup-eda to install it"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{tool} failed on {}:\n{}{}",
            dir.join("top.v").display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Writes `verilog` to `<dir>/top.v` and runs yosys, iverilog and verilator on it.
pub fn check_verilog(dir: &Path, verilog: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join("top.v"), verilog).map_err(|e| format!("cannot write top.v: {e}"))?;
    run(dir, "yosys", &["-q", "-p", "read_verilog top.v; hierarchy -check -top top; proc; flatten; select -assert-none t:$dlatch t:$adlatch t:$dlatchsr; check -assert"])?;
    run(dir, "iverilog", &["-o", "top.vvp", "top.v"])?;
    let mut args = vec!["--lint-only", "-Wall", "--top-module", "top"];
    args.extend_from_slice(VERILATOR_WAIVERS);
    args.push("top.v");
    run(dir, "verilator", &args)
}

/// A per-block directory under the workspace's `target/`.
pub fn check_dir(block: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/rtl-check").join(block)
}
