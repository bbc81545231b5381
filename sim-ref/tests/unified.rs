//! The unified register and scratchpad allocator (docs/unified.md): every library kernel
//! computes what it computed at every register cap it can be placed under, with its spills in
//! shared memory, in local memory or both; the spill code runs; a broken placement is caught.

use mpgpu_ref::func::FuncGpu;
use mpgpu_ref::library::{library, Bench, Spec};
use mpgpu_ref::unified::{allocate, demand, Budget};
use mpgpu_spec::isa::{Op, Space};

/// Runs `b` at its first test size with its kernels under `budget`; the warp-instructions run.
fn verify(b: &Bench, budget: Budget) -> u64 {
    let size = b.test_sizes[0];
    let spec = Spec { alloc: Some(budget), ..Spec::default() };
    let mut p = b.program_at(size, 3, spec).unwrap_or_else(|e| panic!("{} under {budget:?}: {e}", b.name));
    let mut g = FuncGpu::new();
    let c = g.run(p.as_mut()).unwrap_or_else(|e| panic!("{} under {budget:?}: {e}", b.name));
    p.verify(&g.mem).unwrap_or_else(|e| panic!("{} under {budget:?}: {e}", b.name));
    c.warp_insts
}

fn spill_accesses(k: &mpgpu_ref::kernel::Kernel, space: Space) -> usize {
    k.code.iter().filter(|i| matches!(i.op, Op::Ld { space: s, .. } | Op::St { space: s, .. } if s == space)).count()
}

#[test]
fn every_library_kernel_verifies_at_every_cap_with_spills_in_shared_and_in_local_memory() {
    let mut placements = 0;
    for b in library() {
        let ks = b.kernels().unwrap();
        let most = ks.0.iter().map(|k| demand(k)).max().unwrap();
        // (the uncapped kernels without their `phase` specifiers, which the placement drops and
        // the functional model counts as instructions)
        let base = {
            let mut p = b.program_placed(b.test_sizes[0], 3, |k| Ok(mpgpu_ref::phases::rewrite(k, &[]))).unwrap();
            FuncGpu::new().run(p.as_mut()).unwrap().warp_insts
        };
        for cap in 4..most {
            for slots in [0, 4, 64] {
                let run = verify(&b, Budget { regs: cap, slots });
                // (the spill code ran: more instructions than uncapped)
                assert!(run > base, "{} under a cap of {cap}: {run} warp-instructions, {base} uncapped", b.name);
                placements += 1;
            }
            for k in &ks.0 {
                let a = allocate(k, Budget { regs: cap, slots: 0 }).unwrap();
                assert!(a.kernel.regs <= cap, "{}: {} registers under a cap of {cap}", k.name, a.kernel.regs);
                if a.demand > cap {
                    // (all local with no slots; shared memory first with enough)
                    assert!(a.in_local > 0 && a.in_shared == 0 && spill_accesses(&a.kernel, Space::Local) > 0, "{}", k.name);
                    let s = allocate(k, Budget { regs: cap, slots: 64 }).unwrap();
                    assert!(s.kernel.regs <= cap, "{}: {} registers under a cap of {cap} with 64 slots", k.name, s.kernel.regs);
                    assert!(s.in_local == 0 && s.in_shared > 0, "{} at {cap}: {} local", k.name, s.in_local);
                    assert!(spill_accesses(&s.kernel, Space::Local) == spill_accesses(k, Space::Local), "{}", k.name);
                    assert!(s.kernel.shared_bytes > k.shared_bytes, "{}", k.name);
                }
            }
        }
    }
    assert!(placements > 100, "{placements} placements");
}

/// sgemm on the `gtx480` GPU (its default size) under a cap of 16 registers: the timing model
/// runs the spill code to the same outputs, local spills through the L1 (more L1 accesses than
/// the uncapped run) and shared spills at shared memory's latency (no more L1 accesses).
#[test]
fn the_timing_model_runs_the_spill_code_local_through_the_l1_shared_beside_it() {
    use mpgpu_ref::config::GpuConfig;
    use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
    let b = mpgpu_ref::library::find("sgemm").unwrap();
    let run = |alloc: Option<Budget>| {
        let mut cfg = GpuConfig::preset("gtx480").unwrap();
        cfg.sm[0].count = 4;
        let mut g = Gpu::new(&cfg);
        g.add_process("sgemm", 0, 0, vec![("sgemm".into(), b.program_at(64, 3, Spec { alloc, ..Spec::default() }).unwrap())]);
        g.run(RunLimits { skip_idle: true, watchdog: 5_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
        let r = g.result();
        assert!(r.processes[0].verified, "{alloc:?}: {:?}", r.processes[0].failures);
        r
    };
    let base = run(None);
    let local = run(Some(Budget { regs: 16, slots: 0 }));
    let shared = run(Some(Budget { regs: 16, slots: 16 }));
    let l1 = |r: &mpgpu_ref::timing::gpu::RunResult| r.sm.l1_hits + r.sm.l1_misses;
    assert!(local.warp_insts > base.warp_insts && shared.warp_insts > base.warp_insts);
    assert!(l1(&local) > l1(&base), "local spills: {} L1 accesses, uncapped {}", l1(&local), l1(&base));
    assert_eq!(l1(&shared), l1(&base), "shared spills stay out of the L1");
    assert!(local.cycles != base.cycles && shared.cycles != base.cycles);
}

/// Every library application on the timing model with its kernels at half their demand, spills
/// in local and in shared memory: the outputs verify, the spill code runs, and the shared
/// spills add no bank-conflict cycle (a warp's lanes touch 32 consecutive words).
#[test]
fn every_application_runs_its_spill_code_on_the_timing_model_without_bank_conflicts() {
    use mpgpu_ref::config::GpuConfig;
    use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult};
    let mut spilled = 0;
    for b in library() {
        let most = b.kernels().unwrap().0.iter().map(|k| demand(k)).max().unwrap();
        let run = |alloc: Option<Budget>| -> RunResult {
            let mut cfg = GpuConfig::preset("gtx480").unwrap();
            cfg.sm[0].count = 2;
            let mut g = Gpu::new(&cfg);
            g.add_process(b.name, 0, 0, vec![(b.name.into(), b.program_at(b.test_sizes[0], 2, Spec { alloc, ..Spec::default() }).unwrap())]);
            g.run(RunLimits { skip_idle: true, watchdog: 20_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
            let r = g.result();
            assert!(r.processes[0].verified, "{} under {alloc:?}: {:?}", b.name, r.processes[0].failures);
            r
        };
        let base = run(None);
        let cap = (most / 2).max(4);
        if cap >= most {
            continue;
        }
        let local = run(Some(Budget { regs: cap, slots: 0 }));
        let shared = run(Some(Budget { regs: cap, slots: 64 }));
        assert!(local.warp_insts > base.warp_insts && shared.warp_insts > base.warp_insts, "{}", b.name);
        assert_eq!(shared.sm.shared_conflict_cycles, base.sm.shared_conflict_cycles, "{}: the shared spills conflict on banks", b.name);
        spilled += 1;
    }
    assert!(spilled >= 10, "{spilled} applications spilled");
}

/// A spilled value written under a guard keeps its old value in the lanes whose guard is
/// false: the spill store is guarded as the write is. Ten values live at once, two of them
/// rewritten under a predicate without being read, on a 2-D block; every cap and placement
/// gives the uncapped kernel's memory.
#[test]
fn a_guarded_write_of_a_spilled_value_leaves_the_other_lanes_their_old_value() {
    use mpgpu_ref::kernel::Launch;
    use std::sync::Arc;
    let mut body = String::from(" mov.u32 r0, %tid.y\n mad.u32 r0, r0, %ntid.x, %tid.x\n ld.param.u32 r1, [0]\n mov.u32 r2, %ctaid.x\n mad.u32 r2, r2, 64, r0\n shl.b32 r2, r2, 2\n add.u32 r1, r1, r2\n");
    for r in 3..13 {
        body += &format!(" mad.u32 r{r}, r0, {r}, {}\n", 100 * r);
    }
    body += " and.b32 r13, r0, 3\n setp.eq.u32 p0, r13, 1\n@p0 mov.u32 r3, 77\n@p0 mov.u32 r8, 88\n setp.eq.u32 p1, r13, 2\n@p1 mov.u32 r5, 55\n mov.u32 r14, 0\n";
    for r in 3..13 {
        body += &format!(" mad.u32 r14, r14, 3, r{r}\n");
    }
    body += " st.global.u32 [r1], r14\n exit\n";
    let k = mpgpu_ref::assemble_one("g.s", &format!(".kernel g\n.regs 16\n.threads 64\n.params 4\n{body}")).unwrap();
    let run = |k: &mpgpu_ref::kernel::Kernel| {
        let mut g = FuncGpu::new();
        let out = g.mem.alloc(4 * 64 * 2);
        g.launch(&Launch { kernel: Arc::new(k.clone()), grid: [2, 1, 1], block: [16, 4, 1], params: vec![out] }).unwrap();
        (0..128).map(|i| g.mem.read(out + 4 * i).unwrap()).collect::<Vec<u32>>()
    };
    let want = run(&k);
    // (each thread of a block its own word, both blocks the same words)
    assert!(want[..64].iter().collect::<std::collections::BTreeSet<_>>().len() == 64 && want[..64] == want[64..], "{want:?}");
    for cap in 4..demand(&k) {
        for slots in [0, 2, 16] {
            let a = allocate(&k, Budget { regs: cap, slots }).unwrap();
            assert_eq!(run(&a.kernel), want, "cap {cap}, {slots} slots: {} to shared, {} to local", a.in_shared, a.in_local);
        }
    }
}

/// Random kernels (guarded and negated-guard writes, forward branches, loops with per-lane trip
/// counts) on a 3-D block of unequal sides, each placed at every cap from 4 to its demand with
/// 0, 1, 3 and 64 shared slots: every placement within its cap, and the uncapped kernel's memory.
#[test]
fn random_kernels_compute_the_same_at_every_cap_and_placement() {
    use mpgpu_ref::kernel::{Kernel, Launch};
    use std::sync::Arc;
    struct Xs(u64);
    impl Xs {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    fn op(g: &mut Xs, guard: &str) -> String {
        let src = |g: &mut Xs| match g.below(15) {
            0 => 0,
            x => x + 1,
        };
        let (d, a, b, c) = (g.below(14) + 2, src(g), src(g), src(g));
        match g.below(6) {
            0 => format!("{guard} add.u32 r{d}, r{a}, r{b}\n"),
            1 => format!("{guard} mul.lo.u32 r{d}, r{a}, r{b}\n"),
            2 => format!("{guard} xor.b32 r{d}, r{a}, r{b}\n"),
            3 => format!("{guard} mad.u32 r{d}, r{a}, r{b}, r{c}\n"),
            4 => format!("{guard} mov.u32 r{d}, {}\n", g.below(1000)),
            _ => format!("{guard} add.u32 r{d}, r{d}, r{a}\n"),
        }
    }
    fn kernel(seed: u64) -> String {
        let mut g = Xs(seed * 2_654_435_761 + 12_345);
        // (r0: the thread's linear index in its block of 8 x 2 x 4; r1: its 16 output words)
        let mut s = String::from(".kernel f\n.regs 32\n.threads 64\n.params 4\n mov.u32 r0, %tid.z\n mad.u32 r0, r0, %ntid.y, %tid.y\n mad.u32 r0, r0, %ntid.x, %tid.x\n mov.u32 r17, %ctaid.x\n mad.u32 r17, r17, 64, r0\n shl.b32 r17, r17, 6\n ld.param.u32 r1, [0]\n add.u32 r1, r1, r17\n");
        for r in 2..16 {
            s += &format!(" mad.u32 r{r}, r0, {}, {}\n", g.below(100) + 1, g.below(1000));
        }
        for l in 0..40 {
            match g.below(10) {
                0 | 1 => {
                    let (a, p, neg) = (g.below(15) + 1, g.below(2), if g.below(2) == 0 { "!" } else { "" });
                    s += &format!(" and.b32 r17, r{a}, 7\n setp.lt.u32 p{p}, r17, {}\n", g.below(8));
                    s += &op(&mut g, &format!("@{neg}p{p}"));
                }
                2 => {
                    s += &format!(" and.b32 r17, r{}, 3\n setp.eq.u32 p2, r17, 1\n@p2 bra F{l}\n", g.below(15) + 1);
                    for _ in 0..g.below(4) + 1 {
                        s += &op(&mut g, "");
                    }
                    s += &format!("F{l}:\n");
                }
                3 => {
                    s += &format!(" and.b32 r16, r0, 3\nB{l}:\n");
                    for _ in 0..g.below(4) + 1 {
                        s += &op(&mut g, "");
                    }
                    s += &format!(" add.u32 r16, r16, 1\n setp.lt.u32 p3, r16, 5\n@p3 bra B{l}\n");
                }
                _ => s += &op(&mut g, ""),
            }
        }
        for r in 2..16 {
            s += &format!(" st.global.u32 [r1+{}], r{r}\n", 4 * (r - 2));
        }
        s + " exit\n"
    }
    let run = |k: &Kernel| {
        let mut g = FuncGpu::new();
        let out = g.mem.alloc(2 * 64 * 64);
        g.launch(&Launch { kernel: Arc::new(k.clone()), grid: [2, 1, 1], block: [8, 2, 4], params: vec![out] }).unwrap();
        (0..2 * 64 * 16).map(|i| g.mem.read(out + 4 * i).unwrap()).collect::<Vec<u32>>()
    };
    let mut placements = 0;
    for seed in 0..40 {
        let src = kernel(seed);
        let k = mpgpu_ref::assemble_one("f.s", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let want = run(&k);
        for cap in 4..demand(&k) {
            for slots in [0, 1, 3, 64] {
                let a = allocate(&k, Budget { regs: cap, slots }).unwrap_or_else(|e| panic!("seed {seed}, cap {cap}: {e}"));
                assert!(a.kernel.regs <= cap, "seed {seed}, cap {cap}, {slots} slots: {} registers", a.kernel.regs);
                assert!(run(&a.kernel) == want, "seed {seed}, cap {cap}, {slots} slots\n{src}\n{}", mpgpu_ref::disassemble(&a.kernel));
                placements += 1;
            }
        }
    }
    assert!(placements > 1000, "{placements} placements");
}
