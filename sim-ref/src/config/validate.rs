//! A configuration's validation: every field against its legal range, and the combinations
//! the model does not support, each refused with a message naming the field.

use super::*;

impl GpuConfig {
    /// Checks every field against its legal range; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        fn range(field: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
            if v < lo || v > hi {
                Err(format!("field `{field}`: {v} is out of range (expected {lo}..={hi})"))
            } else {
                Ok(())
            }
        }
        fn pow2(field: &str, v: u32) -> Result<(), String> {
            if v.is_power_of_two() {
                Ok(())
            } else {
                Err(format!("field `{field}`: {v} must be a power of two"))
            }
        }
        if self.name.trim().is_empty() {
            return Err("field `name`: must not be empty".into());
        }
        if !(self.core_clock_mhz.is_finite() && (10.0..=10000.0).contains(&self.core_clock_mhz)) {
            return Err(format!("field `core_clock_mhz`: {} is out of range (expected 10..=10000)", self.core_clock_mhz));
        }
        if self.sm.is_empty() {
            return Err("field `sm`: at least one [[sm]] group is needed".into());
        }
        // Zorua and WLM with thread-block switching: a switched-out block's registers and
        // scratchpad live in the coordinator's physical sets and swap, which the block's saved
        // context does not capture (as with the framework's context switch; docs/zorua.md,
        // "Under the scheduling framework").
        if self.alloc != Alloc::Block && self.tb_switch.enabled {
            return Err(format!("field `tb_switch`: switching a faulted block out saves its registers and scratchpad with it, and under alloc = \"{}\" they live in the coordinator's physical sets and swap, which the saved context does not capture; run it with alloc = \"block\"", self.alloc.name()));
        }
        if self.compile.auto && (self.compile.reg_cap.is_some() || self.compile.spill_slots > 0) {
            return Err("field `compile.auto`: the search chooses each kernel's cap and spill slots: leave compile.reg_cap and compile.spill_slots out".into());
        }
        if self.compile.auto && self.sm.len() > 1 {
            return Err("field `compile.auto`: the concurrency search sizes a kernel for one kind of SM, and this GPU has several".into());
        }
        if let Some(r) = self.compile.reg_cap {
            range("compile.reg_cap", r as u64, 1, 255)?;
        } else if self.compile.spill_slots > 0 {
            return Err("field `compile.spill_slots`: spill slots are for the values a register cap leaves out: set compile.reg_cap too".into());
        }
        range("compile.spill_slots", self.compile.spill_slots as u64, 0, (mpgpu_spec::isa::MAX_SHARED_BYTES / 4) as u64)?;
        // (summed in 64 bits: the groups' counts are not checked yet)
        range("sm (total SM count)", self.sm.iter().map(|g| g.count as u64).sum(), 1, 256)?;
        for (i, s) in self.sm.iter().enumerate() {
            let f = |n: &str| format!("sm[{i}].{n}");
            range(&f("count"), s.count as u64, 1, 256)?;
            range(&f("warps"), s.warps as u64, 1, 256)?;
            range(&f("threads"), s.threads as u64, 32, 32 * s.warps as u64)?;
            range(&f("registers"), s.registers as u64, 1024, 1 << 20)?;
            range(&f("blocks"), s.blocks as u64, 1, 64)?;
            range(&f("shared_bytes"), s.shared_bytes as u64, 0, 1 << 20)?;
            if s.shared_configs.len() > mpgpu_spec::units::admit::MAX_CONFIGS {
                return Err(format!("field `{}`: {} configurations; the admission unit takes at most {}", f("shared_configs"), s.shared_configs.len(), mpgpu_spec::units::admit::MAX_CONFIGS));
            }
            for (j, &c) in s.shared_configs.iter().enumerate() {
                range(&f(&format!("shared_configs[{j}]")), c as u64, 1, s.shared_bytes as u64)?;
                if j > 0 && c <= s.shared_configs[j - 1] {
                    return Err(format!("field `{}`: configurations must be ascending", f("shared_configs")));
                }
            }
            range(&f("schedulers"), s.schedulers as u64, 1, 8)?;
            if s.group_warps != 0 {
                // (a second group needs slots beyond the first's on every scheduler)
                range(&f("group_warps"), s.group_warps as u64, 1, (s.warps / s.schedulers).max(2) as u64 - 1)?;
                if s.pipeline != Pipeline::Gpgpusim {
                    return Err(format!("field `{}`: the two-group warp scheduler is the GPGPU-Sim-like pipeline's (HeteroCore's big SM); sm[{i}].pipeline is \"thesis\"", f("group_warps")));
                }
                if self.alloc != Alloc::Block {
                    return Err(format!("field `{}`: the two-group warp scheduler groups the physical warp slots; under alloc = \"{}\" the coordinator maps warps to slots (use alloc = \"block\")", f("group_warps"), self.alloc.name()));
                }
            }
            range(&f("reg_round"), s.reg_round as u64, 1, 64)?;
            range(&f("ibuffer"), s.ibuffer as u64, 1, 16)?;
            range(&f("alu_latency"), s.alu_latency as u64, 1, 1000)?;
            range(&f("alu_interval"), s.alu_interval as u64, 1, 64)?;
            range(&f("sfu_latency"), s.sfu_latency as u64, 1, 1000)?;
            range(&f("sfu_interval"), s.sfu_interval as u64, 1, 64)?;
            range(&f("shared_latency"), s.shared_latency as u64, 1, 1000)?;
            range(&f("shared_banks"), s.shared_banks as u64, 1, 64)?;
            pow2(&f("shared_banks"), s.shared_banks)?;
            range(&f("l1_line"), s.l1_line as u64, 32, 1024)?;
            pow2(&f("l1_line"), s.l1_line)?;
            range(&f("l1_assoc"), s.l1_assoc as u64, 1, 64)?;
            range(&f("l1_bytes"), s.l1_bytes as u64, (s.l1_line * s.l1_assoc) as u64, 1 << 24)?;
            pow2(&f("l1_bytes / (l1_line * l1_assoc) (the number of sets)"), s.l1_bytes / (s.l1_line * s.l1_assoc))?;
            range(&f("l1_mshrs"), s.l1_mshrs as u64, 1, 1024)?;
            range(&f("l1_latency"), s.l1_latency as u64, 1, 1000)?;
            range(&f("l1_tlb_entries"), s.l1_tlb_entries as u64, 1, 1 << 16)?;
            range(&f("l1_tlb_assoc"), s.l1_tlb_assoc as u64, 1, 64)?;
            range(&f("l1_tlb_entries"), s.l1_tlb_entries as u64, s.l1_tlb_assoc as u64, 1 << 16)?;
            if s.l1_tlb_entries % s.l1_tlb_assoc != 0 {
                return Err(format!("field `{}`: {} is not a multiple of l1_tlb_assoc ({})", f("l1_tlb_entries"), s.l1_tlb_entries, s.l1_tlb_assoc));
            }
            pow2(&f("l1_tlb_entries / l1_tlb_assoc (the number of sets)"), s.l1_tlb_entries / s.l1_tlb_assoc)?;
            range(&f("l1_tlb_latency"), s.l1_tlb_latency as u64, 0, 1000)?;
            range(&f("iq_entries"), s.iq_entries as u64, 1, 1024)?;
            range(&f("fetch_width"), s.fetch_width as u64, 1, 16)?;
            range(&f("rq_entries"), s.rq_entries as u64, 1, 1024)?;
            range(&f("oplog_bytes"), s.oplog_bytes as u64, OPLOG_ENTRY_BYTES as u64, 1 << 20)?;
            if s.oplog_bytes % OPLOG_ENTRY_BYTES != 0 {
                return Err(format!("field `{}`: {} is not a multiple of the {OPLOG_ENTRY_BYTES}-byte entry", f("oplog_bytes"), s.oplog_bytes));
            }
            // The smallest log holds one store (2 entries) for every block the SM can hold.
            let min = 2 * s.blocks * OPLOG_ENTRY_BYTES;
            if self.faults == FaultScheme::Ol && s.oplog_bytes < min {
                return Err(format!("field `{}`: {} bytes cannot hold a store (2 entries of {OPLOG_ENTRY_BYTES} B) for each of the SM's {} blocks (expected at least {min})", f("oplog_bytes"), s.oplog_bytes, s.blocks));
            }
            // The log's bookkeeping block (docs/faults.md, "The operand log in RTL") holds 64
            // entries and 16 block partitions.
            let most = (mpgpu_spec::units::oplog::MAX_ENTRIES as u32) * OPLOG_ENTRY_BYTES;
            if self.faults == FaultScheme::Ol && s.oplog_bytes > most {
                return Err(format!("field `{}`: {} bytes is more than the operand log's {} entries of {OPLOG_ENTRY_BYTES} B (expected at most {most})", f("oplog_bytes"), s.oplog_bytes, mpgpu_spec::units::oplog::MAX_ENTRIES));
            }
            if self.faults == FaultScheme::Ol && s.blocks as usize > mpgpu_spec::units::oplog::MAX_BLOCKS {
                return Err(format!("field `{}`: {} blocks per SM; the operand log partitions at most {} (expected at most that under faults = \"ol\")", f("blocks"), s.blocks, mpgpu_spec::units::oplog::MAX_BLOCKS));
            }
            // The replay queue's block (docs/faults.md, "The replay queue in RTL") holds 128
            // slots and names warps of an SM of at most 64.
            if matches!(self.faults, FaultScheme::Rq | FaultScheme::Ol) {
                use mpgpu_spec::units::rq::{MAX_SLOTS, MAX_WARPS};
                if s.rq_entries as usize > MAX_SLOTS {
                    return Err(format!("field `{}`: {} slots is more than the replay queue holds (expected at most {MAX_SLOTS} under faults = \"{}\")", f("rq_entries"), s.rq_entries, self.faults.name()));
                }
                if s.warps as usize > MAX_WARPS {
                    return Err(format!("field `{}`: {} warps per SM; the replay queue names at most {MAX_WARPS} (expected at most that under faults = \"{}\")", f("warps"), s.warps, self.faults.name()));
                }
            }
            if self.faults.replays() && s.pipeline != Pipeline::Thesis {
                return Err(format!("field `faults`: \"{}\" needs the thesis's pipeline (sm[{i}].pipeline = \"thesis\", as in thesis16, or --pipeline thesis)", self.faults.name()));
            }
        }
        let inj = &self.inject;
        if !(inj.rate.is_finite() && (0.0..1.0).contains(&inj.rate)) {
            return Err(format!("field `inject.rate`: {} is out of range (expected a probability in [0, 1): at 1 every replay faults again)", inj.rate));
        }
        range("inject.latency", inj.latency as u64, 1, 100_000_000)?;
        if self.paging.local {
            if !matches!(self.faults, FaultScheme::WdCommit | FaultScheme::WdLastcheck | FaultScheme::Rq | FaultScheme::Ol) {
                return Err(format!("field `paging.local`: a fault handler on the GPU needs preemptible faults (faults = \"wd-commit\", \"wd-lastcheck\", \"rq\" or \"ol\"), not \"{}\"", self.faults.name()));
            }
            if !(self.paging.local_us.is_finite() && self.paging.local_us > 0.0 && self.paging.local_us <= 1e6) {
                return Err(format!("field `paging.local_us`: {} is out of range (expected a latency in (0, 1e6] µs)", self.paging.local_us));
            }
        }
        if self.alloc != Alloc::Block {
            for (i, s) in self.sm.iter().enumerate() {
                crate::units::zorua::Geometry::of(s).map_err(|e| format!("field `alloc`: sm[{i}]: {e}"))?;
            }
            let z = &self.zorua;
            range("zorua.epoch", z.epoch, 1, 1 << 20)?;
            range("zorua.o_default", z.o_default as u64, 0, 16)?;
            range("zorua.o_thresh_step", z.o_thresh_step as u64, 0, 16)?;
            range("zorua.c_delta_thresh", z.c_delta_thresh, 0, 1 << 20)?;
            range("zorua.table_latency", z.table_latency as u64, 0, 100)?;
        }
        if self.tb_switch.enabled {
            if !matches!(self.faults, FaultScheme::Rq | FaultScheme::Ol) {
                return Err(format!("field `tb_switch`: switching a faulted block out needs faults = \"rq\" or \"ol\" (its replay queue is saved with it), not \"{}\"", self.faults.name()));
            }
            range("tb_switch.extra", self.tb_switch.extra as u64, 1, 64)?;
        }
        let m = &self.memory;
        range("memory.channels", m.channels as u64, 1, 64)?;
        if !(m.dram_bandwidth_gbs.is_finite() && m.dram_bandwidth_gbs > 0.0 && m.dram_bandwidth_gbs <= 100_000.0) {
            return Err(format!("field `memory.dram_bandwidth_gbs`: {} is out of range (expected a number in (0, 100000])", m.dram_bandwidth_gbs));
        }
        range("memory.dram_latency", m.dram_latency as u64, 1, 100_000)?;
        range("memory.l2_assoc", m.l2_assoc as u64, 1, 64)?;
        let line = self.sm[0].l1_line;
        range("memory.l2_bytes_per_channel", m.l2_bytes_per_channel as u64, (line * m.l2_assoc) as u64, 1 << 28)?;
        pow2("memory.l2_bytes_per_channel / (line * l2_assoc) (the number of sets)", m.l2_bytes_per_channel / (line * m.l2_assoc))?;
        range("memory.l2_latency", m.l2_latency as u64, 1, 10_000)?;
        range("memory.icnt_latency", m.icnt_latency as u64, 0, 10_000)?;
        range("memory.icnt_bytes_per_cycle", m.icnt_bytes_per_cycle as u64, 1, 4096)?;
        range("memory.l2_tlb_entries", m.l2_tlb_entries as u64, 1, 1 << 20)?;
        range("memory.l2_tlb_assoc", m.l2_tlb_assoc as u64, 1, 64)?;
        range("memory.l2_tlb_entries", m.l2_tlb_entries as u64, m.l2_tlb_assoc as u64, 1 << 20)?;
        if m.l2_tlb_entries % m.l2_tlb_assoc != 0 {
            return Err(format!("field `memory.l2_tlb_entries`: {} is not a multiple of l2_tlb_assoc ({})", m.l2_tlb_entries, m.l2_tlb_assoc));
        }
        pow2("memory.l2_tlb_entries / l2_tlb_assoc (the number of sets)", m.l2_tlb_entries / m.l2_tlb_assoc)?;
        range("memory.l2_tlb_latency", m.l2_tlb_latency as u64, 1, 10_000)?;
        range("memory.l2_tlb_mshrs", m.l2_tlb_mshrs as u64, 1, 4096)?;
        range("memory.page_walkers", m.page_walkers as u64, 1, 1024)?;
        range("memory.page_walk_latency", m.page_walk_latency as u64, 1, 1_000_000)?;
        let pg = &self.paging;
        if pg.link != PagingLink::Off && !m.vm {
            return Err("field `paging.link`: demand paging needs virtual memory (`memory.vm = true`)".into());
        }
        range("paging.migration_bytes", pg.migration_bytes as u64, 4096, 1 << 21)?;
        pow2("paging.migration_bytes", pg.migration_bytes)?;
        for (n, v) in [("paging.transfer_us", pg.transfer_us), ("paging.alloc_us", pg.alloc_us)] {
            if let Some(v) = v {
                if !(v.is_finite() && (0.001..=1e6).contains(&v)) {
                    return Err(format!("field `{n}`: {v} is out of range (expected 0.001..=1000000 µs)"));
                }
            }
        }
        if self.sm.iter().any(|s| s.l1_line != line) {
            return Err("field `sm[*].l1_line`: every SM group must use the same line size".into());
        }
        Ok(())
    }
}
