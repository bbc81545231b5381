//! The generic harness: the generated Verilog in the loop (Verilator) for every co-simulated
//! block, traces replayed in Icarus (a pass, and an edited expected value caught at its cycle
//! and port), GTKWave save files that name only signals the waveform has, and the soak finding
//! broken variants.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::soakgen::SoakParams;
use mpgpu_ref::units::dss::Dss;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::units::prio::Prio;
use mpgpu_ref::workload::Workload;
use mpgpu_rtl::SchedFaults;
use mpgpu_spec::units::sched::{prio, PolicyCode};
use mpgpu_tb::blocks::{DssPorts, PrioPorts};
use mpgpu_tb::cosim::{run_with, CosimOptions, UnitKind};
use mpgpu_tb::soak::Soak;
use mpgpu_tb::trace::{replay, Replay};
use mpgpu_tb::{Backend, Lockstep, RtlUnit};
use std::path::{Path, PathBuf};

mod common;
use common::{dss_in, edit, words, THREE, TWO};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness").join(name)
}

fn two() -> Workload {
    Workload::parse("two.toml", TWO).unwrap()
}

#[test]
fn the_engines_verilated_match_their_models_on_random_inputs() {
    for seed in [3u64, 77] {
        let mut ls = Lockstep::new(Dss::new(13), RtlUnit::with_backend(DssPorts { sms: 13, broken_tie: false }, Backend::Verilator).unwrap(), 16);
        for (c, r) in words(seed, 3000).into_iter().enumerate() {
            if let Err(m) = ls.step(&dss_in(r, 23)) {
                panic!("dss seed {seed} cycle {c}: {m}");
            }
        }
        for mode in PolicyCode::PRIORITY {
            let mut ls = Lockstep::new(Prio::new(13, mode), RtlUnit::with_backend(PrioPorts { sms: 13, mode, broken_victim: false }, Backend::Verilator).unwrap(), 16);
            for (c, r) in words(seed ^ mode.code() as u64, 3000).into_iter().enumerate() {
                let i = prio::In {
                    trigger: r % 19 == 0,
                    sm_state: (r >> 5) as u8 & 3,
                    sm_ksr_valid: (r >> 7) & 3 != 0,
                    sm_ksr: (r >> 9) as u8 % 13,
                    smk_priority: (r >> 13) as u8 & 15,
                    smk_age: (r >> 17) as u16,
                    k_valid: (r >> 33) & 3 != 0,
                    k_has_work: (r >> 35) & 1 == 1,
                    k_priority: (r >> 36) as u8 & 15,
                    k_age: (r >> 40) as u16,
                    k_wants_more: (r >> 56) & 1 == 1,
                };
                if let Err(m) = ls.step(&i) {
                    panic!("prio mode {mode:?} seed {seed} cycle {c}: {m}");
                }
            }
        }
    }
}

#[test]
fn the_engines_verilated_in_the_gpu_loop_and_their_broken_variants() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    for p in [Policy::Equal, Policy::PpqShared] {
        let o = CosimOptions { unit: UnitKind::named("engine").unwrap(), backend: Backend::Verilator, mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(p, Mechanism::Drain) };
        let rep = run_with(&cfg, &two(), &o).unwrap();
        assert!(rep.mismatch.is_none(), "{p:?}: {}", rep.mismatch.unwrap());
        assert!(rep.result.unwrap().processes.iter().all(|x| x.verified));
        assert!(rep.cycles_checked > 1000);
    }
    // The broken variants are caught; in the long tier also on Verilator, at the same cycle
    // and fields as on rust-hdl.
    let three = Workload::parse("three.toml", THREE).unwrap();
    for (p, w) in [(Policy::Dss, &two()), (Policy::PpqShared, &three)] {
        let mut at = Vec::new();
        for &backend in common::BROKEN_BACKENDS {
            let o = CosimOptions { unit: UnitKind::named("engine").unwrap(), backend, broken: mpgpu_tb::broken::Broken::default().with("dss", true).with("prio", true), mismatch_vcd: dir(&format!("engine-{backend}.vcd")), ..CosimOptions::new(p, Mechanism::Drain) };
            let m = run_with(&cfg, w, &o).unwrap().mismatch.unwrap_or_else(|| panic!("{p:?} on {backend}: the broken engine went unnoticed"));
            at.push((m.cycle, m.diffs.iter().map(|d| d.field.clone()).collect::<Vec<_>>()));
        }
        if let [a, b] = &at[..] {
            assert_eq!(a, b, "{p:?}: the backends disagree on where the broken engine parts");
        }
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn a_trace_replays_in_icarus_and_an_edited_expected_value_is_caught_there() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let d = dir("trace-sched");
    let o = CosimOptions { backend: Backend::Verilator, trace: Some(d.clone()), mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(Policy::PpqExclusive, Mechanism::ContextSwitch) };
    let rep = run_with(&cfg, &two(), &o).unwrap();
    assert!(rep.mismatch.is_none());
    assert_eq!(rep.trace.as_deref(), Some(d.as_path()));
    assert_eq!(replay(&d).unwrap(), Replay::Pass { cycles: rep.cycles_checked });
    // Record layout: GPU cycle, the inputs, the expected outputs, care mask (`trace.json`
    // lists the ports). Find a cycle that issues a block and change the expected block index
    // there.
    let info = mpgpu_tb::trace::read(&d).unwrap();
    let field = |port: &str| info.expected_field(port).unwrap();
    let text = std::fs::read_to_string(d.join("trace.hex")).unwrap();
    let at = text.lines().position(|l| l.split_whitespace().nth(field("issue_valid")) == Some("1")).expect("no block issued in the trace");
    let bad = dir("trace-sched-edited");
    let _ = std::fs::remove_dir_all(&bad);
    std::fs::create_dir_all(&bad).unwrap();
    for f in ["trace.hex", "trace.json", "mpgpu_sched.v"] {
        std::fs::copy(d.join(f), bad.join(f)).unwrap();
    }
    edit(&bad.join("trace.hex"), at, field("issue_tb"), |tb| tb ^ 1);
    match replay(&bad).unwrap() {
        Replay::Mismatch { cycle, port, line } => {
            assert_eq!((cycle, port.as_str()), (at as u64, "issue_tb"), "{line}");
            assert!(line.contains("GPU cycle"), "{line}");
        }
        r => panic!("the edited trace replayed as {r:?}"),
    }
    // A trace cut short, or with a damaged record, is refused rather than replayed.
    std::fs::write(bad.join("trace.hex"), text.lines().take(100).collect::<Vec<_>>().join("\n") + "\n").unwrap();
    assert!(replay(&bad).unwrap_err().contains("100 records"));
    std::fs::write(bad.join("trace.hex"), text.replacen(' ', " zz ", 1)).unwrap();
    assert!(replay(&bad).unwrap_err().contains("trace.hex:1: expected"));
    // A don't-care output (issue_sm while nothing is issued) is not compared.
    let quiet = text.lines().position(|l| l.split_whitespace().nth(field("issue_valid")) == Some("0")).unwrap();
    std::fs::copy(d.join("trace.hex"), bad.join("trace.hex")).unwrap();
    edit(&bad.join("trace.hex"), quiet, field("issue_sm"), |sm| sm ^ 1);
    assert!(matches!(replay(&bad).unwrap(), Replay::Pass { .. }));
}

#[test]
fn the_engines_traces_replay_in_icarus() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    for (p, name) in [(Policy::Equal, "trace-dss"), (Policy::PpqShared, "trace-prio")] {
        let d = dir(name);
        let o = CosimOptions { unit: UnitKind::named("engine").unwrap(), trace: Some(d.clone()), mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(p, Mechanism::Drain) };
        let rep = run_with(&cfg, &two(), &o).unwrap();
        assert!(rep.mismatch.is_none());
        assert_eq!(replay(&d).unwrap(), Replay::Pass { cycles: rep.cycles_checked }, "{name}");
    }
}

/// Every signal a GTKWave save file names is declared in its waveform.
fn gtkw_names_only_real_signals(vcd: &Path) -> usize {
    let mut p = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(vcd).unwrap()));
    let h = p.parse_header().unwrap();
    let g = std::fs::read_to_string(vcd.with_extension("gtkw")).unwrap();
    assert!(g.contains(&format!("[dumpfile] \"{}\"", std::fs::canonicalize(vcd).unwrap().display())));
    let mut n = 0;
    for l in g.lines().filter(|l| !l.starts_with(['[', '@', '-', '*'])) {
        // `+{alias} name`: the output pairs are aliased `busy (rtl)`, `busy (expected)`.
        let l = l.split_once("} ").map_or(l, |x| x.1);
        let name = l.split('[').next().unwrap();
        let path: Vec<&str> = name.split('.').collect();
        assert!(h.find_var(&path).is_some(), "{}: the save file names {l}, which the waveform lacks", vcd.display());
        n += 1;
    }
    n
}

#[test]
fn waveforms_on_both_backends_have_gtkwave_save_files_and_gpu_time() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let path = dir(&format!("run-{backend}.vcd"));
        // (PPQ exclusive: the framework's Verilator model the other default tests build)
        let o = CosimOptions { backend, vcd: Some(path.clone()), mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(Policy::PpqExclusive, Mechanism::ContextSwitch) };
        let rep = run_with(&cfg, &two(), &o).unwrap();
        assert!(rep.mismatch.is_none());
        // The inputs, the outputs twice (the RTL's and the expected), clocked, mismatch, 13
        // SMST x 6 + 13 KSRT x 12 + 2, and the 36 pipeline registers (`fw::Pipe`; its heir,
        // an `Option`, has no signal in a run without a handover).
        use mpgpu_spec::port::Wires;
        let (ins, outs) = (mpgpu_spec::units::sched::fw::In::ports().len(), mpgpu_spec::units::sched::fw::Out::ports().len());
        assert_eq!(gtkw_names_only_real_signals(&path), ins + 2 * outs + 2 + 13 * 6 + 13 * 12 + 2 + 36, "{backend}");
        // Time is the GPU cycle: the last time step is the GPU cycle of the last clocked cycle,
        // and `gpu.clocked` counts the clocked cycles.
        let text = std::fs::read_to_string(&path).unwrap();
        let last = text.lines().filter_map(|l| l.strip_prefix('#')).last().unwrap().parse::<u64>().unwrap() / mpgpu_tb::vcd::CYCLE;
        let gpu = rep.result.unwrap().cycles;
        assert!(last > rep.cycles_checked && last < gpu, "{backend}: last time {last}, {} clocked of {gpu}", rep.cycles_checked);
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long")]
fn the_soak_runs_clean_and_finds_each_broken_variant() {
    let soak = |faults: SchedFaults, backend: Backend, n: u64| Soak {
        seed: 1,
        workloads: n,
        config: GpuConfig::preset("k20c").unwrap(),
        config_arg: "k20c".into(),
        backend,
        unit: UnitKind::named("sched").unwrap(),
        broken: mpgpu_tb::broken::Broken::default().with("sched", faults),
        params: SoakParams::default(),
        out: dir("soak"),
        sliced: None,
    };
    let clean = soak(SchedFaults::default(), Backend::RustHdl, 3).run(&mut |_, _, _| {}).unwrap();
    assert!(clean.failure.is_none(), "{:?}", clean.failure);
    assert_eq!((clean.workloads, clean.runs), (3, 36));
    assert!(clean.cycles_checked > 10_000);
    // Each fault is found within 15 workloads (at most 180 runs), on both backends, and the
    // workload that shows it is written out and reproduces it.
    for faults in [SchedFaults { ptbq_lifo: true, ..Default::default() }, SchedFaults { keep_token: true, ..Default::default() }] {
        for backend in [Backend::RustHdl, Backend::Verilator] {
            let rep = soak(faults, backend, 15).run(&mut |_, _, _| {}).unwrap();
            let f = rep.failure.unwrap_or_else(|| panic!("{faults:?} on {backend}: 15 random workloads did not find it"));
            let m = f.mismatch.expect("a mismatch, not another failure");
            let w = Workload::load(&f.workload).unwrap();
            let o = CosimOptions { backend, broken: mpgpu_tb::broken::Broken::default().with("sched", faults), mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(f.policy, f.mechanism) };
            let again = run_with(&GpuConfig::preset("k20c").unwrap(), &w, &o).unwrap().mismatch.expect("the written workload does not reproduce the mismatch");
            assert_eq!((again.cycle, &again.diffs), (m.cycle, &m.diffs));
        }
    }
}

#[test]
fn the_soak_takes_every_unit_of_the_registry() {
    // One random workload per unit, on the configuration the unit soaks on by default: every
    // run checks cycles and passes (a unit left out of the soak, or a run that checks
    // nothing, fails here).
    for unit in UnitKind::all() {
        let config = GpuConfig::from_arg(unit.default_config()).unwrap();
        let soak = Soak {
            seed: 2,
            workloads: 1,
            config,
            config_arg: unit.default_config().into(),
            backend: Backend::RustHdl,
            unit,
            broken: Default::default(),
            params: SoakParams::default(),
            out: dir(&format!("soak-{}", unit.name())),
            sliced: None,
        };
        let rep = soak.run(&mut |_, _, _| {}).unwrap_or_else(|e| panic!("--unit {unit}: {e}"));
        assert!(rep.failure.is_none(), "--unit {unit}: {:?}", rep.failure);
        assert_eq!(rep.runs, soak.runs_per_workload(), "--unit {unit}");
        assert!(rep.cycles_checked > 1_000, "--unit {unit}: {} cycles checked", rep.cycles_checked);
        if soak.runs_inject_faults() {
            assert!(rep.faulted > 0 && rep.replayed > 0, "--unit {unit}: no fault was taken");
        }
    }
}

#[test]
fn every_slot_mode_drives_the_gpu_to_the_same_results() {
    use mpgpu_tb::cosim::SlotMode;
    // The framework's slot holding the model alone, the RTL alone (rust-hdl or Verilator; the
    // GPU acts on the RTL's outputs only, launch retirement included), or the lockstep pair: the
    // same run, cycle for cycle.
    let cfg = GpuConfig::preset("k20c").unwrap();
    let mut runs = Vec::new();
    for (mode, backend) in [(SlotMode::ModelAlone, Backend::RustHdl), (SlotMode::RtlAlone, Backend::RustHdl), (SlotMode::RtlAlone, Backend::Verilator), (SlotMode::Lockstep, Backend::Verilator)] {
        // (PPQ exclusive: the framework's Verilator model the other default tests build)
        let o = CosimOptions { mode, backend, mismatch_vcd: dir("unused.vcd"), ..CosimOptions::new(Policy::PpqExclusive, Mechanism::ContextSwitch) };
        let rep = run_with(&cfg, &two(), &o).unwrap();
        let r = rep.result.unwrap_or_else(|| panic!("{mode:?} {backend}: {:?}", rep.error));
        assert!(r.processes.iter().all(|p| p.verified), "{mode:?} {backend}");
        assert!(r.dispatcher.contains("restores") && !r.dispatcher.contains(" 0 preemptions"), "{mode:?} {backend}: {}", r.dispatcher);
        runs.push((r.cycles, serde_json::to_string(&r.processes).unwrap(), serde_json::to_string(&r.launches).unwrap()));
    }
    assert!(runs.iter().all(|x| *x == runs[0]), "the slot modes drove the GPU differently");
}

#[test]
fn a_bank_of_per_sm_instances_names_the_instance_that_parts() {
    use mpgpu_ref::slots::{SlotMode, SmSet};
    use mpgpu_tb::bank::Bank;
    // A stand-in per-SM unit kind: a DSS engine in each of 6 SMs' slots, each on its own
    // random inputs, the RTL on SMs 1, 3 and 4 only; SM 3's RTL breaks ties the wrong way.
    let rtl_on = SmSet::parse("1,3-4", 6).unwrap();
    for backend in [Backend::RustHdl, Backend::Verilator] {
        let mut bank = Bank::new("dss", 6, SlotMode::Lockstep, &rtl_on, backend, |_| Dss::new(13), |k| DssPorts { sms: 13, broken_tie: k == 3 }, |_| ()).unwrap();
        assert_eq!(bank.rtl_sms(), vec![1, 3, 4]);
        bank.record_all();
        let stim: Vec<Vec<u64>> = (0..6).map(|k| words(100 + k, 4000)).collect();
        let mut found = None;
        for c in 0..4000 {
            bank.at_cycle(10 * c as u64);
            for k in 0..6 {
                let i = dss_in(stim[k][c], 23);
                let _ = bank.outputs(k, &i);
                bank.clock(k, &i);
            }
            if let Some(m) = bank.mismatch() {
                found = Some(m);
                break;
            }
        }
        let m = found.unwrap_or_else(|| panic!("{backend}: SM 3's broken engine went unnoticed"));
        assert!(m.diffs.iter().all(|d| d.field.starts_with("sm[3].dss.")), "{backend}: {m}");
        assert_eq!(m.time, Some(10 * m.cycle), "{backend}: the mismatch carries its GPU cycle");
        // A waveform per RTL instance, scoped by instance.
        let files = bank.write_vcds(&dir(&format!("bank-{backend}"))).unwrap();
        assert_eq!(files.len(), 3);
        let text = std::fs::read_to_string(&files[1]).unwrap();
        assert!(text.contains("$scope module sm_3__dss $end") || text.contains("$scope module sm_3_dss $end"), "{}", &text[..text.len().min(400)]);
    }
    // Without the broken instance, every SM carrying RTL, no mismatch.
    let mut bank = Bank::new("dss", 4, SlotMode::Lockstep, &SmSet::All, Backend::Verilator, |_| Dss::new(13), |_| DssPorts { sms: 13, broken_tie: false }, |_| ()).unwrap();
    for c in 0..3000 {
        for k in 0..4 {
            let i = dss_in(words(7 + k as u64, 3000)[c], 23);
            let _ = bank.outputs(k, &i);
            bank.clock(k, &i);
        }
    }
    assert!(bank.mismatch().is_none());
}
