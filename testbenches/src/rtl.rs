//! [`RtlUnit`]: any block, through its [`Ports`] mapping, as a [`Unit`], simulated by rust-hdl's
//! own simulator or by its generated Verilog compiled with Verilator ([`Backend`]).
//!
//! A cycle: `outputs(i)` drives the inputs with the clock low and settles the block (skipped
//! when nothing changed since the last settle); `clock(i)` raises the clock and settles again,
//! so the registers take their next values and the outputs that depend on registers only (such
//! as `busy`) show the coming cycle's values.

use crate::backend::{Backend, HdlSim, Sim, VSim};
use crate::ports::{HdlBlock, Port, Ports, RegMap, Regs};
use crate::verilator;
use mpgpu_spec::port::{FromWires, Wires};
use mpgpu_spec::Unit;
use rust_hdl::prelude::Block;
use std::cell::{Cell, RefCell};

/// The ports of a block instance: inputs, outputs, registers.
#[derive(Clone, Debug)]
pub struct Layout {
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    pub registers: Vec<Port>,
}

struct Io {
    ins: Vec<u64>,
    outs: Vec<u64>,
    regs: Vec<u64>,
}

/// A block in RTL as a [`Unit`].
pub struct RtlUnit<P: Ports> {
    pub ports: P,
    backend: Backend,
    layout: Layout,
    map: RegMap,
    sim: RefCell<Box<dyn Sim>>,
    io: RefCell<Io>,
    /// The inputs last settled with the clock low (`None`: settle before reading).
    driven: RefCell<Option<P::In>>,
    /// The registers were read since the last edge.
    regs_fresh: Cell<bool>,
    /// Each input's width as a mask: every backend sees the same bits (Verilator does not mask
    /// what its port variables hold).
    masks: Vec<u64>,
    /// The input words the outputs depend on, when the block says which
    /// ([`Ports::output_inputs`]), and a scratch encoding.
    out_deps: Option<Vec<usize>>,
    scratch: RefCell<Vec<u64>>,
    /// A cycle's inputs are applied with one pass before the edge ([`HdlBlock::flat`], rust-hdl).
    flat: bool,
}

impl<P: Ports> RtlUnit<P> {
    /// The block on rust-hdl's simulator.
    pub fn rust_hdl(ports: P) -> Self {
        Self::with_backend(ports, Backend::RustHdl).expect("the rust-hdl backend needs no build")
    }

    /// The block on `backend` (Verilator compiles the generated Verilog on first use).
    pub fn with_backend(ports: P, backend: Backend) -> Result<Self, String> {
        let b = ports.block();
        let layout = Layout { inputs: b.input_ports(), outputs: b.output_ports(), registers: b.register_ports() };
        crate::ports::check_ports::<P>(&ports.name(), &layout.inputs, &layout.outputs)?;
        let flat = backend == Backend::RustHdl && b.flat();
        let sim: Box<dyn Sim> = match backend {
            Backend::RustHdl => Box::new(HdlSim { b, name: ports.name(), exact: false }),
            Backend::Verilator => {
                let v = crate::ports::packaged_of(&ports);
                let lib = verilator::model(&ports.name(), &crate::ports::module_of(&ports), &v, &layout.inputs, &layout.outputs, &layout.registers)?;
                Box::new(VSim(verilator::Model::new(lib)))
            }
            Backend::Fpga => Box::new(crate::board_link::FpgaSim::open(&ports)?),
        };
        let io = Io { ins: vec![0; layout.inputs.len()], outs: vec![0; layout.outputs.len()], regs: vec![0; layout.registers.len()] };
        let masks = layout.inputs.iter().map(|p| mpgpu_spec::port::mask(u64::MAX, p.width as usize)).collect();
        let out_deps = match (backend, ports.output_inputs()) {
            (Backend::RustHdl | Backend::Verilator, Some(names)) => Some(
                names.iter().map(|n| layout.inputs.iter().position(|p| p.name == *n).unwrap_or_else(|| panic!("`{}` has no input `{n}`", ports.name()))).collect(),
            ),
            _ => None,
        };
        let scratch = RefCell::new(vec![0; layout.inputs.len()]);
        let u = RtlUnit { map: RegMap::new(&layout.registers), ports, backend, layout, sim: RefCell::new(sim), io: RefCell::new(io), driven: RefCell::new(None), regs_fresh: Cell::new(false), masks, out_deps, scratch, flat };
        {
            // Settled at reset with all inputs zero, so the outputs read before the first cycle
            // (`busy` for clock gating) are the block's.
            let mut s = u.sim.borrow_mut();
            s.set_inputs(&u.io.borrow().ins);
            s.set_clock(false);
            s.settle();
            s.outputs(&mut u.io.borrow_mut().outs);
        }
        Ok(u)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// From now on, every signal of the rust-hdl simulation settled in each pass, for a
    /// waveform that shows them all (by default a block may skip the signals only a waveform
    /// reads, [`HdlBlock::sim_pass`]).
    pub fn set_exact(&self) {
        self.sim.borrow_mut().set_exact();
    }

    /// Whether the registers (and so [`state`](Self::state)) can be read: not on an FPGA.
    pub fn observes_state(&self) -> bool {
        self.backend != Backend::Fpga
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Sets some inputs of the settled simulation (and the clock low) and settles it, or with
    /// `one_pass` only evaluates it once.
    fn drive(&self, i: &P::In) {
        self.apply(i, false);
    }

    fn apply(&self, i: &P::In, one_pass: bool) {
        if self.driven.borrow().as_ref() == Some(i) {
            return;
        }
        let mut io = self.io.borrow_mut();
        i.pack(&mut io.ins);
        for (w, m) in io.ins.iter_mut().zip(&self.masks) {
            *w &= m;
        }
        let mut s = self.sim.borrow_mut();
        s.set_inputs(&io.ins);
        s.set_clock(false);
        if one_pass {
            // (the outputs are not read: the edge settles the block from here)
            s.pass();
            *self.driven.borrow_mut() = None;
            return;
        }
        s.settle();
        s.outputs(&mut io.outs);
        *self.driven.borrow_mut() = Some(i.clone());
    }

    /// The output words as last settled (after a clock edge: the registers' new values with
    /// the last inputs).
    pub fn output_words(&self) -> Vec<u64> {
        self.io.borrow().outs.clone()
    }

    /// The outputs as last settled.
    pub fn outputs_now(&self) -> P::Out {
        P::Out::unpack(&self.io.borrow().outs)
    }

    /// The input words last driven.
    pub fn input_words(&self) -> Vec<u64> {
        self.io.borrow().ins.clone()
    }

    /// The register words as they are now.
    pub fn register_words(&self) -> Vec<u64> {
        self.refresh_regs();
        self.io.borrow().regs.clone()
    }

    fn refresh_regs(&self) {
        if !self.regs_fresh.get() {
            let mut io = self.io.borrow_mut();
            self.sim.borrow().registers(&mut io.regs);
            self.regs_fresh.set(true);
        }
    }

    /// The architectural state, read back from the registers.
    pub fn state(&self) -> P::State {
        self.refresh_regs();
        let io = self.io.borrow();
        self.ports.state(&Regs { values: &io.regs, map: &self.map })
    }

    /// Calls `f` with the rust-hdl block (the rust-hdl backend only).
    pub fn with_block(&self, f: &mut dyn FnMut(&dyn Block)) -> bool {
        let s = self.sim.borrow();
        match s.block() {
            Some(b) => {
                f(b);
                true
            }
            None => false,
        }
    }
}

impl<P: Ports> Unit for RtlUnit<P> {
    type In = P::In;
    type Out = P::Out;
    fn reset(&mut self) {
        *self = Self::with_backend(self.ports.clone(), self.backend).expect("the model was built before");
    }
    fn outputs(&self, i: &P::In) -> P::Out {
        if let Some(deps) = &self.out_deps {
            // (the simulation is always settled: with the inputs last driven, or after the
            // edge with them; if the inputs the outputs depend on are the same, so are they)
            let mut w = self.scratch.borrow_mut();
            i.pack(&mut w);
            let io = self.io.borrow();
            if deps.iter().all(|&k| w[k] & self.masks[k] == io.ins[k]) {
                return P::Out::unpack(&io.outs);
            }
        }
        self.drive(i);
        P::Out::unpack(&self.io.borrow().outs)
    }
    fn clock(&mut self, i: &P::In) {
        // (a flat block computes the registers' next values in one pass from its inputs and
        // registers, so the edge can follow that pass: the registers take them in the edge's
        // first pass, `mpgpu_rtl::Reg`; a RAM read at an address from the inputs is taken by
        // the same pass and read by the block in the edge's first pass)
        self.apply(i, self.flat);
        let mut s = self.sim.borrow_mut();
        s.set_clock(true);
        s.settle();
        s.outputs(&mut self.io.borrow_mut().outs);
        *self.driven.borrow_mut() = None;
        self.regs_fresh.set(false);
    }
}

/// A block simulated the plain way, for checking the shortcuts of [`RtlUnit`] and of the flat
/// blocks (`mpgpu_rtl::reg`): each cycle the inputs with the clock low, settled until no signal
/// changes, then the rising edge, settled the same way.
pub struct FullSettle<B: HdlBlock> {
    pub b: B,
    pub outputs: Vec<u64>,
    pub registers: Vec<u64>,
}

impl<B: HdlBlock> FullSettle<B> {
    /// `b` connected, its inputs marked driven; the ports' counts from `layout`.
    pub fn new(b: B, layout: &Layout) -> Self {
        let mut s = FullSettle { b, outputs: vec![0; layout.outputs.len()], registers: vec![0; layout.registers.len()] };
        s.settle();
        s
    }
    fn settle(&mut self) {
        for _ in 0..1000 {
            self.b.update_all();
            if !self.b.has_changed() {
                return;
            }
        }
        panic!("the block did not settle in 1000 passes");
    }
    /// One clocked cycle with these input words; then the outputs and registers are read.
    pub fn cycle(&mut self, inputs: &[u64]) {
        self.b.set_inputs(inputs);
        self.b.set_clock(false);
        self.settle();
        self.b.set_clock(true);
        self.settle();
        self.b.get_outputs(&mut self.outputs);
        self.b.get_registers(&mut self.registers);
    }
    /// One cycle with the inputs `u` was last clocked with, then the outputs and every
    /// register word compared with `u`'s: an error names what parted.
    pub fn follow<P: Ports<Block = B>>(&mut self, u: &RtlUnit<P>) -> Result<(), String> {
        self.cycle(&u.input_words());
        if self.outputs != u.output_words() {
            return Err(format!("outputs: plain {:?}, {:?}", self.outputs, u.output_words()));
        }
        let regs = u.register_words();
        match self.registers.iter().zip(&regs).position(|(a, b)| a != b) {
            Some(k) => Err(format!("register `{}`: plain {}, {}", u.layout().registers[k].name, self.registers[k], regs[k])),
            None => Ok(()),
        }
    }
}
