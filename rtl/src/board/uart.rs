//! The link's serial port: an 8N1 receiver ([`UartRx`]) and transmitter ([`UartTx`]), and one
//! byte of the protocol's checksum ([`Crc8`]).

use rust_hdl::prelude::*;

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
/// the result is the XOR of the bits of `t` whose single-bit checksums ([`crc8`](super::crc8) of `1 << j`:
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
