//! Putting a block behind the link: its ports moved as words ([`PortWord`], [`Unpack`],
//! [`Pack`]), the glue's Verilog ([`glue_verilog`]) and the wrapper itself
//! ([`board_block!`](crate::board_block)).

use rust_hdl::prelude::*;

/// A port's value as the wrapper moves it (at most 64 bits).
pub trait PortWord: Sized {
    fn from_word(v: u64) -> Self;
    fn word(&self) -> u64;
}

impl PortWord for bool {
    fn from_word(v: u64) -> Self {
        v & 1 != 0
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl<const N: usize> PortWord for Bits<N> {
    fn from_word(v: u64) -> Self {
        (if N >= 64 { v } else { v & ((1u64 << N) - 1) }).into()
    }
    fn word(&self) -> u64 {
        self.to_u64()
    }
}

/// Reads consecutive fields of a packed value, the first at bit 0 (up to 2048 bits).
pub struct Unpack {
    chunks: [u64; 32],
    at: usize,
}

impl Unpack {
    pub fn new<const N: usize>(v: &Bits<N>) -> Unpack {
        let mut chunks = [0u64; 32];
        if N <= 64 {
            chunks[0] = v.to_u64();
        } else if N <= 128 {
            let x = v.to_u128();
            chunks[0] = x as u64;
            chunks[1] = (x >> 64) as u64;
        } else {
            for (k, c) in chunks.iter_mut().enumerate().take(N.div_ceil(64)) {
                *c = v.get_bits::<64>(64 * k).to_u64();
            }
        }
        Unpack { chunks, at: 0 }
    }

    /// The next `width` bits (at most 64).
    pub fn take(&mut self, width: usize) -> u64 {
        let (k, b) = (self.at / 64, self.at % 64);
        let mut v = self.chunks[k] >> b;
        if b + width > 64 {
            v |= self.chunks[k + 1] << (64 - b);
        }
        self.at += width;
        if width == 64 {
            v
        } else {
            v & ((1u64 << width) - 1)
        }
    }
}

/// Packs consecutive fields into a value, the first at bit 0 (up to 2048 bits).
#[derive(Default)]
pub struct Pack {
    chunks: [u64; 32],
    at: usize,
}

impl Pack {
    pub fn put(&mut self, v: u64, width: usize) {
        let (k, b) = (self.at / 64, self.at % 64);
        self.chunks[k] |= v << b;
        if b + width > 64 {
            self.chunks[k + 1] |= v >> (64 - b);
        }
        self.at += width;
    }

    pub fn bits<const N: usize>(&self) -> Bits<N> {
        let mask = |k: usize| {
            let used = N.saturating_sub(64 * k);
            if used >= 64 {
                u64::MAX
            } else {
                (1u64 << used) - 1
            }
        };
        self.chunks.iter().enumerate().take(N.div_ceil(64)).fold(Bits::<N>::default(), |acc, (k, &c)| {
            let chunk: Bits<N> = (c & mask(k)).into();
            if k == 0 {
                acc | chunk
            } else {
                acc | (chunk << (64 * k) as u64)
            }
        })
    }
}

/// The wrapper's glue as Verilog: the link's and the block's clocks and lines, the held inputs
/// sliced into the block's ports, its outputs packed (`inputs`, `outputs`: names and widths).
pub fn glue_verilog(inputs: &[(&str, usize)], outputs: &[(&str, usize)]) -> Verilog {
    use rust_hdl::core::ast::{VerilogExpression as E, VerilogStatement as S};
    let sig = |n: &str| E::Signal(n.to_string());
    let mut body = vec![
        S::Assignment(sig("link$clock"), sig("clock")),
        S::Assignment(sig("link$rx"), sig("rx")),
        S::Assignment(sig("tx"), sig("link$tx")),
        S::Assignment(sig("led"), sig("link$led")),
        S::Assignment(sig("reset_req"), sig("link$reset_req")),
        S::Assignment(sig("uut$clock"), sig("link$block_clock")),
    ];
    let mut at = 0u32;
    for (name, width) in inputs {
        body.push(S::Assignment(sig(&format!("uut${name}")), E::Slice(Box::new(sig("link$block_in")), *width, Box::new(E::Literal(at.into())))));
        at += *width as u32;
    }
    body.push(S::Assignment(sig("link$block_out"), E::Literal(0u32.into())));
    let mut at = 0u32;
    for (name, width) in outputs {
        body.push(S::SliceAssignment { base: sig("link$block_out"), width: *width, offset: E::Literal(at.into()), replacement: sig(&format!("uut${name}")) });
        at += *width as u32;
    }
    Verilog::Combinatorial(body)
}

/// Writes a board wrapper: a `LogicBlock` named `$name` holding the block (`uut`) and its
/// [`StepLink`](super::StepLink) (`link`), with ports `clock`, `rx`, `tx`, `led` and `reset_req`.
///
/// ```ignore
/// board_block!(pub struct BoardDss(Dss) { inputs: [trigger: 1, sm_state: 2], outputs: [busy: 1, next_addr: 4] });
/// ```
///
/// The ports are listed in the harness's order with their widths (1 for a `Bit`); a width
/// that differs from the port's panics when the wrapper is built. `update` is plain Rust (the
/// fields moved as `u64` words, [`Unpack`], [`Pack`]) and the Verilog is built from the same
/// list ([`glue_verilog`]); a test runs that Verilog in Verilator against the rust-hdl
/// simulation, byte for byte on the serial line. rust-hdl's `#[hdl_gen]` does work on code a
/// `macro_rules` writes, if widths and offsets reach it as plain tokens (`tt`: `literal` and
/// `expr` fragments arrive as invisible groups, which it rejects), and that was the first
/// version; but rust-hdl computes every shift and `get_bits` of a `Bits` through a `BigUint`,
/// and slicing each port that way on every settle (with the checksum's and the LEDs' shifts)
/// cost 20 us per simulated cycle of the DSS board, against 3.5 us now.
/// The caller's module must `use rust_hdl::prelude::*`.
#[macro_export]
macro_rules! board_block {
    (
        $(#[$m:meta])* $vis:vis struct $name:ident($block:ty) {
            inputs: [$($i:ident : $iw:literal),+ $(,)?],
            outputs: [$($o:ident : $ow:literal),+ $(,)?] $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(LogicBlock)]
        $vis struct $name {
            /// The board's clock.
            pub clock: Signal<In, Clock>,
            /// Serial line from the host.
            pub rx: Signal<In, Bit>,
            /// Serial line to the host.
            pub tx: Signal<Out, Bit>,
            /// Status LEDs (`StepLink::led`).
            pub led: Signal<Out, Bits<8>>,
            /// Pulse the global set/reset (after a RESET reply).
            pub reset_req: Signal<Out, Bit>,
            /// The protocol engine.
            pub link: $crate::board::StepLink<{ 0 $(+ $iw)+ }, { 0 $(+ $ow)+ }, { $crate::board::reply_bits(0 $(+ $ow)+) }>,
            /// The block.
            pub uut: $block,
        }

        impl $name {
            /// The block's input and output bits.
            pub const IN_BITS: usize = 0 $(+ $iw)+;
            pub const OUT_BITS: usize = 0 $(+ $ow)+;
            /// The listed ports (name, width), in order.
            pub const INPUTS: &'static [(&'static str, usize)] = &[$((stringify!($i), $iw)),+];
            pub const OUTPUTS: &'static [(&'static str, usize)] = &[$((stringify!($o), $ow)),+];

            /// The wrapper of `uut` (a fresh block, its inputs not marked as driven from outside).
            pub fn new(uut: $block, config: $crate::board::BoardConfig) -> Self {
                $(assert_eq!(rust_hdl::core::atom::Atom::bits(&uut.$i), $iw, "{}: input `{}` is {} bits wide, the list says {}", stringify!($name), stringify!($i), rust_hdl::core::atom::Atom::bits(&uut.$i), $iw);)+
                $(assert_eq!(rust_hdl::core::atom::Atom::bits(&uut.$o), $ow, "{}: output `{}` is {} bits wide, the list says {}", stringify!($name), stringify!($o), rust_hdl::core::atom::Atom::bits(&uut.$o), $ow);)+
                let mut b = $name {
                    clock: Default::default(),
                    rx: Default::default(),
                    tx: Default::default(),
                    led: Default::default(),
                    reset_req: Default::default(),
                    link: $crate::board::StepLink::new(config),
                    uut,
                };
                b.clock.connect();
                b.rx.connect();
                b.connect_all();
                b
            }
        }

        impl $crate::board::BoardTop for $name {
            fn set_clock(&mut self, high: bool) {
                self.clock.next = high.into();
            }
            fn set_rx(&mut self, level: bool) {
                self.rx.next = level;
            }
            fn tx(&self) -> bool {
                self.tx.val()
            }
            fn reset_req(&self) -> bool {
                self.reset_req.val()
            }
            fn led(&self) -> u8 {
                self.led.val().to_u64() as u8
            }
        }

        impl Logic for $name {
            fn update(&mut self) {
                use $crate::board::PortWord;
                self.link.clock.next = self.clock.val();
                self.link.rx.next = self.rx.val();
                self.tx.next = self.link.tx.val();
                self.led.next = self.link.led.val();
                self.reset_req.next = self.link.reset_req.val();
                self.uut.clock.next = self.link.block_clock.val();
                let mut ins = $crate::board::Unpack::new(&self.link.block_in.val());
                $(self.uut.$i.next = PortWord::from_word(ins.take($iw));)+
                let mut outs = $crate::board::Pack::default();
                $(outs.put(self.uut.$o.val().word(), $ow);)+
                self.link.block_out.next = outs.bits();
            }
            fn connect(&mut self) {
                self.link.clock.connect();
                self.link.rx.connect();
                self.tx.connect();
                self.led.connect();
                self.reset_req.connect();
                self.uut.clock.connect();
                $(self.uut.$i.connect();)+
                self.link.block_out.connect();
            }
            fn hdl(&self) -> Verilog {
                $crate::board::glue_verilog(Self::INPUTS, Self::OUTPUTS)
            }
        }
    };
}
