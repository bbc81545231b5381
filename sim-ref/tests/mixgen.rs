//! The thesis's random workloads (`mixgen`): reproducible, of the asked size and shape, sized
//! for several rounds of blocks, replayed.

use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::library::{find, PARBOIL};
use mpgpu_ref::mixgen::{mix, rounds_of, sizes, MixParams};

#[test]
fn mixes_are_reproducible_and_shaped_as_the_thesis_draws_them() {
    let cfg = GpuConfig::preset("k20c").unwrap();
    let s = sizes(&cfg, 3).unwrap();
    assert_eq!(s.len(), PARBOIL.len());
    for &(name, size, r) in &s {
        let b = find(name).unwrap();
        assert!(size >= b.default_size, "{name}: {size} below its default");
        assert_eq!(rounds_of(&b, &cfg, size).unwrap(), r);
        // (three rounds, or the most it can fill: histo's grid does not grow with its input)
        assert!(r >= 3.0 || name == "histo", "{name} at {size}: {r} rounds");
    }
    let p = MixParams::default();
    for n in [2usize, 4, 6, 8] {
        let mut seen = std::collections::HashSet::new();
        for i in 0..4 {
            let w = mix(&cfg.name, &s, n, 7, i, &p).unwrap();
            assert_eq!(w, mix(&cfg.name, &s, n, 7, i, &p).unwrap(), "the same arguments give the same workload");
            assert_eq!(w.processes.len(), n);
            assert_eq!(w.min_runs, Some(3));
            w.validate().unwrap();
            let kernels: std::collections::HashSet<&str> = w.processes.iter().map(|q| q.launches[0].kernel.as_str()).collect();
            assert_eq!(kernels.len(), n, "no application twice while the pool lasts: {:?}", w.processes);
            for q in &w.processes {
                assert_eq!(q.arrival, 0);
                assert_eq!(q.priority, 0);
                assert_eq!(Some(s.iter().find(|x| x.0 == q.launches[0].kernel).unwrap().1), q.launches[0].size);
            }
            seen.insert(w.to_toml());
            // (the file reads back as it was written)
            assert_eq!(mpgpu_ref::workload::Workload::parse("m.toml", &w.to_toml()).unwrap(), w);
        }
        assert!(seen.len() >= 3, "{n} processes: the draws differ between workloads ({} distinct of 4)", seen.len());
        assert_ne!(mix(&cfg.name, &s, n, 7, 0, &p).unwrap(), mix(&cfg.name, &s, n, 8, 0, &p).unwrap(), "another seed, another draw");
    }
    // Twelve processes from nine applications: some twice, each with its own name and input.
    let w = mix(&cfg.name, &s, 12, 1, 0, &p).unwrap();
    let names: std::collections::HashSet<&str> = w.processes.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names.len(), 12);
    // Priority: one process leads in each workload, each position in turn.
    let pr = MixParams { priority: true, ..p };
    for i in 0..4u64 {
        let w = mix(&cfg.name, &s, 4, 3, i, &pr).unwrap();
        let lead: Vec<usize> = (0..4).filter(|&k| w.processes[k].priority == 1).collect();
        assert_eq!(lead, vec![i as usize]);
        // (it runs once; the others are replayed; the draws are the plain mix's)
        let once: Vec<usize> = (0..4).filter(|&k| !w.processes[k].replay).collect();
        assert_eq!(once, lead);
        let plain = mix(&cfg.name, &s, 4, 3, i, &p).unwrap();
        assert!(plain.processes.iter().all(|q| q.replay));
        assert_eq!(plain.processes.iter().map(|q| &q.launches).collect::<Vec<_>>(), w.processes.iter().map(|q| &q.launches).collect::<Vec<_>>());
    }
    assert!(mix(&cfg.name, &s, 0, 1, 0, &p).is_err());
}
