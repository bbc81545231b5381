//! Zorua's oversubscription threshold control (Vijaykumar et al., MICRO 2016, §4.4,
//! Algorithm 1, Table 1), per SM. Decisions in `docs/zorua.md`, "The oversubscription
//! threshold".
//!
//! Every epoch the coordinator compares the core cycles of the epoch in which no warp issued
//! while the pipeline was not stalled and a warp waited in the coordinator's scratchpad or
//! register queue (`c_idle`: the idle cycles more oversubscription could fill) with those in which
//! every warp waited on memory (`c_mem`): when idle cycles exceed memory cycles by more than
//! `c_delta_thresh`,
//! more thread-level parallelism would help and `o_thresh` rises by `o_thresh_step`; when
//! memory cycles exceed idle ones by as much, the memory system is the bottleneck and it falls;
//! in between (the dead band) it holds. The counters are cumulative, so an epoch's delta is
//! its own count of such cycles. `o_thresh` is in sixteenths of each resource's physical
//! capacity: an allocation may go to swap while the resource's swapped amount stays within
//! `o_thresh / 16` of its physical amount. It is clamped to `0..=o_max`, and starts at 0: no
//! oversubscription until idle epochs ask for it.

use serde::Serialize;

/// The constants of Table 1 (the paper gives no values; ours are decisions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ThreshParams {
    /// Cycles between updates.
    pub epoch: u64,
    /// The initial threshold, in sixteenths of the physical capacity.
    pub o_default: u32,
    pub o_thresh_step: u32,
    /// The highest threshold (16: as much in swap as on chip).
    pub o_max: u32,
    /// The difference of idle and memory cycles in an epoch that moves the threshold.
    pub c_delta_thresh: u64,
}

impl Default for ThreshParams {
    fn default() -> Self {
        ThreshParams { epoch: 2048, o_default: 0, o_thresh_step: 1, o_max: 16, c_delta_thresh: 64 }
    }
}

/// One SM's threshold and the counters' values at the last epoch's end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Threshold {
    pub params: ThreshParams,
    pub o_thresh: u32,
    c_idle_prev: u64,
    c_mem_prev: u64,
}

impl Threshold {
    pub fn new(params: ThreshParams) -> Threshold {
        Threshold { params, o_thresh: params.o_default.min(params.o_max), c_idle_prev: 0, c_mem_prev: 0 }
    }

    /// Algorithm 1 at an epoch's end, with the cumulative counters `c_idle` and `c_mem`;
    /// returns the new threshold.
    pub fn epoch_end(&mut self, c_idle: u64, c_mem: u64) -> u32 {
        let idle = c_idle - self.c_idle_prev;
        let mem = c_mem - self.c_mem_prev;
        (self.c_idle_prev, self.c_mem_prev) = (c_idle, c_mem);
        self.epoch(idle, mem)
    }

    /// Algorithm 1 with one epoch's own counts of idle and memory cycles (the deltas);
    /// returns the new threshold.
    pub fn epoch(&mut self, idle: u64, mem: u64) -> u32 {
        let p = self.params;
        if idle > mem + p.c_delta_thresh {
            self.o_thresh = (self.o_thresh + p.o_thresh_step).min(p.o_max);
        } else if mem > idle + p.c_delta_thresh {
            self.o_thresh = self.o_thresh.saturating_sub(p.o_thresh_step);
        }
        self.o_thresh
    }

    /// Whether `more` units of a resource with `physical` units on chip, `swapped` of them in
    /// swap already, may go to swap under the threshold.
    pub fn may_swap(&self, physical: u32, swapped: u32, more: u32) -> bool {
        (swapped as u64 + more as u64) * 16 <= physical as u64 * self.o_thresh as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_rises_when_idle_falls_when_memory_bound_and_holds_in_the_dead_band() {
        let p = ThreshParams::default();
        let mut t = Threshold::new(p);
        let (mut idle, mut mem) = (0u64, 0u64);
        let mut epoch = |t: &mut Threshold, di: u64, dm: u64| {
            idle += di;
            mem += dm;
            t.epoch_end(idle, mem)
        };
        assert_eq!(t.o_thresh, 0);
        // idle-dominated epochs: up one step each, to the ceiling
        assert_eq!(epoch(&mut t, 900, 100), 1);
        assert_eq!(epoch(&mut t, 900, 100), 2);
        for _ in 0..20 {
            epoch(&mut t, 900, 100);
        }
        assert_eq!(t.o_thresh, 16);
        // the dead band: a difference of at most c_delta_thresh either way holds it
        assert_eq!(epoch(&mut t, 500, 500 + p.c_delta_thresh), 16);
        assert_eq!(epoch(&mut t, 500 + p.c_delta_thresh, 500), 16);
        // memory-dominated epochs: down to zero, and no further
        assert_eq!(epoch(&mut t, 100, 900), 15);
        for _ in 0..20 {
            epoch(&mut t, 100, 900);
        }
        assert_eq!(t.o_thresh, 0);
        // (the strict comparison: one cycle past the band moves it)
        assert_eq!(epoch(&mut t, 500 + p.c_delta_thresh + 1, 500), 1);
    }

    #[test]
    fn swap_is_allowed_within_the_threshold_of_the_physical_amount() {
        let mut t = Threshold::new(ThreshParams { o_default: 4, ..ThreshParams::default() });
        // 256 register sets on chip, a quarter may be in swap
        assert!(t.may_swap(256, 60, 4));
        assert!(!t.may_swap(256, 60, 5));
        t.o_thresh = 0;
        assert!(!t.may_swap(256, 0, 1));
    }
}
