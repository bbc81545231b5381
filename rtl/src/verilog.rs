//! Verilog generation for the blocks, by name.

use rust_hdl::prelude::*;

/// The blocks `mpgpu verilog <block>` knows.
pub const BLOCKS: &[&str] = &["lowest_first"];

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
        _ => None,
    }
}
