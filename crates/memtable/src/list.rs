//! [`MemtableList`]: the active memtable and the immutable ones waiting to be flushed.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::memtable::Memtable;

/// The active memtable plus a queue of immutable ones waiting for flush (oldest first).
///
/// Not synchronised itself: the engine keeps it behind its own lock (or swaps copies of it),
/// while the memtables inside are shared freely through their `Arc`s.
#[derive(Debug, Clone)]
pub struct MemtableList {
    active: Arc<Memtable>,
    immutables: VecDeque<Arc<Memtable>>,
}

impl MemtableList {
    /// A list with `active` and no immutable memtable.
    pub fn new(active: Arc<Memtable>) -> Self {
        MemtableList {
            active,
            immutables: VecDeque::new(),
        }
    }

    /// The memtable that takes writes.
    pub fn active(&self) -> &Arc<Memtable> {
        &self.active
    }

    /// Makes `new_active` the active memtable; the old active joins the immutable queue (newest
    /// at the back). Returns the old one.
    pub fn switch(&mut self, new_active: Arc<Memtable>) -> Arc<Memtable> {
        let old = std::mem::replace(&mut self.active, new_active);
        self.immutables.push_back(Arc::clone(&old));
        old
    }

    /// The immutable memtables, oldest first.
    pub fn immutables(
        &self,
    ) -> impl DoubleEndedIterator<Item = &Arc<Memtable>> + ExactSizeIterator {
        self.immutables.iter()
    }

    /// The immutable memtable that was switched out first (the next to flush).
    pub fn oldest_immutable(&self) -> Option<&Arc<Memtable>> {
        self.immutables.front()
    }

    /// Removes a flushed immutable memtable (matched by `Arc::ptr_eq`); returns whether it was
    /// there.
    pub fn remove_immutable(&mut self, m: &Arc<Memtable>) -> bool {
        match self.immutables.iter().position(|x| Arc::ptr_eq(x, m)) {
            Some(i) => self.immutables.remove(i).is_some(),
            None => false,
        }
    }

    /// Number of immutable memtables.
    pub fn immutable_count(&self) -> usize {
        self.immutables.len()
    }

    /// Memory of the active and every immutable memtable
    /// (see [`Memtable::approximate_memory_usage`]).
    pub fn total_memory_usage(&self) -> usize {
        self.immutables
            .iter()
            .map(|m| m.approximate_memory_usage())
            .fold(
                self.active.approximate_memory_usage(),
                usize::saturating_add,
            )
    }

    /// Every memtable, newest first (the active one, then immutables newest to oldest): the
    /// order in which a read must consult them.
    pub fn newest_first(&self) -> impl Iterator<Item = &Arc<Memtable>> {
        std::iter::once(&self.active).chain(self.immutables.iter().rev())
    }
}
