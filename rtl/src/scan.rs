//! `ScanControl`: the trigger latch and scan counter the policy engines (`Dss`, `Prio`) share.
//! The reference model is `mpgpu_ref::units::scan::ScanControl`.
//!
//! - A `trigger` pulse is latched; when no decision is under way, a scan starts at the next
//!   edge (`restart` high in the cycle before it).
//! - A scan drives `addr` = 0, 1, .., sms-1 on consecutive cycles with `scanning` high (the
//!   engine samples the table entries at `addr` and updates its candidates at the edge), then
//!   one cycle with `deciding` high (the engine drives its decision and reports on `act`
//!   whether it acts). `addr` is 0 outside a scan.
//! - After the decision cycle the block scans again (`restart`) if the engine acted or a trigger
//!   arrived meanwhile; otherwise it goes idle. After an action it first waits four cycles
//!   (`SETTLE` in the model: the framework checks the action a cycle later, applies it in the
//!   cycle after that, keeps the kernels' "wants more SMs" a cycle behind, and registers its
//!   table reads). The engine clears its candidates at the end of every decision cycle
//!   (`deciding`, from the registers only), whatever it decides, so they are clear when a scan
//!   starts.
//! - `next_addr` is the address of the next cycle's scan (0 if it scans none), kept in its own
//!   register (`na_q`), so that the engine's table reads start at a flip-flop.
//! - With `hold` (the DSS engine) two cycles lie between the last entry and the decision, so
//!   that every decision cycle follows two cycles in which the candidates were already final:
//!   the engine registers in the first what it reads for them, and in the second what it
//!   computes from that (one cycle until the eleventh timing round, `docs/fpga.md`).
//! - Latency: sms + 1 cycles per decision (sms + 3 with `hold`); `busy`, `addr` and `next_addr` depend on the registers only,
//!   the next state also on `trigger` and `act` (combinationally).
//! Parameters: 1..=16 entries (`sms`).

use mpgpu_spec::units::sched::{INDEX_BITS, MAX_SMS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Bits of the wait after an action (0..=4, the model's `SETTLE`); a register of this block only.
const WAIT_BITS: usize = 3;
/// Bits of the hold cycles left (0..=2); a register of this block only.
const HOLD_BITS: usize = 2;

#[derive(Clone, Debug, LogicBlock)]
pub struct ScanControl {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// Start a decision (latched until one starts).
    pub trigger: Signal<In, Bit>,
    /// The engine acts in this decision cycle (only read while `deciding`).
    pub act: Signal<In, Bit>,
    /// A decision is under way.
    pub busy: Signal<Out, Bit>,
    /// The table address scanned this cycle (0 outside a scan).
    pub addr: Signal<Out, Bits<INDEX_BITS>>,
    /// The table address scanned next cycle (0 when the next cycle scans none); from the
    /// registers only.
    pub next_addr: Signal<Out, Bits<INDEX_BITS>>,
    /// This cycle scans the entry at `addr`.
    pub scanning: Signal<Out, Bit>,
    /// This cycle is the decision, after the last entry (and the hold cycles, if any).
    pub deciding: Signal<Out, Bit>,
    busy_q: Reg<Bit>,
    pending_q: Reg<Bit>,
    deciding_q: Reg<Bit>,
    pos_q: Reg<Bits<INDEX_BITS>>,
    /// Cycles left to wait after an action (0: not waiting).
    wait_q: Reg<Bits<WAIT_BITS>>,
    /// Hold cycles left between the last entry and the decision, this one included.
    hold_q: Reg<Bits<HOLD_BITS>>,
    /// `deciding` of this cycle, registered at the edge before from the registers (a decision
    /// cycle is never followed by one: after it the block waits, restarts or goes idle), so
    /// that the engines' decisions, and from them the next state, start at one flip-flop.
    dnow_q: Reg<Bit>,
    /// The block's hold cycles (0 or 2).
    pre: Constant<Bits<HOLD_BITS>>,
    /// `next_addr`, registered: the address the cycle after the edge scans.
    na_q: Reg<Bits<INDEX_BITS>>,
    /// `next_addr` after a restart: 1, or 0 with one entry.
    na_start: Constant<Bits<INDEX_BITS>>,
    /// sms - 1: the last address scanned.
    last: Constant<Bits<INDEX_BITS>>,
    pending_next: Signal<Local, Bit>,
    /// A scan starts at this edge.
    restart: Signal<Local, Bit>,
}

impl ScanControl {
    /// The control of a scan over `sms` table entries (1..=16), with two cycles between the
    /// last entry and the decision if `hold`.
    pub fn new(sms: usize, hold: bool) -> Self {
        assert!((1..=MAX_SMS).contains(&sms), "ScanControl supports 1..={MAX_SMS} entries, not {sms}");
        Self {
            clock: Default::default(),
            trigger: Default::default(),
            act: Default::default(),
            busy: Default::default(),
            addr: Default::default(),
            next_addr: Default::default(),
            scanning: Default::default(),
            deciding: Default::default(),
            busy_q: Default::default(),
            pending_q: Default::default(),
            deciding_q: Default::default(),
            pos_q: Default::default(),
            wait_q: Default::default(),
            hold_q: Default::default(),
            dnow_q: Default::default(),
            pre: Constant::new(if hold { 2.into() } else { 0.into() }),
            na_q: Default::default(),
            na_start: Constant::new(((sms > 1) as u64).into()),
            last: Constant::new(((sms - 1) as u64).into()),
            pending_next: Default::default(),
            restart: Default::default(),
        }
    }
}

impl Logic for ScanControl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy_q, pending_q, deciding_q, pos_q, wait_q, hold_q, dnow_q, na_q);
        // Outputs.
        self.busy.next = self.busy_q.q.val();
        self.addr.next = self.pos_q.q.val();
        if self.deciding_q.q.val() {
            self.addr.next = 0.into();
        }
        self.scanning.next = self.busy_q.q.val() & !self.deciding_q.q.val();
        self.next_addr.next = self.na_q.q.val();
        // (busy, in the decision phase, no wait and no hold cycle left; registered: the last
        // entry scanned without hold cycles, or the last hold cycle, comes before it)
        self.deciding.next = self.dnow_q.q.val();
        self.dnow_q.d.next = self.busy_q.q.val()
            & ((!self.deciding_q.q.val() & (self.pos_q.q.val() == self.last.val()) & (self.pre.val() == 0))
                | (self.deciding_q.q.val() & (self.hold_q.q.val() == 1)));
        // Next state.
        self.pending_next.next = self.pending_q.q.val() | self.trigger.val();
        self.pending_q.d.next = self.pending_next.val();
        self.restart.next = false;
        if self.busy_q.q.val() {
            if !self.deciding_q.q.val() {
                if self.pos_q.q.val() == self.last.val() {
                    self.deciding_q.d.next = true;
                    self.hold_q.d.next = self.pre.val();
                } else {
                    self.pos_q.d.next = self.pos_q.q.val() + 1;
                }
            } else if self.hold_q.q.val() != 0 {
                self.hold_q.d.next = self.hold_q.q.val() - 1;
            } else if self.wait_q.q.val() != 0 {
                self.wait_q.d.next = self.wait_q.q.val() - 1;
                if self.wait_q.q.val() == 1 {
                    self.restart.next = true;
                }
            } else if self.act.val() {
                self.wait_q.d.next = 4.into();
            } else if self.pending_next.val() {
                self.restart.next = true;
            } else {
                self.busy_q.d.next = false;
            }
        } else if self.pending_next.val() {
            self.restart.next = true;
        }
        if self.restart.val() {
            self.busy_q.d.next = true;
            self.pending_q.d.next = false;
            self.deciding_q.d.next = false;
            self.pos_q.d.next = 0.into();
        }
        // The address the cycle after the edge scans: 1 after a restart (0 with one entry); two
        // on from this cycle's while the scan has them; else 0.
        self.na_q.d.next = 0.into();
        if self.busy_q.q.val() & !self.deciding_q.q.val() & (self.pos_q.q.val() != self.last.val()) & ((self.pos_q.q.val() + 1) != self.last.val()) {
            self.na_q.d.next = self.pos_q.q.val() + 2;
        }
        if self.restart.val() {
            self.na_q.d.next = self.na_start.val();
        }
    }
}
