//! The DSS policy engine: the rust-hdl block against the reference model, every cycle.

use mpgpu_ref::units::dss::{equal_share_tokens, Dss, Harness};
use mpgpu_spec::units::sched::dss::In;
use mpgpu_tb::blocks::DssPorts;
use mpgpu_tb::RtlUnit;
use mpgpu_tb::{InLoop, Lockstep};

mod common;
use common::{dss_in, words};

/// The DSS engine's RTL for 13 SMs (with the broken tie rule when `broken_tie`).
fn dss_rtl(broken_tie: bool) -> RtlUnit<DssPorts> {
    RtlUnit::rust_hdl(DssPorts { sms: 13, broken_tie })
}

#[test]
fn equal_spatial_sharing_with_the_rtl_in_the_loop() {
    let expect: [(usize, Vec<usize>); 4] = [(2, vec![7, 6]), (4, vec![4, 3, 3, 3]), (6, vec![3, 2, 2, 2, 2, 2]), (8, vec![2, 2, 2, 2, 2, 1, 1, 1])];
    for (n, want) in expect {
        let mut h = Harness::new(13, 25, InLoop::new(Dss::new(13), dss_rtl(false), 16));
        for order in 0..n {
            h.insert(equal_share_tokens(13, n, order));
            for _ in 0..5 {
                h.tick();
            }
        }
        h.settle();
        if let Some(m) = h.dss.mismatch() {
            panic!("{n} processes: {m}");
        }
        assert_eq!(h.partition(n), want, "{n} processes");
        assert!(h.dss.cycle > 100);
    }
}

/// Seeded random inputs, every field, every cycle (the seed is printed on failure).
fn stimulus(seed: u64, n: usize) -> Vec<In> {
    words(seed, n).into_iter().map(|r| dss_in(r, 23)).collect()
}

#[test]
fn model_and_rtl_agree_on_random_inputs() {
    for seed in [1u64, 0xdead_beef, 42] {
        let mut ls = Lockstep::new(Dss::new(13), dss_rtl(false), 16);
        let mut acts = 0;
        for i in stimulus(seed, 4000) {
            let o = ls.step(&i).unwrap_or_else(|m| panic!("seed {seed:#x}: {m}"));
            acts += (o.act != mpgpu_spec::units::sched::dss::Act::None) as u32;
        }
        assert!(acts > 20, "seed {seed:#x}: the stimulus reached only {acts} decisions with an action");
    }
}

#[test]
fn a_broken_tie_rule_is_caught_at_the_first_differing_cycle() {
    let stim = stimulus(7, 4000);
    // Where the broken model first parts from the correct one (model against model).
    let mut broken = Dss::new(13);
    broken.broken_tie = true;
    let mut reference = Lockstep::new(Dss::new(13), broken.clone(), 16);
    let expected = stim.iter().find_map(|i| reference.step(i).err()).expect("the stimulus never exercises a tie");
    // The same broken model against the correct RTL.
    let mut ls = Lockstep::new(broken, dss_rtl(false), 16);
    let got = stim.iter().find_map(|i| ls.step(i).err()).expect("the checker missed the broken tie rule");
    assert_eq!(got.cycle, expected.cycle);
    assert_eq!(got.diffs, expected.diffs.iter().map(|d| mpgpu_tb::lockstep::FieldDiff { field: d.field.clone(), model: d.rtl.clone(), rtl: d.model.clone() }).collect::<Vec<_>>());
    assert!(!got.diffs.is_empty() && got.to_string().contains(&format!("mismatch at cycle {}", got.cycle)));
    // And the broken RTL against the correct model.
    let mut ls = Lockstep::new(Dss::new(13), dss_rtl(true), 16);
    let got = stim.iter().find_map(|i| ls.step(i).err()).expect("the checker missed the broken RTL");
    assert_eq!(got.cycle, expected.cycle);
}

#[test]
fn the_in_loop_pair_reports_a_broken_model() {
    let mut broken = Dss::new(13);
    broken.broken_tie = true;
    let mut h = Harness::new(13, 25, InLoop::new(broken, dss_rtl(false), 16));
    for order in 0..8 {
        h.insert(equal_share_tokens(13, 8, order));
    }
    h.settle();
    let m = h.dss.mismatch().expect("a broken model went unnoticed with the RTL in the loop");
    assert!(m.history.len() <= 17 && m.history.last().unwrap().0 == m.cycle, "{m}");
    // The system ran on the RTL's decisions, so the partition is still the correct one.
    assert_eq!(h.partition(8), vec![2, 2, 2, 2, 2, 1, 1, 1]);
}

#[test]
fn the_waveform_holds_rtl_and_expected_values() {
    use mpgpu_tb::vcd::{VcdRecorder, CYCLE};
    let mut h = Harness::new(13, 25, InLoop::new(Dss::new(13), dss_rtl(false), 16));
    let mut rec: Option<VcdRecorder> = None;
    h.insert(7);
    h.insert(6);
    for _ in 0..200 {
        h.tick_with(|u, i, o| {
            let _ = o;
            mpgpu_tb::host::sample(&mut rec, u, i);
        });
    }
    let rec = rec.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dss.vcd");
    rec.write(&path).unwrap();
    // Parse it back.
    let mut p = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let header = p.parse_header().unwrap();
    let id = |path: &[&str]| header.find_var(path).unwrap_or_else(|| panic!("no signal {path:?}")).code;
    let (rtl_act, exp_act, exp_busy, mism, kmax_q) =
        (id(&["dss", "out", "act"]), id(&["dss", "expected", "act"]), id(&["dss", "expected", "busy"]), id(&["dss", "mismatch"]), id(&["uut", "kmax_index", "q"]));
    let mut now = 0;
    let mut at: std::collections::HashMap<(vcd::IdCode, u64), String> = Default::default();
    for cmd in p {
        match cmd.unwrap() {
            vcd::Command::Timestamp(t) => now = t / CYCLE,
            vcd::Command::ChangeScalar(i, v) => {
                at.insert((i, now), v.to_string());
            }
            vcd::Command::ChangeVector(i, v) => {
                at.insert((i, now), v.to_string());
            }
            _ => {}
        }
    }
    // Value of a signal at a cycle: its last change at or before it.
    let value = |i: vcd::IdCode, c: u64| (0..=c).rev().find_map(|t| at.get(&(i, t)).cloned()).unwrap_or_default();
    // Kernel 0's trigger is latched in cycle 0, the scan runs in cycles 1..=13, the live
    // counts are read in cycle 14 and compared in cycle 15, and the first decision (assign SM
    // 0 to kernel 0) is in cycle 16: act = 01 on both sides.
    assert_eq!(value(exp_busy, 0), "0");
    assert_eq!(value(exp_busy, 1), "1");
    assert_eq!(value(exp_act, 15).trim_start_matches('0'), "");
    assert_eq!(value(exp_act, 16).trim_start_matches('0'), "1");
    assert_eq!(value(rtl_act, 16).trim_start_matches('0'), "1");
    assert!(!value(kmax_q, 16).is_empty());
    assert!((0..200).all(|c| value(mism, c) != "1"), "a mismatch was marked");
}

#[test]
fn the_waveform_marks_the_mismatch() {
    use mpgpu_tb::vcd::{VcdRecorder, CYCLE};
    let mut broken = Dss::new(13);
    broken.broken_tie = true;
    let mut h = Harness::new(13, 25, InLoop::new(broken, dss_rtl(false), 16));
    for order in 0..8 {
        h.insert(equal_share_tokens(13, 8, order));
    }
    let mut rec: Option<VcdRecorder> = None;
    for _ in 0..400 {
        h.tick_with(|u, i, o| {
            let _ = o;
            mpgpu_tb::host::sample(&mut rec, u, i);
        });
    }
    let m = h.dss.mismatch().expect("no mismatch");
    let text = String::from_utf8(rec.unwrap().bytes()).unwrap();
    // The marker's id code, from its declaration in the `dss` scope.
    let decl = text.lines().find(|l| l.ends_with(" mismatch $end")).expect("no mismatch marker");
    let marker = format!("1{}", decl.split_whitespace().nth(3).unwrap());
    // The marker's first rise is at the first mismatching cycle.
    let mut now = 0;
    let mut rise = None;
    for line in text.lines() {
        if let Some(t) = line.strip_prefix('#') {
            now = t.parse::<u64>().unwrap() / CYCLE;
        } else if line == marker && rise.is_none() {
            rise = Some(now);
        }
    }
    assert_eq!(rise, Some(m.cycle));
}
