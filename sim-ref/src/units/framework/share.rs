//! Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling framework"):
//! an SM's holder (the kernel the policy gave it to) shares it with the other kernels that the
//! quota controller partitions, each up to its quota on that SM.
//!
//! The quotas are the framework's registers, one row per KSRT entry, written through the
//! `quota` input (`fw::QuotaWrite`: by launch handle, a value above the kernel's T_k taken as
//! T_k) and cleared when the entry retires or is admitted again. The writer gives quotas to
//! the kernels of one priority at a time (it takes the old ones away before it writes those
//! of another priority), so kernels with quotas share the holder's priority.
//!
//! The rules, all from the registers at the cycle's start:
//! - a kernel's *cap* on SM s is the most blocks of it the SM may hold: for the holder its
//!   quota (T_k when it has none); for another kernel its quota when it and the holder both
//!   have quotas and the holder has a block left after the block in flight (an SM whose holder
//!   has run out of work takes no one else's blocks); 0 otherwise;
//! - SM s may take a block when it runs, no kernel on it is over its cap (after a quota or the
//!   holder's work changed, the SM takes nothing until those blocks have gone, so the quotas,
//!   which fit the SM together, keep every block in room) and some kernel is *eligible*: below
//!   its cap and with a block left after the block in flight (whose own SM is changing and
//!   not asked, so the counts are the registers'). The first stage marks the SMs
//!   that may (and those with an eligible kernel with under two blocks left); the round
//!   robin's pick registers, with the SM it picks, that SM's eligible kernels then; the
//!   second stage takes the oldest of them, the third issues it (blocks that finish in
//!   between are not counted, and a quota written in between takes effect for the next
//!   pick: the registered set keeps the pick's second stage to an AND-OR and the oldest of
//!   16, `docs/warped-slicer.md`);
//! - a running SM whose holder has no work left but blocks on it passes to its heir
//!   ([`Framework::heir`]), the oldest kernel with work and a quota above 0 there, found when
//!   the SM event is picked, with its token (not in a cycle whose registered decision may be
//!   applied at the same edge, so that two token moves never meet).
//!
//! With no quota written every cap but the holder's is 0, and an SM runs as without slicing.

use super::*;
use mpgpu_spec::units::sched::fw::QUOTA_BITS;
use mpgpu_spec::units::sched::MAX_SMS;

pub(super) struct Share {
    /// Per KSRT entry, its quota on each SM (`None`: it has none).
    pub(super) quota: Vec<Option<[u8; MAX_SMS]>>,
    /// Blocks resident on each SM per KSRT entry (`res[s][k]`).
    pub(super) res: Vec<Vec<u8>>,
}

impl Share {
    pub(super) fn new(n: usize) -> Share {
        Share { quota: vec![None; n], res: vec![vec![0; n]; n] }
    }
}

impl Framework {
    /// The framework with slicing inside it: its SMs shared by the quotas written to it.
    pub fn with_sharing(mut self) -> Framework {
        self.share = Some(Share::new(self.params.sms));
        self
    }

    /// Whether the framework shares its SMs (slicing inside it).
    pub fn sharing(&self) -> bool {
        self.share.is_some()
    }

    /// Blocks of each kernel (KSRT entry) resident on SM `s`, under slicing.
    pub(super) fn resident(&self, s: usize) -> Option<&[u8]> {
        Some(&self.share.as_ref()?.res[s])
    }

    /// Each KSRT entry's quotas, under slicing.
    pub(super) fn quota_rows(&self) -> Option<&[Option<[u8; MAX_SMS]>]> {
        Some(&self.share.as_ref()?.quota)
    }

    /// Kernel `k`'s cap on SM `s` (module notes).
    fn cap(&self, sh: &Share, s: usize, k: usize) -> u8 {
        let e = &self.smst[s];
        let (Some(h), kr) = (e.ksr, &self.ksrt[k]) else { return 0 };
        let h = h as usize;
        if !kr.valid || e.state != SmState::Running {
            return 0;
        }
        match (sh.quota[h], sh.quota[k]) {
            (None, _) if k == h => kr.tk,
            (Some(q), _) if k == h => q[s],
            (Some(_), Some(q)) if self.left_after_flight(h) >= 1 => q[s],
            _ => 0,
        }
    }

    /// SM `s`'s heir, under slicing: when its holder (which has a quota) has no work left, the
    /// oldest other kernel with a quota above 0 on this SM and work (so that, holding it, it
    /// may issue there).
    pub(super) fn heir(&self, s: usize) -> Option<usize> {
        let sh = self.share.as_ref()?;
        let h = self.smst[s].ksr? as usize;
        sh.quota[h]?;
        (0..self.params.sms)
            .filter(|&k| k != h && self.ksrt[k].valid && sh.quota[k].is_some_and(|q| q[s] > 0) && self.ksrt[k].has_work())
            .min_by_key(|&k| self.ksrt[k].seq)
    }

    /// Whether some kernel holds more blocks on SM `s` than its cap.
    fn over_cap(&self, sh: &Share, s: usize) -> bool {
        (0..self.params.sms).any(|k| sh.res[s][k] > self.cap(sh, s, k))
    }

    /// The kernels SM `s` may take a block of, under slicing (bit k): below its cap with a
    /// block left after the block in flight, on a running SM with no kernel over its cap.
    /// (The issue asks it only of an SM the edge ahead does not change; the clock request asks
    /// it of every SM, as the RTL registers every SM's row: for the block in flight's SM both
    /// count the registers' blocks, without the block in flight.)
    pub(super) fn eligible(&self, s: usize) -> u16 {
        let Some(sh) = self.share.as_ref() else { return 0 };
        if self.smst[s].state != SmState::Running || self.over_cap(sh, s) {
            return 0;
        }
        (0..self.params.sms).filter(|&k| sh.res[s][k] < self.cap(sh, s, k) && self.left_after_flight(k) >= 1).fold(0, |m, k| m | 1 << k)
    }

    /// The oldest of the kernels in `set` (bit k), if any.
    pub(super) fn oldest(&self, set: u16) -> Option<usize> {
        (0..self.params.sms).filter(|&k| set >> k & 1 == 1).min_by_key(|&k| self.ksrt[k].seq)
    }

    /// A launch's quotas written at this edge (the `quota` input), into its KSRT entry.
    pub(super) fn write_quota(&mut self, w: &mpgpu_spec::units::sched::fw::QuotaWrite) {
        let Some(k) = (0..self.params.sms).find(|&k| self.ksrt[k].valid && self.ksrt[k].handle == w.handle) else { return };
        // (a value as its QUOTA_BITS-wide port carries it)
        let (tk, mask) = (self.ksrt[k].tk, (1u8 << QUOTA_BITS) - 1);
        if let Some(sh) = &mut self.share {
            sh.quota[k] = w.quotas.map(|q| q.map(|x| (x & mask).min(tk)));
        }
    }

    /// KSRT entry `k` retired or was admitted at this edge: it has no quotas.
    pub(super) fn clear_quota(&mut self, k: usize) {
        if let Some(sh) = &mut self.share {
            sh.quota[k] = None;
        }
    }

    /// A block of kernel `k` left SM `sm` (it finished or was saved): the SM must hold one.
    pub(super) fn block_left(&mut self, sm: u8, k: u8, what: &str) {
        let on = self.smst[sm as usize].ksr;
        match &mut self.share {
            Some(sh) => {
                let r = sh.res.get_mut(sm as usize).and_then(|r| r.get_mut(k as usize)).filter(|r| **r > 0);
                let r = r.unwrap_or_else(|| panic!("a block of kernel {k} was {what} on SM {sm}, which holds none of that kernel's"));
                *r -= 1;
            }
            None => assert!(on == Some(k), "a block of kernel {k} was {what} on SM {sm}, whose kernel is {on:?}"),
        }
    }
}
