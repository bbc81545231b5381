//! The assembler's decoding of a mnemonic and its raw operands into an instruction, with
//! the checks of each operand's kind and range.

use super::*;

impl Assembler {
    pub(super) fn decode(&mut self, ln: u32, mn: &str, mcol: u32, ops: &[RawOp]) -> Res<Op> {
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
