//! Thread blocks on the SM: whether one fits, placing and restoring one, freezing and
//! capturing one for a context switch, thread-block switching's choice of a block to switch
//! out, and a block's barriers and end.

use super::*;

impl Sm {
    /// Whether one more block of `l` fits next to what is resident.
    pub fn fits(&self, l: &Launch) -> bool {
        let room = match &self.admit {
            None => self.z_fits(l),
            Some(p) => {
                let p = p.borrow();
                p.unit.outputs(&AdmitIn { desc: l.kernel.admit_desc(self.cfg.reg_round), ..p.pending }).fits
            }
        };
        room && self.free_block_slot().is_some()
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
    /// (docs/faults.md O10). Under Zorua (or WLM) the occupancy is the coordinator's: the
    /// blocks whose warps all have physical slots, since registers and scratchpad do not bound
    /// it.
    pub fn log_partition(&self, l: &Launch) -> u32 {
        let f = l.kernel.footprint();
        let occ = self.zorua_block_limit(f.threads_per_block.div_ceil(WARP_SIZE as u32)).unwrap_or_else(|| self.cfg.occupancy(&f).blocks).max(1);
        let entries = self.cfg.oplog_bytes / crate::config::OPLOG_ENTRY_BYTES;
        let most = l.kernel.code.iter().map(log_need).max().unwrap_or(0) as u32;
        (entries / occ).max(most)
    }

    /// Until when block `blk`'s faults keep it waiting, if it could be switched out now: nothing
    /// of it in flight, and every warp waits for a fault, at a barrier or has exited (0 when
    /// none waits for a fault). The test of thread-block switching ([`Sm::switch_candidate`]).
    pub(super) fn faults_wait(&self, now: u64, blk: &Block) -> Option<u64> {
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

    /// Places block `index` of a launch (the caller checked [`Sm::fits`]).
    pub fn place_block(&mut self, now: u64, info: &Arc<LaunchInfo>, index: u64) {
        let l = &info.launch;
        let k = &l.kernel;
        let warps: Vec<Warp> = (0..k.warps()).map(|w| Warp::new(k, w, l.block)).collect();
        let ctx = BlockContext { info: info.clone(), ctaid: l.block_coords(index), shared: vec![0; (k.shared_bytes / 4) as usize], warps, queued: Vec::new(), ages: Vec::new() };
        self.restore_block(now, ctx);
    }

    /// The admission unit packs the resident blocks' register-file ranges (`rf`) or
    /// shared-memory ranges (`sh`) from 0 in block-slot order to place a block the room above
    /// its bump pointer does not hold: the SM's copy of the ranges follows, and the bytes that
    /// move are counted.
    fn admit_pack(&mut self, rf: bool, sh: bool) {
        let (mut r, mut s, mut moved) = (0, 0, 0u64);
        for b in self.blocks.iter_mut().flatten() {
            if rf {
                if b.rf_base != r {
                    moved += b.regs as u64 * 4;
                }
                b.rf_base = r;
                r += b.regs / 32;
            }
            if sh {
                if b.sh_base != s {
                    moved += b.shared_bytes as u64;
                }
                b.sh_base = s;
                s += b.shared_bytes;
            }
        }
        self.stats.admit_packs += 1;
        self.stats.admit_moved += moved;
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
        let bslot = self.free_block_slot().expect("no free block slot: check fits() first") as usize;
        let (rf_base, sh_base) = if self.admit.is_some() {
            let d = ctx.info.launch.kernel.admit_desc(self.cfg.reg_round);
            let o = self.admit_request(now, |i| {
                i.desc = d;
                i.alloc = true;
                i.slot = bslot as u8;
            });
            if o.rf_move || o.sh_move {
                self.admit_pack(o.rf_move, o.sh_move);
            }
            (o.rf_base, o.sh_base)
        } else {
            (0, 0)
        };
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
            w.fetch_gated = gates_fetch(&ctx.info.timing, &w.iq, self.zorua.is_some());
        }
        self.used_blocks += 1;
        self.used_warps += nw;
        self.barrier_warps += at_barrier;
        self.blocks[bslot] = Some(Block {
            info: ctx.info,
            ctaid: ctx.ctaid,
            shared: ctx.shared,
            warp_slots: slots,
            running,
            at_barrier,
            regs,
            shared_bytes: f.shared_per_block,
            rf_base,
            sh_base,
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

    /// The launch and block coordinates of the block in `bslot`, if one is there.
    pub fn block_in(&self, bslot: u32) -> Option<(usize, [u32; 3])> {
        self.blocks.get(bslot as usize)?.as_ref().map(|b| (b.info.id, b.ctaid))
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
            // (the SM and its schedulers look at it at once: under the operand log its queued
            // replays' logged operands are read out of the array for the save, from its next
            // cycle; its schedulers' reasons change)
            self.wake_all(0);
        }
    }

    /// Removes a quiescent block and returns its whole state.
    pub fn capture_block(&mut self, now: u64, bslot: u32) -> Option<BlockContext> {
        if !self.quiescent_blocks().contains(&bslot) {
            return None;
        }
        self.account(now);
        let blk = self.blocks[bslot as usize].take().unwrap();
        self.barrier_warps -= blk.at_barrier;
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
        self.wake_all(now);
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
        if self.admit.is_some() {
            self.admit_request(now, |i| i.free |= 1 << bslot);
        }
        self.used_blocks -= 1;
        self.used_warps -= blk.warp_slots.len() as u32;
    }

    /// Frees drained warps and finished blocks; releases barriers that everyone reached.
    pub(super) fn check_block(&mut self, now: u64, bslot: u32) {
        // (under Zorua the coordinator releases a barrier: its grants)
        let own_barriers = !self.z_barriers();
        let Some(blk) = self.blocks[bslot as usize].as_mut() else {
            return;
        };
        if blk.running > 0 && blk.at_barrier == blk.running && own_barriers {
            self.barrier_warps -= blk.at_barrier;
            blk.at_barrier = 0;
            for &s in &blk.warp_slots {
                if let Some(w) = self.warps[s as usize].as_mut() {
                    if w.w.state == WarpState::AtBarrier {
                        w.w.state = WarpState::Ready;
                        w.next_issue = w.next_issue.max(now + 1);
                        // (its scheduler looks this cycle if it comes later in the issue stage,
                        // as it would stepping every cycle)
                        let sc = &mut self.scheds[(s % self.cfg.schedulers) as usize];
                        sc.wake = sc.wake.min(now);
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
            self.barrier_warps -= blk.at_barrier;
            for &s in &blk.warp_slots {
                self.free_warp(s);
            }
            self.release(now, &blk, bslot);
            self.stats.blocks_done += 1;
            self.finished.push(blk.info.id);
        }
    }
}
