//! The memory stage: a load's, store's or atomic's plan (bank conflicts, coalescing into
//! lines), its timing through the L1 and its MSHRs, the memory system's responses, and the
//! lanes performed line by line.

use super::*;

impl Sm {
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
        if self.ooo || self.units || self.zorua.is_some() {
            self.wake_at = self.wake_at.min(now);
        }
        // (otherwise the SM is stepped now only for what the response changes: an instruction
        // that completes (`Sm::complete`: its scheduler looks again, its block may end), a
        // scheduler a freed MSHR wakes; a load's writeback is an event at its own time)
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
                self.warps.mshr_freed();
                for k in 0..self.scheds.len() {
                    // A freed MSHR lets a refused load issue once as many as it needs are free.
                    let need = self.scheds[k].mshr_need;
                    if self.ooo || (need != u32::MAX && !self.mshrs_refuse(need)) {
                        let sc = &mut self.scheds[k];
                        sc.wake = sc.wake.min(now);
                        self.wake_at = self.wake_at.min(now);
                    }
                }
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
    pub(super) fn line_done(&mut self, now: u64, id: u32) {
        let r = &mut self.recs[id as usize];
        r.outstanding -= 1;
        if r.outstanding == 0 {
            if r.store {
                self.complete(now, id);
            } else {
                let t = r.ready_at.max(now + 1);
                self.events.push(t, SmEv::Writeback(id));
                self.wake_at = self.wake_at.min(t);
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
    pub(super) fn perform_access(&mut self, id: u32, line: u32, gmem: &mut GlobalMem) -> Result<(), SmFault> {
        let r = &mut self.recs[id as usize];
        r.unperformed -= 1;
        let lanes = r.lanes_on(line);
        self.perform(id, lanes, gmem)
    }

    /// The lanes' addresses of the memory instruction `d` of the warp in `slot`: from its
    /// registers, or for a replay under the operand log from the log.
    pub(super) fn lane_addresses(&self, slot: u32, d: &Decoded, addr: mpgpu_spec::isa::Addr) -> [u32; WARP_SIZE] {
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
    pub(super) fn plan_memory(&self, slot: u32, d: &Decoded, plan: &mut MemPlan) -> Result<(), u32> {
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

    /// Times a load, store or atomic on the load/store unit: operand read, address generation
    /// and the TLB, then shared memory (serialised by its bank conflicts) or the L1
    /// ([`Sm::l1_traffic`]); an access no lane makes takes one cycle. Returns the writeback
    /// cycle of a fixed-latency result.
    pub(super) fn memory_timing(&mut self, now: u64, rec: Option<u32>, plan: &MemPlan, mem: &mut MemSys) -> Option<u64> {
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
    pub(super) fn late_line(&mut self, now: u64, id: u32, ln: u32, kind: LineKind, gmem: &mut GlobalMem, mem: &mut MemSys) -> Result<(), SmFault> {
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

/// Cycles a shared-memory access takes: the largest number of distinct words any bank must
/// deliver (lanes reading the same word share it); atomics to one word serialise.
pub(super) fn bank_degree(ad: &[u32; WARP_SIZE], mask: u32, banks: u32, atomic: bool) -> u32 {
    if banks > 64 {
        return bank_degree_sorted(ad, mask, banks, atomic);
    }
    // Fast path: each bank asked for one word (lanes reading the same word share it: a
    // broadcast), no atomic to a word two lanes share.
    let (mut seen, mut m) = (0u64, mask);
    let mut first = [0u32; 64];
    let mut clash = false;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let w = ad[l] / 4;
        let bank = (w % banks) as usize;
        let b = 1u64 << bank;
        if seen & b == 0 {
            seen |= b;
            first[bank] = w;
        } else if atomic || first[bank] != w {
            clash = true;
            break;
        }
    }
    if !clash {
        return 1;
    }
    // Each distinct word once (a 64-entry open-addressed table: at most 32 words), counting
    // the words of each bank and the lanes of each word.
    let mut table = [(u32::MAX, 0u8); 64];
    let mut per_bank = [0u8; 64];
    let mut best = 1u32;
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let w = ad[l] / 4;
        let mut h = (w.wrapping_mul(0x9E37_79B9) >> 26) as usize;
        loop {
            let (k, lanes) = &mut table[h];
            if *k == w {
                *lanes += 1;
                if atomic {
                    best = best.max(*lanes as u32);
                }
                break;
            }
            if *k == u32::MAX {
                *k = w;
                *lanes = 1;
                let b = &mut per_bank[(w % banks) as usize];
                *b += 1;
                best = best.max(*b as u32);
                break;
            }
            h = (h + 1) & 63;
        }
    }
    best
}

/// [`bank_degree`] by sorting the lanes' (bank, word) pairs: for more banks than the table
/// counts, and the reference the tests hold the table to.
pub(super) fn bank_degree_sorted(ad: &[u32; WARP_SIZE], mask: u32, banks: u32, atomic: bool) -> u32 {
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
