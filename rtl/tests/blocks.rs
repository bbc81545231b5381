//! LowestFirst: cycle behaviour against a software model, and synthesizability.

use mpgpu_rtl::verilog::verilog_for;
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
fn lowest_first_synthesizes() {
    let v = verilog_for("lowest_first").unwrap();
    assert!(v.contains("module top"));
    yosys_validate("mpgpu_lowest_first", &v).unwrap_or_else(|e| panic!("yosys rejected lowest_first: {e:?}"));
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("lowest_first"), &v).unwrap_or_else(|e| panic!("{e}"));
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

#[test]
fn dss_synthesizes_and_lints() {
    let v = verilog_for("dss").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("dss"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn prio_synthesizes_and_lints() {
    let v = verilog_for("prio").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("prio"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_scheduling_framework_synthesizes_and_lints() {
    let v = verilog_for("sched").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("sched"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_scheduling_blocks_synthesize_for_13_sms() {
    for block in ["dss", "prio", "sched"] {
        let v = mpgpu_rtl::verilog::verilog_sized(block, 13).unwrap();
        mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir(&format!("{block}13")), &v).unwrap_or_else(|e| panic!("{block}: {e}"));
    }
    assert!(mpgpu_rtl::verilog::verilog_sized("dss", 17).is_err());
}

#[test]
fn the_operand_log_synthesizes_and_lints() {
    let v = verilog_for("oplog").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("oplog"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_operand_log_data_array_synthesizes_and_lints() {
    let v = verilog_for("oldata").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("oldata"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_replay_queue_synthesizes_and_lints() {
    let v = verilog_for("rq").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("rq"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_zorua_coordinator_synthesizes_and_lints() {
    let v = verilog_for("zorua").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("zorua"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_water_filling_unit_synthesizes_and_lints() {
    let v = mpgpu_rtl::verilog::verilog_for("wf").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("wf"), &v).unwrap_or_else(|e| panic!("{e}"));
    // For 15 SMs (the Fermi configuration) too.
    let v = mpgpu_rtl::verilog::verilog_sized("wf", 15).unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("wf15"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_sampling_counters_synthesize_and_lint() {
    let v = mpgpu_rtl::verilog::verilog_for("prof").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("prof"), &v).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn slice_table_is_clean_for_16_and_15_sms() {
    let v = mpgpu_rtl::verilog::verilog_for("slice").unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("slice"), &v).unwrap_or_else(|e| panic!("{e}"));
    let v = mpgpu_rtl::verilog::verilog_sized("slice", 15).unwrap();
    mpgpu_rtl::check::check_verilog(&mpgpu_rtl::check::check_dir("slice15"), &v).unwrap_or_else(|e| panic!("{e}"));
}
