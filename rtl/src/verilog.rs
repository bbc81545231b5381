//! Verilog generation for the blocks, by name.

use rust_hdl::prelude::*;

/// The blocks `mpgpu verilog <block>` knows.
pub const BLOCKS: &[&str] = &["lowest_first", "dss"];

/// Verilog for the named block, with its inputs marked as driven from outside.
pub fn verilog_for(block: &str) -> Option<String> {
    match block {
        "lowest_first" => {
            let mut uut = crate::LowestFirst::new();
            uut.clock.connect();
            uut.request.connect();
            uut.connect_all();
            Some(generate_verilog(&uut))
        }
        "dss" => {
            let mut uut = crate::Dss::new(mpgpu_spec::units::sched::dss::MAX_SMS, false);
            uut.clock.connect();
            uut.trigger.connect();
            uut.sm_state.connect();
            uut.sm_ksr_valid.connect();
            uut.sm_ksr.connect();
            uut.k_valid.connect();
            uut.k_count.connect();
            uut.k_has_work.connect();
            uut.k_running.connect();
            uut.count_max.connect();
            uut.count_min.connect();
            uut.connect_all();
            Some(generate_verilog(&uut))
        }
        _ => None,
    }
}
