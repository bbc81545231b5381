//! Workloads and helpers shared by the co-simulation tests.

use mpgpu_spec::units::sched::{dss, prio};
use std::path::Path;

/// Seeded xorshift words.
#[allow(dead_code)]
pub fn words(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

/// A random DSS engine input from one random word, triggering about once in `every` cycles.
#[allow(dead_code)]
pub fn dss_in(r: u64, every: u64) -> dss::In {
    let k = |v: u64| (v % 21) as i8 - 10;
    dss::In {
        trigger: r % every == 0,
        sm_state: (r >> 5) as u8 & 3,
        sm_ksr_valid: (r >> 7) & 3 != 0,
        sm_ksr: (r >> 9) as u8 % 13,
        k_valid: (r >> 13) & 3 != 0,
        k_count: k(r >> 15),
        k_has_work: (r >> 20) & 1 == 1,
        k_running: (r >> 21) & 1 == 1,
        count_max: k(r >> 22),
        count_min: k(r >> 27),
    }
}

/// A random priority-engine input from one random word: few distinct priorities and ages so
/// that ties and orderings occur, mostly running SMs so that some decisions find no idle SM
/// and preempt.
#[allow(dead_code)]
pub fn prio_in(r: u64) -> prio::In {
    prio::In {
        trigger: r % 7 == 0,
        sm_state: [0, 2, 2, 2, 2, 2, 3, 1][(r >> 5) as usize & 7],
        sm_ksr_valid: (r >> 7) & 3 != 0,
        sm_ksr: (r >> 9) as u8 % 13,
        smk_priority: (r >> 13) as u8 % 4,
        smk_age: (r >> 15) as u16 % 8,
        k_valid: (r >> 18) & 3 != 0,
        k_has_work: (r >> 20) & 1 == 1,
        k_priority: (r >> 21) as u8 % 4,
        k_age: (r >> 23) as u16 % 8,
        k_wants_more: (r >> 26) & 1 == 1,
    }
}

/// Rewrites field `field` (a hex word) of record `cycle` in a trace's `trace.hex`.
#[allow(dead_code)]
pub fn edit(trace: &Path, cycle: usize, field: usize, f: impl Fn(u64) -> u64) {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut w: Vec<String> = lines[cycle].split_whitespace().map(String::from).collect();
    w[field] = format!("{:x}", f(u64::from_str_radix(&w[field], 16).unwrap()));
    lines[cycle] = w.join(" ");
    std::fs::write(trace, lines.join("\n") + "\n").unwrap();
}

/// A low-priority streaming process holds the GPU when a high-priority one arrives (the
/// preemptive policies preempt, and restore with context switching).
#[allow(dead_code)]
pub const TWO: &str = r#"
description = "lbm holds the GPU when sgemm arrives"
[[process]]
name = "lbm"
priority = 0
launches = [{ kernel = "lbm", size = 192, seed = 1 }]
[[process]]
name = "sgemm"
arrival = 6000
priority = 1
launches = [{ kernel = "sgemm", size = 96, seed = 2 }]
"#;

/// Two low-priority kernels hold the GPU when a high-priority one arrives.
#[allow(dead_code)]
pub const THREE: &str = r#"
description = "two low-priority kernels hold the GPU when a high-priority one arrives"
[[process]]
name = "lbm"
priority = 0
launches = [{ kernel = "lbm", size = 96, seed = 1 }]
[[process]]
name = "spmv"
arrival = 500
priority = 0
launches = [{ kernel = "spmv", size = 30000, seed = 2 }]
[[process]]
name = "sgemm"
arrival = 3000
priority = 1
launches = [{ kernel = "sgemm", size = 96, seed = 3 }]
"#;

/// A co-simulation run that must be clean: no mismatch, no error, every output verified.
#[allow(dead_code)]
pub fn clean(r: &mpgpu_tb::cosim::CosimReport, what: &str) {
    if let Some(m) = &r.mismatch {
        panic!("{what}: {m}");
    }
    assert!(r.error.is_none(), "{what}: {:?}", r.error);
    let res = r.result.as_ref().unwrap();
    assert!(res.processes.iter().all(|p| p.verified), "{what}: outputs do not verify");
}

/// The model alone (rust-hdl build, no RTL) and the RTL alone (Verilator) drive the GPU to the
/// same run as the lockstep pair `r`, cycle for cycle, with the same `count` (a stall counter
/// the unit's outputs decide); the RTL alone is clocked in the same cycles.
#[allow(dead_code)]
pub fn slot_modes_agree(
    r: &mpgpu_tb::cosim::CosimReport,
    run: impl Fn(mpgpu_tb::Backend, mpgpu_tb::cosim::SlotMode) -> mpgpu_tb::cosim::CosimReport,
    count: impl Fn(&mpgpu_ref::timing::gpu::RunResult) -> u64,
) {
    use mpgpu_tb::cosim::SlotMode;
    let res = r.result.as_ref().unwrap();
    let model = run(mpgpu_tb::Backend::RustHdl, SlotMode::ModelAlone);
    let alone = run(mpgpu_tb::Backend::Verilator, SlotMode::RtlAlone);
    for (x, what) in [(&model, "model alone"), (&alone, "verilator alone")] {
        clean(x, what);
        assert_eq!(x.result.as_ref().unwrap().cycles, res.cycles, "{what}");
        assert_eq!(count(x.result.as_ref().unwrap()), count(res), "{what}");
    }
    assert_eq!(alone.cycles_checked, r.cycles_checked, "the RTL alone is clocked in the same cycles");
}

/// Replays each SM's trace (`dir/sm<k>`) in Icarus; every one must pass. Returns the clocked
/// cycles they hold together.
#[allow(dead_code)]
pub fn replay_per_sm(dir: &Path, sms: &[usize]) -> u64 {
    use mpgpu_tb::trace::{replay, Replay};
    let mut cycles = 0;
    for k in sms {
        match replay(&dir.join(format!("sm{k}"))).unwrap() {
            Replay::Pass { cycles: c } => cycles += c,
            x => panic!("SM {k}: {x:?}"),
        }
    }
    cycles
}

/// Flips the lowest bit of field `field` (0: the GPU cycle, then inputs, then expected
/// outputs) of record `line` in the trace in `dir`.
#[allow(dead_code)]
pub fn flip_trace_field(dir: &Path, line: usize, field: usize) {
    let text = std::fs::read_to_string(dir.join("trace.hex")).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let mut f: Vec<String> = lines[line].split_whitespace().map(String::from).collect();
    f[field] = format!("{:x}", u64::from_str_radix(&f[field], 16).unwrap() ^ 1);
    lines[line] = f.join(" ");
    std::fs::write(dir.join("trace.hex"), lines.join("\n") + "\n").unwrap();
}

/// One process running `kernel` of the library at `size` (seed 3).
#[allow(dead_code)]
pub fn one(kernel: &str, size: u32) -> mpgpu_ref::workload::Workload {
    let t = format!("description = \"{kernel}\"\n[[process]]\nname = \"{kernel}\"\nlaunches = [{{ kernel = \"{kernel}\", size = {size}, seed = 3 }}]\n");
    mpgpu_ref::workload::Workload::parse("one.toml", &t).unwrap()
}

/// Two kernels sharing the GPU: lbm (stores: two log entries each) and spmv (loads).
#[allow(dead_code)]
pub fn lbm_and_spmv() -> mpgpu_ref::workload::Workload {
    let t = "description = \"lbm and spmv\"\n\
        [[process]]\nname = \"lbm\"\nlaunches = [{ kernel = \"lbm\", size = 64, seed = 3 }]\n\
        [[process]]\nname = \"spmv\"\nlaunches = [{ kernel = \"spmv\", size = 2048, seed = 4 }]\n";
    mpgpu_ref::workload::Workload::parse("pair.toml", t).unwrap()
}

/// thesis16 under the operand log of `bytes`, with injected faults at `rate` (seed 5).
#[allow(dead_code)]
pub fn ol_config(bytes: u32, rate: f64) -> mpgpu_ref::config::GpuConfig {
    let mut c = mpgpu_ref::config::GpuConfig::preset("thesis16").unwrap();
    c.faults = mpgpu_ref::config::FaultScheme::Ol;
    for g in &mut c.sm {
        g.oplog_bytes = bytes;
    }
    c.inject.rate = rate;
    c.inject.seed = 5;
    c.validate().unwrap();
    c
}

/// A broken per-SM block's run `r` (`what`: the variant and backend) stopped where a run of the
/// model alone predicts: at clocked cycle `at` of SM `sm`, with one of `fields` of `block`
/// (`sm[<sm>].<block>.<field>`) among the differences.
#[allow(dead_code)]
pub fn caught_where_predicted(r: &mpgpu_tb::cosim::CosimReport, what: &str, block: &str, sm: usize, at: u64, fields: &[&str]) {
    let m = r.mismatch.as_ref().unwrap_or_else(|| panic!("{what} was not caught"));
    let want: Vec<String> = fields.iter().map(|f| format!("sm[{sm}].{block}.{f}")).collect();
    assert_eq!(m.cycle, at, "{what}: caught at clocked cycle {} of its SM, predicted {at} on SM {sm}\n{m}", m.cycle);
    assert!(m.diffs.iter().any(|d| want.contains(&d.field)), "{what}: expected one of {want:?} among\n{m}");
}

/// Where a broken per-SM block first parts from the model, as a run of the model alone
/// predicts it: (GPU cycle, SM, clocked cycle of that SM).
#[allow(dead_code)]
pub type First = std::rc::Rc<std::cell::RefCell<Option<(u64, usize, u64)>>>;

/// Records (`time`, `sm`, `clocked`) in `f` if it is earlier than what `f` holds (GPU cycle,
/// then SM); returns whether it was.
#[allow(dead_code)]
pub fn note_first(f: &First, time: u64, sm: usize, clocked: u64) -> bool {
    let mut f = f.borrow_mut();
    let first = f.is_none_or(|(t, s, _)| (time, sm) < (t, s));
    if first {
        *f = Some((time, sm, clocked));
    }
    first
}

/// The backends a block's broken variants are co-simulated on: rust-hdl's simulation, and in
/// the long tier Verilator too (each broken variant is a Verilator model of its own to build).
#[allow(dead_code)]
pub const BROKEN_BACKENDS: &[mpgpu_tb::Backend] = if cfg!(feature = "long") { &[mpgpu_tb::Backend::RustHdl, mpgpu_tb::Backend::Verilator] } else { &[mpgpu_tb::Backend::RustHdl] };
