//! The SM's unit slots (the replay queue, the operand log's bookkeeping and its data array,
//! each a [`Port`] that gathers a cycle's requests into the unit's input word and clocks it at
//! that cycle's edge; Zorua's coordinator): filling them, and their edges, pending requests
//! and halts as the GPU asks for them, without naming them.

use super::*;
use crate::slots::{Held, Port, Units};
use mpgpu_spec::units::{admit, oldata, oplog, rq};
use mpgpu_spec::units::zorua as z;

pub(super) type OlPort = Port<oplog::In, oplog::Out>;

pub(super) type RqPort = Port<rq::In, rq::Out>;

pub(super) type OdPort = Port<oldata::In, oldata::Out>;

pub(super) type AdmitPort = Port<admit::In, admit::Out>;
pub(super) use admit::In as AdmitIn;

impl Sm {
    /// Puts the SM's instance of `units` (`units.make(k)`, k this SM's index) in its slot of
    /// their interface. `None`: the SM has no slot of that interface; an error: it has one its
    /// configuration does not use.
    pub fn set_units(&mut self, units: &mut Units, k: usize) -> Option<Result<(), String>> {
        let scheme = self.scheme.name();
        let ol = || format!("the operand log is used under faults = \"ol\" (this configuration has \"{scheme}\")");
        if units.are::<oplog::In, oplog::Out>() {
            let Some(p) = self.ol.as_mut() else { return Some(Err(ol())) };
            let unit: Held<oplog::In, oplog::Out> = units.make(k);
            self.ol_pool = unit.outputs(&Default::default()).pool_free;
            *p = std::cell::RefCell::new(Port::new(unit));
        } else if units.are::<oldata::In, oldata::Out>() {
            let Some(p) = self.od.as_mut() else { return Some(Err(ol())) };
            *p = std::cell::RefCell::new(Port::new(units.make(k)));
        } else if units.are::<rq::In, rq::Out>() {
            let Some(p) = self.rq.as_mut() else {
                return Some(Err(format!("the replay queue is used under faults = \"rq\" or \"ol\" (this configuration has \"{scheme}\")")));
            };
            *p = std::cell::RefCell::new(Port::new(units.make(k)));
        } else if units.are::<admit::In, admit::Out>() {
            let Some(p) = self.admit.as_mut() else { return Some(Err(format!("SM {k} is under Zorua (alloc = \"zorua\"), whose coordinator admits blocks"))) };
            *p = std::cell::RefCell::new(Port::new(units.make(k)));
        } else if units.are::<z::In, z::Out>() {
            let Some(zs) = self.zorua.as_mut() else { return Some(Err(format!("SM {k} is not under Zorua (alloc = \"zorua\")"))) };
            let unit: Held<z::In, z::Out> = units.make(k);
            zs.out = unit.outputs(&z::In::default());
            zs.unit = unit;
        } else {
            return None;
        }
        Some(Ok(()))
    }

    /// Puts the models in the slots the SM's fault scheme uses (the replay queue under `rq`
    /// and `ol`, the operand log and its data array under `ol`).
    pub(crate) fn set_fault_models(&mut self, g: &crate::config::SmConfig) {
        if matches!(self.scheme, FaultScheme::Rq | FaultScheme::Ol) {
            self.rq = Some(std::cell::RefCell::new(Port::new(Box::new(crate::units::rq::Rq::new(g.rq_entries)))));
            self.units = true;
        }
        if self.scheme == FaultScheme::Ol {
            let entries = g.oplog_bytes / crate::config::OPLOG_ENTRY_BYTES;
            let unit: Held<oplog::In, oplog::Out> = Box::new(crate::units::oplog::Oplog::new(entries));
            self.ol_pool = unit.outputs(&Default::default()).pool_free;
            self.ol = Some(std::cell::RefCell::new(Port::new(unit)));
            self.od = Some(std::cell::RefCell::new(Port::new(Box::new(crate::units::oldata::Oldata::new(entries as usize)))));
        }
    }

    /// The edges of the SM's units at the start of cycle `now` (the requests of earlier cycles
    /// sampled), then whether any halted: the GPU cycle and the report of the first that did
    /// (a co-simulated unit parted from its model, or a unit broke its protocol).
    /// (inline: the GPU asks every SM every cycle it steps, and most SMs have no unit)
    #[inline]
    pub fn unit_edges(&mut self, now: u64) -> Option<(u64, String)> {
        if !self.units {
            return self.admit_edge(now);
        }
        self.clock_units(now)
    }

    /// [`Sm::unit_edges`] of an SM with units.
    #[inline(never)]
    fn clock_units(&mut self, now: u64) -> Option<(u64, String)> {
        self.admit_edge(now).or_else(|| self.ol_edge(now)).or_else(|| self.rq_edge(now)).or_else(|| self.od_edge(now)).or_else(|| self.zorua_error())
    }

    /// Whether any of the SM's units has requests waiting for their edge.
    pub fn units_pending(&self) -> bool {
        self.ol.as_ref().is_some_and(|p| p.borrow().pending()) || self.rq.as_ref().is_some_and(|p| p.borrow().pending()) || self.od.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// The operand log's requests of cycles before `now` are sampled at their edge (at the
    /// start of every cycle the GPU steps). Returns the GPU cycle and the report when the unit
    /// halted.
    fn ol_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.ol.as_mut()?.get_mut();
        let i = p.edge(now)?;
        let o = p.unit.outputs(&p.pending);
        // (a quota claimed or unclaimed: a block the dispatcher could not place may fit)
        self.ol_room_changed |= i.claim || o.pool_free != self.ol_pool;
        self.ol_pool = o.pool_free;
        let halted = p.halted();
        p.unit.at_cycle(now);
        if o.busy && now != u64::MAX {
            // (entries or a quota on their way back: the unit is clocked every cycle until
            // they are)
            p.at = now;
            p.pending.tick = true;
        }
        // (entries freed or claimed: a memory instruction waiting for them looks again)
        self.wake_all(now);
        halted
    }

    /// Adds a request of cycle `now` to the operand log's input; returns its outputs with it.
    pub(super) fn ol_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::oplog::In)) -> mpgpu_spec::units::oplog::Out {
        self.ol.as_ref().expect("the operand log's unit").borrow_mut().request(&|| format!("SM {}: operand-log", self.id), now, f)
    }

    /// The operand log's outputs this cycle (they depend on its registers only).
    pub(super) fn ol_out(&self) -> mpgpu_spec::units::oplog::Out {
        let p = self.ol.as_ref().expect("the operand log's unit").borrow();
        p.unit.outputs(&p.pending)
    }

    /// Block slot `bslot`'s log quota left, saturated at 3 (0 without an operand log).
    pub(super) fn ol_room(&self, bslot: u32) -> u8 {
        self.ol.as_ref().map_or(0, |p| {
            let p = p.borrow();
            p.unit.outputs(&p.pending).room_of(bslot)
        })
    }

    /// The admission unit's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    fn admit_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.admit.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.halted();
        p.unit.at_cycle(now);
        halted
    }

    /// Adds a request of cycle `now` to the admission unit's input; returns its outputs with it.
    pub(super) fn admit_request(&self, now: u64, f: impl FnOnce(&mut admit::In)) -> admit::Out {
        self.admit.as_ref().expect("the admission unit").borrow_mut().request(&|| format!("SM {}: admission", self.id), now, f)
    }

    /// The data array's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    fn od_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.od.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.halted();
        p.unit.at_cycle(now);
        halted
    }

    /// The replay queue's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    fn rq_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.rq.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.halted().or_else(|| self.rq_error.take());
        p.unit.at_cycle(now);
        // (slots freed: a memory instruction waiting for one looks again)
        self.wake_all(now);
        halted
    }

    /// Adds a request of cycle `now` to the replay queue's input; returns its outputs with it.
    /// At most one global memory instruction issues per cycle (the load/store unit takes one).
    pub(super) fn rq_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::rq::In)) -> mpgpu_spec::units::rq::Out {
        let mut p = self.rq.as_ref().expect("the replay queue's unit").borrow_mut();
        let key = |i: &mpgpu_spec::units::rq::In| (i.issue, i.replay, i.replay_idx, i.warp, i.pc, i.age);
        let before = (p.at == now).then(|| key(&p.pending)).filter(|k| k.0 || k.1);
        let o = p.request(&|| format!("SM {}: replay-queue", self.id), now, f);
        assert!(before.is_none_or(|k| k == key(&p.pending)), "SM {}: two global memory instructions issued in cycle {now}", self.id);
        o
    }

    /// The replay queue's outputs contradicted the SM in cycle `now` (a broken RTL alone in the
    /// slot): the run stops at the unit's edge with `what`. (In lockstep the mismatch with the
    /// model is reported first.)
    pub(super) fn rq_broken(&mut self, now: u64, what: String) {
        if self.rq_error.is_none() {
            self.rq_error = Some((now, format!("SM {}: the replay queue {what}", self.id)));
        }
    }

    /// Replay-queue slot `q` is freed (its instruction committed, or left with its block).
    pub(super) fn rq_free(&mut self, now: u64, q: u16) {
        self.rq_request(now, |i| i.free |= 1 << q);
        self.rq_used -= 1;
    }

    /// Whether every replay-queue slot is taken (a slot freed in this cycle serves from the next).
    pub(super) fn rq_is_full(&self) -> bool {
        self.rq.as_ref().is_some_and(|p| {
            let p = p.borrow();
            p.unit.outputs(&p.pending).full
        })
    }
}
