//! How a unit slot of the GPU holds an RTL block: beside its reference model, the RTL in the
//! loop and both compared every clocked cycle ([`Cosim`], held through [`Shared`]), or the RTL
//! alone ([`Alone`]); and what the caller reads back after the run ([`Outcome`]). Both are
//! [`Hosted`] units for any block: the GPU puts them in the slot of the block's interface
//! (`Gpu::set_units`), asks whether they halted, and reaches the model beside the RTL.

use crate::lockstep::{InLoop, Mismatch};
use crate::ports::Ports;
use crate::rtl::RtlUnit;
use crate::trace::TraceWriter;
use crate::vcd::{Sample, VcdRecorder};
use mpgpu_ref::slots::{Hosted, ModelRef, SmSet};
use mpgpu_spec::port::Wires;
use mpgpu_spec::Unit;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What a run's waveforms record: the clocked cycles `from..=until` (all, or the window around
/// a mismatch), of those the GPU cycles in `time` (the user's window), and of a per-SM unit the
/// SMs in `sms`.
#[derive(Clone, Debug)]
pub struct Rec {
    pub from: u64,
    pub until: u64,
    pub time: (u64, u64),
    pub sms: SmSet,
}

impl Rec {
    /// Nothing recorded.
    pub fn none() -> Rec {
        Rec { from: u64::MAX, until: u64::MAX, time: (0, u64::MAX), sms: SmSet::All }
    }
}

/// A model and its RTL in the loop, with what is recorded of them.
pub struct Cosim<M: Unit<In = P::In, Out = P::Out>, P: Ports> {
    pub pair: InLoop<M, RtlUnit<P>, P::State>,
    pub vcd: Option<VcdRecorder>,
    /// Clocked cycles whose waveform is recorded.
    pub record_from: u64,
    pub record_until: u64,
    /// GPU cycles whose waveform is recorded (the user's window, `--vcd-from`/`--vcd-to`).
    pub record_time: (u64, u64),
    pub trace: Option<TraceWriter>,
    pub trace_error: Option<String>,
    /// For a unit whose clock the GPU gates while it is idle: its `busy` output, read after
    /// each edge ([`Hosted::quiet`]), the RTL's checked against the model's.
    pub busy: Option<fn(&P::Out) -> bool>,
}

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Cosim<M, P> {
    /// `model` beside `rtl`, named `instance`, comparing outputs only.
    pub fn outputs_only(instance: &str, model: M, rtl: RtlUnit<P>) -> Self
    where
        P: Ports<State = ()>,
    {
        let pair = InLoop::<M, RtlUnit<P>, ()>::new(model, rtl, 16).named(instance);
        Cosim { pair, vcd: None, record_from: u64::MAX, record_until: u64::MAX, record_time: (0, u64::MAX), trace: None, trace_error: None, busy: None }
    }

    /// `model` beside `rtl`, named `instance`, comparing outputs and the state `model_state`
    /// reads from the model with the state read back from the RTL's registers.
    /// On a backend whose registers cannot be read (the FPGA), outputs only are compared.
    pub fn with_state(instance: &str, model: M, rtl: RtlUnit<P>, model_state: fn(&M) -> P::State) -> Self {
        let observes = rtl.observes_state();
        let mut pair = InLoop::with_state(model, rtl, 16, model_state, RtlUnit::<P>::state).named(instance);
        if !observes {
            pair = pair.outputs_compared_only();
        }
        Cosim { pair, vcd: None, record_from: u64::MAX, record_until: u64::MAX, record_time: (0, u64::MAX), trace: None, trace_error: None, busy: None }
    }

    /// Its clock gated by the GPU while `busy` is low after an edge ([`Cosim::busy`]).
    pub fn gated(mut self, busy: fn(&P::Out) -> bool) -> Self {
        self.busy = Some(busy);
        self
    }

    /// Records the waveform of the clocked cycles of `r` that fall in its GPU-cycle window.
    pub fn recording(mut self, r: Rec) -> Self {
        self.record_from = r.from;
        self.record_until = r.until;
        self.record_time = r.time;
        self
    }

    /// Streams a trace of every clocked cycle into `dir`.
    pub fn tracing(mut self, dir: Option<&Path>) -> Result<Self, String> {
        self.trace = trace_writer(&self.pair.rtl, dir)?;
        Ok(self)
    }

    /// Before the edge of the current cycle: the waveform and the trace.
    fn record(&mut self, i: &P::In) {
        let cycle = self.pair.cycle;
        let time = self.pair.time.unwrap_or(cycle);
        let window = (self.record_from..=self.record_until).contains(&cycle) && (self.record_time.0..=self.record_time.1).contains(&time);
        if !window && self.trace.is_none() {
            return;
        }
        let expected = self.pair.model.outputs(i);
        let l = self.pair.rtl.layout().clone();
        let mut exp = vec![0; l.outputs.len()];
        expected.pack(&mut exp);
        // (the clocked cycle's inputs, whatever the RTL was last asked)
        let mut inputs = vec![0; l.inputs.len()];
        i.pack(&mut inputs);
        if let Some(t) = self.trace.as_mut() {
            let mut care = vec![true; exp.len()];
            expected.care(&mut care);
            if let Err(e) = t.record(time, &inputs, &exp, &care) {
                self.trace_error.get_or_insert(e);
            }
        }
        if window {
            self.pair.rtl.set_exact();
            sample(&mut self.vcd, &self.pair, i);
        }
    }
}

/// Records the current cycle of `pair` (inputs `i` settled, before the edge) into the waveform
/// `vcd`, starting it on first use: the RTL's ports and state, the model's expected outputs,
/// the mismatch marker, and on the rust-hdl backend the block's whole hierarchy. Testbenches
/// that step a pair by hand call this directly.
/// On a backend whose registers cannot be read (the FPGA), the state recorded is the model's.
pub fn sample<M, P>(vcd: &mut Option<VcdRecorder>, pair: &InLoop<M, RtlUnit<P>, P::State>, i: &P::In)
where
    M: Unit<In = P::In, Out = P::Out>,
    P: Ports,
{
    let cycle = pair.cycle;
    let expected = pair.model.outputs(i);
    let got = pair.rtl.outputs(i);
    let l = pair.rtl.layout();
    let mut exp = vec![0; l.outputs.len()];
    expected.pack(&mut exp);
    let state = match pair.rtl.observes_state() {
        true => pair.rtl.state(),
        false => pair.model_state().unwrap_or_else(|| pair.rtl.state()),
    };
    let (inputs, outs) = (pair.rtl.input_words(), pair.rtl.output_words());
    let marked = expected != got || pair.mismatch().is_some_and(|m| m.cycle == cycle);
    let s = Sample { time: pair.time.unwrap_or(cycle), clocked: cycle, inputs: &inputs, outputs: &outs, expected: &exp, state: &state, mismatch: marked };
    let name = if pair.name.is_empty() { pair.rtl.ports.name() } else { pair.name.clone() };
    let probed = pair.rtl.with_block(&mut |b| {
        vcd.get_or_insert_with(|| VcdRecorder::new(&name, Some(b), &l.inputs, &l.outputs, &state)).sample(&s, Some(b));
    });
    if !probed {
        vcd.get_or_insert_with(|| VcdRecorder::new(&name, None, &l.inputs, &l.outputs, &state)).sample(&s, None);
    }
}

/// A trace writer for `rtl`'s clocked cycles into `dir`, if given.
pub fn trace_writer<P: Ports>(rtl: &RtlUnit<P>, dir: Option<&Path>) -> Result<Option<TraceWriter>, String> {
    let Some(d) = dir else { return Ok(None) };
    let l = rtl.layout();
    TraceWriter::create(d, &rtl.ports.name(), &crate::ports::module_of(&rtl.ports), crate::ports::packaged_of(&rtl.ports), &l.inputs, &l.outputs).map(Some)
}

/// A handle on a [`Cosim`] that the GPU model holds in its unit slot while the caller keeps
/// another to read the outcome.
pub struct Shared<M: Unit<In = P::In, Out = P::Out>, P: Ports>(pub Rc<RefCell<Cosim<M, P>>>);

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Clone for Shared<M, P> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Shared<M, P> {
    pub fn new(c: Cosim<M, P>) -> Self {
        Shared(Rc::new(RefCell::new(c)))
    }
    /// Why the run stops, if the RTL and the model parted: the instance and the cycle.
    pub fn parted(&self) -> Option<String> {
        let c = self.0.borrow();
        c.pair.mismatch().map(|m| format!("{}: the RTL and the model parted at co-simulation cycle {}", c.pair.name, m.cycle))
    }
}

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Unit for Shared<M, P> {
    type In = P::In;
    type Out = P::Out;
    fn reset(&mut self) {
        self.0.borrow_mut().pair.reset();
    }
    fn outputs(&self, i: &P::In) -> P::Out {
        self.0.borrow().pair.outputs(i)
    }
    fn clock(&mut self, i: &P::In) {
        let mut c = self.0.borrow_mut();
        c.record(i);
        c.pair.clock(i);
    }
    fn at_cycle(&mut self, gpu_cycle: u64) {
        self.0.borrow_mut().pair.time = Some(gpu_cycle);
    }
}

/// The pair in its slot: it halts when the RTL and the model part (or the model halts), and
/// its model is the one beside the RTL.
impl<M: Unit<In = P::In, Out = P::Out> + Hosted + 'static, P: Ports> Hosted for Shared<M, P> {
    fn halted(&self) -> Option<String> {
        self.parted().or_else(|| self.0.borrow().pair.model.halted())
    }
    fn model(&self) -> Option<ModelRef<'_>> {
        Some(ModelRef::new(std::cell::Ref::map(self.0.borrow(), |c| &c.pair.model as &dyn std::any::Any)))
    }
    fn quiet(&self) -> bool {
        let c = self.0.borrow();
        let Some(busy) = c.busy else { return false };
        let (model, rtl) = (!c.pair.model.quiet(), busy(&c.pair.rtl.outputs_now()));
        if model != rtl {
            // Reported at the next clocked cycle, whose `busy` this is.
            c.pair.flag("busy (after the previous clocked cycle's edge)", &model, &rtl);
        }
        !rtl
    }
}

/// The RTL alone in its slot: it drives the GPU and nothing checks it. `cycles` counts its
/// clocked cycles, where the caller can read them while the GPU holds the unit.
pub struct Alone<P: Ports> {
    pub rtl: RtlUnit<P>,
    pub cycles: Rc<std::cell::Cell<u64>>,
    /// Its `busy` output, for a unit whose clock the GPU gates ([`Cosim::busy`]).
    pub busy: Option<fn(&P::Out) -> bool>,
}

impl<P: Ports> Alone<P> {
    pub fn new(rtl: RtlUnit<P>) -> Self {
        Alone { rtl, cycles: Default::default(), busy: None }
    }
    /// Its clock gated by the GPU while `busy` is low after an edge.
    pub fn gated(mut self, busy: fn(&P::Out) -> bool) -> Self {
        self.busy = Some(busy);
        self
    }
}

/// The RTL alone never halts (nothing checks it) and has no model.
impl<P: Ports> Hosted for Alone<P> {
    fn quiet(&self) -> bool {
        self.busy.is_some_and(|b| !b(&self.rtl.outputs_now()))
    }
}

impl<P: Ports> Unit for Alone<P> {
    type In = P::In;
    type Out = P::Out;
    fn reset(&mut self) {
        self.rtl.reset();
        self.cycles.set(0);
    }
    fn outputs(&self, i: &P::In) -> P::Out {
        self.rtl.outputs(i)
    }
    fn clock(&mut self, i: &P::In) {
        self.rtl.clock(i);
        self.cycles.set(self.cycles.get() + 1);
    }
}

/// What the caller reads back from a co-simulated instance after the run.
pub trait Outcome {
    fn mismatch(&self) -> Option<Mismatch>;
    fn cycles(&self) -> u64;
    /// Writes the waveform to the file `p`, or (a per-SM unit, [`Outcome::per_sm`]) one per
    /// SM with the RTL into the folder `p`.
    fn write_vcd(&self, p: &Path) -> Result<Vec<PathBuf>, String>;
    fn finish_trace(&self) -> Result<Option<PathBuf>, String>;
    /// Whether the waveforms are one per SM (written into a folder).
    fn per_sm(&self) -> bool {
        false
    }
}

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Outcome for Shared<M, P> {
    fn mismatch(&self) -> Option<Mismatch> {
        self.0.borrow().pair.mismatch()
    }
    fn cycles(&self) -> u64 {
        self.0.borrow().pair.cycle
    }
    fn write_vcd(&self, p: &Path) -> Result<Vec<PathBuf>, String> {
        match self.0.borrow().vcd.as_ref() {
            Some(r) => r.write(p).map(|()| vec![p.to_path_buf()]).map_err(|e| format!("cannot write {}: {e}", p.display())),
            None => Ok(Vec::new()),
        }
    }
    fn finish_trace(&self) -> Result<Option<PathBuf>, String> {
        let mut c = self.0.borrow_mut();
        if let Some(e) = c.trace_error.take() {
            return Err(e);
        }
        c.trace.take().map(|t| t.finish()).transpose()
    }
}

/// The RTL alone in one slot or several (or the model alone: none): nothing is checked; the
/// units' clocked cycles, summed.
pub(crate) struct AloneOutcome(pub(crate) Vec<Rc<std::cell::Cell<u64>>>);

impl Outcome for AloneOutcome {
    fn mismatch(&self) -> Option<Mismatch> {
        None
    }
    fn cycles(&self) -> u64 {
        self.0.iter().map(|c| c.get()).sum()
    }
    fn write_vcd(&self, _: &Path) -> Result<Vec<PathBuf>, String> {
        Ok(Vec::new())
    }
    fn finish_trace(&self) -> Result<Option<PathBuf>, String> {
        Ok(None)
    }
}

/// Several units in the loop at once (the operand log's bookkeeping and data array and the
/// replay queue's; the water-filling unit and the sampling counters): the first mismatch of any
/// (earliest GPU cycle; the earlier-listed unit's on a tie), the clocked cycles of all,
/// waveforms in one folder (`<block>.vcd` of a global unit, `sm<k>-<block>.vcd` of a per-SM
/// one), traces `DIR/<block>/sm<k>/`.
pub(crate) struct Several(pub(crate) Vec<(Box<dyn Outcome>, &'static str)>);

impl Outcome for Several {
    fn mismatch(&self) -> Option<Mismatch> {
        let mut first: Option<Mismatch> = None;
        for (o, _) in &self.0 {
            if let Some(m) = o.mismatch() {
                if first.as_ref().is_none_or(|f| m.time.unwrap_or(m.cycle) < f.time.unwrap_or(f.cycle)) {
                    first = Some(m);
                }
            }
        }
        first
    }
    fn cycles(&self) -> u64 {
        self.0.iter().map(|(o, _)| o.cycles()).sum()
    }
    fn write_vcd(&self, p: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        let mut files = Vec::new();
        for (o, block) in &self.0 {
            if o.per_sm() {
                files.extend(o.write_vcd(p)?);
            } else {
                files.extend(o.write_vcd(&p.join(format!("{block}.vcd")))?);
            }
        }
        Ok(files)
    }
    fn per_sm(&self) -> bool {
        true
    }
    fn finish_trace(&self) -> Result<Option<PathBuf>, String> {
        let mut first = None;
        for (o, _) in &self.0 {
            let d = o.finish_trace()?;
            first = first.or(d);
        }
        Ok(first)
    }
}
