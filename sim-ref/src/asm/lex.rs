//! The assembler's lexing of a line into tokens, and of an instruction's tokens into raw
//! operands (registers, predicates, special registers, numbers, addresses, labels), each with
//! its column for error messages. Depends on nothing else of the assembler.

use crate::text::quoted as q;
use mpgpu_spec::isa::Sreg;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
    Word(String),
    Punct(char),
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) col: u32,
}

pub(super) fn describe(t: Option<&Token>) -> String {
    match t {
        None => "end of line".into(),
        Some(Token { tok: Tok::Word(w), .. }) => q(w),
        Some(Token { tok: Tok::Punct(c), .. }) => format!("`{c}`"),
    }
}

pub(super) fn lex(line: &str) -> Result<Vec<Token>, (u32, String)> {
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

#[derive(Clone, Debug)]
pub(super) enum Raw {
    Reg(u32),
    Pred(u32),
    Sreg(Sreg),
    Int(i64),
    Float(u32),
    Addr(Option<u32>, i64),
    Label(String),
}

#[derive(Clone, Debug)]
pub(super) struct RawOp {
    pub(super) raw: Raw,
    pub(super) col: u32,
    pub(super) text: String,
}

pub(super) fn parse_number(w: &str) -> Option<Raw> {
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

pub(super) fn classify_word(w: &str) -> Option<Raw> {
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
pub(super) fn parse_operands(toks: &[Token]) -> Result<Vec<RawOp>, (u32, String)> {
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
