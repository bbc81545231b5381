//! Preemptible page faults (Tanasić's thesis, Ch. 6): the two hazards of a naive recovery
//! shown on real values (§6.2, Fig. 6.3), and the schemes that avoid them — Warp Disable
//! (§6.3.1), the replay queue (§6.3.2) and the operand log (§6.3.3) — giving the outputs of a
//! fault-free run under seeded fault injection and under demand paging.

use mpgpu_ref::config::{FaultInjection, FaultScheme, GpuConfig, PagingLink};
use mpgpu_ref::func::Launch;
use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::workload::Workload;
use mpgpu_ref::{assemble_one, library};
use std::sync::Arc;

fn thesis16(faults: FaultScheme) -> GpuConfig {
    let mut c = GpuConfig::preset("thesis16").unwrap();
    c.faults = faults;
    c.validate().unwrap();
    c
}

/// Runs a workload; returns the result and the whole memory image (every mapped page).
fn run_w(cfg: &GpuConfig, w: &Workload) -> Result<(RunResult, Vec<u32>), SimError> {
    let mut g = Gpu::new(cfg);
    g.add_workload(w)?;
    g.run(RunLimits::default(), &mut |_, _, _| {})?;
    let mut pages: Vec<u32> = g.gmem.mapped_pages().collect();
    pages.sort_unstable();
    let mut image = Vec::new();
    for p in pages {
        image.extend(g.gmem.read_u32s(p * mpgpu_ref::mem::PAGE_BYTES, (mpgpu_ref::mem::PAGE_BYTES / 4) as usize));
    }
    Ok((g.result(), image))
}

fn one(kernel: &str, size: u32) -> Workload {
    let t = format!("description = \"one\"\n[[process]]\nname = \"{kernel}\"\nlaunches = [{{ kernel = \"{kernel}\", size = {size}, seed = 3 }}]\n");
    Workload::parse("test.toml", &t).unwrap()
}

/// The thesis's Fig. 6.3 as a kernel, one warp: `ld r3, [r2]` faults (its data start in host
/// memory); `add r2, r2, 4` overwrites its address register (early source release), `mul`
/// waits for it, `sub r9, r9, 4` is independent and commits before the fault is known.
/// `out[t]` takes the load's value times 3, `out[32 + t]` takes r9: 3 * in[t] and 46.
const FIG_6_3: &str = ".kernel fig63\n.regs 12\n.threads 32\n.params 8\n\
    mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n\
    ld.param.u32 r10, [4]\n add.u32 r10, r10, r1\n mov.u32 r9, 50\n\
    ld.global.u32 r3, [r2]\n add.u32 r2, r2, 4\n mul.u32 r8, r3, 3\n sub.u32 r9, r9, 4\n\
    st.global.u32 [r10], r8\n st.global.u32 [r10+128], r9\n exit\n";

/// Runs the Fig. 6.3 kernel under demand paging; returns the result and `out`.
fn fig_6_3(faults: FaultScheme) -> Result<(RunResult, Vec<u32>), SimError> {
    let at = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let at2 = at.clone();
    let k = Arc::new(assemble_one("fig63.s", FIG_6_3).unwrap_or_else(|e| panic!("{e}")));
    let input: Vec<u32> = (0..40).map(|i| 1000 + 7 * i).collect();
    let mut expect: Vec<u32> = (0..32).map(|t| 3 * input[t]).collect();
    expect.extend([46; 32]);
    let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
        let inp = mem.alloc_u32s(&input);
        let out = mem.alloc(4 * 64);
        at2.store(out, std::sync::atomic::Ordering::Relaxed);
        let l = Launch::linear(&k, 1, vec![inp, out]);
        (vec![l], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(expect.clone()) }])
    }));
    let mut cfg = thesis16(faults);
    cfg.paging.link = PagingLink::Nvlink;
    let mut g = Gpu::new(&cfg);
    g.add_process("fig63", 0, 0, vec![("fig63".into(), p)]);
    g.run(RunLimits::default(), &mut |_, _, _| {})?;
    let out = g.gmem.read_u32s(at.load(std::sync::atomic::Ordering::Relaxed), 64);
    Ok((g.result(), out))
}

/// The naive recovery (squash the faulted load, restart the warp at its pc) gets both values
/// wrong: the replayed load reads its clobbered address register (RAW on replay: it loads
/// in[t + 1]) and the committed `sub` runs again (sparse replay: 42, not 46). Warp Disable,
/// the replay queue and the operand log get them right.
#[test]
fn fig_6_3_naive_recovery_fails_and_the_schemes_do_not() {
    let (r, out) = fig_6_3(FaultScheme::Naive).unwrap();
    assert!(r.sm.squashed > 0, "the load should have faulted and been squashed");
    assert!(!r.processes[0].verified, "the naive recovery should give wrong answers");
    // Both hazards, in every lane: the load read in[t + 1] (3 * (1000 + 7 (t + 1))), and the
    // sub ran twice (42).
    let raw: Vec<u32> = (0..32).map(|t| 3 * (1000 + 7 * (t + 1))).collect();
    assert_eq!(&out[..32], &raw[..], "RAW on replay: the replayed load should read its overwritten address register");
    assert_eq!(&out[32..], &[42; 32][..], "sparse replay: the committed sub should run twice");
    for s in [FaultScheme::WdCommit, FaultScheme::WdLastcheck, FaultScheme::Rq, FaultScheme::Ol] {
        let (r, _) = fig_6_3(s).unwrap();
        assert!(r.sm.squashed > 0, "{s:?}: the load should have faulted and been squashed");
        assert!(r.processes[0].verified, "{s:?}: {:?}", r.processes[0].failures);
    }
}

/// Seeded fault injection at many cycles (5% of global memory instructions, replays included,
/// each page in 2,000 cycles later) over every library kernel — loops, divergent warps,
/// barriers, atomics, several faulting memory instructions per warp: Warp Disable (both), the
/// replay queue and the operand log leave memory exactly as a fault-free run does; the naive
/// recovery does not, on most kernels.
#[test]
fn injected_faults_leave_the_fault_free_outputs() {
    let mut naive_wrong = 0;
    let lib = library::library();
    for b in &lib {
        let w = one(b.name, b.test_sizes[1]);
        let (clean, golden) = run_w(&thesis16(FaultScheme::Stall), &w).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        assert!(clean.processes[0].verified && clean.sm.faulted_insts == 0, "{}", b.name);
        let runs = [FaultScheme::WdCommit, FaultScheme::WdLastcheck, FaultScheme::Rq, FaultScheme::Ol, FaultScheme::Rq, FaultScheme::Ol];
        for (i, s) in runs.into_iter().enumerate() {
            let mut cfg = thesis16(s);
            // (the last two: many faults, short ones, so that replays fault again)
            let (rate, latency) = if i < 4 { (0.05, 2000) } else { (0.3, 300) };
            cfg.inject = FaultInjection { rate, seed: 11 + i as u64, latency };
            let (r, image) = run_w(&cfg, &w).unwrap_or_else(|e| panic!("{} {s:?}: {e}", b.name));
            assert!(r.sm.squashed > 0, "{} {s:?}: no fault was injected", b.name);
            assert!(r.processes[0].verified, "{} {s:?}: {:?}", b.name, r.processes[0].failures);
            assert!(image == golden, "{} {s:?}: memory differs from the fault-free run", b.name);
            if s.replays() {
                assert!(r.sm.replayed >= r.sm.squashed, "{} {s:?}: {} squashed, {} replayed", b.name, r.sm.squashed, r.sm.replayed);
            }
        }
        let mut cfg = thesis16(FaultScheme::Naive);
        cfg.inject = FaultInjection { rate: 0.05, seed: 11, latency: 2000 };
        match run_w(&cfg, &w) {
            Err(_) => naive_wrong += 1,
            Ok((r, image)) => {
                assert!(r.sm.squashed > 0, "{} naive: no fault was injected", b.name);
                if image != golden {
                    naive_wrong += 1;
                }
            }
        }
    }
    eprintln!("the naive recovery went wrong on {naive_wrong} of {} kernels", lib.len());
    assert!(naive_wrong * 2 > lib.len(), "the naive recovery went wrong on only {naive_wrong} of {} kernels", lib.len());
}

/// Demand paging with real faults (NVLink, 64 KB units): the replay queue and the operand log
/// verify every library kernel, squash and replay.
#[test]
fn replay_schemes_verify_under_demand_paging() {
    for s in [FaultScheme::Rq, FaultScheme::Ol] {
        let mut cfg = thesis16(s);
        cfg.paging.link = PagingLink::Nvlink;
        for b in library::library() {
            let (r, _) = run_w(&cfg, &one(b.name, b.test_sizes[0])).unwrap_or_else(|e| panic!("{s:?} {}: {e}", b.name));
            assert!(r.processes[0].verified, "{s:?} {}: {:?}", b.name, r.processes[0].failures);
            assert!(r.vm.faults > 0 && r.sm.squashed > 0 && r.sm.replayed >= r.sm.squashed, "{s:?} {}: {:?} squashed {}", b.name, r.vm, r.sm.squashed);
        }
    }
}

/// Injection is deterministic: the same seed gives the same cycles; another seed, other ones.
#[test]
fn injection_is_seeded() {
    let w = one("spmv", 4096);
    let go = |seed| {
        let mut cfg = thesis16(FaultScheme::Rq);
        cfg.inject = FaultInjection { rate: 0.05, seed, latency: 2000 };
        run_w(&cfg, &w).unwrap().0
    };
    let (a, b, c) = (go(1), go(1), go(2));
    assert_eq!((a.cycles, a.sm.squashed), (b.cycles, b.sm.squashed));
    assert_ne!((a.cycles, a.sm.squashed), (c.cycles, c.sm.squashed));
}

/// The operand log's partitions: a small log makes global memory instructions wait for room
/// (counted), a larger one less; the replay queue never needs the log.
#[test]
fn a_small_log_stalls_issue() {
    let w = one("lbm", 32);
    let go = |s: FaultScheme, bytes: u32| {
        let mut cfg = thesis16(s);
        for g in &mut cfg.sm {
            g.oplog_bytes = bytes;
        }
        cfg.validate().unwrap();
        run_w(&cfg, &w).unwrap().0
    };
    let small = go(FaultScheme::Ol, 4096);
    let big = go(FaultScheme::Ol, 8192);
    let rq = go(FaultScheme::Rq, 4096);
    assert!(small.processes[0].verified && big.processes[0].verified);
    assert!(small.sm.log_full > big.sm.log_full, "log refusals: 4 KB {}, 8 KB {}", small.sm.log_full, big.sm.log_full);
    assert!(small.cycles > big.cycles, "4 KB log {} cycles, 8 KB {}", small.cycles, big.cycles);
    assert_eq!(rq.sm.log_full, 0);
}

/// The configuration refuses what the schemes cannot run with, naming the field.
#[test]
fn bad_scheme_settings_are_refused() {
    let mut c = GpuConfig::preset("gtx480").unwrap();
    c.faults = FaultScheme::Rq;
    let e = c.validate().unwrap_err();
    assert!(e.contains("faults") && e.contains("thesis"), "{e}");
    let mut c = thesis16(FaultScheme::Ol);
    c.sm[0].oplog_bytes = 2048;
    let e = c.validate().unwrap_err();
    assert!(e.contains("oplog_bytes") && e.contains("4096"), "{e}");
    c.sm[0].oplog_bytes = 16384;
    let e = c.validate().unwrap_err();
    assert!(e.contains("oplog_bytes") && e.contains("at most 8192"), "{e}");
    c.sm[0].oplog_bytes = 4100;
    assert!(c.validate().unwrap_err().contains("multiple"));
    let mut c = thesis16(FaultScheme::Rq);
    c.inject.rate = 1.5;
    assert!(c.validate().unwrap_err().contains("inject.rate"));
}

/// Faults made preemptible (§6.1, §6.3.2): a high-priority kernel arrives while a streaming
/// kernel's warps wait on page faults. Under stall-on-fault its blocks cannot be switched out
/// until their faults are served; under the replay queue and the operand log a faulted block
/// is switched out at once, its replay queue (fetched, unissued and faulted instructions, with
/// their logged operands) saved with its context and restored with it. Outputs verify, and the
/// high-priority kernel finishes far sooner.
#[test]
fn faulted_blocks_are_context_switched_with_their_replay_queue() {
    use mpgpu_ref::units::framework::{Mechanism, Policy};
    let w = Workload::parse(
        "pair.toml",
        "description = \"pair\"\n[[process]]\nname = \"low\"\narrival = 0\npriority = 0\nlaunches = [{ kernel = \"lbm\", size = 256, seed = 1 }]\n\
         [[process]]\nname = \"high\"\narrival = 20000\npriority = 1\nlaunches = [{ kernel = \"sgemm\", size = 64, seed = 2 }]\n",
    )
    .unwrap();
    let go = |s: FaultScheme| {
        let mut cfg = thesis16(s);
        cfg.paging.link = PagingLink::Nvlink;
        let mut g = Gpu::with_framework(&cfg, Policy::PpqExclusive, Mechanism::ContextSwitch, 2).unwrap();
        g.add_workload(&w).unwrap();
        g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        let r = g.result();
        assert!(r.processes.iter().all(|p| p.verified), "{s:?}: {:?}", r.processes.iter().map(|p| &p.failures).collect::<Vec<_>>());
        r
    };
    let stall = go(FaultScheme::Stall);
    let high = |r: &RunResult| r.processes.iter().find(|p| p.name == "high").unwrap().turnaround;
    for s in [FaultScheme::Rq, FaultScheme::Ol] {
        let r = go(s);
        assert!(r.sm.saved_queued > 0, "{s:?}: no context was saved with queued instructions");
        // (under the operand log, the saved replays' logged operands were read out of the
        // log's data array through its read port)
        assert!(s != FaultScheme::Ol || r.sm.ol_save_reads > 0, "{s:?}: no logged operand was read for a save");
        assert!(high(&r) * 2 < high(&stall), "{s:?}: high-priority turnaround {} vs {} under stall-on-fault", high(&r), high(&stall));
    }
}

/// Thread-block switching on faults (§6.4.1): with more blocks than fit, an SM switches out a
/// block whose warps all wait on faults (its context and replay queue saved through memory,
/// or in one cycle when ideal) and runs a new one; every switched-out block comes back once
/// its faults are resolved, and the outputs verify. It needs the replay queue.
#[test]
fn blocks_switch_out_on_faults_and_come_back() {
    let w = one("reduction", 400_000);
    for ideal in [false, true] {
        let mut cfg = thesis16(FaultScheme::Rq);
        cfg.paging.link = PagingLink::Nvlink;
        cfg.tb_switch.enabled = true;
        cfg.tb_switch.ideal = ideal;
        cfg.validate().unwrap();
        let (r, _) = run_w(&cfg, &w).unwrap_or_else(|e| panic!("ideal {ideal}: {e}"));
        assert!(r.processes[0].verified, "ideal {ideal}: {:?}", r.processes[0].failures);
        assert!(r.sm.switched_out > 0, "ideal {ideal}: no block was switched out");
        assert_eq!(r.sm.switched_in, r.sm.switched_out, "ideal {ideal}: every block switched out comes back");
    }
    let mut cfg = thesis16(FaultScheme::Stall);
    cfg.tb_switch.enabled = true;
    assert!(cfg.validate().unwrap_err().contains("tb_switch"));
}

/// Local fault handling (§6.4.2): faults on pages with no data (vecadd's output) are handled
/// on the GPU, 20 µs each but in parallel, instead of one at a time by the host; the output
/// verifies and the run is faster. The handler on the GPU needs preemptible faults.
#[test]
fn local_handling_allocates_output_pages_on_the_gpu() {
    let w = one("vecadd", 400_000);
    let go = |local: bool| {
        let mut cfg = thesis16(FaultScheme::Rq);
        cfg.paging.link = PagingLink::Nvlink;
        cfg.paging.local = local;
        cfg.validate().unwrap();
        run_w(&cfg, &w).unwrap().0
    };
    let (host, local) = (go(false), go(true));
    assert!(host.processes[0].verified && local.processes[0].verified);
    assert_eq!(host.vm.local_allocations, 0);
    assert!(local.vm.local_allocations > 0, "no unit was allocated on the GPU");
    assert!(local.vm.data_migrations == host.vm.data_migrations, "units with data still go to the host");
    assert!(local.cycles < host.cycles, "local {} vs host {}", local.cycles, host.cycles);
    let mut cfg = thesis16(FaultScheme::Stall);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.paging.local = true;
    assert!(cfg.validate().unwrap_err().contains("paging.local"));
}

/// Memory order within a warp survives replays: a store, a load of the same word, and two
/// atomic adds to it, under injected faults at 40 seeds. A faulted store is replayed later, so
/// nothing younger of its warp may reach memory before its last TLB check (nor may a younger
/// store overtake an older access that may still be replayed); without that rule 10 of 40
/// seeds went wrong (a stale load, swapped atomics).
#[test]
fn a_replayed_store_is_not_overtaken() {
    const K: &str = ".kernel order\n.regs 12\n.threads 32\n.params 8\n\
        mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n\
        ld.param.u32 r10, [4]\n add.u32 r10, r10, r1\n mov.u32 r5, 7\n\
        st.global.u32 [r2], r5\n ld.global.u32 r6, [r2]\n st.global.u32 [r10], r6\n\
        atom.global.add.u32 r7, [r2], 1\n atom.global.add.u32 r8, [r2], 1\n\
        st.global.u32 [r10+128], r7\n st.global.u32 [r10+256], r8\n exit\n";
    let k = Arc::new(assemble_one("order.s", K).unwrap_or_else(|e| panic!("{e}")));
    let mut expect = vec![7u32; 64];
    expect.extend([8; 32]);
    for s in [FaultScheme::Rq, FaultScheme::Ol] {
        let mut squashed = 0;
        for seed in 0..40 {
            let (k, expect) = (k.clone(), expect.clone());
            let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
                let buf = mem.alloc_u32s(&[0u32; 32]);
                let out = mem.alloc(4 * 96);
                (vec![Launch::linear(&k, 1, vec![buf, out])], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(expect.clone()) }])
            }));
            let mut cfg = thesis16(s);
            cfg.inject = FaultInjection { rate: 0.3, seed, latency: 500 };
            let mut g = Gpu::new(&cfg);
            g.add_process("p", 0, 0, vec![("order".into(), p)]);
            g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
            let r = g.result();
            assert!(r.processes[0].verified, "{s:?} seed {seed}: {:?}", r.processes[0].failures);
            squashed += r.sm.squashed;
        }
        assert!(squashed > 20, "{s:?}: only {squashed} faults injected");
    }
}

/// The operand log's data array is read one entry a cycle for context saves and replays
/// (`docs/faults.md` O11); those reads happen in the same cycles whether or not the GPU skips
/// the cycles where an SM has nothing to do: a frozen block's save reads wake its SM, under the
/// framework's context switch and under thread-block switching. (Before the SM woke for them, a
/// preempted SM slept until its next replay was due and the save waited tens of thousands of
/// cycles.)
#[test]
fn the_logs_port_reads_do_not_depend_on_idle_skipping() {
    use mpgpu_ref::units::framework::{Mechanism, Policy};
    let w = Workload::parse(
        "pair.toml",
        "description = \"pair\"\n[[process]]\nname = \"low\"\narrival = 0\npriority = 0\nlaunches = [{ kernel = \"lbm\", size = 256, seed = 1 }]\n\
         [[process]]\nname = \"high\"\narrival = 20000\npriority = 1\nlaunches = [{ kernel = \"sgemm\", size = 64, seed = 2 }]\n",
    )
    .unwrap();
    let mut cfg = thesis16(FaultScheme::Ol);
    cfg.paging.link = PagingLink::Nvlink;
    let go = |skip: bool| {
        let mut g = Gpu::with_framework(&cfg, Policy::PpqExclusive, Mechanism::ContextSwitch, 2).unwrap();
        g.add_workload(&w).unwrap();
        g.run(RunLimits { skip_idle: skip, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
        let r = g.result();
        assert!(r.processes.iter().all(|p| p.verified));
        (r.cycles, r.processes.iter().map(|p| p.turnaround).collect::<Vec<_>>(), r.sm.ol_reads, r.sm.ol_save_reads, r.sm.saved_queued)
    };
    let lazy = go(true);
    assert!(lazy.3 > 0, "no logged operand was read for a save: {lazy:?}");
    assert_eq!(lazy, go(false), "the run differs when every cycle is stepped");
    // Thread-block switching under paging.
    let mut cfg = thesis16(FaultScheme::Ol);
    cfg.paging.link = PagingLink::Nvlink;
    cfg.tb_switch.enabled = true;
    let w = one("reduction", 200000);
    let go = |skip: bool| {
        let mut g = Gpu::new(&cfg);
        g.add_workload(&w).unwrap();
        g.run(RunLimits { skip_idle: skip, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
        let r = g.result();
        (r.cycles, r.sm.switched_out, r.sm.ol_reads, r.sm.ol_save_reads)
    };
    let lazy = go(true);
    assert!(lazy.1 > 0 && lazy.3 > 0, "no block switched out with logged operands read: {lazy:?}");
    assert_eq!(lazy, go(false), "the run differs when every cycle is stepped");
}
