//! Data through Zorua's tables (`docs/zorua.md`): a warp's registers written to where its
//! mapping row puts them at an event and read back at a grant, a late writeback following
//! them, the sets in swap an instruction reads or writes before it issues, and the
//! scratchpad words of a shared access moved through its block's row.

use super::*;

/// Where register `r` sits in the physical register file when its set is physical set
/// `pset` (`[set][register % 4][lane]`).
fn prf_at(pset: u16, r: usize) -> usize {
    pset as usize * 128 + (r % 4) * 32
}

/// The scratchpad sets the lanes `lanes` of an access at byte addresses `ad` touch.
fn smem_sets_touched(ad: &[u32; WARP_SIZE], lanes: u32) -> u64 {
    (0..WARP_SIZE).filter(|l| lanes >> l & 1 != 0).fold(0, |m, l| m | 1 << ((ad[l] / SMEM_SET_BYTES) as usize).min(63))
}

impl Sm {
    /// Sends the warp's waiting event once nothing in flight writes a register it frees (at
    /// its end: once nothing of it is in flight): its registers go to where its row puts them
    /// first, and a later writeback follows them there ([`Sm::z_late_write`]).
    pub(in crate::timing::sm) fn z_flush(&mut self, now: u64, slot: u32) {
        let w = slot as usize;
        // (an instruction of the warp issued this cycle reads its sources at the next: on the
        // thesis's pipeline one may issue before the warp's event in the same cycle. The
        // event waits for the read, and is tried again after it)
        if self.zorua.is_some() && self.oread.iter().any(|&id| self.recs[id as usize].warp == slot) {
            return;
        }
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        let Some(hw) = self.warps[w].as_ref() else {
            return;
        };
        let Some(e) = z.pend[w] else {
            return;
        };
        // (the sets the warp keeps: all at a barrier or fence, those of the new phase at a
        // specifier, none at its end)
        let row = z.rows[w];
        let keep = match e.ev {
            Ev::Phase => row.held.min(mpgpu_spec::units::zorua::reg_sets(e.regs as u32) as u8),
            Ev::WarpEnd => 0,
            _ => row.held,
        };
        let freed_pending = (keep as usize * 4..256).any(|r| hw.pending[r / 64] >> (r % 64) & 1 != 0);
        if freed_pending || e.ev == Ev::WarpEnd && hw.inflight > 0 {
            return;
        }
        z.pend[w] = None;
        z.spilled[w] = e.ev != Ev::WarpEnd;
        z.at_bar[w] = e.ev == Ev::Barrier;
        z.sent_at[w] = now;
        let hw = self.warps[w].as_mut().unwrap();
        let nregs = hw.w.nregs as usize;
        let mut gmem_writes = Vec::new();
        for set in 0..keep as usize {
            for r in set * 4..(set * 4 + 4).min(nregs) {
                let lanes = &hw.w.regs[r * 32..r * 32 + 32];
                if row.phys >> set & 1 != 0 {
                    let at = prf_at(row.set[set], r);
                    z.prf[at..at + 32].copy_from_slice(lanes);
                } else {
                    gmem_writes.push((z.reg_swap(w, r), lanes.to_vec()));
                }
            }
        }
        hw.w.regs.fill(POISON);
        z.rows[w].held = keep;
        z.stats.events += 1;
        z.stats.phase_events += (e.ev == Ev::Phase) as u64;
        z.stats.barrier_events += (e.ev == Ev::Barrier) as u64;
        z.evq.push_back(e);
        self.z_swap_data.extend(gmem_writes);
        self.wake_at = self.wake_at.min(now);
    }

    /// A writeback of register `r` (lanes `lanes`) of the warp in `slot` after its event was
    /// sent: the lanes written go to the register's home too.
    pub(in crate::timing::sm) fn z_late_write(&mut self, slot: u32, r: usize, lanes: u32) {
        let w = slot as usize;
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        if !z.spilled[w] {
            return;
        }
        let hw = self.warps[w].as_mut().unwrap();
        let row = z.rows[w];
        let set = r / 4;
        let vals = &mut hw.w.regs[r * 32..r * 32 + 32];
        for l in (0..32).filter(|l| lanes >> l & 1 != 0) {
            if row.phys >> set & 1 != 0 {
                z.prf[prf_at(row.set[set], r) + l] = vals[l];
            } else {
                self.z_swap_data.push((z.reg_swap(w, r) + 4 * l as u32, vec![vals[l]]));
            }
        }
        vals.fill(POISON);
    }

    /// Warp `g.w` becomes schedulable on physical slot `g.slot`, with register row `g.phys`,
    /// `g.set` and its block's scratchpad row `g.smem` (a grant, or a release on what it kept).
    pub(super) fn z_grant(&mut self, now: u64, g: Grant, gmem: &GlobalMem) {
        let id = self.id;
        let z = self.zorua.as_mut().unwrap();
        let w = g.w;
        let what = if g.release { "released" } else { "granted" };
        let Some(hw) = self.warps.get_mut(w).and_then(Option::as_mut) else {
            z.error.get_or_insert((now, format!("SM {id}: the Zorua coordinator {what} logical warp {w}, which holds no warp")));
            return;
        };
        if g.release && !z.spilled[w] {
            z.error.get_or_insert((now, format!("SM {id}: the Zorua coordinator released logical warp {w}, which has no event pending")));
            return;
        }
        let (regs, _) = z.phase[w];
        let need = mpgpu_spec::units::zorua::reg_sets(regs as u32) as u8;
        let kept = z.rows[w].held.min(need);
        // the sets kept since the warp's last event are where the new row says
        let nregs = hw.w.nregs as usize;
        for set in 0..kept as usize {
            for r in set * 4..(set * 4 + 4).min(nregs) {
                let lanes = &mut hw.w.regs[r * 32..r * 32 + 32];
                if g.phys >> set & 1 != 0 {
                    let at = prf_at(g.set[set], r);
                    if at + 32 > z.prf.len() {
                        z.error.get_or_insert((now, format!("SM {id}: the Zorua coordinator mapped register set {set} of logical warp {w} to physical set {}, past the register file", g.set[set])));
                        return;
                    }
                    lanes.copy_from_slice(&z.prf[at..at + 32]);
                } else {
                    let a = z.reg_swap(w, r);
                    for (k, l) in lanes.iter_mut().enumerate() {
                        *l = gmem.read(a + 4 * k as u32).unwrap_or(POISON);
                    }
                }
            }
        }
        z.rows[w] = Row { phys: g.phys, set: g.set, held: need, slot: g.slot };
        z.stats.grants += !g.release as u64;
        if z.spilled[w] {
            z.spilled[w] = false;
            z.stats.drain_cycles += z.sent_at[w] - z.left_at[w];
            z.stats.coord_cycles += now - z.sent_at[w];
            z.stats.offs += 1;
            if z.at_bar[w] {
                z.stats.bar_coord_cycles += now - z.sent_at[w];
                z.stats.bar_offs += 1;
            }
        }
        for set in kept..need {
            z.stats.reg_sets[(g.phys >> set & 1 == 0) as usize] += 1;
        }
        let bslot = hw.block as usize;
        // (a block's scratchpad sets: as many as the largest need its granted warps had)
        let sets_before = z.smem_held[bslot];
        let sets = sets_before.max(mpgpu_spec::units::zorua::smem_sets(z.phase[w].1) as u8);
        for set in sets_before..sets {
            z.stats.smem_sets[(g.smem.0 >> set & 1 == 0) as usize] += 1;
        }
        z.smem_held[bslot] = sets;
        z.srows[bslot] = g.smem;
        if hw.w.state == WarpState::AtBarrier {
            hw.w.state = WarpState::Ready;
            if let Some(b) = self.blocks[bslot].as_mut() {
                if b.at_barrier > 0 {
                    b.at_barrier -= 1;
                    self.barrier_warps -= 1;
                }
            }
        }
        hw.next_issue = hw.next_issue.max(now + 1);
        Self::refresh_next(hw, &self.blocks[bslot].as_ref().unwrap().info);
        let s = (g.slot as u32 % self.cfg.schedulers) as usize;
        let birth = z.birth[w];
        let list = &mut self.scheds[s].warps;
        let at = list.iter().position(|&x| z.birth[x as usize] > birth).unwrap_or(list.len());
        list.insert(at, w as u32);
        // (the fetch queue is the GPGPU-Sim-like pipeline's: the thesis's fetches from every
        // schedulable warp)
        if !self.ooo && !hw.in_fetch && hw.w.state == WarpState::Ready {
            hw.in_fetch = true;
            self.scheds[s].fetch.push_back(w as u32);
        }
        self.scheds[s].wake = self.scheds[s].wake.min(now + 1);
        self.wake_at = self.wake_at.min(now + 1);
    }

    /// Before the warp in `slot` issues `d`: counts its register accesses, and if it reads a
    /// register set or scratchpad set in swap not yet read for this instruction, sends the
    /// lines' reads and returns true (the warp waits for them; the cycle's issue slot is
    /// used). Writes to sets in swap are sent as the instruction issues.
    pub(in crate::timing::sm) fn z_swap_before_issue(&mut self, now: u64, slot: u32, d: &Decoded, mem: &mut MemSys) -> bool {
        let line = self.cfg.l1_line;
        let sm = self.id;
        let Some(z) = self.zorua.as_mut() else {
            return false;
        };
        let w = slot as usize;
        if z.swap_pc[w] == Some(d.pc as u32) {
            z.swap_pc[w] = None;
            return false;
        }
        let row = z.rows[w];
        let mut reads: Vec<u32> = Vec::new();
        let mut writes: Vec<(u32, bool)> = Vec::new();
        // (the sources read, then the register written)
        let dst = d.inst.dst_reg().filter(|_| d.write.is_some_and(|b| b < 256));
        for (r, write) in d.inst.src_regs().map(|r| (r, false)).chain(dst.map(|r| (r, true))) {
            let r = r as usize;
            if row.phys >> (r / 4) & 1 != 0 {
                z.stats.reg_accesses[0] += 1;
            } else {
                z.stats.reg_accesses[1] += 1;
                let ln = z.reg_swap(w, r) / line;
                if write { writes.push((ln, true)) } else { reads.push(ln) }
            }
        }
        let shared = match d.inst.op {
            Op::Ld { space: Space::Shared, addr, .. } => Some((addr, true, false)),
            Op::St { space: Space::Shared, addr, .. } => Some((addr, false, true)),
            Op::Atom { space: Space::Shared, addr, .. } => Some((addr, true, true)),
            _ => None,
        };
        if let Some((a, rd, wr)) = shared {
            let hw = self.warps[w].as_ref().unwrap();
            let ad = exec::addresses(&hw.w, a);
            let (phys, _) = z.srows[hw.block as usize];
            let sets = smem_sets_touched(&ad, d.exec_mask);
            let held = z.smem_held[hw.block as usize] as usize;
            for s in (0..64).filter(|s| sets >> s & 1 != 0) {
                z.stats.smem_unheld += (s >= held) as u64;
                if phys >> s & 1 != 0 {
                    z.stats.smem_accesses[0] += 1;
                } else {
                    z.stats.smem_accesses[1] += 1;
                    let base = z.smem_swap(hw.block, s);
                    let mut lines: Vec<u32> = (0..WARP_SIZE).filter(|&l| d.exec_mask >> l & 1 != 0 && (ad[l] / SMEM_SET_BYTES) as usize == s).map(|l| (base + ad[l] % SMEM_SET_BYTES) / line).collect();
                    lines.sort_unstable();
                    lines.dedup();
                    if rd {
                        reads.extend(&lines);
                    }
                    if wr {
                        writes.extend(lines.iter().map(|&ln| (ln, false)));
                    }
                }
            }
        }
        reads.sort_unstable();
        reads.dedup();
        // Swap goes through the L1 like the warp's own local data. A register's line, written
        // whole, is written into the L1 and marked dirty, and goes to memory when evicted
        // (write-back, as Fermi's L1 keeps local memory), or, written through, goes to memory
        // with the L1's copy updated (allocated). A scratchpad line is written through, the
        // L1's copy updated if present. A read hits in the L1 or goes to memory, and the line
        // is filled when it arrives.
        let l1 = &mut self.l1;
        for &(ln, whole) in &writes {
            if whole && z.write_back {
                if !l1.access(ln, true) {
                    if let Some(e) = l1.fill(ln, true).filter(|e| e.dirty) {
                        swap_write(mem, now, sm, line, e.line, &mut z.stats);
                    }
                }
                continue;
            }
            swap_write(mem, now, sm, line, ln, &mut z.stats);
            // (written through, no line is ever dirty: the L1's copy is updated, or allocated
            // for a register's line)
            if !l1.access(ln, false) && whole {
                l1.fill(ln, false);
            }
        }
        if reads.is_empty() {
            return false;
        }
        let l1_latency = self.lat.l1_latency.max(1) as u64;
        for &ln in &reads {
            if l1.access(ln, false) {
                z.stats.swap_l1_hits += 1;
                self.events.push(now + l1_latency, SmEv::SwapHit(slot));
            } else {
                mem.send(now, MemReq { sm, line: ln, kind: ReqKind::Read, bytes: line, tag: SWAP_TAG | slot });
                z.stats.swap_reads += 1;
                z.swap_lines[w].push(ln);
            }
        }
        z.swap_wait[w] = reads.len() as u32;
        z.swap_pc[w] = Some(d.pc as u32);
        true
    }

    /// A swap line the warp in `slot` reads has arrived (from memory, or from the L1). After
    /// the last, the lines that came from memory are filled into the L1 and the warp may
    /// issue.
    pub(in crate::timing::sm) fn z_swap_arrived(&mut self, now: u64, slot: u32) {
        let w = slot as usize;
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        z.swap_wait[w] = z.swap_wait[w].saturating_sub(1);
        if z.swap_wait[w] == 0 {
            let lines = std::mem::take(&mut z.swap_lines[w]);
            for ln in lines {
                if !self.l1.probe(ln) {
                    let e = self.l1.fill(ln, false);
                    self.z_evicted(e);
                }
            }
            if self.warps[w].is_some() {
                let s = self.sched_of(w as u32);
                self.scheds[s].wake = self.scheds[s].wake.min(now);
            }
        }
    }

    /// Whether the warp in `slot` may fetch and issue: always under the block allocation; under
    /// Zorua (or WLM) while the coordinator has it on its scheduler (granted or released, and
    /// not since left at an event).
    pub(in crate::timing::sm) fn z_schedulable(&self, slot: u32) -> bool {
        self.zorua.is_none() || self.scheds[self.sched_of(slot)].warps.contains(&slot)
    }

    /// Whether the warp waits for swap lines.
    pub(in crate::timing::sm) fn z_swap_waiting(&self, slot: u32) -> bool {
        self.zorua.as_ref().is_some_and(|z| z.swap_wait[slot as usize] > 0)
    }

    /// Around a shared-memory access of the block in `bslot` by `lanes` at addresses `ad`: the
    /// words of the sets it touches are brought from where the block's row puts them
    /// (`load`), or put back there and poisoned in the working copy.
    pub(in crate::timing::sm) fn z_shared(&mut self, bslot: u32, ad: &[u32; WARP_SIZE], lanes: u32, load: bool, gmem: &mut GlobalMem) {
        let Some(z) = self.zorua.as_mut() else {
            return;
        };
        let blk = self.blocks[bslot as usize].as_mut().unwrap();
        let (phys, set) = z.srows[bslot as usize];
        let sets = smem_sets_touched(ad, lanes);
        for s in (0..64usize).filter(|s| sets >> s & 1 != 0) {
            let words = 256usize;
            let lo = s * words;
            if lo >= blk.shared.len() {
                continue;
            }
            let hi = (lo + words).min(blk.shared.len());
            if phys >> s & 1 != 0 {
                let at = set[s] as usize * words;
                if load {
                    blk.shared[lo..hi].copy_from_slice(&z.psmem[at..at + hi - lo]);
                } else {
                    z.psmem[at..at + hi - lo].copy_from_slice(&blk.shared[lo..hi]);
                }
            } else {
                let a = z.smem_swap(bslot, s);
                for k in 0..hi - lo {
                    if load {
                        blk.shared[lo + k] = gmem.read(a + 4 * k as u32).unwrap_or(POISON);
                    } else {
                        let _ = gmem.write(a + 4 * k as u32, blk.shared[lo + k]);
                    }
                }
            }
            if !load {
                blk.shared[lo..hi].fill(POISON);
            }
        }
    }
}
