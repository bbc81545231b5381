//! Virtual memory: per-process page tables, the L1 TLB of each SM, the L2 TLB shared by all
//! SMs with its MSHRs, the page-table walkers, and demand paging through a serialized host
//! fault handler (Tanasić's thesis, §2.1 Fig. 2.4, §2.3, §6.5.1, Table 6.1; the decisions are
//! in `docs/faults.md` and `docs/timing.md`, "Virtual memory").
//!
//! Address spaces: the model keeps one 32-bit address space in which every process's
//! allocations are disjoint, and a process's page table maps exactly the pages it allocated
//! (virtual page = physical page). A translation of a page the process does not own is an
//! isolation error, never data. TLB entries are tagged with the process (an ASID), so one
//! process never hits another's entry.
//!
//! Timing: each coalesced line of a global access is translated on its own in the cycle its
//! address is generated. Translations are timed when they are asked for (like the L1's tag
//! lookups): the L1 TLB answers after `l1_tlb_latency`; a miss asks the L2 TLB, which answers
//! `l2_tlb_latency` later; an L2 miss takes an L2 MSHR (held until its translation is done)
//! and a walker (`page_walk_latency`); misses to a page whose translation is on its way join
//! it, at either level. A walk that finds the page in host memory is a page fault: the
//! page's migration unit (a page or a chunk) joins the host handler's queue, which migrates
//! one unit at a time, and the request waits in the MMU (stall-on-fault) until the unit
//! arrives, then is retried at the L2 TLB.

use crate::config::GpuConfig;
use crate::mem::{GlobalMem, NUM_PAGES, PAGE_BYTES};
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;

/// A set-associative TLB with LRU replacement whose entries carry their translation's timing:
/// an entry is filled when its translation is asked for, ready when it completes; a request
/// for it before then joins it (the MSHR merge).
#[derive(Clone, Debug)]
pub struct Tlb {
    sets: u32,
    ways: u32,
    /// Key + 1 (0: invalid), last use, and the translation, per way.
    keys: Vec<u32>,
    stamp: Vec<u64>,
    tr: Vec<Translation>,
    clock: u64,
}

/// What a TLB lookup found.
enum Found {
    Hit,
    Joined(Translation),
    Miss,
}

impl Tlb {
    pub fn new(entries: u32, ways: u32) -> Tlb {
        let sets = (entries / ways).max(1);
        assert!(sets.is_power_of_two(), "TLB sets must be a power of two (the configuration check ensures it)");
        let n = (sets * ways) as usize;
        Tlb { sets, ways, keys: vec![0; n], stamp: vec![0; n], tr: vec![Translation { ready: 0, fault: None }; n], clock: 0 }
    }

    #[inline]
    fn set(&self, key: u32) -> std::ops::Range<usize> {
        let s = (key ^ (key >> 7) ^ (key >> 13)) & (self.sets - 1);
        let b = (s * self.ways) as usize;
        b..b + self.ways as usize
    }

    /// Looks `key` up at cycle `t` (a present entry is refreshed).
    #[inline]
    fn lookup(&mut self, key: u32, t: u64) -> Found {
        self.clock += 1;
        for i in self.set(key) {
            if self.keys[i] == key + 1 {
                self.stamp[i] = self.clock;
                let tr = self.tr[i];
                return if tr.ready > t { Found::Joined(joined(tr, t)) } else { Found::Hit };
            }
        }
        Found::Miss
    }

    /// Inserts `key` (absent) with its translation, evicting the least recently used way.
    fn fill(&mut self, key: u32, tr: Translation) {
        self.clock += 1;
        let r = self.set(key);
        let v = r.clone().min_by_key(|&i| if self.keys[i] == 0 { 0 } else { self.stamp[i] }).unwrap();
        self.keys[v] = key + 1;
        self.stamp[v] = self.clock;
        self.tr[v] = tr;
    }
}
use std::collections::BinaryHeap;

/// Page owner of a page no process allocated (anyone may use it: memory set up outside any
/// process, by a test harness).
pub const NO_OWNER: u16 = u16::MAX;
/// Owner of the GPU's own memory (context-save areas): no process may touch it.
pub const SYSTEM: u16 = u16::MAX - 1;
/// A page still in host memory, with data (`HOST_DATA`) or never written (`HOST_ZERO`).
const HOST_DATA: u64 = u64::MAX;
const HOST_ZERO: u64 = u64::MAX - 1;

/// A translation's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The cycle it completes (the line may access the L1 from then on).
    pub ready: u64,
    /// It faulted: the cycle the walk found the page missing, and the cycle the request was
    /// retried after the page arrived.
    pub fault: Option<(u64, u64)>,
}

/// A translation of a page another process owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotOwned {
    pub owner: u16,
}

/// Counters of the MMU (translations count one per coalesced line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MmuStats {
    pub translations: u64,
    pub l1_tlb_hits: u64,
    /// L1 misses that joined a translation already on its way.
    pub l1_tlb_joins: u64,
    pub l1_tlb_misses: u64,
    pub l2_tlb_hits: u64,
    pub l2_tlb_joins: u64,
    pub l2_tlb_misses: u64,
    pub walks: u64,
    /// Cycles walks waited for a walker or an L2 MSHR.
    pub walk_queue_cycles: u64,
    /// Walks that found their page in host memory.
    pub faults: u64,
    /// Migration units the host handler moved, those that carried data, and their pages.
    pub migrations: u64,
    pub data_migrations: u64,
    pub migrated_pages: u64,
    /// Sum over migrations of (arrival - first fault), and the largest.
    pub fault_latency_cycles: u64,
    pub max_fault_latency: u64,
    /// Cycles the handler was busy.
    pub handler_busy_cycles: u64,
    /// Local fault handling: units with no data allocated by a handler on the GPU.
    pub local_allocations: u64,
}

/// One SM's L1 TLB.
pub struct L1Tlb {
    tlb: Tlb,
    latency: u64,
}

impl L1Tlb {
    pub fn new(entries: u32, ways: u32, latency: u32) -> L1Tlb {
        L1Tlb { tlb: Tlb::new(entries, ways), latency: latency as u64 }
    }
}

/// The shared part: L2 TLB, walkers, page tables, host handler.
pub struct Mmu {
    l2: Tlb,
    l2_latency: u64,
    /// Release cycles of the L2 MSHRs in use, and of the busy walkers.
    mshrs: BinaryHeap<Reverse<u64>>,
    n_mshrs: usize,
    walkers: BinaryHeap<Reverse<u64>>,
    n_walkers: usize,
    walk_latency: u64,
    /// The process owning each page.
    owner: Vec<u16>,
    /// Pages not resident from the start: `HOST_DATA`/`HOST_ZERO` while in host memory, then
    /// the cycle they arrive(d).
    host: HashMap<u32, u64>,
    /// Demand paging: fault latency with and without data, in cycles, and pages per
    /// migration unit (`None`: paging off).
    paging: Option<(u64, u64, u32)>,
    /// The handler is free from this cycle.
    handler_free: u64,
    /// Local fault handling: the GPU handler's latency in cycles.
    local: Option<u64>,
    pub stats: MmuStats,
}

/// The TLB key of a page of a process.
#[inline]
pub fn tlb_key(asid: u16, page: u32) -> u32 {
    ((asid as u32) << 20) | page
}

impl Mmu {
    pub fn new(cfg: &GpuConfig) -> Mmu {
        let m = &cfg.memory;
        let paging = cfg.paging.latencies_us().map(|(t, a)| {
            let cyc = |us: f64| (us * cfg.core_clock_mhz).round() as u64;
            (cyc(t), cyc(a), cfg.paging.migration_bytes / PAGE_BYTES)
        });
        Mmu {
            l2: Tlb::new(m.l2_tlb_entries, m.l2_tlb_assoc),
            l2_latency: m.l2_tlb_latency as u64,
            mshrs: BinaryHeap::new(),
            n_mshrs: m.l2_tlb_mshrs as usize,
            walkers: BinaryHeap::new(),
            n_walkers: m.page_walkers as usize,
            walk_latency: m.page_walk_latency as u64,
            owner: vec![NO_OWNER; NUM_PAGES],
            host: HashMap::default(),
            paging,
            local: (cfg.paging.local && cfg.paging.link != crate::config::PagingLink::Off).then(|| (cfg.paging.local_us * cfg.core_clock_mhz).round() as u64),
            handler_free: 0,
            stats: MmuStats::default(),
        }
    }

    pub fn paging(&self) -> bool {
        self.paging.is_some()
    }

    /// Gives process `asid` the pages mapped in `[from, to)` (its allocations). With demand
    /// paging they start in host memory (a page holding only zeros needs no transfer).
    pub fn adopt(&mut self, asid: u16, from: u64, to: u64, gmem: &GlobalMem) {
        let (a, b) = ((from / PAGE_BYTES as u64) as u32, to.div_ceil(PAGE_BYTES as u64).min(NUM_PAGES as u64) as u32);
        for p in a..b {
            if !gmem.is_mapped(p * PAGE_BYTES) || self.owner[p as usize] != NO_OWNER {
                continue;
            }
            self.owner[p as usize] = asid;
            if self.paging.is_some() {
                self.host.insert(p, if gmem.page_is_zero(p) { HOST_ZERO } else { HOST_DATA });
            }
        }
    }

    /// Marks the pages mapped in `[from, to)` as the GPU's own (context-save areas): resident,
    /// and no process's.
    pub fn adopt_system(&mut self, from: u64, to: u64, gmem: &GlobalMem) {
        let (a, b) = ((from / PAGE_BYTES as u64) as u32, to.div_ceil(PAGE_BYTES as u64).min(NUM_PAGES as u64) as u32);
        for p in a..b {
            if gmem.is_mapped(p * PAGE_BYTES) && self.owner[p as usize] == NO_OWNER {
                self.owner[p as usize] = SYSTEM;
            }
        }
    }

    /// The process owning a page.
    pub fn owner(&self, page: u32) -> u16 {
        self.owner[page as usize]
    }

    /// Translates one line's page for process `asid`, asked at cycle `t` by SM L1 TLB `l1`.
    pub fn translate(&mut self, l1: &mut L1Tlb, asid: u16, page: u32, t: u64) -> Result<Translation, NotOwned> {
        let owner = self.owner[page as usize];
        if owner != asid && owner != NO_OWNER {
            return Err(NotOwned { owner });
        }
        self.stats.translations += 1;
        let key = tlb_key(asid, page);
        match l1.tlb.lookup(key, t) {
            Found::Hit => {
                self.stats.l1_tlb_hits += 1;
                Ok(Translation { ready: t + l1.latency, fault: None })
            }
            Found::Joined(tr) => {
                self.stats.l1_tlb_joins += 1;
                Ok(tr)
            }
            Found::Miss => {
                self.stats.l1_tlb_misses += 1;
                let tr = self.l2_translate(key, page, t + l1.latency);
                l1.tlb.fill(key, tr);
                Ok(tr)
            }
        }
    }

    /// The L2 TLB, asked at cycle `t`.
    fn l2_translate(&mut self, key: u32, page: u32, t: u64) -> Translation {
        let looked = t + self.l2_latency;
        match self.l2.lookup(key, t) {
            Found::Hit => {
                self.stats.l2_tlb_hits += 1;
                return Translation { ready: looked, fault: None };
            }
            Found::Joined(tr) => {
                self.stats.l2_tlb_joins += 1;
                return tr;
            }
            Found::Miss => {}
        }
        self.stats.l2_tlb_misses += 1;
        // An MSHR (held until the translation is done), then a walker.
        let start = take(&mut self.mshrs, self.n_mshrs, looked);
        let walk = take(&mut self.walkers, self.n_walkers, start);
        self.stats.walk_queue_cycles += walk - looked;
        self.stats.walks += 1;
        let walked = walk + self.walk_latency;
        self.walkers.push(Reverse(walked));
        let mut tr = Translation { ready: walked, fault: None };
        if let Some(&at) = self.host.get(&page) {
            let arrives = if at >= HOST_ZERO { self.migrate(page, walked) } else { at };
            if arrives > walked {
                // Stall-on-fault: the request waits for its page, then is retried at the L2 TLB.
                self.stats.faults += 1;
                tr = Translation { ready: arrives + self.l2_latency, fault: Some((walked, arrives + self.l2_latency)) };
            }
        }
        self.mshrs.push(Reverse(tr.ready));
        self.l2.fill(key, tr);
        tr
    }

    /// The host handler migrates `page`'s unit (its pages still in host memory that belong to
    /// the page's owner), after the units queued before it; returns the cycle it arrives.
    fn migrate(&mut self, page: u32, fault_at: u64) -> u64 {
        let (transfer, alloc, unit) = self.paging.expect("pages start in host memory only with paging on");
        let first = page & !(unit - 1);
        let owner = self.owner[page as usize];
        let pages = (first..first + unit).filter(|&p| self.owner[p as usize] == owner && self.host.get(&p).is_some_and(|&a| a >= HOST_ZERO));
        let mut data = false;
        let mut n = 0;
        for p in pages.clone() {
            data |= self.host[&p] == HOST_DATA;
            n += 1;
        }
        let list: Vec<u32> = pages.collect();
        if let (false, Some(lat)) = (data, self.local) {
            // Local handling (§6.4.2): a unit with no data needs no host; the faulting SM's
            // handler allocates it on the GPU (first touch), in parallel with other handlers.
            let end = fault_at + lat;
            for p in list {
                self.host.insert(p, end);
            }
            let s = &mut self.stats;
            s.local_allocations += 1;
            s.migrated_pages += n;
            s.fault_latency_cycles += lat;
            s.max_fault_latency = s.max_fault_latency.max(lat);
            s.migrations += 1;
            return end;
        }
        let start = self.handler_free.max(fault_at);
        let lat = if data { transfer } else { alloc };
        let end = start + lat;
        for p in list {
            self.host.insert(p, end);
        }
        self.handler_free = end;
        let s = &mut self.stats;
        s.migrations += 1;
        s.data_migrations += data as u64;
        s.migrated_pages += n;
        s.handler_busy_cycles += lat;
        s.fault_latency_cycles += end - fault_at;
        s.max_fault_latency = s.max_fault_latency.max(end - fault_at);
        end
    }

    /// Whether anything is still to arrive after cycle `t` (for the watchdog's report).
    pub fn handler_busy_until(&self) -> u64 {
        self.handler_free
    }
}

/// A translation joined at cycle `t`: it completes with the one on its way; a fault it waits
/// for counts for the joiner from when it joined.
fn joined(p: Translation, t: u64) -> Translation {
    Translation { ready: p.ready, fault: p.fault.map(|(f, r)| (f.max(t), r)) }
}

/// Takes one of `n` resources (release cycles in `heap`) at cycle `t` or later; returns the
/// cycle it is taken (the caller pushes its release).
fn take(heap: &mut BinaryHeap<Reverse<u64>>, n: usize, t: u64) -> u64 {
    while heap.peek().is_some_and(|&Reverse(r)| r <= t) {
        heap.pop();
    }
    if heap.len() < n {
        return t;
    }
    let Reverse(r) = heap.pop().unwrap();
    r.max(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PagingLink;

    fn cfg(walkers: u32, link: PagingLink) -> GpuConfig {
        let mut c = GpuConfig::preset("thesis16").unwrap();
        c.memory.page_walkers = walkers;
        c.paging.link = link;
        c
    }

    fn l1() -> L1Tlb {
        L1Tlb::new(32, 8, 1)
    }

    #[test]
    fn hits_misses_joins_and_walker_queueing() {
        let c = cfg(1, PagingLink::Off);
        let mut m = Mmu::new(&c);
        let (mut a, mut b) = (l1(), l1());
        // A miss: L1 (1) + L2 lookup (70) + walk (500).
        let t = m.translate(&mut a, 0, 100, 10).unwrap();
        assert_eq!(t, Translation { ready: 10 + 1 + 70 + 500, fault: None });
        // The same page from another SM while the walk is on its way joins it.
        assert_eq!(m.translate(&mut b, 0, 100, 20).unwrap().ready, t.ready);
        // Another page queues for the only walker.
        let u = m.translate(&mut a, 0, 200, 10).unwrap();
        assert_eq!(u.ready, t.ready + 500);
        // Later, an L1 hit, and an L2 hit from the other SM.
        assert_eq!(m.translate(&mut a, 0, 100, 2000).unwrap().ready, 2001);
        assert_eq!(m.translate(&mut b, 0, 200, 2000).unwrap().ready, 2000 + 1 + 70);
        // Another process's entry is not this process's.
        let v = m.translate(&mut a, 1, 100, 3000).unwrap();
        assert!(v.ready > 3000 + 71, "{v:?}");
        let s = m.stats;
        assert_eq!((s.translations, s.l1_tlb_hits, s.l2_tlb_joins, s.l2_tlb_hits, s.walks), (6, 1, 1, 1, 3));
    }

    #[test]
    fn a_page_of_another_process_is_refused() {
        let c = cfg(64, PagingLink::Off);
        let mut m = Mmu::new(&c);
        let mut g = GlobalMem::new();
        let a = g.alloc(4096);
        m.adopt(3, a as u64, g.alloc_mark(), &g);
        let page = a / PAGE_BYTES;
        assert_eq!(m.translate(&mut l1(), 4, page, 0), Err(NotOwned { owner: 3 }));
        assert!(m.translate(&mut l1(), 3, page, 0).is_ok());
        // The GPU's own memory (context-save areas) is no process's.
        let mark = g.alloc_mark();
        let c = g.alloc(8192);
        m.adopt_system(mark, g.alloc_mark(), &g);
        for asid in [0, 3] {
            assert_eq!(m.translate(&mut l1(), asid, c / PAGE_BYTES + 1, 0), Err(NotOwned { owner: SYSTEM }));
        }
        // (the guard page after it stays unowned: an access there is the executor's unmapped fault)
        assert_eq!(m.owner(c / PAGE_BYTES + 2), NO_OWNER);
    }

    #[test]
    fn faults_migrate_a_unit_at_a_time_through_the_handler() {
        let mut c = cfg(64, PagingLink::Nvlink);
        c.paging.migration_bytes = 8192;
        let mut m = Mmu::new(&c);
        let mut g = GlobalMem::new();
        let a = g.alloc(4 * 4096);
        g.write(a, 1).unwrap(); // the first page has data, the others are zero
        m.adopt(0, a as u64, g.alloc_mark(), &g);
        let p = a / PAGE_BYTES;
        assert_eq!(p % 2, 0, "the test wants the buffer on a 2-page unit boundary");
        let walk = 1 + 70 + 500;
        let f0 = m.translate(&mut l1(), 0, p, 0).unwrap();
        // Unit {p, p+1} has data: 12 µs at 1 GHz, then the retry at the L2 TLB.
        assert_eq!(f0, Translation { ready: walk + 12_000 + 70, fault: Some((walk, walk + 12_000 + 70)) });
        // p+1 is in the same unit: it waits for the same arrival, no new migration.
        let f1 = m.translate(&mut l1(), 0, p + 1, 5).unwrap();
        assert_eq!(f1.ready, f0.ready);
        // Unit {p+2, p+3} is zero: 10 µs, after the first unit (the handler is serialized).
        let f2 = m.translate(&mut l1(), 0, p + 2, 0).unwrap();
        assert_eq!(f2.ready, walk + 12_000 + 10_000 + 70);
        let s = m.stats;
        assert_eq!((s.faults, s.migrations, s.data_migrations, s.migrated_pages), (3, 2, 1, 4));
        // Once in, a page translates without a fault.
        assert_eq!(m.translate(&mut l1(), 0, p + 3, 100_000).unwrap().fault, None);
    }
}
