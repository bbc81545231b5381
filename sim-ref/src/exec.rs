//! Warp execution: the SIMT semantics of every instruction, one warp-instruction per call.
//!
//! State is kept structure-of-arrays: a warp's registers are `regs[r * 32 + lane]`, predicates
//! are one 32-bit lane mask each, and divergence is a reconvergence stack of (pc, reconvergence
//! pc, mask) entries. [`step`] executes the instruction at the top of the stack for the active
//! lanes and allocates nothing; it is the stages the timing model runs one by one ([`issue`],
//! [`read_operands`], [`compute`] or [`perform`], [`writeback`]) run back to back. The
//! functional GPU ([`crate::func`]) calls it.

use crate::kernel::Kernel;
use crate::mem::{GlobalMem, MemFault};
use mpgpu_spec::isa::*;
use std::fmt;

const W: usize = WARP_SIZE;
type Lanes = [u32; W];

/// One SIMT stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackEntry {
    pub pc: u32,
    /// Reconvergence pc: the entry is popped when `pc` reaches it (`u32::MAX`: never).
    pub rpc: u32,
    pub mask: u32,
}

/// Scheduling state of a warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpState {
    Ready,
    AtBarrier,
    Done,
}

/// The architectural state of one warp (`repr(C)`, its state first: the timing model's issue
/// test reads it beside its own fields, `timing::sm`).
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct Warp {
    pub state: WarpState,
    /// Warp index within its block.
    pub id: u32,
    pub nregs: u32,
    /// `regs[r * 32 + lane]`
    pub regs: Vec<u32>,
    pub preds: [u32; NUM_PREDS as usize],
    pub stack: Vec<StackEntry>,
    /// Lanes that hold a thread (the last warp of a block may be partial).
    pub valid: u32,
    /// Lanes whose thread has executed `exit`.
    pub exited: u32,
    /// Per-thread local memory, `local[word * 32 + lane]`.
    pub local: Vec<u32>,
    /// Thread index of each lane, per dimension.
    pub tid: [Lanes; 3],
}

impl Warp {
    /// A warp at the kernel's entry, with zeroed registers.
    pub fn new(k: &Kernel, id: u32, block: [u32; 3]) -> Warp {
        let threads = block[0] * block[1] * block[2];
        let first = id * W as u32;
        let n = threads.saturating_sub(first).min(W as u32);
        let valid = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let mut tid = [[0; W]; 3];
        for l in 0..W {
            let t = first + l as u32;
            tid[0][l] = t % block[0];
            tid[1][l] = (t / block[0]) % block[1];
            tid[2][l] = t / (block[0] * block[1]);
        }
        let mut stack = Vec::with_capacity(16);
        stack.push(StackEntry { pc: 0, rpc: u32::MAX, mask: valid });
        Warp {
            id,
            nregs: k.regs,
            regs: vec![0; k.regs as usize * W],
            preds: [0; NUM_PREDS as usize],
            stack,
            valid,
            exited: 0,
            local: vec![0; (k.local_bytes / 4) as usize * W],
            tid,
            state: if valid == 0 { WarpState::Done } else { WarpState::Ready },
        }
    }

    /// Becomes a copy of `fresh` without allocating (the buffers are reused).
    pub fn reset_from(&mut self, fresh: &Warp) {
        self.id = fresh.id;
        self.nregs = fresh.nregs;
        self.regs.clone_from(&fresh.regs);
        self.preds = fresh.preds;
        self.stack.clone_from(&fresh.stack);
        self.valid = fresh.valid;
        self.exited = fresh.exited;
        self.local.clone_from(&fresh.local);
        self.tid = fresh.tid;
        self.state = fresh.state;
    }

    /// The pc of the next instruction, if the warp has not finished.
    pub fn pc(&self) -> Option<u32> {
        self.stack.last().map(|e| e.pc)
    }

    /// Lanes that execute the next instruction.
    pub fn active_mask(&self) -> u32 {
        self.stack.last().map_or(0, |e| e.mask)
    }

    pub fn reg(&self, r: u8, lane: usize) -> u32 {
        self.regs[r as usize * W + lane]
    }

    pub fn set_reg(&mut self, r: u8, lane: usize, v: u32) {
        self.regs[r as usize * W + lane] = v;
    }

    #[inline]
    fn lanes(&self, r: u8) -> &Lanes {
        self.regs[r as usize * W..r as usize * W + W].try_into().unwrap()
    }

    #[inline]
    fn lanes_mut(&mut self, r: u8) -> &mut Lanes {
        (&mut self.regs[r as usize * W..r as usize * W + W]).try_into().unwrap()
    }

    /// Pops entries that have reached their reconvergence point or lost all their lanes.
    #[inline]
    fn settle(&mut self) {
        while let Some(top) = self.stack.last() {
            if top.pc == top.rpc || top.mask == 0 {
                self.stack.pop();
            } else {
                return;
            }
        }
        self.state = WarpState::Done;
    }

    #[inline]
    pub fn advance(&mut self) {
        let top = self.stack.last_mut().unwrap();
        top.pc += 1;
        if top.pc == top.rpc {
            self.settle();
        }
    }
}

/// Per-block state the executor needs besides the warp.
pub struct BlockCtx<'a> {
    pub kernel: &'a Kernel,
    pub params: &'a [u32],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub ctaid: [u32; 3],
    pub smid: u32,
    pub shared: &'a mut [u32],
}

/// What a step did, beyond executing its instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The warp can go on.
    Continue,
    /// The warp arrived at `bar.sync` and waits for its block.
    Barrier,
    /// Every thread of the warp has exited.
    Done,
}

/// What went wrong in an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    Unmapped,
    Misaligned,
    OutOfRange { limit: u32 },
    /// The address is in a page another process owns (its page table does not map it).
    NotOwned { owner: u16 },
}

/// A fault in one lane of one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub pc: u32,
    pub lane: u32,
    pub space: Space,
    pub store: bool,
    pub addr: u32,
    pub kind: FaultKind,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.store { "store to" } else { "load from" };
        let sp = self.space.name();
        match self.kind {
            FaultKind::Unmapped => write!(f, "{sp} {what} unmapped address 0x{:08x}", self.addr),
            FaultKind::Misaligned => write!(f, "{sp} {what} misaligned address 0x{:08x} (accesses are 4-byte aligned)", self.addr),
            FaultKind::NotOwned { owner } => {
                write!(f, "{sp} {what} address 0x{:08x}: the page belongs to another process (#{owner}), not to this one (isolation)", self.addr)
            }
            FaultKind::OutOfRange { limit } => {
                write!(f, "{sp} {what} byte address {} outside the {limit} bytes of {sp} memory", self.addr as i32)
            }
        }
    }
}

#[inline]
fn fetch(w: &Warp, c: &BlockCtx, o: Operand, lane_id: &Lanes) -> Lanes {
    match o {
        Operand::Reg(r) => *w.lanes(r),
        Operand::Imm(v) => [v; W],
        Operand::Sreg(s) => match s {
            Sreg::Tid(d) => w.tid[d as usize],
            Sreg::Ntid(d) => [c.block[d as usize]; W],
            Sreg::Ctaid(d) => [c.ctaid[d as usize]; W],
            Sreg::Nctaid(d) => [c.grid[d as usize]; W],
            Sreg::LaneId => *lane_id,
            Sreg::WarpId => [w.id; W],
            Sreg::SmId => [c.smid; W],
        },
    }
}

const LANE_ID: Lanes = {
    let mut a = [0u32; W];
    let mut i = 0;
    while i < W {
        a[i] = i as u32;
        i += 1;
    }
    a
};

#[inline(always)]
fn map1(a: &Lanes, f: impl Fn(u32) -> u32) -> Lanes {
    let mut r = [0; W];
    for l in 0..W {
        r[l] = f(a[l]);
    }
    r
}

#[inline(always)]
fn map2(a: &Lanes, b: &Lanes, f: impl Fn(u32, u32) -> u32) -> Lanes {
    let mut r = [0; W];
    for l in 0..W {
        r[l] = f(a[l], b[l]);
    }
    r
}

#[inline(always)]
fn f2(f: impl Fn(f32, f32) -> f32) -> impl Fn(u32, u32) -> u32 {
    move |a, b| f(f32::from_bits(a), f32::from_bits(b)).to_bits()
}

#[inline(always)]
fn f1(f: impl Fn(f32) -> f32) -> impl Fn(u32) -> u32 {
    move |a| f(f32::from_bits(a)).to_bits()
}

#[inline]
fn write_masked(dst: &mut Lanes, res: &Lanes, mask: u32) {
    if mask == u32::MAX {
        *dst = *res;
    } else {
        for l in 0..W {
            if mask >> l & 1 != 0 {
                dst[l] = res[l];
            }
        }
    }
}

/// Binary operation semantics (see docs/isa.md).
pub fn bin(op: BinOp, ty: Ty, a: &Lanes, b: &Lanes) -> Lanes {
    use BinOp::*;
    let s = |x: u32| x as i32;
    match (op, ty) {
        (Add, Ty::F32) => map2(a, b, f2(|x, y| x + y)),
        (Add, _) => map2(a, b, u32::wrapping_add),
        (Sub, Ty::F32) => map2(a, b, f2(|x, y| x - y)),
        (Sub, _) => map2(a, b, u32::wrapping_sub),
        (Mul, Ty::F32) => map2(a, b, f2(|x, y| x * y)),
        (Mul, _) => map2(a, b, u32::wrapping_mul),
        (MulHi, Ty::S32) => map2(a, b, |x, y| ((s(x) as i64 * s(y) as i64) >> 32) as u32),
        (MulHi, _) => map2(a, b, |x, y| ((x as u64 * y as u64) >> 32) as u32),
        (Div, Ty::F32) => map2(a, b, f2(|x, y| x / y)),
        (Div, Ty::S32) => map2(a, b, |x, y| if y == 0 { u32::MAX } else { s(x).wrapping_div(s(y)) as u32 }),
        (Div, _) => map2(a, b, |x, y| x.checked_div(y).unwrap_or(u32::MAX)),
        (Rem, Ty::S32) => map2(a, b, |x, y| if y == 0 { x } else { s(x).wrapping_rem(s(y)) as u32 }),
        (Rem, _) => map2(a, b, |x, y| x.checked_rem(y).unwrap_or(x)),
        (Min, Ty::F32) => map2(a, b, f2(f32::min)),
        (Min, Ty::S32) => map2(a, b, |x, y| s(x).min(s(y)) as u32),
        (Min, _) => map2(a, b, u32::min),
        (Max, Ty::F32) => map2(a, b, f2(f32::max)),
        (Max, Ty::S32) => map2(a, b, |x, y| s(x).max(s(y)) as u32),
        (Max, _) => map2(a, b, u32::max),
        (And, _) => map2(a, b, |x, y| x & y),
        (Or, _) => map2(a, b, |x, y| x | y),
        (Xor, _) => map2(a, b, |x, y| x ^ y),
        (Shl, _) => map2(a, b, |x, y| if y >= 32 { 0 } else { x << y }),
        (Shr, Ty::S32) => map2(a, b, |x, y| (s(x) >> y.min(31)) as u32),
        (Shr, _) => map2(a, b, |x, y| if y >= 32 { 0 } else { x >> y }),
    }
}

/// Unary operation semantics.
pub fn un(op: UnOp, ty: Ty, a: &Lanes) -> Lanes {
    use UnOp::*;
    match (op, ty) {
        (Mov, _) => *a,
        (Neg, Ty::F32) => map1(a, |x| x ^ 0x8000_0000),
        (Neg, _) => map1(a, |x| (x as i32).wrapping_neg() as u32),
        (Abs, Ty::F32) => map1(a, |x| x & 0x7fff_ffff),
        (Abs, _) => map1(a, |x| (x as i32).wrapping_abs() as u32),
        (Not, _) => map1(a, |x| !x),
        (Popc, _) => map1(a, u32::count_ones),
        (Clz, _) => map1(a, u32::leading_zeros),
        (Rcp, _) => map1(a, f1(|x| 1.0 / x)),
        (Sqrt, _) => map1(a, f1(f32::sqrt)),
        (Rsqrt, _) => map1(a, f1(|x| 1.0 / x.sqrt())),
        (Sin, _) => map1(a, f1(f32::sin)),
        (Cos, _) => map1(a, f1(f32::cos)),
        (Ex2, _) => map1(a, f1(f32::exp2)),
        (Lg2, _) => map1(a, f1(f32::log2)),
    }
}

/// Conversion semantics.
pub fn cvt(rnd: Rnd, to: Ty, from: Ty, a: &Lanes) -> Lanes {
    match (to, from) {
        (Ty::F32, Ty::F32) => map1(
            a,
            f1(match rnd {
                Rnd::Rzi => f32::trunc,
                Rnd::Rmi => f32::floor,
                Rnd::Rpi => f32::ceil,
                _ => f32::round_ties_even,
            }),
        ),
        (Ty::F32, Ty::S32) => map1(a, |x| (x as i32 as f32).to_bits()),
        (Ty::F32, _) => map1(a, |x| (x as f32).to_bits()),
        (Ty::S32, Ty::F32) => map1(a, |x| f32::from_bits(x) as i32 as u32),
        (_, Ty::F32) => map1(a, |x| f32::from_bits(x) as u32),
        _ => *a,
    }
}

/// Comparison semantics: the lane mask where `a cmp b` holds.
pub fn compare(cmp: Cmp, ty: Ty, a: &Lanes, b: &Lanes) -> u32 {
    let mut m = 0u32;
    for l in 0..W {
        let (x, y) = (a[l], b[l]);
        let r = match ty {
            Ty::F32 => {
                let (x, y) = (f32::from_bits(x), f32::from_bits(y));
                match cmp {
                    Cmp::Eq => x == y,
                    Cmp::Ne => x != y,
                    Cmp::Lt => x < y,
                    Cmp::Le => x <= y,
                    Cmp::Gt => x > y,
                    Cmp::Ge => x >= y,
                }
            }
            Ty::S32 => {
                let (x, y) = (x as i32, y as i32);
                match cmp {
                    Cmp::Eq => x == y,
                    Cmp::Ne => x != y,
                    Cmp::Lt => x < y,
                    Cmp::Le => x <= y,
                    Cmp::Gt => x > y,
                    Cmp::Ge => x >= y,
                }
            }
            _ => match cmp {
                Cmp::Eq => x == y,
                Cmp::Ne => x != y,
                Cmp::Lt => x < y,
                Cmp::Le => x <= y,
                Cmp::Gt => x > y,
                Cmp::Ge => x >= y,
            },
        };
        m |= (r as u32) << l;
    }
    m
}

/// Atomic update: the new memory value from the old one.
#[inline]
pub fn atom_update(op: AtomOp, ty: Ty, old: u32, b: u32, c: u32) -> u32 {
    match op {
        AtomOp::Add if ty == Ty::F32 => (f32::from_bits(old) + f32::from_bits(b)).to_bits(),
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min if ty == Ty::S32 => (old as i32).min(b as i32) as u32,
        AtomOp::Min => old.min(b),
        AtomOp::Max if ty == Ty::S32 => (old as i32).max(b as i32) as u32,
        AtomOp::Max => old.max(b),
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
    }
}

#[inline]
fn small_space_index(space: Space, pc: u32, lane: usize, store: bool, addr: u32, limit_bytes: u32) -> Result<usize, Fault> {
    if addr & 3 != 0 {
        return Err(Fault { pc, lane: lane as u32, space, store, addr, kind: FaultKind::Misaligned });
    }
    if addr >= limit_bytes {
        return Err(Fault { pc, lane: lane as u32, space, store, addr, kind: FaultKind::OutOfRange { limit: limit_bytes } });
    }
    Ok((addr / 4) as usize)
}

#[inline]
fn gfault(pc: u32, lane: usize, store: bool, e: MemFault) -> Fault {
    let (addr, kind) = match e {
        MemFault::Unmapped(a) => (a, FaultKind::Unmapped),
        MemFault::Misaligned(a) => (a, FaultKind::Misaligned),
    };
    Fault { pc, lane: lane as u32, space: Space::Global, store, addr, kind }
}

/// The byte address each lane of `w` would access for `a`.
#[inline]
pub fn addresses(w: &Warp, a: Addr) -> Lanes {
    match a.base {
        Some(r) => map1(w.lanes(r), |x| x.wrapping_add(a.offset as u32)),
        None => [a.offset as u32; W],
    }
}

/// The lanes in which `inst` takes effect for `w`: the active mask, narrowed by the guard.
#[inline]
pub fn exec_mask(w: &Warp, inst: &Inst) -> u32 {
    guard_mask(w, inst, w.active_mask())
}

/// The lanes of `active` whose guard predicate (read from the warp now) lets `inst` execute.
#[inline]
pub fn guard_mask(w: &Warp, inst: &Inst, active: u32) -> u32 {
    match inst.guard {
        None => active,
        Some(g) => {
            let p = w.preds[g.pred as usize];
            active & if g.neg { !p } else { p }
        }
    }
}

/// An issued instruction's data on its way through the pipeline: what the operand-read stage
/// read, and what the execute or memory stage produced, until writeback writes it to the
/// warp. The timing model keeps one per instruction in flight; [`step`] runs the stages back to
/// back.
#[derive(Clone, Debug)]
pub struct Flight {
    pub pc: u32,
    pub inst: Inst,
    /// Lanes in which it takes effect (active, and the guard true), fixed at issue.
    pub exec: u32,
    /// Source operands as read: `a`, `b`, `c` (a store's data is `src[0]`, an atomic's
    /// operands `src[0]` and `src[1]`).
    pub src: [Lanes; 3],
    /// Predicate sources as read (`pred` a and b; `selp`'s p in `psrc[0]`).
    pub psrc: [u32; 2],
    /// Byte address of each lane (loads, stores, atomics).
    pub addr: Lanes,
    /// The result of each lane for a register destination (a load's lanes are filled as its
    /// accesses are performed).
    pub res: Lanes,
    /// The result lane mask for a predicate destination.
    pub pres: u32,
}

impl Flight {
#[inline(always)]
    pub fn new(pc: u32, inst: Inst, exec: u32) -> Flight {
        Flight { pc, inst, exec, src: [[0; W]; 3], psrc: [0; 2], addr: [0; W], res: [0; W], pres: 0 }
    }

    /// A record holding a `nop`, for scratch use.
    pub fn empty() -> Flight {
        Flight::new(0, Inst { guard: None, op: Op::Nop }, 0)
    }
}

/// Whether the instruction moves data (anything but control flow, barriers, fences, phase
/// markers and `nop`): those go through operand read, execute or memory, and writeback.
#[inline]
pub fn is_data(op: &Op) -> bool {
    !matches!(op, Op::Bra { .. } | Op::Exit | Op::Bar | Op::Membar { .. } | Op::Phase { .. } | Op::Nop)
}

/// The operand-read stage: reads the instruction's register, special-register and predicate
/// sources, and the lanes' addresses of a memory instruction.
#[inline(always)]
pub fn read_operands(w: &Warp, c: &BlockCtx, f: &mut Flight) {
    let mut get = |i: usize, o: Operand| f.src[i] = fetch(w, c, o, &LANE_ID);
    match f.inst.op {
        Op::Bin { a, b, .. } | Op::Setp { a, b, .. } => {
            get(0, a);
            get(1, b);
        }
        Op::Mad { a, b, c: cc, .. } => {
            get(0, a);
            get(1, b);
            get(2, cc);
        }
        Op::Un { a, .. } | Op::Cvt { a, .. } => get(0, a),
        Op::Selp { a, b, p, .. } => {
            get(0, a);
            get(1, b);
            f.psrc[0] = w.preds[p as usize];
        }
        Op::Pred { a, b, .. } => f.psrc = [w.preds[a as usize], w.preds[b as usize]],
        Op::Ld { addr, .. } => f.addr = addresses(w, addr),
        Op::St { addr, src, .. } => {
            f.addr = addresses(w, addr);
            get(0, src);
        }
        Op::Atom { addr, b, c: cc, .. } => {
            f.addr = addresses(w, addr);
            get(0, b);
            get(1, cc);
        }
        Op::Bra { .. } | Op::Exit | Op::Bar | Op::Membar { .. } | Op::Phase { .. } | Op::Nop => {}
    }
}

/// The execute stage of an arithmetic, logic, conversion, comparison or select instruction:
/// its result from the operands read. Memory instructions produce theirs in [`perform`].
#[inline(always)]
pub fn compute(f: &mut Flight) {
    let [a, b, x] = &f.src;
    match f.inst.op {
        Op::Bin { op, ty, .. } => f.res = bin(op, ty, a, b),
        Op::Mad { ty, .. } => {
            let mut r = [0; W];
            if ty == Ty::F32 {
                for l in 0..W {
                    r[l] = (f32::from_bits(a[l]) * f32::from_bits(b[l]) + f32::from_bits(x[l])).to_bits();
                }
            } else {
                for l in 0..W {
                    r[l] = a[l].wrapping_mul(b[l]).wrapping_add(x[l]);
                }
            }
            f.res = r;
        }
        Op::Un { op, ty, .. } => f.res = un(op, ty, a),
        Op::Cvt { rnd, to, from, .. } => f.res = cvt(rnd, to, from, a),
        Op::Setp { cmp, ty, .. } => f.pres = compare(cmp, ty, a, b),
        Op::Pred { op, .. } => {
            let [x, y] = f.psrc;
            f.pres = match op {
                PredOp::And => x & y,
                PredOp::Or => x | y,
                PredOp::Xor => x ^ y,
                PredOp::Not => !x,
            }
        }
        Op::Selp { .. } => {
            let pm = f.psrc[0];
            let mut r = [0; W];
            for l in 0..W {
                r[l] = if pm >> l & 1 != 0 { a[l] } else { b[l] };
            }
            f.res = r;
        }
        _ => {}
    }
}

/// The memory space a load, store or atomic accesses.
#[inline]
pub fn space_of(op: &Op) -> Option<Space> {
    match *op {
        Op::Ld { space, .. } | Op::St { space, .. } | Op::Atom { space, .. } => Some(space),
        _ => None,
    }
}

/// Checks every executing lane's address of a load, store or atomic (in lane order; the
/// first bad lane is the fault): alignment, and the mapping of global memory or the size of
/// shared, parameter and local memory. Nothing is accessed.
#[inline]
pub fn check_addresses(f: &Flight, c: &BlockCtx, mem: &GlobalMem) -> Result<(), Fault> {
    let Some(space) = space_of(&f.inst.op) else { return Ok(()) };
    let store = !matches!(f.inst.op, Op::Ld { .. });
    let limit = match space {
        Space::Global => 0,
        Space::Shared => c.kernel.shared_bytes,
        Space::Param => c.kernel.param_bytes,
        Space::Local => c.kernel.local_bytes,
    };
    let mut m = f.exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = f.addr[l];
        match space {
            Space::Global => {
                mem.read(a).map_err(|e| gfault(f.pc, l, store, e))?;
            }
            _ => {
                small_space_index(space, f.pc, l, store, a, limit)?;
            }
        }
    }
    Ok(())
}

/// The memory stage: performs the load, store or atomic for `lanes` (a subset of the executing
/// lanes, e.g. those of one cache line), in lane order: a load reads into the result, a store
/// writes its data, an atomic does its read-modify-write and returns the old value. Local
/// memory is the warp's; shared memory and parameters the block's.
#[inline]
pub fn perform(f: &mut Flight, lanes: u32, w: &mut Warp, c: &mut BlockCtx, mem: &mut GlobalMem) -> Result<(), Fault> {
    let pc = f.pc;
    let mut m = lanes & f.exec;
    match f.inst.op {
        Op::Ld { space: Space::Global, .. } => {
            // (the lanes of one access mostly share a page: it is looked up once for them)
            let mut cur: Option<(u32, &[u32; crate::mem::PAGE_WORDS])> = None;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = f.addr[l];
                if a & 3 != 0 {
                    return Err(gfault(pc, l, false, MemFault::Misaligned(a)));
                }
                let p = a / crate::mem::PAGE_BYTES;
                let page = match cur {
                    Some((q, words)) if q == p => words,
                    _ => {
                        let words = mem.page_words(a).map_err(|e| gfault(pc, l, false, e))?;
                        cur = Some((p, words));
                        words
                    }
                };
                f.res[l] = page[GlobalMem::word_in_page(a)];
            }
        }
        Op::Ld { space, .. } => {
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = f.addr[l];
                f.res[l] = match space {
                    Space::Global => unreachable!("a global load takes the arm above"),
                    Space::Shared => c.shared[small_space_index(space, pc, l, false, a, c.kernel.shared_bytes)?],
                    Space::Param => c.params[small_space_index(space, pc, l, false, a, c.kernel.param_bytes)?],
                    Space::Local => w.local[small_space_index(space, pc, l, false, a, c.kernel.local_bytes)? * W + l],
                };
            }
        }
        Op::St { space, .. } => {
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let (a, v) = (f.addr[l], f.src[0][l]);
                match space {
                    Space::Global => mem.write(a, v).map_err(|e| gfault(pc, l, true, e))?,
                    Space::Shared => c.shared[small_space_index(space, pc, l, true, a, c.kernel.shared_bytes)?] = v,
                    Space::Local => {
                        let i = small_space_index(space, pc, l, true, a, c.kernel.local_bytes)?;
                        w.local[i * W + l] = v
                    }
                    Space::Param => unreachable!("rejected by the assembler"),
                }
            }
        }
        Op::Atom { space, op, ty, .. } => {
            // Lanes perform their read-modify-write one after another, lowest lane first.
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let a = f.addr[l];
                let word = match space {
                    Space::Global => mem.word_mut(a).map_err(|e| gfault(pc, l, true, e))?,
                    _ => &mut c.shared[small_space_index(space, pc, l, true, a, c.kernel.shared_bytes)?],
                };
                let old = *word;
                *word = atom_update(op, ty, old, f.src[0][l], f.src[1][l]);
                f.res[l] = old;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The writeback stage: the result goes to the destination register or predicate, in the
/// executing lanes only.
#[inline(always)]
pub fn writeback(w: &mut Warp, f: &Flight) {
    match f.inst.op {
        Op::Setp { d, .. } | Op::Pred { d, .. } => {
            let p = &mut w.preds[d as usize];
            *p = (*p & !f.exec) | (f.pres & f.exec);
        }
        _ => {
            if let Some(d) = f.inst.dst_reg() {
                write_masked(w.lanes_mut(d), &f.res, f.exec);
            }
        }
    }
}

/// The issue stage's part of an instruction: control flow (branches diverge or move the pc,
/// `exit` retires lanes, `bar.sync` stops the warp at the barrier) and the pc moving on past
/// any other instruction, whose data [`read_operands`], [`compute`] or [`perform`], and
/// [`writeback`] move later. `exec` is the instruction's [`exec_mask`] at issue.
#[inline]
pub fn issue(w: &mut Warp, inst: &Inst, exec: u32) -> Event {
    let top = *w.stack.last().expect("issue on a finished warp");
    let (pc, active) = (top.pc, top.mask);
    match inst.op {
        Op::Bra { target, reconv } => {
            let taken = exec;
            if taken == active || taken == 0 {
                let top = w.stack.last_mut().unwrap();
                top.pc = if taken == 0 { pc + 1 } else { target };
                if top.pc == top.rpc {
                    w.settle();
                }
            } else {
                // Diverge: an entry waits at the reconvergence point with the whole mask (unless
                // the current entry already ends there), then the fall-through path runs first
                // and the taken path second. A path that starts at the reconvergence point has
                // nothing to run and gets no entry, so the stack stays as deep as the nesting.
                let e = w.stack.pop().unwrap();
                if reconv != e.rpc {
                    w.stack.push(StackEntry { pc: reconv, rpc: e.rpc, mask: active });
                }
                if target != reconv {
                    w.stack.push(StackEntry { pc: target, rpc: reconv, mask: taken });
                }
                if pc + 1 != reconv {
                    w.stack.push(StackEntry { pc: pc + 1, rpc: reconv, mask: active & !taken });
                }
            }
        }
        Op::Exit => {
            if exec != 0 {
                w.exited |= exec;
                for e in w.stack.iter_mut() {
                    e.mask &= !exec;
                }
            }
            if w.stack.last().unwrap().mask != 0 {
                w.advance();
            } else {
                w.settle();
            }
        }
        Op::Bar => {
            w.advance();
            // A guard that is false in every active lane skips the barrier.
            if exec != 0 && w.state != WarpState::Done {
                w.state = WarpState::AtBarrier;
                return Event::Barrier;
            }
        }
        _ => w.advance(),
    }
    if w.state == WarpState::Done {
        Event::Done
    } else {
        Event::Continue
    }
}

/// Executes the warp's next instruction for its active lanes: every stage at once, with `f` as
/// the scratch record of the instruction (a loop over many instructions keeps one, so nothing
/// is allocated or cleared per instruction).
///
/// Counts go to the caller: the warp-instruction executed is `code[pc]` with `active_mask()`
/// lanes, read both before the call.
#[inline]
pub fn step(f: &mut Flight, w: &mut Warp, c: &mut BlockCtx, mem: &mut GlobalMem) -> Result<Event, Fault> {
    let pc = w.pc().expect("step on a finished warp");
    let inst = c.kernel.code[pc as usize];
    let exec = exec_mask(w, &inst);
    if exec != 0 && is_data(&inst.op) {
        (f.pc, f.inst, f.exec) = (pc, inst, exec);
        if space_of(&inst.op).is_some() {
            read_operands(w, c, f);
            perform(f, exec, w, c, mem)?;
            writeback(w, f);
        } else {
            compute_now(f, w, c);
        }
    }
    Ok(issue(w, &inst, exec))
}

/// The data stages of an instruction that touches no memory (`f.pc`, `f.inst` and `f.exec`
/// set), back to back: [`read_operands`], [`compute`], [`writeback`].
#[inline]
pub fn compute_now(f: &mut Flight, w: &mut Warp, c: &BlockCtx) {
    debug_assert!(space_of(&f.inst.op).is_none() && is_data(&f.inst.op));
    read_operands(w, c, f);
    compute(f);
    writeback(w, f);
}
