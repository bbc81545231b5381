//! The mpgpu SIMT instruction set: the one definition of opcodes and operands shared by the
//! assembler, the functional and timing models, and (later) RTL decoders.
//!
//! A warp has [`WARP_SIZE`] lanes; every register is 32 bits wide. The text syntax and the
//! semantics of every instruction are documented in `docs/isa.md`; [`Inst`]'s `Display` impl is
//! the disassembler and prints exactly that syntax.

use std::fmt;

/// Lanes per warp.
pub const WARP_SIZE: usize = 32;
/// Largest register count a kernel may declare (`r0` .. `r254`).
pub const MAX_REGS: u32 = 255;
/// Predicate registers per thread (`p0` .. `p7`).
pub const NUM_PREDS: u32 = 8;
/// Largest thread block.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest shared-memory declaration per block (bytes).
pub const MAX_SHARED_BYTES: u32 = 64 * 1024;
/// Largest local-memory declaration per thread (bytes).
pub const MAX_LOCAL_BYTES: u32 = 16 * 1024;
/// Largest parameter block (bytes).
pub const MAX_PARAM_BYTES: u32 = 4096;

/// The type suffix of an instruction. All types are 32 bits wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    U32,
    S32,
    F32,
    B32,
}

impl Ty {
    pub const ALL: [Ty; 4] = [Ty::U32, Ty::S32, Ty::F32, Ty::B32];
    pub fn name(self) -> &'static str {
        match self {
            Ty::U32 => "u32",
            Ty::S32 => "s32",
            Ty::F32 => "f32",
            Ty::B32 => "b32",
        }
    }
    pub fn parse(s: &str) -> Option<Ty> {
        Ty::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// Memory state spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Shared,
    Local,
    Param,
}

impl Space {
    pub const ALL: [Space; 4] = [Space::Global, Space::Shared, Space::Local, Space::Param];
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Param => "param",
        }
    }
    pub fn parse(s: &str) -> Option<Space> {
        Space::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// Special (read-only) registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    SmId,
}

impl Sreg {
    pub fn parse(s: &str) -> Option<Sreg> {
        let dim = |d: &str| match d {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        Some(match s {
            "laneid" => Sreg::LaneId,
            "warpid" => Sreg::WarpId,
            "smid" => Sreg::SmId,
            _ => {
                let (base, d) = s.split_once('.')?;
                let d = dim(d)?;
                match base {
                    "tid" => Sreg::Tid(d),
                    "ntid" => Sreg::Ntid(d),
                    "ctaid" => Sreg::Ctaid(d),
                    "nctaid" => Sreg::Nctaid(d),
                    _ => return None,
                }
            }
        })
    }
}

impl fmt::Display for Sreg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: &u8| ["x", "y", "z"][*d as usize];
        match self {
            Sreg::Tid(x) => write!(f, "%tid.{}", d(x)),
            Sreg::Ntid(x) => write!(f, "%ntid.{}", d(x)),
            Sreg::Ctaid(x) => write!(f, "%ctaid.{}", d(x)),
            Sreg::Nctaid(x) => write!(f, "%nctaid.{}", d(x)),
            Sreg::LaneId => write!(f, "%laneid"),
            Sreg::WarpId => write!(f, "%warpid"),
            Sreg::SmId => write!(f, "%smid"),
        }
    }
}

/// A source operand: a register, a 32-bit immediate (the bit pattern), or a special register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(u8),
    Imm(u32),
    Sreg(Sreg),
}

/// A memory address: `[rN+off]`, `[rN]` or `[off]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr {
    pub base: Option<u8>,
    pub offset: i32,
}

/// Two-source arithmetic and logic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    MulHi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

impl BinOp {
    pub const ALL: [BinOp; 13] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::MulHi,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Min,
        BinOp::Max,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
    ];
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::MulHi => "mul.hi",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Xor => "xor",
            BinOp::Shl => "shl",
            BinOp::Shr => "shr",
        }
    }
    /// Types this operation accepts.
    pub fn allows(self, ty: Ty) -> bool {
        use BinOp::*;
        match self {
            Add | Sub | Mul | Div | Min | Max => ty != Ty::B32,
            MulHi | Rem => matches!(ty, Ty::U32 | Ty::S32),
            And | Or | Xor | Shl | Shr => ty != Ty::F32,
        }
    }
}

/// One-source operations. `Rcp` .. `Lg2` are the SFU class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Mov,
    Neg,
    Abs,
    Not,
    Popc,
    Clz,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Ex2,
    Lg2,
}

impl UnOp {
    pub const ALL: [UnOp; 13] = [
        UnOp::Mov,
        UnOp::Neg,
        UnOp::Abs,
        UnOp::Not,
        UnOp::Popc,
        UnOp::Clz,
        UnOp::Rcp,
        UnOp::Sqrt,
        UnOp::Rsqrt,
        UnOp::Sin,
        UnOp::Cos,
        UnOp::Ex2,
        UnOp::Lg2,
    ];
    pub fn name(self) -> &'static str {
        match self {
            UnOp::Mov => "mov",
            UnOp::Neg => "neg",
            UnOp::Abs => "abs",
            UnOp::Not => "not",
            UnOp::Popc => "popc",
            UnOp::Clz => "clz",
            UnOp::Rcp => "rcp",
            UnOp::Sqrt => "sqrt",
            UnOp::Rsqrt => "rsqrt",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Ex2 => "ex2",
            UnOp::Lg2 => "lg2",
        }
    }
    pub fn is_sfu(self) -> bool {
        matches!(
            self,
            UnOp::Rcp | UnOp::Sqrt | UnOp::Rsqrt | UnOp::Sin | UnOp::Cos | UnOp::Ex2 | UnOp::Lg2
        )
    }
    pub fn allows(self, ty: Ty) -> bool {
        match self {
            UnOp::Mov => true,
            UnOp::Neg | UnOp::Abs => matches!(ty, Ty::S32 | Ty::F32),
            UnOp::Not | UnOp::Popc | UnOp::Clz => ty != Ty::F32,
            _ => ty == Ty::F32,
        }
    }
}

/// Comparison operators of `setp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub const ALL: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge];
    pub fn name(self) -> &'static str {
        match self {
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
        }
    }
    pub fn parse(s: &str) -> Option<Cmp> {
        Cmp::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// Predicate logic (`and.pred` etc.). `Not` ignores its second source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PredOp {
    And,
    Or,
    Xor,
    Not,
}

impl PredOp {
    pub const ALL: [PredOp; 4] = [PredOp::And, PredOp::Or, PredOp::Xor, PredOp::Not];
    pub fn name(self) -> &'static str {
        match self {
            PredOp::And => "and",
            PredOp::Or => "or",
            PredOp::Xor => "xor",
            PredOp::Not => "not",
        }
    }
}

/// Rounding modifier of `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rnd {
    /// Integer result, round toward zero (the default for float to integer).
    Rz,
    /// Float result, round to nearest even (the default for integer to float).
    Rn,
    /// Float to float: round to nearest integer (ties to even).
    Rni,
    /// Float to float: round toward zero to an integer.
    Rzi,
    /// Float to float: round toward minus infinity (floor).
    Rmi,
    /// Float to float: round toward plus infinity (ceil).
    Rpi,
}

impl Rnd {
    pub const ALL: [Rnd; 6] = [Rnd::Rz, Rnd::Rn, Rnd::Rni, Rnd::Rzi, Rnd::Rmi, Rnd::Rpi];
    pub fn name(self) -> &'static str {
        match self {
            Rnd::Rz => "rz",
            Rnd::Rn => "rn",
            Rnd::Rni => "rni",
            Rnd::Rzi => "rzi",
            Rnd::Rmi => "rmi",
            Rnd::Rpi => "rpi",
        }
    }
    pub fn parse(s: &str) -> Option<Rnd> {
        Rnd::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
}

impl AtomOp {
    pub const ALL: [AtomOp; 5] = [AtomOp::Add, AtomOp::Min, AtomOp::Max, AtomOp::Exch, AtomOp::Cas];
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
        }
    }
    pub fn allows(self, ty: Ty) -> bool {
        match self {
            AtomOp::Add => ty != Ty::B32,
            AtomOp::Min | AtomOp::Max => matches!(ty, Ty::U32 | Ty::S32),
            AtomOp::Exch | AtomOp::Cas => true,
        }
    }
}

/// Scope of a memory fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Gl,
}

/// A guard predicate: the instruction runs in lanes where `p[pred] != neg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub pred: u8,
    pub neg: bool,
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    pub guard: Option<Guard>,
    pub op: Op,
}

/// The operation of an instruction with its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `op.ty d, a, b`
    Bin { op: BinOp, ty: Ty, d: u8, a: Operand, b: Operand },
    /// `mad.ty d, a, b, c`: d = a * b + c (f32: two roundings, not fused).
    Mad { ty: Ty, d: u8, a: Operand, b: Operand, c: Operand },
    /// `op.ty d, a`
    Un { op: UnOp, ty: Ty, d: u8, a: Operand },
    /// `cvt[.rnd].to.from d, a`
    Cvt { rnd: Rnd, to: Ty, from: Ty, d: u8, a: Operand },
    /// `setp.cmp.ty pd, a, b`
    Setp { cmp: Cmp, ty: Ty, d: u8, a: Operand, b: Operand },
    /// `op.pred pd, pa, pb` (`not.pred pd, pa`)
    Pred { op: PredOp, d: u8, a: u8, b: u8 },
    /// `selp.ty d, a, b, p`: d = p ? a : b
    Selp { ty: Ty, d: u8, a: Operand, b: Operand, p: u8 },
    /// `ld.space.ty d, [addr]`
    Ld { space: Space, ty: Ty, d: u8, addr: Addr },
    /// `st.space.ty [addr], src`
    St { space: Space, ty: Ty, addr: Addr, src: Operand },
    /// `atom.space.op.ty d, [addr], b[, c]`: d = old value
    Atom { space: Space, op: AtomOp, ty: Ty, d: u8, addr: Addr, b: Operand, c: Operand },
    /// `bra target`; `reconv` is the immediate post-dominator, computed by the assembler
    /// (`u32::MAX` when the paths only meet at exit).
    Bra { target: u32, reconv: u32 },
    /// `bar.sync`
    Bar,
    /// `membar.cta` / `membar.gl`
    Membar { scope: Scope },
    /// `exit`
    Exit,
    /// `phase regs, smem_bytes` (Zorua phase specifier; no effect on execution)
    Phase { regs: u16, smem: u32 },
    /// `nop`
    Nop,
}

/// Coarse instruction classes, for the timing model and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Alu,
    Sfu,
    Mem(Space),
    Atomic,
    Control,
    Barrier,
    Fence,
    Phase,
}

impl Inst {
    pub fn class(&self) -> Class {
        match self.op {
            Op::Bin { .. } | Op::Mad { .. } | Op::Cvt { .. } | Op::Setp { .. } => Class::Alu,
            Op::Pred { .. } | Op::Selp { .. } | Op::Nop => Class::Alu,
            Op::Un { op, .. } => {
                if op.is_sfu() {
                    Class::Sfu
                } else {
                    Class::Alu
                }
            }
            Op::Ld { space, .. } | Op::St { space, .. } => Class::Mem(space),
            Op::Atom { .. } => Class::Atomic,
            Op::Bra { .. } | Op::Exit => Class::Control,
            Op::Bar => Class::Barrier,
            Op::Membar { .. } => Class::Fence,
            Op::Phase { .. } => Class::Phase,
        }
    }

    /// The general-purpose registers this instruction writes.
    pub fn dst_reg(&self) -> Option<u8> {
        match self.op {
            Op::Bin { d, .. }
            | Op::Mad { d, .. }
            | Op::Un { d, .. }
            | Op::Cvt { d, .. }
            | Op::Selp { d, .. }
            | Op::Ld { d, .. }
            | Op::Atom { d, .. } => Some(d),
            _ => None,
        }
    }

    /// The general-purpose registers this instruction reads (up to three).
    pub fn src_regs(&self) -> impl Iterator<Item = u8> {
        let mut v = [None; 3];
        let r = |o: &Operand| match o {
            Operand::Reg(r) => Some(*r),
            _ => None,
        };
        match &self.op {
            Op::Bin { a, b, .. } | Op::Setp { a, b, .. } | Op::Selp { a, b, .. } => {
                v = [r(a), r(b), None]
            }
            Op::Mad { a, b, c, .. } => v = [r(a), r(b), r(c)],
            Op::Un { a, .. } | Op::Cvt { a, .. } => v[0] = r(a),
            Op::Ld { addr, .. } => v[0] = addr.base,
            Op::St { addr, src, .. } => v = [addr.base, r(src), None],
            Op::Atom { addr, b, c, .. } => v = [addr.base, r(b), r(c)],
            _ => {}
        }
        v.into_iter().flatten()
    }
}

/// Formats an operand given the instruction type (f32 immediates print as float literals).
pub struct OperandFmt(pub Operand, pub Ty);

impl fmt::Display for OperandFmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Operand::Reg(r) => write!(f, "r{r}"),
            Operand::Sreg(s) => write!(f, "{s}"),
            Operand::Imm(v) => match self.1 {
                Ty::F32 => write!(f, "0f{v:08X}"),
                Ty::S32 => write!(f, "{}", v as i32),
                Ty::U32 => write!(f, "{v}"),
                Ty::B32 => write!(f, "0x{v:X}"),
            },
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.base, self.offset) {
            (Some(r), 0) => write!(f, "[r{r}]"),
            (Some(r), o) if o > 0 => write!(f, "[r{r}+{o}]"),
            (Some(r), o) => write!(f, "[r{r}-{}]", (o as i64).unsigned_abs()),
            (None, o) => write!(f, "[{o}]"),
        }
    }
}

/// Prints an instruction in assembly syntax. Branch targets are printed as `L<pc>`; the
/// disassembler in mpgpu-ref substitutes label names.
impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_inst(f, self, &|pc| format!("L{pc}"))
    }
}

/// Writes one instruction, naming branch targets with `label`.
pub fn write_inst(
    f: &mut dyn fmt::Write,
    inst: &Inst,
    label: &dyn Fn(u32) -> String,
) -> fmt::Result {
    if let Some(g) = inst.guard {
        write!(f, "@{}p{} ", if g.neg { "!" } else { "" }, g.pred)?;
    }
    let o = |x: Operand, t: Ty| OperandFmt(x, t);
    match inst.op {
        Op::Bin { op, ty, d, a, b } => {
            let bt = if matches!(op, BinOp::Shl | BinOp::Shr) { Ty::U32 } else { ty };
            write!(f, "{}.{} r{d}, {}, {}", op.name(), ty.name(), o(a, ty), o(b, bt))
        }
        Op::Mad { ty, d, a, b, c } => {
            write!(f, "mad.{} r{d}, {}, {}, {}", ty.name(), o(a, ty), o(b, ty), o(c, ty))
        }
        Op::Un { op, ty, d, a } => write!(f, "{}.{} r{d}, {}", op.name(), ty.name(), o(a, ty)),
        Op::Cvt { rnd, to, from, d, a } => {
            write!(f, "cvt.{}.{}.{} r{d}, {}", rnd.name(), to.name(), from.name(), o(a, from))
        }
        Op::Setp { cmp, ty, d, a, b } => {
            write!(f, "setp.{}.{} p{d}, {}, {}", cmp.name(), ty.name(), o(a, ty), o(b, ty))
        }
        Op::Pred { op: PredOp::Not, d, a, .. } => write!(f, "not.pred p{d}, p{a}"),
        Op::Pred { op, d, a, b } => write!(f, "{}.pred p{d}, p{a}, p{b}", op.name()),
        Op::Selp { ty, d, a, b, p } => {
            write!(f, "selp.{} r{d}, {}, {}, p{p}", ty.name(), o(a, ty), o(b, ty))
        }
        Op::Ld { space, ty, d, addr } => {
            write!(f, "ld.{}.{} r{d}, {addr}", space.name(), ty.name())
        }
        Op::St { space, ty, addr, src } => {
            write!(f, "st.{}.{} {addr}, {}", space.name(), ty.name(), o(src, ty))
        }
        Op::Atom { space, op, ty, d, addr, b, c } => {
            write!(f, "atom.{}.{}.{} r{d}, {addr}, {}", space.name(), op.name(), ty.name(), o(b, ty))?;
            if op == AtomOp::Cas {
                write!(f, ", {}", o(c, ty))?;
            }
            Ok(())
        }
        Op::Bra { target, .. } => write!(f, "bra {}", label(target)),
        Op::Bar => write!(f, "bar.sync"),
        Op::Membar { scope: Scope::Cta } => write!(f, "membar.cta"),
        Op::Membar { scope: Scope::Gl } => write!(f, "membar.gl"),
        Op::Exit => write!(f, "exit"),
        Op::Phase { regs, smem } => write!(f, "phase {regs}, {smem}"),
        Op::Nop => write!(f, "nop"),
    }
}
