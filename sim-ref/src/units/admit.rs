//! The admission unit as a unit (interface and timing `mpgpu_spec::units::admit`, RTL
//! `rtl/src/admit.rs`): one per SM, it decides whether a block fits next to the resident ones
//! and where its registers and shared memory go (`docs/unified.md`, "The admission unit").

use mpgpu_spec::units::admit::{Desc, In, Out, Params, State};
use mpgpu_spec::Unit;

/// One resident block's ranges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Held {
    rf_base: u32,
    rf_len: u32,
    sh_base: u32,
    sh_len: u32,
    warps: u32,
}

/// Where a block goes: whether it fits (the occupancy rule), its bases, and whether its
/// register-file or shared-memory range needs the live ranges packed first (no hole holds it).
#[derive(Clone, Copy, Debug)]
struct Placement {
    fits: bool,
    rf_base: u32,
    sh_base: u32,
    rf_move: bool,
    sh_move: bool,
}

/// One SM's admission unit.
#[derive(Clone, Debug)]
pub struct Admit {
    p: Params,
    slots: Vec<Option<Held>>,
    cap: u32,
    /// The first protocol error: the run stops.
    error: Option<String>,
}

/// The first of the candidates 0, then each range's end in order, where `[c, c + need)` lies
/// below `size` and overlaps none of `ranges` (a range of no length overlaps nothing).
/// (`touching`: the RTL's test-only broken variant, where a range ending at another's start
/// overlaps it.)
fn first_fit(ranges: &[(u32, u32)], need: u32, size: u32, touching: bool) -> Option<u32> {
    let apart = |c: u32, b: u32| c + need < b || (c + need == b && !touching);
    let clear = |c: u32| c + need <= size && ranges.iter().all(|&(b, l)| l == 0 || apart(c, b) || c >= b + l);
    std::iter::once(0).chain(ranges.iter().map(|&(b, l)| b + l)).find(|&c| clear(c))
}

/// The unit's parameters for an SM of configuration `sm`.
pub fn params(sm: &crate::config::SmConfig) -> Params {
    let mut configs = [sm.shared_bytes; mpgpu_spec::units::admit::MAX_CONFIGS];
    for (c, &x) in configs.iter_mut().zip(&sm.shared_configs) {
        *c = x;
    }
    Params { slots: sm.blocks, rows: sm.registers / 32, warps: sm.warps.min(sm.threads / 32), reg_round: sm.reg_round, configs, shared: sm.shared_bytes }
}

impl Admit {
    /// The unit of an SM with parameters `p` (at most 64 block slots).
    pub fn new(p: Params) -> Admit {
        assert!((1..=64).contains(&p.slots), "an admission unit of {} block slots (1..=64)", p.slots);
        Admit { p, slots: vec![None; p.slots as usize], cap: 0, error: None }
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    pub fn state(&self) -> State {
        let n = self.slots.len().max(mpgpu_spec::units::admit::MAX_BLOCKS);
        let field = |f: fn(&Held) -> u32| (0..n).map(|k| self.slots.get(k).copied().flatten().as_ref().map_or(0, f)).collect();
        State {
            valid: self.slots.iter().enumerate().filter(|s| s.1.is_some()).fold(0, |m, (k, _)| m | 1 << k),
            rf_base: field(|h| h.rf_base),
            rf_len: field(|h| h.rf_len),
            sh_base: field(|h| h.sh_base),
            sh_len: field(|h| h.sh_len),
            warps: field(|h| h.warps),
            cap: self.cap,
        }
    }

    /// The blocks that stay this cycle (resident, not freed).
    fn live<'a>(&'a self, free: u64) -> impl Iterator<Item = &'a Held> + 'a {
        self.slots.iter().enumerate().filter(move |(k, _)| free >> k & 1 == 0).filter_map(|(_, s)| s.as_ref())
    }

    /// Where a block on `d` goes with the slots in `free` leaving.
    fn place(&self, d: &Desc, free: u64, touching: bool) -> Placement {
        // (the live ranges, on the stack: the unit is asked at every dispatch look)
        let (mut rf, mut sh, mut n) = ([(0, 0); 64], [(0, 0); 64], 0);
        let (mut warps, mut rf_used, mut sh_used) = (0, 0, 0);
        for h in self.live(free) {
            (rf[n], sh[n]) = ((h.rf_base, h.rf_len), (h.sh_base, h.sh_len));
            n += 1;
            warps += h.warps;
            rf_used += h.rf_len;
            sh_used += h.sh_len;
        }
        let cap = if n == 0 { self.p.cap_for(d.user + d.spill) } else { self.cap };
        let (rows, bytes) = (self.p.rows_of(d), d.user + d.spill);
        let fits = warps + d.warps as u32 <= self.p.warps && rf_used + rows <= self.p.rows && sh_used + bytes <= cap;
        let rf_ff = first_fit(&rf[..n], rows, self.p.rows, touching);
        let sh_ff = first_fit(&sh[..n], bytes, cap, touching);
        Placement { fits, rf_base: rf_ff.unwrap_or(rf_used), sh_base: sh_ff.unwrap_or(sh_used), rf_move: rf_ff.is_none(), sh_move: sh_ff.is_none() }
    }

    /// The outputs for `i`; with `no_bypass` or `touching`, those of the RTL's test-only broken
    /// variants of those names (`rtl/src/admit.rs`), from the same registers: the tests'
    /// prediction of where each is caught.
    pub fn outputs_of(&self, i: &In, no_bypass: bool, touching: bool) -> Out {
        let p = self.place(&i.desc, if no_bypass { 0 } else { i.free }, touching);
        Out { fits: p.fits && !i.alloc, rf_base: p.rf_base, sh_base: p.sh_base, sp_base: p.sh_base + i.desc.user, rf_move: p.rf_move, sh_move: p.sh_move }
    }

    /// Resident block slots.
    pub fn resident(&self) -> u32 {
        self.slots.iter().filter(|s| s.is_some()).count() as u32
    }
}

impl Unit for Admit {
    type In = In;
    type Out = Out;

    fn reset(&mut self) {
        *self = Admit::new(self.p);
    }

    fn outputs(&self, i: &In) -> Out {
        self.outputs_of(i, false, false)
    }

    fn clock(&mut self, i: &In) {
        let n = self.slots.len();
        let placed = i.alloc.then(|| self.place(&i.desc, i.free, false));
        let mut errs = Vec::new();
        for k in 0..64 {
            if i.free >> k & 1 != 0 && self.slots.get(k).is_none_or(|s| s.is_none()) {
                errs.push(format!("freed block slot {k}, which holds no block"));
            }
        }
        let s = i.slot as usize;
        if let Some(p) = placed {
            if !p.fits {
                errs.push(format!("placed a block ({:?}) in slot {s} that does not fit", i.desc));
            } else if s >= n || (self.slots[s].is_some() && i.free >> s & 1 == 0) {
                errs.push(format!("placed a block in slot {s}, which is not free"));
            }
        }
        if self.error.is_none() {
            self.error = errs.into_iter().next();
        }
        let was_empty = self.live(i.free).next().is_none();
        for (k, h) in self.slots.iter_mut().enumerate() {
            if i.free >> k & 1 != 0 {
                *h = None;
            }
        }
        let Some(p) = placed.filter(|p| p.fits && s < n) else { return };
        // (packing: the live ranges close up in slot order, from 0)
        let (mut rf_at, mut sh_at) = (0, 0);
        for h in self.slots.iter_mut().flatten() {
            if p.rf_move {
                h.rf_base = rf_at;
                rf_at += h.rf_len;
            }
            if p.sh_move {
                h.sh_base = sh_at;
                sh_at += h.sh_len;
            }
        }
        let d = &i.desc;
        if was_empty {
            self.cap = self.p.cap_for(d.user + d.spill);
        }
        self.slots[s] = Some(Held { rf_base: p.rf_base, rf_len: self.p.rows_of(d), sh_base: p.sh_base, sh_len: d.user + d.spill, warps: d.warps as u32 });
    }
}

impl crate::slots::Hosted for Admit {
    fn halted(&self) -> Option<String> {
        self.error.clone()
    }
    fn model(&self) -> Option<crate::slots::ModelRef<'_>> {
        Some(crate::slots::ModelRef::of(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::Hosted;

    fn gtx480() -> Params {
        Params { slots: 8, rows: 1024, warps: 48, reg_round: 4, configs: [49152; 4], shared: 49152 }
    }

    fn desc(regs: u8, warps: u8, user: u32) -> Desc {
        Desc { regs, warps, user, spill: 0 }
    }

    fn alloc(u: &mut Admit, d: Desc, slot: u8) -> Out {
        let i = In { desc: d, alloc: true, slot, free: 0 };
        let o = u.outputs(&In { alloc: false, ..i });
        u.clock(&i);
        o
    }

    #[test]
    fn blocks_take_the_first_room_and_a_freed_range_is_reused_in_its_cycle() {
        let mut u = Admit::new(gtx480());
        // (21 registers round to 24: 24 x 8 warps = 192 rows; 6000 bytes)
        let d = desc(21, 8, 6000);
        let a = alloc(&mut u, d, 0);
        let b = alloc(&mut u, d, 1);
        assert_eq!((a.rf_base, a.sh_base, b.rf_base, b.sh_base), (0, 0, 192, 6000));
        assert!(u.outputs(&In { desc: d, alloc: true, ..Default::default() }).fits == false, "one block a cycle");
        // (slot 0 leaves in the cycle slot 2 asks: slot 0's room)
        let o = u.outputs(&In { desc: d, free: 1, ..Default::default() });
        assert!(o.fits && o.rf_base == 0 && o.sh_base == 0 && o.sp_base == 6000);
        // (the warp limit: 6 blocks of 8 warps)
        let mut u = Admit::new(gtx480());
        for s in 0..6 {
            assert!(alloc(&mut u, desc(4, 8, 0), s).fits);
        }
        assert!(!u.outputs(&In { desc: desc(4, 1, 0), ..Default::default() }).fits);
        assert_eq!(u.halted(), None);
    }

    #[test]
    fn a_block_no_hole_holds_is_placed_after_the_live_ranges_packed() {
        let mut u = Admit::new(gtx480());
        // (four blocks of 256 rows fill the file; slots 0 and 2 leave: 512 rows free, apart)
        for s in 0..4 {
            alloc(&mut u, desc(32, 8, 0), s);
        }
        u.clock(&In { free: 0b101, ..Default::default() });
        let o = u.outputs(&In { desc: desc(32, 16, 0), ..Default::default() });
        assert!(o.fits && o.rf_move && !o.sh_move && o.rf_base == 512, "{o:?}");
        alloc(&mut u, desc(32, 16, 0), 0);
        let st = u.state();
        assert_eq!((&st.rf_base[..4], &st.rf_len[..4]), (&[512, 0, 0, 256][..], &[512, 256, 0, 256][..]));
        // (a block a hole holds goes there, nothing moves)
        u.clock(&In { free: 0b10, ..Default::default() });
        let o = u.outputs(&In { desc: desc(32, 8, 0), ..Default::default() });
        assert!(o.fits && !o.rf_move && o.rf_base == 0, "{o:?}");
    }

    #[test]
    fn the_shared_configuration_is_the_first_blocks() {
        let p = Params { slots: 16, rows: 2048, warps: 64, reg_round: 1, configs: [16384, 32768, 49152, 49152], shared: 49152 };
        let mut u = Admit::new(p);
        alloc(&mut u, desc(8, 1, 10000), 0);
        assert_eq!(u.state().cap, 16384);
        assert!(!u.outputs(&In { desc: desc(8, 1, 7000), ..Default::default() }).fits, "16 KB in force");
        assert!(u.outputs(&In { desc: desc(8, 1, 7000), free: 1, ..Default::default() }).fits, "empty again: 16 KB chosen anew");
    }

    #[test]
    fn protocol_errors_stop_the_run() {
        let mut u = Admit::new(gtx480());
        u.clock(&In { free: 1 << 3, ..Default::default() });
        assert!(u.halted().unwrap().contains("freed block slot 3"));
        let mut u = Admit::new(gtx480());
        alloc(&mut u, desc(63, 32, 0), 0);
        u.clock(&In { desc: desc(63, 32, 0), alloc: true, slot: 1, free: 0 });
        assert!(u.halted().unwrap().contains("does not fit"));
        let mut u = Admit::new(gtx480());
        alloc(&mut u, desc(4, 1, 0), 0);
        alloc(&mut u, desc(4, 1, 0), 0);
        assert!(u.halted().unwrap().contains("not free"));
    }
}
