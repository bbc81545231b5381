//! Virtual memory in the timing model: translation, isolation between processes, demand
//! paging with stall-on-fault, and Warp Disable (Tanasić's thesis, Ch. 6).

use mpgpu_ref::config::{FaultScheme, GpuConfig, PagingLink, SchedPolicy};
use mpgpu_ref::func::Launch;
use mpgpu_ref::mem::HEAP_BASE;
use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult, SimError};
use mpgpu_ref::workload::Workload;
use mpgpu_ref::{assemble_one, library};
use std::sync::Arc;

fn thesis16(link: PagingLink, faults: FaultScheme) -> GpuConfig {
    let mut c = GpuConfig::preset("thesis16").unwrap();
    c.paging.link = link;
    c.faults = faults;
    c.validate().unwrap();
    c
}

fn run_w(cfg: &GpuConfig, w: &Workload, skip_idle: bool) -> Result<RunResult, SimError> {
    let mut g = Gpu::new(cfg);
    g.add_workload(w)?;
    g.run(RunLimits { skip_idle, ..RunLimits::default() }, &mut |_, _, _| {})?;
    Ok(g.result())
}

fn one(kernel: &str, size: u32) -> Workload {
    let t = format!("description = \"one\"\n[[process]]\nname = \"{kernel}\"\nlaunches = [{{ kernel = \"{kernel}\", size = {size}, seed = 3 }}]\n");
    Workload::parse("test.toml", &t).unwrap()
}

/// Every library kernel, on its data starting in host memory, faults, waits for its pages and
/// still computes the right results: NVLink and PCIe with the baseline's stall-on-fault, and
/// Warp Disable (which squashes and replays the faulting instruction).
#[test]
fn every_kernel_verifies_with_demand_paging_and_faults() {
    let cases = [
        (PagingLink::Nvlink, FaultScheme::Stall),
        (PagingLink::Pcie, FaultScheme::Stall),
        (PagingLink::Nvlink, FaultScheme::WdCommit),
        (PagingLink::Pcie, FaultScheme::WdLastcheck),
    ];
    for (link, faults) in cases {
        let cfg = thesis16(link, faults);
        for b in library::library() {
            let r = run_w(&cfg, &one(b.name, b.test_sizes[0]), true).unwrap_or_else(|e| panic!("{link:?} {faults:?} {}: {e}", b.name));
            let p = &r.processes[0];
            assert!(p.verified, "{link:?} {faults:?} {}: {:?}", b.name, p.failures);
            assert!(r.vm.faults > 0 && r.vm.migrations > 0, "{link:?} {faults:?} {}: no page faulted ({:?})", b.name, r.vm);
            assert!(r.sm.faulted_insts > 0, "{link:?} {faults:?} {}: no instruction saw a fault", b.name);
            match faults {
                FaultScheme::Stall => assert_eq!(r.sm.squashed, 0),
                _ => assert!(r.sm.squashed > 0, "{faults:?} {}: nothing squashed", b.name),
            }
            // A migration's latency is its own (the link's, with or without data) plus its wait
            // behind the units queued before it: between the two, and at most the run.
            let (transfer, alloc) = cfg.paging.latencies_us().unwrap();
            let (lo, hi) = ((alloc * cfg.core_clock_mhz) as u64, (transfer * cfg.core_clock_mhz) as u64);
            let v = &r.vm;
            assert_eq!(v.handler_busy_cycles, v.data_migrations * hi + (v.migrations - v.data_migrations) * lo, "{}: {v:?}", b.name);
            assert!(v.fault_latency_cycles >= v.handler_busy_cycles && v.max_fault_latency <= r.cycles, "{}: {v:?}", b.name);
        }
    }
}

/// With paging off every page is resident: nothing faults.
#[test]
fn no_fault_without_paging() {
    let r = run_w(&thesis16(PagingLink::Off, FaultScheme::Stall), &one("spmv", 4096), true).unwrap();
    assert!(r.processes[0].verified);
    assert!(r.vm.translations > 0 && r.vm.walks > 0, "{:?}", r.vm);
    assert_eq!((r.vm.faults, r.vm.migrations, r.sm.faulted_insts, r.sm.faulted_warp_cycles), (0, 0, 0, 0));
}

/// The host handler is serialized and migrates a unit at a time: 4 KB units mean many more
/// migrations than 64 KB chunks, and a slower run; PCIe is slower than NVLink.
#[test]
fn migration_granularity_and_link_set_the_cost() {
    let w = one("vecadd", 1 << 16);
    let mut cfg = thesis16(PagingLink::Nvlink, FaultScheme::Stall);
    let chunk = run_w(&cfg, &w, true).unwrap();
    cfg.paging.migration_bytes = 4096;
    let page = run_w(&cfg, &w, true).unwrap();
    // 3 arrays of 256 KB: 192 pages; 12 chunks' worth, but guard pages between the arrays
    // shift them off the 64 KB boundaries.
    assert_eq!(page.vm.migrated_pages, 192);
    assert_eq!(chunk.vm.migrated_pages, 192);
    assert_eq!(page.vm.migrations, 192);
    assert!((12..=15).contains(&chunk.vm.migrations), "{:?}", chunk.vm);
    assert!(page.cycles > 4 * chunk.cycles, "4 KB {} vs 64 KB {}", page.cycles, chunk.cycles);
    cfg.paging.migration_bytes = 65536;
    cfg.paging.link = PagingLink::Pcie;
    let pcie = run_w(&cfg, &w, true).unwrap();
    assert!(pcie.cycles > chunk.cycles, "PCIe {} vs NVLink {}", pcie.cycles, chunk.cycles);
    // The two input arrays' pages carry data, the output array's (never written by the host)
    // are allocated zero-filled on the GPU, at the lower latency.
    assert_eq!(page.vm.data_migrations, 128);
}

/// Faulted warps are counted over time, per SM (the thesis's Fig. 6.2), and the timeline
/// accounts for every resident warp-cycle.
#[test]
fn the_timeline_shows_faulted_warps() {
    let cfg = thesis16(PagingLink::Nvlink, FaultScheme::Stall);
    let r = run_w(&cfg, &one("bfs", 16384), true).unwrap();
    let tl = r.timeline.as_ref().expect("a timeline with paging on");
    assert_eq!(tl.len(), 16);
    let resident: u64 = tl.iter().flat_map(|t| &t.bins).map(|b| b.0).sum();
    let faulted: u64 = tl.iter().flat_map(|t| &t.bins).map(|b| b.1).sum();
    assert_eq!(resident, r.sm.warp_cycles);
    assert_eq!(faulted, r.sm.faulted_warp_cycles);
    assert!(faulted > 0);
    assert!(tl.iter().all(|t| t.width == tl[0].width && t.bins.len() <= 1024));
}

/// Paging results do not depend on skipping idle cycles, and repeat exactly, under every way
/// of taking a fault. The thesis pipeline's issue stage skips the warps it knows cannot issue
/// yet (their quiet time, `docs/timing.md` "Speed"); stepping every cycle looks at every warp
/// every cycle, so the two runs agreeing checks each skip.
#[test]
fn paging_is_deterministic_and_independent_of_idle_skipping() {
    // (histo's atomics; reduction's barriers, which under the replay queue and the operand log
    // wait for the TLB checks of older accesses)
    let runs = [FaultScheme::Stall, FaultScheme::WdCommit, FaultScheme::WdLastcheck, FaultScheme::Rq, FaultScheme::Ol].map(|f| (f, "histo"));
    for (faults, kernel) in runs.into_iter().chain([(FaultScheme::Rq, "reduction"), (FaultScheme::Ol, "reduction")]) {
        let cfg = thesis16(PagingLink::Nvlink, faults);
        let w = one(kernel, 65536);
        let go = |skip_idle: bool| {
            let mut g = Gpu::new(&cfg);
            g.add_workload(&w).unwrap();
            g.run(RunLimits { skip_idle, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
            let skips: u64 = g.sms.iter().map(|s| s.quiet_skips).sum();
            let mut r = g.result();
            // (the cycles an SM is stepped are all of them when nothing is skipped, and the
            // refusals for a full replay queue or log are counted in each cycle stepped)
            r.sm.awake_cycles = 0;
            (r.sm.rq_full, r.sm.log_full, r.sm.ol_queue_full) = (0, 0, 0);
            (r, skips)
        };
        let (a, skips) = go(true);
        let (b, _) = go(true);
        let (c, none) = go(false);
        assert!(skips > 0 && none == 0, "{faults:?} {kernel}: {skips} warp looks skipped (expected some), {none} when stepping every cycle");
        assert!(a.sm.faulted_insts > 0, "{faults:?} {kernel}: no fault");
        assert_eq!((a.cycles, &a.vm, &a.sm), (b.cycles, &b.vm, &b.sm), "{faults:?} {kernel}: a second run differs");
        assert_eq!((a.cycles, &a.vm, &a.sm), (c.cycles, &c.vm, &c.sm), "{faults:?} {kernel}: the run differs when every cycle is stepped");
    }
}

/// The in-order pipeline sleeps on its own rules (`docs/timing.md`, "Idle time is cheap": the
/// schedulers' next looks, a freed MSHR waking only a scheduler whose refused load now fits, a
/// memory response stepping the SM only for what it changes); its results, under paging with
/// each fault scheme it runs and with two MSHRs under round-robin scheduling, are those of
/// stepping every SM and scheduler every cycle (the simulator's two effort counters apart).
#[test]
fn the_in_order_pipeline_is_independent_of_idle_skipping() {
    let mut cases = Vec::new();
    for faults in [FaultScheme::Stall, FaultScheme::WdCommit, FaultScheme::WdLastcheck] {
        let mut c = GpuConfig::preset("gtx480").unwrap();
        (c.memory.vm, c.paging.link, c.faults) = (true, PagingLink::Nvlink, faults);
        cases.push((format!("paging, {faults:?}"), c));
    }
    let mut c = GpuConfig::preset("gtx480").unwrap();
    for g in &mut c.sm {
        (g.l1_mshrs, g.scheduler) = (2, SchedPolicy::Lrr);
    }
    cases.push(("2 MSHRs, round robin".into(), c));
    for (what, cfg) in &mut cases {
        cfg.validate().unwrap();
        for kernel in ["histo", "reduction"] {
            let w = one(kernel, 65536);
            let go = |skip_idle: bool| {
                let mut r = run_w(cfg, &w, skip_idle).unwrap();
                assert!(r.processes.iter().all(|p| p.verified), "{what} {kernel}: an output is wrong");
                (r.stepped_cycles, r.sm.awake_cycles) = (0, 0);
                r
            };
            let (lazy, full) = (go(true), go(false));
            assert!(cfg.paging.link == PagingLink::Off || lazy.sm.faulted_insts > 0, "{what} {kernel}: no fault");
            assert_eq!(serde_json::to_string(&lazy).unwrap(), serde_json::to_string(&full).unwrap(), "{what} {kernel}: the run differs when every cycle is stepped");
        }
    }
}

/// A kernel that reads an address in another process's page gets an isolation error naming
/// the process, kernel, block, warp and address, not the data. Without translation (an ideal
/// MMU) the same read returns the other process's data: the page tables are what isolate.
#[test]
fn a_kernel_reading_another_processs_page_gets_an_isolation_error() {
    // Process `owner` allocates first, so its buffer is at the heap's base; `intruder` reads it.
    let owner_prog = || -> Box<dyn Program> {
        let k = Arc::new(assemble_one("own.s", ".kernel own\n.regs 4\n.threads 32\n.params 4\n mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n st.global.u32 [r2], r0\n exit\n").unwrap());
        Box::new(StaticProgram::new(move |mem| {
            let buf = mem.alloc_u32s(&[7; 32]);
            assert_eq!(buf, HEAP_BASE);
            (vec![Launch::linear(&k, 1, vec![buf])], vec![Output { name: "buf".into(), addr: buf, expected: Expected::U32((0..32).collect()) }])
        }))
    };
    let intruder_prog = || -> Box<dyn Program> {
        let k = Arc::new(
            assemble_one(
                "peek.s",
                ".kernel peek\n.regs 6\n.threads 64\n.params 8\n mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [4]\n add.u32 r3, r2, r1\n ld.param.u32 r4, [0]\n add.u32 r4, r4, r1\n ld.global.u32 r5, [r3]\n st.global.u32 [r4], r5\n exit\n",
            )
            .unwrap(),
        );
        Box::new(StaticProgram::new(move |mem| {
            let out = mem.alloc(4 * 64);
            (vec![Launch::linear(&k, 1, vec![out, HEAP_BASE])], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(vec![0; 64]) }])
        }))
    };
    let go = |vm: bool| {
        let mut cfg = GpuConfig::preset("thesis16").unwrap();
        cfg.memory.vm = vm;
        let mut g = Gpu::new(&cfg);
        g.add_process("owner", 0, 0, vec![("own".into(), owner_prog())]);
        g.add_process("intruder", 0, 0, vec![("peek".into(), intruder_prog())]);
        g.run(RunLimits::default(), &mut |_, _, _| {}).map(|_| g.result())
    };
    let e = go(true).expect_err("the read of another process's page must fail");
    let SimError::Fault { kernel, process, warp, block, detail, .. } = &e else { panic!("not a fault: {e}") };
    assert_eq!((kernel.as_str(), process.as_str(), *block), ("peek", "intruder", [0, 0, 0]));
    assert!(*warp <= 1, "{e}");
    let msg = e.to_string();
    for want in ["process `intruder`", "kernel `peek`", "block (0,0,0)", "warp", &format!("0x{HEAP_BASE:08x}"), "process `owner`", "isolation"] {
        assert!(msg.contains(want), "`{want}` missing from: {msg}");
    }
    assert!(detail.contains("load from"), "{detail}");
    // An ideal MMU lets the read through: the intruder sees the owner's data (its output check
    // then fails, as it expects zeros).
    let r = go(false).expect("no translation, no isolation");
    let intr = r.processes.iter().find(|p| p.name == "intruder").unwrap();
    assert!(!intr.verified, "without translation the intruder should read the owner's data");
}

/// Warp Disable costs performance with no faults at all (Tanasić's thesis, §6.5.2: a global
/// memory instruction holds up its warp's fetch until it commits, or until its last TLB
/// check), the commit variant more than the last-check one.
#[test]
fn warp_disable_costs_performance_without_faults() {
    for (k, size) in [("lbm", 64), ("sgemm", 64)] {
        let w = one(k, size);
        let base = run_w(&thesis16(PagingLink::Off, FaultScheme::Stall), &w, true).unwrap();
        let last = run_w(&thesis16(PagingLink::Off, FaultScheme::WdLastcheck), &w, true).unwrap();
        let commit = run_w(&thesis16(PagingLink::Off, FaultScheme::WdCommit), &w, true).unwrap();
        for r in [&base, &last, &commit] {
            assert!(r.processes[0].verified);
            assert_eq!(r.sm.squashed, 0);
        }
        assert!(last.cycles > base.cycles, "{k}: WD-lastcheck {} not slower than the baseline {}", last.cycles, base.cycles);
        assert!(commit.cycles > last.cycles, "WD-commit {} not slower than WD-lastcheck {}", commit.cycles, last.cycles);
    }
}

/// Bad paging settings are refused with the field named.
#[test]
fn bad_paging_settings_are_refused() {
    let mut c = GpuConfig::preset("gtx480").unwrap();
    c.paging.link = PagingLink::Nvlink;
    assert!(c.validate().unwrap_err().contains("memory.vm"));
    let mut c = thesis16(PagingLink::Nvlink, FaultScheme::Stall);
    c.paging.migration_bytes = 3000;
    assert!(c.validate().unwrap_err().contains("paging.migration_bytes"));
    let e = GpuConfig::parse("x.toml", &GpuConfig::preset("thesis16").map(|_| PRESET_TAIL.to_string()).unwrap()).unwrap_err();
    assert!(e.to_string().contains("x.toml") && e.to_string().contains("unknown variant `usb`"), "{e}");
}

const PRESET_TAIL: &str = "name = \"x\"\ncore_clock_mhz = 1000.0\n[[sm]]\ncount = 1\nthreads = 1024\nwarps = 32\nregisters = 32768\nblocks = 8\nshared_bytes = 16384\n[memory]\nchannels = 1\ndram_bandwidth_gbs = 100.0\nvm = true\n[paging]\nlink = \"usb\"\n";

/// Warp Disable's timing on one warp (the thesis's Fig. 6.4): a global load's last TLB check
/// comes 3 cycles after its issue (operand read, address generation, an L1 TLB hit); fetch
/// restarts the cycle after, the next instruction issues the cycle after that. So each of K
/// independent loads costs 4 cycles more than in the baseline (which issues the next one the
/// cycle after), and with re-enable at commit it waits for the load's data as well.
#[test]
fn warp_disable_gates_one_warp_as_fig_6_4_times_it() {
    const K: u32 = 48;
    // (the loads' address depends on the first load, so that none of them can issue before
    // it completes, on either pipeline)
    let mut src = String::from(".kernel wdk\n.regs 60\n.threads 32\n.params 4\n ld.param.u32 r2, [0]\n ld.global.u32 r3, [r2]\n add.u32 r3, r3, 1\n mul.u32 r9, r3, 0\n add.u32 r9, r9, r2\n");
    for i in 0..K {
        src += &format!(" ld.global.u32 r{}, [r9]\n", 10 + i);
    }
    src += " st.global.u32 [r2], r3\n exit\n";
    let k = Arc::new(assemble_one("wdk.s", &src).unwrap());
    let go = |f: FaultScheme| {
        let k = k.clone();
        let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
            let b = mem.alloc_u32s(&[5]);
            (vec![Launch::linear(&k, 1, vec![b])], vec![Output { name: "b".into(), addr: b, expected: Expected::U32(vec![6]) }])
        }));
        let mut g = Gpu::new(&thesis16(PagingLink::Off, f));
        g.add_process("p", 0, 0, vec![("wdk".into(), p)]);
        g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
        let r = g.result();
        assert!(r.processes[0].verified);
        r.cycles
    };
    let (base, last, commit) = (go(FaultScheme::Stall), go(FaultScheme::WdLastcheck), go(FaultScheme::WdCommit));
    let extra = last as i64 - base as i64;
    assert!((extra - 4 * K as i64).abs() <= 4, "WD-lastcheck costs {extra} cycles over {K} loads (expected 4 each): {base} vs {last}");
    // At commit: each load (an L1 hit: the line is in after the first load) commits at its
    // L1 access (issue + 4) plus the 40-cycle L1 latency; the next issues 2 cycles later: 45
    // cycles more than the baseline's 1.
    let extra = commit as i64 - base as i64;
    assert!((extra - 45 * K as i64).abs() <= 8, "WD-commit costs {extra} cycles over {K} loads (expected 45 each): {base} vs {commit}");
}

/// A warp's global requests reach the L1 in issue order even when their translations finish
/// out of order: a store whose lanes fault on two pages (so it waits for the later page, its
/// last TLB check) and a younger load of the same words, whose first page arrives first. The
/// load must read what the store wrote, on every lane.
#[test]
fn a_younger_load_does_not_overtake_an_older_faulting_store() {
    // lane l writes base + (l >> 4) * 128 KB + (l & 15) * 4: lanes 0..15 on one page, 16..31
    // on a page in another 64 KB chunk, migrated after the first.
    let src = ".kernel ord\n.regs 10\n.threads 32\n.params 8\n\
               mov.u32 r0, %tid.x\n shr.u32 r1, r0, 4\n shl.b32 r1, r1, 17\n and.b32 r2, r0, 15\n shl.b32 r2, r2, 2\n\
               add.u32 r1, r1, r2\n ld.param.u32 r3, [0]\n add.u32 r3, r3, r1\n add.u32 r4, r0, 100\n\
               st.global.u32 [r3], r4\n ld.global.u32 r5, [r3]\n\
               ld.param.u32 r6, [4]\n shl.b32 r7, r0, 2\n add.u32 r6, r6, r7\n st.global.u32 [r6], r5\n exit\n";
    let k = Arc::new(assemble_one("ord.s", src).unwrap());
    for faults in [FaultScheme::Stall, FaultScheme::WdLastcheck] {
        let k = k.clone();
        let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
            let buf = mem.alloc(256 * 1024);
            let out = mem.alloc(128);
            (vec![Launch::linear(&k, 1, vec![buf, out])], vec![Output { name: "out".into(), addr: out, expected: Expected::U32((100..132).collect()) }])
        }));
        let mut g = Gpu::new(&thesis16(PagingLink::Nvlink, faults));
        g.add_process("p", 0, 0, vec![("ord".into(), p)]);
        g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap();
        let r = g.result();
        assert!(r.processes[0].verified, "{faults:?}: {:?}", r.processes[0].failures);
        assert!(r.vm.migrations >= 3 && r.sm.faulted_insts >= 2, "{faults:?}: {:?}", r.vm);
    }
}
