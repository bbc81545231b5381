//! The one registry of the RTL blocks and of the co-simulation units that host them. Every
//! command reads it: `mpgpu verilog` and `mpgpu fpga` (a block's name, what it is, its
//! Verilog at its default configuration), and `mpgpu cosim --unit`, `mpgpu soak --unit` and
//! `mpgpu bench cosim --unit` (the units, what each puts in the GPU, the configuration it
//! needs), and `--broken` (a block's test-only broken variants). A block is named alike
//! everywhere: `rtl/src/<name>.rs`, `mpgpu_spec::units::<name>`, the harness's
//! `blocks/<name>.rs` (`docs/adding-a-block.md`).

use crate::broken::Broken;
use crate::blocks::{DssPorts, LowestFirstPorts, OldataPorts, OplogPorts, PrioPorts, ProfPorts, RqPorts, SchedPorts, SlicePorts, WfPorts, ZoruaPorts};
use crate::cosim::UnitKind;
use crate::ports::{verilog_of, Ports};
use mpgpu_rtl::{OldataFaults, OplogFaults, ProfFaults, RqFaults, SchedFaults, SliceFaults, WfFaults, ZoruaFaults};
use mpgpu_spec::units::sched::{PolicyCode, MAX_SMS};

/// Where a block sits in the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One for the whole GPU, sized by its number of SMs (`--sms`).
    Gpu,
    /// One in every SM, sized by one SM's configuration.
    PerSm,
    /// A part of another block, also built alone for its own tests and costs.
    Part,
}

/// A block of the registry.
pub struct Block {
    /// Its name everywhere (files, `mpgpu verilog <name>`, waveform scopes).
    pub name: &'static str,
    /// What it is, in one line.
    pub about: &'static str,
    pub scope: Scope,
    /// Its Verilog (module `top`, inputs driven from outside) at its default configuration,
    /// for `sms` SMs if it is sized by them ([`Scope::Gpu`]).
    pub verilog: fn(sms: usize) -> String,
    /// Its test-only broken variants (`mpgpu cosim --broken NAME`).
    pub broken: &'static [Variant],
}

/// A test-only broken variant of a block: its name on the command line, what it breaks, and
/// how it sets the block's faults in a run's map.
pub struct Variant {
    pub name: &'static str,
    pub about: &'static str,
    pub set: fn(&mut Broken),
}

const fn variant(name: &'static str, about: &'static str, set: fn(&mut Broken)) -> Variant {
    Variant { name, about, set }
}

fn v<P: Ports>(p: P) -> String {
    verilog_of(&p)
}

/// Every RTL block, in the order the command line lists them.
pub static BLOCKS: &[Block] = &[
    Block { name: "lowest_first", about: "the lowest-index-first picker the scheduling blocks share", scope: Scope::Part, verilog: |_| v(LowestFirstPorts), broken: &[] },
    Block { name: "dss", about: "the framework's Dynamic Spatial Sharing policy engine alone", scope: Scope::Gpu, verilog: |sms| v(DssPorts { sms, broken_tie: false }), broken: &[variant("lifo", "DSS ties go to the highest index", |b| b.edit("dss", |f: &mut bool| *f = true))] },
    Block {
        name: "prio",
        about: "the framework's priority policy engine (FCFS, NPQ, PPQ) alone",
        scope: Scope::Gpu,
        // (PPQ shared keeps every path; the mode is a constant of the block)
        verilog: |sms| v(PrioPorts { sms, mode: PolicyCode::PpqShared, broken_victim: false }),
        broken: &[variant("lifo", "the victim is the oldest kernel's SM", |b| b.edit("prio", |f: &mut bool| *f = true))],
    },
    Block {
        name: "sched",
        about: "the whole kernel scheduling framework: SMST, KSRT, PTBQs, SM driver, policy engines",
        scope: Scope::Gpu,
        // (both policy engines; the DSS engine drives it, the priority engine's mode a constant
        // keeping all of its paths)
        verilog: |sms| v(SchedPorts { sms, mode: PolicyCode::Dss, faults: Default::default() }),
        broken: &[
            variant("lifo", "the PTBQ popped last in first out", |b| b.edit("sched", |f: &mut SchedFaults| f.ptbq_lifo = true)),
            variant("keep-token", "a released SM's token is not returned to its kernel", |b| b.edit("sched", |f: &mut SchedFaults| f.keep_token = true)),
        ],
    },
    Block {
        name: "oplog",
        about: "the operand log's bookkeeping (one per SM): entries, free list, per-block quotas",
        scope: Scope::PerSm,
        // (at its largest: 64 entries, 8 KB, 16 partitions)
        verilog: |_| v(OplogPorts { entries: mpgpu_spec::units::oplog::MAX_ENTRIES, faults: Default::default() }),
        broken: &[
            variant("drop-second", "a store's second log entry is not marked in use (it never comes back)", |b| b.edit("oplog", |f: &mut OplogFaults| f.drop_second = true)),
            variant("early-credit", "a freed entry is credited to its block's quota a clocked cycle early", |b| b.edit("oplog", |f: &mut OplogFaults| f.early_credit = true)),
        ],
    },
    Block {
        name: "rq",
        about: "the replay queue (one per SM): faulted instructions kept for replay",
        scope: Scope::PerSm,
        verilog: |_| v(RqPorts { slots: mpgpu_spec::units::rq::MAX_SLOTS, faults: Default::default() }),
        broken: &[
            variant("early-free", "a slot is free one cycle early (the commit's free reaches the allocation)", |b| b.edit("rq", |f: &mut RqFaults| f.early_free = true)),
            variant("wrong-slot", "a replay clears the faulted bit of the read port's slot, not its own", |b| b.edit("rq", |f: &mut RqFaults| f.wrong_slot = true)),
        ],
    },
    Block {
        name: "oldata",
        about: "the operand log's data array (one per SM): 32 lane RAMs",
        scope: Scope::PerSm,
        // (at its largest: 64 entries of 32 lanes x 32 bits, 8 KB)
        verilog: |_| v(OldataPorts { entries: mpgpu_spec::units::oldata::MAX_ENTRIES, faults: Default::default() }),
        broken: &[
            variant("drop-lane", "lane 31 never takes a write", |b| b.edit("oldata", |f: &mut OldataFaults| f.drop_lane = true)),
            variant("read-waddr", "the read port always looks at the write address", |b| b.edit("oldata", |f: &mut OldataFaults| f.read_waddr = true)),
        ],
    },
    Block {
        name: "zorua",
        about: "Zorua's coordinator and mapping tables (one per SM; the Fermi geometry)",
        scope: Scope::PerSm,
        // (48 warp slots, Algorithm 1's default constants: docs/zorua.md)
        verilog: |_| v(ZoruaPorts { params: mpgpu_rtl::ZoruaParams { slots: 48, o_default: 2, o_thresh_step: 1, c_delta_thresh: 64 }, faults: Default::default() }),
        broken: &[
            variant("rescan-from-thread", "the rescan starts from the thread/barrier queue", |b| b.edit("zorua", |f: &mut ZoruaFaults| f.rescan_from_thread = true)),
            variant("smem-at-warp-end", "a warp's end frees its block's scratchpad", |b| b.edit("zorua", |f: &mut ZoruaFaults| f.smem_at_warp_end = true)),
        ],
    },
    Block { name: "wf", about: "Warped-Slicer's water-filling unit (one per GPU)", scope: Scope::Gpu, verilog: |sms| v(WfPorts { sms, faults: Default::default() }), broken: &[variant("tie-high", "a tie at Select goes to the higher kernel index", |b| b.edit("wf", |f: &mut WfFaults| f.tie_high = true))] },
    Block { name: "prof", about: "Warped-Slicer's sampling counters (one per SM)", scope: Scope::PerSm, verilog: |_| v(ProfPorts { faults: Default::default() }), broken: &[variant("late-latch", "the counters latch one cycle after the window's last", |b| b.edit("prof", |f: &mut ProfFaults| f.late_latch = true))] },
    Block {
        name: "slice",
        about: "the slice table: kernels sharing SMs under per-SM quotas (one per GPU)",
        scope: Scope::Gpu,
        // (the Fermi (GTX 480) configuration's resources: 8 CTA slots, 1,536 threads, 32,768
        // registers, 49,152 shared bytes)
        verilog: |sms| v(SlicePorts { sms, total: [8, 1536, 32768, 49152], faults: Default::default() }),
        broken: &[variant("over-quota", "the quota compare takes `<=` (an SM takes one block over a kernel's quota)", |b| b.edit("slice", |f: &mut SliceFaults| f.over_quota = true))],
    },
];

/// The block named `name`; an error lists the blocks.
pub fn block(name: &str) -> Result<&'static Block, String> {
    BLOCKS.iter().find(|b| b.name == name).ok_or_else(|| format!("unknown block `{name}`; blocks: {}", names().join(", ")))
}

/// The blocks' names, in registry order.
pub fn names() -> Vec<&'static str> {
    BLOCKS.iter().map(|b| b.name).collect()
}

impl Block {
    /// Whether `--sms` sizes it.
    pub fn sized_by_sms(&self) -> bool {
        self.scope == Scope::Gpu
    }

    /// Its Verilog for `sms` SMs (checked: 1 to the framework's largest GPU), or at its one
    /// size.
    pub fn verilog_sized(&self, sms: usize) -> Result<String, String> {
        if self.sized_by_sms() && !(1..=MAX_SMS).contains(&sms) {
            return Err(format!("--sms {sms}: the GPU-wide blocks support 1..={MAX_SMS} SMs"));
        }
        Ok((self.verilog)(sms))
    }

    /// The co-simulation units that put it in the GPU.
    pub fn units(&self) -> Vec<UnitKind> {
        UnitKind::ALL.iter().copied().filter(|u| u.blocks().contains(&self.name)).collect()
    }
}

/// The broken variant `name` of the blocks `unit` hosts (every block of the unit with a variant
/// of that name: `lifo` breaks both policy engines of `--unit engine`), as a run's map; an error
/// names the units that have it.
pub fn broken(unit: UnitKind, name: &str) -> Result<Broken, String> {
    let mut b = Broken::default();
    for v in unit.blocks().iter().filter_map(|n| block(n).ok()).flat_map(|blk| blk.broken).filter(|v| v.name == name) {
        (v.set)(&mut b);
    }
    if !b.is_empty() {
        return Ok(b);
    }
    let hosts: Vec<&str> = UnitKind::ALL.iter().filter(|u| u.blocks().iter().filter_map(|n| block(n).ok()).any(|blk| blk.broken.iter().any(|v| v.name == name))).map(|u| u.name()).collect();
    if hosts.is_empty() {
        let mut own: Vec<&str> = unit.blocks().iter().filter_map(|n| block(n).ok()).flat_map(|blk| blk.broken).map(|v| v.name).collect();
        own.sort_unstable();
        own.dedup();
        let own = if own.is_empty() { "none".to_string() } else { own.join(", ") };
        return Err(format!("--broken {name}: no block has that broken variant (--unit {}'s variants: {own})", unit.name()));
    }
    Err(format!("--broken {name} is not a variant of --unit {} (it is one of --unit {})", unit.name(), hosts.join(" or ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_hosts_registered_blocks_and_every_hosted_scope_has_a_unit() {
        for u in UnitKind::ALL {
            for b in u.blocks() {
                block(b).unwrap_or_else(|e| panic!("unit {}: {e}", u.name()));
            }
        }
        for b in BLOCKS.iter().filter(|b| b.scope != Scope::Part) {
            assert!(!b.units().is_empty(), "block {} is in no co-simulation unit", b.name);
        }
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), BLOCKS.len(), "a block name is registered twice");
    }
}
