//! Zorua in the whole GPU (`alloc = "zorua"`, docs/zorua.md): every application verifies with
//! its registers and scratchpad living where the coordinator's tables say, swap included; the
//! tables really carry the data (a coordinator that maps two warps onto one set gives wrong
//! answers); the run does not depend on idle-cycle skipping.

use mpgpu_ref::config::{Alloc, GpuConfig};
use mpgpu_ref::library::library;
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult};
use mpgpu_ref::timing::sm::ZoruaStats;
use mpgpu_ref::slots::{Held, Hosted};
use mpgpu_ref::units::zorua::{Coord, Geometry};
use mpgpu_spec::units::zorua::{In, Out};
use mpgpu_spec::Unit;

/// fermi15 under Zorua.
fn fermi() -> GpuConfig {
    let mut c = GpuConfig::preset("fermi15").unwrap();
    c.alloc = Alloc::Zorua;
    c
}

/// fermi15 under Zorua, two SMs with a quarter of the registers, scratchpad and warp slots:
/// the library's kernels then oversubscribe, and swap.
fn tight() -> GpuConfig {
    let mut c = fermi();
    let s = &mut c.sm[0];
    s.count = 2;
    s.registers = 8192;
    s.shared_bytes = 12288;
    s.warps = 12;
    s.threads = 384;
    // (the threshold from 2, not the default 0, so that registers and scratchpad go to swap
    // from the start: these tests are of the data path through swap)
    c.zorua.o_default = 2;
    c.validate().unwrap();
    c
}

fn run(cfg: &GpuConfig, bench: &str, size: u32, skip_idle: bool, unit: Option<&dyn Fn(&GpuConfig) -> Held<In, Out>>) -> RunResult {
    try_run(cfg, bench, size, skip_idle, unit).unwrap_or_else(|e| panic!("{bench}: {e}"))
}

fn try_run(cfg: &GpuConfig, bench: &str, size: u32, skip_idle: bool, unit: Option<&dyn Fn(&GpuConfig) -> Held<In, Out>>) -> Result<RunResult, String> {
    let b = mpgpu_ref::library::find(bench).unwrap();
    let mut g = Gpu::new(cfg);
    g.add_process(bench, 0, 0, vec![(bench.into(), b.program(size, 7).unwrap())]);
    if let Some(u) = unit {
        g.set_units(&mut |_| u(cfg)).unwrap();
    }
    g.run(RunLimits { skip_idle, watchdog: 2_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).map_err(|e| e.to_string())?;
    Ok(g.result())
}

fn zs(r: &RunResult) -> &ZoruaStats {
    r.zorua.as_ref().expect("Zorua's counters")
}

#[test]
fn every_application_verifies_under_zorua_with_oversubscription_and_swap() {
    for cfg in [fermi(), tight()] {
        let mut total = ZoruaStats::default();
        for b in library() {
            let r = run(&cfg, b.name, b.test_sizes[1], true, None);
            assert!(r.processes[0].verified, "{} on {} registers: {:?}", b.name, cfg.sm[0].registers, r.processes[0].failures);
            let z = zs(&r);
            assert!(z.grants > 0 && z.events > 0, "{}: the coordinator did nothing", b.name);
            total.phase_events += z.phase_events;
            total.barrier_events += z.barrier_events;
            total.reg_sets[1] += z.reg_sets[1];
            total.reg_accesses[1] += z.reg_accesses[1];
            total.smem_accesses[1] += z.smem_accesses[1];
            total.swap_reads += z.swap_reads;
            // (every shared access within the scratchpad its block holds: the specifiers cover
            // what the kernels address)
            assert_eq!(z.smem_unheld, 0, "{}: shared accesses past the block's scratchpad", b.name);
        }
        assert!(total.phase_events > 100 && total.barrier_events > 100, "phase changes {} and barriers {}", total.phase_events, total.barrier_events);
        if cfg.sm[0].registers == 8192 {
            // (the tight SM oversubscribes both registers and scratchpad, and reads them back)
            assert!(total.reg_sets[1] > 0 && total.reg_accesses[1] > 0 && total.smem_accesses[1] > 0 && total.swap_reads > 0, "no swap on the tight SM: {total:?}");
        }
    }
}

/// A scratchpad-bound sweep (docs/zorua.md, "Results: a scratchpad-bound sweep"): sad
/// declared at 16, 32 and 48 KB per block. Under Zorua its blocks ask for the 16 KB they
/// address (the specifiers carry what the value-range analysis bounds), so every declaration
/// runs alike, with nothing in swap and no access past what a block holds. The block
/// allocation gives each block its declaration, so fewer fit an SM and it slows.
#[test]
fn zorua_allocates_the_scratchpad_a_kernel_addresses_not_its_declaration() {
    use mpgpu_ref::library::{find, Spec};
    let b = find("sad").unwrap();
    let (mut zorua, mut block) = (Vec::new(), Vec::new());
    for smem in [16384, 32768, 49152] {
        for alloc in [Alloc::Zorua, Alloc::Block] {
            // (a 96 x 96 frame, 9 blocks, on two SMs: each gets several)
            let mut cfg = fermi();
            cfg.alloc = alloc;
            cfg.sm[0].count = 2;
            let mut g = Gpu::new(&cfg);
            g.add_process("sad", 0, 0, vec![("sad".into(), b.program_at(96, 5, Spec { smem: Some(smem), ..Spec::default() }).unwrap())]);
            g.run(RunLimits { skip_idle: true, watchdog: 2_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{smem} B: {e}"));
            let r = g.result();
            assert!(r.processes[0].verified, "{} at {smem} B: {:?}", alloc.name(), r.processes[0].failures);
            if alloc == Alloc::Zorua {
                let z = zs(&r);
                assert!(z.smem_sets[0] > 0 && z.smem_sets[1] == 0 && z.smem_accesses[1] == 0 && z.smem_unheld == 0, "{smem} B: {z:?}");
                // (16 sets per block: 16,320 bytes addressed)
                assert_eq!(z.smem_sets[0] % 16, 0, "{smem} B: {z:?}");
                zorua.push(r.cycles);
            } else {
                block.push(r.cycles);
            }
        }
    }
    assert!(zorua.iter().all(|&c| c == zorua[0]), "Zorua at 16, 32, 48 KB: {zorua:?}");
    assert!(block[2] as f64 > 1.3 * block[0] as f64, "the block allocation at 16, 32, 48 KB: {block:?}");
}

/// `[zorua] renumber = true` (docs/zorua.md, "Phase specifiers"): every application verifies
/// with its registers renumbered, on `fermi15` and the tight SM; and lbm, whose live
/// registers are spread over r0..r40 as written, has more warps schedulable at 64 registers
/// per thread, since its peak phase then asks for about the registers live in it.
#[test]
fn renumbered_registers_verify_and_let_more_of_lbms_warps_run() {
    use mpgpu_ref::library::{find, Spec};
    for base in [fermi(), tight()] {
        let mut cfg = base;
        cfg.zorua.renumber = true;
        for b in library() {
            let r = run(&cfg, b.name, b.test_sizes[1], true, None);
            assert!(r.processes[0].verified, "{} on {} registers, renumbered: {:?}", b.name, cfg.sm[0].registers, r.processes[0].failures);
            assert_eq!(zs(&r).smem_unheld, 0, "{}", b.name);
        }
    }
    let b = find("lbm").unwrap();
    let mut warps = Vec::new();
    for renumber in [false, true] {
        let mut cfg = fermi();
        cfg.sm[0].count = 2;
        cfg.zorua.renumber = renumber;
        let mut g = Gpu::new(&cfg);
        g.add_process("lbm", 0, 0, vec![("lbm".into(), b.program_at(64, 3, Spec { regs: Some(64), threads: Some(128), smem: None, alloc: None }).unwrap())]);
        g.run(RunLimits { skip_idle: true, watchdog: 2_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap();
        let r = g.result();
        assert!(r.processes[0].verified);
        warps.push(zs(&r).sched_warp_cycles as f64 / r.cycles as f64 / 2.0);
    }
    assert!(warps[1] > 1.3 * warps[0], "lbm's schedulable warps per SM, as written and renumbered: {warps:?}");
}

/// The warp-level manager (WLM) of the paper's comparison: every application verifies, with
/// registers given and freed per warp and nothing in swap.
#[test]
fn every_application_verifies_under_the_warp_level_manager() {
    // (two fermi15 SMs: WLM runs only blocks that fit an SM whole, and the tight SM's 12 warp
    // slots take no reduction block)
    let mut cfg = fermi();
    cfg.sm[0].count = 2;
    cfg.alloc = Alloc::Wlm;
    let mut grants = 0;
    for b in library() {
        let r = run(&cfg, b.name, b.test_sizes[1], true, None);
        assert!(r.processes[0].verified, "{}: {:?}", b.name, r.processes[0].failures);
        let z = zs(&r);
        assert!(z.reg_sets[1] == 0 && z.smem_sets[1] == 0 && z.swap_reads == 0 && z.phase_events == 0 && z.barrier_events == 0, "{}: {z:?}", b.name);
        grants += z.grants;
    }
    assert!(grants > 1000);
}

#[test]
fn skipping_idle_cycles_changes_nothing_under_zorua() {
    let cfg = tight();
    for (bench, size) in [("reduction", 20000), ("sgemm", 64)] {
        let go = |skip| {
            let mut r = run(&cfg, bench, size, skip, None);
            let stepped = r.stepped_cycles;
            r.stepped_cycles = 0;
            r.sm.awake_cycles = 0;
            (serde_json::to_string(&r).unwrap(), stepped)
        };
        let (lazy, s1) = go(true);
        let (full, s2) = go(false);
        assert_eq!(lazy, full, "{bench}: results differ when every cycle is stepped");
        assert!(s1 < s2, "{bench}: nothing was skipped");
    }
}

/// The model's coordinator with its grants' mapping rows changed by `f`.
struct Bent {
    c: Coord,
    f: fn(&mut Out),
}

impl Unit for Bent {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.c.reset()
    }
    fn outputs(&self, i: &In) -> Out {
        let mut o = self.c.outputs(i);
        // (a release carries its block's scratchpad row too)
        if o.grant || o.release != 0 {
            (self.f)(&mut o);
        }
        o
    }
    fn clock(&mut self, i: &In) {
        self.c.clock(i)
    }
}

impl Hosted for Bent {
    fn halted(&self) -> Option<String> {
        self.c.halted()
    }
}

fn bent(f: fn(&mut Out)) -> impl Fn(&GpuConfig) -> Held<In, Out> {
    move |cfg: &GpuConfig| Box::new(Bent { c: Coord::new(Geometry::of(&cfg.sm[0]).unwrap()), f }) as Held<In, Out>
}

#[test]
fn the_data_lives_where_the_tables_say() {
    let cfg = fermi();
    // every physical register set mapped onto set 0, and every scratchpad set onto set 0:
    // warps overwrite each other's registers, blocks each other's scratchpad
    for (what, f) in [
        ("register", (|o: &mut Out| o.reg_set = [0; 16]) as fn(&mut Out)),
        ("scratchpad", |o: &mut Out| o.smem_set = [0; 64]),
    ] {
        let bench = if what == "register" { "sgemm" } else { "reduction" };
        // (a wrong answer, or a wrong address from a clobbered register)
        match try_run(&cfg, bench, 64, true, Some(&bent(f))) {
            Ok(r) => assert!(!r.processes[0].verified, "{bench} verified with every {what} set mapped to one"),
            Err(e) => assert!(e.contains("address"), "{e}"),
        }
    }
    // every set in swap instead: the answers hold, through global memory
    let r = run(&cfg, "sgemm", 64, true, Some(&bent(|o| {
        o.reg_phys = 0;
        o.smem_phys = 0;
    })));
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
    let z = zs(&r);
    assert!(z.reg_accesses[0] == 0 && z.reg_accesses[1] > 0 && z.smem_accesses[1] > 0 && z.swap_reads > 0, "{z:?}");
    // swap goes through the L1: most of the lines read back were written or read shortly
    // before, and hit
    assert!(z.swap_l1_hits > z.swap_reads, "{z:?}");
}

/// The barrier-heavy reduction (a barrier per tree level) at every specification of its sweep,
/// on the full and the tight SM: every run ends and verifies. A deadlock would trip the
/// watchdog (no instruction issued for its cycles), which fails the test with the SM's state;
/// it does not hang.
#[test]
fn no_deadlock_on_the_barrier_heavy_reduction_at_any_specification() {
    use mpgpu_ref::library::{find, Spec};
    let b = find("reduction").unwrap();
    let mut specs: Vec<Spec> = (10..=64).step_by(6).map(|r| Spec { regs: Some(r), ..Spec::default() }).collect();
    specs.extend((2048..=47104).step_by(5120).map(|s| Spec { smem: Some(s), ..Spec::default() }));
    specs.push(Spec { regs: Some(64), smem: Some(47104), threads: None, alloc: None });
    let mut barriers = 0;
    for cfg in [fermi(), tight()] {
        for &spec in &specs {
            let mut g = Gpu::new(&cfg);
            g.add_process("r", 0, 0, vec![("reduction".into(), b.program_at(20000, 3, spec).unwrap())]);
            g.run(RunLimits { watchdog: 200_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{spec:?} on {} registers: {e}", cfg.sm[0].registers));
            let r = g.result();
            assert!(r.processes[0].verified, "{spec:?}: {:?}", r.processes[0].failures);
            barriers += zs(&r).barrier_events;
        }
    }
    assert!(barriers > 1000, "{barriers} barrier arrivals");
}

/// Two blocks of 24 warps fill an SM's 48 slots; when they end, the coordinator frees their
/// slots some cycles after the SM reports the blocks done, and the dispatcher must look again
/// then (it once found no room at the report and never looked again: the watchdog fired with
/// 30 of 86 bfs blocks issued). Under WLM and Zorua the run ends and verifies.
#[test]
fn the_dispatcher_sees_the_room_the_coordinator_frees_after_a_blocks_end() {
    use mpgpu_ref::library::{find, Spec};
    let b = find("bfs").unwrap();
    for alloc in [Alloc::Wlm, Alloc::Zorua] {
        let mut cfg = fermi();
        cfg.alloc = alloc;
        let mut g = Gpu::new(&cfg);
        g.add_process("bfs", 0, 0, vec![("bfs".into(), b.program_at(65536, 1, Spec { regs: Some(12), threads: Some(768), smem: None, alloc: None }).unwrap())]);
        g.run(RunLimits { watchdog: 200_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{}: {e}", alloc.name()));
        assert!(g.result().processes[0].verified, "{}", alloc.name());
    }
}

/// The pipelined coordinator's timing (`zorua.timing = "pipelined"`, the default,
/// docs/zorua.md, "Timing"): every application verifies on the tight SM, swap included, and the coordinator
/// is busy longer per grant than with the single-cycle timing.
#[test]
fn every_application_verifies_under_the_pipelined_coordinator() {
    let mut single = tight();
    single.zorua.timing = mpgpu_ref::config::CoordTiming::SingleCycle;
    let mut piped = tight();
    piped.zorua.timing = mpgpu_ref::config::CoordTiming::Pipelined;
    let (mut busy, mut grants) = ([0u64; 2], [0u64; 2]);
    let mut swap_reads = 0;
    for b in library() {
        for (k, cfg) in [&single, &piped].into_iter().enumerate() {
            let r = run(cfg, b.name, b.test_sizes[1], true, None);
            assert!(r.processes[0].verified, "{} ({k}): {:?}", b.name, r.processes[0].failures);
            let z = zs(&r);
            busy[k] += z.busy_cycles;
            grants[k] += z.grants;
            if k == 1 {
                swap_reads += z.swap_reads;
            }
        }
    }
    assert!(swap_reads > 0 && grants[1] > 1000, "pipelined: {swap_reads} swap reads, {} grants", grants[1]);
    let per = |k: usize| busy[k] as f64 / grants[k] as f64;
    assert!(per(1) > 1.5 * per(0), "busy cycles per grant: single-cycle {:.1}, pipelined {:.1}", per(0), per(1));
}

/// Writes to registers in swap written back from the L1 (`[zorua] swap_writes = "back"`):
/// on the tight SM every application verifies either way, and far fewer lines reach memory
/// than when every write goes through (the default).
#[test]
fn register_swap_writes_are_written_back_from_the_l1() {
    let (mut back, mut through) = (0u64, 0u64);
    for (wb, total) in [(true, &mut back), (false, &mut through)] {
        let mut cfg = tight();
        cfg.zorua.swap_writes = if wb { mpgpu_ref::config::SwapWrites::Back } else { mpgpu_ref::config::SwapWrites::Through };
        for b in library().iter().filter(|b| ["sgemm", "lbm", "mriq", "cutcp"].contains(&b.name)) {
            let r = run(&cfg, b.name, b.test_sizes[1], true, None);
            assert!(r.processes[0].verified, "{} (write-back {wb}): {:?}", b.name, r.processes[0].failures);
            *total += zs(&r).swap_writes;
        }
    }
    assert!(through > 0, "nothing was written to swap");
    assert!(back * 2 < through, "write-back sent {back} lines to memory, write-through {through}");
}

/// Algorithm 1's idle cycles are those in which no warp issued while a warp waited in the
/// coordinator's scratchpad or register queue (`docs/zorua.md`, "The oversubscription
/// threshold"): idle cycles with nothing waiting there (a kernel's start and tail, say) are
/// not counted, and the threshold, from its default of 0, rises only when such epochs
/// outweigh memory ones.
#[test]
fn the_threshold_counts_idle_cycles_only_while_a_warp_waits() {
    // vecadd fits on fermi15 whole: nothing waits, so no idle cycle counts, though the
    // schedulers idle at its end
    let r = run(&fermi(), "vecadd", mpgpu_ref::library::find("vecadd").unwrap().test_sizes[1], true, None);
    let idle = r.stalls.iter().find(|(n, _)| n == "idle").map_or(0, |&(_, c)| c);
    let z = zs(&r);
    assert!(idle > 0, "the schedulers never idled: {:?}", r.stalls);
    assert!(z.c_idle == 0 && z.thresh_moves[0] == 0 && z.o_thresh == 0, "{z:?}");
    // on the tight SM warps do wait for registers and scratchpad, and some idle cycles count
    // (few: while they wait, the warps running mostly wait on memory, which Algorithm 1 reads
    // as parallelism that would not help)
    let (mut c_idle, mut c_mem) = (0, 0);
    for b in library() {
        let r = run(&tight(), b.name, b.test_sizes[1], true, None);
        let z = zs(&r);
        (c_idle, c_mem) = (c_idle + z.c_idle, c_mem + z.c_mem);
    }
    assert!(c_idle > 0 && c_mem > 100 * c_idle, "idle {c_idle}, memory {c_mem}");
}

/// Zorua and the warp-level manager compose with demand paging under Warp Disable (both
/// variants): pages fault, faulted warps wait with their registers, the coordinator keeps
/// granting, every application's output verifies.
#[test]
fn zorua_runs_with_demand_paging_under_warp_disable() {
    use mpgpu_ref::config::{FaultScheme, PagingLink};
    for alloc in [Alloc::Zorua, Alloc::Wlm] {
        for faults in [FaultScheme::WdCommit, FaultScheme::WdLastcheck] {
            let mut cfg = fermi();
            cfg.sm[0].count = 2;
            cfg.alloc = alloc;
            cfg.memory.vm = true;
            cfg.paging.link = PagingLink::Nvlink;
            cfg.faults = faults;
            cfg.validate().unwrap();
            for (bench, size) in [("sgemm", 64), ("reduction", 30000)] {
                let r = run(&cfg, bench, size, true, None);
                let what = format!("{alloc:?} {faults:?} {bench}");
                assert!(r.processes[0].verified, "{what}: {:?}", r.processes[0].failures);
                assert!(r.vm.faults > 0 && r.sm.faulted_insts > 0, "{what}: nothing faulted: {:?}", r.vm);
                assert!(zs(&r).grants > 0, "{what}: the coordinator granted nothing");
            }
        }
    }
}

/// `c` on the thesis's pipeline (out-of-order issue within a warp from a unified issue queue;
/// `docs/faults.md`).
fn on_thesis_pipeline(mut c: GpuConfig) -> GpuConfig {
    let t = &GpuConfig::preset("thesis16").unwrap().sm[0];
    let s = &mut c.sm[0];
    (s.pipeline, s.iq_entries, s.fetch_width) = (t.pipeline, t.iq_entries, t.fetch_width);
    c.validate().unwrap();
    c
}

/// Zorua and the warp-level manager run on the thesis's pipeline, oversubscribed (swap), with
/// every fault scheme that recovers: none (no paging), Warp Disable, the replay queue and the
/// operand log under demand paging. A phase specifier issues only as its warp's oldest
/// instruction, and under a replaying scheme only once no older access of its warp can still
/// fault, so its event is sent once and no replay reads a register that went home: every
/// application verifies, and faults, replays, grants, phase changes and swap all happen.
/// Thread-block switching is refused with the reason.
#[test]
fn zorua_runs_on_the_thesis_pipeline_with_every_recovering_fault_scheme() {
    use mpgpu_ref::config::{FaultScheme, PagingLink, Pipeline};
    for alloc in [Alloc::Zorua, Alloc::Wlm] {
        for faults in [FaultScheme::Stall, FaultScheme::WdCommit, FaultScheme::Rq, FaultScheme::Ol] {
            // (Zorua oversubscribed; WLM, which gives a warp its registers whole, with room)
            let mut cfg = on_thesis_pipeline(if alloc == Alloc::Zorua { tight() } else { fermi() });
            cfg.sm[0].count = 2;
            assert_eq!(cfg.sm[0].pipeline, Pipeline::Thesis);
            cfg.alloc = alloc;
            // (the threshold held where `tight` puts it: paging's memory cycles would lower
            // it before the blocks oversubscribe)
            cfg.zorua.o_thresh_step = 0;
            cfg.faults = faults;
            if faults != FaultScheme::Stall {
                cfg.memory.vm = true;
                cfg.paging.link = PagingLink::Nvlink;
            }
            cfg.validate().unwrap();
            let mut swapped = 0;
            for (bench, size) in [("lbm", 32), ("reduction", 30000)] {
                let r = run(&cfg, bench, size, true, None);
                let what = format!("{alloc:?} {faults:?} {bench}");
                assert!(r.processes[0].verified, "{what}: {:?}", r.processes[0].failures);
                let z = zs(&r);
                assert!(z.grants > 0, "{what}: the coordinator granted nothing");
                if alloc == Alloc::Zorua {
                    assert!(z.phase_events > 0, "{what}: no phase change: {z:?}");
                    swapped += z.reg_sets[1] + z.smem_sets[1];
                }
                if faults != FaultScheme::Stall {
                    assert!(r.vm.faults > 0 && r.sm.faulted_insts > 0, "{what}: nothing faulted: {:?}", r.vm);
                }
                if faults.replays() {
                    assert!(r.sm.replayed > 0, "{what}: nothing replayed");
                }
            }
            assert!(alloc == Alloc::Wlm || swapped > 0, "{alloc:?} {faults:?}: no set in swap");
        }
    }
    let mut cfg = on_thesis_pipeline(tight());
    cfg.memory.vm = true;
    cfg.paging.link = PagingLink::Nvlink;
    cfg.faults = FaultScheme::Rq;
    cfg.tb_switch.enabled = true;
    let e = cfg.validate().expect_err("thread-block switching under Zorua");
    assert!(e.contains("field `tb_switch`") && e.contains("swap") && e.contains("alloc = \"block\""), "{e}");
}

/// A phase specifier right after a load that faults, on the thesis's pipeline under the
/// replay queue and the operand log. The new phase keeps only set 0, and the load's address
/// register (r10, set 2) is dead after the load in program order, but the load is replayed
/// after its fault and reads it again. The specifier therefore waits until no older access
/// of its warp can still fault: issued at once, its event would send the warp's registers
/// home and drop set 2, and the replay would load from 0xDEADBEEF.
#[test]
fn a_phase_change_waits_for_an_older_access_that_may_fault() {
    use mpgpu_ref::config::{FaultScheme, PagingLink};
    use mpgpu_ref::func::Launch;
    use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
    use std::sync::Arc;
    const K: &str = ".kernel zph\n.regs 12\n.threads 32\n.params 8\n\
        phase 12, 0\n mov.u32 r8, %tid.x\n shl.b32 r9, r8, 2\n ld.param.u32 r10, [0]\n add.u32 r10, r10, r9\n\
        ld.param.u32 r0, [4]\n add.u32 r0, r0, r9\n ld.global.u32 r1, [r10]\n phase 4, 0\n\
        mul.u32 r2, r1, 3\n st.global.u32 [r0], r2\n exit\n";
    let k = Arc::new(mpgpu_ref::assemble_one("zph.s", K).unwrap_or_else(|e| panic!("{e}")));
    assert!(mpgpu_ref::phases::sound(&k).is_ok(), "the kernel's own specifiers are used only if sound");
    for faults in [FaultScheme::Rq, FaultScheme::Ol] {
        let input: Vec<u32> = (0..32).map(|i| 1000 + 7 * i).collect();
        let expect: Vec<u32> = input.iter().map(|v| 3 * v).collect();
        let k = k.clone();
        let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
            let inp = mem.alloc_u32s(&input);
            let out = mem.alloc(4 * 32);
            let l = Launch::linear(&k, 1, vec![inp, out]);
            (vec![l], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(expect.clone()) }])
        }));
        let mut cfg = on_thesis_pipeline(fermi());
        cfg.sm[0].count = 1;
        cfg.memory.vm = true;
        cfg.paging.link = PagingLink::Nvlink;
        cfg.faults = faults;
        cfg.validate().unwrap();
        let mut g = Gpu::new(&cfg);
        g.add_process("zph", 0, 0, vec![("zph".into(), p)]);
        g.run(RunLimits { watchdog: 2_000_000, ..RunLimits::default() }, &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{faults:?}: {e}"));
        let r = g.result();
        assert!(r.sm.replayed > 0, "{faults:?}: the load should have faulted and been replayed");
        assert!(zs(&r).phase_events > 0, "{faults:?}: no phase change");
        assert!(r.processes[0].verified, "{faults:?}: {:?}", r.processes[0].failures);
    }
}
