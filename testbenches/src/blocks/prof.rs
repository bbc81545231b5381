//! Warped-Slicer's sampling counters (`Prof`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::prof`).

use crate::hdl_block;
use super::wf::ws_fits;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::Run;
use crate::entry::{GpuKind, Host};
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

pub(super) const BLOCK: Block = Block {
    name: "prof",
    about: "Warped-Slicer's sampling counters (one per SM)",
    scope: Scope::PerSm,
    verilog: |_| Ok(v(ProfPorts { faults: Default::default() })),
    broken: &[variant("late-latch", "the counters latch one cycle after the window's last", |b| b.edit("prof", |f: &mut ProfFaults| f.late_latch = true))],
    host: Some(Host {
        about: "Warped-Slicer's sampling counters alone in RTL on every SM (or the SMs --sms names; the water-filling unit's model), under the Warped-Slicer dispatcher",
        gpu: GpuKind::Slicer,
        default_config: "gtx480",
        setup: |_| {},
        fits: ws_fits,
        install: |b| {
            let ports = ProfPorts { faults: b.o.broken.of("prof") };
            b.per_sm(ports, &mpgpu_ref::units::prof::Prof::default, mpgpu_ref::units::prof::Prof::state).map(Some)
        },
        soak: |_, cfg, _| vec![Run::fcfs(cfg, "")],
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun::of(crate::entry::TB_PAIR),
    }),
};
