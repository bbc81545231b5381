//! A block's ports, declared once beside its cycle interface: each port's name (as in the
//! generated Verilog), width (from the block's parameters), direction (an `In` struct's ports
//! are inputs, an `Out` struct's outputs) and one-line meaning, and how the typed interface
//! moves onto them as plain words. The RTL's port widths use the same constants; the harness
//! (mpgpu-tb) checks the RTL's ports against these declarations and packs, unpacks, labels
//! waveforms and comments the generated Verilog from them (`docs/adding-a-block.md`).

use serde::Serialize;

/// One port: its Verilog name, width in bits, and what it carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortDecl {
    pub name: String,
    pub width: usize,
    pub about: &'static str,
}

/// A cycle interface (`In` or `Out` of a unit) on its ports.
pub trait Wires {
    /// The ports, in wire order.
    fn ports() -> Vec<PortDecl>;
    /// The value as one word per port (masked to the port's width), in wire order.
    fn pack(&self, v: &mut [u64]);
    /// Which words are defined: all, unless a valid bit qualifies them (a trace replay compares
    /// only those).
    fn care(&self, c: &mut [bool]);
}

/// An interface read back from its ports (the outputs).
pub trait FromWires: Wires + Sized {
    fn unpack(v: &[u64]) -> Self;
}

/// A field's value as a port word (signed values as their two's-complement bits).
pub trait Word: Copy {
    fn word(self) -> u64;
}

macro_rules! word_as {
    ($($t:ty => $via:ty),*) => {
        $(impl Word for $t {
            fn word(self) -> u64 {
                self as $via as u64
            }
        })*
    };
}
word_as!(bool => u64, u8 => u64, u16 => u64, u32 => u64, u64 => u64, usize => u64, i8 => u8, i16 => u16, i32 => u32);

/// `x` cut to `width` bits.
pub fn mask(x: u64, width: usize) -> u64 {
    if width >= 64 {
        x
    } else {
        x & ((1u64 << width) - 1)
    }
}

/// Declares a cycle interface's ports and implements [`Wires`] (and, with `unpack`,
/// [`FromWires`]) for it:
///
/// ```ignore
/// wires! { Out as o {
///     /// A cycle with no input could change something.
///     busy(1) = o.busy,
///     issue_valid(1) = o.issue.is_some(),
///     /// Only meaningful with `issue_valid`.
///     issue_sm(SM_BITS) = o.issue.map_or(0, |i| i.0); care o.issue.is_some(),
///     /// One port per entry: `quota0`, `quota1`, ... (`#`), or a rust-hdl array's
///     /// `reg_set$0`, ... (`[N]`); the value of entry `k` from the closure.
///     quota # 4 (QUOTA_BITS) = |k| o.quota[k],
/// } unpack {
///     // (each port's word, or words for a group, under its name)
///     Out { busy: busy != 0, issue: (issue_valid != 0).then_some((issue_sm as u8, 0)), .. }
/// } }
/// ```
#[macro_export]
macro_rules! wires {
    ($t:ty as $s:ident { $($ports:tt)* } unpack $u:block) => {
        $crate::wires!(@wires $t as $s { $($ports)* });
        $crate::wires!(@unpack $t { $($ports)* } $u);
    };
    ($t:ty as $s:ident { $($ports:tt)* }) => {
        $crate::wires!(@wires $t as $s { $($ports)* });
    };
    (@wires $t:ty as $s:ident {
        $( $(#[doc = $d:literal])* $name:ident $([$arr:expr])? $(# $num:tt)? ($w:expr) = $get:expr $(; care $c:expr)? ),* $(,)?
    }) => {
        impl $crate::port::Wires for $t {
            fn ports() -> Vec<$crate::port::PortDecl> {
                let mut p = Vec::new();
                $($crate::wires!(@decl p, $name, [$($arr)?], [$($num)?], $w, concat!($($d),*));)*
                p
            }
            #[allow(unused_assignments)]
            fn pack(&self, v: &mut [u64]) {
                let $s = self;
                let mut k = 0usize;
                $($crate::wires!(@pack v, k, [$($arr)?], [$($num)?], $w, $get);)*
            }
            #[allow(unused_assignments, unused_variables)]
            fn care(&self, c: &mut [bool]) {
                let $s = self;
                let mut k = 0usize;
                $($crate::wires!(@care c, k, [$($arr)?], [$($num)?], [$($c)?]);)*
            }
        }
    };
    (@unpack $t:ty {
        $( $(#[doc = $d:literal])* $name:ident $([$arr:expr])? $(# $num:tt)? ($w:expr) = $get:expr $(; care $c:expr)? ),* $(,)?
    } $u:block) => {
        impl $crate::port::FromWires for $t {
            #[allow(unused_assignments, unused_variables)]
            fn unpack(v: &[u64]) -> Self {
                let mut k = 0usize;
                $(let $name = $crate::wires!(@take v, k, [$($arr)?], [$($num)?]);)*
                $u
            }
        }
    };
    (@decl $p:ident, $name:ident, [], [], $w:expr, $about:expr) => {
        $p.push($crate::port::PortDecl { name: stringify!($name).to_string(), width: $w as usize, about: $about.trim() });
    };
    (@decl $p:ident, $name:ident, [$n:expr], [], $w:expr, $about:expr) => {
        for j in 0..$n {
            $p.push($crate::port::PortDecl { name: format!("{}${}", stringify!($name), j), width: $w as usize, about: $about.trim() });
        }
    };
    (@decl $p:ident, $name:ident, [], [$n:tt], $w:expr, $about:expr) => {
        for j in 0..$n {
            $p.push($crate::port::PortDecl { name: format!("{}{}", stringify!($name), j), width: $w as usize, about: $about.trim() });
        }
    };
    (@pack $v:ident, $k:ident, [], [], $w:expr, $get:expr) => {
        $v[$k] = $crate::port::mask($crate::port::Word::word($get), $w as usize);
        $k += 1;
    };
    (@pack $v:ident, $k:ident, [$($n:expr)?], [$($m:tt)?], $w:expr, $get:expr) => {
        for j in 0..$($n)? $($m)? {
            $v[$k] = $crate::port::mask($crate::port::Word::word(($get)(j)), $w as usize);
            $k += 1;
        }
    };
    (@care $c:ident, $k:ident, [], [], [$($cond:expr)?]) => {
        $c[$k] = true $(&& $cond)?;
        $k += 1;
    };
    (@care $c:ident, $k:ident, [$($n:expr)?], [$($m:tt)?], [$($cond:expr)?]) => {
        let n = $($n)? $($m)?;
        $c[$k..$k + n].fill(true $(&& $cond)?);
        $k += n;
    };
    (@take $v:ident, $k:ident, [], []) => {{
        $k += 1;
        $v[$k - 1]
    }};
    (@take $v:ident, $k:ident, [$($n:expr)?], [$($m:tt)?]) => {{
        let n = $($n)? $($m)?;
        $k += n;
        &$v[$k - n..$k]
    }};
}
