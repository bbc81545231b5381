//! The port mapping of every RTL block, written once each: the rust-hdl block's port and
//! register lists ([`hdl_block!`](crate::hdl_block)) and the unit interface onto those ports
//! ([`Ports`]). Every backend, lockstep, RTL in the loop, waveforms and traces use these and
//! nothing else.
//!
//! One file per block, named as the block is everywhere (`rtl/src/<block>.rs`,
//! `mpgpu_spec::units::<block>`).

mod sched;
mod dss;
mod prio;
mod lowest_first;
mod oplog;
mod rq;
mod oldata;
mod zorua;
mod wf;
mod prof;
mod slice;

pub use sched::*;
pub use dss::*;
pub use prio::*;
pub use lowest_first::*;
pub use oplog::*;
pub use rq::*;
pub use oldata::*;
pub use zorua::*;
pub use wf::*;
pub use prof::*;
pub use slice::*;
