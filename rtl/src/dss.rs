//! `Dss`: the Dynamic Spatial Sharing policy engine of the kernel scheduling framework
//! (thesis §5.2.4, Algorithm 1, as reconstructed in `docs/sched-framework.md`), one table entry
//! per cycle.
//!
//! Interface: `mpgpu_spec::units::sched::dss` (the reference model is
//! `mpgpu_ref::units::dss::Dss`; the co-simulation checks the two every cycle).
//! - A `trigger` pulse is latched; when idle, the engine starts a decision the next cycle (the
//!   trigger latch and scan counter are the `ScanControl` sub-block `scan`, shared with `Prio`).
//! - A decision scans entries 0, 1, .., sms-1 on consecutive cycles, naming on `next_addr` the
//!   entry it scans next cycle (the framework reads the SMST and KSRT there and registers them,
//!   so the block samples each entry as it was the cycle before), then one cycle (the scan's
//!   first hold cycle) in which it registers the live token counts of `kmax` and `kmin` (read
//!   back on `count_max`/`count_min`), one (the second) in which it registers whether the first
//!   exceeds the second by two or more (`gap_q`), then one cycle
//!   deciding: `act` = 1 (assign idle SM `act_sm` to `act_kernel`) or 2 (reserve running SM
//!   `act_sm` of `act_from` for `act_kernel`, if `gap_q`). The table writes are the
//!   framework's.
//! - Latency: sms + 3 cycles per decision (sms + 2 until the eleventh timing round); after an action (once two cycles have passed, for the
//!   framework to apply it), or a trigger during the decision, it scans again.
//! Parameters: 1..=16 SMs (`sms`); token counts are 8-bit, biased by 128.

use crate::scan::ScanControl;
pub use mpgpu_spec::units::sched::dss::{INDEX_BITS as DSS_INDEX_BITS, MAX_SMS as DSS_MAX_SMS};
use mpgpu_spec::units::sched::dss::{ACT_BITS, STATE_BITS, TOKEN_BITS};
use crate::reg::Reg;
use rust_hdl::prelude::*;

// rust-hdl's Verilog generator evaluates widths and loop bounds in Rust, so they are the spec's
// constants; a value inside `update` (an index, a bit position) it reads as a literal, so the
// sign bit of `count_diff` is spelled 8 (= TOKEN_BITS).
const _: () = assert!(TOKEN_BITS == 8, "update tests count_diff's sign bit as bit 8");

#[derive(Clone, Debug, LogicBlock)]
pub struct Dss {
    /// Clock; all state changes on its rising edge.
    pub clock: Signal<In, Clock>,
    /// A kernel entered the active queue or an SM became idle (one-cycle pulse).
    pub trigger: Signal<In, Bit>,
    /// SMST[addr].state (0 idle, 1 setup, 2 running, 3 reserved).
    pub sm_state: Signal<In, Bits<STATE_BITS>>,
    /// SMST[addr].ksr is valid.
    pub sm_ksr_valid: Signal<In, Bit>,
    /// SMST[addr].ksr.
    pub sm_ksr: Signal<In, Bits<DSS_INDEX_BITS>>,
    /// KSRT[addr] is valid.
    pub k_valid: Signal<In, Bit>,
    /// KSRT[addr].count + 128.
    pub k_count: Signal<In, Bits<TOKEN_BITS>>,
    /// KSRT[addr] has thread blocks left to issue.
    pub k_has_work: Signal<In, Bit>,
    /// KSRT[addr] runs on at least one SM.
    pub k_running: Signal<In, Bit>,
    /// KSRT[kmax].count + 128.
    pub count_max: Signal<In, Bits<TOKEN_BITS>>,
    /// KSRT[kmin].count + 128.
    pub count_min: Signal<In, Bits<TOKEN_BITS>>,
    /// A decision is under way.
    pub busy: Signal<Out, Bit>,
    /// The table entry scanned next cycle (0 if none); the one scanned now is the one named
    /// here in the cycle before.
    pub next_addr: Signal<Out, Bits<DSS_INDEX_BITS>>,
    /// Kernel with the most tokens so far (read port for `count_max`).
    pub kmax: Signal<Out, Bits<DSS_INDEX_BITS>>,
    /// Running kernel with the fewest tokens so far (read port for `count_min`).
    pub kmin: Signal<Out, Bits<DSS_INDEX_BITS>>,
    /// 0 none, 1 assign, 2 reserve.
    pub act: Signal<Out, Bits<ACT_BITS>>,
    pub act_sm: Signal<Out, Bits<DSS_INDEX_BITS>>,
    pub act_kernel: Signal<Out, Bits<DSS_INDEX_BITS>>,
    pub act_from: Signal<Out, Bits<DSS_INDEX_BITS>>,
    /// Trigger latch, scan address and decision cycle.
    scan: ScanControl,
    idle_valid: Reg<Bit>,
    idle_index: Reg<Bits<DSS_INDEX_BITS>>,
    kmax_valid: Reg<Bit>,
    kmax_index: Reg<Bits<DSS_INDEX_BITS>>,
    kmax_count: Reg<Bits<TOKEN_BITS>>,
    kmin_valid: Reg<Bit>,
    kmin_index: Reg<Bits<DSS_INDEX_BITS>>,
    kmin_count: Reg<Bits<TOKEN_BITS>>,
    /// `kmax`'s and `kmin`'s live token counts (`count_max`, `count_min`), registered every
    /// cycle but the decision: the decision compares the values of the first hold cycle.
    cmax_q: Reg<Bits<TOKEN_BITS>>,
    cmin_q: Reg<Bits<TOKEN_BITS>>,
    /// `cmax_q` exceeds `cmin_q` by two or more (registered every cycle but the decision, which
    /// reads the value of the second hold cycle, from the counts of the first, and clears it):
    /// the read through the KSRT's multiplexers and the subtraction are in separate cycles
    /// (`docs/fpga.md`, eleventh round).
    gap_q: Reg<Bit>,
    /// `kmin`'s lowest running SM (`from_valid`, `from_index`), registered as `gap_q` is: the
    /// decision reads the value of the second hold cycle, when `kmin` is final.
    from_valid_q: Reg<Bit>,
    from_index_q: Reg<Bits<DSS_INDEX_BITS>>,
    /// The decision's tests of the candidates, registered as `gap_q` is (the candidates are
    /// final in the hold cycles): an idle SM to assign to `kmax` (`assign_q`); `kmin` is a
    /// kernel other than `kmax` and no SM is idle (`reserve_q`, with `gap_q` and
    /// `from_valid_q` a reservation).
    assign_q: Reg<Bit>,
    reserve_q: Reg<Bit>,
    /// Per kernel: its lowest-index running SM seen in this scan.
    first_valid: [Reg<Bit>; DSS_MAX_SMS],
    first_index: [Reg<Bits<DSS_INDEX_BITS>>; DSS_MAX_SMS],
    /// Test-only fault: ties for kmax go to the highest index.
    tie_high: Constant<Bit>,
    ids: [Constant<Bits<DSS_INDEX_BITS>>; DSS_MAX_SMS],
    act_code: Signal<Local, Bits<ACT_BITS>>,
    from_valid: Signal<Local, Bit>,
    from_index: Signal<Local, Bits<DSS_INDEX_BITS>>,
    /// cmax_q - cmin_q, 9 bits (no wrap): the reservation needs it to be 2 or more.
    count_diff: Signal<Local, Bits<{ TOKEN_BITS + 1 }>>,
}

impl Dss {
    /// A DSS engine scanning `sms` SMs (1..=16). `broken_tie` is the test-only fault.
    pub fn new(sms: usize, broken_tie: bool) -> Self {
        assert!((1..=DSS_MAX_SMS).contains(&sms), "Dss supports 1..={DSS_MAX_SMS} SMs, not {sms}");
        Self {
            clock: Default::default(),
            trigger: Default::default(),
            sm_state: Default::default(),
            sm_ksr_valid: Default::default(),
            sm_ksr: Default::default(),
            k_valid: Default::default(),
            k_count: Default::default(),
            k_has_work: Default::default(),
            k_running: Default::default(),
            count_max: Default::default(),
            count_min: Default::default(),
            busy: Default::default(),
            next_addr: Default::default(),
            kmax: Default::default(),
            kmin: Default::default(),
            act: Default::default(),
            act_sm: Default::default(),
            act_kernel: Default::default(),
            act_from: Default::default(),
            scan: ScanControl::new(sms, true),
            idle_valid: Default::default(),
            idle_index: Default::default(),
            kmax_valid: Default::default(),
            kmax_index: Default::default(),
            kmax_count: Default::default(),
            kmin_valid: Default::default(),
            kmin_index: Default::default(),
            kmin_count: Default::default(),
            cmax_q: Default::default(),
            cmin_q: Default::default(),
            gap_q: Default::default(),
            from_valid_q: Default::default(),
            from_index_q: Default::default(),
            assign_q: Default::default(),
            reserve_q: Default::default(),
            first_valid: Default::default(),
            first_index: Default::default(),
            tie_high: Constant::new(broken_tie),
            ids: std::array::from_fn(|i| Constant::new((i as u64).into())),
            count_diff: Default::default(),
            act_code: Default::default(),
            from_valid: Default::default(),
            from_index: Default::default(),
        }
    }
}

impl Dss {
    /// Marks every input as driven from outside (a testbench or the Verilog's ports) and
    /// connects the block, as simulation and Verilog generation need.
    pub fn connect_inputs(&mut self) {
        self.clock.connect();
        self.trigger.connect();
        self.sm_state.connect();
        self.sm_ksr_valid.connect();
        self.sm_ksr.connect();
        self.k_valid.connect();
        self.k_count.connect();
        self.k_has_work.connect();
        self.k_running.connect();
        self.count_max.connect();
        self.count_min.connect();
        self.connect_all();
    }
}

impl Logic for Dss {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, idle_valid, idle_index, kmax_valid, kmax_index, kmax_count, kmin_valid, kmin_index, kmin_count, cmax_q, cmin_q, gap_q, from_valid_q, from_index_q, assign_q, reserve_q);
        self.scan.clock.next = self.clock.val();
        self.scan.trigger.next = self.trigger.val();
        for k in 0..DSS_MAX_SMS {
            self.first_valid[k].clock.next = self.clock.val();
            self.first_index[k].clock.next = self.clock.val();
            self.first_valid[k].d.next = self.first_valid[k].q.val();
            self.first_index[k].d.next = self.first_index[k].q.val();
        }
        // The lowest running SM of kmin.
        self.from_valid.next = false;
        self.from_index.next = 0.into();
        for k in 0..DSS_MAX_SMS {
            if self.kmin_index.q.val() == self.ids[k].val() {
                self.from_valid.next = self.first_valid[k].q.val();
                self.from_index.next = self.first_index[k].q.val();
            }
        }
        // Outputs.
        self.busy.next = self.scan.busy.val();
        self.next_addr.next = self.scan.next_addr.val();
        self.kmax.next = self.kmax_index.q.val();
        self.kmin.next = self.kmin_index.q.val();
        self.act_code.next = 0.into();
        self.act_sm.next = 0.into();
        self.act_kernel.next = 0.into();
        self.act_from.next = 0.into();
        // One subtraction on the carry chain (not an increment, then a compare).
        self.count_diff.next = bit_cast::<{ TOKEN_BITS + 1 }, TOKEN_BITS>(self.cmax_q.q.val()) - bit_cast::<{ TOKEN_BITS + 1 }, TOKEN_BITS>(self.cmin_q.q.val());
        if self.scan.deciding.val() {
            if self.assign_q.q.val() {
                self.act_code.next = 1.into();
                self.act_sm.next = self.idle_index.q.val();
                self.act_kernel.next = self.kmax_index.q.val();
            } else if self.reserve_q.q.val() & self.gap_q.q.val() & self.from_valid_q.q.val() {
                self.act_code.next = 2.into();
                self.act_sm.next = self.from_index_q.q.val();
                self.act_kernel.next = self.kmax_index.q.val();
                self.act_from.next = self.kmin_index.q.val();
            }
        }
        // The live counts, and their test a cycle later, registered every cycle but the
        // decision (which clears the test): a decision always follows the two hold cycles, in
        // which the candidates are already final.
        if !self.scan.deciding.val() {
            self.cmax_q.d.next = self.count_max.val();
            self.cmin_q.d.next = self.count_min.val();
            self.gap_q.d.next = !self.count_diff.val().get_bit(8) & (self.count_diff.val() > 1);
            self.from_valid_q.d.next = self.from_valid.val();
            self.from_index_q.d.next = self.from_index.val();
            self.assign_q.d.next = self.kmax_valid.q.val() & self.idle_valid.q.val();
            self.reserve_q.d.next = self.kmax_valid.q.val() & !self.idle_valid.q.val() & self.kmin_valid.q.val() & (self.kmin_index.q.val() != self.kmax_index.q.val());
        }
        self.act.next = self.act_code.val();
        self.scan.act.next = self.act_code.val() != 0;
        // Scan one entry.
        if self.scan.scanning.val() {
            if (self.sm_state.val() == 0) & !self.idle_valid.q.val() {
                self.idle_valid.d.next = true;
                self.idle_index.d.next = self.scan.addr.val();
            }
            for k in 0..DSS_MAX_SMS {
                if (self.sm_state.val() == 2) & self.sm_ksr_valid.val() & (self.sm_ksr.val() == self.ids[k].val()) & !self.first_valid[k].q.val() {
                    self.first_valid[k].d.next = true;
                    self.first_index[k].d.next = self.scan.addr.val();
                }
            }
            if self.k_valid.val()
                & self.k_has_work.val()
                & (!self.kmax_valid.q.val()
                    | (self.k_count.val() > self.kmax_count.q.val())
                    | (self.tie_high.val() & (self.k_count.val() == self.kmax_count.q.val())))
            {
                self.kmax_valid.d.next = true;
                self.kmax_index.d.next = self.scan.addr.val();
                self.kmax_count.d.next = self.k_count.val();
            }
            if self.k_valid.val() & self.k_running.val() & (!self.kmin_valid.q.val() | (self.k_count.val() < self.kmin_count.q.val())) {
                self.kmin_valid.d.next = true;
                self.kmin_index.d.next = self.scan.addr.val();
                self.kmin_count.d.next = self.k_count.val();
            }
        }
        // The end of a decision forgets the candidates (a scan starts with none).
        if self.scan.deciding.val() {
            self.idle_valid.d.next = false;
            self.idle_index.d.next = 0.into();
            self.kmax_valid.d.next = false;
            self.kmax_index.d.next = 0.into();
            self.kmax_count.d.next = 0.into();
            self.kmin_valid.d.next = false;
            self.kmin_index.d.next = 0.into();
            self.kmin_count.d.next = 0.into();
            self.gap_q.d.next = false;
            self.from_valid_q.d.next = false;
            self.from_index_q.d.next = 0.into();
            self.assign_q.d.next = false;
            self.reserve_q.d.next = false;
            for k in 0..DSS_MAX_SMS {
                self.first_valid[k].d.next = false;
                self.first_index[k].d.next = 0.into();
            }
        }
    }
}
