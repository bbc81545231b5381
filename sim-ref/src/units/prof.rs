//! Warped-Slicer's per-SM sampling counters as a unit (interface `mpgpu_spec::units::prof`,
//! RTL `rtl/src/prof.rs`).

use mpgpu_spec::units::prof::{In, Out, State, BLOCK_BITS, INST_BITS, STALL_BITS};
use mpgpu_spec::Unit;

/// One SM's counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prof {
    s: State,
}

impl Prof {
    pub fn state(&self) -> State {
        self.s
    }
}

fn mask(bits: usize) -> u32 {
    (1u32 << bits) - 1
}

impl crate::slots::Hosted for Prof {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

impl Unit for Prof {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Prof::default();
    }

    fn outputs(&self, _: &In) -> Out {
        Out { insts: self.s.insts, stalls: self.s.stalls, blocks: self.s.blocks }
    }

    fn clock(&mut self, i: &In) {
        if !i.run {
            return;
        }
        let (bi, bs) = if i.first { (0, 0) } else { (self.s.cnt_insts, self.s.cnt_stalls) };
        let ni = (bi + (i.issued & 7) as u32) & mask(INST_BITS);
        let ns = (bs + i.stall as u32) & mask(STALL_BITS);
        self.s.cnt_insts = ni;
        self.s.cnt_stalls = ns;
        if i.last {
            self.s.insts = ni;
            self.s.stalls = ns;
            self.s.blocks = i.blocks & mask(BLOCK_BITS) as u8;
        }
    }
}
