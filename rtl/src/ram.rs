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
//! leaves them undefined unless the RAM is made `zeroed` (an initial value: block RAM is loaded
//! with zeros when the FPGA is configured, and its output register cleared), for a block whose
//! outputs are the read port (`Oldata`) and so must be defined from the first cycle.
//!
//! `LutRam`, the same RAM with a combinational read port (distributed RAM), is below.

use rust_hdl::prelude::*;

/// A simple dual-port RAM: one write port on the clock and one read port, registered
/// (`SYNC`, block RAM: [`SyncRam`]) or combinational (distributed RAM: [`LutRam`]).
#[derive(Clone, Debug, LogicBlock)]
pub struct Ram<D: Synth, const A: usize, const SYNC: bool> {
    /// Clock of both ports.
    pub clock: Signal<In, Clock>,
    pub write_enable: Signal<In, Bit>,
    pub write_address: Signal<In, Bits<A>>,
    pub write_data: Signal<In, D>,
    pub read_address: Signal<In, Bits<A>>,
    /// `SyncRam`: the word that was at `read_address` at the last clock edge; `LutRam`: the
    /// word at `read_address`.
    pub read_data: Signal<Out, D>,
    _words: Vec<D>,
    /// Writes so far, and the count when the words were last read back (`take_written`).
    _writes: u64,
    _read_at: std::cell::Cell<u64>,
    /// The word the last write went to.
    _last: usize,
    /// The Verilog starts every word and the read register at zero (`zeroed`).
    _zeroed: bool,
}

pub type SyncRam<D, const A: usize> = Ram<D, A, true>;

/// `LutRam`: a RAM with one write port (on the clock) and one combinational read port: the word
/// at `read_address` now, with the writes of earlier edges. This is FPGA distributed RAM (ECP5
/// TRELLIS_DPR16X4, Xilinx RAM64M/RAM128X1D; the iCE40 has none and gets flip-flops). For a
/// table that one port writes and another reads at any address, when the reader cannot wait a
/// cycle; its words are read back by the co-simulation as state (`word`, and the Verilog
/// `mem` array). Every word starts at zero, in the simulation and in the Verilog (an initial
/// value, which distributed RAM takes), so that a read of a word never written is defined, as
/// the block's outputs must be every cycle.
pub type LutRam<D, const A: usize> = Ram<D, A, false>;

impl<D: Synth, const A: usize, const SYNC: bool> Ram<D, A, SYNC> {
    /// Word `k` as it stands.
    pub fn word(&self, k: usize) -> D {
        self._words[k]
    }
    /// The number of words.
    pub fn words(&self) -> usize {
        self._words.len()
    }
    /// A RAM of `n` words (1..=2^A; the default has 2^A), as a configuration sizes it: the
    /// Verilog declares `n` words. An address at or past `n` reads zero in the simulation and
    /// is not written (the blocks never present one that they use).
    pub fn with_words(n: usize) -> Self {
        assert!((1..=1 << A).contains(&n), "a RAM of {n} words with {A} address bits");
        Self { _words: vec![D::default(); n], ..Self::default() }
    }
    /// The same RAM whose Verilog starts every word and (`SyncRam`) the read register at zero,
    /// as the simulation does: for a block whose outputs are the read port, which must be
    /// defined from the first cycle (`Oldata`). Block RAM takes the initial words from the
    /// bitstream and clears its output register at configuration.
    pub fn zeroed(mut self) -> Self {
        self._zeroed = true;
        self
    }
    /// `Block::update_all` less the settling of the write port and read address: the RAM
    /// takes their pending values, so only a waveform needs them settled. For a parent's fast
    /// pass (`Zorua::pass_fast`).
    pub fn pass_fast(&mut self) {
        Logic::update(self);
        self.read_data.update_all();
        self.clock.update_all();
    }
    /// Whether a word was written since the last call (true at the first): a reader that
    /// keeps the words it read back need not read them again otherwise.
    pub fn take_written(&self) -> bool {
        self._read_at.replace(self._writes) != self._writes
    }
    /// As `take_written`, naming the word when exactly one write was made since the last call
    /// (`Some(Some(k))`; `Some(None)`: more, or the first call).
    pub fn take_written_word(&self) -> Option<Option<usize>> {
        let at = self._read_at.replace(self._writes);
        match self._writes.wrapping_sub(at) {
            _ if at == u64::MAX => Some(None),
            0 => None,
            1 => Some(Some(self._last)),
            _ => Some(None),
        }
    }
}

impl<D: Synth, const A: usize, const SYNC: bool> Default for Ram<D, A, SYNC> {
    fn default() -> Self {
        assert!(A <= if SYNC { 16 } else { 10 }, "a RAM of 2^{A} words is larger than the blocks need");
        Self {
            clock: Default::default(),
            write_enable: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _words: vec![D::default(); 1 << A],
            _writes: 0,
            _read_at: std::cell::Cell::new(u64::MAX),
            _last: 0,
            _zeroed: false,
        }
    }
}

impl<D: Synth, const A: usize, const SYNC: bool> Logic for Ram<D, A, SYNC> {
    fn update(&mut self) {
        // (the clock edge and the ports are taken from the inputs' pending values, what the
        // parent drove in this pass, one pass sooner than rust-hdl's own memories and flip-flops
        // would and with the same values: see `crate::reg::Reg`)
        if self.clock.next.clk && !self.clock.val().clk {
            if SYNC {
                self.read_data.next = self._words.get(self.read_address.next.index()).copied().unwrap_or_default();
            }
            if self.write_enable.next && self.write_address.next.index() < self._words.len() {
                self._last = self.write_address.next.index();
                self._words[self._last] = self.write_data.next;
                self._writes += 1;
            }
        }
        if !SYNC {
            self.read_data.next = self._words.get(self.read_address.next.index()).copied().unwrap_or_default();
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let (msb, last) = (D::BITS - 1, self._words.len() - 1);
        let init = if self._zeroed {
            format!(
                "
integer k;
initial begin
    for (k = 0; k <= {last}; k = k + 1) begin
        mem[k] = 0;
    end
    read_data = 0;
end
"
            )
        } else {
            String::new()
        };
        Verilog::Custom(if SYNC {
            format!(
                "\
(* no_rw_check *)
reg [{msb}:0] mem [0:{last}];
{init}
always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
    read_data <= mem[read_address];
end
"
            )
        } else {
            format!(
                "\
reg [{msb}:0] mem [0:{last}];

integer k;
initial begin
    for (k = 0; k <= {last}; k = k + 1) begin
        mem[k] = 0;
    end
end

always @(posedge clock) begin
    if (write_enable) begin
        mem[write_address] <= write_data;
    end
end

always @(*) begin
    read_data = mem[read_address];
end
"
            )
        })
    }
}
