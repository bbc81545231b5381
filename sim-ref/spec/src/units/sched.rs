//! Parameters and table formats of the kernel scheduling framework
//! (spec/scheduling-framework.md §3.1-3.3): the SM Status Table (SMST), the Kernel Status
//! Register Table (KSRT) and the Dynamic Spatial Sharing policy engine. The reference model and
//! the RTL both size their tables from [`SchedParams`].

use serde::Serialize;

/// The framework's sizing: N_SM SMs (so N_SM KSRT entries, active-queue slots and PTBQs) and
/// T_max thread blocks per SM (each PTBQ holds N_SM * T_max entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SchedParams {
    pub sms: usize,
    pub tmax: usize,
}

/// Largest N_SM the RTL supports (KSR indices fit in 6 bits).
pub const MAX_SMS: usize = 64;

impl SchedParams {
    pub fn new(sms: usize, tmax: usize) -> Result<SchedParams, String> {
        if !(1..=MAX_SMS).contains(&sms) {
            return Err(format!("scheduling framework: {sms} SMs is out of range (expected 1..={MAX_SMS})"));
        }
        if !(1..=64).contains(&tmax) {
            return Err(format!("scheduling framework: T_max {tmax} is out of range (expected 1..=64)"));
        }
        Ok(SchedParams { sms, tmax })
    }

    /// Bits of an SM or KSR index.
    pub fn index_bits(&self) -> u32 {
        crate::unit::clog2(self.sms as u64)
    }

    /// Entries of one preempted-thread-block queue.
    pub fn ptbq_entries(&self) -> usize {
        self.sms * self.tmax
    }

    /// Cycles of one DSS decision: the serial scan of the SMST and KSRT (one entry per cycle),
    /// then one cycle to act on what it found.
    pub fn dss_decision_cycles(&self) -> usize {
        self.sms + 1
    }
}

/// SM states (the thesis's Idle, Running, Reserved, with Setup between Idle and Running).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SmState {
    Idle,
    Setup,
    Running,
    /// Preemption requested or in progress; `next` names the kernel the SM goes to.
    Reserved,
}

/// One SMST entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SmEntry {
    pub state: SmState,
    /// KSR index of the kernel the SM runs (or is being taken from).
    pub ksr: Option<u8>,
    /// KSR index of the kernel a reserved SM goes to.
    pub next: Option<u8>,
    pub running_tbs: u8,
}

impl Default for SmEntry {
    fn default() -> Self {
        SmEntry { state: SmState::Idle, ksr: None, next: None, running_tbs: 0 }
    }
}

/// The policy-relevant part of one KSRT entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KsrEntry {
    pub valid: bool,
    /// DSS tokens: the SM budget, negative when in debt.
    pub count: i8,
    /// Thread blocks left to issue (new ones, or preempted ones waiting in its PTBQ).
    pub has_work: bool,
    /// SMs in the Running state that run this kernel.
    pub running_sms: u8,
}
