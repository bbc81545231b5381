//! Warped-Slicer's arithmetic and the water-filling unit's model: the unit, one step per
//! cycle, decides what Algorithm 1 decides on the same scores; the paper's worked cases.

use mpgpu_ref::units::wf::Wf;
use mpgpu_ref::warped::{brute_force, drive, random_scenario, score, staircase, water_fill, Round, Scenario};
use mpgpu_spec::units::wf::{NMAX, RES};
use rand::SeedableRng;

const FERMI: [u32; RES] = [8, 1536, 32768, 49152];

/// Scores from a curve given per count (1-based), as Eq. 4 gives them with no stalls.
fn curve(p: &[u64]) -> [u64; NMAX] {
    let mut s = [0; NMAX];
    s[..p.len()].copy_from_slice(p);
    s
}

#[test]
fn mm_and_mvp_end_at_five_and_one() {
    // MM (compute, saturating at its 5-CTA maximum) and MVP (cache-sensitive: best at 1 CTA,
    // thrashing after), Table III's MM + MVP: (5, 1).
    let mm = curve(&[30, 50, 70, 85, 100]);
    let mvp = curve(&[100, 90, 80, 70, 60, 50, 45, 40]);
    let req = [[1, 128, 5632, 0], [1, 192, 3840, 0]];
    let d = water_fill(&[mm, mvp], &req, FERMI, 120);
    assert_eq!((d.quota.clone(), d.spatial), (vec![5, 1], false), "{d:?}");
    // Even's split would give MM at most 2 (half the registers): (2, 4) in Table III.
    let b = brute_force(&[mm, mvp], &req, FERMI);
    assert_eq!(b.1, vec![5, 1]);
}

#[test]
fn the_lowest_index_wins_a_tie_and_equal_steps_are_dropped() {
    // Two identical kernels: every Select ties; the lower index takes each step first.
    let c = curve(&[10, 20, 20, 30]);
    assert_eq!(staircase(&c).iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 2, 4]);
    let req = [[1, 64, 1024, 0], [1, 64, 1024, 0]];
    // Room for 5 CTAs: kernel 0 goes to 2, kernel 1 to 2, kernel 0 to 4 needs 2 more: no
    // room (Full); kernel 1 to 4 neither.
    let d = water_fill(&[c, c], &req, [5, 1536, 32768, 49152], 120);
    assert_eq!(d.quota, vec![2, 2]);
    let d = water_fill(&[c, c], &req, [7, 1536, 32768, 49152], 120);
    assert_eq!(d.quota, vec![4, 2]);
}

#[test]
fn the_fallback_takes_over_when_a_kernel_keeps_too_little() {
    // Two large kernels (HOT + BFS-like): with one CTA each they reach 40 % and 35 % of their
    // peaks, below 1.2 / 2 = 60 %: Spatial.
    let hot = curve(&[40, 70, 100]);
    let bfs = curve(&[35, 70, 100]);
    let req = [[1, 256, 9216, 4096], [1, 512, 7680, 0]];
    let d = water_fill(&[hot, bfs], &req, FERMI, 120);
    assert!(d.spatial, "{d:?}");
    // The first steps alone over-subscribe the SM: Spatial too.
    let d = water_fill(&[hot, bfs], &[[1, 256, 30000, 0], [1, 512, 7680, 0]], FERMI, 120);
    assert!(d.spatial && d.quota == vec![1, 1], "{d:?}");
    // A threshold of 0 never falls back when the first steps fit.
    assert!(!water_fill(&[hot, bfs], &req, FERMI, 0).spatial);
}

#[test]
fn eq_4_scales_an_sm_by_its_share_of_the_ctas() {
    // 16 SMs running 1..8 CTAs twice: n = 16, A = 72 (CTA_avg 4.5). With no stalls the score is
    // the IPC times W A; an SM above the average is scaled up by its stall fraction.
    assert_eq!(score(1000, 0, 5000, 16, 72, 8), 1000 * 5000 * 72);
    assert_eq!(score(1000, 2500, 5000, 16, 72, 8), 1000 * (5000 * 72 + 2500 * (128 - 72)));
    assert_eq!(score(1000, 2500, 5000, 16, 72, 1), 1000 * (5000 * 72 - 2500 * 56));
    // Exactly: factor = 1 + phi (CTA_i / CTA_avg - 1), phi = 0.5, CTA_i = 8.
    let f = score(1, 2500, 5000, 16, 72, 8) as f64 / (5000.0 * 72.0);
    approx::assert_relative_eq!(f, 1.0 + 0.5 * (8.0 / 4.5 - 1.0), epsilon = 1e-12);
}

/// The unit's model against Algorithm 1 on random decisions: K = 2, 3, 4, ties, kernels past
/// their peak, the fallback, several rounds.
#[test]
fn the_unit_decides_what_algorithm_1_decides() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let (mut ties, mut spatial, mut intra, mut rounds) = (0, 0, 0, 0);
    for n in 0..600 {
        let k = 2 + (n % 3) as u8;
        let sc = random_scenario(&mut rng, k, 16);
        let mut u = Wf::new(16);
        let (_, quota, sp) = drive(&mut u, &sc, 200_000, &mut |_, _, _| {}).unwrap_or_else(|| panic!("scenario {n}: not done"));
        let e = sc.expected();
        assert_eq!((quota.clone(), sp), (e.quota.clone(), e.spatial), "scenario {n}: {sc:?}");
        ties += !u.ties.is_empty() as u32;
        if sp { spatial += 1 } else { intra += 1 }
        rounds += (sc.rounds.len() > 1) as u32;
    }
    eprintln!("ties {ties}, spatial {spatial}, intra {intra}, multi-round {rounds}");
    assert!(ties > 100 && spatial > 50 && intra > 100 && rounds > 200, "ties {ties}, spatial {spatial}, intra {intra}, multi-round {rounds}");
}

/// The cycles a decision takes follow the contract: window, sum, scale, collect (six cycles a
/// profiling SM), build (16 per kernel), norm (1 + 18 per step), init, the loop, final, and
/// the delay from the last window's last cycle.
#[test]
fn a_decision_takes_the_cycles_the_contract_gives() {
    let map: Vec<(u8, u8)> = (0..16).map(|s| ((s / 8) as u8, (s % 8 + 1) as u8)).collect();
    let mm = [30u32, 50, 70, 85, 100, 100, 100, 100];
    let mvp = [100u32, 90, 80, 70, 60, 50, 45, 40];
    let insts = (0..16).map(|s| if s < 8 { mm[s] } else { mvp[s - 8] }).collect();
    let sc = Scenario {
        kernels: 2,
        window: 5000,
        pct: 120,
        delay: 0,
        total: FERMI,
        req: vec![[1, 128, 5632, 0], [1, 192, 3840, 0]],
        rounds: vec![Round { map, insts, stalls: vec![0; 16] }],
    };
    let mut u = Wf::new(16);
    let (cycles, quota, sp) = drive(&mut u, &sc, 100_000, &mut |_, _, _| {}).unwrap();
    assert_eq!((quota, sp), (vec![5, 1], false));
    // start (1) + window + sum 16 + scale 3 + collect 16 x 12 + build 2 x 2 x 16 + norm 5 x 18
    // (MM's steps) + 1 x 18 (MVP's) + init 2 x 5 + loop + final 2 x 3 + wait 1, done the
    // cycle after. Loop: MM steps 2..5 (select 2, read, mul 3, fit 2 each: 32), MVP at its
    // peak marked Full (select 2, read: 3), MM at its peak Full (3), none left (2).
    let expect = 1 + 5000 + 16 + 3 + 192 + 64 + 90 + 18 + 10 + 32 + 8 + 6 + 1;
    assert_eq!(cycles, expect);
    // A delay longer than the computation: done `delay` cycles after the window's last cycle.
    let mut sc2 = sc.clone();
    sc2.delay = 1000;
    let mut last_win = 0;
    let (c2, ..) = drive(&mut Wf::new(16), &sc2, 100_000, &mut |c, _, o| if o.win_last { last_win = c }).unwrap();
    assert_eq!(last_win, 5000);
    assert_eq!(c2, 1 + 4999 + 1000);
}

/// The greedy loop against the brute-force max-min on random curves (reported, and bounded:
/// the loop stops a kernel at its first step that does not fit, so it can fall short).
#[test]
fn the_greedy_loop_is_near_the_brute_force_optimum() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (mut equal, mut total, mut worst) = (0, 0, 0u32);
    for n in 0..300 {
        let k = 2 + (n % 2) as u8;
        let sc = random_scenario(&mut rng, k, 16);
        let e = sc.expected();
        if e.spatial {
            continue;
        }
        let s = sc.scores();
        let (best, _) = brute_force(&s, &sc.req, sc.total);
        let got = *e.perf.iter().min().unwrap();
        assert!(got <= best, "greedy {got} above the optimum {best}");
        total += 1;
        equal += (got == best) as u32;
        worst = worst.max(best - got);
    }
    eprintln!("greedy = optimum in {equal} of {total}; largest shortfall {:.1} % of peak", worst as f64 / 655.36);
    assert!(total > 50 && equal * 10 >= total * 7, "greedy = optimum in {equal} of {total}");
}
