//! A flat block's plumbing written from one list of its inputs, registers and RAMs
//! ([`flat_block!`](crate::flat_block)), and its logic split into parts ([`LogicPart`]).
//!
//! A flat block (`crate::flat_logic!`) is simulated by skipping its logic in the passes in which
//! nothing it reads changed. That needs, besides the logic, the list of what it reads (its
//! inputs, its registers' outputs, its RAMs' read data: `read_changed`), of what takes the
//! clock (`fan_clock`, `pass_fast`) and of the inputs a testbench drives (`connect_inputs`);
//! and the logic itself starts by clocking every register and RAM and holding the registers
//! no step assigns. `flat_block!` writes all of these from one list, and `connect_inputs`
//! checks that list against the block's fields (through rust-hdl's `Probe`), so a register,
//! RAM or input left out of it stops the block at its construction instead of freezing a
//! register or skipping a pass in the simulation.
//!
//! rust-hdl's `#[hdl_gen]` needs a block's logic as one function of plain statements (no
//! calls, no macros but `dff_setup!` and `clock!`). A long logic is written as parts instead,
//! each a `#[hdl_gen]` function of its own (`impl LogicPart<Part> for Block`), which
//! `flat_block!` runs in their order and whose Verilog it concatenates into the block's one
//! `always @(*)` block: the same statements in the same order as one function would give.

use crate::ram::Ram;
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// One part of a block's logic, marked by `P`: implemented with `#[hdl_gen]` on `update`,
/// which writes `connect` and `hdl` (the part's statements, in its order). Import it in the
/// parts' modules only: where the block derives `LogicBlock`, its `connect` would be ambiguous
/// with `Logic::connect`.
pub trait LogicPart<P> {
    fn update(&mut self);
    fn connect(&mut self);
    fn hdl(&self) -> Verilog;
}

/// The part `flat_block!` writes first: every register and RAM clocked, the held registers'
/// inputs set to their outputs.
pub struct Clocking;

/// The statements of a combinational `Verilog` (what `#[hdl_gen]` gives).
pub fn statements(v: Verilog) -> ast::VerilogBlock {
    match v {
        Verilog::Combinatorial(b) => b,
        _ => panic!("a part of a block's logic gave no combinational Verilog"),
    }
}

/// A register or a RAM, or an array of them, as a flat block's simulation handles it.
pub trait Clocked {
    /// Its output (a register's `q`, a RAM's read data) changed in the last pass.
    fn out_changed(&self) -> bool;
    /// Drives its clock input (a pass in which only the clock changed).
    fn set_clock(&mut self, c: Clock);
    /// Its pass, less the settling of the inputs no reader needs (`Reg::pass_fast`).
    fn pass_fast(&mut self);
    /// The names rust-hdl gives it inside its parent, for the field `field`.
    fn names(&self, field: &str, out: &mut Vec<String>);
}

impl<T: Synth> Clocked for Reg<T> {
    fn out_changed(&self) -> bool {
        self.q.has_changed()
    }
    fn set_clock(&mut self, c: Clock) {
        self.clock.next = c;
    }
    fn pass_fast(&mut self) {
        Reg::pass_fast(self)
    }
    fn names(&self, field: &str, out: &mut Vec<String>) {
        out.push(field.into());
    }
}

impl<D: Synth, const A: usize, const SYNC: bool> Clocked for Ram<D, A, SYNC> {
    fn out_changed(&self) -> bool {
        self.read_data.has_changed()
    }
    fn set_clock(&mut self, c: Clock) {
        self.clock.next = c;
    }
    fn pass_fast(&mut self) {
        Ram::pass_fast(self)
    }
    fn names(&self, field: &str, out: &mut Vec<String>) {
        out.push(field.into());
    }
}

impl<C: Clocked, const N: usize> Clocked for [C; N] {
    fn out_changed(&self) -> bool {
        self.iter().any(|c| c.out_changed())
    }
    fn set_clock(&mut self, c: Clock) {
        for x in self {
            x.set_clock(c);
        }
    }
    fn pass_fast(&mut self) {
        for x in self {
            x.pass_fast();
        }
    }
    fn names(&self, field: &str, out: &mut Vec<String>) {
        // (rust-hdl's name of an array's element: `Block for [B; P]`)
        for (k, x) in self.iter().enumerate() {
            x.names(&format!("{field}${k}"), out);
        }
    }
}

/// The names of a block's own inputs and of its sub-blocks, as rust-hdl's `Probe` visits them.
#[derive(Default)]
struct Fields {
    depth: usize,
    inputs: Vec<String>,
    blocks: Vec<String>,
}

impl Probe for Fields {
    fn visit_start_scope(&mut self, name: &str, _node: &dyn Block) {
        self.depth += 1;
        if self.depth == 2 {
            self.blocks.push(name.into());
        }
    }
    fn visit_atom(&mut self, name: &str, signal: &dyn Atom) {
        if self.depth == 1 && matches!(signal.kind(), AtomKind::InputParameter) {
            self.inputs.push(name.into());
        }
    }
    fn visit_end_scope(&mut self, _name: &str, _node: &dyn Block) {
        self.depth -= 1;
    }
}

/// Checks a flat block's list (`flat_block!`) against its fields: the inputs named are its
/// inputs but `clock`, the registers and RAMs named are its sub-blocks. Panics naming what
/// is missing or extra.
pub fn check_lists(block: &dyn Block, name: &str, inputs: &[&str], clocked: &[String]) {
    let mut f = Fields::default();
    block.accept(name, &mut f);
    let diff = |what: &str, have: &[String], listed: Vec<&str>| {
        let missing: Vec<&str> = have.iter().map(|s| s.as_str()).filter(|s| !listed.contains(s)).collect();
        let extra: Vec<&str> = listed.iter().copied().filter(|s| !have.iter().any(|h| h == s)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{name}'s flat_block! list of {what}: missing {missing:?}, not {what} of it {extra:?}"
        );
    };
    diff("inputs", &f.inputs, std::iter::once("clock").chain(inputs.iter().copied()).collect());
    diff("registers and RAMs", &f.blocks, clocked.iter().map(|s| s.as_str()).collect());
}

/// A flat block's plumbing, from one list:
///
/// ```text
/// crate::flat_block!(Block {
///     inputs: [a, b],            // the inputs but `clock`
///     held: [r, s],              // registers that hold unless the logic assigns them
///     held_arrays: [t],          // arrays of such registers
///     clocked: [u, ram],         // registers whose input the logic sets in every pass, RAMs
///     clocked_arrays: [rams],    // arrays of those
///     logic: [part::One, part::Two],  // the parts of the logic (`LogicPart`), in order
/// });
/// ```
///
/// writes `Logic` for the block (the clocking part, then the parts, in order), and
/// `crate::flat_logic!`'s `read_changed` and `fan_clock`, `pass_fast` (one pass for a fast
/// co-simulation) and `connect_inputs` (which checks the list against the block's fields).
/// The block has `clock`, and `_always`, `_ran` and `_skips` for `crate::flat_logic!`.
#[macro_export]
macro_rules! flat_block {
    ($t:ident {
        inputs: [$($i:ident),* $(,)?],
        held: [$($h:ident),* $(,)?],
        held_arrays: [$($ha:ident),* $(,)?],
        clocked: [$($c:ident),* $(,)?],
        clocked_arrays: [$($ca:ident),* $(,)?],
        logic: [$($part:path),+ $(,)?] $(,)?
    }) => {
        impl $crate::flat::LogicPart<$crate::flat::Clocking> for $t {
            #[hdl_gen]
            fn update(&mut self) {
                $(dff_setup!(self, clock, $h);)*
                $(
                    for k in 0..self.$ha.len() {
                        self.$ha[k].clock.next = self.clock.val();
                        self.$ha[k].d.next = self.$ha[k].q.val();
                    }
                )*
                $(self.$c.clock.next = self.clock.val();)*
                $(
                    for k in 0..self.$ca.len() {
                        self.$ca[k].clock.next = self.clock.val();
                    }
                )*
            }
        }

        impl Logic for $t {
            /// The logic (the block's Verilog): the clocking, then the parts in order. The
            /// simulation calls it through the inherent `update` of `crate::flat_logic!`,
            /// only when a signal it reads changed.
            fn update(&mut self) {
                <$t as $crate::flat::LogicPart<$crate::flat::Clocking>>::update(self);
                $(<$t as $crate::flat::LogicPart<$part>>::update(self);)+
            }
            fn connect(&mut self) {
                <$t as $crate::flat::LogicPart<$crate::flat::Clocking>>::connect(self);
                $(<$t as $crate::flat::LogicPart<$part>>::connect(self);)+
            }
            fn hdl(&self) -> Verilog {
                let mut body = $crate::flat::statements(<$t as $crate::flat::LogicPart<$crate::flat::Clocking>>::hdl(self));
                $(body.extend($crate::flat::statements(<$t as $crate::flat::LogicPart<$part>>::hdl(self)));)+
                Verilog::Combinatorial(body)
            }
        }

        $crate::flat_logic!($t);

        impl $t {
            /// Whether a signal the logic reads, other than the clock, changed in the last
            /// pass: an input, a register's output, a RAM's read data.
            pub fn read_changed(&self) -> bool {
                use $crate::flat::Clocked;
                false $(|| self.$i.has_changed())*
                    $(|| self.$h.out_changed())*
                    $(|| self.$ha.out_changed())*
                    $(|| self.$c.out_changed())*
                    $(|| self.$ca.out_changed())*
            }

            /// The clock to every register and RAM (a pass in which only the clock changed).
            fn fan_clock(&mut self) {
                use $crate::flat::Clocked;
                let c = self.clock.val();
                $(self.$h.set_clock(c);)*
                $(self.$ha.set_clock(c);)*
                $(self.$c.set_clock(c);)*
                $(self.$ca.set_clock(c);)*
            }

            /// One simulation pass as `Block::update_all` makes it, less what no reader
            /// needs: the logic (skipped when nothing it reads changed), the inputs, and the
            /// registers and RAMs through their `pass_fast` (not their `d` and RAM inputs'
            /// settled values, which only waveforms show: the flip-flops and RAMs take the
            /// pending ones). The locals and outputs are not settled either: a local's or an
            /// output's value is its pending one, and the settle loop asks `read_changed`.
            /// For co-simulation without waveforms.
            pub fn pass_fast(&mut self) {
                use $crate::flat::Clocked;
                use rust_hdl::core::block::Block;
                self.update();
                self.clock.update_all();
                $(self.$i.update_all();)*
                $(Clocked::pass_fast(&mut self.$h);)*
                $(Clocked::pass_fast(&mut self.$ha);)*
                $(Clocked::pass_fast(&mut self.$c);)*
                $(Clocked::pass_fast(&mut self.$ca);)*
            }

            /// Marks the inputs as driven from outside and connects the block; checks the
            /// block's `flat_block!` list against its fields (`crate::flat::check_lists`).
            pub fn connect_inputs(&mut self) {
                use rust_hdl::core::block::Block;
                self.clock.connect();
                $(self.$i.connect();)*
                self.connect_all();
                self.check_lists();
            }

            /// Panics unless the `flat_block!` list names every input (but `clock`),
            /// register and RAM of the block, and nothing else.
            pub fn check_lists(&self) {
                use $crate::flat::Clocked;
                let mut clocked = Vec::new();
                $(self.$h.names(stringify!($h), &mut clocked);)*
                $(self.$ha.names(stringify!($ha), &mut clocked);)*
                $(self.$c.names(stringify!($c), &mut clocked);)*
                $(self.$ca.names(stringify!($ca), &mut clocked);)*
                $crate::flat::check_lists(self, stringify!($t), &[$(stringify!($i)),*], &clocked);
            }
        }
    };
}

// (flat_block! writes methods these tests do not call)
#[allow(dead_code)]
#[cfg(test)]
mod tests {
    use crate::reg::Reg;
    use rust_hdl::prelude::*;

    /// The smallest flat blocks: a counter with an enable and two flags, its logic in two
    /// parts; `Short` the same with its list missing the flags.
    macro_rules! counter {
        ($name:ident, $part:ident) => {
            #[derive(LogicBlock)]
            struct $name {
                clock: Signal<In, Clock>,
                en: Signal<In, Bit>,
                count: Signal<Out, Bits<4>>,
                n: Reg<Bits<4>>,
                flag: [Reg<Bit>; 2],
                _always: bool,
                _ran: bool,
                _skips: u64,
            }

            impl $name {
                fn new() -> Self {
                    Self { clock: Default::default(), en: Default::default(), count: Default::default(), n: Default::default(), flag: Default::default(), _always: false, _ran: false, _skips: 0 }
                }
            }

            struct $part;

            impl super::LogicPart<$part> for $name {
                #[hdl_gen]
                fn update(&mut self) {
                    self.count.next = self.n.q.val();
                    if self.en.val() {
                        self.n.d.next = self.n.q.val() + 1;
                        self.flag[0].d.next = true;
                    }
                }
            }
        };
    }

    counter!(Count, Step);
    /// (a second part: the flag's second bit follows the first a cycle later)
    struct Follow;
    impl super::LogicPart<Follow> for Count {
        #[hdl_gen]
        fn update(&mut self) {
            self.flag[1].d.next = self.flag[0].q.val();
        }
    }
    crate::flat_block!(Count { inputs: [en], held: [n], held_arrays: [flag], clocked: [], clocked_arrays: [], logic: [Step, Follow] });

    counter!(Short, ShortStep);
    crate::flat_block!(Short { inputs: [en], held: [n], held_arrays: [], clocked: [], clocked_arrays: [], logic: [ShortStep] });

    fn settle<B: Block>(b: &mut B) {
        for _ in 0..100 {
            b.update_all();
            if !b.has_changed() {
                return;
            }
        }
        panic!("no settle");
    }

    #[test]
    fn the_list_clocks_and_holds_every_register_and_the_parts_run_in_order() {
        let mut b = Count::new();
        b.connect_inputs();
        b.en.next = true;
        settle(&mut b);
        for k in 0..6 {
            b.clock.next = Clock::from(k % 2 == 0);
            settle(&mut b);
        }
        assert_eq!(b.count.val().to_u64(), 3);
        assert!(b.flag[0].q.val() && b.flag[1].q.val());
        b.en.next = false;
        for k in 0..4 {
            b.clock.next = Clock::from(k % 2 == 0);
            settle(&mut b);
        }
        assert_eq!(b.count.val().to_u64(), 3, "a held register keeps its value");
        assert!(b._skips > 0, "the logic is skipped where nothing it reads changed");
        let v = generate_verilog(&b);
        let (clocking, step, follow) = (v.find("n$clock = clock;").unwrap(), v.find("count = n$q;").unwrap(), v.find("flag$1$d = flag$0$q;").unwrap());
        assert!(clocking < step && step < follow, "{v}");
        assert!(v.contains("flag$1$clock = clock;") && v.contains("flag$1$d = flag$1$q;"), "{v}");
    }

    #[test]
    #[should_panic(expected = "Short's flat_block! list of registers and RAMs: missing [\"flag$0\", \"flag$1\"]")]
    fn a_register_left_out_of_the_list_stops_the_block_at_its_construction() {
        Short::new().connect_inputs();
    }
}
