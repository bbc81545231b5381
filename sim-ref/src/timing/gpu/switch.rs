//! Blocks taken off and put back on SMs: freezing, capturing and restoring a block, saving
//! its context to global memory and restoring it from there, and thread-block switching on
//! faults.

use super::*;

impl Gpu {
    /// Stops a block issuing so that it drains (see `Sm::freeze_block`).
    pub fn freeze_block(&mut self, sm: usize, bslot: u32) {
        self.sms[sm].freeze_block(bslot);
    }

    /// Takes a block with nothing in flight off an SM (see `Sm::capture_block`).
    pub fn capture_block(&mut self, sm: usize, bslot: u32) -> Option<crate::timing::sm::BlockContext> {
        let ctx = self.sms[sm].capture_block(self.now, bslot)?;
        self.touch();
        Some(ctx)
    }

    /// Puts a captured block on an SM (which must have room for it).
    pub fn restore_block(&mut self, sm: usize, ctx: crate::timing::sm::BlockContext) {
        assert!(self.sms[sm].fits(&ctx.info.launch), "restore_block: no room on SM {sm}");
        self.sms[sm].restore_block(self.now, ctx);
    }

    /// One line of context transfer `x` has been answered. After the last, a restored block
    /// resumes and its save slot (or region) is free again; a save is then complete (the SM
    /// driver tells the framework in order, [`Gpu::save_done`] tells a caller).
    pub(super) fn context_response(&mut self, now: u64, x: u32) {
        let Some(done) = self.ctx.line_answered(x, now) else { return };
        if let XferKind::Restore { bslot, slot, region } = done.kind {
            self.ctx.end_xfer(x);
            if let Some((launch, slot)) = slot {
                self.ctx.free_slot(launch, slot);
            }
            if let Some(r) = region {
                self.ctx.free_region(r);
            }
            self.sms[done.sm].resume_block(now, bslot);
            self.touch();
        }
    }

    /// Context switch, save half: takes a quiescent block off `sm` (see [`Gpu::freeze_block`]),
    /// writes its whole state into a region of global memory (a free one from the context pool
    /// when one is big enough), and sends it through the memory system from the SM as streamed
    /// writes. The save is complete at the last acknowledgement ([`Gpu::save_done`]). An error
    /// if the block is not quiescent, or its context cannot be saved (the block then stays).
    pub fn save_block(&mut self, sm: usize, bslot: u32) -> Result<SavedBlock, SimError> {
        let cycle = self.now;
        let err = |detail: String| SimError::Cosim { cycle, detail };
        let ctx = self.sms[sm].capture_block(self.now, bslot).ok_or_else(|| err(format!("save_block: block slot {bslot} of SM {sm} is empty or has instructions in flight")))?;
        let words = match crate::timing::context::saved_words(&ctx) {
            Ok(w) => w,
            Err(e) => {
                self.sms[sm].restore_block(self.now, ctx);
                return Err(err(format!("save_block: SM {sm}, block slot {bslot}: {e}")));
            }
        };
        let mark = self.gmem.alloc_mark();
        let region = self.ctx.take_region(&mut self.gmem, 4 * words.len() as u32);
        self.mem.mmu.adopt_system(mark, self.gmem.alloc_mark(), &self.gmem);
        let addr = self.ctx.region_addr(region);
        self.gmem.write_u32s(addr, &words);
        let xfer = self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, XferKind::Save, addr, words.len(), self.now);
        self.touch();
        let serial = self.ctx.next_serial;
        self.ctx.next_serial += 1;
        self.ctx.single.insert(serial, xfer);
        let template = crate::timing::sm::BlockContext { info: ctx.info, ctaid: ctx.ctaid, shared: Vec::new(), warps: Vec::new(), queued: Vec::new(), ages: Vec::new() };
        Ok(SavedBlock { addr, words: words.len(), region, serial, template })
    }

    /// The cycle a save's last line was acknowledged, once it has been (`None` too once the
    /// block has been restored).
    pub fn save_done(&self, saved: &SavedBlock) -> Option<u64> {
        self.ctx.single.get(&saved.serial).and_then(|&x| self.ctx.xfer(x)).and_then(|x| x.done)
    }

    /// Context switch, restore half: reads a saved block (whose save is complete) back from
    /// global memory and makes it resident on `sm`; its warps issue once the context's last
    /// line has arrived from memory, and then its region is free for later saves. A block is
    /// restored once: a second restore of the same save is refused.
    pub fn restore_saved(&mut self, sm: usize, saved: &SavedBlock) -> Result<(), SimError> {
        let cycle = self.now;
        let err = |detail: &str| SimError::Cosim { cycle, detail: format!("restore_saved: {detail}") };
        let Some(&save) = self.ctx.single.get(&saved.serial) else { return Err(err("the block was restored already")) };
        if self.ctx.xfer(save).is_none_or(|x| x.done.is_none()) {
            return Err(err("the save has not completed"));
        }
        let ctx = crate::timing::context::load(&self.gmem, saved.addr, saved.words, &saved.template).map_err(SimError::BadLaunch)?;
        if !self.sms[sm].fits(&ctx.info.launch) {
            return Err(err(&format!("no room on SM {sm}")));
        }
        self.ctx.single.remove(&saved.serial);
        self.ctx.end_xfer(save);
        let bslot = self.sms[sm].restore_block_at(self.now, ctx, true);
        let kind = XferKind::Restore { bslot, slot: None, region: Some(saved.region) };
        self.ctx.start_xfer(&mut self.mem, self.cfg.sm[0].l1_line, sm, kind, saved.addr, saved.words, self.now);
        Ok(())
    }

    /// Thread-block switching on faults (Tanasić's thesis §6.4.1, §6.5.3; `docs/faults.md`,
    /// "Thread-block switching"): first, each switched-out block whose faults are resolved
    /// (and whose save has completed) comes back to its SM if it fits, before the dispatcher
    /// can give the room to a new block; then each SM with fewer than `extra` blocks off chip
    /// switches out a block whose warps are all faulted or at a barrier, if there is other
    /// work to run: a block of a launch not yet fully issued, or one of its own resolved.
    pub(super) fn tb_switch_cycle(&mut self, now: u64) -> Result<(), SimError> {
        let ts = self.cfg.tb_switch;
        if !ts.enabled {
            return Ok(());
        }
        let mut k = 0;
        while k < self.off.len() {
            let o = &self.off[k];
            let saved_done = o.saved.as_ref().is_none_or(|s| self.save_done(s).is_some());
            let launch = match (&o.saved, &o.ctx) {
                (Some(s), _) => &s.template.info.launch,
                (None, Some(c)) => &c.info.launch,
                (None, None) => unreachable!("a switched-out block has its context somewhere"),
            };
            if o.resolved_at <= now && saved_done && self.sms[o.sm].fits(launch) {
                let o = self.off.remove(k);
                match (o.saved, o.ctx) {
                    (Some(s), _) => self.restore_saved(o.sm, &s)?,
                    (None, Some(c)) => self.sms[o.sm].restore_block(now, c),
                    (None, None) => unreachable!(),
                }
                self.sms[o.sm].stats.switched_in += 1;
                self.touch();
            } else {
                k += 1;
            }
        }
        for o in &mut self.off {
            if o.resolved_at <= now && !o.told {
                o.told = true;
                self.sms[o.sm].tb_check = true;
            }
        }
        let new_work = self.launches.iter().any(|l| l.remaining() > 0);
        for sm in 0..self.sms.len() {
            if !self.sms[sm].tb_check {
                continue;
            }
            self.sms[sm].tb_check = false;
            let off_here = self.off.iter().filter(|o| o.sm == sm).count() as u32;
            let resolved_here = self.off.iter().any(|o| o.sm == sm && o.resolved_at <= now);
            if off_here >= ts.extra || !(new_work || resolved_here) {
                continue;
            }
            let Some((bslot, resolved_at)) = self.sms[sm].switch_candidate(now, ts.min_wait as u64) else { continue };
            let (saved, ctx) = if ts.ideal {
                (None, self.capture_block(sm, bslot))
            } else {
                (Some(self.save_block(sm, bslot)?), None)
            };
            if saved.is_none() && ctx.is_none() {
                continue;
            }
            self.sms[sm].stats.switched_out += 1;
            self.off.push(OffBlock { sm, saved, ctx, resolved_at, told: false });
            self.sms[sm].tb_check = true;
            self.touch();
        }
        Ok(())
    }
}
