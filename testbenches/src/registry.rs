//! The one registry of the RTL blocks and of the co-simulation units that host them. Every
//! command reads it: `mpgpu verilog` and `mpgpu fpga` (a block's name, what it is, its
//! Verilog at its default configuration), and `mpgpu cosim --unit`, `mpgpu soak --unit` and
//! `mpgpu bench cosim --unit` (the units, what each puts in the GPU, the configuration it
//! needs), and `--broken` (a block's test-only broken variants). A block is named alike
//! everywhere: `rtl/src/<name>.rs`, `mpgpu_spec::units::<name>`, the harness's
//! `blocks/<name>.rs` (`docs/adding-a-block.md`).

use crate::broken::Broken;
use crate::options::UnitKind;
use mpgpu_spec::units::sched::MAX_SMS;

pub use crate::entry::{v, variant, Block, Scope, Sizing, Variant};
use mpgpu_ref::config::GpuConfig;
pub use crate::blocks::BLOCKS;

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
        matches!(self.scope, Scope::Gpu | Scope::GpuPart)
    }

    /// The configuration its RTL is generated for unless one is named: its host's default
    /// (`mpgpu cosim --unit`'s), or `fermi15` for a part.
    pub fn default_config(&self) -> &'static str {
        self.host.as_ref().map_or("fermi15", |h| h.default_config)
    }

    /// Its RTL for `sms` SMs (checked: 1 to the framework's largest GPU) and configuration `cfg`.
    pub fn verilog_for(&self, sms: usize, cfg: &GpuConfig) -> Result<crate::ip::Rtl, String> {
        self.verilog_with(sms, cfg, false)
    }

    /// [`Block::verilog_for`], the framework built to share its SMs if `sharing` (slicing
    /// inside it; the other blocks ignore it).
    pub fn verilog_with(&self, sms: usize, cfg: &GpuConfig, sharing: bool) -> Result<crate::ip::Rtl, String> {
        if self.sized_by_sms() && !(1..=MAX_SMS).contains(&sms) {
            return Err(format!("--sms {sms}: the GPU-wide blocks support 1..={MAX_SMS} SMs"));
        }
        (self.verilog)(&Sizing { sms, cfg, sharing })
    }

    /// Its default configuration ([`Block::default_config`]), loaded.
    pub fn default_gpu(&self) -> Result<GpuConfig, String> {
        GpuConfig::preset(self.default_config()).ok_or_else(|| format!("block `{}`: no preset `{}`", self.name, self.default_config()))
    }

    /// Its RTL for `sms` SMs at its default configuration.
    pub fn verilog_sized(&self, sms: usize) -> Result<crate::ip::Rtl, String> {
        self.verilog_for(sms, &self.default_gpu()?)
    }

    /// The co-simulation units that put it in the GPU.
    pub fn units(&self) -> Vec<UnitKind> {
        UnitKind::all().into_iter().filter(|u| u.blocks().contains(&self.name)).collect()
    }
}

/// The broken variant `name` of the blocks `unit` hosts (every block of the unit with a variant
/// of that name: `lifo` breaks both policy engines of `--unit engine`), as a run's map; an error
/// names the units that have it.
pub fn broken(unit: UnitKind, name: &str) -> Result<Broken, String> {
    let mut b = Broken::default();
    for v in unit.blocks().iter().filter_map(|n| block(n).ok()).flat_map(|blk| blk.broken).filter(|v| v.name == name) {
        (v.set)(&mut b);
        b = b.named(v.name);
    }
    if !b.is_empty() {
        return Ok(b);
    }
    let hosts: Vec<&str> = UnitKind::all().into_iter().filter(|u| u.blocks().iter().filter_map(|n| block(n).ok()).any(|blk| blk.broken.iter().any(|v| v.name == name))).map(|u| u.name()).collect();
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
        for c in crate::unit::COMPOSITES {
            let kinds: Vec<_> = c.blocks.iter().map(|n| block(n).unwrap_or_else(|e| panic!("unit {}: {e}", c.name)).host.as_ref().unwrap_or_else(|| panic!("unit {}: block {n} is not hosted", c.name)).gpu).collect();
            assert!(kinds.iter().all(|&k| k == kinds[0]), "unit {}: its blocks run in different GPUs ({kinds:?})", c.name);
        }
        for b in BLOCKS {
            assert_eq!(b.host.is_some(), b.scope != Scope::Part, "block {}: a part is built alone only, every other block is hosted", b.name);
            if b.host.is_some() {
                assert!(!b.units().is_empty(), "block {} is in no co-simulation unit", b.name);
            }
        }
        let mut n = names();
        n.extend(UnitKind::all().iter().map(|u| u.name()).filter(|u| block(u).is_err()));
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), BLOCKS.len() + crate::unit::COMPOSITES.iter().filter(|c| block(c.name).is_err()).count(), "a block or unit name is registered twice");
        assert!(block(crate::unit::ALL).is_err() && !UnitKind::all().iter().any(|u| u.name() == crate::unit::ALL), "`all` names a block or a unit");
    }

    /// `--unit all`: the framework and every per-SM block of the baseline GPU, or with slicing
    /// the slicing dispatcher's blocks in the framework's place; each is the list of its blocks.
    #[test]
    fn unit_all_is_every_block_that_runs_in_one_gpu() {
        let all = UnitKind::named("all").unwrap();
        assert!(all.is_all() && all == UnitKind::every_block(false));
        assert_eq!(all.blocks(), ["sched", "oplog", "oldata", "rq", "zorua"]);
        assert_eq!(all.gpu(), crate::unit::GpuKind::Framework);
        assert_eq!(all.blocks(), UnitKind::list("sched,rq-ol,zorua").unwrap().blocks());
        let sliced = UnitKind::every_block(true);
        assert!(!sliced.is_all() && sliced.gpu() == crate::unit::GpuKind::Slicer);
        assert_eq!(sliced.blocks(), ["oplog", "oldata", "rq", "zorua", "wf", "prof", "slice"]);
        // (with --policy too, slicing inside the framework: every block but the slice table,
        // and the command line's name for it is `all`)
        let inside = UnitKind::every_block_in_framework();
        assert_eq!(inside.blocks(), ["sched", "oplog", "oldata", "rq", "zorua", "wf", "prof"]);
        assert!(inside.arg() == "all" && sliced.arg() == "all" && all.arg() == "all");
        let steered = UnitKind::every_block_steered();
        assert!(steered.gpu() == crate::unit::GpuKind::Steer && steered.arg() == "all");
        assert_eq!(steered.blocks(), ["oplog", "oldata", "rq", "zorua", "steer"]);
        // (every hosted block is in one of the four, or in the framework: its policy engines,
        // or left out with its reason: the admission unit, which Zorua's coordinator replaces)
        let engine = crate::unit::COMPOSITES.iter().find(|c| c.name == "engine").expect("the policy engines' unit");
        let outside: Vec<&str> = crate::unit::OUTSIDE_ALL.iter().map(|o| o.0).collect();
        assert_eq!(outside, ["admit"]);
        for b in BLOCKS.iter().filter(|b| b.host.is_some() && !engine.blocks.contains(&b.name) && !outside.contains(&b.name)) {
            assert!([all, sliced, inside, steered].iter().any(|u| u.blocks().contains(&b.name)), "{} is in none", b.name);
        }
    }
}
