//! The simulators a block runs on ([`Backend`]) behind one interface in port-list words
//! ([`Sim`]): rust-hdl's own simulator of the Rust block and its generated Verilog compiled by
//! Verilator here; the block on a board in `crate::board_link`.

use crate::ports::HdlBlock;
use crate::verilator;
use rust_hdl::prelude::Block;
use std::fmt;

/// Which simulator runs the RTL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// rust-hdl's event-driven simulation of the Rust block.
    #[default]
    RustHdl,
    /// The block's generated Verilog, compiled by Verilator.
    Verilator,
    /// The block on an FPGA board behind the step protocol, or its board wrapper's simulation
    /// (`crate::serial`; the board is chosen with `serial::set_fpga_target`). Outputs only:
    /// the registers cannot be read.
    Fpga,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::RustHdl => "rust-hdl",
            Backend::Verilator => "verilator",
            Backend::Fpga => "fpga",
        }
    }
    pub fn parse(s: &str) -> Option<Backend> {
        match s {
            "rust-hdl" => Some(Backend::RustHdl),
            "verilator" => Some(Backend::Verilator),
            "fpga" => Some(Backend::Fpga),
            _ => None,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A simulator of one block instance, in port-list words.
pub trait Sim {
    fn set_inputs(&mut self, v: &[u64]);
    fn set_clock(&mut self, high: bool);
    fn settle(&mut self);
    /// One evaluation pass, without waiting for the signals to settle (a flat block's inputs,
    /// [`HdlBlock::flat`]).
    fn pass(&mut self) {
        self.settle();
    }
    fn outputs(&self, v: &mut [u64]);
    fn registers(&self, v: &mut [u64]);
    /// The rust-hdl block, for its full signal hierarchy in waveforms.
    fn block(&self) -> Option<&dyn Block>;
    /// From now on, every signal settled in each pass (for waveforms); by default only what
    /// the simulation needs ([`HdlBlock::sim_pass`]). The other backends are always exact.
    fn set_exact(&mut self) {}
}

pub(crate) struct HdlSim<B: HdlBlock> {
    pub(crate) b: B,
    pub(crate) name: String,
    pub(crate) exact: bool,
}

impl<B: HdlBlock> Sim for HdlSim<B> {
    fn set_inputs(&mut self, v: &[u64]) {
        self.b.set_inputs(v);
    }
    fn set_clock(&mut self, high: bool) {
        self.b.set_clock(high);
    }
    fn settle(&mut self) {
        // rust_hdl::core::simulate::simulate, for a block known by trait.
        for _ in 0..1000 {
            self.b.sim_pass(self.exact);
            if self.b.quiet() || !self.b.has_changed() {
                return;
            }
        }
        panic!("the RTL of `{}` did not settle in 1000 iterations (a combinational loop?)", self.name);
    }
    fn pass(&mut self) {
        self.b.sim_pass(self.exact);
    }
    fn outputs(&self, v: &mut [u64]) {
        self.b.get_outputs(v);
    }
    fn registers(&self, v: &mut [u64]) {
        self.b.get_registers(v);
    }
    fn block(&self) -> Option<&dyn Block> {
        Some(&self.b)
    }
    fn set_exact(&mut self) {
        if !self.exact {
            // (a pass settling every signal, the clock unchanged: nothing else moves)
            self.b.sim_pass(true);
            self.exact = true;
        }
    }
}

pub(crate) struct VSim(pub(crate) verilator::Model);

impl Sim for VSim {
    fn set_inputs(&mut self, v: &[u64]) {
        self.0.set_inputs(v);
    }
    fn set_clock(&mut self, high: bool) {
        self.0.set_clock(high);
    }
    fn settle(&mut self) {
        self.0.eval();
    }
    fn outputs(&self, v: &mut [u64]) {
        self.0.outputs(v);
    }
    fn registers(&self, v: &mut [u64]) {
        self.0.registers(v);
    }
    fn block(&self) -> Option<&dyn Block> {
        None
    }
}
