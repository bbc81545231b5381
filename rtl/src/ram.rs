//! `SyncRam`: a simple dual-port RAM with one write port and one registered read port, both on
//! one clock: the read data of the address presented in a cycle appears in the next cycle. This
//! is what FPGA block RAM does (ECP5 DP16KD, Xilinx RAMB18/36, iCE40 SB_RAM40_4K), and the
//! Verilog is written in the form yosys maps onto it.
//!
//! A read of the address being written in the same cycle is undefined (`no_rw_check`: block
//! RAM gives no guarantee across its two ports, and yosys then adds no bypass logic); the
//! simulation returns the old word. A block may present such an address but must not use what
//! it reads (the PTBQ reads a queue's head + 2 every cycle and uses it only when the queue
//! holds three or more, so that it is never the entry written). Parameters: `D` the word, `A`
//! the address bits (2^A words). Words never written read as zero in simulation; the Verilog
//! leaves them undefined.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SyncRam<D: Synth, const A: usize> {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_address: Signal<In, Bits<A>>,
    /// The word that was at `read_address` at the last clock edge.
    pub read_data: Signal<Out, D>,
    _words: Vec<D>,
}

impl<D: Synth, const A: usize> Default for SyncRam<D, A> {
    fn default() -> Self {
        assert!(A <= 16, "SyncRam of 2^{A} words is larger than the blocks need");
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

impl<D: Synth, const A: usize> Logic for SyncRam<D, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.read_data.next = self._words[self.read_address.val().index()];
            if self.write_enable.val() {
                self._words[self.write_address.val().index()] = self.write_data.val();
            }
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
(* no_rw_check *)
reg [{msb}:0] mem [0:{last}];

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
    read_data <= mem[read_address];
end
",
            msb = D::BITS - 1,
            last = (1usize << A) - 1
        ))
    }
}
