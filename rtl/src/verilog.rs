//! Verilog generation for the blocks, by name.

use mpgpu_spec::units::sched::{PolicyCode, MAX_SMS};
use rust_hdl::prelude::*;

/// The blocks `mpgpu verilog <block>` knows.
pub const BLOCKS: &[&str] = &["lowest_first", "dss", "prio", "sched", "oplog", "rq", "oldata", "zorua", "wf", "prof", "slice"];

/// What each block of [`BLOCKS`] is, in one line (the command line's help lists them).
pub fn describe(block: &str) -> &'static str {
    match block {
        "lowest_first" => "the lowest-index-first picker the scheduling blocks share",
        "dss" => "the framework's Dynamic Spatial Sharing policy engine alone",
        "prio" => "the framework's priority policy engine (FCFS, NPQ, PPQ) alone",
        "sched" => "the whole kernel scheduling framework: SMST, KSRT, PTBQs, SM driver, policy engines",
        "oplog" => "the operand log's bookkeeping (one per SM): entries, free list, per-block quotas",
        "rq" => "the replay queue (one per SM): faulted instructions kept for replay",
        "oldata" => "the operand log's data array (one per SM): 32 lane RAMs",
        "zorua" => "Zorua's coordinator and mapping tables (one per SM; the Fermi geometry)",
        "wf" => "Warped-Slicer's water-filling unit (one per GPU)",
        "prof" => "Warped-Slicer's sampling counters (one per SM)",
        "slice" => "the slice table: kernels sharing SMs under per-SM quotas (one per GPU)",
        _ => "",
    }
}

/// Whether a block is sized by the number of SMs it serves (`--sms`); the others are one SM's.
pub fn sized_by_sms(block: &str) -> bool {
    matches!(block, "dss" | "prio" | "sched" | "wf" | "slice")
}

/// Verilog for the named block, with its inputs marked as driven from outside (the scheduling
/// blocks sized for the largest GPU they support).
pub fn verilog_for(block: &str) -> Option<String> {
    verilog_sized(block, MAX_SMS).ok()
}

/// Verilog for the named block; the scheduling blocks (`dss`, `prio`, `sched`) are sized for
/// `sms` SMs.
pub fn verilog_sized(block: &str, sms: usize) -> Result<String, String> {
    if sized_by_sms(block) && !(1..=MAX_SMS).contains(&sms) {
        return Err(format!("--sms {sms}: the scheduling blocks support 1..={MAX_SMS} SMs"));
    }
    Ok(match block {
        "lowest_first" => {
            let mut uut = crate::LowestFirst::new();
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "dss" => {
            let mut uut = crate::Dss::new(sms, false);
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "prio" => {
            // PPQ shared keeps every path; the mode is a constant of the block.
            let mut uut = crate::Prio::new(sms, PolicyCode::PpqShared, false);
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "sched" => {
            // The whole framework, with both policy engines; the DSS engine drives it (the
            // priority engine's mode is a constant, PPQ shared keeps all of its paths).
            let mut uut = crate::Sched::new(sms, PolicyCode::Dss, crate::SchedFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "oplog" => {
            // One SM's operand-log bookkeeping at its largest: 64 entries (8 KB), 16 partitions.
            let mut uut = crate::Oplog::new(mpgpu_spec::units::oplog::MAX_ENTRIES, crate::OplogFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "rq" => {
            // One SM's replay queue at its largest: 128 slots.
            let mut uut = crate::Rq::new(mpgpu_spec::units::rq::MAX_SLOTS, crate::RqFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "oldata" => {
            // One SM's operand-log data array at its largest: 64 entries of 32 lanes x 32 bits
            // (8 KB).
            let mut uut = crate::Oldata::new(mpgpu_spec::units::oldata::MAX_ENTRIES, crate::OldataFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "zorua" => {
            // One SM's Zorua coordinator and mapping tables on the Fermi configuration: 48
            // warp slots, Algorithm 1's default constants (docs/zorua.md).
            let mut uut = crate::Zorua::new(crate::ZoruaParams { slots: 48, o_default: 2, o_thresh_step: 1, c_delta_thresh: 64 }, crate::ZoruaFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "wf" => {
            // Warped-Slicer's water-filling unit for `sms` SMs (16 by default).
            let mut uut = crate::Wf::new(sms, crate::WfFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "prof" => {
            // One SM's Warped-Slicer sampling counters.
            let mut uut = crate::Prof::new(crate::ProfFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        "slice" => {
            // The slice table for `sms` SMs of the Fermi (GTX 480) configuration's resources:
            // 8 CTA slots, 1,536 threads, 32,768 registers, 49,152 shared bytes.
            let mut uut = crate::Slice::new(sms, [8, 1536, 32768, 49152], crate::SliceFaults::default());
            uut.connect_inputs();
            generate_verilog(&uut)
        }
        _ => return Err(format!("unknown block `{block}`; blocks: {}", BLOCKS.join(", "))),
    })
}
