//! The replay queue (`Rq`, one per SM): its ports and unit interface (`mpgpu_spec::units::rq`).

use crate::hdl_block;
use crate::ports::{Ports, Regs};
use mpgpu_rtl::{Rq, RqFaults};
use mpgpu_spec::units::rq;

hdl_block!(Rq {
    inputs: [free_lo, free_hi, fault_lo, fault_hi, issue, replay, replay_idx, warp, pc, exec, age, log0, log1, log2, nlog, rd_idx],
    outputs: [full, alloc_idx, replay_ok, rd_warp, rd_pc, rd_exec, rd_age, rd_log0, rd_log1, rd_log2, rd_nlog],
    registers: [],
    arrays: [valid, faulted],
    memories: [warp_ram, age_ram, exec_ram, info_ram],
    flat: read_changed,
});

/// One SM's replay queue (`Rq`) of `slots` slots, with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct RqPorts {
    pub slots: usize,
    pub faults: RqFaults,
}

impl Ports for RqPorts {
    type In = rq::In;
    type Out = rq::Out;
    type State = rq::State;
    type Block = Rq;
    fn name(&self) -> String {
        "rq".into()
    }
    fn block(&self) -> Rq {
        let mut b = Rq::new(self.slots, self.faults);
        b.connect_inputs();
        b
    }
    fn encode(&self, i: &rq::In, v: &mut [u64]) {
        let w = [
            i.free as u64,
            (i.free >> 64) as u64,
            i.fault as u64,
            (i.fault >> 64) as u64,
            i.issue as u64,
            i.replay as u64,
            i.replay_idx as u64 & 127,
            i.warp as u64 & 63,
            i.pc as u64,
            i.exec as u64,
            i.age as u64,
            i.log[0] as u64 & 63,
            i.log[1] as u64 & 63,
            i.log[2] as u64 & 63,
            i.nlog as u64 & 3,
            i.rd_idx as u64 & 127,
        ];
        v.copy_from_slice(&w);
    }
    fn encode_out(&self, o: &rq::Out, v: &mut [u64]) {
        let w = [
            o.full as u64,
            o.alloc_idx as u64,
            o.replay_ok as u64,
            o.rd_warp as u64,
            o.rd_pc as u64,
            o.rd_exec as u64,
            o.rd_age as u64,
            o.rd_log[0] as u64,
            o.rd_log[1] as u64,
            o.rd_log[2] as u64,
            o.rd_nlog as u64,
        ];
        v.copy_from_slice(&w);
    }
    fn decode(&self, v: &[u64]) -> rq::Out {
        rq::Out {
            full: v[0] != 0,
            alloc_idx: v[1] as u8,
            replay_ok: v[2] != 0,
            rd_warp: v[3] as u8,
            rd_pc: v[4] as u16,
            rd_exec: v[5] as u32,
            rd_age: v[6] as u16,
            rd_log: [v[7] as u8, v[8] as u8, v[9] as u8],
            rd_nlog: v[10] as u8,
        }
    }
    fn state(&self, r: &Regs) -> rq::State {
        rq::State {
            valid: r.array("valid").to_vec(),
            faulted: r.array("faulted").to_vec(),
            warp: r.array("warp_ram.mem").to_vec(),
            age: r.array("age_ram.mem").to_vec(),
            exec: r.array("exec_ram.mem").to_vec(),
            info: r.array("info_ram.mem").to_vec(),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are the registers' and the read ports': `mpgpu_spec::units::rq`; the
        // broken `early_free` lets this cycle's `free` through)
        if self.faults.early_free {
            None
        } else {
            Some(&["replay_idx", "rd_idx"])
        }
    }
}
