//! Verilog generation for the blocks, by name.

use rust_hdl::prelude::*;

/// The blocks `mpgpu verilog <block>` knows.
pub const BLOCKS: &[&str] = &["lowest_first", "dss", "prio"];

/// Verilog for the named block, with its inputs marked as driven from outside.
pub fn verilog_for(block: &str) -> Option<String> {
    match block {
        "lowest_first" => {
            let mut uut = crate::LowestFirst::new();
            uut.connect_inputs();
            Some(generate_verilog(&uut))
        }
        "dss" => {
            let mut uut = crate::Dss::new(mpgpu_spec::units::sched::dss::MAX_SMS, false);
            uut.connect_inputs();
            Some(generate_verilog(&uut))
        }
        "prio" => {
            let mut uut = crate::Prio::new(mpgpu_spec::units::sched::dss::MAX_SMS, 3, false);
            uut.connect_inputs();
            Some(generate_verilog(&uut))
        }
        _ => None,
    }
}
