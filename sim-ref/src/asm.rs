//! Assembler and disassembler for the mpgpu ISA (syntax: `docs/isa.md`).
//!
//! `assemble` turns text into kernels, reporting every error with file, line and column and what
//! was expected; `disassemble` prints a kernel back as text that assembles to the same program.
//! The assembler also computes each branch's reconvergence point (its immediate post-dominator)
//! and checks the code against the kernel's resource declaration.

use crate::kernel::Kernel;
use mpgpu_spec::isa::*;
use std::collections::HashMap;
use std::fmt;

mod reconv;
pub use reconv::reconvergence_points;

/// One assembly error, located in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error: {}", self.file, self.line, self.col, self.msg)
    }
}

/// All errors found in one file (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmErrors(pub Vec<AsmError>);

impl fmt::Display for AsmErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AsmErrors {}

/// Assembles a file holding one or more kernels.
pub fn assemble(file: &str, text: &str) -> Result<Vec<Kernel>, AsmErrors> {
    let mut a = Assembler { file: file.to_string(), errors: Vec::new(), kernels: Vec::new(), cur: None };
    for (i, line) in text.lines().enumerate() {
        a.line(i as u32 + 1, line);
    }
    a.finish_kernel(text.lines().count() as u32 + 1);
    if a.kernels.is_empty() && a.errors.is_empty() {
        a.err(1, 1, "no kernel in file: expected a `.kernel NAME` directive".into());
    }
    let mut seen: HashMap<String, u32> = HashMap::new();
    for (k, line) in &a.kernels {
        if let Some(first) = seen.insert(k.name.clone(), *line) {
            if a.errors.len() < MAX_ERRORS {
                a.errors.push(AsmError {
                    file: a.file.clone(),
                    line: *line,
                    col: 1,
                    msg: format!("duplicate kernel {} (first defined on line {first})", q(&k.name)),
                });
            }
        }
    }
    if a.errors.is_empty() {
        Ok(a.kernels.into_iter().map(|(k, _)| k).collect())
    } else {
        a.errors.sort_by_key(|e| (e.line, e.col));
        Err(AsmErrors(a.errors))
    }
}

/// Assembles a file that must hold exactly one kernel.
pub fn assemble_one(file: &str, text: &str) -> Result<Kernel, AsmErrors> {
    let mut ks = assemble(file, text)?;
    if ks.len() != 1 {
        return Err(AsmErrors(vec![AsmError {
            file: file.into(),
            line: 1,
            col: 1,
            msg: format!("expected exactly one kernel, found {}", ks.len()),
        }]));
    }
    Ok(ks.remove(0))
}

/// Prints a kernel as assembly text that assembles back to the same program.
pub fn disassemble(k: &Kernel) -> String {
    use std::fmt::Write;
    let mut names: HashMap<u32, Vec<&str>> = HashMap::new();
    for (n, pc) in &k.labels {
        names.entry(*pc).or_default().push(n);
    }
    let label = |pc: u32| -> String {
        names.get(&pc).map(|v| v[0].to_string()).unwrap_or_else(|| format!("L_{pc}"))
    };
    let mut out = String::new();
    let _ = writeln!(out, ".kernel {}", k.name);
    let _ = writeln!(out, ".regs {}", k.regs);
    let _ = writeln!(out, ".shared {}", k.shared_bytes);
    let _ = writeln!(out, ".local {}", k.local_bytes);
    let _ = writeln!(out, ".threads {}", k.threads);
    let _ = writeln!(out, ".params {}", k.param_bytes);
    // Branch targets without a name get a generated one.
    let mut targets: Vec<u32> = k
        .code
        .iter()
        .filter_map(|i| match i.op {
            Op::Bra { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    targets.sort_unstable();
    targets.dedup();
    for (pc, inst) in k.code.iter().enumerate() {
        let pc = pc as u32;
        match names.get(&pc) {
            Some(v) => {
                for n in v {
                    let _ = writeln!(out, "{n}:");
                }
            }
            None if targets.binary_search(&pc).is_ok() => {
                let _ = writeln!(out, "{}:", label(pc));
            }
            None => {}
        }
        out.push_str("    ");
        let _ = write_inst(&mut out, inst, &label);
        out.push('\n');
    }
    for (n, pc) in &k.labels {
        if *pc as usize >= k.code.len() {
            let _ = writeln!(out, "{n}:");
        }
    }
    out
}

// ----------------------------------------------------------------------------------------------
// Lexing

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Punct(char),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    col: u32,
}

use crate::text::quoted as q;

fn describe(t: Option<&Token>) -> String {
    match t {
        None => "end of line".into(),
        Some(Token { tok: Tok::Word(w), .. }) => q(w),
        Some(Token { tok: Tok::Punct(c), .. }) => format!("`{c}`"),
    }
}

fn lex(line: &str) -> Result<Vec<Token>, (u32, String)> {
    let chars: Vec<char> = line.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let is_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%' | '$');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') || c == '#' {
            break;
        } else if matches!(c, ',' | '[' | ']' | '+' | '-' | '@' | '!' | ':' | ';') {
            toks.push(Token { tok: Tok::Punct(c), col: i as u32 + 1 });
            i += 1;
        } else if is_word(c) {
            let start = i;
            let numeric = c.is_ascii_digit();
            let hex = numeric
                && chars.get(i + 1).is_some_and(|c| matches!(c, 'x' | 'X' | 'f' | 'F'))
                && c == '0';
            while i < chars.len() {
                let d = chars[i];
                if is_word(d) {
                    i += 1;
                } else if numeric
                    && !hex
                    && matches!(d, '+' | '-')
                    && matches!(chars[i - 1], 'e' | 'E')
                {
                    i += 1; // exponent sign of a float literal
                } else {
                    break;
                }
            }
            toks.push(Token { tok: Tok::Word(chars[start..i].iter().collect()), col: start as u32 + 1 });
        } else {
            // (anything but a visible ASCII character by its code point: a control or
            // direction-changing character is not written to the terminal)
            let shown = if c.is_ascii_graphic() { format!("`{c}`") } else { format!("U+{:04X}", c as u32) };
            return Err((i as u32 + 1, format!("unexpected character {shown}")));
        }
    }
    // A trailing `;` is allowed and ignored.
    if matches!(toks.last(), Some(Token { tok: Tok::Punct(';'), .. })) {
        toks.pop();
    }
    Ok(toks)
}

// ----------------------------------------------------------------------------------------------
// Operands

#[derive(Clone, Debug)]
enum Raw {
    Reg(u32),
    Pred(u32),
    Sreg(Sreg),
    Int(i64),
    Float(u32),
    Addr(Option<u32>, i64),
    Label(String),
}

#[derive(Clone, Debug)]
struct RawOp {
    raw: Raw,
    col: u32,
    text: String,
}

fn parse_number(w: &str) -> Option<Raw> {
    if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().filter(|v| *v <= u32::MAX as u64).map(|v| Raw::Int(v as i64));
    }
    if let Some(h) = w.strip_prefix("0f").or_else(|| w.strip_prefix("0F")) {
        if h.len() == 8 {
            return u32::from_str_radix(h, 16).ok().map(Raw::Float);
        }
        return None;
    }
    if w.bytes().all(|b| b.is_ascii_digit()) {
        return w.parse::<u64>().ok().filter(|v| *v <= u32::MAX as u64).map(|v| Raw::Int(v as i64));
    }
    if w.contains(['.', 'e', 'E']) || w == "inf" || w == "nan" {
        return w.parse::<f32>().ok().map(|f| Raw::Float(f.to_bits()));
    }
    None
}

fn classify_word(w: &str) -> Option<Raw> {
    if let Some(n) = w.strip_prefix('r') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return n.parse().ok().map(Raw::Reg);
        }
    }
    if let Some(n) = w.strip_prefix('p') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return n.parse().ok().map(Raw::Pred);
        }
    }
    if let Some(s) = w.strip_prefix('%') {
        return Sreg::parse(s).map(Raw::Sreg);
    }
    if w.starts_with(|c: char| c.is_ascii_digit()) {
        return parse_number(w);
    }
    if w == "inf" || w == "nan" {
        return parse_number(w);
    }
    if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') {
        return Some(Raw::Label(w.to_string()));
    }
    None
}

/// Splits `toks` (everything after the mnemonic) into comma-separated operands.
fn parse_operands(toks: &[Token]) -> Result<Vec<RawOp>, (u32, String)> {
    let mut ops = Vec::new();
    let mut i = 0;
    if toks.is_empty() {
        return Ok(ops);
    }
    loop {
        let start = toks.get(i).ok_or((toks.last().map_or(1, |t| t.col + 1), "expected an operand after `,`".to_string()))?;
        let col = start.col;
        let (raw, text, next) = parse_one_operand(toks, i)?;
        ops.push(RawOp { raw, col, text });
        i = next;
        match toks.get(i) {
            None => break,
            Some(Token { tok: Tok::Punct(','), .. }) => i += 1,
            t => return Err((t.unwrap().col, format!("expected `,` or end of line, found {}", describe(t)))),
        }
    }
    Ok(ops)
}

fn parse_one_operand(toks: &[Token], mut i: usize) -> Result<(Raw, String, usize), (u32, String)> {
    let t = &toks[i];
    match &t.tok {
        Tok::Punct('[') => {
            i += 1;
            let mut base = None;
            let mut offset: i64 = 0;
            let mut text = String::from("[");
            let mut sign: i64 = 1;
            let mut expect_term = true;
            loop {
                let t = toks.get(i).ok_or((toks[i - 1].col + 1, "expected `]` to close the address".to_string()))?;
                match &t.tok {
                    Tok::Punct(']') if !expect_term => {
                        text.push(']');
                        i += 1;
                        break;
                    }
                    Tok::Punct(c @ ('+' | '-')) if !expect_term => {
                        sign = if *c == '-' { -1 } else { 1 };
                        text.push(*c);
                        expect_term = true;
                        i += 1;
                    }
                    Tok::Punct('-') if expect_term && base.is_none() && offset == 0 => {
                        sign = -sign;
                        text.push('-');
                        i += 1;
                    }
                    Tok::Word(w) if expect_term => {
                        text.push_str(w);
                        match classify_word(w) {
                            Some(Raw::Reg(r)) if base.is_none() && sign == 1 => base = Some(r),
                            Some(Raw::Reg(_)) => {
                                return Err((t.col, "an address holds at most one register, added first".into()))
                            }
                            Some(Raw::Int(v)) => offset = offset.saturating_add(sign * v),
                            _ => {
                                return Err((t.col, format!("expected a register or an integer offset in the address, found {}", q(w))))
                            }
                        }
                        expect_term = false;
                        i += 1;
                    }
                    _ => {
                        let what = if expect_term { "a register or an integer offset" } else { "`+`, `-` or `]`" };
                        return Err((t.col, format!("expected {what} in the address, found {}", describe(Some(t)))));
                    }
                }
            }
            if offset < i32::MIN as i64 || offset > i32::MAX as i64 {
                return Err((toks[i - 1].col, format!("address offset {offset} does not fit in 32 bits")));
            }
            Ok((Raw::Addr(base, offset), text, i))
        }
        Tok::Punct('-') => {
            let n = toks.get(i + 1).ok_or((t.col + 1, "expected a number after `-`".to_string()))?;
            match &n.tok {
                Tok::Word(w) => match classify_word(w) {
                    Some(Raw::Int(v)) => Ok((Raw::Int(-v), format!("-{w}"), i + 2)),
                    Some(Raw::Float(b)) if !w.starts_with("0f") => {
                        Ok((Raw::Float((-f32::from_bits(b)).to_bits()), format!("-{w}"), i + 2))
                    }
                    _ => Err((n.col, format!("expected a number after `-`, found {}", q(w)))),
                },
                _ => Err((n.col, format!("expected a number after `-`, found {}", describe(Some(n))))),
            }
        }
        Tok::Word(w) => match classify_word(w) {
            Some(r) => Ok((r, w.clone(), i + 1)),
            None if w.starts_with('%') => Err((t.col, format!("unknown special register {} (expected %tid.x/y/z, %ntid.*, %ctaid.*, %nctaid.*, %laneid, %warpid or %smid)", q(w)))),
            None => Err((t.col, format!("malformed operand {}", q(w)))),
        },
        Tok::Punct(c) => Err((t.col, format!("expected an operand, found `{c}`"))),
    }
}

// ----------------------------------------------------------------------------------------------
// The assembler proper

struct Pending {
    name: String,
    line: u32,
    regs: Option<u32>,
    shared: Option<u32>,
    local: Option<u32>,
    threads: Option<u32>,
    params: Option<u32>,
    code: Vec<Inst>,
    lines: Vec<u32>,
    labels: Vec<(String, u32, u32, u32)>, // name, pc, line, col
    /// Branches whose target label is resolved at the end: (pc, label, line, col).
    fixups: Vec<(u32, String, u32, u32)>,
    /// Register, predicate and address uses to check against the declaration: (what, value, line, col).
    uses: Vec<(Use, u32, u32)>,
    /// An error was already reported inside this kernel: skip checks it could have caused.
    errored: bool,
    /// The kernel reached [`MAX_KERNEL_INSTS`] (reported once).
    too_long: bool,
}

#[derive(Clone, Copy)]
enum Use {
    Reg(u32),
    Pred(u32),
    SharedConst(i64),
    ParamConst(i64),
    LocalConst(i64),
    Phase(u32, u32),
}

struct Assembler {
    file: String,
    errors: Vec<AsmError>,
    kernels: Vec<(Kernel, u32)>,
    cur: Option<Pending>,
}

type Res<T> = Result<T, (u32, String)>;

/// Errors reported per file; later ones are dropped.
const MAX_ERRORS: usize = 100;

/// Instructions per kernel: pcs are 16 bits wide in the hardware (the replay queue keeps them).
pub const MAX_KERNEL_INSTS: usize = 1 << 16;

impl Assembler {
    fn err(&mut self, line: u32, col: u32, msg: String) {
        if let Some(k) = self.cur.as_mut() {
            k.errored = true;
        }
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(AsmError { file: self.file.clone(), line, col, msg });
        }
    }

    fn line(&mut self, ln: u32, text: &str) {
        let toks = match lex(text) {
            Ok(t) => t,
            Err((col, msg)) => return self.err(ln, col, msg),
        };
        if toks.is_empty() {
            return;
        }
        if let Tok::Word(w) = &toks[0].tok {
            if w.starts_with('.') {
                if let Err((col, msg)) = self.directive(ln, &toks) {
                    self.err(ln, col, msg);
                }
                return;
            }
        }
        let mut rest: &[Token] = &toks;
        // Labels.
        while rest.len() >= 2 {
            match (&rest[0].tok, &rest[1].tok) {
                (Tok::Word(w), Tok::Punct(':')) => {
                    let col = rest[0].col;
                    if let Err((c, m)) = self.label(ln, col, w) {
                        self.err(ln, c, m);
                    }
                    rest = &rest[2..];
                }
                _ => break,
            }
        }
        if rest.is_empty() {
            return;
        }
        if self.cur.is_none() {
            return self.err(ln, rest[0].col, "instruction outside a kernel: expected `.kernel NAME` first".into());
        }
        if self.cur.as_ref().is_some_and(|k| k.code.len() >= MAX_KERNEL_INSTS) {
            let k = self.cur.as_mut().unwrap();
            if !k.too_long {
                k.too_long = true;
                let msg = format!("kernel {} has more than {MAX_KERNEL_INSTS} instructions (pcs are 16 bits)", q(&k.name));
                self.err(ln, rest[0].col, msg);
            }
            return;
        }
        match self.instruction(ln, rest) {
            Ok(inst) => {
                let k = self.cur.as_mut().unwrap();
                k.code.push(inst);
                k.lines.push(ln);
            }
            Err((col, msg)) => self.err(ln, col, msg),
        }
    }

    fn label(&mut self, ln: u32, col: u32, name: &str) -> Res<()> {
        let Some(k) = self.cur.as_mut() else {
            return Err((col, "label outside a kernel: expected `.kernel NAME` first".into()));
        };
        match classify_word(name) {
            Some(Raw::Label(_)) => {}
            _ => return Err((col, format!("{} cannot be a label name (it reads as a register, predicate or number)", q(name)))),
        }
        if let Some(prev) = k.labels.iter().find(|l| l.0 == name) {
            return Err((col, format!("duplicate label {} (first defined on line {})", q(name), prev.2)));
        }
        k.labels.push((name.to_string(), k.code.len() as u32, ln, col));
        Ok(())
    }

    fn directive(&mut self, ln: u32, toks: &[Token]) -> Res<()> {
        let Tok::Word(d) = &toks[0].tok else { unreachable!() };
        let dq = q(d);
        let arg = |what: &str| -> Res<(String, u32)> {
            match toks.get(1) {
                Some(Token { tok: Tok::Word(w), col }) => {
                    if toks.len() > 2 {
                        return Err((toks[2].col, format!("unexpected {} after {dq}", describe(toks.get(2)))));
                    }
                    Ok((w.clone(), *col))
                }
                t => Err((t.map_or(toks[0].col + d.len() as u32 + 1, |t| t.col), format!("{dq} expects {what}, found {}", describe(t)))),
            }
        };
        let num = |max: u32, what: &str| -> Res<u32> {
            let (w, col) = arg(what)?;
            match parse_number(&w) {
                Some(Raw::Int(v)) if v >= 0 && v <= max as i64 => Ok(v as u32),
                Some(Raw::Int(v)) => Err((col, format!("{dq} value {v} is out of range: expected 0..={max}"))),
                _ => Err((col, format!("{dq} expects {what}, found {}", q(&w)))),
            }
        };
        if d == ".kernel" {
            let (name, col) = arg("a kernel name")?;
            if !matches!(classify_word(&name), Some(Raw::Label(_))) || name.contains('.') {
                return Err((col, format!("{} is not a valid kernel name (letters, digits and `_`)", q(&name))));
            }
            self.finish_kernel(ln);
            self.cur = Some(Pending {
                name,
                line: ln,
                regs: None,
                shared: None,
                local: None,
                threads: None,
                params: None,
                code: Vec::new(),
                lines: Vec::new(),
                labels: Vec::new(),
                fixups: Vec::new(),
                uses: Vec::new(),
                errored: false,
                too_long: false,
            });
            return Ok(());
        }
        if self.cur.is_none() {
            return Err((toks[0].col, format!("{dq} outside a kernel: expected `.kernel NAME` first")));
        }
        let (slot, v) = match d.as_str() {
            ".regs" => (0, num(MAX_REGS, "a register count")?),
            ".shared" => (1, num(MAX_SHARED_BYTES, "a byte count")?),
            ".local" => (2, num(MAX_LOCAL_BYTES, "a byte count")?),
            ".threads" => (3, num(MAX_THREADS_PER_BLOCK, "a thread count")?),
            ".params" => (4, num(MAX_PARAM_BYTES, "a byte count")?),
            _ => {
                return Err((toks[0].col, format!("unknown directive {dq} (expected .kernel, .regs, .shared, .local, .threads or .params)")))
            }
        };
        let col = toks[1].col;
        if (slot == 1 || slot == 2 || slot == 4) && v % 4 != 0 {
            return Err((col, format!("{dq} must be a multiple of 4 bytes, found {v}")));
        }
        if slot == 3 && v == 0 {
            return Err((col, "`.threads` must be at least 1".into()));
        }
        let k = self.cur.as_mut().unwrap();
        let field = match slot {
            0 => &mut k.regs,
            1 => &mut k.shared,
            2 => &mut k.local,
            3 => &mut k.threads,
            _ => &mut k.params,
        };
        if field.is_some() {
            return Err((toks[0].col, format!("{dq} given twice in kernel {}", q(&k.name))));
        }
        *field = Some(v);
        Ok(())
    }

    fn finish_kernel(&mut self, end_line: u32) {
        let Some(p) = self.cur.take() else { return };
        let quiet = p.errored;
        let file = self.file.clone();
        let mut errs: Vec<(u32, u32, String)> = Vec::new();
        let Some(regs) = p.regs else {
            if !quiet {
                self.err(p.line, 1, format!("kernel {} has no `.regs` directive (registers per thread)", q(&p.name)));
            }
            return;
        };
        let Some(threads) = p.threads else {
            if !quiet {
                self.err(p.line, 1, format!("kernel {} has no `.threads` directive (threads per block)", q(&p.name)));
            }
            return;
        };
        let shared = p.shared.unwrap_or(0);
        let local = p.local.unwrap_or(0);
        let params = p.params.unwrap_or(0);
        if p.code.is_empty() {
            if !quiet {
                self.err(p.line, 1, format!("kernel {} has no instructions", q(&p.name)));
            }
            return;
        }
        let mut code = p.code;
        for (pc, label, line, col) in &p.fixups {
            match p.labels.iter().find(|l| &l.0 == label) {
                Some(l) if (l.1 as usize) < code.len() => {
                    code[*pc as usize].op = Op::Bra { target: l.1, reconv: u32::MAX };
                }
                Some(_) => errs.push((*line, *col, format!("label {} marks the end of the kernel, not an instruction", q(label)))),
                None => errs.push((*line, *col, format!("undefined label {}", q(label)))),
            }
        }
        for (u, line, col) in &p.uses {
            let m = match *u {
                Use::Reg(r) if r >= regs => Some(format!("register r{r} is outside the declared `.regs {regs}` (r0..r{})", regs.saturating_sub(1))),
                Use::Pred(q) if q >= NUM_PREDS => Some(format!("predicate p{q} does not exist: predicates are p0..p{}", NUM_PREDS - 1)),
                Use::SharedConst(o) if o < 0 || o + 4 > shared as i64 => Some(format!("shared access at byte {o} is outside the declared `.shared {shared}`")),
                Use::LocalConst(o) if o < 0 || o + 4 > local as i64 => Some(format!("local access at byte {o} is outside the declared `.local {local}`")),
                Use::ParamConst(o) if o < 0 || o + 4 > params as i64 => Some(format!("parameter access at byte {o} is outside the declared `.params {params}`")),
                Use::Phase(r, _) if r > regs => Some(format!("phase needs {r} registers but the kernel declares `.regs {regs}`")),
                Use::Phase(_, s) if s > shared => Some(format!("phase needs {s} scratchpad bytes but the kernel declares `.shared {shared}`")),
                _ => None,
            };
            if let Some(m) = m {
                errs.push((*line, *col, m));
            }
        }
        let last = code.last().unwrap();
        let ends = last.guard.is_none() && matches!(last.op, Op::Exit | Op::Bra { .. });
        if !ends && !quiet {
            let line = *p.lines.last().unwrap();
            errs.push((line, 1, format!("kernel {} can run off its end: the last instruction must be `exit` or an unconditional `bra`", q(&p.name))));
        }
        let _ = end_line;
        if !errs.is_empty() {
            for (l, c, m) in errs {
                self.err(l, c, m);
            }
            return;
        }
        let reconv = reconvergence_points(&code);
        for (pc, inst) in code.iter_mut().enumerate() {
            if let Op::Bra { target, .. } = inst.op {
                inst.op = Op::Bra { target, reconv: reconv[pc] };
            }
        }
        let mut labels: Vec<(String, u32)> = p.labels.into_iter().map(|l| (l.0, l.1)).collect();
        labels.sort_by_key(|l| l.1);
        let k = Kernel {
            name: p.name,
            regs,
            shared_bytes: shared,
            local_bytes: local,
            threads,
            param_bytes: params,
            code,
            labels,
            file,
            lines: p.lines,
        };
        self.kernels.push((k, p.line));
    }

    fn instruction(&mut self, ln: u32, toks: &[Token]) -> Res<Inst> {
        let mut i = 0;
        let mut guard = None;
        if let Tok::Punct('@') = toks[0].tok {
            i = 1;
            let mut neg = false;
            if let Some(Token { tok: Tok::Punct('!'), .. }) = toks.get(i) {
                neg = true;
                i += 1;
            }
            match toks.get(i) {
                Some(Token { tok: Tok::Word(w), col }) => match classify_word(w) {
                    Some(Raw::Pred(p)) => {
                        self.use_(Use::Pred(p), ln, *col);
                        guard = Some(Guard { pred: p.min(255) as u8, neg });
                    }
                    _ => return Err((*col, format!("expected a guard predicate (pN) after `@`, found {}", q(w)))),
                },
                t => return Err((t.map_or(toks[0].col + 1, |t| t.col), format!("expected a guard predicate (pN) after `@`, found {}", describe(t)))),
            }
            i += 1;
        }
        let (mn, mcol) = match toks.get(i) {
            Some(Token { tok: Tok::Word(w), col }) => (w.clone(), *col),
            t => return Err((t.map_or(toks[0].col, |t| t.col), format!("expected an instruction mnemonic, found {}", describe(t)))),
        };
        let ops = parse_operands(&toks[i + 1..])?;
        let op = self.decode(ln, &mn, mcol, &ops)?;
        Ok(Inst { guard, op })
    }

    fn use_(&mut self, u: Use, ln: u32, col: u32) {
        if let Some(k) = self.cur.as_mut() {
            k.uses.push((u, ln, col));
        }
    }

    fn decode(&mut self, ln: u32, mn: &str, mcol: u32, ops: &[RawOp]) -> Res<Op> {
        let mnq = q(mn);
        let parts: Vec<&str> = mn.split('.').collect();
        let base = parts[0];
        let mods: Vec<&str> = parts[1..].iter().copied().filter(|m| *m != "approx" && *m != "uni" && *m != "lo").collect();
        let end_col = ops.last().map_or(mcol + mn.len() as u32, |o| o.col + o.text.len() as u32);
        let count = |n: usize, form: &str| -> Res<()> {
            if ops.len() != n {
                Err((if ops.len() > n { ops[n].col } else { end_col }, format!("{mnq} takes {n} operand{} ({form}), found {}", if n == 1 { "" } else { "s" }, ops.len())))
            } else {
                Ok(())
            }
        };
        let ty_of = |m: Option<&&str>| -> Res<Ty> {
            match m {
                Some(t) => Ty::parse(t).ok_or((mcol, format!("unknown type {} in {mnq} (expected .u32, .s32, .f32 or .b32)", q(&format!(".{t}"))))),
                None => Err((mcol, format!("{mnq} needs a type suffix (.u32, .s32, .f32 or .b32)"))),
            }
        };
        let no_more = |n: usize| -> Res<()> {
            if mods.len() > n {
                Err((mcol, format!("unexpected modifier {} in {mnq}", q(&format!(".{}", mods[n])))))
            } else {
                Ok(())
            }
        };
        if let Some(bop) = BinOp::ALL.into_iter().find(|b| b.name() == base || (base == "mul" && mods.first() == Some(&"hi") && *b == BinOp::MulHi)) {
            if mods.first() == Some(&"pred") {
                let pop = match base {
                    "and" => PredOp::And,
                    "or" => PredOp::Or,
                    "xor" => PredOp::Xor,
                    _ => return Err((mcol, format!("`{base}` has no .pred form (predicate logic is and/or/xor/not.pred)"))),
                };
                no_more(1)?;
                count(3, "pd, pa, pb")?;
                let d = self.pred(ln, &ops[0])?;
                let a = self.pred(ln, &ops[1])?;
                let b = self.pred(ln, &ops[2])?;
                return Ok(Op::Pred { op: pop, d, a, b });
            }
            let (bop, rest) = if base == "mul" && mods.first() == Some(&"hi") { (BinOp::MulHi, &mods[1..]) } else { (bop, &mods[..]) };
            let ty = ty_of(rest.first())?;
            if rest.len() > 1 {
                return Err((mcol, format!("unexpected modifier {} in {mnq}", q(&format!(".{}", rest[1])))));
            }
            if !bop.allows(ty) {
                return Err((mcol, format!("`{}` does not take type .{}", bop.name(), ty.name())));
            }
            count(3, "d, a, b")?;
            let d = self.reg(ln, &ops[0])?;
            let a = self.src(ln, &ops[1], ty)?;
            let bt = if matches!(bop, BinOp::Shl | BinOp::Shr) { Ty::U32 } else { ty };
            let b = self.src(ln, &ops[2], bt)?;
            return Ok(Op::Bin { op: bop, ty, d, a, b });
        }
        if let Some(uop) = UnOp::ALL.into_iter().find(|u| u.name() == base) {
            if uop == UnOp::Not && mods.first() == Some(&"pred") {
                no_more(1)?;
                count(2, "pd, pa")?;
                let d = self.pred(ln, &ops[0])?;
                let a = self.pred(ln, &ops[1])?;
                return Ok(Op::Pred { op: PredOp::Not, d, a, b: a });
            }
            let ty = ty_of(mods.first())?;
            no_more(1)?;
            if !uop.allows(ty) {
                return Err((mcol, format!("`{}` does not take type .{}", uop.name(), ty.name())));
            }
            count(2, "d, a")?;
            let d = self.reg(ln, &ops[0])?;
            let a = self.src(ln, &ops[1], ty)?;
            return Ok(Op::Un { op: uop, ty, d, a });
        }
        match base {
            "mad" => {
                let ty = ty_of(mods.first())?;
                no_more(1)?;
                if ty == Ty::B32 {
                    return Err((mcol, "`mad` does not take type .b32".into()));
                }
                count(4, "d, a, b, c")?;
                let d = self.reg(ln, &ops[0])?;
                let a = self.src(ln, &ops[1], ty)?;
                let b = self.src(ln, &ops[2], ty)?;
                let c = self.src(ln, &ops[3], ty)?;
                Ok(Op::Mad { ty, d, a, b, c })
            }
            "cvt" => {
                let (rnd, tys) = match mods.first().and_then(|m| Rnd::parse(m)) {
                    Some(r) => (Some(r), &mods[1..]),
                    None => (None, &mods[..]),
                };
                if tys.len() != 2 {
                    return Err((mcol, format!("`cvt` needs a destination and a source type, as `cvt.f32.s32`; found {mnq}")));
                }
                let to = ty_of(tys.first())?;
                let from = ty_of(tys.get(1))?;
                let float_to_float = to == Ty::F32 && from == Ty::F32;
                let rnd = match rnd {
                    Some(r) => r,
                    None if float_to_float => return Err((mcol, "`cvt.f32.f32` needs a rounding modifier: .rni, .rzi, .rmi or .rpi".into())),
                    None if to == Ty::F32 => Rnd::Rn,
                    None => Rnd::Rz,
                };
                let ok = match rnd {
                    Rnd::Rz => to != Ty::F32,
                    Rnd::Rn => to == Ty::F32 && from != Ty::F32,
                    _ => float_to_float,
                };
                if !ok {
                    return Err((mcol, format!("rounding `.{}` does not apply to a conversion from .{} to .{}", rnd.name(), from.name(), to.name())));
                }
                count(2, "d, a")?;
                let d = self.reg(ln, &ops[0])?;
                let a = self.src(ln, &ops[1], from)?;
                Ok(Op::Cvt { rnd, to, from, d, a })
            }
            "setp" => {
                let cmp = match mods.first() {
                    Some(c) => Cmp::parse(c).ok_or((mcol, format!("unknown comparison {} (expected eq, ne, lt, le, gt or ge)", q(&format!(".{c}")))))?,
                    None => return Err((mcol, "`setp` needs a comparison and a type, as `setp.lt.s32`".into())),
                };
                let ty = ty_of(mods.get(1))?;
                no_more(2)?;
                count(3, "pd, a, b")?;
                let d = self.pred(ln, &ops[0])?;
                let a = self.src(ln, &ops[1], ty)?;
                let b = self.src(ln, &ops[2], ty)?;
                Ok(Op::Setp { cmp, ty, d, a, b })
            }
            "selp" => {
                let ty = ty_of(mods.first())?;
                no_more(1)?;
                count(4, "d, a, b, p")?;
                let d = self.reg(ln, &ops[0])?;
                let a = self.src(ln, &ops[1], ty)?;
                let b = self.src(ln, &ops[2], ty)?;
                let p = self.pred(ln, &ops[3])?;
                Ok(Op::Selp { ty, d, a, b, p })
            }
            "ld" | "st" | "atom" => {
                let space = match mods.first() {
                    Some(s) => Space::parse(s).ok_or((mcol, format!("unknown state space {} (expected .global, .shared, .local or .param)", q(&format!(".{s}")))))?,
                    None => return Err((mcol, format!("`{base}` needs a state space, as `{base}.global`"))),
                };
                if base == "atom" {
                    if !matches!(space, Space::Global | Space::Shared) {
                        return Err((mcol, format!("atomics work on .global and .shared memory, not .{}", space.name())));
                    }
                    let aop = match mods.get(1) {
                        Some(o) => AtomOp::ALL.into_iter().find(|a| a.name() == *o).ok_or((mcol, format!("unknown atomic operation {} (expected add, min, max, exch or cas)", q(&format!(".{o}")))))?,
                        None => return Err((mcol, "`atom` needs an operation, as `atom.global.add.u32`".into())),
                    };
                    let ty = ty_of(mods.get(2))?;
                    no_more(3)?;
                    if !aop.allows(ty) {
                        return Err((mcol, format!("`atom.{}` does not take type .{}", aop.name(), ty.name())));
                    }
                    let n = if aop == AtomOp::Cas { 4 } else { 3 };
                    count(n, if n == 4 { "d, [addr], compare, new" } else { "d, [addr], b" })?;
                    let d = self.reg(ln, &ops[0])?;
                    let addr = self.addr(ln, &ops[1], space)?;
                    let b = self.src(ln, &ops[2], ty)?;
                    let c = if n == 4 { self.src(ln, &ops[3], ty)? } else { Operand::Imm(0) };
                    return Ok(Op::Atom { space, op: aop, ty, d, addr, b, c });
                }
                let ty = ty_of(mods.get(1))?;
                no_more(2)?;
                if base == "ld" {
                    count(2, "d, [addr]")?;
                    let d = self.reg(ln, &ops[0])?;
                    let addr = self.addr(ln, &ops[1], space)?;
                    Ok(Op::Ld { space, ty, d, addr })
                } else {
                    if space == Space::Param {
                        return Err((mcol, "parameter space is read-only: `st.param` is not allowed".into()));
                    }
                    count(2, "[addr], src")?;
                    let addr = self.addr(ln, &ops[0], space)?;
                    let src = self.src(ln, &ops[1], ty)?;
                    Ok(Op::St { space, ty, addr, src })
                }
            }
            "bra" => {
                no_more(0)?;
                count(1, "label")?;
                match &ops[0].raw {
                    Raw::Label(l) => {
                        let k = self.cur.as_mut().unwrap();
                        k.fixups.push((k.code.len() as u32, l.clone(), ln, ops[0].col));
                        Ok(Op::Bra { target: 0, reconv: u32::MAX })
                    }
                    _ => Err((ops[0].col, format!("expected a label, found {}", q(&ops[0].text)))),
                }
            }
            "bar" => {
                if mods.first().is_some_and(|m| *m != "sync") {
                    return Err((mcol, format!("unknown barrier {mnq} (expected bar.sync)")));
                }
                no_more(1)?;
                if ops.len() == 1 && matches!(ops[0].raw, Raw::Int(0)) {
                    return Ok(Op::Bar);
                }
                count(0, "no operands, or barrier 0")?;
                Ok(Op::Bar)
            }
            "membar" => {
                let scope = match mods.first() {
                    Some(&"cta") => Scope::Cta,
                    Some(&"gl") => Scope::Gl,
                    _ => return Err((mcol, format!("{mnq} needs a scope: membar.cta or membar.gl"))),
                };
                no_more(1)?;
                count(0, "none")?;
                Ok(Op::Membar { scope })
            }
            "exit" | "nop" => {
                no_more(0)?;
                count(0, "none")?;
                Ok(if base == "exit" { Op::Exit } else { Op::Nop })
            }
            "phase" => {
                no_more(0)?;
                count(2, "live registers, scratchpad bytes")?;
                let r = self.uint(&ops[0], 255)?;
                let s = self.uint(&ops[1], MAX_SHARED_BYTES)?;
                self.use_(Use::Phase(r, s), ln, ops[0].col);
                Ok(Op::Phase { regs: r as u16, smem: s })
            }
            _ => Err((mcol, format!("unknown instruction {mnq}"))),
        }
    }

    fn uint(&self, o: &RawOp, max: u32) -> Res<u32> {
        match o.raw {
            Raw::Int(v) if (0..=max as i64).contains(&v) => Ok(v as u32),
            _ => Err((o.col, format!("expected an integer in 0..={max}, found {}", q(&o.text)))),
        }
    }

    fn reg(&mut self, ln: u32, o: &RawOp) -> Res<u8> {
        match o.raw {
            Raw::Reg(r) if r < MAX_REGS => {
                self.use_(Use::Reg(r), ln, o.col);
                Ok(r as u8)
            }
            Raw::Reg(r) => Err((o.col, format!("register r{r} does not exist: registers are r0..r{}", MAX_REGS - 1))),
            _ => Err((o.col, format!("expected a register (rN), found {}", q(&o.text)))),
        }
    }

    fn pred(&mut self, ln: u32, o: &RawOp) -> Res<u8> {
        match o.raw {
            Raw::Pred(p) => {
                self.use_(Use::Pred(p), ln, o.col);
                Ok(p.min(255) as u8)
            }
            _ => Err((o.col, format!("expected a predicate (pN), found {}", q(&o.text)))),
        }
    }

    fn src(&mut self, ln: u32, o: &RawOp, ty: Ty) -> Res<Operand> {
        match &o.raw {
            Raw::Reg(_) => Ok(Operand::Reg(self.reg(ln, o)?)),
            Raw::Sreg(s) => Ok(Operand::Sreg(*s)),
            Raw::Int(v) => {
                if ty == Ty::F32 && !o.text.starts_with("0x") {
                    return Ok(Operand::Imm((*v as f32).to_bits()));
                }
                if *v < i32::MIN as i64 || *v > u32::MAX as i64 {
                    return Err((o.col, format!("immediate {v} does not fit in 32 bits")));
                }
                Ok(Operand::Imm(*v as u32))
            }
            Raw::Float(bits) => {
                if ty != Ty::F32 {
                    return Err((o.col, format!("float literal {} in a .{} instruction: expected an integer", q(&o.text), ty.name())));
                }
                Ok(Operand::Imm(*bits))
            }
            Raw::Pred(_) => Err((o.col, format!("expected a register or an immediate, found predicate {}", q(&o.text)))),
            Raw::Addr(..) => Err((o.col, format!("expected a register or an immediate, found address {}", q(&o.text)))),
            Raw::Label(l) => Err((o.col, format!("expected a register or an immediate, found {}", q(l)))),
        }
    }

    fn addr(&mut self, ln: u32, o: &RawOp, space: Space) -> Res<Addr> {
        match o.raw {
            Raw::Addr(base, off) => {
                if let Some(r) = base {
                    if r >= MAX_REGS {
                        return Err((o.col, format!("register r{r} does not exist")));
                    }
                    self.use_(Use::Reg(r), ln, o.col);
                } else {
                    if off % 4 != 0 {
                        return Err((o.col, format!("constant address {off} is not 4-byte aligned")));
                    }
                    match space {
                        Space::Shared => self.use_(Use::SharedConst(off), ln, o.col),
                        Space::Local => self.use_(Use::LocalConst(off), ln, o.col),
                        Space::Param => self.use_(Use::ParamConst(off), ln, o.col),
                        Space::Global => {}
                    }
                }
                Ok(Addr { base: base.map(|r| r as u8), offset: off as i32 })
            }
            _ => Err((o.col, format!("expected an address in brackets ([rN+offset]), found {}", q(&o.text)))),
        }
    }
}
