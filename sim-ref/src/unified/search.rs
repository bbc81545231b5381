//! The paper's performance model and concurrency search (Hayes and Zhang, ICS 2014, §4): a
//! kernel's average dispatch interval (AD_int) read statically from its code, the
//! computation-interleaving predicate CI_pred, and the search over concurrency levels (threads
//! per SM, in steps of a block) that gives each kernel a register cap and shared-memory spill
//! slots. Decisions are in `docs/unified.md`, "The concurrency search".

use super::{allocate, demand, Allocated, Budget};
use crate::config::{Limiter, SmConfig};
use crate::kernel::Kernel;
use mpgpu_spec::isa::{Class, Inst, Space};

/// The paper's MAX_cmratio (§5: a 9-cycle ALU and off-chip accesses of 150-200 cycles on
/// average): the compute cycles an off-chip memory instruction needs around it to be hidden.
pub const MAX_CMRATIO: f64 = 200.0;

/// An instruction that goes off chip (global or local memory, or a global atomic).
fn off_chip(i: &Inst) -> bool {
    matches!(i.class(), Class::Mem(Space::Global) | Class::Mem(Space::Local)) || matches!(i.op, mpgpu_spec::isa::Op::Atom { space: Space::Global, .. })
}

/// AD_int: the average cycles between adjacent instructions of one thread, issued in program
/// order by an SM that waits for each operand of a fixed latency (ALU, SFU, shared memory; an
/// off-chip load counts as ready at once, as Kepler's stall counts leave it to the scoreboard),
/// one instruction a cycle at most.
pub fn dispatch_interval(code: &[Inst], sm: &SmConfig) -> f64 {
    let mut ready = [0u64; 256];
    let mut t = 0u64;
    let mut n = 0u64;
    for i in code.iter().filter(|i| !matches!(i.class(), Class::Phase)) {
        let at = i.src_regs().map(|r| ready[r as usize]).max().unwrap_or(0).max(if n == 0 { 0 } else { t + 1 });
        let latency = match i.class() {
            Class::Alu => sm.alu_latency,
            Class::Sfu => sm.sfu_latency,
            Class::Mem(Space::Shared) | Class::Mem(Space::Param) => sm.shared_latency,
            _ => 1,
        } as u64;
        if let Some(d) = i.dst_reg() {
            ready[d as usize] = at + latency;
        }
        t = at;
        n += 1;
    }
    if n < 2 {
        1.0
    } else {
        t as f64 / (n - 1) as f64
    }
}

/// CI_pred of a kernel (eq. 1): its static compute instructions times AD_int per off-chip
/// memory instruction, against [`MAX_CMRATIO`]. The ratio, and whether it passes.
pub fn ci_pred(k: &Kernel, sm: &SmConfig) -> (f64, bool) {
    let mem = k.code.iter().filter(|i| off_chip(i)).count();
    let compute = k.code.iter().filter(|i| !off_chip(i) && !matches!(i.class(), Class::Phase)).count();
    let ratio = if mem == 0 { f64::INFINITY } else { compute as f64 * dispatch_interval(&k.code, sm) / mem as f64 };
    (ratio, ratio > MAX_CMRATIO)
}

/// The threads per SM `k` runs at under `sm`'s occupancy rule.
pub fn threads_per_sm(k: &Kernel, sm: &SmConfig) -> u32 {
    sm.occupancy(&k.footprint()).blocks * k.threads
}

/// One concurrency level the search looked at.
#[derive(Clone, Debug)]
pub struct Level {
    /// Threads per SM (a whole number of blocks).
    pub threads: u32,
    /// getRegSmem's budget for it, and the kernel placed under it.
    pub budget: Budget,
    pub placed: Allocated,
    /// CI_pred of the placed kernel.
    pub ratio: f64,
    pub passes: bool,
}

/// The search's result for one kernel.
#[derive(Clone, Debug)]
pub struct Choice {
    pub kernel: String,
    /// Why the kernel is left as written, if it is.
    pub untouched: Option<String>,
    pub ad_int: f64,
    /// Threads per SM as written (ActTnum_org), and the search's first level (AD_int x cores).
    pub original: u32,
    pub start: u32,
    /// The levels evaluated, in the order the search took them.
    pub levels: Vec<Level>,
    /// The chosen level's threads per SM and budget (`None`: as written).
    pub threads: u32,
    pub budget: Option<Budget>,
}

/// `k` as the search places it on `sm`: at the chosen budget, or as written.
pub fn auto(k: &Kernel, sm: &SmConfig) -> Kernel {
    search(k, sm).placed().cloned().unwrap_or_else(|| k.clone())
}

impl Choice {
    /// The kernel placed at the chosen level (`None`: as written), as the search placed it.
    pub fn placed(&self) -> Option<&Kernel> {
        self.budget?;
        self.levels.iter().find(|l| l.threads == self.threads).map(|l| &l.placed.kernel)
    }
}

/// The paper's Table 1 kernels: name, register demand on Fermi and on Kepler, and the shared
/// memory the program itself takes, bytes per thread on Fermi and on Kepler (the admission
/// unit's tests sweep their descriptors, `docs/unified.md`).
pub const TABLE_1: [(&str, [u32; 2], [f64; 2]); 7] = [
    ("cfd", [61, 63], [0.0, 0.0]),
    ("dxtc", [43, 49], [10.0, 12.0]),
    ("FDTD3d", [57, 48], [7.5, 10.0]),
    ("hotspot", [36, 39], [12.0, 12.0]),
    ("imageDenoising", [63, 63], [4.0, 4.0]),
    ("particles", [50, 52], [0.0, 0.0]),
    ("recursiveGaussian", [41, 42], [0.0, 0.0]),
];

/// getRegSmem: the most registers per thread (up to the kernel's demand) and shared spill slots
/// at which `blocks` blocks of `k` fit an SM together, slots only where they take nothing from
/// that count; `None` if no register count gets there.
pub fn reg_smem(k: &Kernel, sm: &SmConfig, blocks: u32) -> Option<Budget> {
    reg_smem_of(demand(k), k.shared_bytes, k.threads, sm, blocks)
}

/// [`reg_smem`] on a kernel's numbers: its register demand, shared bytes a block and threads a
/// block (the paper's Table 1 kernels, which the library does not have).
pub fn reg_smem_of(demand: u32, shared: u32, threads: u32, sm: &SmConfig, blocks: u32) -> Option<Budget> {
    let fits = |regs: u32, shared: u32| {
        let f = crate::kernel::Footprint { regs_per_thread: regs, shared_per_block: shared, threads_per_block: threads, local_per_thread: 0 };
        sm.occupancy(&f).blocks >= blocks
    };
    let regs = (1..=demand.max(1)).rev().find(|&r| fits(r, shared))?;
    // (the shared configuration is the smallest that holds a block, so the slots that fit are
    // not monotone: look at every count)
    let most = mpgpu_spec::isa::MAX_SHARED_BYTES.saturating_sub(shared) / (4 * threads);
    let slots = (0..=most).rev().find(|&s| fits(regs, shared + 4 * s * threads)).unwrap_or(0);
    Some(Budget { regs, slots })
}

/// SM_cores: the thread-instructions an SM issues a cycle (schedulers x 32 lanes / the ALU's
/// initiation interval).
pub fn sm_cores(sm: &SmConfig) -> u32 {
    sm.schedulers * 32 / sm.alu_interval.max(1)
}

/// The paper's search (§4.3, Fig. 5) for `k` on `sm`; see `docs/unified.md`.
pub fn search(k: &Kernel, sm: &SmConfig) -> Choice {
    let ad_int = dispatch_interval(&k.code, sm);
    let original = threads_per_sm(k, sm);
    let t = k.threads;
    let max = sm.threads.min(sm.blocks * t).min(sm.warps / k.warps().max(1) * t) / t * t;
    let start = ((ad_int * sm_cores(sm) as f64 / t as f64).ceil() as u32 * t).clamp(t, max.max(t));
    let mut choice = Choice { kernel: k.name.clone(), untouched: None, ad_int, original, start, levels: Vec::new(), threads: original, budget: None };
    let occ = sm.occupancy(&k.footprint());
    if occ.limiter != Limiter::Registers {
        choice.untouched = Some(format!("registers do not limit its occupancy ({} blocks, by {:?})", occ.blocks, occ.limiter).to_lowercase());
        return choice;
    }
    if ad_int <= 1.0 {
        choice.untouched = Some(format!("not concurrency-bound (AD_int {ad_int:.2}: one warp fills the pipeline)"));
        return choice;
    }
    let eval = |threads: u32, levels: &mut Vec<Level>| -> Option<bool> {
        if let Some(l) = levels.iter().find(|l| l.threads == threads) {
            return Some(l.passes);
        }
        let budget = reg_smem(k, sm, threads / t)?;
        let placed = allocate(k, budget).ok()?;
        let (ratio, passes) = ci_pred(&placed.kernel, sm);
        levels.push(Level { threads, budget, placed, ratio, passes });
        Some(passes)
    };
    let mut levels = Vec::new();
    let mut opt = None;
    if eval(start, &mut levels) == Some(true) {
        // (climb: the largest level that passes)
        let mut cur = start;
        while cur <= max {
            match eval(cur, &mut levels) {
                Some(true) => opt = Some(cur),
                Some(false) => {}
                None => break,
            }
            cur += t;
        }
    } else {
        // (SmemFitTnum: the most threads at which every spill fits in shared memory)
        let smem_fit = (1..=max / t).rev().map(|b| b * t).find(|&th| reg_smem(k, sm, th / t).and_then(|b| allocate(k, b).ok()).is_some_and(|a| a.in_local == 0));
        if smem_fit.is_some_and(|f| start >= f) {
            // (descend: the first level that passes, above the original concurrency)
            let mut cur = start;
            while cur > original {
                if eval(cur, &mut levels) == Some(true) {
                    opt = Some(cur);
                    break;
                }
                cur -= t;
            }
        }
    }
    choice.levels = levels;
    match opt.filter(|&o| o > original) {
        Some(o) => {
            choice.threads = o;
            choice.budget = choice.levels.iter().find(|l| l.threads == o).map(|l| l.budget);
        }
        None => choice.untouched = Some("no level above the original concurrency passes CI_pred".into()),
    }
    choice
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble_one;
    use crate::config::GpuConfig;

    fn sm() -> SmConfig {
        GpuConfig::preset("gtx480").unwrap().sm[0].clone()
    }

    fn kernel(head: &str, body: &str) -> Kernel {
        assemble_one("t.s", &format!(".kernel t\n{head}\n.params 8\n{body}")).unwrap()
    }

    #[test]
    fn the_dispatch_interval_is_the_chains_latency_and_one_for_independent_instructions() {
        // (the paper's Fig. 4: a dependent chain issues one instruction per ALU latency, an
        // independent stream one a cycle)
        let s = sm();
        let chain = kernel(".regs 4\n.threads 32", " mov.u32 r0, %tid.x\n add.u32 r0, r0, 1\n add.u32 r0, r0, 1\n add.u32 r0, r0, 1\n exit\n");
        let free = kernel(".regs 4\n.threads 32", " mov.u32 r0, %tid.x\n mov.u32 r1, 1\n mov.u32 r2, 2\n mov.u32 r3, 3\n exit\n");
        let ad = dispatch_interval(&chain.code, &s);
        assert!((ad - (3.0 * s.alu_latency as f64 + 1.0) / 4.0).abs() < 1e-9, "{ad}");
        assert_eq!(dispatch_interval(&free.code, &s), 1.0);
        // (CI_pred: compute instructions x AD_int per off-chip instruction)
        let k = kernel(".regs 4\n.threads 32", " mov.u32 r0, %tid.x\n ld.global.u32 r1, [r0]\n add.u32 r1, r1, 1\n st.global.u32 [r0], r1\n exit\n");
        let (ratio, passes) = ci_pred(&k, &s);
        assert!((ratio - 3.0 * dispatch_interval(&k.code, &s) / 2.0).abs() < 1e-9 && !passes, "{ratio}");
    }

    #[test]
    fn get_reg_smem_inverts_the_occupancy_rule_without_taking_blocks_away() {
        let s = sm();
        let k = kernel(".regs 40\n.threads 256\n.shared 1024", " mov.u32 r39, %tid.x\n st.shared.u32 [0], r39\n exit\n");
        for blocks in 1..=s.threads / 256 {
            let b = reg_smem(&k, &s, blocks).unwrap();
            let f = crate::kernel::Footprint { regs_per_thread: b.regs, shared_per_block: 1024 + 4 * b.slots * 256, ..k.footprint() };
            assert!(s.occupancy(&f).blocks >= blocks, "{blocks}: {b:?}");
            // (one more register, or one more slot, and the blocks no longer fit, unless the
            // register count is the kernel's demand)
            let more = crate::kernel::Footprint { regs_per_thread: b.regs + 1, ..f };
            assert!(b.regs == demand(&k) || s.occupancy(&more).blocks < blocks, "{blocks}: {b:?}");
        }
        assert!(reg_smem(&k, &s, s.threads / 256 + 1).is_none());
    }

    /// A register-heavy kernel with a long compute body and one load and one store: CI_pred
    /// passes everywhere, so the search climbs to the most threads an SM holds, its register
    /// cap below the demand and the spills in shared memory.
    #[test]
    fn the_search_climbs_for_a_compute_heavy_kernel_and_leaves_the_others_alone() {
        let s = sm();
        let mut body = String::from(" mov.u32 r0, %tid.x\n shl.b32 r0, r0, 2\n ld.param.u32 r1, [0]\n add.u32 r1, r1, r0\n ld.global.u32 r2, [r1]\n");
        for r in 3..21 {
            body += &format!(" add.u32 r{r}, r{}, {r}\n", r - 1);
        }
        for _ in 0..16 {
            for r in 3..21 {
                body += &format!(" mad.u32 r{r}, r{r}, r{}, r2\n", if r == 20 { 3 } else { r + 1 });
            }
        }
        for r in 4..21 {
            body += &format!(" add.u32 r3, r3, r{r}\n");
        }
        body += " st.global.u32 [r1], r3\n exit\n";
        let k = kernel(".regs 24\n.threads 256", &body);
        let c = search(&k, &s);
        let seen: Vec<(u32, Budget, f64, usize, usize, usize)> = c.levels.iter().map(|l| (l.threads, l.budget, l.ratio, l.placed.in_shared, l.placed.in_local, l.placed.after)).collect();
        assert!(c.untouched.is_none(), "{:?}: {seen:?}", c.untouched);
        let b = c.budget.unwrap();
        assert!(b.regs < demand(&k) && c.threads > c.original && c.threads == c.levels.iter().filter(|l| l.passes).map(|l| l.threads).max().unwrap(), "{} threads (as written {}): {seen:?}", c.threads, c.original);
        let placed = &c.levels.iter().find(|l| l.threads == c.threads).unwrap().placed;
        assert!(placed.in_shared > placed.in_local, "{} to shared, {} to local", placed.in_shared, placed.in_local);
        // (a kernel whose registers do not limit it, and one that does not pass, stay as written)
        let light = kernel(".regs 8\n.threads 128", " mov.u32 r0, %tid.x\n add.u32 r0, r0, 1\n exit\n");
        assert!(search(&light, &s).untouched.unwrap().contains("registers do not limit"));
        let sgemm = crate::library::find("sgemm").unwrap().kernels().unwrap().get("sgemm");
        let c = search(&sgemm, &s);
        assert!(c.budget.is_none() && c.untouched.unwrap().contains("passes CI_pred"));
    }
}
