//! An SM under Zorua (`alloc = "zorua"`, `docs/zorua.md`): its coordinator unit
//! ([`crate::units::zorua`]) decides which logical warps are schedulable and where their
//! registers and their block's scratchpad live; the SM sends it its events and uses its
//! mapping rows.
//!
//! - **Logical and physical.** The SM's warp slots are the coordinator's logical warps (64)
//!   and its block slots its logical blocks (16). A warp is in a scheduler's list only while
//!   the coordinator has it schedulable, on the scheduler of its physical slot.
//! - **Events.** A warp that issues a `phase` specifier (not the one at instruction 0, which
//!   the block's start carries), a fence, a barrier or its `exit` leaves its scheduler; its
//!   event goes to the coordinator once its instructions in flight have completed (it then
//!   frees registers nothing may still write). A block's end follows its warps' ends.
//!   Events queue in order; the coordinator takes one per cycle when ready. Every epoch the
//!   SM sends the epoch's idle and memory cycles (Algorithm 1).
//! - **Data through the tables.** The registers of a warp live, between its events, in the
//!   SM's physical register file (sets of 4 registers x 32 lanes) or in swap in global memory
//!   (the set's swap address), as its mapping row says: at an event the warp's registers are
//!   written to where its row puts them and the warp's working copy is poisoned; at a grant
//!   the sets it kept are read back from there, and new sets start poisoned. The scratchpad
//!   lives in the physical scratchpad (1 KB sets) or in swap; each shared access reads and
//!   writes its sets there through the block's row. A wrong table (a set given twice, a row
//!   changed under a warp) shows as a wrong answer.
//! - **Time.** Every instruction's register access goes through the register table (+2
//!   cycles on its latency), a shared access also through the scratchpad table (+2 more); an
//!   instruction reading a register or scratchpad set in swap first reads its lines through
//!   the L1 (a miss goes to memory and fills the line when it arrives), and one writing such
//!   a set writes the line through to memory, updating the L1's copy (a register's line,
//!   written whole, is allocated).

use super::*;
use crate::slots::Held;
use crate::units::zorua::{Coord, Geometry};
use mpgpu_spec::units::zorua::{Ev, In as ZIn, Out as ZOut, REG_SETS, SET_REGS, SMEM_SETS, SMEM_SET_BYTES};

// `data` (an `impl Sm` block) depends on this module (and, through it, on `sm`) only.
mod data;

/// Poison for registers and scratchpad words whose value is not where the tables say.
pub(super) const POISON: u32 = 0xDEAD_BEEF;
/// Swap read lines (`| warp slot`) and swap writes (acknowledgements ignored).
pub(super) const SWAP_TAG: u32 = 0b011 << 29;
pub(super) const SWAP_WRITE_TAG: u32 = 0b101 << 29;
/// Bytes of swap per logical warp's registers (16 sets of 512 B) and per logical block's
/// scratchpad (64 sets of 1 KB).
pub const REG_SWAP_BYTES: u32 = REG_SETS as u32 * SET_REGS * 32 * 4;
pub const SMEM_SWAP_BYTES: u32 = SMEM_SETS as u32 * SMEM_SET_BYTES;

/// What a schedulable warp has from its grant.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Row {
    pub phys: u16,
    pub set: [u16; REG_SETS],
    /// Register sets whose values it holds (kept through events).
    pub held: u8,
    pub slot: u8,
}

/// A grant, or a release's regrant on what the warp kept.
struct Grant {
    w: usize,
    slot: u8,
    phys: u16,
    set: [u16; REG_SETS],
    /// The block's scratchpad row.
    smem: (u64, [u8; SMEM_SETS]),
    release: bool,
}

/// Zorua's counters on one SM.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZoruaStats {
    pub events: u64,
    /// Of which phase changes (specifiers and fences) and barrier arrivals.
    pub phase_events: u64,
    pub barrier_events: u64,
    pub grants: u64,
    /// Warps released (from barriers, or at phase changes whose needs they held), on the
    /// slots and rows they kept.
    pub releases: u64,
    /// Register and scratchpad sets allocated: physical, in swap.
    pub reg_sets: [u64; 2],
    pub smem_sets: [u64; 2],
    /// Register operand accesses and shared-memory instruction accesses: to physical sets,
    /// to sets in swap (the paper's physical hit rates, §6.4).
    pub reg_accesses: [u64; 2],
    pub smem_accesses: [u64; 2],
    /// Shared-memory sets accessed beyond the scratchpad the block holds (its phases' largest
    /// need): none while the specifiers cover every access (`phases::sound`), as the tests
    /// check. Such an access still finds its data (in the block's swap space).
    pub smem_unheld: u64,
    /// Lines read from and written to swap.
    pub swap_reads: u64,
    pub swap_writes: u64,
    /// Swap line reads that hit in the L1 (not counted in `swap_reads`).
    pub swap_l1_hits: u64,
    /// Grants past the threshold by the forward-progress rule.
    pub valve_grants: u64,
    /// Warp-cycles off the schedulers between an event and the grant after it: waiting for the
    /// instructions in flight that write registers it frees (`drain_cycles`), then for the
    /// coordinator (`coord_cycles`); and the number of such spans.
    pub drain_cycles: u64,
    pub coord_cycles: u64,
    pub offs: u64,
    /// Of which after a barrier arrival (the wait for the block's other warps included).
    pub bar_coord_cycles: u64,
    pub bar_offs: u64,
    /// Cycles the coordinator was busy (not idle), and event-cycles events waited in the SM's
    /// queue for it.
    pub busy_cycles: u64,
    pub queue_cycles: u64,
    /// Sum over cycles of schedulable warps not at a barrier (the paper's schedulable warps,
    /// §6.4, Fig. 12), and of warps waiting in the coordinator's queues.
    pub sched_warp_cycles: u64,
    pub waiting_warp_cycles: u64,
    /// Idle and memory cycles (Algorithm 1's `c_idle`, `c_mem`).
    pub c_idle: u64,
    pub c_mem: u64,
    /// The threshold at the end, and the epochs that moved it up and down.
    pub o_thresh: u32,
    pub thresh_moves: [u64; 2],
}

pub(super) struct ZSm {
    pub unit: Held<ZIn, ZOut>,
    /// The unit's outputs from its last edge on (they depend on its state alone, which
    /// changes only at an edge): the SM reads them without looking at the unit again.
    pub out: ZOut,
    /// A warp-level manager (WLM) in the slot: the block's declared needs, no phase changes,
    /// and the SM keeps its barriers itself.
    pub wlm: bool,
    pub geom: Geometry,
    /// Events waiting for the coordinator, oldest first.
    pub evq: VecDeque<ZIn>,
    /// Per logical warp: its grant's row, its current phase (registers, scratchpad bytes),
    /// its event waiting for its instructions in flight, its birth order (GTO's age), the
    /// number of its swap lines outstanding and the pc they were read for.
    pub rows: Vec<Row>,
    pub phase: Vec<(u8, u32)>,
    pub pend: Vec<Option<ZIn>>,
    /// Its registers are at home (sent with its event, not granted again): a late writeback
    /// goes there too. The cycle it left its scheduler, and the cycle its event was sent.
    pub spilled: Vec<bool>,
    pub at_bar: Vec<bool>,
    pub left_at: Vec<u64>,
    pub sent_at: Vec<u64>,
    pub birth: Vec<u64>,
    pub swap_wait: Vec<u32>,
    pub swap_pc: Vec<Option<u32>>,
    /// Per logical warp: the swap lines it waits for from memory (filled into the L1 when
    /// the last arrives).
    pub swap_lines: Vec<Vec<u32>>,
    pub births: u64,
    /// Per logical block: its scratchpad row (physical mask, sets), and the sets its granted
    /// warps' phases have needed at most.
    pub srows: Vec<(u64, [u8; SMEM_SETS])>,
    pub smem_held: Vec<u8>,
    /// The physical register file (`[set][register % 4][lane]`) and scratchpad (words).
    pub prf: Vec<u32>,
    pub psmem: Vec<u32>,
    /// Swap areas in global memory: registers, then scratchpad.
    pub reg_base: u32,
    pub smem_base: u32,
    pub next_epoch: u64,
    pub epoch_idle: u64,
    pub epoch_mem: u64,
    pub stats: ZoruaStats,
    /// Writes to registers in swap go to the L1 and are written back when evicted
    /// (`[zorua] swap_writes = "back"`; written through by default); the dirty lines
    /// evicted, to be written to memory.
    pub write_back: bool,
    pub wb: Vec<u32>,
    /// The coordinator broke the protocol or contradicted the SM: the first time.
    pub error: Option<(u64, String)>,
}

impl ZSm {
    /// The coordinator needs a cycle: events wait, it is working, or it drives a release (in
    /// a cycle it is ready).
    fn busy(&self) -> bool {
        !self.evq.is_empty() || !self.out.ready || self.out.release != 0
    }

    /// Where logical warp `w`'s register `r` lives in swap (32 lanes of 4 bytes).
    fn reg_swap(&self, w: usize, r: usize) -> u32 {
        self.reg_base + w as u32 * REG_SWAP_BYTES + r as u32 * 128
    }

    /// Where logical block `b`'s scratchpad set `s` lives in swap.
    fn smem_swap(&self, b: u32, s: usize) -> u32 {
        self.smem_base + b * SMEM_SWAP_BYTES + s as u32 * SMEM_SET_BYTES
    }
}

/// Writes swap line `ln` (of `bytes`) of SM `sm` to memory, counted in `stats`.
fn swap_write(mem: &mut MemSys, now: u64, sm: u32, bytes: u32, ln: u32, stats: &mut ZoruaStats) {
    mem.send(now, MemReq { sm, line: ln, kind: ReqKind::Write, bytes, tag: SWAP_WRITE_TAG });
    stats.swap_writes += 1;
}

impl Sm {
    /// Puts the SM under Zorua with coordinator `unit` (geometry `geom`), its swap areas at
    /// `reg_base` (64 warps x [`REG_SWAP_BYTES`]) and `smem_base` (16 blocks x
    /// [`SMEM_SWAP_BYTES`]) in global memory. Call before any block is placed.
    pub fn set_zorua(&mut self, unit: Held<ZIn, ZOut>, geom: Geometry, reg_base: u32, smem_base: u32, wlm: bool, table_latency: u32) {
        assert!(self.is_empty());
        let (lw, lb) = (geom.lwarps as usize, geom.lblocks as usize);
        self.warps = Warps::new(lw, self.ooo);
        self.blocks = (0..lb).map(|_| None).collect();
        let t = table_latency;
        self.lat.alu_latency += t;
        self.lat.sfu_latency += t;
        self.lat.shared_latency += 2 * t;
        self.lat.l1_latency += t;
        let out = unit.outputs(&ZIn::default());
        self.units = true;
        self.admit = None;
        self.zorua = Some(Box::new(ZSm {
            out,
            unit,
            wlm,
            geom,
            evq: VecDeque::new(),
            rows: vec![Row::default(); lw],
            phase: vec![(0, 0); lw],
            pend: vec![None; lw],
            spilled: vec![false; lw],
            at_bar: vec![false; lw],
            left_at: vec![0; lw],
            sent_at: vec![0; lw],
            birth: vec![0; lw],
            swap_wait: vec![0; lw],
            swap_pc: vec![None; lw],
            swap_lines: vec![Vec::new(); lw],
            births: 0,
            srows: vec![(0, [0; SMEM_SETS]); lb],
            smem_held: vec![0; lb],
            prf: vec![POISON; geom.reg_sets as usize * 128],
            psmem: vec![POISON; geom.smem_sets as usize * 256],
            reg_base,
            smem_base,
            next_epoch: geom.thresh.epoch,
            epoch_idle: 0,
            epoch_mem: 0,
            stats: ZoruaStats::default(),
            write_back: false,
            wb: Vec::new(),
            error: None,
        }));
    }

    /// Writes to registers in swap: written back from the L1 (`true`) or written through.
    pub fn set_swap_write_back(&mut self, on: bool) {
        if let Some(z) = self.zorua.as_mut() {
            z.write_back = on;
        }
    }

    /// A line the L1 evicted: a dirty one (a register line in swap, written back) is written
    /// to memory at the SM's next cycle.
    pub(super) fn z_evicted(&mut self, ev: Option<crate::timing::cache::Evicted>) {
        if let (Some(e), Some(z)) = (ev, self.zorua.as_mut()) {
            if e.dirty {
                z.wb.push(e.line);
            }
        }
    }

    /// Sends the dirty lines evicted since the last cycle to memory.
    pub(super) fn z_write_backs(&mut self, now: u64, mem: &mut MemSys) {
        let (bytes, sm) = (self.cfg.l1_line, self.id);
        if let Some(z) = self.zorua.as_mut() {
            for ln in z.wb.drain(..) {
                swap_write(mem, now, sm, bytes, ln, &mut z.stats);
            }
        }
    }

    /// A coordinator model for configuration `c` with parameters `z` (`wlm`: the warp-level
    /// manager).
    pub fn zorua_model(c: &SmConfig, z: &crate::config::ZoruaConfig, wlm: bool) -> Result<(Held<ZIn, ZOut>, Geometry), String> {
        let g = Geometry { thresh: z.thresh(), pipelined: z.timing == crate::config::CoordTiming::Pipelined, ..Geometry::of(c)? };
        Ok((Box::new(if wlm { Coord::wlm(g) } else { Coord::new(g) }), g))
    }

    /// The SM's coordinator keeps its barriers (Zorua; not WLM, nor the block allocation).
    pub(super) fn z_barriers(&self) -> bool {
        self.zorua.as_ref().is_some_and(|z| !z.wlm)
    }

    pub fn zorua_stats(&self) -> Option<ZoruaStats> {
        self.zorua.as_ref().map(|z| {
            let mut s = z.stats.clone();
            s.o_thresh = z.out.o_thresh as u32;
            // (the model's count: none from an RTL alone)
            s.valve_grants = z.unit.model().and_then(|m| m.get::<Coord>().map(|c| c.valve_grants)).unwrap_or(0);
            s
        })
    }

    /// The coordinator's error, if it broke the protocol: (cycle, what).
    pub(super) fn zorua_error(&mut self) -> Option<(u64, String)> {
        self.zorua.as_mut()?.error.take()
    }

    /// Under Zorua (or WLM), the blocks of `warps` warps whose warps all have physical slots
    /// at once (at least one; within the coordinator's logical warps and blocks): the
    /// scheduling framework's T_k then, by which it sizes a kernel's share of SMs. Registers
    /// and scratchpad do not bound it (they are oversubscribed); when an SM has room is its
    /// own report. `None` under the block allocation.
    pub fn zorua_block_limit(&self, warps: u32) -> Option<u32> {
        let w = warps.max(1);
        self.zorua.as_ref().map(|z| z.geom.lblocks.min(z.geom.lwarps / w).min((z.geom.slots / w).max(1)))
    }

    /// Whether a block of `l` fits under Zorua: enough free logical warps and room in the
    /// coordinator's physical slots (a free logical block, [`Sm::fits`] checks).
    pub(super) fn z_fits(&self, l: &Launch) -> bool {
        let nw = l.kernel.warps() as usize;
        let z = self.zorua.as_ref().unwrap();
        // (physical slots the coordinator has room in, less the warps of blocks started but
        // not yet taken by it)
        let queued: u32 = z.evq.iter().filter(|e| e.ev == Ev::BlockStart).map(|e| e.warps.count_ones()).sum();
        let room = (z.out.slot_room as u32).saturating_sub(queued) as usize;
        // (a block of more warps than the SM has slots goes in when they are all free: its
        // warps take turns, giving them up at barriers)
        room >= nw.min(z.geom.slots as usize) && self.warps.iter().filter(|w| w.is_none()).count() >= nw
    }

    /// A block was placed in block slot `bslot` with warps `slots`: its warps wait for the
    /// coordinator, which gets the block's start with the needs of its first phase.
    pub(super) fn z_block_start(&mut self, bslot: u32, slots: &[u32]) {
        let z = self.zorua.as_mut().unwrap();
        let info = &self.blocks[bslot as usize].as_ref().unwrap().info;
        let k = &info.launch.kernel;
        let (regs, smem) = match k.code.first().map(|i| i.op) {
            Some(Op::Phase { regs, smem }) if !z.wlm => (regs as u8, smem),
            _ => (k.regs as u8, k.shared_bytes),
        };
        // (the most registers a phase of the kernel needs, which its warps reserve when they
        // start: docs/zorua.md, "Admission")
        let peak = if z.wlm { regs } else { k.phases().iter().map(|&(_, r, _)| r as u8).max().unwrap_or(k.regs as u8) };
        let mut mask = 0u64;
        for &s in slots {
            mask |= 1 << s;
            z.phase[s as usize] = (regs, smem);
            z.rows[s as usize] = Row::default();
            z.birth[s as usize] = z.births;
            z.births += 1;
            let hw = self.warps[s as usize].as_mut().unwrap();
            hw.w.regs.fill(POISON);
        }
        self.blocks[bslot as usize].as_mut().unwrap().shared.fill(POISON);
        z.smem_held[bslot as usize] = 0;
        z.evq.push_back(ZIn { ev: Ev::BlockStart, block: bslot as u8, warps: mask, nwarps: mask.count_ones() as u8, regs, smem, peak, ..ZIn::default() });
    }

    /// The warp in `slot` issued `inst` at `pc` with outcome `ev`: under Zorua a specifier
    /// (past instruction 0), fence, barrier or exit takes it off its scheduler and queues its
    /// event for when its instructions in flight complete (inline: without Zorua, nothing).
    #[inline]
    pub(super) fn z_issued(&mut self, now: u64, s: usize, slot: u32, pc: usize, inst: &Inst, ev: Event) {
        if self.zorua.is_some() {
            self.z_issued_event(now, s, slot, pc, inst, ev);
        }
    }

    #[inline(never)] // ([`Sm::z_issued`] under Zorua)
    fn z_issued_event(&mut self, now: u64, s: usize, slot: u32, pc: usize, inst: &Inst, ev: Event) {
        let w = slot as usize;
        // (a warp's event names its block: the coordinator reads the block's fields with the
        // warp's)
        let block = self.warps[w].as_ref().map_or(0, |hw| hw.block as u8);
        let z = self.zorua.as_mut().unwrap();
        let e = match (ev, inst.op) {
            (Event::Done, _) => ZIn { ev: Ev::WarpEnd, warp: slot as u8, block, ..ZIn::default() },
            _ if z.wlm => return,
            (Event::Barrier, _) => ZIn { ev: Ev::Barrier, warp: slot as u8, block, ..ZIn::default() },
            (_, Op::Phase { regs, smem }) if pc > 0 => {
                z.phase[w] = (regs as u8, smem);
                ZIn { ev: Ev::Phase, warp: slot as u8, block, regs: regs as u8, smem, ..ZIn::default() }
            }
            (_, Op::Membar { .. }) => {
                let (regs, smem) = z.phase[w];
                ZIn { ev: Ev::Phase, warp: slot as u8, block, regs, smem, ..ZIn::default() }
            }
            _ => return,
        };
        z.pend[w] = Some(e);
        z.left_at[w] = now;
        if ev != Event::Done {
            let sched = &mut self.scheds[s];
            sched.warps.retain(|&x| x != slot);
            sched.fetch.retain(|&x| x != slot);
            if sched.last == Some(slot) {
                sched.last = None;
            }
            let hw = self.warps[w].as_mut().unwrap();
            hw.in_fetch = false;
            hw.ibuf = 0;
        }
        self.z_flush(now, slot);
    }

    /// A block's warps have all ended and drained: its end goes to the coordinator after them.
    pub(super) fn z_block_end(&mut self, now: u64, bslot: u32, slots: &[u32]) {
        for &s in slots {
            self.z_flush(now, s);
        }
        if let Some(z) = self.zorua.as_mut() {
            z.evq.push_back(ZIn { ev: Ev::BlockEnd, block: bslot as u8, ..ZIn::default() });
            z.stats.events += 1;
        }
    }

    /// The coordinator's cycle: the epoch's statistics when due, the next event when it is
    /// ready, a grant acted on, the clock edge. Moves register data to and from swap.
    pub(super) fn z_cycle(&mut self, now: u64, gmem: &mut GlobalMem) {
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        for (addr, words) in self.z_swap_data.drain(..) {
            for (k, v) in words.into_iter().enumerate() {
                let _ = gmem.write(addr + 4 * k as u32, v);
            }
        }
        if now >= z.next_epoch {
            let idle = (z.stats.c_idle - z.epoch_idle).min(u16::MAX as u64) as u16;
            let mem = (z.stats.c_mem - z.epoch_mem).min(u16::MAX as u64) as u16;
            (z.epoch_idle, z.epoch_mem) = (z.stats.c_idle, z.stats.c_mem);
            z.evq.push_back(ZIn { ev: Ev::Epoch, idle, mem, ..ZIn::default() });
            z.next_epoch += z.geom.thresh.epoch;
        }
        if !z.busy() {
            return;
        }
        // (the unit's cycle: its outputs with the cycle's input, then the edge; the outputs
        // after the edge are the next cycle's, kept)
        z.unit.at_cycle(now);
        let ready = z.out.ready;
        z.stats.busy_cycles += !ready as u64;
        z.stats.queue_cycles += z.evq.len() as u64 - ready as u64 * (!z.evq.is_empty()) as u64;
        let i = if ready { z.evq.pop_front().unwrap_or_default() } else { ZIn::default() };
        let o = z.unit.outputs(&i);
        let before = o.o_thresh;
        z.unit.clock(&i);
        z.unit.at_cycle(now + 1);
        let room = z.out.slot_room;
        z.out = z.unit.outputs(&ZIn::default());
        self.room_changed |= z.out.slot_room != room;
        let after = z.out.o_thresh;
        if after > before {
            z.stats.thresh_moves[0] += 1;
        } else if after < before {
            z.stats.thresh_moves[1] += 1;
        }
        if let Some(e) = z.unit.halted() {
            z.error.get_or_insert((now, format!("SM {}: the Zorua coordinator: {e}", self.id)));
        }
        if o.grant {
            let g = Grant { w: o.grant_warp as usize, slot: o.grant_slot, phys: o.reg_phys, set: o.reg_set, smem: (o.smem_phys, o.smem_set), release: false };
            self.z_grant(now, g, gmem);
        }
        let mut rel = o.release;
        while rel != 0 {
            let w = rel.trailing_zeros() as usize;
            rel &= rel - 1;
            // (a release: the warp kept its slot and its row, up to its phase's need)
            let z = self.zorua.as_mut().unwrap();
            let need = mpgpu_spec::units::zorua::reg_sets(z.phase[w].0 as u32) as usize;
            let r = z.rows[w];
            let mut set = [0; REG_SETS];
            set[..need].copy_from_slice(&r.set[..need]);
            let phys = r.phys & ((1u32 << need) - 1) as u16;
            z.stats.releases += 1;
            self.z_grant(now, Grant { w, slot: r.slot, phys, set, smem: (o.smem_phys, o.smem_set), release: true }, gmem);
        }
    }

    /// The earliest cycle the coordinator needs the SM (busy, events queued, the next epoch).
    pub(super) fn z_wake(&self, now: u64) -> u64 {
        match &self.zorua {
            Some(z) if z.busy() || !self.z_swap_data.is_empty() || !z.wb.is_empty() => now + 1,
            Some(z) => z.next_epoch.max(now + 1),
            None => u64::MAX,
        }
    }

    /// Counts `d` cycles with the schedulers' present reasons: Algorithm 1's idle cycles (no
    /// scheduler issued and none has a warp that could, while a warp waits in the
    /// coordinator's scratchpad or register queue) and memory cycles (no scheduler
    /// issued, and those with warps wait on memory); schedulable and waiting warps.
    pub(super) fn z_account(&mut self, d: u64) {
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        let reasons = self.scheds.iter().map(|s| s.reason);
        let issued = reasons.clone().any(|r| r == Stall::Issued);
        if !issued {
            if reasons.clone().all(|r| r == Stall::Idle) {
                // (only while a warp waits for what it needs: docs/zorua.md, "The
                // oversubscription threshold")
                if z.out.waiting {
                    z.stats.c_idle += d;
                }
            } else if reasons.clone().all(|r| matches!(r, Stall::Memory | Stall::Idle)) {
                z.stats.c_mem += d;
            }
        }
        let sched: u64 = self.scheds.iter().map(|s| s.warps.len() as u64).sum();
        z.stats.sched_warp_cycles += d * sched;
        z.stats.waiting_warp_cycles += d * z.pend.iter().filter(|p| p.is_some()).count() as u64;
    }

    /// The scheduler a warp in `slot` issues on: its physical slot's under Zorua.
    pub(super) fn sched_of(&self, slot: u32) -> usize {
        match &self.zorua {
            Some(z) => (z.rows[slot as usize].slot as u32 % self.cfg.schedulers) as usize,
            None => (slot % self.cfg.schedulers) as usize,
        }
    }
}
