//! The coordinator's unit tests: grants, the pipelined timing, the threshold, barriers,
//! warp slots, scratchpad, the forward-progress rule, WLM, and random blocks against the
//! tables' audit.

use super::*;

/// A small SM: 8 logical warps' worth of room on 4 slots, 8 register sets, 4 scratchpad
/// sets.
fn small() -> Coord {
    Coord::new(Geometry { lwarps: 64, lblocks: 16, reg_sets: 8, smem_sets: 4, slots: 4, thresh: ThreshParams { o_default: 4, ..ThreshParams::default() }, pipelined: false })
}

/// A release in `run`'s list (its slot field).
const REL: u8 = 0xff;

/// Presents `i` when the coordinator is ready and clocks until it is idle again; returns
/// the grants as (cycle after the event was taken, warp, slot, register row's physical
/// mask), with the warps released as (cycle, warp, [`REL`], 0), and the cycles taken.
fn run(c: &mut Coord, mut i: In) -> (Vec<(u32, u8, u8, u16)>, u32) {
    assert!(c.outputs(&In::default()).ready, "busy");
    // (a warp's event names its block)
    if matches!(i.ev, Ev::Phase | Ev::Barrier | Ev::WarpEnd) {
        i.block = c.wblock[i.warp as usize];
    }
    let mut grants = Vec::new();
    c.clock(&i);
    let mut t = 1;
    loop {
        let o = c.outputs(&In::default());
        assert!(!(o.grant && o.release != 0), "a grant and a release in one cycle");
        if o.grant {
            grants.push((t, o.grant_warp, o.grant_slot, o.reg_phys));
        }
        grants.extend(bits(o.release).map(|w| (t, w as u8, REL, 0)));
        if o.ready {
            break;
        }
        c.clock(&In::default());
        t += 1;
        assert!(t < 10_000, "the coordinator does not return to idle");
    }
    assert_eq!(c.error(), None);
    (grants, t)
}

fn start(block: u8, warps: u64, regs: u8, smem: u32) -> In {
    In { ev: Ev::BlockStart, block, warps, nwarps: warps.count_ones() as u8, regs, smem, ..In::default() }
}

fn ev(ev: Ev, warp: u8) -> In {
    In { ev, warp, ..In::default() }
}

#[test]
fn a_block_start_grants_its_warps_one_by_one_with_physical_sets_lowest_first() {
    let mut c = small();
    // two warps, 8 registers (2 sets) each, 1 KB of scratchpad
    let (g, t) = run(&mut c, start(0, 0b11, 8, 1000));
    // cycle 0 takes the event; warp 0: examine (1), a scratchpad set and 2 register sets
    // (2-4), the rows read (5), the grant (6); warp 1: examine (7), 2 sets (8, 9), read
    // (10), grant (11); a cycle finding none left (12); idle in 13.
    assert_eq!(g, vec![(6, 0, 0, 0b11), (11, 1, 1, 0b11)]);
    assert_eq!(t, 13);
    let s = c.state();
    assert_eq!((s.sched, s.reg_free, s.smem_free, s.slots_free), (0b11, 4, 3, 0b1100));
    // the rows: warp 1's sets are physical sets 2 and 3
    assert_eq!(c.rtab[1][..3], [REG_VALID | 2, REG_VALID | 3, 0]);
    assert_eq!(c.stab[0][..2], [SMEM_VALID, 0]);
}

#[test]
fn the_pipelined_timing_takes_the_cycles_docs_zorua_md_gives() {
    let mut c = small();
    c.g.pipelined = true;
    let (g, t) = run(&mut c, start(0, 0b11, 8, 1000));
    // cycle 0 takes the event, 1 applies it; the scan's start: the fit (2), the queues'
    // candidates (3), the first (4); warp 0: its fields (5), its block's (6), its needs
    // (7), the decision (8, warp 1 picked meanwhile); the lowest free sets (9), a
    // scratchpad set and 2 register sets (10-12), the rows read (13), the grant (14);
    // warp 1: 15-18, its 2 register sets (19-21), read (22), grant (23); idle in 24 (no
    // warp was left when warp 1 was picked: no cycle ends the scan).
    assert_eq!(g, vec![(14, 0, 0, 0b11), (23, 1, 1, 0b11)]);
    assert_eq!(t, 24);
    let s = c.state();
    assert_eq!((s.sched, s.reg_free, s.smem_free, s.slots_free), (0b11, 4, 3, 0b1100));
    assert_eq!(c.rtab[1][..3], [REG_VALID | 2, REG_VALID | 3, 0]);
    // a warp's end: taken (0), applied (1), its register sets freed: the highest entry
    // selected (2), two sets freed (3, 4); the scan's start (5-7) finds nothing
    let (g, t) = run(&mut c, ev(Ev::WarpEnd, 1));
    assert_eq!((g, t), (vec![], 8));
    assert_eq!(c.state().reg_free, 6);
    // warp 0 at a barrier, the last of its block now: taken (0), applied (1, the barrier
    // opens), the release step (2), with no scan (nothing was freed)
    let (g, t) = run(&mut c, ev(Ev::Barrier, 0));
    assert_eq!((g, t), (vec![(2, 0, REL, 0)], 3));
    // a phase change whose needs it holds: released likewise; one to fewer sets is
    // released too, then its set is freed (3, 4) and a scan starts (5-7)
    let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, smem: 1000, ..In::default() });
    assert_eq!((g, t), (vec![(2, 0, REL, 0)], 3));
    let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, ..In::default() });
    assert_eq!((g, t), (vec![(2, 0, REL, 0)], 8));
    assert_eq!(c.state().reg_free, 7);
    // a grant needing no set goes from the decision to the grant: a phase change needing
    // a second scratchpad set... (none free here: one more register set, which is)
    let (g, t) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
    // taken (0), applied (1), scan start (2-4), examined (5-8), the lowest free set (9), the
    // set (10), the rows read (11), the grant (12)
    assert_eq!((g, t), (vec![(12, 0, 0, 0b11)], 13));
}

#[test]
fn a_warps_event_must_name_its_block() {
    let mut c = small();
    run(&mut c, start(0, 0b1, 8, 0));
    run(&mut c, start(1, 0b10, 8, 0));
    c.clock(&In { ev: Ev::Barrier, warp: 1, block: 0, ..In::default() });
    assert!(c.error().unwrap().contains("not of that block"), "{:?}", c.error());
}

#[test]
fn registers_oversubscribe_within_the_threshold_and_a_warp_waits_past_it() {
    let mut c = small();
    // o_thresh 4/16 of 8 sets: 2 sets may be in swap. Three warps of 12 registers (3 sets):
    // 8 physical + 1 swap for the first three... the third gets 2 physical and 1 swap.
    let (g, _) = run(&mut c, start(0, 0b1111, 12, 0));
    assert_eq!(g.iter().map(|x| (x.1, x.3)).collect::<Vec<_>>(), vec![(0, 0b111), (1, 0b111), (2, 0b011)]);
    // the fourth needs 3 sets in swap, over the threshold: it waits in the register queue
    let s = c.state();
    assert_eq!((s.rq, s.reg_free, s.reg_swap), (0b1000, 0, 1));
    // warp 0 ends: its 3 physical sets free, and the rescan grants warp 3 on them
    let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
    assert_eq!(g.iter().map(|x| (x.1, x.3)).collect::<Vec<_>>(), vec![(3, 0b111)]);
    assert_eq!(c.reg_allocs, [11, 1]);
}

#[test]
fn a_warp_starts_only_while_its_peak_fits_the_virtual_space() {
    let mut c = small();
    c.th.o_thresh = 0;
    // four warps of 4 registers (1 set) now, 16 (4 sets) at their peak: 8 sets hold two
    // peaks, so two start; the others wait in the thread queue with slots free
    let (g, t) = run(&mut c, In { peak: 16, ..start(0, 0b1111, 4, 0) });
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1]);
    // (the event (1); warps 0 and 1: examine, a set, read, grant (4 each); then warps 2
    // and 3 are not offered to the scan, their block's peak no longer fitting: none left
    // (1))
    assert_eq!(t, 10);
    let s = c.state();
    assert_eq!((s.tq, s.started, s.reg_resv, s.reg_free, s.slots_free.count_ones()), (0b1100, 0b11, 8, 6, 2));
    // with o_thresh 4 (a quarter of 8 in swap) the virtual space is 10 sets: still two (a
    // phase change of warp 0 to a second set rescans; it is granted again)
    c.th.o_thresh = 4;
    let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0]);
    // at 8, 12 sets: a third starts
    c.th.o_thresh = 8;
    let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 12, ..In::default() });
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!((c.state().started, c.state().reg_resv), (0b111, 12));
    // a warp's end returns its reservation: the fourth starts
    let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3]);
    assert_eq!((c.state().started, c.state().reg_resv), (0b1110, 12));
    assert_eq!(c.audit(), Ok(()));
    // without a peak (0) nothing is reserved: the old behaviour
    let mut c = small();
    c.th.o_thresh = 0;
    let (g, _) = run(&mut c, start(0, 0b1111, 4, 0));
    assert_eq!(g.len(), 4);
}

#[test]
fn the_rescan_starts_from_the_register_queue() {
    for broken in [false, true] {
        let mut c = small();
        c.broken.rescan_from_thread = broken;
        c.th.o_thresh = 0;
        // warps 0..2 of block 0 and warp 3 of block 1 take every slot and 2 sets each
        run(&mut c, start(0, 0b0111, 8, 0));
        run(&mut c, start(1, 0b1000, 8, 0));
        // warp 1 asks for 2 more sets: none is free, it waits in the register queue
        run(&mut c, In { ev: Ev::Phase, warp: 1, regs: 16, ..In::default() });
        // warp 4 of block 2 waits for a slot in the thread queue
        run(&mut c, start(2, 0b1_0000, 8, 0));
        assert_eq!((c.state().rq, c.state().tq), (0b10, 0b1_0000));
        // warp 0 ends: a slot and 2 sets free
        let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
        let s = c.state();
        if broken {
            // from the thread queue: warp 4 takes both, warp 1 still waits
            assert_eq!((g[0].1, s.rq), (4, 0b10));
        } else {
            // from the register queue: warp 1 has its sets; warp 4 has the slot and waits
            // for sets
            assert_eq!((g[0].1, s.rq), (1, 0b1_0000));
        }
        assert_eq!(g.len(), 1);
    }
}

#[test]
fn a_barrier_holds_the_block_until_every_warp_arrives_and_releases_it_together() {
    let mut c = small();
    run(&mut c, start(0, 0b111, 4, 0));
    // an arrival keeps its slot and sets, and frees nothing: no scan (taken, applied)
    let (g, t) = run(&mut c, ev(Ev::Barrier, 0));
    assert_eq!((g, t), (vec![], 1));
    run(&mut c, ev(Ev::Barrier, 2));
    let s = c.state();
    assert_eq!((s.sched, s.tq, s.bar, s.slots_free), (0b010, 0b101, 0b101, 0b1000));
    // the last warp arrives: the three are released together on what they kept, the cycle
    // after the event
    let (g, _) = run(&mut c, ev(Ev::Barrier, 1));
    assert_eq!(g, vec![(1, 0, REL, 0), (1, 1, REL, 0), (1, 2, REL, 0)]);
    let s = c.state();
    assert_eq!((s.sched, s.tq, s.bar, s.slots_free, c.reg_allocs, c.grants), (0b111, 0, 0, 0b1000, [3, 0], 3));
    // an ended warp no longer counts: warps 0 and 2 wait, warp 1 ends, the barrier opens
    run(&mut c, ev(Ev::Barrier, 0));
    run(&mut c, ev(Ev::Barrier, 2));
    let (g, _) = run(&mut c, ev(Ev::WarpEnd, 1));
    assert_eq!(g.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(), vec![(0, REL), (2, REL)]);
    // the last schedulable warp at a barrier its block has not all reached: a scan, for
    // the forward-progress rule (warp 1 waits for registers past the threshold: 6 sets of
    // 8 are warp 0's)
    let mut c = small();
    c.th.o_thresh = 0;
    let (g, _) = run(&mut c, start(0, 0b11, 24, 0));
    assert_eq!((g.len(), c.state().rq), (1, 0b10));
    let (g, _) = run(&mut c, ev(Ev::Barrier, 0));
    assert_eq!((g.iter().map(|x| x.1).collect::<Vec<_>>(), c.valve_grants), (vec![1], 1));
}

#[test]
fn a_block_of_more_warps_than_slots_gives_them_up_at_barriers_and_takes_turns() {
    for pipelined in [false, true] {
        let mut c = small();
        c.g.pipelined = pipelined;
        // six warps on four slots: warps 0..3 run, 4 and 5 wait for slots
        let (g, _) = run(&mut c, start(0, 0b11_1111, 4, 0));
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert_eq!(c.state().block_info[0] >> 40, 1);
        // an arrival gives its slot up; warp 4 takes it
        let (g, _) = run(&mut c, ev(Ev::Barrier, 0));
        assert_eq!(g.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(), vec![(4, 0)]);
        for w in [1, 2, 3] {
            run(&mut c, ev(Ev::Barrier, w));
        }
        run(&mut c, ev(Ev::Barrier, 4));
        // the last arrives: the six pass through the queues again, taking free slots
        let (g, _) = run(&mut c, ev(Ev::Barrier, 5));
        assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert!(g.iter().all(|x| x.2 != REL));
        assert_eq!((c.state().tq, c.releases), (0b11_0000, 0));
        assert_eq!(c.audit(), Ok(()));
    }
}

#[test]
fn scratchpad_is_freed_at_the_blocks_end_not_a_warps() {
    for broken in [false, true] {
        let mut c = small();
        c.broken.smem_at_warp_end = broken;
        run(&mut c, start(0, 0b11, 4, 2048));
        assert_eq!(c.state().smem_free, 2);
        run(&mut c, ev(Ev::WarpEnd, 0));
        assert_eq!(c.state().smem_free, if broken { 4 } else { 2 });
        run(&mut c, ev(Ev::WarpEnd, 1));
        run(&mut c, In { ev: Ev::BlockEnd, block: 0, ..In::default() });
        let s = c.state();
        assert_eq!((s.smem_free, s.blocks), (4, 0));
    }
}

#[test]
fn scratchpad_grows_with_the_first_request_and_never_shrinks_before_the_end() {
    let mut c = small();
    run(&mut c, start(0, 0b11, 4, 0));
    // warp 0's phase asks for 3 KB: the block gets 3 sets; warp 1's later phase asks for 1 KB
    run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, smem: 3 * 1024, ..In::default() });
    assert_eq!(c.state().smem_free, 1);
    let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 1, regs: 4, smem: 1024, ..In::default() });
    assert_eq!(g.len(), 1);
    run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 4, smem: 0, ..In::default() });
    assert_eq!(c.state().smem_free, 1);
}

#[test]
fn with_no_warp_schedulable_the_first_examined_goes_past_the_threshold() {
    let mut c = small();
    c.th.o_thresh = 0;
    // 12 register sets for one warp on 8: 4 in swap although the threshold allows none
    let (g, _) = run(&mut c, start(0, 0b1, 48, 0));
    assert_eq!(g[0].3, 0xff);
    assert_eq!((c.state().reg_swap, c.valve_grants), (4, 1));
    // a second warp then waits: one warp is schedulable
    run(&mut c, start(1, 0b10, 4, 0));
    assert_eq!(c.state().rq, 0b10);
    // a phase change freeing sets to 2 (physical 0,1 kept): warp 0 is released at once, and
    // the waiting warp gets a freed set
    let (g, _) = run(&mut c, In { ev: Ev::Phase, warp: 0, regs: 8, ..In::default() });
    assert_eq!(g.iter().map(|x| (x.1, x.2 == REL)).collect::<Vec<_>>(), vec![(0, true), (1, false)]);
    assert_eq!(c.state().reg_swap, 0);
}

#[test]
fn an_epoch_moves_the_threshold_and_the_protocol_is_checked() {
    let mut c = small();
    run(&mut c, In { ev: Ev::Epoch, idle: 900, mem: 100, ..In::default() });
    assert_eq!(c.outputs(&In::default()).o_thresh, 5);
    run(&mut c, In { ev: Ev::Epoch, idle: 100, mem: 900, ..In::default() });
    assert_eq!(c.outputs(&In::default()).o_thresh, 4);
    c.clock(&ev(Ev::Phase, 3));
    assert!(c.error().unwrap().contains("not schedulable"));
}

#[test]
fn wlm_grants_in_block_order_without_swap() {
    let mut c = Coord::wlm(small().g);
    // block 0 takes 6 of the 8 register sets
    run(&mut c, start(0, 0b11, 12, 0));
    // block 1's first warp needs 3 sets, 2 are free: no swap, and the scan ends there, so
    // block 2's warp, which one set would do, waits behind it
    let (g, _) = run(&mut c, start(1, 0b1100, 12, 0));
    assert!(g.is_empty());
    let (g, _) = run(&mut c, start(2, 0b1_0000, 4, 0));
    assert!(g.is_empty());
    assert_eq!((c.state().reg_swap, c.state().reg_free), (0, 2));
    // a warp of block 0 ends: block 1's first warp goes, then the scan stops at its second
    let (g, _) = run(&mut c, ev(Ev::WarpEnd, 0));
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![2]);
    // the other ends: block 1's second warp, then block 2's
    let (g, _) = run(&mut c, ev(Ev::WarpEnd, 1));
    assert_eq!(g.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3, 4]);
    assert_eq!(c.state().reg_free, 1);
}

/// Random blocks of warps running random phases and barriers against the coordinator,
/// as an SM would: every cycle the tables, maps and counters agree, every block ends (no
/// deadlock, with the threshold at zero too), and swap, barriers and the forward-progress
/// rule were all exercised.
#[test]
fn random_blocks_all_finish_and_the_tables_stay_consistent() {
    use crate::units::zorua_random::{RandomParams, RandomSm};
    // (blocks of up to 16 warps on 12 slots: some give their slots up at barriers)
    let mut gave = false;
    for (seed, o, wlm, pipelined, most) in [(1u64, 2u32, false, false, 8), (2, 0, false, false, 8), (3, 8, false, false, 16), (4, 0, true, false, 8), (1, 2, false, true, 8), (2, 0, false, true, 16), (3, 8, false, true, 8), (4, 0, true, true, 8), (5, 0, false, true, 16)] {
        let g = Geometry { lwarps: 64, lblocks: 16, reg_sets: 24, smem_sets: 6, slots: 12, thresh: ThreshParams { o_default: o, ..ThreshParams::default() }, pipelined };
        let mut c = if wlm { Coord::wlm(g) } else { Coord::new(g) };
        let total_blocks = 60;
        // (a warp-level manager has no phases, and the SM keeps barriers)
        let p = RandomParams { blocks: total_blocks, warps: 1..=most, start_chance: 0.05, actions: if wlm { 0..=0 } else { 1..=4 }, bar_chance: 0.4, regs: 40, start_smem: 2, phase_smem: 3, epochs: false, latency: 19, slots: 12, exit_chance: 0.0 };
        let mut sm = RandomSm::new(seed, p);
        let (mut swaps_seen, mut gave_here) = (false, false);
        for now in 0..400_000u64 {
            let o = c.outputs(&In::default());
            let i = sm.input(now, o.ready);
            sm.outputs(now, &o);
            c.clock(&i);
            swaps_seen |= c.reg_allocs[1] > 0;
            gave_here |= bits(c.bar).any(|w| c.slot[w].is_none());
            if let Err(e) = c.audit() {
                panic!("seed {seed}, cycle {now}: {e}");
            }
            assert_eq!(c.error(), None, "seed {seed}, cycle {now}");
            if sm.done() {
                break;
            }
        }
        assert_eq!(sm.ended, total_blocks, "seed {seed}: blocks left unfinished (deadlock)");
        if wlm {
            assert!(!swaps_seen && c.grants > 150, "seed {seed}: WLM swapped, or granted only {}", c.grants);
            continue;
        }
        assert!(swaps_seen && sm.bars > 50 && c.grants > 200 && c.releases > 50, "seed {seed}: swaps {swaps_seen}, barriers {}, grants {}, releases {}", sm.bars, c.grants, c.releases);
        assert!(most > 12 || !gave_here, "seed {seed}: a warp of a block that fits the slots gave its slot up");
        gave |= gave_here;
        if o == 0 {
            assert!(c.valve_grants > 0, "with the threshold at zero, only the forward-progress rule swaps");
        }
    }
    // (blocks of more warps than slots took turns: their warps gave slots up at barriers)
    assert!(gave, "no warp gave its slot up at a barrier");
}
