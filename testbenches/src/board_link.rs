//! A block on its board (`docs/board.md`): the FPGA backend of [`RtlUnit`](crate::rtl::RtlUnit)
//! ([`FpgaSim`]), which drives the block through the step protocol (`crate::serial`) on a board
//! on a serial device or on its board wrapper's simulation, and the wrapper of a block by its
//! port mapping ([`Ports::board`]).

use crate::backend::Sim;
use crate::ports::{HdlBlock, Port, Ports};
use crate::serial::{open_serial, Expected, LinkError, Line, Link, SimLink, VerilatedBoard};
use mpgpu_rtl::board::BoardConfig;
use rust_hdl::prelude::Block;
use std::sync::Mutex;

impl Expected {
    /// The block of a port mapping: its name and configuration, hashed (FNV-1a, 32 bits) into
    /// the id the board wrapper is built with, and its port widths.
    pub fn of<P: Ports>(p: &P) -> Expected {
        let b = p.block();
        let bits = |v: Vec<Port>| v.iter().map(|q| q.width as u16).sum::<u16>();
        let description = format!("{}:{p:?}", p.name());
        Expected { block_id: fnv1a(description.as_bytes()), in_bits: bits(b.input_ports()), out_bits: bits(b.output_ports()), description }
    }
}

/// The id a board wrapper for `p`'s block reports (see [`Expected::of`]).
pub fn block_id<P: Ports>(p: &P) -> u32 {
    fnv1a(format!("{}:{p:?}", p.name()).as_bytes())
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Where the FPGA backend finds its board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FpgaTarget {
    /// The board wrapper's own simulation ([`SimLink`]).
    Simulation,
    /// A board on a serial device.
    Device { path: String, baud: u32 },
}

static TARGET: Mutex<FpgaTarget> = Mutex::new(FpgaTarget::Simulation);

/// Sets where [`Backend::Fpga`](crate::rtl::Backend::Fpga) units connect (for the whole
/// process; the default is the simulation).
pub fn set_fpga_target(t: FpgaTarget) {
    *TARGET.lock().unwrap_or_else(|e| e.into_inner()) = t;
}

pub fn fpga_target() -> FpgaTarget {
    TARGET.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The simulated time base of [`SimLink`]s the backend builds: 115,200 baud, as the board.
pub const SIM_BAUD: u32 = 115_200;

/// The board wrapper of `p`'s block with `config`, by the block's port mapping: its Verilog,
/// and a [`SimLink`] to its simulation. The wrappers are `mpgpu_rtl::board`'s.
pub fn board_verilog<P: Ports>(p: &P, config: BoardConfig) -> Result<String, String> {
    Ok(p.board(config).ok_or_else(|| no_board(p))?.verilog())
}

fn no_board<P: Ports>(p: &P) -> String {
    format!("there is no board wrapper for block `{}` (mpgpu_rtl::board has dss, prio and sched)", p.name())
}

/// A [`SimLink`] to the simulated board wrapper of `p`'s block (divisor 4, 2 cycles to settle).
pub fn simulated_board<P: Ports>(p: &P) -> Result<Box<dyn Line>, String> {
    let config = BoardConfig::simulation(block_id(p));
    Ok(p.board(config).ok_or_else(|| no_board(p))?.simulate(SIM_BAUD))
}

/// A [`SimLink`] to the board wrapper of `p`'s block as Verilog, compiled by Verilator (the
/// Verilog that `scripts/board` synthesizes, with the simulation's divisor and settle time).
pub fn verilated_board<P: Ports>(p: &P) -> Result<Box<dyn Line>, String> {
    let config = BoardConfig::simulation(block_id(p));
    let lib = VerilatedBoard::library(&format!("board_{}", p.name()), &board_verilog(p, config)?)?;
    Ok(Box::new(SimLink::verilated(lib, config.divisor, SIM_BAUD)))
}

/// A connected [`Link`] to `p`'s block at the [`fpga_target`]: reset, its identity checked.
pub fn connect<P: Ports>(p: &P) -> Result<Link, String> {
    let line: Box<dyn Line> = match fpga_target() {
        FpgaTarget::Simulation => simulated_board(p)?,
        FpgaTarget::Device { path, baud } => Box::new(open_serial(&path, baud).map_err(|e| e.to_string())?),
    };
    let b = p.block();
    let widths = |v: Vec<Port>| v.iter().map(|q| q.width).collect::<Vec<_>>();
    let mut link = Link::new(line, &widths(b.input_ports()), &widths(b.output_ports()));
    link.connect(&Expected::of(p)).map_err(|e| e.to_string())?;
    Ok(link)
}

/// The FPGA backend of [`RtlUnit`](crate::rtl::RtlUnit): the block on a board (or its
/// wrapper's simulation) through a [`Link`]. Settling with the clock low is a PEEK (skipped
/// when the inputs are those of the last STEP, whose outputs after the edge are then the
/// answer); raising the clock is a STEP, whose outputs before the edge must equal that PEEK.
/// A failed request is retried once after [`Link::recover`] (a STEP only if the board's edge
/// count shows it did not happen); a second failure stops the run with the error, since a
/// unit's `outputs` and `clock` have no error path. The block's registers cannot be read.
pub struct FpgaSim {
    link: Link,
    name: String,
    inputs: Vec<u64>,
    outputs: Vec<u64>,
    clock_high: bool,
    /// The inputs of the last STEP and the outputs after its edge.
    after: Option<(Vec<u64>, Vec<u64>)>,
}

impl FpgaSim {
    pub fn open<P: Ports>(p: &P) -> Result<FpgaSim, String> {
        let link = connect(p)?;
        let b = p.block();
        Ok(FpgaSim {
            link,
            name: p.name(),
            inputs: vec![0; b.input_ports().len()],
            outputs: vec![0; b.output_ports().len()],
            clock_high: false,
            after: None,
        })
    }

    fn fail(&self, e: LinkError) -> ! {
        panic!("the FPGA link of `{}` failed after a retry: {e}", self.name)
    }

    fn peek(&mut self) -> Vec<u64> {
        match self.link.peek(&self.inputs) {
            Ok(o) => o,
            Err(_) => {
                let _ = self.link.recover();
                self.link.peek(&self.inputs).unwrap_or_else(|e| self.fail(e))
            }
        }
    }

    fn step(&mut self) -> (Vec<u64>, Vec<u64>) {
        match self.link.step(&self.inputs) {
            Ok(r) => r,
            Err(first) => {
                let _ = self.link.recover();
                let done = self.link.info().unwrap_or_else(|e| self.fail(e)).steps as u64;
                if done == self.link.steps + 1 {
                    // The edge happened; only the reply was lost.
                    self.link.steps += 1;
                    let after = self.link.peek(&self.inputs).unwrap_or_else(|e| self.fail(e));
                    (self.outputs.clone(), after)
                } else if done == self.link.steps {
                    self.link.step(&self.inputs).unwrap_or_else(|e| self.fail(e))
                } else {
                    self.fail(first)
                }
            }
        }
    }
}

impl Sim for FpgaSim {
    fn set_inputs(&mut self, v: &[u64]) {
        self.inputs.copy_from_slice(v);
    }
    fn set_clock(&mut self, high: bool) {
        if high && !self.clock_high {
            let (before, after) = self.step();
            if before != self.outputs {
                let what = format!("STEP {}", self.link.steps);
                self.fail(LinkError::Diverged { device: self.link.device(), what, peek: self.outputs.clone(), step: before });
            }
            self.outputs = after.clone();
            self.after = Some((self.inputs.clone(), after));
        }
        self.clock_high = high;
    }
    fn settle(&mut self) {
        if self.clock_high {
            return;
        }
        match &self.after {
            Some((i, o)) if *i == self.inputs => self.outputs = o.clone(),
            _ => {
                self.outputs = self.peek();
                self.after = None;
            }
        }
    }
    fn outputs(&self, v: &mut [u64]) {
        v.copy_from_slice(&self.outputs);
    }
    fn registers(&self, v: &mut [u64]) {
        // Blocks compared on their outputs alone list no registers.
        if !v.is_empty() {
            panic!(
                "the FPGA backend cannot read the registers of `{}`: compare its outputs only (lockstep without state, or --mode rtl)",
                self.name
            )
        }
    }
    fn block(&self) -> Option<&dyn Block> {
        None
    }
}
