//! A set-associative tag array with LRU replacement (data lives in the functional memory).

#[derive(Clone, Debug)]
pub struct TagArray {
    sets: u32,
    ways: u32,
    line_shift: u32,
    /// `tags[set * ways + way]`: line address + 1 (0 = invalid).
    tags: Vec<u32>,
    /// Last-use stamps for LRU.
    stamp: Vec<u64>,
    dirty: Vec<bool>,
    clock: u64,
}

/// What a fill evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    pub line: u32,
    pub dirty: bool,
}

impl TagArray {
    /// `bytes / (ways * line)` sets, which must be a power of two.
    pub fn new(bytes: u32, ways: u32, line: u32) -> TagArray {
        let sets = (bytes / (ways * line)).max(1);
        assert!(sets.is_power_of_two(), "cache sets must be a power of two (the configuration check ensures it)");
        let n = (sets * ways) as usize;
        TagArray { sets, ways, line_shift: line.trailing_zeros(), tags: vec![0; n], stamp: vec![0; n], dirty: vec![false; n], clock: 0 }
    }

    /// Line address (byte address / line size) of a byte address.
    #[inline]
    pub fn line_of(&self, addr: u32) -> u32 {
        addr >> self.line_shift
    }

    #[inline]
    fn set_range(&self, line: u32) -> std::ops::Range<usize> {
        // Hash the set index a little so that power-of-two strides spread over the sets.
        let set = (line ^ (line >> 7) ^ (line >> 13)) & (self.sets - 1);
        let b = (set * self.ways) as usize;
        b..b + self.ways as usize
    }

    /// Looks a line up; a hit refreshes its LRU stamp (and marks it dirty if `write`).
    pub fn access(&mut self, line: u32, write: bool) -> bool {
        self.clock += 1;
        for i in self.set_range(line) {
            if self.tags[i] == line + 1 {
                self.stamp[i] = self.clock;
                self.dirty[i] |= write;
                return true;
            }
        }
        false
    }

    /// Whether the line is present, without touching LRU state.
    pub fn probe(&self, line: u32) -> bool {
        self.set_range(line).any(|i| self.tags[i] == line + 1)
    }

    /// Inserts a line (which must be absent), evicting the least recently used way.
    pub fn fill(&mut self, line: u32, dirty: bool) -> Option<Evicted> {
        self.clock += 1;
        let r = self.set_range(line);
        let victim = r.clone().min_by_key(|&i| if self.tags[i] == 0 { 0 } else { self.stamp[i] }).unwrap();
        let ev = (self.tags[victim] != 0).then(|| Evicted { line: self.tags[victim] - 1, dirty: self.dirty[victim] });
        self.tags[victim] = line + 1;
        self.stamp[victim] = self.clock;
        self.dirty[victim] = dirty;
        ev
    }

    /// Drops a line if present (write-evict).
    pub fn invalidate(&mut self, line: u32) {
        for i in self.set_range(line) {
            if self.tags[i] == line + 1 {
                self.tags[i] = 0;
                self.dirty[i] = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_oldest_way() {
        // One set of 2 ways: lines 0 and N map to the same set when sets == 1.
        let mut t = TagArray::new(256, 2, 128);
        assert!(!t.access(1, false));
        t.fill(1, false);
        t.fill(2, true);
        assert!(t.access(1, false)); // 1 is now newer than 2
        let ev = t.fill(3, false).unwrap();
        assert_eq!(ev, Evicted { line: 2, dirty: true });
        assert!(t.probe(1) && t.probe(3) && !t.probe(2));
        t.invalidate(1);
        assert!(!t.probe(1));
    }
}
