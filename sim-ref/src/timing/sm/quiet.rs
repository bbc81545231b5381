//! Quiet times: for each warp slot, a cycle before which the slot is known to have nothing to
//! do (issue, or fetch) as long as its warp does not change, and the set of slots whose time
//! has come, so that a stage visits only those (in slot order) rather than every slot.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One stage's quiet times over the SM's warp slots.
pub(super) struct Quiet {
    /// Per slot: nothing to do before this cycle (0: unknown, look; `u64::MAX`: until the warp
    /// changes).
    until: Vec<u64>,
    /// A bit per slot: its time has come (`until` is at most the cycle last passed to
    /// [`Quiet::wake`]).
    due: Vec<u64>,
    /// The times still to come, with their slots (a time is stale once its slot's `until` has
    /// moved: it is dropped when it comes).
    alarms: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Quiet {
    pub(super) fn new(n: usize) -> Quiet {
        let mut due = vec![u64::MAX; n.div_ceil(64)];
        if n % 64 != 0 {
            *due.last_mut().unwrap() = (1 << (n % 64)) - 1;
        }
        Quiet { until: vec![0; n], due, alarms: BinaryHeap::new() }
    }

    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(super) fn until(&self, i: usize) -> u64 {
        self.until[i]
    }

    /// Nothing is known of the slot: it is looked at.
    pub(super) fn forget(&mut self, i: usize) {
        self.until[i] = 0;
        self.due[i / 64] |= 1 << (i % 64);
    }

    /// The slot has nothing to do before cycle `t` (later than the current cycle).
    pub(super) fn sleep(&mut self, i: usize, t: u64) {
        self.until[i] = t;
        self.due[i / 64] &= !(1 << (i % 64));
        if t != u64::MAX {
            self.alarms.push(Reverse((t, i as u32)));
            // (stale times wait in the heap until they come: past a bound it is rebuilt from
            // the slots' own times, one for each slot still asleep until a time)
            if self.alarms.len() > 4 * self.until.len() + 64 {
                let due = &self.due;
                self.alarms = self.until.iter().enumerate().filter(|&(j, &u)| u != u64::MAX && due[j / 64] >> (j % 64) & 1 == 0).map(|(j, &u)| Reverse((u, j as u32))).collect();
            }
        }
    }

    /// Cycle `now` has come: the slots whose time it is are due.
    pub(super) fn wake(&mut self, now: u64) {
        while let Some(&Reverse((t, i))) = self.alarms.peek() {
            if t > now {
                break;
            }
            self.alarms.pop();
            if self.until[i as usize] == t {
                self.due[i as usize / 64] |= 1 << (i % 64);
            }
        }
    }

    pub(super) fn is_due(&self, i: usize) -> bool {
        self.due[i / 64] >> (i % 64) & 1 != 0
    }

    /// The first due slot from `from` on, below `end`.
    pub(super) fn next_due(&self, from: usize, end: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut bits = self.due.get(w)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                return (i < end).then_some(i);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = *self.due.get(w)?;
        }
    }

    /// The next slot a stage looks at from `from` on, below `end`: the next due one, or, when
    /// every slot is looked at (`all`: every cycle stepped), `from` itself.
    pub(super) fn next_look(&self, all: bool, from: usize, end: usize) -> Option<usize> {
        if all {
            (from < end).then_some(from)
        } else {
            self.next_due(from, end)
        }
    }

    /// Slots not due (skipped by a stage that visits the due ones).
    pub(super) fn quiet_count(&self) -> u64 {
        self.until.len() as u64 - self.due.iter().map(|w| w.count_ones() as u64).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_come_due_at_their_time_and_when_forgotten() {
        let mut q = Quiet::new(70);
        assert_eq!(q.quiet_count(), 0);
        assert_eq!(q.next_due(0, 70), Some(0));
        assert_eq!(q.next_due(69, 70), Some(69));
        assert_eq!(q.next_due(10, 10), None);
        q.sleep(0, 5);
        q.sleep(1, u64::MAX);
        q.sleep(65, 7);
        assert_eq!(q.quiet_count(), 3);
        assert_eq!(q.next_due(0, 70), Some(2));
        assert_eq!(q.next_due(64, 70), Some(64));
        assert_eq!(q.next_due(65, 70), Some(66));
        q.wake(4);
        assert!(!q.is_due(0));
        q.wake(5);
        assert!(q.is_due(0) && !q.is_due(1) && !q.is_due(65));
        // (a time that moved: the old alarm is stale)
        q.sleep(0, 9);
        q.wake(8);
        assert!(!q.is_due(0) && q.is_due(65));
        q.forget(1);
        assert!(q.is_due(1));
        q.wake(9);
        assert!(q.is_due(0));
        assert_eq!(q.quiet_count(), 0);
        // (the heap of times stays bounded however often a slot sleeps again)
        for t in 10..10_000 {
            q.sleep(3, t + 100);
            assert!(q.alarms.len() <= 4 * 70 + 64 + 1);
        }
        q.wake(10_098);
        assert!(!q.is_due(3));
        q.wake(10_099);
        assert!(q.is_due(3));
        for i in 0..70 {
            q.sleep(i, u64::MAX);
        }
        assert_eq!(q.next_due(0, 70), None);
        assert_eq!(q.quiet_count(), 70);
    }
}
