//! HeteroCore's kernel steering (the HeteroCore paper, §4; `docs/heterocore.md`): a
//! thread-block dispatcher that gives each co-running kernel SMs of its own (spatial
//! multitasking), and on a GPU of big and small SMs profiles the kernels on both kinds and
//! gives the big SMs to the kernel that gains most from them (Algorithm 2).
//!
//! A kernel here is a launch from its arrival to its end; the layout is made again whenever
//! that set changes. An SM whose owner changes gives up the blocks it holds of other kernels
//! by draining (it takes no block of its new owner until they have ended) or by a context
//! switch (they are saved to memory and come back on an SM their kernel owns).

use super::dispatch::{DispatchView, Dispatcher};
use super::gpu::{Gpu, RunLimits, RunResult, SimError};
use crate::config::{GpuConfig, SmConfig};
use crate::slots::{Held, Units};
use crate::workload::Workload;
use mpgpu_spec::units::steer as su;
use serde::{Deserialize, Serialize};

/// How the kernels share the SMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Steering {
    /// Every kernel an equal share of every SM kind, kept (the TLP-agnostic policy of §4.1;
    /// on identical SMs, even spatial partitioning: the paper's conventional GPU).
    Even,
    /// Spatial profiling and steering (§4.3, Algorithm 2): an even share of each kind while
    /// the kernels are profiled, then the big SMs to the kernel with the larger estimated
    /// gain, unless every kernel runs faster on big SMs.
    Dynamic,
    /// The static policies of §4.2, for two kernels, decided as the kernels change from each
    /// kernel's isolated runs ([`Offline`], given with [`Steer::with_offline`]): by class (the
    /// thick kernel to the big SMs, the lean one to the small; the same class: split, §4.2.1),
    /// STP-optimised (Algorithm 1: the assignment of larger STP, never split, §4.2.2), and
    /// STP/ANTT-balanced (split if both run faster on big SMs than on small ones, else
    /// STP-optimised, §4.2.3).
    Classified,
    StpOptimized,
    Balanced,
    /// A fixed layout of two kernels: the first process's on `big` big SMs and `small` small
    /// ones, the other's on the rest (any other number of kernels: `Even`). §6.5's static
    /// optimum is the best of these over the layouts it enumerates.
    Fixed { big: u8, small: u8 },
}

/// A kernel's isolated runs for the static policies: its IPC alone on the conventional GPU
/// (`base`), on the big SMs and on the small SMs, and its class (§4.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offline {
    pub base: f64,
    pub big: f64,
    pub small: f64,
    pub class: crate::heterocore::TlpClass,
}

impl Offline {
    /// From a kernel's isolated runs: alone on the conventional GPU, on the big SMs and on the
    /// small SMs (IPC in warp-instructions per cycle), and its class.
    pub fn of(base: &RunResult, big: &RunResult, small: &RunResult, class: crate::heterocore::TlpClass) -> Offline {
        let ipc = |r: &RunResult| r.warp_insts as f64 / r.cycles.max(1) as f64;
        Offline { base: ipc(base), big: ipc(big), small: ipc(small), class }
    }
}

/// The static decision for two kernels (`k[0]` the earlier): the index of the kernel given
/// the big SMs, or `None` to split.
pub fn choose_static(policy: Steering, k: [&Offline; 2]) -> Option<usize> {
    use crate::heterocore::TlpClass::Thick;
    // Algorithm 1: K0 to the big SMs if STP(K0 -> big, K1 -> small) is the larger.
    let stp = |b: usize, s: usize| k[b].big / k[b].base + k[s].small / k[s].base;
    let optimised = if stp(0, 1) > stp(1, 0) { 0 } else { 1 };
    match policy {
        Steering::Classified if k[0].class != k[1].class => Some(if k[0].class == Thick { 0 } else { 1 }),
        Steering::Classified => None,
        Steering::StpOptimized => Some(optimised),
        Steering::Balanced if k.iter().all(|x| x.big > x.small) => None,
        Steering::Balanced => Some(optimised),
        Steering::Even | Steering::Dynamic | Steering::Fixed { .. } => None,
    }
}

impl Steering {
    /// A static policy of §4.2 (deciding from the kernels' isolated runs).
    pub fn is_static(self) -> bool {
        matches!(self, Steering::Classified | Steering::StpOptimized | Steering::Balanced)
    }

    pub fn name(self) -> &'static str {
        match self {
            Steering::Even => "even",
            Steering::Dynamic => "dynamic",
            Steering::Classified => "classified",
            Steering::StpOptimized => "stp-optimized",
            Steering::Balanced => "balanced",
            Steering::Fixed { .. } => "fixed",
        }
    }
}

/// How an SM that changes owner gives up the blocks it holds of another kernel (§3.3, §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preempt {
    /// The paper's adaptive choice: drain a kernel that ended a block during the profiling
    /// warm-up (its blocks are short), context-switch the others.
    Adaptive,
    /// Always drain: the blocks run to their end, and the SM takes nothing of its new owner
    /// until they have.
    Drain,
    /// Always context-switch: the blocks are saved to memory and come back on an SM their
    /// kernel owns.
    Switch,
}

impl Preempt {
    pub fn name(self) -> &'static str {
        match self {
            Preempt::Adaptive => "adaptive",
            Preempt::Drain => "drain",
            Preempt::Switch => "switch",
        }
    }
}

/// The profiling phase's lengths in cycles (§4.3: 20 K of warm-up, then 20 K measured) and
/// the preemption of SMs that change owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteerParams {
    pub warmup: u64,
    pub window: u64,
    pub preempt: Preempt,
}

impl Default for SteerParams {
    fn default() -> SteerParams {
        SteerParams { warmup: 20_000, window: 20_000, preempt: Preempt::Adaptive }
    }
}

impl SteerParams {
    /// As the framework's quota controller takes them ([`Steer::in_framework`]): an SM
    /// changes owner by draining (its quotas), whatever else was asked.
    pub fn in_framework(self) -> SteerParams {
        SteerParams { preempt: Preempt::Drain, ..self }
    }
}

/// One steering decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteerDecision {
    /// The cycle of the decision (the end of the measured window).
    pub cycle: u64,
    /// The kernels profiled (launch ids, in the order of the unit's slots).
    pub launches: Vec<usize>,
    /// Per kernel, the warp-instructions it issued in the window on its big SMs and on its
    /// small SMs, and its blocks per SM on a big, a small and a baseline SM.
    pub big_insts: Vec<u64>,
    pub small_insts: Vec<u64>,
    pub blocks: Vec<[u32; 3]>,
    /// Per kernel, its big and its small SMs in the window.
    pub sms: Vec<(u32, u32)>,
    /// The kernels given the big SMs (empty: every kernel runs faster on big SMs, and each
    /// keeps its share of both kinds).
    pub big: Vec<usize>,
    /// Per kernel, whether it ended a block during the warm-up (the adaptive preemption's
    /// test, §3.3: such a kernel's SMs drain).
    pub ended_in_warmup: Vec<bool>,
    /// The SMs that changed owner by this decision, with the kernel whose blocks each gave up
    /// and whether by a context switch (else by draining).
    pub preempted: Vec<(u32, usize, bool)>,
}

/// What a run's steering did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteerStats {
    pub policy: String,
    /// Layouts made (a change of the kernels sharing the GPU), profiling phases begun, and
    /// the cycles spent profiling (to a decision or an interruption).
    pub layouts: u64,
    pub profiles: u64,
    pub profile_cycles: u64,
    pub decisions: Vec<SteerDecision>,
    /// SMs that changed owner while holding blocks of another kernel: drained, and
    /// context-switched (a kernel's blocks on one SM count once).
    pub drains: u64,
    pub switches: u64,
    /// Blocks the context switches saved, and restored.
    pub saved_blocks: u64,
    pub restored_blocks: u64,
}

/// The steering dispatcher: the layouts and their preemptions, over the steering unit
/// (`mpgpu_spec::units::steer`), which holds the owner table, profiles and decides.
pub struct Steer {
    policy: Steering,
    params: SteerParams,
    /// Per SM, its kind (the index of its `[[sm]]` group); the kinds' configurations; which
    /// kind is big and which small (the most and the fewest registers), and the baseline SM
    /// of the area-equivalent conventional GPU (the kinds' count-weighted mean, §3.1).
    kind: Vec<usize>,
    kinds: Vec<SmConfig>,
    big_kind: usize,
    small_kind: usize,
    base: SmConfig,
    /// Launches ready and not done, in arrival order; those of the layout (the kernels: the
    /// first [`su::KMAX`] of them, each in a slot of the unit, the others waiting for one);
    /// whether `ready` changed since the layout.
    ready: Vec<usize>,
    kernels: Vec<usize>,
    changed: bool,
    /// The steering unit (its model unless `Gpu::set_units` put another), its outputs as its
    /// last edge left them, and the launch in each of its slots with the slot's blocks per SM
    /// on a big, a small and a baseline SM.
    unit: Held<su::In, su::Out>,
    out: su::Out,
    slots: [Option<usize>; su::KMAX],
    blocks: [[u8; 3]; su::KMAX],
    /// The big SMs and the small SMs as the unit takes them (bit s: SM s).
    big_sms: u16,
    small_sms: u16,
    /// Slots that ended a block this cycle (for the unit's next edge).
    ends: u8,
    /// Per SM, its owner's warp-instructions at the unit's last edge.
    seen: Vec<u64>,
    /// The cycle the profile under way began.
    profile_from: Option<u64>,
    /// Context switches to make: (SM, launch).
    switch: Vec<(u32, usize)>,
    /// The static policies' isolated runs, by kernel name.
    offline: Vec<(String, Offline)>,
    stats: SteerStats,
    /// Its name as a dispatcher ("steer" and the policy's).
    label: String,
    /// As the scheduling framework's quota controller ([`Steer::in_framework`]): the quotas
    /// last handed to it.
    handed: Option<Vec<(usize, Vec<u32>)>>,
}

/// Refuses what steering cannot run with (a context switch under Zorua or WLM, thread-block
/// switching on faults) and what the steering unit cannot serve (`mpgpu_spec::units::steer`):
/// more SMs than its owner table has entries for, a kind of SM issuing more warp-instructions a cycle or
/// holding more blocks than its fields take, a profile's lengths outside its timer.
pub fn check(cfg: &GpuConfig, params: &SteerParams) -> Result<(), String> {
    let sms = cfg.num_sms();
    if sms as usize > su::MAX_SMS {
        return Err(format!("steering: `{}` has {sms} SMs; the steering unit's owner table serves at most {}", cfg.name, su::MAX_SMS));
    }
    let most = (1u32 << su::BLOCK_BITS) - 1;
    for (g, s) in cfg.sm.iter().enumerate() {
        if s.schedulers > (1 << su::ISSUED_BITS) - 1 {
            return Err(format!("steering: [[sm]] group {g} of `{}` has {} schedulers; the steering unit counts at most {} warp-instructions an SM a cycle", cfg.name, s.schedulers, (1 << su::ISSUED_BITS) - 1));
        }
        if s.blocks > most {
            return Err(format!("steering: [[sm]] group {g} of `{}` holds {} blocks; the steering unit takes at most {most} blocks per SM", cfg.name, s.blocks));
        }
    }
    // (a context switch saves a block's registers and scratchpad, which under Zorua and WLM
    // live in the coordinator's sets and swap; thread-block switching on faults puts blocks
    // back on their SM whoever owns it)
    if cfg.alloc != crate::config::Alloc::Block && params.preempt != Preempt::Drain {
        return Err(format!(
            "steering's context switch saves a block's registers and scratchpad, which under alloc = \"{}\" live in the coordinator's sets and swap: steer with --steer-preempt drain, or alloc = \"block\"",
            cfg.alloc.name()
        ));
    }
    if cfg.tb_switch.enabled {
        return Err("thread-block switching on faults puts a block back on its own SM, whichever kernel the steering gave that SM to: steer without tb_switch".into());
    }
    let top = (1u64 << su::WINDOW_BITS) - 1;
    for (flag, v) in [("--steer-warmup", params.warmup), ("--steer-window", params.window)] {
        if !(1..=top).contains(&v) {
            return Err(format!("{flag} {v}: the steering unit's timer takes 1 to {top} cycles"));
        }
    }
    Ok(())
}

impl Steer {
    pub fn new(cfg: &GpuConfig, policy: Steering, params: SteerParams) -> Steer {
        let kind: Vec<usize> = cfg.sm.iter().enumerate().flat_map(|(g, s)| std::iter::repeat_n(g, s.count as usize)).collect();
        let kinds = cfg.sm.clone();
        let (big_kind, small_kind) = crate::heterocore::big_and_small(cfg);
        let base = crate::heterocore::baseline_sm(cfg);
        let mask = |k: usize| kind.iter().enumerate().filter(|&(s, &x)| x == k && s < su::MAX_SMS).fold(0u16, |m, (s, _)| m | 1 << s);
        // (one kind: nothing is big or small, and the unit never profiles)
        let (big_sms, small_sms) = if big_kind == small_kind { (0, 0) } else { (mask(big_kind), mask(small_kind)) };
        Steer {
            policy,
            params,
            seen: vec![0; kind.len()],
            kind,
            kinds,
            big_kind,
            small_kind,
            base,
            ready: Vec::new(),
            kernels: Vec::new(),
            changed: false,
            unit: Box::new(crate::units::steer::Steer::default()),
            out: su::Out::default(),
            slots: [None; su::KMAX],
            blocks: [[0; 3]; su::KMAX],
            big_sms,
            small_sms,
            ends: 0,
            profile_from: None,
            switch: Vec::new(),
            offline: Vec::new(),
            stats: SteerStats { policy: policy.name().into(), ..SteerStats::default() },
            label: format!("steer {}", policy.name()),
            handed: None,
        }
    }

    /// The steering as the scheduling framework's quota controller
    /// (`Gpu::with_framework_sliced`; `docs/heterocore.md`, "Inside the scheduling framework"):
    /// the framework's policy keeps holding the SMs, and a kernel of the group it names gets
    /// blocks only on the SMs the owner table gives it (its quota T_k there, 0 elsewhere). An SM
    /// changes owner by draining, the framework's way of giving up an SM without a save: the
    /// new owner's quota there stays 0 until the blocks of every other kernel on it have ended.
    pub fn in_framework(mut self) -> Steer {
        self.params = self.params.in_framework();
        self.handed = Some(Vec::new());
        self
    }

    /// The isolated runs the static policies decide from, by kernel name.
    pub fn with_offline(mut self, offline: Vec<(String, Offline)>) -> Steer {
        self.offline = offline;
        self
    }

    /// The steering dispatching for `gpu`, or its framework's quota controller, if it has one.
    pub fn of(gpu: &Gpu) -> Option<&Steer> {
        gpu.dispatcher().or_else(|| gpu.quota_controller())?.as_any()?.downcast_ref()
    }

    /// `gpu`'s result with the steering's statistics ([`RunResult::steering`]).
    pub fn result(gpu: &Gpu) -> RunResult {
        RunResult { steering: Steer::stats(gpu), ..gpu.result() }
    }

    /// The steering's statistics, if `gpu` steers.
    pub fn stats(gpu: &Gpu) -> Option<SteerStats> {
        let (saved, restored) = gpu.context_switched();
        Steer::of(gpu).map(|s| SteerStats { saved_blocks: saved, restored_blocks: restored, ..s.stats.clone() })
    }

    /// Whether the GPU has two kinds to steer between, with at least `n` SMs of each, and `n`
    /// kernels the paper steers (two, §4.3, or four, §6.4).
    fn steers(&self, n: usize) -> bool {
        // (each kernel profiles on at least one SM of each kind)
        let of = |k: usize| self.kind.iter().filter(|&&x| x == k).count();
        self.policy == Steering::Dynamic && self.big_kind != self.small_kind && (n == 2 || n == 4) && of(self.big_kind) >= n && of(self.small_kind) >= n
    }

    /// Per SM, the launch it serves, from the unit's owner table.
    fn owners(&self) -> Vec<Option<usize>> {
        (0..self.kind.len()).map(|s| self.out.owners.get(s).and_then(|&o| if o >> su::SLOT_BITS != 0 { self.slots[o as usize & (su::KMAX - 1)] } else { None })).collect()
    }

    /// An owner table in launches as the unit loads it (in slots).
    fn encode(&self, owners: &[Option<usize>]) -> [u8; su::MAX_SMS] {
        let mut t = [0; su::MAX_SMS];
        for (s, o) in owners.iter().enumerate() {
            if let Some(k) = o.and_then(|l| self.slots.iter().position(|&x| x == Some(l))) {
                t[s] = 1 << su::SLOT_BITS | k as u8;
            }
        }
        t
    }

    /// Each kernel an equal share of every kind (the first kernels take the remainder).
    fn even(&self, owners: &mut [Option<usize>]) {
        for k in 0..self.kinds.len() {
            self.share_out(owners, k, &self.kernels);
        }
    }

    /// The kernels given the big SMs share them evenly, the others the small SMs; a kind
    /// neither big nor small (a third kind) stays evenly shared.
    fn steer(&self, owners: &mut [Option<usize>], big: &[usize]) {
        let small: Vec<usize> = self.kernels.iter().copied().filter(|l| !big.contains(l)).collect();
        self.share_out(owners, self.big_kind, big);
        self.share_out(owners, self.small_kind, &small);
    }

    /// The SMs of kind `k` to the kernels of `group`, in shares as even as they can be (the
    /// first kernels take the remainder). An SM stays with its owner while the owner's share
    /// allows (so that a layout moves as few SMs as it can: a replay takes the SMs of the run
    /// before it); the SMs left over go to the kernels short of their share, in SM order.
    fn share_out(&self, owners: &mut [Option<usize>], k: usize, group: &[usize]) {
        let sms = self.kind.iter().filter(|&&x| x == k).count();
        let n = group.len().max(1);
        let shares: Vec<usize> = (0..group.len()).map(|i| sms / n + usize::from(i < sms % n)).collect();
        self.give_out(owners, k, group, &shares);
    }

    /// [`Steer::share_out`] with the shares given (summing to the kind's SMs).
    fn give_out(&self, owners: &mut [Option<usize>], k: usize, group: &[usize], shares: &[usize]) {
        let sms: Vec<usize> = (0..self.kind.len()).filter(|&s| self.kind[s] == k).collect();
        let n = group.len();
        if n == 0 {
            sms.iter().for_each(|&s| owners[s] = None);
            return;
        }
        let share = |i: usize| shares[i];
        let mut have = vec![0; n];
        let mut free = Vec::new();
        for &s in &sms {
            match owners[s].and_then(|l| group.iter().position(|&g| g == l)) {
                Some(i) if have[i] < share(i) => have[i] += 1,
                _ => free.push(s),
            }
        }
        let mut free = free.into_iter();
        for i in 0..n {
            while have[i] < share(i) {
                owners[free.next().expect("shares sum to the SMs")] = Some(group[i]);
                have[i] += 1;
            }
        }
    }

    /// A launch's blocks per SM on a big, a small and a baseline SM.
    fn blocks_of(&self, l: usize, view: &DispatchView) -> [u8; 3] {
        let f = view.launches[l].info.launch.kernel.footprint();
        [&self.kinds[self.big_kind], &self.kinds[self.small_kind], &self.base].map(|c| c.occupancy(&f).blocks.min((1 << su::BLOCK_BITS) - 1) as u8)
    }

    /// The kernels changed: slots for the new ones, a new layout (and under `Dynamic` a
    /// profile when it steers this many kernels), put in `i` for the unit's edge.
    /// (`owners`: the table in launches as the unit holds it, before the slots change hands)
    fn relayout(&mut self, now: u64, view: &DispatchView, mut owners: Vec<Option<usize>>, i: &mut su::In) {
        for k in 0..su::KMAX {
            if self.slots[k].is_some_and(|l| !self.ready.contains(&l)) {
                self.slots[k] = None;
            }
        }
        // (in arrival order while the unit has a free slot; a later kernel waits for one)
        for &l in &self.ready {
            let Some(k) = self.slots.iter().position(Option::is_none).filter(|_| !self.slots.contains(&Some(l))) else { continue };
            self.slots[k] = Some(l);
            self.blocks[k] = self.blocks_of(l, view);
            i.fresh |= 1 << k;
        }
        self.kernels = self.ready.iter().copied().filter(|l| self.slots.contains(&Some(*l))).collect();
        self.changed = false;
        self.end_profile(now);
        self.even(&mut owners);
        self.stats.layouts += 1;
        if self.steers(self.kernels.len()) {
            self.stats.profiles += 1;
            self.profile_from = Some(now);
            i.start = true;
        } else {
            i.stop = true;
        }
        if let (Steering::Fixed { big, small }, 2, true) = (self.policy, self.kernels.len(), self.big_kind != self.small_kind) {
            let of = |k: usize| self.kind.iter().filter(|&&x| x == k).count();
            let (b, s) = (big as usize, small as usize);
            // (the first process's kernel first: a replay does not swap the layout)
            let mut ks = self.kernels.clone();
            ks.sort_by_key(|&l| view.launches[l].process);
            self.give_out(&mut owners, self.big_kind, &ks, &[b, of(self.big_kind) - b]);
            self.give_out(&mut owners, self.small_kind, &ks, &[s, of(self.small_kind) - s]);
        }
        if self.policy.is_static() && self.kernels.len() == 2 && self.big_kind != self.small_kind {
            let find = |l: usize| {
                let name = &view.launches[l].info.launch.kernel.name;
                self.offline.iter().find(|o| &o.0 == name).map(|o| &o.1).unwrap_or_else(|| panic!("steering {}: no isolated run of kernel `{name}`", self.policy.name()))
            };
            let k = [find(self.kernels[0]), find(self.kernels[1])];
            if let Some(x) = choose_static(self.policy, k) {
                let big = [self.kernels[x]];
                self.steer(&mut owners, &big);
                self.stats.decisions.push(SteerDecision { cycle: now, launches: self.kernels.clone(), big: big.to_vec(), ..SteerDecision::default() });
            }
        }
        i.load = true;
        i.owners_in = self.encode(&owners);
    }

    /// The unit's decision is out (§4.3, Algorithm 2, or §6.4's four kernels): recorded, and
    /// the big SMs to the kernels it names, put in `i` for the unit's edge.
    fn decide(&mut self, now: u64, owners: Vec<Option<usize>>, i: &mut su::In) {
        let o = self.out;
        let mut d = SteerDecision { cycle: now, ..SteerDecision::default() };
        for (k, l) in self.slots.iter().enumerate().filter_map(|(k, l)| Some((k, (*l)?))) {
            let on = |kind: usize| (0..owners.len()).filter(|&s| owners[s] == Some(l) && self.kind[s] == kind).count() as u32;
            d.launches.push(l);
            d.big_insts.push(o.big_insts[k] as u64);
            d.small_insts.push(o.small_insts[k] as u64);
            d.blocks.push(self.blocks[k].map(u32::from));
            d.sms.push((on(self.big_kind), on(self.small_kind)));
            d.ended_in_warmup.push(o.ended >> k & 1 != 0);
            if o.big >> k & 1 != 0 {
                d.big.push(l);
            }
        }
        self.end_profile(now);
        if !d.big.is_empty() {
            let mut owners = owners;
            self.steer(&mut owners, &d.big);
            i.load = true;
            i.owners_in = self.encode(&owners);
        }
        self.stats.decisions.push(d);
    }

    /// After a load: every SM whose owner changed gives up the blocks its previous owner holds
    /// there as the unit recorded (`modes`): by draining, or by a context switch of a kernel
    /// not yet ended. (Blocks of an earlier owner still draining go on draining.)
    fn preempt_sms(&mut self, before: &[Option<usize>], view: &DispatchView) -> Vec<(u32, usize, bool)> {
        let mut done = Vec::new();
        for (s, &prev) in before.iter().enumerate() {
            let m = self.out.modes[s];
            let Some(prev) = prev.filter(|&p| m != su::MODE_KEEP && view.sms[s].resident_launches().contains(&p)) else { continue };
            let switch = m == su::MODE_SWITCH && self.kernels.contains(&prev);
            if switch {
                self.stats.switches += 1;
                self.switch.push((s as u32, prev));
            } else {
                self.stats.drains += 1;
            }
            done.push((s as u32, prev, switch));
        }
        done
    }

    /// Whether SM `s` holds no block of a kernel other than `l` (drained for it).
    fn holds_only(view: &DispatchView, s: usize, l: usize) -> bool {
        view.sms[s].resident_launches().iter().all(|&r| r == l)
    }

    /// Per SM, its owner's (in `owners`) warp-instructions so far.
    fn insts(owners: &[Option<usize>], view: &DispatchView) -> Vec<u64> {
        owners.iter().enumerate().map(|(s, o)| o.map_or(0, |l| view.sms[s].insts_by_process.get(view.launches[l].process).copied().unwrap_or(0))).collect()
    }

    /// A profile under way ends now (decided, or cut short by a change of kernels): its cycles
    /// are counted.
    fn end_profile(&mut self, now: u64) {
        if let Some(t) = self.profile_from.take() {
            self.stats.profile_cycles += now - t;
        }
    }

    fn policy_code(&self) -> u8 {
        match self.params.preempt {
            Preempt::Adaptive => su::POLICY_ADAPTIVE,
            Preempt::Drain => su::POLICY_DRAIN,
            Preempt::Switch => su::POLICY_SWITCH,
        }
    }
}

impl Dispatcher for Steer {
    fn name(&self) -> &str {
        &self.label
    }

    fn launch_ready(&mut self, _now: u64, launch: usize, _view: &DispatchView) {
        self.ready.push(launch);
        self.changed = true;
    }

    fn dispatch(&mut self, _now: u64, view: &DispatchView, out: &mut Vec<(usize, u32)>) {
        // Blocks still to issue, less what this cycle already gave out.
        let mut left: Vec<u64> = self.kernels.iter().map(|&l| view.launches[l].remaining()).collect();
        for (s, o) in self.owners().into_iter().enumerate() {
            let Some(l) = o else { continue };
            let Some(k) = self.kernels.iter().position(|&x| x == l) else { continue };
            let sm = &view.sms[s];
            // (draining: nothing of the new owner while another kernel's blocks remain)
            if left[k] > 0 && sm.fits(&view.launches[l].info.launch) && Steer::holds_only(view, s, l) {
                left[k] -= 1;
                out.push((l, s as u32));
            }
        }
    }

    fn block_done(&mut self, _now: u64, launch: usize, _sm: u32) {
        if let Some(k) = self.slots.iter().position(|&x| x == Some(launch)) {
            self.ends |= 1 << k;
        }
    }

    fn launch_done(&mut self, _now: u64, launch: usize) {
        self.ready.retain(|&l| l != launch);
        self.changed = true;
    }

    fn preempts(&self) -> bool {
        true
    }

    fn framework_quotas(&mut self, _now: u64, view: &DispatchView) -> Option<Vec<(usize, Vec<u32>)>> {
        let handed = self.handed.as_ref()?;
        // (T_k on its own SMs that no other kernel's blocks still hold, 0 elsewhere; a kernel
        // waiting for a slot of the unit, a fifth, 0 everywhere: it waits, as under the
        // steering dispatcher, even on SMs the framework's policy gives it)
        // (per SM, the owner that may issue there: the SM drained of every other kernel)
        let open: Vec<Option<usize>> = self.owners().into_iter().enumerate().map(|(s, o)| o.filter(|&l| Steer::holds_only(view, s, l))).collect();
        let q: Vec<(usize, Vec<u32>)> = self.ready.iter().map(|&l| (l, open.iter().map(|&o| if o == Some(l) { u32::MAX } else { 0 }).collect())).collect();
        (q != *handed).then(|| {
            self.handed = Some(q.clone());
            q
        })
    }

    fn preempt(&mut self, _now: u64, _view: &DispatchView) -> Vec<(u32, usize)> {
        std::mem::take(&mut self.switch)
    }

    fn restore_to(&mut self, launch: usize, view: &DispatchView) -> Option<u32> {
        // (an SM of its own with room, holding no other kernel's blocks)
        let owners = self.owners();
        (0..owners.len())
            .find(|&s| owners[s] == Some(launch) && view.sms[s].fits(&view.launches[launch].info.launch) && Steer::holds_only(view, s, launch))
            .map(|s| s as u32)
    }

    /// The unit's edge: this cycle's block ends and issue, and a new layout when the kernels
    /// changed or the unit's decision is out.
    fn observe(&mut self, now: u64, view: &DispatchView) -> Result<bool, String> {
        let mut i = su::In {
            now: now as u32,
            warmup: self.params.warmup as u32,
            window: self.params.window as u32,
            policy: self.policy_code(),
            big_sms: self.big_sms,
            small_sms: self.small_sms,
            ends: std::mem::take(&mut self.ends),
            ..su::In::default()
        };
        let before = self.owners();
        let insts = Steer::insts(&before, view);
        for (s, &n) in insts.iter().enumerate().take(su::MAX_SMS) {
            i.issued[s] = n.saturating_sub(self.seen[s]).min((1 << su::ISSUED_BITS) - 1) as u8;
        }
        let decided = self.out.decided && !self.changed;
        if self.changed {
            self.relayout(now, view, before.clone(), &mut i);
        } else if decided {
            self.decide(now, before.clone(), &mut i);
        }
        for (k, l) in self.slots.iter().enumerate() {
            i.active |= (l.is_some() as u8) << k;
            [i.cb[k], i.cs[k], i.c0[k]] = if l.is_some() { self.blocks[k] } else { [0; 3] };
        }
        self.unit.at_cycle(now);
        self.unit.clock(&i);
        if let Some(e) = self.unit.halted() {
            return Err(e);
        }
        self.out = self.unit.outputs(&su::In::default());
        // (the owners' counts as the edge leaves them: the same owners unless it loaded)
        self.seen = if i.load { Steer::insts(&self.owners(), view) } else { insts };
        if i.load {
            let done = self.preempt_sms(&before, view);
            if decided {
                self.stats.decisions.last_mut().expect("the decision just made").preempted = done;
            }
        }
        Ok(i.load)
    }

    fn busy(&self) -> bool {
        self.out.phase != su::PHASE_IDLE || self.out.decided || self.changed || self.ends != 0 || !self.switch.is_empty()
    }

    fn set_units(&mut self, units: &mut Units) -> Option<Result<(), String>> {
        if !units.are::<su::In, su::Out>() {
            return None;
        }
        self.unit = units.make(0);
        Some(Ok(()))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Refuses a static policy (§4.2, two kernels between a big and a small kind) on a GPU of one
/// kind of SM, where it has nothing to decide.
pub fn check_policy(cfg: &GpuConfig, policy: Steering) -> Result<(), String> {
    let (b, s) = crate::heterocore::big_and_small(cfg);
    if policy.is_static() && b == s {
        return Err(format!("steering {}: the static policies give a big and a small kind of SM to two kernels; `{}` has one kind (use --steer even or dynamic)", policy.name(), cfg.name));
    }
    Ok(())
}

/// The kernels a process launches (those of its launches' library applications), in order.
pub fn kernels_of(p: &crate::workload::ProcessSpec) -> Result<Vec<String>, SimError> {
    let mut v = Vec::new();
    for l in &p.launches {
        let b = crate::library::find(&l.kernel).ok_or_else(|| SimError::BadLaunch(format!("process `{}`: no library application `{}`", p.name, l.kernel)))?;
        v.extend(b.kernels().map_err(|e| SimError::BadLaunch(e.to_string()))?.0.into_iter().map(|k| k.name.clone()));
    }
    Ok(v)
}

/// The isolated runs the static policies decide from, for every kernel of `w` (its process's,
/// [`offline`]; a kernel two processes launch takes the first's): one
/// result per process, in order.
pub fn offline_table(w: &Workload, per_process: &[Offline]) -> Result<Vec<(String, Offline)>, SimError> {
    let mut t: Vec<(String, Offline)> = Vec::new();
    for (p, o) in w.processes.iter().zip(per_process) {
        for k in kernels_of(p)? {
            if !t.iter().any(|x| x.0 == k) {
                t.push((k, *o));
            }
        }
    }
    Ok(t)
}

/// A process's isolated runs for the static steering policies (§4.2): alone on the
/// area-equivalent conventional GPU and on half the SMs of each kind (§4.2.1's 8 of 16), its
/// IPC on each and its class.
pub fn offline(cfg: &GpuConfig, p: &crate::workload::ProcessSpec, limits: RunLimits) -> Result<Offline, SimError> {
    use crate::heterocore::{classify, conventional};
    let (class, runs) = classify(cfg, p, (cfg.num_sms() / 2).max(1), limits)?;
    let alone = Workload::alone(&crate::workload::ProcessSpec { arrival: 0, ..p.clone() });
    let conv = super::gpu::run_workload(&conventional(cfg), &alone, limits, &mut |_, _, _| {})?;
    Ok(Offline::of(&conv, &runs[1], &runs[2], class))
}

/// [`offline`] for every process of `w`, one after another, as the static policies take them
/// ([`offline_table`]).
pub fn offline_for(cfg: &GpuConfig, w: &Workload, limits: RunLimits) -> Result<Vec<(String, Offline)>, SimError> {
    let per: Vec<_> = w.processes.iter().map(|p| offline(cfg, p, limits)).collect::<Result<_, _>>()?;
    offline_table(w, &per)
}

/// Runs `w` on `cfg` under `policy` (a static one deciding from `offline`, which must hold
/// every kernel of the workload): the result with the steering's statistics.
pub fn run_workload_steered(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Steering,
    params: SteerParams,
    offline: &[(String, Offline)],
    limits: RunLimits,
    progress: &mut dyn FnMut(u64, u64, u64),
) -> Result<RunResult, SimError> {
    steered_gpu(cfg, w, policy, params, offline, None)?.run_steered(limits, progress)
}

impl Gpu {
    /// Runs a steered GPU ([`steered_gpu`]) to the end: its result with the steering's
    /// statistics.
    pub fn run_steered(mut self, limits: RunLimits, progress: &mut dyn FnMut(u64, u64, u64)) -> Result<RunResult, SimError> {
        self.run(limits, progress)?;
        Ok(Steer::result(&self))
    }
}

/// The GPU steering `w`'s kernels, by itself or (`framework`: its policy, and its mechanism for
/// its own preemptions) inside the scheduling framework as its quota controller
/// ([`Steer::in_framework`]: SMs change owner by draining), checked before it runs.
pub fn steered_gpu(
    cfg: &GpuConfig,
    w: &Workload,
    policy: Steering,
    params: SteerParams,
    offline: &[(String, Offline)],
    framework: Option<(crate::units::framework::Policy, crate::units::framework::Mechanism)>,
) -> Result<Gpu, SimError> {
    // (checked as the steering will take them)
    let params = if framework.is_some() { params.in_framework() } else { params };
    check_policy(cfg, policy).map_err(SimError::BadLaunch)?;
    if policy.is_static() {
        for p in &w.processes {
            for k in kernels_of(p)? {
                if !offline.iter().any(|o| o.0 == k) {
                    return Err(SimError::BadLaunch(format!("steering {}: no isolated run of kernel `{k}` (process `{}`) to decide from", policy.name(), p.name)));
                }
            }
        }
    }
    check(cfg, &params).map_err(SimError::BadLaunch)?;
    if let Steering::Fixed { big, small } = policy {
        let (b, s) = crate::heterocore::big_and_small(cfg);
        if b == s || big as u32 > cfg.sm[b].count || small as u32 > cfg.sm[s].count {
            return Err(SimError::BadLaunch(format!("steering fixed: {big} big and {small} small SMs for the first process's kernel; `{}` has {} big and {} small", cfg.name, if b == s { 0 } else { cfg.sm[b].count }, if b == s { 0 } else { cfg.sm[s].count })));
        }
    }
    let steer = Steer::new(cfg, policy, params).with_offline(offline.to_vec());
    let mut gpu = match framework {
        None => Gpu::with_dispatcher(cfg, Box::new(steer)),
        Some((p, m)) => Gpu::with_framework_sliced(cfg, p, m, w.processes.len(), Box::new(steer.in_framework())).map_err(SimError::BadLaunch)?,
    };
    gpu.add_workload(w)?;
    Ok(gpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_static_policies_decide_from_the_isolated_runs() {
        use crate::heterocore::TlpClass::{Lean, Thick};
        let o = |base: f64, big: f64, small: f64, class| Offline { base, big, small, class };
        // K0 thick (faster on big SMs), K1 lean (faster on small).
        let (t, l) = (o(10.0, 7.0, 4.0, Thick), o(10.0, 5.0, 6.0, Lean));
        for p in [Steering::Classified, Steering::StpOptimized, Steering::Balanced] {
            assert_eq!(choose_static(p, [&t, &l]), Some(0), "{p:?}");
            assert_eq!(choose_static(p, [&l, &t]), Some(1), "{p:?}");
        }
        // Both thick: classification and the balanced policy split; STP-optimised never does
        // (STP(K0 -> big, K1 -> small) = 0.9 + 0.5 against STP(K1 -> big, K0 -> small) = 0.7 +
        // 0.3: K0).
        let (a, b) = (o(10.0, 9.0, 3.0, Thick), o(10.0, 7.0, 5.0, Thick));
        assert_eq!(choose_static(Steering::Classified, [&a, &b]), None);
        assert_eq!(choose_static(Steering::Balanced, [&a, &b]), None);
        assert_eq!(choose_static(Steering::StpOptimized, [&a, &b]), Some(0));
        // Each kernel's IPCs count against its own IPC on the conventional GPU: STP(K0 -> big) =
        // 9/20 + 5/5 = 1.45 against STP(K1 -> big) = 7/5 + 3/20 = 1.55 (by raw IPC K0 would win).
        let (e, f) = (o(20.0, 9.0, 3.0, Thick), o(5.0, 7.0, 5.0, Thick));
        assert_eq!(choose_static(Steering::StpOptimized, [&e, &f]), Some(1));
        // A tie in STP goes to K1 (Algorithm 1's else).
        assert_eq!(choose_static(Steering::StpOptimized, [&a, &a]), Some(1));
        // Both lean: classification splits; the balanced policy optimises STP.
        let (c, d) = (o(10.0, 4.0, 5.0, Lean), o(10.0, 3.0, 6.0, Lean));
        assert_eq!(choose_static(Steering::Classified, [&c, &d]), None);
        assert_eq!(choose_static(Steering::Balanced, [&c, &d]), Some(0));
    }
}
