//! `AsyncRam`: a RAM with one write port (written at the clock edge) and one combinational
//! read port: what FPGAs call distributed (LUT) RAM and ASIC flows a register file. rust-hdl's
//! own `RAM` registers its read data, which would put a cycle between the SM driver choosing a
//! preempted block and knowing which block it is.
//!
//! Parameters: `D` the word, `A` the address bits (2^A words). Reads of a word never written
//! give zero in simulation; the Verilog leaves them undefined (the framework never reads an
//! entry it has not written).

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct AsyncRam<D: Synth, const A: usize> {
    /// Clock of the write port.
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_address: Signal<In, Bits<A>>,
    /// The word at `read_address`, in the same cycle.
    pub read_data: Signal<Out, D>,
    _words: Vec<D>,
}

impl<D: Synth, const A: usize> Default for AsyncRam<D, A> {
    fn default() -> Self {
        assert!(A <= 16, "AsyncRam of 2^{A} words is larger than the blocks need");
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _words: vec![D::default(); 1 << A],
        }
    }
}

impl<D: Synth, const A: usize> Logic for AsyncRam<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.write_enable.val() {
            self._words[self.write_address.val().index()] = self.write_data.val();
        }
        self.read_data.next = self._words[self.read_address.val().index()];
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
reg [{msb}:0] mem [0:{last}];

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
end

always @(*) begin
    read_data = mem[read_address];
end
",
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
    }
}
