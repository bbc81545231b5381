//! The control-flow graph of a kernel's code and the liveness of its general registers: what
//! the phase pass (`phases`), the register renumbering (`regalloc`) and the value-range
//! analysis (`ranges`) share. The rule: this module depends on none of the three, they depend
//! on it (before, each of them reached into `phases` for these and `phases` called the other
//! two: an import circle).

use mpgpu_spec::isa::{Inst, Op};

/// A register set as a bit mask over r0..r255.
pub(crate) type Regs = [u64; 4];

pub(crate) fn set(m: &mut Regs, r: u8) {
    m[r as usize / 64] |= 1 << (r % 64);
}

pub(crate) fn union(a: &Regs, b: &Regs) -> Regs {
    std::array::from_fn(|i| a[i] | b[i])
}

/// Successors of instruction `pc` in the control-flow graph (`None`: none there).
pub(crate) fn successors(code: &[Inst], pc: usize) -> [Option<usize>; 2] {
    let next = (pc + 1 < code.len()).then_some(pc + 1);
    match code[pc].op {
        Op::Bra { target, .. } if code[pc].guard.is_some() => [next, Some(target as usize)],
        Op::Bra { target, .. } => [Some(target as usize), None],
        Op::Exit if code[pc].guard.is_none() => [None, None],
        _ => [next, None],
    }
}

/// The registers live into each instruction of `code`: backward over the control-flow graph,
/// a guarded write not killing its register (the lanes whose guard is false keep the old
/// value).
pub(crate) fn live_in(code: &[Inst]) -> Vec<Regs> {
    let n = code.len();
    let mut live_in = vec![[0u64; 4]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let i = &code[pc];
            let mut m = live_out(code, &live_in, pc);
            if let (Some(d), None) = (i.dst_reg(), i.guard) {
                m[d as usize / 64] &= !(1 << (d % 64));
            }
            for r in i.src_regs() {
                set(&mut m, r);
            }
            if m != live_in[pc] {
                live_in[pc] = m;
                changed = true;
            }
        }
    }
    live_in
}

/// The registers live out of instruction `pc`, given those live into every instruction.
pub(crate) fn live_out(code: &[Inst], live_in: &[Regs], pc: usize) -> Regs {
    successors(code, pc).iter().flatten().fold([0u64; 4], |m, &s| union(&m, &live_in[s]))
}

/// The registers `code` names: the highest plus one.
pub fn regs_named(code: &[Inst]) -> u32 {
    code.iter().flat_map(|i| i.src_regs().chain(i.dst_reg())).map(|r| r as u32 + 1).max().unwrap_or(0)
}

/// The registers in `m`, lowest first.
pub(crate) fn regs_in(m: &Regs) -> impl Iterator<Item = usize> + '_ {
    (0..256).filter(|&r| m[r / 64] >> (r % 64) & 1 != 0)
}
