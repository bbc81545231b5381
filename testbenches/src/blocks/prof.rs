//! Warped-Slicer's sampling counters (`Prof`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::prof`).

use crate::hdl_block;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Prof, ProfFaults};
use mpgpu_spec::units::prof;

hdl_block!(Prof {
    inputs: [run, first, last, issued, stall, blocks_in],
    outputs: [insts, stalls, blocks],
    registers: [cnt_insts, cnt_stalls, lat_insts, lat_stalls, lat_blocks],
    arrays: [],
});

/// One SM's Warped-Slicer sampling counters (`Prof`), with test-only faults.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProfPorts {
    pub faults: ProfFaults,
}

impl Ports for ProfPorts {
    type In = prof::In;
    type Out = prof::Out;
    type State = prof::State;
    type Block = Prof;
    fn name(&self) -> String {
        "prof".into()
    }
    fn block(&self) -> Prof {
        let mut b = Prof::new(self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> prof::State {
        prof::State {
            cnt_insts: r.scalar("cnt_insts") as u32,
            cnt_stalls: r.scalar("cnt_stalls") as u32,
            insts: r.scalar("lat_insts") as u32,
            stalls: r.scalar("lat_stalls") as u32,
            blocks: r.scalar("lat_blocks") as u8,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
}
