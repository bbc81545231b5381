//! `Reg`: a D flip-flop, the same hardware as rust-hdl's `DFF` (the same ports and the same
//! Verilog), simulated one pass sooner.
//!
//! rust-hdl's `DFF` sees its clock rise in the pass after the parent block drove it (its clock
//! input only takes the new level when the pass ends) and then takes `d` as it stood at the
//! end of that pass. `Reg` sees the rise in the pass the parent drives it, on the clock input's
//! pending value, and takes `d`'s pending value: what the parent has just driven in the same
//! pass, which is what `DFF` would take one pass later, since nothing drives `d` in between.
//! Every register of a block moves one pass sooner, so their order is unchanged, and each
//! clock edge takes one settling pass less (`docs/harness.md`, "What rust-hdl's simulator
//! costs"). Wired with `dff_setup!` like `DFF`.

use rust_hdl::prelude::*;

#[derive(Clone, Debug)]
pub struct Reg<T: Synth> {
    pub d: Signal<In, T>,
    pub q: Signal<Out, T>,
    pub clock: Signal<In, Clock>,
    /// How many times `q` has changed, and that count when [`Reg::take_changed`] last looked.
    _changes: u64,
    _seen: std::cell::Cell<u64>,
}

impl<T: Synth> Default for Reg<T> {
    fn default() -> Self {
        Self { d: Default::default(), q: Default::default(), clock: Default::default(), _changes: 0, _seen: std::cell::Cell::new(u64::MAX) }
    }
}

impl<T: Synth> Reg<T> {
    /// Whether `q` changed since the last call (true at the first): for a reader that keeps
    /// its own copy of the value, such as a harness reading the registers back every cycle.
    /// One reader per register: each call consumes the news.
    pub fn take_changed(&self) -> bool {
        self._seen.replace(self._changes) != self._changes
    }

    /// `Block::update_all` less the settling of `d`: the flip-flop takes `d`'s pending value,
    /// so only a reader of `d`'s settled value (a waveform, a block reading its own register's
    /// input) needs it. For a parent's fast pass (`Zorua::pass_fast`).
    pub fn pass_fast(&mut self) {
        Logic::update(self);
        self.settle_q();
        self.clock.update_all();
    }

    /// Settles `q`, counting a change.
    fn settle_q(&mut self) {
        self.q.update_all();
        if self.q.changed {
            self._changes = self._changes.wrapping_add(1);
        }
    }
}

// (what `#[derive(LogicBlock)]` writes, and the count of `q`'s changes)
impl<T: Synth> Block for Reg<T> {
    fn connect_all(&mut self) {
        self.connect();
        self.d.connect_all();
        self.q.connect_all();
        self.clock.connect_all();
    }
    fn update_all(&mut self) {
        self.update();
        self.d.update_all();
        self.settle_q();
        self.clock.update_all();
    }
    fn has_changed(&self) -> bool {
        self.d.has_changed() || self.q.has_changed() || self.clock.has_changed()
    }
    fn accept(&self, name: &str, probe: &mut dyn Probe) {
        probe.visit_start_scope(name, self);
        self.d.accept("d", probe);
        self.q.accept("q", probe);
        self.clock.accept("clock", probe);
        probe.visit_end_scope(name, self);
    }
}

impl<T: Synth> Logic for Reg<T> {
    fn update(&mut self) {
        // (`next` of an input is what its driver set in this pass; `val()` what it was at the
        // end of the last one)
        if self.clock.next.clk && !self.clock.val().clk {
            self.q.next = self.d.next;
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
initial begin
   q = {:x};
end

always @(posedge clock) begin
   q <= d;
end
      ",
            T::default().verilog()
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo { name: "dff".into(), clock: "clock".into(), inputs: vec!["d".into()], outputs: vec!["q".into()] }]
    }
}

/// Whether any of `regs` changed its output in the last pass.
///
/// A block whose logic reads only its inputs, its registers and its RAMs' read data (a flat
/// block) can skip its logic in a pass in which none of those changed: the logic would compute
/// what it computed in the last pass, and every signal it drives keeps that value. Each clock
/// edge of such a block then costs two evaluations of its logic (the edge, and the registers'
/// new values) and a pass that skips it, instead of three (`docs/harness.md`).
pub fn any_q<T: Synth>(regs: &[Reg<T>]) -> bool {
    regs.iter().any(|r| r.q.has_changed())
}

/// The simulation of a flat block (`any_q`), whose logic is its `Logic::update`
/// (`#[hdl_gen]`, the block's Verilog): an inherent `update`, which the block's derived
/// `Block::update_all` calls in its place (`self.update()` picks an inherent method before a
/// trait's), evaluating the logic only when an input, a register or a RAM read port changed
/// in the last pass (the block's `read_changed`), and in a pass where only the clock changed
/// passing it on to every register and RAM (the block's `fan_clock`). The block's fields
/// `_always` (evaluate in every pass: the plain simulation, for tests), `_ran` (evaluated
/// once) and `_skips` (passes skipped) are not hardware.
#[macro_export]
macro_rules! flat_logic {
    ($t:ty) => {
        impl $t {
            /// The same block with its logic evaluated in every pass: the plain simulation,
            /// against which tests check the shortcut (not hardware).
            pub fn plain(mut self) -> Self {
                self._always = true;
                self
            }

            pub fn update(&mut self) {
                // (the first pass always: before it, nothing has been computed; in a pass in
                // which only the clock changed, the registers and RAMs take what the logic
                // computed in the last one)
                if self._always || !self._ran || self.read_changed() {
                    self._ran = true;
                    <$t as Logic>::update(self);
                } else {
                    self._skips += 1;
                    if self.clock.has_changed() {
                        self.fan_clock();
                    }
                }
            }
        }
    };
}
