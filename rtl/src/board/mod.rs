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
//!
//! The files: `uart` (the UART and the checksum block), `link` (the protocol engine), `wrap`
//! (the wrapper macro and what it uses); the wrappers built here and the ULX3S top level are
//! below.

mod link;
mod uart;
mod wrap;

pub use link::{LinkState, StepLink};
pub use uart::{Crc8, RxState, UartRx, UartTx};
pub use wrap::{glue_verilog, Pack, PortWord, Unpack};

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

crate::board_block!(
    /// The DSS policy engine behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardDss(Dss) {
        inputs: [trigger: 1, sm_state: 2, sm_ksr_valid: 1, sm_ksr: 4, k_valid: 1, k_count: 8, k_has_work: 1, k_running: 1, count_max: 8, count_min: 8],
        outputs: [busy: 1, next_addr: 4, kmax: 4, kmin: 4, act: 2, act_sm: 4, act_kernel: 4, act_from: 4],
    }
);

crate::board_block!(
    /// The priority policies' scan engine behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardPrio(Prio) {
        inputs: [trigger: 1, sm_state: 2, sm_ksr_valid: 1, sm_ksr: 4, smk_priority: 4, smk_age: 16, k_valid: 1, k_has_work: 1, k_priority: 4, k_age: 16, k_wants_more: 1],
        outputs: [busy: 1, next_addr: 4, act: 2, act_sm: 4, act_kernel: 4, act_from: 4],
    }
);

crate::board_block!(
    /// The whole scheduling framework behind the step protocol (ports as `mpgpu_tb::blocks`).
    pub struct BoardSched(Sched) {
        inputs: [cmd_valid: 1, cmd_handle: 16, cmd_tbs: 20, cmd_tk: 5, cmd_priority: 4, cmd_tokens: 8, done_valid: 1, done_sm: 4, done_k: 4, saved_valid: 1, saved_sm: 4, saved_k: 4, saved_tb: 20, saved_slot: 8, full: 16, quota_valid: 1, quota_handle: 16, quota_on: 1, quota0: 5, quota1: 5, quota2: 5, quota3: 5, quota4: 5, quota5: 5, quota6: 5, quota7: 5, quota8: 5, quota9: 5, quota10: 5, quota11: 5, quota12: 5, quota13: 5, quota14: 5, quota15: 5],
        outputs: [busy: 1, cmd_taken: 1, issue_valid: 1, issue_sm: 4, issue_k: 4, issue_handle: 16, issue_tb: 20, issue_restore: 1, issue_slot: 8, preempt_valid: 1, preempt_sm: 4, retired_valid: 1, retired_handle: 16],
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
        assert_eq!(BoardSched::IN_BITS, 214);
        assert_eq!(BoardSched::OUT_BITS, 78);
        assert_eq!(reply_bits(27), 8 * (3 + 13));
        assert_eq!(reply_bits(78), 8 * (3 + 20));
        let b = BoardDss::new(Dss::new(16, false), BoardConfig::simulation(7));
        assert_eq!(b.uut.k_count.bits(), 8);
    }
}
