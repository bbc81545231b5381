//! The priority policies' scan engine: the rust-hdl block against the reference model.

use mpgpu_ref::units::prio::Prio;
use mpgpu_spec::units::sched::prio::{Act, In};
use mpgpu_spec::units::sched::PolicyCode;
use mpgpu_tb::blocks::PrioPorts;
use mpgpu_tb::RtlUnit;
use mpgpu_tb::Lockstep;

mod common;
use common::{prio_in, words};

/// Seeded random inputs; few distinct priorities and ages so that ties and orderings occur.
fn stimulus(seed: u64, n: usize) -> Vec<In> {
    words(seed, n).into_iter().map(prio_in).collect()
}

#[test]
fn model_and_rtl_agree_in_every_mode() {
    for mode in PolicyCode::PRIORITY {
        for seed in [3u64, 0xfeed] {
            let mut ls = Lockstep::new(Prio::new(13, mode), RtlUnit::rust_hdl(PrioPorts { sms: 13, mode, broken_victim: false }), 16);
            let (mut assigns, mut reserves) = (0, 0);
            for i in stimulus(seed, 4000) {
                let o = ls.step(&i).unwrap_or_else(|m| panic!("mode {mode:?} seed {seed:#x}: {m}"));
                assigns += (o.act == Act::Assign) as u32;
                reserves += (o.act == Act::Reserve) as u32;
            }
            assert!(assigns > 10, "mode {mode:?}: only {assigns} assignments");
            if mode.preempts() {
                assert!(reserves > 5, "mode {mode:?}: only {reserves} reservations");
            } else {
                assert_eq!(reserves, 0, "mode {mode:?} never preempts");
            }
        }
    }
}

#[test]
fn a_wrong_victim_rule_is_caught_at_the_first_differing_cycle() {
    let stim = stimulus(11, 4000);
    let mut broken = Prio::new(13, PolicyCode::PpqShared);
    broken.broken_victim = true;
    let mut reference = Lockstep::new(Prio::new(13, PolicyCode::PpqShared), broken.clone(), 16);
    let expected = stim.iter().find_map(|i| reference.step(i).err()).expect("the stimulus never tells the rules apart");
    let mut ls = Lockstep::new(Prio::new(13, PolicyCode::PpqShared), RtlUnit::rust_hdl(PrioPorts { sms: 13, mode: PolicyCode::PpqShared, broken_victim: true }), 16);
    let got = stim.iter().find_map(|i| ls.step(i).err()).expect("the checker missed the broken RTL");
    assert_eq!(got.cycle, expected.cycle);
    assert_eq!(got.diffs, expected.diffs);
}
