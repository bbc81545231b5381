//! `Oldata`: the operand log's data array for one SM (Tanasić's thesis §6.3.3; interface and
//! timing in `mpgpu_spec::units::oldata`, decisions in `docs/faults.md` O11 and O12).
//!
//! 32 lane RAMs (`SyncRam<Bits<WORD_BITS>, INDEX_BITS>`: 64 words of 32 bits, one write port and one
//! registered read port, block RAM), lane k holding lane k's operand of each entry. An entry
//! is written whole (`we`, `waddr`, `wd0`..`wd31`) and read whole (`re`, `raddr`; the words are
//! on `rd0`..`rd31` after the edge). With `re` low the read port looks at `waddr` (its value
//! is then not used): every address input is used, so nothing is left dangling for the lint.
//! There is no logic beyond the address select: the array is the whole block. The lane RAMs
//! hold as many words as the configuration has entries (1..=64; addresses are 6 bits either
//! way); on the FPGA a lane is one block RAM whatever the depth (512 words at 36 bits).
//!
//! The ports are one signal per lane (`wd<k>`, `rd<k>`) because the harness moves each port as
//! one word of at most 64 bits, and rust-hdl simulates wider vectors slowly.

use crate::ram::SyncRam;
use mpgpu_spec::units::oldata::{INDEX_BITS, LANES, MAX_ENTRIES, WORD_BITS};
use rust_hdl::prelude::*;

const _: () = assert!(LANES == 32, "the block has one port per lane, wd0..wd31 and rd0..rd31");
const _: () = assert!(MAX_ENTRIES <= 1 << INDEX_BITS);

/// Test-only broken variants, for showing that the lockstep catches them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OldataFaults {
    /// Lane 31 never takes a write: a lane RAM's write enable left unconnected.
    pub drop_lane: bool,
    /// The read port always looks at `waddr`: the two address inputs crossed.
    pub read_waddr: bool,
}

#[derive(Clone, Debug, LogicBlock)]
pub struct Oldata {
    /// Clock of every lane RAM.
    pub clock: Signal<In, Clock>,
    /// Entry `waddr` takes `wd0`..`wd31` at the edge.
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<INDEX_BITS>>,
    /// Entry `raddr` is read at the edge (onto `rd0`..`rd31`).
    pub re: Signal<In, Bit>,
    pub raddr: Signal<In, Bits<INDEX_BITS>>,
    pub wd0: Signal<In, Bits<WORD_BITS>>,
    pub wd1: Signal<In, Bits<WORD_BITS>>,
    pub wd2: Signal<In, Bits<WORD_BITS>>,
    pub wd3: Signal<In, Bits<WORD_BITS>>,
    pub wd4: Signal<In, Bits<WORD_BITS>>,
    pub wd5: Signal<In, Bits<WORD_BITS>>,
    pub wd6: Signal<In, Bits<WORD_BITS>>,
    pub wd7: Signal<In, Bits<WORD_BITS>>,
    pub wd8: Signal<In, Bits<WORD_BITS>>,
    pub wd9: Signal<In, Bits<WORD_BITS>>,
    pub wd10: Signal<In, Bits<WORD_BITS>>,
    pub wd11: Signal<In, Bits<WORD_BITS>>,
    pub wd12: Signal<In, Bits<WORD_BITS>>,
    pub wd13: Signal<In, Bits<WORD_BITS>>,
    pub wd14: Signal<In, Bits<WORD_BITS>>,
    pub wd15: Signal<In, Bits<WORD_BITS>>,
    pub wd16: Signal<In, Bits<WORD_BITS>>,
    pub wd17: Signal<In, Bits<WORD_BITS>>,
    pub wd18: Signal<In, Bits<WORD_BITS>>,
    pub wd19: Signal<In, Bits<WORD_BITS>>,
    pub wd20: Signal<In, Bits<WORD_BITS>>,
    pub wd21: Signal<In, Bits<WORD_BITS>>,
    pub wd22: Signal<In, Bits<WORD_BITS>>,
    pub wd23: Signal<In, Bits<WORD_BITS>>,
    pub wd24: Signal<In, Bits<WORD_BITS>>,
    pub wd25: Signal<In, Bits<WORD_BITS>>,
    pub wd26: Signal<In, Bits<WORD_BITS>>,
    pub wd27: Signal<In, Bits<WORD_BITS>>,
    pub wd28: Signal<In, Bits<WORD_BITS>>,
    pub wd29: Signal<In, Bits<WORD_BITS>>,
    pub wd30: Signal<In, Bits<WORD_BITS>>,
    pub wd31: Signal<In, Bits<WORD_BITS>>,
    pub rd0: Signal<Out, Bits<WORD_BITS>>,
    pub rd1: Signal<Out, Bits<WORD_BITS>>,
    pub rd2: Signal<Out, Bits<WORD_BITS>>,
    pub rd3: Signal<Out, Bits<WORD_BITS>>,
    pub rd4: Signal<Out, Bits<WORD_BITS>>,
    pub rd5: Signal<Out, Bits<WORD_BITS>>,
    pub rd6: Signal<Out, Bits<WORD_BITS>>,
    pub rd7: Signal<Out, Bits<WORD_BITS>>,
    pub rd8: Signal<Out, Bits<WORD_BITS>>,
    pub rd9: Signal<Out, Bits<WORD_BITS>>,
    pub rd10: Signal<Out, Bits<WORD_BITS>>,
    pub rd11: Signal<Out, Bits<WORD_BITS>>,
    pub rd12: Signal<Out, Bits<WORD_BITS>>,
    pub rd13: Signal<Out, Bits<WORD_BITS>>,
    pub rd14: Signal<Out, Bits<WORD_BITS>>,
    pub rd15: Signal<Out, Bits<WORD_BITS>>,
    pub rd16: Signal<Out, Bits<WORD_BITS>>,
    pub rd17: Signal<Out, Bits<WORD_BITS>>,
    pub rd18: Signal<Out, Bits<WORD_BITS>>,
    pub rd19: Signal<Out, Bits<WORD_BITS>>,
    pub rd20: Signal<Out, Bits<WORD_BITS>>,
    pub rd21: Signal<Out, Bits<WORD_BITS>>,
    pub rd22: Signal<Out, Bits<WORD_BITS>>,
    pub rd23: Signal<Out, Bits<WORD_BITS>>,
    pub rd24: Signal<Out, Bits<WORD_BITS>>,
    pub rd25: Signal<Out, Bits<WORD_BITS>>,
    pub rd26: Signal<Out, Bits<WORD_BITS>>,
    pub rd27: Signal<Out, Bits<WORD_BITS>>,
    pub rd28: Signal<Out, Bits<WORD_BITS>>,
    pub rd29: Signal<Out, Bits<WORD_BITS>>,
    pub rd30: Signal<Out, Bits<WORD_BITS>>,
    pub rd31: Signal<Out, Bits<WORD_BITS>>,
    /// The lane RAMs.
    pub lane: [SyncRam<Bits<WORD_BITS>, INDEX_BITS>; LANES],
    drop_lane: Constant<Bit>,
    read_waddr: Constant<Bit>,
    /// Evaluate the logic in every pass (the plain simulation, for tests; not hardware).
    pub _always: bool,
    _ran: bool,
    /// Passes in which the logic was skipped (`crate::flat_logic!`; not hardware).
    pub _skips: u64,
}

impl Oldata {
    /// The array for a log of `entries` entries (1..=64).
    pub fn new(entries: usize, faults: OldataFaults) -> Self {
        assert!((1..=MAX_ENTRIES).contains(&entries), "an operand-log data array of {entries} entries (1..={MAX_ENTRIES})");
        Self {
            clock: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            re: Default::default(),
            raddr: Default::default(),
            wd0: Default::default(),
            wd1: Default::default(),
            wd2: Default::default(),
            wd3: Default::default(),
            wd4: Default::default(),
            wd5: Default::default(),
            wd6: Default::default(),
            wd7: Default::default(),
            wd8: Default::default(),
            wd9: Default::default(),
            wd10: Default::default(),
            wd11: Default::default(),
            wd12: Default::default(),
            wd13: Default::default(),
            wd14: Default::default(),
            wd15: Default::default(),
            wd16: Default::default(),
            wd17: Default::default(),
            wd18: Default::default(),
            wd19: Default::default(),
            wd20: Default::default(),
            wd21: Default::default(),
            wd22: Default::default(),
            wd23: Default::default(),
            wd24: Default::default(),
            wd25: Default::default(),
            wd26: Default::default(),
            wd27: Default::default(),
            wd28: Default::default(),
            wd29: Default::default(),
            wd30: Default::default(),
            wd31: Default::default(),
            rd0: Default::default(),
            rd1: Default::default(),
            rd2: Default::default(),
            rd3: Default::default(),
            rd4: Default::default(),
            rd5: Default::default(),
            rd6: Default::default(),
            rd7: Default::default(),
            rd8: Default::default(),
            rd9: Default::default(),
            rd10: Default::default(),
            rd11: Default::default(),
            rd12: Default::default(),
            rd13: Default::default(),
            rd14: Default::default(),
            rd15: Default::default(),
            rd16: Default::default(),
            rd17: Default::default(),
            rd18: Default::default(),
            rd19: Default::default(),
            rd20: Default::default(),
            rd21: Default::default(),
            rd22: Default::default(),
            rd23: Default::default(),
            rd24: Default::default(),
            rd25: Default::default(),
            rd26: Default::default(),
            rd27: Default::default(),
            rd28: Default::default(),
            rd29: Default::default(),
            rd30: Default::default(),
            rd31: Default::default(),
            lane: std::array::from_fn(|_| SyncRam::with_words(entries).zeroed()),
            drop_lane: Constant::new(faults.drop_lane),
            read_waddr: Constant::new(faults.read_waddr),
            _always: false,
            _ran: false,
            _skips: 0,
        }
    }

    /// Lane `k`'s write data input (the harness sets the ports by index).
    pub fn wd_mut(&mut self, k: usize) -> &mut Signal<In, Bits<WORD_BITS>> {
        match k {
            0 => &mut self.wd0,
            1 => &mut self.wd1,
            2 => &mut self.wd2,
            3 => &mut self.wd3,
            4 => &mut self.wd4,
            5 => &mut self.wd5,
            6 => &mut self.wd6,
            7 => &mut self.wd7,
            8 => &mut self.wd8,
            9 => &mut self.wd9,
            10 => &mut self.wd10,
            11 => &mut self.wd11,
            12 => &mut self.wd12,
            13 => &mut self.wd13,
            14 => &mut self.wd14,
            15 => &mut self.wd15,
            16 => &mut self.wd16,
            17 => &mut self.wd17,
            18 => &mut self.wd18,
            19 => &mut self.wd19,
            20 => &mut self.wd20,
            21 => &mut self.wd21,
            22 => &mut self.wd22,
            23 => &mut self.wd23,
            24 => &mut self.wd24,
            25 => &mut self.wd25,
            26 => &mut self.wd26,
            27 => &mut self.wd27,
            28 => &mut self.wd28,
            29 => &mut self.wd29,
            30 => &mut self.wd30,
            31 => &mut self.wd31,
            _ => panic!("lane {k} of 32"),
        }
    }

    /// Lane `k`'s read data output.
    pub fn rd(&self, k: usize) -> &Signal<Out, Bits<WORD_BITS>> {
        match k {
            0 => &self.rd0,
            1 => &self.rd1,
            2 => &self.rd2,
            3 => &self.rd3,
            4 => &self.rd4,
            5 => &self.rd5,
            6 => &self.rd6,
            7 => &self.rd7,
            8 => &self.rd8,
            9 => &self.rd9,
            10 => &self.rd10,
            11 => &self.rd11,
            12 => &self.rd12,
            13 => &self.rd13,
            14 => &self.rd14,
            15 => &self.rd15,
            16 => &self.rd16,
            17 => &self.rd17,
            18 => &self.rd18,
            19 => &self.rd19,
            20 => &self.rd20,
            21 => &self.rd21,
            22 => &self.rd22,
            23 => &self.rd23,
            24 => &self.rd24,
            25 => &self.rd25,
            26 => &self.rd26,
            27 => &self.rd27,
            28 => &self.rd28,
            29 => &self.rd29,
            30 => &self.rd30,
            31 => &self.rd31,
            _ => panic!("lane {k} of 32"),
        }
    }
}

// The lane RAMs and the inputs, once: `flat_block!` writes the RAMs' clocking, the
// simulation's lists and the block's `Logic`.
crate::flat_block!(Oldata {
    inputs: [
        we, waddr, re, raddr, wd0, wd1, wd2, wd3, wd4, wd5, wd6, wd7, wd8, wd9, wd10, wd11, wd12,
        wd13, wd14, wd15, wd16, wd17, wd18, wd19, wd20, wd21, wd22, wd23, wd24, wd25, wd26, wd27,
        wd28, wd29, wd30, wd31
    ],
    held: [],
    held_arrays: [],
    clocked: [],
    clocked_arrays: [lane],
    logic: [Lanes],
});

/// The whole logic, one part: the ports to the lane RAMs.
pub struct Lanes;

impl crate::flat::LogicPart<Lanes> for Oldata {
    #[hdl_gen]
    fn update(&mut self) {
        for k in 0..LANES {
            self.lane[k].write_enable.next = self.we.val();
            self.lane[k].write_address.next = self.waddr.val();
            self.lane[k].read_address.next = self.waddr.val();
            if self.re.val() & !self.read_waddr.val() {
                self.lane[k].read_address.next = self.raddr.val();
            }
        }
        self.lane[31].write_enable.next = self.we.val() & !self.drop_lane.val();
        self.lane[0].write_data.next = self.wd0.val();
        self.rd0.next = self.lane[0].read_data.val();
        self.lane[1].write_data.next = self.wd1.val();
        self.rd1.next = self.lane[1].read_data.val();
        self.lane[2].write_data.next = self.wd2.val();
        self.rd2.next = self.lane[2].read_data.val();
        self.lane[3].write_data.next = self.wd3.val();
        self.rd3.next = self.lane[3].read_data.val();
        self.lane[4].write_data.next = self.wd4.val();
        self.rd4.next = self.lane[4].read_data.val();
        self.lane[5].write_data.next = self.wd5.val();
        self.rd5.next = self.lane[5].read_data.val();
        self.lane[6].write_data.next = self.wd6.val();
        self.rd6.next = self.lane[6].read_data.val();
        self.lane[7].write_data.next = self.wd7.val();
        self.rd7.next = self.lane[7].read_data.val();
        self.lane[8].write_data.next = self.wd8.val();
        self.rd8.next = self.lane[8].read_data.val();
        self.lane[9].write_data.next = self.wd9.val();
        self.rd9.next = self.lane[9].read_data.val();
        self.lane[10].write_data.next = self.wd10.val();
        self.rd10.next = self.lane[10].read_data.val();
        self.lane[11].write_data.next = self.wd11.val();
        self.rd11.next = self.lane[11].read_data.val();
        self.lane[12].write_data.next = self.wd12.val();
        self.rd12.next = self.lane[12].read_data.val();
        self.lane[13].write_data.next = self.wd13.val();
        self.rd13.next = self.lane[13].read_data.val();
        self.lane[14].write_data.next = self.wd14.val();
        self.rd14.next = self.lane[14].read_data.val();
        self.lane[15].write_data.next = self.wd15.val();
        self.rd15.next = self.lane[15].read_data.val();
        self.lane[16].write_data.next = self.wd16.val();
        self.rd16.next = self.lane[16].read_data.val();
        self.lane[17].write_data.next = self.wd17.val();
        self.rd17.next = self.lane[17].read_data.val();
        self.lane[18].write_data.next = self.wd18.val();
        self.rd18.next = self.lane[18].read_data.val();
        self.lane[19].write_data.next = self.wd19.val();
        self.rd19.next = self.lane[19].read_data.val();
        self.lane[20].write_data.next = self.wd20.val();
        self.rd20.next = self.lane[20].read_data.val();
        self.lane[21].write_data.next = self.wd21.val();
        self.rd21.next = self.lane[21].read_data.val();
        self.lane[22].write_data.next = self.wd22.val();
        self.rd22.next = self.lane[22].read_data.val();
        self.lane[23].write_data.next = self.wd23.val();
        self.rd23.next = self.lane[23].read_data.val();
        self.lane[24].write_data.next = self.wd24.val();
        self.rd24.next = self.lane[24].read_data.val();
        self.lane[25].write_data.next = self.wd25.val();
        self.rd25.next = self.lane[25].read_data.val();
        self.lane[26].write_data.next = self.wd26.val();
        self.rd26.next = self.lane[26].read_data.val();
        self.lane[27].write_data.next = self.wd27.val();
        self.rd27.next = self.lane[27].read_data.val();
        self.lane[28].write_data.next = self.wd28.val();
        self.rd28.next = self.lane[28].read_data.val();
        self.lane[29].write_data.next = self.wd29.val();
        self.rd29.next = self.lane[29].read_data.val();
        self.lane[30].write_data.next = self.wd30.val();
        self.rd30.next = self.lane[30].read_data.val();
        self.lane[31].write_data.next = self.wd31.val();
        self.rd31.next = self.lane[31].read_data.val();
    }
}
