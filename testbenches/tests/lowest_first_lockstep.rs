//! The lockstep harness on the first block: model and RTL agree every cycle, and a broken model
//! is caught at the first differing cycle with the differing field named.

use mpgpu_ref::units::lowest_first::LowestFirst as Model;
use mpgpu_spec::units::lowest_first::In;
use mpgpu_tb::blocks::LowestFirstPorts;
use mpgpu_tb::RtlUnit;
use mpgpu_tb::Lockstep;

/// Seeded request stream: mostly random, with runs of zero and single bits.
fn stimulus(seed: u64, n: usize) -> Vec<In> {
    let mut x = seed | 1;
    (0..n)
        .map(|c| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let request = match c % 7 {
                0 => 0,
                1 => 1 << (x % 16),
                _ => x as u16,
            };
            In { request }
        })
        .collect()
}

#[test]
fn model_and_rtl_agree_every_cycle() {
    let seed = 0x5eed;
    let mut ls = Lockstep::new(Model::default(), RtlUnit::rust_hdl(LowestFirstPorts), 16);
    for i in stimulus(seed, 2000) {
        ls.step(&i).unwrap_or_else(|m| panic!("seed {seed:#x}: {m}"));
    }
    assert_eq!(ls.cycle(), 2000);
}

#[test]
fn a_broken_model_is_caught_at_the_first_differing_cycle() {
    let stim = stimulus(0x5eed, 2000);
    // Where the two tie-break rules first differ: a request with two or more bits set. The
    // grant shows one cycle after the request is sampled.
    let first = stim.iter().position(|i| i.request.count_ones() >= 2).unwrap() as u64 + 1;
    let mut broken = Model::default();
    broken.broken_highest_wins = true;
    let mut ls = Lockstep::new(broken, RtlUnit::rust_hdl(LowestFirstPorts), 16);
    let mut err = None;
    for i in &stim {
        if let Err(m) = ls.step(i) {
            err = Some(m);
            break;
        }
    }
    let m = err.expect("the checker missed a broken model");
    assert_eq!(m.cycle, first);
    assert_eq!(m.diffs.len(), 1, "{m}");
    assert_eq!(m.diffs[0].field, "index");
    assert!(m.history.len() <= 16 && m.history.last().unwrap().0 == first);
    let text = m.to_string();
    assert!(text.contains(&format!("mismatch at cycle {first}")) && text.contains("index: model"), "{text}");
}
