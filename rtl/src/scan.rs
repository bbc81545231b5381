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
//!   table reads). `restart` tells the engine to clear its candidates at this edge.
//! - `next_addr` is the address of the next cycle's scan (0 if it scans none).
//! - Latency: sms + 1 cycles per decision; `busy`, `addr` and `next_addr` depend on the registers only,
//!   `restart` also on `trigger` and `act` (combinationally).
//! Parameters: 1..=16 entries (`sms`).

use mpgpu_spec::units::sched::{INDEX_BITS, MAX_SMS};
use rust_hdl::prelude::*;

const _: () = assert!(MAX_SMS == 16 && INDEX_BITS == 4);

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
    /// This cycle is the decision, after the last entry.
    pub deciding: Signal<Out, Bit>,
    /// A scan starts at this edge: the engine clears its candidates.
    pub restart: Signal<Out, Bit>,
    busy_q: DFF<Bit>,
    pending_q: DFF<Bit>,
    deciding_q: DFF<Bit>,
    pos_q: DFF<Bits<INDEX_BITS>>,
    /// Cycles left to wait after an action (0: not waiting).
    wait_q: DFF<Bits<3>>,
    /// sms - 1: the last address scanned.
    last: Constant<Bits<INDEX_BITS>>,
    pending_next: Signal<Local, Bit>,
}

impl ScanControl {
    /// The control of a scan over `sms` table entries (1..=16).
    pub fn new(sms: usize) -> Self {
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
            restart: Default::default(),
            busy_q: Default::default(),
            pending_q: Default::default(),
            deciding_q: Default::default(),
            pos_q: Default::default(),
            wait_q: Default::default(),
            last: Constant::new(((sms - 1) as u64).into()),
            pending_next: Default::default(),
        }
    }
}

impl Logic for ScanControl {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy_q, pending_q, deciding_q, pos_q, wait_q);
        // Outputs.
        self.busy.next = self.busy_q.q.val();
        self.addr.next = self.pos_q.q.val();
        if self.deciding_q.q.val() {
            self.addr.next = 0.into();
        }
        self.scanning.next = self.busy_q.q.val() & !self.deciding_q.q.val();
        self.next_addr.next = 0.into();
        if self.busy_q.q.val() & !self.deciding_q.q.val() & (self.pos_q.q.val() != self.last.val()) {
            self.next_addr.next = self.pos_q.q.val() + 1;
        }
        self.deciding.next = self.busy_q.q.val() & self.deciding_q.q.val() & (self.wait_q.q.val() == 0);
        // Next state.
        self.pending_next.next = self.pending_q.q.val() | self.trigger.val();
        self.pending_q.d.next = self.pending_next.val();
        self.restart.next = false;
        if self.busy_q.q.val() {
            if !self.deciding_q.q.val() {
                if self.pos_q.q.val() == self.last.val() {
                    self.deciding_q.d.next = true;
                } else {
                    self.pos_q.d.next = self.pos_q.q.val() + 1;
                }
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
    }
}
