//! Warped-Slicer's water-filling unit (`Wf`, global): its ports and unit interface
//! (`mpgpu_spec::units::wf`).

use crate::hdl_block;
use crate::options::CosimOptions;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::Run;
use crate::entry::{identical_sms, GpuKind, Host};
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::slicer::Slicing;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Wf, WfFaults};
use mpgpu_spec::units::wf;

hdl_block!(Wf {
    inputs: [start, last, kernels, window, fallback_pct, delay, total0, total1, total2, total3, sm_k, sm_j, sm_insts, sm_stalls, k_req0, k_req1, k_req2, k_req3],
    outputs: [busy, round_wait, win_run, win_first, win_last, rd_sm, rd_k, done_out, quota0, quota1, quota2, quota3, spatial_out],
    registers: [
        phase, kern, last_r, window_r, pct, delay_r, wcount, since, sm, sub, k, j, sel, n, a, wa, dneg, dmag, f, acc, top, quo, valid, full, ma, mb, pr, qhi, cnt, bq, found, m_next, q_next,
        over, fit_r, res_spatial, done, spatial,
    ],
    arrays: [total, len, t, g, cur_q, need, rl, quota, prod_r, ph_r],
    memories: [score_ram, m_ram, qn_ram],
    flat: read_changed,
});

/// Warped-Slicer's water-filling unit (`Wf`) for `sms` SMs, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct WfPorts {
    pub sms: usize,
    pub faults: WfFaults,
}

impl Ports for WfPorts {
    type In = wf::In;
    type Out = wf::Out;
    type State = wf::State;
    type Block = Wf;
    fn name(&self) -> String {
        "wf".into()
    }
    fn block(&self) -> Wf {
        let mut b = Wf::new(self.sms, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> wf::State {
        let a4 = |n: &str| -> [u32; 4] { std::array::from_fn(|k| r.array(n)[k] as u32) };
        let b4 = |n: &str| -> [u8; 4] { std::array::from_fn(|k| r.array(n)[k] as u8) };
        wf::State {
            phase: r.scalar("phase") as u8,
            kernels: r.scalar("kern") as u8,
            last: r.scalar("last_r") != 0,
            window: r.scalar("window_r") as u16,
            pct: r.scalar("pct") as u8,
            delay: r.scalar("delay_r") as u16,
            total: a4("total"),
            wcount: r.scalar("wcount") as u16,
            since: r.scalar("since") as u16,
            sm: r.scalar("sm") as u8,
            sub: r.scalar("sub") as u8,
            k: r.scalar("k") as u8,
            j: r.scalar("j") as u8,
            sel: r.scalar("sel") as u8,
            n: r.scalar("n") as u8,
            a: r.scalar("a") as u16,
            wa: r.scalar("wa") as u32,
            dneg: r.scalar("dneg") != 0,
            dmag: r.scalar("dmag") as u16,
            f: r.scalar("f") as u32,
            acc: r.scalar("acc"),
            top: r.scalar("top"),
            q: r.scalar("quo") as u32,
            valid: r.scalar("valid"),
            len: b4("len"),
            t: b4("t"),
            g: b4("g"),
            cur_q: a4("cur_q"),
            full: r.scalar("full") as u8,
            ma: r.scalar("ma") as u32,
            mb: r.scalar("mb") as u32,
            pr: r.scalar("pr"),
            qhi: r.scalar("qhi") != 0,
            cnt: r.scalar("cnt") as u8,
            bq: r.scalar("bq") as u32,
            found: r.scalar("found") != 0,
            m_next: r.scalar("m_next") as u8,
            q_next: r.scalar("q_next") as u32,
            need: a4("need"),
            rl: a4("rl"),
            over: r.scalar("over") != 0,
            fit: r.scalar("fit_r") != 0,
            prod: std::array::from_fn(|k| (r.array("prod_r")[k] + r.array("ph_r")[k]) as u32),
            res_spatial: r.scalar("res_spatial") != 0,
            done: r.scalar("done") != 0,
            quota: b4("quota"),
            spatial: r.scalar("spatial") != 0,
            score: r.array("score_ram.mem").to_vec(),
            m: r.array("m_ram.mem").to_vec(),
            qn: r.array("qn_ram.mem").to_vec(),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a register's: `mpgpu_spec::units::wf`)
        Some(&[])
    }
}

pub(super) const BLOCK: Block = Block {
    name: "wf",
    about: "Warped-Slicer's water-filling unit (one per GPU)",
    scope: Scope::Gpu,
    verilog: |s| Ok(v(WfPorts { sms: s.sms, faults: Default::default() })),
    broken: &[variant("tie-high", "a tie at Select goes to the higher kernel index", |b| b.edit("wf", |f: &mut WfFaults| f.tie_high = true))],
    host: Some(Host {
        about: "Warped-Slicer's water-filling unit alone in RTL (the sampling counters' models on the SMs), under the Warped-Slicer dispatcher",
        gpu: GpuKind::Slicer,
        default_config: "gtx480",
        setup: |_| {},
        fits: |cfg, o| {
            if cfg.num_sms() as usize > wf::MAX_SMS {
                return Err(format!("--unit {}: the water-filling unit reads up to {} SMs; `{}` has {}", o.unit, wf::MAX_SMS, cfg.name, cfg.num_sms()));
            }
            ws_fits(cfg, o)
        },
        install: |b| {
            let ports = WfPorts { sms: b.n, faults: b.o.broken.of("wf") };
            b.global(ports, mpgpu_ref::units::wf::Wf::new(b.n), mpgpu_ref::units::wf::Wf::state, None).map(Some)
        },
        soak: |_, cfg, _| vec![Run::fcfs(cfg, "")],
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun::of(crate::entry::TB_PAIR),
    }),
};

/// Refuses a run that is not Warped-Slicer's on identical SMs (the water-filling unit's and the
/// sampling counters').
pub fn ws_fits(cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
    identical_sms(cfg, o)?;
    if o.slicing != Slicing::WarpedSlicer {
        let instead = if o.sliced { "give --slicing warped-slicer, or a list without wf and prof" } else { "use --unit slice" };
        return Err(format!("--unit {} runs under Warped-Slicer (the only policy that uses the water-filling unit and the sampling counters); --slicing {} has it idle: {instead}", o.unit, o.slicing.name()));
    }
    Ok(())
}
