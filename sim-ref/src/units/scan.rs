//! The scan control the policy engines share (the DSS engine, [`super::dss`], and the priority
//! policies' engine, [`super::prio`]); the RTL block is `rtl/src/scan.rs`.
//!
//! A trigger is latched (`pending`); when the engine is free it starts a decision at the next
//! edge. A decision scans table entries 0..sms-1, one per cycle (the address on `addr`), then
//! (the DSS engine) holds two cycles, then spends one cycle deciding. After the decision cycle it scans again if the engine acted or a
//! trigger arrived meanwhile; otherwise it stops. After an action it first waits
//! [`SETTLE`] cycles: the framework checks a decision in the cycle after it is made and
//! applies it in the one after that, it keeps every kernel's "wants more SMs" a cycle behind the
//! tables, and the engine reads each entry as it was one cycle before it scans it, so the scan
//! after an action starts once the action shows in what it reads. The engine owns its candidates: it updates
//! them when [`ScanControl::clock`] says [`Step::Scan`], and clears them at the end of every
//! decision cycle ([`ScanControl::deciding`]), whatever it decided, so that a scan
//! ([`Step::Start`]) begins with none; in the RTL the clear then depends on the scan's registers
//! only, not on the decision (`docs/fpga.md`).

/// Cycles a policy engine waits after acting before it scans again.
pub const SETTLE: u8 = 4;

/// What the engine does with its candidates at this clock edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing: idle, or the decision ended with nothing to do.
    Hold,
    /// Scan the table entry at this address (the cycle's `addr`).
    Scan(u8),
    /// A new scan starts from entry 0 (the candidates were cleared at the last decision).
    Start,
}

/// The scan position and trigger latch of a policy engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanControl {
    /// Entries scanned (1..=MAX_SMS).
    sms: u8,
    busy: bool,
    pending: bool,
    /// The entry scanned this cycle; `sms` in the decision cycle and while settling.
    pos: u8,
    /// Cycles left to wait after an action.
    wait: u8,
    /// Cycles between the last entry and the decision (two for the DSS engine: it registers
    /// the live token counts of its candidates in the first and compares them in the second;
    /// none for the priority engine); `hold` counts those left, the cycle's own included.
    pre: u8,
    hold: u8,
}

impl ScanControl {
    pub fn new(sms: usize) -> ScanControl {
        ScanControl { sms: sms as u8, busy: false, pending: false, pos: 0, wait: 0, pre: 0, hold: 0 }
    }

    /// A scan control with two cycles between the last entry and the decision
    /// ([`ScanControl::holding`]): sms + 3 cycles per decision (sms + 2 until the eleventh
    /// timing round, 2026-11-25, with one).
    pub fn with_hold(sms: usize) -> ScanControl {
        ScanControl { pre: 2, ..ScanControl::new(sms) }
    }

    /// This cycle is the first of those between the last entry and the decision (only
    /// [`ScanControl::with_hold`] has them): the candidates are final.
    pub fn holding(&self) -> bool {
        self.busy && self.pos == self.sms && self.pre > 0 && self.hold == self.pre
    }

    /// Entries scanned.
    pub fn sms(&self) -> usize {
        self.sms as usize
    }

    /// A decision is under way.
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// The table address the engine drives: the entry scanned this cycle (0 otherwise).
    pub fn addr(&self) -> u8 {
        if self.pos < self.sms {
            self.pos
        } else {
            0
        }
    }

    /// The table address the engine drives next cycle: the next entry while a scan has one
    /// left, else 0. From the registers only.
    pub fn next_addr(&self) -> u8 {
        if self.busy && self.pos + 1 < self.sms {
            self.pos + 1
        } else {
            0
        }
    }

    /// This cycle is the decision cycle (after the last entry).
    pub fn deciding(&self) -> bool {
        self.busy && self.pos == self.sms && self.wait == 0 && self.hold == 0
    }

    /// The clock edge: `trigger` the cycle's trigger, `acted` whether the engine acted in this
    /// (decision) cycle. Returns what the engine does with its candidates.
    pub fn clock(&mut self, trigger: bool, acted: bool) -> Step {
        if trigger {
            self.pending = true;
        }
        if self.busy {
            if self.pos < self.sms {
                self.pos += 1;
                self.hold = if self.pos == self.sms { self.pre } else { 0 };
                return Step::Scan(self.pos - 1);
            }
            if self.hold > 0 {
                self.hold -= 1;
                return Step::Hold;
            }
            if self.wait > 0 {
                self.wait -= 1;
                if self.wait > 0 {
                    return Step::Hold;
                }
            } else if acted {
                self.wait = SETTLE;
                return Step::Hold;
            } else if !self.pending {
                self.busy = false;
                return Step::Hold;
            }
        } else if !self.pending {
            return Step::Hold;
        }
        self.pending = false;
        self.busy = true;
        self.pos = 0;
        Step::Start
    }
}
