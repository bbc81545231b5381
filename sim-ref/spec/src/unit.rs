//! The cycle contract between a unit of the reference model and its RTL block.
//!
//! The whole-GPU model holds every RTL-backed unit behind [`Unit`], so a testbench can put the
//! rust-hdl block (through an adapter) or a lockstep pair of both in its place.

use std::fmt::Debug;

/// One clocked hardware unit as the rest of the GPU sees it.
pub trait Unit {
    /// Everything the block samples in a cycle.
    type In: Clone + Debug + PartialEq;
    /// Everything the block drives in a cycle.
    type Out: Clone + Debug + PartialEq;
    /// Synchronous reset to the initial state.
    fn reset(&mut self);
    /// This cycle's outputs, with the inputs settled (combinational view).
    fn outputs(&self, i: &Self::In) -> Self::Out;
    /// The rising clock edge: take the next state.
    fn clock(&mut self, i: &Self::In);
    /// The GPU cycle of the coming cycle, for a unit whose co-simulation reports and waveforms
    /// are timed in GPU cycles (a unit clocked only some cycles does not know it otherwise).
    /// Nothing else may depend on it.
    fn at_cycle(&mut self, _gpu_cycle: u64) {}
}

/// Number of bits needed to hold values `0..n` (at least 1).
pub const fn clog2(n: u64) -> u32 {
    if n <= 2 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::clog2;
    #[test]
    fn clog2_values() {
        assert_eq!(clog2(1), 1);
        assert_eq!(clog2(2), 1);
        assert_eq!(clog2(3), 2);
        assert_eq!(clog2(16), 4);
        assert_eq!(clog2(17), 5);
        assert_eq!(clog2(1 << 20), 20);
    }
}
