//! A per-SM unit kind in every SM's slot: one instance per SM, each the model alone, the RTL
//! alone, or the lockstep pair, with the RTL on the SMs a [`SmSet`] names (the others hold the
//! model). Each instance is named `sm[k].<block>` in mismatch reports and waveforms; the bank
//! reports the first mismatch of any instance (earliest GPU cycle, then lowest SM).
//!
//! The blocks that will fill per-SM slots (Zorua's coordinator and mapping tables, the replay
//! queue and operand log) plug in here with nothing but their [`Ports`] mapping.

use crate::host::{Alone, Cosim, Outcome, Shared};
use crate::lockstep::Mismatch;
use crate::ports::Ports;
use crate::backend::Backend;
use crate::rtl::RtlUnit;
use mpgpu_ref::slots::{SlotMode, SmSet};
use mpgpu_spec::Unit;
use std::path::{Path, PathBuf};

/// What one SM's slot holds.
pub enum Slot<M: Unit<In = P::In, Out = P::Out>, P: Ports> {
    Model(M),
    Rtl(Alone<P>),
    Pair(Shared<M, P>),
}

/// One instance of a per-SM unit kind per SM.
pub struct Bank<M: Unit<In = P::In, Out = P::Out>, P: Ports> {
    pub block: String,
    pub slots: Vec<Slot<M, P>>,
}

/// The instance name of SM `sm`'s `block`.
pub fn instance(sm: usize, block: &str) -> String {
    format!("sm[{sm}].{block}")
}

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Bank<M, P> {
    /// `sms` slots of `block`; on the SMs in `rtl_on` the slot holds what `mode` says (the RTL
    /// of `ports(k)` on `backend`), elsewhere the model. `model(k)` builds SM k's model;
    /// `model_state` reads the state compared with the RTL's registers.
    pub fn new(
        block: &str,
        sms: usize,
        mode: SlotMode,
        rtl_on: &SmSet,
        backend: Backend,
        model: impl Fn(usize) -> M,
        ports: impl Fn(usize) -> P,
        model_state: fn(&M) -> P::State,
    ) -> Result<Self, String> {
        let mut slots = Vec::with_capacity(sms);
        for k in 0..sms {
            let slot = match mode {
                _ if !rtl_on.contains(k) => Slot::Model(model(k)),
                SlotMode::ModelAlone => Slot::Model(model(k)),
                SlotMode::RtlAlone => Slot::Rtl(Alone::new(RtlUnit::with_backend(ports(k), backend)?)),
                SlotMode::Lockstep => {
                    let rtl = RtlUnit::with_backend(ports(k), backend)?;
                    Slot::Pair(Shared::new(Cosim::with_state(&instance(k, block), model(k), rtl, model_state)))
                }
            };
            slots.push(slot);
        }
        Ok(Bank { block: block.to_string(), slots })
    }

    /// Records every RTL instance's waveform from now on.
    pub fn record_all(&mut self) {
        for s in &mut self.slots {
            if let Slot::Pair(p) = s {
                let mut c = p.0.borrow_mut();
                c.record_from = 0;
                c.record_until = u64::MAX;
            }
        }
    }

    /// The GPU cycle of the coming clocked cycle (waveform time and mismatch reports).
    pub fn at_cycle(&mut self, gpu_cycle: u64) {
        for s in &mut self.slots {
            if let Slot::Pair(p) = s {
                p.0.borrow_mut().pair.time = Some(gpu_cycle);
            }
        }
    }

    /// SM `sm`'s outputs this cycle (the RTL's, where it carries RTL).
    pub fn outputs(&self, sm: usize, i: &P::In) -> P::Out {
        match &self.slots[sm] {
            Slot::Model(m) => m.outputs(i),
            Slot::Rtl(r) => r.outputs(i),
            Slot::Pair(p) => p.outputs(i),
        }
    }

    /// SM `sm`'s clock edge.
    pub fn clock(&mut self, sm: usize, i: &P::In) {
        match &mut self.slots[sm] {
            Slot::Model(m) => m.clock(i),
            Slot::Rtl(r) => r.clock(i),
            Slot::Pair(p) => p.clock(i),
        }
    }

    /// The first mismatch of any instance: earliest GPU cycle (clocked cycle when there is
    /// none), then lowest SM.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.slots
            .iter()
            .filter_map(|s| match s {
                Slot::Pair(p) => p.0.borrow().pair.mismatch(),
                _ => None,
            })
            .min_by_key(|m| m.time.unwrap_or(m.cycle))
    }

    /// Writes each RTL instance's waveform as `<dir>/sm<k>-<block>.vcd` (with its GTKWave save
    /// file); returns the files written.
    pub fn write_vcds(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        self.write_vcds_as(|k| dir.join(format!("sm{k}-{}.vcd", self.block)))
    }

    /// Writes RTL instance k's waveform as `file(k)` (with its GTKWave save file beside it);
    /// returns the files written.
    pub fn write_vcds_as(&self, file: impl Fn(usize) -> PathBuf) -> Result<Vec<PathBuf>, String> {
        let mut out = Vec::new();
        for (k, s) in self.slots.iter().enumerate() {
            if let Slot::Pair(p) = s {
                if let Some(r) = p.0.borrow().vcd.as_ref() {
                    let f = file(k);
                    r.write(&f).map_err(|e| format!("cannot write {}: {e}", f.display()))?;
                    out.push(f);
                }
            }
        }
        Ok(out)
    }

    /// Which SMs carry RTL.
    pub fn rtl_sms(&self) -> Vec<usize> {
        (0..self.slots.len()).filter(|&k| !matches!(self.slots[k], Slot::Model(_))).collect()
    }
}

/// A per-SM unit's bank: the first mismatch of any SM, the clocked cycles of all, one
/// waveform per SM.
pub(crate) struct BankOutcome<M: Unit<In = P::In, Out = P::Out>, P: Ports>(pub(crate) Bank<M, P>);

impl<M: Unit<In = P::In, Out = P::Out>, P: Ports> Outcome for BankOutcome<M, P> {
    fn mismatch(&self) -> Option<Mismatch> {
        self.0.mismatch()
    }
    fn cycles(&self) -> u64 {
        self.0.slots.iter().map(|s| if let Slot::Pair(p) = s { p.0.borrow().pair.cycle } else { 0 }).sum()
    }
    /// Writes SM k's waveform as `p/sm<k>-<block>.vcd` (each with its save file).
    fn write_vcd(&self, p: &Path) -> Result<Vec<PathBuf>, String> {
        std::fs::create_dir_all(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        self.0.write_vcds(p)
    }
    fn per_sm(&self) -> bool {
        true
    }
    /// Finishes every SM's trace; returns the first SM's directory (`DIR/sm<k>`).
    fn finish_trace(&self) -> Result<Option<PathBuf>, String> {
        let mut first = None;
        for s in &self.0.slots {
            if let Slot::Pair(p) = s {
                let d = p.finish_trace()?;
                first = first.or(d);
            }
        }
        Ok(first)
    }
}
