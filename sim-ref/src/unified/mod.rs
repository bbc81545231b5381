//! Unified register and scratchpad allocation (Hayes and Zhang, "Unified On-chip Memory
//! Allocation for SIMT Architecture", ICS 2014, §3): a kernel's values placed under a register
//! cap, what does not fit in registers first in shared-memory spill slots and only then in
//! local memory. Decisions and figures are in `docs/unified.md`.
//!
//! On code without `phase` instructions, the values are the webs of [`crate::regalloc`] (each
//! register definition with the ones reaching a common use; two interfere if both are occupied
//! at an instruction):
//! - **registers**, two ways, keeping the placement whose code weighs less (each instruction
//!   weighted 8 per loop it sits in). Both colour Chaitin-Briggs style (simplify the webs of
//!   fewer neighbours than colours, else push the one of least spill cost per neighbour and
//!   colour it optimistically; a web's cost is its reads and writes, each weighted 8 per loop
//!   it sits in), and spill the webs left without a colour.
//!   *Spill and rebuild*: each spilled value gets a temporary register of its own, loaded before
//!   each read and stored after each write, and the code with the temporaries is coloured again
//!   (the temporaries never spill) until it colours with `cap` colours, less the pointer's.
//!   *Reserved*: `cap - reserved` colours, `reserved` being the scratch registers the spill
//!   code needs (the most spilled values one instruction reads, at least one if it only writes
//!   one) plus the pointer, recoloured with more reserved until they suffice; the fallback when
//!   the temporaries cannot be named (256 registers at most);
//! - **shared-memory slots** (§3.2.2): while more spilled values are live at some instruction
//!   than there are slots, the value of lowest priority goes to local memory, its priority
//!   computed once as its spill cost per over-full instruction it is live at (the paper's
//!   "frequency in the union of the over-limit live sets"; `docs/unified.md` says why it is
//!   the divisor); the rest are coloured highest degree first, each the lowest slot already in
//!   use that no neighbour holds (reuse first), else a new slot, else local memory;
//! - **local-memory slots**: the remaining values, each the lowest slot no neighbour holds.
//!
//! The spill code: before an instruction, each spilled value it reads is loaded into its
//! temporary or scratch register; after it, a spilled value it writes is stored back under the
//! instruction's guard (with temporaries, a value written under a guard is loaded first, so the
//! lanes whose guard is false store back their old value). Slot `s` of thread `t` (linear index in its block of `T` threads) is the word at byte
//! `U + 4 (s T + t)` of the block's shared memory, after the kernel's own `U` bytes, so a
//! warp's lanes touch consecutive words (no bank conflicts); one register, set at the kernel's
//! entry, holds `U + 4 t`. Local slot `s` is the word at byte `L + 4 s` of the thread's local
//! memory, after the kernel's own `L` bytes. Both start at zero, as a register does. The pointer
//! is r0, the scratch registers (if any) follow it, then the values' registers, so that Zorua's
//! phases can still release the registers above a phase's need.

use crate::kernel::Kernel;

pub mod search;
pub mod stack;
use crate::flow::regs_named;
use crate::regalloc::{rename, Webs};
use mpgpu_spec::isa::{Addr, Inst, Op, Operand, Space, Sreg, Ty};

/// What a kernel may use: registers per thread and 4-byte shared-memory spill slots per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    pub regs: u32,
    pub slots: u32,
}

/// A kernel placed under a [`Budget`], with what the placement did.
#[derive(Clone, Debug)]
pub struct Allocated {
    pub kernel: Kernel,
    /// The registers the kernel's values need with no cap (its demand).
    pub demand: u32,
    /// Values (webs) in all, and those spilled to shared and to local memory.
    pub values: usize,
    pub in_shared: usize,
    pub in_local: usize,
    /// Slots used per thread (4 bytes each).
    pub shared_slots: u32,
    pub local_slots: u32,
    /// Instructions before (without `phase` specifiers) and after.
    pub before: usize,
    pub after: usize,
}

impl Allocated {
    /// Instructions after against before (the paper's "InstChange").
    pub fn growth(&self) -> f64 {
        self.after as f64 / self.before.max(1) as f64
    }
}

/// The registers a kernel's values need with no cap: the fewest colours its webs take, by the
/// renumbering pass's colouring or by this allocator's, or the registers its code names if that
/// is fewer.
pub fn demand(k: &Kernel) -> u32 {
    let code = crate::phases::without_phases(k);
    let w = Webs::of(&code, regs_named(&code) as usize);
    demand_of(&code, &w, &reachable(&w), &spill_costs(&code, &w))
}

/// The webs some path reaches.
fn reachable(w: &Webs) -> Vec<usize> {
    w.order.iter().copied().filter(|&x| w.first[x] != usize::MAX).collect()
}

/// [`demand`] of `code` (without `phase` instructions) with its webs `w`, reachable `webs` and
/// spill costs.
fn demand_of(code: &[Inst], w: &Webs, webs: &[usize], cost: &[f64]) -> u32 {
    let named = regs_named(code);
    let mut best = crate::regalloc::renumber(code).map_or(named, |c| regs_named(&c).min(named));
    while best > 1 && colour(w, webs, best as usize - 1, cost).iter().zip(&w.first).all(|(c, &f)| c.is_some() || f == usize::MAX) {
        best -= 1;
    }
    best
}

/// Each web's spill cost: its reads and writes, each weighted 8 per loop it sits in.
fn spill_costs(code: &[Inst], w: &Webs) -> Vec<f64> {
    let depth = loop_depth(code);
    let mut cost = vec![0f64; w.first.len()];
    for pc in 0..code.len() {
        let weight = loop_weight(depth[pc]);
        for x in w.srcs[pc].iter().filter_map(|s| s.1).chain(w.dst[pc]) {
            cost[x] += weight;
        }
    }
    cost
}

/// The loop depth of each instruction: how many backward branches' spans hold it.
fn loop_depth(code: &[Inst]) -> Vec<u32> {
    let mut d = vec![0u32; code.len()];
    for (pc, i) in code.iter().enumerate() {
        if let Op::Bra { target, .. } = i.op {
            if (target as usize) <= pc {
                for x in &mut d[target as usize..=pc] {
                    *x += 1;
                }
            }
        }
    }
    d
}

/// An instruction's weight at loop depth `d`: 8 per loop it sits in (capped at 6 loops).
fn loop_weight(d: u32) -> f64 {
    8f64.powi(d.min(6) as i32)
}

/// The space and address of a spilled value's slot: a shared slot from the pointer `base`
/// (`None` while the pointer's register is not yet named), a local slot after the kernel's own
/// local memory.
fn slot_addr(k: &Kernel, h: Home, base: Option<u8>) -> (Space, Addr) {
    match h {
        Home::Shared(s) => (Space::Shared, Addr { base, offset: (4 * s * k.threads) as i32 }),
        Home::Local(s) => (Space::Local, Addr { base: None, offset: (k.local_bytes + 4 * s) as i32 }),
    }
}

/// The code that sets the spill pointer `r0` to `U + 4 t` (`t = tid.x + ntid.x (tid.y + ntid.y
/// tid.z)`), if there is one.
fn pointer_prologue(k: &Kernel, pointer: bool) -> Vec<Inst> {
    let mad = |a: Operand, b: Operand, c: Operand| Inst { guard: None, op: Op::Mad { ty: Ty::U32, d: 0, a, b, c } };
    if !pointer {
        return Vec::new();
    }
    vec![
        mad(Operand::Sreg(Sreg::Tid(2)), Operand::Sreg(Sreg::Ntid(1)), Operand::Sreg(Sreg::Tid(1))),
        mad(Operand::Reg(0), Operand::Sreg(Sreg::Ntid(0)), Operand::Sreg(Sreg::Tid(0))),
        mad(Operand::Reg(0), Operand::Imm(4), Operand::Imm(k.shared_bytes)),
    ]
}

/// The spilled values instruction `pc` reads, each once, in operand order.
fn spilled_reads(w: &Webs, pc: usize, spilled: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::new();
    for x in w.srcs[pc].iter().filter_map(|s| s.1) {
        if spilled(x) && !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// Colours `webs` (the reachable ones) with `k` colours, Chaitin-Briggs (see the module's
/// text); `None` for a web left spilled.
fn colour(w: &Webs, webs: &[usize], k: usize, cost: &[f64]) -> Vec<Option<usize>> {
    let n = w.first.len();
    let mut colour = vec![None; n];
    let mut gone = vec![false; n];
    let mut stack = Vec::with_capacity(webs.len());
    let degree = |x: usize, gone: &[bool]| w.adj[x].iter_ones().filter(|&y| !gone[y] && w.first[y] != usize::MAX).count();
    for _ in 0..webs.len() {
        let left = webs.iter().copied().filter(|&x| !gone[x]);
        let pick = match left.clone().find(|&x| degree(x, &gone) < k) {
            Some(x) => x,
            None => left.min_by(|&a, &b| {
                let (ca, cb) = (cost[a] / degree(a, &gone).max(1) as f64, cost[b] / degree(b, &gone).max(1) as f64);
                ca.total_cmp(&cb).then(a.cmp(&b))
            })
            .expect("a web left"),
        };
        gone[pick] = true;
        stack.push(pick);
    }
    while let Some(x) = stack.pop() {
        let used: Vec<usize> = w.adj[x].iter_ones().filter_map(|y| colour[y]).collect();
        colour[x] = (0..k).find(|c| !used.contains(c));
    }
    colour
}

/// Where each spilled value goes: a shared slot or a local slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Home {
    Shared(u32),
    Local(u32),
}

/// The homes of the `spilled` webs with `slots` shared slots per thread (§3.2.2, see the
/// module's text).
fn homes(w: &Webs, spilled: &[usize], slots: usize, cost: &[f64]) -> Vec<(usize, Home)> {
    let mut member = vec![false; w.first.len()];
    for &x in spilled {
        member[x] = true;
    }
    let is = |x: usize| member[x];
    let mut live: Vec<Vec<usize>> = w.occ.iter().map(|o| o.iter().copied().filter(|&x| is(x)).collect()).collect();
    // (pruning: the priority is computed once, over the instructions over the budget)
    let mut prio = vec![0usize; w.first.len()];
    for l in live.iter().filter(|l| l.len() > slots) {
        for &x in l {
            prio[x] += 1;
        }
    }
    let priority = |x: usize| cost[x] / prio[x].max(1) as f64;
    let mut local: Vec<usize> = Vec::new();
    while live.iter().any(|l| l.len() > slots) {
        let over: Vec<usize> = live.iter().filter(|l| l.len() > slots).flatten().copied().collect();
        let v = *over.iter().min_by(|&&a, &&b| priority(a).total_cmp(&priority(b)).then(a.cmp(&b))).unwrap();
        for l in &mut live {
            l.retain(|&x| x != v);
        }
        local.push(v);
    }
    // (slots: highest degree among the survivors first, reuse first)
    for &x in &local {
        member[x] = false;
    }
    let mut kept: Vec<usize> = spilled.iter().copied().filter(|&x| member[x]).collect();
    let deg = |x: usize| w.adj[x].iter_ones().filter(|&y| member[y]).count();
    let mut order = kept.clone();
    order.sort_by_key(|&x| (std::cmp::Reverse(deg(x)), x));
    let mut home: Vec<Option<Home>> = vec![None; w.first.len()];
    let mut in_use = 0u32;
    for x in order {
        let taken: Vec<Home> = w.adj[x].iter_ones().filter_map(|y| home[y]).collect();
        let free = (0..in_use).find(|s| !taken.contains(&Home::Shared(*s)));
        match free {
            Some(s) => home[x] = Some(Home::Shared(s)),
            None if (in_use as usize) < slots => {
                home[x] = Some(Home::Shared(in_use));
                in_use += 1;
            }
            None => local.push(x),
        }
    }
    kept.retain(|&x| home[x].is_some());
    // (local slots, in program order)
    local.sort_by_key(|&x| (w.first[x], x));
    for &x in &local {
        let taken: Vec<Home> = w.adj[x].iter_ones().filter_map(|y| home[y]).collect();
        let s = (0..).find(|s| !taken.contains(&Home::Local(*s))).unwrap();
        home[x] = Some(Home::Local(s));
    }
    spilled.iter().map(|&x| (x, home[x].expect("every spilled web has a home"))).collect()
}

/// `k` placed under `budget` (see the module's text), or why it cannot be: a cap below what the
/// spill code itself needs, or spill areas beyond the ISA's limits.
pub fn allocate(k: &Kernel, budget: Budget) -> Result<Allocated, String> {
    let code = crate::phases::without_phases(k);
    let nregs = regs_named(&code) as usize;
    let before = code.len();
    let w = Webs::of(&code, nregs);
    let webs = reachable(&w);
    let cost = spill_costs(&code, &w);
    let demand = demand_of(&code, &w, &webs, &cost);
    let unchanged = |kernel: Kernel| Allocated { demand, values: webs.len(), in_shared: 0, in_local: 0, shared_slots: 0, local_slots: 0, before, after: crate::phases::without_phases(&kernel).len(), kernel };
    if demand <= budget.regs {
        // (no spill: the code as it is, or renumbered if it names more registers than the cap
        // and the renumbering's colouring fits it; else the colouring below, which spills none)
        let out = if nregs as u32 <= budget.regs { Some(k.clone()) } else { Some(crate::phases::renumbered(k)).filter(|r| regs_named(&r.code) <= budget.regs) };
        if let Some(mut out) = out {
            out.regs = out.regs.min(budget.regs).max(regs_named(&out.code));
            return Ok(unchanged(out));
        }
    }
    let threads = k.threads;
    // (both ways, where both can place it; the one whose code weighs less, each instruction
    // weighted 8 per loop it sits in, as the spill cost weighs a value's accesses, and a local
    // access 4 times an instruction, as it goes off chip)
    let weight = |k: &Kernel| {
        let local = |i: &Inst| matches!(i.op, Op::Ld { space: Space::Local, .. } | Op::St { space: Space::Local, .. });
        loop_depth(&k.code).iter().zip(&k.code).map(|(&d, i)| loop_weight(d) * if local(i) { 4.0 } else { 1.0 }).sum::<f64>()
    };
    let (mut out, placed) = match (rebuilt(k, &code, &w, &cost, budget), reserved(k, &code, &w, &webs, &cost, budget)) {
        (Some(a), Ok(b)) => {
            if weight(&a.0) <= weight(&b.0) {
                a
            } else {
                b
            }
        }
        (Some(a), Err(_)) => a,
        (None, b) => b?,
    };
    let count = |f: fn(&Home) -> Option<u32>| placed.iter().filter_map(|p| f(&p.1)).map(|s| s + 1).max().unwrap_or(0);
    let shared_slots = count(|h| if let Home::Shared(s) = h { Some(*s) } else { None });
    let local_slots = count(|h| if let Home::Local(s) = h { Some(*s) } else { None });
    let shared = k.shared_bytes as u64 + 4 * shared_slots as u64 * threads as u64;
    let local = k.local_bytes as u64 + 4 * local_slots as u64;
    if shared > mpgpu_spec::isa::MAX_SHARED_BYTES as u64 {
        return Err(format!("kernel `{}`: {shared_slots} shared spill slots for {threads} threads make {shared} B of shared memory, more than the ISA's {} B", k.name, mpgpu_spec::isa::MAX_SHARED_BYTES));
    }
    if local > mpgpu_spec::isa::MAX_LOCAL_BYTES as u64 {
        return Err(format!("kernel `{}`: {local_slots} local spill slots make {local} B of local memory a thread, more than the ISA's {} B", k.name, mpgpu_spec::isa::MAX_LOCAL_BYTES));
    }
    out.regs = regs_named(&out.code);
    debug_assert!(out.regs <= budget.regs, "{} registers under a cap of {}", out.regs, budget.regs);
    out.spill_shared = k.spill_shared + (shared as u32 - k.shared_bytes);
    out.shared_bytes = shared as u32;
    out.local_bytes = local as u32;
    let in_shared = placed.iter().filter(|p| matches!(p.1, Home::Shared(_))).count();
    Ok(Allocated { demand, values: webs.len(), in_shared, in_local: placed.len() - in_shared, shared_slots, local_slots, before, after: out.code.len(), kernel: out })
}


/// The placement by spilling and rebuilding (see the module's text): each spilled value gets
/// a temporary register of its own, loaded before each read and stored after each write, and
/// the code with the temporaries is coloured again until it colours; the temporaries are never
/// spilled (an uncoloured one spills a value occupied beside it). `None` when the temporaries
/// cannot be named (more than 256 registers in all) or the rounds do not settle.
fn rebuilt(k: &Kernel, code: &[Inst], w: &Webs, cost: &[f64], budget: Budget) -> Option<(Kernel, Vec<(usize, Home)>)> {
    let nregs = regs_named(code) as usize;
    let n = w.first.len();
    // (each web's register in the code)
    let mut reg_of = vec![0u8; n];
    for (pc, i) in code.iter().enumerate() {
        if let (Some(x), Some(d)) = (w.dst[pc], i.dst_reg()) {
            reg_of[x] = d;
        }
        for &(r, x) in &w.srcs[pc] {
            if let Some(x) = x {
                reg_of[x] = r;
            }
        }
    }
    let mut spilled: Vec<usize> = Vec::new();
    for _round in 0..64 {
        if nregs + spilled.len() > 256 {
            return None;
        }
        let placed = homes(w, &spilled, budget.slots as usize, cost);
        let pointer = placed.iter().any(|p| matches!(p.1, Home::Shared(_)));
        let k_colours = budget.regs.checked_sub(pointer as u32)? as usize;
        let mut home = vec![None; n];
        let mut temp = vec![0u8; n];
        for (j, &(x, h)) in placed.iter().enumerate() {
            home[x] = Some(h);
            temp[x] = (nregs + j) as u8;
        }
        // (the code with temporaries: shared slots addressed from no register for now, the
        // pointer's place; where each original instruction lands, and which accesses are the
        // shared spills)
        let mut at: Vec<(usize, usize)> = Vec::with_capacity(code.len());
        let mut spill_shared: Vec<bool> = Vec::new();
        let mut next = 0usize;
        let group = |pc: usize, i: &Inst| -> Vec<Inst> {
            let slot = |x: usize| slot_addr(k, home[x].unwrap(), None);
            let mut loaded = spilled_reads(w, pc, |x| home[x].is_some());
            // (a guarded write of a spilled value keeps the old value in the other lanes: it
            // is loaded first, so that the temporary's value is one web with the write's)
            if let Some(x) = w.dst[pc].filter(|&x| home[x].is_some() && i.guard.is_some() && !loaded.contains(&x)) {
                loaded.push(x);
            }
            let mut g: Vec<Inst> = Vec::new();
            for &x in &loaded {
                let (space, addr) = slot(x);
                g.push(Inst { guard: None, op: Op::Ld { space, ty: Ty::U32, d: temp[x], addr } });
                spill_shared.push(space == Space::Shared);
            }
            let reg = |x: usize| if home[x].is_some() { temp[x] } else { reg_of[x] };
            at.push((next, g.len()));
            g.push(rename(i, w, pc, &reg));
            spill_shared.push(false);
            if let Some(x) = w.dst[pc].filter(|&x| home[x].is_some()) {
                let (space, addr) = slot(x);
                g.push(Inst { guard: i.guard, op: Op::St { space, ty: Ty::U32, addr, src: Operand::Reg(temp[x]) } });
                spill_shared.push(space == Space::Shared);
            }
            next += g.len();
            g
        };
        let k1 = crate::phases::relayout(k, group, Vec::new());
        let w1 = Webs::of(&k1.code, nregs + placed.len());
        let webs1 = reachable(&w1);
        // (the webs of the rewritten code that are original values, and the temporaries)
        let n1 = w1.first.len();
        let mut orig = vec![usize::MAX; n1];
        for (pc, &(start, off)) in at.iter().enumerate() {
            let pc1 = start + off;
            if let (Some(x), Some(x1)) = (w.dst[pc], w1.dst[pc1]) {
                if home[x].is_none() {
                    orig[x1] = x;
                }
            }
            for &(r, x) in &w.srcs[pc] {
                if let Some(x) = x.filter(|&x| home[x].is_none()) {
                    if let Some(&(_, Some(x1))) = w1.srcs[pc1].iter().find(|s| s.0 == r) {
                        orig[x1] = x;
                    }
                }
            }
        }
        let cost1: Vec<f64> = (0..n1).map(|x| if orig[x] == usize::MAX { f64::INFINITY } else { cost[orig[x]] }).collect();
        let c1 = colour(&w1, &webs1, k_colours, &cost1);
        let left: Vec<usize> = webs1.iter().copied().filter(|&x| c1[x].is_none()).collect();
        if left.is_empty() {
            // (done: the registers named, the pointer lowest, the shared spills addressed from it)
            let base = pointer as u32;
            let renamed: Vec<Inst> = (0..k1.code.len())
                .map(|pc1| {
                    let mut i = rename(&k1.code[pc1], &w1, pc1, &|x| (base + c1[x].unwrap_or(0) as u32) as u8);
                    if spill_shared[pc1] {
                        match &mut i.op {
                            Op::Ld { addr, .. } | Op::St { addr, .. } => addr.base = Some(0),
                            _ => {}
                        }
                    }
                    i
                })
                .collect();
            let k2 = Kernel { code: renamed, ..k1 };
            return Some((crate::phases::relayout(&k2, |_, i| vec![*i], pointer_prologue(k, pointer)), placed));
        }
        // (spill the original values left; for a temporary left, the cheapest original value
        // occupied where it is)
        let before = spilled.len();
        for &x1 in &left {
            let x = if orig[x1] != usize::MAX {
                Some(orig[x1])
            } else {
                let pc1 = w1.first[x1];
                w1.occ[pc1].iter().map(|&y| orig[y]).filter(|&y| y != usize::MAX).min_by(|&a, &b| cost[a].total_cmp(&cost[b]).then(a.cmp(&b)))
            };
            if let Some(x) = x.filter(|x| !spilled.contains(x)) {
                spilled.push(x);
            }
        }
        if spilled.len() == before {
            return None;
        }
        spilled.sort_unstable_by_key(|&x| (w.first[x], x));
    }
    None
}

/// The placement with the spill code's registers reserved for the whole kernel (see the
/// module's text): what [`allocate`] falls back to when spilling and rebuilding cannot name
/// its temporaries (more than 256 registers in all) or does not settle.
fn reserved(k: &Kernel, code: &[Inst], w: &Webs, webs: &[usize], cost: &[f64], budget: Budget) -> Result<(Kernel, Vec<(usize, Home)>), String> {
    let (mut reserved, mut last) = (0u32, (0u32, false));
    let (colours, placed, scratch, pointer) = loop {
        let Some(k_colours) = budget.regs.checked_sub(reserved) else {
            let (scratch, pointer) = last;
            let pointer = if pointer { " and one for the spill area's pointer" } else { "" };
            return Err(format!("kernel `{}`: a cap of {} register(s) is too few for the spill code, which needs {scratch} scratch register(s){pointer}", k.name, budget.regs));
        };
        let c = colour(w, webs, k_colours as usize, cost);
        let spilled: Vec<usize> = webs.iter().copied().filter(|&x| c[x].is_none()).collect();
        let placed = homes(w, &spilled, budget.slots as usize, cost);
        let mut is_spilled = vec![false; w.first.len()];
        for &x in &spilled {
            is_spilled[x] = true;
        }
        let scratch = (0..code.len()).map(|pc| spilled_reads(w, pc, |x| is_spilled[x]).len().max(w.dst[pc].is_some_and(|x| is_spilled[x]) as usize)).max().unwrap_or(0) as u32;
        let pointer = placed.iter().any(|(_, h)| matches!(h, Home::Shared(_)));
        let need = scratch + pointer as u32;
        last = (scratch, pointer);
        if need <= reserved {
            break (c, placed, scratch, pointer);
        }
        reserved = need;
    };
    // (the pointer lowest, then the scratch registers, then the values' colours: the registers
    // live everywhere sit at the bottom, so that Zorua's phases can release the top ones)
    let (scratch0, base) = (pointer as u32, pointer as u32 + scratch);
    let mut homes_of = vec![None; w.first.len()];
    for &(x, h) in &placed {
        homes_of[x] = Some(h);
    }
    let home_of = |x: usize| homes_of[x];
    let addr = |h: Home| slot_addr(k, h, Some(0));
    let group = |pc: usize, i: &Inst| -> Vec<Inst> {
        // (the spilled values read, each in a scratch register of its own)
        let loaded = spilled_reads(w, pc, |x| home_of(x).is_some());
        let reg = |x: usize| match colours[x] {
            Some(c) => (base + c as u32) as u8,
            None => match loaded.iter().position(|&y| y == x) {
                Some(j) => (scratch0 + j as u32) as u8,
                None => scratch0 as u8, // (a spilled value only written)
            },
        };
        let mut g: Vec<Inst> = loaded
            .iter()
            .map(|&x| {
                let (space, addr) = addr(home_of(x).unwrap());
                Inst { guard: i.guard, op: Op::Ld { space, ty: Ty::U32, d: reg(x), addr } }
            })
            .collect();
        g.push(rename(i, w, pc, &reg));
        if let Some(x) = w.dst[pc].filter(|&x| home_of(x).is_some()) {
            let (space, addr) = addr(home_of(x).unwrap());
            g.push(Inst { guard: i.guard, op: Op::St { space, ty: Ty::U32, addr, src: Operand::Reg(reg(x)) } });
        }
        g
    };
    Ok((crate::phases::relayout(k, group, pointer_prologue(k, pointer)), placed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble_one;

    fn kernel(body: &str) -> Kernel {
        assemble_one("t.s", &format!(".kernel t\n.regs 16\n.threads 64\n.params 8\n{body}")).unwrap()
    }

    /// The paper's Fig. 2: v1 and v2 live throughout, v4 overlapping v3 and v5, which do not
    /// overlap each other.
    const FIG2: &str = " mov.u32 r1, %tid.x\n mov.u32 r2, %ctaid.x\n add.u32 r3, r1, 1\n add.u32 r4, r2, 2\n st.global.u32 [r1], r3\n add.u32 r5, r1, r2\n st.global.u32 [r2], r5\n st.global.u32 [r1], r4\n st.global.u32 [r2], r1\n exit\n";

    #[test]
    fn the_papers_figure_2_leaves_one_value_in_local_memory() {
        let k = kernel(FIG2);
        let code = crate::phases::without_phases(&k);
        let w = Webs::of(&code, 6);
        let web = |pc: usize| w.dst[pc].unwrap();
        let (v3, v4, v5) = (web(2), web(3), web(5));
        let cost = vec![1.0; w.first.len()];
        let h = homes(&w, &[v3, v4, v5], 1, &cost);
        let of = |x| h.iter().find(|p| p.0 == x).unwrap().1;
        assert_eq!(of(v4), Home::Local(0), "{h:?}");
        assert_eq!((of(v3), of(v5)), (Home::Shared(0), Home::Shared(0)), "{h:?}");
        // (with two slots none goes to local memory; with none all three do, v3 and v5 sharing)
        assert!(homes(&w, &[v3, v4, v5], 2, &cost).iter().all(|p| matches!(p.1, Home::Shared(_))));
        let l = homes(&w, &[v3, v4, v5], 0, &cost);
        assert!(l.iter().all(|p| matches!(p.1, Home::Local(_))));
        assert_eq!(l.iter().map(|p| p.1).collect::<std::collections::BTreeSet<_>>().len(), 2, "{l:?}");
    }

    #[test]
    fn a_cap_the_values_fit_changes_nothing_and_a_tight_one_spills_in_the_budgets_order() {
        let k = kernel(FIG2);
        assert_eq!(demand(&k), 4);
        let a = allocate(&k, Budget { regs: 4, slots: 0 }).unwrap();
        assert_eq!((a.in_shared, a.in_local, a.after), (0, 0, a.before));
        assert_eq!(a.kernel.regs, 4);
        // (cap 3: one value out, and one scratch register reserved, so two: both to shared
        // memory with a slot each, the pointer taking one more register)
        let a = allocate(&k, Budget { regs: 3, slots: 4 }).unwrap();
        assert!(a.in_shared > 0 && a.in_local == 0, "{a:?}");
        assert!(a.kernel.regs <= 3 && a.after > a.before, "{a:?}");
        assert_eq!(a.kernel.shared_bytes, 4 * a.shared_slots * 64);
        let b = allocate(&k, Budget { regs: 3, slots: 0 }).unwrap();
        assert!(b.in_local > 0 && b.in_shared == 0 && b.kernel.local_bytes == 4 * b.local_slots, "{b:?}");
        // (too few registers for the spill code itself)
        let e = allocate(&k, Budget { regs: 1, slots: 0 }).unwrap_err();
        assert!(e.contains("too few for the spill code"), "{e}");
    }

    #[test]
    fn a_hot_loop_value_stays_in_a_register_and_a_cold_one_goes() {
        // (r1, r2 and r3 are read in the loop; r5 and r6 only before and after it: they are the
        // ones spilled, and reloaded only after the loop)
        let k = kernel(" mov.u32 r1, %tid.x\n mov.u32 r5, %ctaid.x\n mov.u32 r6, %ctaid.y\n mov.u32 r3, 0\n mov.u32 r2, 0\nL:\n add.u32 r3, r3, r1\n add.u32 r2, r2, 1\n setp.lt.u32 p0, r2, 8\n @p0 bra L\n add.u32 r3, r3, r5\n add.u32 r3, r3, r6\n st.global.u32 [r1], r3\n exit\n");
        assert_eq!(demand(&k), 5);
        let a = allocate(&k, Budget { regs: 4, slots: 0 }).unwrap();
        assert_eq!(a.in_local, 2, "{a:?}");
        let back = a.kernel.code.iter().position(|i| matches!(i.op, Op::Bra { .. })).unwrap();
        let reloads: Vec<usize> = (0..a.kernel.code.len()).filter(|&pc| matches!(a.kernel.code[pc].op, Op::Ld { space: Space::Local, .. })).collect();
        assert!(reloads.len() == 2 && reloads.iter().all(|&pc| pc > back), "{:?}", a.kernel.code);
    }
}
