//! Every RTL block's harness, written once each in its own file: the rust-hdl block's port and
//! register lists ([`hdl_block!`](crate::hdl_block)), the unit interface onto those ports
//! ([`Ports`](crate::ports::Ports)), and its registry entry (`BLOCK`: what it is, its Verilog
//! at its default configuration, its broken variants, and how it runs in the whole GPU). Every
//! backend, lockstep, RTL in the loop, waveforms, traces and command use these and nothing
//! else.
//!
//! One file per block, named as the block is everywhere (`rtl/src/<block>`,
//! `mpgpu_spec::units::<block>`); the list below declares each file's module and its registry
//! entry at once, in the order the command line lists them.

use crate::entry::Block;

macro_rules! blocks {
    ($($b:ident),* $(,)?) => {
        $(mod $b; pub use $b::*;)*
        /// Every RTL block, in the order the command line lists them.
        pub static BLOCKS: &[Block] = &[$($b::BLOCK),*];
    };
}

blocks!(lowest_first, sched, dss, prio, oplog, oldata, rq, zorua, admit, wf, prof, slice, steer);

// (the port declarations' checks, on real blocks)
#[cfg(test)]
mod tests {
    use super::{ProfPorts, SlicePorts};
    use crate::ports::*;
    use mpgpu_spec::port::{FromWires, Wires};

    struct Layout {
        inputs: Vec<Port>,
        outputs: Vec<Port>,
    }

    fn layout<P: Ports>(p: &P) -> Layout {
        let b = p.block();
        Layout { inputs: b.input_ports(), outputs: b.output_ports() }
    }

    fn check(l: &Layout) -> Result<(), String> {
        check_ports::<ProfPorts>("prof", &l.inputs, &l.outputs)
    }

    #[test]
    fn the_port_check_passes_the_blocks_and_catches_a_planted_difference() {
        let p = ProfPorts::default();
        let good = layout(&p);
        check(&good).unwrap();
        // (a width, a name, a missing port, an extra port: each named)
        let mut l = layout(&p);
        l.inputs[3].width += 1;
        let e = check(&l).unwrap_err();
        assert!(e.contains("input port 3 is `issued` (4 bits) in the RTL but `issued` (3 bits)"), "{e}");
        let mut l = layout(&p);
        l.outputs[1].name = "stall_count".into();
        let e = check(&l).unwrap_err();
        assert!(e.contains("output port 1 is `stall_count`"), "{e}");
        let mut l = layout(&p);
        l.outputs.pop();
        assert!(check(&l).unwrap_err().contains("output port 2 is nothing in the RTL but `blocks` (5 bits)"));
        let mut l = layout(&p);
        l.inputs.push(Port::new("extra", 1));
        assert!(check(&l).unwrap_err().contains("input port 6 is `extra` (1 bits) in the RTL but nothing"));
    }

    #[test]
    fn the_verilog_carries_each_ports_meaning() {
        let s = SlicePorts { sms: 4, total: [8, 1536, 32768, 49152], faults: Default::default() };
        let v = verilog_of(&s);
        let line = |name: &str| v.lines().find(|l| l.trim_end().contains(&format!(" {name};"))).unwrap_or_else(|| panic!("no port {name}")).to_string();
        assert!(line("cmd_op").ends_with("// The command (none, Enter, Leave, Quota) and the slot it names."), "{}", line("cmd_op"));
        assert!(line("done_valid").contains("// A block of slot `done_slot` finished on SM `done_sm`."));
        // (a port that shares the group's meaning carries none of its own)
        assert!(!line("cmd_slot").contains("//"));
    }

    #[test]
    fn packing_follows_the_declaration() {
        use mpgpu_spec::units::slice::{Cmd, In, Out};
        let i = In { cmd: Cmd::Enter { slot: 5, blocks: 7, req: [1, 2, 3, 1 << 20], quota: 9 }, done: Some((3, 1)) };
        let mut v = vec![0; In::ports().len()];
        i.pack(&mut v);
        // (op, slot masked to 2 bits, sm, all, blocks, q0..q3 with Enter's quota in q0, req0..req3
        // masked to 17 bits, done)
        assert_eq!(v, [1, 1, 0, 0, 7, 9, 0, 0, 0, 1, 2, 3, 0, 1, 3, 1]);
        let o = Out { busy: true, issue: None };
        let mut w = vec![9; Out::ports().len()];
        o.pack(&mut w);
        assert_eq!(Out::unpack(&w), o);
        let mut care = vec![true; w.len()];
        o.care(&mut care);
        // (the slice table's issue is defined only with its valid bit)
        assert_eq!(care, [true, true, false, false]);
        let mut care = vec![false; w.len()];
        Out { busy: false, issue: Some((3, 1)) }.care(&mut care);
        assert!(care.iter().all(|&c| c));
        // (the framework's qualified outputs: defined only with their valid bits)
        use mpgpu_spec::units::sched::fw;
        let o = fw::Out { busy: true, preempt: Some(2), ..Default::default() };
        let mut care = vec![true; fw::Out::ports().len()];
        o.care(&mut care);
        assert_eq!(care, [true, true, true, false, false, false, false, false, false, true, true, true, false]);
    }
}
