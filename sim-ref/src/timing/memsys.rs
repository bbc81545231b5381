//! The memory system shared by all SMs: the interconnect, one L2 slice per DRAM channel, and the
//! DRAM channels with bandwidth, latency and queueing.
//!
//! Requests travel as timed events (a heap ordered by cycle, then by issue order, so runs are
//! deterministic):
//! 1. the SM injects a packet (8 B header, plus the data of a write) through its interconnect
//!    port (`icnt_bytes_per_cycle`), which then takes `icnt_latency` cycles;
//! 2. the L2 slice of the line's channel takes one request per cycle and looks it up
//!    (`l2_latency`); a miss, or a dirty victim, occupies the channel for `line / bandwidth`
//!    cycles (queueing behind earlier transfers) and the data come back `dram_latency` later;
//!    requests to a line already on its way from DRAM wait for that transfer;
//! 3. the response (header plus the line, for reads and atomics) crosses the interconnect back
//!    through the SM's ejection port.
//! Writes are write-allocate without fetch in the L2 (write-back, so a dirty line costs DRAM
//! bandwidth when it is evicted).
//!
//! The L2 slice is where requests are **performed**: the slice takes them one at a time, in
//! arrival order, and reports each in [`MemSys::performed`] in the cycle it reaches the slice,
//! so that the SM reads a load's data, writes a store's or does an atomic's read-modify-write
//! then, in the order the slice sees them. Every request gets a response: a read its line, an
//! atomic its old values, a write an acknowledgement (a header only).

use super::cache::TagArray;
use crate::config::GpuConfig;
use super::wheel::Wheel;
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReqKind {
    Read,
    Write,
    Atomic,
    /// Context-save traffic: streamed to DRAM through the slice without allocating in the L2
    /// (a context is written once and read back once, later); acknowledged when its transfer
    /// into the channel ends.
    StreamWrite,
    /// Context-restore traffic: streamed from DRAM, the line returned after the DRAM latency.
    StreamRead,
}

/// One request from an SM for one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MemReq {
    pub sm: u32,
    pub line: u32,
    pub kind: ReqKind,
    /// Bytes of data carried (writes) or wanted.
    pub bytes: u32,
    /// The SM's token for the response.
    pub tag: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The request reaches its L2 slice.
    AtL2(MemReq),
    /// The response reaches the SM's ejection port (which serves responses in arrival order);
    /// `bytes` of data follow its header.
    Eject { sm: u32, tag: u32, bytes: u32 },
    /// The response reaches the SM.
    Response { sm: u32, tag: u32 },
}

/// Counters of the memory system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemStats {
    pub requests: u64,
    pub l2_hits: u64,
    /// Hits on a line still on its way from DRAM (they wait for it).
    pub l2_pending_hits: u64,
    pub l2_misses: u64,
    pub dram_reads: u64,
    pub dram_writebacks: u64,
    pub dram_bytes: u64,
    /// Lines of context-switch traffic (saves and restores) streamed to or from DRAM.
    pub context_lines: u64,
}

pub struct MemSys {
    line: u32,
    channels: u32,
    icnt_latency: u64,
    icnt_bytes: u32,
    l2_latency: u64,
    dram_latency: f64,
    /// Cycles one line occupies a channel.
    line_cycles: f64,
    l2: Vec<TagArray>,
    /// Lines on their way from DRAM into each slice, with the cycle they arrive.
    l2_pending: Vec<HashMap<u32, u64>>,
    slice_free: Vec<u64>,
    chan_free: Vec<f64>,
    inject_free: Vec<u64>,
    eject_free: Vec<u64>,
    events: Wheel<Ev>,
    due: Vec<(u64, Ev)>,
    pub stats: MemStats,
    /// Responses due this cycle, for the GPU to hand to the SMs: (sm, tag).
    pub ready: Vec<(u32, u32)>,
    /// Requests performed at their L2 slice this cycle, in the slices' order: (sm, tag, line).
    pub performed: Vec<(u32, u32, u32)>,
    /// Address translation beyond the SMs' L1 TLBs: the L2 TLB, the walkers, the page tables
    /// and demand paging.
    pub mmu: super::mmu::Mmu,
}

impl MemSys {
    pub fn new(cfg: &GpuConfig) -> MemSys {
        let m = &cfg.memory;
        let line = cfg.sm[0].l1_line;
        let n = m.channels as usize;
        let sms = cfg.num_sms() as usize;
        let per_chan = cfg.dram_bytes_per_cycle() / m.channels as f64;
        MemSys {
            line,
            channels: m.channels,
            icnt_latency: m.icnt_latency as u64,
            icnt_bytes: m.icnt_bytes_per_cycle,
            l2_latency: m.l2_latency as u64,
            dram_latency: m.dram_latency as f64,
            line_cycles: line as f64 / per_chan,
            l2: (0..n).map(|_| TagArray::new(m.l2_bytes_per_channel, m.l2_assoc, line)).collect(),
            l2_pending: vec![HashMap::default(); n],
            slice_free: vec![0; n],
            chan_free: vec![0.0; n],
            inject_free: vec![0; sms],
            eject_free: vec![0; sms],
            events: Wheel::default(),
            due: Vec::new(),
            stats: MemStats::default(),
            ready: Vec::new(),
            performed: Vec::new(),
            mmu: super::mmu::Mmu::new(cfg),
        }
    }

    fn push(&mut self, t: u64, e: Ev) {
        self.events.push(t, e);
    }

    fn flits(&self, bytes: u32) -> u64 {
        bytes.div_ceil(self.icnt_bytes).max(1) as u64
    }

    /// The channel (and L2 slice) a line belongs to.
    pub fn channel_of(&self, line: u32) -> usize {
        ((line ^ (line >> 5) ^ (line >> 11)) % self.channels) as usize
    }

    /// Sends a request at cycle `now`.
    pub fn send(&mut self, now: u64, r: MemReq) {
        self.stats.requests += 1;
        let size = 8 + if matches!(r.kind, ReqKind::Read | ReqKind::StreamRead) { 0 } else { r.bytes };
        let p = r.sm as usize;
        let start = now.max(self.inject_free[p]);
        self.inject_free[p] = start + self.flits(size);
        let at = start + self.flits(size) + self.icnt_latency;
        self.push(at, Ev::AtL2(r));
    }

    /// The cycle of the next event, if any.
    pub fn next_event(&self) -> Option<u64> {
        self.events.next_time()
    }

    /// Whether requests are still in flight.
    pub fn busy(&self) -> bool {
        !self.events.is_empty()
    }

    /// Processes every event due at or before `now`; responses go to `self.ready`, requests
    /// performed to `self.performed`.
    pub fn tick(&mut self, now: u64) {
        // Events a handler schedules for this same cycle are handled in this call too.
        loop {
            let mut due = std::mem::take(&mut self.due);
            self.events.drain_until(now, |t, e| due.push((t, e)));
            if due.is_empty() {
                self.due = due;
                return;
            }
            for &(t, ev) in &due {
                match ev {
                    Ev::Response { sm, tag } => self.ready.push((sm, tag)),
                    Ev::Eject { sm, tag, bytes } => {
                        let p = sm as usize;
                        let flits = self.flits(8 + bytes);
                        let start = t.max(self.eject_free[p]);
                        self.eject_free[p] = start + flits;
                        self.push(start + flits, Ev::Response { sm, tag });
                    }
                    Ev::AtL2(r) => self.at_l2(t, r),
                }
            }
            due.clear();
            self.due = due;
        }
    }

    fn dram_transfer(&mut self, c: usize, earliest: f64) -> f64 {
        let start = earliest.max(self.chan_free[c]);
        self.chan_free[c] = start + self.line_cycles;
        self.stats.dram_bytes += self.line as u64;
        start + self.line_cycles
    }

    fn at_l2(&mut self, t: u64, r: MemReq) {
        if matches!(r.kind, ReqKind::StreamWrite | ReqKind::StreamRead) {
            return self.stream(t, r);
        }
        self.performed.push((r.sm, r.tag, r.line));
        let c = self.channel_of(r.line);
        let t0 = t.max(self.slice_free[c]);
        self.slice_free[c] = t0 + 1;
        let write = r.kind != ReqKind::Read;
        let looked_up = t0 + self.l2_latency;
        let ready = if self.l2[c].access(r.line, write) {
            match self.l2_pending[c].get(&r.line) {
                Some(&arrive) if arrive > looked_up => {
                    self.stats.l2_pending_hits += 1;
                    arrive
                }
                _ => {
                    self.stats.l2_hits += 1;
                    looked_up
                }
            }
        } else {
            self.stats.l2_misses += 1;
            let fetch = r.kind != ReqKind::Write || r.bytes < self.line;
            let arrive = if fetch {
                // Only the line's data comes back; a full-line write needs no fetch.
                self.stats.dram_reads += 1;
                let done = self.dram_transfer(c, looked_up as f64);
                (done + self.dram_latency).ceil() as u64
            } else {
                looked_up
            };
            if let Some(ev) = self.l2[c].fill(r.line, write) {
                if ev.dirty {
                    self.stats.dram_writebacks += 1;
                    self.dram_transfer(c, looked_up as f64);
                }
                self.l2_pending[c].remove(&ev.line);
            }
            if arrive > looked_up {
                self.l2_pending[c].insert(r.line, arrive);
            }
            arrive
        };
        // A write is acknowledged once the slice has it; reads and atomics answer with data.
        let (at, bytes) = if r.kind == ReqKind::Write { (looked_up, 0) } else { (ready, self.line) };
        self.push(at + self.icnt_latency, Ev::Eject { sm: r.sm, tag: r.tag, bytes });
    }

    /// A streamed line: the slice passes it to its channel (one request per cycle, no lookup),
    /// where it queues for `line / bandwidth` cycles of the channel like any other transfer;
    /// a write is acknowledged when its transfer ends, a read returns `dram_latency` later.
    fn stream(&mut self, t: u64, r: MemReq) {
        let c = self.channel_of(r.line);
        let t0 = t.max(self.slice_free[c]);
        self.slice_free[c] = t0 + 1;
        // (a copy in the L2 could only be stale)
        self.l2[c].invalidate(r.line);
        self.stats.context_lines += 1;
        let done = self.dram_transfer(c, t0 as f64);
        let (at, bytes) = if r.kind == ReqKind::StreamWrite { (done.ceil() as u64, 0) } else { ((done + self.dram_latency).ceil() as u64, self.line) };
        self.push(at + self.icnt_latency, Ev::Eject { sm: r.sm, tag: r.tag, bytes });
    }

    /// Peak DRAM bytes per cycle over all channels.
    pub fn peak_bytes_per_cycle(&self) -> f64 {
        self.line as f64 / self.line_cycles * self.channels as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(m: &mut MemSys, from: u64, to: u64) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        for t in from..to {
            m.tick(t);
            for (_, tag) in m.ready.drain(..) {
                out.push((tag, t));
            }
            m.performed.clear();
        }
        out
    }

    #[test]
    fn an_l2_hit_is_not_held_behind_a_dram_miss() {
        let cfg = GpuConfig::preset("gtx480").unwrap();
        let mut m = MemSys::new(&cfg);
        let rd = |line, tag| MemReq { sm: 0, line, kind: ReqKind::Read, bytes: 128, tag };
        m.send(0, rd(1000, 1)); // warms line 1000 into the L2
        serve(&mut m, 0, 2000);
        m.send(2000, rd(1000, 2));
        let alone = serve(&mut m, 2000, 4000)[0].1 - 2000;
        m.send(4000, rd(777_777, 3)); // a miss
        m.send(4001, rd(1000, 4)); // a hit right behind it
        let got = serve(&mut m, 4000, 8000);
        let hit = got.iter().find(|g| g.0 == 4).unwrap().1 - 4001;
        let miss = got.iter().find(|g| g.0 == 3).unwrap().1 - 4000;
        assert!(hit <= alone + 2, "hit took {hit} cycles behind a miss, {alone} alone");
        assert!(miss > hit + 100, "the miss ({miss}) should take far longer than the hit ({hit})");
    }

    #[test]
    fn dram_never_exceeds_its_bandwidth() {
        let cfg = GpuConfig::preset("gtx480").unwrap();
        let mut m = MemSys::new(&cfg);
        // Every SM asks for distinct lines every cycle for a while.
        let mut tag = 0;
        for t in 0..2000u64 {
            for sm in 0..16 {
                tag += 1;
                m.send(t, MemReq { sm, line: tag * 7, kind: ReqKind::Read, bytes: 128, tag });
            }
            m.tick(t);
            m.ready.clear();
            m.performed.clear();
        }
        let mut t = 2000;
        while m.busy() {
            m.tick(t);
            m.ready.clear();
            m.performed.clear();
            t += 1;
        }
        let rate = m.stats.dram_bytes as f64 / t as f64;
        assert!(rate <= m.peak_bytes_per_cycle() * 1.0001, "{rate} B/cycle above the peak {}", m.peak_bytes_per_cycle());
        assert!(rate >= 0.9 * m.peak_bytes_per_cycle(), "{rate} B/cycle: the channels were not kept busy");
    }
}
