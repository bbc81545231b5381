//! Reference model of the lowest-index-first arbiter: registered, one cycle of latency.

use mpgpu_spec::units::lowest_first::{In, Out};
use mpgpu_spec::Unit;

#[derive(Clone, Debug, Default)]
pub struct LowestFirst {
    granted: Out,
    /// Test-only fault injection: grant the highest request instead (the co-simulation tests
    /// use it to show that the checker catches a wrong block).
    pub broken_highest_wins: bool,
}

impl Unit for LowestFirst {
    type In = In;
    type Out = Out;
    fn reset(&mut self) {
        self.granted = Out::default();
    }
    fn outputs(&self, _i: &In) -> Out {
        self.granted
    }
    fn clock(&mut self, i: &In) {
        let r = i.request;
        let index = if r == 0 {
            0
        } else if self.broken_highest_wins {
            15 - r.leading_zeros() as u8
        } else {
            r.trailing_zeros() as u8
        };
        self.granted = Out { valid: r != 0, index };
    }
}
