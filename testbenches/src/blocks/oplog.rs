//! The operand log's bookkeeping (`Oplog`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::oplog`).

use crate::hdl_block;
use crate::options::CosimOptions;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::fault_runs;
use crate::entry::{identical_sms, Build, GpuKind, Host};
use crate::host::Outcome;
use mpgpu_ref::config::{FaultScheme, GpuConfig};
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Oplog, OplogFaults};
use mpgpu_spec::units::oplog;

hdl_block!(Oplog {
    inputs: [free, alloc, alloc_block, alloc_need, alloc_res, claim, claim_block, claim_n, claim_used, part_release, tick],
    outputs: [pool_free, room, list_room, alloc_idx0, alloc_idx1, alloc_idx2, busy, returning],
    registers: [head, tail, count, pool, back, ret, pv, cr, cown0, cown1, relq],
    arrays: [valid, pend, cred, p0h, p1h, owner, rrow, quota, left],
    memories: [bank0, bank1, bank2, bank3],
    flat: read_changed,
});

/// One SM's operand-log bookkeeping (`Oplog`) for a log of `entries` entries, with test-only
/// faults.
#[derive(Clone, Copy, Debug)]
pub struct OplogPorts {
    pub entries: usize,
    pub faults: OplogFaults,
}

impl Ports for OplogPorts {
    type In = oplog::In;
    type Out = oplog::Out;
    type State = oplog::State;
    type Block = Oplog;
    fn name(&self) -> String {
        "oplog".into()
    }
    fn block(&self) -> Oplog {
        let mut b = Oplog::new(self.entries, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> oplog::State {
        // (the list's slot s is bank s mod 4's word s / 4, holding its entry XORed with s;
        // count and pool are kept XORed with the entries)
        let banks = [r.array("bank0.mem"), r.array("bank1.mem"), r.array("bank2.mem"), r.array("bank3.mem")];
        let e = self.entries as u64;
        // (the picks are kept one-hot)
        // (the entry vectors in halves of 32)
        let v64 = |name: &str| r.array(name)[0] | r.array(name)[1] << 32;
        let (p0, p1, cr) = (v64("p0h"), v64("p1h"), r.scalar("cr"));
        let at = |h: u64| if h == 0 { 0 } else { h.trailing_zeros() as u8 };
        oplog::State {
            valid: v64("valid"),
            pend: v64("pend"),
            cred: v64("cred"),
            owner: r.array("owner").iter().map(|&x| x as u8).collect(),
            slot: (0..64).map(|s| (banks[s % 4][s / 4] ^ s as u64) as u8).collect(),
            head: r.scalar("head") as u8,
            count: (r.scalar("count") ^ e) as u8,
            pool: (r.scalar("pool") ^ e) as u8,
            back: r.scalar("back") as u8,
            quota: r.array("quota").iter().map(|&x| x as u8).collect(),
            left: r.array("left").iter().map(|&x| x as u8).collect(),
            ret: r.scalar("ret") as u16,
            pick_v: vec![r.scalar("pv") & 1 != 0, r.scalar("pv") & 2 != 0],
            pick: vec![at(p0), at(p1)],
            cr: vec![cr & 1 != 0, cr & 2 != 0],
            cown: vec![r.scalar("cown0") as u8, r.scalar("cown1") as u8],
            relq: r.scalar("relq") as u16,
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (every output is a function of the registers: `mpgpu_spec::units::oplog`)
        Some(&[])
    }
}

pub(super) const BLOCK: Block = Block {
    name: "oplog",
    about: "the operand log's bookkeeping (one per SM): entries, free list, per-block quotas",
    scope: Scope::PerSm,
    // (at its largest: 64 entries, 8 KB, 16 partitions)
    verilog: |_| Ok(v(OplogPorts { entries: oplog::MAX_ENTRIES, faults: Default::default() })),
    broken: &[
        variant("drop-second", "a store's second log entry is not marked in use (it never comes back)", |b| b.edit("oplog", |f: &mut OplogFaults| f.drop_second = true)),
        variant("early-credit", "a freed entry is credited to its block's quota a clocked cycle early", |b| b.edit("oplog", |f: &mut OplogFaults| f.early_credit = true)),
    ],
    host: Some(ol_host(
        "the operand log's bookkeeping in RTL on every SM (or the SMs --sms names), under the operand-log fault scheme (implied) with the baseline dispatcher; needs the thesis's pipeline (--config thesis16, or --pipeline thesis)",
        |b| {
            let entries = log_entries(b.cfg);
            let ports = OplogPorts { entries, faults: b.o.broken.of("oplog") };
            b.per_sm(ports, &|| mpgpu_ref::units::oplog::Oplog::new(entries as u32), mpgpu_ref::units::oplog::Oplog::state).map(Some)
        },
    )),
};

/// The host of the operand log's two blocks (its bookkeeping, its data array): one per SM under
/// the operand-log fault scheme (which it sets), on the thesis's pipeline, with the fault
/// runs' soak; `install` puts the block's units in the SMs.
pub const fn ol_host(about: &'static str, install: fn(&mut Build) -> Result<Option<Box<dyn Outcome>>, String>) -> Host {
    Host { about, gpu: GpuKind::PerSm, default_config: "thesis16", setup: ol_setup, fits: ol_fits, install, soak: fault_runs, lockstep_only: false, clock_gated: false, testbench: crate::entry::TbRun { inject: 0.05, ..crate::entry::TbRun::of(crate::entry::TB_ONE) } }
}

fn ol_setup(cfg: &mut GpuConfig) {
    cfg.faults = FaultScheme::Ol;
}

/// The entries of one SM's operand log in `cfg`.
pub fn log_entries(cfg: &GpuConfig) -> usize {
    (cfg.sm[0].oplog_bytes / mpgpu_ref::config::OPLOG_ENTRY_BYTES) as usize
}

/// Refuses a configuration without the operand log (its bookkeeping's and its data array's).
pub fn ol_fits(cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
    if cfg.faults != FaultScheme::Ol {
        return Err(format!("--unit {}: the operand log is used under faults = \"ol\" (`{}` runs \"{}\"; add --faults ol)", o.unit, cfg.name, cfg.faults.name()));
    }
    identical_sms(cfg, o)
}
