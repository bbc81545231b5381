//! Phase identification for Zorua (Vijaykumar et al., MICRO 2016, §4.6): the registers and
//! scratchpad each instruction needs live, and a compiler-style pass that places `phase`
//! specifiers by the paper's rule. Decisions are in `docs/zorua.md`, "Phase specifiers".
//!
//! - **Liveness** of the general registers, backward over the control-flow graph (a guarded
//!   write does not kill its register: the lanes whose guard is false keep the old value).
//!   An instruction *occupies* the registers live into it, live out of it, and the one it
//!   writes. Scratchpad is live at an instruction that accesses it, and where it may have
//!   been written before and may be read after. What is live is the scratchpad the kernel
//!   addresses ([`addressed`]: the value-range analysis of [`crate::ranges`] bounds every
//!   shared address, else the declaration), not which of its bytes. Before a block's first
//!   write of it nothing in it is live (it starts at zero), and after its last read neither.
//! - **Where a boundary may go**: not at the first instruction (the initial specifier goes
//!   there), not on a barrier or fence (they are phase boundaries of their own) nor on an
//!   `exit` that every lane takes, and not
//!   where a branch edge crosses: strictly inside a forward branch's span, or anywhere in a
//!   loop from its head to its back edge. The target of a forward branch may take one: the
//!   jump then lands on the specifier, and the paths have met there. So every boundary is a
//!   point of no divergence, and every instruction runs under the specifier placed last
//!   before it in program order.
//! - **The rule**: a new boundary where the live registers (their count) or the live
//!   scratchpad differ by 25 % or more from the current phase's need so far (the most live
//!   registers of its instructions, and whether any has scratchpad live), and at least 10
//!   instructions after the last boundary (a barrier or fence counts as one).
//! - **The specifier's values** cover every instruction of its phase: registers as the
//!   highest register occupied plus one (so that the register sets above it are free to
//!   release: `docs/zorua.md`), scratchpad as the bytes the kernel addresses where any
//!   instruction of the phase has it live, else 0.

use crate::flow::{live_in, live_out, set, successors, union, Regs};
use crate::kernel::Kernel;
use mpgpu_spec::isa::{Inst, Op, Space};

fn count(m: &Regs) -> u32 {
    m.iter().map(|w| w.count_ones()).sum()
}

/// The highest register in `m` plus one (0 for none).
fn top(m: &Regs) -> u16 {
    (0..4).rev().find(|&i| m[i] != 0).map_or(0, |i| (i * 64 + 64 - m[i].leading_zeros() as usize) as u16)
}

/// What an instruction needs while it runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Need {
    /// Registers occupied: live in, live out and written.
    pub live_regs: u32,
    /// The highest of them plus one.
    pub top_reg: u16,
    /// The scratchpad is live: accessed here, or written before and read after.
    pub smem_live: bool,
}

fn shared_access(i: &Inst) -> bool {
    matches!(i.op, Op::Ld { space: Space::Shared, .. } | Op::St { space: Space::Shared, .. } | Op::Atom { space: Space::Shared, .. })
}

fn shared_write(i: &Inst) -> bool {
    matches!(i.op, Op::St { space: Space::Shared, .. } | Op::Atom { space: Space::Shared, .. })
}

fn shared_read(i: &Inst) -> bool {
    matches!(i.op, Op::Ld { space: Space::Shared, .. } | Op::Atom { space: Space::Shared, .. })
}

/// The need of every instruction of `code`.
pub fn needs(code: &[Inst]) -> Vec<Need> {
    let n = code.len();
    // (scratchpad: written on some path before the instruction, and read on some path after)
    let mut written = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in 0..n {
            let out = written[pc] || shared_write(&code[pc]);
            for &x in successors(code, pc).iter().flatten() {
                if out && !written[x] {
                    written[x] = true;
                    changed = true;
                }
            }
        }
    }
    // (scratchpad read on some path after)
    let mut smem = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let s = shared_read(&code[pc]) || successors(code, pc).iter().flatten().any(|&x| smem[x]);
            if s != smem[pc] {
                smem[pc] = s;
                changed = true;
            }
        }
    }
    let live_in = live_in(code);
    (0..n)
        .map(|pc| {
            let mut m = union(&live_in[pc], &live_out(code, &live_in, pc));
            if let Some(d) = code[pc].dst_reg() {
                set(&mut m, d);
            }
            Need { live_regs: count(&m), top_reg: top(&m), smem_live: shared_access(&code[pc]) || (written[pc] && smem[pc]) }
        })
        .collect()
}

/// Where a boundary may go (see the module's text).
pub fn may_begin_phase(code: &[Inst]) -> Vec<bool> {
    // (nor on an `exit` that every lane takes: a phase of nothing)
    let mut ok: Vec<bool> = code.iter().map(|i| !matches!(i.op, Op::Bar | Op::Membar { .. }) && !(i.op == Op::Exit && i.guard.is_none())).collect();
    if let Some(first) = ok.first_mut() {
        *first = false;
    }
    for (s, i) in code.iter().enumerate() {
        if let Op::Bra { target, .. } = i.op {
            let t = target as usize;
            let span = if t > s { s + 1..t } else { t..s + 1 };
            let n = ok.len();
            for p in span.filter(|&p| p < n) {
                ok[p] = false;
            }
        }
    }
    ok
}

/// One placed specifier: before instruction `pc` (of the code without specifiers), the
/// registers and scratchpad bytes of the phase it begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub pc: u32,
    /// Registers: the highest occupied in the phase plus one.
    pub regs: u16,
    pub smem: u32,
    /// The most registers live at once in the phase (what the paper's specifier counts; equal
    /// to `regs` when the live registers are the lowest ones).
    pub live: u32,
}

/// The paper's rule: a change of at least a quarter of the reference.
fn differs(a: u32, reference: u32) -> bool {
    a.abs_diff(reference) * 4 >= reference.max(1)
}

/// The specifiers the pass places in `code` (which holds none) of a kernel addressing
/// `shared` bytes of scratchpad ([`addressed`]): the first at instruction 0.
pub fn place(code: &[Inst], shared: u32) -> Vec<Placed> {
    if code.is_empty() {
        return Vec::new();
    }
    let need = needs(code);
    let ok = may_begin_phase(code);
    let smem_of = |n: &Need| if n.smem_live { shared } else { 0 };
    // (the reference is the current phase's need so far: its most live registers, and
    // whether any of it has scratchpad live)
    let mut starts = vec![0usize];
    let (mut last, mut regs, mut smem) = (0usize, need[0].live_regs, smem_of(&need[0]));
    for p in 1..code.len() {
        if matches!(code[p - 1].op, Op::Bar | Op::Membar { .. }) {
            last = p - 1;
        }
        let n = need[p];
        if ok[p] && p - last >= 10 && (differs(n.live_regs, regs) || differs(smem_of(&n), smem)) {
            starts.push(p);
            (last, regs, smem) = (p, n.live_regs, smem_of(&n));
        } else {
            (regs, smem) = (regs.max(n.live_regs), smem.max(smem_of(&n)));
        }
    }
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts.get(k + 1).copied().unwrap_or(code.len());
            let range = &need[s..end];
            Placed {
                pc: s as u32,
                regs: range.iter().map(|n| n.top_reg).max().unwrap_or(0),
                smem: if range.iter().any(|n| n.smem_live) { shared } else { 0 },
                live: range.iter().map(|n| n.live_regs).max().unwrap_or(0),
            }
        })
        .collect()
}

/// `code` without its `phase` instructions, branch targets moved with it (a branch to a
/// removed specifier goes to the instruction after it), and for each instruction kept its
/// index in `code`.
fn strip(code: &[Inst]) -> (Vec<Inst>, Vec<usize>) {
    let mut at = Vec::with_capacity(code.len() + 1);
    let mut kept = 0u32;
    for i in code {
        at.push(kept);
        kept += !matches!(i.op, Op::Phase { .. }) as u32;
    }
    at.push(kept);
    let mut out = Vec::new();
    let mut from = Vec::new();
    for (pc, i) in code.iter().enumerate() {
        if matches!(i.op, Op::Phase { .. }) {
            continue;
        }
        let mut i = *i;
        if let Op::Bra { target, reconv } = i.op {
            i.op = Op::Bra { target: at[target as usize], reconv };
        }
        out.push(i);
        from.push(pc);
    }
    (out, from)
}

/// `k` with its `phase` specifiers replaced by the pass's: branch targets and labels moved (a
/// jump to an instruction that now has a specifier before it lands on the specifier), each
/// specifier on the source line of the instruction it precedes, reconvergence points
/// recomputed.
pub fn with_placed_phases(k: &Kernel) -> Kernel {
    rewrite(k, &place(&without_phases(k), addressed(k)))
}

/// [`with_placed_phases`] of `k` [`renumbered`] (`[zorua] renumber = true`).
pub fn with_renumbered_phases(k: &Kernel) -> Kernel {
    with_placed_phases(&renumbered(k))
}

/// `k` with its registers renumbered so that the live ones are the lowest
/// ([`crate::regalloc`]), if that names no more registers; its `phase` instructions stay
/// where they were, with their old values (the pass replaces them).
pub fn renumbered(k: &Kernel) -> Kernel {
    let (code, from) = strip(&k.code);
    let Some(new) = crate::regalloc::renumber(&code) else { return k.clone() };
    let mut out = k.clone();
    for (i, n) in new.into_iter().enumerate() {
        // (branches name positions in the stripped code: keep the originals, which have no
        // registers)
        if !matches!(n.op, Op::Bra { .. }) {
            out.code[from[i]] = n;
        }
    }
    out
}

/// The scratchpad bytes `k` addresses: its declaration, or less where the value-range
/// analysis ([`crate::ranges`]) bounds every shared access below it.
pub fn addressed(k: &Kernel) -> u32 {
    let cx = crate::ranges::Ctx { threads: k.threads };
    crate::ranges::shared_extent(&without_phases(k), cx).map_or(k.shared_bytes, |e| e.min(k.shared_bytes))
}

/// The code of `k` without its `phase` instructions (what [`place`] and [`rewrite`] take).
pub fn without_phases(k: &Kernel) -> Vec<Inst> {
    strip(&k.code).0
}

/// `k` with its `phase` specifiers replaced by `placed` (positions in [`without_phases`]'s
/// code), as [`with_placed_phases`] does.
pub fn rewrite(k: &Kernel, placed: &[Placed]) -> Kernel {
    let mut before = vec![None; without_phases(k).len()];
    for p in placed {
        before[p.pc as usize] = Some(*p);
    }
    relayout(k, |pc, i| before[pc].map(|p| Inst { guard: None, op: Op::Phase { regs: p.regs, smem: p.smem } }).into_iter().chain([*i]).collect(), Vec::new())
}

/// `k` with each instruction of its code without `phase` specifiers replaced by the group
/// `group(pc, instruction)` gives (its branches naming positions in that code), after
/// `prologue` (without branches): a jump to an instruction lands on the first of its group,
/// as does a label; each instruction inserted has the source line of the one it stands for;
/// reconvergence points recomputed. What [`rewrite`] and the unified allocator's spill code
/// ([`crate::unified`]) both do.
pub(crate) fn relayout(k: &Kernel, mut group: impl FnMut(usize, &Inst) -> Vec<Inst>, prologue: Vec<Inst>) -> Kernel {
    let (code, from) = strip(&k.code);
    let line_of = |pc: usize| k.lines.get(from[pc]).copied().unwrap_or(0);
    let groups: Vec<Vec<Inst>> = code.iter().enumerate().map(|(pc, i)| group(pc, i)).collect();
    // (where a jump to instruction pc of the stripped code lands)
    let mut land = Vec::with_capacity(code.len() + 1);
    let mut n = prologue.len() as u32;
    for g in &groups {
        land.push(n);
        n += g.len() as u32;
    }
    land.push(n);
    let mut lines: Vec<u32> = prologue.iter().map(|_| if code.is_empty() { 0 } else { line_of(0) }).collect();
    let mut out = prologue;
    for (pc, g) in groups.into_iter().enumerate() {
        for mut i in g {
            if let Op::Bra { target, .. } = i.op {
                i.op = Op::Bra { target: land[target as usize], reconv: u32::MAX };
            }
            out.push(i);
            lines.push(line_of(pc));
        }
    }
    let reconv = crate::asm::reconvergence_points(&out);
    for (pc, i) in out.iter_mut().enumerate() {
        if let Op::Bra { target, .. } = i.op {
            i.op = Op::Bra { target, reconv: reconv[pc] };
        }
    }
    // (labels: an old label's instruction, stripped, then where a jump to it lands)
    let mut old_at = Vec::with_capacity(k.code.len() + 1);
    let mut kept = 0usize;
    for i in &k.code {
        old_at.push(kept);
        kept += !matches!(i.op, Op::Phase { .. }) as usize;
    }
    old_at.push(kept);
    let labels = k.labels.iter().map(|(name, at)| (name.clone(), land[old_at[*at as usize]])).collect();
    Kernel { code: out, lines, labels, ..k.clone() }
}

/// Checks what the pass promises for `code` (without specifiers) of a kernel addressing
/// `shared` bytes: the first specifier at instruction 0, the others only where a phase may
/// begin and at least 10 instructions after the last boundary (barriers and fences
/// included), and every instruction's registers and scratchpad covered by the specifier
/// placed last before it. Says what is wrong.
pub fn check(code: &[Inst], shared: u32, placed: &[Placed]) -> Result<(), String> {
    check_gap(code, shared, placed, 10)
}

/// The specifiers `k` carries, as the pass would give them (positions in the code without
/// them); a kernel without one at its start begins with its declared registers and
/// scratchpad.
pub fn carried(k: &Kernel) -> Vec<Placed> {
    let (code, from) = strip(&k.code);
    let mut placed = Vec::new();
    let mut next = 0usize;
    for (pc, i) in k.code.iter().enumerate() {
        while next < from.len() && from[next] < pc {
            next += 1;
        }
        if let Op::Phase { regs, smem } = i.op {
            let at = next.min(code.len().saturating_sub(1)) as u32;
            match placed.last_mut() {
                Some(p @ Placed { .. }) if p.pc == at => *p = Placed { pc: at, regs, smem, live: regs as u32 },
                _ => placed.push(Placed { pc: at, regs, smem, live: regs as u32 }),
            }
        }
    }
    if placed.first().is_none_or(|p| p.pc != 0) {
        placed.insert(0, Placed { pc: 0, regs: k.regs as u16, smem: k.shared_bytes, live: k.regs });
    }
    placed
}

/// Whether `k`'s own specifiers are enough for Zorua's coordinator to allocate by: each
/// instruction's occupied registers lie below its phase's register count and its scratchpad
/// is within its phase's, every specifier stands where no branch crosses (a whole warp
/// reaches it together and no jump skips it), as [`check`] asks of the pass, without the
/// 10-instruction spacing.
pub fn sound(k: &Kernel) -> Result<(), String> {
    let code = without_phases(k);
    check_gap(&code, addressed(k), &carried(k), 0)
}

fn check_gap(code: &[Inst], shared: u32, placed: &[Placed], gap: usize) -> Result<(), String> {
    let need = needs(code);
    let ok = may_begin_phase(code);
    if !code.is_empty() && placed.first().map(|p| p.pc) != Some(0) {
        return Err(format!("the first specifier is not at instruction 0: {placed:?}"));
    }
    let mut last = 0usize;
    let mut k = 0;
    for pc in 0..code.len() {
        if pc > 0 && matches!(code[pc - 1].op, Op::Bar | Op::Membar { .. }) {
            last = pc - 1;
        }
        if k + 1 < placed.len() && placed[k + 1].pc as usize == pc {
            k += 1;
            if !ok[pc] {
                return Err(format!("a specifier at instruction {pc}, where no phase may begin"));
            }
            if pc - last < gap {
                return Err(format!("a specifier at instruction {pc}, {} after the last boundary", pc - last));
            }
            last = pc;
        }
        let p = placed[k];
        if p.regs < need[pc].top_reg || (need[pc].smem_live && p.smem < shared) {
            return Err(format!("instruction {pc} needs {:?}; its phase (from {}) gives {} registers, {} bytes", need[pc], p.pc, p.regs, p.smem));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble_one;

    fn kernel(body: &str) -> Kernel {
        assemble_one("t.s", &format!(".kernel t\n.regs 16\n.threads 32\n.shared 1024\n{body}")).unwrap()
    }

    #[test]
    fn liveness_counts_what_is_read_later_and_a_guarded_write_does_not_kill() {
        let k = kernel(" mov.u32 r0, 1\n mov.u32 r1, 2\n add.u32 r2, r0, r1\n setp.eq.u32 p0, r2, 3\n @p0 mov.u32 r2, 0\n st.global.u32 [r2], r0\n exit\n");
        let n = needs(&k.code);
        // (at `add`: r0 and r1 live in, r2 written, r0 and r2 live out)
        assert_eq!((n[2].live_regs, n[2].top_reg), (3, 3));
        // (the guarded mov leaves r2 live into it: both r0 and r2)
        assert_eq!(n[4].live_regs, 2);
        assert!(n.iter().all(|x| !x.smem_live));
    }

    #[test]
    fn a_register_heavy_stretch_then_a_light_one_gives_more_phases() {
        let mut body = String::new();
        for r in 0..8 {
            body += &format!(" mov.u32 r{r}, {r}\n");
        }
        for r in 1..8 {
            body += &format!(" add.u32 r0, r0, r{r}\n");
        }
        body += " st.shared.u32 [0], r0\n bar.sync\n";
        for _ in 0..12 {
            body += " ld.shared.u32 r1, [0]\n add.u32 r1, r1, 1\n";
        }
        body += " st.global.u32 [r1], r1\n exit\n";
        let k = kernel(&body);
        let (code, _) = strip(&k.code);
        let p = place(&code, 1024);
        check(&code, 1024, &p).unwrap();
        // (the first phase writes no scratchpad yet: nothing of it is live there; 8 registers;
        // the ramp down of the sum splits it where 6 are left)
        assert_eq!((p[0].pc, p[0].regs, p[0].smem, p[0].live), (0, 8, 0, 8), "{p:?}");
        assert_eq!((p[1].pc, p[1].smem, p[1].live), (10, 1024, 6), "{p:?}");
        // (after the barrier one register is live, r1: registers 0..=1, scratchpad still live)
        let after = p.iter().find(|x| x.pc > 17).unwrap_or_else(|| panic!("no phase after the barrier: {p:?}"));
        assert_eq!((after.regs, after.smem), (2, 1024), "{p:?}");
        // (a specifier that does not cover its phase is caught)
        let mut bad = p.clone();
        bad[0].regs = 7;
        assert!(check(&code, 1024, &bad).is_err());
        let mut early = p.clone();
        early.insert(1, Placed { pc: 3, ..p[0] });
        assert!(check(&code, 1024, &early).unwrap_err().contains("after the last boundary"));
    }

    #[test]
    fn no_boundary_inside_a_branch_or_a_loop() {
        let k = kernel(
            " mov.u32 r0, %tid.x\n setp.lt.u32 p0, r0, 5\n @p0 bra ELSE\n mov.u32 r1, 1\n bra END\nELSE:\n mov.u32 r1, 2\nEND:\n mov.u32 r2, 0\nL:\n add.u32 r2, r2, 1\n setp.lt.u32 p1, r2, 10\n @p1 bra L\n exit\n",
        );
        let ok = may_begin_phase(&k.code);
        // 0 mov, 1 setp, 2 bra ELSE, 3 mov, 4 bra END, 5 ELSE: mov, 6 END: mov, 7 L: add,
        // 8 setp, 9 bra L, 10 exit
        // (nor on the final exit)
        assert_eq!(ok, [false, true, true, false, false, false, true, false, false, false, false]);
    }

    #[test]
    fn rewriting_moves_branches_and_labels_onto_the_specifiers() {
        let k = kernel(" phase 3, 0\n mov.u32 r0, 1\n setp.eq.u32 p0, r0, 0\n @p0 bra LIGHT\n phase 2, 0\n add.u32 r0, r0, 1\nLIGHT:\n add.u32 r0, r0, 2\n st.global.u32 [r0], r0\n exit\n");
        let code = without_phases(&k);
        // 0 mov, 1 setp, 2 bra LIGHT, 3 add, 4 LIGHT: add, 5 st, 6 exit
        assert_eq!(code.len(), 7);
        let w = rewrite(&k, &[Placed { pc: 0, regs: 1, smem: 0, live: 1 }, Placed { pc: 4, regs: 1, smem: 0, live: 1 }]);
        assert_eq!(w.phases(), [(0, 1, 0), (5, 1, 0)]);
        // (the label and the branch now name the specifier before LIGHT's instruction)
        assert_eq!(w.labels.iter().find(|(n, _)| n == "LIGHT").unwrap().1, 5);
        assert!(matches!(w.code[3].op, Op::Bra { target: 5, reconv: 5 }), "{:?}", w.code[3]);
        assert_eq!(w.lines[5], w.lines[6]);
        // (without the specifiers, the same program as without the original ones, but for the
        // reconvergence points, which are recomputed)
        let plain = |c: &[Inst]| -> Vec<Inst> {
            strip(c).0.into_iter().map(|i| match i.op { Op::Bra { target, .. } => Inst { op: Op::Bra { target, reconv: 0 }, ..i }, _ => i }).collect()
        };
        assert_eq!(plain(&w.code), plain(&k.code));
        // (a branch to a removed specifier goes to the instruction after it)
        let k = kernel(" mov.u32 r0, 1\n bra NEXT\nNEXT:\n phase 1, 0\n st.global.u32 [r0], r0\n exit\n");
        assert!(matches!(without_phases(&k)[1].op, Op::Bra { target: 2, .. }));
    }
}
