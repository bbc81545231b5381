//! The thread-block dispatcher's interface: what the GPU tells a dispatcher and what it may
//! look at ([`Dispatcher`], [`DispatchView`]), the baseline dispatcher ([`Fcfs`]) and the
//! slicing report a dispatcher may give ([`SliceStats`]). The rule: this module names neither
//! the GPU (`gpu`) nor any dispatcher built on it (`slicer`); both depend on it.

use super::sm::{LaunchInfo, Sm};
use crate::slots::Units;
use serde::Serialize;
use std::sync::Arc;

/// A launch on its way through the GPU.
#[derive(Debug)]
pub struct LaunchState {
    pub info: Arc<LaunchInfo>,
    pub process: usize,
    pub priority: u32,
    /// Cycle its command reached the dispatcher.
    pub ready_at: u64,
    pub first_block_at: Option<u64>,
    pub end_at: Option<u64>,
    pub next_block: u64,
    pub blocks: u64,
    pub done_blocks: u64,
    /// The block scheduler has retired it (its process has moved on).
    pub retired: bool,
}

impl LaunchState {
    pub fn remaining(&self) -> u64 {
        self.blocks - self.next_block
    }
}

/// What a dispatcher may look at.
pub struct DispatchView<'a> {
    pub sms: &'a [Sm],
    pub launches: &'a [LaunchState],
}

/// The thread-block dispatcher: decides which launch's next block goes to which SM.
pub trait Dispatcher {
    fn name(&self) -> &str;
    /// A launch's blocks may be issued from now on.
    fn launch_ready(&mut self, now: u64, launch: usize, view: &DispatchView);
    /// This cycle's block issues: (launch, SM) pairs, at most one per SM; every pair must fit.
    fn dispatch(&mut self, now: u64, view: &DispatchView, out: &mut Vec<(usize, u32)>);
    /// A block of `launch` finished on SM `sm` (before its launch's `launch_done`). A block of a
    /// process halted at its instruction target finishes in the cycle it is issued, without
    /// running.
    fn block_done(&mut self, _now: u64, _launch: usize, _sm: u32) {}
    /// Every block of a launch has finished.
    fn launch_done(&mut self, now: u64, launch: usize);
    /// After the SMs' cycle (while [`Dispatcher::busy`], every cycle): units the dispatcher
    /// clocks with the SMs (Warped-Slicer's counters and water-filling unit). True: it has
    /// something new to dispatch. An error stops the run (a co-simulated unit parted).
    fn observe(&mut self, _now: u64, _view: &DispatchView) -> Result<bool, String> {
        Ok(false)
    }
    /// As the scheduling framework's quota controller (slicing inside the framework,
    /// `docs/warped-slicer.md`): the GPU tells it of the launches it partitions
    /// (`launch_ready`, `launch_done`), clocks its units (`observe`), and here asks for its
    /// quotas: each launch's quota on every SM (`u32::MAX`: none) when they changed since the
    /// last call, else `None`. A dispatcher that is no quota controller returns `None`.
    fn framework_quotas(&mut self, _now: u64, _view: &DispatchView) -> Option<Vec<(usize, Vec<u32>)>> {
        None
    }
    /// As the framework's quota controller: the group of launches it partitions is being
    /// replaced (a launch of a higher priority than theirs was admitted, or the last of the
    /// highest priority retired); the launches leaving it and joining it follow
    /// (`launch_done`, `launch_ready`).
    fn framework_regroup(&mut self) {}
    /// As the framework's quota controller: the framework put a block of `launch` on SM `sm`
    /// (the view as before it), for its statistics.
    fn block_placed(&mut self, _launch: usize, _sm: usize, _view: &DispatchView) {}
    /// It makes context switches ([`Dispatcher::preempt`]); the GPU asks only such a one.
    fn preempts(&self) -> bool {
        false
    }
    /// Context switches (HeteroCore's steering): the blocks of each `(SM, launch)` given are to
    /// leave their SM: the GPU stops their issue, saves each to memory once nothing of it is in
    /// flight, and puts it back where [`Dispatcher::restore_to`] says. Asked once a cycle,
    /// before the dispatch.
    fn preempt(&mut self, _now: u64, _view: &DispatchView) -> Vec<(u32, usize)> {
        Vec::new()
    }
    /// The SM a saved block of `launch` goes back to now (it must fit there), or `None` to wait.
    fn restore_to(&mut self, _launch: usize, _view: &DispatchView) -> Option<u32> {
        None
    }
    /// Needs every cycle stepped (no idle skip).
    fn busy(&self) -> bool {
        false
    }
    /// Puts `units` in the dispatcher's slots of their interface (`crate::slots`); `None`
    /// when it has no slot of that interface.
    fn set_units(&mut self, _units: &mut Units) -> Option<Result<(), String>> {
        None
    }
    /// The dispatcher as its own type, for a caller that knows it (its own reports).
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// The baseline: launches in the order they became ready; each cycle every SM takes one block
/// of the oldest launch that still has blocks and fits next to what the SM holds, so a later
/// kernel fills SMs (or parts of SMs) an earlier one leaves free (GPGPU-Sim's behaviour).
#[derive(Default)]
pub struct Fcfs {
    ready: Vec<usize>,
}

impl Dispatcher for Fcfs {
    fn name(&self) -> &str {
        "fcfs"
    }
    fn launch_ready(&mut self, _now: u64, launch: usize, _view: &DispatchView) {
        self.ready.push(launch);
    }
    fn dispatch(&mut self, _now: u64, view: &DispatchView, out: &mut Vec<(usize, u32)>) {
        // Blocks still to issue, less what this cycle already gave out.
        let mut left: Vec<u64> = self.ready.iter().map(|&l| view.launches[l].remaining()).collect();
        for (i, sm) in view.sms.iter().enumerate() {
            if let Some(k) = (0..self.ready.len()).find(|&k| left[k] > 0 && sm.fits(&view.launches[self.ready[k]].info.launch)) {
                left[k] -= 1;
                out.push((self.ready[k], i as u32));
            }
        }
    }
    fn launch_done(&mut self, _now: u64, launch: usize) {
        self.ready.retain(|&l| l != launch);
    }
}

/// What a run's slicing did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SliceStats {
    pub policy: String,
    /// Warped-Slicer's decisions: the kernels (launch ids) and the quotas, or Spatial.
    pub decisions: Vec<SliceDecision>,
    /// Profiling rounds run, windows whose layout had not settled, cycles spent profiling
    /// (from a repartition's start to its decision).
    pub rounds: u64,
    pub unsettled: u64,
    pub profile_cycles: u64,
    /// Every round's samples as the counters latched them: the window's last cycle, and per
    /// SM (kernel index, CTA count, warp-instructions, long-memory stall cycles, resident
    /// CTAs at the latch).
    pub samples: Vec<(u64, Vec<(u8, u8, u32, u32, u8)>)>,
    /// GPU cycles at which the water-filling unit's model saw a tie at Select.
    pub ties: Vec<u64>,
    /// Repartitions among the kernels of the last decision, which re-applied it.
    pub reused: u64,
    /// Blocks the slice table issued, commands it took, and issued blocks that had to wait
    /// for their SM to have room (the SM's own accounting, stricter than the table's: a
    /// shared-memory configuration below the SM's total).
    pub issued: u64,
    pub commands: u64,
    pub waited: u64,
    /// The most kernels with blocks on one SM at once (seen at the issues), and the issues
    /// that put a block beside another kernel's.
    pub max_sharing: u8,
    pub shared_issues: u64,
    /// The model's first GPU cycle at which the broken quota compare would pick differently.
    pub first_over_quota: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SliceDecision {
    pub cycle: u64,
    pub launches: Vec<usize>,
    pub quota: Vec<u8>,
    pub spatial: bool,
}

/// "spatial", or the quotas in the decision's kernel order: "(2,4)".
impl std::fmt::Display for SliceDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.spatial {
            return write!(f, "spatial");
        }
        write!(f, "({})", self.quota.iter().map(|q| q.to_string()).collect::<Vec<_>>().join(","))
    }
}

impl SliceDecision {
    /// The paper's accuracy test (§IV-A): within one block of `other`'s quota, kernel by
    /// kernel, or both the Spatial fallback.
    pub fn within_one_of(&self, other: &SliceDecision) -> bool {
        if self.spatial || other.spatial {
            return self.spatial == other.spatial;
        }
        self.quota.len() == other.quota.len() && self.quota.iter().zip(&other.quota).all(|(a, b)| a.abs_diff(*b) <= 1)
    }
}
