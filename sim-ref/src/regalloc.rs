//! Register renumbering for Zorua's phase specifiers: a register-allocation pass that gives a
//! kernel's values new register numbers so that the values live at any point sit in the
//! lowest registers. Zorua's mapping table releases a warp's register sets from the top
//! (docs/zorua.md, "Phase specifiers"), so a phase can only give back the registers above the
//! highest one it occupies; a kernel whose live values are spread over r0..r40 gives back
//! nothing. After renumbering, a phase's highest register plus one is close to the number of
//! registers live in it, which is what the paper's specifiers count (Vijaykumar et al.,
//! MICRO 2016, §4.6).
//!
//! The pass, on code without `phase` instructions:
//! - **webs**: each register definition, with the definitions that reach a common use joined
//!   (reaching definitions, forward over the control-flow graph). A guarded definition does
//!   not kill the ones reaching it (in the lanes whose guard is false the old value stays), so
//!   both reach every later use and share a web, and so a register. A register read before
//!   any definition has a web from the kernel's entry;
//! - **interference**: two webs interfere if both are occupied at an instruction (live into
//!   it, live out of it, or written by it: the same rule as the phase pass);
//! - **colouring**: webs in the order they are first occupied, each the lowest register no
//!   interfering web already has. The result is kept only if it names no more registers than
//!   the code did.
//!
//! It changes register numbers only: the instructions, their order and the branches are the
//! same, so a kernel computes what it did, in the same cycles but for register-bank effects,
//! which the model does not have.

use crate::flow::{live_in, live_out, regs_in, successors};
use bitvec::prelude::*;
use mpgpu_spec::isa::{Inst, Op, Operand};

/// A set of definitions or webs.
pub(crate) type Set = BitVec<u64, Lsb0>;

fn find(p: &mut [usize], mut x: usize) -> usize {
    while p[x] != x {
        p[x] = p[p[x]];
        x = p[x];
    }
    x
}

fn union(p: &mut [usize], a: usize, b: usize) {
    let (a, b) = (find(p, a), find(p, b));
    if a != b {
        p[a.max(b)] = a.min(b);
    }
}

/// `i` with every general register `r` it reads renamed by `src(r)` and the one it writes by
/// `dst`.
pub(crate) fn renamed(i: &Inst, src: &dyn Fn(u8) -> u8, dst: u8) -> Inst {
    let o = |x: Operand| match x {
        Operand::Reg(r) => Operand::Reg(src(r)),
        x => x,
    };
    let mut i = *i;
    i.op = match i.op {
        Op::Bin { op, ty, a, b, .. } => Op::Bin { op, ty, d: dst, a: o(a), b: o(b) },
        Op::Mad { ty, a, b, c, .. } => Op::Mad { ty, d: dst, a: o(a), b: o(b), c: o(c) },
        Op::Un { op, ty, a, .. } => Op::Un { op, ty, d: dst, a: o(a) },
        Op::Cvt { rnd, to, from, a, .. } => Op::Cvt { rnd, to, from, d: dst, a: o(a) },
        Op::Setp { cmp, ty, d, a, b } => Op::Setp { cmp, ty, d, a: o(a), b: o(b) },
        Op::Selp { ty, a, b, p, .. } => Op::Selp { ty, d: dst, a: o(a), b: o(b), p },
        Op::Ld { space, ty, mut addr, .. } => {
            addr.base = addr.base.map(src);
            Op::Ld { space, ty, d: dst, addr }
        }
        Op::St { space, ty, mut addr, src: s } => {
            addr.base = addr.base.map(src);
            Op::St { space, ty, addr, src: o(s) }
        }
        Op::Atom { space, op, ty, mut addr, b, c, .. } => {
            addr.base = addr.base.map(src);
            Op::Atom { space, op, ty, d: dst, addr, b: o(b), c: o(c) }
        }
        other => other,
    };
    i
}

/// The webs of a kernel's code (without `phase` instructions) and their interference: what
/// the renumbering here and the unified allocator ([`crate::unified`]) colour. A web is named
/// by one of its definitions (the root of the set joining them).
pub(crate) struct Webs {
    /// The webs, in order of first occupation (those no path reaches last).
    pub order: Vec<usize>,
    /// The instruction at which each web is first occupied (`usize::MAX`: never).
    pub first: Vec<usize>,
    /// Interference: the webs occupied together with each at some instruction.
    pub adj: Vec<Set>,
    /// Per instruction, each register it reads and the web its value belongs to (`None`: no
    /// definition reaches it, as in code no path reaches).
    pub srcs: Vec<Vec<(u8, Option<usize>)>>,
    /// Per instruction, the web of the register it writes.
    pub dst: Vec<Option<usize>>,
    /// Per instruction, the webs occupied there (live in, live out, written).
    pub occ: Vec<Vec<usize>>,
}

impl Webs {
    /// The analysis of `code` (see the module's text), naming registers r0..r(`nregs`-1).
    pub fn of(code: &[Inst], nregs: usize) -> Webs {
        let n = code.len();
        // (definitions: one per writing instruction, then one per register at the entry)
        let mut def_at = vec![usize::MAX; n];
        let mut def_reg = Vec::new();
        for (pc, i) in code.iter().enumerate() {
            if let Some(d) = i.dst_reg() {
                def_at[pc] = def_reg.len();
                def_reg.push(d as usize);
            }
        }
        let entry0 = def_reg.len();
        def_reg.extend(0..nregs);
        let ndefs = def_reg.len();
        let empty = || bitvec![u64, Lsb0; 0; ndefs];
        let mut of_reg = vec![empty(); nregs];
        for (d, &r) in def_reg.iter().enumerate() {
            of_reg[r].set(d, true);
        }
        let transfer = |pc: usize, s: &Set| -> Set {
            let mut o = s.clone();
            if let Some(d) = code[pc].dst_reg() {
                if code[pc].guard.is_none() {
                    for k in of_reg[d as usize].iter_ones() {
                        o.set(k, false);
                    }
                }
                o.set(def_at[pc], true);
            }
            o
        };
        // (reaching definitions)
        let mut reach = vec![empty(); n];
        if n > 0 {
            for r in 0..nregs {
                reach[0].set(entry0 + r, true);
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for pc in 0..n {
                let out = transfer(pc, &reach[pc]);
                for s in successors(code, pc).into_iter().flatten() {
                    let joined = reach[s].clone() | &out;
                    if joined != reach[s] {
                        reach[s] = joined;
                        changed = true;
                    }
                }
            }
        }
        // (the definitions of register `r` among `s`)
        let defs_of = |s: &Set, r: usize| of_reg[r].iter_ones().filter(|&d| s[d]).collect::<Vec<usize>>();
        // (webs: the definitions reaching a use joined)
        let mut parent: Vec<usize> = (0..ndefs).collect();
        for pc in 0..n {
            for r in code[pc].src_regs() {
                let ds = defs_of(&reach[pc], r as usize);
                for &d in ds.iter().skip(1) {
                    union(&mut parent, ds[0], d);
                }
            }
        }
        // (the web a register's value belongs to, given the definitions reaching)
        let web_of = |parent: &mut Vec<usize>, s: &Set, r: usize| -> Option<usize> { defs_of(s, r).first().map(|&d| find(parent, d)) };
        // (interference: the webs occupied at each instruction, with the phase pass's liveness)
        let live = live_in(code);
        let mut adj = vec![empty(); ndefs];
        let mut first = vec![usize::MAX; ndefs];
        let mut occs = Vec::with_capacity(n);
        for pc in 0..n {
            let out = transfer(pc, &reach[pc]);
            let mut occ: Vec<usize> = Vec::new();
            for r in regs_in(&live[pc]) {
                occ.extend(web_of(&mut parent, &reach[pc], r));
            }
            for r in regs_in(&live_out(code, &live, pc)) {
                occ.extend(web_of(&mut parent, &out, r));
            }
            if def_at[pc] != usize::MAX {
                occ.push(find(&mut parent, def_at[pc]));
            }
            occ.sort_unstable();
            occ.dedup();
            for &a in &occ {
                first[a] = first[a].min(pc);
                for &b in &occ {
                    if a != b {
                        adj[a].set(b, true);
                    }
                }
            }
            occs.push(occ);
        }
        let mut order: Vec<usize> = (0..ndefs).filter(|&d| find(&mut parent, d) == d).collect();
        order.sort_by_key(|&w| (first[w], w));
        let srcs = (0..n).map(|pc| code[pc].src_regs().map(|r| (r, web_of(&mut parent, &reach[pc], r as usize))).collect()).collect();
        let dst = (0..n).map(|pc| (def_at[pc] != usize::MAX).then(|| find(&mut parent, def_at[pc]))).collect();
        Webs { order, first, adj, srcs, dst, occ: occs }
    }
}

/// `code` (without `phase` instructions) with its registers renumbered (see the module's
/// text), or `None` if that would name more registers than it does.
pub fn renumber(code: &[Inst]) -> Option<Vec<Inst>> {
    let n = code.len();
    let nregs = crate::flow::regs_named(code) as usize;
    if n == 0 || nregs == 0 {
        return None;
    }
    let w = Webs::of(code, nregs);
    // (colouring, in order of first occupation)
    let mut color = vec![usize::MAX; w.first.len()];
    for &x in &w.order {
        let used: Vec<usize> = w.adj[x].iter_ones().map(|y| color[y]).filter(|&c| c != usize::MAX).collect();
        color[x] = (0..).find(|c| !used.contains(c)).unwrap();
    }
    let top = w.order.iter().filter(|&&x| w.first[x] != usize::MAX).map(|&x| color[x] + 1).max().unwrap_or(0);
    if top > nregs {
        return None;
    }
    // (the rewrite; an instruction no path reaches has no definitions reaching it: its reads,
    // which never happen, name register 0)
    Some((0..n).map(|pc| rename(&code[pc], &w, pc, &|x| color[x] as u8)).collect())
}

/// Instruction `pc` of the code `w` analyses with each web's register given by `reg`.
pub(crate) fn rename(i: &Inst, w: &Webs, pc: usize, reg: &dyn Fn(usize) -> u8) -> Inst {
    let srcs = &w.srcs[pc];
    let src = |r: u8| srcs.iter().find(|(x, _)| *x == r).map_or(r, |(_, web)| web.map_or(0, reg));
    renamed(i, &src, w.dst[pc].map_or(0, reg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble_one;

    fn code(body: &str) -> Vec<Inst> {
        assemble_one("t.s", &format!(".kernel t\n.regs 16\n.threads 32\n.params 8\n{body}")).unwrap().code
    }

    fn top(c: &[Inst]) -> usize {
        c.iter().flat_map(|i| i.src_regs().chain(i.dst_reg())).map(|r| r as usize + 1).max().unwrap_or(0)
    }

    #[test]
    fn values_live_apart_share_a_register_and_the_live_ones_go_lowest() {
        // (r9 and r12 are never live together with anything but r0: two registers do)
        let c = code(" mov.u32 r0, %tid.x\n add.u32 r9, r0, 1\n st.global.u32 [r0], r9\n add.u32 r12, r0, 2\n st.global.u32 [r0], r12\n exit\n");
        let r = renumber(&c).unwrap();
        assert_eq!(top(&r), 2, "{r:?}");
        // (the stores still store what was computed: the same register as the add wrote)
        assert!(matches!(r[1].op, Op::Bin { d: 1, .. }) && matches!(r[2].op, Op::St { src: Operand::Reg(1), .. }), "{r:?}");
    }

    #[test]
    fn a_guarded_write_keeps_the_register_of_the_value_it_may_leave() {
        // (@p0 mov r5 leaves the old r5 in the other lanes: both definitions one web)
        let c = code(" mov.u32 r3, %tid.x\n mov.u32 r5, 7\n setp.lt.u32 p0, r3, 4\n @p0 mov.u32 r5, 9\n st.global.u32 [r3], r5\n exit\n");
        let r = renumber(&c).unwrap();
        let d = |i: &Inst| i.dst_reg().unwrap();
        assert_eq!(d(&r[1]), d(&r[3]), "{r:?}");
        assert_eq!(top(&r), 2, "{r:?}");
    }

    #[test]
    fn a_value_a_guarded_write_may_leave_stays_live_until_then() {
        // (r5 = 7 is what the lanes with p0 false store: r1, computed and stored in between,
        // must not take its register)
        let c = code(" mov.u32 r3, %tid.x\n mov.u32 r5, 7\n add.u32 r1, r3, 1\n st.global.u32 [r3], r1\n setp.lt.u32 p0, r3, 4\n @p0 mov.u32 r5, 9\n st.global.u32 [r3], r5\n exit\n");
        let r = renumber(&c).unwrap();
        let (a, x) = (r[1].dst_reg().unwrap(), r[2].dst_reg().unwrap());
        assert_ne!(a, x, "{r:?}");
        assert_eq!(top(&r), 3, "{r:?}");
    }

    #[test]
    fn code_no_path_reaches_is_renumbered_too() {
        let c = code(" mov.u32 r0, %tid.x\n bra L\n add.u32 r1, r0, 1\n st.global.u32 [r1], r1\nL:\n st.global.u32 [r0], r0\n exit\n");
        let r = renumber(&c).unwrap();
        assert!(top(&r) <= 2, "{r:?}");
    }

    #[test]
    fn a_loop_carried_value_keeps_one_register() {
        // (r7 is defined before the loop and in it: one web, one register, live around the
        // back edge together with the counter r2)
        let c = code(" mov.u32 r7, 0\n mov.u32 r2, 0\nL:\n add.u32 r7, r7, r2\n add.u32 r2, r2, 1\n setp.lt.u32 p0, r2, 8\n @p0 bra L\n st.global.u32 [r2], r7\n exit\n");
        let r = renumber(&c).unwrap();
        assert_eq!(top(&r), 2, "{r:?}");
        let (a, b) = (r[2].dst_reg().unwrap(), r[0].dst_reg().unwrap());
        assert_eq!(a, b, "{r:?}");
    }
}
