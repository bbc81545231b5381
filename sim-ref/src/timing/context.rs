//! Thread-block contexts in global memory: what a context switch saves and restores
//! (thesis §5.2.2: every thread's registers, the block's shared memory, and the execution state
//! — reconvergence stacks and barrier state).
//!
//! A captured block is written as 32-bit words into global memory and read back from there on
//! restore, so a context that is lost or corrupted on the way shows up as a wrong kernel output.
//! The cost is the memory system's: a save sends the context's lines from the SM as streamed
//! writes and completes at the last acknowledgement; a restore streams them back and the block
//! resumes when the last line has arrived. An SM's blocks share its port, and all SMs share the
//! DRAM channels, so with every SM saving at once each SM gets its share of the bandwidth and
//! the save times of the thesis's Table 5.2 (`4 × registers + shared bytes` per block at 1/13
//! of 208 GB/s on the K20c) come out of the memory model (a test checks every row within 5 %).
//!
//! Where contexts go ([`ContextUnit`]): each launch that is preempted gets one save area at its
//! first save, with a slot per block that can be saved at once (the framework keeps a kernel's
//! resident and queued blocks within N_SM × T_max, the PTBQ's depth); a slot is taken at a
//! save and given back when the block's restore completes, and the area goes back to a pool
//! when the launch retires, for later launches to reuse. So memory stays bounded however many
//! preemptions a run has.
//!
//! Layout (words): magic, warp count, shared words; the shared memory; then per warp: id,
//! register count, local words, valid mask, exited mask, state, stack depth, the predicates,
//! the stack entries (pc, reconvergence pc, mask), the registers (`r * 32 + lane`), the local
//! memory. Thread indices are rebuilt from the launch.

use super::memsys::{MemReq, MemSys, ReqKind};
use super::sm::BlockContext;
use crate::exec::{StackEntry, Warp, WarpState};
use crate::kernel::Kernel;
use crate::mem::{GlobalMem, MemFault};
use mpgpu_spec::isa::NUM_PREDS;
use std::collections::HashMap;

/// The deepest reconvergence stack a saved context holds per warp (a save slot's room; a
/// deeper stack is an error at the save).
pub const MAX_STACK: usize = 64;

const MAGIC: u32 = 0x6d70_4358; // "mpCX"
/// A context that also carries the replay queue's contents (Tanasić's thesis §6.3.2): after the
/// warps, per warp its next fetch age and its queued instructions (pc, lanes, age, faulted,
/// log entries, then 32 words per logged operand).
const MAGIC_QUEUED: u32 = 0x6d70_4351; // "mpCQ"

/// Serialises a block context into words.
pub fn to_words(ctx: &BlockContext) -> Vec<u32> {
    let magic = if ctx.queued.is_empty() { MAGIC } else { MAGIC_QUEUED };
    let mut v = vec![magic, ctx.warps.len() as u32, ctx.shared.len() as u32];
    v.extend_from_slice(&ctx.shared);
    for w in &ctx.warps {
        let state = match w.state {
            WarpState::Ready => 0,
            WarpState::AtBarrier => 1,
            WarpState::Done => 2,
        };
        v.extend_from_slice(&[w.id, w.nregs, (w.local.len() / 32) as u32, w.valid, w.exited, state, w.stack.len() as u32]);
        v.extend_from_slice(&w.preds);
        for e in &w.stack {
            v.extend_from_slice(&[e.pc, e.rpc, e.mask]);
        }
        v.extend_from_slice(&w.regs);
        v.extend_from_slice(&w.local);
    }
    for (q, &age) in ctx.queued.iter().zip(&ctx.ages) {
        v.extend_from_slice(&[age, q.len() as u32]);
        for e in q {
            v.extend_from_slice(&[e.pc, e.active, e.age, e.fixed as u32, e.log.len() as u32]);
            for d in &e.log {
                v.extend_from_slice(d);
            }
        }
    }
    v
}

/// Words the replay queue's contents may add to a block's context ([`to_words`]), for a save
/// slot: `entries` queued instructions at most (issue queue and replay queue) and `logged`
/// operand-log entries (a block's partition).
pub fn queue_words(k: &Kernel, entries: usize, logged: usize) -> usize {
    2 * k.warps() as usize + 5 * entries + 32 * logged
}

/// Rebuilds a block context from words written by [`to_words`]; `template` supplies the launch
/// and the block index (the parts the hardware keeps in the PTBQ entry and the KSR).
pub fn from_words(words: &[u32], template: &BlockContext) -> Result<BlockContext, String> {
    let mut at = 0;
    let mut take = |n: usize| -> Result<&[u32], String> {
        let s = words.get(at..at + n).ok_or_else(|| format!("context truncated at word {at}"))?;
        at += n;
        Ok(s)
    };
    let head = take(3)?;
    if head[0] != MAGIC && head[0] != MAGIC_QUEUED {
        return Err(format!("bad context magic {:#x}", head[0]));
    }
    let has_queue = head[0] == MAGIC_QUEUED;
    let (nwarps, nshared) = (head[1] as usize, head[2] as usize);
    let shared = take(nshared)?.to_vec();
    let l = &template.info.launch;
    let mut warps = Vec::with_capacity(nwarps);
    for _ in 0..nwarps {
        let h = take(7)?.to_vec();
        let mut w = Warp::new(&l.kernel, h[0], l.block);
        w.nregs = h[1];
        let local_words = h[2] as usize;
        w.valid = h[3];
        w.exited = h[4];
        w.state = match h[5] {
            0 => WarpState::Ready,
            1 => WarpState::AtBarrier,
            2 => WarpState::Done,
            s => return Err(format!("bad warp state {s}")),
        };
        let depth = h[6] as usize;
        w.preds.copy_from_slice(take(NUM_PREDS as usize)?);
        w.stack.clear();
        for _ in 0..depth {
            let e = take(3)?;
            w.stack.push(StackEntry { pc: e[0], rpc: e[1], mask: e[2] });
        }
        w.regs = take(w.nregs as usize * 32)?.to_vec();
        w.local = take(local_words * 32)?.to_vec();
        warps.push(w);
    }
    let (mut queued, mut ages) = (Vec::new(), Vec::new());
    if has_queue {
        for _ in 0..nwarps {
            let h = take(2)?;
            let (age, n) = (h[0], h[1] as usize);
            let mut q = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                let e = take(5)?.to_vec();
                if e[4] > 3 {
                    return Err(format!("a queued instruction with {} logged operands (at most 3)", e[4]));
                }
                let mut log = Vec::new();
                for _ in 0..e[4] {
                    log.push(<[u32; 32]>::try_from(take(32)?).unwrap());
                }
                q.push(super::sm::SavedEntry { pc: e[0], active: e[1], age: e[2], fixed: e[3] != 0, log });
            }
            queued.push(q);
            ages.push(age);
        }
    }
    Ok(BlockContext { info: template.info.clone(), ctaid: template.ctaid, shared, warps, queued, ages })
}

/// The most words a context of a block of `k` takes (a save slot): the layout of
/// [`to_words`] with [`MAX_STACK`] entries per warp.
pub fn slot_words(k: &Kernel) -> usize {
    let per_warp = 7 + NUM_PREDS as usize + 3 * MAX_STACK + 32 * k.regs as usize + 32 * (k.local_bytes / 4) as usize;
    3 + (k.shared_bytes / 4) as usize + k.warps() as usize * per_warp
}

/// The words a save writes for `ctx` ([`to_words`]); an error if a warp's reconvergence stack
/// is deeper than a save slot holds.
pub fn saved_words(ctx: &BlockContext) -> Result<Vec<u32>, String> {
    if let Some(w) = ctx.warps.iter().find(|w| w.stack.len() > MAX_STACK) {
        return Err(format!("warp {} has a reconvergence stack {} deep; a saved context holds at most {MAX_STACK} entries", w.id, w.stack.len()));
    }
    Ok(to_words(ctx))
}

/// Reads a context back from global memory.
pub fn load(mem: &GlobalMem, addr: u32, len: usize, template: &BlockContext) -> Result<BlockContext, String> {
    let words: Result<Vec<u32>, MemFault> = (0..len).map(|i| mem.read(addr + 4 * i as u32)).collect();
    let words = words.map_err(|e| format!("context region unreadable: {e:?}"))?;
    from_words(&words, template)
}

/// Sends the lines holding `words` words at `addr` from (or, for a restore, to) SM `sm` at
/// cycle `now`, tagged `tag`; returns how many lines.
pub fn send_lines(mem: &mut MemSys, line_bytes: u32, sm: usize, addr: u32, words: usize, kind: ReqKind, tag: u32, now: u64) -> u32 {
    let (first, last) = (addr / line_bytes, (addr + 4 * words as u32 - 1) / line_bytes);
    for ln in first..=last {
        mem.send(now, MemReq { sm: sm as u32, line: ln, kind, bytes: line_bytes, tag });
    }
    last - first + 1
}

/// What a context transfer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XferKind {
    Save,
    /// The block restored into block slot `bslot` resumes when the transfer completes; then
    /// the save slot it came from is free (`Some((launch, slot))`), or the region ([`Gpu`]'s
    /// single-block API).
    ///
    /// [`Gpu`]: super::gpu::Gpu
    Restore { bslot: u32, slot: Option<(usize, u32)>, region: Option<usize> },
}

/// A context save or restore on its way through the memory system.
#[derive(Clone, Copy, Debug)]
pub struct Xfer {
    pub sm: usize,
    pub kind: XferKind,
    pub lines_left: u32,
    /// Cycle of its last response.
    pub done: Option<u64>,
}

/// One launch's save area.
#[derive(Clone, Debug)]
struct Area {
    region: usize,
    slot_words: usize,
    free: Vec<u32>,
    /// The block each slot holds (to check what a restore names), and its context's length in
    /// words.
    holder: Vec<Option<(u32, usize)>>,
}

/// The SM driver's context-switch bookkeeping: save areas and transfers in flight.
#[derive(Clone, Debug, Default)]
pub struct ContextUnit {
    /// Under the replay queue, the room a save slot keeps for its contents: queued
    /// instructions and logged operand-log entries per block ([`queue_words`]).
    pub queue_room: Option<(usize, usize)>,
    /// Regions of global memory allocated for contexts: (address, bytes, in use).
    regions: Vec<(u32, u32, bool)>,
    areas: HashMap<usize, Area>,
    xfers: Vec<Option<Xfer>>,
    free_xfers: Vec<u32>,
    /// Saves made through `Gpu::save_block` and not yet restored: their transfer, by serial.
    pub single: HashMap<u64, u32>,
    pub next_serial: u64,
}

impl ContextUnit {
    /// Bytes of global memory allocated for contexts so far (free or in use).
    pub fn allocated_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.1 as u64).sum()
    }

    /// A free region of at least `bytes` (the smallest that fits), else a new one.
    pub fn take_region(&mut self, mem: &mut GlobalMem, bytes: u32) -> usize {
        let best = (0..self.regions.len()).filter(|&i| !self.regions[i].2 && self.regions[i].1 >= bytes).min_by_key(|&i| self.regions[i].1);
        let i = best.unwrap_or_else(|| {
            self.regions.push((mem.alloc(bytes), bytes, false));
            self.regions.len() - 1
        });
        self.regions[i].2 = true;
        i
    }

    pub fn region_addr(&self, i: usize) -> u32 {
        self.regions[i].0
    }

    pub fn free_region(&mut self, i: usize) {
        self.regions[i].2 = false;
    }

    /// Writes the context `words` of block `tb` of launch `launch` (kernel `k`) into a free
    /// save slot of the launch's area (`slots` slots, taken at its first save); returns the
    /// slot and its address.
    pub fn take_slot(&mut self, mem: &mut GlobalMem, launch: usize, k: &Kernel, slots: u32, tb: u32, words: &[u32]) -> Result<(u32, u32), String> {
        if !self.areas.contains_key(&launch) {
            let room = self.queue_room.map_or(0, |(n, l)| queue_words(k, n, l));
            let slot_words = (slot_words(k) + room).div_ceil(32) * 32; // whole lines
            let region = self.take_region(mem, (slot_words * 4) as u32 * slots);
            self.areas.insert(launch, Area { region, slot_words, free: (0..slots).rev().collect(), holder: vec![None; slots as usize] });
        }
        let a = self.areas.get_mut(&launch).unwrap();
        if words.len() > a.slot_words {
            return Err(format!("a context of {} words does not fit its {}-word save slot", words.len(), a.slot_words));
        }
        let slot = a.free.pop().ok_or_else(|| format!("launch {launch}: all {slots} save slots are in use"))?;
        a.holder[slot as usize] = Some((tb, words.len()));
        let addr = self.regions[a.region].0 + (slot as usize * a.slot_words * 4) as u32;
        mem.write_u32s(addr, words);
        Ok((slot, addr))
    }

    /// Where the restore of block `tb` of `launch` from save slot `slot` (what its PTBQ entry
    /// carries) reads: the address and the context's length in words; an error if that slot
    /// does not hold that block.
    pub fn saved_slot(&self, launch: usize, tb: u32, slot: u32) -> Result<(u32, usize), String> {
        let a = self.areas.get(&launch).ok_or_else(|| format!("launch {launch} has saved no block"))?;
        match a.holder.get(slot as usize) {
            Some(&Some((held, len))) if held == tb => Ok((self.regions[a.region].0 + (slot as usize * a.slot_words * 4) as u32, len)),
            Some(&Some((held, _))) => Err(format!("save slot {slot} of launch {launch} holds block {held}, not block {tb}")),
            _ => Err(format!("save slot {slot} of launch {launch} holds no block (block {tb} was never saved there)")),
        }
    }

    /// The restore from `slot` of `launch` has completed: the slot is free.
    pub fn free_slot(&mut self, launch: usize, slot: u32) {
        if let Some(a) = self.areas.get_mut(&launch) {
            a.holder[slot as usize] = None;
            a.free.push(slot);
        }
    }

    /// The launch has retired: its save area goes back to the pool.
    pub fn retire(&mut self, launch: usize) {
        if let Some(a) = self.areas.remove(&launch) {
            debug_assert!(a.holder.iter().all(Option::is_none), "launch {launch} retired with saved blocks");
            self.regions[a.region].2 = false;
        }
    }

    /// Starts a transfer for SM `sm` at cycle `now`: the lines holding `words` words at `addr`,
    /// written (a save) or read back (a restore) as streamed requests tagged with the
    /// transfer; returns it.
    #[allow(clippy::too_many_arguments)]
    pub fn start_xfer(&mut self, mem: &mut MemSys, line_bytes: u32, sm: usize, kind: XferKind, addr: u32, words: usize, now: u64) -> u32 {
        let x = Xfer { sm, kind, lines_left: 0, done: None };
        let id = match self.free_xfers.pop() {
            Some(i) => {
                self.xfers[i as usize] = Some(x);
                i
            }
            None => {
                self.xfers.push(Some(x));
                self.xfers.len() as u32 - 1
            }
        };
        let req = if kind == XferKind::Save { ReqKind::StreamWrite } else { ReqKind::StreamRead };
        let lines = send_lines(mem, line_bytes, sm, addr, words, req, super::sm::CONTEXT_TAG | id, now);
        self.xfers[id as usize].as_mut().unwrap().lines_left = lines;
        id
    }

    pub fn xfer(&self, id: u32) -> Option<&Xfer> {
        self.xfers.get(id as usize).and_then(Option::as_ref)
    }

    pub fn end_xfer(&mut self, id: u32) -> Option<Xfer> {
        let x = self.xfers.get_mut(id as usize)?.take()?;
        self.free_xfers.push(id);
        Some(x)
    }

    /// One line of transfer `id` answered at `now`; the transfer if that was its last.
    pub fn line_answered(&mut self, id: u32, now: u64) -> Option<Xfer> {
        let x = self.xfers.get_mut(id as usize)?.as_mut()?;
        x.lines_left -= 1;
        if x.lines_left == 0 {
            x.done = Some(now);
            return Some(*x);
        }
        None
    }
}

/// Position of register `reg` of `lane` of warp `warp` in the words of [`to_words`] (for tests
/// that corrupt a saved context on purpose).
pub fn register_word(ctx: &BlockContext, warp: usize, reg: usize, lane: usize) -> usize {
    let mut at = 3 + ctx.shared.len();
    for w in &ctx.warps[..warp] {
        at += 7 + NUM_PREDS as usize + 3 * w.stack.len() + w.regs.len() + w.local.len();
    }
    let w = &ctx.warps[warp];
    at + 7 + NUM_PREDS as usize + 3 * w.stack.len() + reg * 32 + lane
}
