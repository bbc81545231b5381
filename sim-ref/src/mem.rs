//! Global memory: a sparse 32-bit address space made of explicit 4 KB pages.
//!
//! Pages are mapped explicitly (by the host's allocations); an access to an unmapped page is a
//! fault that the executor reports, never a panic. Page faults proper (demand paging, replay)
//! build on [`GlobalMem::is_mapped`] and [`GlobalMem::map_page`] later.

/// Bytes per page.
pub const PAGE_BYTES: u32 = 4096;
pub const PAGE_WORDS: usize = (PAGE_BYTES / 4) as usize;
pub const NUM_PAGES: usize = 1 << 20; // 4 GB / 4 KB
const UNMAPPED: u32 = u32::MAX;
/// First address the host allocator hands out (page 0 stays unmapped to catch null pointers).
pub const HEAP_BASE: u32 = 0x0001_0000;

/// Why a global access failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemFault {
    Unmapped(u32),
    Misaligned(u32),
}

#[derive(Clone)]
pub struct GlobalMem {
    /// Page number -> index into `pages`, or UNMAPPED.
    index: Vec<u32>,
    pages: Vec<Box<[u32; PAGE_WORDS]>>,
    next_alloc: u64,
}

impl Default for GlobalMem {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for GlobalMem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GlobalMem {{ {} pages mapped }}", self.pages.len())
    }
}

impl PartialEq for GlobalMem {
    fn eq(&self, other: &Self) -> bool {
        self.mapped_pages().eq(other.mapped_pages())
            && self.mapped_pages().all(|p| self.page(p) == other.page(p))
    }
}

impl GlobalMem {
    pub fn new() -> Self {
        GlobalMem { index: vec![UNMAPPED; NUM_PAGES], pages: Vec::new(), next_alloc: HEAP_BASE as u64 }
    }

    /// Maps the page holding `page_no` (zero-filled) if it is not mapped yet.
    pub fn map_page(&mut self, page_no: u32) {
        let p = page_no as usize;
        if self.index[p] == UNMAPPED {
            self.index[p] = self.pages.len() as u32;
            self.pages.push(Box::new([0; PAGE_WORDS]));
        }
    }

    pub fn is_mapped(&self, addr: u32) -> bool {
        self.index[(addr / PAGE_BYTES) as usize] != UNMAPPED
    }

    /// Page numbers that are mapped, in increasing order.
    pub fn mapped_pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.index.iter().enumerate().filter(|(_, i)| **i != UNMAPPED).map(|(p, _)| p as u32)
    }

    pub fn num_mapped_pages(&self) -> usize {
        self.pages.len()
    }

    /// The address the next allocation starts at (the pages below it that are mapped were
    /// allocated before).
    pub fn alloc_mark(&self) -> u64 {
        self.next_alloc
    }

    /// Whether a mapped page holds only zeros (as allocated, never written).
    pub fn page_is_zero(&self, page_no: u32) -> bool {
        self.page(page_no).is_none_or(|p| p.iter().all(|&w| w == 0))
    }

    fn page(&self, page_no: u32) -> Option<&[u32; PAGE_WORDS]> {
        let i = self.index[page_no as usize];
        (i != UNMAPPED).then(|| &*self.pages[i as usize])
    }

    /// Allocates `bytes` (rounded up to whole pages), maps the pages and returns the base address.
    /// Allocations are separated by one unmapped guard page so that overruns fault.
    pub fn alloc(&mut self, bytes: u32) -> u32 {
        let pages = bytes.max(1).div_ceil(PAGE_BYTES) as u64;
        let base = self.next_alloc;
        assert!(
            base + (pages + 1) * PAGE_BYTES as u64 <= u32::MAX as u64,
            "global memory exhausted: the 4 GB address space is full"
        );
        for p in 0..pages {
            self.map_page((base / PAGE_BYTES as u64 + p) as u32);
        }
        self.next_alloc = base + (pages + 1) * PAGE_BYTES as u64;
        base as u32
    }

    #[inline]
    pub fn read(&self, addr: u32) -> Result<u32, MemFault> {
        if addr & 3 != 0 {
            return Err(MemFault::Misaligned(addr));
        }
        Ok(self.page_words(addr)?[Self::word_in_page(addr)])
    }

    /// The words of the page holding `addr` (aligned): [`GlobalMem::read`] for several words
    /// of one page, the page found once ([`GlobalMem::word_in_page`] indexes it).
    #[inline]
    pub fn page_words(&self, addr: u32) -> Result<&[u32; PAGE_WORDS], MemFault> {
        debug_assert!(addr & 3 == 0);
        self.page(addr / PAGE_BYTES).ok_or(MemFault::Unmapped(addr))
    }

    /// The index in its page ([`GlobalMem::page_words`]) of the word at `addr`.
    #[inline]
    pub fn word_in_page(addr: u32) -> usize {
        ((addr % PAGE_BYTES) / 4) as usize
    }

    #[inline]
    pub fn word_mut(&mut self, addr: u32) -> Result<&mut u32, MemFault> {
        if addr & 3 != 0 {
            return Err(MemFault::Misaligned(addr));
        }
        let i = self.index[(addr / PAGE_BYTES) as usize];
        if i == UNMAPPED {
            return Err(MemFault::Unmapped(addr));
        }
        Ok(&mut self.pages[i as usize][((addr % PAGE_BYTES) / 4) as usize])
    }

    #[inline]
    pub fn write(&mut self, addr: u32, v: u32) -> Result<(), MemFault> {
        *self.word_mut(addr)? = v;
        Ok(())
    }

    // Host-side helpers. They panic on unmapped addresses: the host only touches its own
    // allocations.

    pub fn write_u32s(&mut self, addr: u32, data: &[u32]) {
        for (i, v) in data.iter().enumerate() {
            self.write(addr + 4 * i as u32, *v).expect("host write to unmapped memory");
        }
    }

    pub fn write_f32s(&mut self, addr: u32, data: &[f32]) {
        for (i, v) in data.iter().enumerate() {
            self.write(addr + 4 * i as u32, v.to_bits()).expect("host write to unmapped memory");
        }
    }

    pub fn read_u32s(&self, addr: u32, n: usize) -> Vec<u32> {
        (0..n).map(|i| self.read(addr + 4 * i as u32).expect("host read of unmapped memory")).collect()
    }

    pub fn read_f32s(&self, addr: u32, n: usize) -> Vec<f32> {
        self.read_u32s(addr, n).into_iter().map(f32::from_bits).collect()
    }

    /// Allocates and fills a buffer.
    pub fn alloc_u32s(&mut self, data: &[u32]) -> u32 {
        let a = self.alloc(4 * data.len() as u32);
        self.write_u32s(a, data);
        a
    }

    pub fn alloc_f32s(&mut self, data: &[f32]) -> u32 {
        let a = self.alloc(4 * data.len() as u32);
        self.write_f32s(a, data);
        a
    }
}
