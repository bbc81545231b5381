//! A timing wheel: events keyed by cycle, a ring of buckets for the next `N` cycles and a heap
//! for anything later. Events of one cycle come out in the order they were added (those from
//! the heap after those from the ring), so the order is deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

const N: usize = 256;

#[derive(Clone, Debug)]
pub struct Wheel<T: Ord + Copy> {
    buckets: Vec<Vec<T>>,
    /// Every event before this cycle has been taken out.
    base: u64,
    near: usize,
    far: BinaryHeap<Reverse<(u64, u64, T)>>,
    seq: u64,
}

impl<T: Ord + Copy> Default for Wheel<T> {
    fn default() -> Self {
        Wheel { buckets: vec![Vec::new(); N], base: 0, near: 0, far: BinaryHeap::new(), seq: 0 }
    }
}

impl<T: Ord + Copy> Wheel<T> {
    /// Adds an event at cycle `t` (not before the cycles already taken out).
    pub fn push(&mut self, t: u64, x: T) {
        let t = t.max(self.base);
        if t < self.base + N as u64 {
            self.buckets[(t % N as u64) as usize].push(x);
            self.near += 1;
        } else {
            self.seq += 1;
            self.far.push(Reverse((t, self.seq, x)));
        }
    }

    /// Takes out every event at or before `now`, in cycle order, calling `f(cycle, event)`.
    pub fn drain_until(&mut self, now: u64, mut f: impl FnMut(u64, T)) {
        let mut c = self.base;
        while c <= now {
            if self.near == 0 {
                // Nothing in the ring: jump to the next far event.
                match self.far.peek() {
                    Some(Reverse((t, ..))) if *t <= now => c = c.max(*t),
                    _ => break,
                }
            }
            let b = (c % N as u64) as usize;
            if !self.buckets[b].is_empty() {
                let mut v = std::mem::take(&mut self.buckets[b]);
                self.near -= v.len();
                for x in v.drain(..) {
                    f(c, x);
                }
                self.buckets[b] = v;
            }
            while let Some(Reverse((t, _, x))) = self.far.peek().copied() {
                if t > c {
                    break;
                }
                self.far.pop();
                f(c, x);
            }
            c += 1;
            self.base = c;
        }
        self.base = self.base.max(now + 1);
    }

    /// [`Wheel::drain_until`] into `out` (empty), the events only: when the wheel's next
    /// cycle is `now` and nothing later than the ring is due, `now`'s bucket is handed over
    /// whole (swapped with `out`) rather than moved event by event.
    pub fn drain_into(&mut self, now: u64, out: &mut Vec<T>) {
        debug_assert!(out.is_empty());
        if self.base == now && self.far.peek().is_none_or(|Reverse((t, ..))| *t > now) {
            std::mem::swap(&mut self.buckets[(now % N as u64) as usize], out);
            self.near -= out.len();
            self.base = now + 1;
            return;
        }
        self.drain_until(now, |_, x| out.push(x));
    }

    /// The cycle of the earliest event, if any.
    pub fn next_time(&self) -> Option<u64> {
        let far = self.far.peek().map(|Reverse((t, ..))| *t);
        if self.near > 0 {
            for d in 0..N as u64 {
                let c = self.base + d;
                if !self.buckets[(c % N as u64) as usize].is_empty() {
                    return Some(far.map_or(c, |f| f.min(c)));
                }
            }
        }
        far
    }

    pub fn is_empty(&self) -> bool {
        self.near == 0 && self.far.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Wheel;

    #[test]
    fn drain_into_gives_what_drain_until_gives() {
        let mut a = Wheel::default();
        let mut b = Wheel::default();
        let mut rng = crate::test_rng(7);
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        let mut out = Vec::new();
        for now in 0..3000u64 {
            // (a few events a cycle, some beyond the ring, some at the current cycle)
            for _ in 0..3 {
                let t = now + [0, 1, 2, 7, 300, 900][rng(6) as usize];
                let e = rng(1 << 20) as u32;
                a.push(t, e);
                b.push(t, e);
            }
            // (stepped every cycle, or jumping several)
            if rng(4) == 0 {
                continue;
            }
            a.drain_until(now, |_, e| got_a.push(e));
            b.drain_into(now, &mut out);
            got_b.append(&mut out);
            assert_eq!(got_a, got_b, "at cycle {now}");
            assert_eq!(a.next_time(), b.next_time());
        }
    }

    #[test]
    fn events_come_out_in_cycle_order() {
        let mut w = Wheel::default();
        w.push(5, 1u32);
        w.push(3, 2);
        w.push(1000, 3);
        w.push(5, 4);
        assert_eq!(w.next_time(), Some(3));
        let mut got = Vec::new();
        w.drain_until(10, |c, x| got.push((c, x)));
        assert_eq!(got, vec![(3, 2), (5, 1), (5, 4)]);
        assert_eq!(w.next_time(), Some(1000));
        w.push(600, 5); // beyond the ring from base 11
        w.drain_until(999, |c, x| got.push((c, x)));
        assert_eq!(got.last(), Some(&(600, 5)));
        w.drain_until(5000, |c, x| got.push((c, x)));
        assert_eq!(got.last(), Some(&(1000, 3)));
        assert!(w.is_empty());
        // An event pushed for a cycle already drained comes out next time.
        w.push(10, 9);
        w.drain_until(5001, |c, x| got.push((c, x)));
        assert_eq!(got.last(), Some(&(5001, 9)));
    }

    /// Against a plain list of (cycle, order added, event), on random pushes and drains that
    /// wrap the ring many times and reach the heap.
    #[test]
    fn drains_as_a_sorted_list_does() {
        let mut rnd = crate::test_rng(0x9E37_79B9_7F4A_7C15u64);
        let mut w = Wheel::default();
        let mut list: Vec<(u64, u64, u32)> = Vec::new();
        let (mut now, mut k, mut seen) = (0u64, 0u64, 0usize);
        for step in 0..20_000u32 {
            for _ in 0..rnd(4) {
                let t = now + [0, 1, 5, 255, 256, 700][rnd(6) as usize] + rnd(3);
                w.push(t, step);
                list.push((t.max(now), k, step));
                k += 1;
            }
            let want = list.iter().map(|e| e.0).min();
            assert_eq!(w.next_time(), want, "step {step}");
            now += [0, 1, 2, 50, 300][rnd(5) as usize];
            let mut got = Vec::new();
            w.drain_until(now, |c, x| got.push((c, x)));
            // (the ring's events of a cycle before the heap's; each in the order added)
            let mut due: Vec<_> = list.iter().filter(|e| e.0 <= now).copied().collect();
            due.sort_by_key(|&(t, k, x)| (t, k, x));
            let mut expect: Vec<(u64, u32)> = Vec::new();
            for t in due.iter().map(|e| e.0).collect::<std::collections::BTreeSet<_>>() {
                let at: Vec<_> = due.iter().filter(|e| e.0 == t).collect();
                expect.extend(at.iter().map(|e| (t, e.2)));
            }
            list.retain(|e| e.0 > now);
            assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), expect.iter().map(|e| e.0).collect::<Vec<_>>(), "step {step}: the cycles");
            let mut a = got.clone();
            let mut b = expect.clone();
            a.sort();
            b.sort();
            assert_eq!(a, b, "step {step}: the events");
            seen += got.len();
            now += 1;
        }
        assert!(seen > 10_000, "only {seen} events drained");
    }
}
