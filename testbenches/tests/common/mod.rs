//! Workloads and helpers shared by the co-simulation tests.

use std::path::Path;

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
