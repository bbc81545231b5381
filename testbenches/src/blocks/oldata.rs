//! The operand log's data array (`Oldata`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::oldata`).

use crate::ports::{Port, Ports, Regs};
use rust_hdl::core::atom::Atom;
use super::oplog::{log_entries, ol_host};
use crate::entry::{v, variant, Block, Scope};
use mpgpu_rtl::{Oldata, OldataFaults};
use mpgpu_spec::units::oldata;

/// `Oldata`'s ports by hand rather than through `hdl_block!`: its data ports are one per lane
/// and its RAMs an array (`lane$k`, each read back as `lane$k.mem[w]`). It is flat
/// (`mpgpu_rtl::flat_logic!`).
impl crate::ports::HdlBlock for Oldata {
    fn flat(&self) -> bool {
        true
    }
    fn quiet(&self) -> bool {
        !self.read_changed()
    }
    fn input_ports(&self) -> Vec<Port> {
        let mut v = vec![Port::new("we", self.we.bits()), Port::new("waddr", self.waddr.bits()), Port::new("re", self.re.bits()), Port::new("raddr", self.raddr.bits())];
        // (every lane's data port has the one type of `wd0`)
        v.extend((0..oldata::LANES).map(|k| Port::new(&format!("wd{k}"), self.wd0.bits())));
        v
    }
    fn output_ports(&self) -> Vec<Port> {
        (0..oldata::LANES).map(|k| Port::new(&format!("rd{k}"), self.rd(k).bits())).collect()
    }
    fn register_ports(&self) -> Vec<Port> {
        self.lane.iter().enumerate().flat_map(|(k, l)| (0..l.words()).map(move |w| Port::new(&format!("lane${k}.mem[{w}]"), l.read_data.bits()))).collect()
    }
    fn set_inputs(&mut self, v: &[u64]) {
        use crate::ports::Wire;
        use rust_hdl::core::block::Block;
        self.we.next = Wire::from_word(v[0]);
        self.we.update_all();
        self.waddr.next = Wire::from_word(v[1]);
        self.waddr.update_all();
        self.re.next = Wire::from_word(v[2]);
        self.re.update_all();
        self.raddr.next = Wire::from_word(v[3]);
        self.raddr.update_all();
        for k in 0..oldata::LANES {
            let s = self.wd_mut(k);
            s.next = Wire::from_word(v[4 + k]);
            s.update_all();
        }
    }
    fn set_clock(&mut self, high: bool) {
        self.clock.next = rust_hdl::prelude::Clock::from(high);
        rust_hdl::core::block::Block::update_all(&mut self.clock);
    }
    fn get_outputs(&self, v: &mut [u64]) {
        for (k, x) in v.iter_mut().enumerate().take(oldata::LANES) {
            *x = crate::ports::Wire::word(&self.rd(k).val());
        }
    }
    fn get_registers(&self, v: &mut [u64]) {
        // (a lane's words only when it was written since they were last read, and only the
        // one written when it was one)
        let mut at = 0;
        for l in &self.lane {
            match l.take_written_word() {
                None => {}
                Some(Some(w)) => v[at + w] = crate::ports::Wire::word(&l.word(w)),
                Some(None) => {
                    for w in 0..l.words() {
                        v[at + w] = crate::ports::Wire::word(&l.word(w));
                    }
                }
            }
            at += l.words();
        }
    }
}

/// One SM's operand-log data array (`Oldata`) of `entries` entries (the configuration's log),
/// with test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct OldataPorts {
    pub entries: usize,
    pub faults: OldataFaults,
}

impl Ports for OldataPorts {
    type In = oldata::In;
    type Out = oldata::Out;
    type State = oldata::State;
    type Block = Oldata;
    fn name(&self) -> String {
        "oldata".into()
    }
    fn block(&self) -> Oldata {
        let mut b = Oldata::new(self.entries, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> oldata::State {
        // (the registers are the lane RAMs' words and nothing else, lane after lane: the
        // state's layout)
        debug_assert_eq!(r.values.len(), oldata::LANES * self.entries);
        oldata::State { words: r.values.iter().map(|&x| x as u32).collect() }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are the read ports' registers)
        Some(&[])
    }
}

pub(super) const BLOCK: Block = Block {
    name: "oldata",
    about: "the operand log's data array (one per SM): 32 lane RAMs",
    scope: Scope::PerSm,
    // (at its largest: 64 entries of 32 lanes x 32 bits, 8 KB)
    verilog: |_| Ok(v(OldataPorts { entries: oldata::MAX_ENTRIES, faults: Default::default() })),
    broken: &[
        variant("drop-lane", "lane 31 never takes a write", |b| b.edit("oldata", |f: &mut OldataFaults| f.drop_lane = true)),
        variant("read-waddr", "the read port always looks at the write address", |b| b.edit("oldata", |f: &mut OldataFaults| f.read_waddr = true)),
    ],
    host: Some(ol_host(
        "the operand log's data array in RTL on every SM (or the SMs --sms names): 32 lane RAMs, one entry written and one read per cycle; under the operand-log fault scheme (implied), needs the thesis's pipeline (--config thesis16, or --pipeline thesis)",
        |b| {
            let entries = log_entries(b.cfg);
            let ports = OldataPorts { entries, faults: b.o.broken.of("oldata") };
            b.per_sm(ports, &|| mpgpu_ref::units::oldata::Oldata::new(entries), mpgpu_ref::units::oldata::Oldata::state).map(Some)
        },
    )),
};
