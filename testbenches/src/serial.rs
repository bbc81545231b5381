//! The host side of the board step protocol (`mpgpu_rtl::board`, `docs/board.md`): frames and
//! replies ([`Link`]), over a serial device ([`open_serial`]) or over the board wrapper's own
//! simulation with its UART lines driven and sampled bit by bit ([`SimLink`]: rust-hdl's
//! simulator, or the wrapper's Verilog compiled by Verilator). The FPGA backend that drives a
//! block through it is `crate::board_link`.
//!
//! Every wait has a deadline: a reply that does not come, stops part-way or comes damaged is an
//! error ([`LinkError`]) that names the device, the request and what arrived, never a hang or
//! a panic. Time on a [`SimLink`] is simulated time (the wrapper's clock at `baud x divisor`),
//! so timeouts mean the same on both while a simulated timeout costs well under a second.
//!
//! The serial device is opened with the `serialport` crate built without default features:
//! it sets the line raw, 8N1, any baud rate (termios2 on Linux), with a read timeout, and
//! needs no system library (the default feature `libudev` is only for listing ports). Raw
//! `termios` through `libc` would do the same in more lines of unsafe code.

use crate::verilator;
use crate::wire::Port;
use mpgpu_rtl::board::{self, BoardConfig, BoardTop};
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the board reports about itself (INFO).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardInfo {
    pub version: u8,
    pub block_id: u32,
    pub in_bits: u16,
    pub out_bits: u16,
    /// Clock edges given to the block since configuration or RESET.
    pub steps: u32,
}

/// The block the host means to drive: what INFO must report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub block_id: u32,
    pub in_bits: u16,
    pub out_bits: u16,
    /// The block and its configuration in words (`sched:SchedPorts { sms: 16, .. }`).
    pub description: String,
}

/// Why a request to the board failed.
#[derive(Debug)]
pub enum LinkError {
    /// The device could not be opened, read or written.
    Io { device: String, what: String, error: io::Error },
    /// The reply did not arrive in time (or stopped part-way).
    Timeout { device: String, what: String, waited: Duration, expected: usize, got: Vec<u8> },
    /// The first byte of the reply was not the board's sync byte.
    BadSync { device: String, what: String, got: Vec<u8> },
    /// The reply's checksum is wrong.
    BadChecksum { device: String, what: String, computed: u8, received: u8, reply: Vec<u8> },
    /// The board refused the frame: its checksum was wrong (`detail` has both values) or the
    /// command unknown.
    Refused { device: String, what: String, status: u8, detail: String },
    /// The reply is not what the request asks for (length, protocol version).
    Malformed { device: String, what: String, detail: String },
    /// The board holds another block or configuration.
    WrongBlock { device: String, expected: Expected, got: BoardInfo },
    /// RESET did not return the block to its initial state.
    NotReset { device: String, steps: u32 },
    /// A STEP's outputs before the edge differ from the PEEK of the same inputs just before.
    Diverged { device: String, what: String, peek: Vec<u64>, step: Vec<u64> },
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "nothing".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Io { device, what, error } => write!(f, "{device}: {what}: {error}"),
            LinkError::Timeout { device, what, waited, expected, got } => write!(
                f,
                "{device}: timeout after {} ms waiting for the reply to {what}: {} of {expected} bytes arrived ({})",
                waited.as_millis(),
                got.len(),
                hex(got)
            ),
            LinkError::BadSync { device, what, got } => {
                write!(f, "{device}: the reply to {what} does not start with the board's sync byte 5a: got {}", hex(got))
            }
            LinkError::BadChecksum { device, what, computed, received, reply } => write!(
                f,
                "{device}: the reply to {what} is damaged: its checksum is {received:#04x}, its bytes give {computed:#04x} ({})",
                hex(reply)
            ),
            LinkError::Refused { device, what, status, detail } => write!(f, "{device}: the board refused {what} (status {status}): {detail}"),
            LinkError::Malformed { device, what, detail } => write!(f, "{device}: the reply to {what} is malformed: {detail}"),
            LinkError::WrongBlock { device, expected, got } => write!(
                f,
                "{device}: the board holds block {:#010x} with {} input and {} output bits (protocol {}); expected {:#010x} with {} and {} bits, {}: \
                 build and program that block's bitstream (docs/board.md)",
                got.block_id, got.in_bits, got.out_bits, got.version, expected.block_id, expected.in_bits, expected.out_bits, expected.description
            ),
            LinkError::NotReset { device, steps } => write!(
                f,
                "{device}: after RESET the board reports {steps} clock edges, not 0: the global reset did not act (is this bitstream built by scripts/board?); \
                 reprogram the board"
            ),
            LinkError::Diverged { device, what, peek, step } => {
                write!(f, "{device}: {what}: the outputs before the edge {step:?} differ from the PEEK of the same inputs {peek:?}")
            }
        }
    }
}

impl std::error::Error for LinkError {}

/// A byte stream to a board with bounded waits: a serial device or a simulation.
pub trait Line {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Fills `buf` as far as bytes arrive within `timeout`; returns how many did.
    fn receive(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize>;
    /// Leaves the line idle for `t`, then drops every byte received and not read.
    fn quiet(&mut self, t: Duration) -> io::Result<()>;
    /// The device's name for messages.
    fn name(&self) -> String;
}

/// Any `Read + Write` whose reads return within a bounded time (a serial port opened with a
/// read timeout) as a [`Line`]: reads that time out, would block or return nothing are retried
/// until the deadline.
pub struct IoLine<T: Read + Write> {
    pub io: T,
    pub name: String,
}

impl<T: Read + Write> IoLine<T> {
    pub fn new(io: T, name: &str) -> Self {
        IoLine { io, name: name.to_string() }
    }
}

fn transient(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted)
}

impl<T: Read + Write> Line for IoLine<T> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.io.write_all(bytes)?;
        self.io.flush()
    }
    fn receive(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        let deadline = Instant::now() + timeout;
        let mut n = 0;
        while n < buf.len() && Instant::now() < deadline {
            match self.io.read(&mut buf[n..]) {
                Ok(0) => std::thread::sleep(Duration::from_millis(1)),
                Ok(k) => n += k,
                Err(e) if transient(&e) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
    fn quiet(&mut self, t: Duration) -> io::Result<()> {
        std::thread::sleep(t);
        let mut junk = [0u8; 256];
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            match self.io.read(&mut junk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if transient(&e) => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    fn name(&self) -> String {
        self.name.clone()
    }
}

/// Opens the serial device `path` at `baud`, 8N1, no flow control, raw, with input and output
/// buffers cleared.
pub fn open_serial(path: &str, baud: u32) -> Result<IoLine<Box<dyn serialport::SerialPort>>, LinkError> {
    let io_err = |what: &str, e: serialport::Error| LinkError::Io { device: path.to_string(), what: what.to_string(), error: io::Error::from(e) };
    let builder = serialport::new(path, baud)
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(Duration::from_millis(10));
    let cannot_open = |e| io_err(&format!("cannot open the serial device at {baud} baud"), e);
    // Not exclusive: a unit rebuilt for a new run (a mismatch's rerun) opens the device again
    // before the old one is dropped.
    #[cfg(unix)]
    let port: Box<dyn serialport::SerialPort> = {
        let mut p = builder.open_native().map_err(cannot_open)?;
        p.set_exclusive(false).map_err(|e| io_err("cannot share the serial device", e))?;
        Box::new(p)
    };
    #[cfg(not(unix))]
    let port = builder.open().map_err(cannot_open)?;
    port.clear(serialport::ClearBuffer::All).map_err(|e| io_err("cannot clear the serial buffers", e))?;
    Ok(IoLine::new(port, path))
}

/// A simulated board wrapper, one clock cycle at a time: the rust-hdl simulation
/// ([`HdlBoard`]) or its generated Verilog compiled by Verilator ([`VerilatedBoard`]).
pub trait BoardSim {
    fn set_rx(&mut self, level: bool);
    /// One cycle of the board's clock: low and settled, then high and settled.
    fn cycle(&mut self);
    fn tx(&self) -> bool;
    fn reset_req(&self) -> bool;
    fn led(&self) -> u8;
}

/// A board wrapper on rust-hdl's simulator.
pub struct HdlBoard<B: BoardTop>(pub B);

impl<B: BoardTop> HdlBoard<B> {
    fn settle(&mut self) {
        for _ in 0..1000 {
            self.0.update_all();
            if !self.0.has_changed() {
                return;
            }
        }
        panic!("the board wrapper's simulation did not settle in 1000 iterations");
    }
}

impl<B: BoardTop> BoardSim for HdlBoard<B> {
    fn set_rx(&mut self, level: bool) {
        self.0.set_rx(level);
    }
    fn cycle(&mut self) {
        self.0.set_clock(false);
        self.settle();
        self.0.set_clock(true);
        self.settle();
    }
    fn tx(&self) -> bool {
        self.0.tx()
    }
    fn reset_req(&self) -> bool {
        self.0.reset_req()
    }
    fn led(&self) -> u8 {
        self.0.led()
    }
}

/// A board wrapper's Verilog (module `top`: `clock`, `rx` in; `tx`, `led`, `reset_req` out),
/// compiled by Verilator (`crate::verilator`, cached under `target/verilator/`).
pub struct VerilatedBoard {
    model: verilator::Model,
    rx: u64,
    outs: [u64; 3],
}

impl VerilatedBoard {
    /// The compiled model of a wrapper's Verilog.
    pub fn library(name: &str, verilog: &str) -> Result<Arc<verilator::Library>, String> {
        verilator::model(name, "top", verilog, &[Port::new("rx", 1)], &[Port::new("tx", 1), Port::new("led", 8), Port::new("reset_req", 1)], &[])
    }

    pub fn new(lib: Arc<verilator::Library>) -> VerilatedBoard {
        let mut b = VerilatedBoard { model: verilator::Model::new(lib), rx: 1, outs: [1, 0, 0] };
        b.model.set_inputs(&[1]);
        b.model.set_clock(false);
        b.model.eval();
        b.model.outputs(&mut b.outs);
        b
    }
}

impl BoardSim for VerilatedBoard {
    fn set_rx(&mut self, level: bool) {
        self.rx = level as u64;
    }
    fn cycle(&mut self) {
        self.model.set_inputs(&[self.rx]);
        self.model.set_clock(false);
        self.model.eval();
        self.model.set_clock(true);
        self.model.eval();
        self.model.outputs(&mut self.outs);
    }
    fn tx(&self) -> bool {
        self.outs[0] != 0
    }
    fn reset_req(&self) -> bool {
        self.outs[2] != 0
    }
    fn led(&self) -> u8 {
        self.outs[1] as u8
    }
}

/// A simulated board wrapper as a [`Line`]: bytes sent are shifted onto its `rx` line bit by
/// bit (back to back, 8N1, `divisor` cycles a bit), its `tx` line is sampled in the middle of
/// each bit, and `reset_req` rebuilds the wrapper (the global set/reset of the board).
/// Simulated time runs at `baud x divisor` cycles a second.
pub struct SimLink<B: BoardSim> {
    make: Box<dyn Fn() -> B>,
    board: B,
    divisor: u32,
    baud: u32,
    /// Cycles simulated.
    pub cycle: u64,
    /// Global resets modelled.
    pub resets: u32,
    to_board: VecDeque<u8>,
    /// The frame being shifted out: its 10 bits (start, data LSB first, stop), bits left, cycles
    /// left in the bit.
    sending: Option<(u16, u32, u32)>,
    from_board: VecDeque<u8>,
    /// The host receiver: `None` while idle, else (cycles to the next sample, bits taken, byte).
    receiving: Option<(u32, u32, u16)>,
}

impl<B: BoardTop> SimLink<HdlBoard<B>> {
    /// A link to the rust-hdl wrapper `make` builds.
    pub fn rust_hdl(make: impl Fn() -> B + 'static, divisor: u16, baud: u32) -> Self {
        SimLink::new(move || HdlBoard(make()), divisor, baud)
    }
}

impl SimLink<VerilatedBoard> {
    /// A link to a Verilated wrapper.
    pub fn verilated(lib: Arc<verilator::Library>, divisor: u16, baud: u32) -> Self {
        SimLink::new(move || VerilatedBoard::new(lib.clone()), divisor, baud)
    }
}

impl<B: BoardSim> SimLink<B> {
    /// A link to the wrapper `make` builds (called again at every global reset), whose UART
    /// divisor is `divisor`, timed as if at `baud`.
    pub fn new(make: impl Fn() -> B + 'static, divisor: u16, baud: u32) -> Self {
        let mut board = make();
        board.set_rx(true);
        SimLink {
            make: Box::new(make),
            board,
            divisor: divisor as u32,
            baud,
            cycle: 0,
            resets: 0,
            to_board: VecDeque::new(),
            sending: None,
            from_board: VecDeque::new(),
            receiving: None,
        }
    }

    /// The wrapper as simulated now.
    pub fn board(&self) -> &B {
        &self.board
    }

    /// One cycle of the wrapper's clock with the host's side of both lines.
    pub fn tick(&mut self) {
        // Host transmitter.
        if self.sending.is_none() {
            if let Some(b) = self.to_board.pop_front() {
                self.sending = Some(((b as u16) << 1 | 0x200, 10, self.divisor));
            }
        }
        let line = match self.sending {
            Some((bits, _, _)) => bits & 1 != 0,
            None => true,
        };
        self.board.set_rx(line);
        if let Some((bits, left, cycles)) = self.sending.as_mut() {
            *cycles -= 1;
            if *cycles == 0 {
                *bits >>= 1;
                *left -= 1;
                *cycles = self.divisor;
                if *left == 0 {
                    self.sending = None;
                }
            }
        }
        // The wrapper.
        self.board.cycle();
        self.cycle += 1;
        // Host receiver: samples in the middle of each bit.
        let tx = self.board.tx();
        match self.receiving.as_mut() {
            None => {
                if !tx {
                    self.receiving = Some((self.divisor / 2, 0, 0));
                }
            }
            Some((wait, taken, byte)) => {
                *wait -= 1;
                if *wait == 0 {
                    *wait = self.divisor;
                    match *taken {
                        0 if tx => self.receiving = None, // a glitch, not a start bit
                        0 => *taken = 1,
                        1..=8 => {
                            *byte |= (tx as u16) << (*taken - 1);
                            *taken += 1;
                        }
                        _ => {
                            if tx {
                                self.from_board.push_back(*byte as u8);
                            }
                            self.receiving = None;
                        }
                    }
                }
            }
        }
        if self.board.reset_req() {
            // The board's top level pulses the FPGA's global set/reset: every flip-flop back to
            // its initial value.
            self.board = (self.make)();
            self.board.set_rx(line);
            self.resets += 1;
        }
    }

    fn cycles(&self, t: Duration) -> u64 {
        (t.as_secs_f64() * self.baud as f64 * self.divisor as f64).ceil() as u64
    }
}

impl<B: BoardSim> Line for SimLink<B> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.to_board.extend(bytes);
        Ok(())
    }
    fn receive(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        let deadline = self.cycle + self.cycles(timeout);
        let mut n = 0;
        loop {
            while n < buf.len() {
                match self.from_board.pop_front() {
                    Some(b) => {
                        buf[n] = b;
                        n += 1;
                    }
                    None => break,
                }
            }
            if n == buf.len() || self.cycle >= deadline {
                return Ok(n);
            }
            self.tick();
        }
    }
    fn quiet(&mut self, t: Duration) -> io::Result<()> {
        let until = self.cycle + self.cycles(t);
        while self.cycle < until || !self.to_board.is_empty() || self.sending.is_some() {
            self.tick();
        }
        self.from_board.clear();
        Ok(())
    }
    fn name(&self) -> String {
        "simulated board".into()
    }
}

/// How long the host waits after RESET's reply: the board's global reset follows the reply's
/// stop bit and lasts 32 cycles; a frame that started meanwhile would be cut.
pub const RESET_QUIET: Duration = Duration::from_millis(1);

/// The protocol client of one block: frames its requests, checks and decodes the replies.
pub struct Link {
    line: Box<dyn Line>,
    in_widths: Vec<u32>,
    out_widths: Vec<u32>,
    in_bytes: usize,
    out_bytes: usize,
    /// How long a reply may take to arrive, whole.
    pub timeout: Duration,
    /// How long [`Link::recover`] keeps the line quiet (longer than the board's idle timeout
    /// of 100 bit times at any baud down to 9,600).
    pub recover_wait: Duration,
    /// Clock edges given since the last RESET, as the host counts them.
    pub steps: u64,
}

/// Packs `words` (port values, `widths` bits each, the first at bit 0) into `bytes` bytes, most
/// significant byte first.
pub fn pack(words: &[u64], widths: &[u32], bytes: usize) -> Vec<u8> {
    let mut le = vec![0u8; bytes];
    let mut at = 0usize;
    for (&w, &width) in words.iter().zip(widths) {
        for b in 0..width as usize {
            if (w >> b) & 1 != 0 {
                le[(at + b) / 8] |= 1 << ((at + b) % 8);
            }
        }
        at += width as usize;
    }
    le.reverse();
    le
}

/// The inverse of [`pack`].
pub fn unpack(msb_first: &[u8], widths: &[u32]) -> Vec<u64> {
    let le: Vec<u8> = msb_first.iter().rev().copied().collect();
    let mut at = 0usize;
    widths
        .iter()
        .map(|&width| {
            let mut w = 0u64;
            for b in 0..width as usize {
                if (le[(at + b) / 8] >> ((at + b) % 8)) & 1 != 0 {
                    w |= 1 << b;
                }
            }
            at += width as usize;
            w
        })
        .collect()
}

/// A host frame: sync, command, payload, checksum.
pub fn frame(cmd: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![board::SYNC_HOST, cmd];
    f.extend_from_slice(payload);
    f.push(board::crc8(&f));
    f
}

impl Link {
    /// A client for a block with these input and output port widths (harness order).
    pub fn new(line: Box<dyn Line>, in_widths: &[u32], out_widths: &[u32]) -> Link {
        let bytes = |w: &[u32]| board::bytes_for(w.iter().sum::<u32>() as usize);
        Link {
            line,
            in_widths: in_widths.to_vec(),
            out_widths: out_widths.to_vec(),
            in_bytes: bytes(in_widths),
            out_bytes: bytes(out_widths),
            timeout: Duration::from_millis(250),
            recover_wait: Duration::from_millis(30),
            steps: 0,
        }
    }

    /// The device's name.
    pub fn device(&self) -> String {
        self.line.name()
    }

    /// The frame of `cmd` with `inputs` (zeros for INFO and RESET).
    pub fn frame(&self, cmd: u8, inputs: Option<&[u64]>) -> Vec<u8> {
        let payload = match inputs {
            Some(v) => pack(v, &self.in_widths, self.in_bytes),
            None => vec![0; self.in_bytes],
        };
        frame(cmd, &payload)
    }

    /// The line, for sending raw bytes.
    pub fn line(&mut self) -> &mut dyn Line {
        self.line.as_mut()
    }

    /// Sends `frame` (for `what`) and returns the payload of its reply, checked: sync byte,
    /// length, checksum, status.
    pub fn request(&mut self, what: &str, frame: &[u8]) -> Result<Vec<u8>, LinkError> {
        let device = self.line.name();
        self.line.send(frame).map_err(|error| LinkError::Io { device: device.clone(), what: format!("sending {what}"), error })?;
        let start = Instant::now();
        let mut head = [0u8; 3];
        let n = self.receive(&mut head, what)?;
        if n > 0 && head[0] != board::SYNC_BOARD {
            return Err(LinkError::BadSync { device, what: what.into(), got: head[..n].to_vec() });
        }
        if n < 3 {
            return Err(LinkError::Timeout { device, what: what.into(), waited: self.timeout, expected: 3, got: head[..n].to_vec() });
        }
        let len = head[2] as usize;
        let mut reply = head.to_vec();
        reply.resize(3 + len + 1, 0);
        let n = self.receive(&mut reply[3..], what)?;
        if n < len + 1 {
            reply.truncate(3 + n);
            return Err(LinkError::Timeout { device, what: what.into(), waited: start.elapsed().max(self.timeout), expected: 3 + len + 1, got: reply });
        }
        let computed = board::crc8(&reply[..3 + len]);
        let received = reply[3 + len];
        if computed != received {
            return Err(LinkError::BadChecksum { device, what: what.into(), computed, received, reply });
        }
        let payload = reply[3..3 + len].to_vec();
        match head[1] {
            board::STATUS_OK => Ok(payload),
            board::STATUS_BAD_CHECKSUM if len == 2 => Err(LinkError::Refused {
                device,
                what: what.into(),
                status: head[1],
                detail: format!("its checksum is wrong: the board computed {:#04x}, the frame carried {:#04x}", payload[0], payload[1]),
            }),
            board::STATUS_BAD_COMMAND if len == 1 => {
                Err(LinkError::Refused { device, what: what.into(), status: head[1], detail: format!("unknown command {:#04x}", payload[0]) })
            }
            s => Err(LinkError::Malformed { device, what: what.into(), detail: format!("status {s} with {len} payload bytes") }),
        }
    }

    fn receive(&mut self, buf: &mut [u8], what: &str) -> Result<usize, LinkError> {
        let t = self.timeout;
        self.line.receive(buf, t).map_err(|error| LinkError::Io { device: self.line.name(), what: format!("reading the reply to {what}"), error })
    }

    fn expect_len(&self, what: &str, payload: &[u8], len: usize) -> Result<(), LinkError> {
        if payload.len() == len {
            Ok(())
        } else {
            Err(LinkError::Malformed { device: self.line.name(), what: what.into(), detail: format!("{} payload bytes, expected {len}", payload.len()) })
        }
    }

    /// INFO.
    pub fn info(&mut self) -> Result<BoardInfo, LinkError> {
        let p = self.request("INFO", &self.frame(board::CMD_INFO, None))?;
        self.expect_len("INFO", &p, board::INFO_LEN)?;
        let be = |b: &[u8]| b.iter().fold(0u32, |v, &x| v << 8 | x as u32);
        Ok(BoardInfo { version: p[0], block_id: be(&p[1..5]), in_bits: be(&p[5..7]) as u16, out_bits: be(&p[7..9]) as u16, steps: be(&p[9..13]) })
    }

    /// RESET: the block (and the wrapper) back to their initial state. The board resets once
    /// the reply's last bit has left, so the line then stays quiet for [`RESET_QUIET`].
    pub fn reset(&mut self) -> Result<(), LinkError> {
        let p = self.request("RESET", &self.frame(board::CMD_RESET, None))?;
        self.expect_len("RESET", &p, 0)?;
        self.line.quiet(RESET_QUIET).map_err(|error| LinkError::Io { device: self.line.name(), what: "waiting for the reset".into(), error })?;
        self.steps = 0;
        Ok(())
    }

    /// PEEK: the outputs for `inputs`, without a clock edge.
    pub fn peek(&mut self, inputs: &[u64]) -> Result<Vec<u64>, LinkError> {
        let what = format!("PEEK after step {}", self.steps);
        let p = self.request(&what, &self.frame(board::CMD_PEEK, Some(inputs)))?;
        self.expect_len(&what, &p, self.out_bytes)?;
        Ok(unpack(&p, &self.out_widths))
    }

    /// STEP: the outputs for `inputs` before the clock edge, and after it.
    pub fn step(&mut self, inputs: &[u64]) -> Result<(Vec<u64>, Vec<u64>), LinkError> {
        let what = format!("STEP {}", self.steps + 1);
        let p = self.request(&what, &self.frame(board::CMD_STEP, Some(inputs)))?;
        self.expect_len(&what, &p, 2 * self.out_bytes)?;
        self.steps += 1;
        Ok((unpack(&p[..self.out_bytes], &self.out_widths), unpack(&p[self.out_bytes..], &self.out_widths)))
    }

    /// After an error: keeps the line quiet until the board has dropped any partial frame, and
    /// drops whatever arrived late.
    pub fn recover(&mut self) -> Result<(), LinkError> {
        let t = self.recover_wait;
        self.line.quiet(t).map_err(|error| LinkError::Io { device: self.line.name(), what: "waiting for the line to go quiet".into(), error })
    }

    /// Resets the board and checks it holds the block `expected` describes, freshly reset.
    pub fn connect(&mut self, expected: &Expected) -> Result<BoardInfo, LinkError> {
        self.recover()?;
        let info = self.info()?;
        if info.version != board::PROTOCOL_VERSION || info.block_id != expected.block_id || info.in_bits != expected.in_bits || info.out_bits != expected.out_bits {
            return Err(LinkError::WrongBlock { device: self.line.name(), expected: expected.clone(), got: info });
        }
        self.reset()?;
        let info = self.info()?;
        if info.steps != 0 {
            return Err(LinkError::NotReset { device: self.line.name(), steps: info.steps });
        }
        Ok(info)
    }
}

/// The board wrapper a block sits in (`mpgpu_rtl::board`), for the blocks that have one
/// ([`Ports::board`](crate::ports::Ports::board)): its Verilog, and a [`SimLink`] to its
/// simulation (the wrapper built afresh at every global reset).
pub trait Wrapper {
    fn verilog(&self) -> String;
    fn simulate(&self, baud: u32) -> Box<dyn Line>;
}

struct WrapperOf<B> {
    make: std::rc::Rc<dyn Fn() -> B>,
    divisor: u16,
}

impl<B: BoardTop + 'static> Wrapper for WrapperOf<B> {
    fn verilog(&self) -> String {
        rust_hdl::prelude::generate_verilog(&(self.make)())
    }
    fn simulate(&self, baud: u32) -> Box<dyn Line> {
        let make = self.make.clone();
        Box::new(SimLink::rust_hdl(move || make(), self.divisor, baud))
    }
}

/// The [`Wrapper`] that `make` builds with `config`.
pub fn wrapper<B: BoardTop + 'static>(config: BoardConfig, make: impl Fn() -> B + 'static) -> Box<dyn Wrapper> {
    Box::new(WrapperOf { make: std::rc::Rc::new(make), divisor: config.divisor })
}
