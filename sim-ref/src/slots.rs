//! Unit slots: where the GPU holds its RTL-backed units, and which instances carry RTL.
//!
//! A unit kind is global (one slot: the kernel scheduling framework, Warped-Slicer's
//! water-filling unit, the slice table) or per SM (one slot in every SM: Zorua's coordinator
//! and mapping tables, the replay queue, the operand log and its data array, the sampling
//! counters). A run fills each slot with the model alone, the RTL alone, or the lockstep pair
//! (the RTL in the loop, the model beside it); for per-SM kinds it says which SMs carry the RTL
//! ([`SmSet`]), the others holding the model.
//!
//! Every slot holds its unit the same way: a [`Hosted`] unit of the block's interface
//! ([`Held`]), which its host clocks, asks whether it halted, and (for reports and tests)
//! reaches the reference model of ([`Hosted::model`]). Units a co-simulation provides are put
//! in their slots by one call, `Gpu::set_units`, which finds the slot by the units' interface
//! ([`Units`]). A slot whose inputs gather over a cycle (an SM's requests) is a [`Port`].

use mpgpu_spec::Unit;
use std::any::{Any, TypeId};
use std::fmt;
use std::ops::Deref;

/// A unit as a slot holds it: the reference model, the RTL alone, or the two in lockstep.
pub trait Hosted: Unit {
    /// Why the run must stop: in lockstep, the RTL parted from the model; or the unit broke its
    /// protocol (a model that checks its inputs).
    fn halted(&self) -> Option<String> {
        None
    }
    /// The reference model, unless the RTL runs alone: what reports and tests read beyond the
    /// interface (a block's own statistics), by its type ([`ModelRef::get`]).
    fn model(&self) -> Option<ModelRef<'_>> {
        None
    }
    /// Whether the unit is idle after its last edge, so that with no input its clock may be
    /// gated (a unit that says so: the framework's `busy`). False: clocked when its host has
    /// inputs for it.
    fn quiet(&self) -> bool {
        false
    }
}

/// The unit in a slot of interface `I`/`O`.
pub type Held<I, O> = Box<dyn Hosted<In = I, Out = O>>;

/// A view of a slot's reference model, whatever holds it (the model itself, or a lockstep pair
/// sharing it with its caller).
pub struct ModelRef<'a>(Box<dyn Deref<Target = dyn Any> + 'a>);

impl<'a> ModelRef<'a> {
    /// The model `m` itself.
    pub fn of<T: Any>(m: &'a T) -> Self {
        ModelRef(Box::new(m as &dyn Any))
    }
    /// A model behind a guard (a `RefCell`'s borrow).
    pub fn new(r: impl Deref<Target = dyn Any> + 'a) -> Self {
        ModelRef(Box::new(r))
    }
    /// The model as a `T`, if it is one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        (*self.0).downcast_ref()
    }
    /// The view typed as a `T`, if the model is one.
    pub fn typed<T: Any>(self) -> Option<Box<dyn Deref<Target = T> + 'a>> {
        self.get::<T>()?;
        Some(Box::new(Typed(self, std::marker::PhantomData)))
    }
}

struct Typed<'a, T>(ModelRef<'a>, std::marker::PhantomData<T>);

impl<T: Any> Deref for Typed<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.get().expect("checked at construction")
    }
}

/// Units for the slots of one interface, one per instance (`make(k)`: instance k, the SM for a
/// per-SM slot, 0 for a global one), as `Gpu::set_units` offers them to the GPU's slot holders
/// (its SMs, its block scheduler): each takes them if it holds a slot of that interface.
pub struct Units<'a> {
    ty: TypeId,
    make: &'a mut dyn FnMut(usize) -> Box<dyn Any>,
}

impl<'a> Units<'a> {
    pub fn new(ty: TypeId, make: &'a mut dyn FnMut(usize) -> Box<dyn Any>) -> Self {
        Units { ty, make }
    }
    /// The type identifying the slots of interface `I`/`O`.
    pub fn id<I: 'static, O: 'static>() -> TypeId {
        TypeId::of::<Held<I, O>>()
    }
    /// Whether they are units of interface `I`/`O`.
    pub fn are<I: 'static, O: 'static>(&self) -> bool {
        self.ty == Self::id::<I, O>()
    }
    /// Instance `k` (after [`Units::are`]).
    pub fn make<I: 'static, O: 'static>(&mut self, k: usize) -> Held<I, O> {
        *(self.make)(k).downcast::<Held<I, O>>().expect("units of the interface asked for")
    }
}

/// A slot whose inputs gather over a cycle: requests made during cycle `at` build one input
/// word, which the unit samples at that cycle's edge (the SM's units, asked several times a
/// cycle).
pub struct Port<I, O> {
    pub unit: Held<I, O>,
    /// The inputs registered for the edge of cycle `at`, not yet taken.
    pub pending: I,
    pub at: u64,
}

impl<I: Default + PartialEq + Clone + fmt::Debug + 'static, O: Clone + fmt::Debug + PartialEq + 'static> Port<I, O> {
    pub fn new(unit: Held<I, O>) -> Self {
        Port { unit, pending: I::default(), at: 0 }
    }

    /// Clocks the unit on the inputs of a cycle before `now`, if there were any (a cycle
    /// without inputs changes nothing, so it is not clocked), timing it at that cycle; returns
    /// them. The caller then asks the unit whether it halted and moves it to `now`.
    pub fn edge(&mut self, now: u64) -> Option<I> {
        if self.at >= now || self.pending == I::default() {
            // (the outputs read from now on are read in this cycle or later)
            self.unit.at_cycle(now);
            return None;
        }
        let i = std::mem::take(&mut self.pending);
        self.unit.at_cycle(self.at);
        self.unit.clock(&i);
        Some(i)
    }

    /// Whether inputs wait for their edge.
    pub fn pending(&self) -> bool {
        self.pending != I::default()
    }

    /// Why the run must stop, dated to the cycle of the last edge.
    pub fn halted(&self) -> Option<(u64, String)> {
        self.unit.halted().map(|d| (self.at, d))
    }

    /// This cycle's outputs with the inputs registered so far.
    pub fn outputs(&self) -> O {
        self.unit.outputs(&self.pending)
    }

    /// Adds a request of cycle `now` to the input (`who` names the slot if requests of an
    /// earlier cycle were never sampled); returns the outputs with it.
    pub fn request(&mut self, who: &dyn Fn() -> String, now: u64, f: impl FnOnce(&mut I)) -> O {
        assert!(self.at == now || !self.pending(), "{} requests of cycle {} not sampled before cycle {now}", who(), self.at);
        self.at = now;
        f(&mut self.pending);
        self.unit.outputs(&self.pending)
    }
}

/// What a unit slot holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotMode {
    /// The RTL in the loop, the model beside it, compared every clocked cycle.
    #[default]
    Lockstep,
    /// The RTL alone, unchecked.
    RtlAlone,
    /// The reference model alone.
    ModelAlone,
}

/// The SMs whose slot of a per-SM unit kind carries RTL: `all` or a list of indices and
/// ranges (`0,3,5-7`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SmSet {
    #[default]
    All,
    Only(Vec<usize>),
}

impl SmSet {
    /// Parses `all` or `0,3,5-7` for a GPU of `sms` SMs; an error names the bad part.
    pub fn parse(s: &str, sms: usize) -> Result<SmSet, String> {
        let s = s.trim();
        if s == "all" {
            return Ok(SmSet::All);
        }
        let mut v = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let num = |x: &str| -> Result<usize, String> {
                let n: usize = x.trim().parse().map_err(|_| format!("SM list `{s}`: `{x}` is not an SM index (expected `all` or indices like 0,3,5-7)"))?;
                if n >= sms {
                    return Err(format!("SM list `{s}`: SM {n} does not exist (the GPU has SMs 0..={})", sms.saturating_sub(1)));
                }
                Ok(n)
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(format!("SM list `{s}`: range `{part}` runs backwards"));
                    }
                    v.extend(a..=b);
                }
                None => v.push(num(part)?),
            }
        }
        v.sort_unstable();
        v.dedup();
        Ok(SmSet::Only(v))
    }

    pub fn contains(&self, sm: usize) -> bool {
        match self {
            SmSet::All => true,
            SmSet::Only(v) => v.binary_search(&sm).is_ok(),
        }
    }
}

impl fmt::Display for SmSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmSet::All => f.write_str("all"),
            SmSet::Only(v) => f.write_str(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_sets_parse_and_reject_clearly() {
        assert_eq!(SmSet::parse("all", 16), Ok(SmSet::All));
        assert_eq!(SmSet::parse("5-7, 0,3,6", 16), Ok(SmSet::Only(vec![0, 3, 5, 6, 7])));
        assert!(SmSet::parse("0,16", 16).unwrap_err().contains("SM 16 does not exist"));
        assert!(SmSet::parse("3-1", 16).unwrap_err().contains("runs backwards"));
        assert!(SmSet::parse("x", 16).unwrap_err().contains("`x` is not an SM index"));
        let s = SmSet::parse("1,4", 8).unwrap();
        assert!(s.contains(4) && !s.contains(2));
        assert_eq!(s.to_string(), "1,4");
    }
}
