//! The step protocol's engine ([`StepLink`]): frames in, the block's inputs held and its clock
//! driven, its outputs captured, replies out (the protocol: `super`).

use super::*;
use rust_hdl::prelude::*;

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
