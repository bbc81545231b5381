//! Traces of a co-simulation replayed in a second Verilog simulator (Icarus).
//!
//! A co-simulation run writes, for every clocked cycle of a block, its GPU cycle, the input
//! words, the model's expected output words and which of them are defined (`care`; an output
//! qualified by a valid bit that is low is not compared). [`TraceWriter`] streams them to
//! `trace.hex` (one 64-bit hex word per field, `$readmemh` format) and, at the end, writes the
//! block's Verilog as its IP folder ships it (`<module>.v`, `crate::ip`), a generated testbench
//! (`replay.v`) and `trace.json` describing the ports. [`replay`] compiles the testbench with
//! Icarus and runs it: each cycle it applies the inputs with the clock low, compares every
//! defined output with the expected value, and raises the clock; at the first difference it
//! prints the cycle (clocked and GPU) and the port and exits non-zero (`$fatal`). Half-way
//! through (or after `+reset_at=K` cycles; 0: never) it raises `reset` for one clock and
//! replays the trace again from its first cycle: the reset must return the block to the state
//! it started in.
//!
//! The replay checks the Verilog the user takes away against the model with a simulator
//! independent of Verilator and rust-hdl, and will check a synthesized netlist the same way.

use crate::ports::Port;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What `trace.json` says of a trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceInfo {
    pub block: String,
    /// The Verilog module (and its file, `<module>.v`).
    pub module: String,
    /// Whether the module has the `reset` input the replay raises half-way, and for how many
    /// cycles it must be held (`crate::ip::reset_cycles`).
    pub reset: bool,
    pub reset_cycles: u64,
    pub inputs: Vec<(String, u32)>,
    pub outputs: Vec<(String, u32)>,
    pub cycles: u64,
    /// Words per record: GPU cycle, inputs, expected outputs, care mask ([`care_words`]).
    pub fields: usize,
}

impl TraceInfo {
    /// The field of a record (`trace.hex`, counted from 0) that holds output `port`'s
    /// expected value: after the GPU cycle and the inputs.
    pub fn expected_field(&self, port: &str) -> Option<usize> {
        self.outputs.iter().position(|(p, _)| p == port).map(|i| 1 + self.inputs.len() + i)
    }
}

/// Streams a block's clocked cycles into a trace directory.
pub struct TraceWriter {
    dir: PathBuf,
    out: BufWriter<File>,
    info: TraceInfo,
    verilog: String,
}

impl TraceWriter {
    /// Starts a trace of `block` (its Verilog `verilog`, module `module` with a `reset` input)
    /// in `dir`.
    pub fn create(dir: &Path, block: &str, module: &str, verilog: String, inputs: &[Port], outputs: &[Port]) -> Result<TraceWriter, String> {
        if outputs.len() > MAX_OUTPUTS {
            return Err(format!("{block}: {} outputs; a trace holds at most {MAX_OUTPUTS}", outputs.len()));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A trace left by an earlier run must not be replayed against this one's data.
        for old in ["trace.json", &format!("{module}.v"), "replay.v", "replay.vvp", "replay.log", "replay-gate.vvp", "replay-gate.log"] {
            let _ = std::fs::remove_file(dir.join(old));
        }
        let _ = std::fs::remove_dir_all(dir.join("gate"));
        let f = dir.join("trace.hex");
        let file = File::create(&f).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
        let info = TraceInfo {
            block: block.to_string(),
            module: module.to_string(),
            reset: crate::ip::top_has_reset(&verilog),
            reset_cycles: crate::ip::reset_cycles(&verilog),
            inputs: inputs.iter().map(|p| (p.name.clone(), p.width)).collect(),
            outputs: outputs.iter().map(|p| (p.name.clone(), p.width)).collect(),
            cycles: 0,
            fields: 1 + inputs.len() + outputs.len() + care_words(outputs.len()),
        };
        Ok(TraceWriter { dir: dir.to_path_buf(), out: BufWriter::new(file), info, verilog })
    }

    /// One clocked cycle.
    pub fn record(&mut self, time: u64, inputs: &[u64], expected: &[u64], care: &[bool]) -> Result<(), String> {
        let mut mask = vec![0u64; care_words(care.len())];
        for (k, &c) in care.iter().enumerate() {
            mask[k / 64] |= (c as u64) << (k % 64);
        }
        let mut line = format!("{time:x}");
        for w in inputs.iter().chain(expected).chain(&mask) {
            let _ = write!(line, " {w:x}");
        }
        writeln!(self.out, "{line}").map_err(|e| format!("trace write: {e}"))?;
        self.info.cycles += 1;
        Ok(())
    }

    /// Flushes the trace and writes the Verilog, the testbench and `trace.json`.
    pub fn finish(mut self) -> Result<PathBuf, String> {
        self.out.flush().map_err(|e| format!("trace write: {e}"))?;
        let w = |f: &str, t: &str| std::fs::write(self.dir.join(f), t).map_err(|e| format!("cannot write {}: {e}", self.dir.join(f).display()));
        w(&format!("{}.v", self.info.module), &self.verilog)?;
        w("replay.v", &testbench(&self.info, REPLAY))?;
        w("trace.json", &serde_json::to_string_pretty(&self.info).unwrap())?;
        Ok(self.dir)
    }
}

/// The range of a Verilog declaration `w` bits wide (`[w-1:0] `; nothing for one bit).
pub fn vector(w: u32) -> String {
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

/// The module name of the testbench [`replay`] runs.
pub const REPLAY: &str = "mpgpu_replay";

/// The replay testbench for a trace, as module `name`.
pub fn testbench(t: &TraceInfo, name: &str) -> String {
    let (ni, no) = (t.inputs.len(), t.outputs.len());
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by mpgpu: replays a co-simulation trace of `{}` (trace.hex) and checks every output every cycle.", t.block);
    if t.reset {
        let _ = writeln!(s, "// After `+tb_reset_at=K` cycles (default: half the trace; 0: never) it holds `reset` high for {} clock(s) and", t.reset_cycles);
        let _ = writeln!(s, "// replays the whole trace again: the reset must return the block to the state it started in.");
    }
    let _ = writeln!(s, "`timescale 1ns/1ps\nmodule {name};");
    let _ = writeln!(s, "    localparam TB_N = {}, TB_F = {};", t.cycles.max(1), t.fields);
    let cw = care_words(no);
    let _ = writeln!(s, "    reg [63:0] tb_mem [0:TB_N*TB_F-1];\n    reg clock = 1'b0;\n    reg reset = 1'b0;\n    reg [63:0] tb_gpu_cycle;\n    reg [{}:0] tb_care;\n    integer tb_c, tb_base, tb_reset_at, tb_restarted;", 64 * cw - 1);
    for (n, w) in &t.inputs {
        let _ = writeln!(s, "    reg {}{n};", vector(*w));
    }
    for (n, w) in &t.outputs {
        let _ = writeln!(s, "    wire {}{n};", vector(*w));
    }
    let own = if t.reset { vec!["clock", "reset"] } else { vec!["clock"] };
    let conns: Vec<String> = own.into_iter().map(String::from).chain(t.inputs.iter().chain(&t.outputs).map(|p| p.0.clone())).map(|n| format!(".{n}({n})")).collect();
    let _ = writeln!(s, "    {} dut({});", t.module, conns.join(", "));
    let _ = writeln!(s, "    initial begin\n        $readmemh(\"trace.hex\", tb_mem);");
    let half = if t.reset { t.cycles / 2 } else { 0 };
    let _ = writeln!(s, "        if (!$value$plusargs(\"tb_reset_at=%d\", tb_reset_at)) tb_reset_at = {half};");
    let _ = writeln!(s, "        tb_restarted = 0;\n        tb_c = 0;\n        while (tb_c < {}) begin", t.cycles);
    let words: Vec<String> = (0..cw).rev().map(|k| format!("tb_mem[tb_base + {}]", 1 + ni + no + k)).collect();
    let _ = writeln!(s, "            tb_base = tb_c * TB_F;\n            tb_gpu_cycle = tb_mem[tb_base];\n            tb_care = {{{}}};", words.join(", "));
    // A record that did not load (a short or damaged trace.hex) must fail, not compare nothing.
    let _ = writeln!(s, "            if (^{{tb_gpu_cycle, tb_care}} === 1'bx) begin\n                $display(\"REPLAY MISMATCH cycle %0d (GPU cycle ?) port trace: record not loaded from trace.hex\", tb_c);\n                $fatal(1, \"replay of {} failed\");\n            end", t.block);
    for (k, (n, w)) in t.inputs.iter().enumerate() {
        let _ = writeln!(s, "            {n} = tb_mem[tb_base + {}][{}:0];", 1 + k, w - 1);
    }
    let _ = writeln!(s, "            #1;");
    for (k, (n, w)) in t.outputs.iter().enumerate() {
        let e = format!("tb_mem[tb_base + {}][{}:0]", 1 + ni + k, w - 1);
        let _ = writeln!(
            s,
            "            if (tb_care[{k}] && {n} !== {e}) begin\n                $display(\"REPLAY MISMATCH cycle %0d (GPU cycle %0d) port {n}: expected %0h, got %0h%s\", tb_c, tb_gpu_cycle, {e}, {n}, tb_restarted ? \" (after the reset)\" : \"\");\n                $fatal(1, \"replay of {} failed\");\n            end",
            t.block
        );
    }
    let _ = writeln!(s, "            clock = 1'b1;\n            #1;\n            clock = 1'b0;\n            tb_c = tb_c + 1;");
    if t.reset {
        let _ = writeln!(s, "            if (tb_restarted == 0 && tb_c == tb_reset_at) begin\n                reset = 1'b1;\n                repeat ({}) begin\n                    #1;\n                    clock = 1'b1;\n                    #1;\n                    clock = 1'b0;\n                end\n                reset = 1'b0;\n                tb_restarted = 1;\n                tb_c = 0;\n                $display(\"REPLAY RESET after %0d cycles; replaying from the first\", tb_reset_at);\n            end", t.reset_cycles);
    }
    let _ = writeln!(s, "        end");
    let _ = writeln!(s, "        $display(\"REPLAY PASS %0d cycles\", {});\n        $finish;\n    end\nendmodule", t.cycles);
    s
}

/// The outputs a trace may hold (a block's have at most a few hundred).
pub const MAX_OUTPUTS: usize = 4096;

/// The 64-bit words of a record's care mask for `outputs` outputs (at least one).
pub fn care_words(outputs: usize) -> usize {
    outputs.div_ceil(64).max(1)
}

/// The longest reset a trace may ask for (a block's deepest memory has a few hundred words).
pub const MAX_RESET_CYCLES: u64 = 1 << 20;

/// Bytes `trace.json` may hold: thousands of ports' worth (a block's have a few hundred bytes).
pub const MAX_JSON_BYTES: usize = 1 << 20;

/// Names the generated testbench declares itself: a port may not take one, nor a name that
/// starts with [`TB_PREFIX`] (the testbench's own variables).
const TESTBENCH_NAMES: &[&str] = &[REPLAY, "clock", "reset", "dut"];

/// The prefix of the testbench's own variables (`tb_mem`, `tb_care`, ...).
const TB_PREFIX: &str = "tb_";

/// `text` for quoting in an error, by the project's one rule ([`mpgpu_ref::text::quoted`]).
fn quoted(text: &str) -> String {
    mpgpu_ref::text::quoted(text)
}

/// Reads a trace directory's `trace.json` (at most [`MAX_JSON_BYTES`]) and checks it and
/// `trace.hex` against each other: ports named as Verilog identifiers, distinct, 1..=64 bits
/// wide, at most [`MAX_OUTPUTS`] inputs and outputs, the record size, and `cycles` records of `fields` hex words each
/// (read a line at a time: a trace of any length is checked in bounded memory). Every error
/// names the file and the place: a line and column of `trace.json`, a port or a field, or a
/// line of `trace.hex`.
pub fn read(dir: &Path) -> Result<TraceInfo, String> {
    let json = dir.join("trace.json");
    let at = json.display();
    let bytes = mpgpu_ref::files::read_bytes(&json, "a trace.json", MAX_JSON_BYTES).map_err(|e| format!("{at}: {e}"))?;
    let info: TraceInfo = serde_json::from_slice(&bytes).map_err(|e| {
        let full = e.to_string();
        let msg = full.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&full);
        // (serde_json says column 0 before a line's first character: the place is column 1)
        format!("{at}:{}:{}: {}", e.line().max(1), e.column().max(1), mpgpu_ref::text::clip(msg, 200).escape_debug())
    })?;
    check(dir, &info)?;
    Ok(info)
}

/// Checks the ports, the record size and `trace.hex` (see [`read`]).
fn check(dir: &Path, info: &TraceInfo) -> Result<(), String> {
    let json = dir.join("trace.json");
    let at = json.display();
    if info.block.is_empty() || info.block.chars().count() > 200 || info.block.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
        return Err(format!("{at}: `block` {} must be 1 to 200 characters without quotes, backslashes or control characters (it is written into the testbench)", quoted(&info.block)));
    }
    let ident = |n: &str| crate::ip::is_ident(n) && n.len() <= 200;
    if !ident(&info.module) || TESTBENCH_NAMES.contains(&info.module.as_str()) || info.module.starts_with(TB_PREFIX) {
        return Err(format!("{at}: `module` {} is not a Verilog identifier other than the testbench's own names (a letter or `_`, then letters, digits and `_`; at most 200)", quoted(&info.module)));
    }
    if info.reset && !(1..=MAX_RESET_CYCLES).contains(&info.reset_cycles) {
        return Err(format!("{at}: `reset_cycles` is {}; expected 1..={MAX_RESET_CYCLES}", info.reset_cycles));
    }
    let mut names = std::collections::HashSet::new();
    for (n, w) in info.inputs.iter().chain(&info.outputs) {
        if !ident(n) {
            return Err(format!("{at}: port {} is not a Verilog identifier (a letter or `_`, then letters, digits, `_` and `$`; at most 200)", quoted(n)));
        }
        if TESTBENCH_NAMES.contains(&n.as_str()) {
            return Err(format!("{at}: port `{n}` takes the name of the testbench's own `{n}`"));
        }
        if n.starts_with(TB_PREFIX) {
            return Err(format!("{at}: port `{n}`: names starting `{TB_PREFIX}` are the testbench's own"));
        }
        if !names.insert(n.as_str()) {
            return Err(format!("{at}: port `{n}` is named twice"));
        }
        if !(1..=64).contains(w) {
            return Err(format!("{at}: port `{n}` is {w} bits wide; expected 1..=64"));
        }
    }
    if info.outputs.len() > MAX_OUTPUTS || info.inputs.len() > MAX_OUTPUTS {
        return Err(format!("{at}: {} inputs and {} outputs; a trace holds at most {MAX_OUTPUTS} of each", info.inputs.len(), info.outputs.len()));
    }
    let fields = 1 + info.inputs.len() + info.outputs.len() + care_words(info.outputs.len());
    if info.fields != fields {
        return Err(format!("{at}: `fields` is {}; with {} inputs and {} outputs expected {fields}", info.fields, info.inputs.len(), info.outputs.len()));
    }
    check_records(dir, info)
}

/// `trace.hex`: `info.cycles` lines of `info.fields` hex words of at most 64 bits, read a line
/// at a time (a line longer than any record can be is refused without being read whole).
fn check_records(dir: &Path, info: &TraceInfo) -> Result<(), String> {
    use std::io::{BufRead, BufReader, Read};
    let hex = dir.join("trace.hex");
    let at = hex.display();
    let mut r = BufReader::new(File::open(&hex).map_err(|e| format!("{at}: {e}"))?);
    // 16 digits and a separator per word, with room for other spacing
    let longest = 32 * info.fields + 256;
    let mut records = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut r).take(longest as u64 + 1).read_until(b'\n', &mut buf).map_err(|e| format!("{at}: {e}"))?;
        if n == 0 {
            break;
        }
        let k = records + 1;
        if buf.len() > longest && buf.last() != Some(&b'\n') {
            return Err(format!("{at}:{k}: a line of more than {longest} bytes; a record of {} words has at most {}", info.fields, 17 * info.fields));
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        let words: Vec<&str> = line.split_ascii_whitespace().collect();
        if words.len() != info.fields || words.iter().any(|w| w.is_empty() || w.len() > 16 || !w.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err(format!("{at}:{k}: expected {} hex words of at most 64 bits, found {}", info.fields, quoted(line)));
        }
        records += 1;
    }
    if records != info.cycles {
        return Err(format!("{at}: {records} records; trace.json says {} cycles", info.cycles));
    }
    Ok(())
}

/// The outcome of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replay {
    Pass { cycles: u64 },
    /// The testbench's report of the first difference.
    Mismatch { cycle: u64, port: String, line: String },
}

/// Compiles and runs the replay testbench of the trace in `dir` with Icarus Verilog, on the
/// block's Verilog (`<module>.v`).
pub fn replay(dir: &Path) -> Result<Replay, String> {
    let info = read(dir)?;
    replay_on(dir, &[Path::new(&format!("{}.v", info.module))], "rtl")
}

/// Compiles and runs the replay testbench of the trace in `dir` on the Verilog `sources` (paths
/// relative to `dir` or absolute) that define the trace's module: the block's Verilog, or a
/// synthesized netlist and its cell models. `tag` names the build and log files
/// (`replay-<tag>.vvp`, `replay-<tag>.log`; the RTL's are `replay.vvp` and `replay.log`).
pub fn replay_on(dir: &Path, sources: &[&Path], tag: &str) -> Result<Replay, String> {
    let info = read(dir)?;
    // Regenerated from trace.json, so an edited trace.hex is replayed by the same testbench.
    std::fs::write(dir.join("replay.v"), testbench(&info, REPLAY)).map_err(|e| format!("cannot write replay.v: {e}"))?;
    let stem = if tag == "rtl" { "replay".to_string() } else { format!("replay-{tag}") };
    let vvp = format!("{stem}.vvp");
    let out = Command::new("iverilog")
        .current_dir(dir)
        .args(["-g2012", "-s", REPLAY, "-o", &vvp, "replay.v"])
        .args(sources)
        .output()
        .map_err(|e| format!("cannot run iverilog ({e}); scripts/setup-eda installs it"))?;
    if !out.status.success() {
        return Err(format!("iverilog failed on {}:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr)));
    }
    let run = Command::new("vvp").current_dir(dir).args(["-n", &vvp]).output().map_err(|e| format!("cannot run vvp ({e})"))?;
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    let _ = std::fs::write(dir.join(format!("{stem}.log")), &text);
    if let Some(l) = text.lines().find(|l| l.starts_with("REPLAY MISMATCH")) {
        if run.status.success() {
            return Err(format!("the testbench reported a mismatch but exited 0:\n{l}"));
        }
        let cycle = l.split_whitespace().nth(3).and_then(|c| c.parse().ok()).unwrap_or(u64::MAX);
        let port = l.split("port ").nth(1).and_then(|p| p.split(':').next()).unwrap_or("").to_string();
        return Ok(Replay::Mismatch { cycle, port, line: l.to_string() });
    }
    // (a block with a reset is replayed through one half-way: a testbench that skipped it
    // would not have tested it)
    if info.reset && info.cycles >= 2 && !text.contains("REPLAY RESET") && run.status.success() {
        return Err(format!("the replay in {} passed without the reset half-way:\n{text}", dir.display()));
    }
    match text.lines().find(|l| l.starts_with("REPLAY PASS")) {
        Some(_) if run.status.success() => Ok(Replay::Pass { cycles: info.cycles }),
        _ => Err(format!("the replay in {} ended without a verdict (exit {:?}):\n{text}{}", dir.display(), run.status.code(), String::from_utf8_lossy(&run.stderr))),
    }
}
