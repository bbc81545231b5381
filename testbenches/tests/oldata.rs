//! The operand log's data array (`Oldata`) alone and in the loop of the whole GPU on every SM.

use mpgpu_ref::units::oldata::Oldata;
use mpgpu_spec::units::oldata::In;
use mpgpu_spec::Unit;
use mpgpu_tb::blocks::OldataPorts;
use mpgpu_tb::{InLoop, RtlUnit};

#[test]
fn a_write_then_a_read() {
    let rtl = RtlUnit::rust_hdl(OldataPorts { faults: Default::default() });
    let mut p = InLoop::with_state(Oldata::new(), rtl, 16, Oldata::state, RtlUnit::<OldataPorts>::state);
    let w = In { we: true, waddr: 0, wdata: std::array::from_fn(|k| 100 + k as u32), ..In::default() };
    let r = In { re: true, raddr: 0, ..In::default() };
    for i in [w, r, In::default()] {
        let _ = p.outputs(&i);
        p.clock(&i);
    }
    let _ = p.outputs(&In::default());
    assert!(p.mismatch().is_none(), "{}", p.mismatch().unwrap());
}
