//! LowestFirst: cycle behaviour against a software model, and synthesizability.

use mpgpu_rtl::LowestFirst;
use rust_hdl::prelude::*;

/// Drives one clock cycle: settle with `request`, rising edge, settle; returns (valid, index).
fn cycle(uut: &mut LowestFirst, request: u64) -> (bool, u64) {
    uut.request.next = request.into();
    uut.clock.next = Clock::from(false);
    assert!(simulate(uut, 100), "did not settle");
    uut.clock.next = Clock::from(true);
    assert!(simulate(uut, 100), "did not settle");
    (uut.valid.val(), uut.index.val().to_u64())
}

#[test]
fn grants_the_lowest_request_one_cycle_later() {
    let mut uut = LowestFirst::new();
    uut.connect_inputs();
    // A fixed pattern list plus a pseudo-random walk (xorshift, seed printed on failure).
    let mut x: u64 = 0x2545_f491;
    let mut reqs = vec![0u64, 1, 0x8000, 0xffff, 0x0100, 0x8001, 0];
    for _ in 0..500 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        reqs.push(x & 0xffff & (x >> 16));
    }
    for (n, &r) in reqs.iter().enumerate() {
        // Before the edge the outputs still show the previous grant.
        uut.request.next = r.into();
        assert!(simulate(&mut uut, 100));
        let before = uut.valid.val();
        let (valid, index) = cycle(&mut uut, r);
        assert_eq!(valid, r != 0, "cycle {n}: valid for request {r:#06x}");
        if r != 0 {
            assert_eq!(index, r.trailing_zeros() as u64, "cycle {n}: index for request {r:#06x}");
        }
        if n > 0 {
            assert_eq!(before, reqs[n - 1] != 0, "cycle {n}: output changed before the clock edge");
        }
    }
}

#[test]
fn the_verilog_check_rejects_a_latch() {
    // Proof that the check can fail: a combinational always block that does not assign its
    // output on every path infers a latch, which yosys's `check -assert` refuses.
    let latch = "module top(input wire en, input wire d, output reg q);\n always @(*) begin if (en) q = d; end\nendmodule\n";
    let e = mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("latch_negative"), latch).unwrap_err();
    assert!(e.contains("yosys failed"), "{e}");
}

#[test]
fn the_verilog_check_rejects_a_combinational_loop_across_modules() {
    let looped = "module inv(input wire a, output wire y); assign y = ~a; endmodule\n\
                  module top(input wire clock, output reg q); wire y; reg a; inv u(.a(a), .y(y));\n\
                  always @(*) a = y; always @(posedge clock) q <= a; endmodule\n";
    let e = mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("loop_negative"), looped).unwrap_err();
    assert!(e.contains("yosys failed"), "{e}");
}
