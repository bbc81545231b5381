//! Lockstep co-simulation of two implementations of one [`Unit`]: the reference model and the
//! RTL (through an adapter). Both get the same inputs every cycle; their outputs are compared
//! field by field; the first mismatch is reported with the cycle, the differing fields and the
//! last cycles of both sides. The RTL's outputs are what the caller feeds back to the rest of
//! the system ("RTL in the loop").

use mpgpu_spec::Unit;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;

/// One field that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDiff {
    pub field: String,
    pub model: String,
    pub rtl: String,
}

/// The first cycle where the two sides disagreed.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The unit's clocked cycle (counted from 0).
    pub cycle: u64,
    /// The GPU cycle of that clocked cycle, when the unit runs inside the GPU.
    pub time: Option<u64>,
    pub diffs: Vec<FieldDiff>,
    /// (cycle, inputs, model outputs, RTL outputs), oldest first, ending with the mismatch.
    pub history: Vec<(u64, String, String, String)>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.time {
            Some(t) => writeln!(f, "mismatch at clocked cycle {} (GPU cycle {t}, waveform time {} ns):", self.cycle, t)?,
            None => writeln!(f, "mismatch at cycle {}:", self.cycle)?,
        }
        for d in &self.diffs {
            writeln!(f, "  {}: model {} rtl {}", d.field, d.model, d.rtl)?;
        }
        writeln!(f, "last {} cycles (cycle | inputs | model | rtl):", self.history.len())?;
        for (c, i, m, r) in &self.history {
            writeln!(f, "  {c:>8} | {i} | {m} | {r}")?;
        }
        Ok(())
    }
}

/// Field-by-field differences of two serializable values (nested fields joined with `.`).
pub fn diff<T: Serialize>(model: &T, rtl: &T) -> Vec<FieldDiff> {
    fn walk(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<FieldDiff>) {
        use serde_json::Value::*;
        match (a, b) {
            (Object(x), Object(y)) => {
                for (k, va) in x {
                    let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    walk(&p, va, y.get(k).unwrap_or(&Null), out);
                }
            }
            (Array(x), Array(y)) if x.len() == y.len() => {
                for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                    walk(&format!("{path}[{i}]"), va, vb, out);
                }
            }
            _ if a != b => out.push(FieldDiff { field: path.to_string(), model: a.to_string(), rtl: b.to_string() }),
            _ => {}
        }
    }
    let (a, b) = (serde_json::to_value(model).unwrap(), serde_json::to_value(rtl).unwrap());
    let mut out = Vec::new();
    walk("", &a, &b, &mut out);
    out
}

/// A model and an RTL adapter run in lockstep, stopping at the first mismatch.
pub struct Lockstep<M: Unit, R: Unit<In = M::In, Out = M::Out>> {
    pair: InLoop<M, R>,
}

impl<M, R> Lockstep<M, R>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
    M::In: Serialize,
    M::Out: Serialize,
{
    /// `depth`: how many past cycles a mismatch report shows.
    pub fn new(model: M, rtl: R, depth: usize) -> Self {
        Lockstep { pair: InLoop::new(model, rtl, depth) }
    }

    /// Cycles run so far.
    pub fn cycle(&self) -> u64 {
        self.pair.cycle
    }

    /// One cycle: both sides see `i`, outputs are compared, both are clocked. Returns the RTL's
    /// outputs, or the first mismatch.
    pub fn step(&mut self, i: &M::In) -> Result<M::Out, Box<Mismatch>> {
        let r = self.pair.outputs(i);
        if let Some(m) = self.pair.mismatch() {
            return Err(Box::new(m));
        }
        self.pair.clock(i);
        Ok(r)
    }
}

/// A lockstep pair that is itself a [`Unit`]: the rest of the system sees the RTL's outputs
/// (RTL in the loop) while every cycle's outputs, and optionally the architectural state `S`
/// of both sides (read before the cycle's edge), are compared; the first mismatch is kept
/// (with the recent history) for the caller to report. Differing state fields are named
/// `state.<field>`.
pub struct InLoop<M: Unit, R: Unit<In = M::In, Out = M::Out>, S = ()> {
    pub model: M,
    pub rtl: R,
    pub cycle: u64,
    /// The instance's name, prefixed to every field a mismatch names (`sm[3].oplog`, `sched`).
    pub name: String,
    /// The GPU cycle of the coming clocked cycle, when the caller knows it.
    pub time: Option<u64>,
    depth: usize,
    /// (kept as values and written out only for a mismatch report: formatting them every
    /// clocked cycle was a good part of the co-simulation's time)
    history: VecDeque<(u64, M::In, M::Out, M::Out)>,
    first: std::cell::RefCell<Option<Mismatch>>,
    observe: Option<(fn(&M) -> S, fn(&R) -> S)>,
    /// Whether the observed state is compared (it is not when the RTL's registers cannot be
    /// read back, as on an FPGA over a serial link: then outputs only).
    compare_state: bool,
    /// The clocked cycle (plus one) whose state was compared: the registers change only at
    /// the edge, so the state is compared at the first look at a cycle's outputs (a unit may
    /// be asked many times in a cycle), 0 before any.
    state_seen: std::cell::Cell<u64>,
    /// The last outputs compared in this cycle: the cycle, the inputs, the model's and the
    /// RTL's outputs (a unit asked again with the same inputs in a cycle answers the same).
    last: std::cell::RefCell<Option<(u64, M::In, M::Out, M::Out)>>,
    /// The GPU cycle of the last clock edge: a mismatch seen at a look still dated so was seen
    /// before the pair was moved to a later GPU cycle (`clock`).
    clock_time: Option<u64>,
}

impl<M, R> InLoop<M, R, ()>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
{
    pub fn new(model: M, rtl: R, depth: usize) -> Self {
        InLoop { model, rtl, cycle: 0, name: String::new(), time: None, depth, history: VecDeque::new(), first: std::cell::RefCell::new(None), observe: None, compare_state: false, state_seen: Default::default(), last: Default::default(), clock_time: None }
    }
}

impl<M, R, S> InLoop<M, R, S>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
{
    /// A pair whose state, as `model_state` and `rtl_state` read it, is compared too.
    pub fn with_state(model: M, rtl: R, depth: usize, model_state: fn(&M) -> S, rtl_state: fn(&R) -> S) -> Self {
        InLoop { model, rtl, cycle: 0, name: String::new(), time: None, depth, history: VecDeque::new(), first: std::cell::RefCell::new(None), observe: Some((model_state, rtl_state)), compare_state: true, state_seen: Default::default(), last: Default::default(), clock_time: None }
    }

    /// Compares outputs only from now on (the state is still read from the model, for
    /// waveforms): for an RTL whose registers cannot be read back.
    pub fn outputs_compared_only(mut self) -> Self {
        self.compare_state = false;
        self
    }

    /// The model's state as the pair observes it, if it observes one.
    pub fn model_state(&self) -> Option<S> {
        self.observe.as_ref().map(|(fm, _)| fm(&self.model))
    }

    /// Names the instance (mismatch fields become `<name>.<field>`).
    pub fn named(mut self, name: &str) -> Self {
        self.name = name.to_string();
        self
    }

    fn field(&self, f: &str) -> String {
        if self.name.is_empty() {
            f.to_string()
        } else {
            format!("{}.{f}", self.name)
        }
    }

    /// The first mismatch, if any.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.first.borrow().clone()
    }

    /// Records a mismatch in `field` at the coming cycle (unless one is recorded already).
    pub fn flag<T: std::fmt::Debug>(&self, field: &str, model: &T, rtl: &T) {
        if self.first.borrow().is_none() {
            let diffs = vec![FieldDiff { field: self.field(field), model: format!("{model:?}"), rtl: format!("{rtl:?}") }];
            *self.first.borrow_mut() = Some(Mismatch { cycle: self.cycle, time: self.time, diffs, history: self.history_text() });
        }
    }

    /// Whether a mismatch has been found.
    pub fn failed(&self) -> bool {
        self.first.borrow().is_some()
    }
}

impl<M, R, S> Unit for InLoop<M, R, S>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
    M::In: Serialize,
    M::Out: Serialize,
    S: Serialize + PartialEq,
{
    type In = M::In;
    type Out = M::Out;

    fn reset(&mut self) {
        self.model.reset();
        self.rtl.reset();
        self.cycle = 0;
        self.state_seen.set(0);
        *self.last.borrow_mut() = None;
        self.clock_time = None;
        self.history.clear();
        *self.first.borrow_mut() = None;
    }

    fn outputs(&self, i: &M::In) -> M::Out {
        if let Some((c, li, _, lr)) = &*self.last.borrow() {
            if *c == self.cycle && li == i {
                return lr.clone();
            }
        }
        let m = self.model.outputs(i);
        let r = self.rtl.outputs(i);
        *self.last.borrow_mut() = Some((self.cycle, i.clone(), m.clone(), r.clone()));
        if self.first.borrow().is_some() {
            return r;
        }
        let mut diffs = if m != r { diff(&m, &r) } else { Vec::new() };
        if let Some((fm, fr)) = self.observe.as_ref().filter(|_| self.compare_state && self.state_seen.get() != self.cycle + 1) {
            self.state_seen.set(self.cycle + 1);
            let (sm, sr) = (fm(&self.model), fr(&self.rtl));
            if sm != sr {
                diffs.extend(diff(&sm, &sr).into_iter().map(|d| FieldDiff { field: format!("state.{}", d.field), ..d }));
            }
        }
        for d in &mut diffs {
            d.field = self.field(&d.field);
        }
        if !diffs.is_empty() {
            let mut history = self.history_text();
            history.push((self.cycle, format!("{i:?}"), format!("{m:?}"), format!("{r:?}")));
            *self.first.borrow_mut() = Some(Mismatch { cycle: self.cycle, time: self.time, diffs, history });
        }
        r
    }

    fn clock(&mut self, i: &M::In) {
        let (m, r) = match self.last.borrow_mut().take() {
            Some((c, li, m, r)) if c == self.cycle && li == *i => (m, r),
            _ => (self.model.outputs(i), self.rtl.outputs(i)),
        };
        // A mismatch seen when this cycle's outputs were looked at early (a unit may read its
        // sub-unit's outputs after the previous edge, before it is moved to the next GPU cycle)
        // is dated to the GPU cycle it is clocked in. One seen after the pair was moved to a
        // later GPU cycle keeps that cycle: a unit clocked only in the cycles that have
        // requests (a per-SM unit) may be looked at many cycles before its next edge, which
        // may never come if the run stops first.
        let clock_time = self.clock_time;
        if let Some(x) = self.first.borrow_mut().as_mut().filter(|x| x.cycle == self.cycle && (x.time == clock_time || x.time.is_none())) {
            x.time = self.time;
        }
        self.clock_time = self.time;
        self.remember(i, &m, &r);
        self.model.clock(i);
        self.rtl.clock(i);
        self.cycle += 1;
    }
}

impl<M, R, S> InLoop<M, R, S>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
{
    fn remember(&mut self, i: &M::In, m: &M::Out, r: &M::Out) {
        if self.history.len() == self.depth {
            self.history.pop_front();
        }
        self.history.push_back((self.cycle, i.clone(), m.clone(), r.clone()));
    }
}

impl<M, R, S> InLoop<M, R, S>
where
    M: Unit,
    R: Unit<In = M::In, Out = M::Out>,
{
    /// The recent cycles as a mismatch report shows them.
    fn history_text(&self) -> Vec<(u64, String, String, String)> {
        self.history.iter().map(|(c, i, m, r)| (*c, format!("{i:?}"), format!("{m:?}"), format!("{r:?}"))).collect()
    }
}
