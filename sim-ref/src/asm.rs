//! Assembler and disassembler for the mpgpu ISA (syntax: `docs/isa.md`).
//!
//! `assemble` turns text into kernels, reporting every error with file, line and column and what
//! was expected; `disassemble` prints a kernel back as text that assembles to the same program.
//! The assembler also computes each branch's reconvergence point (its immediate post-dominator)
//! and checks the code against the kernel's resource declaration.

use crate::kernel::Kernel;
use crate::text::quoted as q;
use mpgpu_spec::isa::*;
use std::collections::HashMap;
use std::fmt;

// `lex` and `reconv` depend on nothing else of the assembler; `decode` is an `impl Assembler`
// block over the state declared here (it uses this module, and `lex` through it).
mod decode;
mod lex;
mod reconv;
use lex::{classify_word, describe, lex, parse_number, parse_operands, Raw, RawOp, Tok, Token};
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
            spill_shared: 0,
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
}
