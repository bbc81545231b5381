//! Every block of the registry (`mpgpu_tb::registry`) is synthesizable and lint-clean at its
//! default configuration, and a GPU-wide block also for 15 SMs (the Fermi configuration's,
//! not a power of two), and the framework also built to share its SMs (slicing inside it):
//! yosys (no latches, no combinational loops), Icarus and `verilator -Wall`
//! (`mpgpu_rtl::check`).

use mpgpu_rtl::check::{check_dir, check_verilog};
use mpgpu_tb::registry::{block, BLOCKS};

#[test]
fn every_block_synthesizes_and_lints() {
    // (one thread per block and size: the checks are external tools, and the framework's
    // three builds are the longest)
    let mut items = Vec::new();
    for b in BLOCKS {
        items.push((b, b.name.to_string(), mpgpu_spec::units::sched::MAX_SMS, false));
        if b.sized_by_sms() {
            items.push((b, format!("{}15", b.name), 15, false));
        }
        if b.name == "sched" {
            items.push((b, "sched-sharing".into(), mpgpu_spec::units::sched::MAX_SMS, true));
        }
    }
    let failures: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = items
            .into_iter()
            .map(|(b, dir, sms, sharing)| {
                s.spawn(move || {
                    let v = b.verilog_with(sms, &b.default_gpu().unwrap(), sharing).unwrap().verilog;
                    assert!(v.contains("module top"), "{}", b.name);
                    check_verilog(&check_dir(&dir), &v).err().map(|e| format!("{} for {sms} SMs: {e}", b.name))
                })
            })
            .collect();
        runs.into_iter().filter_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_gpu_wide_block_is_refused_beyond_its_largest_gpu() {
    let dss = block("dss").unwrap();
    assert!(dss.verilog_sized(17).unwrap_err().contains("1..=16"));
    assert!(dss.verilog_sized(0).is_err());
    assert!(block("nosuch").err().unwrap().contains("unknown block `nosuch`; blocks: lowest_first, sched, dss"));
}
