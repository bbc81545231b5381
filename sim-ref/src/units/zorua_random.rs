//! A random SM for testing Zorua's coordinator: blocks of warps running random phases and
//! barriers, sending the coordinator their events as an SM would and acting when granted. The
//! model's unit test (`random_blocks_all_finish_and_the_tables_stay_consistent`) and the RTL's
//! lockstep test (`testbenches/tests/zorua_rtl.rs`) both drive coordinators with it.

use mpgpu_spec::units::zorua::{Ev, In, Out};
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::ops::RangeInclusive;

/// What the random blocks look like.
#[derive(Clone, Debug)]
pub struct RandomParams {
    /// Blocks started in all.
    pub blocks: usize,
    /// Warps per block.
    pub warps: RangeInclusive<usize>,
    /// The chance each cycle that a block starts (when a logical block and warps are free).
    pub start_chance: f64,
    /// Actions per warp before its end (0 for a warp-level manager: no phases, and the SM
    /// keeps barriers), each a barrier with `bar_chance`, else a phase change.
    pub actions: RangeInclusive<usize>,
    pub bar_chance: f64,
    /// Registers per thread of a block start and of a phase change, at most.
    pub regs: u8,
    /// Scratchpad of a block start, in units of 1,000 bytes (not set-aligned), and of a
    /// phase change, in 1 KB sets, at most.
    pub start_smem: u32,
    pub phase_smem: u32,
    /// Epoch events every 2,048 cycles, often at the dead band's edges.
    pub epochs: bool,
    /// Cycles from a grant to the warp's next action, at most.
    pub latency: u64,
    /// The coordinator's physical warp slots: a block starts, as on an SM, only when the
    /// coordinator's `slot_room`, less the warps of starts not yet taken, covers its warps
    /// (all the slots, for a block of more warps).
    pub slots: usize,
    /// The chance that a warp, at an action, ends instead (the other warps of its block go on;
    /// a barrier they wait at then opens at its end, as a warp exiting before a barrier that
    /// its block's other warps reach).
    pub exit_chance: f64,
}

#[derive(Clone, Copy, Debug)]
enum Act {
    Phase(u8, u32),
    Bar,
    End,
}

/// The random SM's state.
pub struct RandomSm {
    p: RandomParams,
    rng: rand_chacha::ChaCha8Rng,
    evq: VecDeque<In>,
    /// Per logical warp: (block, program position, cycle of its next action).
    warp: Vec<Option<(usize, usize, Option<u64>)>>,
    prog: Vec<Vec<Act>>,
    alive: [u32; 16],
    used_blocks: u16,
    started: usize,
    /// The coordinator's `slot_room` at its last outputs, and the next block's warps.
    room: usize,
    next_nw: Option<usize>,
    /// Blocks ended, and barrier arrivals sent.
    pub ended: usize,
    pub bars: u64,
    /// Warps ended early (`RandomParams::exit_chance`).
    pub exits: u64,
}

impl RandomSm {
    pub fn new(seed: u64, p: RandomParams) -> RandomSm {
        RandomSm {
            p,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            evq: VecDeque::new(),
            warp: vec![None; 64],
            prog: vec![Vec::new(); 16],
            alive: [0; 16],
            used_blocks: 0,
            started: 0,
            room: 0,
            next_nw: None,
            ended: 0,
            bars: 0,
            exits: 0,
        }
    }

    /// Every block has ended.
    pub fn done(&self) -> bool {
        self.ended == self.p.blocks
    }

    /// Cycle `now`'s input to a coordinator that is `ready` or not: new blocks, epochs and the
    /// actions of granted warps whose time has come are queued, and the oldest queued event is
    /// given when the coordinator is ready.
    pub fn input(&mut self, now: u64, ready: bool) -> In {
        let rng = &mut self.rng;
        // (the next block's size is drawn once: like a dispatcher, the SM waits until it fits)
        let nw = *self.next_nw.get_or_insert_with(|| rng.gen_range(self.p.warps.clone()));
        let free: Vec<usize> = (0..64).filter(|&w| self.warp[w].is_none()).collect();
        let queued: usize = self.evq.iter().filter(|e| e.ev == Ev::BlockStart).map(|e| e.nwarps as usize).sum();
        let room = self.room.saturating_sub(queued) >= nw.min(self.p.slots);
        if self.started < self.p.blocks && rng.gen_bool(self.p.start_chance) && free.len() >= nw && room {
            if let Some(b) = (0..16).find(|&b| self.used_blocks >> b & 1 == 0) {
                let mut p = Vec::new();
                for _ in 0..rng.gen_range(self.p.actions.clone()) {
                    p.push(if rng.gen_bool(self.p.bar_chance) { Act::Bar } else { Act::Phase(rng.gen_range(0..=self.p.regs), rng.gen_range(0..=self.p.phase_smem) * 1024) });
                }
                p.push(Act::End);
                let mut mask = 0u64;
                for &w in &free[..nw] {
                    self.warp[w] = Some((b, 0, None));
                    mask |= 1 << w;
                }
                self.alive[b] = nw as u32;
                self.used_blocks |= 1 << b;
                self.started += 1;
                self.next_nw = None;
                // (the peak reservation: usually the most the block's phases need, sometimes
                // none or any value)
                let regs = rng.gen_range(0..=self.p.regs);
                let most = p.iter().fold(regs, |m, a| if let Act::Phase(r, _) = a { m.max(*r) } else { m });
                let peak = match rng.gen_range(0..5) {
                    0 => 0,
                    1 => rng.gen_range(0..=self.p.regs),
                    _ => most,
                };
                self.prog[b] = p;
                self.evq.push_back(In { ev: Ev::BlockStart, block: b as u8, warps: mask, nwarps: mask.count_ones() as u8, regs, smem: rng.gen_range(0..=self.p.start_smem) * 1000, peak, ..In::default() });
            }
        }
        if self.p.epochs && now % 2048 == 2047 {
            // (often at the dead band's edges: a difference of exactly c_delta_thresh holds the
            // threshold, one more moves it)
            let base = rng.gen_range(0..1900u16);
            let (idle, mem) = match rng.gen_range(0..6) {
                0 => (base + 64, base),
                1 => (base, base + 64),
                2 => (base + 65, base),
                3 => (base, base + 65),
                _ => (rng.gen_range(0..2048), rng.gen_range(0..2048)),
            };
            self.evq.push_back(In { ev: Ev::Epoch, idle, mem, ..In::default() });
        }
        for w in 0..64 {
            if let Some((b, pos, Some(at))) = self.warp[w] {
                if at == now {
                    self.warp[w] = Some((b, pos + 1, None));
                    // (an early end draws only when asked for: the streams of runs without it stay as they were)
                    let exits = self.p.exit_chance > 0.0 && !matches!(self.prog[b][pos], Act::End) && rng.gen_bool(self.p.exit_chance);
                    self.exits += exits as u64;
                    let e = match if exits { Act::End } else { self.prog[b][pos] } {
                        Act::Phase(r, s) => In { ev: Ev::Phase, warp: w as u8, block: b as u8, regs: r, smem: s, ..In::default() },
                        Act::Bar => {
                            self.bars += 1;
                            In { ev: Ev::Barrier, warp: w as u8, block: b as u8, ..In::default() }
                        }
                        Act::End => {
                            self.warp[w] = None;
                            self.alive[b] -= 1;
                            In { ev: Ev::WarpEnd, warp: w as u8, block: b as u8, ..In::default() }
                        }
                    };
                    self.evq.push_back(e);
                    if e.ev == Ev::WarpEnd && self.alive[b] == 0 {
                        // the block ends after its last warp
                        self.evq.push_back(In { ev: Ev::BlockEnd, block: b as u8, ..In::default() });
                    }
                }
            }
        }
        let i = if ready { self.evq.pop_front().unwrap_or_default() } else { In::default() };
        if i.ev == Ev::BlockEnd {
            self.used_blocks &= !(1 << i.block);
            self.ended += 1;
        }
        i
    }

    /// The coordinator's outputs at cycle `now`: a granted or released warp acts again a
    /// random time later.
    pub fn outputs(&mut self, now: u64, o: &Out) {
        self.room = o.slot_room as usize;
        let mut go = o.release | if o.grant { 1 << o.grant_warp } else { 0 };
        while go != 0 {
            let w = go.trailing_zeros() as usize;
            go &= go - 1;
            let (b, pos, _) = self.warp[w].expect("a grant or release to a warp that is not running");
            self.warp[w] = Some((b, pos, Some(now + self.rng.gen_range(1..=self.p.latency))));
        }
    }
}
