//! Random, legal stimulus for the whole scheduling framework's RTL (`Sched`, through
//! `SchedRtl`) in lockstep with the reference `Framework` unit on its own (no GPU around it):
//! for every policy and both preemption mechanisms, on several seeds, the outputs and the
//! architectural state (`fw::State`: SMST, KSRT with tokens and PTBQ occupancy, admission
//! counter, issue pointer) are compared every cycle, and the model's invariants
//! (`Framework::check_invariants`: occupancy, blocks and tokens conserved) are checked every
//! cycle.
//!
//! The stimulus keeps to the cycle contract (`docs/sched-framework.md`), as the GPU's
//! `framework_cycle` does: a command processor presents the oldest pending launch and holds it
//! until `cmd_taken`; an environment model of the SMs records every block the framework issues
//! (to which SM, which block, restored or new) and reports a finished block (`tb_done`) only
//! for an SM that holds one, and under context switching a saved block (`tb_saved`, a block
//! the SM really holds) only for an SM the framework has asked to preempt. On top of the
//! lockstep comparison the environment checks what it sees against the contract from the
//! outside: a restored block is one that was saved and not yet restored; nothing is issued to
//! an SM being preempted; a retired launch has nothing left resident or saved; the blocks
//! resident per SM agree with the SMST; an idle cycle (`busy` low, no input) changes nothing.
//!
//! The stimulus is steered into same-cycle corners, which are counted (from the inputs, the
//! outputs, the states before and after the edge, the policy engine's registered decision, which
//! the cycle checks, and the decision checked in the cycle before, which it applies) and each
//! must have happened at least once per
//! policy over the seeds; see [`Corners`].
//! A failure names the seed, policy, mechanism and SM count, and a mismatch shows the last 16
//! cycles of both sides.

use mpgpu_ref::units::dss::equal_share_tokens;
use mpgpu_ref::units::framework::{Framework, Mechanism, Policy};
use mpgpu_rtl::SchedFaults;
use mpgpu_spec::units::sched::dss::{Act, STATE_IDLE, STATE_RESERVED, STATE_RUNNING, STATE_SETUP};
use mpgpu_spec::units::sched::fw::{In, KernelCmd, Out, QuotaWrite, State, TbDone, TbSaved, MAX_GRID_BLOCKS};
use mpgpu_spec::units::sched::SchedParams;
use mpgpu_spec::Unit;
use mpgpu_tb::blocks::SchedPorts;
use mpgpu_tb::RtlUnit;
use mpgpu_tb::{InLoop, Mismatch};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, HashSet, VecDeque};

const MECHANISMS: [Mechanism; 2] = [Mechanism::ContextSwitch, Mechanism::Drain];
/// Seeds per policy and mechanism (each run draws its SM count, T_max and processes from it).
const SEEDS: [u64; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
/// Seeds whose SMs also report themselves full now and then (`In::full`, for Zorua): the
/// seeds above keep the stimulus (and the rare corners) they had before the input existed.
const FULL_SEEDS: [u64; 8] = [17, 18, 19, 20, 21, 22, 23, 24];
/// Cycles per run.
const CYCLES: u64 = 4000;
/// Cycles between changes of the stimulus' rates.
const PHASE: u64 = 250;
/// Cycles from the SMs' report of room (`In::full`) to the issue it allows: the ready SMs are
/// registered from it (at the end of cycle t), picked (t + 1), granted (t + 2), the issue
/// decided and its outputs registered (t + 3), driven in t + 4.
const ISSUE_LAG: usize = 4;
/// SM counts the runs draw from (the RTL holds 16 entries and uses the first `sms`). With one
/// SM the KSRT has one entry, so one kernel is active at a time and nothing is ever preempted;
/// small counts fill the KSRT often, 13 and 16 exercise the scans and the round robin.
const SM_COUNTS: [usize; 7] = [1, 2, 3, 4, 6, 13, 16];

/// Same-cycle corners, counted from observable signals (`before`/`after`: `fw::State` before
/// and after the cycle's edge; `i`, `o`: the cycle's inputs and outputs; `applied`: the decision
/// the cycle applies, checked in the cycle before, as the model's `applied_decision` reads it;
/// the registered decision the cycle checks is `before.pipe.dec_*`).
/// A decision is *applied* when an SM goes from idle to setup (only an assignment does that)
/// or `preempt` is high (a reservation).
#[derive(Clone, Copy, Debug, Default)]
struct Corners {
    /// `tb_done` in a cycle whose decision is applied.
    done_at_decision: u64,
    /// ... and the block finished on the very SM the decision reserves (`tb_done == preempt`).
    done_on_sm_reserved_now: u64,
    /// `tb_done` for an SM that is reserved (`before.smst[s].state == RESERVED`): a block
    /// finishing on an SM being preempted (draining; with context switching, a completion
    /// reported after the SM was frozen).
    done_on_preempted_sm: u64,
    /// ... whose last block it was (the preemption completes by a completion).
    done_empties_preempted_sm: u64,
    /// `tb_done` and `tb_saved` for the same reserved SM in one cycle.
    done_and_save_same_sm: u64,
    /// A command presented while every one of the `sms` KSRT entries is valid (`cmd_taken`
    /// must stay low).
    cmd_while_ksrt_full: u64,
    /// A command not taken although a KSRT entry is free: an SM still names it, or the entry
    /// was freed at the last edge (admission takes the entry picked in the cycle before).
    cmd_blocked_by_stale_entry: u64,
    /// A command presented when the entry picked for it in the cycle before has been taken
    /// since (the pipeline's `free` is stale; the command must wait).
    cmd_free_entry_taken: u64,
    /// An SM event applied (both its stages leave out the SMs an edge between could change, so
    /// it always holds: its SM goes from running or reserved to idle or setup).
    events: u64,
    /// An SM event picked for a reserved SM whose next kernel's "has work" changed at the edge
    /// between its two stages: the pick follows the registered bit (`pipe.ev_work`), so the SM
    /// goes to setup for a kernel with no work now, or idle from one that has work again.
    ev_work_stale: u64,
    /// A registered reservation whose SM still runs the kernel it is taken from, with an event
    /// in flight to it: it must be dropped at its check.
    reserve_blocked_by_flight: u64,
    /// The decision being checked names a kernel whose launch `retired` names in the same cycle:
    /// the decision must be dropped (not registered to be applied).
    decision_target_retires: u64,
    /// The decision checked did not hold (dropped), for any reason.
    decision_dropped: u64,
    /// Cycles with `busy` low and no input (checked to change nothing).
    idle_cycles: u64,
    /// Cycles with an SM reported full (`In::full`), and issues withheld by it: an SM ready
    /// by T_k, running a kernel with work, but full.
    full_cycles: u64,
    full_withheld: u64,
    preemptions: u64,
    restores: u64,
    saves: u64,
    retirements: u64,
    admissions: u64,
    /// Under sharing: quota writes presented; blocks issued to an SM of another kernel than
    /// its holder; handovers applied, and handover events that found no heir (they do
    /// nothing).
    quota_writes: u64,
    /// ... of them, with a quota above the launch's T_k (taken as T_k), and for a launch no
    /// valid entry holds (nothing written).
    quota_over_tk: u64,
    quota_missed: u64,
    shared_issues: u64,
    handovers: u64,
    handovers_without_heir: u64,
}

impl Corners {
    fn add(&mut self, o: &Corners) {
        macro_rules! sum {
            ($($f:ident),*) => { $(self.$f += o.$f;)* };
        }
        sum!(
            done_at_decision,
            done_on_sm_reserved_now,
            done_on_preempted_sm,
            done_empties_preempted_sm,
            done_and_save_same_sm,
            cmd_while_ksrt_full,
            cmd_blocked_by_stale_entry,
            cmd_free_entry_taken,
            events,
            ev_work_stale,
            reserve_blocked_by_flight,
            decision_target_retires,
            decision_dropped,
            idle_cycles,
            full_cycles,
            full_withheld,
            preemptions,
            restores,
            saves,
            retirements,
            admissions,
            quota_writes,
            quota_over_tk,
            quota_missed,
            shared_issues,
            handovers,
            handovers_without_heir
        );
    }
}

/// The rates of one phase of stimulus.
#[derive(Clone, Copy, Debug)]
struct Knobs {
    /// Chance per cycle that a new launch joins the command processor's queue.
    p_cmd: f64,
    /// Launches the command processor holds at most.
    queue: usize,
    /// Chance per cycle of a completion (higher in a decision cycle).
    p_done: f64,
    /// Chance per cycle of a save (context switching).
    p_save: f64,
    /// Grid sizes: up to this, now and then up to eight times it.
    max_tbs: u32,
    /// Chance per cycle that one SM's `full` bit flips (the SMs' reports of room).
    p_full: f64,
}

/// The command processor and the SMs around the framework.
struct Env {
    rng: ChaCha8Rng,
    /// The `full` bits' own generator (so that the other stimulus of a seed is what it was
    /// before the framework had the input), the bits now, and those of the last cycles.
    frng: ChaCha8Rng,
    full: u16,
    full_hist: VecDeque<u16>,
    full_on: bool,
    sms: usize,
    policy: Policy,
    mechanism: Mechanism,
    /// Processes the launches come from (Equal Spatial Sharing's shares).
    procs: usize,
    tmax: u8,
    pending: VecDeque<KernelCmd>,
    next_handle: u16,
    /// Blocks resident per SM as the framework issued them: (handle, block).
    resident: Vec<Vec<(u16, u32)>>,
    /// SMs the framework asked to preempt that still hold blocks.
    preempting: Vec<bool>,
    /// Saved contexts not yet restored: (handle, block).
    saved: HashSet<(u16, u32)>,
    /// Each launch's KSRT entry, as its issues name it: the SMs name it for a finished or a
    /// saved block.
    kernel_of: HashMap<u16, u8>,
    knobs: Knobs,
    /// Slicing inside the framework (`Sched::build` with sharing): the quota writes' own generator,
    /// the admitted launches (handle, priority, T_k) and those holding quotas as written.
    sharing: bool,
    qrng: ChaCha8Rng,
    admitted: Vec<(u16, u8, u8)>,
    with_quota: HashSet<u16>,
}

/// The save slot the environment reports for a block (every bit of the slot field used, so
/// that a PTBQ that loses or mixes up slots is caught at the restore).
fn save_slot(handle: u16, tb: u32) -> u8 {
    (tb.wrapping_mul(0x9e37_79b1) >> 7) as u8 ^ handle as u8
}

/// One cycle's stimulus: the inputs, and which resident blocks (SM, slot) finish and are saved.
struct Stim {
    i: In,
    done: Option<(usize, usize)>,
    saved: Option<(usize, usize)>,
}

impl Env {
    fn new(seed: u64, policy: Policy, mechanism: Mechanism, sharing: bool) -> Env {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((policy as u64) << 32) ^ ((mechanism as u64) << 40));
        let sms = SM_COUNTS[rng.gen_range(0..SM_COUNTS.len())];
        let tmax = [2u8, 4, 8, 16][rng.gen_range(0..4)];
        let procs = rng.gen_range(1..=sms.min(6));
        let first_handle = rng.gen();
        let mut e = Env {
            rng,
            sms,
            policy,
            mechanism,
            procs,
            tmax,
            pending: VecDeque::new(),
            next_handle: first_handle,
            resident: vec![Vec::new(); sms],
            preempting: vec![false; sms],
            saved: HashSet::new(),
            kernel_of: HashMap::new(),
            knobs: Knobs { p_cmd: 0.0, queue: 0, p_done: 0.0, p_save: 0.0, max_tbs: 1, p_full: 0.0 },
            frng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_f011),
            full_on: FULL_SEEDS.contains(&seed),
            full: 0,
            full_hist: VecDeque::new(),
            sharing,
            qrng: ChaCha8Rng::seed_from_u64(seed ^ 0x9007_a5),
            admitted: Vec::new(),
            with_quota: HashSet::new(),
        };
        e.new_phase();
        e
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        self.knobs = Knobs {
            p_cmd: [0.0, 0.01, 0.05, 0.3][r.gen_range(0..4)],
            queue: r.gen_range(1..=4),
            p_done: [0.05, 0.2, 0.5, 0.8][r.gen_range(0..4)],
            p_save: [0.1, 0.4, 0.9][r.gen_range(0..3)],
            max_tbs: [2, 6, 24][r.gen_range(0..3)],
            p_full: if self.full_on { [0.0, 0.02, 0.2][self.frng.gen_range(0..3)] } else { 0.0 },
        };
    }

    fn new_cmd(&mut self) -> KernelCmd {
        let r = &mut self.rng;
        let handle = self.next_handle;
        self.next_handle = self.next_handle.wrapping_add(1);
        let p = r.gen_range(0..self.procs);
        let max = self.knobs.max_tbs;
        let tbs = if r.gen_bool(0.01) {
            r.gen_range(1..=MAX_GRID_BLOCKS as u32)
        } else if r.gen_bool(0.15) {
            r.gen_range(1..=8 * max)
        } else {
            r.gen_range(1..=max)
        };
        // Mostly small T_k, so that kernels want more SMs (PPQ preempts only then).
        let tk = if r.gen_bool(0.7) { r.gen_range(1..=self.tmax.min(3)) } else { r.gen_range(1..=self.tmax) };
        let priority = if r.gen_bool(0.1) { r.gen_range(0..=15) } else { r.gen_range(0..=2) };
        let tokens = match self.policy {
            Policy::Dss if r.gen_bool(0.05) => r.gen_range(0..=64),
            Policy::Dss => r.gen_range(0..=self.sms as i8 + 1),
            _ => equal_share_tokens(self.sms, self.procs, p),
        };
        KernelCmd { handle, tbs, tk, priority, tokens }
    }

    /// SM `s`'s slot of a block of kernel entry `k` of `st`, if it holds one.
    fn slot_of(&self, st: &State, k: usize, s: usize) -> Option<usize> {
        let h = st.ksrt[k].handle;
        self.resident[s].iter().position(|b| b.0 == h)
    }

    /// Chooses the SM whose block finishes, steering into the corners: in the cycle the engine
    /// decides, the last outstanding block of its kernel (the kernel retires in the next cycle,
    /// which checks the decision, and the check drops it); in the cycle that applies one, a block on the SM it reserves; otherwise now
    /// and then a block on
    /// an SM being preempted, or of a kernel with nothing left to issue (so kernels retire).
    fn pick_done(&mut self, st: &State, act: (Act, u8, u8, u8), applied: (Act, u8, u8, u8)) -> Option<(usize, usize)> {
        let with: Vec<usize> = (0..self.sms).filter(|&s| !self.resident[s].is_empty()).collect();
        if with.is_empty() {
            return None;
        }
        let pick = |r: &mut ChaCha8Rng, v: &[usize]| v[r.gen_range(0..v.len())];
        if act.0 != Act::None {
            let k = act.2 as usize;
            if k < self.sms && st.ksrt[k].valid && st.ksrt[k].done_tbs + 1 == st.ksrt[k].tbs {
                if let Some((s, j)) = (0..self.sms).find_map(|s| self.slot_of(st, k, s).map(|j| (s, j))) {
                    return Some((s, j));
                }
            }
        }
        if applied.0 != Act::None {
            let sm = applied.1 as usize;
            if applied.0 == Act::Reserve && sm < self.sms && !self.resident[sm].is_empty() && self.rng.gen_bool(0.5) {
                let j = self.rng.gen_range(0..self.resident[sm].len());
                return Some((sm, j));
            }
        }
        let reserved: Vec<usize> = with.iter().copied().filter(|&s| st.smst[s].state == STATE_RESERVED).collect();
        let finishing: Vec<usize> = with
            .iter()
            .copied()
            .filter(|&s| {
                let k = &st.ksrt[st.smst[s].ksr as usize];
                k.valid && k.next_tb == k.tbs && k.ptbq_len == 0
            })
            .collect();
        let s = if !reserved.is_empty() && self.rng.gen_bool(0.5) {
            pick(&mut self.rng, &reserved)
        } else if !finishing.is_empty() && self.rng.gen_bool(0.5) {
            pick(&mut self.rng, &finishing)
        } else {
            pick(&mut self.rng, &with)
        };
        let j = self.rng.gen_range(0..self.resident[s].len());
        Some((s, j))
    }

    /// `act`: the engine's decision of this cycle; `decision`: the one the cycle checks;
    /// `applied`: the one it applies.
    fn stimulus(&mut self, st: &State, act: (Act, u8, u8, u8), decision: (Act, u8, u8, u8), applied: (Act, u8, u8, u8)) -> Stim {
        if self.pending.len() < self.knobs.queue && self.rng.gen_bool(self.knobs.p_cmd) {
            let c = self.new_cmd();
            self.pending.push_back(c);
        }
        let p_done = if act.0 != Act::None || decision.0 != Act::None || applied.0 != Act::None { 0.4 } else { self.knobs.p_done };
        let done = if self.rng.gen_bool(p_done) { self.pick_done(st, act, applied) } else { None };
        let mut saved = None;
        if self.mechanism == Mechanism::ContextSwitch && self.rng.gen_bool(self.knobs.p_save) {
            let cands: Vec<(usize, usize)> = (0..self.sms)
                .filter(|&s| self.preempting[s])
                .flat_map(|s| (0..self.resident[s].len()).map(move |j| (s, j)))
                .filter(|&b| Some(b) != done)
                .collect();
            if !cands.is_empty() {
                saved = Some(cands[self.rng.gen_range(0..cands.len())]);
            }
        }
        if self.frng.gen_bool(self.knobs.p_full) {
            self.full ^= 1 << self.frng.gen_range(0..self.sms);
        }
        let quota = if self.sharing { self.quota_write() } else { None };
        let i = In {
            full: self.full,
            cmd: self.pending.front().copied(),
            tb_done: done.map(|(s, j)| TbDone { sm: s as u8, kernel: self.kernel_of[&self.resident[s][j].0] }),
            tb_saved: saved.map(|(s, j)| {
                let (h, tb) = self.resident[s][j];
                TbSaved { sm: s as u8, kernel: self.kernel_of[&h], tb, slot: save_slot(h, tb) }
            }),
            quota,
        };
        Stim { i, done, saved }
    }

    /// Under sharing, now and then a quota write that keeps the writer's contract
    /// (`fw::QuotaWrite`): a launch below the highest admitted priority that holds quotas has
    /// them taken away first; else a launch of that priority gets random quotas (some above
    /// its T_k, some 0) or has them taken away.
    fn quota_write(&mut self) -> Option<QuotaWrite> {
        if self.admitted.is_empty() || !self.qrng.gen_bool(0.08) {
            return None;
        }
        // (now and then for a launch the framework does not hold: no entry is written)
        if self.qrng.gen_bool(0.03) {
            return Some(QuotaWrite { handle: self.next_handle.wrapping_add(1000), quotas: Some([1; 16]) });
        }
        let top = self.admitted.iter().map(|a| a.1.min(15)).max()?;
        if let Some(&(handle, _, _)) = self.admitted.iter().find(|a| a.1.min(15) != top && self.with_quota.contains(&a.0)) {
            return Some(QuotaWrite { handle, quotas: None });
        }
        let group: Vec<(u16, u8, u8)> = self.admitted.iter().copied().filter(|a| a.1.min(15) == top).collect();
        let (handle, _, tk) = group[self.qrng.gen_range(0..group.len())];
        if self.qrng.gen_bool(0.15) {
            return Some(QuotaWrite { handle, quotas: None });
        }
        let r = &mut self.qrng;
        Some(QuotaWrite { handle, quotas: Some(std::array::from_fn(|_| if r.gen_bool(0.2) { 0 } else { r.gen_range(1..=tk + 1) })) })
    }

    /// Takes the cycle's events in, checking what the framework did against the contract.
    fn apply(&mut self, st: &Stim, o: &Out) -> Result<(), String> {
        if let Some(w) = st.i.quota {
            if self.admitted.iter().any(|a| a.0 == w.handle) {
                match w.quotas {
                    Some(_) => self.with_quota.insert(w.handle),
                    None => self.with_quota.remove(&w.handle),
                };
            }
        }
        // (an issue follows the SMs' reports of room: its SM was picked from those found
        // ready ISSUE_LAG cycles before, when it was not full)
        self.full_hist.push_front(st.i.full);
        self.full_hist.truncate(ISSUE_LAG + 1);
        if let (Some(t), Some(&f)) = (o.issue, self.full_hist.get(ISSUE_LAG)) {
            if f >> t.sm & 1 != 0 {
                return Err(format!("block {} issued to SM {}, which was full {ISSUE_LAG} cycles before", t.tb, t.sm));
            }
        }
        // Remove the finished and the saved block (the higher slot first if on one SM).
        let mut gone: Vec<(usize, usize, bool)> = Vec::new();
        if let Some((s, j)) = st.done {
            gone.push((s, j, false));
        }
        if let Some((s, j)) = st.saved {
            gone.push((s, j, true));
        }
        gone.sort_by_key(|g| std::cmp::Reverse((g.0, g.1)));
        for (s, j, save) in gone {
            let b = self.resident[s].remove(j);
            if save && !self.saved.insert(b) {
                return Err(format!("block {b:?} saved twice"));
            }
        }
        if o.cmd_taken {
            let c = self.pending.pop_front().ok_or("cmd_taken with no command presented")?;
            self.admitted.push((c.handle, c.priority, c.tk));
        }
        if let Some(t) = o.issue {
            let s = t.sm as usize;
            if self.preempting[s] && !self.resident[s].is_empty() {
                return Err(format!("{t:?} issued to SM {s}, which is being preempted"));
            }
            if t.restore && !self.saved.remove(&(t.handle, t.tb)) {
                return Err(format!("{t:?} restores a block that was not saved (or was restored already)"));
            }
            if t.restore && t.slot != save_slot(t.handle, t.tb) {
                return Err(format!("{t:?} restores from save slot {}; the block was saved in slot {}", t.slot, save_slot(t.handle, t.tb)));
            }
            // (a launch keeps its KSRT entry from its admission to its retirement)
            if *self.kernel_of.entry(t.handle).or_insert(t.kernel) != t.kernel {
                return Err(format!("{t:?} names kernel {}; the launch's blocks were issued as kernel {}", t.kernel, self.kernel_of[&t.handle]));
            }
            self.resident[s].push((t.handle, t.tb));
        }
        // (after the issue: the issue's outputs are registered, so a block picked before its
        // SM's reservation may arrive with the preemption, and is preempted with the others)
        if let Some(sm) = o.preempt {
            self.preempting[sm as usize] = true;
        }
        if let Some(h) = o.retired {
            if self.resident.iter().flatten().any(|b| b.0 == h) || self.saved.iter().any(|b| b.0 == h) {
                return Err(format!("launch {h} retired with blocks resident or saved"));
            }
            self.kernel_of.remove(&h);
            self.admitted.retain(|a| a.0 != h);
            self.with_quota.remove(&h);
        }
        for s in 0..self.sms {
            if self.resident[s].is_empty() {
                self.preempting[s] = false;
            }
        }
        Ok(())
    }

    /// The blocks resident per SM as issued and reported agree with the SMST (which counts
    /// the block issued at the edge, `before`'s grant: it reaches the SM in the next cycle),
    /// all of the SM's kernel.
    fn check(&self, before: &State, st: &State) -> Result<(), String> {
        for s in 0..self.sms {
            let e = &st.smst[s];
            let flight = usize::from(before.pipe.grant_valid && before.pipe.grant_sm as usize == s);
            if e.running_tbs as usize != self.resident[s].len() + flight {
                return Err(format!("SM {s}: the SMST holds {} blocks, the SM {} and {flight} on its way", e.running_tbs, self.resident[s].len()));
            }
            // (under sharing an SM holds blocks of other kernels than its own)
            if let Some(b) = self.resident[s].first().filter(|_| !self.sharing) {
                let k = &st.ksrt[e.ksr as usize];
                if !e.ksr_valid || (k.valid && self.resident[s].iter().any(|x| x.0 != k.handle)) {
                    return Err(format!("SM {s} holds {:?}, the SMST names kernel {} ({k:?}); first {b:?}", self.resident[s], e.ksr));
                }
            }
        }
        Ok(())
    }
}

/// Counts this cycle's corners (see [`Corners`]) and checks what the corners must imply.
fn count(c: &mut Corners, sms: usize, before: &State, i: &In, prev_full: u16, o: &Out, applied_dec: (Act, u8, u8, u8), after: &State) -> Result<(), String> {
    if i.full != 0 {
        c.full_cycles += 1;
        let withheld = (0..sms).any(|s| {
            let e = before.smst[s];
            let k = &before.ksrt[e.ksr as usize];
            i.full >> s & 1 != 0 && e.state == STATE_RUNNING && e.ksr_valid && e.running_tbs < k.tk && k.rem > 0
        });
        c.full_withheld += u64::from(withheld);
    }
    let assigned = (0..sms).any(|s| before.smst[s].state == STATE_IDLE && after.smst[s].state == STATE_SETUP);
    let applied = assigned || o.preempt.is_some();
    if applied && applied_dec.0 == Act::None {
        return Err("a decision was applied with none checked in the cycle before".into());
    }
    if applied_dec.0 != Act::None && !applied {
        return Err(format!("the checked decision {applied_dec:?} was not applied"));
    }
    let p = before.pipe;
    if p.dec_act != 0 && after.pipe.app_act == 0 {
        c.decision_dropped += 1;
    }
    if let Some(d) = i.tb_done {
        let s = d.sm as usize;
        if applied {
            c.done_at_decision += 1;
        }
        if o.preempt == Some(s as u8) {
            c.done_on_sm_reserved_now += 1;
        }
        if before.smst[s].state == STATE_RESERVED {
            c.done_on_preempted_sm += 1;
            let gone = 1 + u8::from(i.tb_saved.is_some_and(|b| b.sm as usize == s));
            if before.smst[s].running_tbs == gone {
                c.done_empties_preempted_sm += 1;
            }
            if gone == 2 {
                c.done_and_save_same_sm += 1;
            }
        }
    }
    if i.cmd.is_some() {
        if before.ksrt[..sms].iter().all(|k| k.valid) {
            c.cmd_while_ksrt_full += 1;
            if o.cmd_taken {
                return Err("a command was taken while the KSRT was full".into());
            }
        } else if !o.cmd_taken {
            c.cmd_blocked_by_stale_entry += 1;
        }
        let f = before.pipe.free as usize;
        if before.pipe.free_valid && f < sms && before.ksrt[f].valid {
            c.cmd_free_entry_taken += 1;
            if o.cmd_taken {
                return Err(format!("a command was taken into entry {f}, which is valid"));
            }
        }
    }
    if p.ev_valid && p.ev_hand {
        // (under sharing, a handover: the SM keeps running, under its heir if it found one)
        let (b, a) = (before.smst[p.ev_sm as usize], after.smst[p.ev_sm as usize]);
        let holder = p.ev_heir.unwrap_or(b.ksr);
        if b.state != STATE_RUNNING || a.state != STATE_RUNNING || a.ksr != holder {
            return Err(format!("the handover picked for SM {} (heir {:?}) was not applied as picked: {b:?} -> {a:?}", p.ev_sm, p.ev_heir));
        }
        match p.ev_heir {
            Some(_) => c.handovers += 1,
            None => c.handovers_without_heir += 1,
        }
    } else if p.ev_valid {
        // Both of the event's stages leave out the SMs an edge between could change: it holds.
        let (b, a) = (before.smst[p.ev_sm as usize], after.smst[p.ev_sm as usize]);
        if !matches!(b.state, STATE_RUNNING | STATE_RESERVED) || (a.state != STATE_IDLE && a.state != STATE_SETUP) {
            return Err(format!("the event picked for SM {} was not applied as picked: {b:?} -> {a:?}", p.ev_sm));
        }
        c.events += 1;
    }
    // The SM event picked in this cycle (`after.pipe.ev_*`): a reserved SM goes to setup if its
    // next kernel had work when the SM was found with the event (`before.pipe.ev_work`), which
    // is "has work now" unless the work ran out or came back at the edge between.
    let q = after.pipe;
    if q.ev_valid && before.smst[q.ev_sm as usize].state == STATE_RESERVED {
        let s = q.ev_sm as usize;
        let registered = before.pipe.ev_work >> s & 1 != 0;
        if q.ev_setup != registered {
            return Err(format!("the event picked for reserved SM {s}: setup {}, but its registered 'next kernel has work' is {registered}", q.ev_setup));
        }
        let e = before.smst[s];
        let k = &before.ksrt[e.next as usize];
        let now = e.next_valid && k.valid && (k.next_tb < k.tbs || k.ptbq_len > 0);
        if now != registered {
            c.ev_work_stale += 1;
        }
    }
    if p.dec_act == Act::Reserve.code() {
        let e = before.smst[p.dec_sm as usize];
        let holds_otherwise = e.state == STATE_RUNNING && e.ksr_valid && e.ksr == p.dec_from;
        let flight = p.ev_valid && p.ev_sm == p.dec_sm;
        if holds_otherwise && flight {
            c.reserve_blocked_by_flight += 1;
            if after.pipe.app_act != 0 {
                return Err(format!("the reservation of SM {} held its check with an event in flight to it", p.dec_sm));
            }
        }
    }
    let k = p.dec_kernel as usize;
    if p.dec_act != 0 && k < sms && before.ksrt[k].valid && o.retired == Some(before.ksrt[k].handle) {
        c.decision_target_retires += 1;
        if after.pipe.app_act != 0 {
            return Err(format!("the decision {:?} for kernel {k}, retiring this cycle, held its check", (p.dec_act, p.dec_sm, p.dec_kernel)));
        }
    }
    // (a cycle after one whose `full` masked SMs out may find them ready: not idle)
    if !o.busy && *i == In::default() && prev_full == 0 {
        c.idle_cycles += 1;
        if before != after {
            return Err("an idle cycle with no input changed the state".into());
        }
    }
    if let Some(t) = o.issue {
        c.shared_issues += u64::from(before.smst[t.sm as usize].ksr != t.kernel);
    }
    c.quota_writes += u64::from(i.quota.is_some());
    if let Some(w) = i.quota {
        match before.ksrt[..sms].iter().find(|k| k.valid && k.handle == w.handle) {
            Some(k) => c.quota_over_tk += u64::from(w.quotas.is_some_and(|q| q[..sms].iter().any(|&x| x > k.tk))),
            None => c.quota_missed += 1,
        }
    }
    c.preemptions += u64::from(o.preempt.is_some());
    c.restores += u64::from(o.issue.is_some_and(|t| t.restore));
    c.saves += u64::from(i.tb_saved.is_some());
    c.retirements += u64::from(o.retired.is_some());
    c.admissions += u64::from(o.cmd_taken);
    Ok(())
}

/// Names the run on the way out of a panic from anywhere inside it (the model's own asserts
/// included).
struct OnPanic(String);

impl Drop for OnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("failed run: {}", self.0);
        }
    }
}

/// How a run failed.
#[derive(Debug)]
enum Failure {
    /// The RTL and the model parted (outputs or state).
    Mismatch(Box<Mismatch>),
    /// A broken invariant or contract check.
    Check(String),
}

/// One run: `CYCLES` cycles of random legal stimulus, the model and the RTL (with `faults`)
/// in lockstep; the corners counted, or the first failure. The run is named in every failure
/// (`Err` carries the name; a panic from inside the model prints it on the way out).
fn run(seed: u64, policy: Policy, mechanism: Mechanism, faults: SchedFaults) -> Result<Corners, (String, Failure)> {
    run_with(seed, policy, mechanism, faults, false)
}

/// [`run`], with slicing inside the framework (`sharing`: both share their SMs, and the
/// environment writes quotas).
fn run_with(seed: u64, policy: Policy, mechanism: Mechanism, faults: SchedFaults, sharing: bool) -> Result<Corners, (String, Failure)> {
    let mut env = Env::new(seed, policy, mechanism, sharing);
    let sms = env.sms;
    let what = format!("seed {seed}, {} {mechanism:?}, {sms} SMs, T_max {}, {} processes{}", policy.name(), env.tmax, env.procs, if sharing { ", sharing" } else { "" });
    let _guard = OnPanic(what.clone());
    let params = SchedParams::new(sms, env.tmax as usize).unwrap();
    let model = Framework::new(params, policy, mechanism);
    let model = if sharing { model.with_sharing() } else { model };
    let rtl = RtlUnit::rust_hdl(SchedPorts { sms, mode: policy.code(), faults, sharing });
    let mut pair = InLoop::with_state(model, rtl, 16, Framework::state, RtlUnit::<SchedPorts>::state);
    let mut c = Corners::default();
    let mut prev_full = 0;
    let fail = |f: Failure| Err((what.clone(), f));
    for cycle in 0..CYCLES {
        if cycle % PHASE == 0 && cycle > 0 {
            env.new_phase();
        }
        let before = pair.model.state();
        // (the engine's decision of this cycle: a block finished now is counted, and may retire
        // its kernel, in the next cycle, which checks that decision)
        let act = pair.model.engine_act();
        let decision = pair.model.engine_decision();
        let applied = pair.model.applied_decision();
        let stim = env.stimulus(&before, act, decision, applied);
        let o = pair.outputs(&stim.i);
        if let Some(m) = pair.mismatch() {
            return fail(Failure::Mismatch(Box::new(m)));
        }
        pair.clock(&stim.i);
        // (The model checks these at its edge too, and panics.)
        if let Err(e) = pair.model.check_invariants() {
            return fail(Failure::Check(format!("cycle {cycle}: invariant: {e}")));
        }
        let after = pair.model.state();
        let checked = count(&mut c, sms, &before, &stim.i, prev_full, &o, applied, &after).and_then(|_| env.apply(&stim, &o)).and_then(|_| env.check(&before, &after));
        prev_full = stim.i.full;
        if let Err(e) = checked {
            return fail(Failure::Check(format!("cycle {cycle}: {e}\ninputs {:?}\noutputs {o:?}\nbefore {before:?}\nafter {after:?}", stim.i)));
        }
    }
    // The state after the last edge.
    pair.outputs(&In::default());
    if let Some(m) = pair.mismatch() {
        return fail(Failure::Mismatch(Box::new(m)));
    }
    eprintln!("{what}: {c:?}");
    Ok(c)
}

/// Every seed, both mechanisms, for one policy: no mismatch, no broken invariant, and every
/// corner the policy can reach reached at least once (FCFS and NPQ never preempt, so the
/// preemption corners are theirs to skip; a preemptive policy must preempt, save and restore
/// under context switching, and see blocks finish on SMs being preempted under both).
fn policy(p: Policy) {
    let mut total = Corners::default();
    for m in MECHANISMS {
        let mut per = Corners::default();
        for &seed in SEEDS.iter().chain(&FULL_SEEDS) {
            match run(seed, p, m, SchedFaults::default()) {
                Ok(c) => per.add(&c),
                Err((what, Failure::Mismatch(mm))) => panic!("{what}: {mm}"),
                Err((what, Failure::Check(e))) => panic!("{what}: {e}"),
            }
        }
        let preemptive = !matches!(p, Policy::Fcfs | Policy::Npq);
        let what = format!("{} {m:?} over seeds {SEEDS:?}: {per:?}", p.name());
        if preemptive {
            assert!(per.preemptions > 0, "{what}: nothing preempted");
            assert!(per.done_on_preempted_sm > 0, "{what}: no block finished on an SM being preempted");
            if m == Mechanism::ContextSwitch {
                assert!(per.saves > 0 && per.restores > 0, "{what}: nothing saved or restored");
            }
        } else {
            assert_eq!(per.preemptions, 0, "{what}: a non-preemptive policy preempted");
        }
        total.add(&per);
    }
    let what = format!("{} over both mechanisms and seeds {SEEDS:?}: {total:?}", p.name());
    eprintln!("{what}");
    assert!(total.done_at_decision > 0, "{what}: no block finished in a cycle a decision was applied");
    assert!(total.cmd_while_ksrt_full > 0, "{what}: no command presented while the KSRT was full");
    assert!(total.cmd_free_entry_taken > 0, "{what}: no command met a stale admission entry");
    assert!(total.decision_target_retires > 0, "{what}: no decision whose kernel retired that cycle");
    assert!(total.events > 0, "{what}: no SM event");
    assert!(total.idle_cycles > 0, "{what}: the framework never went idle");
    assert!(total.full_withheld > 0, "{what}: no SM ready by T_k was ever reported full");
    assert!(total.retirements > 0 && total.admissions > total.retirements / 2, "{what}: little traffic");
    if !matches!(p, Policy::Fcfs | Policy::Npq) {
        assert!(total.done_on_sm_reserved_now > 0, "{what}: no block finished on the SM reserved that cycle");
        assert!(total.done_empties_preempted_sm > 0, "{what}: no preemption completed by a block finishing");
        // (The check that drops such a reservation is the framework's, the same for every
        // policy, and the corner is rare for all of them: the reserved SM must lose its last
        // block in the cycle two before the decision's check, which the stimulus cannot see
        // coming. On these seeds, since the third round of the framework's timing work
        // (2026-11-24): once for each priority policy and 5 times under DSS, where after the
        // first of its two contract changes it had been 5 times in 48 runs of 24 seeds; under
        // Equal Spatial Sharing, where reservations only rebalance the shares as processes come
        // and go, 0 to 2 times. Since the issue's outputs are registered (2026-11-25), over
        // seeds 1-24: 5 times under each PPQ, 11 under DSS, 4 under Equal, and none under
        // PPQ shared on seeds 1-8, hence 16 seeds. It is required of the priority policies.)
        if !matches!(p, Policy::Equal | Policy::Dss) {
            assert!(total.reserve_blocked_by_flight > 0, "{what}: no reservation dropped for an event in flight");
        }
        // (A reserved SM's next kernel running out of work, or getting a saved block back, at
        // the one edge between the event's two stages: on these seeds 3 times under DSS, once
        // under PPQ exclusive, never under the others (2026-11-24). Required of DSS.)
        if matches!(p, Policy::Dss) {
            assert!(total.ev_work_stale > 0, "{what}: no SM event whose registered 'next kernel has work' was stale");
        }
    }
}

/// FCFS.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the default suite runs dss, preemptive, both mechanisms)")]
fn random_fcfs() {
    policy(Policy::Fcfs);
}

/// Non-preemptive priority queues.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the default suite runs dss, preemptive, both mechanisms)")]
fn random_npq() {
    policy(Policy::Npq);
}

/// Preemptive priority, exclusive access.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the default suite runs dss, preemptive, both mechanisms)")]
fn random_ppq_exclusive() {
    policy(Policy::PpqExclusive);
}

/// Preemptive priority, shared access.
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the default suite runs dss, preemptive, both mechanisms)")]
fn random_ppq_shared() {
    policy(Policy::PpqShared);
}

/// Dynamic Spatial Sharing with random tokens per launch.
#[test]
fn random_dss() {
    policy(Policy::Dss);
}

/// Equal Spatial Sharing (per-process shares of the SMs as tokens).
#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the default suite runs dss, preemptive, both mechanisms)")]
fn random_equal() {
    policy(Policy::Equal);
}

/// Slicing inside the framework (`Sched::build` with sharing, `docs/warped-slicer.md`, "Inside the
/// scheduling framework"): the same stimulus with random quota writes that keep the writer's
/// contract, under a priority policy and DSS, both mechanisms: no mismatch (the resident
/// counts and quotas compared every cycle), no broken invariant, and blocks issued beside an
/// SM's holder, handovers, and a quota written over T_k (taken as T_k) all seen.
#[test]
fn random_sharing() {
    let mut total = Corners::default();
    for p in [Policy::PpqShared, Policy::Dss, Policy::Fcfs] {
        for m in MECHANISMS {
            for seed in 1..=6 {
                match run_with(seed, p, m, SchedFaults::default(), true) {
                    Ok(c) => total.add(&c),
                    Err((what, Failure::Mismatch(mm))) => panic!("{what}: {mm}"),
                    Err((what, Failure::Check(e))) => panic!("{what}: {e}"),
                }
            }
        }
    }
    eprintln!("sharing: {total:?}");
    assert!(total.quota_writes > 0 && total.shared_issues > 0, "nothing shared: {total:?}");
    assert!(total.handovers > 0 && total.handovers_without_heir > 0, "no SM handed over, or no handover without an heir: {total:?}");
    assert!(total.quota_over_tk > 0 && total.quota_missed > 0, "no quota over T_k, or no write for a launch not held: {total:?}");
    assert!(total.preemptions > 0 && total.restores > 0, "nothing preempted or restored: {total:?}");
}

/// The lockstep comparison under this stimulus can fail: each of the RTL's test-only faults is
/// found as a mismatch on the field where it first shows, within the seeds: a PTBQ popped last
/// in first out (a restore names another block: `issue.tb`) under a preemptive policy with
/// context switching, and a released SM's token kept (`state.ksrt[k].count`).
#[test]
fn the_random_stimulus_catches_the_rtl_faults() {
    let lifo = SchedFaults { ptbq_lifo: true, ..Default::default() };
    let keep = SchedFaults { keep_token: true, ..Default::default() };
    for (p, m, faults, field) in [
        (Policy::PpqShared, Mechanism::ContextSwitch, lifo, "issue.tb"),
        (Policy::Dss, Mechanism::ContextSwitch, lifo, "issue.tb"),
        (Policy::Equal, Mechanism::Drain, keep, ".count"),
        (Policy::Fcfs, Mechanism::ContextSwitch, keep, ".count"),
    ] {
        let found = SEEDS.iter().find_map(|&seed| match run(seed, p, m, faults) {
            Err((what, Failure::Mismatch(mm))) => Some((what, mm)),
            Err((what, Failure::Check(e))) => panic!("{faults:?}: {what}: a check failed before the lockstep comparison: {e}"),
            Ok(_) => None,
        });
        let (what, mm) = found.unwrap_or_else(|| panic!("{faults:?} under {} {m:?} went unnoticed on seeds {SEEDS:?}", p.name()));
        assert!(mm.diffs.iter().any(|d| d.field.contains(field)), "{faults:?}: {what}: expected {field}: {mm}");
        eprintln!("{faults:?} under {} {m:?}: caught ({what}) at cycle {} on {:?}", p.name(), mm.cycle, mm.diffs.iter().map(|d| &d.field).collect::<Vec<_>>());
    }
}
