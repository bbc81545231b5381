//! The whole scheduling framework's RTL (`Sched`) in the loop of the whole GPU, the reference
//! model beside it: outputs, SMST, KSRT, PTBQ occupancy and tokens agree every cycle for every
//! policy and preemption mechanism, every output verifies, and each broken RTL variant is caught
//! at the first differing cycle with the field named.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::slots::{Held, Hosted, ModelRef};
use mpgpu_ref::units::framework::{Framework, Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::SchedFaults;
use mpgpu_spec::units::sched::dss::{STATE_IDLE, STATE_RESERVED, STATE_RUNNING, STATE_SETUP};
use mpgpu_spec::units::sched::fw::{In, Out, State};
use mpgpu_spec::Unit;
use mpgpu_tb::cosim::{run_sched, run_with, CosimOptions, CosimReport};
use mpgpu_tb::Backend;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

mod common;
use common::TWO;


const POLICIES: [Policy; 6] = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
const MECHANISMS: [Mechanism; 2] = [Mechanism::ContextSwitch, Mechanism::Drain];

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("sched_cosim")
}

fn clean(rep: &CosimReport, what: &str) {
    if let Some(m) = &rep.mismatch {
        panic!("{what}: {m}");
    }
    let r = rep.result.as_ref().unwrap_or_else(|| panic!("{what}: {:?}", rep.error));
    assert!(r.processes.iter().all(|p| p.verified), "{what}: {:?}", r.processes);
    assert!(rep.cycles_checked > 1000, "{what}: {} cycles", rep.cycles_checked);
}

/// (preemptions, restores) of a run.
fn counts(r: &RunResult) -> (u64, u64) {
    (r.preemptions, r.restores)
}

/// The preemption counts a run must show: none for the non-preemptive policies, no restores
/// when draining, and, where the workload is meant to preempt (`preempts`), at least one
/// preemption, and with context switching at least one restore.
fn check_preemption(r: &RunResult, p: Policy, m: Mechanism, preempts: bool, what: &str) {
    let (preemptions, restores) = counts(r);
    if matches!(p, Policy::Fcfs | Policy::Npq) {
        assert_eq!((preemptions, restores), (0, 0), "{what}: {p:?} is not preemptive");
        return;
    }
    if m == Mechanism::Drain {
        assert_eq!(restores, 0, "{what}: draining restored blocks");
    }
    if preempts {
        assert!(preemptions > 0, "{what}: the run preempted nothing");
        if m == Mechanism::ContextSwitch {
            assert!(restores > 0, "{what}: {preemptions} preemptions, nothing restored");
        }
    }
}

/// Every policy and mechanism in lockstep on TWO, with preemption in play: every preemptive
/// policy (PPQ exclusive and shared, DSS, Equal) takes SMs from lbm for sgemm, and with context
/// switching restores saved blocks, so the comparison covers saves, PTBQs and restores.
#[test]
fn every_policy_and_mechanism_in_lockstep_on_two_processes() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    for p in POLICIES {
        for m in MECHANISMS {
            let rep = run_sched(&cfg, &w, p, m, SchedFaults::default(), false, None, &dir().join("unused.vcd")).unwrap();
            let what = format!("{p:?} {m:?}");
            clean(&rep, &what);
            check_preemption(rep.result.as_ref().unwrap(), p, m, true, &what);
        }
    }
}

/// The reference framework, watching every cycle for the first one where a given fault must
/// show: `watch(cycle, state at the start of the cycle before, state before the edge,
/// outputs, state after the edge)` returns the cycle and field at which the faulty RTL parts
/// from the model.
struct Watch {
    fw: Framework,
    found: Rc<RefCell<Option<(u64, String)>>>,
    watch: Probe,
    /// The state at the start of the last clocked cycle.
    prev: State,
}

type Probe = fn(u64, &State, &State, &Out, &State) -> Option<(u64, String)>;

impl Unit for Watch {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.fw.reset();
    }
    fn outputs(&self, i: &In) -> Out {
        self.fw.outputs(i)
    }
    fn clock(&mut self, i: &In) {
        let (cycle, before, out) = (self.fw.cycle, self.fw.state(), self.fw.outputs(i));
        self.fw.clock(i);
        if self.found.borrow().is_none() {
            *self.found.borrow_mut() = (self.watch)(cycle, &self.prev, &before, &out, &self.fw.state());
        }
        self.prev = before;
    }
}

impl Hosted for Watch {
    fn model(&self) -> Option<ModelRef<'_>> {
        Some(ModelRef::of(&self.fw))
    }
    fn quiet(&self) -> bool {
        !self.fw.busy()
    }
}

fn expected(cfg: &GpuConfig, w: &Workload, p: Policy, m: Mechanism, watch: Probe) -> (u64, String) {
    let found = Rc::new(RefCell::new(None));
    let f = found.clone();
    let mut gpu = Gpu::with_framework(cfg, p, m, w.processes.len()).unwrap();
    let fw = Framework::new(Gpu::framework_params(cfg).unwrap(), p, m);
    let mut unit = Some(Watch { fw, found: f.clone(), watch, prev: State::default() });
    gpu.set_units(&mut |_| Box::new(unit.take().expect("one framework")) as Held<In, Out>).unwrap();
    gpu.add_workload(w).unwrap();
    gpu.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
    let r = found.borrow().clone();
    r.expect("the workload never exercises the fault")
}

/// LIFO first differs where a restore pops a PTBQ holding two or more blocks. The issue's
/// outputs are registered, so the block on the ports now was popped in the cycle before, from
/// the queue as it was then.
fn first_deep_pop(cycle: u64, prev: &State, _: &State, out: &Out, _: &State) -> Option<(u64, String)> {
    let i = out.issue.filter(|i| i.restore)?;
    let k = prev.smst[i.sm as usize].ksr as usize;
    (prev.ksrt[k].ptbq_len >= 2).then(|| (cycle, "issue.tb".to_string()))
}

/// A kept token first shows in the state after an SM is released (running or reserved to
/// idle) while the kernel the token goes back to stays valid.
fn first_token_return(cycle: u64, _: &State, before: &State, _: &Out, after: &State) -> Option<(u64, String)> {
    for (b, a) in before.smst.iter().zip(&after.smst) {
        let k = match b.state {
            STATE_RUNNING => b.ksr,
            STATE_RESERVED if b.next_valid => b.next,
            _ => continue,
        } as usize;
        if a.state == STATE_IDLE && after.ksrt[k].valid {
            return Some((cycle + 1, format!("state.ksrt[{k}].count")));
        }
    }
    None
}

/// The mismatch marker's rising line (`1<id>`) in a waveform's text.
fn marker(text: &str) -> String {
    let decl = text.lines().find(|l| l.ends_with(" mismatch $end")).expect("the waveform has no mismatch marker");
    format!("1{}", decl.split_whitespace().nth(3).unwrap())
}

/// The fault is caught at the cycle and field the model predicts, on rust-hdl's simulation and,
/// in the long tier, on the Verilated Verilog too (each broken variant is a model of its own to
/// compile, 30 s for the framework; the harness's tests catch the policy engines' broken
/// variants on Verilator in the default suite).
fn broken(p: Policy, m: Mechanism, faults: SchedFaults, watch: Probe) {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    let (cycle, field) = expected(&cfg, &w, p, m, watch);
    let field = format!("sched.{field}");
    for &backend in common::BROKEN_BACKENDS {
        let path = dir().join(format!("mismatch-{}-{backend}.vcd", p.name()));
        let o = CosimOptions { broken: mpgpu_tb::broken::Broken::default().with("sched", faults), backend, mismatch_vcd: path.clone(), ..CosimOptions::new(p, m) };
        let rep = run_with(&cfg, &w, &o).unwrap();
        let mm = rep.mismatch.unwrap_or_else(|| panic!("{backend}: {faults:?} went unnoticed"));
        assert_eq!(mm.cycle, cycle, "{backend}: {faults:?}: {mm}");
        assert!(mm.diffs.iter().any(|d| d.field == field), "{backend}: {faults:?}: expected {field}: {mm}");
        assert_eq!(mm.history.len(), 17, "the report shows the 16 cycles before the mismatch and the mismatch");
        assert!(rep.error.as_ref().is_some_and(|e| e.to_string().contains("co-simulation stopped")), "the run did not stop at the mismatch: {:?}", rep.error);
        assert_eq!(rep.vcd.as_deref(), Some(path.as_path()));
        // The marker rises in the waveform at the mismatch's GPU cycle.
        let text = std::fs::read_to_string(&path).unwrap();
        let rise = marker(&text);
        let mut now = 0;
        let at = text.lines().find_map(|l| {
            if let Some(t) = l.strip_prefix('#') {
                now = t.parse::<u64>().unwrap() / mpgpu_tb::vcd::CYCLE;
            }
            (l == rise).then_some(now)
        });
        assert_eq!(at, mm.time, "{backend}: the marker rises at the mismatch's GPU cycle");
        assert!(std::fs::read_to_string(path.with_extension("gtkw")).unwrap().contains("sched.mismatch"));
    }
}

#[test]
fn a_ptbq_popped_last_in_first_out_is_caught_where_it_first_differs() {
    broken(Policy::PpqExclusive, Mechanism::ContextSwitch, SchedFaults { ptbq_lifo: true, ..Default::default() }, first_deep_pop);
}

#[test]
fn a_token_not_returned_is_caught_where_it_first_differs() {
    broken(Policy::Equal, Mechanism::Drain, SchedFaults { keep_token: true, ..Default::default() }, first_token_return);
}

#[test]
fn every_cycle_without_clock_gating_matches_too() {
    let cfg = GpuConfig::preset("gtx480").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    // (equal sharing with draining too in the long tier)
    let pairs: &[(Policy, Mechanism)] = if cfg!(feature = "long") { &[(Policy::PpqShared, Mechanism::ContextSwitch), (Policy::Equal, Mechanism::Drain)] } else { &[(Policy::PpqShared, Mechanism::ContextSwitch)] };
    for &(p, m) in pairs {
        let gated = run_sched(&cfg, &w, p, m, SchedFaults::default(), false, None, &dir().join("unused.vcd")).unwrap();
        let every = run_sched(&cfg, &w, p, m, SchedFaults::default(), true, None, &dir().join("unused.vcd")).unwrap();
        clean(&every, &format!("{p:?} {m:?} every cycle"));
        let (g, e) = (gated.result.unwrap(), every.result.as_ref().unwrap());
        // Both workloads preempt (PPQ shared with context switch restores too).
        check_preemption(e, p, m, true, &format!("{p:?} {m:?} every cycle"));
        assert_eq!(counts(&g), counts(e), "{p:?} {m:?}: gating changed the preemptions");
        // Gating an idle framework changes nothing: the same run, cycle for cycle.
        assert_eq!(g.cycles, e.cycles);
        assert_eq!(serde_json::to_string(&g.processes).unwrap(), serde_json::to_string(&e.processes).unwrap());
        assert_eq!(every.cycles_checked, e.cycles, "every GPU cycle checked");
        assert!(gated.cycles_checked < every.cycles_checked / 2, "gating saved little: {} of {}", gated.cycles_checked, every.cycles_checked);
    }
}

/// Every policy and mechanism on one shipped workload, on both presets, with the RTL on both
/// backends (rust-hdl's simulation and the Verilated Verilog); `preempts`: the workload makes
/// every preemptive policy preempt (and restore, with context switching). The two backends
/// drive the GPU to the same results.
fn shipped(file: &str, preempts: bool, presets: &[&str], only: Option<&[(Policy, Mechanism)]>) {
    let w = Workload::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads").join(file)).unwrap();
    for &preset in presets {
        let cfg = GpuConfig::preset(preset).unwrap();
        for p in POLICIES {
            for m in MECHANISMS.into_iter().filter(|&m| only.is_none_or(|o| o.contains(&(p, m)))) {
                let mut results = Vec::new();
                for backend in [Backend::RustHdl, Backend::Verilator] {
                    let o = CosimOptions { backend, mismatch_vcd: dir().join("unused.vcd"), ..CosimOptions::new(p, m) };
                    let rep = run_with(&cfg, &w, &o).unwrap();
                    let what = format!("{preset} {file} {p:?} {m:?} on {backend}");
                    clean(&rep, &what);
                    check_preemption(rep.result.as_ref().unwrap(), p, m, preempts, &what);
                    results.push((rep.cycles_checked, serde_json::to_string(&rep.result.unwrap().processes).unwrap()));
                }
                assert_eq!(results[0], results[1], "{preset} {file} {p:?} {m:?}: the backends drove the GPU differently");
            }
        }
    }
}

#[test]
fn shipped_two_process_workload_in_lockstep() {
    // Every policy and mechanism, and gtx480 (15 SMs), in the long tier; otherwise PPQ
    // exclusive with both mechanisms, on k20c (the policy is a parameter of the Verilog, so
    // each is a Verilator model to build). `cosim.rs` runs the policy engine on both presets;
    // `every_policy_and_mechanism_in_lockstep_on_two_processes` every pair on rust-hdl.
    if cfg!(feature = "long") {
        shipped("two-compute-memory.toml", false, &["k20c", "gtx480"], None);
    } else {
        shipped("two-compute-memory.toml", false, &["k20c"], Some(&[(Policy::PpqExclusive, Mechanism::ContextSwitch), (Policy::PpqExclusive, Mechanism::Drain)]));
    }
}

/// The framework's RTL on HeteroCore's SMs of two kinds (T_k the big SM's, the small SMs
/// reporting through `full` when their own resources have no room): the default workload in
/// lockstep on both backends under DSS with context switching, SMs preempted and restored
/// across the kinds, and the small SMs' reports masking them out of issues (blocks waiting in
/// their inboxes). Every policy in the long tier.
#[test]
fn the_framework_runs_in_lockstep_on_two_kinds_of_sm() {
    let cfg = GpuConfig::preset("heterocore").unwrap();
    let w = Workload::default_workload();
    let all: Vec<(Policy, Mechanism)> = POLICIES.iter().flat_map(|&p| MECHANISMS.map(|m| (p, m))).collect();
    let runs = if cfg!(feature = "long") { all } else { vec![(Policy::Dss, Mechanism::ContextSwitch)] };
    for (p, m) in runs {
        let mut results = Vec::new();
        for backend in [Backend::RustHdl, Backend::Verilator] {
            let o = CosimOptions { backend, mismatch_vcd: dir().join("unused.vcd"), ..CosimOptions::new(p, m) };
            let rep = run_with(&cfg, &w, &o).unwrap();
            let what = format!("heterocore {p:?} {m:?} on {backend}");
            clean(&rep, &what);
            let r = rep.result.as_ref().unwrap();
            check_preemption(r, p, m, p == Policy::Dss, &what);
            assert!(r.fw_full_cycles > 0 && r.fw_inbox_blocks > 0, "{what}: no SM reported itself full");
            results.push((rep.cycles_checked, serde_json::to_string(&r.processes).unwrap()));
        }
        assert_eq!(results[0], results[1], "heterocore {p:?} {m:?}: the backends drove the GPU differently");
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn shipped_four_process_workload_in_lockstep() {
    shipped("four-mix.toml", true, &["k20c", "gtx480"], None);
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn shipped_eight_process_workload_in_lockstep() {
    shipped("eight-mix.toml", false, &["k20c", "gtx480"], None);
}

#[test]
fn the_waveform_parses_back_with_the_values_of_both_sides() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    let path = dir().join("run.vcd");
    let rep = run_sched(&cfg, &w, Policy::PpqExclusive, Mechanism::ContextSwitch, SchedFaults::default(), false, Some(&path), &dir().join("x.vcd")).unwrap();
    clean(&rep, "waveform run");
    let mut p = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let h = p.parse_header().unwrap();
    let id = |path: &[&str]| match h.find_var(path) {
        Some(v) => v.code,
        None => panic!("no {path:?} in the waveform"),
    };
    let pairs: Vec<(vcd::IdCode, vcd::IdCode)> =
        ["cmd_taken", "issue_valid", "issue_sm", "issue_handle", "issue_tb", "issue_restore", "preempt_valid", "preempt_sm", "retired_valid", "busy"]
            .iter()
            .map(|s| (id(&["sched", "out", s]), id(&["sched", "expected", s])))
            .collect();
    // The KSRT entry as read back from the registers, and the register itself in rust-hdl's
    // hierarchy.
    let (k0_valid, mismatch) = (id(&["sched", "state", "ksrt_0", "valid"]), id(&["sched", "mismatch"]));
    id(&["uut", "ksrt", "k_valid$0", "q"]);
    // Replay the changes, checking the RTL's ports against the model's at every step.
    let mut now = HashMap::new();
    let mut t = None;
    let (mut steps, mut restores, mut preempts) = (0, 0, 0);
    let mut k0_first = None;
    let check = |now: &HashMap<vcd::IdCode, String>, t: u64| {
        for (u, e) in &pairs {
            assert_eq!(now.get(u), now.get(e), "cycle {t}: a port differs from the model's");
        }
        assert_eq!(now.get(&mismatch).map(String::as_str), Some("0"), "cycle {t}: mismatch marker set");
    };
    for c in p {
        match c.unwrap() {
            vcd::Command::Timestamp(x) => {
                if let Some(t) = t {
                    check(&now, t);
                }
                t = Some(x / mpgpu_tb::vcd::CYCLE);
                steps += 1;
            }
            vcd::Command::ChangeScalar(i, v) => {
                now.insert(i, v.to_string());
                if i == pairs[5].0 && v == vcd::Value::V1 {
                    restores += 1;
                }
                if i == pairs[6].0 && v == vcd::Value::V1 {
                    preempts += 1;
                }
                if i == k0_valid && v == vcd::Value::V1 {
                    k0_first.get_or_insert(steps - 1);
                }
            }
            vcd::Command::ChangeVector(i, v) => {
                let bits: String = v.iter().map(|b| b.to_string()).collect();
                now.insert(i, format!("{}", u64::from_str_radix(&bits, 2).unwrap_or(u64::MAX)));
            }
            _ => {}
        }
    }
    check(&now, t.unwrap());
    assert_eq!(steps, rep.cycles_checked, "one time step per checked cycle");
    // The first command is registered in the first clocked cycle, taken in the second and is
    // in KSRT entry 0 from the third (`docs/sched-framework.md`, item 2).
    assert_eq!(k0_first, Some(2));
    assert!(preempts > 0 && restores > 0, "PPQ with context switch: {preempts} preemptions, {restores} restores in the waveform");
    // A decision takes N_SM + 1 cycles, so preempt_valid never stays high two cycles running:
    // every rising edge is one preemption, as many as the GPU counted.
    assert_eq!(preempts, counts(rep.result.as_ref().unwrap()).0, "preemptions in the waveform vs the run's count");
}

/// Equal Spatial Sharing with `Sched` in the loop: long-running processes arriving together on
/// k20c's 13 SMs; the SMs each process owns once the policy has settled (running, setting up
/// for or reserved for its active launch), read back from the RTL's SMST and KSRT, indexed by
/// process (KSRT handles are launch indices; the GPU knows each launch's process). The run is
/// stopped at 20,000 cycles on purpose; any other error (a co-simulation mismatch included)
/// fails.
fn equal_allocation_rtl(n: usize) -> Vec<usize> {
    use mpgpu_tb::host::{Cosim, Shared};
    use mpgpu_tb::blocks::SchedPorts;
    use mpgpu_tb::RtlUnit;
    let cfg = GpuConfig::preset("k20c").unwrap();
    let kernels = [("lbm", 512), ("stencil", 96), ("mriq", 16384), ("spmv", 131072), ("sad", 192), ("cutcp", 192), ("sgemm", 256), ("lbm", 384)];
    let mut text = String::from("description = \"equal\"\n");
    for (i, (k, size)) in kernels.iter().take(n).enumerate() {
        text += &format!("[[process]]\nname = \"p{i}\"\nlaunches = [{{ kernel = \"{k}\", size = {size}, seed = {i} }}]\n");
    }
    let w = Workload::parse("equal.toml", &text).unwrap();
    let mut g = Gpu::with_framework(&cfg, Policy::Equal, Mechanism::Drain, n).unwrap();
    let model = Framework::new(Gpu::framework_params(&cfg).unwrap(), Policy::Equal, Mechanism::Drain);
    let h = Shared::new(Cosim::with_state("sched", model, RtlUnit::rust_hdl(SchedPorts { sms: 13, mode: Policy::Equal.code(), faults: SchedFaults::default(), sharing: false }), Framework::state).gated(|o| o.busy));
    let pair = Some(h.clone());
    g.set_units(&mut |_| Box::new(h.clone()) as Held<In, Out>).unwrap();
    g.add_workload(&w).unwrap();
    let run = g.run(RunLimits { max_cycles: 20_000, ..RunLimits::default() }, &mut |_, _, _| {});
    let pair = pair.unwrap();
    if let Some(m) = pair.0.borrow().pair.mismatch() {
        panic!("{n} processes: {m}");
    }
    match run {
        Err(SimError::MaxCycles { .. }) => {}
        Ok(()) => panic!("{n} processes: the long-running workload finished before the allocation was read"),
        Err(e) => panic!("{n} processes: {e}"),
    }
    // The RTL's tables, read back: SMs running, setting up for, or reserved for each kernel.
    let st = pair.0.borrow().pair.rtl.state();
    let valid: Vec<usize> = (0..13).filter(|&k| st.ksrt[k].valid).collect();
    assert_eq!(valid.len(), n, "{n} processes, one active launch each: {:?}", st.ksrt);
    assert!(valid.iter().all(|&k| st.ksrt[k].count == 0), "{n} processes: tokens left over: {:?}", st.ksrt);
    let mut per_process = vec![0; n];
    for k in valid {
        let owned = st.smst.iter().filter(|e| (matches!(e.state, STATE_SETUP | STATE_RUNNING) && e.ksr as usize == k) || (e.state == STATE_RESERVED && e.next_valid && e.next as usize == k)).count();
        per_process[g.launches[st.ksrt[k].handle as usize].process] += owned;
    }
    per_process
}

/// Thesis §5.3.4 with the RTL in the loop: floor(13 / N_p) SMs each and one more for the first
/// 13 mod N_p processes, asserted process by process (p0 first), as the model alone gives
/// (`sim-ref/tests/framework.rs`).
#[test]
fn equal_spatial_sharing_on_13_sms_with_the_rtl_in_the_loop() {
    for (n, want) in [(2, vec![7, 6]), (4, vec![4, 3, 3, 3]), (6, vec![3, 2, 2, 2, 2, 2]), (8, vec![2, 2, 2, 2, 2, 1, 1, 1])] {
        assert_eq!(equal_allocation_rtl(n), want, "{n} processes: SMs per process p0, p1, ...");
    }
}
