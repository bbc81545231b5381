//! The SMs' unit slots as the GPU fills them (Zorua's coordinator, the operand log and its
//! data array, the replay queue): the models by default, or units a co-simulation provides.

use super::*;

impl Gpu {
    /// Puts `unit(k)` in SM k's Zorua coordinator slot (under `alloc = "zorua"`; before the
    /// run).
    pub fn set_zorua_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::zorua::ZoruaSlot>) -> Result<(), String> {
        for (k, sm) in self.sms.iter_mut().enumerate() {
            if !sm.replace_zorua_unit(unit(k)) {
                return Err(format!("SM {k} is not under Zorua (alloc = \"zorua\")"));
            }
        }
        Ok(())
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

    /// Puts `unit(k)` in SM k's operand-log slot (under `faults = "ol"`; before the run).
    pub fn set_oplog_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::oplog::OplogSlot>) -> Result<(), String> {
        if self.cfg.faults != FaultScheme::Ol {
            return Err(format!("the operand log is used under faults = \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_oplog_unit(unit(k));
        }
        Ok(())
    }

    /// Puts `unit(k)` in SM k's operand-log data-array slot (under `faults = "ol"`; before the
    /// run).
    pub fn set_oldata_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::oldata::OldataSlot>) -> Result<(), String> {
        if self.cfg.faults != FaultScheme::Ol {
            return Err(format!("the operand log is used under faults = \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_oldata_unit(unit(k));
        }
        Ok(())
    }

    /// Puts `unit(k)` in SM k's replay-queue slot (under `faults = "rq"` or `"ol"`; before the
    /// run).
    pub fn set_rq_units(&mut self, unit: &mut dyn FnMut(usize) -> Box<dyn crate::units::rq::ReplaySlot>) -> Result<(), String> {
        if !matches!(self.cfg.faults, FaultScheme::Rq | FaultScheme::Ol) {
            return Err(format!("the replay queue is used under faults = \"rq\" or \"ol\" (this configuration has \"{}\")", self.cfg.faults.name()));
        }
        for (k, sm) in self.sms.iter_mut().enumerate() {
            sm.set_rq_unit(unit(k));
        }
        Ok(())
    }
}
