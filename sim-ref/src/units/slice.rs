//! The slice table as a unit (interface and cycle behaviour in `mpgpu_spec::units::slice`, RTL
//! `rtl/src/slice.rs`): kernels sharing SMs under per-SM block quotas.

use mpgpu_spec::units::slice::{Cmd, In, Out, State, KMAX, LEFT_BITS, MAX_SMS, QUOTA_BITS, RES, RES_BITS};
use mpgpu_spec::Unit;

fn mask(bits: usize) -> u32 {
    ((1u64 << bits) - 1) as u32
}

/// The table for `sms` SMs of `total` resources each.
#[derive(Clone, Debug)]
pub struct Slice {
    sms: u8,
    total: [u32; RES],
    s: State,
    /// The GPU cycle of the coming clock (`Unit::at_cycle`), and the first at which the
    /// broken quota compare (`<=`) would have picked differently: where the lockstep must
    /// catch that variant (not hardware).
    cycle: u64,
    pub first_over_quota: Option<u64>,
}

impl Slice {
    pub fn new(sms: usize, total: [u32; RES]) -> Slice {
        assert!((1..=MAX_SMS).contains(&sms), "a slice table for {sms} SMs (1..={MAX_SMS})");
        let mut u = Slice { sms: sms as u8, total: total.map(|t| t & mask(RES_BITS)), s: State::default(), cycle: 0, first_over_quota: None };
        u.reset();
        u
    }

    pub fn state(&self) -> State {
        self.s.clone()
    }

    /// The Fit stage's bits this cycle, from the Read stage's registers: per slot, the read
    /// is valid, the slot is valid, n < T (`n <= T` when `over`, the broken variant's), and
    /// every component of the used vector is at most the slot's limit.
    pub fn fit_with(&self, over: bool) -> [bool; KMAX] {
        let s = &self.s;
        let below = |i: usize| if over { s.rd_n[i] <= s.rd_q[i] } else { s.rd_n[i] < s.rd_q[i] };
        std::array::from_fn(|i| s.rd_valid && s.valid[i] && below(i) && (0..RES).all(|c| s.rd_used[c] <= s.lim[i][c]))
    }

    /// The slot the Pick stage takes this cycle, if any: of the slots whose fit bit is set and
    /// that are still valid with blocks left (besides the one in flight), the lowest rank,
    /// then the lowest index.
    pub fn pick(&self) -> Option<(u8, u8)> {
        let s = &self.s;
        if !s.f_valid {
            return None;
        }
        let inflight = |i: usize| (s.issue_valid && s.issue_slot as usize == i) as u32;
        (0..KMAX).filter(|&i| s.f_e[i] && s.valid[i] && s.left[i] > inflight(i)).min_by_key(|&i| (s.rank[i], i)).map(|i| (s.f_sm, i as u8))
    }
}

impl crate::slots::Hosted for Slice {
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

impl Unit for Slice {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        self.s = State { used: vec![[0; RES]; MAX_SMS], n: vec![[0; KMAX]; MAX_SMS], quota: vec![[0; KMAX]; MAX_SMS], ..State::default() };
    }

    fn outputs(&self, _: &In) -> Out {
        let s = &self.s;
        Out { busy: s.quiet < self.sms || s.rd_valid || s.f_valid || s.issue_valid || s.d_valid, issue: s.issue_valid.then_some((s.issue_sm, s.issue_slot)) }
    }

    fn at_cycle(&mut self, gpu_cycle: u64) {
        self.cycle = gpu_cycle;
    }

    fn clock(&mut self, i: &In) {
        let pick = self.pick();
        let fit = self.fit_with(false);
        if self.first_over_quota.is_none() && self.fit_with(true) != fit {
            self.first_over_quota = Some(self.cycle);
        }
        let sms = self.sms;
        let total = self.total;
        let s = &mut self.s;
        // (the stage registers before this edge)
        let (rd_valid, rd_sm, f_valid, f_sm, ptr, quiet) = (s.rd_valid, s.rd_sm, s.f_valid, s.f_sm, s.ptr, s.quiet);
        let rewrites = matches!(i.cmd, Cmd::Enter { .. } | Cmd::Quota { .. });
        // Fit: the SM read at the last edge.
        s.f_valid = rd_valid && !rewrites;
        s.f_sm = rd_sm;
        s.f_e = fit;
        // Read: the SM at the pointer (from the registers before this edge). It is marked
        // invalid for the SMs whose blocks are applied at or after this edge: those in the Read
        // and Fit stages (with one to three SMs, some Reads) and the one an issue is applied to.
        let reading = quiet < sms;
        let p = ptr as usize;
        let pending = |v: bool, sm: u8| v && sm == ptr;
        let in_stage = pending(rd_valid, rd_sm) || pending(f_valid, f_sm);
        s.rd_valid = reading && !rewrites && !in_stage && !pending(s.issue_valid, s.issue_sm);
        s.rd_sm = s.ptr;
        s.rd_used = s.used[p];
        s.rd_n = s.n[p];
        s.rd_q = s.quota[p];
        if reading {
            s.ptr = if s.ptr + 1 >= sms { 0 } else { s.ptr + 1 };
        }
        // (an apply at this edge counts as news too: the full round after it sees its effect;
        // so does a Read marked invalid because its SM is in a stage, so that the scan sleeps
        // only after a full round of valid Reads)
        s.quiet = if i.cmd != Cmd::None || i.done.is_some() || s.issue_valid || s.d_valid || (reading && in_stage) { 0 } else { (s.quiet + 1).min(sms) };
        // Apply: the block issued this cycle (on the outputs) and the completion registered at
        // the last edge; then the pick and this cycle's completion register.
        let req = s.req;
        if s.issue_valid {
            let (sm, k) = (s.issue_sm as usize, s.issue_slot as usize);
            s.n[sm][k] = (s.n[sm][k] + 1) & mask(QUOTA_BITS) as u8;
            for c in 0..RES {
                s.used[sm][c] = (s.used[sm][c] + req[k][c]) & mask(RES_BITS);
            }
            s.left[k] = s.left[k].wrapping_sub(1) & mask(LEFT_BITS);
        }
        if s.d_valid {
            let (sm, k) = (s.d_sm as usize, s.d_slot as usize);
            s.n[sm][k] = s.n[sm][k].wrapping_sub(1) & mask(QUOTA_BITS) as u8;
            for c in 0..RES {
                s.used[sm][c] = s.used[sm][c].wrapping_sub(req[k][c]) & mask(RES_BITS);
            }
        }
        // (the SM and slot registers load every cycle; they mean something with the valid bit)
        s.issue_valid = pick.is_some();
        s.issue_sm = f_sm;
        s.issue_slot = pick.map_or(0, |p| p.1);
        s.d_valid = i.done.is_some();
        if let Some((sm, k)) = i.done {
            s.d_sm = sm % MAX_SMS as u8;
            s.d_slot = k % KMAX as u8;
        }
        // Commands.
        match i.cmd {
            Cmd::None => {}
            Cmd::Enter { slot, blocks, req, quota } => {
                let k = slot as usize % KMAX;
                s.rank[k] = s.valid.iter().filter(|&&v| v).count() as u8 & 3;
                s.valid[k] = true;
                s.left[k] = blocks & mask(LEFT_BITS);
                for c in 0..RES {
                    let r = req[c] & mask(RES_BITS);
                    s.req[k][c] = r;
                    s.lim[k][c] = total[c].wrapping_sub(r) & mask(RES_BITS);
                }
                for row in s.quota.iter_mut() {
                    row[k] = quota & mask(QUOTA_BITS) as u8;
                }
            }
            Cmd::Leave { slot } => {
                let k = slot as usize % KMAX;
                let r = s.rank[k];
                s.valid[k] = false;
                for j in 0..KMAX {
                    if s.rank[j] > r {
                        s.rank[j] -= 1;
                    }
                }
            }
            Cmd::Quota { sm, all, q } => {
                for (x, row) in s.quota.iter_mut().enumerate() {
                    if all || x == sm as usize {
                        *row = q.map(|v| v & mask(QUOTA_BITS) as u8);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(u: &mut Slice, i: In) -> Out {
        let o = u.outputs(&i);
        u.clock(&i);
        o
    }

    #[test]
    fn issues_in_arrival_order_under_quota_and_fit_then_sleeps() {
        let total = [8, 1536, 32768, 49152];
        let mut u = Slice::new(2, total);
        // Kernel A (slot 1, older) 256 threads, quota 2; kernel B (slot 0) quota 3.
        let a = Cmd::Enter { slot: 1, blocks: 100, req: [1, 256, 8192, 0], quota: 2 };
        let b = Cmd::Enter { slot: 0, blocks: 100, req: [1, 128, 4096, 1024], quota: 3 };
        let mut issued = Vec::new();
        for c in 0..40 {
            let cmd = match c {
                0 => a,
                1 => b,
                _ => Cmd::None,
            };
            if let Some(x) = step(&mut u, In { cmd, done: None }).issue {
                issued.push(x);
            }
        }
        // Each SM: A twice (its quota), then B until its quota or the registers run out
        // (2 x 8192 + 3 x 4096 = 28672 <= 32768).
        let count = |sm: u8, k: u8| issued.iter().filter(|&&x| x == (sm, k)).count();
        assert_eq!((count(0, 1), count(0, 0), count(1, 1), count(1, 0)), (2, 3, 2, 3), "{issued:?}");
        // The first issue of each SM is the older kernel's.
        assert_eq!(issued.iter().find(|x| x.0 == 0), Some(&(0, 1)));
        assert_eq!(u.state().used[0], [5, 2 * 256 + 3 * 128, 2 * 8192 + 3 * 4096, 3 * 1024]);
        assert!(!step(&mut u, In::default()).busy);
        let before = u.state();
        step(&mut u, In::default());
        assert_eq!(u.state(), before, "a quiet cycle changes nothing");
        // A completion wakes it and the room is taken again.
        step(&mut u, In { cmd: Cmd::None, done: Some((1, 1)) });
        let mut again = Vec::new();
        for _ in 0..8 {
            again.extend(step(&mut u, In::default()).issue);
        }
        assert_eq!(again, vec![(1, 1)]);
        // Leave closes the ranks up.
        step(&mut u, In { cmd: Cmd::Leave { slot: 1 }, done: None });
        assert_eq!((u.state().valid, u.state().rank[0]), ([true, false, false, false], 0));
    }
}
