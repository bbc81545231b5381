//! A block's Verilog as a user drops it into a design (`docs/ip.md`): every module named after
//! the block, a synchronous reset, a header naming the configuration and every port, and the
//! lint waivers with their reasons. `crate::ip_folder` writes them as a folder with a file
//! list, a FuseSoC core and a self-checking testbench.
//!
//! rust-hdl writes a block as module `top` and its parts as `top$<path>`, and sets each
//! register only with an `initial` block. [`package`] renames them `<prefix><block>` and
//! `<prefix><block>_<path>`, adds an input `reset` to every module that holds a register or
//! contains one that does, and makes every clocked process take its registers to their
//! initial values in a cycle with `reset` high, and write zero to one word of each of its
//! memories (a counter walks them): held for as many cycles as the deepest memory has words,
//! the reset returns the block to the state it starts in. The trace replay tests it
//! (`crate::trace`, `docs/ip.md`).

use mpgpu_spec::port::PortDecl;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The module-name prefix unless `--prefix` gives another.
pub const PREFIX: &str = "mpgpu_";

/// The reset input every module with state gets.
pub const RESET: &str = "reset";

/// The longest prefix or block name accepted (a module name stays readable in every tool).
const MAX_NAME: usize = 64;

/// A block's RTL at one configuration: its Verilog as rust-hdl writes it (module `top`, each
/// port of `top` commented with its meaning), its ports as mpgpu-spec declares them, and the
/// configuration it was generated for.
#[derive(Clone, Debug)]
pub struct Rtl {
    pub verilog: String,
    pub inputs: Vec<PortDecl>,
    pub outputs: Vec<PortDecl>,
    pub config: String,
}

/// A configuration as its `Debug` text, less the test-only faults (`faults: ...` and
/// `broken_...: false` fields): what the header says the Verilog was generated for.
pub fn config_text(debug: &str) -> String {
    let mut out = String::new();
    let mut rest = debug;
    let test_only = |s: &str| s.starts_with("faults: ") || s.starts_with("broken_");
    loop {
        // the next field of a struct: after `{ ` or `, `
        let next = rest.match_indices(['{', ',']).map(|(k, _)| k).find(|&k| rest[k + 1..].strip_prefix(' ').is_some_and(test_only));
        let Some(at) = next else { break };
        let field = &rest[at + 2..];
        // the field runs to the next `,` or `}` at its own depth
        let mut depth = 0i32;
        let mut end = field.len();
        for (k, c) in field.char_indices() {
            match c {
                '{' | '(' | '[' => depth += 1,
                '}' | ')' | ']' if depth == 0 => {
                    end = k;
                    break;
                }
                '}' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    end = k;
                    break;
                }
                _ => {}
            }
        }
        let after = field[end..].trim_start_matches(',').trim_start();
        if &rest[at..=at] == "{" {
            out.push_str(&rest[..=at]);
            if !after.starts_with('}') {
                out.push(' ');
            }
        } else {
            out.push_str(&rest[..at]);
            out.push_str(if after.starts_with('}') { " " } else { ", " });
        }
        rest = after;
    }
    out.push_str(rest);
    out.replace(" {}", "")
}

/// Checks a module-name prefix: a Verilog identifier's start (a letter or `_`, then letters,
/// digits and `_`), at most 64 characters.
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    let ok = prefix.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && prefix.len() <= MAX_NAME;
    if ok {
        Ok(())
    } else {
        Err(format!("--prefix {}: expected a letter or `_`, then letters, digits or `_` (at most {MAX_NAME})", mpgpu_ref::text::quoted(prefix)))
    }
}

/// The top module's name for `block` under `prefix`.
pub fn module_name(prefix: &str, block: &str) -> String {
    format!("{prefix}{block}")
}

/// One module of rust-hdl's output: its name and its lines (from `module` to `endmodule`).
struct Module<'a> {
    name: &'a str,
    lines: Vec<&'a str>,
}

enum Chunk<'a> {
    Module(Module<'a>),
    Text(&'a str),
}

fn split(verilog: &str) -> Result<Vec<Chunk<'_>>, String> {
    let mut chunks = Vec::new();
    let mut open: Option<Module> = None;
    for line in verilog.lines() {
        if let Some(m) = open.as_mut() {
            m.lines.push(line);
            if line.starts_with("endmodule") {
                chunks.push(Chunk::Module(open.take().unwrap()));
            }
        } else if let Some(rest) = line.strip_prefix("module ") {
            let name = rest.split('(').next().unwrap_or("").trim();
            if name.is_empty() {
                return Err(format!("a module line without a name: {line}"));
            }
            open = Some(Module { name, lines: vec![line] });
        } else {
            chunks.push(Chunk::Text(line));
        }
    }
    if let Some(m) = open {
        return Err(format!("module `{}` has no endmodule", m.name));
    }
    Ok(chunks)
}

/// The instance lines of a module: (line index, module instantiated).
fn instances<'a>(m: &Module<'a>, names: &HashSet<&str>) -> Vec<(usize, &'a str)> {
    m.lines
        .iter()
        .enumerate()
        .filter_map(|(k, l)| {
            let (kind, rest) = l.trim().split_once(' ')?;
            (names.contains(kind) && rest.ends_with('(') && !rest.contains(' ')).then_some((k, kind))
        })
        .collect()
}

fn clocked(line: &str) -> bool {
    line.trim_start().starts_with("always @(posedge")
}

/// The words `begin` less the words `end` on a line (for matching a process's `end`).
fn depth_change(line: &str) -> i32 {
    let code = line.split("//").next().unwrap_or("");
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).map(|w| (w == "begin") as i32 - (w == "end") as i32).sum()
}

/// The registers a process assigns (`name <= ...;` with no index: a memory's words are not
/// reset) and the initial values the module's `initial` blocks give them.
fn initial_values<'a>(lines: &[&'a str]) -> HashMap<&'a str, &'a str> {
    let mut init = HashMap::new();
    let mut depth = 0;
    for l in lines {
        let t = l.trim();
        if t.starts_with("initial begin") {
            depth = 1;
            continue;
        }
        if depth > 0 {
            if depth == 1 {
                if let Some((lhs, rhs)) = t.strip_suffix(';').and_then(|s| s.split_once(" = ")) {
                    if is_ident(lhs.trim()) {
                        init.insert(lhs.trim(), rhs.trim());
                    }
                }
            }
            depth += depth_change(l);
        }
    }
    init
}

/// Whether `s` is a Verilog identifier as rust-hdl writes them: a letter or `_`, then letters,
/// digits, `_` and `$` (its array entries, `reg_set$0`).
pub fn is_ident(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The counter that walks a memory's words while `reset` is high.
pub const CLEAR: &str = "reset_address";

/// A memory a module declares (`reg [W:0] name [0:last];`).
struct Memory<'a> {
    /// The declaration's line.
    line: usize,
    name: &'a str,
    words: u64,
    /// Bits a word.
    width: u64,
}

/// The memories `lines` declare.
fn memories<'a>(lines: &[&'a str]) -> Vec<Memory<'a>> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(line, l)| {
            let t = l.trim().strip_prefix("reg ")?.strip_suffix("];")?;
            let (decl, range) = t.rsplit_once(" [0:")?;
            let name = decl.rsplit(' ').next()?;
            // `[W:0] name`, or `name` alone for one bit a word.
            let width = match decl.strip_prefix('[') {
                Some(r) => r.split_once(":0]")?.0.parse::<u64>().ok()? + 1,
                None => 1,
            };
            Some(Memory { line, name, words: range.parse::<u64>().ok()? + 1, width })
        })
        .collect()
}

/// The bits of every memory in rust-hdl's Verilog of a block (raw or packaged): words times
/// width, over every module (rust-hdl writes one module for each instance).
pub fn memory_bits(verilog: &str) -> Result<u64, String> {
    let chunks = split(verilog)?;
    let modules: Vec<&Module> = chunks.iter().filter_map(|c| if let Chunk::Module(m) = c { Some(m) } else { None }).collect();
    let names: HashSet<&str> = modules.iter().map(|m| m.name).collect();
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for m in &modules {
        for (_, kind) in instances(m, &names) {
            *uses.entry(kind).or_insert(0) += 1;
        }
    }
    if let Some((m, n)) = uses.iter().find(|(_, &n)| n > 1) {
        return Err(format!("module `{m}` is instantiated {n} times (rust-hdl writes one module an instance)"));
    }
    Ok(modules.iter().flat_map(|m| memories(&m.lines)).map(|x| x.words * x.width).sum())
}

/// The address bits of `words` words (at least 1).
fn address_bits(words: u64) -> u32 {
    (64 - (words.max(2) - 1).leading_zeros()).max(1)
}

/// `lines[start]` is a clocked process: its lines rewritten so that while `reset` is high it
/// takes its registers to their initial values and writes zero to the word [`CLEAR`] names of
/// each memory of `mems` (and nothing else), and the index after its last line.
fn with_reset(lines: &[&str], start: usize, init: &HashMap<&str, &str>, mems: &[Memory], module: &str) -> Result<(Vec<String>, usize), String> {
    let head = lines[start];
    if head.trim() != "always @(posedge clock) begin" {
        return Err(format!("module `{module}`: a clocked process not of the form `always @(posedge clock) begin`: {}", head.trim()));
    }
    let indent = &head[..head.len() - head.trim_start().len()];
    let mut depth = depth_change(head);
    let mut end = start + 1;
    while end < lines.len() {
        depth += depth_change(lines[end]);
        if depth == 0 {
            break;
        }
        end += 1;
    }
    if end == lines.len() {
        return Err(format!("module `{module}`: a clocked process without its `end`"));
    }
    let body = &lines[start + 1..end];
    let mut regs: Vec<&str> = Vec::new();
    for l in body {
        if let Some((lhs, _)) = l.split_once("<=") {
            let lhs = lhs.trim();
            if is_ident(lhs) && !regs.contains(&lhs) {
                regs.push(lhs);
            }
        }
    }
    let written: Vec<&str> = mems.iter().map(|m| m.name).filter(|m| body.iter().any(|l| l.trim_start().starts_with(&format!("{m}[")) && l.contains("<="))).collect();
    let mut out = vec![head.to_string()];
    out.push(format!("{indent}    if ({RESET}) begin"));
    for r in &regs {
        out.push(format!("{indent}        {r} <= {};", init.get(r).copied().unwrap_or("0")));
    }
    for m in &written {
        out.push(format!("{indent}        {m}[{CLEAR}] <= 0;"));
    }
    if !written.is_empty() {
        out.push(format!("{indent}        {CLEAR} <= {CLEAR} + 1'b1;"));
    }
    out.push(format!("{indent}    end else begin"));
    if !written.is_empty() {
        out.push(format!("{indent}        {CLEAR} <= 0;"));
    }
    out.extend(body.iter().map(|l| if l.trim().is_empty() { String::new() } else { format!("    {l}") }));
    out.push(format!("{indent}    end"));
    out.push(lines[end].to_string());
    Ok((out, end + 1))
}

/// rust-hdl's Verilog of a block (module `top`, its parts `top$<path>`) with every module
/// renamed after `top` (`top` itself, `<top>_<path>` for the parts, `$` becoming `_`) and the
/// synchronous reset added (the module documentation): held high for [`reset_cycles`] cycles,
/// it takes every register to its initial value and clears every memory, one word of each a
/// cycle. An error names what is not of the form rust-hdl writes, or a name two modules would
/// share.
pub fn package(verilog: &str, top: &str) -> Result<String, String> {
    let mut chunks = split(verilog)?;
    let modules: Vec<&Module> = chunks.iter().filter_map(|c| if let Chunk::Module(m) = c { Some(m) } else { None }).collect();
    let names: HashSet<&str> = modules.iter().map(|m| m.name).collect();
    if !names.contains("top") {
        return Err("no module `top` in the Verilog".into());
    }
    let mut renamed: HashMap<&str, String> = HashMap::new();
    let mut taken = HashSet::new();
    for &n in &names {
        let new = match n.strip_prefix("top") {
            Some("") => top.to_string(),
            Some(path) if path.starts_with('$') => format!("{top}{}", path.replace('$', "_")),
            _ => return Err(format!("module `{n}` is not `top` or a part of it (`top$...`)")),
        };
        if !taken.insert(new.clone()) {
            return Err(format!("two modules would both be named `{new}`"));
        }
        renamed.insert(n, new);
    }
    for m in &modules {
        for own in [RESET, CLEAR] {
            if m.lines.iter().any(|l| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == own)) {
                return Err(format!("module `{}` already names a signal `{own}`", m.name));
            }
        }
    }
    let inst: HashMap<&str, HashMap<usize, &str>> = modules.iter().map(|m| (m.name, instances(m, &names).into_iter().collect())).collect();
    // The modules needing the reset: those with a clocked process and those containing one.
    let mut needs: HashSet<&str> = modules.iter().filter(|m| m.lines.iter().any(|l| clocked(l))).map(|m| m.name).collect();
    loop {
        let more: Vec<&str> = modules.iter().filter(|m| !needs.contains(m.name) && inst[m.name].values().any(|k| needs.contains(k))).map(|m| m.name).collect();
        if more.is_empty() {
            break;
        }
        needs.extend(more);
    }
    let mut out = String::with_capacity(verilog.len() + verilog.len() / 8);
    for c in chunks.drain(..) {
        let m = match c {
            Chunk::Text(t) => {
                out.push_str(t);
                out.push('\n');
                continue;
            }
            Chunk::Module(m) => m,
        };
        let reset = needs.contains(m.name);
        let init = initial_values(&m.lines);
        let mems = memories(&m.lines);
        let depth = mems.iter().map(|m| m.words).max().unwrap_or(0);
        let inst = &inst[m.name];
        let new = &renamed[m.name];
        let mut k = 0;
        while k < m.lines.len() {
            let l = m.lines[k];
            if k == 0 {
                let (_, rest) = l.split_once('(').ok_or_else(|| format!("module `{}`: no port list", m.name))?;
                let list = rest.trim_end().strip_suffix(");").ok_or_else(|| format!("module `{}`: the port list is not on one line", m.name))?;
                let mut ports: Vec<&str> = list.split(',').filter(|p| !p.is_empty()).collect();
                if reset {
                    let at = ports.iter().position(|p| *p == "clock").map_or(ports.len(), |p| p + 1);
                    ports.insert(at, RESET);
                }
                let _ = writeln!(out, "module {new}({});", ports.join(","));
            } else if let Some(kind) = inst.get(&k) {
                let (_, rest) = l.trim().split_once(' ').unwrap();
                let indent = &l[..l.len() - l.trim_start().len()];
                let _ = writeln!(out, "{indent}{} {rest}", renamed[kind]);
                if needs.contains(kind) {
                    let _ = writeln!(out, "{indent}    .{RESET}({RESET}),");
                }
            } else if reset && clocked(l) {
                let (lines, next) = with_reset(&m.lines, k, &init, &mems, m.name)?;
                for x in lines {
                    out.push_str(&x);
                    out.push('\n');
                }
                k = next;
                continue;
            } else if l.starts_with("endmodule") {
                let _ = writeln!(out, "endmodule // {new}");
            } else {
                out.push_str(l);
                out.push('\n');
                if reset && mems.first().is_some_and(|f| f.line == k) {
                    let indent = &l[..l.len() - l.trim_start().len()];
                    let bits = address_bits(depth);
                    let _ = writeln!(out, "{indent}reg [{}:0] {CLEAR} = {bits}'d0;  // the word cleared in a reset cycle", bits - 1);
                }
                if reset && l.trim() == "input wire  clock;" {
                    let indent = &l[..l.len() - l.trim_start().len()];
                    let _ = writeln!(out, "{indent}input wire  {RESET};  // Synchronous, active high: every register takes its initial value.");
                }
            }
            k += 1;
        }
        if reset && !m.lines.iter().any(|l| l.trim() == "input wire  clock;") {
            return Err(format!("module `{}` has state but no `clock` input", m.name));
        }
        if reset && mems.iter().any(|x| address_bits(x.words) != address_bits(depth)) {
            return Err(format!("module `{}`: memories of different address widths share one clearing counter", m.name));
        }
    }
    Ok(out)
}

/// The cycles `reset` must be held high in a block's packaged Verilog: the words of its deepest
/// memory (one word of each memory is cleared a cycle), at least 1.
pub fn reset_cycles(packaged: &str) -> u64 {
    memories(&packaged.lines().collect::<Vec<_>>()).iter().map(|m| m.words).max().unwrap_or(1).max(1)
}

/// Whether the first module of packaged Verilog (its top) has the reset input.
pub fn top_has_reset(packaged: &str) -> bool {
    packaged.lines().find(|l| l.starts_with("module ")).and_then(|l| l.split_once('(')).is_some_and(|(_, ports)| ports.trim_end().trim_end_matches(");").split(',').any(|p| p == RESET))
}

/// A block's Verilog as the IP folder ships it: the header (what the block is, the command
/// and configuration it was generated for, its reset, every port with its direction, width
/// and meaning), then the packaged modules ([`package`]).
pub fn ip_verilog(rtl: &Rtl, block: &str, about: &str, prefix: &str, command: &str) -> Result<String, String> {
    let top = module_name(prefix, block);
    let body = package(&rtl.verilog, &top)?;
    let mut h = String::new();
    let _ = writeln!(h, "// {top}: {about}.");
    let _ = writeln!(h, "// Generated by mpgpu {} (`{command}`) for: {}.", env!("CARGO_PKG_VERSION"), rtl.config);
    let cycles = reset_cycles(&body);
    let reset = top_has_reset(&body);
    if reset {
        let _ = writeln!(h, "// Clock: `clock`, rising edge. Reset: `{RESET}`, synchronous and active high, held for at least");
        let _ = writeln!(h, "// {cycles} cycle{}: every register takes its initial value{}.", if cycles == 1 { "" } else { "s" }, if cycles > 1 { " and every memory word is cleared (one word of each memory a cycle)" } else { "" });
    } else {
        let _ = writeln!(h, "// Combinational: no clock, no state, no reset.");
    }
    let _ = writeln!(h, "// Ports (the interface is declared in mpgpu-spec: `mpgpu_spec::units::{block}`):");
    let width = |w: usize| if w == 1 { "1 bit".to_string() } else { format!("{w} bits") };
    let name_w = rtl.inputs.iter().chain(&rtl.outputs).map(|p| p.name.len()).max().unwrap_or(0).max(RESET.len());
    if reset {
        let _ = writeln!(h, "//   input  {:name_w$}  1 bit    clock", "clock");
        let _ = writeln!(h, "//   input  {:name_w$}  1 bit    synchronous reset", RESET);
    }
    for (dir, ports) in [("input ", &rtl.inputs), ("output", &rtl.outputs)] {
        let mut about = "";
        for p in ports.iter() {
            if !p.about.is_empty() {
                about = p.about;
            }
            let _ = writeln!(h, "//   {dir} {:name_w$}  {:7}  {about}", p.name, width(p.width));
        }
    }
    h.push('\n');
    Ok(h + &body)
}

/// The Verilator configuration shipped beside a block's Verilog (`<top>.vlt`): each waived
/// warning class, for the file only, with the reason it holds for all rust-hdl output.
pub fn waivers(file: &str) -> String {
    format!(
        "`verilator_config\n\
         // Waivers for {file} under `verilator --lint-only -Wall` (read with the Verilog: `verilator -Wall {file} <this file>`).\n\
         //\n\
         // WIDTH: rust-hdl writes integer literals as 32-bit constants (`x = 32'h0` into a 4-bit\n\
         // register) and sets one bit of a vector as `(v & ~(1 << k)) | (b << k)` with a 1-bit `b`.\n\
         // Every value fits its destination; only the literal's or operand's declared width differs.\n\
         lint_off -rule WIDTH -file \"*{file}\"\n\
         // UNOPTFLAT: rust-hdl writes a module's logic as one `always @(*)` block, which Verilator\n\
         // schedules as one node: where a part's combinational output feeds logic that also drives\n\
         // the part's inputs, Verilator sees a loop that is none between signals. Real\n\
         // combinational loops are ruled out by yosys on the flattened design (`check -assert`).\n\
         lint_off -rule UNOPTFLAT -file \"*{file}\"\n\
         // DECLFILENAME: the block's parts (`<block>_<part>` modules) are in the block's one file.\n\
         lint_off -rule DECLFILENAME -file \"*{file}\"\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_leaves_out_the_test_only_faults() {
        assert_eq!(config_text("RqPorts { slots: 128, faults: RqFaults { early_free: false, wrong_slot: false } }"), "RqPorts { slots: 128 }");
        assert_eq!(config_text("ProfPorts { faults: ProfFaults { late_latch: false } }"), "ProfPorts");
        assert_eq!(config_text("DssPorts { sms: 16, broken_tie: false }"), "DssPorts { sms: 16 }");
        assert_eq!(config_text("PrioPorts { sms: 4, mode: PpqShared, broken_victim: false }"), "PrioPorts { sms: 4, mode: PpqShared }");
        assert_eq!(config_text("X { faults: F { a: true }, n: 3 }"), "X { n: 3 }");
        assert_eq!(config_text("LowestFirstPorts"), "LowestFirstPorts");
    }
}
