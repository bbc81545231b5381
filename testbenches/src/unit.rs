//! The co-simulation units ([`UnitKind`]) that `mpgpu cosim --unit`, `soak --unit` and `bench
//! cosim --unit` name, and what each is: the registry's blocks it puts in the GPU together.
//!
//! Every hosted block is a unit of its own name, and [`COMPOSITES`] names the units of several
//! blocks (`engine`, `rq-ol`, `wf`). A run builds the GPU the unit's blocks run in
//! ([`GpuKind`]), then each block's [`Host::install`] puts its units in their slots and says
//! what the run will report; nothing outside the block's own file names it.

use crate::blocks::BLOCKS;
use crate::entry::{gpu_of, Block, Build, Host, Scope};
pub use crate::entry::GpuKind;
use crate::host::{Outcome, Rec};
use crate::options::{CosimOptions, UnitKind};
use crate::runs::Run;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::timing::gpu::Gpu;
use mpgpu_ref::workload::Workload;
use std::path::Path;
use std::sync::OnceLock;

/// A unit of several blocks.
pub struct Composite {
    pub name: &'static str,
    pub about: &'static str,
    pub blocks: &'static [&'static str],
    /// Whether a run puts one of them in the GPU, the one its options use (a policy engine),
    /// rather than all.
    pub alternatives: bool,
}

/// The units of several blocks (every other hosted block is a unit of its own name). Their
/// blocks run in the same kind of GPU (checked by `registry::tests`).
pub static COMPOSITES: &[Composite] = &[
    Composite { name: "engine", about: "only the framework's policy engine in RTL (DSS for dss and equal, the priority engine for the others)", blocks: &["dss", "prio"], alternatives: true },
    Composite {
        name: "rq-ol",
        about: "the replay queue and the operand log (bookkeeping and data array) in RTL on every SM (or the SMs --sms names), under the operand-log fault scheme (implied)",
        blocks: &["oplog", "oldata", "rq"],
        alternatives: false,
    },
    Composite {
        name: "wf",
        about: "Warped-Slicer's water-filling unit (global) and sampling counters (every SM) in RTL, under the Warped-Slicer dispatcher (--ws-window, --ws-delay, --ws-fallback); the water-filling unit's FSM state and tables compared every clocked cycle",
        blocks: &["wf", "prof"],
        alternatives: false,
    },
];

/// `--unit all`: every block that runs in one GPU at once ([`UnitKind::every_block`]).
pub const ALL: &str = "all";
/// What `--unit all` puts in the GPU, for the command line's help.
pub const ALL_ABOUT: &str = "every block that runs in one GPU at once: the framework (with --slicing, the slicing dispatcher's blocks: the slice table, the water-filling unit and the sampling counters; with --policy and --slicing warped-slicer, slicing inside the framework: the framework sharing its SMs, the water-filling unit and the sampling counters) and, on every SM, Zorua's coordinator, the replay queue and the operand log";

/// The blocks slicing inside the framework (`--policy` with `--slicing`) has no place for,
/// each with the reason: every other block runs there.
pub const OUTSIDE_SLICING_IN_FRAMEWORK: [(&str, &str); 1] = [
    (
        "slice",
        "the slice table issues under the slicing dispatcher; with --policy the framework issues, under the quotas it holds itself (docs/warped-slicer.md, \"Inside the scheduling framework\"): leave out --policy, or put wf and prof in the loop",
    ),
];

/// The blocks `--unit all` leaves out, each with the reason (every form of it runs Zorua's
/// coordinator, which admits blocks itself).
pub const OUTSIDE_ALL: [(&str, &str); 1] = [(
    "admit",
    "the admission unit serves alloc = \"block\", and --unit all runs Zorua's coordinator, which admits blocks itself; with every other block it runs as --unit sched,rq-ol,admit (or wf,slice,admit, steer,admit)",
)];

/// Whether `--unit all` leaves block `b` out ([`OUTSIDE_ALL`]).
pub fn outside_all(b: &Block) -> bool {
    OUTSIDE_ALL.iter().any(|(n, _)| *n == b.name)
}

/// A co-simulation unit: its name, what it is, the registry's blocks it puts in the GPU.
struct UnitDef {
    name: &'static str,
    about: &'static str,
    blocks: Vec<&'static Block>,
    alternatives: bool,
}

/// The units lists name (`UnitKind::list`).
fn lists() -> &'static std::sync::Mutex<Vec<&'static UnitDef>> {
    static LISTS: OnceLock<std::sync::Mutex<Vec<&'static UnitDef>>> = OnceLock::new();
    LISTS.get_or_init(Default::default)
}

fn units() -> &'static [UnitDef] {
    static UNITS: OnceLock<Vec<UnitDef>> = OnceLock::new();
    UNITS.get_or_init(|| {
        let block = |n: &str| BLOCKS.iter().find(|b| b.name == n).unwrap_or_else(|| panic!("unit of an unregistered block `{n}`"));
        // (the hosted blocks in registry order, a composite after its first block)
        let mut v = Vec::new();
        for b in BLOCKS.iter() {
            let Some(h) = &b.host else { continue };
            if !COMPOSITES.iter().any(|c| c.name == b.name) {
                v.push(UnitDef { name: b.name, about: h.about, blocks: vec![b], alternatives: false });
            }
            if let Some(c) = COMPOSITES.iter().find(|c| c.blocks[0] == b.name) {
                v.push(UnitDef { name: c.name, about: c.about, blocks: c.blocks.iter().map(|n| block(n)).collect(), alternatives: c.alternatives });
            }
        }
        v
    })
}

/// The units' names, for an error naming an unknown one.
fn unit_names() -> String {
    units().iter().map(|u| u.name).collect::<Vec<_>>().join(", ")
}

impl UnitKind {
    /// Every unit, in the order the command line lists them.
    pub fn all() -> Vec<UnitKind> {
        units().iter().map(|u| UnitKind(u.name)).collect()
    }

    /// The unit named `name` on the command line, or the units a list names put in the GPU
    /// together (`sched,rq-ol`: [`UnitKind::list`]); an error lists the units.
    pub fn named(name: &str) -> Result<UnitKind, String> {
        if let Some(u) = units().iter().find(|u| u.name == name) {
            return Ok(UnitKind(u.name));
        }
        if name.contains(',') {
            return UnitKind::list(name);
        }
        if name == ALL {
            return Ok(UnitKind::every_block(false));
        }
        Err(format!("unknown unit `{name}`; units: {}", unit_names()))
    }

    /// The units of the list `names` (`a,b,...`) as one: their blocks, each once, in one GPU.
    /// The GPU is the framework's if a block runs under it, the slicing dispatcher's if one runs
    /// under that, else the baseline dispatcher's (a per-SM block runs in any of them). Refused
    /// with the reason: a unit that is one of its blocks by the policy (`engine`), the slice
    /// table with a block of the other GPU (the two kinds run together only under slicing
    /// inside the framework, which does not use the slice table), two blocks in the
    /// framework's slot.
    pub fn list(names: &str) -> Result<UnitKind, String> {
        let mut blocks: Vec<&'static Block> = Vec::new();
        let mut parts = Vec::new();
        for part in names.split(',').map(str::trim) {
            let u = units().iter().find(|u| u.name == part).ok_or_else(|| format!("unknown unit `{part}` in the list `{names}`; units: {}", unit_names()))?;
            if u.alternatives {
                return Err(format!("--unit {names}: `{part}` is one of its blocks by the policy ({}); name the one to put in the list", u.blocks.iter().map(|b| b.name).collect::<Vec<_>>().join(" or ")));
            }
            parts.push(part);
            for &b in &u.blocks {
                if !blocks.iter().any(|x| x.name == b.name) {
                    blocks.push(b);
                }
            }
        }
        let kind = |k: GpuKind| blocks.iter().filter(|b| b.host.as_ref().is_some_and(|h| h.gpu == k)).map(|b| b.name).collect::<Vec<_>>();
        let (fw, sl) = (kind(GpuKind::Framework), kind(GpuKind::Slicer));
        // (the framework's blocks and Warped-Slicer's units share a GPU under slicing inside
        // the framework, which does not use the slice table)
        let outside = OUTSIDE_SLICING_IN_FRAMEWORK.iter().find(|(b, _)| fw.contains(b) || sl.contains(b));
        if let Some((b, why)) = outside.filter(|_| !fw.is_empty() && !sl.is_empty()) {
            return Err(format!(
                "--unit {names}: {} runs under the scheduling framework and {} under the slicing dispatcher; together they run with slicing inside the framework (--policy with --slicing), which has no place for {b}: {why}",
                fw.join(", "),
                sl.join(", "),
            ));
        }
        // (the steering unit shares a GPU with the framework's blocks as its quota controller)
        let st = kind(GpuKind::Steer);
        if !st.is_empty() && !sl.is_empty() {
            return Err(format!("--unit {names}: {} runs under the steering dispatcher or inside the framework, {} under the slicing dispatcher: they do not share a GPU", st.join(", "), sl.join(", ")));
        }
        if fw.len() > 1 {
            return Err(format!("--unit {names}: {} all fill the framework's slot; name one", fw.join(", ")));
        }
        Ok(UnitKind::define(parts.join(","), "the units of the list together", blocks))
    }

    /// Every block that runs in one GPU at once, in the registry's order: the per-SM blocks
    /// that run in any GPU (Zorua's coordinator, the replay queue, the operand log's
    /// bookkeeping and data array) and the framework (not its policy engines alone, which are
    /// in it), or with `slicing` the slicing dispatcher's blocks (the slice table, the
    /// water-filling unit, the sampling counters). Named `all` (with `slicing`, `all
    /// (slicing)`). Its blocks share one GPU by construction, so nothing is refused.
    pub fn every_block(slicing: bool) -> UnitKind {
        let want = if slicing { GpuKind::Slicer } else { GpuKind::Framework };
        let name = if slicing { format!("{ALL} (slicing)") } else { ALL.to_string() };
        UnitKind::every_block_where(name, &|_, h| h.gpu == GpuKind::PerSm || h.gpu == want)
    }

    /// `--unit all` with slicing inside the framework (`--policy` with `--slicing`): every
    /// per-SM block, the framework sharing its SMs, and Warped-Slicer's water-filling unit
    /// and sampling counters; the slice table has no place there
    /// ([`OUTSIDE_SLICING_IN_FRAMEWORK`]). Named `all (slicing inside the framework)`.
    pub fn every_block_in_framework() -> UnitKind {
        UnitKind::every_block_where(format!("{ALL} (slicing inside the framework)"), &|b, h| !OUTSIDE_SLICING_IN_FRAMEWORK.iter().any(|(n, _)| *n == b.name) && h.gpu != GpuKind::Steer)
    }

    /// `--unit all` with `--steer`: every per-SM block and the steering unit, under the
    /// steering dispatcher. Named `all (steering)`.
    pub fn every_block_steered() -> UnitKind {
        UnitKind::every_block_where(format!("{ALL} (steering)"), &|_, h| matches!(h.gpu, GpuKind::PerSm | GpuKind::Steer))
    }

    /// `--unit all` with `--policy` and `--steer`: every per-SM block, the framework and the
    /// steering unit as its quota controller. Named `all (steering inside the framework)`.
    pub fn every_block_steered_in_framework() -> UnitKind {
        UnitKind::every_block_where(format!("{ALL} (steering inside the framework)"), &|_, h| matches!(h.gpu, GpuKind::PerSm | GpuKind::Framework | GpuKind::Steer))
    }

    /// A form of `--unit all` named `name`: every hosted block `keep` takes, in the registry's
    /// order, but those that are one of a composite's alternatives (the policy engines alone,
    /// which are in the framework).
    fn every_block_where(name: String, keep: &dyn Fn(&Block, &Host) -> bool) -> UnitKind {
        let part_of_another = |b: &Block| COMPOSITES.iter().any(|c| c.alternatives && c.blocks.contains(&b.name));
        let blocks: Vec<&'static Block> = BLOCKS.iter().filter(|b| b.host.as_ref().is_some_and(|h| keep(b, h)) && !part_of_another(b) && !outside_all(b)).collect();
        UnitKind::define(name, ALL_ABOUT, blocks)
    }

    /// Its name as the command line gives it: `all` for every form of `--unit all` (the
    /// run's `--slicing` and `--policy` tell them apart).
    pub fn arg(self) -> &'static str {
        if self.0.starts_with(&format!("{ALL} (")) {
            ALL
        } else {
            self.0
        }
    }

    /// Whether it is `--unit all` ([`UnitKind::every_block`]).
    pub fn is_all(self) -> bool {
        self.0 == ALL
    }

    /// The unit of `blocks` named `name`, defined once per name for the run's life.
    fn define(name: String, about: &'static str, blocks: Vec<&'static Block>) -> UnitKind {
        let mut made = lists().lock().expect("the list units' lock");
        if let Some(u) = made.iter().find(|u| u.name == name) {
            return UnitKind(u.name);
        }
        let def: &'static UnitDef = Box::leak(Box::new(UnitDef { name: Box::leak(name.into_boxed_str()), about, blocks, alternatives: false }));
        made.push(def);
        UnitKind(def.name)
    }

    fn def(self) -> &'static UnitDef {
        units().iter().find(|u| u.name == self.0).or_else(|| lists().lock().expect("the list units' lock").iter().copied().find(|u| u.name == self.0)).expect("a unit of the registry")
    }

    /// What the unit puts in the GPU and under what, in a sentence (the command line's help).
    pub fn about(self) -> &'static str {
        self.def().about
    }

    /// The names of the blocks (`crate::registry`) whose RTL the unit puts in the GPU.
    pub fn blocks(self) -> Vec<&'static str> {
        self.def().blocks.iter().map(|b| b.name).collect()
    }

    fn hosts(self) -> impl Iterator<Item = (&'static Block, &'static Host)> {
        self.def().blocks.iter().map(|&b| (b, b.host.as_ref().expect("a unit's blocks are hosted")))
    }

    /// The GPU its blocks run in: the framework's or the slicing dispatcher's if a block runs
    /// under it (a per-SM block runs in either), else the baseline dispatcher's.
    pub fn gpu(self) -> GpuKind {
        [GpuKind::Framework, GpuKind::Slicer, GpuKind::Steer].into_iter().find(|&k| self.has(k)).unwrap_or(GpuKind::PerSm)
    }

    /// Whether some block of the unit runs in a GPU of `kind`.
    pub fn has(self, kind: GpuKind) -> bool {
        self.hosts().any(|(_, h)| h.gpu == kind)
    }

    /// Whether it has the framework's blocks and the steering unit: it runs steering inside the
    /// framework (`--policy` with `--steer`).
    pub fn steers_in_framework(self) -> bool {
        self.has(GpuKind::Framework) && self.has(GpuKind::Steer)
    }

    /// Whether some block of the unit is one per SM (`--sms` picks the SMs with its RTL).
    pub fn has_per_sm(self) -> bool {
        self.def().blocks.iter().any(|b| b.scope == Scope::PerSm)
    }

    /// Its blocks of one instance for the whole GPU.
    pub fn global_blocks(self) -> Vec<&'static str> {
        self.def().blocks.iter().filter(|b| b.scope != Scope::PerSm).map(|b| b.name).collect()
    }

    /// Its blocks of one instance per SM.
    pub fn per_sm_blocks(self) -> Vec<&'static str> {
        self.def().blocks.iter().filter(|b| b.scope == Scope::PerSm).map(|b| b.name).collect()
    }

    /// Whether a run puts several of its blocks in the GPU.
    pub fn several(self) -> bool {
        let d = self.def();
        d.blocks.len() > 1 && !d.alternatives
    }

    /// Whether the run has several waveforms (one per SM with the RTL, one per global block),
    /// written into one folder.
    pub fn waveform_folder(self) -> bool {
        self.has_per_sm() || self.several()
    }

    /// Whether it runs only in lockstep.
    pub fn lockstep_only(self) -> bool {
        self.hosts().any(|(_, h)| h.lockstep_only)
    }

    /// Whether the GPU gates its clock while it is idle.
    pub fn clock_gated(self) -> bool {
        self.hosts().any(|(_, h)| h.clock_gated)
    }

    /// The configuration a soak runs the unit on by default (`mpgpu soak --unit`): its first
    /// block's, or the steering unit's when it has it (steering needs two kinds of SM).
    pub fn default_config(self) -> &'static str {
        let steer = self.hosts().find(|(_, h)| h.gpu == GpuKind::Steer);
        steer.or_else(|| self.hosts().next()).expect("a unit has a block").1.default_config
    }

    /// Sets in `cfg` what the unit's blocks imply.
    pub fn setup(self, cfg: &mut GpuConfig) {
        for (_, h) in self.hosts() {
            (h.setup)(cfg);
        }
    }

    /// Its first block that slicing inside the framework has no place for, with the reason
    /// ([`OUTSIDE_SLICING_IN_FRAMEWORK`]).
    pub fn outside_slicing_in_framework(self) -> Option<(&'static str, &'static str)> {
        let blocks = self.blocks();
        OUTSIDE_SLICING_IN_FRAMEWORK.iter().copied().find(|(b, _)| blocks.contains(b))
    }

    /// Refuses a configuration a block of the unit cannot run on.
    pub fn fits(self, cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
        if let Some((_, why)) = self.outside_slicing_in_framework().filter(|_| o.sliced) {
            return Err(format!("--unit {}: {why}", o.unit));
        }
        if self.has(GpuKind::Framework) && self.has(GpuKind::Slicer) && !o.sliced {
            return Err(format!("--unit {}: its blocks run together under slicing inside the framework only: give --policy and --slicing", self.name()));
        }
        if self.steers_in_framework() && !o.steered {
            return Err(format!("--unit {}: its blocks run together under steering inside the framework only: give --policy (and --steer for the steering policy, dynamic by default)", self.name()));
        }
        self.hosts().try_for_each(|(_, h)| (h.fits)(cfg, o))
    }

    /// A soak's runs of workload `index` on `cfg` (set up for the unit): its blocks' runs, each
    /// once.
    pub fn soak_runs(self, seed: u64, cfg: &GpuConfig, index: u64) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        for (_, h) in self.hosts() {
            for r in (h.soak)(seed, cfg, index) {
                if !runs.iter().any(|x| x.same(&r)) {
                    runs.push(r);
                }
            }
        }
        runs
    }

    /// The policies its framework-side blocks run under in a soak (the policy engines': the
    /// policies whose engine each is), if it has any.
    pub fn framework_policies(self, seed: u64, cfg: &GpuConfig, index: u64) -> Option<Vec<mpgpu_ref::units::framework::Policy>> {
        let mut ps = Vec::new();
        for (_, h) in self.hosts().filter(|(_, h)| h.gpu == GpuKind::Framework) {
            ps.extend((h.soak)(seed, cfg, index).into_iter().map(|r| r.policy));
        }
        (!ps.is_empty()).then_some(ps)
    }

    /// Builds the GPU for one run with the unit's blocks in it; what the run will report, per
    /// block.
    pub fn build(self, cfg: &GpuConfig, w: &Workload, o: &CosimOptions, rec: &Rec, trace: Option<&Path>) -> Result<(Vec<(Box<dyn Outcome>, &'static str)>, Gpu), String> {
        let several = self.several();
        let mut b = Build { cfg, o, rec, trace: None, gpu: gpu_of(self.gpu(), cfg, w, o)?, n: cfg.num_sms() as usize };
        let mut outcomes = Vec::new();
        for (blk, h) in self.hosts() {
            // (with several, each block's traces under DIR/<block>/)
            b.trace = trace.map(|d| if several { d.join(blk.name) } else { d.to_path_buf() });
            if let Some(out) = (h.install)(&mut b)? {
                outcomes.push((out, blk.name));
            }
        }
        if outcomes.is_empty() {
            return Err(format!("--unit {}: the run uses none of its blocks (policy {})", self.name(), o.policy.name()));
        }
        Ok((outcomes, b.gpu))
    }
}

