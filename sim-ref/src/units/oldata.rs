//! The operand log's data array as a unit (interface and timing `mpgpu_spec::units::oldata`,
//! RTL `rtl/src/oldata.rs`): one entry written and one read per clocked cycle, the read
//! registered. The SM's write queue and read scheduling around it are `docs/faults.md` O11.

use mpgpu_spec::units::oldata::{In, Out, State, LANES, MAX_ENTRIES};
use mpgpu_spec::Unit;

/// One SM's operand-log data array.
#[derive(Clone, Debug)]
pub struct Oldata {
    /// Entries (the configuration's log size).
    entries: usize,
    /// `words[k * entries + e]`: lane k's operand in entry e (the state's layout, so that the
    /// co-simulation's comparison costs a copy).
    words: Vec<u32>,
    rdata: [u32; LANES],
}

impl Oldata {
    /// The array of a log of `entries` entries (1..=64) at reset: every word zero (the
    /// simulations' RAMs start so).
    pub fn new(entries: usize) -> Oldata {
        assert!((1..=MAX_ENTRIES).contains(&entries), "an operand-log data array of {entries} entries (1..={MAX_ENTRIES})");
        Oldata { entries, words: vec![0; LANES * entries], rdata: [0; LANES] }
    }

    /// The entries it holds.
    pub fn entries(&self) -> usize {
        self.entries
    }

    pub fn state(&self) -> State {
        State { words: self.words.clone() }
    }

    /// Entry `e` as it stands (zero past the last entry, as the RTL's RAMs read there).
    pub fn entry(&self, e: usize) -> [u32; LANES] {
        if e >= self.entries {
            return [0; LANES];
        }
        std::array::from_fn(|k| self.words[k * self.entries + e])
    }
}

impl Unit for Oldata {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Oldata::new(self.entries);
    }

    fn outputs(&self, _: &In) -> Out {
        Out { rdata: self.rdata }
    }

    fn clock(&mut self, i: &In) {
        // (addresses are INDEX_BITS wide, as the RTL's ports)
        let (raddr, waddr) = (i.raddr as usize % MAX_ENTRIES, i.waddr as usize % MAX_ENTRIES);
        self.rdata = self.entry(if i.re { raddr } else { waddr });
        if i.we && waddr < self.entries {
            for (k, &x) in i.wdata.iter().enumerate() {
                self.words[k * self.entries + waddr] = x;
            }
        }
    }
}

impl crate::slots::Hosted for Oldata {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_gives_the_word_before_the_edges_write_and_the_new_one_after() {
        let mut u = Oldata::new(32);
        let w = In { we: true, waddr: 5, wdata: std::array::from_fn(|k| k as u32 + 1), ..In::default() };
        u.clock(&w);
        // (re low: the port looked at the written entry, before the write)
        assert_eq!(u.outputs(&In::default()).rdata, [0; LANES]);
        u.clock(&In { re: true, raddr: 5, ..In::default() });
        assert_eq!(u.outputs(&In::default()).rdata, w.wdata);
        assert_eq!(u.state().words[3 * 32 + 5], 4);
        // (past the last entry: read as zero, not written)
        u.clock(&In { we: true, waddr: 40, wdata: [7; LANES], re: true, raddr: 40 });
        assert_eq!(u.outputs(&In::default()).rdata, [0; LANES]);
        assert_eq!(u.state().words.len(), LANES * 32);
    }
}
