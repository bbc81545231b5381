//! Interface of the lowest-index-first arbiter (`rtl/src/lowest_first.rs`).

use serde::Serialize;

/// Number of request lines.
pub const WIDTH: usize = 16;
/// Bits of the granted index.
pub const INDEX_BITS: usize = crate::unit::clog2(WIDTH as u64) as usize;

/// Sampled every cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct In {
    /// One bit per requester.
    pub request: u16,
}

/// Driven every cycle: the grant for the requests sampled at the last rising edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Out {
    pub valid: bool,
    pub index: u8,
}

crate::wires! { In as i {
    /// One request bit per index.
    request(WIDTH) = i.request,
} }

crate::wires! { Out as o {
    /// Some request is set.
    valid(1) = o.valid,
    /// The lowest index whose request is set (0 when none).
    index(INDEX_BITS) = o.index,
} unpack {
    Out { valid: valid != 0, index: index as u8 }
} }
