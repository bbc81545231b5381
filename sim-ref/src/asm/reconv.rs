//! Reconvergence points: the immediate post-dominator of every instruction, where a divergent
//! branch's paths meet again (the SIMT stack's reconvergence point).

use mpgpu_spec::isa::*;

/// The control-flow successors of instruction `pc`: the branch target, the next instruction,
/// and for an exit the virtual exit node `code.len()` (a successor past the end is the exit).
fn successors(code: &[Inst], pc: usize) -> impl Iterator<Item = usize> {
    let exit = code.len();
    let i = &code[pc];
    let (a, b) = match i.op {
        Op::Bra { target, .. } if i.guard.is_none() => (target as usize, None),
        Op::Bra { target, .. } => (target as usize, Some(pc + 1)),
        Op::Exit if i.guard.is_none() => (exit, None),
        Op::Exit => (pc + 1, Some(exit)),
        _ => (pc + 1, None),
    };
    std::iter::once(a).chain(b).map(move |s| s.min(exit))
}

/// The immediate post-dominator of every instruction (`u32::MAX` where the paths from it only
/// meet at kernel exit, or never). Used as the SIMT stack's reconvergence point of a branch.
///
/// Dominators of the reversed control-flow graph rooted at exit, by the iterative algorithm of
/// Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm"): memory linear in the
/// code's length, so a long kernel cannot make it allocate quadratically.
pub fn reconvergence_points(code: &[Inst]) -> Vec<u32> {
    const NONE: usize = usize::MAX;
    let n = code.len();
    let exit = n; // virtual exit node
    let succs = |pc: usize| successors(code, pc);
    // Predecessors (the reversed graph's successors), as one flat array indexed by `start`.
    let mut start = vec![0usize; n + 2];
    for pc in 0..n {
        for s in succs(pc) {
            start[s + 1] += 1;
        }
    }
    for v in 0..=n {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut preds = vec![0usize; start[n + 1]];
    for pc in 0..n {
        for s in succs(pc) {
            preds[fill[s]] = pc;
            fill[s] += 1;
        }
    }
    // Postorder of the reversed graph from exit (an explicit stack: no recursion on long code).
    let mut order = vec![NONE; n + 1];
    let mut post: Vec<usize> = Vec::with_capacity(n + 1);
    let mut stack: Vec<(usize, usize)> = vec![(exit, start[exit])];
    order[exit] = 0; // marks visited; renumbered below
    while let Some(top) = stack.last_mut() {
        let (v, k) = *top;
        if k < start[v + 1] {
            top.1 += 1;
            let u = preds[k];
            if order[u] == NONE {
                order[u] = 0;
                stack.push((u, start[u]));
            }
        } else {
            order[v] = post.len();
            post.push(v);
            stack.pop();
        }
    }
    let mut idom = vec![NONE; n + 1];
    idom[exit] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &v in post.iter().rev().skip(1) {
            let mut new = NONE;
            for s in succs(v) {
                if idom[s] == NONE {
                    continue;
                }
                new = if new == NONE {
                    s
                } else {
                    let (mut a, mut b) = (new, s);
                    while a != b {
                        while order[a] < order[b] {
                            a = idom[a];
                        }
                        while order[b] < order[a] {
                            b = idom[b];
                        }
                    }
                    a
                };
            }
            if idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    (0..n).map(|v| if idom[v] == NONE || idom[v] == exit { u32::MAX } else { idom[v] as u32 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first implementation (post-dominator bitsets, quadratic memory), kept as the reference
    /// the linear one is checked against.
    pub(super) fn reconvergence_points_bitsets(code: &[Inst]) -> Vec<u32> {
        let n = code.len();
        let exit = n; // virtual exit node
        let succs = |pc: usize| -> Vec<usize> { successors(code, pc).collect() };
        let words = (n + 1).div_ceil(64);
        // pdom[v] as bitsets; start from "all" except exit = {exit}.
        let mut pdom = vec![vec![u64::MAX; words]; n + 1];
        pdom[exit] = vec![0; words];
        pdom[exit][exit / 64] |= 1 << (exit % 64);
        let all_succ: Vec<Vec<usize>> = (0..n).map(succs).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for v in (0..n).rev() {
                let mut new = vec![u64::MAX; words];
                for &s in &all_succ[v] {
                    for w in 0..words {
                        new[w] &= pdom[s][w];
                    }
                }
                new[v / 64] |= 1 << (v % 64);
                if new != pdom[v] {
                    pdom[v] = new;
                    changed = true;
                }
            }
        }
        let has = |set: &Vec<u64>, x: usize| set[x / 64] >> (x % 64) & 1 == 1;
        let size = |set: &Vec<u64>| set.iter().map(|w| w.count_ones()).sum::<u32>();
        // A node that cannot reach exit keeps the full set: no post-dominator information.
        let reaches_exit: Vec<bool> = (0..=n).map(|v| has(&pdom[v], exit)).collect();
        (0..n)
            .map(|v| {
                if !reaches_exit[v] {
                    return u32::MAX;
                }
                // The closest strict post-dominator is the one with the largest pdom set.
                let mut best: Option<(u32, usize)> = None;
                for d in 0..n {
                    if d != v && has(&pdom[v], d) {
                        let s = size(&pdom[d]);
                        if best.is_none_or(|(bs, _)| s > bs) {
                            best = Some((s, d));
                        }
                    }
                }
                best.map_or(u32::MAX, |(_, d)| d as u32)
            })
            .collect()
    }

    /// The instructions from which some path reaches exit.
    fn reach_exit(code: &[Inst]) -> Vec<bool> {
        let n = code.len();
        let mut reach = vec![false; n + 1];
        reach[n] = true;
        let mut changed = true;
        while changed {
            changed = false;
            for pc in (0..n).rev() {
                if !reach[pc] && successors(code, pc).any(|s| reach[s]) {
                    reach[pc] = true;
                    changed = true;
                }
            }
        }
        reach.truncate(n);
        reach
    }

    /// Random control flow (guarded and unguarded branches anywhere, guarded and unguarded
    /// exits, infinite loops): the linear algorithm agrees with the bitsets on every
    /// instruction from which exit can be reached. From the others (an infinite loop) it gives
    /// `u32::MAX`, as documented; the bitsets gave an arbitrary instruction there (their
    /// "cannot reach exit" test looked for exit in a set that starts full). Also every library
    /// kernel, which agree everywhere.
    #[test]
    fn linear_post_dominators_agree_with_the_bitsets() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(51);
        let mut looping = 0;
        for case in 0..3000 {
            let n = rng.gen_range(1..if case % 10 == 0 { 200 } else { 24 });
            let code: Vec<Inst> = (0..n)
                .map(|_| {
                    let guard = rng.gen_bool(0.5).then_some(Guard { pred: 0, neg: false });
                    let op = match rng.gen_range(0..6) {
                        0 | 1 => Op::Bra { target: rng.gen_range(0..n as u32 + 1), reconv: u32::MAX },
                        2 => Op::Exit,
                        _ => Op::Nop,
                    };
                    Inst { guard, op }
                })
                .collect();
            let (new, old, reach) = (reconvergence_points(&code), reconvergence_points_bitsets(&code), reach_exit(&code));
            for pc in 0..n {
                if reach[pc] {
                    assert_eq!(new[pc], old[pc], "case {case}, pc {pc}: {code:?}");
                } else {
                    assert_eq!(new[pc], u32::MAX, "case {case}, pc {pc} (cannot reach exit): {code:?}");
                    looping += 1;
                }
            }
        }
        assert!(looping > 1000, "the cases hardly loop: {looping}");
        for b in crate::library::library() {
            for k in b.kernels().unwrap().0 {
                assert_eq!(reconvergence_points(&k.code), reconvergence_points_bitsets(&k.code), "{}", k.name);
            }
        }
    }
}
