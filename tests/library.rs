//! The kernel library end to end: every application verifies at two sizes and two seeds, a
//! corrupted output word is caught, runs are deterministic, and the footprints span the range.

use mpgpu_ref::func::FuncGpu;
use mpgpu_ref::library::{library, Bench};
use mpgpu_ref::{assemble, disassemble};
use std::collections::BTreeSet;

fn run(b: &Bench, size: u32, seed: u64) -> (FuncGpu, Box<dyn mpgpu_ref::Program>, mpgpu_ref::Counts) {
    let mut p = b.program(size, seed).unwrap_or_else(|e| panic!("{e}"));
    let mut gpu = FuncGpu::new();
    let c = gpu.run(p.as_mut()).unwrap_or_else(|e| panic!("{} size {size} seed {seed}: {e}", b.name));
    (gpu, p, c)
}

#[test]
fn every_application_verifies_at_two_sizes_and_two_seeds() {
    for b in library() {
        for size in b.test_sizes {
            for seed in [1, 2] {
                let (gpu, p, c) = run(&b, size, seed);
                assert!(c.warp_insts > 0);
                p.verify(&gpu.mem).unwrap_or_else(|e| panic!("{} size {size} seed {seed}: {e}", b.name));
            }
        }
    }
}

#[test]
fn a_corrupted_output_word_is_reported() {
    for b in library() {
        let size = b.test_sizes[0];
        let (mut gpu, p, _) = run(&b, size, 7);
        let out = &p.outputs()[0];
        let n = out.expected.len();
        assert!(n > 0, "{}: empty output", b.name);
        let idx = n / 2;
        let addr = out.addr + 4 * idx as u32;
        let w = gpu.mem.read(addr).unwrap();
        // Flip a high bit: a large change for integers and floats alike.
        gpu.mem.write(addr, w ^ 0x4000_0000).unwrap();
        let e = p.verify(&gpu.mem).expect_err("corruption not detected");
        assert_eq!(e.output, out.name, "{}", b.name);
        assert_eq!(e.index, idx, "{}: {e}", b.name);
        assert_eq!(e.mismatches, 1, "{}: {e}", b.name);
    }
}

#[test]
fn same_seed_same_results_bit_for_bit() {
    for b in library() {
        let size = b.test_sizes[1];
        let (g1, _, c1) = run(&b, size, 11);
        let (g2, _, c2) = run(&b, size, 11);
        assert_eq!(c1, c2, "{}: counts differ between identical runs", b.name);
        assert!(g1.mem == g2.mem, "{}: memory differs between identical runs", b.name);
        let (g3, _, _) = run(&b, size, 12);
        assert!(g1.mem != g3.mem, "{}: a different seed gave identical memory", b.name);
    }
}

#[test]
fn bad_sizes_are_refused_with_a_message() {
    for b in library() {
        let e = b.program(0, 1).err().unwrap_or_else(|| panic!("{}: size 0 accepted", b.name));
        assert!(e.contains(b.name) && e.contains("--size 0"), "{e}");
    }
}

#[test]
fn library_sources_round_trip_through_the_disassembler() {
    for b in library() {
        let ks = b.kernels().unwrap();
        for k in &ks.0 {
            let text = disassemble(k);
            let again = assemble("again.s", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert!(again[0].same_program(k), "{}: round trip differs", k.name);
        }
    }
}

/// The thesis's occupancy rule on a GTX480-like SM (1536 threads, 32768 registers, 8 blocks,
/// 48 KB shared), returning the limiting resource of each kernel.
fn limiter(regs: u32, smem: u32, threads: u32) -> &'static str {
    let by = [
        ("blocks", 8),
        ("threads", 1536 / threads),
        ("registers", 32768 / (regs * threads).max(1)),
        ("shared", if smem == 0 { u32::MAX } else { 49152 / smem }),
    ];
    let min = by.iter().map(|b| b.1).min().unwrap();
    // Ties go to the first resource in this order.
    by.iter().find(|b| b.1 == min).unwrap().0
}

#[test]
fn footprints_span_the_range_and_phases_are_present() {
    let lib = library();
    assert!(lib.len() >= 11, "the library has {} applications, expected at least 11", lib.len());
    let mut limits = BTreeSet::new();
    let mut with_phases = 0;
    let (mut regs, mut smem, mut threads) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for b in &lib {
        let ks = b.kernels().unwrap();
        let mut big_change = false;
        for k in &ks.0 {
            limits.insert(limiter(k.regs, k.shared_bytes, k.threads));
            regs.insert(k.regs);
            smem.insert(k.shared_bytes);
            threads.insert(k.threads);
            let ph = k.phases();
            for w in ph.windows(2) {
                let (r0, s0) = (w[0].1 as f64, w[0].2 as f64);
                let (r1, s1) = (w[1].1 as f64, w[1].2 as f64);
                let rel = |a: f64, b: f64| if a.max(b) == 0.0 { 0.0 } else { (a - b).abs() / a.max(b) };
                if rel(r0, r1) >= 0.25 || rel(s0, s1) >= 0.25 {
                    big_change = true;
                }
            }
        }
        with_phases += big_change as u32;
    }
    assert!(limits.len() >= 3, "occupancy limited by only {limits:?}");
    assert!(with_phases >= 3, "only {with_phases} applications change phase by 25% or more");
    assert!(regs.iter().max().unwrap() / regs.iter().min().unwrap() >= 4, "register range {regs:?}");
    assert!(*smem.iter().max().unwrap() >= 8192, "shared range {smem:?}");
    assert!(threads.len() >= 3, "thread range {threads:?}");
}

/// The phase-placement pass (`mpgpu_ref::phases`, Zorua §4.6) on every library kernel: what it
/// places keeps its promises (boundaries only where no branch crosses, 10 instructions apart,
/// every instruction's registers and scratchpad covered), and every application still
/// verifies with its kernels rewritten with the placed specifiers (branches and labels moved).
#[test]
fn the_phase_pass_places_sound_specifiers_and_every_application_still_verifies() {
    use mpgpu_ref::library::Kernels;
    use mpgpu_ref::phases::{addressed, check, place, renumbered, with_placed_phases, with_renumbered_phases, without_phases};
    use std::sync::Arc;
    let mut boundaries = 0;
    for (b, renumber) in library().into_iter().flat_map(|b| [(b.clone(), false), (b, true)]) {
        let ks = b.kernels().unwrap();
        let placed = Kernels(
            ks.0.iter()
                .map(|k| {
                    // (and with the registers renumbered first, `[zorua] renumber = true`:
                    // docs/zorua.md, "Phase specifiers")
                    let r = renumbered(k);
                    let w = if renumber { with_renumbered_phases(k) } else { with_placed_phases(k) };
                    let code = without_phases(if renumber { &r } else { k });
                    let p = place(&code, addressed(k));
                    check(&code, addressed(k), &p).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                    boundaries += p.len() - 1;
                    assert_eq!(w.phases().len(), p.len());
                    assert!(w.phases().iter().all(|&(_, r, s)| (r as u32) <= k.regs && s <= k.shared_bytes), "{}: {:?}", k.name, w.phases());
                    Arc::new(w)
                })
                .collect(),
        );
        for (size, seed) in [(b.test_sizes[0], 1), (b.test_sizes[1], 2)] {
            let mut p = (b.make)(&placed, size, seed).unwrap();
            let mut gpu = FuncGpu::new();
            gpu.run(p.as_mut()).unwrap_or_else(|e| panic!("{} with placed phases: {e}", b.name));
            p.verify(&gpu.mem).unwrap_or_else(|e| panic!("{} with placed phases (renumbered: {renumber}): {e}", b.name));
        }
    }
    assert!(boundaries >= 5, "the pass found only {boundaries} phase changes over the library");
    // (renumbering brings a kernel's live registers down to the lowest: lbm's peak phase
    // occupies r0..r40 as written, and about as many registers as are live at once after)
    let lbm = library().into_iter().find(|b| b.name == "lbm").unwrap().kernels().unwrap().0[0].clone();
    let peak = |k: &mpgpu_ref::kernel::Kernel| with_renumbered_phases(k).phases().iter().map(|p| p.1).max().unwrap();
    let before = place(&without_phases(&lbm), 0).iter().map(|p| p.regs).max().unwrap();
    assert!(before >= 40 && peak(&lbm) <= 24, "lbm's peak phase: {before} registers as written, {} renumbered", peak(&lbm));
}

/// The scratchpad a kernel addresses (`phases::addressed`, a value-range analysis of its
/// shared-memory addresses; docs/zorua.md, "Phase specifiers") is all it touches: every
/// application verifies with each kernel's scratchpad cut to it (the functional model faults
/// on an access past a kernel's scratchpad), whatever the declaration. sad's bound is exact:
/// 4 bytes less faults. And the pass's specifiers for sad declared at 48 KB ask for the
/// 16 KB it uses, not the declaration.
#[test]
fn the_scratchpad_a_kernel_addresses_is_bounded_by_the_analysis() {
    use mpgpu_ref::library::{Kernels, Spec};
    use mpgpu_ref::phases::{addressed, place, without_phases};
    use std::sync::Arc;
    let cut = |b: &Bench, spec: Spec, less: u32| -> Result<Vec<u32>, String> {
        let ks = spec.apply(b, b.kernels().unwrap())?;
        let mut cuts = Vec::new();
        let ks = Kernels(
            ks.0.iter()
                .map(|k| {
                    let mut k = (**k).clone();
                    k.shared_bytes = addressed(&k).next_multiple_of(4).saturating_sub(less);
                    cuts.push(k.shared_bytes);
                    Arc::new(k)
                })
                .collect(),
        );
        let mut p = (b.make)(&ks, b.test_sizes[0], 1)?;
        let mut gpu = FuncGpu::new();
        gpu.run(p.as_mut()).map_err(|e| e.to_string())?;
        p.verify(&gpu.mem).map_err(|e| e.to_string())?;
        Ok(cuts)
    };
    let mut smaller = 0;
    for b in library().iter().filter(|b| b.kernels().unwrap().0.iter().any(|k| k.shared_bytes > 0)) {
        for spec in [Spec::default(), Spec { smem: Some(49152), ..Spec::default() }] {
            let cuts = cut(b, spec, 0).unwrap_or_else(|e| panic!("{} at {spec:?}, cut to what it addresses: {e}", b.name));
            smaller += (spec.smem.is_some() && cuts.iter().any(|&c| c > 0 && c < 49152)) as u32;
        }
    }
    // (sad: exactly the bytes its search area reaches, at any declaration)
    let sad = library().into_iter().find(|b| b.name == "sad").unwrap();
    assert_eq!(cut(&sad, Spec { smem: Some(49152), ..Spec::default() }, 0).unwrap(), [16320]);
    let e = cut(&sad, Spec::default(), 4).unwrap_err();
    assert!(e.contains("16316") || e.to_lowercase().contains("range"), "{e}");
    let k = Spec { smem: Some(49152), ..Spec::default() }.apply(&sad, sad.kernels().unwrap()).unwrap().0[0].clone();
    let placed = place(&without_phases(&k), addressed(&k));
    assert!(placed.iter().all(|p| p.smem <= 16384) && placed.iter().any(|p| p.smem == 16320), "{placed:?}");
    assert!(smaller >= 4, "only {smaller} applications address less than a 48 KB declaration");
}

/// Zorua's sweeps (§5.2): each application runs the same work at other specifications, and
/// one it cannot take is refused with a reason.
#[test]
fn applications_run_the_same_work_at_other_specifications() {
    use mpgpu_ref::library::{regs_used, Spec};
    let verify = |b: &Bench, spec: Spec| {
        let size = b.test_sizes[1];
        let mut p = b.program_at(size, 5, spec).unwrap_or_else(|e| panic!("{e}"));
        let mut g = FuncGpu::new();
        g.run(p.as_mut()).unwrap_or_else(|e| panic!("{} at {spec:?}: {e}", b.name));
        p.verify(&g.mem).unwrap_or_else(|e| panic!("{} at {spec:?}: {e}", b.name));
        // (the specification is the launch's)
        let l = p.next_launch(&g.mem);
        assert!(l.is_none(), "one program, launched once");
    };
    let mut flexible = 0;
    for b in library() {
        let ks = b.kernels().unwrap();
        let used = ks.0.iter().map(|k| regs_used(k)).max().unwrap();
        verify(&b, Spec { regs: Some(used), ..Spec::default() });
        verify(&b, Spec { regs: Some(64), ..Spec::default() });
        let e = b.program_at(b.test_sizes[0], 1, Spec { regs: Some(used - 1), ..Spec::default() }).err().unwrap();
        assert!(e.contains("--regs must be"), "{e}");
        match b.threads {
            Some((lo, hi)) => {
                flexible += 1;
                for t in [lo, (lo + hi) / 64 * 32, hi] {
                    verify(&b, Spec { threads: Some(t), ..Spec::default() });
                }
                let e = b.program_at(b.test_sizes[0], 1, Spec { threads: Some(lo + 16), ..Spec::default() }).err().unwrap();
                assert!(e.contains("multiple of 32"), "{e}");
            }
            None => {
                let e = b.program_at(b.test_sizes[0], 1, Spec { threads: Some(128), ..Spec::default() }).err().unwrap();
                assert!(e.contains("fixed blocks"), "{e}");
            }
        }
        let smem = ks.0.iter().map(|k| k.shared_bytes).max().unwrap();
        if smem > 0 {
            verify(&b, Spec { smem: Some(smem + 8192), ..Spec::default() });
        } else {
            assert!(b.program_at(b.test_sizes[0], 1, Spec { smem: Some(4096), ..Spec::default() }).is_err());
        }
    }
    assert!(flexible >= 7, "{flexible} applications can change their block size");
}

/// cutcp's blocks cover a row of lattice points per 8 threads, so a block of more threads is
/// taller and the grid shorter: at 64 x 64 points, two or more blocks in y, every point must
/// still get every atom near it (its block's list). A kernel that kept 16 rows per block while
/// its threads covered more would read the wrong block's list for the rows past its 16, and
/// race on them with the next block. (On the timing GPU, where blocks run at once: run one
/// after another, in order, the next block overwrites the wrong rows.)
#[test]
fn cutcp_blocks_grow_with_their_threads() {
    use mpgpu_ref::config::GpuConfig;
    use mpgpu_ref::library::{find, Spec};
    use mpgpu_ref::timing::gpu::{Gpu, RunLimits};
    let b = find("cutcp").unwrap();
    for t in [128, 256, 512] {
        let mut g = Gpu::new(&GpuConfig::preset("fermi15").unwrap());
        g.add_process("cutcp", 0, 0, vec![("cutcp".into(), b.program_at(64, 9, Spec { threads: Some(t), ..Spec::default() }).unwrap())]);
        g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{t} threads: {e}"));
        let r = g.result();
        assert!(r.processes[0].verified, "{t} threads: {:?}", r.processes[0].failures);
    }
}
