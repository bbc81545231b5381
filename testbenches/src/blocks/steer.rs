//! HeteroCore's steering unit (`Steer`, global): its ports and unit interface
//! (`mpgpu_spec::units::steer`).

use crate::entry::{v, variant, Block, GpuKind, Host, Scope, TbRun};
use crate::hdl_block;
use crate::ports::{Ports, Regs};
use crate::runs::Run;
use mpgpu_rtl::{Steer, SteerFaults};
use mpgpu_spec::units::steer;

hdl_block!(Steer {
    inputs: [now, warmup, window, policy, big_sms, small_sms, active, fresh, ends, start, stop, load, owners_in, issued, cb, cs, c0],
    outputs: [owners, modes, phase, decided, big, ended, big_insts0, big_insts1, big_insts2, big_insts3, small_insts0, small_insts1, small_insts2, small_insts3],
    registers: [ph, timer, prof, endm, lvalid, dec, bigr, step, lc, sc, wcq, dsq, sv, cbq, csq, c0q, xiq, xjq, diq, djq, fdq, fnq, fdnq, h16, h17, shl, k, pi, pj, m0, m1, m2, n0, n1, n2, a0, a1, a2, fast, res],
    arrays: [own, dsel, mode, bi, si, wc, last, lw, hb, hs, nbc, nsc, num, den, rank],
});

/// The steering unit (`Steer`), with test-only faults.
#[derive(Clone, Copy, Debug, Default)]
pub struct SteerPorts {
    pub faults: SteerFaults,
}

impl Ports for SteerPorts {
    type In = steer::In;
    type Out = steer::Out;
    type State = steer::State;
    type Block = Steer;
    fn name(&self) -> String {
        "steer".into()
    }
    fn block(&self) -> Steer {
        let mut b = Steer::new(self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> steer::State {
        let a = |n: &str, k: usize| r.array(n)[k];
        steer::State {
            owners: std::array::from_fn(|s| a("own", s) as u8),
            modes: std::array::from_fn(|s| a("mode", s) as u8),
            phase: r.scalar("ph") as u8,
            timer: r.scalar("timer") as u32,
            prof: r.scalar("prof") as u8,
            big_insts: std::array::from_fn(|k| a("bi", k) as u32),
            small_insts: std::array::from_fn(|k| a("si", k) as u32),
            sm_insts: std::array::from_fn(|s| a("wc", s) as u32),
            ended: r.scalar("endm") as u8,
            last_valid: r.scalar("lvalid") as u8,
            last_end: std::array::from_fn(|k| a("last", k) as u32),
            decided: r.scalar("dec") != 0,
            big: r.scalar("bigr") as u8,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a register's: `mpgpu_spec::units::steer`)
        Some(&[])
    }
}

/// The testbench's run: stencil and spmv on HeteroCore's GPU, long enough for two profiles of
/// the default lengths, the second giving the big SMs to stencil (four SMs drain).
pub const TB_STEER: &str = "description = \"the steering unit's testbench: stencil and spmv\"\n[[process]]\nname = \"stencil\"\nlaunches = [{ kernel = \"stencil\", size = 64, seed = 1 }]\n[[process]]\nname = \"spmv\"\nlaunches = [{ kernel = \"spmv\", size = 32768, seed = 1 }]\n";

pub(super) const BLOCK: Block = Block {
    name: "steer",
    about: "HeteroCore's steering unit: owner table, profiling counters and Algorithm 2's decision (one per GPU)",
    scope: Scope::Gpu,
    verilog: |_| Ok(v(SteerPorts::default())),
    broken: &[
        variant("short-window", "the profiling window ends a cycle early (its last cycle's issue uncounted)", |b| b.edit("steer", |f: &mut SteerFaults| f.short_window = true)),
        variant("unsigned-compare", "the decision compares the pairs' products unsigned (a loss ranks above a gain)", |b| b.edit("steer", |f: &mut SteerFaults| f.unsigned_compare = true)),
        variant("always-switch", "an SM changing owner always context-switches (the adaptive choice ignored)", |b| b.edit("steer", |f: &mut SteerFaults| f.always_switch = true)),
    ],
    host: Some(Host {
        about: "HeteroCore's steering unit (owner table, profiling counters, Algorithm 2's decision, preemption records) in RTL, under the steering dispatcher --steer (default dynamic; --steer-warmup, --steer-window, --steer-preempt); every register compared every clocked cycle",
        gpu: GpuKind::Steer,
        default_config: "heterocore",
        setup: |_| {},
        fits: |cfg, o| mpgpu_ref::timing::steer::check(cfg, &o.steer).and_then(|_| mpgpu_ref::timing::steer::check_policy(cfg, o.steering)).map_err(|e| format!("--unit {}: {e}", o.unit)),
        install: |b| b.global(SteerPorts { faults: b.o.broken.of("steer") }, mpgpu_ref::units::steer::Steer::default(), mpgpu_ref::units::steer::Steer::state, None).map(Some),
        soak: |_, cfg, _| steer_runs(cfg),
        lockstep_only: false,
        clock_gated: true,
        testbench: TbRun::of(TB_STEER),
    }),
};

/// The steering unit's soak runs: dynamic steering under each preemption policy.
fn steer_runs(cfg: &mpgpu_ref::config::GpuConfig) -> Vec<Run> {
    use mpgpu_ref::timing::steer::Preempt;
    use mpgpu_ref::timing::steer::SteerParams;
    // (profiles of 2,000 + 2,000 cycles, so that a soak's short workloads see decisions)
    let run = |p: Preempt| Run { steer: SteerParams { warmup: 2000, window: 2000, preempt: p }, ..Run::fcfs(cfg, format!("--steer-warmup 2000 --steer-window 2000 --steer-preempt {}", p.name())) };
    [Preempt::Adaptive, Preempt::Drain, Preempt::Switch].into_iter().map(run).collect()
}
