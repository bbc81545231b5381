//! The slots of the SM's own units (the replay queue, the operand log's bookkeeping and its
//! data array): each a [`UnitPort`] that gathers a cycle's requests into the unit's input word
//! and clocks it at that cycle's edge.

use super::*;

/// One of an SM's per-SM units (the operand log's bookkeeping, the replay queue) with the
/// requests of the cycle it is in: requests made during a cycle gather into one input word,
/// which the unit samples at that cycle's edge.
pub struct UnitPort<S: ?Sized + Unit> {
    pub unit: Box<S>,
    pub pending: S::In,
    /// The cycle of the pending requests.
    pub at: u64,
}

impl<S: ?Sized + Unit> UnitPort<S>
where
    S::In: Default,
{
    fn new(unit: Box<S>) -> Self {
        UnitPort { unit, pending: Default::default(), at: 0 }
    }

    /// Clocks the unit on the requests of a cycle before `now`, if there were any (a cycle
    /// without requests changes nothing, so it is not clocked), timing it at that cycle;
    /// returns them. The caller then asks the unit whether it halted and moves it to `now`.
    fn edge(&mut self, now: u64) -> Option<S::In> {
        if self.at >= now || self.pending == Default::default() {
            // (the outputs read from now on are read in this cycle or later)
            self.unit.at_cycle(now);
            return None;
        }
        let i = std::mem::take(&mut self.pending);
        self.unit.at_cycle(self.at);
        self.unit.clock(&i);
        Some(i)
    }

    /// Whether requests wait for their edge.
    fn pending(&self) -> bool {
        self.pending != Default::default()
    }

    /// Adds a request of cycle `now` to the input; returns the outputs with it.
    pub(super) fn request(&mut self, sm: u32, what: &str, now: u64, f: impl FnOnce(&mut S::In)) -> S::Out {
        assert!(self.at == now || !self.pending(), "SM {sm}: {what} requests of cycle {} not sampled before cycle {now}", self.at);
        self.at = now;
        f(&mut self.pending);
        self.unit.outputs(&self.pending)
    }
}

pub(super) type OlPort = UnitPort<dyn crate::units::oplog::OplogSlot>;

pub(super) type RqPort = UnitPort<dyn crate::units::rq::ReplaySlot>;

pub(super) type OdPort = UnitPort<dyn crate::units::oldata::OldataSlot>;

impl Sm {
    /// Puts `unit` in the operand-log slot.
    pub fn set_oplog_unit(&mut self, unit: Box<dyn crate::units::oplog::OplogSlot>) {
        self.ol_pool = unit.outputs(&Default::default()).pool_free;
        self.ol = Some(std::cell::RefCell::new(OlPort::new(unit)));
    }

    /// The operand log's requests of cycles before `now` are sampled at their edge (called by
    /// the GPU at the start of every cycle it steps). Returns the GPU cycle and the report when
    /// a co-simulated unit parted from its model.
    pub fn ol_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.ol.as_mut()?.get_mut();
        let i = p.edge(now)?;
        let o = p.unit.outputs(&p.pending);
        // (a quota claimed or unclaimed: a block the dispatcher could not place may fit)
        self.ol_room_changed |= i.claim || o.pool_free != self.ol_pool;
        self.ol_pool = o.pool_free;
        let halted = p.unit.halted().map(|d| (p.at, d));
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

    /// Whether the operand log has requests waiting for their edge.
    pub fn ol_pending(&self) -> bool {
        self.ol.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Adds a request of cycle `now` to the operand log's input; returns its outputs with it.
    pub(super) fn ol_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::oplog::In)) -> mpgpu_spec::units::oplog::Out {
        self.ol.as_ref().expect("the operand log's unit").borrow_mut().request(self.id, "operand-log", now, f)
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

    /// Puts `unit` in the operand log's data-array slot.
    pub fn set_oldata_unit(&mut self, unit: Box<dyn crate::units::oldata::OldataSlot>) {
        self.od = Some(std::cell::RefCell::new(OdPort::new(unit)));
    }

    /// The data array's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    pub fn od_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.od.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.unit.halted().map(|d| (p.at, d));
        p.unit.at_cycle(now);
        halted
    }

    /// Whether the data array has requests waiting for their edge.
    pub fn od_pending(&self) -> bool {
        self.od.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Puts `unit` in the replay-queue slot.
    pub fn set_rq_unit(&mut self, unit: Box<dyn crate::units::rq::ReplaySlot>) {
        self.rq = Some(std::cell::RefCell::new(RqPort::new(unit)));
    }

    /// The replay queue's requests of cycles before `now` are sampled at their edge (as
    /// [`Sm::ol_edge`]).
    pub fn rq_edge(&mut self, now: u64) -> Option<(u64, String)> {
        let p = self.rq.as_mut()?.get_mut();
        p.edge(now)?;
        let halted = p.unit.halted().map(|d| (p.at, d)).or_else(|| self.rq_error.take());
        p.unit.at_cycle(now);
        // (slots freed: a memory instruction waiting for one looks again)
        self.wake_all(now);
        halted
    }

    /// Whether the replay queue has requests waiting for their edge.
    pub fn rq_pending(&self) -> bool {
        self.rq.as_ref().is_some_and(|p| p.borrow().pending())
    }

    /// Adds a request of cycle `now` to the replay queue's input; returns its outputs with it.
    /// At most one global memory instruction issues per cycle (the load/store unit takes one).
    pub(super) fn rq_request(&self, now: u64, f: impl FnOnce(&mut mpgpu_spec::units::rq::In)) -> mpgpu_spec::units::rq::Out {
        let mut p = self.rq.as_ref().expect("the replay queue's unit").borrow_mut();
        let key = |i: &mpgpu_spec::units::rq::In| (i.issue, i.replay, i.replay_idx, i.warp, i.pc, i.age);
        let before = (p.at == now).then(|| key(&p.pending)).filter(|k| k.0 || k.1);
        let o = p.request(self.id, "replay-queue", now, f);
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
