//! The slice table (`Slice`, global): its ports and unit interface (`mpgpu_spec::units::slice`).

use crate::hdl_block;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::slicing_runs;
use crate::entry::{identical_sms, GpuKind, Host};
use mpgpu_ref::timing::slicer::Slicer;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Slice, SliceFaults};
use mpgpu_spec::units::slice;

hdl_block!(Slice {
    inputs: [
        cmd_op, cmd_slot, cmd_sm, cmd_all, cmd_blocks, cmd_q0, cmd_q1, cmd_q2, cmd_q3, cmd_req0, cmd_req1, cmd_req2, cmd_req3, done_valid, done_sm, done_slot,
    ],
    outputs: [busy, issue_valid, issue_sm, issue_slot],
    registers: [valid, ptr, quiet, rd_valid, rd_sm, fv, fsm, iv, ism, isl, dv, dsm, dsl],
    arrays: [rank, left, r0, r1, r2, r3, l0, l1, l2, l3, inc0, inc1, inc2, inc3, dec0, dec1, dec2, dec3, n0, n1, n2, n3, t0, t1, t2, t3, ru, rn, rq, fe],
});

/// The slice table (`Slice`) for `sms` SMs of `total` resources, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct SlicePorts {
    pub sms: usize,
    pub total: [u32; slice::RES],
    pub faults: SliceFaults,
}

impl Ports for SlicePorts {
    type In = slice::In;
    type Out = slice::Out;
    type State = slice::State;
    type Block = Slice;
    fn name(&self) -> String {
        "slice".into()
    }
    fn block(&self) -> Slice {
        let mut b = Slice::new(self.sms, self.total, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> slice::State {
        use slice::{KMAX, MAX_SMS, RES};
        let a = |n: &str, k: usize| r.array(n)[k];
        let valid = r.scalar("valid");
        slice::State {
            // (the use is the issued requests' running sum less the completed ones')
            used: (0..MAX_SMS).map(|s| std::array::from_fn(|c| (a(&format!("inc{c}"), s).wrapping_sub(a(&format!("dec{c}"), s)) & ((1 << slice::RES_BITS) - 1)) as u32)).collect(),
            n: (0..MAX_SMS).map(|s| std::array::from_fn(|k| a(&format!("n{k}"), s) as u8)).collect(),
            quota: (0..MAX_SMS).map(|s| std::array::from_fn(|k| a(&format!("t{k}"), s) as u8)).collect(),
            valid: std::array::from_fn(|k| valid >> k & 1 != 0),
            rank: std::array::from_fn(|k| a("rank", k) as u8),
            left: std::array::from_fn(|k| a("left", k) as u32),
            req: std::array::from_fn(|k| std::array::from_fn(|c| a(&format!("r{c}"), k) as u32)),
            lim: std::array::from_fn(|k| std::array::from_fn(|c| a(&format!("l{c}"), k) as u32)),
            ptr: r.scalar("ptr") as u8,
            quiet: r.scalar("quiet") as u8,
            rd_valid: r.scalar("rd_valid") != 0,
            rd_sm: r.scalar("rd_sm") as u8,
            rd_used: std::array::from_fn::<u32, RES, _>(|c| a("ru", c) as u32),
            rd_n: std::array::from_fn::<u8, KMAX, _>(|k| a("rn", k) as u8),
            rd_q: std::array::from_fn::<u8, KMAX, _>(|k| a("rq", k) as u8),
            f_valid: r.scalar("fv") != 0,
            f_sm: r.scalar("fsm") as u8,
            f_e: std::array::from_fn::<bool, KMAX, _>(|k| a("fe", k) != 0),
            issue_valid: r.scalar("iv") != 0,
            issue_sm: r.scalar("ism") as u8,
            issue_slot: r.scalar("isl") as u8,
            d_valid: r.scalar("dv") != 0,
            d_sm: r.scalar("dsm") as u8,
            d_slot: r.scalar("dsl") as u8,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a register's: `mpgpu_spec::units::slice`)
        Some(&[])
    }
}

pub(super) const BLOCK: Block = Block {
    name: "slice",
    about: "the slice table: kernels sharing SMs under per-SM quotas (one per GPU)",
    scope: Scope::Gpu,
    // (the Fermi (GTX 480) configuration's resources: 8 CTA slots, 1,536 threads, 32,768
    // registers, 49,152 shared bytes)
    verilog: |s| Ok(v(SlicePorts { sms: s.sms, total: Slicer::sm_total(&s.cfg.sm[0]), faults: Default::default() })),
    broken: &[variant("over-quota", "the quota compare takes `<=` (an SM takes one block over a kernel's quota)", |b| b.edit("slice", |f: &mut SliceFaults| f.over_quota = true))],
    host: Some(Host {
        about: "the slice table (kernels sharing SMs under per-SM quotas: slots, quotas, resident counts, used resources, the issue) in RTL, under the slicing policy --slicing (default warped-slicer); every register compared every clocked cycle",
        gpu: GpuKind::Slicer,
        default_config: "gtx480",
        setup: |_| {},
        fits: |cfg, o| {
            if cfg.num_sms() as usize > slice::MAX_SMS {
                return Err(format!("--unit slice: the slice table holds up to {} SMs; `{}` has {}", slice::MAX_SMS, cfg.name, cfg.num_sms()));
            }
            identical_sms(cfg, o)?;
            let t = Slicer::sm_total(&cfg.sm[0]);
            if let Some(c) = (0..t.len()).find(|&c| t[c] >= 1 << slice::RES_BITS) {
                return Err(format!("--unit slice: `{}`'s SM resource {c} ({}) does not fit the table's {} bits", cfg.name, t[c], slice::RES_BITS));
            }
            Ok(())
        },
        install: |b| {
            let total = Slicer::sm_total(&b.cfg.sm[0]);
            let ports = SlicePorts { sms: b.n, total, faults: b.o.broken.of("slice") };
            b.global(ports, mpgpu_ref::units::slice::Slice::new(b.n, total), mpgpu_ref::units::slice::Slice::state, None).map(Some)
        },
        soak: |_, cfg, _| slicing_runs(cfg),
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun::of(crate::entry::TB_TWO),
    }),
};
