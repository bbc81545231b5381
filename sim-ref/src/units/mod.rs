//! Units of the model that have an RTL counterpart, each behind [`mpgpu_spec::Unit`].

pub mod admit;
pub mod dss;
pub mod framework;
pub mod lowest_first;
pub mod oldata;
pub mod oplog;
pub mod rq;
pub mod prio;
pub mod prof;
pub mod scan;
pub mod slice;
pub mod steer;
pub mod wf;
pub mod zorua;
pub mod zorua_random;
