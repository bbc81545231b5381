//! The cycle interfaces (In/Out) of the RTL-backed units, one module per block.

pub mod admit;
pub mod lowest_first;
pub mod oldata;
pub mod oplog;
pub mod prof;
pub mod rq;
pub mod sched;
pub mod slice;
pub mod steer;
pub mod wf;
pub mod zorua;
