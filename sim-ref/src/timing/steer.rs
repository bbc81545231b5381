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
use crate::workload::Workload;
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
        Steering::Even | Steering::Dynamic => None,
    }
}

impl Steering {
    pub fn name(self) -> &'static str {
        match self {
            Steering::Even => "even",
            Steering::Dynamic => "dynamic",
            Steering::Classified => "classified",
            Steering::StpOptimized => "stp-optimized",
            Steering::Balanced => "balanced",
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

/// One steering decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteerDecision {
    /// The cycle of the decision (the end of the measured window).
    pub cycle: u64,
    /// The kernels profiled (launch ids, in arrival order).
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

enum Phase {
    /// The layout stands until the kernels change.
    Fixed,
    /// Profiling, from `start`: warm-up, then the window measured from `base` (per SM, its
    /// owner's warp-instructions at the window's start).
    Profiling { start: u64, base: Option<Vec<u64>> },
}

/// The steering dispatcher.
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
    /// Launches ready and not done, in arrival order (the kernels), and those of the layout.
    ready: Vec<usize>,
    kernels: Vec<usize>,
    /// Per SM, the launch it serves.
    owner: Vec<Option<usize>>,
    phase: Phase,
    /// Launches that ended a block during the current warm-up, and each launch's last block
    /// end.
    ended: Vec<usize>,
    last_end: Vec<(usize, u64)>,
    /// Context switches to make: (SM, launch).
    switch: Vec<(u32, usize)>,
    /// The static policies' isolated runs, by kernel name.
    offline: Vec<(String, Offline)>,
    stats: SteerStats,
    /// Its name as a dispatcher ("steer" and the policy's).
    label: String,
}

impl Steer {
    pub fn new(cfg: &GpuConfig, policy: Steering, params: SteerParams) -> Steer {
        let kind: Vec<usize> = cfg.sm.iter().enumerate().flat_map(|(g, s)| std::iter::repeat_n(g, s.count as usize)).collect();
        let kinds = cfg.sm.clone();
        let (big_kind, small_kind) = crate::heterocore::big_and_small(cfg);
        let base = crate::heterocore::baseline_sm(cfg);
        Steer {
            policy,
            params,
            owner: vec![None; kind.len()],
            kind,
            kinds,
            big_kind,
            small_kind,
            base,
            ready: Vec::new(),
            kernels: Vec::new(),
            phase: Phase::Fixed,
            ended: Vec::new(),
            last_end: Vec::new(),
            switch: Vec::new(),
            offline: Vec::new(),
            stats: SteerStats { policy: policy.name().into(), ..SteerStats::default() },
            label: format!("steer {}", policy.name()),
        }
    }

    /// The isolated runs the static policies decide from, by kernel name.
    pub fn with_offline(mut self, offline: Vec<(String, Offline)>) -> Steer {
        self.offline = offline;
        self
    }

    /// The steering dispatching for `gpu`, if it has one.
    pub fn of(gpu: &Gpu) -> Option<&Steer> {
        gpu.dispatcher()?.as_any()?.downcast_ref()
    }

    /// `gpu`'s result with the steering's statistics ([`RunResult::steering`]).
    pub fn result(gpu: &Gpu) -> RunResult {
        let (saved, restored) = gpu.context_switched();
        let stats = Steer::of(gpu).map(|s| SteerStats { saved_blocks: saved, restored_blocks: restored, ..s.stats.clone() });
        RunResult { steering: stats, ..gpu.result() }
    }

    /// Whether the GPU has two kinds to steer between, with at least `n` SMs of each, and `n`
    /// kernels the paper steers (two, §4.3, or four, §6.4).
    fn steers(&self, n: usize) -> bool {
        // (each kernel profiles on at least one SM of each kind)
        let of = |k: usize| self.kind.iter().filter(|&&x| x == k).count();
        self.policy == Steering::Dynamic && self.big_kind != self.small_kind && (n == 2 || n == 4) && of(self.big_kind) >= n && of(self.small_kind) >= n
    }

    /// Each kernel an equal share of every kind (the first kernels take the remainder).
    fn even(&mut self) {
        let kernels = self.kernels.clone();
        for k in 0..self.kinds.len() {
            self.share_out(k, &kernels);
        }
    }

    /// The kernels given the big SMs share them evenly, the others the small SMs; a kind
    /// neither big nor small (a third kind) stays evenly shared.
    fn steer(&mut self, big: &[usize]) {
        let small: Vec<usize> = self.kernels.iter().copied().filter(|l| !big.contains(l)).collect();
        self.share_out(self.big_kind, big);
        self.share_out(self.small_kind, &small);
    }

    /// The SMs of kind `k` to the kernels of `group`, in shares as even as they can be (the
    /// first kernels take the remainder). An SM stays with its owner while the owner's share
    /// allows (so that a layout moves as few SMs as it can: a replay takes the SMs of the run
    /// before it); the SMs left over go to the kernels short of their share, in SM order.
    fn share_out(&mut self, k: usize, group: &[usize]) {
        let sms: Vec<usize> = (0..self.kind.len()).filter(|&s| self.kind[s] == k).collect();
        let n = group.len();
        if n == 0 {
            sms.iter().for_each(|&s| self.owner[s] = None);
            return;
        }
        let share = |i: usize| sms.len() / n + usize::from(i < sms.len() % n);
        let mut have = vec![0; n];
        let mut free = Vec::new();
        for &s in &sms {
            match self.owner[s].and_then(|l| group.iter().position(|&g| g == l)) {
                Some(i) if have[i] < share(i) => have[i] += 1,
                _ => free.push(s),
            }
        }
        let mut free = free.into_iter();
        for i in 0..n {
            while have[i] < share(i) {
                self.owner[free.next().expect("shares sum to the SMs")] = Some(group[i]);
                have[i] += 1;
            }
        }
    }

    /// The kernels changed: a new layout (and under `Dynamic` a profiling phase when it
    /// steers this many kernels). Counts the SMs that must drain.
    fn relayout(&mut self, now: u64, view: &DispatchView) {
        let before = self.owner.clone();
        self.end_profile(now);
        self.even();
        self.stats.layouts += 1;
        // (no warm-up has been watched yet: a kernel whose last block ended within a warm-up's
        // length of now counts as one that ended a block in it)
        let recent: Vec<usize> = self.last_end.iter().filter(|&&(_, t)| t + self.params.warmup > now).map(|&(l, _)| l).collect();
        self.ended.clear();
        self.phase = if self.steers(self.kernels.len()) {
            self.stats.profiles += 1;
            Phase::Profiling { start: now, base: None }
        } else {
            Phase::Fixed
        };
        if matches!(self.policy, Steering::Classified | Steering::StpOptimized | Steering::Balanced) && self.kernels.len() == 2 && self.big_kind != self.small_kind {
            let find = |l: usize| {
                let name = &view.launches[l].info.launch.kernel.name;
                self.offline.iter().find(|o| &o.0 == name).map(|o| &o.1).unwrap_or_else(|| panic!("steering {}: no isolated run of kernel `{name}`", self.policy.name()))
            };
            let k = [find(self.kernels[0]), find(self.kernels[1])];
            if let Some(i) = choose_static(self.policy, k) {
                let big = [self.kernels[i]];
                self.steer(&big);
                self.stats.decisions.push(SteerDecision { cycle: now, launches: self.kernels.clone(), big: big.to_vec(), ..SteerDecision::default() });
            }
        }
        self.preempt_sms(&before, &recent, view);
    }

    /// The SMs whose owner changed give up the blocks they hold of other kernels: by
    /// draining, or by a context switch of a kernel not yet ended, as the policy says
    /// (`short`: the kernels the adaptive choice drains).
    fn preempt_sms(&mut self, before: &[Option<usize>], short: &[usize], view: &DispatchView) -> Vec<(u32, usize, bool)> {
        let mut done = Vec::new();
        for s in 0..self.owner.len() {
            let Some(o) = self.owner[s] else { continue };
            if before[s] == Some(o) {
                continue;
            }
            for l in view.sms[s].resident_launches() {
                if l == o {
                    continue;
                }
                let switch = match self.params.preempt {
                    Preempt::Drain => false,
                    Preempt::Switch => true,
                    Preempt::Adaptive => !short.contains(&l),
                };
                let switch = switch && self.kernels.contains(&l);
                if switch {
                    self.stats.switches += 1;
                    self.switch.push((s as u32, l));
                } else {
                    self.stats.drains += 1;
                }
                done.push((s as u32, l, switch));
            }
        }
        done
    }

    /// Per SM, its owner's warp-instructions so far.
    fn insts(&self, view: &DispatchView) -> Vec<u64> {
        (0..self.owner.len())
            .map(|s| self.owner[s].map_or(0, |l| view.sms[s].insts_by_process.get(view.launches[l].process).copied().unwrap_or(0)))
            .collect()
    }

    /// The end of the measured window: Algorithm 2 (two kernels) or its four-kernel form
    /// (§6.4), from each kernel's warp-instructions on its big and its small SMs.
    fn decide(&mut self, now: u64, base: &[u64], view: &DispatchView) {
        let now_insts = self.insts(view);
        let n = self.kernels.len();
        let mut d = SteerDecision { cycle: now, launches: self.kernels.clone(), ..SteerDecision::default() };
        let mut rates = Vec::new();
        for &l in &self.kernels {
            let (mut ib, mut is, mut nb, mut ns) = (0u64, 0u64, 0u64, 0u64);
            for s in 0..self.owner.len() {
                if self.owner[s] == Some(l) {
                    let delta = now_insts[s] - base[s];
                    if self.kind[s] == self.big_kind {
                        (ib, nb) = (ib + delta, nb + 1);
                    } else if self.kind[s] == self.small_kind {
                        (is, ns) = (is + delta, ns + 1);
                    }
                }
            }
            let f = view.launches[l].info.launch.kernel.footprint();
            let blocks = [self.kinds[self.big_kind].occupancy(&f).blocks, self.kinds[self.small_kind].occupancy(&f).blocks, self.base.occupancy(&f).blocks];
            // Per-SM rates on a common scale: instructions per big SM x small SMs, and the
            // other way round.
            rates.push((ib * ns.max(1), is * nb.max(1), blocks));
            d.sms.push((nb as u32, ns as u32));
            d.big_insts.push(ib);
            d.small_insts.push(is);
            d.blocks.push(blocks);
            d.ended_in_warmup.push(self.ended.contains(&l));
        }
        let before = self.owner.clone();
        debug_assert_eq!(rates.len(), n);
        let big: Vec<usize> = choose_big(&rates).into_iter().map(|i| self.kernels[i]).collect();
        if !big.is_empty() {
            self.steer(&big);
            d.big = big;
        }
        self.end_profile(now);
        let ended = self.ended.clone();
        d.preempted = self.preempt_sms(&before, &ended, view);
        self.stats.decisions.push(d);
    }

    /// The kernels: launches ready and not done. A new layout if they changed.
    fn relayout_if_changed(&mut self, now: u64, view: &DispatchView) {
        if self.ready != self.kernels {
            self.kernels = self.ready.clone();
            self.relayout(now, view);
        }
    }

    /// A profiling phase under way ends now (decided, or cut short by a change of kernels):
    /// its cycles are counted.
    fn end_profile(&mut self, now: u64) {
        if let Phase::Profiling { start, .. } = self.phase {
            self.stats.profile_cycles += now - start;
        }
        self.phase = Phase::Fixed;
    }
}

/// The steering decision (§4.3, Algorithm 2, and §6.4 for four kernels) from each kernel's
/// rates on the two kinds measured over the window, on a common per-SM scale (`big`,
/// `small`), and its blocks per SM on a big, a small and a baseline SM. Returns the indices of
/// the kernels that get the big SMs: none when every kernel runs faster on big SMs (each
/// keeps its share of both kinds); for two kernels the one with the larger estimated gain
/// (K0 only if its gain is strictly larger, as Algorithm 2's `else` takes ties); for four,
/// the two whose gains sum largest (the first such pair). A tie between a kernel's two rates
/// counts as not faster on big SMs.
pub fn choose_big(rates: &[(u64, u64, [u32; 3])]) -> Vec<usize> {
    if rates.iter().all(|&(b, s, _)| b > s) {
        return Vec::new();
    }
    let gains: Vec<Gain> = rates.iter().map(|&(b, s, c)| gain(b, s, c)).collect();
    match gains.len() {
        2 => vec![if gains[0].gt(&gains[1]) { 0 } else { 1 }],
        n => {
            let mut best: Option<(f64, [usize; 2])> = None;
            for i in 0..n {
                for j in i + 1..n {
                    let v = gains[i].value() + gains[j].value();
                    if best.is_none_or(|(b, _)| v > b) {
                        best = Some((v, [i, j]));
                    }
                }
            }
            best.map_or(Vec::new(), |(_, p)| p.to_vec())
        }
    }
}

/// A kernel's estimated STP gain on big SMs (§4.3): (IPC_big - IPC_small) / IPC_base, with
/// IPC_base interpolated between them on its blocks per SM (big, small, baseline):
/// f = (base - small) / (big - small), 1/2 when big = small. Kept as a fraction (`num` /
/// `den`, `den` > 0 unless the kernel issued nothing) so that two gains compare by a cross
/// multiplication, as the steering unit does.
#[derive(Clone, Copy, Debug)]
struct Gain {
    num: i128,
    den: i128,
}

fn gain(b: u64, s: u64, [cb, cs, c0]: [u32; 3]) -> Gain {
    let (fnum, fden) = if cb > cs { (c0.saturating_sub(cs).min(cb - cs) as i128, (cb - cs) as i128) } else { (1, 2) };
    let (b, s) = (b as i128, s as i128);
    // D / (s + f (b - s)) = D fden / (s fden + fnum (b - s))
    let den = s * fden + fnum * (b - s);
    if den <= 0 {
        return Gain { num: 0, den: 1 };
    }
    Gain { num: (b - s) * fden, den }
}

impl Gain {
    fn gt(&self, o: &Gain) -> bool {
        self.num * o.den > o.num * self.den
    }
    fn value(&self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl Dispatcher for Steer {
    fn name(&self) -> &str {
        &self.label
    }

    fn launch_ready(&mut self, _now: u64, launch: usize, _view: &DispatchView) {
        self.ready.push(launch);
    }

    fn dispatch(&mut self, now: u64, view: &DispatchView, out: &mut Vec<(usize, u32)>) {
        self.relayout_if_changed(now, view);
        // Blocks still to issue, less what this cycle already gave out.
        let mut left: Vec<u64> = self.kernels.iter().map(|&l| view.launches[l].remaining()).collect();
        for (s, sm) in view.sms.iter().enumerate() {
            let Some(l) = self.owner[s] else { continue };
            let k = self.kernels.iter().position(|&x| x == l).expect("an SM's owner is a kernel");
            // (draining: nothing of the new owner while another kernel's blocks remain)
            if left[k] > 0 && sm.fits(&view.launches[l].info.launch) && sm.resident_launches().iter().all(|&r| r == l) {
                left[k] -= 1;
                out.push((l, s as u32));
            }
        }
    }

    fn block_done(&mut self, now: u64, launch: usize, _sm: u32) {
        match self.last_end.iter_mut().find(|e| e.0 == launch) {
            Some(e) => e.1 = now,
            None => self.last_end.push((launch, now)),
        }
        if let Phase::Profiling { start, .. } = self.phase {
            if now < start + self.params.warmup && !self.ended.contains(&launch) {
                self.ended.push(launch);
            }
        }
    }

    fn launch_done(&mut self, _now: u64, launch: usize) {
        self.ready.retain(|&l| l != launch);
        self.last_end.retain(|e| e.0 != launch);
    }

    fn preempts(&self) -> bool {
        true
    }

    fn preempt(&mut self, now: u64, view: &DispatchView) -> Vec<(u32, usize)> {
        self.relayout_if_changed(now, view);
        std::mem::take(&mut self.switch)
    }

    fn restore_to(&mut self, launch: usize, view: &DispatchView) -> Option<u32> {
        // (an SM of its own with room, holding no other kernel's blocks)
        (0..self.owner.len())
            .find(|&s| self.owner[s] == Some(launch) && view.sms[s].fits(&view.launches[launch].info.launch) && view.sms[s].resident_launches().iter().all(|&r| r == launch))
            .map(|s| s as u32)
    }

    fn observe(&mut self, now: u64, view: &DispatchView) -> Result<bool, String> {
        let Phase::Profiling { start, base } = &self.phase else { return Ok(false) };
        let start = *start;
        match base {
            // (the window starts at the end of this cycle)
            None if now + 1 >= start + self.params.warmup => {
                let b = self.insts(view);
                self.phase = Phase::Profiling { start, base: Some(b) };
                Ok(false)
            }
            Some(b) if now + 1 >= start + self.params.warmup + self.params.window => {
                let b = b.clone();
                self.decide(now + 1, &b, view);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn busy(&self) -> bool {
        matches!(self.phase, Phase::Profiling { .. })
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
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
    // (a context switch saves a block's registers and scratchpad, which under Zorua and WLM
    // live in the coordinator's sets and swap; thread-block switching on faults puts blocks
    // back on their SM whoever owns it)
    if cfg.alloc != crate::config::Alloc::Block && params.preempt != Preempt::Drain {
        return Err(SimError::BadLaunch(format!(
            "steering's context switch saves a block's registers and scratchpad, which under alloc = \"{}\" live in the coordinator's sets and swap: steer with --steer-preempt drain, or alloc = \"block\"",
            cfg.alloc.name()
        )));
    }
    if cfg.tb_switch.enabled {
        return Err(SimError::BadLaunch("thread-block switching on faults puts a block back on its own SM, whichever kernel the steering gave that SM to: steer without tb_switch".into()));
    }
    if matches!(policy, Steering::Classified | Steering::StpOptimized | Steering::Balanced) {
        for p in &w.processes {
            for l in &p.launches {
                let b = crate::library::find(&l.kernel).ok_or_else(|| SimError::BadLaunch(format!("process `{}`: no library application `{}`", p.name, l.kernel)))?;
                for k in b.kernels().map_err(|e| SimError::BadLaunch(e.to_string()))?.0 {
                    if !offline.iter().any(|o| o.0 == k.name) {
                        return Err(SimError::BadLaunch(format!("steering {}: no isolated run of kernel `{}` (process `{}`) to decide from", policy.name(), k.name, p.name)));
                    }
                }
            }
        }
    }
    let mut gpu = Gpu::with_dispatcher(cfg, Box::new(Steer::new(cfg, policy, params).with_offline(offline.to_vec())));
    gpu.add_workload(w)?;
    gpu.run(limits, progress)?;
    Ok(Steer::result(&gpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gain_interpolates_the_baseline_ipc_on_blocks_per_sm() {
        // 10 blocks on a big SM, 6 on a small, 8 on the baseline: f = 1/2, IPC_base = 80,
        // gain = 40 / 80.
        let g = gain(100, 60, [10, 6, 8]);
        assert_eq!(g.num * 2, g.den);
        // f = 0 (the baseline holds as many as the small SM): IPC_base = 60, gain 40 / 60;
        // f = 1: IPC_base = 100, gain 40 / 100.
        let g = gain(100, 60, [10, 6, 6]);
        assert_eq!(g.num * 3, g.den * 2);
        let g = gain(100, 60, [10, 6, 10]);
        assert_eq!(g.num * 5, g.den * 2);
        // Big = small: f = 1/2.
        let g = gain(100, 60, [4, 4, 4]);
        assert_eq!(g.num * 2, g.den);
        // Nothing issued: no gain.
        assert_eq!(gain(0, 0, [10, 6, 8]).num, 0);
    }

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

    #[test]
    fn algorithm_2_gives_the_big_sms_to_the_larger_normalised_gain() {
        // Both faster on big SMs: no steering.
        assert!(choose_big(&[(100, 60, [10, 6, 8]), (90, 80, [10, 6, 8])]).is_empty());
        // K1 runs faster on small SMs: K0 gains.
        assert_eq!(choose_big(&[(100, 60, [10, 6, 8]), (70, 80, [10, 6, 8])]), vec![0]);
        // Two kernels faster on small SMs with equal raw losses (40): the one whose baseline
        // holds as many blocks as the small SM (f = 0, IPC_base 100) loses less per baseline
        // IPC than the one whose baseline holds as many as the big SM (f = 1, IPC_base 60).
        assert_eq!(choose_big(&[(60, 100, [10, 6, 6]), (60, 100, [10, 6, 10])]), vec![0]);
        assert_eq!(choose_big(&[(60, 100, [10, 6, 10]), (60, 100, [10, 6, 6])]), vec![1]);
        // A tie of the gains goes to K1 (Algorithm 2's else); a tie of one kernel's rates is not
        // faster on big SMs.
        assert_eq!(choose_big(&[(60, 100, [10, 6, 8]), (60, 100, [10, 6, 8])]), vec![1]);
        assert_eq!(choose_big(&[(100, 60, [10, 6, 8]), (60, 60, [10, 6, 8])]), vec![0]);
        // Four kernels: the two largest gains.
        assert_eq!(choose_big(&[(60, 70, [10, 6, 8]), (100, 50, [10, 6, 8]), (50, 50, [10, 6, 8]), (100, 60, [10, 6, 8])]), vec![1, 3]);
    }
}
