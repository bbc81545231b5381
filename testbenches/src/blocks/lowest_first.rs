//! The lowest-index-first arbiter (`LowestFirst`): its ports and unit interface
//! (`mpgpu_spec::units::lowest_first`).

use crate::hdl_block;
use crate::entry::{v, Block, Scope};
use crate::ports::{Ports, Regs};
use mpgpu_rtl::LowestFirst;
use mpgpu_spec::units::lowest_first as lf;

hdl_block!(LowestFirst { inputs: [request], outputs: [valid, index], registers: [], arrays: [] });

/// The lowest-index-first arbiter.
#[derive(Clone, Copy, Debug, Default)]
pub struct LowestFirstPorts;

impl Ports for LowestFirstPorts {
    type In = lf::In;
    type Out = lf::Out;
    type State = ();
    type Block = LowestFirst;
    fn name(&self) -> String {
        "lowest_first".into()
    }
    fn block(&self) -> LowestFirst {
        let mut b = LowestFirst::new();
        b.connect_inputs();
        b
    }
    fn state(&self, _: &Regs) {}
}

pub(super) const BLOCK: Block = Block { name: "lowest_first", about: "the lowest-index-first picker the scheduling blocks share", scope: Scope::Part, verilog: |_| Ok(v(LowestFirstPorts)), broken: &[], host: None };
