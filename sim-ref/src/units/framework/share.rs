//! Slicing inside the framework (`docs/warped-slicer.md`, "Inside the scheduling framework"):
//! an SM's holder (the kernel the policy gave it to) shares it with the other kernels of its
//! priority that the quota controller partitions, each up to its quota on that SM.
//!
//! The rules, all from the registers at the cycle's start:
//! - a kernel's *cap* on SM s is the most blocks of it the SM may hold: for the holder its quota
//!   (T_k when the controller gave it none); for another kernel its quota when it and the
//!   holder both have quotas, it has the holder's priority and the holder has work left (an SM
//!   whose holder has run out of work takes no one else's blocks, drains and is released as
//!   the framework releases any SM); 0 otherwise; never more than the kernel's T_k;
//! - an SM takes a block of the oldest kernel below its cap with a block left, unless some
//!   kernel on it is over its cap (after a quota changed: the SM takes nothing until those
//!   blocks have gone, so the quotas, which fit the SM together, keep every block in room).
//!
//! - a running SM whose holder has no work left but blocks on it passes to its heir
//!   ([`Framework::heir`]), the oldest kernel with work that may share it, with its token.
//!
//! With no quota written every cap but the holder's is 0, and an SM runs as without slicing.
//! The quota table is the controller's to write between cycles ([`QuotaTable`]); the
//! framework reads it as it reads a register. The RTL (`rtl/src/sched.rs`) does not share
//! an SM yet.

use super::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Per launch (by handle), its quota on every SM (`u32::MAX`: none but its T_k), as the quota
/// controller last wrote it; a launch without an entry has no quota.
pub type QuotaTable = Arc<Mutex<HashMap<u16, Vec<u32>>>>;

pub(super) struct Share {
    pub(super) quotas: QuotaTable,
    /// Blocks resident on each SM per KSRT entry (`res[s][k]`).
    pub(super) res: Vec<Vec<u8>>,
}

type Quotas = HashMap<u16, Vec<u32>>;

impl Framework {
    /// The framework with slicing inside it: its SMs shared by the quotas in `quotas`.
    pub fn with_sharing(mut self, quotas: QuotaTable) -> Framework {
        let n = self.params.sms;
        self.share = Some(Share { quotas, res: vec![vec![0; n]; n] });
        self
    }

    /// Blocks of each kernel (KSRT entry) resident on SM `s`, under slicing.
    pub(super) fn resident(&self, s: usize) -> Option<&[u8]> {
        Some(&self.share.as_ref()?.res[s])
    }

    /// The quota table's contents, locked for this cycle's reads (under slicing).
    pub(super) fn quotas(&self) -> Option<std::sync::MutexGuard<'_, Quotas>> {
        Some(self.share.as_ref()?.quotas.lock().expect("the quota table's writer did not panic"))
    }

    /// A kernel's quota on SM `s` as the table holds it (`None`: it has none).
    fn quota_on(q: &Quotas, kr: &Ksr, s: usize) -> Option<u32> {
        q.get(&kr.handle).map(|v| v.get(s).copied().unwrap_or(0))
    }

    /// Kernel `k`'s cap on SM `s` (module notes).
    fn cap(&self, q: &Quotas, s: usize, k: usize) -> u8 {
        let e = &self.smst[s];
        let (Some(h), kr) = (e.ksr, &self.ksrt[k]) else { return 0 };
        if !kr.valid || e.state != SmState::Running {
            return 0;
        }
        let hr = &self.ksrt[h as usize];
        let hq = Self::quota_on(q, hr, s);
        let limit = if k == h as usize {
            hq.unwrap_or(u32::MAX)
        } else if hq.is_some() && kr.priority == hr.priority && hr.has_work() {
            Self::quota_on(q, kr, s).unwrap_or(0)
        } else {
            0
        };
        limit.min(kr.tk as u32) as u8
    }

    /// SM `s`'s heir, under slicing: when its holder has no work left, the oldest other kernel
    /// that may share the SM (the holder and it have quotas, and the same priority), has work
    /// and a quota on this SM above 0 (so that, holding it, it may issue there). A running SM
    /// whose holder has no work but blocks on it passes to its heir (its token with it, as a
    /// release and an assignment would move it), rather than draining for the policy to give
    /// it again.
    pub(super) fn heir(&self, q: &Quotas, s: usize) -> Option<usize> {
        let h = self.smst[s].ksr? as usize;
        let hr = &self.ksrt[h];
        if !q.contains_key(&hr.handle) {
            return None;
        }
        (0..self.params.sms)
            .filter(|&k| {
                let kr = &self.ksrt[k];
                k != h && kr.valid && kr.priority == hr.priority && Self::quota_on(q, kr, s).is_some_and(|x| x > 0) && kr.has_work()
            })
            .min_by_key(|&k| self.ksrt[k].seq)
    }

    /// Whether some kernel holds more blocks on SM `s` than its cap.
    fn over_cap(&self, sh: &Share, q: &Quotas, s: usize) -> bool {
        (0..self.params.sms).any(|k| sh.res[s][k] > self.cap(q, s, k))
    }

    /// The kernel SM `s` takes its next block of, under slicing: the oldest below its cap with
    /// a block left after the one in flight, unless some kernel is over its cap.
    pub(super) fn share_pick(&self, q: &Quotas, s: usize) -> Option<usize> {
        let sh = self.share.as_ref()?;
        if self.smst[s].state != SmState::Running || self.over_cap(sh, q, s) {
            return None;
        }
        (0..self.params.sms)
            .filter(|&k| sh.res[s][k] < self.cap(q, s, k) && self.left_after_flight(k) >= 1)
            .min_by_key(|&k| self.ksrt[k].seq)
    }

    /// Whether the block granted to SM `s` of kernel `k` may still be issued now, under slicing
    /// (a quota may have changed since the grant: the grant is dropped).
    pub(super) fn share_holds(&self, q: &Quotas, s: usize, k: usize) -> bool {
        let Some(sh) = self.share.as_ref() else { return true };
        self.smst[s].state == SmState::Running && self.ksrt[k].has_work() && sh.res[s][k] < self.cap(q, s, k) && !self.over_cap(sh, q, s)
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
