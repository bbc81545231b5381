//! GPU configurations: TOML files (serde), validated with errors that name the field and the
//! legal range, and presets for the source papers' machines (`sim-ref/configs/*.toml`).
//!
//! Every number a paper gives is taken from it (the preset files say where from); numbers no
//! paper gives use the defaults below, which follow GPGPU-Sim's GTX480 configuration where one
//! exists. `docs/configs.md` lists the presets side by side.

use crate::kernel::Footprint;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

// `validate` (an `impl GpuConfig` block) depends on this module only.
mod validate;

/// Warp scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// Greedy-then-oldest: keep issuing from the same warp until it stalls, then the oldest ready.
    Gto,
    /// Loose round-robin: the next ready warp after the last one issued.
    Lrr,
}

/// The SM pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pipeline {
    /// GPGPU-Sim-like: per-scheduler warps, a small instruction buffer per warp, in-order issue
    /// per warp.
    #[default]
    Gpgpusim,
    /// Tanasić's thesis (§2.4, Table 6.1): one warp fetched per cycle into a unified issue
    /// queue, out-of-order issue within a warp subject to the scoreboard (sources released at
    /// operand read, destinations at commit), out-of-order commit, fetch gated by memory and
    /// control-flow instructions; `schedulers` is the issue width.
    Thesis,
}

/// One group of identical SMs (HeteroCore has a big and a small group).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Number of SMs of this kind.
    pub count: u32,
    /// Thread slots.
    pub threads: u32,
    /// Warp slots.
    pub warps: u32,
    /// 32-bit registers.
    pub registers: u32,
    /// Thread-block slots.
    pub blocks: u32,
    /// Shared memory (the largest configuration), bytes.
    pub shared_bytes: u32,
    /// Shared-memory configurations the SM can be set to, ascending; the SM takes the smallest
    /// that holds one block of the kernel (the K20c rule). Empty: always `shared_bytes`.
    #[serde(default)]
    pub shared_configs: Vec<u32>,
    /// Warp schedulers, each issuing at most one warp-instruction per cycle.
    #[serde(default = "d_schedulers")]
    pub schedulers: u32,
    #[serde(default = "d_policy")]
    pub scheduler: SchedPolicy,
    /// HeteroCore's big-SM warp scheduler (the HeteroCore paper, §3.2): each scheduler's
    /// warp slots in two groups, the first of this many (the baseline SM's slots per
    /// scheduler), the second the rest. A scheduler looks at one group at a time, from the
    /// first; when its group has no ready warp and the other has one, it moves to the other
    /// group, and that cycle issues nothing (the switch's lost cycle, counted in
    /// `group_switches`). A warp slot's group is its index among its scheduler's slots
    /// (slot / schedulers). 0: one group (every SM but HeteroCore's big SM).
    #[serde(default)]
    pub group_warps: u32,
    /// Registers per thread are rounded up to a multiple of this for allocation (GPGPU-Sim: 4;
    /// the thesis's K20c rule: 1). Registers are allocated for whole warps.
    #[serde(default = "d_reg_round")]
    pub reg_round: u32,
    /// Instruction-buffer entries per warp (decoded instructions waiting to issue).
    #[serde(default = "d_ibuffer")]
    pub ibuffer: u32,
    /// ALU: latency in cycles (issue to result) and cycles between two issues to one ALU.
    /// There is one ALU pipeline per scheduler.
    #[serde(default = "d_alu_latency")]
    pub alu_latency: u32,
    #[serde(default = "d_one")]
    pub alu_interval: u32,
    /// SFU: one per SM.
    #[serde(default = "d_sfu_latency")]
    pub sfu_latency: u32,
    #[serde(default = "d_sfu_interval")]
    pub sfu_interval: u32,
    /// Shared memory: latency without bank conflicts, and the number of banks (4-byte words).
    #[serde(default = "d_shared_latency")]
    pub shared_latency: u32,
    #[serde(default = "d_banks")]
    pub shared_banks: u32,
    /// L1 data cache.
    #[serde(default = "d_l1_bytes")]
    pub l1_bytes: u32,
    #[serde(default = "d_l1_assoc")]
    pub l1_assoc: u32,
    #[serde(default = "d_line")]
    pub l1_line: u32,
    #[serde(default = "d_l1_mshrs")]
    pub l1_mshrs: u32,
    #[serde(default = "d_l1_latency")]
    pub l1_latency: u32,
    /// L1 TLB (per SM, LRU): entries, ways and hit latency (Table 6.1 of Tanasić's thesis:
    /// 32 entries, 8-way; it gives no latency).
    #[serde(default = "d_l1_tlb")]
    pub l1_tlb_entries: u32,
    #[serde(default = "d_tlb_assoc")]
    pub l1_tlb_assoc: u32,
    #[serde(default = "d_one")]
    pub l1_tlb_latency: u32,
    /// The pipeline, and for `thesis` the unified issue queue's entries and the instructions
    /// one fetch brings.
    #[serde(default)]
    pub pipeline: Pipeline,
    #[serde(default = "d_iq")]
    pub iq_entries: u32,
    #[serde(default = "d_fetch")]
    pub fetch_width: u32,
    /// The replay queue's slots for issued global memory instructions (`faults = "rq"` or
    /// `"ol"`; fetched, unissued instructions it takes on a fault share the issue queue's
    /// entries; docs/faults.md O6).
    #[serde(default = "d_rq")]
    pub rq_entries: u32,
    /// The operand log's size in bytes (`faults = "ol"`): entries of 32 lanes x 32 bits
    /// (128 B), partitioned among the resident blocks (docs/faults.md O10-O12).
    #[serde(default = "d_oplog")]
    pub oplog_bytes: u32,
    /// What a global memory instruction does when its block's log partition is full.
    #[serde(default)]
    pub oplog_full: OplogFull,
}

/// The operand log's full-partition policy (docs/faults.md O10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum OplogFull {
    /// It does not issue until its partition has room.
    #[default]
    Stall,
    /// It issues without logging, holding its sources until its last TLB check as under the
    /// replay queue alone.
    Hold,
}

/// Bytes of one operand-log entry: one 32-bit operand of every lane of a warp.
pub const OPLOG_ENTRY_BYTES: u32 = 128;

/// The memory system shared by all SMs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemConfig {
    /// DRAM channels (memory partitions), each with one L2 slice.
    pub channels: u32,
    /// Total DRAM bandwidth in GB/s (10^9 bytes per second).
    pub dram_bandwidth_gbs: f64,
    /// DRAM access latency in core cycles (after the request reaches the channel's head).
    #[serde(default = "d_dram_latency")]
    pub dram_latency: u32,
    /// L2 slice per channel.
    #[serde(default = "d_l2_bytes")]
    pub l2_bytes_per_channel: u32,
    #[serde(default = "d_l2_assoc")]
    pub l2_assoc: u32,
    #[serde(default = "d_l2_latency")]
    pub l2_latency: u32,
    /// Interconnect: one-way latency in cycles, and bytes per cycle each SM can inject or take.
    #[serde(default = "d_icnt_latency")]
    pub icnt_latency: u32,
    #[serde(default = "d_icnt_bytes")]
    pub icnt_bytes_per_cycle: u32,
    /// Translate addresses (TLBs, walks, page tables, isolation between processes). Off (the
    /// default, as in the papers other than Tanasić's thesis, whose simulators had no MMU):
    /// an ideal MMU, every translation an L1 TLB hit, every page resident.
    #[serde(default)]
    pub vm: bool,
    /// The L2 TLB shared by all SMs (LRU): entries, ways, lookup latency and MSHRs (misses
    /// in flight, a walk or a fault each); the page-table walkers and their latency (Table 6.1
    /// of Tanasić's thesis: 1024 entries, 8-way, 70 cycles, 128 MSHRs, 64 walkers, 500 cycles).
    #[serde(default = "d_l2_tlb")]
    pub l2_tlb_entries: u32,
    #[serde(default = "d_tlb_assoc")]
    pub l2_tlb_assoc: u32,
    #[serde(default = "d_l2_latency")]
    pub l2_tlb_latency: u32,
    #[serde(default = "d_l2_tlb_mshrs")]
    pub l2_tlb_mshrs: u32,
    #[serde(default = "d_walkers")]
    pub page_walkers: u32,
    #[serde(default = "d_walk")]
    pub page_walk_latency: u32,
}

/// Where a process's data start, and what a page fault costs (Tanasić's thesis, §6.5.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PagingLink {
    /// Every page is in GPU memory from the start: no page faults.
    #[default]
    Off,
    /// Data start in host memory; a fault costs 12 µs with the data, 10 µs without.
    Nvlink,
    /// As NVLink, over PCIe 3.0: 25 µs and 12 µs.
    Pcie,
}

/// Demand paging.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PagingConfig {
    #[serde(default)]
    pub link: PagingLink,
    /// Bytes migrated per fault: 4096 (a page) or a larger power of two (the thesis: 64 KB).
    #[serde(default = "d_migration")]
    pub migration_bytes: u32,
    /// Override the link's fault latency with a data transfer, and without one (a page the
    /// host never wrote, allocated zero-filled on the GPU), in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_us: Option<f64>,
    /// Local fault handling (Tanasić's thesis §6.4.2): a fault on a unit with no data (never
    /// written by the host) is handled by a handler on the GPU, `local_us` each (the thesis:
    /// 20 µs), all in parallel; units with data still go to the host.
    #[serde(default)]
    pub local: bool,
    #[serde(default = "d_local_us")]
    pub local_us: f64,
}

fn d_local_us() -> f64 {
    20.0
}

impl Default for PagingConfig {
    fn default() -> Self {
        PagingConfig { link: PagingLink::Off, migration_bytes: d_migration(), transfer_us: None, alloc_us: None, local: false, local_us: d_local_us() }
    }
}

impl PagingConfig {
    /// Fault latency with and without the data transfer, in µs (None when paging is off).
    pub fn latencies_us(&self) -> Option<(f64, f64)> {
        let (t, a) = match self.link {
            PagingLink::Off => return None,
            PagingLink::Nvlink => (12.0, 10.0),
            PagingLink::Pcie => (25.0, 12.0),
        };
        Some((self.transfer_us.unwrap_or(t), self.alloc_us.unwrap_or(a)))
    }
}

/// What an SM does when a memory instruction's translation faults (Tanasić's thesis, §6.1, §6.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum FaultScheme {
    /// The baseline: the faulting request waits in the MMU (a very long TLB miss) and is
    /// retried when its page arrives; nothing can be preempted meanwhile.
    #[default]
    Stall,
    /// Warp Disable: a global memory instruction stops its warp fetching until it commits; a
    /// faulting one is squashed and replayed once its page arrives.
    WdCommit,
    /// Warp Disable re-enabling fetch at the instruction's last TLB check.
    WdLastcheck,
    /// The replay queue (§6.3.2): a global memory instruction holds its sources until its last
    /// TLB check; on a fault its warp drains, the faulted instructions are squashed and
    /// replayed, in program order with the warp's unissued ones, once their pages are in.
    Rq,
    /// The operand log with the replay queue (§6.3.3): sources are released at operand read
    /// as in the baseline; a global memory instruction logs its operands and a replay reads
    /// them back from the log.
    Ol,
    /// A naive recovery that is wrong on purpose (§6.2): the baseline pipeline, and on a fault
    /// the faulted instruction is squashed and its warp restarted at its pc. Committed younger
    /// instructions run twice and a replayed load may read a clobbered source.
    Naive,
}

impl FaultScheme {
    /// A scheme that squashes faulting instructions at their fault (the replay queue's
    /// family), on the thesis's pipeline.
    pub fn replays(self) -> bool {
        matches!(self, FaultScheme::Rq | FaultScheme::Ol | FaultScheme::Naive)
    }

    /// The name in configurations and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultScheme::Stall => "stall",
            FaultScheme::WdCommit => "wd-commit",
            FaultScheme::WdLastcheck => "wd-lastcheck",
            FaultScheme::Rq => "rq",
            FaultScheme::Ol => "ol",
            FaultScheme::Naive => "naive",
        }
    }
}

/// Fault injection, for testing the schemes: each global memory instruction's translation
/// faults with probability `rate` (a seeded hash of the SM and its instruction count, so runs
/// are deterministic), its page in `latency` cycles after the fault; nothing migrates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultInjection {
    #[serde(default)]
    pub rate: f64,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "d_inject_latency")]
    pub latency: u32,
}

fn d_inject_latency() -> u32 {
    2000
}

impl Default for FaultInjection {
    fn default() -> Self {
        FaultInjection { rate: 0.0, seed: 0, latency: d_inject_latency() }
    }
}

/// A whole GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Core clock in MHz (the unit of every cycle count).
    pub core_clock_mhz: f64,
    /// SM groups, in SM-number order.
    pub sm: Vec<SmConfig>,
    pub memory: MemConfig,
    /// Demand paging (off: every page resident).
    #[serde(default)]
    pub paging: PagingConfig,
    /// How the SMs take a page fault.
    #[serde(default)]
    pub faults: FaultScheme,
    /// Injected faults (off by default).
    #[serde(default, skip_serializing_if = "FaultInjection::is_off")]
    pub inject: FaultInjection,
    /// Thread-block switching on a fault (off by default).
    #[serde(default, skip_serializing_if = "TbSwitch::is_off")]
    pub tb_switch: TbSwitch,
    /// How the SMs allocate registers, scratchpad and warp slots (`block`: by block, the
    /// occupancy rule; `zorua`: Zorua's coordinator, docs/zorua.md).
    #[serde(default, skip_serializing_if = "Alloc::is_block")]
    pub alloc: Alloc,
    /// Zorua's parameters (Table 1 and the table latency; used under `alloc = "zorua"`).
    #[serde(default, skip_serializing_if = "ZoruaConfig::is_default")]
    pub zorua: ZoruaConfig,
    /// How the kernels are compiled for the run: a register cap and shared-memory spill
    /// slots for the unified allocator (docs/unified.md); absent, as written.
    #[serde(default, skip_serializing_if = "CompileConfig::is_default")]
    pub compile: CompileConfig,
}

/// The register cap and shared-memory spill slots every kernel of a run is placed under by
/// the unified allocator (`mpgpu_ref::unified`; docs/unified.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(deny_unknown_fields, default)]
pub struct CompileConfig {
    /// Registers per thread at most (absent: each kernel as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reg_cap: Option<u32>,
    /// 4-byte shared-memory spill slots per thread (0: every spill in local memory).
    pub spill_slots: u32,
    /// Each kernel at the register cap and spill slots the paper's concurrency search chooses
    /// for this GPU's SMs (`mpgpu_ref::unified::search`; `--reg-cap auto`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

impl CompileConfig {
    pub fn is_default(&self) -> bool {
        *self == CompileConfig::default()
    }

    /// The allocator's budget, if the kernels are capped.
    pub fn budget(&self) -> Option<crate::unified::Budget> {
        self.reg_cap.map(|regs| crate::unified::Budget { regs, slots: self.spill_slots })
    }
}

/// Zorua's parameters: Algorithm 1's constants (Table 1; the paper gives no values, ours are
/// decisions, docs/zorua.md) and the mapping tables' latency (§5.1: 2 cycles per access).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZoruaConfig {
    /// Cycles between threshold updates.
    pub epoch: u64,
    /// The initial threshold, in sixteenths of each resource's physical amount (0..=16).
    pub o_default: u32,
    pub o_thresh_step: u32,
    /// The difference of idle and memory cycles in an epoch that moves the threshold.
    pub c_delta_thresh: u64,
    /// Cycles a mapping-table access adds (registers: every instruction; scratchpad: shared
    /// accesses, again).
    pub table_latency: u32,
    /// The coordinator's timing: `pipelined` (the default: the timing of the RTL, built for
    /// 100 MHz on the ECP5, docs/zorua.md, "Timing") or `single-cycle` (a warp examined, a set
    /// allocated or freed per cycle, an event applied in the cycle it is taken: the first RTL's,
    /// kept for comparison).
    pub timing: CoordTiming,
    /// How a write to a register set in swap reaches memory: `through` (the default: every
    /// write is a line written to memory, the L1's copy updated) or `back` (the register's
    /// line is written whole into the L1 and marked dirty, and written to memory when it is
    /// evicted, as Fermi's L1 keeps local memory, the compiler's register spills).
    /// Scratchpad lines in swap are written through either way (docs/zorua.md, "Swap and
    /// the data path", has both measured).
    pub swap_writes: SwapWrites,
    /// Whether the phase pass renumbers a kernel's registers so that the live ones are the
    /// lowest (`mpgpu_ref::regalloc`) before it places the specifiers, so that a phase's
    /// register count is about the registers live in it, as the paper's specifiers count.
    /// Off by default: on the library it raises the schedulable warps but slows lbm
    /// (docs/zorua.md, "Phase specifiers", has both measured).
    pub renumber: bool,
}

/// How writes to registers in swap reach memory (docs/zorua.md, "Swap and the data path").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum SwapWrites {
    Back,
    #[default]
    Through,
}

/// The coordinator's timing (docs/zorua.md, "Timing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum CoordTiming {
    SingleCycle,
    #[default]
    Pipelined,
}

impl Default for ZoruaConfig {
    fn default() -> Self {
        let t = crate::zorua::ThreshParams::default();
        ZoruaConfig { epoch: t.epoch, o_default: t.o_default, o_thresh_step: t.o_thresh_step, c_delta_thresh: t.c_delta_thresh, table_latency: 2, timing: CoordTiming::Pipelined, swap_writes: SwapWrites::Through, renumber: false }
    }
}

impl ZoruaConfig {
    pub fn is_default(&self) -> bool {
        *self == ZoruaConfig::default()
    }

    pub fn thresh(&self) -> crate::zorua::ThreshParams {
        crate::zorua::ThreshParams { epoch: self.epoch, o_default: self.o_default, o_thresh_step: self.o_thresh_step, o_max: 16, c_delta_thresh: self.c_delta_thresh }
    }
}

/// How an SM allocates its on-chip resources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Alloc {
    /// The baseline: a block gets its whole specification for its whole life (the occupancy
    /// rule).
    #[default]
    Block,
    /// Zorua (Vijaykumar et al., MICRO 2016): per warp and per phase, through the
    /// coordinator and its mapping tables, oversubscribed into swap in global memory.
    Zorua,
    /// A warp-level manager (WLM, Xiang et al., HPCA 2014; the comparison of Zorua §5.2):
    /// each warp gets its block's declared registers when it starts and frees them when it
    /// ends; no phases, no swap.
    Wlm,
}

impl Alloc {
    pub fn is_block(&self) -> bool {
        *self == Alloc::Block
    }

    /// `block`, `zorua` or `wlm`.
    pub fn parse(s: &str) -> Result<Alloc, String> {
        match s {
            "block" => Ok(Alloc::Block),
            "zorua" => Ok(Alloc::Zorua),
            "wlm" => Ok(Alloc::Wlm),
            _ => Err(format!("allocation `{s}`: expected block, zorua or wlm")),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Alloc::Block => "block",
            Alloc::Zorua => "zorua",
            Alloc::Wlm => "wlm",
        }
    }
}

/// Thread-block switching on a fault (Tanasić's thesis §6.4.1, §6.5.3): an SM switches out a
/// block whose warps are all faulted or at a barrier (its context saved through memory) and
/// runs another, up to `extra` blocks per SM off chip; a switched-out block comes back to its
/// SM once its faults are resolved, before any new block. `ideal`: saves and restores take one
/// cycle (the thesis's "1-cycle switch").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TbSwitch {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default = "d_extra")]
    pub extra: u32,
    #[serde(default)]
    pub ideal: bool,
    /// A block is switched out only if its faults will take at least this many more cycles.
    #[serde(default = "d_min_wait")]
    pub min_wait: u32,
}

fn d_extra() -> u32 {
    4
}
fn d_min_wait() -> u32 {
    2000
}

impl Default for TbSwitch {
    fn default() -> Self {
        TbSwitch { enabled: false, extra: d_extra(), ideal: false, min_wait: d_min_wait() }
    }
}

impl TbSwitch {
    pub fn is_off(&self) -> bool {
        !self.enabled
    }
}

impl FaultInjection {
    pub fn is_off(&self) -> bool {
        self.rate == 0.0
    }
}

fn d_schedulers() -> u32 {
    2
}
fn d_policy() -> SchedPolicy {
    SchedPolicy::Gto
}
fn d_reg_round() -> u32 {
    4
}
fn d_ibuffer() -> u32 {
    2
}
fn d_alu_latency() -> u32 {
    4
}
fn d_one() -> u32 {
    1
}
fn d_sfu_latency() -> u32 {
    20
}
fn d_sfu_interval() -> u32 {
    4
}
fn d_shared_latency() -> u32 {
    24
}
fn d_banks() -> u32 {
    32
}
fn d_l1_bytes() -> u32 {
    16384
}
fn d_l1_assoc() -> u32 {
    4
}
fn d_line() -> u32 {
    128
}
fn d_l1_mshrs() -> u32 {
    32
}
fn d_l1_latency() -> u32 {
    28
}
fn d_l1_tlb() -> u32 {
    32
}
fn d_dram_latency() -> u32 {
    200
}
fn d_l2_bytes() -> u32 {
    131072
}
fn d_l2_assoc() -> u32 {
    8
}
fn d_l2_latency() -> u32 {
    70
}
fn d_icnt_latency() -> u32 {
    8
}
fn d_icnt_bytes() -> u32 {
    32
}
fn d_l2_tlb() -> u32 {
    1024
}
fn d_walk() -> u32 {
    500
}
fn d_iq() -> u32 {
    96
}
fn d_fetch() -> u32 {
    4
}
fn d_rq() -> u32 {
    128
}
fn d_oplog() -> u32 {
    8192
}
fn d_tlb_assoc() -> u32 {
    8
}
fn d_l2_tlb_mshrs() -> u32 {
    128
}
fn d_walkers() -> u32 {
    64
}
fn d_migration() -> u32 {
    65536
}

/// A configuration error: the file (if any), the field and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub msg: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config {}: {}", self.file, self.msg)
    }
}

impl std::error::Error for ConfigError {}

/// Bytes a configuration or workload file may hold: hundreds of times any real one, and few
/// enough that parsing one takes tens of MB at most (the TOML parser's document is tens of times
/// the text).
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// An error unless `len` bytes of a `what` file are within [`MAX_FILE_BYTES`].
pub(crate) fn check_size(len: usize, what: &str) -> Result<(), String> {
    if len > MAX_FILE_BYTES {
        return Err(crate::files::too_large(len as u64, &format!("a {what} file"), MAX_FILE_BYTES));
    }
    Ok(())
}

/// The text of the `what` file at `path`, refused without being read whole if it is larger
/// than [`MAX_FILE_BYTES`] (a special file such as /dev/zero included) or not UTF-8.
pub(crate) fn read_capped(path: &Path, what: &str) -> Result<String, String> {
    crate::files::read_text(path, &format!("a {what} file"), MAX_FILE_BYTES).map_err(|e| e.to_string())
}

/// A TOML error as the parser words it (line, column, the line with a caret, the message),
/// with the quoted line cut to a window around the column and the message to a few hundred
/// characters, so that a huge line or value makes a short message.
pub(crate) fn toml_error(text: &str, e: &toml::de::Error) -> String {
    toml_error_at(text, e.message(), e.span().map(|s| s.start))
}

/// [`toml_error`] of message `msg` at byte `at` of `text` (none: the message alone).
fn toml_error_at(text: &str, msg: &str, at: Option<usize>) -> String {
    let msg = crate::text::clip(msg.trim_end(), 300);
    let Some(at) = at else { return msg.into_owned() };
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_no = text[..at].bytes().filter(|&b| b == b'\n').count() + 1;
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line: Vec<char> = text[line_start..line_end].trim_end_matches('\r').chars().map(|c| if c == '\t' { ' ' } else if c.is_control() { '\u{fffd}' } else { c }).collect();
    let col = text[line_start..at].chars().count(); // 0-based
    const WINDOW: usize = 80;
    let (first, last) = if line.len() <= WINDOW + 20 {
        (0, line.len())
    } else {
        let first = col.saturating_sub(WINDOW / 2).min(line.len() - WINDOW);
        (first, first + WINDOW)
    };
    let shown = format!("{}{}{}", if first > 0 { "…" } else { "" }, line[first..last].iter().collect::<String>(), if last < line.len() { "…" } else { "" });
    let caret = col.saturating_sub(first) + usize::from(first > 0);
    let gutter = line_no.to_string().len();
    format!("TOML parse error at line {line_no}, column {}\n{:gutter$} |\n{line_no} | {shown}\n{:gutter$} | {:caret$}^\n{msg}", col + 1, "", "", "")
}

/// `text` with its `base = ...` line blanked (spaces, so that every other place stays where it
/// was).
fn without_base(text: &str) -> String {
    #[derive(Deserialize)]
    struct Base {
        base: Option<toml::Spanned<toml::Value>>,
    }
    let Ok(Base { base: Some(b) }) = toml::from_str::<Base>(text) else {
        return text.to_string();
    };
    let from = text[..b.span().start].rfind('\n').map_or(0, |i| i + 1);
    let mut out = text.as_bytes().to_vec();
    for c in &mut out[from..b.span().end] {
        if *c != b'\n' {
            *c = b' ';
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Puts `top`'s fields over `base`'s: a table into a table field by field, an array of tables
/// into an array of tables element by element, anything else in place of what was there.
fn overlay(base: &mut toml::Table, top: toml::Table) {
    use toml::Value;
    for (k, v) in top {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(t)) => overlay(b, t),
            (Some(Value::Array(b)), Value::Array(t)) if b.iter().chain(&t).all(Value::is_table) => {
                for (i, t) in t.into_iter().enumerate() {
                    match (b.get_mut(i), t) {
                        (Some(Value::Table(bt)), Value::Table(tt)) => overlay(bt, tt),
                        (_, t) => b.push(t),
                    }
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The preset names and their TOML text.
pub const PRESETS: &[(&str, &str)] = &[
    ("gtx480", include_str!("../configs/gtx480.toml")),
    ("fermi15", include_str!("../configs/fermi15.toml")),
    ("kepler15", include_str!("../configs/kepler15.toml")),
    ("maxwell15", include_str!("../configs/maxwell15.toml")),
    ("k20c", include_str!("../configs/k20c.toml")),
    ("thesis16", include_str!("../configs/thesis16.toml")),
    ("thesis32", include_str!("../configs/thesis32.toml")),
    ("heterocore", include_str!("../configs/heterocore.toml")),
    ("full", include_str!("../configs/full.toml")),
];

/// Which resource limits a kernel's blocks per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limiter {
    Blocks,
    Threads,
    Warps,
    Registers,
    Shared,
}

/// Blocks of one kernel an SM can hold, by the occupancy rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Occupancy {
    pub blocks: u32,
    pub limiter: Limiter,
    /// Shared-memory configuration the SM is set to for this kernel.
    pub shared_config: u32,
}

/// What Zorua's coordinator is sized by (`units::zorua::Geometry::of`).
impl crate::units::zorua::SmResources for SmConfig {
    fn registers(&self) -> u32 {
        self.registers
    }
    fn shared_bytes(&self) -> u32 {
        self.shared_bytes
    }
    fn warp_slots(&self) -> u32 {
        self.warps
    }
}

impl SmConfig {
    /// Registers one block of the kernel takes: registers per thread rounded up to `reg_round`,
    /// for every thread of its warps.
    pub fn block_registers(&self, f: &Footprint) -> u32 {
        let warps = f.threads_per_block.div_ceil(32);
        f.regs_per_thread.div_ceil(self.reg_round) * self.reg_round * warps * 32
    }

    /// The shared-memory configuration for a kernel using `per_block` bytes per block.
    pub fn shared_config_for(&self, per_block: u32) -> u32 {
        self.shared_configs.iter().copied().find(|&c| c >= per_block).unwrap_or(self.shared_bytes)
    }

    /// The occupancy rule: blocks per SM = the minimum over every resource of what it holds
    /// (ties are reported in the order blocks, threads, warps, registers, shared).
    pub fn occupancy(&self, f: &Footprint) -> Occupancy {
        let shared_config = self.shared_config_for(f.shared_per_block);
        self.occupancy_of(self.block_registers(f), f.shared_per_block, f.threads_per_block.div_ceil(32), shared_config)
    }

    /// The rule on per-block totals: registers, shared bytes and warps of one block, with the
    /// shared-memory configuration in force.
    pub fn occupancy_of(&self, regs: u32, shared: u32, warps: u32, shared_config: u32) -> Occupancy {
        let limits = [
            (Limiter::Blocks, self.blocks),
            (Limiter::Threads, self.threads / (warps * 32).max(1)),
            (Limiter::Warps, self.warps / warps.max(1)),
            (Limiter::Registers, if regs == 0 { u32::MAX } else { self.registers / regs }),
            (Limiter::Shared, if shared == 0 { u32::MAX } else { shared_config / shared }),
        ];
        let (limiter, blocks) = limits.iter().copied().min_by_key(|l| l.1).unwrap();
        Occupancy { blocks, limiter, shared_config }
    }
}

impl GpuConfig {
    /// A preset by name.
    pub fn preset(name: &str) -> Option<GpuConfig> {
        PRESETS.iter().find(|p| p.0 == name).map(|p| {
            let c = GpuConfig::parse(&format!("preset {name}"), p.1).unwrap_or_else(|e| panic!("built-in preset is invalid: {e}"));
            c
        })
    }

    /// A preset name, or else a TOML file path.
    pub fn from_arg(arg: &str) -> Result<GpuConfig, ConfigError> {
        match GpuConfig::preset(arg) {
            Some(c) => Ok(c),
            None if arg.ends_with(".toml") || Path::new(arg).exists() => GpuConfig::load(Path::new(arg)),
            None => Err(ConfigError {
                file: arg.into(),
                msg: format!(
                    "no such preset or file (presets: {})",
                    PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }

    /// Reads, parses and validates a configuration file of at most [`MAX_FILE_BYTES`].
    pub fn load(path: &Path) -> Result<GpuConfig, ConfigError> {
        let file = path.display().to_string();
        let text = read_capped(path, "configuration").map_err(|msg| ConfigError { file: file.clone(), msg })?;
        GpuConfig::parse(&file, &text)
    }

    /// Parses and validates TOML text (at most [`MAX_FILE_BYTES`]); `file` names it in errors.
    ///
    /// A configuration may start from a preset: `base = "fermi15"` takes the preset's fields,
    /// and the file's replace them, table by table (an `[[sm]]` group's fields replace those of
    /// the preset's group at the same place; a group past the preset's is added).
    pub fn parse(file: &str, text: &str) -> Result<GpuConfig, ConfigError> {
        let err = |msg: String| ConfigError { file: file.into(), msg };
        check_size(text.len(), "configuration").map_err(err)?;
        let mut v: toml::Table = toml::from_str(text).map_err(|e| err(toml_error(text, &e)))?;
        let c: GpuConfig = match v.remove("base") {
            None => toml::from_str(text).map_err(|e| err(toml_error(text, &e)))?,
            Some(b) => {
                let names = || PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ");
                let b = b.as_str().ok_or_else(|| err(format!("field `base`: {b} is not a preset's name (presets: {})", names())))?;
                let (_, base) = PRESETS.iter().find(|p| p.0 == b).ok_or_else(|| err(format!("field `base`: no preset `{b}` (presets: {})", names())))?;
                let mut merged: toml::Table = toml::from_str(base).expect("a preset's TOML");
                overlay(&mut merged, v);
                toml::Value::Table(merged).try_into().map_err(|e: toml::de::Error| {
                    // (the merged table has no places: a bad field of the file's own is found
                    // again in its text, where the reader visits every field it gives before
                    // it misses one the preset gives)
                    match toml::from_str::<GpuConfig>(&without_base(text)) {
                        Err(own) if !own.message().starts_with("missing field") => err(toml_error(text, &own)),
                        // (else the place of the value the message quotes, if the file has it)
                        _ => {
                            let m = e.message();
                            let quoted = m.split(['`', '"']).nth(1).filter(|q| !q.is_empty());
                            match quoted.and_then(|q| text.find(q)) {
                                Some(at) => err(toml_error_at(text, &format!("over the preset `{b}`: {m}"), Some(at))),
                                None => err(format!("field `base`: over the preset `{b}`: {}", crate::text::clip(m, 300))),
                            }
                        }
                    }
                })?
            }
        };
        c.validate().map_err(err)?;
        Ok(c)
    }

    /// Total number of SMs (of a validated configuration: at most 256).
    pub fn num_sms(&self) -> u32 {
        self.sm.iter().map(|g| g.count).sum()
    }

    /// The configuration of SM number `sm`.
    pub fn sm_config(&self, sm: u32) -> &SmConfig {
        let mut n = sm;
        for g in &self.sm {
            if n < g.count {
                return g;
            }
            n -= g.count;
        }
        panic!("SM {sm} out of range")
    }

    /// DRAM bytes per core cycle, over all channels.
    pub fn dram_bytes_per_cycle(&self) -> f64 {
        self.memory.dram_bandwidth_gbs * 1e9 / (self.core_clock_mhz * 1e6)
    }
}
