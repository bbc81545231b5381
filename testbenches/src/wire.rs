//! A block's ports as the harness moves them: a port's Verilog name and width ([`Port`]), and
//! a signal's value as a word ([`Wire`]).

use rust_hdl::prelude::*;
use serde::Serialize;

/// A port or register of a block: its name in the generated Verilog and its width in bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    pub name: String,
    pub width: u32,
}

impl Port {
    pub fn new(name: &str, width: usize) -> Port {
        Port { name: name.to_string(), width: width as u32 }
    }
}

/// A signal value as the harness moves it: at most 64 bits.
pub trait Wire: Sized {
    fn from_word(v: u64) -> Self;
    fn word(&self) -> u64;
}

impl Wire for bool {
    fn from_word(v: u64) -> Self {
        v & 1 != 0
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl<const N: usize> Wire for Bits<N> {
    fn from_word(v: u64) -> Self {
        mpgpu_spec::port::mask(v, N).into()
    }
    fn word(&self) -> u64 {
        self.to_u64()
    }
}
