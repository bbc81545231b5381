//! The replay queue (`Rq`, one per SM): its ports and unit interface (`mpgpu_spec::units::rq`).

use crate::hdl_block;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::fault_runs;
use crate::entry::{identical_sms, GpuKind, Host};
use mpgpu_ref::config::FaultScheme;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Rq, RqFaults};
use mpgpu_spec::units::rq;

hdl_block!(Rq {
    inputs: [free_lo, free_hi, fault_lo, fault_hi, issue, replay, replay_idx, warp, pc, exec, age, log0, log1, log2, nlog, rd_idx],
    outputs: [full, alloc_idx, replay_ok, rd_warp, rd_pc, rd_exec, rd_age, rd_log0, rd_log1, rd_log2, rd_nlog],
    registers: [],
    arrays: [valid, faulted],
    memories: [warp_ram, age_ram, exec_ram, info_ram],
    flat: read_changed,
});

/// One SM's replay queue (`Rq`) of `slots` slots, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct RqPorts {
    pub slots: usize,
    pub faults: RqFaults,
}

impl Ports for RqPorts {
    type In = rq::In;
    type Out = rq::Out;
    type State = rq::State;
    type Block = Rq;
    fn name(&self) -> String {
        "rq".into()
    }
    fn block(&self) -> Rq {
        let mut b = Rq::new(self.slots, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> rq::State {
        rq::State {
            valid: r.array("valid").to_vec(),
            faulted: r.array("faulted").to_vec(),
            warp: r.array("warp_ram.mem").to_vec(),
            age: r.array("age_ram.mem").to_vec(),
            exec: r.array("exec_ram.mem").to_vec(),
            info: r.array("info_ram.mem").to_vec(),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are the registers' and the read ports': `mpgpu_spec::units::rq`; the
        // broken `early_free` lets this cycle's `free` through)
        if self.faults.early_free {
            None
        } else {
            Some(&["replay_idx", "rd_idx"])
        }
    }
}

pub(super) const BLOCK: Block = Block {
    name: "rq",
    about: "the replay queue (one per SM): faulted instructions kept for replay",
    scope: Scope::PerSm,
    verilog: |_| Ok(v(RqPorts { slots: rq::MAX_SLOTS, faults: Default::default() })),
    broken: &[
        variant("early-free", "a slot is free one cycle early (the commit's free reaches the allocation)", |b| b.edit("rq", |f: &mut RqFaults| f.early_free = true)),
        variant("wrong-slot", "a replay clears the faulted bit of the read port's slot, not its own", |b| b.edit("rq", |f: &mut RqFaults| f.wrong_slot = true)),
    ],
    host: Some(Host {
        about: "the replay queue in RTL on every SM (or the SMs --sms names), under the replay-queue fault scheme (implied; --faults ol runs it with the operand log) with the baseline dispatcher; needs the thesis's pipeline (--config thesis16, or --pipeline thesis)",
        gpu: GpuKind::PerSm,
        default_config: "thesis16",
        // (the operand log's scheme has the replay queue too)
        setup: |cfg| {
            if cfg.faults != FaultScheme::Ol {
                cfg.faults = FaultScheme::Rq
            }
        },
        fits: |cfg, o| {
            if !matches!(cfg.faults, FaultScheme::Rq | FaultScheme::Ol) {
                return Err(format!("--unit rq: the replay queue is used under faults = \"rq\" or \"ol\" (`{}` runs \"{}\"; add --faults rq)", cfg.name, cfg.faults.name()));
            }
            identical_sms(cfg, o)
        },
        install: |b| {
            let slots = b.cfg.sm[0].rq_entries;
            let ports = RqPorts { slots: slots as usize, faults: b.o.broken.of("rq") };
            b.per_sm(ports, &|| mpgpu_ref::units::rq::Rq::new(slots), mpgpu_ref::units::rq::Rq::state).map(Some)
        },
        soak: fault_runs,
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun { inject: 0.05, ..crate::entry::TbRun::of(crate::entry::TB_ONE) },
    }),
};
