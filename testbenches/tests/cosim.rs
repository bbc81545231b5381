//! The DSS engine's RTL in the loop of the whole GPU: zero mismatches for both DSS policies and
//! both preemption mechanisms with every output verified, and a broken RTL caught at the first
//! differing cycle with a waveform around it.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::workload::Workload;
use mpgpu_tb::cosim::{run as run_dss, MISMATCH_WINDOW};

mod common;
use common::THREE;

const TWO: &str = r#"
description = "lbm holds the GPU when sgemm arrives: DSS takes SMs from it"
[[process]]
name = "lbm"
launches = [{ kernel = "lbm", size = 192, seed = 1 }]
[[process]]
name = "sgemm"
arrival = 6000
launches = [{ kernel = "sgemm", size = 96, seed = 2 }]
"#;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cosim")
}

#[test]
fn the_rtl_in_the_loop_matches_the_model_every_cycle() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    for policy in [Policy::Dss, Policy::Equal] {
        for mech in [Mechanism::ContextSwitch, Mechanism::Drain] {
            let rep = run_dss(&cfg, &w, policy, mech, false, None, &dir().join("unused.vcd")).unwrap();
            if let Some(m) = &rep.mismatch {
                panic!("{policy:?} {mech:?}: {m}");
            }
            let r = rep.result.unwrap_or_else(|| panic!("{policy:?} {mech:?}: {:?}", rep.error));
            assert!(r.processes.iter().all(|p| p.verified), "{policy:?} {mech:?}: {:?}", r.processes);
            assert!(rep.cycles_checked > 1000);
            assert!(!r.dispatcher.contains(" 0 preemptions"), "{policy:?} {mech:?}: DSS never preempted ({})", r.dispatcher);
            assert!(rep.vcd.is_none());
        }
    }
}

#[test]
fn a_broken_rtl_is_caught_with_a_waveform_around_the_mismatch() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    let path = dir().join("mismatch.vcd");
    let rep = run_dss(&cfg, &w, Policy::Dss, Mechanism::ContextSwitch, true, None, &path).unwrap();
    let m = rep.mismatch.expect("the broken RTL went unnoticed");
    assert!(!m.diffs.is_empty());
    assert_eq!(rep.cycles_checked, m.cycle + 1);
    assert_eq!(rep.vcd.as_deref(), Some(path.as_path()));
    // The waveform starts a window before the mismatch and marks it.
    let text = std::fs::read_to_string(&path).unwrap();
    let decl = text.lines().find(|l| l.ends_with(" mismatch $end")).expect("no mismatch marker");
    let marker = format!("1{}", decl.split_whitespace().nth(3).unwrap());
    // Time is the GPU cycle: the waveform holds the window's clocked cycles, one time step
    // each, and the marker rises at the mismatch's GPU cycle.
    let mut now = None;
    let mut steps = 0;
    let mut rise = None;
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('#') {
            now = Some(t.parse::<u64>().unwrap() / mpgpu_tb::vcd::CYCLE);
            steps += 1;
        } else if line == marker && rise.is_none() {
            rise = now;
        }
    }
    assert!(m.time.is_some_and(|t| t > m.cycle), "the engine's mismatch carries its GPU cycle: {m}");
    assert_eq!(rise, m.time);
    // The engine's run goes on after a mismatch, so the window is whole on both sides.
    assert!(m.cycle > MISMATCH_WINDOW);
    assert_eq!(steps, 2 * MISMATCH_WINDOW + 1, "the window around the mismatch");
}

#[test]
fn the_whole_run_waveform_parses_back() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("two.toml", TWO).unwrap();
    let path = dir().join("run.vcd");
    let rep = run_dss(&cfg, &w, Policy::Equal, Mechanism::Drain, false, Some(&path), &dir().join("x.vcd")).unwrap();
    assert!(rep.mismatch.is_none());
    let mut p = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let h = p.parse_header().unwrap();
    for sig in [&["dss", "out", "act"][..], &["uut", "scan", "busy_q", "q"], &["dss", "expected", "act"], &["dss", "mismatch"], &["gpu", "clocked"]] {
        assert!(h.find_var(sig).is_some(), "no {sig:?} in the waveform");
    }
    let changes = p.filter(|c| matches!(c, Ok(vcd::Command::Timestamp(_)))).count() as u64;
    assert_eq!(changes, rep.cycles_checked, "one time step per checked cycle");
}


#[test]
fn the_priority_engine_rtl_in_the_loop_matches_for_every_priority_policy() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("three.toml", THREE).unwrap();
    for policy in [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared] {
        for mech in [Mechanism::ContextSwitch, Mechanism::Drain] {
            let rep = run_dss(&cfg, &w, policy, mech, false, None, &dir().join("unused.vcd")).unwrap();
            if let Some(m) = &rep.mismatch {
                panic!("{policy:?} {mech:?}: {m}");
            }
            let r = rep.result.unwrap_or_else(|| panic!("{policy:?} {mech:?}: {:?}", rep.error));
            assert!(r.processes.iter().all(|p| p.verified), "{policy:?} {mech:?}");
            let preempts = !r.dispatcher.contains(" 0 preemptions");
            assert_eq!(preempts, matches!(policy, Policy::PpqExclusive | Policy::PpqShared), "{policy:?}: {}", r.dispatcher);
        }
    }
}

#[test]
fn a_broken_priority_engine_is_caught() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let w = Workload::parse("three.toml", THREE).unwrap();
    let rep = run_dss(&cfg, &w, Policy::PpqShared, Mechanism::Drain, true, None, &dir().join("prio-mismatch.vcd")).unwrap();
    let m = rep.mismatch.expect("the broken victim rule went unnoticed");
    assert!(m.diffs.iter().any(|d| d.field == "prio.act_sm" || d.field == "prio.act_from"), "{m}");
}

#[test]
fn shipped_workloads_in_lockstep_on_both_presets() {
    let load = |f: &str| Workload::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads").join(f)).unwrap();
    let all = [Policy::Fcfs, Policy::Npq, Policy::PpqExclusive, Policy::PpqShared, Policy::Dss, Policy::Equal];
    let mut runs = Vec::new();
    // gtx480 in the long tier.
    let presets: &[&str] = if cfg!(feature = "long") { &["k20c", "gtx480"] } else { &["k20c"] };
    for &preset in presets {
        for p in all {
            for m in [Mechanism::ContextSwitch, Mechanism::Drain] {
                runs.push((preset, "two-compute-memory.toml", p, m));
            }
        }
        for w in ["four-mix.toml", "eight-mix.toml"] {
            for p in [Policy::PpqShared, Policy::Equal] {
                runs.push((preset, w, p, Mechanism::ContextSwitch));
            }
        }
    }
    for (preset, file, p, m) in runs {
        let cfg = GpuConfig::preset(preset).unwrap();
        let rep = run_dss(&cfg, &load(file), p, m, false, None, &dir().join("unused.vcd")).unwrap();
        if let Some(x) = &rep.mismatch {
            panic!("{preset} {file} {p:?} {m:?}: {x}");
        }
        let r = rep.result.unwrap_or_else(|| panic!("{preset} {file} {p:?} {m:?}: {:?}", rep.error));
        assert!(r.processes.iter().all(|x| x.verified), "{preset} {file} {p:?} {m:?}");
    }
}
