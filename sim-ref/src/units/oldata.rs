//! The operand log's data array as a unit (interface and timing `mpgpu_spec::units::oldata`,
//! RTL `rtl/src/oldata.rs`): one entry written and one read per clocked cycle, the read
//! registered. The SM's write queue and read scheduling around it are `docs/faults.md` O11.

use mpgpu_spec::units::oldata::{In, Out, State, LANES, MAX_ENTRIES};
use mpgpu_spec::Unit;

/// One SM's operand-log data array.
#[derive(Clone, Debug)]
pub struct Oldata {
    /// `words[k * MAX_ENTRIES + e]`: lane k's operand in entry e (the state's layout, so that
    /// the co-simulation's comparison every clocked cycle costs a copy).
    words: Vec<u32>,
    rdata: [u32; LANES],
}

impl Default for Oldata {
    fn default() -> Self {
        Oldata::new()
    }
}

impl Oldata {
    /// The array at reset: every word zero (the simulations' RAMs start so).
    pub fn new() -> Oldata {
        Oldata { words: vec![0; LANES * MAX_ENTRIES], rdata: [0; LANES] }
    }

    pub fn state(&self) -> State {
        State { words: self.words.clone() }
    }

    /// Entry `e` as it stands.
    pub fn entry(&self, e: usize) -> [u32; LANES] {
        std::array::from_fn(|k| self.words[k * MAX_ENTRIES + e % MAX_ENTRIES])
    }
}

impl Unit for Oldata {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Oldata::new();
    }

    fn outputs(&self, _: &In) -> Out {
        Out { rdata: self.rdata }
    }

    fn clock(&mut self, i: &In) {
        self.rdata = self.entry(if i.re { i.raddr } else { i.waddr } as usize);
        if i.we {
            let e = i.waddr as usize % MAX_ENTRIES;
            for (k, &x) in i.wdata.iter().enumerate() {
                self.words[k * MAX_ENTRIES + e] = x;
            }
        }
    }
}

/// What an SM's data-array slot holds: the model, or an RTL in its place.
pub trait OldataSlot: Unit<In = In, Out = Out> {
    /// Why the run must stop (a co-simulated RTL parted from the model).
    fn halted(&self) -> Option<String> {
        None
    }
}

impl OldataSlot for Oldata {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_gives_the_word_before_the_edges_write_and_the_new_one_after() {
        let mut u = Oldata::new();
        let w = In { we: true, waddr: 5, wdata: std::array::from_fn(|k| k as u32 + 1), ..In::default() };
        u.clock(&w);
        // (re low: the port looked at the written entry, before the write)
        assert_eq!(u.outputs(&In::default()).rdata, [0; LANES]);
        u.clock(&In { re: true, raddr: 5, ..In::default() });
        assert_eq!(u.outputs(&In::default()).rdata, w.wdata);
        assert_eq!(u.state().words[3 * MAX_ENTRIES + 5], 4);
    }
}
