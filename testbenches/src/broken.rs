//! Test-only broken variants in a run: one map, keyed by block name, of each block's faults (its
//! RTL's `Faults` struct, or a flag), which the registry's variants set by name
//! (`crate::registry::Variant`, `mpgpu cosim --broken`) and each block's builder reads.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A block's faults, whatever their type.
trait Faults: Any + fmt::Debug + Send + Sync {
    fn any(&self) -> &dyn Any;
}

impl<T: Any + fmt::Debug + Send + Sync> Faults for T {
    fn any(&self) -> &dyn Any {
        self
    }
}

/// The broken variants of a run, per block (a block absent is built as designed).
#[derive(Clone, Default)]
pub struct Broken(BTreeMap<&'static str, Arc<dyn Faults>>, Vec<&'static str>);

impl Broken {
    /// Block `block`'s faults `f`.
    pub fn with<T: Any + fmt::Debug + Send + Sync>(mut self, block: &'static str, f: T) -> Self {
        self.0.insert(block, Arc::new(f));
        self
    }

    /// Block `block`'s faults, as built (the default, nothing broken, when none were set).
    pub fn of<T: Any + Default + Clone>(&self, block: &str) -> T {
        self.0.get(block).and_then(|f| (**f).any().downcast_ref::<T>()).cloned().unwrap_or_default()
    }

    /// Changes block `block`'s faults with `f`.
    pub fn edit<T: Any + fmt::Debug + Send + Sync + Default + Clone>(&mut self, block: &'static str, f: impl FnOnce(&mut T)) {
        let mut t = self.of::<T>(block);
        f(&mut t);
        self.0.insert(block, Arc::new(t));
    }

    /// Whether no block is broken.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Records that the registry's variant `name` is set (for the command that reproduces a
    /// run: `--broken NAME`).
    pub fn named(mut self, name: &'static str) -> Self {
        if !self.1.contains(&name) {
            self.1.push(name);
        }
        self
    }

    /// The registry's variants set by name, in the order set.
    pub fn names(&self) -> &[&'static str] {
        &self.1
    }
}

impl fmt::Debug for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter()).finish()
    }
}
