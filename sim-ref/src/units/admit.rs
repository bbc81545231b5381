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
/// register-file or shared-memory range needs the live ranges packed first (the room above the
/// bump pointer does not hold it).
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
    /// The bump pointers: the next block's first row and byte.
    top_rf: u32,
    top_sh: u32,
    /// The first protocol error: the run stops.
    error: Option<String>,
}

/// Where a block of `need` goes in a space of `size`, the bump pointer at `top` and the live
/// ranges taking `used` in all: at 0 on an empty SM, at `top` when the room above it holds the
/// block, else after the live ranges packed (the flag: a packing). (`no_pack`: as the RTL's
/// test-only broken variant of that name places it, at `top` whatever the room.)
fn bump(empty: bool, top: u32, need: u32, size: u32, used: u32, no_pack: bool) -> (u32, bool) {
    if empty {
        (0, false)
    } else if top + need <= size || no_pack {
        (top, false)
    } else {
        (used, true)
    }
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
        Admit { p, slots: vec![None; p.slots as usize], cap: 0, top_rf: 0, top_sh: 0, error: None }
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
            top_rf: self.top_rf,
            top_sh: self.top_sh,
        }
    }

    /// The blocks that stay this cycle (resident, not freed).
    fn live(&self, free: u64) -> impl Iterator<Item = &Held> + '_ {
        self.slots.iter().enumerate().filter(move |(k, _)| free >> k & 1 == 0).filter_map(|(_, s)| s.as_ref())
    }

    /// Where a block on `d` goes with the slots in `free` leaving (`no_pack`: as the RTL's
    /// broken variant of that name places it).
    fn place(&self, d: &Desc, free: u64, no_pack: bool) -> Placement {
        let (mut n, mut warps, mut rf_used, mut sh_used) = (0, 0, 0, 0);
        for h in self.live(free) {
            n += 1;
            warps += h.warps;
            rf_used += h.rf_len;
            sh_used += h.sh_len;
        }
        let empty = n == 0;
        let cap = if empty { self.p.cap_for(d.user + d.spill) } else { self.cap };
        let (rows, bytes) = (d.rows as u32, d.user + d.spill);
        let fits = warps + d.warps as u32 <= self.p.warps && rf_used + rows <= self.p.rows && sh_used + bytes <= cap;
        let (rf_base, rf_move) = bump(empty, self.top_rf, rows, self.p.rows, rf_used, no_pack);
        let (sh_base, sh_move) = bump(empty, self.top_sh, bytes, cap, sh_used, no_pack);
        Placement { fits, rf_base, sh_base, rf_move, sh_move }
    }

    /// The outputs for `i`; with `no_bypass` or `no_pack`, those of the RTL's test-only broken
    /// variants of those names (`rtl/src/admit.rs`), from the same registers: the tests'
    /// prediction of where each is caught.
    pub fn outputs_of(&self, i: &In, no_bypass: bool, no_pack: bool) -> Out {
        let p = self.place(&i.desc, if no_bypass { 0 } else { i.free }, no_pack);
        Out { fits: p.fits && !i.alloc, rf_base: p.rf_base, sh_base: p.sh_base, sp_base: p.sh_base + i.desc.user, rf_move: p.rf_move, sh_move: p.sh_move }
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
        // (placed whatever the rule said, as the RTL places it: a refused block has stopped
        // the run)
        let Some(p) = placed.filter(|_| s < n) else { return };
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
        let held = Held { rf_base: p.rf_base, rf_len: d.rows as u32, sh_base: p.sh_base, sh_len: d.user + d.spill, warps: d.warps as u32 };
        (self.top_rf, self.top_sh) = (held.rf_base + held.rf_len, held.sh_base + held.sh_len);
        self.slots[s] = Some(held);
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

    /// A block of `warps` warps of `regs` registers a thread and `user` shared bytes, on gtx480.
    fn desc(regs: u32, warps: u8, user: u32) -> Desc {
        Desc { rows: gtx480().rows_of(regs, warps as u32) as u16, warps, user, spill: 0 }
    }

    fn alloc(u: &mut Admit, d: Desc, slot: u8) -> Out {
        let i = In { desc: d, alloc: true, slot, free: 0 };
        let o = u.outputs(&In { alloc: false, ..i });
        u.clock(&i);
        o
    }

    #[test]
    fn blocks_go_above_the_last_and_a_block_that_ends_makes_room_in_its_cycle() {
        let mut u = Admit::new(gtx480());
        // (21 registers round to 24: 24 x 8 warps = 192 rows; 6000 bytes)
        let d = desc(21, 8, 6000);
        let a = alloc(&mut u, d, 0);
        let b = alloc(&mut u, d, 1);
        assert_eq!((a.rf_base, a.sh_base, b.rf_base, b.sh_base), (0, 0, 192, 6000));
        assert!(!u.outputs(&In { desc: d, alloc: true, ..Default::default() }).fits, "one block a cycle");
        // (both leave in the cycle a third asks: an empty SM, at 0)
        let o = u.outputs(&In { desc: d, free: 0b11, ..Default::default() });
        assert!(o.fits && o.rf_base == 0 && o.sh_base == 0 && o.sp_base == 6000);
        // (the warp limit: 6 blocks of 8 warps; a seventh fits when one leaves in its cycle)
        let mut u = Admit::new(gtx480());
        for s in 0..6 {
            assert!(alloc(&mut u, desc(4, 8, 0), s).fits);
        }
        assert!(!u.outputs(&In { desc: desc(4, 1, 0), ..Default::default() }).fits);
        assert!(u.outputs(&In { desc: desc(4, 8, 0), free: 1 << 3, ..Default::default() }).fits);
        assert_eq!(u.halted(), None);
    }

    #[test]
    fn a_block_the_room_above_the_pointer_cannot_hold_goes_after_the_live_ranges_packed() {
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
        assert_eq!((&st.rf_base[..4], &st.rf_len[..4], st.top_rf), (&[512, 0, 0, 256][..], &[512, 256, 0, 256][..], 1024));
        // (the file is full: nothing fits until a block leaves)
        assert!(!u.outputs(&In { desc: desc(4, 1, 0), ..Default::default() }).fits);
        // (the broken variant leaves the block at the pointer, past the file's end)
        u.clock(&In { free: 0b10, ..Default::default() });
        let i = In { desc: desc(32, 8, 0), ..Default::default() };
        let (o, broken) = (u.outputs(&i), u.outputs_of(&i, false, true));
        assert!(o.fits && o.rf_move && o.rf_base == 768 && broken.rf_base == 1024 && !broken.rf_move, "{o:?} {broken:?}");
    }

    #[test]
    fn the_shared_configuration_is_the_first_blocks() {
        let p = Params { slots: 16, rows: 2048, warps: 64, reg_round: 1, configs: [16384, 32768, 49152, 49152], shared: 49152 };
        let mut u = Admit::new(p);
        let d = |user| Desc { rows: 8, warps: 1, user, spill: 0 };
        alloc(&mut u, d(10000), 0);
        assert_eq!(u.state().cap, 16384);
        assert!(!u.outputs(&In { desc: d(7000), ..Default::default() }).fits, "16 KB in force");
        assert!(u.outputs(&In { desc: d(7000), free: 1, ..Default::default() }).fits, "empty again: 16 KB chosen anew");
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
