//! The SM timing model.
//!
//! Capacity: block slots, warp slots, threads, registers and shared memory, allocated per block
//! by the occupancy rule of the configuration; blocks of different kernels may share an SM.
//!
//! Pipeline, per warp-instruction: **fetch** fills a warp's instruction buffer (one warp per
//! scheduler per cycle, round robin); **issue** (one warp-instruction per scheduler per cycle,
//! GTO or loose round-robin) checks the scoreboard (no pending write to any register the
//! instruction reads or writes) and the functional unit; **operand read** is the cycle after
//! issue; **execute** takes the unit's latency (ALU per scheduler, SFU per SM, with initiation
//! intervals); memory instructions go through **address generation and the TLB check** (the
//! L1 TLB always hits for now, `l1_tlb_latency`), then the **memory** stage: shared memory with
//! bank conflicts, parameters from the constant cache, global and local accesses coalesced into
//! lines through the L1 (MSHRs, write-evict for stores) to the memory system; **writeback**
//! writes the result and releases the scoreboard. Out-of-order completion: a warp keeps
//! issuing independent instructions past an outstanding load.
//!
//! Data moves at those stages, on real values (see `docs/timing.md`, "Data and time"): every
//! issued instruction has a record (`Rec`) until it completes; the issue stage does only
//! control flow (branches, `exit`, barriers) and moves the pc; the operand-read stage reads the
//! sources into the record, and the execute stage computes the result there; a load's lanes
//! are read from memory when the memory stage performs its line (an L1 hit at its L1 access,
//! a miss when its L2 slice performs the read), a store's written when its L2 slice performs
//! it, an atomic's read-modify-write done there too; shared memory in the last cycle of its
//! access; the register file is written at writeback. A store stays in flight until every line
//! is acknowledged, and `membar` waits for the warp's loads, stores and atomics.

use super::memsys::{MemReq, MemSys, ReqKind};
use super::mmu::{L1Tlb, NotOwned};
use crate::mem::PAGE_BYTES;
use super::cache::TagArray;
use crate::config::{FaultScheme, Pipeline, SchedPolicy, SmConfig};
use crate::exec::{self, BlockCtx, Event, Fault, FaultKind, Flight, Warp, WarpState};
use crate::kernel::Launch;
use crate::mem::GlobalMem;
use mpgpu_spec::isa::{Class, Inst, Op, Space, WARP_SIZE};
use mpgpu_spec::Unit;
use rustc_hash::FxHashMap as HashMap;
use super::wheel::Wheel;
use std::collections::VecDeque;
use std::sync::Arc;

mod zorua;
pub use zorua::{ZoruaStats, REG_SWAP_BYTES, SMEM_SWAP_BYTES};

/// Scoreboard bits: general registers 0..255, predicates 256..263.
pub type RegMask = [u64; 5];

fn bit(m: &mut RegMask, b: usize) {
    m[b / 64] |= 1 << (b % 64);
}

fn any(a: &RegMask, b: &RegMask) -> bool {
    (0..5).any(|i| a[i] & b[i] != 0)
}

/// Per-instruction facts the timing model needs, computed once per kernel.
#[derive(Debug)]
pub struct KernelTiming {
    /// Registers read or written (the scoreboard check covers both: RAW and WAW).
    pub touches: Vec<RegMask>,
    /// The register or predicate written, as a scoreboard bit.
    pub writes: Vec<Option<u16>>,
    /// Registers and predicates read (guard included).
    pub reads: Vec<RegMask>,
    pub class: Vec<Class>,
    /// Operand-log entries a global load, store or atomic takes (0: not a global access, it
    /// cannot fault): a load its addresses, a store its addresses and data, an atomic its
    /// addresses and operand, a compare-and-swap both operands (docs/faults.md O3, O10).
    pub log_need: Vec<u8>,
}

impl KernelTiming {
    pub fn new(k: &crate::kernel::Kernel) -> KernelTiming {
        let mut touches = Vec::with_capacity(k.code.len());
        let mut writes = Vec::with_capacity(k.code.len());
        let mut reads = Vec::with_capacity(k.code.len());
        for i in &k.code {
            let mut m = [0u64; 5];
            for r in i.src_regs() {
                bit(&mut m, r as usize);
            }
            if let Some(g) = i.guard {
                bit(&mut m, 256 + g.pred as usize);
            }
            let w = match i.op {
                Op::Setp { d, .. } => Some(256 + d as u16),
                Op::Pred { d, a, b, .. } => {
                    bit(&mut m, 256 + a as usize);
                    bit(&mut m, 256 + b as usize);
                    Some(256 + d as u16)
                }
                Op::Selp { p, .. } => {
                    bit(&mut m, 256 + p as usize);
                    i.dst_reg().map(|r| r as u16)
                }
                _ => i.dst_reg().map(|r| r as u16),
            };
            reads.push(m);
            if let Some(b) = w {
                bit(&mut m, b as usize);
            }
            touches.push(m);
            writes.push(w);
        }
        let log_need = k.code.iter().map(log_need).collect();
        KernelTiming { touches, writes, reads, class: k.code.iter().map(Inst::class).collect(), log_need }
    }
}

/// A launch as the SMs see it.
#[derive(Debug)]
pub struct LaunchInfo {
    pub id: usize,
    /// The process (its address space).
    pub process: u16,
    pub launch: Launch,
    pub timing: KernelTiming,
}

/// Why a scheduler did not issue in a cycle (index 0 counts issue cycles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Stall {
    Issued = 0,
    /// No warp assigned.
    Idle,
    /// Waiting for a load or atomic.
    Memory,
    /// Waiting for an ALU or SFU result.
    Dependency,
    Barrier,
    /// The functional unit or the MSHRs are busy.
    Unit,
    /// The instruction buffer is empty (fetch, branch resolution).
    Fetch,
}

pub const STALL_NAMES: [&str; 7] = ["issued", "idle", "memory", "dependency", "barrier", "unit", "fetch"];

/// Counters of one SM.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SmStats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    /// Scheduler-cycles by outcome, indexed by [`Stall`].
    pub stalls: [u64; 7],
    /// Sum over cycles of resident warps (achieved occupancy = this / cycles / warp slots).
    pub warp_cycles: u64,
    /// Of which warps waiting at a barrier (resident warps not at a barrier are the block
    /// allocation's schedulable warps, Zorua §6.4).
    pub barrier_warp_cycles: u64,
    pub blocks_done: u64,
    pub l1_hits: u64,
    pub l1_misses: u64,
    /// Cycles the SM was stepped (awake); the others it slept through.
    pub awake_cycles: u64,
    /// Most different launches (kernels) resident at once (intra-SM sharing when above 1).
    pub max_kernels_resident: u32,
    pub shared_conflict_cycles: u64,
    /// Register writebacks that overwrote a source register of an older load, store or atomic
    /// of the same warp still in flight: the write-after-read hazard that early source release
    /// allows (Tanasić's thesis, §6.2, Fig. 6.3), harmless unless that instruction is replayed.
    pub war_overwrites: u64,
    /// Global memory instructions whose translation faulted (a line's page was in host
    /// memory), and under Warp Disable those squashed (each is replayed once its page is in).
    pub faulted_insts: u64,
    pub squashed: u64,
    /// Warp-cycles with a faulted instruction outstanding (a warp counts once however many).
    pub faulted_warp_cycles: u64,
    /// Replay queue and operand log: instructions issued again from the replay queue, and
    /// issue attempts of global memory instructions refused because the replay queue was full
    /// or their block's log partition had too few free entries.
    pub replayed: u64,
    pub rq_full: u64,
    pub log_full: u64,
    /// The operand log's data array (`docs/faults.md` O11): entries written and read through
    /// its ports, issue attempts refused because its write queue had too few places left
    /// (also counted in `log_full`), and cycles a replay waited at issue for its entries.
    pub ol_writes: u64,
    pub ol_reads: u64,
    /// (of which for context saves)
    pub ol_save_reads: u64,
    pub ol_queue_full: u64,
    pub ol_replay_wait: u64,
    /// Queued instructions saved with a block's context (replay-queue contents).
    pub saved_queued: u64,
    /// Thread-block switching on a fault: blocks switched out, and back in.
    pub switched_out: u64,
    pub switched_in: u64,
}

/// Resident and faulted warp-cycles of one SM over time, in bins (for the active-warp
/// timeline of Tanasić's thesis, Fig. 6.2). A bin is `width` cycles; the width doubles when
/// the run outgrows `MAX_BINS`, so memory stays bounded.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Timeline {
    pub width: u64,
    /// (resident, faulted) warp-cycles per bin.
    pub bins: Vec<(u64, u64)>,
}

const MAX_BINS: usize = 1024;

impl Timeline {
    pub fn new() -> Timeline {
        Timeline { width: 1000, bins: Vec::new() }
    }

    /// Merges bins until they are `width` cycles wide (a power-of-two multiple of the current).
    pub fn widen(&mut self, width: u64) {
        while self.width < width {
            self.width *= 2;
            self.bins = self.bins.chunks(2).map(|c| c.iter().fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1))).collect();
        }
    }

    /// Adds `w` warps over cycles `[a, b)` to the resident (`faulted` false) or faulted count.
    fn add(&mut self, a: u64, b: u64, w: u64, faulted: bool) {
        if b <= a || w == 0 {
            return;
        }
        while (b - 1) / self.width >= MAX_BINS as u64 {
            self.widen(self.width * 2);
        }
        let last = ((b - 1) / self.width) as usize;
        if self.bins.len() <= last {
            self.bins.resize(last + 1, (0, 0));
        }
        let mut t = a;
        while t < b {
            let k = (t / self.width) as usize;
            let end = ((k as u64 + 1) * self.width).min(b);
            let v = (end - t) * w;
            if faulted {
                self.bins[k].1 += v;
            } else {
                self.bins[k].0 += v;
            }
            t = end;
        }
    }
}

struct HwWarp {
    w: Warp,
    block: u32,
    pending: RegMask,
    /// Pending writes that come from memory (for the stall breakdown).
    pending_mem: RegMask,
    next_issue: u64,
    ibuf: u32,
    /// Instructions in flight (issued, not yet written back or acknowledged); the block cannot
    /// be captured, nor end, while any remain.
    inflight: u32,
    /// Of those, global and local loads, stores and atomics (`membar` waits for none to
    /// remain), with their records.
    mem_recs: Vec<u32>,
    /// Queued for fetch.
    in_fetch: bool,
    /// Its block is frozen (draining for a context switch).
    frozen: bool,
    /// The MSHRs this warp's next load needed when it was refused for lack of them; it is not
    /// considered again until that many are free.
    mshr_need: Option<u32>,
    /// Scoreboard mask and class of the next instruction (cached from the kernel's tables).
    next_touch: RegMask,
    next_class: Class,
    /// Warp Disable (commit): the global memory instruction whose commit re-enables fetch.
    wd_wait: Option<u32>,
    /// The L1 access cycle of the warp's latest global line: a younger instruction's lines
    /// come no earlier (a warp's global requests reach the L1 in issue order).
    mem_order: u64,
    /// The warp has a faulted instruction outstanding until this cycle.
    fault_until: u64,
    /// Thesis pipeline: fetched instructions not yet issued, oldest first; fetch is stopped
    /// behind a memory or control-flow instruction (`fetch_gated`) and allowed again from
    /// `fetch_at`; the sources of the instructions issued in the last two cycles, not yet
    /// released (read at operand read, visible to issue the cycle after).
    iq: VecDeque<IqEntry>,
    fetch_gated: bool,
    fetch_at: u64,
    src_hold: [(u64, RegMask); 2],
    /// Replay-queue schemes: the next fetched instruction's age (its sequence number in the
    /// warp); the sources of issued global memory instructions, held until their last TLB
    /// check (replay queue) as (cycle, registers); the latest last TLB check of the warp's
    /// issued global memory instructions (a barrier or exit waits past it); and the cycle the
    /// warp may issue and fetch again after a fault (its faulted instructions' pages are in).
    age: u32,
    mem_hold: Vec<(u64, RegMask)>,
    check_until: u64,
    resume_at: u64,
    /// The latest last TLB check of the warp's issued global stores and atomics: a younger
    /// global access waits past it (a faulted store is replayed later, and nothing younger may
    /// reach its address first), and a younger store or atomic waits past `check_until`.
    store_check: u64,
}

/// A fetched instruction in the unified issue queue: its pc, the warp's active lanes when it
/// was fetched, and the first cycle it may issue.
#[derive(Clone, Copy, Debug)]
struct IqEntry {
    pc: u32,
    active: u32,
    ready_at: u64,
    /// Its age in the warp (program order).
    age: u32,
    /// A faulted instruction to replay: its replay-queue slot, if it still holds one (a
    /// context restore gives it none: it takes one again when it issues).
    replay: Option<u16>,
    /// A faulted instruction: `active` are the lanes it executed in (its guard is not read
    /// again), and under the operand log `log` are its entries (`nlog`), which hold its
    /// operands.
    fixed: bool,
    log: [u16; 3],
    nlog: u8,
    /// A faulted instruction restored with its block's context whose logged operands wait in
    /// the SM's staging store (`log` names them there) until it issues and takes entries of its
    /// block's reservation again.
    staged: bool,
}

/// A fetched, unissued instruction of a warp saved with its block's context under the replay
/// queue or operand log (the replay queue's contents: Tanasić's thesis §6.3.2): its pc, lanes
/// and age, whether it is a faulted one to replay, and its logged operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedEntry {
    pub pc: u32,
    pub active: u32,
    pub age: u32,
    pub fixed: bool,
    pub log: Vec<[u32; WARP_SIZE]>,
}

/// One of an SM's per-SM units (the operand log's bookkeeping, the replay queue) with the
/// requests of the cycle it is in: requests made during a cycle gather into one input word,
/// which the unit samples at that cycle's edge.
pub struct UnitPort<S: ?Sized + Unit> {
    pub unit: Box<S>,
    pub pending: S::In,
    /// The cycle of the pending requests.
    pub at: u64,
}

impl<S: ?Sized + Unit> UnitPort<S>
where
    S::In: Default,
{
    fn new(unit: Box<S>) -> Self {
        UnitPort { unit, pending: Default::default(), at: 0 }
    }

    /// Clocks the unit on the requests of a cycle before `now`, if there were any (a cycle
    /// without requests changes nothing, so it is not clocked), timing it at that cycle;
    /// returns them. The caller then asks the unit whether it halted and moves it to `now`.
    fn edge(&mut self, now: u64) -> Option<S::In> {
        if self.at >= now || self.pending == Default::default() {
            // (the outputs read from now on are read in this cycle or later)
            self.unit.at_cycle(now);
            return None;
        }
        let i = std::mem::take(&mut self.pending);
        self.unit.at_cycle(self.at);
        self.unit.clock(&i);
        Some(i)
    }

    /// Whether requests wait for their edge.
    fn pending(&self) -> bool {
        self.pending != Default::default()
    }

    /// Adds a request of cycle `now` to the input; returns the outputs with it.
    fn request(&mut self, sm: u32, what: &str, now: u64, f: impl FnOnce(&mut S::In)) -> S::Out {
        assert!(self.at == now || !self.pending(), "SM {sm}: {what} requests of cycle {} not sampled before cycle {now}", self.at);
        self.at = now;
        f(&mut self.pending);
        self.unit.outputs(&self.pending)
    }
}

type OlPort = UnitPort<dyn crate::units::oplog::OplogSlot>;
type RqPort = UnitPort<dyn crate::units::rq::ReplaySlot>;
type OdPort = UnitPort<dyn crate::units::oldata::OldataSlot>;

/// Where an entry read from the operand log's data array goes when it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OlRead {
    /// A context save's (`Sm::ol_saved`).
    Save,
    /// The replay being loaded (`Sm::ol_rbuf`), its `j`th entry.
    Replay(u8),
}

/// The replay whose logged operands are being read out of the array before it issues: its
/// warp slot and age, its entries, and those that have arrived.
#[derive(Clone, Debug)]
struct ReplayLoad {
    slot: u32,
    age: u32,
    log: [u16; 3],
    nlog: u8,
    got: u8,
    /// The cycle its last entry arrived.
    loaded_at: u64,
    data: [[u32; WARP_SIZE]; 3],
}

/// Cycles a loaded replay keeps the load buffer while it cannot issue, once another replay is
/// due (`docs/faults.md` O11).
const OL_HOLD: u64 = 4;

/// The warp's oldest replay: the one that issues next of its replays.
fn oldest_replay(w: &HwWarp) -> Option<&IqEntry> {
    w.iq.iter().find(|e| e.replay.is_some())
}

/// The cycle from which replay `e` of warp `w` has its logged operands read out of the array:
/// two cycles before it may issue.
fn ol_load_from(w: &HwWarp, e: &IqEntry) -> u64 {
    e.ready_at.max(w.resume_at).saturating_sub(2)
}

/// A class that stops fetch until the instruction commits (control flow, barriers) and issues
/// only as its warp's oldest.
fn ctrl_like(c: Class) -> bool {
    matches!(c, Class::Control | Class::Barrier)
}

/// A class that stops fetch until the instruction issues.
fn mem_like(c: Class) -> bool {
    matches!(c, Class::Mem(_) | Class::Atomic | Class::Fence)
}

struct Block {
    info: Arc<LaunchInfo>,
    ctaid: [u32; 3],
    shared: Vec<u32>,
    warp_slots: Vec<u32>,
    /// Warps that have not exited.
    running: u32,
    at_barrier: u32,
    regs: u32,
    threads: u32,
    shared_bytes: u32,
    /// Issue stopped (for a context switch): its warps issue nothing until it is captured.
    frozen: bool,
    /// Its context is still being restored: its warps issue nothing, and it cannot be captured,
    /// until [`Sm::resume_block`].
    restoring: bool,
}

struct Sched {
    /// Warp slots assigned to this scheduler, oldest first.
    warps: Vec<u32>,
    last: Option<u32>,
    /// Warps whose instruction buffer has room, in the order they asked.
    fetch: VecDeque<u32>,
    reason: Stall,
    /// No warp can become eligible before this cycle unless an event (writeback, fetch, new
    /// warp, barrier release, freed MSHR) says otherwise; the scan is skipped until then.
    wake: u64,
}

/// An instruction in flight, from issue to writeback (a store: to its last acknowledgement).
struct Rec {
    warp: u32,
    bslot: u32,
    /// Its data: operands read, result produced.
    f: Flight,
    /// The scoreboard bit its writeback releases.
    write: Option<u16>,
    /// The memory space of a load, store or atomic.
    space: Option<Space>,
    store: bool,
    /// Lines still to arrive (loads, atomics) or to be acknowledged (stores).
    outstanding: u32,
    /// Lines of a global or local access not yet performed (none may remain when it
    /// completes: a checked invariant).
    unperformed: u32,
    /// A load's writeback comes no earlier than this (its L1 hits).
    ready_at: u64,
    /// The L1 line of each lane (global and local accesses).
    lane_line: [u32; WARP_SIZE],
    /// Replay-queue schemes: its slot, its operand-log entries, whether its operands come from
    /// the log (a replay under the operand log), and its age in the warp.
    rq: Option<u16>,
    log: [u16; 3],
    nlog: u8,
    from_log: bool,
    age: u32,
}

impl Rec {
    /// The executing lanes whose access falls in `line`.
    fn lanes_on(&self, line: u32) -> u32 {
        let mut m = 0;
        for l in 0..WARP_SIZE {
            m |= ((self.lane_line[l] == line) as u32) << l;
        }
        m & self.f.exec
    }
}

/// The SM's own timed events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum SmEv {
    /// The instruction's writeback: its result goes to the warp, the scoreboard is released.
    Writeback(u32),
    /// The L1 access of one line (`.1`) of a load that hits, of a load joining a miss whose read
    /// has already been performed, or of a local access: its lanes are performed now.
    Access(u32, u32),
    /// A shared-memory access ends: performed, then written back.
    Shared(u32),
    /// A global line whose translation came late makes its L1 access now (`.2`: what kind).
    Line(u32, u32, LineKind),
    /// A late line of a load hit in the L1: it has arrived.
    LineDone(u32),
    /// Replay-queue schemes: the instruction's translation faults now; it is squashed.
    Fault(u32),
    /// An operand-log entry is freed (its instruction's last TLB check succeeded).
    LogFree(u16),
    /// Zorua: a swap line the warp in this slot reads has hit in the L1 and arrived.
    SwapHit(u32),
}

/// What the memory side says about issuing an instruction ([`Sm::prepare_memory`]).
enum Prep {
    Go,
    /// The MSHRs cannot take the load now.
    Refused,
    /// Warp Disable squashed it: its page is in at this cycle.
    Squashed(u64),
    /// Replay-queue schemes: it issues and faults at `.0`, its page in at `.1`.
    Faulting(u64, u64),
}

/// What a line of a global or local access does at the L1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LineKind {
    Load,
    /// A store writing this many bytes of the line.
    Store(u32),
    Atomic,
}

/// An L1 miss-status holding register: one line on its way from memory.
#[derive(Default)]
struct Mshr {
    line: u32,
    /// Loads waiting for the line, with the cycle of their L1 access.
    waiters: Vec<(u32, u64)>,
    /// Its read has been performed at the L2: a load joining later takes its data at its own
    /// L1 access.
    performed: bool,
    /// A store or atomic of this SM to the line came after it: no later load joins it, and its
    /// data do not enter the L1.
    stale: bool,
}

/// A block's whole architectural state, for context switching and migration.
#[derive(Clone, Debug)]
pub struct BlockContext {
    pub info: Arc<LaunchInfo>,
    pub ctaid: [u32; 3],
    pub shared: Vec<u32>,
    /// Every warp's state: pcs, reconvergence stacks, registers, predicates, local memory,
    /// barrier state (a warp waiting at `bar.sync` is in `WarpState::AtBarrier`).
    pub warps: Vec<Warp>,
    /// Under the replay queue: each warp's fetched, unissued instructions, oldest first (the
    /// replay queue's contents, with the operand log's entries of faulted ones), and each
    /// warp's next fetch age. Empty when no warp has any (and always under other schemes).
    pub queued: Vec<Vec<SavedEntry>>,
    pub ages: Vec<u32>,
}

/// An execution fault inside the timing model, with its location.
#[derive(Clone, Debug)]
pub struct SmFault {
    pub launch: usize,
    pub ctaid: [u32; 3],
    pub warp: u32,
    pub fault: Fault,
}

/// Request tags: the top three bits say what the request is for, the rest index a record or an
/// MSHR. A read for an L1 miss has none of them (its MSHR's index).
const ATOMIC_TAG: u32 = 1 << 31;
/// Context save and restore traffic: the SM only needs it for the traffic.
pub const CONTEXT_TAG: u32 = 1 << 30;
const STORE_TAG: u32 = 1 << 29;
const KIND_MASK: u32 = 0b111 << 29;

/// The transfer a context-traffic tag (`CONTEXT_TAG | transfer`) belongs to.
pub fn context_xfer(tag: u32) -> Option<u32> {
    (tag & KIND_MASK == CONTEXT_TAG).then_some(tag & !KIND_MASK)
}
/// Addresses of local memory in the cache model (local data lives in the warp state).
const LOCAL_BASE: u32 = 0xC000_0000;

/// The SM's scalar timing parameters (a copy of the configuration's, for the issue path).
#[derive(Clone, Copy, Debug)]
struct Lat {
    warps: u32,
    alu_latency: u32,
    alu_interval: u32,
    sfu_latency: u32,
    sfu_interval: u32,
    shared_latency: u32,
    shared_banks: u32,
    l1_latency: u32,
    l1_line: u32,
    l1_mshrs: u32,
    l1_tlb_latency: u32,
}

pub struct Sm {
    /// The L1 TLB.
    pub tlb: L1Tlb,
    /// What the SM does on a page fault.
    pub scheme: FaultScheme,
    /// Addresses are translated (false: an ideal MMU, every translation an L1 TLB hit).
    pub vm: bool,
    /// The thesis's pipeline (unified issue queue, out-of-order issue within a warp).
    ooo: bool,
    /// Entries in use in the unified issue queue, and the warp slot the next fetch looks at
    /// first.
    iq_used: u32,
    fetch_rr: u32,
    /// The warp that issued last (greedy-then-oldest over the unified queue).
    ooo_last: Option<u32>,
    /// Resident and faulted warps over time (kept when demand paging is on).
    pub timeline: Option<Timeline>,
    pub id: u32,
    cfg: SmConfig,
    lat: Lat,
    pub used_threads: u32,
    pub used_warps: u32,
    pub used_regs: u32,
    pub used_shared: u32,
    pub used_blocks: u32,
    /// Shared-memory configuration in force (set by the first block on an empty SM).
    pub shared_cap: u32,
    blocks: Vec<Option<Block>>,
    warps: Vec<Option<HwWarp>>,
    scheds: Vec<Sched>,
    alu_free: Vec<u64>,
    sfu_free: u64,
    ldst_free: u64,
    l1: TagArray,
    mshrs: Vec<Mshr>,
    free_mshrs: Vec<u32>,
    /// The MSHR a load missing on a line joins.
    mshr_of_line: HashMap<u32, u32>,
    mshrs_used: u32,
    /// Instructions in flight (reused; `free_recs` lists the free ones).
    recs: Vec<Rec>,
    free_recs: Vec<u32>,
    /// Instructions issued in the previous cycle, for the operand-read stage.
    oread: Vec<u32>,
    /// Writebacks and accesses, by cycle.
    events: Wheel<SmEv>,
    drained: Vec<SmEv>,
    pub stats: SmStats,
    /// Blocks finished since the GPU last looked: launch ids.
    pub finished: Vec<usize>,
    /// Cycle up to which stall reasons and occupancy have been accounted.
    accounted: u64,
    /// The SM does nothing before this cycle unless woken.
    pub wake_at: u64,
    /// Skip scheduler scans that cannot issue (false: scan every scheduler every cycle; the
    /// results are the same, which a test checks).
    pub lazy: bool,
    /// The replay queue (under `rq` and `ol`): the unit that holds a slot for each issued
    /// global memory instruction (docs/faults.md O6, "The replay queue in RTL"), and the slots
    /// in use (for reports).
    rq: Option<std::cell::RefCell<RqPort>>,
    rq_used: u32,
    /// The replay queue contradicted the SM (only a broken unit can): the first time, which
    /// stops the run at the unit's next edge.
    rq_error: Option<(u64, String)>,
    /// The operand log (under `ol`): its data array (`od`, entry: one operand of each lane,
    /// one entry written and one read per cycle), the queue of writes in front of it and the
    /// places reserved in it by instructions issued and not yet at operand read, the read of
    /// the last cycle, the replay being loaded and the entries a context save has read
    /// (`docs/faults.md` O11); and its bookkeeping unit, which keeps the blocks' quotas, the
    /// free list and which entries are in use.
    od: Option<std::cell::RefCell<OdPort>>,
    ol_wq: VecDeque<(u8, [u32; WARP_SIZE])>,
    ol_wq_res: u8,
    ol_rd: Option<(u8, OlRead)>,
    ol_rbuf: Option<ReplayLoad>,
    ol_saved: Vec<Option<[u32; WARP_SIZE]>>,
    /// Reads are wanted (a save or a replay to load): the SM looks again next cycle.
    ol_more: bool,
    /// No replay can be loaded before this cycle (a new one, or the one loaded leaving, says
    /// otherwise).
    ol_load_at: u64,
    /// The warp slot the next replay load looks at first (round robin).
    ol_rr: u32,
    /// Restored logged operands waiting for their instruction to issue (`IqEntry::staged`).
    ol_staged: Vec<Option<[u32; WARP_SIZE]>>,
    ol: Option<std::cell::RefCell<OlPort>>,
    /// The operand log's last edge claimed or unclaimed a quota.
    pub ol_room_changed: bool,
    /// Its unclaimed entries after its last edge.
    ol_pool: u8,
    /// Fault injection, and the global memory instructions translated so far.
    pub inject: crate::config::FaultInjection,
    inject_n: u64,
    /// Counters bumped while looking for an instruction to issue.
    rq_full: std::cell::Cell<u64>,
    log_full: std::cell::Cell<u64>,
    ol_queue_full: std::cell::Cell<u64>,
    ol_wait: std::cell::Cell<u64>,
    /// A warp faulted or an instruction completed: thread-block switching looks again.
    pub tb_check: bool,
    /// Under Zorua or WLM: the coordinator's room for blocks (`slot_room`) changed, so a block
    /// the dispatcher found no room for may fit now.
    pub room_changed: bool,
    /// Thread-block switching on faults is on, switching out blocks whose faults take at
    /// least this many more cycles (the blocks whose logged operands are read out for a save).
    pub tb_switch_wait: Option<u64>,
    /// Zorua (`alloc = "zorua"`): the coordinator and what the SM keeps of its grants
    /// (`sm/zorua.rs`), and register values on their way to swap.
    zorua: Option<Box<zorua::ZSm>>,
    z_swap_data: Vec<(u32, Vec<u32>)>,
}

impl Sm {
    pub fn new(id: u32, cfg: &SmConfig) -> Sm {
        Sm {
            tlb: L1Tlb::new(cfg.l1_tlb_entries, cfg.l1_tlb_assoc, cfg.l1_tlb_latency),
            scheme: FaultScheme::Stall,
            vm: true,
            ooo: cfg.pipeline == Pipeline::Thesis,
            iq_used: 0,
            fetch_rr: 0,
            ooo_last: None,
            timeline: None,
            id,
            cfg: cfg.clone(),
            lat: Lat {
                warps: cfg.warps,
                alu_latency: cfg.alu_latency,
                alu_interval: cfg.alu_interval,
                sfu_latency: cfg.sfu_latency,
                sfu_interval: cfg.sfu_interval,
                shared_latency: cfg.shared_latency,
                shared_banks: cfg.shared_banks,
                l1_latency: cfg.l1_latency,
                l1_line: cfg.l1_line,
                l1_mshrs: cfg.l1_mshrs,
                l1_tlb_latency: cfg.l1_tlb_latency,
            },
            used_threads: 0,
            used_warps: 0,
            used_regs: 0,
            used_shared: 0,
            used_blocks: 0,
            shared_cap: cfg.shared_bytes,
            blocks: (0..cfg.blocks).map(|_| None).collect(),
            warps: (0..cfg.warps).map(|_| None).collect(),
            scheds: (0..cfg.schedulers).map(|_| Sched { warps: Vec::new(), last: None, fetch: VecDeque::new(), reason: Stall::Idle, wake: 0 }).collect(),
            alu_free: vec![0; cfg.schedulers as usize],
            sfu_free: 0,
            ldst_free: 0,
            l1: TagArray::new(cfg.l1_bytes, cfg.l1_assoc, cfg.l1_line),
            mshrs: Vec::new(),
            free_mshrs: Vec::new(),
            mshr_of_line: HashMap::default(),
            mshrs_used: 0,
            recs: Vec::new(),
            free_recs: Vec::new(),
            oread: Vec::new(),
            events: Wheel::default(),
            drained: Vec::new(),
            stats: SmStats::default(),
            finished: Vec::new(),
            accounted: 0,
            wake_at: 0,
            lazy: true,
            rq: None,
            rq_used: 0,
            rq_error: None,
            od: None,
            ol_wq: VecDeque::new(),
            ol_wq_res: 0,
            ol_rd: None,
            ol_rbuf: None,
            ol_saved: vec![None; mpgpu_spec::units::oldata::MAX_ENTRIES],
            ol_more: false,
            ol_load_at: 0,
            ol_rr: 0,
            ol_staged: Vec::new(),
            ol: None,
            ol_room_changed: false,
            ol_pool: 0,
            inject: crate::config::FaultInjection::default(),
            inject_n: 0,
            rq_full: std::cell::Cell::new(0),
            log_full: std::cell::Cell::new(0),
            ol_queue_full: std::cell::Cell::new(0),
            ol_wait: std::cell::Cell::new(0),
            tb_check: false,
            room_changed: false,
            tb_switch_wait: None,
            zorua: None,
            z_swap_data: Vec::new(),
        }
    }

    pub fn config(&self) -> &SmConfig {
        &self.cfg
    }

    /// Resident warps.
    pub fn resident_warps(&self) -> u32 {
        self.used_warps
    }

    pub fn is_empty(&self) -> bool {
        self.used_blocks == 0
    }

    /// Whether one more block of `l` fits next to what is resident.
    pub fn fits(&self, l: &Launch) -> bool {
        if self.zorua.is_some() {
            return self.z_fits(l);
        }
        let f = l.kernel.footprint();
        let cap = if self.is_empty() { self.cfg.shared_config_for(f.shared_per_block) } else { self.shared_cap };
        let warps = f.threads_per_block.div_ceil(WARP_SIZE as u32);
        self.free_block_slot().is_some()
            && self.used_warps + warps <= self.cfg.warps
            && self.used_threads + warps * 32 <= self.cfg.threads
            && self.used_regs + self.cfg.block_registers(&f) <= self.cfg.registers
            && self.used_shared + f.shared_per_block <= cap
            && self.ol.as_ref().is_none_or(|p| {
                // (one quota claimed per cycle)
                let p = p.borrow();
                !p.pending.claim && p.unit.outputs(&p.pending).pool_free as u32 >= self.log_partition(l)
            })
    }

    /// The lowest block slot free for a new block: none resident, and under the operand log
    /// none whose log quota is still being unclaimed (released in this cycle or returning).
    fn free_block_slot(&self) -> Option<u32> {
        let busy = self.ol.as_ref().map_or(0, |p| {
            let p = p.borrow();
            p.unit.outputs(&p.pending).returning | p.pending.release
        });
        (0..self.blocks.len() as u32).find(|&b| self.blocks[b as usize].is_none() && busy >> b & 1 == 0)
    }

    /// The operand-log partition a block of `l` gets (Tanasić's thesis §6.3.3: the log is
    /// shared among the blocks that can be resident, so fewer blocks get more entries): the
    /// log's entries over the kernel's occupancy, and at least its largest instruction's need
    /// (docs/faults.md O10).
    pub fn log_partition(&self, l: &Launch) -> u32 {
        let f = l.kernel.footprint();
        let occ = self.cfg.occupancy(&f).blocks.max(1);
        let entries = self.cfg.oplog_bytes / crate::config::OPLOG_ENTRY_BYTES;
        let most = l.kernel.code.iter().map(log_need).max().unwrap_or(0) as u32;
        (entries / occ).max(most)
    }

    /// Puts `unit` in the operand-log slot.
    pub fn set_oplog_unit(&mut self, unit: Box<dyn crate::units::oplog::OplogSlot>) {
        self.ol_pool = unit.outputs(&Default::default()).pool_free;
        self.ol = Some(std::cell::RefCell::new(OlPort::new(unit)));
    }

    /// The operand log's requests of cycles before `now` are sampled at their edge (called by
    /// the GPU at the start of every cycle it steps). Returns the GPU cycle and the report when
    /// a co-simulated unit parted from its model.
    pub fn ol_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.ol.as_mut()?.get_mut();
        let i = p.edge(now)?;
        let o = p.unit.outputs(&p.pending);
        // (a quota claimed or unclaimed: a block the dispatcher could not place may fit)
        self.ol_room_changed |= i.claim || o.pool_free != self.ol_pool;
        self.ol_pool = o.pool_free;
        let halted = p.unit.halted().map(|d| (p.at, d));
        p.unit.at_cycle(now);
        if o.busy && now != u64::MAX {
            // (entries or a quota on their way back: the unit is clocked every cycle until
            // they are)
            p.at = now;
            p.pending.tick = true;
        }
        // (entries freed or claimed: a memory instruction waiting for them looks again)
        self.wake_all(now);
        halted
    }

    /// The SM and its schedulers look again in cycle `now`.
    fn wake_all(&mut self, now: u64) {
        self.wake_at = self.wake_at.min(now);
        for sc in &mut self.scheds {
            sc.wake = sc.wake.min(now);
        }
    }

    /// Whether the operand log has requests waiting for their edge.
    pub fn ol_pending(&self) -> bool {
        self.ol.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Adds a request of cycle `now` to the operand log's input; returns its outputs with it.
    fn ol_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::oplog::In)) -> mpgpu_spec::units::oplog::Out {
        self.ol.as_ref().expect("the operand log's unit").borrow_mut().request(self.id, "operand-log", now, f)
    }

    /// Puts a restored logged operand in the staging store; returns where.
    fn ol_stage(&mut self, data: [u32; WARP_SIZE]) -> u16 {
        match self.ol_staged.iter().position(Option::is_none) {
            Some(k) => {
                self.ol_staged[k] = Some(data);
                k as u16
            }
            None => {
                self.ol_staged.push(Some(data));
                (self.ol_staged.len() - 1) as u16
            }
        }
    }

    /// Takes a restored logged operand out of the staging store.
    fn ol_unstage(&mut self, k: u16) -> [u32; WARP_SIZE] {
        self.ol_staged[k as usize].take().expect("a staged logged operand")
    }

    /// The operand log's outputs this cycle (they depend on its registers only).
    fn ol_out(&self) -> mpgpu_spec::units::oplog::Out {
        let p = self.ol.as_ref().expect("the operand log's unit").borrow();
        p.unit.outputs(&p.pending)
    }

    /// Block slot `bslot`'s log quota left, saturated at 3 (0 without an operand log).
    fn ol_room(&self, bslot: u32) -> u8 {
        self.ol.as_ref().map_or(0, |p| {
            let p = p.borrow();
            p.unit.outputs(&p.pending).room_of(bslot)
        })
    }

    /// Puts `unit` in the operand log's data-array slot.
    pub fn set_oldata_unit(&mut self, unit: Box<dyn crate::units::oldata::OldataSlot>) {
        self.od = Some(std::cell::RefCell::new(OdPort::new(unit)));
    }

    /// The data array's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    pub fn od_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.od.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.unit.halted().map(|d| (p.at, d));
        p.unit.at_cycle(now);
        halted
    }

    /// Whether the data array has requests waiting for their edge.
    pub fn od_pending(&self) -> bool {
        self.od.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Places of the data array's write queue neither taken nor reserved (3, as many as an
    /// instruction needs, without a data array).
    fn ol_wq_free(&self) -> u8 {
        if self.od.is_none() {
            return 3;
        }
        (mpgpu_spec::units::oldata::WRITE_QUEUE - self.ol_wq.len()) as u8 - self.ol_wq_res
    }

    /// Queues a write of entry `l` (what a save read of it before is no longer its word).
    fn ol_push(&mut self, l: u16, data: [u32; WARP_SIZE]) {
        self.ol_saved[l as usize] = None;
        self.ol_wq.push_back((l as u8, data));
    }

    /// Whether the replay of the warp in `slot` with age `age` has its logged operands read out
    /// of the array.
    fn ol_loaded(&self, slot: u32, age: u32) -> bool {
        self.ol_rbuf.as_ref().is_some_and(|b| b.slot == slot && b.age == age && b.got == b.nlog)
    }

    /// The entries a context save of block slot `b` reads out of the array: those of its warps'
    /// queued replays (a restored one's are in the staging store).
    fn ol_save_entries(&self, b: u32) -> impl Iterator<Item = u16> + '_ {
        let blk = self.blocks[b as usize].as_ref();
        blk.into_iter().flat_map(move |blk| {
            blk.warp_slots.iter().flat_map(move |&s| {
                let w = self.warps[s as usize].as_ref().unwrap();
                w.iq.iter().filter(|e| !e.staged).flat_map(|e| e.log[..e.nlog as usize].iter().copied())
            })
        })
    }

    /// Whether block slot `b`'s logged operands have been read for its context save (always
    /// without a data array).
    fn ol_log_saved(&self, b: u32) -> bool {
        self.od.is_none() || self.ol_save_entries(b).all(|l| self.ol_saved[l as usize].is_some())
    }

    /// Whether block slot `b` may be saved soon, so that its logged operands are read out for
    /// it: nothing of it in flight, and it is frozen (a context switch) or every warp has
    /// exited, waits at a barrier or waits for a fault (thread-block switching,
    /// [`Sm::switch_candidate`]).
    fn ol_save_wanted(&self, now: u64, b: u32) -> bool {
        let Some(blk) = self.blocks[b as usize].as_ref() else { return false };
        if blk.restoring {
            return false;
        }
        if blk.frozen {
            return blk.warp_slots.iter().all(|&s| self.warps[s as usize].as_ref().unwrap().inflight == 0);
        }
        self.tb_switch_wait.is_some_and(|m| self.faults_wait(now, blk).is_some_and(|until| until >= now + m))
    }

    /// Until when block `blk`'s faults keep it waiting, if it could be switched out now: nothing
    /// of it in flight, and every warp waits for a fault, at a barrier or has exited (0 when
    /// none waits for a fault). The test of thread-block switching ([`Sm::switch_candidate`]).
    fn faults_wait(&self, now: u64, blk: &Block) -> Option<u64> {
        let mut until = 0;
        for &s in &blk.warp_slots {
            let w = self.warps[s as usize].as_ref().unwrap();
            let faulted = w.resume_at > now;
            if w.inflight > 0 || !(faulted || w.w.state != WarpState::Ready) {
                return None;
            }
            if faulted {
                until = until.max(w.resume_at);
            }
        }
        Some(until)
    }

    /// The data array's part of a cycle, before the operand reads: the entry read in the last
    /// cycle arrives (at a context save's store, or the replay being loaded).
    fn ol_deliver(&mut self, now: u64) {
        let Some((l, dest)) = self.ol_rd.take() else { return };
        let data = {
            let p = self.od.as_ref().expect("the data array's unit").borrow();
            p.unit.outputs(&p.pending).rdata
        };
        match dest {
            OlRead::Save => {
                self.ol_saved[l as usize] = Some(data);
                // (a block may now be ready to switch out)
                self.tb_check = true;
            }
            OlRead::Replay(j) => {
                if let Some(b) = self.ol_rbuf.as_mut().filter(|b| b.got == j && b.log[j as usize] == l as u16) {
                    b.data[j as usize] = data;
                    b.got += 1;
                    if b.got == b.nlog {
                        b.loaded_at = now;
                    }
                }
            }
        }
        self.ol_more = true;
    }

    /// The first warp slot from `from` on, in round robin, other than `skip`, whose oldest
    /// replay has logged operands and may issue within two cycles (its entries are read out
    /// from then); and the earliest cycle at which one of the others may.
    fn ol_due(&self, now: u64, from: u32, skip: Option<u32>) -> (Option<u32>, u64) {
        let n = self.warps.len() as u32;
        let mut next = u64::MAX;
        for i in 0..n {
            let slot = (from + i) % n;
            if Some(slot) == skip {
                continue;
            }
            let Some(w) = self.warps[slot as usize].as_ref() else { continue };
            if w.frozen {
                continue;
            }
            if let Some(e) = oldest_replay(w) {
                if e.nlog == 0 {
                    continue;
                }
                let at = ol_load_from(w, e);
                if at <= now {
                    return (Some(slot), now);
                }
                next = next.min(at);
            }
        }
        (None, next)
    }

    /// The data array's part of a cycle, after the operand reads: the write queue's head is
    /// written, and one entry is read: a context save's first, then the next entry of the
    /// replay being loaded (a replay is loaded once its page is in, from two cycles before it
    /// may issue). An entry with a write waiting in the queue is not read.
    fn ol_step(&mut self, now: u64) {
        if self.od.is_none() {
            return;
        }
        let queued = |sm: &Sm, l: u16| sm.ol_wq.iter().any(|&(e, _)| e as u16 == l);
        let mut read = None;
        for b in 0..self.blocks.len() as u32 {
            if read.is_none() && self.ol_save_wanted(now, b) {
                read = self.ol_save_entries(b).find(|&l| self.ol_saved[l as usize].is_none() && !queued(self, l)).map(|l| (l, OlRead::Save));
            }
        }
        // (the replay being loaded, while it can still issue soon: its warp's oldest replay, as
        // an older one faulting again goes back into the queue before it; a loaded one that has
        // not issued `OL_HOLD` cycles after its entries arrived gives the buffer up to another
        // that is due, so that a replay kept from issuing, by a busy load/store unit or its
        // warp's dependences, does not keep every other replay of the SM waiting)
        if let Some(b) = &self.ol_rbuf {
            let live = self.warps[b.slot as usize].as_ref().is_some_and(|w| {
                !w.frozen && oldest_replay(w).is_some_and(|e| e.age == b.age && ol_load_from(w, e) <= now)
            });
            let held = b.got == b.nlog && now >= b.loaded_at + OL_HOLD;
            let other = held && self.ol_due(now, b.slot + 1, Some(b.slot)).0.is_some();
            if !live || other {
                self.ol_rbuf = None;
                self.ol_load_at = now;
            } else if b.got == b.nlog {
                // (looked at again next cycle while it waits)
                self.ol_more = true;
            }
        }
        if self.ol_rbuf.is_none() && now >= self.ol_load_at {
            // (the next warp slot in round robin whose oldest replay may issue within two cycles;
            // the scan is skipped until the earliest of the others may)
            let (due, next) = self.ol_due(now, self.ol_rr, None);
            if let Some(slot) = due {
                let w = self.warps[slot as usize].as_ref().unwrap();
                let e = oldest_replay(w).unwrap();
                self.ol_rbuf = Some(ReplayLoad { slot, age: e.age, log: e.log, nlog: e.nlog, got: 0, loaded_at: u64::MAX, data: [[0; WARP_SIZE]; 3] });
                self.ol_rr = (slot + 1) % self.warps.len() as u32;
            }
            self.ol_load_at = if due.is_some() { now } else { next };
        }
        if read.is_none() {
            if let Some(b) = self.ol_rbuf.as_ref().filter(|b| b.got < b.nlog) {
                let l = b.log[b.got as usize];
                if !queued(self, l) {
                    read = Some((l, OlRead::Replay(b.got)));
                }
            }
        }
        let write = self.ol_wq.pop_front();
        if read.is_none() && write.is_none() {
            return;
        }
        self.ol_rd = read.map(|(l, d)| (l as u8, d));
        self.stats.ol_reads += read.is_some() as u64;
        self.stats.ol_save_reads += matches!(read, Some((_, OlRead::Save))) as u64;
        self.stats.ol_writes += write.is_some() as u64;
        self.ol_more = true;
        self.od.as_ref().expect("the data array's unit").borrow_mut().request(self.id, "operand-log data", now, |i| {
            if let Some((l, _)) = read {
                i.re = true;
                i.raddr = l as u8;
            }
            if let Some((l, data)) = write {
                i.we = true;
                i.waddr = l;
                i.wdata = data;
            }
        });
    }

    /// Puts `unit` in the replay-queue slot.
    pub fn set_rq_unit(&mut self, unit: Box<dyn crate::units::rq::ReplaySlot>) {
        self.rq = Some(std::cell::RefCell::new(RqPort::new(unit)));
    }

    /// The replay queue's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    pub fn rq_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.rq.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.unit.halted().map(|d| (p.at, d)).or_else(|| self.rq_error.take());
        p.unit.at_cycle(now);
        // (slots freed: a memory instruction waiting for one looks again)
        self.wake_all(now);
        halted
    }

    /// Whether the replay queue has requests waiting for their edge.
    pub fn rq_pending(&self) -> bool {
        self.rq.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Adds a request of cycle `now` to the replay queue's input; returns its outputs with it.
    /// At most one global memory instruction issues per cycle (the load/store unit takes one).
    fn rq_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::rq::In)) -> mpgpu_spec::units::rq::Out {
        let mut p = self.rq.as_ref().expect("the replay queue's unit").borrow_mut();
        let key = |i: &mpgpu_spec::units::rq::In| (i.issue, i.replay, i.replay_idx, i.warp, i.pc, i.age);
        let before = (p.at == now).then(|| key(&p.pending)).filter(|k| k.0 || k.1);
        let o = p.request(self.id, "replay-queue", now, f);
        assert!(before.is_none_or(|k| k == key(&p.pending)), "SM {}: two global memory instructions issued in cycle {now}", self.id);
        o
    }

    /// The replay queue's outputs contradicted the SM in cycle `now` (a broken RTL alone in the
    /// slot): the run stops at the unit's edge with `what`. (In lockstep the mismatch with the
    /// model is reported first.)
    fn rq_broken(&mut self, now: u64, what: String) {
        if self.rq_error.is_none() {
            self.rq_error = Some((now, format!("SM {}: the replay queue {what}", self.id)));
        }
    }

    /// Replay-queue slot `q` is freed (its instruction committed, or left with its block).
    fn rq_free(&mut self, now: u64, q: u16) {
        self.rq_request(now, |i| i.free |= 1 << q);
        self.rq_used -= 1;
    }

    /// Whether every replay-queue slot is taken (a slot freed in this cycle serves from the next).
    fn rq_is_full(&self) -> bool {
        self.rq.as_ref().is_some_and(|p| {
            let p = p.borrow();
            p.unit.outputs(&p.pending).full
        })
    }

    /// The resident warps waiting at a barrier.
    fn warps_at_barrier(&self) -> u64 {
        self.blocks.iter().flatten().map(|b| b.at_barrier as u64).sum()
    }

    /// Brings stall and occupancy accounting up to `now` (for cycles the SM slept through, the
    /// reasons of its last awake cycle hold).
    pub fn account(&mut self, now: u64) {
        if now > self.accounted {
            let d = now - self.accounted;
            for s in &self.scheds {
                self.stats.stalls[s.reason as usize] += d;
            }
            self.z_account(d);
            self.stats.warp_cycles += d * self.used_warps as u64;
            self.stats.barrier_warp_cycles += d * self.warps_at_barrier();
            if let Some(tl) = &mut self.timeline {
                tl.add(self.accounted, now, self.used_warps as u64, false);
            }
            self.accounted = now;
        }
    }

    /// Places block `index` of a launch (the caller checked [`Sm::fits`]).
    pub fn place_block(&mut self, now: u64, info: &Arc<LaunchInfo>, index: u64) {
        let l = &info.launch;
        let k = &l.kernel;
        let warps: Vec<Warp> = (0..k.warps()).map(|w| Warp::new(k, w, l.block)).collect();
        let ctx = BlockContext { info: info.clone(), ctaid: l.block_coords(index), shared: vec![0; (k.shared_bytes / 4) as usize], warps, queued: Vec::new(), ages: Vec::new() };
        self.restore_block(now, ctx);
    }

    /// Makes a captured block resident again (on this or another SM).
    pub fn restore_block(&mut self, now: u64, ctx: BlockContext) {
        self.restore_block_at(now, ctx, false);
    }

    /// [`Sm::restore_block`]; with `held`, its warps wait (and the block cannot be captured)
    /// until [`Sm::resume_block`], while its context is on its way. Returns its block slot.
    pub fn restore_block_at(&mut self, now: u64, ctx: BlockContext, held: bool) -> u32 {
        let start = if held { u64::MAX } else { now + 1 };
        self.account(now);
        let f = ctx.info.launch.kernel.footprint();
        if self.is_empty() {
            self.shared_cap = self.cfg.shared_config_for(f.shared_per_block);
        }
        let bslot = self.free_block_slot().expect("no free block slot: check fits() first") as usize;
        let nw = ctx.warps.len() as u32;
        let regs = self.cfg.block_registers(&f);
        let mut slots = Vec::with_capacity(nw as usize);
        let running = ctx.warps.iter().filter(|w| w.state != WarpState::Done).count() as u32;
        let at_barrier = ctx.warps.iter().filter(|w| w.state == WarpState::AtBarrier).count() as u32;
        let (queued, ages) = (ctx.queued, ctx.ages);
        for w in ctx.warps {
            let slot = self.warps.iter().position(Option::is_none).expect("no free warp slot: check fits() first") as u32;
            let sched = (slot % self.cfg.schedulers) as usize;
            // (under Zorua a warp joins its scheduler when the coordinator grants it)
            let live = w.state != WarpState::Done && self.zorua.is_none();
            if live {
                self.scheds[sched].warps.push(slot);
            }
            self.warps[slot as usize] = Some(HwWarp {
                w,
                block: bslot as u32,
                pending: [0; 5],
                pending_mem: [0; 5],
                next_issue: start.max(now + 1),
                ibuf: 0,
                inflight: 0,
                mem_recs: Vec::new(),
                in_fetch: live,
                frozen: false,
                mshr_need: None,
                next_touch: [0; 5],
                next_class: Class::Alu,
                wd_wait: None,
                mem_order: 0,
                fault_until: 0,
                iq: VecDeque::new(),
                fetch_gated: false,
                fetch_at: start.max(now + 1),
                src_hold: [(0, [0; 5]); 2],
                age: 0,
                mem_hold: Vec::new(),
                check_until: 0,
                resume_at: 0,
                store_check: 0,
            });
            Self::refresh_next(self.warps[slot as usize].as_mut().unwrap(), &ctx.info);
            if live {
                self.scheds[sched].fetch.push_back(slot);
            }
            slots.push(slot);
        }
        // The block's log quota, of which its restored logged operands have a reservation:
        // they wait in the staging store until their instruction issues and takes entries.
        if self.ol.is_some() {
            let n = self.log_partition(&ctx.info.launch);
            let used: usize = queued.iter().flatten().map(|e| e.log.len()).sum();
            self.ol_request(now, |i| {
                i.claim = true;
                i.claim_block = bslot as u8;
                i.claim_n = n as u8;
                i.claim_used = used as u8;
            });
        }
        // The replay queue's saved contents go back into the warps' queues (a faulted one gets
        // log entries for its operands again; it takes a replay-queue slot when it issues).
        for (k, q) in queued.into_iter().enumerate() {
            let slot = slots[k];
            let mut entries = VecDeque::with_capacity(q.len());
            for e in q {
                let mut log = [0u16; 3];
                for (j, data) in e.log.iter().enumerate() {
                    log[j] = self.ol_stage(*data);
                }
                entries.push_back(IqEntry {
                    pc: e.pc,
                    active: e.active,
                    ready_at: now + 1,
                    age: e.age,
                    replay: None,
                    fixed: e.fixed,
                    log,
                    nlog: e.log.len() as u8,
                    staged: !e.log.is_empty(),
                });
            }
            self.iq_used += entries.len() as u32;
            let hw = self.warps[slot as usize].as_mut().unwrap();
            hw.age = ages[k];
            hw.iq = entries;
            hw.fetch_gated = false;
        }
        for &slot in &slots {
            // (fetch waits behind a queued memory or control-flow instruction)
            let w = self.warps[slot as usize].as_mut().unwrap();
            w.fetch_gated = gates_fetch(&ctx.info.timing, &w.iq);
        }
        self.used_blocks += 1;
        self.used_warps += nw;
        self.used_threads += nw * 32;
        self.used_regs += regs;
        self.used_shared += f.shared_per_block;
        self.blocks[bslot] = Some(Block {
            info: ctx.info,
            ctaid: ctx.ctaid,
            shared: ctx.shared,
            warp_slots: slots,
            running,
            at_barrier,
            regs,
            threads: nw * 32,
            shared_bytes: f.shared_per_block,
            frozen: false,
            restoring: held,
        });
        self.wake_at = now;
        for sc in &mut self.scheds {
            sc.wake = sc.wake.min(now);
        }
        if self.zorua.is_some() {
            self.z_block_start(bslot as u32, &self.blocks[bslot].as_ref().unwrap().warp_slots.clone());
        }
        let kinds = self.resident_launches().len() as u32;
        self.stats.max_kernels_resident = self.stats.max_kernels_resident.max(kinds);
        // A restored block whose warps all wait at a barrier, or have all exited, moves on.
        if !held {
            self.check_block(now, bslot as u32);
        }
        bslot as u32
    }

    /// A block restored held ([`Sm::restore_block_at`]) has its context: its warps issue from
    /// the next cycle.
    pub fn resume_block(&mut self, now: u64, bslot: u32) {
        self.account(now);
        let Some(b) = self.blocks[bslot as usize].as_mut() else {
            return;
        };
        b.restoring = false;
        for &s in &b.warp_slots {
            let w = self.warps[s as usize].as_mut().unwrap();
            w.next_issue = now + 1;
            w.fetch_at = now + 1;
        }
        self.wake_at = self.wake_at.min(now);
        for sc in &mut self.scheds {
            sc.wake = sc.wake.min(now);
        }
        self.check_block(now, bslot);
    }

    /// Blocks resident per launch: (launch, blocks), by launch.
    pub fn blocks_per_launch(&self) -> Vec<(usize, u32)> {
        let mut v: Vec<(usize, u32)> = Vec::new();
        for b in self.blocks.iter().flatten() {
            match v.iter_mut().find(|x| x.0 == b.info.id) {
                Some(x) => x.1 += 1,
                None => v.push((b.info.id, 1)),
            }
        }
        v.sort_unstable();
        v
    }

    /// This cycle (or, asleep, the last awake one) is a long-memory stall: no scheduler
    /// issued, and one waited for a load or atomic (Warped-Slicer's phi_mem, §IV-A).
    pub fn memory_stalled(&self) -> bool {
        self.scheds.iter().all(|s| s.reason != Stall::Issued) && self.scheds.iter().any(|s| s.reason == Stall::Memory)
    }

    /// The launches with blocks resident, without repeats.
    pub fn resident_launches(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.blocks.iter().flatten().map(|b| b.info.id).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Block slots holding a block that could be captured now (no instruction in flight).
    pub fn quiescent_blocks(&self) -> Vec<u32> {
        (0..self.blocks.len() as u32)
            .filter(|&b| {
                self.blocks[b as usize].as_ref().is_some_and(|blk| {
                    !blk.restoring &&
                    blk.warp_slots.iter().all(|&s| {
                        let w = self.warps[s as usize].as_ref().unwrap();
                        w.inflight == 0 && (w.iq.is_empty() || self.saves_queue())
                    })
                    // (under the operand log, once its logged operands are read out)
                    && self.ol_log_saved(b)
                })
            })
            .collect()
    }

    /// Whether a block's context holds its warps' fetched, unissued instructions (the replay
    /// queue's contents), so a block can be captured with instructions queued.
    fn saves_queue(&self) -> bool {
        matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol)
    }

    /// Thread-block switching on a fault (Tanasić's thesis §6.4.1): the resident block to
    /// switch out now, if any, with the cycle its faults are all resolved. A block qualifies when
    /// nothing of it is in flight, every warp has exited, waits at a barrier or waits for a
    /// fault, at least one waits for a fault, and its last fault resolves `min_wait` cycles or
    /// more from now; of several, the one that waits longest.
    pub fn switch_candidate(&self, now: u64, min_wait: u64) -> Option<(u32, u64)> {
        let mut best: Option<(u32, u64)> = None;
        for (b, blk) in self.blocks.iter().enumerate() {
            let Some(blk) = blk else { continue };
            if blk.frozen || blk.restoring {
                continue;
            }
            let Some(until) = self.faults_wait(now, blk) else { continue };
            if until >= now + min_wait && best.is_none_or(|(_, u)| until > u) && self.ol_log_saved(b as u32) {
                best = Some((b as u32, until));
            }
        }
        best
    }

    /// What holds up this SM's warps, for a watchdog report (`None`: nothing resident).
    pub fn stuck_report(&self, now: u64) -> Option<String> {
        if self.used_warps == 0 {
            return None;
        }
        let mut r = format!("{} warps resident, issue queue {}/{}", self.used_warps, self.iq_used, self.cfg.iq_entries);
        if self.scheme.replays() {
            r += &format!(", replay-queue slots free {}/{}", self.cfg.rq_entries - self.rq_used, self.cfg.rq_entries);
            if let Some(p) = &self.ol {
                let p = p.borrow();
                let o = p.unit.outputs(&p.pending);
                let room: Vec<u8> = (0..self.cfg.blocks).map(|b| o.room_of(b)).collect();
                r += &format!(", operand log: {} entries unclaimed, quota left per block slot (at most 3 shown) {room:?}{}", o.pool_free, if o.busy { ", settling" } else { "" });
                r += &format!(
                    ", data array: {} writes queued, {} places reserved, loading {}",
                    self.ol_wq.len(),
                    self.ol_wq_res,
                    self.ol_rbuf.as_ref().map_or("no replay".to_string(), |b| format!("warp slot {}'s replay of age {} ({} of {} entries read)", b.slot, b.age, b.got, b.nlog))
                );
            }
        }
        let mut shown = 0;
        for (slot, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            // (and the warp whose replay is loaded)
            let loading = self.ol_rbuf.as_ref().is_some_and(|b| b.slot == slot as u32);
            if shown >= 4 && !loading {
                if shown == 4 {
                    r += "; ...";
                    shown += 1;
                }
                continue;
            }
            shown += 1;
            let b = self.blocks[w.block as usize].as_ref().unwrap();
            let state = match w.w.state {
                crate::exec::WarpState::Ready => "ready",
                crate::exec::WarpState::AtBarrier => "at a barrier",
                crate::exec::WarpState::Done => "done",
            };
            let queue: Vec<String> = w
                .iq
                .iter()
                .map(|e| format!("pc {} ready in {}{}{}", e.pc, e.ready_at.saturating_sub(now), e.replay.map_or(String::new(), |q| format!(", a replay in slot {q}")), if e.fixed { ", fixed" } else { "" }))
                .collect();
            r += &format!(
                "; warp slot {slot}: kernel `{}`, block ({},{},{}), warp {}, {state}{}{}, {}, {} in flight, issue queue [{}], {} registers awaiting writeback{}",
                b.info.launch.kernel.name,
                b.ctaid[0],
                b.ctaid[1],
                b.ctaid[2],
                w.w.id,
                if w.frozen { ", frozen" } else { "" },
                if b.restoring { ", restoring" } else { "" },
                w.w.pc().map_or("exited".to_string(), |pc| format!("pc {pc}")),
                w.inflight,
                queue.join("; "),
                w.pending.iter().map(|m| m.count_ones()).sum::<u32>(),
                if w.resume_at > now { format!(", faulted until {}", w.resume_at) } else { String::new() }
            );
        }
        Some(r)
    }

    /// Block slots in use.
    pub fn blocks_resident(&self) -> Vec<u32> {
        (0..self.blocks.len() as u32).filter(|&b| self.blocks[b as usize].is_some()).collect()
    }

    /// Stops a block issuing, so that its in-flight instructions drain and it becomes
    /// quiescent (the first step of a context switch).
    pub fn freeze_block(&mut self, bslot: u32) {
        if let Some(b) = self.blocks[bslot as usize].as_mut() {
            b.frozen = true;
            for &s in &b.warp_slots {
                self.warps[s as usize].as_mut().unwrap().frozen = true;
            }
            // (the SM looks at it at once: under the operand log its queued replays' logged
            // operands are read out of the array for the save, from its next cycle)
            self.wake_at = 0;
        }
    }

    /// Removes a quiescent block and returns its whole state.
    pub fn capture_block(&mut self, now: u64, bslot: u32) -> Option<BlockContext> {
        if !self.quiescent_blocks().contains(&bslot) {
            return None;
        }
        self.account(now);
        let blk = self.blocks[bslot as usize].take().unwrap();
        let mut warps = Vec::new();
        let mut queued = Vec::new();
        let mut ages = Vec::new();
        for &s in &blk.warp_slots {
            let hw = self.free_warp(s);
            let mut q = Vec::new();
            for e in &hw.iq {
                if let Some(r) = e.replay {
                    self.rq_free(now, r);
                }
                // (its log entries are freed with the block's quota)
                // (a queued replay's were read out of the array for the save, `Sm::ol_step`)
                let log = e.log[..e.nlog as usize]
                    .iter()
                    .map(|&l| if e.staged { self.ol_unstage(l) } else { self.ol_saved[l as usize].take().expect("a logged operand read for the save") })
                    .collect();
                q.push(SavedEntry { pc: e.pc, active: e.active, age: e.age, fixed: e.fixed, log });
            }
            self.stats.saved_queued += q.len() as u64;
            queued.push(q);
            ages.push(hw.age);
            warps.push(hw.w);
        }
        self.release(now, &blk, bslot);
        if queued.iter().all(Vec::is_empty) {
            queued.clear();
            ages.clear();
        }
        for sc in &mut self.scheds {
            sc.wake = sc.wake.min(now);
        }
        Some(BlockContext { info: blk.info, ctaid: blk.ctaid, shared: blk.shared, warps, queued, ages })
    }

    fn free_warp(&mut self, slot: u32) -> HwWarp {
        let s = self.sched_of(slot);
        let sched = &mut self.scheds[s];
        sched.warps.retain(|&w| w != slot);
        sched.fetch.retain(|&w| w != slot);
        if sched.last == Some(slot) {
            sched.last = None;
        }
        if self.ooo_last == Some(slot) {
            self.ooo_last = None;
        }
        // (a replay being loaded for the slot goes with its warp: a warp placed in the slot
        // later must not find it)
        if self.ol_rbuf.as_ref().is_some_and(|b| b.slot == slot) {
            self.ol_rbuf = None;
            self.ol_load_at = 0;
        }
        let w = self.warps[slot as usize].take().unwrap();
        self.iq_used -= w.iq.iter().filter(|e| e.replay.is_none()).count() as u32;
        w
    }

    fn release(&mut self, now: u64, blk: &Block, bslot: u32) {
        if self.ol.is_some() {
            self.ol_request(now, |i| i.release |= 1 << bslot);
        }
        self.used_blocks -= 1;
        self.used_warps -= blk.warp_slots.len() as u32;
        self.used_threads -= blk.threads;
        self.used_regs -= blk.regs;
        self.used_shared -= blk.shared_bytes;
    }

    /// Frees drained warps and finished blocks; releases barriers that everyone reached.
    fn check_block(&mut self, now: u64, bslot: u32) {
        // (under Zorua the coordinator releases a barrier: its grants)
        let own_barriers = !self.z_barriers();
        let Some(blk) = self.blocks[bslot as usize].as_mut() else {
            return;
        };
        if blk.running > 0 && blk.at_barrier == blk.running && own_barriers {
            blk.at_barrier = 0;
            for &s in &blk.warp_slots {
                if let Some(w) = self.warps[s as usize].as_mut() {
                    if w.w.state == WarpState::AtBarrier {
                        w.w.state = WarpState::Ready;
                        w.next_issue = w.next_issue.max(now + 1);
                        let sc = &mut self.scheds[(s % self.cfg.schedulers) as usize];
                        sc.wake = sc.wake.min(now + 1);
                        if !w.in_fetch && w.ibuf < self.cfg.ibuffer {
                            w.in_fetch = true;
                            self.scheds[(s % self.cfg.schedulers) as usize].fetch.push_back(s);
                        }
                    }
                }
            }
        }
        // A block ends when every warp has exited and drained; its warps keep their slots
        // until then (the slots stay allocated to the block in any case).
        let drained = blk.warp_slots.iter().all(|&s| {
            let w = self.warps[s as usize].as_ref().unwrap();
            w.w.state == WarpState::Done && w.inflight == 0
        });
        if drained {
            if self.zorua.is_some() {
                let slots = blk.warp_slots.clone();
                self.z_block_end(now, bslot, &slots);
            }
            let blk = self.blocks[bslot as usize].take().unwrap();
            for &s in &blk.warp_slots {
                self.free_warp(s);
            }
            self.release(now, &blk, bslot);
            self.stats.blocks_done += 1;
            self.finished.push(blk.info.id);
        }
    }

    /// A memory response (tag as sent): a missed line arrives (the L1 is filled, unless a
    /// store overtook the read, and its loads count it), an atomic's old values return, or a
    /// store's line is acknowledged.
    pub fn mem_response(&mut self, now: u64, tag: u32) {
        if tag & KIND_MASK == CONTEXT_TAG {
            return;
        }
        if tag & KIND_MASK == zorua::SWAP_TAG || tag & KIND_MASK == zorua::SWAP_WRITE_TAG {
            self.wake_at = self.wake_at.min(now);
            if tag & KIND_MASK == zorua::SWAP_TAG {
                self.z_swap_arrived(now, tag & !KIND_MASK);
            }
            return;
        }
        // (an acknowledgement can end a block: occupancy is accounted up to here first)
        self.account(now);
        self.wake_at = self.wake_at.min(now);
        for sc in &mut self.scheds {
            // A freed MSHR may unblock a load, a finished access a fence.
            sc.wake = sc.wake.min(now);
        }
        let id = tag & !KIND_MASK;
        match tag & KIND_MASK {
            ATOMIC_TAG | STORE_TAG => self.line_done(now, id),
            _ => {
                let m = &mut self.mshrs[id as usize];
                let waiters = std::mem::take(&mut m.waiters);
                if !m.stale {
                    let ln = m.line;
                    let e = self.l1.fill(ln, false);
                    self.mshr_of_line.remove(&ln);
                    self.z_evicted(e);
                }
                self.mshrs_used -= 1;
                self.free_mshrs.push(id);
                for &(w, _) in &waiters {
                    self.line_done(now, w);
                }
                let mut waiters = waiters;
                waiters.clear();
                self.mshrs[id as usize].waiters = waiters;
            }
        }
    }

    /// One line of a load, store or atomic has arrived or been acknowledged; after the last, a
    /// load or atomic writes back (no earlier than its L1 hits allow) and a store completes.
    fn line_done(&mut self, now: u64, id: u32) {
        let r = &mut self.recs[id as usize];
        r.outstanding -= 1;
        if r.outstanding == 0 {
            if r.store {
                self.complete(now, id);
            } else {
                let t = r.ready_at.max(now + 1);
                self.events.push(t, SmEv::Writeback(id));
            }
        }
    }

    /// A request performed at its L2 slice at cycle `now` (tag as sent, the line it is for): a
    /// global load's lanes on that line read memory (a load that joined the read but has not
    /// yet made its own L1 access takes its data at that access), a global store's write it,
    /// an atomic's do their read-modify-writes. (Local accesses are performed at the L1,
    /// context traffic carries no instruction.)
    pub fn mem_perform(&mut self, now: u64, tag: u32, line: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let id = tag & !KIND_MASK;
        match tag & KIND_MASK {
            // (swap traffic moves no instruction's data: docs/zorua.md, "Swap")
            CONTEXT_TAG | zorua::SWAP_TAG | zorua::SWAP_WRITE_TAG => Ok(()),
            ATOMIC_TAG | STORE_TAG => self.perform_line(id, line, gmem),
            _ => {
                let m = &mut self.mshrs[id as usize];
                m.performed = true;
                let waiters = std::mem::take(&mut m.waiters);
                let mut res = Ok(());
                for &(w, t) in &waiters {
                    if t <= now {
                        res = res.and_then(|_| self.perform_line(w, line, gmem));
                    } else if self.recs[w as usize].space == Some(Space::Global) {
                        // (a local load is performed at its own L1 access anyway) The SM may be
                        // asleep: it must wake for the access, not read memory later.
                        self.events.push(t, SmEv::Access(w, line));
                        self.wake_at = self.wake_at.min(t);
                    }
                }
                self.mshrs[id as usize].waiters = waiters;
                res
            }
        }
    }

    /// Performs the lanes of global instruction `id` that fall in `line` (at the L2).
    fn perform_line(&mut self, id: u32, line: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        if self.recs[id as usize].space != Some(Space::Global) {
            return Ok(());
        }
        self.perform_access(id, line, gmem)
    }

    /// Performs the lanes of global or local instruction `id` that fall in `line`.
    fn perform_access(&mut self, id: u32, line: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let r = &mut self.recs[id as usize];
        r.unperformed -= 1;
        let lanes = r.lanes_on(line);
        self.perform(id, lanes, gmem)
    }

    /// What a pipeline stage of record `id` works on: the record, its warp, its block's
    /// context, and where a fault is (launch, block, warp).
    fn stage(&mut self, id: u32) -> (&mut Rec, &mut Warp, BlockCtx<'_>, (usize, [u32; 3], u32)) {
        let r = &mut self.recs[id as usize];
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        let blk = self.blocks[r.bslot as usize].as_mut().unwrap();
        let info = &*blk.info;
        let at = (info.id, blk.ctaid, hw.w.id);
        let ctx = BlockCtx {
            kernel: &info.launch.kernel,
            params: &info.launch.params,
            grid: info.launch.grid,
            block: info.launch.block,
            ctaid: blk.ctaid,
            smid: self.id,
            shared: &mut blk.shared,
        };
        (r, &mut hw.w, ctx, at)
    }

    /// The memory stage of record `id` for `lanes`.
    fn perform(&mut self, id: u32, lanes: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let (r, w, mut ctx, (launch, ctaid, warp)) = self.stage(id);
        exec::perform(&mut r.f, lanes, w, &mut ctx, gmem).map_err(|fault| SmFault { launch, ctaid, warp, fault })
    }

    /// The operand-read stage of record `id`: its sources are read; an arithmetic result is
    /// computed; a memory instruction's addresses are checked (a bad one is the instruction's
    /// fault) and a parameter load reads the constant cache.
    fn operand_read(&mut self, id: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let r = &mut self.recs[id as usize];
        let (from_log, log) = (r.from_log, r.log);
        let nlog = r.nlog as usize;
        // (a replay under the operand log has its operands from the log, not the registers (a
        // younger instruction may have overwritten them): read out of the array before it
        // issued, they came with it, `Sm::track_global`)
        let (r, w, mut ctx, (launch, ctaid, warp)) = self.stage(id);
        if !from_log {
            exec::read_operands(w, &ctx, &mut r.f);
        }
        let fault = |fault| SmFault { launch, ctaid, warp, fault };
        match r.space {
            None => exec::compute(&mut r.f),
            Some(space) => {
                exec::check_addresses(&r.f, &ctx, gmem).map_err(fault)?;
                if space == Space::Param {
                    let lanes = r.f.exec;
                    exec::perform(&mut r.f, lanes, w, &mut ctx, gmem).map_err(fault)?;
                }
            }
        }
        if !from_log && nlog > 0 {
            // The log is written as the registers are read: into the places its issue
            // reserved in the array's write queue.
            if self.od.is_some() {
                self.ol_wq_res -= nlog as u8;
            }
            for (j, &l) in log[..nlog].iter().enumerate() {
                let data = *logged_operand(&mut self.recs[id as usize].f, j);
                self.ol_push(l, data);
            }
        }
        Ok(())
    }

    /// The writeback of record `id`: the result goes to the register or predicate, the
    /// scoreboard is released (counting an overwritten source of an older memory instruction
    /// in flight), and the instruction completes.
    fn write_back(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        exec::writeback(&mut hw.w, &r.f);
        if self.zorua.is_some() {
            // (a warp whose event was sent has its registers at home: the value follows them)
            let (slot, write, lanes) = (r.warp, r.write, r.f.exec);
            if let Some(b) = write.filter(|&b| b < 256) {
                self.z_late_write(slot, b as usize, lanes);
            }
        }
        let r = &self.recs[id as usize];
        let hw = self.warps[r.warp as usize].as_mut().unwrap();
        if let Some(b) = r.write {
            let (i, m) = (b as usize / 64, 1u64 << (b % 64));
            hw.pending[i] &= !m;
            hw.pending_mem[i] &= !m;
            if b < 256 {
                for &o in &hw.mem_recs {
                    if o != id && self.recs[o as usize].f.inst.src_regs().any(|s| s as u16 == b) {
                        self.stats.war_overwrites += 1;
                    }
                }
            }
        }
        if self.zorua.is_some() {
            let slot = self.recs[id as usize].warp;
            self.z_flush(now, slot);
        }
        self.complete(now, id);
    }

    /// Instruction `id` has completed: its record is freed, its scheduler looks again, and a
    /// finished warp's block may end.
    fn complete(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        assert!(r.unperformed == 0, "SM {}: pc {} ({}) completed with {} lines not performed", self.id, r.f.pc, r.f.inst, r.unperformed);
        let slot = r.warp;
        if let Some(q) = r.rq {
            self.rq_free(now, q);
        }
        self.tb_check = true;
        self.free_recs.push(id);
        let sc = self.sched_of(slot);
        let sc = &mut self.scheds[sc];
        sc.wake = sc.wake.min(now);
        let w = self.warps[slot as usize].as_mut().unwrap();
        w.inflight -= 1;
        if let Some(p) = w.mem_recs.iter().position(|&x| x == id) {
            w.mem_recs.swap_remove(p);
        }
        if w.wd_wait == Some(id) {
            // Warp Disable (commit): fetch restarts the cycle after the commit, issue the next.
            w.wd_wait = None;
            w.next_issue = now + 2;
            w.fetch_gated = false;
            w.fetch_at = now + 1;
            self.wake_at = self.wake_at.min(now + 1);
        }
        let (done, blk) = (w.w.state == WarpState::Done, w.block);
        if w.inflight == 0 && self.zorua.is_some() {
            self.z_flush(now, slot);
        }
        if done {
            self.check_block(now, blk);
        }
    }

    /// A record for the data instruction the warp in `slot` issues now (its scoreboard bit is
    /// marked pending), queued for operand read in the next cycle.
    fn new_rec(&mut self, slot: u32, d: &Decoded, plan: &MemPlan) -> u32 {
        let id = match self.free_recs.pop() {
            Some(i) => i,
            None => {
                self.recs.push(Rec { warp: 0, bslot: 0, f: Flight::new(0, d.inst, 0), write: None, space: None, store: false, outstanding: 0, unperformed: 0, ready_at: 0, lane_line: [0; WARP_SIZE], rq: None, log: [0; 3], nlog: 0, from_log: false, age: 0 });
                self.recs.len() as u32 - 1
            }
        };
        let space = exec::space_of(&d.inst.op);
        let r = &mut self.recs[id as usize];
        r.warp = slot;
        r.bslot = d.bslot;
        r.f.pc = d.pc as u32;
        r.f.inst = d.inst;
        r.f.exec = d.exec_mask;
        r.write = d.write;
        r.space = space;
        r.store = plan.store;
        r.outstanding = 0;
        r.unperformed = 0;
        r.ready_at = 0;
        r.rq = None;
        r.nlog = 0;
        r.from_log = false;
        if matches!(space, Some(Space::Global | Space::Local)) {
            // (only a global or local access performs by line)
            r.lane_line = plan.lane_line;
        }
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.inflight += 1;
        if matches!(space, Some(Space::Global | Space::Local)) {
            hw.mem_recs.push(id);
        }
        if let Some(b) = d.write {
            bit(&mut hw.pending, b as usize);
            if matches!(d.class, Class::Mem(Space::Global | Space::Local | Space::Shared) | Class::Atomic) {
                bit(&mut hw.pending_mem, b as usize);
            }
        }
        self.oread.push(id);
        id
    }

    /// Cycle of the next thing this SM would do by itself (a writeback, a unit or warp
    /// becoming free); memory responses and new blocks wake it from outside.
    pub fn next_wake(&self, now: u64) -> u64 {
        let mut t = u64::MAX;
        if !self.oread.is_empty() || self.ol_more || !self.ol_wq.is_empty() {
            t = now + 1;
        }
        // (a block to be saved whose logged operands are still to be read out of the array: one
        // a cycle, from the next)
        if self.od.is_some() && (0..self.blocks.len() as u32).any(|b| self.ol_save_wanted(now, b) && self.ol_save_entries(b).any(|l| self.ol_saved[l as usize].is_none())) {
            t = now + 1;
        }
        if let Some(c) = self.events.next_time() {
            t = t.min(c);
        }
        for w in self.warps.iter().flatten() {
            if w.w.state == WarpState::Ready && w.next_issue > now {
                t = t.min(w.next_issue);
            }
            if self.ooo {
                if w.w.state == WarpState::Ready && !w.fetch_gated && !w.frozen && w.fetch_at > now {
                    t = t.min(w.fetch_at);
                }
                for e in &w.iq {
                    if e.ready_at > now {
                        t = t.min(e.ready_at);
                    }
                    // (a replay's logged operands are read out from two cycles before it may
                    // issue)
                    if e.replay.is_some() && e.nlog > 0 && self.od.is_some() {
                        let at = ol_load_from(w, e);
                        if at > now {
                            t = t.min(at);
                        }
                    }
                }
                for &(c, _) in &w.src_hold {
                    if c + 2 > now {
                        t = t.min(c + 2);
                    }
                }
                for &(c, _) in &w.mem_hold {
                    if c + 1 > now {
                        t = t.min(c + 1);
                    }
                }
                if w.resume_at > now {
                    t = t.min(w.resume_at);
                }
                if w.check_until + 1 > now {
                    t = t.min(w.check_until + 1);
                }
                if w.store_check + 1 > now {
                    t = t.min(w.store_check + 1);
                }
            }
        }
        for &f in self.alu_free.iter().chain([&self.sfu_free, &self.ldst_free]) {
            if f > now {
                t = t.min(f);
            }
        }
        t.min(self.z_wake(now))
    }

    /// One cycle. Returns whether anything was fetched or issued.
    pub fn cycle(&mut self, now: u64, gmem: &mut GlobalMem, mem: &mut MemSys) -> Result<bool, SmFault> {
        self.account(now);
        self.z_write_backs(now, mem);
        self.stats.awake_cycles += 1;
        self.ol_more = false;
        self.ol_deliver(now);
        // Operand read of the instructions issued in the previous cycle.
        let mut reads = std::mem::take(&mut self.oread);
        for &id in &reads {
            self.operand_read(id, gmem)?;
        }
        reads.clear();
        self.oread = reads;
        self.ol_step(now);
        // Accesses and writebacks due.
        let mut due = std::mem::take(&mut self.drained);
        self.events.drain_until(now, |_, e| due.push(e));
        for &e in &due {
            match e {
                SmEv::Writeback(id) => self.write_back(now, id),
                SmEv::Access(id, line) => self.perform_access(id, line, gmem)?,
                SmEv::Shared(id) => {
                    if self.zorua.is_some() {
                        // (under Zorua the words live where the block's scratchpad row says)
                        let r = &self.recs[id as usize];
                        let (b, ad, lanes) = (r.bslot, r.f.addr, r.f.exec);
                        self.z_shared(b, &ad, lanes, true, gmem);
                        self.perform(id, u32::MAX, gmem)?;
                        self.z_shared(b, &ad, lanes, false, gmem);
                    } else {
                        self.perform(id, u32::MAX, gmem)?;
                    }
                    self.write_back(now, id);
                }
                SmEv::Line(id, line, kind) => self.late_line(now, id, line, kind, gmem, mem)?,
                SmEv::LineDone(id) => self.line_done(now, id),
                SmEv::Fault(id) => self.fault(now, id),
                SmEv::LogFree(l) => {
                    self.ol_request(now, |i| i.free |= 1 << l);
                }
                SmEv::SwapHit(slot) => self.z_swap_arrived(now, slot),
            }
        }
        due.clear();
        self.drained = due;
        self.z_cycle(now, gmem);
        let active = if self.ooo { self.ooo_cycle(now, mem)? } else { self.inorder_cycle(now, mem)? };
        self.accounted = self.accounted.max(now + 1);
        self.stats.rq_full += self.rq_full.take();
        self.stats.log_full += self.log_full.take();
        self.stats.ol_queue_full += self.ol_queue_full.take();
        self.stats.ol_replay_wait += self.ol_wait.take();
        self.stats.warp_cycles += self.used_warps as u64;
        self.stats.barrier_warp_cycles += self.warps_at_barrier();
        if let Some(tl) = &mut self.timeline {
            tl.add(now, now + 1, self.used_warps as u64, false);
        }
        for sc in &self.scheds {
            self.stats.stalls[sc.reason as usize] += 1;
        }
        self.z_account(1);
        Ok(active)
    }

    /// Fetch and issue of one cycle of the GPGPU-Sim-like pipeline: each scheduler refills
    /// one warp's instruction buffer and issues at most one warp-instruction.
    fn inorder_cycle(&mut self, now: u64, mem: &mut MemSys) -> Result<bool, SmFault> {
        let mut active = false;
        for s in 0..self.scheds.len() {
            // Fetch: refill one warp's instruction buffer.
            while let Some(slot) = self.scheds[s].fetch.pop_front() {
                let Some(w) = self.warps[slot as usize].as_mut() else {
                    continue;
                };
                w.in_fetch = false;
                match w.w.state {
                    WarpState::Ready => {
                        w.ibuf = self.cfg.ibuffer;
                        active = true;
                        self.scheds[s].wake = self.scheds[s].wake.min(now);
                        break;
                    }
                    // Barrier release queues it again; a finished warp needs nothing.
                    WarpState::AtBarrier | WarpState::Done => {}
                }
            }
            if now >= self.scheds[s].wake || !self.lazy {
                let issued = self.schedule(now, s, mem)?;
                active |= issued;
            }
        }
        Ok(active)
    }

    /// One cycle of the thesis's pipeline (Tanasić's thesis, §2.4): issue, then fetch.
    ///
    /// Issue: up to `schedulers` instructions from the unified issue queue, from one warp or
    /// several, greedy-then-oldest over the warps; within a warp, the oldest entry that can go
    /// (out of order): none of its sources or its destination has a write outstanding (in
    /// flight, or an older entry's), its destination is no source an older entry or an
    /// instruction issued in the last two cycles has still to read (sources are released at
    /// operand read, visible to issue the cycle after), its unit is free; control flow and
    /// barriers go only as their warp's oldest entry, fences also once its memory accesses
    /// are done. Fetch: one warp per cycle (round robin over those with fetch enabled) brings
    /// up to `fetch_width` instructions into the queue, stopping after a memory instruction
    /// (fetch resumes when it issues, or under Warp Disable at its commit or last TLB check)
    /// or before moving past a control-flow instruction (fetch resumes the cycle after it
    /// commits).
    fn ooo_cycle(&mut self, now: u64, mem: &mut MemSys) -> Result<bool, SmFault> {
        let width = self.cfg.schedulers as usize;
        let mut issued = 0;
        let mut active = false;
        let nslots = self.warps.len() as u32;
        let first = self.ooo_last;
        // The last warp to issue first, then every other slot in order.
        for k in 0..=nslots {
            let slot = match (k, first) {
                (0, Some(f)) => f,
                (0, None) => continue,
                (k, f) if f == Some(k - 1) => continue,
                (k, _) => k - 1,
            };
            if issued == width {
                break;
            }
            loop {
                if issued == width {
                    break;
                }
                let Some((k, unit)) = self.ooo_pick(now, slot) else {
                    break;
                };
                active = true;
                if self.ooo_issue(now, unit, slot, k, mem)? {
                    issued += 1;
                    self.ooo_last = self.warps[slot as usize].is_some().then_some(slot);
                    if self.warps[slot as usize].is_none() {
                        break;
                    }
                } else {
                    break;
                }
            }
        }
        let resident = self.used_warps > 0;
        for (i, sc) in self.scheds.iter_mut().enumerate() {
            sc.reason = if i < issued {
                Stall::Issued
            } else if !resident {
                Stall::Idle
            } else if self.iq_used == 0 {
                Stall::Fetch
            } else {
                Stall::Dependency
            };
        }
        active |= self.ooo_fetch(now);
        Ok(active)
    }

    /// The warp's oldest issue-queue entry that can issue now, and the ALU it would take.
    fn ooo_pick(&self, now: u64, slot: u32) -> Option<(usize, usize)> {
        let w = self.warps[slot as usize].as_ref()?;
        if w.w.state != WarpState::Ready || w.iq.is_empty() || w.resume_at > now {
            return None;
        }
        // (under the replay queue a frozen warp's queued instructions are saved with its
        // context: it issues nothing more)
        if w.frozen && matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol) {
            return None;
        }
        let blk = self.blocks[w.block as usize].as_ref().unwrap();
        if blk.restoring {
            return None;
        }
        let t = &blk.info.timing;
        let mut hold = [0u64; 5];
        for &(c, m) in &w.src_hold {
            if c + 2 > now {
                for i in 0..5 {
                    hold[i] |= m[i];
                }
            }
        }
        for &(c, m) in &w.mem_hold {
            if c >= now {
                for i in 0..5 {
                    hold[i] |= m[i];
                }
            }
        }
        let rqs = matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol);
        let mut older_mem = false;
        let (mut older_w, mut older_r) = ([0u64; 5], [0u64; 5]);
        for (k, e) in w.iq.iter().enumerate() {
            let pc = e.pc as usize;
            let reads = &t.reads[pc];
            let mut wr = [0u64; 5];
            if let Some(b) = t.writes[pc] {
                bit(&mut wr, b as usize);
            }
            let class = t.class[pc];
            let touch = &t.touches[pc];
            let ok = e.ready_at <= now
                && !any(&w.pending, touch)
                && !any(&older_w, touch)
                && !any(&older_r, &wr)
                && !any(&hold, &wr)
                && (k == 0 || !(ctrl_like(class) || class == Class::Fence))
                && (class != Class::Fence || w.mem_recs.is_empty())
                // (memory instructions issue in program order: only replayed ones can meet)
                && !(older_mem && mem_like(class))
                // (a barrier or exit waits until no older global access can fault)
                && !(rqs && matches!(class, Class::Barrier | Class::Control) && w.check_until >= now && self.is_exit_or_bar(&blk.info, pc))
                // (a global access does not overtake an older one that may still fault and be
                // replayed, where memory order matters: a load an older store or atomic, a
                // store or atomic any older access)
                && !(rqs && t.log_need[pc] > 0 && (w.store_check >= now || (t.log_need[pc] > 1 && w.check_until >= now)));
            let ok = ok
                && (!rqs
                    || t.log_need[pc] == 0
                    // (a replay under the operand log once its logged operands are read out of
                    // the array)
                    || if e.replay.is_some() {
                        e.nlog == 0 || self.ol_loaded(slot, e.age) || {
                            self.ol_wait.set(self.ol_wait.get() + 1);
                            false
                        }
                    } else if e.staged {
                        // (a restored one takes entries for its logged operands, out of its
                        // block's reservation, when the list holds them, and writes them)
                        self.ol_out().list_room >= e.nlog && self.ol_wq_free() >= e.nlog
                    } else {
                        self.log_room(w.block, if e.fixed { 0 } else { t.log_need[pc] })
                    });
            if ok {
                let unit = match class {
                    Class::Sfu => (self.sfu_free <= now).then_some(0),
                    Class::Mem(Space::Param) => (0..self.alu_free.len()).find(|&u| self.alu_free[u] <= now),
                    Class::Mem(_) | Class::Atomic => {
                        let mshrs_ok = w.mshr_need.is_none_or(|need| self.mshrs_used + need <= self.lat.l1_mshrs || self.mshrs_used == 0);
                        (self.ldst_free <= now && mshrs_ok).then_some(0)
                    }
                    _ => (0..self.alu_free.len()).find(|&u| self.alu_free[u] <= now),
                };
                if let Some(u) = unit {
                    return Some((k, u));
                }
            }
            for i in 0..5 {
                older_w[i] |= wr[i];
                older_r[i] |= reads[i];
            }
            older_mem |= mem_like(class);
        }
        None
    }

    /// The sources of the instruction at `pc`, issued now by the warp in `slot`, are held
    /// until they are read (released at operand read, visible to issue the cycle after).
    fn hold_sources(&mut self, now: u64, slot: u32, bslot: u32, pc: usize) {
        let reads = self.info(bslot).timing.reads[pc];
        let hw = self.warps[slot as usize].as_mut().unwrap();
        let old = if hw.src_hold[0].0 <= hw.src_hold[1].0 { 0 } else { 1 };
        if hw.src_hold[1 - old].0 == now {
            for i in 0..5 {
                hw.src_hold[1 - old].1[i] |= reads[i];
            }
        } else {
            hw.src_hold[old] = (now, reads);
        }
    }

    /// Whether a memory or control-flow instruction still waits in the warp's queue (a replayed
    /// memory instruction issuing ahead of it does not re-enable fetch: that one does, at its
    /// own issue or commit). Never true on the baseline, where the instruction that stopped
    /// fetch is the warp's youngest.
    fn gated_behind(&self, slot: u32) -> bool {
        let w = self.warps[slot as usize].as_ref().unwrap();
        gates_fetch(&self.info(w.block).timing, &w.iq)
    }

    /// Whether the instruction at `pc` is `bar.sync` or `exit`.
    fn is_exit_or_bar(&self, info: &LaunchInfo, pc: usize) -> bool {
        matches!(info.launch.kernel.code[pc].op, Op::Bar | Op::Exit)
    }

    /// Replay-queue schemes: whether a new global memory instruction of block slot `bslot`
    /// needing `need` log entries finds a replay-queue slot and (operand log) its entries; a
    /// refusal is counted.
    fn log_room(&self, bslot: u32, need: u8) -> bool {
        if self.rq_is_full() {
            self.rq_full.set(self.rq_full.get() + 1);
            return false;
        }
        if self.ol.is_some() && (self.ol_room(bslot) < need || self.ol_wq_free() < need) {
            self.log_full.set(self.log_full.get() + 1);
            if self.ol_room(bslot) >= need {
                self.ol_queue_full.set(self.ol_queue_full.get() + 1);
            }
            // (`hold`: it issues without a log, holding its sources as under the replay queue)
            return self.cfg.oplog_full == crate::config::OplogFull::Hold;
        }
        true
    }

    /// Issues entry `k` of the warp's issue queue on unit `unit` (an ALU's index). Returns
    /// false (and changes nothing) if the memory stage cannot take it this cycle.
    fn ooo_issue(&mut self, now: u64, unit: usize, slot: u32, k: usize, mem: &mut MemSys) -> Result<bool, SmFault> {
        let e = self.warps[slot as usize].as_ref().unwrap().iq[k];
        let mut d = self.decode_entry(slot, e.pc as usize, e.active);
        if e.fixed {
            // (a replay executes in the lanes it executed in: its guard is not read again; under
            // the operand log its addresses come from the log)
            d.exec_mask = e.active;
            d.write = self.info(d.bslot).timing.writes[d.pc];
            // (a restored one's from the staging store, a replay's as read out of the array)
            d.addr_ops = if e.nlog == 0 {
                None
            } else if e.staged {
                Some(self.ol_staged[e.log[0] as usize].expect("a staged logged operand"))
            } else {
                Some(self.ol_rbuf.as_ref().filter(|_| self.ol_loaded(slot, e.age)).expect("a replay's logged operands read out before it issues").data[0])
            };
        }
        let mut plan = MemPlan::new();
        let faulting = match self.prepare_memory(now, slot, &d, &mut plan, mem)? {
            Prep::Go => None,
            Prep::Refused => return Ok(false),
            Prep::Squashed(r) => {
                // (it stays in the queue, the warp fetching nothing behind it, and issues
                // again once its page is in)
                self.warps[slot as usize].as_mut().unwrap().iq[k].ready_at = r + 2;
                return Ok(true);
            }
            Prep::Faulting(f, r) => Some((f, r)),
        };
        let cfg_alu = self.lat.alu_latency as u64;
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.mshr_need = None;
        hw.iq.remove(k);
        if e.replay.is_none() {
            self.iq_used -= 1;
        }
        if e.fixed {
            self.stats.replayed += 1;
        }
        if let Some((f, r)) = faulting {
            return Ok(self.issue_faulting(now, slot, &d, &e, &plan, f, r));
        }
        let ev = if ctrl_like(d.class) { exec::issue(&mut hw.w, &d.inst, d.exec_mask) } else { Event::Continue };
        // Its sources are released at operand read (the next cycle).
        self.hold_sources(now, slot, d.bslot, d.pc);
        let rec = self.execute(now, unit, slot, &d, &plan, mem);
        let global = plan.space == Some(Space::Global);
        if global && self.scheme.replays() {
            if let Some(id) = rec {
                self.track_global(now, id, slot, &d, &e, plan.last_check, None);
            }
        }
        // Fetch gating.
        let gated_behind = self.gated_behind(slot);
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if ctrl_like(d.class) {
            // Commit after operand read and execute; fetch the cycle after.
            hw.fetch_gated = false;
            hw.fetch_at = now + 1 + cfg_alu + 1;
        } else if mem_like(d.class) {
            match (self.scheme, global, rec) {
                (FaultScheme::WdCommit, true, Some(id)) => hw.wd_wait = Some(id),
                (FaultScheme::WdLastcheck, true, _) => {
                    hw.fetch_gated = false;
                    hw.fetch_at = plan.last_check + 1;
                }
                _ if gated_behind => {}
                _ => {
                    hw.fetch_gated = false;
                    hw.fetch_at = now;
                }
            }
        }
        let s = (slot % self.cfg.schedulers) as usize;
        self.block_event(now, s, slot, d.bslot, ev);
        Ok(true)
    }

    /// The part of issue both pipelines share, once the instruction's control flow is done:
    /// it is counted, a data instruction gets its record, it occupies its unit (`unit`: the
    /// ALU's index) and its writeback or shared-memory access is scheduled. Returns its record.
    fn execute(&mut self, now: u64, unit: usize, slot: u32, d: &Decoded, plan: &MemPlan, mem: &mut MemSys) -> Option<u32> {
        self.stats.warp_insts += 1;
        self.stats.thread_insts += d.active_lanes;
        let rec = (d.exec_mask != 0 && exec::is_data(&d.inst.op)).then(|| self.new_rec(slot, d, plan));
        let done_at = self.occupy_unit(now, unit, rec, d, plan, mem);
        if let (Some(id), Some(t)) = (rec, done_at) {
            let ev = if plan.space == Some(Space::Shared) { SmEv::Shared(id) } else { SmEv::Writeback(id) };
            self.events.push(t, ev);
        }
        rec
    }

    /// Replay-queue schemes: a global memory instruction issued now (record `id`) takes its
    /// replay-queue slot (a replay keeps its own) and its operand-log entries (a replay keeps
    /// its logged operands); under the replay queue its sources stay held until its last TLB
    /// check; under the operand log its entries are freed then. A barrier or exit of its warp
    /// waits past that check.
    #[allow(clippy::too_many_arguments)]
    fn track_global(&mut self, now: u64, id: u32, slot: u32, d: &Decoded, e: &IqEntry, last_check: u64, fault: Option<u64>) {
        let bslot = d.bslot;
        let need = self.info(bslot).timing.log_need[d.pc];
        // (the logged operands a replay issues with)
        let mut ops = [[0u32; WARP_SIZE]; 3];
        let (rq, log, nlog, from_log) = match e.replay {
            Some(q) => {
                // (the entry names its slot; it is the warp's oldest faulted instruction, the
                // oldest waiting memory instruction of an issue queue sorted by age, O7)
                let o = self.rq_request(now, |i| {
                    i.replay = true;
                    i.replay_idx = q as u8;
                });
                if !o.replay_ok {
                    self.rq_broken(now, format!("does not hold slot {q}, which warp slot {slot} replays, as faulted"));
                }
                if e.nlog > 0 {
                    ops = self.ol_rbuf.take().expect("a replay's logged operands read out before it issues").data;
                }
                // (the warp's next replay, which the load scan passed over while this one was
                // its oldest, may be loaded from now on)
                self.ol_load_at = now;
                (Some(q), e.log, e.nlog, e.nlog > 0)
            }
            None if self.scheme == FaultScheme::Naive => (None, [0; 3], 0, false),
            None => {
                // (a new instruction, or a replay restored with its block's context, which
                // takes a slot again and keeps its own log)
                let (log, nlog) = if e.staged {
                    // (its entries from its block's reservation; its operands were written
                    // into them at issue)
                    let o = self.ol_request(now, |i| {
                        i.alloc = true;
                        i.alloc_block = bslot as u8;
                        i.alloc_need = e.nlog;
                        i.alloc_res = true;
                    });
                    let mut log = [0u16; 3];
                    for j in 0..e.nlog as usize {
                        ops[j] = self.ol_unstage(e.log[j]);
                        log[j] = o.alloc_idx[j] as u16;
                        // (through the write queue, whose places its issue found free)
                        self.ol_push(log[j], ops[j]);
                    }
                    (log, e.nlog)
                } else if e.fixed {
                    (e.log, e.nlog)
                } else {
                    let mut log = [0u16; 3];
                    let nlog = if self.ol.is_some() && self.ol_room(bslot) >= need && self.ol_wq_free() >= need { need } else { 0 };
                    if nlog > 0 {
                        // (its places in the array's write queue, filled at its operand read)
                        if self.od.is_some() {
                            self.ol_wq_res += nlog;
                        }
                        let o = self.ol_request(now, |i| {
                            i.alloc = true;
                            i.alloc_block = bslot as u8;
                            i.alloc_need = nlog;
                        });
                        for (l, &x) in log.iter_mut().zip(&o.alloc_idx).take(nlog as usize) {
                            *l = x as u16;
                        }
                    }
                    (log, nlog)
                };
                let o = self.rq_request(now, |i| {
                    i.issue = true;
                    i.warp = slot as u8;
                    i.pc = d.pc as u16;
                    i.exec = d.exec_mask;
                    i.age = e.age as u16;
                    i.log = log.map(|l| l as u8);
                    i.nlog = nlog;
                });
                self.rq_used += 1;
                if o.full {
                    self.rq_broken(now, format!("it was full when warp slot {slot}'s memory instruction (pc {}) issued, after it had room in that cycle", d.pc));
                }
                (Some(o.alloc_idx as u16), log, nlog, e.fixed && nlog > 0)
            }
        };
        let r = &mut self.recs[id as usize];
        r.rq = rq;
        r.log = log;
        r.nlog = nlog;
        r.from_log = from_log;
        if from_log {
            for (j, o) in ops.iter().enumerate().take(nlog as usize) {
                *logged_operand(&mut r.f, j) = *o;
            }
        }
        r.age = e.age;
        let reads = self.info(bslot).timing.reads[d.pc];
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if need > 1 {
            hw.store_check = hw.store_check.max(fault.unwrap_or(last_check));
        }
        match fault {
            None => {
                hw.check_until = hw.check_until.max(last_check);
                if nlog == 0 && self.scheme != FaultScheme::Naive {
                    hw.mem_hold.retain(|&(c, _)| c >= now);
                    hw.mem_hold.push((last_check, reads));
                }
                for &l in &log[..nlog as usize] {
                    self.events.push(last_check, SmEv::LogFree(l));
                }
            }
            Some(f) => {
                hw.check_until = hw.check_until.max(f);
                if nlog == 0 && self.scheme != FaultScheme::Naive {
                    hw.mem_hold.retain(|&(c, _)| c >= now);
                    hw.mem_hold.push((f, reads));
                }
                self.events.push(f, SmEv::Fault(id));
            }
        }
    }

    /// Replay-queue schemes: issues a global memory instruction whose translation will fault
    /// at `f` (its page in at `r`). It takes its record, its slot and log entries, occupies the
    /// load/store unit for its lines, reads its operands (and logs them), and sends nothing
    /// (docs/faults.md O1-O3); at `f` it is squashed ([`Sm::fault`]).
    #[allow(clippy::too_many_arguments)]
    fn issue_faulting(&mut self, now: u64, slot: u32, d: &Decoded, e: &IqEntry, plan: &MemPlan, f: u64, r: u64) -> bool {
        self.ldst_free = now + plan.nlines as u64;
        let id = self.new_rec(slot, d, plan);
        // (a squashed record never writes back: its ready cycle carries its page's arrival)
        self.recs[id as usize].ready_at = r;
        self.track_global(now, id, slot, d, e, plan.last_check, Some(f));
        // Its sources are released at operand read (under the replay queue also held to its fault).
        self.hold_sources(now, slot, d.bslot, d.pc);
        let gated_behind = self.gated_behind(slot);
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if !gated_behind {
            hw.fetch_gated = false;
            hw.fetch_at = now;
        }
        true
    }

    /// Replay-queue schemes: instruction `id`'s translation faults now. It is squashed: its
    /// record is freed and its destination released (nothing was written or sent). Under the
    /// replay queue and the operand log it goes back into its warp's queue in age order, as
    /// the replay queue's faulted entry; the warp's fetched, unissued instructions stay behind
    /// it (they are the replay queue's part of the issue queue, docs/faults.md O6, O7), and
    /// the warp issues and fetches nothing until the page is in; the warp's other in-flight
    /// instructions drain meanwhile. The naive recovery instead restarts the warp at the
    /// faulted instruction's pc and throws its fetched instructions away.
    fn fault(&mut self, now: u64, id: u32) {
        let r = &self.recs[id as usize];
        let (slot, pc, age, rq, write) = (r.warp, r.f.pc, r.age, r.rq, r.write);
        // It issues again, and its warp fetches, from two cycles after its page is in.
        let resume = r.ready_at + 2;
        self.free_recs.push(id);
        self.stats.squashed += 1;
        let naive = self.scheme == FaultScheme::Naive;
        // (under the replay queue its slot is marked faulted, and the entry that goes back to
        // its warp is read from the slot: pc, lanes and log entries; the age stays the SM's)
        let replay = match (naive, rq) {
            (false, Some(q)) => {
                let o = self.rq_request(now, |i| {
                    i.fault |= 1 << q;
                    i.rd_idx = q as u8;
                });
                if o.rd_warp as u32 != slot {
                    self.rq_broken(now, format!("holds warp slot {} in slot {q}, whose instruction is warp slot {slot}'s", o.rd_warp));
                }
                // (its logged operands are loaded from two cycles before it may issue)
                self.ol_load_at = self.ol_load_at.min(resume.saturating_sub(2));
                Some(IqEntry {
                    pc: o.rd_pc as u32,
                    active: o.rd_exec,
                    ready_at: resume,
                    age,
                    replay: Some(q),
                    fixed: true,
                    log: o.rd_log.map(u16::from),
                    nlog: o.rd_nlog,
                    staged: false,
                })
            }
            _ => None,
        };
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.inflight -= 1;
        if let Some(p) = hw.mem_recs.iter().position(|&x| x == id) {
            hw.mem_recs.swap_remove(p);
        }
        if let Some(b) = write {
            let (i, m) = (b as usize / 64, 1u64 << (b % 64));
            hw.pending[i] &= !m;
            hw.pending_mem[i] &= !m;
        }
        hw.resume_at = hw.resume_at.max(resume);
        hw.fetch_at = hw.fetch_at.max(resume);
        if naive {
            let dropped = hw.iq.len() as u32;
            hw.iq.clear();
            self.iq_used -= dropped;
            if let Some(top) = hw.w.stack.last_mut() {
                top.pc = pc;
            }
            hw.fetch_gated = false;
        } else {
            let e = replay.expect("a replay-queue slot");
            let at = hw.iq.iter().position(|x| x.age > age).unwrap_or(hw.iq.len());
            hw.iq.insert(at, e);
        }
        let ended = (hw.w.state == WarpState::Done && hw.inflight == 0).then_some(hw.block);
        self.wake_at = self.wake_at.min(now);
        self.tb_check = true;
        if let Some(b) = ended {
            self.check_block(now, b);
        }
    }

    /// [`Sm::decode`] for an issue-queue entry: its pc and the lanes active when it was
    /// fetched (its guard is read now).
    fn decode_entry(&self, slot: u32, pc: usize, active: u32) -> Decoded {
        let hw = self.warps[slot as usize].as_ref().unwrap();
        let bslot = hw.block;
        let info = self.info(bslot);
        let inst = info.launch.kernel.code[pc];
        let exec_mask = exec::guard_mask(&hw.w, &inst, active);
        Decoded { bslot, pc, inst, class: info.timing.class[pc], exec_mask, active_lanes: active.count_ones() as u64, write: info.timing.writes[pc].filter(|_| exec_mask != 0), addr_ops: None }
    }

    /// Fetch: the next warp (round robin) whose fetch is enabled brings up to `fetch_width`
    /// instructions into the issue queue, as space allows. A non-control instruction moves the
    /// warp's pc on as it is fetched (no speculation: nothing after a control-flow instruction
    /// is fetched before it commits, so the pc is always known); a control-flow instruction
    /// moves it at issue.
    fn ooo_fetch(&mut self, now: u64) -> bool {
        let cap = self.cfg.iq_entries;
        if self.iq_used >= cap {
            return false;
        }
        let n = self.warps.len() as u32;
        for k in 0..n {
            let slot = (self.fetch_rr + k) % n;
            let Some(w) = self.warps[slot as usize].as_ref() else {
                continue;
            };
            if w.w.state != WarpState::Ready || w.fetch_gated || w.frozen || w.fetch_at > now || w.wd_wait.is_some() || w.resume_at > now {
                continue;
            }
            let blk = self.blocks[w.block as usize].as_ref().unwrap();
            if blk.restoring {
                continue;
            }
            let info = blk.info.clone();
            let width = self.cfg.fetch_width.min(cap - self.iq_used);
            let hw = self.warps[slot as usize].as_mut().unwrap();
            let mut fetched = 0;
            while fetched < width && hw.w.state == WarpState::Ready {
                let Some(pc) = hw.w.pc() else { break };
                let class = info.timing.class[pc as usize];
                hw.iq.push_back(IqEntry { pc, active: hw.w.active_mask(), ready_at: now + 1, age: hw.age, replay: None, fixed: false, log: [0; 3], nlog: 0, staged: false });
                hw.age = hw.age.wrapping_add(1);
                fetched += 1;
                if ctrl_like(class) {
                    hw.fetch_gated = true;
                    break;
                }
                hw.w.advance();
                if mem_like(class) {
                    hw.fetch_gated = true;
                    break;
                }
            }
            self.iq_used += fetched;
            self.fetch_rr = (slot + 1) % n;
            return fetched > 0;
        }
        false
    }

    /// Caches the scoreboard mask and class of the warp's next instruction.
    fn refresh_next(w: &mut HwWarp, info: &LaunchInfo) {
        if let Some(pc) = w.w.pc() {
            w.next_touch = info.timing.touches[pc as usize];
            w.next_class = info.timing.class[pc as usize];
        }
    }

    /// Whether the warp can issue now; if not, why, and the earliest cycle that could change
    /// by itself (`u64::MAX`: only an event can change it).
    fn eligible(&self, now: u64, slot: u32, s: usize) -> Result<(), (Stall, u64)> {
        let w = self.warps[slot as usize].as_ref().unwrap();
        if w.frozen {
            return Err((Stall::Idle, u64::MAX));
        }
        match w.w.state {
            WarpState::Done => return Err((Stall::Idle, u64::MAX)),
            WarpState::AtBarrier => return Err((Stall::Barrier, u64::MAX)),
            WarpState::Ready => {}
        }
        if self.z_swap_waiting(slot) {
            // (reading its next instruction's sets from swap)
            return Err((Stall::Memory, u64::MAX));
        }
        if w.next_issue > now || w.ibuf == 0 {
            let t = if w.ibuf == 0 { now + 1 } else { w.next_issue };
            return Err((Stall::Fetch, t.max(w.next_issue)));
        }
        let t = &w.next_touch;
        if any(&w.pending, t) {
            return Err((if any(&w.pending_mem, t) { Stall::Memory } else { Stall::Dependency }, u64::MAX));
        }
        if w.next_class == Class::Fence && !w.mem_recs.is_empty() {
            // A fence waits for the warp's loads, stores and atomics to complete.
            return Err((Stall::Memory, u64::MAX));
        }
        if let Some(need) = w.mshr_need {
            if self.mshrs_used + need > self.lat.l1_mshrs && self.mshrs_used > 0 {
                // Refused for lack of MSHRs: a response frees one and wakes the scheduler.
                return Err((Stall::Unit, u64::MAX));
            }
        }
        let free = match w.next_class {
            Class::Sfu => self.sfu_free,
            Class::Mem(Space::Param) => self.alu_free[s],
            Class::Mem(_) | Class::Atomic => self.ldst_free,
            _ => self.alu_free[s],
        };
        if free > now {
            return Err((Stall::Unit, free));
        }
        Ok(())
    }

    fn schedule(&mut self, now: u64, s: usize, mem: &mut MemSys) -> Result<bool, SmFault> {
        let n = self.scheds[s].warps.len();
        if n == 0 {
            self.scheds[s].reason = Stall::Idle;
            self.scheds[s].wake = u64::MAX;
            return Ok(false);
        }
        let mut first_reason = None;
        let mut wake = u64::MAX;
        let mut pick = None;
        let last = self.scheds[s].last;
        let mut consider = |sm: &Sm, slot: u32| -> bool {
            match sm.eligible(now, slot, s) {
                Ok(()) => {
                    pick = Some(slot);
                    true
                }
                Err((r, t)) => {
                    // (a finished warp waiting for its block says nothing about the stall)
                    if r != Stall::Idle {
                        first_reason.get_or_insert(r);
                    }
                    wake = wake.min(t);
                    false
                }
            }
        };
        match self.cfg.scheduler {
            SchedPolicy::Gto => {
                let greedy = last.is_some_and(|l| consider(self, l));
                if !greedy {
                    for k in 0..n {
                        let slot = self.scheds[s].warps[k];
                        if Some(slot) != last && consider(self, slot) {
                            break;
                        }
                    }
                }
            }
            SchedPolicy::Lrr => {
                let start = last.and_then(|l| self.scheds[s].warps.iter().position(|&w| w == l)).map_or(0, |p| p + 1);
                for k in 0..n {
                    if consider(self, self.scheds[s].warps[(start + k) % n]) {
                        break;
                    }
                }
            }
        }
        let Some(slot) = pick else {
            self.scheds[s].reason = first_reason.unwrap_or(Stall::Idle);
            self.scheds[s].wake = wake;
            return Ok(false);
        };
        let d = self.decode(slot);
        if self.zorua.is_some() {
            // (only a warp the coordinator has schedulable issues)
            assert!(self.scheds[s].warps.contains(&slot), "SM {}: warp slot {slot} picked while not schedulable", self.id);
            if self.z_swap_before_issue(now, slot, &d, mem) {
                // (the instruction's sets in swap are read first: the warp waits for them)
                self.scheds[s].reason = Stall::Memory;
                self.scheds[s].wake = now + 1;
                return Ok(true);
            }
        }
        if !self.issue(now, s, slot, d, mem)? {
            // MSHRs exhausted: the cycle is lost; look again next cycle, when that warp is no
            // longer eligible (until an MSHR frees) and another may issue. Counted as activity
            // so that the SM stays awake for it.
            self.scheds[s].reason = Stall::Unit;
            self.scheds[s].wake = now + 1;
            return Ok(true);
        }
        // (the warp may have exited and been freed by its last instruction; under Zorua it may
        // have left its scheduler for the coordinator)
        let stays = self.warps[slot as usize].is_some() && (self.zorua.is_none() || self.scheds[s].warps.contains(&slot));
        self.scheds[s].last = stays.then_some(slot);
        self.scheds[s].reason = Stall::Issued;
        self.scheds[s].wake = now + 1;
        Ok(true)
    }

    /// Issues the warp's next instruction. Returns false (and changes nothing) if the memory
    /// stage cannot take it this cycle (MSHRs exhausted).
    ///
    /// The stages, in order: [`Sm::decode`] has read the instruction (`d`); [`Sm::plan_memory`]
    /// works out a memory access's lines from the address registers (the values the
    /// operand-read stage will read: the scoreboard keeps them from changing in between) and
    /// refuses a load the MSHRs cannot take; [`exec::issue`] does the instruction's control
    /// flow and moves the pc; a data instruction gets its record ([`Sm::new_rec`], which marks
    /// its result pending and queues it for operand read); [`Sm::occupy_unit`] times it on its
    /// functional unit and sends its memory traffic, and its writeback (or shared-memory
    /// access) is scheduled; [`Sm::advance_flow`] updates the instruction buffer and fetch
    /// queue; [`Sm::block_event`] handles an arrival at a barrier or an exit.
    fn issue(&mut self, now: u64, s: usize, slot: u32, d: Decoded, mem: &mut MemSys) -> Result<bool, SmFault> {
        let mut plan = MemPlan::new();
        match self.prepare_memory(now, slot, &d, &mut plan, mem)? {
            Prep::Go => {}
            Prep::Refused => return Ok(false),
            Prep::Squashed(r) => {
                self.warps[slot as usize].as_mut().unwrap().next_issue = r + 2;
                return Ok(true);
            }
            Prep::Faulting(..) => unreachable!("the replay-queue schemes run on the thesis's pipeline (checked by the configuration)"),
        }
        let hw = self.warps[slot as usize].as_mut().unwrap();
        hw.mshr_need = None;
        let ev = exec::issue(&mut hw.w, &d.inst, d.exec_mask);
        let seq_next = hw.w.pc() == Some(d.pc as u32 + 1);
        let rec = self.execute(now, s, slot, &d, &plan, mem);
        self.advance_flow(now, s, slot, &d, seq_next);
        self.z_issued(now, s, slot, d.pc, &d.inst, ev);
        if plan.space == Some(Space::Global) && self.scheme != FaultScheme::Stall {
            // Warp Disable: the warp fetches nothing more until this instruction commits, or
            // until its last TLB check (then fetch the cycle after, issue the next).
            let hw = self.warps[slot as usize].as_mut().unwrap();
            match (self.scheme, rec) {
                (FaultScheme::WdCommit, Some(id)) => {
                    hw.wd_wait = Some(id);
                    hw.next_issue = u64::MAX;
                }
                _ => hw.next_issue = hw.next_issue.max(plan.last_check + 2),
            }
        }
        self.block_event(now, s, slot, d.bslot, ev);
        Ok(true)
    }

    /// Translates each line of a global access (record-to-be of the warp in `slot`, issued
    /// now): the lines' addresses are generated the cycle after operand read and each asks the
    /// L1 TLB then. Fills the plan's per-line ready cycles, its last TLB check and its fault;
    /// a page of another process is the instruction's fault (isolation).
    fn translate(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<(), SmFault> {
        self.translate_lines(now, slot, d, plan, mem)?;
        if self.inject.rate > 0.0 && plan.nlines > 0 {
            // An injected fault: at the instruction's last TLB check, its page in `latency`
            // cycles later (under stall-on-fault its lines wait that long).
            let n = self.inject_n;
            self.inject_n += 1;
            let h = splitmix(self.inject.seed ^ (self.id as u64) << 40 ^ n);
            if ((h >> 11) as f64 / (1u64 << 53) as f64) < self.inject.rate {
                let f = plan.last_check;
                let r = f + self.inject.latency as u64;
                plan.fault = Some(plan.fault.map_or((f, r), |(f0, r0)| (f0.min(f), r0.max(r))));
                if self.scheme == FaultScheme::Stall {
                    plan.ready[..plan.nlines].fill(r);
                    plan.last_check = r;
                }
            }
        }
        Ok(())
    }

    fn translate_lines(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<(), SmFault> {
        let info = &self.blocks[d.bslot as usize].as_ref().unwrap().info;
        let asid = info.process;
        let t0 = now + 2;
        if !self.vm {
            let t = t0 + self.lat.l1_tlb_latency as u64;
            plan.ready[..plan.nlines].fill(t);
            plan.last_check = t;
            return Ok(());
        }
        let shift = PAGE_BYTES.trailing_zeros() - self.lat.l1_line.trailing_zeros();
        let mut last = t0;
        let mut fault: Option<(u64, u64)> = None;
        for i in 0..plan.nlines {
            let page = plan.lines[i] >> shift;
            if i > 0 && plan.lines[i - 1] >> shift == page {
                // (a line on the previous line's page: the same translation)
                plan.ready[i] = plan.ready[i - 1];
                mem.mmu.stats.translations += 1;
                mem.mmu.stats.l1_tlb_joins += 1;
                continue;
            }
            match mem.mmu.translate(&mut self.tlb, asid, page, t0) {
                Ok(tr) => {
                    plan.ready[i] = tr.ready;
                    last = last.max(tr.ready);
                    if let Some((f, r)) = tr.fault {
                        fault = Some(fault.map_or((f, r), |(f0, r0)| (f0.min(f), r0.max(r))));
                    }
                }
                Err(NotOwned { owner }) => {
                    let hw = self.warps[slot as usize].as_ref().unwrap();
                    let blk = self.blocks[d.bslot as usize].as_ref().unwrap();
                    let lane = (0..WARP_SIZE).find(|&l| d.exec_mask >> l & 1 != 0 && plan.lane_line[l] == plan.lines[i]).unwrap_or(0);
                    let (Op::Ld { addr, .. } | Op::St { addr, .. } | Op::Atom { addr, .. }) = d.inst.op else { unreachable!("a global access") };
                    let ad = self.lane_addresses(slot, d, addr);
                    let fault = Fault { pc: d.pc as u32, lane: lane as u32, space: Space::Global, store: plan.store || plan.atomic, addr: ad[lane], kind: FaultKind::NotOwned { owner } };
                    return Err(SmFault { launch: blk.info.id, ctaid: blk.ctaid, warp: hw.w.id, fault });
                }
            }
        }
        plan.last_check = last;
        plan.fault = fault;
        Ok(())
    }

    /// A faulted instruction of the warp in `slot` occupies [`f`, `r`): counted once per warp
    /// cycle.
    fn note_fault(&mut self, slot: u32, f: u64, r: u64) {
        self.stats.faulted_insts += 1;
        let hw = self.warps[slot as usize].as_mut().unwrap();
        let a = f.max(hw.fault_until);
        if r > a {
            self.stats.faulted_warp_cycles += r - a;
            if let Some(tl) = &mut self.timeline {
                tl.add(a, r, 1, true);
            }
        }
        hw.fault_until = hw.fault_until.max(r);
    }

    /// The memory side of issuing the decoded instruction of the warp in `slot`: plans its
    /// accesses ([`Sm::plan_memory`]; `Refused` when the MSHRs cannot take a load now) and
    /// translates a global access ([`Sm::translate`]). Under Warp Disable a faulting
    /// instruction is squashed (`Squashed(cycle its page is in)`): it is the warp's youngest
    /// (nothing issues behind a global memory instruction before its last TLB check), has read
    /// nothing into the register file and performed no line (`docs/faults.md`, O2, O3), so
    /// squashing it leaves the warp's pc on it; the caller holds it until its page arrives,
    /// then it is fetched and replayed. (The model decides at issue, where the translation is
    /// timed; the warp could do nothing in between either way.)
    fn prepare_memory(&mut self, now: u64, slot: u32, d: &Decoded, plan: &mut MemPlan, mem: &mut MemSys) -> Result<Prep, SmFault> {
        if let Err(need) = self.plan_memory(slot, d, plan) {
            self.warps[slot as usize].as_mut().unwrap().mshr_need = Some(need);
            return Ok(Prep::Refused);
        }
        if plan.space == Some(Space::Global) {
            self.translate(now, slot, d, plan, mem)?;
            if let Some((f, r)) = plan.fault {
                self.note_fault(slot, f, r);
                if self.scheme.replays() {
                    self.warps[slot as usize].as_mut().unwrap().mshr_need = None;
                    return Ok(Prep::Faulting(f, r));
                }
                if self.scheme != FaultScheme::Stall {
                    self.stats.squashed += 1;
                    self.ldst_free = now + plan.nlines as u64;
                    self.warps[slot as usize].as_mut().unwrap().mshr_need = None;
                    return Ok(Prep::Squashed(r));
                }
            }
        }
        Ok(Prep::Go)
    }

    /// The launch of the block in slot `bslot` (which must be occupied).
    fn info(&self, bslot: u32) -> &LaunchInfo {
        &self.blocks[bslot as usize].as_ref().unwrap().info
    }

    /// Reads the warp's next instruction and what the issue stages need to know about it,
    /// before it executes.
    fn decode(&self, slot: u32) -> Decoded {
        let hw = self.warps[slot as usize].as_ref().unwrap();
        let bslot = hw.block;
        let info = self.info(bslot);
        let pc = hw.w.pc().unwrap() as usize;
        let inst = info.launch.kernel.code[pc];
        let exec_mask = exec::exec_mask(&hw.w, &inst);
        Decoded {
            bslot,
            pc,
            inst,
            class: info.timing.class[pc],
            exec_mask,
            active_lanes: hw.w.active_mask().count_ones() as u64,
            write: info.timing.writes[pc].filter(|_| exec_mask != 0),
            addr_ops: None,
        }
    }

    /// The lanes' addresses of the memory instruction `d` of the warp in `slot`: from its
    /// registers, or for a replay under the operand log from the log.
    fn lane_addresses(&self, slot: u32, d: &Decoded, addr: mpgpu_spec::isa::Addr) -> [u32; WARP_SIZE] {
        match d.addr_ops {
            Some(a) => a,
            None => exec::addresses(&self.warps[slot as usize].as_ref().unwrap().w, addr),
        }
    }

    /// Analyses a load, store or atomic before it executes (when its address registers may
    /// still be overwritten): the bank conflicts of a shared-memory access, or the lines a
    /// global or local access coalesces into. Anything else (parameter loads, instructions no
    /// lane executes, non-memory instructions) leaves the plan empty. `Err(need)`: a load the
    /// MSHRs cannot take now; it needs `need` of them.
    fn plan_memory(&self, slot: u32, d: &Decoded, plan: &mut MemPlan) -> Result<(), u32> {
        let (Op::Ld { space, addr, .. } | Op::St { space, addr, .. } | Op::Atom { space, addr, .. }) = d.inst.op else {
            return Ok(());
        };
        if d.exec_mask == 0 {
            return Ok(());
        }
        plan.store = matches!(d.inst.op, Op::St { .. });
        plan.atomic = matches!(d.inst.op, Op::Atom { .. });
        let ad = self.lane_addresses(slot, d, addr);
        match space {
            Space::Global | Space::Local => {
                self.coalesce_lines(slot, d, space, &ad, plan);
                if !plan.store && !plan.atomic {
                    if let Some(need) = self.mshr_refusal(&plan.lines[..plan.nlines]) {
                        return Err(need);
                    }
                }
                plan.space = Some(space);
            }
            Space::Shared => {
                plan.shared_degree = bank_degree(&ad, d.exec_mask, self.lat.shared_banks, plan.atomic);
                plan.space = Some(space);
            }
            Space::Param => {}
        }
        Ok(())
    }

    /// The distinct L1 lines a global or local access touches, in lane order (into
    /// `plan.lines`), and for a store the distinct words it writes to each. Local memory is
    /// modelled as a per-warp region above `LOCAL_BASE`, interleaved by lane (its data lives
    /// in the warp state; only its addresses reach the cache model).
    fn coalesce_lines(&self, slot: u32, d: &Decoded, space: Space, ad: &[u32; WARP_SIZE], plan: &mut MemPlan) {
        let per_warp = self.info(d.bslot).launch.kernel.local_bytes / 4 * WARP_SIZE as u32;
        let warp_base = (self.id.wrapping_mul(self.lat.warps).wrapping_add(slot)).wrapping_mul(per_warp);
        let mut words = [0u32; WARP_SIZE];
        let mut n = 0;
        let mut m = d.exec_mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = if space == Space::Local {
                let word = ad[l] / 4;
                LOCAL_BASE.wrapping_add(warp_base.wrapping_add(word.wrapping_mul(32)).wrapping_add(l as u32).wrapping_mul(4))
            } else {
                ad[l]
            };
            plan.lines[n] = self.l1.line_of(a);
            plan.lane_line[l] = plan.lines[n];
            words[n] = a >> 2;
            n += 1;
        }
        let mut line_lanes = [0u32; WARP_SIZE];
        plan.nlines = coalesce(&mut plan.lines, &mut line_lanes, n);
        if plan.store {
            // Bytes written per line: its distinct words (lanes storing to one word write it
            // once).
            let mut wl = [0u32; WARP_SIZE];
            let nw = coalesce(&mut words, &mut wl, n);
            for &w in &words[..nw] {
                let ln = self.l1.line_of(w.wrapping_mul(4));
                if let Some(i) = plan.lines[..plan.nlines].iter().position(|&x| x == ln) {
                    plan.line_words[i] += 1;
                }
            }
        }
    }

    /// Whether a load of `lines` must be refused for lack of MSHRs: `Some(need)` when its
    /// lines that miss and are not already on their way need more MSHRs than are free. (A
    /// load needing more MSHRs than exist goes ahead when all are free.)
    fn mshr_refusal(&self, lines: &[u32]) -> Option<u32> {
        let (cap, used) = (self.lat.l1_mshrs as usize, self.mshrs_used as usize);
        // (the misses are counted only when the MSHRs could run out)
        if used + lines.len() <= cap {
            return None;
        }
        let need = lines.iter().filter(|&&ln| !self.l1.probe(ln) && !self.mshr_of_line.contains_key(&ln)).count();
        (used + need > cap && used > 0).then_some(need as u32)
    }

    /// Occupies the instruction's functional unit for its initiation interval: the
    /// scheduler's ALU (arithmetic, control, barriers, fences, parameter loads), the SM's SFU,
    /// or the load/store path ([`Sm::memory_timing`]). Returns the writeback cycle of a
    /// fixed-latency result (`None`: nothing to write back at a fixed time).
    fn occupy_unit(&mut self, now: u64, s: usize, rec: Option<u32>, d: &Decoded, plan: &MemPlan, mem: &mut MemSys) -> Option<u64> {
        let cfg = self.lat;
        let or = now + 1; // operand read
        match d.class {
            Class::Alu | Class::Phase | Class::Fence | Class::Control | Class::Barrier | Class::Mem(Space::Param) => {
                self.alu_free[s] = now + cfg.alu_interval as u64;
                Some(or + cfg.alu_latency as u64)
            }
            Class::Sfu => {
                self.sfu_free = now + cfg.sfu_interval as u64;
                Some(or + cfg.sfu_latency as u64)
            }
            Class::Mem(_) | Class::Atomic => self.memory_timing(now, rec, plan, mem),
        }
    }

    /// Times a load, store or atomic on the load/store unit: operand read, address generation
    /// and the TLB, then shared memory (serialised by its bank conflicts) or the L1
    /// ([`Sm::l1_traffic`]); an access no lane makes takes one cycle. Returns the writeback
    /// cycle of a fixed-latency result.
    fn memory_timing(&mut self, now: u64, rec: Option<u32>, plan: &MemPlan, mem: &mut MemSys) -> Option<u64> {
        let cfg = self.lat;
        let or = now + 1; // operand read
        let agen = or + 1 + cfg.l1_tlb_latency as u64; // address generation + L1 TLB hit
        match plan.space {
            None => {
                self.ldst_free = now + 1;
                Some(agen + 1)
            }
            Some(Space::Shared) => {
                let degree = plan.shared_degree as u64;
                self.ldst_free = now + degree;
                self.stats.shared_conflict_cycles += degree - 1;
                Some(agen + cfg.shared_latency as u64 + degree - 1)
            }
            Some(_) => {
                self.ldst_free = now + plan.nlines as u64;
                self.l1_traffic(agen, rec.expect("an access with lanes has a record"), plan, mem)
            }
        }
    }

    /// Sends a global or local access (record `id`) through the L1, one line per cycle after
    /// address generation (`agen`): a store writes each line through to memory, an atomic goes
    /// to memory, and both evict the line from the L1 (and keep later loads from joining a
    /// read of it already on its way); a load hits in the L1 (performed at that access) or
    /// misses ([`Sm::l1_miss`]). A local access is performed at its L1 access whatever the
    /// cache does (local data is the warp's own). Returns the writeback cycle of a load that
    /// hit in every line; `None` for a store (it completes at its last acknowledgement) and
    /// for a load or atomic waiting on memory ([`Sm::mem_response`] schedules its writeback).
    fn l1_traffic(&mut self, agen: u64, id: u32, plan: &MemPlan, mem: &mut MemSys) -> Option<u64> {
        // (a line's data are read at its access, so its writeback comes at least a cycle later)
        let l1_latency = self.lat.l1_latency.max(1) as u64;
        let local = plan.space == Some(Space::Local);
        let mut hit_ready = 0;
        let mut outstanding = 0;
        let global = plan.space == Some(Space::Global);
        let slot = self.recs[id as usize].warp as usize;
        let order = self.warps[slot].as_ref().unwrap().mem_order;
        let mut latest = order;
        for (i, &ln) in plan.lines[..plan.nlines].iter().enumerate() {
            // One L1 access per cycle, a load's line once translated, a store's or atomic's
            // lines once all are (`docs/faults.md`, O3), and none before the warp's older
            // global lines.
            let t = agen + 1 + i as u64;
            let kind = if plan.store {
                LineKind::Store(4 * plan.line_words[i])
            } else if plan.atomic {
                LineKind::Atomic
            } else {
                LineKind::Load
            };
            if global {
                let ready = if plan.store || plan.atomic { plan.last_check } else { plan.ready[i] };
                let at = t.max(ready + 1 + (plan.store || plan.atomic) as u64 * i as u64).max(order);
                latest = latest.max(at);
                if at > t {
                    // Its translation came late: the line makes its L1 access (and takes its
                    // MSHR, and sends its request) in its own cycle, from an event, so that
                    // nothing of it holds up the SM's other traffic meanwhile.
                    outstanding += 1;
                    self.events.push(at, SmEv::Line(id, ln, kind));
                    continue;
                }
            }
            if local {
                self.events.push(t, SmEv::Access(id, ln));
            }
            if plan.store || plan.atomic {
                outstanding += 1;
                self.send_write(t, id, ln, kind, mem);
            } else if self.l1.access(ln, false) {
                self.stats.l1_hits += 1;
                hit_ready = hit_ready.max(t + l1_latency);
                if !local {
                    self.events.push(t, SmEv::Access(id, ln));
                }
            } else {
                self.stats.l1_misses += 1;
                outstanding += 1;
                if self.l1_miss(t, ln, id, mem) && !local {
                    self.events.push(t, SmEv::Access(id, ln));
                }
            }
        }
        if global {
            self.warps[slot].as_mut().unwrap().mem_order = latest;
        }
        let rec = &mut self.recs[id as usize];
        rec.ready_at = rec.ready_at.max(hit_ready);
        rec.outstanding = outstanding;
        rec.unperformed = plan.nlines as u32;
        (outstanding == 0 && !plan.store).then(|| hit_ready.max(agen + 1))
    }

    /// A load (`id`) missing in the L1 on `line` at cycle `t`: it joins the MSHR already
    /// waiting for the line (taking its data at this access if that read has already been
    /// performed, and writing back no earlier than the cycle after it, even if the line
    /// arrives first), or takes a new MSHR and sends the line's read to memory.
    fn l1_miss(&mut self, t: u64, line: u32, id: u32, mem: &mut MemSys) -> bool {
        match self.mshr_of_line.get(&line) {
            Some(&m) => {
                let r = &mut self.recs[id as usize];
                r.ready_at = r.ready_at.max(t + 1);
                let m = &mut self.mshrs[m as usize];
                m.waiters.push((id, t));
                m.performed
            }
            None => {
                let m = match self.free_mshrs.pop() {
                    Some(m) => m,
                    None => {
                        self.mshrs.push(Mshr::default());
                        self.mshrs.len() as u32 - 1
                    }
                };
                let e = &mut self.mshrs[m as usize];
                e.line = line;
                e.performed = false;
                e.stale = false;
                e.waiters.push((id, t));
                self.mshr_of_line.insert(line, m);
                self.mshrs_used += 1;
                mem.send(t, MemReq { sm: self.id, line, kind: ReqKind::Read, bytes: self.lat.l1_line, tag: m });
                false
            }
        }
    }

    /// A store's or atomic's line leaves for memory at cycle `t`: it evicts the line from the
    /// L1 and keeps later loads from joining a read of it already on its way.
    fn send_write(&mut self, t: u64, id: u32, ln: u32, kind: LineKind, mem: &mut MemSys) {
        self.l1.invalidate(ln);
        if let Some(m) = self.mshr_of_line.remove(&ln) {
            self.mshrs[m as usize].stale = true;
        }
        let req = match kind {
            LineKind::Store(bytes) => MemReq { sm: self.id, line: ln, kind: ReqKind::Write, bytes, tag: STORE_TAG | id },
            _ => MemReq { sm: self.id, line: ln, kind: ReqKind::Atomic, bytes: 4, tag: ATOMIC_TAG | id },
        };
        mem.send(t, req);
    }

    /// The L1 access of a global line whose translation came late (now): a store's or
    /// atomic's is sent; a load's hits (performed now, arrived after the L1 latency) or misses
    /// (an MSHR, joined or taken; the L1's MSHR limit is applied at issue only, so late misses
    /// may exceed it for a while). It was counted outstanding at issue.
    fn late_line(&mut self, now: u64, id: u32, ln: u32, kind: LineKind, gmem: &mut GlobalMem, mem: &mut MemSys) -> Result<(), SmFault> {
        if kind != LineKind::Load {
            self.send_write(now, id, ln, kind, mem);
            return Ok(());
        }
        if self.l1.access(ln, false) {
            self.stats.l1_hits += 1;
            let l1_latency = self.lat.l1_latency.max(1) as u64;
            let r = &mut self.recs[id as usize];
            r.ready_at = r.ready_at.max(now + l1_latency);
            self.events.push((now + l1_latency - 1).max(now + 1), SmEv::LineDone(id));
            return self.perform_access(id, ln, gmem);
        }
        self.stats.l1_misses += 1;
        if self.l1_miss(now, ln, id, mem) {
            // (it joined a read already performed at the L2: it takes its data at this access)
            self.perform_access(id, ln, gmem)?;
        }
        Ok(())
    }

    /// Instruction buffer and fetch after issue. A warp going on in sequence uses one buffered
    /// instruction and may issue next cycle; a change of flow (a control instruction, or a
    /// step that did not go on to the next instruction) empties the buffer, and the warp waits
    /// for the branch to resolve at execute. Then caches the next instruction's scoreboard
    /// facts and queues the warp for fetch if it still runs.
    fn advance_flow(&mut self, now: u64, s: usize, slot: u32, d: &Decoded, seq_next: bool) {
        let info = &*self.blocks[d.bslot as usize].as_ref().unwrap().info;
        let hw = self.warps[slot as usize].as_mut().unwrap();
        if seq_next && d.class != Class::Control {
            hw.ibuf -= 1;
            hw.next_issue = now + 1;
        } else {
            hw.ibuf = 0;
            hw.next_issue = now + self.lat.alu_latency as u64;
        }
        Self::refresh_next(hw, info);
        if !hw.in_fetch && hw.w.state != WarpState::Done {
            hw.in_fetch = true;
            self.scheds[s].fetch.push_back(slot);
        }
    }

    /// The block-level effect of the step's event: a warp arriving at a barrier counts
    /// towards its release; a warp that exited leaves its scheduler (it keeps its slot until
    /// the block ends). Either may release the barrier or end the block ([`Sm::check_block`]).
    fn block_event(&mut self, now: u64, s: usize, slot: u32, bslot: u32, ev: Event) {
        if ev != Event::Continue {
            // (a warp at a barrier or done may complete a block's wait for thread-block
            // switching)
            self.tb_check = true;
        }
        match ev {
            Event::Continue => {}
            Event::Barrier => {
                let blk = self.blocks[bslot as usize].as_mut().unwrap();
                blk.at_barrier += 1;
                self.check_block(now, bslot);
            }
            Event::Done => {
                let sched = &mut self.scheds[s];
                sched.warps.retain(|&w| w != slot);
                sched.fetch.retain(|&w| w != slot);
                if sched.last == Some(slot) {
                    sched.last = None;
                }
                let blk = self.blocks[bslot as usize].as_mut().unwrap();
                blk.running -= 1;
                self.check_block(now, bslot);
            }
        }
    }
}

/// What the issue stages need to know about the instruction being issued, read before it
/// executes.
struct Decoded {
    /// The warp's block slot.
    bslot: u32,
    pc: usize,
    inst: Inst,
    class: Class,
    /// Lanes that execute it (active, and the guard true).
    exec_mask: u32,
    /// Active lanes (counted as thread instructions, whatever the guard).
    active_lanes: u64,
    /// The scoreboard bit it writes, if any lane executes it.
    write: Option<u16>,
    /// A replay under the operand log: its lanes' addresses as logged (its address registers
    /// may have been overwritten since it first issued).
    addr_ops: Option<[u32; WARP_SIZE]>,
}

/// A load, store or atomic's accesses, worked out before it executes.
struct MemPlan {
    /// The space whose timing applies: `None` when there is no access to time (not a memory
    /// instruction, a parameter load, or no lane executes it).
    space: Option<Space>,
    store: bool,
    atomic: bool,
    /// Distinct lines touched by a global or local access, in lane order.
    lines: [u32; WARP_SIZE],
    nlines: usize,
    /// Distinct words a store writes to each line.
    line_words: [u32; WARP_SIZE],
    /// The line of each executing lane.
    lane_line: [u32; WARP_SIZE],
    /// Cycles a shared-memory access takes (its bank conflicts).
    shared_degree: u32,
    /// Global accesses: the cycle each line's translation completes, the last of them (the
    /// last TLB check), and the span of a fault (detected, resolved).
    ready: [u64; WARP_SIZE],
    last_check: u64,
    fault: Option<(u64, u64)>,
}

impl MemPlan {
    fn new() -> MemPlan {
        MemPlan { space: None, store: false, atomic: false, lines: [0; WARP_SIZE], nlines: 0, line_words: [0; WARP_SIZE], lane_line: [0; WARP_SIZE], shared_degree: 1, ready: [0; WARP_SIZE], last_check: 0, fault: None }
    }
}

/// Merges the first `n` lane lines into distinct lines, in order of first appearance (lane
/// order), counting the lanes of each; returns the number of distinct lines.
fn coalesce(lines: &mut [u32; WARP_SIZE], lanes: &mut [u32; WARP_SIZE], n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    if lines[..n].iter().all(|&x| x == lines[0]) {
        lanes[0] = n as u32;
        return 1;
    }
    // A 64-entry open-addressing set of (line, index in the output).
    let mut table = [(u32::MAX, 0u8); 64];
    let mut u = 0;
    for i in 0..n {
        let ln = lines[i];
        let mut h = (ln.wrapping_mul(0x9E37_79B1) >> 26) as usize;
        loop {
            let (k, idx) = table[h];
            if k == ln {
                lanes[idx as usize] += 1;
                break;
            }
            if k == u32::MAX {
                table[h] = (ln, u as u8);
                lines[u] = ln;
                lanes[u] = 1;
                u += 1;
                break;
            }
            h = (h + 1) & 63;
        }
    }
    u
}

/// Operand-log entries a global load, store or atomic takes (0: not a global access, it
/// cannot fault): a load its addresses, a store its addresses and data, an atomic its
/// addresses and operand, a compare-and-swap both operands (docs/faults.md O3, O10).
fn log_need(i: &Inst) -> u8 {
    match i.op {
        Op::Ld { space: Space::Global, .. } => 1,
        Op::St { space: Space::Global, .. } => 2,
        Op::Atom { space: Space::Global, op: mpgpu_spec::isa::AtomOp::Cas, .. } => 3,
        Op::Atom { space: Space::Global, .. } => 2,
        _ => 0,
    }
}

/// Logged operand `j` of an instruction in flight, in log order: its lanes' addresses, then
/// `src[0]` (store data, atomic operand), then `src[1]` (compare-and-swap).
fn logged_operand(f: &mut Flight, j: usize) -> &mut [u32; WARP_SIZE] {
    match j {
        0 => &mut f.addr,
        1 => &mut f.src[0],
        _ => &mut f.src[1],
    }
}

/// Whether a warp's queued instructions hold up its fetch: a memory or control-flow one is
/// waiting (it re-enables fetch at its own issue or commit).
fn gates_fetch(t: &KernelTiming, iq: &VecDeque<IqEntry>) -> bool {
    iq.iter().any(|x| {
        let c = t.class[x.pc as usize];
        ctrl_like(c) || mem_like(c)
    })
}

/// A 64-bit mix (splitmix64's finalizer) for seeded, deterministic choices.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Cycles a shared-memory access takes: the largest number of distinct words any bank must
/// deliver (lanes reading the same word share it); atomics to one word serialise.
fn bank_degree(ad: &[u32; WARP_SIZE], mask: u32, banks: u32, atomic: bool) -> u32 {
    // Fast path: every lane in its own bank.
    if banks <= 64 {
        let (mut seen, mut m) = (0u64, mask);
        let mut clash = false;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let b = 1u64 << ((ad[l] / 4) % banks);
            clash |= seen & b != 0;
            seen |= b;
        }
        if !clash {
            return 1;
        }
    }
    let mut words: [(u32, u32); WARP_SIZE] = [(0, 0); WARP_SIZE];
    let mut n = 0;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let w = ad[l] / 4;
        words[n] = (w % banks, w);
        n += 1;
    }
    let v = &mut words[..n];
    v.sort_unstable();
    let (mut best, mut run, mut same) = (1u32, 0u32, 0u32);
    for i in 0..n {
        if i > 0 && v[i] == v[i - 1] {
            same += 1;
            if atomic {
                best = best.max(same + 1);
            }
            continue;
        }
        same = 0;
        run = if i > 0 && v[i].0 == v[i - 1].0 { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::bank_degree;

    #[test]
    fn bank_conflicts() {
        let mut ad = [0u32; 32];
        for (l, a) in ad.iter_mut().enumerate() {
            *a = 4 * l as u32; // consecutive words: no conflict
        }
        assert_eq!(bank_degree(&ad, u32::MAX, 32, false), 1);
        for (l, a) in ad.iter_mut().enumerate() {
            *a = 8 * l as u32; // stride 2: two words per bank
        }
        assert_eq!(bank_degree(&ad, u32::MAX, 32, false), 2);
        let same = [64u32; 32]; // one word: broadcast
        assert_eq!(bank_degree(&same, u32::MAX, 32, false), 1);
        assert_eq!(bank_degree(&same, u32::MAX, 32, true), 32);
        for (l, a) in ad.iter_mut().enumerate() {
            *a = 128 * l as u32; // stride 32 words: all in bank 0
        }
        assert_eq!(bank_degree(&ad, u32::MAX, 32, false), 32);
        assert_eq!(bank_degree(&ad, 0b1011, 32, false), 3);
    }
}
