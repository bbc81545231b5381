//! The admission unit (`Admit`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::admit`).

use crate::entry::{identical_sms, v, variant, Block, GpuKind, Host, Scope};
use crate::hdl_block;
use crate::options::CosimOptions;
use crate::ports::{Ports, Regs};
use crate::runs::{policy_runs, Run};
use mpgpu_ref::config::GpuConfig;
use mpgpu_rtl::{Admit, AdmitFaults};
use mpgpu_spec::units::admit::{self, Params};

hdl_block!(Admit {
    inputs: [rows, warps, user, spill, alloc, slot, free],
    outputs: [fits, rf_base, sh_base, sp_base, rf_move, sh_move],
    registers: [valid, cap, top_r, top_s],
    arrays: [rf_b, rf_l, sh_b, sh_l, wp],
});

/// One SM's admission unit for an SM of parameters `params`, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct AdmitPorts {
    pub params: Params,
    pub faults: AdmitFaults,
}

impl Ports for AdmitPorts {
    type In = admit::In;
    type Out = admit::Out;
    type State = admit::State;
    type Block = Admit;
    fn name(&self) -> String {
        "admit".into()
    }
    fn block(&self) -> Admit {
        let mut b = Admit::new(&self.params, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> admit::State {
        let a = |n: &str| r.array(n).iter().map(|&x| x as u32).collect();
        admit::State { valid: r.scalar("valid"), rf_base: a("rf_b"), rf_len: a("rf_l"), sh_base: a("sh_b"), sh_len: a("sh_l"), warps: a("wp"), cap: r.scalar("cap") as u32, top_rf: r.scalar("top_r") as u32, top_sh: r.scalar("top_s") as u32 }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (all but the slot a placement names)
        Some(&["rows", "warps", "user", "spill", "alloc", "free"])
    }
}

/// The unit's parameters for `cfg`'s SM; an error names what the RTL cannot take.
pub fn admit_params(cfg: &GpuConfig) -> Result<Params, String> {
    let p = mpgpu_ref::units::admit::params(&cfg.sm[0]);
    p.rtl_limits().map_err(|e| format!("`{}`: {e}", cfg.name))?;
    Ok(p)
}

/// Whether the RTL admission unit can run on `cfg`.
pub fn admit_fits(cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
    if cfg.alloc != mpgpu_ref::config::Alloc::Block {
        return Err(format!("--unit admit: under alloc = \"{}\" the coordinator admits blocks (`{}`; the admission unit serves alloc = \"block\")", cfg.alloc.name(), cfg.name));
    }
    identical_sms(cfg, o)?;
    admit_params(cfg).map(drop).map_err(|e| format!("--unit admit: {e}"))
}

pub(super) const BLOCK: Block = Block {
    name: "admit",
    about: "the admission unit (one per SM): whether a block fits, and its register-file and shared-memory ranges",
    scope: Scope::PerSm,
    verilog: |s| Ok(v(AdmitPorts { params: admit_params(s.cfg)?, faults: Default::default() })),
    broken: &[
        variant("no-bypass", "a block's end frees its room a cycle late (the cycle's frees not seen)", |b| b.edit("admit", |f: &mut AdmitFaults| f.no_bypass = true)),
        variant("no-pack", "a block goes at the bump pointer even when the room above it does not hold it (no packing)", |b| b.edit("admit", |f: &mut AdmitFaults| f.no_pack = true)),
    ],
    host: Some(Host {
        about: "the admission unit in RTL on every SM (or the SMs --sms names), with the baseline dispatcher or the framework (--framework); the RTL is generated for the configuration's SM",
        gpu: GpuKind::PerSm,
        default_config: "gtx480",
        setup: |_| {},
        fits: admit_fits,
        install: |b| {
            let params = admit_params(b.cfg)?;
            let ports = AdmitPorts { params, faults: b.o.broken.of("admit") };
            b.per_sm(ports, &|| mpgpu_ref::units::admit::Admit::new(params), mpgpu_ref::units::admit::Admit::state).map(Some)
        },
        // (the baseline dispatcher, and the framework under every policy and mechanism: its
        // preemptions free and place blocks beside the dispatcher's)
        soak: |_, cfg, _| {
            let fw = policy_runs(cfg, |_| true).into_iter().map(|r| Run { framework: true, variant: format!("--framework --policy {} --preempt {}", r.policy.name(), r.mechanism.name()), ..r });
            std::iter::once(Run::fcfs(cfg, "")).chain(fw).collect()
        },
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun::of(crate::entry::TB_ADMIT),
    }),
};
