//! Workloads shared by the co-simulation tests.

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
