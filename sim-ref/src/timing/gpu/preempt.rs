//! Context switches a dispatcher asks for ([`Dispatcher::preempt`]; HeteroCore's steering,
//! `docs/heterocore.md`): the blocks leave their SM through the context unit, as the
//! framework's do (frozen, then saved to memory once nothing of them is in flight), and come
//! back where the dispatcher says ([`Dispatcher::restore_to`]).

use super::*;

/// The blocks a dispatcher's context switches have taken off their SMs.
#[derive(Default)]
pub(super) struct Preempted {
    /// Frozen blocks waiting for nothing of them to be in flight: SM, block slot, and the
    /// block (launch, coordinates) the slot must still hold.
    frozen: Vec<(usize, u32, usize, [u32; 3])>,
    /// Saved blocks with their launch, in the order saved.
    saved: Vec<(usize, SavedBlock)>,
    /// Blocks saved, and restored.
    pub(super) saves: u64,
    pub(super) restores: u64,
}

impl Preempted {
    /// A context switch is under way: the GPU steps every cycle until it is done.
    pub(super) fn pending(&self) -> bool {
        !self.frozen.is_empty() || !self.saved.is_empty()
    }
}

impl Gpu {
    /// Blocks the dispatcher's context switches saved, and restored.
    pub fn context_switched(&self) -> (u64, u64) {
        (self.preempted.saves, self.preempted.restores)
    }

    /// The dispatcher's context switches, once a cycle before its dispatch (for a dispatcher
    /// that makes them, [`Dispatcher::preempts`]): saved blocks go back where it says, before
    /// it can give the room to new blocks; the blocks it asks for are frozen; frozen blocks
    /// with nothing in flight are saved, and a frozen block that ended is forgotten.
    pub(super) fn preempt_cycle(&mut self, now: u64) -> Result<(), SimError> {
        if !self.preempting {
            return Ok(());
        }
        let mut changed = false;
        let mut k = 0;
        while k < self.preempted.saved.len() {
            let l = self.preempted.saved[k].0;
            let saved = self.save_done(&self.preempted.saved[k].1).is_some();
            match if saved { self.ask(|d, v| d.restore_to(l, v)) } else { None } {
                Some(sm) => {
                    let (_, s) = self.preempted.saved.remove(k);
                    self.restore_saved(sm as usize, &s)?;
                    self.preempted.restores += 1;
                    changed = true;
                }
                None => k += 1,
            }
        }
        for (sm, l) in self.ask(|d, v| d.preempt(now, v)) {
            let sm = sm as usize;
            for b in self.sms[sm].blocks_resident() {
                let Some((bl, cta)) = self.sms[sm].block_in(b) else { continue };
                // (a slot whose frozen block ended may hold another block by now)
                if bl == l && !self.preempted.frozen.contains(&(sm, b, bl, cta)) {
                    self.sms[sm].freeze_block(b);
                    self.preempted.frozen.push((sm, b, l, cta));
                }
            }
        }
        let mut k = 0;
        while k < self.preempted.frozen.len() {
            let (sm, b, l, cta) = self.preempted.frozen[k];
            if self.sms[sm].block_in(b) != Some((l, cta)) {
                // (it ended before it could be saved)
                self.preempted.frozen.remove(k);
                changed = true;
            } else if self.sms[sm].quiescent_blocks().contains(&b) {
                let s = self.save_block(sm, b)?;
                self.preempted.frozen.remove(k);
                self.preempted.saved.push((l, s));
                self.preempted.saves += 1;
                changed = true;
            } else {
                k += 1;
            }
        }
        if changed {
            self.touch();
        }
        Ok(())
    }

    /// Asks the dispatcher something, with its view of the GPU.
    fn ask<T: Default>(&mut self, f: impl FnOnce(&mut dyn Dispatcher, &DispatchView) -> T) -> T {
        let BlockSched::Baseline { d, .. } = &mut self.sched else { return T::default() };
        f(&mut **d, &DispatchView { sms: &self.sms, launches: &self.launches })
    }
}
