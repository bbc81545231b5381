//! A block's port mapping, written once per block and used by every backend and every piece of
//! the harness (lockstep, RTL in the loop, clock gating, waveforms, traces, mismatch reports).
//!
//! Two halves:
//! - [`HdlBlock`], generated for a rust-hdl block by [`hdl_block!`] from one list of its input
//!   ports, output ports and registers: their Verilog names and widths, and moving their values
//!   in and out of the rust-hdl simulation as plain `u64` words in list order. The Verilator
//!   backend and the trace replay use the same names, so the list is the only place a block's
//!   ports are written.
//! - [`Ports`], written per block: how the unit's typed `In`/`Out`/`State` (mpgpu-spec) map to
//!   those words, and how a configured instance of the block is built.

use rust_hdl::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Debug;
use mpgpu_spec::port::{FromWires, PortDecl, Wires};

pub use crate::wire::{Port, Wire};

/// What the harness needs of a rust-hdl block. Implemented with [`hdl_block!`].
pub trait HdlBlock: Block {
    fn input_ports(&self) -> Vec<Port>;
    fn output_ports(&self) -> Vec<Port>;
    /// The registers read back as architectural state (`name$q`, `name$k$q` for array entries:
    /// the generated Verilog's names of the flip-flops' outputs).
    fn register_ports(&self) -> Vec<Port>;
    /// Sets every input (in `input_ports` order) for the next settle.
    fn set_inputs(&mut self, v: &[u64]);
    fn set_clock(&mut self, high: bool);
    fn get_outputs(&self, v: &mut [u64]);
    /// The registers into `v`, which holds what the last call put there (a memory's words are
    /// only read again after a write).
    fn get_registers(&self, v: &mut [u64]);
    /// The block is flat (`mpgpu_rtl::flat_logic!`; `hdl_block!`'s `flat:`): one logic
    /// function computing every signal from its inputs, registers and RAM read ports in one
    /// pass, its children only flip-flops (`mpgpu_rtl::Reg`) and RAMs (`mpgpu_rtl::ram`) whose
    /// read addresses do not depend on another RAM's read data. Then the rust-hdl backend
    /// applies a cycle's inputs with one pass instead of a settle, and the clock edge settles
    /// from there ([`RtlUnit`](crate::rtl::RtlUnit)'s `clock`).
    fn flat(&self) -> bool {
        false
    }
    /// After a pass: no signal a flat block's logic reads changed in it, so another pass would
    /// change nothing (the block skips its logic then, `mpgpu_rtl::reg::any_q`). False: settle
    /// until no signal changes.
    fn quiet(&self) -> bool {
        false
    }
    /// One simulation pass. With `exact` false a block may leave unsettled the signals only a
    /// waveform reads (`mpgpu_rtl::Zorua::pass_fast`); by default every signal is settled.
    fn sim_pass(&mut self, exact: bool) {
        let _ = exact;
        self.update_all();
    }
}

/// Implements [`HdlBlock`] for a rust-hdl block from its port lists: `inputs` and `outputs`
/// (signals), `registers` (DFFs), `arrays` (arrays of DFFs) and optionally `memories`
/// (`LutRam`s, whose words are read back as `name.mem[k]`), each listed once. Registers
/// and arrays inside sub-blocks are named by their path (`smst.state`); their Verilog names are
/// hierarchical (`smst.state$3$q`).
#[macro_export]
macro_rules! hdl_block {
    ($t:ty { inputs: [$($i:ident),* $(,)?], outputs: [$($o:ident),* $(,)?], registers: [$($($r:ident).+),* $(,)?], arrays: [$($($a:ident).+),* $(,)?] $(,)? }) => {
        $crate::hdl_block!($t { inputs: [$($i),*], outputs: [$($o),*], registers: [$($($r).+),*], arrays: [$($($a).+),*], memories: [] });
    };
    ($t:ty { inputs: [$($i:ident),* $(,)?], outputs: [$($o:ident),* $(,)?], registers: [$($($r:ident).+),* $(,)?], arrays: [$($($a:ident).+),* $(,)?], memories: [$($m:ident),* $(,)?] $(, flat: $changed:ident)? $(,)? }) => {
        impl $crate::ports::HdlBlock for $t {
            // (`flat: read_changed`: the block's method telling whether a signal its logic
            // reads changed in the last pass)
            #[allow(unreachable_code)]
            fn flat(&self) -> bool {
                $(let _ = stringify!($changed); return true;)?
                false
            }
            #[allow(unreachable_code)]
            fn quiet(&self) -> bool {
                $(return !self.$changed();)?
                false
            }
            fn input_ports(&self) -> Vec<$crate::ports::Port> {
                vec![$($crate::ports::Port::new(stringify!($i), rust_hdl::core::atom::Atom::bits(&self.$i))),*]
            }
            fn output_ports(&self) -> Vec<$crate::ports::Port> {
                vec![$($crate::ports::Port::new(stringify!($o), rust_hdl::core::atom::Atom::bits(&self.$o))),*]
            }
            #[allow(unused_mut)]
            fn register_ports(&self) -> Vec<$crate::ports::Port> {
                let mut v: Vec<$crate::ports::Port> = Vec::new();
                $(v.push($crate::ports::Port::new(&format!("{}$q", [$(stringify!($r)),+].join(".")), rust_hdl::core::atom::Atom::bits(&self.$($r).+.q)));)*
                $(for (k, d) in self.$($a).+.iter().enumerate() {
                    v.push($crate::ports::Port::new(&format!("{}${}$q", [$(stringify!($a)),+].join("."), k), rust_hdl::core::atom::Atom::bits(&d.q)));
                })*
                $(for k in 0..self.$m.words() {
                    v.push($crate::ports::Port::new(&format!("{}.mem[{}]", stringify!($m), k), rust_hdl::core::atom::Atom::bits(&self.$m.read_data)));
                })*
                v
            }
            #[allow(unused_assignments)]
            fn set_inputs(&mut self, v: &[u64]) {
                // (applied at once, so that the settle's first pass computes with them: an
                // input has no driver inside the block to wait for)
                let mut k = 0;
                $(self.$i.next = $crate::ports::Wire::from_word(v[k]); rust_hdl::core::block::Block::update_all(&mut self.$i); k += 1;)*
            }
            fn set_clock(&mut self, high: bool) {
                self.clock.next = rust_hdl::prelude::Clock::from(high);
                rust_hdl::core::block::Block::update_all(&mut self.clock);
            }
            #[allow(unused_assignments)]
            fn get_outputs(&self, v: &mut [u64]) {
                let mut k = 0;
                $(v[k] = $crate::ports::Wire::word(&self.$o.val()); k += 1;)*
            }
            #[allow(unused_assignments, unused_mut, unused_variables)]
            fn get_registers(&self, v: &mut [u64]) {
                let mut k = 0;
                $(v[k] = $crate::ports::Wire::word(&self.$($r).+.q.val()); k += 1;)*
                $(for d in self.$($a).+.iter() { v[k] = $crate::ports::Wire::word(&d.q.val()); k += 1; })*
                // (a memory's words only when it was written since they were last read: the
                // caller keeps `v`, RtlUnit's register words)
                $(if self.$m.take_written() {
                    for w in 0..self.$m.words() { v[k + w] = $crate::ports::Wire::word(&self.$m.word(w)); }
                }
                k += self.$m.words();)*
            }
        }
    };
}

/// The registers of one settled instance, by name (path for sub-blocks):
/// `array("sm_state")[3]`, `scalar("admitted")`, `array("smst.state")`.
pub struct Regs<'a> {
    pub values: &'a [u64],
    pub map: &'a RegMap,
}

impl Regs<'_> {
    /// The entries of a register array.
    pub fn array(&self, name: &str) -> &[u64] {
        let (at, n) = self.map.find(name).unwrap_or_else(|| panic!("no register array `{name}`"));
        &self.values[at..at + n]
    }
    pub fn scalar(&self, name: &str) -> u64 {
        self.array(name)[0]
    }
}

/// Where each register (array) of a block sits in the register words. (Looked up by name some
/// twenty times per clocked cycle, so with a fast hash.)
#[derive(Clone, Debug, Default)]
pub struct RegMap(rustc_hash::FxHashMap<String, (usize, usize)>);

impl RegMap {
    pub fn new(regs: &[Port]) -> RegMap {
        let mut m = rustc_hash::FxHashMap::<String, (usize, usize)>::default();
        for (k, p) in regs.iter().enumerate() {
            let stem = p.name.trim_end_matches("$q");
            let base = match stem.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
                // (a memory's words: `name.mem[k]`)
                Some((b, idx)) if idx.chars().all(|c| c.is_ascii_digit()) => b,
                _ => match stem.rsplit_once('$') {
                    Some((b, idx)) if idx.chars().all(|c| c.is_ascii_digit()) => b,
                    _ => stem,
                },
            };
            m.entry(base.to_string()).and_modify(|e| e.1 += 1).or_insert((k, 1));
        }
        RegMap(m)
    }

    /// Where the registers named `name` start, and how many there are.
    pub fn find(&self, name: &str) -> Option<(usize, usize)> {
        self.0.get(name).copied()
    }
}

/// A block as the harness sees it: its unit interface (mpgpu-spec) mapped onto its ports, once.
pub trait Ports: Clone + std::fmt::Debug + 'static {
    /// The inputs and outputs, with their ports declared once in mpgpu-spec
    /// ([`mpgpu_spec::port`]): the RTL's ports must be these.
    type In: Clone + Debug + PartialEq + Serialize + Wires;
    type Out: Clone + Debug + PartialEq + Serialize + FromWires;
    /// The architectural state compared with the model's (`()` for blocks compared on their
    /// outputs alone).
    type State: Clone + Debug + PartialEq + Serialize;
    type Block: HdlBlock + 'static;
    /// The block's name (waveform scope, Verilog file, cached models).
    fn name(&self) -> String;
    /// A fresh instance with this configuration, its inputs marked as driven from outside.
    fn block(&self) -> Self::Block;
    fn state(&self, r: &Regs) -> Self::State;
    /// The inputs the outputs depend on combinationally (`None`: any of them). Reading the
    /// outputs with other values of the rest needs no settle of the simulation (the rust-hdl
    /// backend's cost is in its settles).
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// The block inside its board wrapper (`mpgpu_rtl::board`, `docs/board.md`) with `config`,
    /// for the blocks that have one.
    fn board(&self, _config: mpgpu_rtl::board::BoardConfig) -> Option<Box<dyn crate::serial::Wrapper>> {
        None
    }
}

/// A block's Verilog in the form `form` names at `p`'s configuration, made by `make` once per
/// process (generating `Sched`'s takes a good part of a second; a per-SM block's is asked for
/// by every SM's instance).
fn cached<P: Ports>(form: &str, p: &P, make: impl FnOnce() -> String) -> String {
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let key = format!("{form}:{}:{p:?}", std::any::type_name::<P>());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let v = make();
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v.clone());
    v
}

/// The Verilog of a block as rust-hdl writes it (module `top`), each port commented with its
/// meaning.
pub fn verilog_of<P: Ports>(p: &P) -> String {
    cached("rust-hdl", p, || {
        let b = p.block();
        if let Err(e) = check_ports::<P>(&p.name(), &b.input_ports(), &b.output_ports()) {
            panic!("{e}");
        }
        annotate(&generate_verilog(&b), &[P::In::ports(), P::Out::ports()].concat())
    })
}

/// A block's RTL at `p`'s configuration: its Verilog as rust-hdl writes it ([`verilog_of`]), its
/// ports and the configuration (`p` less its test-only faults).
pub fn rtl_of<P: Ports>(p: &P) -> crate::ip::Rtl {
    crate::ip::Rtl { verilog: verilog_of(p), inputs: P::In::ports(), outputs: P::Out::ports(), config: crate::ip::config_text(&format!("{p:?}")) }
}

/// The module name a block's packaged Verilog has in co-simulation and traces.
pub fn module_of<P: Ports>(p: &P) -> String {
    crate::ip::module_name(crate::ip::PREFIX, &p.name())
}

/// The Verilog of a block as its IP folder ships it, less the header: its modules named after
/// it ([`module_of`]), with the synchronous reset (`crate::ip::package`). The Verilator backend
/// and the traces run this.
pub fn packaged_of<P: Ports>(p: &P) -> String {
    cached("packaged", p, || crate::ip::package(&verilog_of(p), &module_of(p)).unwrap_or_else(|e| panic!("block `{}`: {e}", p.name())))
}

/// `verilog` (module `top` first among its modules or not) with each of `top`'s port
/// declarations followed by the port's meaning from mpgpu-spec.
fn annotate(verilog: &str, ports: &[PortDecl]) -> String {
    let about: HashMap<&str, &str> = ports.iter().map(|p| (p.name.as_str(), p.about)).collect();
    let mut out = String::with_capacity(verilog.len() + 80 * ports.len());
    let mut in_top = false;
    for line in verilog.split_inclusive('\n') {
        if line.starts_with("module ") {
            in_top = line.starts_with("module top(");
        }
        let t = line.trim();
        let decl = in_top && (t.starts_with("input ") || t.starts_with("output ")) && t.ends_with(';');
        let name = t.trim_end_matches(';').rsplit(' ').next().unwrap_or("").trim_start_matches('\\');
        match about.get(name) {
            Some(a) if decl && !a.is_empty() => {
                out.push_str(line.trim_end_matches('\n'));
                out.push_str("  // ");
                out.push_str(a);
                out.push('\n');
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Checks that the RTL's ports (`inputs`, `outputs`) are the ones mpgpu-spec declares for
/// `P`'s interface: the same names and widths in the same order.
pub fn check_ports<P: Ports>(block: &str, inputs: &[Port], outputs: &[Port]) -> Result<(), String> {
    for (dir, rtl, spec) in [("input", inputs, P::In::ports()), ("output", outputs, P::Out::ports())] {
        let show = |p: Option<(&str, usize)>| p.map_or("nothing".to_string(), |(n, w)| format!("`{n}` ({w} bits)"));
        for k in 0..rtl.len().max(spec.len()) {
            let r = rtl.get(k).map(|p| (p.name.as_str(), p.width as usize));
            let s = spec.get(k).map(|p| (p.name.as_str(), p.width));
            if r != s {
                return Err(format!(
                    "block `{block}`: {dir} port {k} is {} in the RTL but {} in its mpgpu-spec declaration ({})",
                    show(r),
                    show(s),
                    std::any::type_name::<P::In>().rsplit_once("::").map_or("", |x| x.0)
                ));
            }
        }
    }
    Ok(())
}
