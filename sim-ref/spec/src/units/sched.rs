//! Parameters and table formats of the kernel scheduling framework
//! (thesis §5.2.3; `docs/sched-framework.md`): the SM Status Table (SMST), the Kernel Status
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

/// SMs the framework supports, and so its KSRT entries (contexts), SMST entries and PTBQs: the
/// one definition every block, engine and model sizes itself from (`dss`, `prio` and `fw`
/// re-export it). A smaller GPU uses the first `sms` entries.
pub const MAX_SMS: usize = 16;
/// Bits of an SM or KSR index.
pub const INDEX_BITS: usize = 4;

const _: () = assert!(1 << INDEX_BITS == MAX_SMS);

/// A scheduling policy as the framework's blocks take it, and its code on the wire (the `mode`
/// parameter of the RTL blocks, the priority engine's 2-bit `mode` constant). The model's
/// `Policy` maps onto it (Equal Spatial Sharing is DSS with equal tokens).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PolicyCode {
    /// First come, first served: the priority engine ranks kernels by admission age.
    Fcfs = 0,
    /// Non-preemptive priority queues.
    Npq = 1,
    /// Preemptive priority, exclusive access.
    PpqExclusive = 2,
    /// Preemptive priority, shared access.
    PpqShared = 3,
    /// Dynamic Spatial Sharing (and Equal Spatial Sharing): the DSS engine decides.
    Dss = 4,
}

impl PolicyCode {
    /// Every policy, in code order.
    pub const ALL: [PolicyCode; 5] = [PolicyCode::Fcfs, PolicyCode::Npq, PolicyCode::PpqExclusive, PolicyCode::PpqShared, PolicyCode::Dss];
    /// The policies of the priority engine (codes 0..=3, its 2-bit `mode`).
    pub const PRIORITY: [PolicyCode; 4] = [PolicyCode::Fcfs, PolicyCode::Npq, PolicyCode::PpqExclusive, PolicyCode::PpqShared];

    /// The code on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The policy a code stands for (`None` above 4).
    pub fn from_code(c: u8) -> Option<PolicyCode> {
        PolicyCode::ALL.get(c as usize).copied()
    }

    /// Whether the DSS engine decides (else the priority engine).
    pub fn uses_dss(self) -> bool {
        self == PolicyCode::Dss
    }

    /// Whether the policy preempts: the priority engine may reserve a running SM (PPQ).
    pub fn preempts(self) -> bool {
        matches!(self, PolicyCode::PpqExclusive | PolicyCode::PpqShared)
    }

    /// The mode the priority engine is built in under this policy: the policy itself, or,
    /// under DSS (where that engine sees no trigger and stays idle), PPQ shared, which keeps
    /// all of its logic.
    pub fn prio_engine_mode(self) -> PolicyCode {
        if self.uses_dss() {
            PolicyCode::PpqShared
        } else {
            self
        }
    }
}

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
    /// one cycle to read the live token counts of its candidates, one to compare them (since
    /// the eleventh timing round, 2026-11-25), then one cycle to act.
    pub fn dss_decision_cycles(&self) -> usize {
        self.sms + 3
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

impl SmState {
    /// The state's code on the wire (`dss::STATE_*`).
    pub fn code(self) -> u8 {
        match self {
            SmState::Idle => dss::STATE_IDLE,
            SmState::Setup => dss::STATE_SETUP,
            SmState::Running => dss::STATE_RUNNING,
            SmState::Reserved => dss::STATE_RESERVED,
        }
    }
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

/// The DSS engine as a block: its table read ports and its decisions.
pub mod dss {
    use serde::Serialize;

    /// SMs (and KSRT entries) the DSS block supports; a smaller GPU scans only its first
    /// `sms` entries.
    pub use super::{INDEX_BITS, MAX_SMS};
    /// Token counts travel biased by this much, so that hardware compares them unsigned.
    pub const COUNT_BIAS: i16 = 128;
    /// Bits of a token count (two's complement, or biased by [`COUNT_BIAS`] on the engine's
    /// ports).
    pub const TOKEN_BITS: usize = 8;
    /// Bits of an SMST state code.
    pub const STATE_BITS: usize = 2;
    /// Bits of an action code ([`Act::code`]).
    pub const ACT_BITS: usize = 2;

    /// SMST state codes on the wire.
    pub const STATE_IDLE: u8 = 0;
    pub const STATE_SETUP: u8 = 1;
    pub const STATE_RUNNING: u8 = 2;
    pub const STATE_RESERVED: u8 = 3;

    /// Sampled every cycle. The table entries are the ones at the address the block drove on
    /// `Out::next_addr` in the cycle before (the entry it scans now); the live counts are read
    /// at the addresses it drives in the same cycle (`Out::kmax`, `Out::kmin`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct In {
        /// A kernel entered the active queue, or an SM became idle.
        pub trigger: bool,
        /// SMST[addr]
        pub sm_state: u8,
        pub sm_ksr_valid: bool,
        pub sm_ksr: u8,
        /// KSRT[addr]
        pub k_valid: bool,
        pub k_count: i8,
        pub k_has_work: bool,
        pub k_running: bool,
        /// KSRT[kmax].count and KSRT[kmin].count, read live; the block uses them in the cycle
        /// between its scan and its decision (the candidates are final then) and registers
        /// whether they differ by two or more for the decision.
        pub count_max: i8,
        pub count_min: i8,
    }

    /// What the block decided.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub enum Act {
        #[default]
        None,
        /// Give idle SM `sm` to kernel `kernel` (setup, then running); its count drops by one.
        Assign,
        /// Reserve running SM `sm` of kernel `from` for `kernel`; a token moves from `kernel`
        /// to `from`.
        Reserve,
    }

    impl Act {
        /// The 2-bit code on the wire: 0 none, 1 assign, 2 reserve.
        pub fn code(self) -> u8 {
            match self {
                Act::None => 0,
                Act::Assign => 1,
                Act::Reserve => 2,
            }
        }

        /// The action a 2-bit code stands for (3 is unused and reads as none).
        pub fn from_code(c: u64) -> Act {
            match c {
                1 => Act::Assign,
                2 => Act::Reserve,
                _ => Act::None,
            }
        }
    }

    /// Driven every cycle.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct Out {
        pub busy: bool,
        /// The table entry the block scans next cycle (0 when it scans none), from the registers
        /// only. The entry it scans this cycle is the one this port named in the cycle before:
        /// a framework with registered table reads reads at `next_addr` and registers the entry;
        /// one with combinational reads registers `next_addr` and reads there.
        pub next_addr: u8,
        /// Current candidates (read ports for the live counts).
        pub kmax: u8,
        pub kmin: u8,
        pub act: Act,
        pub act_sm: u8,
        pub act_kernel: u8,
        pub act_from: u8,
    }
}

/// The scan engine of the priority policies (FCFS, NPQ, PPQ exclusive and shared): the same
/// serial SMST/KSRT scan as the DSS engine, ranking kernels by admission age or by priority.
pub mod prio {
    use serde::Serialize;

    pub use super::dss::{Act, MAX_SMS, STATE_IDLE, STATE_RESERVED, STATE_RUNNING, STATE_SETUP};

    /// Bits of a priority.
    pub const PRIORITY_BITS: usize = 4;
    /// Bits of an admission age (admission order modulo 2^16; the ages of active kernels are
    /// compared in this window).
    pub const AGE_BITS: usize = 16;
    /// Bits of the engine's `mode` (a [`PolicyCode::PRIORITY`](super::PolicyCode::PRIORITY) code).
    pub const MODE_BITS: usize = 2;

    /// The engine's modes: [`PolicyCode::PRIORITY`](super::PolicyCode::PRIORITY).
    pub use super::PolicyCode;

    /// Sampled every cycle; table entries at the address the block drove on `Out::next_addr` in
    /// the cycle before (as the DSS engine's), the
    /// SMST entry's kernel read through a second KSRT port.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct In {
        pub trigger: bool,
        /// SMST[addr]
        pub sm_state: u8,
        pub sm_ksr_valid: bool,
        pub sm_ksr: u8,
        /// KSRT[SMST[addr].ksr]: priority and age of the kernel running on the SM.
        pub smk_priority: u8,
        pub smk_age: u16,
        /// KSRT[addr]
        pub k_valid: bool,
        pub k_has_work: bool,
        pub k_priority: u8,
        pub k_age: u16,
        /// The kernel could use more SMs than it has or is getting (PPQ preempts only then).
        pub k_wants_more: bool,
    }

    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct Out {
        pub busy: bool,
        /// As the DSS engine's (`dss::Out::next_addr`).
        pub next_addr: u8,
        pub act: Act,
        pub act_sm: u8,
        pub act_kernel: u8,
        pub act_from: u8,
    }
}

/// The whole framework as the rest of the GPU sees it (thesis §5.2.3; the cycle contract in
/// `docs/sched-framework.md`): kernel launch commands from the command buffers, thread-block
/// issue to and completion from the SM driver, preemption requests and completions (saved
/// blocks), kernel retirement. One cycle's `In` is sampled and its `Out` driven in the same
/// cycle; the tables change at the clock edge.
///
/// Widths all follow from [`MAX_SMS`] and [`MAX_TMAX`](fw::MAX_TMAX): the RTL
/// holds N_SM = 16 KSRT entries (one per context: a kernel needs at least one SM, so no more
/// than N_SM run at once), 16 SMST entries and 16 PTBQs of N_SM x T_max = 256 entries each; a
/// smaller GPU uses the first `sms` of them.
pub mod fw {
    use serde::Serialize;

    /// SMs, KSRT entries (contexts) and PTBQs; bits of an SM or KSR index.
    pub use super::{INDEX_BITS, MAX_SMS};
    /// Largest T_max (thread blocks an SM holds).
    pub const MAX_TMAX: usize = 16;
    /// Bits of a count of resident blocks (0..=MAX_TMAX).
    pub const TBS_PER_SM_BITS: usize = 5;
    /// Entries of one PTBQ: N_SM x T_max.
    pub const PTBQ_ENTRIES: usize = MAX_SMS * MAX_TMAX;
    /// Bits of a PTBQ pointer.
    pub const PTBQ_PTR_BITS: usize = 8;
    /// Bits of a PTBQ occupancy (0..=PTBQ_ENTRIES).
    pub const PTBQ_LEN_BITS: usize = 9;
    /// Bits of an address into the PTBQ memory (queue index, then entry).
    pub const PTBQ_ADDR_BITS: usize = INDEX_BITS + PTBQ_PTR_BITS;
    /// Bits of a thread-block index and of a grid's block count.
    pub const TB_BITS: usize = 20;
    /// Largest grid the framework takes.
    pub const MAX_GRID_BLOCKS: u64 = (1 << TB_BITS) - 1;
    /// Bits of a save slot: where in its kernel's save area a preempted block's context is
    /// (one slot per block that can be saved at once, N_SM x T_max, so as wide as a PTBQ
    /// pointer). The thesis's PTBQ entry is {TB id, stack pointer} (§5.2.3); the slot is that
    /// stack pointer.
    pub const SLOT_BITS: usize = PTBQ_PTR_BITS;
    /// Bits of a PTBQ entry: the block index, then its save slot above it.
    pub const PTBQ_ENTRY_BITS: usize = TB_BITS + SLOT_BITS;
    /// Bits of a launch's handle (the command processor's name for it).
    pub const HANDLE_BITS: usize = 16;
    pub use super::prio::{AGE_BITS, PRIORITY_BITS};

    const _: () = assert!(1 << PTBQ_PTR_BITS == PTBQ_ENTRIES);
    const _: () = assert!(MAX_TMAX < 1 << TBS_PER_SM_BITS);

    /// A kernel launch as a command buffer presents it.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct KernelCmd {
        /// The command processor's name for the launch (HANDLE_BITS).
        pub handle: u16,
        /// Thread blocks in the grid (1..=MAX_GRID_BLOCKS).
        pub tbs: u32,
        /// T_k: blocks of this kernel an SM holds (the occupancy rule; 1..=MAX_TMAX).
        pub tk: u8,
        /// Priority (PRIORITY_BITS; larger ones saturate).
        pub priority: u8,
        /// DSS tokens (the priority policies keep but ignore them). For Equal Spatial Sharing
        /// the command processor gives each process floor(N_SM / N_p), one more to the first
        /// N_SM mod N_p processes.
        pub tokens: i8,
    }

    /// One cycle's inputs.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct In {
        /// The oldest pending launch, held until `Out::cmd_taken`.
        pub cmd: Option<KernelCmd>,
        /// A block finished.
        pub tb_done: Option<TbDone>,
        /// A block's context has been saved (context switch).
        pub tb_saved: Option<TbSaved>,
        /// The SMs (one bit each) that report no room for another block of their kernel now:
        /// an SM whose bit is set is not ready for an issue, whatever T_k allows. Under the
        /// block allocation no bit is ever set (T_k is the SM's own occupancy rule); under
        /// Zorua (and WLM) it is the SM's coordinator's count of free warp slots that decides
        /// (`docs/zorua.md`, "Under the scheduling framework").
        pub full: u16,
        /// Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling
        /// framework"): a launch's quotas, written into its KSRT entry at this edge (none if
        /// no valid entry holds the handle). Kept by the framework until the next write for
        /// the launch, its retirement or its entry's next admission; a framework built without
        /// sharing ignores them.
        pub quota: Option<QuotaWrite>,
    }

    /// Bits of a quota (blocks of a kernel on one SM, 0..=MAX_TMAX).
    pub const QUOTA_BITS: usize = TBS_PER_SM_BITS;

    /// One launch's quotas (slicing inside the framework): `quotas[s]` is the most blocks of
    /// it SM s may hold while it shares the SM (QUOTA_BITS wide, as the port carries it; a
    /// value above the kernel's T_k is taken as T_k); `None` takes its quotas away (the SM's holder then holds up to T_k and shares
    /// with no one). The writer gives quotas to the kernels of one priority at a time: it
    /// takes the old ones away before it writes those of another priority.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct QuotaWrite {
        pub handle: u16,
        pub quotas: Option<[u8; MAX_SMS]>,
    }

    /// A block that finished: its SM, and its kernel (the KSRT entry the block's issue named,
    /// [`TbIssue::kernel`]), so that an SM may hold blocks of more than one kernel
    /// (`docs/warped-slicer.md`, "Left for later").
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    pub struct TbDone {
        pub sm: u8,
        pub kernel: u8,
    }

    /// A block whose context has been saved (context switch): its SM, its kernel (as
    /// [`TbDone::kernel`]), its index in the grid, and the save slot (SLOT_BITS) of the
    /// kernel's save area it went to; the kernel's PTBQ entry keeps the index and the slot.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    pub struct TbSaved {
        pub sm: u8,
        pub kernel: u8,
        pub tb: u32,
        pub slot: u8,
    }

    /// One block to start.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
    pub struct TbIssue {
        pub sm: u8,
        /// The KSRT entry of the block's kernel: the SM names it when the block finishes or is
        /// saved ([`TbDone`], [`TbSaved`]).
        pub kernel: u8,
        pub handle: u16,
        pub tb: u32,
        /// The block comes from the PTBQ: restore its saved context.
        pub restore: bool,
        /// For a restore, the save slot its PTBQ entry carries (0 for a new block).
        pub slot: u8,
    }

    /// One cycle's outputs.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct Out {
        /// Work is under way: a policy decision, an SM in setup or being preempted, an SM to
        /// release, a block to issue. A function of the registers only. While it is low and no
        /// input is present a cycle changes nothing, so the GPU gates the framework's clock
        /// (the model and the RTL alike).
        pub busy: bool,
        /// `In::cmd` enters the active queue at this edge.
        pub cmd_taken: bool,
        /// The block issued at the last edge (the outputs are registered: the pick of three
        /// cycles before, popped from its PTBQ or counted as its kernel's next new block at
        /// that edge). The SM takes it before a preemption output in the same cycle: a block
        /// picked just before its SM's reservation can arrive with the preemption.
        pub issue: Option<TbIssue>,
        /// Start taking this SM from its kernel (context switch: save its blocks as they
        /// drain; draining: nothing to do, it gets no more blocks).
        pub preempt: Option<u8>,
        /// This launch has finished and leaves the KSRT at this edge.
        pub retired: Option<u16>,
    }

    /// One KSRT entry as the co-simulation compares it (a copy of the registers, plus the
    /// PTBQ's occupancy). Invalid entries read as all zero.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct KsrState {
        pub valid: bool,
        pub handle: u16,
        pub tbs: u32,
        pub next_tb: u32,
        pub done_tbs: u32,
        pub tk: u8,
        pub priority: u8,
        pub age: u16,
        /// DSS tokens.
        pub count: i8,
        /// Blocks waiting in the kernel's PTBQ.
        pub ptbq_len: u16,
        /// owned x T_k: the SMs the kernel has or is getting (setup, running, or reserved for
        /// it) times its T_k, and its blocks left to issue (new or preempted). The model
        /// derives them; the RTL keeps them in registers (the priority engine's "wants more
        /// SMs" compares them), so they are compared too.
        pub cap: u16,
        pub rem: u32,
    }

    /// One SMST entry as the co-simulation compares it (`state` is the `dss::STATE_*` code;
    /// an absent index reads as 0 with its valid bit clear).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct SmState {
        pub state: u8,
        pub ksr_valid: bool,
        pub ksr: u8,
        pub next_valid: bool,
        pub next: u8,
        pub running_tbs: u8,
    }

    /// The framework's architectural state: what the co-simulation compares every cycle
    /// besides the outputs.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct State {
        pub smst: Vec<SmState>,
        pub ksrt: Vec<KsrState>,
        /// Admission counter (the next kernel's age).
        pub admitted: u16,
        /// Round-robin pointer of the SM driver's issue.
        pub issue_ptr: u8,
        /// The pipeline registers between a cycle's decisions and the cycle that applies them.
        pub pipe: Pipe,
        /// Slicing inside the framework (empty without it): the blocks of each KSRT entry on
        /// each SM (`resident[s][k]`), and each entry's quotas on every SM (`None`: none).
        pub resident: Vec<Vec<u8>>,
        pub quotas: Vec<Option<Vec<u8>>>,
    }

    /// The framework's pipeline registers (`docs/sched-framework.md`, "The cycle contract"): what one
    /// cycle decided for the next to apply.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
    pub struct Pipe {
        /// The policy engine's trigger, raised the cycle before.
        pub trigger: bool,
        /// The engine's decision of the cycle before (`dss::Act` code; 0 none) and its SM,
        /// kernel and the kernel a reservation takes the SM from (0 when there is none).
        pub dec_act: u8,
        pub dec_sm: u8,
        pub dec_kernel: u8,
        pub dec_from: u8,
        /// The decision checked in the cycle before (it held), applied in this one: its
        /// `dss::Act` code (0 none), SM, kernel and the kernel a reservation takes from.
        pub app_act: u8,
        pub app_sm: u8,
        pub app_kernel: u8,
        pub app_from: u8,
        /// The block the issue issues at the edge that ends this cycle (on the issue ports in
        /// the next): the SM the round robin picked two cycles before, and its kernel (read in
        /// the pick's second stage).
        pub grant_valid: bool,
        pub grant_sm: u8,
        pub grant_kernel: u8,
        /// The pick's second stage: the SM the round robin picked in the cycle before.
        pub pick_valid: bool,
        pub pick_sm: u8,
        /// Under slicing, the kernels that SM could take a block of when it was picked (bit k),
        /// registered with the pick: the second stage takes the oldest of them.
        pub pick_el: u16,
        /// The command presented in the cycle before and not taken then (admission takes it in
        /// this cycle if its entry is free): its handle and grid size.
        pub cmd_valid: bool,
        pub cmd_handle: u16,
        pub cmd_tbs: u32,
        /// The SM event picked the cycle before: its SM, and whether it goes to setup (else
        /// idle).
        pub ev_valid: bool,
        pub ev_sm: u8,
        pub ev_setup: bool,
        /// Under slicing, the event is a handover (a running SM with blocks), and the heir it
        /// found (none: it does nothing).
        pub ev_hand: bool,
        pub ev_heir: Option<u8>,
        /// The KSRT entry a command may enter: the lowest that was free in the cycle before and
        /// named by no SM in the cycle before that (`named`).
        pub free_valid: bool,
        pub free: u8,
        /// The issue's first stage: the SMs that could take a block (bit s), from the
        /// registers of the cycle before, and those of them whose kernel had fewer than two
        /// blocks left after the block then in flight.
        pub ready: u16,
        pub last: u16,
        /// The SM event's first stage: the SMs found with an event (no blocks, and running a
        /// kernel with no work, or reserved) from the registers of the cycle before.
        pub ev_ready: u16,
        /// Of those, the reserved SMs whose next kernel had work then (bit s): the pick sends
        /// such an SM to setup, any other reserved one idle (its kernel's "has work" is read a
        /// cycle before the pick, `docs/fpga.md`, seventh round).
        pub ev_work: u16,
        /// The KSRT entries some SM named (as its kernel or its next kernel) in the cycle
        /// before; the admission entry's pick skips them.
        pub named: u16,
        /// The kernels that could use more SMs (bit k: valid, owned x T_k < blocks left) in
        /// the cycle before; the priority engine reads this for the entry it scans.
        pub wants: u16,
        /// The block saved in the cycle before (`In::tb_saved`), with its kernel (the saving
        /// SM's then), its index and its save slot: it enters the kernel's PTBQ, and its blocks
        /// left, at the edge that ends this cycle.
        pub saved_valid: bool,
        pub saved_kernel: u8,
        pub saved_tb: u32,
        pub saved_slot: u8,
        /// The block finished in the cycle before (`In::tb_done`), with its kernel (the
        /// finishing SM's then): it is counted done at the edge that ends this cycle, and
        /// retires its kernel in this cycle if it was the kernel's last.
        pub done_valid: bool,
        pub done_kernel: u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_codes_round_trip() {
        for (c, p) in PolicyCode::ALL.iter().enumerate() {
            assert_eq!(p.code() as usize, c);
            assert_eq!(PolicyCode::from_code(c as u8), Some(*p));
        }
        assert_eq!(PolicyCode::from_code(5), None);
        assert!(PolicyCode::PRIORITY.iter().all(|p| !p.uses_dss() && p.code() < 4 && p.prio_engine_mode() == *p));
        assert_eq!(PolicyCode::Dss.prio_engine_mode(), PolicyCode::PpqShared);
    }
}

// The engines' and the framework's ports (`crate::port`), in wire order.

/// A token count as the DSS engine's ports carry it: biased, so compared unsigned.
pub fn biased(count: i8) -> u16 {
    (count as i16 + dss::COUNT_BIAS) as u16
}

crate::wires! { dss::In as i {
    /// A kernel entered the active queue, or an SM became idle.
    trigger(1) = i.trigger,
    /// SMST[addr]: state, kernel valid, kernel.
    sm_state(dss::STATE_BITS) = i.sm_state,
    sm_ksr_valid(1) = i.sm_ksr_valid,
    sm_ksr(INDEX_BITS) = i.sm_ksr,
    /// KSRT[addr]: valid, tokens (biased), work left, running.
    k_valid(1) = i.k_valid,
    k_count(dss::TOKEN_BITS) = biased(i.k_count),
    k_has_work(1) = i.k_has_work,
    k_running(1) = i.k_running,
    /// The live token counts of the candidates (biased).
    count_max(dss::TOKEN_BITS) = biased(i.count_max),
    count_min(dss::TOKEN_BITS) = biased(i.count_min),
} }

crate::wires! { dss::Out as o {
    /// A decision is under way.
    busy(1) = o.busy,
    /// The table entry scanned next cycle.
    next_addr(INDEX_BITS) = o.next_addr,
    /// The candidates whose live counts are read: most and fewest tokens.
    kmax(INDEX_BITS) = o.kmax,
    kmin(INDEX_BITS) = o.kmin,
    /// The action (none, assign, reserve), its SM, kernel and the kernel it takes from.
    act(dss::ACT_BITS) = o.act.code(),
    act_sm(INDEX_BITS) = o.act_sm,
    act_kernel(INDEX_BITS) = o.act_kernel,
    act_from(INDEX_BITS) = o.act_from,
} unpack {
    dss::Out { busy: busy != 0, next_addr: next_addr as u8, kmax: kmax as u8, kmin: kmin as u8, act: dss::Act::from_code(act), act_sm: act_sm as u8, act_kernel: act_kernel as u8, act_from: act_from as u8 }
} }

crate::wires! { prio::In as i {
    /// A kernel entered the active queue, or an SM became idle.
    trigger(1) = i.trigger,
    /// SMST[addr]: state, kernel valid, kernel.
    sm_state(dss::STATE_BITS) = i.sm_state,
    sm_ksr_valid(1) = i.sm_ksr_valid,
    sm_ksr(INDEX_BITS) = i.sm_ksr,
    /// Priority and age of the kernel running on that SM.
    smk_priority(prio::PRIORITY_BITS) = i.smk_priority,
    smk_age(prio::AGE_BITS) = i.smk_age,
    /// KSRT[addr]: valid, work left, priority, age, wants more SMs.
    k_valid(1) = i.k_valid,
    k_has_work(1) = i.k_has_work,
    k_priority(prio::PRIORITY_BITS) = i.k_priority,
    k_age(prio::AGE_BITS) = i.k_age,
    k_wants_more(1) = i.k_wants_more,
} }

crate::wires! { prio::Out as o {
    /// A decision is under way.
    busy(1) = o.busy,
    /// The table entry scanned next cycle.
    next_addr(INDEX_BITS) = o.next_addr,
    /// The action (none, assign, reserve), its SM, kernel and the kernel it takes from.
    act(dss::ACT_BITS) = o.act.code(),
    act_sm(INDEX_BITS) = o.act_sm,
    act_kernel(INDEX_BITS) = o.act_kernel,
    act_from(INDEX_BITS) = o.act_from,
} unpack {
    prio::Out { busy: busy != 0, next_addr: next_addr as u8, act: dss::Act::from_code(act), act_sm: act_sm as u8, act_kernel: act_kernel as u8, act_from: act_from as u8 }
} }

crate::wires! { fw::In as i {
    /// A launch command is presented (held until `cmd_taken`): handle, blocks, T_k,
    /// priority, DSS tokens.
    cmd_valid(1) = i.cmd.is_some(),
    cmd_handle(fw::HANDLE_BITS) = i.cmd.map_or(0, |c| c.handle),
    cmd_tbs(fw::TB_BITS) = i.cmd.map_or(0, |c| c.tbs),
    cmd_tk(fw::TBS_PER_SM_BITS) = i.cmd.map_or(0, |c| c.tk),
    cmd_priority(fw::PRIORITY_BITS) = i.cmd.map_or(0, |c| c.priority),
    cmd_tokens(dss::TOKEN_BITS) = i.cmd.map_or(0, |c| c.tokens),
    /// A block of kernel `done_k` (the KSRT entry its issue named) finished on SM `done_sm`.
    done_valid(1) = i.tb_done.is_some(),
    done_sm(INDEX_BITS) = i.tb_done.map_or(0, |d| d.sm),
    done_k(INDEX_BITS) = i.tb_done.map_or(0, |d| d.kernel),
    /// Block `saved_tb` of kernel `saved_k` was saved from SM `saved_sm` in save slot
    /// `saved_slot`.
    saved_valid(1) = i.tb_saved.is_some(),
    saved_sm(INDEX_BITS) = i.tb_saved.map_or(0, |s| s.sm),
    saved_k(INDEX_BITS) = i.tb_saved.map_or(0, |s| s.kernel),
    saved_tb(fw::TB_BITS) = i.tb_saved.map_or(0, |s| s.tb),
    saved_slot(fw::SLOT_BITS) = i.tb_saved.map_or(0, |s| s.slot),
    /// The SMs with no room for another block of their kernel now, one bit each.
    full(MAX_SMS) = i.full,
    /// Slicing inside the framework (a block built with sharing): launch `quota_handle`'s
    /// quotas, written into its KSRT entry, `quota<s>` on SM s (taken as T_k when larger) if
    /// `quota_on`, else none.
    quota_valid(1) = i.quota.is_some(),
    quota_handle(fw::HANDLE_BITS) = i.quota.map_or(0, |q| q.handle),
    quota_on(1) = i.quota.is_some_and(|q| q.quotas.is_some()),
    quota # MAX_SMS (fw::QUOTA_BITS) = |k| i.quota.and_then(|q| q.quotas).map_or(0, |q| q[k]),
} }

crate::wires! { fw::Out as o {
    /// Work is under way (from the registers only).
    busy(1) = o.busy,
    /// The presented launch enters the active queue at this edge.
    cmd_taken(1) = o.cmd_taken,
    /// The block issued at the last edge: SM, kernel (KSRT entry), handle, block, restore,
    /// save slot.
    issue_valid(1) = o.issue.is_some(),
    issue_sm(INDEX_BITS) = o.issue.map_or(0, |i| i.sm); care o.issue.is_some(),
    issue_k(INDEX_BITS) = o.issue.map_or(0, |i| i.kernel); care o.issue.is_some(),
    issue_handle(fw::HANDLE_BITS) = o.issue.map_or(0, |i| i.handle); care o.issue.is_some(),
    issue_tb(fw::TB_BITS) = o.issue.map_or(0, |i| i.tb); care o.issue.is_some(),
    issue_restore(1) = o.issue.is_some_and(|i| i.restore); care o.issue.is_some(),
    issue_slot(fw::SLOT_BITS) = o.issue.map_or(0, |i| i.slot); care o.issue.is_some(),
    /// Start taking SM `preempt_sm` from its kernel.
    preempt_valid(1) = o.preempt.is_some(),
    preempt_sm(INDEX_BITS) = o.preempt.unwrap_or(0); care o.preempt.is_some(),
    /// Launch `retired_handle` has finished and leaves the KSRT.
    retired_valid(1) = o.retired.is_some(),
    retired_handle(fw::HANDLE_BITS) = o.retired.unwrap_or(0); care o.retired.is_some(),
} unpack {
    fw::Out {
        busy: busy != 0,
        cmd_taken: cmd_taken != 0,
        issue: (issue_valid != 0).then(|| fw::TbIssue { sm: issue_sm as u8, kernel: issue_k as u8, handle: issue_handle as u16, tb: issue_tb as u32, restore: issue_restore != 0, slot: issue_slot as u8 }),
        preempt: (preempt_valid != 0).then_some(preempt_sm as u8),
        retired: (retired_valid != 0).then_some(retired_handle as u16),
    }
} }
