//! Intra-SM slicing (Warped-Slicer, Xu et al., ISCA 2016; decisions in
//! `docs/warped-slicer.md`): the block dispatcher under the policies the paper compares.
//!
//! - **Left-Over**: the oldest kernel takes every SM it fits; a later one gets what is left
//!   (the baseline dispatcher's rule, Hyper-Q's behaviour).
//! - **Even**: each of the K kernels gets 1/K of every SM resource: a quota of
//!   min over the components of floor(total / K / request) blocks per SM (at least one).
//! - **Spatial**: the SMs are split into K contiguous groups (the remainder to the lowest
//!   kernels), one kernel per group.
//! - **Warped-Slicer**: when the kernels sharing the GPU change and two or more remain, a
//!   repartition: each SM is given a profiling layout (kernel k's group of SMs runs 1, 2, 3 ...
//!   blocks of it alone, in as many rounds as its group needs to cover its occupancy), the
//!   water-filling unit (`units::wf`) times a window per round that every SM's sampling
//!   counters (`units::prof`) follow, and its decision sets every SM's quota per kernel, or
//!   the Spatial split when it falls back. A layout takes effect as blocks drain (no
//!   preemption); a round's window starts once every SM holds its layout, or after
//!   `settle` cycles.
//!
//! Issue (every policy): the slice table (`units::slice`, in the RTL `rtl/src/slice.rs`) holds
//! up to KMAX kernels, each SM's quota and resident count per kernel and each SM's used
//! resources; it visits the SMs round-robin and issues at most one block a cycle, of the oldest
//! kernel that has blocks left, is below its quota on that SM and fits. The dispatcher is its
//! controller: it gives the table a slot per kernel in arrival order (later kernels wait for
//! one), writes the quotas each policy computes, and reports completions.

// The dependency rule: the slicer sits above the GPU. Its Oracle runs whole GPUs
// ([`oracle_curves`]) and [`run_workload_sliced`] builds one around it, while the GPU knows
// dispatchers only through `super::dispatch` and never names this module.
use super::dispatch::{DispatchView, Dispatcher};
pub use super::dispatch::{SliceDecision, SliceStats};
use super::gpu::{Gpu, RunLimits, RunResult, SimError};
use crate::config::GpuConfig;
use crate::slots::{Held, Units};
use crate::workload::Workload;
use mpgpu_spec::units::prof;
use mpgpu_spec::units::slice::{self, Cmd, NO_QUOTA};
use mpgpu_spec::units::wf::{self, KMAX, NMAX, RES};
use serde::Serialize;
use std::collections::VecDeque;

/// The intra-SM slicing policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Slicing {
    LeftOver,
    Even,
    Spatial,
    WarpedSlicer,
    /// Water-filling on curves from isolated runs ([`oracle_curves`]), applied at once.
    Oracle,
    /// Every kernel at most this many blocks per SM (the isolated runs of the Oracle's curves).
    Cap(u8),
}

impl Slicing {
    pub fn name(self) -> &'static str {
        match self {
            Slicing::LeftOver => "left-over",
            Slicing::Even => "even",
            Slicing::Spatial => "spatial",
            Slicing::WarpedSlicer => "warped-slicer",
            Slicing::Oracle => "oracle",
            Slicing::Cap(_) => "cap",
        }
    }
}

/// Warped-Slicer's parameters (the paper's values by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SliceParams {
    /// The profiling window (cycles, §IV-A: 5,000).
    pub window: u16,
    /// Cycles from the last window's end to the decision (§V-H: 0, 1K, 5K, 10K).
    pub delay: u16,
    /// The fallback threshold, percent of 1/K (§IV: 120).
    pub pct: u8,
    /// Cycles a round's layout may take to settle before its window starts anyway.
    pub settle: u64,
    /// Profile a kernel only up to the blocks per SM its grid can fill, ⌈blocks left / SMs⌉
    /// (our addition, `docs/warped-slicer.md` decision O6; off: up to its occupancy, as the
    /// paper does for its large grids).
    pub grid_cap: bool,
}

impl Default for SliceParams {
    fn default() -> Self {
        SliceParams { window: 5000, delay: 0, pct: 120, settle: 5_000, grid_cap: true }
    }
}

// The slicer's slots (`crate::slots`): the water-filling unit's and the slice table's (global),
// the sampling counters' (one per SM). `Gpu::set_units` fills them ([`Dispatcher::set_units`]).
type WfSlot = Held<wf::In, wf::Out>;
type ProfSlot = Held<prof::In, prof::Out>;
type SliceSlot = Held<slice::In, slice::Out>;

/// A repartition in progress.
#[derive(Clone, Debug)]
struct Repartition {
    /// The kernels (launch ids), at most KMAX, in arrival order.
    kernels: Vec<usize>,
    /// Per round, per SM: (kernel index, count) (count 0: the SM holds nothing).
    layouts: Vec<Vec<(u8, u8)>>,
    round: usize,
    /// Cycle the round's layout was set; whether its window has been opened.
    since: u64,
    started: bool,
    began: u64,
    /// The window of round `.1` closed at cycle `.0`: its samples are read next cycle.
    latched: Option<(u64, usize)>,
}

impl Repartition {
    /// Whether every SM holds the round's layout: its kernel's blocks at the count (or all
    /// that kernel has left), and no other kernel's.
    fn settled(&self, view: &DispatchView) -> bool {
        let m = &self.layouts[self.round];
        view.sms.iter().enumerate().all(|(s, sm)| {
            let held = sm.blocks_per_launch();
            let (i, j) = m[s];
            let mine = (j > 0).then(|| self.kernels[i as usize]);
            let ok_others = held.iter().all(|&(l, n)| Some(l) == mine || n == 0);
            let ok_mine = mine.is_none_or(|l| {
                let n = held.iter().find(|h| h.0 == l).map_or(0, |h| h.1);
                n == j as u32 || (n < j as u32 && view.launches[l].remaining() == 0)
            });
            ok_others && ok_mine
        })
    }
}

pub struct Slicer {
    policy: Slicing,
    params: SliceParams,
    /// Launches that may issue, oldest first (until all their blocks have finished).
    active: Vec<usize>,
    /// Per launch: its quota on each SM (`u32::MAX`: none).
    quota: rustc_hash::FxHashMap<usize, Vec<u32>>,
    /// Warped-Slicer's units and repartition.
    wf: Option<WfSlot>,
    prof: Vec<ProfSlot>,
    rep: Option<Repartition>,
    /// Each SM's warp-instructions at the last look (the counters count the difference).
    last_insts: Vec<u64>,
    /// The active set changed: quotas to recompute at the next dispatch.
    changed: bool,
    stats: SliceStats,
    /// The Oracle's curves, per process: IPC (x 2^16) alone at 1..=NMAX blocks per SM.
    curves: Vec<[u64; NMAX]>,
    /// Warped-Slicer's last decision: the kernels it partitioned, by identity (process and
    /// kernel name), their quotas and the mode. A repartition among the same kernels (a
    /// process relaunching the kernel it ran) re-applies it instead of profiling again.
    last: Option<(Vec<(usize, String)>, Vec<u8>, bool)>,
    /// The slice table (made at the first dispatch from the SMs' resources unless given) and
    /// its controller's state: the launch in each slot, launches waiting for one, slots whose
    /// kernel has finished (freed once no completion of theirs is still queued), the commands
    /// and completions queued for it (one of each a cycle), the quota rows the queued commands
    /// leave in it, and per SM the issued blocks waiting for room.
    unit: Option<SliceSlot>,
    slots: [Option<usize>; KMAX],
    waiting: Vec<usize>,
    leaving: Vec<u8>,
    cmds: VecDeque<Cmd>,
    dones: VecDeque<(u8, u8)>,
    rows: Vec<[u8; KMAX]>,
    inbox: Vec<VecDeque<usize>>,
    error: Option<String>,
    /// The quota controller of slicing inside the scheduling framework
    /// ([`Slicer::in_framework`]): the framework issues, the slice table is not used; the
    /// quotas last handed to the framework.
    controller: bool,
    handed: Vec<(usize, Vec<u32>)>,
    /// The quotas changed since they were last handed over (a round's layout, a decision, a
    /// kernel waiting for the decision in progress, a profile dropped).
    quota_dirty: bool,
}

impl Slicer {
    /// A dispatcher under `policy`; Warped-Slicer's units are the models (`Gpu::set_units`
    /// replaces them).
    pub fn new(policy: Slicing, params: SliceParams, sms: usize) -> Slicer {
        let wf: WfSlot = Box::new(crate::units::wf::Wf::new(sms));
        let prof: Vec<ProfSlot> = (0..sms).map(|_| Box::new(crate::units::prof::Prof::default()) as ProfSlot).collect();
        let n = prof.len();
        Slicer {
            policy,
            params,
            active: Vec::new(),
            quota: Default::default(),
            wf: (policy == Slicing::WarpedSlicer).then_some(wf),
            prof: if policy == Slicing::WarpedSlicer { prof } else { Vec::new() },
            rep: None,
            last_insts: vec![0; n],
            changed: false,
            stats: SliceStats { policy: policy.name().into(), ..Default::default() },
            curves: Vec::new(),
            last: None,
            unit: None,
            slots: [None; KMAX],
            waiting: Vec::new(),
            leaving: Vec::new(),
            cmds: VecDeque::new(),
            dones: VecDeque::new(),
            rows: vec![[0; KMAX]; slice::MAX_SMS],
            inbox: vec![VecDeque::new(); n],
            error: None,
            controller: false,
            handed: Vec::new(),
            quota_dirty: false,
        }
    }

    /// The slicer as the quota controller of slicing inside the scheduling framework
    /// (`Gpu::with_framework_sliced`): it computes its policy's quotas (Warped-Slicer's with its
    /// profiling rounds and units) for the launches the framework's driver names, and the
    /// framework issues by them (`docs/warped-slicer.md`, "Inside the scheduling framework").
    pub fn in_framework(mut self) -> Slicer {
        self.controller = true;
        self
    }

    /// The slice table's resources of one SM, as the dispatcher computes them.
    pub fn sm_total(cfg: &crate::config::SmConfig) -> [u32; RES] {
        [cfg.blocks, cfg.threads, cfg.registers, cfg.shared_bytes]
    }

    /// The slicer of `policy` for the workload `w` on `cfg`: the Oracle's curves come from
    /// `w`'s isolated runs ([`oracle_curves`]), whose error is the only one.
    pub fn for_workload(cfg: &GpuConfig, w: &Workload, policy: Slicing, params: SliceParams, limits: RunLimits) -> Result<Slicer, SimError> {
        let sms = cfg.num_sms() as usize;
        Ok(match policy {
            Slicing::Oracle => Slicer::oracle(params, sms, oracle_curves(cfg, w, limits, &mut Default::default())?),
            _ => Slicer::new(policy, params, sms),
        })
    }

    /// The Oracle with its curves (per process of the workload, [`oracle_curves`]).
    pub fn oracle(params: SliceParams, sms: usize, curves: Vec<[u64; NMAX]>) -> Slicer {
        let mut s = Slicer::new(Slicing::Oracle, params, sms);
        s.curves = curves;
        s
    }

    /// A launch's per-block request as the water-filling unit takes it: one slot,
    /// warp-padded threads, registers, shared bytes.
    fn request(view: &DispatchView, l: usize) -> [u32; RES] {
        let cfg = view.sms[0].config();
        let f = view.launches[l].info.launch.kernel.footprint();
        [1, f.threads_per_block.div_ceil(32) * 32, cfg.block_registers(&f), f.shared_per_block]
    }

    /// One SM's resources in the same components.
    fn total(view: &DispatchView) -> [u32; RES] {
        Self::sm_total(view.sms[0].config())
    }

    /// The counts a kernel's profile covers: 1 to its occupancy alone, and with `grid_cap` at
    /// most ⌈blocks left / SMs⌉ (at least 1).
    fn need(view: &DispatchView, l: usize, sms: usize, grid_cap: bool) -> u8 {
        let m = Self::alone_max(view, l);
        if grid_cap {
            m.min(view.launches[l].remaining().div_ceil(sms.max(1) as u64).clamp(1, NMAX as u64) as u8)
        } else {
            m
        }
    }

    /// Blocks of `l` an SM holds at most alone (its occupancy), at most NMAX.
    fn alone_max(view: &DispatchView, l: usize) -> u8 {
        let f = view.launches[l].info.launch.kernel.footprint();
        view.sms[0].config().occupancy(&f).blocks.clamp(1, NMAX as u32) as u8
    }

    /// The contiguous SM groups of `k` kernels on `sms` SMs (the remainder to the lowest).
    fn groups(sms: usize, k: usize) -> Vec<std::ops::Range<usize>> {
        let (base, rem) = (sms / k, sms % k);
        let mut at = 0;
        (0..k)
            .map(|i| {
                let n = base + (i < rem) as usize;
                let r = at..at + n;
                at += n;
                r
            })
            .collect()
    }

    /// Spatial quotas for `kernels`: each its group of SMs, nothing elsewhere.
    fn spatial(&mut self, kernels: &[usize], sms: usize) {
        for (i, g) in Self::groups(sms, kernels.len()).into_iter().enumerate() {
            self.quota.insert(kernels[i], (0..sms).map(|s| if g.contains(&s) { u32::MAX } else { 0 }).collect());
        }
    }

    /// Recomputes the quotas after the active set changed.
    fn requota(&mut self, now: u64, view: &DispatchView) {
        let sms = view.sms.len();
        self.quota.clear();
        let k = self.active.len();
        if let Slicing::Cap(c) = self.policy {
            for &l in &self.active {
                self.quota.insert(l, vec![c as u32; sms]);
            }
            return;
        }
        if k < 2 {
            self.rep = None;
            return;
        }
        match self.policy {
            Slicing::LeftOver | Slicing::Cap(_) => {}
            Slicing::Oracle => {
                let kernels: Vec<usize> = self.active.iter().copied().take(KMAX).collect();
                for &l in self.active.iter().skip(KMAX) {
                    self.quota.insert(l, vec![0; sms]);
                }
                let scores: Vec<[u64; NMAX]> = kernels.iter().map(|&l| self.curves.get(view.launches[l].process).copied().unwrap_or([0; NMAX])).collect();
                let req: Vec<[u32; RES]> = kernels.iter().map(|&l| Self::request(view, l)).collect();
                let d = crate::warped::water_fill(&scores, &req, Self::total(view), self.params.pct);
                self.stats.decisions.push(SliceDecision { cycle: now, launches: kernels.clone(), quota: d.quota.clone(), spatial: d.spatial });
                if d.spatial {
                    self.spatial(&kernels, sms);
                } else {
                    for (i, &l) in kernels.iter().enumerate() {
                        self.quota.insert(l, vec![d.quota[i] as u32; sms]);
                    }
                }
            }
            Slicing::Spatial => {
                let a = self.active.clone();
                self.spatial(&a, sms);
            }
            Slicing::Even => {
                let total = Self::total(view);
                for &l in &self.active {
                    let r = Self::request(view, l);
                    let q = (0..RES).map(|c| if r[c] == 0 { u32::MAX } else { total[c] / k as u32 / r[c] }).min().unwrap_or(1).max(1);
                    self.quota.insert(l, vec![q; sms]);
                }
            }
            Slicing::WarpedSlicer => {
                // The first KMAX kernels are partitioned; later ones wait for a place.
                let kernels: Vec<usize> = self.active.iter().copied().take(KMAX).collect();
                for &l in self.active.iter().skip(KMAX) {
                    self.quota.insert(l, vec![0; sms]);
                }
                // The same kernels as the last decision: their curves are the same, so is the
                // decision (no profile).
                let ids: Vec<(usize, String)> = kernels.iter().map(|&l| Self::identity(view, l)).collect();
                if let Some((last_ids, q, spatial)) = self.last.clone() {
                    let mut a = ids.clone();
                    let mut b = last_ids.clone();
                    a.sort();
                    b.sort();
                    if a == b {
                        // (each kernel its own quota, in this decision's order)
                        let q: Vec<u8> = ids.iter().map(|id| q[last_ids.iter().position(|x| x == id).unwrap_or(0)]).collect();
                        self.apply(&kernels, &q, spatial, sms);
                        self.stats.reused += 1;
                        self.rep = None;
                        return;
                    }
                }
                let groups = Self::groups(sms, kernels.len());
                // (each kernel's counts 1..=need: its occupancy alone, and with the grid cap no more
                // than its blocks left can fill on every SM; a quota past that changes nothing)
                let need: Vec<u8> = kernels.iter().map(|&l| Self::need(view, l, sms, self.params.grid_cap)).collect();
                let rounds = (0..kernels.len()).map(|i| (need[i] as usize).div_ceil(groups[i].len().max(1))).max().unwrap_or(1).max(1);
                let layouts = (0..rounds)
                    .map(|r| {
                        let mut m = vec![(0u8, 0u8); sms];
                        for (i, g) in groups.iter().enumerate() {
                            for (p, s) in g.clone().enumerate() {
                                let j = r * g.len() + p + 1;
                                if j <= need[i] as usize {
                                    m[s] = (i as u8, j as u8);
                                }
                            }
                        }
                        m
                    })
                    .collect();
                self.rep = Some(Repartition { kernels, layouts, round: 0, since: now, started: false, began: now, latched: None });
                self.layout_quotas(sms);
            }
        }
    }

    /// A launch's kernel by identity: its process and kernel name.
    fn identity(view: &DispatchView, l: usize) -> (usize, String) {
        (view.launches[l].process, view.launches[l].info.launch.kernel.name.clone())
    }

    /// A decision's quotas (every SM the same), or the Spatial split.
    fn apply(&mut self, kernels: &[usize], q: &[u8], spatial: bool, sms: usize) {
        if spatial {
            self.spatial(kernels, sms);
        } else {
            for (i, &l) in kernels.iter().enumerate() {
                self.quota.insert(l, vec![q[i] as u32; sms]);
            }
        }
    }

    /// The quotas of the current profiling round's layout.
    fn layout_quotas(&mut self, sms: usize) {
        let Some(rep) = &self.rep else { return };
        let m = &rep.layouts[rep.round];
        for (i, &l) in rep.kernels.iter().enumerate() {
            let q = (0..sms).map(|s| if m[s].0 as usize == i { m[s].1 as u32 } else { 0 }).collect();
            self.quota.insert(l, q);
        }
    }

    /// A repartition's rounds have started: the unit is working on its decision.
    fn profiling(&self) -> bool {
        self.rep.as_ref().is_some_and(|r| r.started)
    }

    /// A launch's quota on SM `s` as the slice table holds it.
    fn desired(&self, l: usize, s: usize) -> u8 {
        self.quota.get(&l).map_or(NO_QUOTA, |q| q[s].min(NO_QUOTA as u32) as u8)
    }

    /// The slice table's controller: frees the slots of finished kernels, gives free slots to
    /// waiting kernels (oldest first), and queues the quota rows that differ from what the
    /// table will hold.
    fn control(&mut self, view: &DispatchView) {
        let sms = view.sms.len();
        let dones = &self.dones;
        let (go, stay): (Vec<u8>, Vec<u8>) = self.leaving.iter().partition(|&&k| !dones.iter().any(|d| d.1 == k));
        self.leaving = stay;
        for k in go {
            self.cmds.push_back(Cmd::Leave { slot: k });
            self.slots[k as usize] = None;
        }
        while !self.waiting.is_empty() {
            let Some(k) = (0..KMAX).find(|&k| self.slots[k].is_none() && !self.leaving.contains(&(k as u8))) else { break };
            let l = self.waiting.remove(0);
            let left = view.launches[l].remaining();
            let req = Self::request(view, l);
            let total = Self::total(view);
            if left > ((1u64 << slice::LEFT_BITS) - 1) || (0..RES).any(|c| req[c] > total[c] || total[c] >= 1 << slice::RES_BITS) {
                self.error.get_or_insert(format!(
                    "launch {l} ({left} blocks, {req:?} per block on SMs of {total:?}) exceeds the slice table: at most {} blocks, each request within an SM's total, below 2^{}",
                    (1u64 << slice::LEFT_BITS) - 1,
                    slice::RES_BITS
                ));
                return;
            }
            self.slots[k] = Some(l);
            let q = self.desired(l, 0);
            self.cmds.push_back(Cmd::Enter { slot: k as u8, blocks: left as u32, req, quota: q });
            for row in self.rows.iter_mut() {
                row[k] = q;
            }
        }
        let want: Vec<[u8; KMAX]> = (0..sms).map(|s| std::array::from_fn(|k| self.slots[k].map_or(0, |l| self.desired(l, s)))).collect();
        let differs: Vec<usize> = (0..sms).filter(|&s| (0..KMAX).any(|k| self.slots[k].is_some() && want[s][k] != self.rows[s][k])).collect();
        if differs.len() > 1 && want.iter().all(|w| *w == want[0]) {
            self.cmds.push_back(Cmd::Quota { sm: 0, all: true, q: want[0] });
            self.rows.iter_mut().for_each(|r| *r = want[0]);
        } else {
            for s in differs {
                self.cmds.push_back(Cmd::Quota { sm: s as u8, all: false, q: want[s] });
                self.rows[s] = want[s];
            }
        }
    }

    pub fn stats(&self) -> SliceStats {
        self.stats.clone()
    }
}

impl Dispatcher for Slicer {
    fn name(&self) -> &str {
        self.policy.name()
    }

    fn launch_ready(&mut self, _now: u64, launch: usize, view: &DispatchView) {
        self.active.push(launch);
        if !self.controller {
            self.waiting.push(launch);
        }
        self.changed = true;
        if self.profiling() {
            // (it waits for the decision in progress; the next repartition includes it)
            self.quota.insert(launch, vec![0; view.sms.len()]);
            self.quota_dirty |= self.controller;
        }
    }

    fn dispatch(&mut self, now: u64, view: &DispatchView, out: &mut Vec<(usize, u32)>) {
        // (a change while the unit works on a decision waits for it)
        if self.changed && !self.profiling() {
            self.changed = false;
            self.requota(now, view);
        }
        let sms = view.sms.len();
        if self.unit.is_none() {
            self.unit = Some(Box::new(crate::units::slice::Slice::new(sms, Self::total(view))));
        }
        self.control(view);
        // Blocks waiting for their SM's room go in first (one block an SM a cycle).
        let mut taken = vec![false; sms];
        for (s, q) in self.inbox.iter_mut().enumerate() {
            if let Some(&l) = q.front() {
                if view.sms[s].fits(&view.launches[l].info.launch) {
                    q.pop_front();
                    out.push((l, s as u32));
                    taken[s] = true;
                }
            }
        }
        let Some(unit) = self.unit.as_mut() else { return };
        let i = slice::In { cmd: self.cmds.front().copied().unwrap_or_default(), done: self.dones.front().copied() };
        unit.at_cycle(now);
        let o = unit.outputs(&i);
        if !o.busy && i == slice::In::default() {
            return;
        }
        unit.clock(&i);
        if let Some(e) = unit.halted() {
            self.error.get_or_insert(e);
        }
        if self.cmds.pop_front().is_some() {
            self.stats.commands += 1;
        }
        self.dones.pop_front();
        if let Some((sm, k)) = o.issue {
            let (sm, k) = (sm as usize, k as usize);
            let Some(l) = self.slots.get(k).copied().flatten().filter(|_| sm < sms) else {
                self.error.get_or_insert(format!("cycle {now}: the slice table issued a block of slot {k} to SM {sm}; the slot is empty or the GPU has {sms} SMs"));
                return;
            };
            self.stats.issued += 1;
            let held = view.sms[sm].blocks_per_launch();
            let others = held.iter().filter(|h| h.0 != l && h.1 > 0).count() as u8;
            self.stats.max_sharing = self.stats.max_sharing.max(others + 1);
            self.stats.shared_issues += (others > 0) as u64;
            if !taken[sm] && self.inbox[sm].is_empty() && view.sms[sm].fits(&view.launches[l].info.launch) {
                out.push((l, sm as u32));
            } else {
                self.inbox[sm].push_back(l);
                self.stats.waited += 1;
            }
        }
    }

    fn framework_quotas(&mut self, now: u64, view: &DispatchView) -> Option<Vec<(usize, Vec<u32>)>> {
        if !self.controller {
            return None;
        }
        // (the quotas change only here, or where `quota_dirty` is set: asked every cycle, the
        // table is compared only then)
        let requota = self.changed && !self.profiling();
        if requota {
            self.changed = false;
            self.requota(now, view);
        }
        if !std::mem::take(&mut self.quota_dirty) && !requota {
            return None;
        }
        let mut q: Vec<(usize, Vec<u32>)> = self.quota.iter().map(|(&l, v)| (l, v.clone())).collect();
        q.sort();
        (q != self.handed).then(|| {
            self.stats.commands += 1;
            self.handed = q.clone();
            q
        })
    }

    fn framework_regroup(&mut self) {
        // (the kernels being profiled are no longer the ones partitioned: their profile is
        // dropped, and the new group's quotas computed at once)
        if self.controller && self.rep.take().is_some() {
            self.changed = true;
            self.quota_dirty = true;
        }
    }

    fn block_placed(&mut self, launch: usize, sm: usize, view: &DispatchView) {
        self.stats.issued += 1;
        let others = view.sms[sm].blocks_per_launch().iter().filter(|h| h.0 != launch && h.1 > 0).count() as u8;
        self.stats.max_sharing = self.stats.max_sharing.max(others + 1);
        self.stats.shared_issues += (others > 0) as u64;
    }

    fn block_done(&mut self, _now: u64, launch: usize, sm: u32) {
        // (the slice table's completions: as the framework's quota controller it has none)
        if self.controller {
            return;
        }
        if let Some(k) = self.slots.iter().position(|&x| x == Some(launch)) {
            self.dones.push_back((sm as u8, k as u8));
        }
    }

    fn launch_done(&mut self, _now: u64, launch: usize) {
        self.active.retain(|&l| l != launch);
        self.waiting.retain(|&l| l != launch);
        if let Some(k) = self.slots.iter().position(|&x| x == Some(launch)) {
            self.leaving.push(k as u8);
        }
        self.changed = true;
    }

    fn busy(&self) -> bool {
        self.rep.is_some()
            || self.quota_dirty
            || self.changed
            || !self.cmds.is_empty()
            || !self.dones.is_empty()
            || !self.leaving.is_empty()
            || self.error.is_some()
            || self.inbox.iter().any(|q| !q.is_empty())
            || (!self.waiting.is_empty() && self.slots.iter().any(|x| x.is_none()))
            || self.unit.as_ref().is_some_and(|u| u.outputs(&slice::In::default()).busy)
    }

    fn observe(&mut self, now: u64, view: &DispatchView) -> Result<bool, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let Some(wf_unit) = self.wf.as_mut() else { return Ok(self.changed) };
        let Some(rep) = self.rep.as_mut() else { return Ok(self.changed) };
        let sms = view.sms.len();
        if let Some((at, r)) = rep.latched.take() {
            let m = &rep.layouts[r];
            let v = self.prof.iter().enumerate().map(|(s, p)| {
                let o = p.outputs(&prof::In::default());
                (m[s].0, m[s].1, o.insts, o.stalls, o.blocks)
            });
            self.stats.samples.push((at, v.collect()));
        }
        let o = wf_unit.outputs(&wf::In::default());
        // Open the round's window once the layout holds (or has had `settle` cycles).
        let mut start = false;
        if !rep.started && !o.busy || rep.started && o.round_wait {
            let settled = rep.settled(view);
            if settled || now >= rep.since + self.params.settle {
                start = true;
                self.stats.rounds += 1;
                self.stats.unsettled += !settled as u64;
            }
        }
        let rep = self.rep.as_mut().unwrap();
        let round = rep.round;
        let layout = rep.layouts[round].clone();
        let kernels = rep.kernels.clone();
        let last = round + 1 == rep.layouts.len();
        let sm = o.rd_sm as usize;
        let (sm_k, sm_j) = layout.get(sm).copied().unwrap_or((0, 0));
        let po = self.prof.get(sm).map(|p| p.outputs(&prof::In::default())).unwrap_or_default();
        let rk = (o.rd_k as usize).min(kernels.len() - 1);
        let i = wf::In {
            start,
            last,
            kernels: kernels.len() as u8,
            window: self.params.window,
            fallback_pct: self.params.pct,
            delay: self.params.delay,
            total: Self::total(view),
            sm_k,
            sm_j,
            sm_insts: po.insts,
            sm_stalls: po.stalls,
            k_req: Self::request(view, kernels[rk]),
        };
        let o = wf_unit.outputs(&i);
        // Every SM's counters: this cycle's events, the window from the unit's outputs.
        for (s, p) in self.prof.iter_mut().enumerate() {
            let smv = &view.sms[s];
            let insts = smv.stats.warp_insts;
            let issued = (insts - self.last_insts[s]).min(prof::MAX_ISSUE as u64) as u8;
            self.last_insts[s] = insts;
            let pi = prof::In { run: o.win_run, first: o.win_first, last: o.win_last, issued, stall: smv.memory_stalled(), blocks: smv.used_blocks.min(31) as u8 };
            p.at_cycle(now);
            p.outputs(&pi);
            p.clock(&pi);
        }
        wf_unit.at_cycle(now);
        wf_unit.clock(&i);
        if let Some(e) = self.prof.iter().find_map(|p| p.halted()).or_else(|| wf_unit.halted()) {
            return Err(e);
        }
        let mut dirty = false;
        if start {
            let rep = self.rep.as_mut().unwrap();
            rep.started = true;
        }
        let started = self.rep.as_ref().is_some_and(|r| r.started);
        if started && o.win_last {
            let rep = self.rep.as_mut().unwrap();
            rep.latched = Some((now, rep.round));
        }
        if started && o.win_last && !last {
            // The window of a round that is not the last has closed: the next round's layout.
            let rep = self.rep.as_mut().unwrap();
            rep.round += 1;
            rep.since = now + 1;
            self.layout_quotas(sms);
            dirty = true;
        }
        if started && o.done {
            let rep = self.rep.take().unwrap();
            let q = &o.quota[..rep.kernels.len()];
            self.stats.decisions.push(SliceDecision { cycle: now, launches: rep.kernels.clone(), quota: q.to_vec(), spatial: o.spatial });
            self.stats.profile_cycles += now - rep.began;
            let ids = rep.kernels.iter().map(|&l| Self::identity(view, l)).collect();
            self.last = Some((ids, q.to_vec(), o.spatial));
            self.apply(&rep.kernels, q, o.spatial, sms);
            dirty = true;
        }
        self.quota_dirty |= dirty && self.controller;
        Ok(dirty || self.changed)
    }

    fn set_units(&mut self, units: &mut Units) -> Option<Result<(), String>> {
        if units.are::<wf::In, wf::Out>() {
            let Some(w) = self.wf.as_mut() else {
                return Some(Err(format!("the water-filling unit is used under Warped-Slicer (this dispatcher runs {})", self.policy.name())));
            };
            *w = units.make(0);
        } else if units.are::<prof::In, prof::Out>() {
            if self.policy != Slicing::WarpedSlicer {
                return Some(Err(format!("the sampling counters are used under Warped-Slicer (this dispatcher runs {})", self.policy.name())));
            }
            for (k, p) in self.prof.iter_mut().enumerate() {
                *p = units.make(k);
            }
        } else if units.are::<slice::In, slice::Out>() {
            self.unit = Some(units.make(0));
        } else {
            return None;
        }
        Some(Ok(()))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl Slicer {
    /// What the slicing did in the run so far: its statistics, with the water-filling unit's
    /// ties and the slice table's first quota compare that `<=` would pick differently, as
    /// their models saw them (none from an RTL alone).
    pub fn slice_stats(&self) -> SliceStats {
        let mut s = self.stats();
        s.ties = self.wf.as_ref().and_then(|u| Some(u.model()?.get::<crate::units::wf::Wf>()?.ties.iter().map(|t| t.0).collect())).unwrap_or_default();
        s.first_over_quota = self.unit.as_ref().and_then(|u| u.model()?.get::<crate::units::slice::Slice>()?.first_over_quota);
        s
    }

    /// The slicer dispatching for `gpu`, if it has one.
    pub fn of(gpu: &Gpu) -> Option<&Slicer> {
        gpu.dispatcher().or(gpu.quota_controller())?.as_any()?.downcast_ref()
    }

    /// `gpu`'s result with the slicer's statistics ([`RunResult::slicing`]).
    pub fn result(gpu: &Gpu) -> RunResult {
        RunResult { slicing: Slicer::of(gpu).map(Slicer::slice_stats), ..gpu.result() }
    }
}

/// The Oracle's curves: each process of `w` run alone at 1, 2, ... blocks per SM (up to its
/// occupancy, at most NMAX); its IPC (warp-instructions per cycle, x 2^16) at each count, 0
/// past its occupancy. `cache` keeps a process's curve by its description across workloads.
pub fn oracle_curves(
    cfg: &GpuConfig,
    w: &Workload,
    limits: RunLimits,
    cache: &mut std::collections::HashMap<String, [u64; NMAX]>,
) -> Result<Vec<[u64; NMAX]>, SimError> {
    let mut out = Vec::new();
    for p in &w.processes {
        let alone = Workload::alone(&crate::workload::ProcessSpec { arrival: 0, insts: None, ..p.clone() });
        // (the process as it runs alone, whatever its name)
        let key = format!("{}:{:?}", cfg.name, crate::workload::ProcessSpec { name: String::new(), ..alone.processes[0].clone() });
        if let Some(c) = cache.get(&key) {
            out.push(*c);
            continue;
        }
        let mut curve = [0u64; NMAX];
        for j in 1..=NMAX as u8 {
            let mut gpu = Gpu::with_dispatcher(cfg, Box::new(Slicer::new(Slicing::Cap(j), SliceParams::default(), cfg.num_sms() as usize)));
            gpu.add_workload(&alone)?;
            gpu.run(limits, &mut |_, _, _| {})?;
            let r = gpu.result();
            // (past the occupancy more blocks change nothing: the curve stops there)
            let occupancy_reached = j > 1 && (r.warp_insts << 16) / r.cycles.max(1) == curve[j as usize - 2];
            curve[j as usize - 1] = (r.warp_insts << 16) / r.cycles.max(1);
            if occupancy_reached || j as u32 >= cfg.sm[0].blocks {
                break;
            }
        }
        cache.insert(key, curve);
        out.push(curve);
    }
    Ok(out)
}

/// [`run_workload`](super::gpu::run_workload) with an intra-SM slicing policy as the
/// dispatcher (its units the models).
pub fn run_workload_sliced(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Slicing,
    params: SliceParams,
    limits: RunLimits,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<RunResult, SimError> {
    run_workload_sliced_with(cfg, w, None, policy, params, limits, progress)
}

/// [`run_workload_sliced`], inside the scheduling framework under `sched` when given (the
/// slicer its quota controller, [`Slicer::in_framework`]).
pub fn run_workload_sliced_with(
    cfg: &GpuConfig,
    w: &Workload,
    sched: Option<(crate::units::framework::Policy, crate::units::framework::Mechanism)>,
    policy: Slicing,
    params: SliceParams,
    limits: RunLimits,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<RunResult, SimError> {
    let slicer = Slicer::for_workload(cfg, w, policy, params, limits)?;
    let mut gpu = match sched {
        Some((p, m)) => Gpu::with_framework_sliced(cfg, p, m, w.processes.len(), Box::new(slicer.in_framework())).map_err(SimError::BadLaunch)?,
        None => Gpu::with_dispatcher(cfg, Box::new(slicer)),
    };
    gpu.add_workload(w)?;
    gpu.run(limits, progress)?;
    Ok(Slicer::result(&gpu))
}
