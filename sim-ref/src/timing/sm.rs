//! The SM timing model.
//!
//! Capacity: block slots, warp slots, threads, registers and shared memory, allocated per block
//! by the admission unit (the occupancy rule); blocks of different kernels may share an SM.
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
//! issued data instruction has a record (`Rec`) until it completes; the issue stage does
//! control flow (branches, `exit`, barriers) and moves the pc; the operand-read stage reads the
//! sources into the record, and the execute stage computes the result there (without units,
//! arithmetic is executed whole at issue and has no record, [`Sm::compute_at_issue`]); a load's lanes
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
use rustc_hash::FxHashMap as HashMap;
use super::wheel::Wheel;
use std::collections::VecDeque;
use std::sync::Arc;

// The SM's concerns, each in its own file, each an `impl Sm` block over the state declared
// here. The rule: a child module depends on this one (`use super::*`) and on none of its
// siblings; what two of them share (types, small helpers) lives here.
mod blocks;
mod cycle;
mod faults;
mod issue;
mod memory;
mod ooo;
mod oplog;
mod ports;
mod quiet;
mod records;
mod stats;
mod zorua;
use ports::{AdmitIn, AdmitPort, OdPort, OlPort, RqPort};
pub use stats::{SmStats, Timeline};
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

/// (`repr(C)`, a cache line's alignment and the fields the issue stage's test reads first:
/// the test touches three or four lines of a warp rather than six or seven, `Sm::eligible`)
#[repr(C, align(64))]
struct HwWarp {
    /// Its block is frozen (draining for a context switch).
    frozen: bool,
    ibuf: u32,
    /// Class of the next instruction (cached from the kernel's tables).
    next_class: Class,
    /// The MSHRs this warp's next load needed when it was refused for lack of them; it is not
    /// considered again until that many are free.
    mshr_need: Option<u32>,
    next_issue: u64,
    pending: RegMask,
    /// Pending writes that come from memory (for the stall breakdown).
    pending_mem: RegMask,
    /// Scoreboard mask of the next instruction (cached from the kernel's tables).
    next_touch: RegMask,
    /// Of the instructions in flight (`inflight`), the global and local loads, stores and
    /// atomics (`membar` waits for none to remain), with their records.
    mem_recs: Vec<u32>,
    w: Warp,
    block: u32,
    /// Instructions in flight (issued, not yet written back or acknowledged); the block cannot
    /// be captured, nor end, while any remain.
    inflight: u32,
    /// Queued for fetch.
    in_fetch: bool,
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

/// The SM's warp slots, with what each slot's warp is known not to do before a cycle, as long
/// as the warp itself does not change: for the thesis pipeline, issue (`quiet`: nothing it
/// holds can issue before that cycle, unless, for a warp in `on_mshrs`, an MSHR comes free;
/// [`Sm::ooo_pick`] computes it when it finds nothing to issue) and fetch (`fetch_quiet`); and
/// the warp's next self-timed change (`wake`, its part of [`Sm::next_wake`], good while later
/// than the current cycle). Every mutable access to a slot (`IndexMut`, `get_mut`) forgets the
/// slot's times, so nothing that changes a warp can leave a stale one behind; what outside the
/// warp can make it issue or fetch sooner is a time taken into the quiet time (a unit, a hold,
/// a TLB check), a freed MSHR, or makes the pick decline to set one. Debug builds check every
/// skipped warp against a full look.
#[repr(C)]
struct Warps {
    slots: Vec<Option<HwWarp>>,
    /// The in-order issue test's verdict on the slot's warp (why it cannot issue), the cycle
    /// it holds until (the time the test gives; `0`: unknown) and, for a refusal for lack of
    /// MSHRs, the MSHRs its load needs ([`Sm::verdict`]).
    verdict: Vec<std::cell::Cell<(u64, Stall, u32)>>,
    wake: Vec<std::cell::Cell<u64>>,
    /// The thesis pipeline's earliest `wake` (`0`: unknown; a slot forgotten since), good
    /// while later than the current cycle: no slot's time has come and none changed.
    wake_min: std::cell::Cell<u64>,
    /// The thesis pipeline's quiet times are kept (the in-order one keeps only `wake`).
    ooo: bool,
    on_mshrs: Vec<u32>,
    quiet: quiet::Quiet,
    fetch_quiet: quiet::Quiet,
}

impl Warps {
    fn new(n: usize, ooo: bool) -> Warps {
        Warps { slots: (0..n).map(|_| None).collect(), ooo, quiet: quiet::Quiet::new(n), fetch_quiet: quiet::Quiet::new(n), wake: vec![Default::default(); n], wake_min: Default::default(), verdict: vec![std::cell::Cell::new((0, Stall::Idle, 0)); n], on_mshrs: Vec::new() }
    }

    /// The slot's warp may change: nothing is known of it.
    #[inline]
    fn forget(&mut self, i: usize) {
        if self.ooo {
            self.forget_times(i);
        }
        self.verdict[i].set((0, Stall::Idle, 0));
    }

    #[inline(never)] // (the thesis pipeline's part of `forget`)
    fn forget_times(&mut self, i: usize) {
        self.quiet.forget(i);
        self.fetch_quiet.forget(i);
        self.wake[i].set(0);
        self.wake_min.set(0);
    }

    /// An MSHR came free: the warps that waited for one look again.
    fn mshr_freed(&mut self) {
        for s in self.on_mshrs.drain(..) {
            self.quiet.forget(s as usize);
        }
    }

    /// A mutable access keeping the slot's verdict on the in-order pipeline, for
    /// what neither reads: the warp's data ([`Sm::stage`]) and in-flight count ([`Sm::retire`]).
    fn data_mut(&mut self, i: usize) -> &mut Option<HwWarp> {
        if self.ooo {
            self.forget(i);
        }
        &mut self.slots[i]
    }

    /// A further mutable access in a step that has forgotten the slot (an issue: nothing looks
    /// at it in between), forgetting nothing more on the in-order pipeline.
    fn again_mut(&mut self, i: usize) -> &mut Option<HwWarp> {
        if self.ooo {
            self.forget(i);
        } else {
            debug_assert!(self.verdict[i].get().0 == 0, "warp slot {i} not forgotten in this step");
        }
        &mut self.slots[i]
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut Option<HwWarp>> {
        if i < self.slots.len() {
            self.forget(i);
        }
        self.slots.get_mut(i)
    }
}

impl std::ops::Deref for Warps {
    type Target = [Option<HwWarp>];
    fn deref(&self) -> &[Option<HwWarp>] {
        &self.slots
    }
}

impl std::ops::Index<usize> for Warps {
    type Output = Option<HwWarp>;
    fn index(&self, i: usize) -> &Option<HwWarp> {
        &self.slots[i]
    }
}

impl std::ops::IndexMut<usize> for Warps {
    fn index_mut(&mut self, i: usize) -> &mut Option<HwWarp> {
        self.forget(i);
        &mut self.slots[i]
    }
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

/// Whether an instruction of class `c` issues only as its warp's oldest entry on the thesis's
/// pipeline, fetch stopping behind it until it commits (the pc moves at its issue): control
/// flow and barriers; under Zorua (`zorua`) also a phase specifier, whose warp leaves the
/// schedulable set as it issues, so that no younger instruction uses the new phase's sets
/// before the coordinator grants them.
fn ordered(c: Class, zorua: bool) -> bool {
    ctrl_like(c) || (c == Class::Phase && zorua)
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
    shared_bytes: u32,
    /// Its first register-file row and shared-memory byte, from the admission unit (0 under Zorua).
    rf_base: u32,
    sh_base: u32,
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
    /// The fewest MSHRs a warp refused for lack of them needs, as the last scan that found
    /// nothing saw (`u32::MAX`: none refused; `0` after a scan that issued): a freed MSHR
    /// wakes the scheduler only when that many are free.
    mshr_need: u32,
    /// The group of warp slots it looks at (0 or 1; `SmConfig::group_warps`).
    group: u8,
}

/// An instruction in flight, from issue to writeback (a store: to its last acknowledgement).
struct Rec {
    warp: u32,
    bslot: u32,
    /// Its data: operands read, result produced.
    f: Flight,
    /// The scoreboard bit its writeback releases.
    write: Option<u16>,
    /// The general registers it reads (a younger writeback to one is a write-after-read).
    reads: [u64; 4],
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
    /// The executing lanes whose access falls in `line` (the mask matters: the other lanes'
    /// `lane_line` may be stale, [`MemPlan::reset`]).
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
    /// The writeback of an instruction executed at issue ([`Sm::compute_at_issue`]) by the
    /// warp in this slot: the scoreboard bit it writes is released.
    Release(u32, Option<u16>),
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

/// (`repr(C)`, the fields an SM's cycle reads first: a cycle touches a few of its cache lines
/// rather than most of its 38; docs/timing.md, "Speed")
#[repr(C)]
pub struct Sm {
    /// The SM does nothing before this cycle unless woken.
    pub wake_at: u64,
    /// Cycle up to which stall reasons and occupancy have been accounted.
    accounted: u64,
    /// Skip scheduler scans that cannot issue (false: scan every scheduler every cycle; the
    /// results are the same, which a test checks).
    pub lazy: bool,
    /// The thesis's pipeline (unified issue queue, out-of-order issue within a warp).
    ooo: bool,
    /// The SM has a unit (the replay queue, the operand log, Zorua's coordinator) whose edges
    /// [`Sm::unit_edges`] samples (without one, it reads none of their slots).
    units: bool,
    /// Addresses are translated (false: an ideal MMU, every translation an L1 TLB hit).
    pub vm: bool,
    /// Reads are wanted (a save or a replay to load): the SM looks again next cycle.
    ol_more: bool,
    /// A warp faulted or an instruction completed: thread-block switching looks again.
    pub tb_check: bool,
    /// Under Zorua or WLM: the coordinator's room for blocks (`slot_room`) changed, so a block
    /// the dispatcher found no room for may fit now.
    pub room_changed: bool,
    /// The operand log's last edge claimed or unclaimed a quota.
    pub ol_room_changed: bool,
    pub used_warps: u32,
    /// Warps at a barrier, over the resident blocks (the sum of their `at_barrier`).
    barrier_warps: u32,
    mshrs_used: u32,
    sfu_free: u64,
    ldst_free: u64,
    /// Zorua (`alloc = "zorua"`): the coordinator and what the SM keeps of its grants
    /// (`sm/zorua.rs`), and register values on their way to swap.
    zorua: Option<Box<zorua::ZSm>>,
    /// Instructions issued in the previous cycle, for the operand-read stage.
    oread: Vec<u32>,
    drained: Vec<SmEv>,
    /// The in-order issue stage's memory plan, kept between issues ([`MemPlan::reset`] clears
    /// what is read before it is written).
    plan: Option<Box<MemPlan>>,
    /// The record of an instruction executed at issue ([`Sm::compute_at_issue`]), reused.
    scratch: Box<Flight>,
    /// Blocks finished since the GPU last looked: launch ids.
    pub finished: Vec<usize>,
    /// Writebacks and accesses, by cycle.
    events: Wheel<SmEv>,
    scheds: Vec<Sched>,
    alu_free: Vec<u64>,
    warps: Warps,
    blocks: Vec<Option<Block>>,
    /// Instructions in flight (reused; `free_recs` lists the free ones).
    recs: Vec<Rec>,
    free_recs: Vec<u32>,
    lat: Lat,
    /// Resident and faulted warps over time (kept when demand paging is on).
    pub timeline: Option<Timeline>,
    pub stats: SmStats,
    ol_wq: VecDeque<(u8, [u32; WARP_SIZE])>,
    /// Counters bumped while looking for an instruction to issue.
    rq_full: std::cell::Cell<u64>,
    log_full: std::cell::Cell<u64>,
    ol_queue_full: std::cell::Cell<u64>,
    ol_wait: std::cell::Cell<u64>,
    /// Warp-instructions issued here per process (its address space), for instruction targets
    /// (`ProcessSpec::insts`): one entry per process the GPU has.
    pub insts_by_process: Vec<u64>,
    pub id: u32,
    /// The L1 TLB.
    pub tlb: L1Tlb,
    /// What the SM does on a page fault.
    pub scheme: FaultScheme,
    /// Entries in use in the unified issue queue, and the warp slot the next fetch looks at
    /// first.
    iq_used: u32,
    fetch_rr: u32,
    /// The warp that issued last (greedy-then-oldest over the unified queue).
    ooo_last: Option<u32>,
    cfg: SmConfig,
    pub used_blocks: u32,
    l1: TagArray,
    mshrs: Vec<Mshr>,
    free_mshrs: Vec<u32>,
    /// The MSHR a load missing on a line joins.
    mshr_of_line: HashMap<u32, u32>,
    /// Thesis pipeline: warp looks the issue stage skipped because the warp was quiet
    /// (the slot's quiet time; only when `lazy`).
    pub quiet_skips: u64,
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
    ol_wq_res: u8,
    ol_rd: Option<(u8, OlRead)>,
    ol_rbuf: Option<ReplayLoad>,
    ol_saved: Vec<Option<[u32; WARP_SIZE]>>,
    /// No replay can be loaded before this cycle (a new one, or the one loaded leaving, says
    /// otherwise).
    ol_load_at: u64,
    /// The warp slot the next replay load looks at first (round robin).
    ol_rr: u32,
    /// Restored logged operands waiting for their instruction to issue (`IqEntry::staged`).
    ol_staged: Vec<Option<[u32; WARP_SIZE]>>,
    ol: Option<std::cell::RefCell<OlPort>>,
    /// The admission unit (not under Zorua): whether a block fits, and its register-file and
    /// shared-memory ranges (`docs/unified.md`, "The admission unit").
    admit: Option<std::cell::RefCell<AdmitPort>>,
    /// Its unclaimed entries after its last edge.
    ol_pool: u8,
    /// Fault injection, and the global memory instructions translated so far.
    pub inject: crate::config::FaultInjection,
    inject_n: u64,
    /// Thread-block switching on faults is on, switching out blocks whose faults take at
    /// least this many more cycles (the blocks whose logged operands are read out for a save).
    pub tb_switch_wait: Option<u64>,
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
            used_warps: 0,
            used_blocks: 0,
            barrier_warps: 0,
            blocks: (0..cfg.blocks).map(|_| None).collect(),
            warps: Warps::new(cfg.warps as usize, cfg.pipeline == Pipeline::Thesis),
            scheds: (0..cfg.schedulers).map(|_| Sched { warps: Vec::new(), last: None, fetch: VecDeque::new(), reason: Stall::Idle, wake: 0, mshr_need: 0, group: 0 }).collect(),
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
            plan: None,
            scratch: Box::new(Flight::empty()),
            stats: SmStats::default(),
            finished: Vec::new(),
            accounted: 0,
            wake_at: 0,
            lazy: true,
            quiet_skips: 0,
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
            admit: Some(std::cell::RefCell::new(crate::slots::Port::new(Box::new(crate::units::admit::Admit::new(crate::units::admit::params(cfg)))))),
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
            insts_by_process: Vec::new(),
            tb_switch_wait: None,
            zorua: None,
            units: false,
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

    /// The launch of the block in slot `bslot` (which must be occupied).
    fn info(&self, bslot: u32) -> &LaunchInfo {
        &self.blocks[bslot as usize].as_ref().unwrap().info
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

    /// A plan used before made like a new one, as far as anything reads: the lines and their
    /// translation times are written for the lines in use (`..nlines`) before they are read,
    /// and the lanes' lines for the executing lanes; the other lanes' lines keep stale values,
    /// which reach a record's `lane_line` and are harmless only because [`Rec::lanes_on`]
    /// masks with the executing lanes. The words per line are counted from zero.
    fn reset(&mut self) {
        let nlines = self.nlines;
        self.line_words[..nlines].fill(0);
        self.space = None;
        self.store = false;
        self.atomic = false;
        self.nlines = 0;
        self.shared_degree = 1;
        self.last_check = 0;
        self.fault = None;
    }
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
fn gates_fetch(t: &KernelTiming, iq: &VecDeque<IqEntry>, zorua: bool) -> bool {
    iq.iter().any(|x| {
        let c = t.class[x.pc as usize];
        ordered(c, zorua) || mem_like(c)
    })
}

#[cfg(test)]
mod tests {
    use super::memory::bank_degree;

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

    /// The counting table gives what sorting the lanes' words gives, on random accesses that
    /// clash often (few distinct words, strides, broadcasts), for every bank count and mask.
    #[test]
    fn bank_degree_counts_as_sorting_does() {
        use super::memory::bank_degree_sorted;
        let mut rnd = crate::test_rng(0x2545_F491_4F6C_DD1Du64);
        let mut clashes = 0;
        for _ in 0..20000 {
            let banks = [1, 2, 16, 32, 64][rnd(5) as usize];
            let spread = [1, 4, 40, 4096][rnd(4) as usize];
            let stride = [0, 4, 8, 128][rnd(4) as usize] as u32;
            let mut ad = [0u32; 32];
            for (l, a) in ad.iter_mut().enumerate() {
                *a = if rnd(2) == 0 { 4 * rnd(spread) as u32 } else { stride * l as u32 };
            }
            let mask = if rnd(3) == 0 { u32::MAX } else { rnd(1 << 32) as u32 };
            let atomic = rnd(2) == 0;
            let d = bank_degree(&ad, mask, banks, atomic);
            assert_eq!(d, bank_degree_sorted(&ad, mask, banks, atomic), "{ad:?} mask {mask:#x}, {banks} banks, atomic {atomic}");
            clashes += (d > 1) as u32;
        }
        assert!(clashes > 5000, "only {clashes} accesses clash");
    }
}
