//! mpgpu-rtl: synthesizable rust-hdl blocks. Depends on mpgpu-spec (widths, parameters), never
//! on the reference model. Every block has a Verilog generation and yosys check in the tests.

pub mod board;
pub mod check;
pub mod dss;
pub mod flat;
pub mod oldata;
pub mod ksrt;
pub mod lowest_first;
pub mod oplog;
pub mod prio;
pub mod prof;
pub mod ptbq;
pub mod ram;
pub mod reg;
pub mod rq;
pub mod round_robin;
pub mod scan;
pub mod sched;
pub mod share;
pub mod slice;
pub mod smst;
pub mod steer;
pub mod wf;
pub mod zorua;

pub use board::{BoardDss, BoardPrio, BoardSched};
pub use dss::Dss;
pub use ksrt::Ksrt;
pub use lowest_first::LowestFirst;
pub use oldata::{Oldata, OldataFaults};
pub use oplog::{Oplog, OplogFaults};
pub use prio::Prio;
pub use prof::{Prof, ProfFaults};
pub use ptbq::Ptbq;
pub use ram::{LutRam, SyncRam};
pub use reg::Reg;
pub use rq::{Rq, RqFaults};
pub use round_robin::RoundRobin;
pub use scan::ScanControl;
pub use sched::{Sched, SchedFaults};
pub use share::Share;
pub use slice::{Slice, SliceFaults};
pub use smst::Smst;
pub use steer::{Steer, SteerFaults};
pub use wf::{Wf, WfFaults};
pub use zorua::{Zorua, ZoruaFaults, ZoruaParams};
