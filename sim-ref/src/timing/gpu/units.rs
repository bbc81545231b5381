//! The GPU's unit slots as a run fills them (`crate::slots`): the models by default, or units a
//! co-simulation or a test provides, put in the slots of their interface by one call.

use super::*;
use crate::slots::Units;

impl Gpu {
    /// Puts units in the GPU's slots of interface `I`/`O` (before the run): `make(k)` for SM
    /// k's slot of a per-SM unit (Zorua's coordinator, the replay queue, the operand log and
    /// its data array, Warped-Slicer's sampling counters), `make(0)` for a global one (the
    /// scheduling framework, the water-filling unit, the slice table). An error says why the
    /// configuration does not use that slot, or that the GPU has none of that interface. Under
    /// slicing inside the framework the framework's unit must share its SMs (its model
    /// `Framework::with_sharing`, its RTL `Sched::build` with sharing).
    pub fn set_units<I: 'static, O: 'static>(&mut self, make: &mut dyn FnMut(usize) -> Held<I, O>) -> Result<(), String> {
        let mut erased = |k: usize| Box::new(make(k)) as Box<dyn std::any::Any>;
        let mut units = Units::new(Units::id::<I, O>(), &mut erased);
        if units.are::<FwIn, FwOut>() {
            let Some(d) = self.fw_mut() else { return Err("the scheduling framework's slot is filled under the framework (Gpu::with_framework)".into()) };
            d.fw = units.make(0);
            d.idle = d.fw.quiet();
            return Ok(());
        }
        let mut per_sm = false;
        for (k, sm) in self.sms.iter_mut().enumerate() {
            let Some(r) = sm.set_units(&mut units, k) else { break };
            r?;
            per_sm = true;
        }
        if per_sm {
            return Ok(());
        }
        let ctl = match &mut self.sched {
            BlockSched::Baseline { d, .. } => Some(d),
            BlockSched::Framework(d) => d.slicing.as_mut().map(|s| &mut s.ctl),
        };
        if let Some(r) = ctl.and_then(|d| d.set_units(&mut units)) {
            return r;
        }
        Err(format!("the GPU has no slot for units of {} (its block scheduler is {})", std::any::type_name::<I>(), self.dispatcher().map_or("the framework", |d| d.name())))
    }

    /// Zorua's counters summed over the SMs (the threshold: the mean's floor).
    pub fn zorua_stats(&self) -> Option<crate::timing::sm::ZoruaStats> {
        let all: Vec<_> = self.sms.iter().filter_map(|s| s.zorua_stats()).collect();
        let mut t = all.first()?.clone();
        for s in &all[1..] {
            t.events += s.events;
            t.phase_events += s.phase_events;
            t.barrier_events += s.barrier_events;
            t.grants += s.grants;
            t.releases += s.releases;
            for k in 0..2 {
                t.reg_sets[k] += s.reg_sets[k];
                t.smem_sets[k] += s.smem_sets[k];
                t.reg_accesses[k] += s.reg_accesses[k];
                t.smem_accesses[k] += s.smem_accesses[k];
                t.thresh_moves[k] += s.thresh_moves[k];
            }
            t.swap_reads += s.swap_reads;
            t.swap_writes += s.swap_writes;
            t.swap_l1_hits += s.swap_l1_hits;
            t.smem_unheld += s.smem_unheld;
            t.valve_grants += s.valve_grants;
            t.drain_cycles += s.drain_cycles;
            t.coord_cycles += s.coord_cycles;
            t.offs += s.offs;
            t.bar_coord_cycles += s.bar_coord_cycles;
            t.bar_offs += s.bar_offs;
            t.busy_cycles += s.busy_cycles;
            t.queue_cycles += s.queue_cycles;
            t.sched_warp_cycles += s.sched_warp_cycles;
            t.waiting_warp_cycles += s.waiting_warp_cycles;
            t.c_idle += s.c_idle;
            t.c_mem += s.c_mem;
            t.o_thresh += s.o_thresh;
        }
        t.o_thresh /= all.len() as u32;
        Some(t)
    }
}
