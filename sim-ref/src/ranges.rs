//! The scratchpad a kernel addresses: a value-range analysis of its registers (intervals,
//! refined by the conditions of the branches taken, widened at loop heads and then narrowed),
//! and from it the highest shared-memory byte any access can touch. Zorua's phase specifiers
//! carry a phase's live scratchpad (Vijaykumar et al., MICRO 2016, §4.6); a kernel declared
//! with more than it addresses (a scratchpad sweep's larger declarations) then asks only for
//! what it uses. Decisions are in `docs/zorua.md`, "Phase specifiers".
//!
//! The analysis is per lane: a lane follows one path through the control-flow graph whatever
//! the others do, so a bound that holds on every path holds for every lane. What it does not
//! know is the whole 32-bit range: loaded values, parameters, block and grid indices, and any
//! arithmetic that could wrap. A shared access whose address it cannot bound makes the
//! kernel's extent its declaration.

use mpgpu_spec::isa::{BinOp, Cmp, Inst, Op, Operand, PredOp, Space, Sreg, Ty, UnOp};

/// A closed interval of u32 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iv {
    pub lo: u32,
    pub hi: u32,
}

const TOP: Iv = Iv { lo: 0, hi: u32::MAX };
const SIGN: u32 = 1 << 31;

impl Iv {
    fn exact(v: u32) -> Iv {
        Iv { lo: v, hi: v }
    }

    /// From u64 bounds: the whole range if the upper one does not fit (the value may wrap).
    fn wide(lo: u64, hi: u64) -> Iv {
        if hi > u32::MAX as u64 {
            TOP
        } else {
            Iv { lo: lo as u32, hi: hi as u32 }
        }
    }

    fn hull(self, o: Iv) -> Iv {
        Iv { lo: self.lo.min(o.lo), hi: self.hi.max(o.hi) }
    }

    /// Non-negative as a signed value: signed and unsigned readings agree.
    fn nonneg(self) -> bool {
        self.hi < SIGN
    }
}

/// What a predicate register is known to hold: `a cmp b` at type `ty`, the operands as they
/// are now (forgotten when one of them is written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cond {
    cmp: Cmp,
    ty: Ty,
    a: Operand,
    b: Operand,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    regs: Vec<Iv>,
    preds: [Option<Cond>; 8],
}

fn negate(c: Cmp) -> Cmp {
    match c {
        Cmp::Eq => Cmp::Ne,
        Cmp::Ne => Cmp::Eq,
        Cmp::Lt => Cmp::Ge,
        Cmp::Le => Cmp::Gt,
        Cmp::Gt => Cmp::Le,
        Cmp::Ge => Cmp::Lt,
    }
}

/// The launch facts the analysis starts from.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Threads per block: bounds `%tid` and `%ntid`.
    pub threads: u32,
}

impl State {
    fn val(&self, o: Operand, cx: Ctx) -> Iv {
        match o {
            Operand::Imm(v) => Iv::exact(v),
            Operand::Reg(r) => self.regs.get(r as usize).copied().unwrap_or(TOP),
            Operand::Sreg(s) => match s {
                Sreg::Tid(_) => Iv { lo: 0, hi: cx.threads.saturating_sub(1) },
                Sreg::Ntid(_) => Iv { lo: 1, hi: cx.threads.max(1) },
                Sreg::LaneId => Iv { lo: 0, hi: 31 },
                _ => TOP,
            },
        }
    }

    fn join(&self, o: &State) -> State {
        State {
            regs: self.regs.iter().zip(&o.regs).map(|(a, b)| a.hull(*b)).collect(),
            preds: std::array::from_fn(|i| if self.preds[i] == o.preds[i] { self.preds[i] } else { None }),
        }
    }

    /// `self` widened by `o` (which contains it): a bound that moved goes to its end.
    fn widen(&self, o: &State) -> State {
        let mut w = self.join(o);
        for (x, old) in w.regs.iter_mut().zip(&self.regs) {
            if x.lo < old.lo {
                x.lo = 0;
            }
            if x.hi > old.hi {
                x.hi = u32::MAX;
            }
        }
        w
    }

    /// Register `d` written with `v` (`guarded`: perhaps not, in this lane).
    fn write(&mut self, d: u8, v: Iv, guarded: bool) {
        let Some(slot) = self.regs.get_mut(d as usize) else { return };
        *slot = if guarded { slot.hull(v) } else { v };
        for p in self.preds.iter_mut() {
            if p.is_some_and(|c| c.a == Operand::Reg(d) || c.b == Operand::Reg(d)) {
                *p = None;
            }
        }
    }

    /// `self` where predicate `p` is `truth`; `None` where it cannot be.
    fn refine(&self, p: u8, truth: bool, cx: Ctx) -> Option<State> {
        let Some(c) = self.preds.get(p as usize).copied().flatten() else { return Some(self.clone()) };
        let (a, b) = (self.val(c.a, cx), self.val(c.b, cx));
        match c.ty {
            Ty::F32 => return Some(self.clone()),
            Ty::S32 if !(a.nonneg() && b.nonneg()) => return Some(self.clone()),
            _ => {}
        }
        let cmp = if truth { c.cmp } else { negate(c.cmp) };
        // (a < b: a.hi <= b.hi - 1 and b.lo >= a.lo + 1; the others alike)
        let (na, nb) = match cmp {
            Cmp::Lt if b.hi == 0 || a.lo == u32::MAX => return None,
            Cmp::Lt => (Iv { lo: a.lo, hi: a.hi.min(b.hi - 1) }, Iv { lo: b.lo.max(a.lo + 1), hi: b.hi }),
            Cmp::Le => (Iv { lo: a.lo, hi: a.hi.min(b.hi) }, Iv { lo: b.lo.max(a.lo), hi: b.hi }),
            Cmp::Gt if a.hi == 0 || b.lo == u32::MAX => return None,
            Cmp::Gt => (Iv { lo: a.lo.max(b.lo + 1), hi: a.hi }, Iv { lo: b.lo, hi: b.hi.min(a.hi - 1) }),
            Cmp::Ge => (Iv { lo: a.lo.max(b.lo), hi: a.hi }, Iv { lo: b.lo, hi: b.hi.min(a.hi) }),
            Cmp::Eq => {
                let m = Iv { lo: a.lo.max(b.lo), hi: a.hi.min(b.hi) };
                (m, m)
            }
            Cmp::Ne => (a, b),
        };
        if na.lo > na.hi || nb.lo > nb.hi {
            return None;
        }
        let mut s = self.clone();
        for (o, v) in [(c.a, na), (c.b, nb)] {
            if let Operand::Reg(r) = o {
                if let Some(x) = s.regs.get_mut(r as usize) {
                    *x = v;
                }
            }
        }
        Some(s)
    }
}

fn bin(op: BinOp, ty: Ty, a: Iv, b: Iv) -> Iv {
    use BinOp::*;
    if ty == Ty::F32 {
        return TOP;
    }
    // (division, remainder, minimum, maximum and right shifts read the sign at .s32: where
    // both operands are non-negative the unsigned reading is the same)
    let signed = ty == Ty::S32 && matches!(op, Div | Rem | Min | Max | MulHi | Shr);
    if signed && !(a.nonneg() && b.nonneg()) {
        return TOP;
    }
    let (al, ah, bl, bh) = (a.lo as u64, a.hi as u64, b.lo as u64, b.hi as u64);
    let mask = |x: u32| if x == 0 { 0 } else { u32::MAX >> x.leading_zeros() };
    match op {
        Add => Iv::wide(al + bl, ah + bh),
        Sub if al >= bh => Iv::wide(al - bh, ah - bl),
        Sub => TOP,
        Mul => Iv::wide(al * bl, ah * bh),
        MulHi => Iv::wide((al * bl) >> 32, (ah * bh) >> 32),
        Div if bl > 0 => Iv::wide(al / bh, ah / bl),
        Div => TOP,
        // (x rem 0 is x)
        Rem if bl == 0 => Iv { lo: 0, hi: a.hi },
        Rem if ah < bl => a,
        Rem => Iv { lo: 0, hi: a.hi.min(b.hi - 1) },
        Min => Iv { lo: a.lo.min(b.lo), hi: a.hi.min(b.hi) },
        Max => Iv { lo: a.lo.max(b.lo), hi: a.hi.max(b.hi) },
        And => Iv { lo: 0, hi: a.hi.min(b.hi) },
        Or => Iv { lo: a.lo.max(b.lo), hi: mask(a.hi.max(b.hi)) },
        Xor => Iv { lo: 0, hi: mask(a.hi.max(b.hi)) },
        Shl if bl >= 32 => Iv::exact(0),
        Shl if bh >= 32 => TOP,
        Shl => Iv::wide(al << bl, ah << bh),
        Shr if bl >= 32 => Iv::exact(0),
        Shr => Iv { lo: if bh >= 32 { 0 } else { a.lo >> bh }, hi: a.hi >> bl },
    }
}

fn un(op: UnOp, ty: Ty, a: Iv) -> Iv {
    match (op, ty) {
        (UnOp::Mov, _) => a,
        (_, Ty::F32) => TOP,
        (UnOp::Abs, _) if a.nonneg() => a,
        (UnOp::Neg, _) if a == Iv::exact(0) => a,
        (UnOp::Popc | UnOp::Clz, _) => Iv { lo: 0, hi: 32 },
        _ => TOP,
    }
}

/// Successors of instruction `pc` ([`crate::flow::successors`]), each with the guard
/// outcome its edge implies (`(target, Some((pred, truth)))`): a guarded branch's target has
/// the guard true, the fall-through of a guarded branch or `exit` has it false.
fn edges(code: &[Inst], pc: usize) -> Vec<(usize, Option<(u8, bool)>)> {
    let i = &code[pc];
    let [next, taken] = crate::flow::successors(code, pc);
    match (i.op, i.guard) {
        (Op::Bra { .. } | Op::Exit, Some(g)) => {
            let mut v: Vec<_> = taken.map(|t| (t, Some((g.pred, !g.neg)))).into_iter().collect();
            v.extend(next.map(|n| (n, Some((g.pred, g.neg)))));
            v
        }
        _ => [next, taken].into_iter().flatten().map(|t| (t, None)).collect(),
    }
}

/// The state after instruction `i` from `s` (its guard, if any, not refined into `s`).
fn step(i: &Inst, s: &State, cx: Ctx) -> State {
    let guarded = i.guard.is_some();
    // (the lanes that execute it have the guard true)
    let run = match i.guard {
        Some(g) => match s.refine(g.pred, !g.neg, cx) {
            Some(r) => r,
            None => return s.clone(),
        },
        None => s.clone(),
    };
    let mut out = s.clone();
    let v = |o| run.val(o, cx);
    match i.op {
        Op::Bin { op, ty, d, a, b } => out.write(d, bin(op, ty, v(a), v(b)), guarded),
        Op::Mad { ty, d, a, b, c } => {
            let r = if ty == Ty::F32 { TOP } else { bin(BinOp::Add, ty, bin(BinOp::Mul, ty, v(a), v(b)), v(c)) };
            out.write(d, r, guarded)
        }
        Op::Un { op, ty, d, a } => out.write(d, un(op, ty, v(a)), guarded),
        Op::Cvt { to, from, d, a, .. } => {
            let x = v(a);
            let r = if to != Ty::F32 && from != Ty::F32 && x.nonneg() { x } else { TOP };
            out.write(d, r, guarded)
        }
        Op::Selp { ty, d, a, b, .. } => out.write(d, if ty == Ty::F32 { TOP } else { v(a).hull(v(b)) }, guarded),
        Op::Ld { d, .. } | Op::Atom { d, .. } => out.write(d, TOP, guarded),
        Op::Setp { cmp, ty, d, a, b } => {
            let c = Some(Cond { cmp, ty, a, b });
            if let Some(p) = out.preds.get_mut(d as usize) {
                *p = if guarded && *p != c { None } else { c };
            }
        }
        Op::Pred { op, d, a, .. } => {
            let c = match op {
                PredOp::Not => run.preds.get(a as usize).copied().flatten().map(|c| Cond { cmp: negate(c.cmp), ..c }),
                _ => None,
            };
            if let Some(p) = out.preds.get_mut(d as usize) {
                *p = if guarded && *p != c { None } else { c };
            }
        }
        _ => {}
    }
    out
}

/// Changes of a loop head's state before it is widened.
const WIDEN_AFTER: u32 = 100;

/// Rounds of the upward iteration before the analysis gives up.
const MAX_ROUNDS: u32 = 10_000;

/// The states on entry to every instruction of `code` (`None`: unreachable), for a kernel
/// whose code names registers below `nregs`.
fn states(code: &[Inst], nregs: usize, cx: Ctx) -> Option<Vec<Option<State>>> {
    let n = code.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut head = vec![false; n];
    for pc in 0..n {
        for (t, _) in edges(code, pc) {
            if t < n {
                preds[t].push(pc);
                head[t] |= t <= pc;
            }
        }
    }
    let entry = State { regs: vec![TOP; nregs], preds: [None; 8] };
    let incoming = |ins: &Vec<Option<State>>, t: usize| -> Option<State> {
        let mut acc: Option<State> = (t == 0).then(|| entry.clone());
        for &p in &preds[t] {
            let Some(s) = &ins[p] else { continue };
            let out = step(&code[p], s, cx);
            for (to, g) in edges(code, p) {
                if to != t {
                    continue;
                }
                let e = match g {
                    Some((pr, truth)) => out.refine(pr, truth, cx),
                    None => Some(out.clone()),
                };
                if let Some(e) = e {
                    acc = Some(match acc {
                        Some(a) => a.join(&e),
                        None => e,
                    });
                }
            }
        }
        acc
    };
    let mut ins: Vec<Option<State>> = vec![None; n];
    let mut visits = vec![0u32; n];
    // (up: joined, and widened at loop heads after WIDEN_AFTER changes: a loop whose branch
    // bounds its counter settles before that without widening, which would also widen the
    // outer loops' registers that pass through it)
    let mut changed = true;
    let mut rounds = 0;
    while changed {
        // (not settled after this many rounds, about a hundred loops one after another: no
        // answer, rather than states that may miss code not reached yet)
        if rounds == MAX_ROUNDS {
            return None;
        }
        changed = false;
        rounds += 1;
        for t in 0..n {
            let Some(new) = incoming(&ins, t) else { continue };
            let next = match &ins[t] {
                None => new,
                Some(old) => {
                    let j = old.join(&new);
                    if j == *old {
                        continue;
                    }
                    visits[t] += 1;
                    if head[t] && visits[t] > WIDEN_AFTER { old.widen(&j) } else { j }
                }
            };
            ins[t] = Some(next);
            changed = true;
        }
    }
    // (down: a few rounds recomputed without widening, each within the last)
    for _ in 0..4 {
        for t in 0..n {
            if ins[t].is_some() {
                ins[t] = incoming(&ins, t).or(ins[t].take());
            }
        }
    }
    Some(ins)
}

/// The scratchpad bytes `code` can address: one past the highest byte of any shared access,
/// or `None` if some access cannot be bounded.
pub fn shared_extent(code: &[Inst], cx: Ctx) -> Option<u32> {
    let nregs = crate::flow::regs_named(code) as usize;
    let ins = states(code, nregs, cx)?;
    let mut end = 0u64;
    for (pc, i) in code.iter().enumerate() {
        let addr = match i.op {
            Op::Ld { space: Space::Shared, addr, .. } | Op::St { space: Space::Shared, addr, .. } | Op::Atom { space: Space::Shared, addr, .. } => addr,
            _ => continue,
        };
        let Some(s) = &ins[pc] else { continue };
        let s = match i.guard {
            Some(g) => match s.refine(g.pred, !g.neg, cx) {
                Some(r) => r,
                None => continue,
            },
            None => s.clone(),
        };
        let base = addr.base.map_or(Iv::exact(0), |r| s.val(Operand::Reg(r), cx));
        let (lo, hi) = (base.lo as i64 + addr.offset as i64, base.hi as i64 + addr.offset as i64);
        // (an end past u32::MAX is past any declaration: no answer, not a wrapped one)
        if lo < 0 || hi + 4 > u32::MAX as i64 {
            return None;
        }
        end = end.max(hi as u64 + 4);
    }
    Some(end as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble_one;

    fn extent(body: &str, threads: u32) -> Option<u32> {
        let k = assemble_one("t.s", &format!(".kernel t\n.regs 16\n.threads {threads}\n.shared 65536\n.params 8\n{body}")).unwrap();
        shared_extent(&k.code, Ctx { threads })
    }

    #[test]
    fn a_counted_loop_bounds_its_addresses() {
        // (thread t stores words t, t+64, ... below 1024: bytes 0..4095)
        let body = " mov.u32 r5, %tid.x\nL:\n shl.b32 r7, r5, 2\n st.shared.u32 [r7], r5\n add.u32 r5, r5, 64\n setp.lt.u32 p1, r5, 1024\n @p1 bra L\n exit\n";
        assert_eq!(extent(body, 64), Some(4096));
        // (the same with an offset, and a division and remainder of the counter)
        let body = " mov.u32 r5, %tid.x\nL:\n div.u32 r6, r5, 48\n rem.u32 r7, r5, 48\n shl.b32 r8, r6, 6\n add.u32 r8, r8, r7\n shl.b32 r8, r8, 2\n st.shared.u32 [r8+4096], r5\n add.u32 r5, r5, 64\n setp.lt.u32 p1, r5, 2304\n @p1 bra L\n exit\n";
        assert_eq!(extent(body, 64), Some(4096 + (47 * 64 + 47) * 4 + 4));
    }

    #[test]
    fn what_it_cannot_bound_it_says() {
        // (an address from a parameter; a pointer walked by a loop whose test is on another
        // register)
        assert_eq!(extent(" ld.param.u32 r1, [0]\n ld.shared.u32 r2, [r1]\n exit\n", 32), None);
        let walk = " mov.u32 r1, 0\n mov.u32 r2, 0\nL:\n ld.shared.u32 r3, [r2]\n add.u32 r2, r2, 8\n add.u32 r1, r1, 1\n setp.lt.u32 p0, r1, 4\n @p0 bra L\n exit\n";
        assert_eq!(extent(walk, 32), None);
        // (a guard bounds the access it guards; the fall-through of a branch its negation;
        // intervals do not know alignment: r1 < 64 may be 63)
        assert_eq!(extent(" mov.u32 r1, %tid.x\n setp.lt.u32 p0, r1, 16\n @p0 ld.shared.u32 r2, [r1+0]\n exit\n", 1024), Some(19));
        assert_eq!(extent(" mov.u32 r1, %tid.x\n shl.b32 r1, r1, 2\n setp.lt.u32 p0, r1, 64\n @p0 ld.shared.u32 r2, [r1]\n exit\n", 1024), Some(67));
        assert_eq!(extent(" mov.u32 r1, %tid.x\n shl.b32 r1, r1, 2\n setp.ge.u32 p0, r1, 64\n @p0 bra E\n st.shared.u32 [r1], r1\nE:\n exit\n", 1024), Some(67));
    }

    #[test]
    fn an_extent_past_the_address_space_or_an_unsettled_analysis_gives_no_answer() {
        // (an address up to 0xfffffffc: its end does not fit in 32 bits, and must not wrap to
        // a small extent)
        let body = " ld.param.u32 r1, [0]\n and.b32 r1, r1, 0xfffffffc\n ld.shared.u32 r2, [r1]\n mov.u32 r3, %tid.x\n shl.b32 r3, r3, 2\n st.shared.u32 [r3], r3\n exit\n";
        assert_eq!(extent(body, 64), None);
        // (120 counted loops one after another: the iteration stops before it settles, and
        // says so, rather than skip the access after them)
        let mut body = String::new();
        for k in 0..120 {
            body += &format!(" mov.u32 r1, 0\nL{k}:\n add.u32 r1, r1, 1\n setp.lt.u32 p0, r1, 200\n @p0 bra L{k}\n");
        }
        body += " mov.u32 r3, %tid.x\n shl.b32 r3, r3, 2\n st.shared.u32 [r3], r3\n exit\n";
        assert_eq!(extent(&body, 64), None);
        // (and a few such loops settle)
        let few: String = body.lines().skip(5 * 117).map(|l| format!("{l}\n")).collect();
        assert_eq!(extent(&few, 64), Some(256));
    }

    #[test]
    fn a_written_operand_forgets_the_condition() {
        // (p0 says r1 < 16, but r1 is then rewritten from a load: the guard bounds nothing)
        let body = " mov.u32 r1, %tid.x\n setp.lt.u32 p0, r1, 16\n ld.global.u32 r1, [r1]\n @p0 ld.shared.u32 r2, [r1]\n exit\n";
        assert_eq!(extent(body, 32), None);
        // (and the signed reading of a value that may be negative refines nothing)
        let body = " ld.param.u32 r1, [0]\n setp.lt.s32 p0, r1, 16\n @p0 ld.shared.u32 r2, [r1]\n exit\n";
        assert_eq!(extent(body, 32), None);
    }
}
