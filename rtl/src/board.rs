//! A block on a real FPGA board, stepped by a host over a UART: the byte protocol's hardware
//! side ([`StepLink`]), its 8N1 UART ([`UartRx`], [`UartTx`]) and checksum ([`Crc8`]), and
//! [`board_block!`](crate::board_block), which puts any block behind it. The boards built here
//! are [`BoardDss`] and [`BoardPrio`] (the policy engines) and [`BoardSched`] (the whole
//! scheduling framework).
//! The host side is `mpgpu_tb::serial`; the flow to a ULX3S bitstream is `scripts/board` and
//! `docs/board.md`.
//!
//! # Protocol (version 1)
//!
//! 8N1 at `clock / divisor` baud (25 MHz / 217 = 115,200 baud on the ULX3S). Multi-byte fields
//! are sent most significant byte first. The checksum is CRC-8/MAXIM (Dallas 1-Wire:
//! polynomial x^8 + x^5 + x^4 + 1, reflected, initial value 0, no final XOR; [`crc8`]) over
//! every byte of the frame before it, the sync byte included.
//!
//! A block's inputs are packed into one number: the ports in the harness's order
//! (`mpgpu_tb::blocks`), the first at bit 0, each port's LSB lowest; `I = ceil(input bits / 8)`
//! bytes carry it, most significant byte first (the unused top bits of the first byte are
//! zero). Outputs are packed the same way into `O = ceil(output bits / 8)` bytes.
//!
//! Host to board, every frame of a block the same length:
//!
//! | byte | field |
//! | --- | --- |
//! | 0 | sync `0xA5` |
//! | 1 | command: 1 INFO, 2 RESET, 3 PEEK, 4 STEP |
//! | 2 .. 2+I | the block's inputs (ignored by INFO and RESET) |
//! | 2+I | checksum |
//!
//! Board to host:
//!
//! | byte | field |
//! | --- | --- |
//! | 0 | sync `0x5A` |
//! | 1 | status: 0 ok, 1 the frame's checksum was wrong, 2 unknown command |
//! | 2 | payload length `L` |
//! | 3 .. 3+L | payload |
//! | 3+L | checksum |
//!
//! Payloads:
//! - INFO (13 bytes): protocol version (1), block id (4: the host's hash of the block and its
//!   configuration), input bits (2), output bits (2), clock edges given to the block since
//!   configuration or RESET (4).
//! - RESET (0 bytes): after the reply has left, `reset_req` pulses; the board's top level turns it
//!   into the FPGA's global set/reset, which puts every flip-flop (the block's and this
//!   wrapper's) back to its initial value, as at power-on. The host leaves the line idle for
//!   1 ms after the reply (a frame that started during the reset would be cut).
//! - PEEK (O bytes): applies the inputs, lets them settle, returns the outputs; no clock edge.
//! - STEP (2·O bytes): applies the inputs, lets them settle, captures the outputs, gives the
//!   block exactly one rising clock edge, lets it settle, captures the outputs again (same
//!   inputs, the registers' new values: `busy` there is what clock gating needs). Returns
//!   the outputs before the edge, then after it.
//! - status 1 (2 bytes): the checksum the board computed, the one the frame carried.
//! - status 2 (1 byte): the command byte received.
//!
//! One frame at a time: the host sends a frame and reads the whole reply before the next; bytes
//! that arrive while the board executes or replies are dropped. A frame that stops part-way is
//! dropped after [`TIMEOUT_BIT_TIMES`] bit times without a byte (the receiver goes back to
//! hunting for a sync byte; nothing is sent back), so the host sees a timeout and the next
//! frame works. Bytes other than the sync byte between frames are ignored.
//!
//! Most significant byte first lets the receiver shift each byte in at the bottom of a register
//! exactly as wide as the block's inputs: the first byte's padding leaves at the top, and no
//! flip-flop holds a bit nobody reads.
//!
//! # Clocks
//!
//! The block keeps its own `clock` input and its registers, unchanged: its clock is the output
//! of a flip-flop of this wrapper (`clock_level`), which the STEP state machine raises once per
//! STEP and lowers again `settle` cycles later. A flip-flop output cannot glitch, and the
//! block's inputs (also flip-flops, `held`) change only while that clock is low, at least
//! `settle` cycles before its rising edge and long after. A clock enable would need an enable
//! on every flip-flop inside the block, which rust-hdl's `DFF` does not have; gating the system
//! clock with logic could glitch.
//!
//! The block's outputs are captured the same way, by two registers clocked by a third
//! flip-flop (`capture_level`), raised `settle` cycles after the inputs (before the edge) and
//! `settle` cycles after the block's edge; the reply is composed from them two cycles later.
//! So every path through the block's logic runs between different clocks, and each has
//! `settle` board cycles by construction (640 ns with `settle` = 16, against at most 48 ns that
//! nextpnr measures through `Sched` on the ECP5), which is what nextpnr leaves untimed: the board
//! clock's Fmax is the link's own, the block clock's is the block's register-to-register paths
//! (whose edges are a whole frame apart, so any Fmax above a few kHz would do).
//!
//! # Reusing it
//!
//! `board_block!(pub struct BoardX(X) { inputs: [a: 1, b: 4], outputs: [c: 16] })` writes the
//! wrapper of block `X` (its `clock` driven by the link, then the listed ports, in the
//! harness's order, with their widths): a `LogicBlock` whose `update` slices the held inputs
//! into the block's ports and packs its outputs, and whose Verilog is built from the same list
//! ([`glue_verilog`]); a width that differs from the block's port panics when it is built.
//!
//! Latency of a STEP: the frame's and the reply's bytes (10 bit times each) plus
//! `2·settle + 8` cycles.

use rust_hdl::prelude::*;

/// Sync byte of a host frame.
pub const SYNC_HOST: u8 = 0xA5;
/// Sync byte of a board reply.
pub const SYNC_BOARD: u8 = 0x5A;
pub const CMD_INFO: u8 = 1;
pub const CMD_RESET: u8 = 2;
pub const CMD_PEEK: u8 = 3;
pub const CMD_STEP: u8 = 4;
pub const STATUS_OK: u8 = 0;
pub const STATUS_BAD_CHECKSUM: u8 = 1;
pub const STATUS_BAD_COMMAND: u8 = 2;
pub const PROTOCOL_VERSION: u8 = 1;
/// Bytes of the INFO payload.
pub const INFO_LEN: usize = 13;
/// A frame that stops part-way is dropped after this many bit times without a byte.
pub const TIMEOUT_BIT_TIMES: u32 = 100;
/// The ULX3S's oscillator.
pub const ULX3S_CLOCK_HZ: u32 = 25_000_000;

/// Bytes that hold `bits`.
pub const fn bytes_for(bits: usize) -> usize {
    bits.div_ceil(8)
}

/// Width of the reply buffer for `out_bits` of outputs: sync, status, length and the longest
/// payload (INFO or STEP).
pub const fn reply_bits(out_bits: usize) -> usize {
    let step = 2 * bytes_for(out_bits);
    8 * (3 + if step > INFO_LEN { step } else { INFO_LEN })
}

/// CRC-8/MAXIM of `bytes` (the protocol's checksum; check value `crc8(b"123456789") == 0xA1`).
pub fn crc8(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |mut crc, &b| {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x8C } else { crc >> 1 };
        }
        crc
    })
}

/// The parameters of a board wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardConfig {
    /// What INFO reports as the block id (the host derives it from the block and its
    /// configuration, `mpgpu_tb::serial::block_id`).
    pub block_id: u32,
    /// System clock cycles per bit (4..=65535).
    pub divisor: u16,
    /// System clock cycles the block's inputs settle before its outputs are captured, and its
    /// outputs after the clock edge (1..=255).
    pub settle: u8,
}

impl BoardConfig {
    /// On the ULX3S: 25 MHz, `baud` (115,200 gives divisor 217, 0.01% off), 16 cycles (640 ns)
    /// to settle.
    pub fn ulx3s(block_id: u32, baud: u32) -> BoardConfig {
        let divisor = (ULX3S_CLOCK_HZ + baud / 2) / baud;
        assert!((4..=65535).contains(&divisor), "baud {baud} is out of range for a 25 MHz clock");
        BoardConfig { block_id, divisor: divisor as u16, settle: 16 }
    }

    /// For simulating the wrapper: 4 cycles per bit, 2 cycles to settle.
    pub fn simulation(block_id: u32) -> BoardConfig {
        BoardConfig { block_id, divisor: 4, settle: 2 }
    }
}

/// Receiver state.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum RxState {
    Idle,
    Start,
    Data,
    Stop,
}

/// `UartRx`: an 8N1 receiver. The line goes through two flip-flops (it comes from another clock
/// domain); a falling edge starts a byte, the start bit is checked half a bit later and each
/// bit sampled a whole bit after the previous one. `valid` pulses for one cycle in the middle
/// of the stop bit with the byte on `data`; a low stop bit pulses `frame_error` instead.
/// Parameter: the divisor, system clock cycles per bit (4..=65535).
#[derive(LogicBlock)]
pub struct UartRx {
    pub clock: Signal<In, Clock>,
    /// The serial line (high when idle).
    pub rx: Signal<In, Bit>,
    /// The byte received (valid with `valid`).
    pub data: Signal<Out, Bits<8>>,
    /// A byte arrived (one cycle).
    pub valid: Signal<Out, Bit>,
    /// The stop bit was low (one cycle); the byte is dropped.
    pub frame_error: Signal<Out, Bit>,
    /// The line, inverted (flip-flops start at 0, the idle line is 1), through two stages.
    meta_n: DFF<Bit>,
    line_n: DFF<Bit>,
    state: DFF<RxState>,
    count: DFF<Bits<16>>,
    bit_index: DFF<Bits<3>>,
    shift: DFF<Bits<8>>,
    /// Divisor - 1.
    period: Constant<Bits<16>>,
    /// Divisor / 2 - 1.
    half: Constant<Bits<16>>,
}

impl UartRx {
    pub fn new(divisor: u16) -> UartRx {
        assert!(divisor >= 4, "a UART divisor below 4 cycles per bit cannot find the middle of a bit");
        UartRx {
            clock: Default::default(),
            rx: Default::default(),
            data: Default::default(),
            valid: Default::default(),
            frame_error: Default::default(),
            meta_n: Default::default(),
            line_n: Default::default(),
            state: Default::default(),
            count: Default::default(),
            bit_index: Default::default(),
            shift: Default::default(),
            period: Constant::new((divisor as u64 - 1).into()),
            half: Constant::new((divisor as u64 / 2 - 1).into()),
        }
    }
}

impl Logic for UartRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, meta_n, line_n, state, count, bit_index, shift);
        self.meta_n.d.next = !self.rx.val();
        self.line_n.d.next = self.meta_n.q.val();
        self.data.next = self.shift.q.val();
        self.valid.next = false;
        self.frame_error.next = false;
        match self.state.q.val() {
            RxState::Idle => {
                if self.line_n.q.val() {
                    self.state.d.next = RxState::Start;
                    self.count.d.next = self.half.val();
                }
            }
            RxState::Start => {
                if self.count.q.val() == 0 {
                    if self.line_n.q.val() {
                        self.state.d.next = RxState::Data;
                        self.count.d.next = self.period.val();
                        self.bit_index.d.next = 0.into();
                    } else {
                        // A glitch, not a start bit.
                        self.state.d.next = RxState::Idle;
                    }
                } else {
                    self.count.d.next = self.count.q.val() - 1;
                }
            }
            RxState::Data => {
                if self.count.q.val() == 0 {
                    self.shift.d.next = self.shift.q.val() >> 1;
                    if !self.line_n.q.val() {
                        self.shift.d.next = (self.shift.q.val() >> 1) | 0x80;
                    }
                    self.count.d.next = self.period.val();
                    if self.bit_index.q.val() == 7 {
                        self.state.d.next = RxState::Stop;
                    } else {
                        self.bit_index.d.next = self.bit_index.q.val() + 1;
                    }
                } else {
                    self.count.d.next = self.count.q.val() - 1;
                }
            }
            RxState::Stop => {
                if self.count.q.val() == 0 {
                    if self.line_n.q.val() {
                        self.frame_error.next = true;
                    } else {
                        self.valid.next = true;
                    }
                    self.state.d.next = RxState::Idle;
                } else {
                    self.count.d.next = self.count.q.val() - 1;
                }
            }
        }
    }
}

/// `UartTx`: an 8N1 transmitter. `start` (while `ready`) takes `data`; the line then carries the
/// start bit, the 8 data bits LSB first and the stop bit, each `divisor` cycles, from the
/// next cycle on; `ready` is low from the cycle after `start` until the stop bit has ended. The
/// line is a flip-flop output (high at power-on).
#[derive(LogicBlock)]
pub struct UartTx {
    pub clock: Signal<In, Clock>,
    /// The byte to send (read with `start`).
    pub data: Signal<In, Bits<8>>,
    /// Send `data` (ignored unless `ready`).
    pub start: Signal<In, Bit>,
    /// Idle: `start` is taken.
    pub ready: Signal<Out, Bit>,
    /// The serial line.
    pub tx: Signal<Out, Bit>,
    active: DFF<Bit>,
    /// Data bits then the stop bit, sent from bit 0.
    shift: DFF<Bits<9>>,
    count: DFF<Bits<16>>,
    left: DFF<Bits<4>>,
    /// The line, inverted (the idle line is 1).
    line_n: DFF<Bit>,
    period: Constant<Bits<16>>,
}

impl UartTx {
    pub fn new(divisor: u16) -> UartTx {
        assert!(divisor >= 4, "a UART divisor below 4 cycles per bit is not supported");
        UartTx {
            clock: Default::default(),
            data: Default::default(),
            start: Default::default(),
            ready: Default::default(),
            tx: Default::default(),
            active: Default::default(),
            shift: Default::default(),
            count: Default::default(),
            left: Default::default(),
            line_n: Default::default(),
            period: Constant::new((divisor as u64 - 1).into()),
        }
    }
}

impl Logic for UartTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, active, shift, count, left, line_n);
        self.ready.next = !self.active.q.val();
        self.tx.next = !self.line_n.q.val();
        if self.active.q.val() {
            if self.count.q.val() == 0 {
                self.count.d.next = self.period.val();
                if self.left.q.val() == 0 {
                    self.active.d.next = false;
                    self.line_n.d.next = false;
                } else {
                    self.line_n.d.next = !self.shift.q.val().get_bit(0);
                    self.shift.d.next = self.shift.q.val() >> 1;
                    self.left.d.next = self.left.q.val() - 1;
                }
            } else {
                self.count.d.next = self.count.q.val() - 1;
            }
        } else if self.start.val() {
            self.active.d.next = true;
            // The start bit.
            self.line_n.d.next = true;
            self.shift.d.next = bit_cast::<9, 8>(self.data.val()) | 0x100;
            self.count.d.next = self.period.val();
            self.left.d.next = 9.into();
        }
    }
}

/// `Crc8`: one byte of CRC-8/MAXIM, combinational: `crc_out` is the checksum of the bytes that
/// gave `crc_in`, then `data`. The byte update is linear: with `t = crc_in ^ data`, each bit of
/// the result is the XOR of the bits of `t` whose single-bit checksums ([`crc8`] of `1 << j`:
/// 5e bc 61 c2 9d 23 46 8c) have that bit set.
#[derive(LogicBlock)]
pub struct Crc8 {
    pub crc_in: Signal<In, Bits<8>>,
    pub data: Signal<In, Bits<8>>,
    pub crc_out: Signal<Out, Bits<8>>,
    t: Signal<Local, Bits<8>>,
    zero: Constant<Bits<8>>,
}

impl Default for Crc8 {
    fn default() -> Crc8 {
        Crc8 { crc_in: Default::default(), data: Default::default(), crc_out: Default::default(), t: Default::default(), zero: Constant::new(0u64.into()) }
    }
}

impl Logic for Crc8 {
    #[hdl_gen]
    fn update(&mut self) {
        self.t.next = self.crc_in.val() ^ self.data.val();
        self.crc_out.next = self
            .zero
            .val()
            .replace_bit(0, self.t.val().get_bit(2) ^ self.t.val().get_bit(4) ^ self.t.val().get_bit(5))
            .replace_bit(1, self.t.val().get_bit(0) ^ self.t.val().get_bit(3) ^ self.t.val().get_bit(5) ^ self.t.val().get_bit(6))
            .replace_bit(2, self.t.val().get_bit(0) ^ self.t.val().get_bit(1) ^ self.t.val().get_bit(4) ^ self.t.val().get_bit(6) ^ self.t.val().get_bit(7))
            .replace_bit(3, self.t.val().get_bit(0) ^ self.t.val().get_bit(1) ^ self.t.val().get_bit(4) ^ self.t.val().get_bit(7))
            .replace_bit(4, self.t.val().get_bit(0) ^ self.t.val().get_bit(1) ^ self.t.val().get_bit(4))
            .replace_bit(5, self.t.val().get_bit(1) ^ self.t.val().get_bit(2) ^ self.t.val().get_bit(5))
            .replace_bit(6, self.t.val().get_bit(0) ^ self.t.val().get_bit(2) ^ self.t.val().get_bit(3) ^ self.t.val().get_bit(6))
            .replace_bit(7, self.t.val().get_bit(1) ^ self.t.val().get_bit(3) ^ self.t.val().get_bit(4) ^ self.t.val().get_bit(7));
    }
}

/// The step protocol's state.
#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum LinkState {
    /// Waiting for a sync byte.
    Hunt,
    Command,
    Payload,
    Checksum,
    /// The inputs settle; then the outputs are captured.
    Settle,
    /// The outputs before the edge are captured.
    Before,
    /// The block's clock is high; then the outputs are captured again.
    Edge,
    /// The outputs after the edge are captured.
    After,
    /// Sending the reply.
    Send,
    /// The reply's last byte is on the line.
    Finish,
}

/// `StepLink`: the protocol engine (module documentation): receives frames, holds the block's
/// inputs, drives the block's clock, captures its outputs and sends the replies.
/// `IB`, `OB`: the block's input and output bits; `RW`: the reply buffer,
/// [`reply_bits`]`(OB)`. The wrapper writes these from its port list.
#[derive(LogicBlock)]
pub struct StepLink<const IB: usize, const OB: usize, const RW: usize> {
    /// The board's clock.
    pub clock: Signal<In, Clock>,
    /// Serial line from the host.
    pub rx: Signal<In, Bit>,
    /// Serial line to the host.
    pub tx: Signal<Out, Bit>,
    /// 0 heartbeat, 1 toggles per frame, 2 an error since reset, 7:3 the low bits of the step
    /// count.
    pub led: Signal<Out, Bits<8>>,
    /// One-cycle pulse after a RESET reply: pulse the global set/reset.
    pub reset_req: Signal<Out, Bit>,
    /// The block's inputs, packed.
    pub block_in: Signal<Out, Bits<IB>>,
    /// The block's outputs, packed.
    pub block_out: Signal<In, Bits<OB>>,
    /// The block's clock: one rising edge per STEP.
    pub block_clock: Signal<Out, Clock>,
    uart_rx: UartRx,
    uart_tx: UartTx,
    crc_rx: Crc8,
    crc_tx: Crc8,
    state: DFF<LinkState>,
    cmd: DFF<Bits<8>>,
    /// Checksum of the frame so far.
    crc: DFF<Bits<8>>,
    /// Payload bytes still to come; settle cycles left.
    count: DFF<Bits<8>>,
    /// Cycles since the last byte of a frame.
    idle: DFF<Bits<24>>,
    /// The payload as it arrives (most significant byte first, each byte enters at the bottom;
    /// the padding of the first leaves at the top).
    incoming: DFF<Bits<IB>>,
    /// The inputs the block sees.
    held: DFF<Bits<IB>>,
    /// The outputs before and after the edge, captured on the rising edge of `capture_level`
    /// (the `capture` clock domain); `capture_after` (set long before) says which.
    outs_before: DFF<Bits<OB>>,
    outs_after: DFF<Bits<OB>>,
    capture_level: DFF<Bit>,
    capture_after: DFF<Bit>,
    /// The block's clock.
    clock_level: DFF<Bit>,
    steps: DFF<Bits<32>>,
    /// The reply, sent from its top byte.
    reply: DFF<Bits<RW>>,
    /// The reply's top byte (what goes on the line next; every reply starts with the sync
    /// byte): the UART and the checksum read this narrow copy, not the wide register.
    reply_head: DFF<Bits<8>>,
    /// Reply bytes in `reply` still to send (then the checksum).
    left: DFF<Bits<8>>,
    tx_crc: DFF<Bits<8>>,
    /// The reply being sent answers a RESET.
    resetting: DFF<Bit>,
    reset_pulse: DFF<Bit>,
    error_seen: DFF<Bit>,
    frame_toggle: DFF<Bit>,
    heartbeat: DFF<Bits<24>>,
    sync_host: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    in_bytes: Constant<Bits<8>>,
    settle: Constant<Bits<8>>,
    timeout: Constant<Bits<24>>,
    /// The reply's second byte (RW - 16).
    second_byte_at: Constant<Bits<16>>,
    sync_board: Constant<Bits<8>>,
    /// Where the first and second output words of a reply payload start (their LSB).
    first_at: Constant<Bits<16>>,
    second_at: Constant<Bits<16>>,
    /// Where the first and second payload bytes sit.
    byte0_at: Constant<Bits<16>>,
    byte1_at: Constant<Bits<16>>,
    /// INFO's reply without the step count; the count's place.
    info: Constant<Bits<RW>>,
    steps_at: Constant<Bits<16>>,
    hdr_reset: Constant<Bits<RW>>,
    hdr_peek: Constant<Bits<RW>>,
    hdr_step: Constant<Bits<RW>>,
    hdr_bad_checksum: Constant<Bits<RW>>,
    hdr_bad_command: Constant<Bits<RW>>,
    /// Reply bytes before the checksum: INFO, PEEK, STEP.
    len_info: Constant<Bits<8>>,
    len_peek: Constant<Bits<8>>,
    len_step: Constant<Bits<8>>,
}

/// `bytes` at the top of an `N`-bit vector, the first byte highest.
fn top_bytes<const N: usize>(bytes: &[u8]) -> Bits<N> {
    assert!(bytes.len() * 8 <= N);
    bytes.iter().enumerate().fold(Bits::<N>::default(), |v, (k, &b)| v | (bit_cast::<N, 8>((b as u64).into()) << (N - 8 * (k + 1)) as u64))
}

impl<const IB: usize, const OB: usize, const RW: usize> StepLink<IB, OB, RW> {
    /// The link of a block with `IB` input and `OB` output bits.
    pub fn new(config: BoardConfig) -> Self {
        assert!((1..=8 * 255).contains(&IB), "StepLink: {IB} input bits do not fit a frame");
        assert!(OB >= 1 && 2 * bytes_for(OB) <= 255, "StepLink: {OB} output bits do not fit a reply");
        assert!(RW == reply_bits(OB), "StepLink<_, _, {RW}>: the reply buffer for {OB} output bits is {}", reply_bits(OB));
        assert!(config.divisor >= 4 && config.settle >= 1, "{config:?}: the divisor must be at least 4, settle at least 1");
        let ob = bytes_for(OB);
        let hdr = |status: u8, len: usize| Constant::new(top_bytes::<RW>(&[SYNC_BOARD, status, len as u8]));
        let id = config.block_id.to_be_bytes();
        let (ib, obits) = ((IB as u16).to_be_bytes(), (OB as u16).to_be_bytes());
        let info = [SYNC_BOARD, STATUS_OK, INFO_LEN as u8, PROTOCOL_VERSION, id[0], id[1], id[2], id[3], ib[0], ib[1], obits[0], obits[1]];
        let at = |bits: usize| Constant::new(((RW - bits) as u64).into());
        StepLink {
            clock: Default::default(),
            rx: Default::default(),
            tx: Default::default(),
            led: Default::default(),
            reset_req: Default::default(),
            block_in: Default::default(),
            block_out: Default::default(),
            block_clock: Default::default(),
            uart_rx: UartRx::new(config.divisor),
            uart_tx: UartTx::new(config.divisor),
            crc_rx: Default::default(),
            crc_tx: Default::default(),
            state: Default::default(),
            cmd: Default::default(),
            crc: Default::default(),
            count: Default::default(),
            idle: Default::default(),
            incoming: Default::default(),
            held: Default::default(),
            outs_before: Default::default(),
            outs_after: Default::default(),
            capture_level: Default::default(),
            capture_after: Default::default(),
            clock_level: Default::default(),
            steps: Default::default(),
            reply: Default::default(),
            reply_head: Default::default(),
            left: Default::default(),
            tx_crc: Default::default(),
            resetting: Default::default(),
            reset_pulse: Default::default(),
            error_seen: Default::default(),
            frame_toggle: Default::default(),
            heartbeat: Default::default(),
            sync_host: Constant::new((SYNC_HOST as u64).into()),
            zero8: Constant::new(0u64.into()),
            in_bytes: Constant::new((bytes_for(IB) as u64).into()),
            settle: Constant::new((config.settle as u64).into()),
            timeout: Constant::new((config.divisor as u64 * TIMEOUT_BIT_TIMES as u64).into()),
            second_byte_at: at(16),
            sync_board: Constant::new((SYNC_BOARD as u64).into()),
            first_at: at(24 + 8 * ob),
            second_at: at(24 + 16 * ob),
            byte0_at: at(32),
            byte1_at: at(40),
            info: Constant::new(top_bytes::<RW>(&info)),
            steps_at: at(8 * (info.len() + 4)),
            hdr_reset: hdr(STATUS_OK, 0),
            hdr_peek: hdr(STATUS_OK, ob),
            hdr_step: hdr(STATUS_OK, 2 * ob),
            hdr_bad_checksum: hdr(STATUS_BAD_CHECKSUM, 2),
            hdr_bad_command: hdr(STATUS_BAD_COMMAND, 1),
            len_info: Constant::new((3 + INFO_LEN as u64).into()),
            len_peek: Constant::new((3 + ob as u64).into()),
            len_step: Constant::new((3 + 2 * ob as u64).into()),
        }
    }
}

impl<const IB: usize, const OB: usize, const RW: usize> Logic for StepLink<IB, OB, RW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, cmd, crc, count, idle, incoming, held, capture_level, capture_after, clock_level, steps, reply, reply_head, left, tx_crc, resetting,
            reset_pulse, error_seen, frame_toggle, heartbeat
        );
        // The capture registers: the block's outputs, on the capture clock.
        self.outs_before.clock.next = self.capture_level.q.val().into();
        self.outs_after.clock.next = self.capture_level.q.val().into();
        self.outs_before.d.next = self.outs_before.q.val();
        self.outs_after.d.next = self.outs_after.q.val();
        if self.capture_after.q.val() {
            self.outs_after.d.next = self.block_out.val();
        } else {
            self.outs_before.d.next = self.block_out.val();
        }
        clock!(self, clock, uart_rx, uart_tx);
        // Wiring and defaults.
        self.uart_rx.rx.next = self.rx.val();
        self.tx.next = self.uart_tx.tx.val();
        self.uart_tx.start.next = false;
        self.uart_tx.data.next = self.reply_head.q.val();
        self.crc_rx.crc_in.next = self.crc.q.val();
        if self.state.q.val() == LinkState::Hunt {
            self.crc_rx.crc_in.next = 0.into();
        }
        self.crc_rx.data.next = self.uart_rx.data.val();
        self.crc_tx.crc_in.next = self.tx_crc.q.val();
        self.crc_tx.data.next = self.reply_head.q.val();
        self.block_in.next = self.held.q.val();
        self.block_clock.next = self.clock_level.q.val().into();
        self.reset_pulse.d.next = false;
        self.reset_req.next = self.reset_pulse.q.val();
        self.heartbeat.d.next = self.heartbeat.q.val() + 1;
        self.led.next = self
            .zero8
            .val()
            .replace_bit(0, self.heartbeat.q.val().get_bit(23))
            .replace_bit(1, self.frame_toggle.q.val())
            .replace_bit(2, self.error_seen.q.val())
            .replace_bit(3, self.steps.q.val().get_bit(0))
            .replace_bit(4, self.steps.q.val().get_bit(1))
            .replace_bit(5, self.steps.q.val().get_bit(2))
            .replace_bit(6, self.steps.q.val().get_bit(3))
            .replace_bit(7, self.steps.q.val().get_bit(4));
        if self.uart_rx.frame_error.val() {
            self.error_seen.d.next = true;
        }
        // A frame that stops part-way is dropped.
        self.idle.d.next = 0.into();
        if (self.state.q.val() == LinkState::Command) | (self.state.q.val() == LinkState::Payload) | (self.state.q.val() == LinkState::Checksum) {
            self.idle.d.next = self.idle.q.val() + 1;
            if self.uart_rx.valid.val() {
                self.idle.d.next = 0.into();
            } else if self.idle.q.val() == self.timeout.val() {
                self.state.d.next = LinkState::Hunt;
                self.error_seen.d.next = true;
            }
        }
        match self.state.q.val() {
            LinkState::Hunt => {
                if self.uart_rx.valid.val() & (self.uart_rx.data.val() == self.sync_host.val()) {
                    self.crc.d.next = self.crc_rx.crc_out.val();
                    self.state.d.next = LinkState::Command;
                }
            }
            LinkState::Command => {
                if self.uart_rx.valid.val() {
                    self.cmd.d.next = self.uart_rx.data.val();
                    self.crc.d.next = self.crc_rx.crc_out.val();
                    self.count.d.next = self.in_bytes.val();
                    self.state.d.next = LinkState::Payload;
                }
            }
            LinkState::Payload => {
                if self.uart_rx.valid.val() {
                    self.incoming.d.next = (self.incoming.q.val() << 8) | bit_cast::<IB, 8>(self.uart_rx.data.val());
                    self.crc.d.next = self.crc_rx.crc_out.val();
                    self.count.d.next = self.count.q.val() - 1;
                    if self.count.q.val() == 1 {
                        self.state.d.next = LinkState::Checksum;
                    }
                }
            }
            LinkState::Checksum => {
                if self.uart_rx.valid.val() {
                    self.frame_toggle.d.next = !self.frame_toggle.q.val();
                    self.tx_crc.d.next = 0.into();
                    self.reply_head.d.next = self.sync_board.val();
                    self.resetting.d.next = false;
                    self.state.d.next = LinkState::Send;
                    if self.uart_rx.data.val() != self.crc.q.val() {
                        self.reply.d.next = self.hdr_bad_checksum.val()
                            | (bit_cast::<RW, 8>(self.crc.q.val()) << self.byte0_at.val())
                            | (bit_cast::<RW, 8>(self.uart_rx.data.val()) << self.byte1_at.val());
                        self.left.d.next = 5.into();
                        self.error_seen.d.next = true;
                    } else if self.cmd.q.val() == 1 {
                        self.reply.d.next = self.info.val() | (bit_cast::<RW, 32>(self.steps.q.val()) << self.steps_at.val());
                        self.left.d.next = self.len_info.val();
                    } else if self.cmd.q.val() == 2 {
                        self.reply.d.next = self.hdr_reset.val();
                        self.left.d.next = 3.into();
                        self.resetting.d.next = true;
                    } else if (self.cmd.q.val() == 3) | (self.cmd.q.val() == 4) {
                        self.held.d.next = self.incoming.q.val();
                        self.capture_after.d.next = false;
                        self.count.d.next = self.settle.val();
                        self.state.d.next = LinkState::Settle;
                    } else {
                        self.reply.d.next = self.hdr_bad_command.val() | (bit_cast::<RW, 8>(self.cmd.q.val()) << self.byte0_at.val());
                        self.left.d.next = 4.into();
                        self.error_seen.d.next = true;
                    }
                }
            }
            LinkState::Settle => {
                self.count.d.next = self.count.q.val() - 1;
                if self.count.q.val() == 0 {
                    self.capture_level.d.next = true;
                    self.count.d.next = 2.into();
                    self.state.d.next = LinkState::Before;
                }
            }
            LinkState::Before => {
                self.capture_level.d.next = false;
                self.count.d.next = self.count.q.val() - 1;
                if self.count.q.val() == 0 {
                    if self.cmd.q.val() == 3 {
                        self.reply.d.next = self.hdr_peek.val() | (bit_cast::<RW, OB>(self.outs_before.q.val()) << self.first_at.val());
                        self.left.d.next = self.len_peek.val();
                        self.state.d.next = LinkState::Send;
                    } else {
                        self.clock_level.d.next = true;
                        self.capture_after.d.next = true;
                        self.count.d.next = self.settle.val();
                        self.state.d.next = LinkState::Edge;
                    }
                }
            }
            LinkState::Edge => {
                self.count.d.next = self.count.q.val() - 1;
                if self.count.q.val() == 0 {
                    self.clock_level.d.next = false;
                    self.capture_level.d.next = true;
                    self.steps.d.next = self.steps.q.val() + 1;
                    self.count.d.next = 2.into();
                    self.state.d.next = LinkState::After;
                }
            }
            LinkState::After => {
                self.capture_level.d.next = false;
                self.count.d.next = self.count.q.val() - 1;
                if self.count.q.val() == 0 {
                    self.reply.d.next = self.hdr_step.val()
                        | (bit_cast::<RW, OB>(self.outs_before.q.val()) << self.first_at.val())
                        | (bit_cast::<RW, OB>(self.outs_after.q.val()) << self.second_at.val());
                    self.left.d.next = self.len_step.val();
                    self.state.d.next = LinkState::Send;
                }
            }
            LinkState::Send => {
                if self.uart_tx.ready.val() {
                    self.uart_tx.start.next = true;
                    if self.left.q.val() == 0 {
                        self.uart_tx.data.next = self.tx_crc.q.val();
                        self.state.d.next = LinkState::Finish;
                    } else {
                        self.tx_crc.d.next = self.crc_tx.crc_out.val();
                        self.reply.d.next = self.reply.q.val() << 8;
                        self.reply_head.d.next = self.reply.q.val().get_bits::<8>(self.second_byte_at.val().index());
                        self.left.d.next = self.left.q.val() - 1;
                    }
                }
            }
            LinkState::Finish => {
                // `ready` falls the cycle after `start` and rises when the stop bit has ended.
                if self.uart_tx.ready.val() {
                    self.reset_pulse.d.next = self.resetting.q.val();
                    self.resetting.d.next = false;
                    self.state.d.next = LinkState::Hunt;
                }
            }
        }
    }
}

/// A port's value as the wrapper moves it (at most 64 bits).
pub trait PortWord: Sized {
    fn from_word(v: u64) -> Self;
    fn word(&self) -> u64;
}

impl PortWord for bool {
    fn from_word(v: u64) -> Self {
        v & 1 != 0
    }
    fn word(&self) -> u64 {
        *self as u64
    }
}

impl<const N: usize> PortWord for Bits<N> {
    fn from_word(v: u64) -> Self {
        (if N >= 64 { v } else { v & ((1u64 << N) - 1) }).into()
    }
    fn word(&self) -> u64 {
        self.to_u64()
    }
}

/// Reads consecutive fields of a packed value, the first at bit 0 (up to 2048 bits).
pub struct Unpack {
    chunks: [u64; 32],
    at: usize,
}

impl Unpack {
    pub fn new<const N: usize>(v: &Bits<N>) -> Unpack {
        let mut chunks = [0u64; 32];
        if N <= 64 {
            chunks[0] = v.to_u64();
        } else if N <= 128 {
            let x = v.to_u128();
            chunks[0] = x as u64;
            chunks[1] = (x >> 64) as u64;
        } else {
            for (k, c) in chunks.iter_mut().enumerate().take(N.div_ceil(64)) {
                *c = v.get_bits::<64>(64 * k).to_u64();
            }
        }
        Unpack { chunks, at: 0 }
    }

    /// The next `width` bits (at most 64).
    pub fn take(&mut self, width: usize) -> u64 {
        let (k, b) = (self.at / 64, self.at % 64);
        let mut v = self.chunks[k] >> b;
        if b + width > 64 {
            v |= self.chunks[k + 1] << (64 - b);
        }
        self.at += width;
        if width == 64 {
            v
        } else {
            v & ((1u64 << width) - 1)
        }
    }
}

/// Packs consecutive fields into a value, the first at bit 0 (up to 2048 bits).
#[derive(Default)]
pub struct Pack {
    chunks: [u64; 32],
    at: usize,
}

impl Pack {
    pub fn put(&mut self, v: u64, width: usize) {
        let (k, b) = (self.at / 64, self.at % 64);
        self.chunks[k] |= v << b;
        if b + width > 64 {
            self.chunks[k + 1] |= v >> (64 - b);
        }
        self.at += width;
    }

    pub fn bits<const N: usize>(&self) -> Bits<N> {
        let mask = |k: usize| {
            let used = N.saturating_sub(64 * k);
            if used >= 64 {
                u64::MAX
            } else {
                (1u64 << used) - 1
            }
        };
        self.chunks.iter().enumerate().take(N.div_ceil(64)).fold(Bits::<N>::default(), |acc, (k, &c)| {
            let chunk: Bits<N> = (c & mask(k)).into();
            if k == 0 {
                acc | chunk
            } else {
                acc | (chunk << (64 * k) as u64)
            }
        })
    }
}

/// The wrapper's glue as Verilog: the link's and the block's clocks and lines, the held inputs
/// sliced into the block's ports, its outputs packed (`inputs`, `outputs`: names and widths).
pub fn glue_verilog(inputs: &[(&str, usize)], outputs: &[(&str, usize)]) -> Verilog {
    use rust_hdl::core::ast::{VerilogExpression as E, VerilogStatement as S};
    let sig = |n: &str| E::Signal(n.to_string());
    let mut body = vec![
        S::Assignment(sig("link$clock"), sig("clock")),
        S::Assignment(sig("link$rx"), sig("rx")),
        S::Assignment(sig("tx"), sig("link$tx")),
        S::Assignment(sig("led"), sig("link$led")),
        S::Assignment(sig("reset_req"), sig("link$reset_req")),
        S::Assignment(sig("uut$clock"), sig("link$block_clock")),
    ];
    let mut at = 0u32;
    for (name, width) in inputs {
        body.push(S::Assignment(sig(&format!("uut${name}")), E::Slice(Box::new(sig("link$block_in")), *width, Box::new(E::Literal(at.into())))));
        at += *width as u32;
    }
    body.push(S::Assignment(sig("link$block_out"), E::Literal(0u32.into())));
    let mut at = 0u32;
    for (name, width) in outputs {
        body.push(S::SliceAssignment { base: sig("link$block_out"), width: *width, offset: E::Literal(at.into()), replacement: sig(&format!("uut${name}")) });
        at += *width as u32;
    }
    Verilog::Combinatorial(body)
}

/// Writes a board wrapper: a `LogicBlock` named `$name` holding the block (`uut`) and its
/// [`StepLink`] (`link`), with ports `clock`, `rx`, `tx`, `led` and `reset_req`.
///
/// ```ignore
/// board_block!(pub struct BoardDss(Dss) { inputs: [trigger: 1, sm_state: 2], outputs: [busy: 1, next_addr: 4] });
/// ```
///
/// The ports are listed in the harness's order with their widths (1 for a `Bit`); a width
/// that differs from the port's panics when the wrapper is built. `update` is plain Rust (the
/// fields moved as `u64` words, [`Unpack`], [`Pack`]) and the Verilog is built from the same
/// list ([`glue_verilog`]); a test runs that Verilog in Verilator against the rust-hdl
/// simulation, byte for byte on the serial line. rust-hdl's `#[hdl_gen]` does work on code a
/// `macro_rules` writes, if widths and offsets reach it as plain tokens (`tt`: `literal` and
/// `expr` fragments arrive as invisible groups, which it rejects), and that was the first
/// version; but rust-hdl computes every shift and `get_bits` of a `Bits` through a `BigUint`,
/// and slicing each port that way on every settle (with the checksum's and the LEDs' shifts)
/// cost 20 us per simulated cycle of the DSS board, against 3.5 us now.
/// The caller's module must `use rust_hdl::prelude::*`.
#[macro_export]
macro_rules! board_block {
    (
        $(#[$m:meta])* $vis:vis struct $name:ident($block:ty) {
            inputs: [$($i:ident : $iw:literal),+ $(,)?],
            outputs: [$($o:ident : $ow:literal),+ $(,)?] $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(LogicBlock)]
        $vis struct $name {
            /// The board's clock.
            pub clock: Signal<In, Clock>,
            /// Serial line from the host.
            pub rx: Signal<In, Bit>,
            /// Serial line to the host.
            pub tx: Signal<Out, Bit>,
            /// Status LEDs (`StepLink::led`).
            pub led: Signal<Out, Bits<8>>,
            /// Pulse the global set/reset (after a RESET reply).
            pub reset_req: Signal<Out, Bit>,
            /// The protocol engine.
            pub link: $crate::board::StepLink<{ 0 $(+ $iw)+ }, { 0 $(+ $ow)+ }, { $crate::board::reply_bits(0 $(+ $ow)+) }>,
            /// The block.
            pub uut: $block,
        }

        impl $name {
            /// The block's input and output bits.
            pub const IN_BITS: usize = 0 $(+ $iw)+;
            pub const OUT_BITS: usize = 0 $(+ $ow)+;
            /// The listed ports (name, width), in order.
            pub const INPUTS: &'static [(&'static str, usize)] = &[$((stringify!($i), $iw)),+];
            pub const OUTPUTS: &'static [(&'static str, usize)] = &[$((stringify!($o), $ow)),+];

            /// The wrapper of `uut` (a fresh block, its inputs not marked as driven from outside).
            pub fn new(uut: $block, config: $crate::board::BoardConfig) -> Self {
                $(assert_eq!(rust_hdl::core::atom::Atom::bits(&uut.$i), $iw, "{}: input `{}` is {} bits wide, the list says {}", stringify!($name), stringify!($i), rust_hdl::core::atom::Atom::bits(&uut.$i), $iw);)+
                $(assert_eq!(rust_hdl::core::atom::Atom::bits(&uut.$o), $ow, "{}: output `{}` is {} bits wide, the list says {}", stringify!($name), stringify!($o), rust_hdl::core::atom::Atom::bits(&uut.$o), $ow);)+
                let mut b = $name {
                    clock: Default::default(),
                    rx: Default::default(),
                    tx: Default::default(),
                    led: Default::default(),
                    reset_req: Default::default(),
                    link: $crate::board::StepLink::new(config),
                    uut,
                };
                b.clock.connect();
                b.rx.connect();
                b.connect_all();
                b
            }
        }

        impl $crate::board::BoardTop for $name {
            fn set_clock(&mut self, high: bool) {
                self.clock.next = high.into();
            }
            fn set_rx(&mut self, level: bool) {
                self.rx.next = level;
            }
            fn tx(&self) -> bool {
                self.tx.val()
            }
            fn reset_req(&self) -> bool {
                self.reset_req.val()
            }
            fn led(&self) -> u8 {
                self.led.val().to_u64() as u8
            }
        }

        impl Logic for $name {
            fn update(&mut self) {
                use $crate::board::PortWord;
                self.link.clock.next = self.clock.val();
                self.link.rx.next = self.rx.val();
                self.tx.next = self.link.tx.val();
                self.led.next = self.link.led.val();
                self.reset_req.next = self.link.reset_req.val();
                self.uut.clock.next = self.link.block_clock.val();
                let mut ins = $crate::board::Unpack::new(&self.link.block_in.val());
                $(self.uut.$i.next = PortWord::from_word(ins.take($iw));)+
                let mut outs = $crate::board::Pack::default();
                $(outs.put(self.uut.$o.val().word(), $ow);)+
                self.link.block_out.next = outs.bits();
            }
            fn connect(&mut self) {
                self.link.clock.connect();
                self.link.rx.connect();
                self.tx.connect();
                self.led.connect();
                self.reset_req.connect();
                self.uut.clock.connect();
                $(self.uut.$i.connect();)+
                self.link.block_out.connect();
            }
            fn hdl(&self) -> Verilog {
                $crate::board::glue_verilog(Self::INPUTS, Self::OUTPUTS)
            }
        }
    };
}

/// What a simulation of a board wrapper drives and reads (written by
/// [`board_block!`](crate::board_block)).
pub trait BoardTop: Block {
    fn set_clock(&mut self, high: bool);
    fn set_rx(&mut self, level: bool);
    fn tx(&self) -> bool;
    fn reset_req(&self) -> bool;
    fn led(&self) -> u8;
}

use crate::{Dss, Prio, Sched};

board_block!(
    /// The DSS policy engine behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardDss(Dss) {
        inputs: [trigger: 1, sm_state: 2, sm_ksr_valid: 1, sm_ksr: 4, k_valid: 1, k_count: 8, k_has_work: 1, k_running: 1, count_max: 8, count_min: 8],
        outputs: [busy: 1, next_addr: 4, kmax: 4, kmin: 4, act: 2, act_sm: 4, act_kernel: 4, act_from: 4],
    }
);

board_block!(
    /// The priority policies' scan engine behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardPrio(Prio) {
        inputs: [trigger: 1, sm_state: 2, sm_ksr_valid: 1, sm_ksr: 4, smk_priority: 4, smk_age: 16, k_valid: 1, k_has_work: 1, k_priority: 4, k_age: 16, k_wants_more: 1],
        outputs: [busy: 1, next_addr: 4, act: 2, act_sm: 4, act_kernel: 4, act_from: 4],
    }
);

board_block!(
    /// The whole scheduling framework behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardSched(Sched) {
        inputs: [cmd_valid: 1, cmd_handle: 16, cmd_tbs: 20, cmd_tk: 5, cmd_priority: 4, cmd_tokens: 8, done_valid: 1, done_sm: 4, saved_valid: 1, saved_sm: 4, saved_tb: 20, saved_slot: 8, full: 16],
        outputs: [busy: 1, cmd_taken: 1, issue_valid: 1, issue_sm: 4, issue_handle: 16, issue_tb: 20, issue_restore: 1, issue_slot: 8, preempt_valid: 1, preempt_sm: 4, retired_valid: 1, retired_handle: 16],
    }
);

/// The ULX3S's top level around a wrapper's Verilog (module `top`, as rust-hdl writes it): the
/// board's pin names (`constraints/ulx3s_85f.lpf`), and the global set/reset. `reset_req` is
/// stretched to 32 cycles by flip-flops kept out of the global set/reset (`nogsr`, which
/// yosys's `ecp5_gsr` honours) and drives the ECP5's `GSR` primitive (active low), which
/// returns every other flip-flop to its initial value.
pub fn ulx3s_top_verilog() -> String {
    "\
// ULX3S (LFE5U-85F) top level for an mpgpu board wrapper (module `top`, from rust-hdl).
module board_top(
    input wire clk_25mhz,
    input wire ftdi_txd,   // the FTDI's TX: the FPGA receives
    output wire ftdi_rxd,  // the FTDI's RX: the FPGA transmits
    output wire [7:0] led
);
    wire reset_req;
    top core(.clock(clk_25mhz), .rx(ftdi_txd), .tx(ftdi_rxd), .led(led), .reset_req(reset_req));

    // The global set/reset: held low for 32 cycles after a RESET reply.
    (* nogsr *) reg [5:0] gsr_hold = 6'd0;
    (* nogsr *)
    always @(posedge clk_25mhz) begin
        if (reset_req)
            gsr_hold <= 6'd32;
        else if (gsr_hold != 6'd0)
            gsr_hold <= gsr_hold - 6'd1;
    end
    GSR gsr_inst(.GSR(gsr_hold == 6'd0));
endmodule
"
    .to_string()
}

/// `verilog` with Verilator's `UNUSEDPARAM` waived around each `LogicState` code declaration:
/// rust-hdl declares an enum's codes (`localparam LinkState$Hunt = 0;`) in every module that
/// holds a signal of that type, the `DFF` that only stores the state included, where they are
/// unused. Nothing else is waived; the Verilog for synthesis is unchanged.
pub fn waive_state_codes(verilog: &str) -> String {
    let mut out = String::with_capacity(verilog.len() + 1024);
    for line in verilog.lines() {
        let t = line.trim_start();
        let state_code = ["localparam LinkState$", "localparam RxState$"].iter().any(|p| t.starts_with(p));
        if state_code {
            out.push_str("/* verilator lint_off UNUSEDPARAM */\n");
        }
        out.push_str(line);
        out.push('\n');
        if state_code {
            out.push_str("/* verilator lint_on UNUSEDPARAM */\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_crc8_maxim() {
        assert_eq!(crc8(b"123456789"), 0xA1);
        assert_eq!(crc8(&[]), 0);
    }

    #[test]
    fn the_crc_block_matches_the_software_checksum() {
        let mut c = Crc8::default();
        c.crc_in.connect();
        c.data.connect();
        c.connect_all();
        for (crc, byte) in [(0u8, 0u8), (0, 0xA5), (0x3C, 0x01), (0xFF, 0xFF), (0x81, 0x7E), (0x12, 0x34)] {
            c.crc_in.next = (crc as u64).into();
            c.data.next = (byte as u64).into();
            for _ in 0..100 {
                c.update_all();
                if !c.has_changed() {
                    break;
                }
            }
            // crc8 of a sequence whose running checksum is `crc`, then `byte`: the byte update alone.
            let mut expect = crc ^ byte;
            for _ in 0..8 {
                expect = if expect & 1 != 0 { (expect >> 1) ^ 0x8C } else { expect >> 1 };
            }
            assert_eq!(c.crc_out.val().to_u64() as u8, expect, "crc {crc:#x} byte {byte:#x}");
        }
    }

    #[test]
    fn widths_and_offsets_of_the_wrappers() {
        assert_eq!(BoardDss::IN_BITS, 35);
        assert_eq!(BoardDss::OUT_BITS, 27);
        assert_eq!(BoardSched::IN_BITS, 108);
        assert_eq!(BoardSched::OUT_BITS, 74);
        assert_eq!(reply_bits(27), 8 * (3 + 13));
        assert_eq!(reply_bits(74), 8 * (3 + 20));
        let b = BoardDss::new(Dss::new(16, false), BoardConfig::simulation(7));
        assert_eq!(b.uut.k_count.bits(), 8);
    }
}
