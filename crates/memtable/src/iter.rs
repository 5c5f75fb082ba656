//! [`MemtableIterator`]: the [`InternalIterator`] over a memtable.

use std::cmp::Ordering;
use std::sync::Arc;

use riptide_common::key::compare_internal_keys;
use riptide_common::{InternalIterator, Result};

use crate::memtable::Memtable;
use crate::skiplist::Cursor;

/// A bidirectional cursor over a memtable's entries in internal-key order. Owns an `Arc` of the
/// memtable, so it stays valid however long it lives. `key()` and `value()` borrow the arena:
/// no copy.
///
/// `next` is O(1); `prev` searches for the predecessor from the top of the skiplist, O(log n)
/// (as in LevelDB). Entries inserted concurrently may or may not be seen; the order is always
/// consistent. Never fails: every method returns `Ok`.
#[derive(Debug, Clone)]
pub struct MemtableIterator {
    memtable: Arc<Memtable>,
    cursor: Cursor,
}

impl MemtableIterator {
    pub(crate) fn new(memtable: Arc<Memtable>, cursor: Cursor) -> Self {
        MemtableIterator { memtable, cursor }
    }

    /// The memtable this iterator walks.
    pub fn memtable(&self) -> &Arc<Memtable> {
        &self.memtable
    }
}

impl InternalIterator for MemtableIterator {
    fn valid(&self) -> bool {
        self.cursor.valid()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.cursor.seek_to_first();
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.cursor.seek_to_last();
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.cursor
            .seek_first_not_before(|k| compare_internal_keys(k, target) == Ordering::Less);
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.cursor
            .seek_last_before(|k| compare_internal_keys(k, target) != Ordering::Greater);
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.cursor.next();
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        self.cursor.prev();
        Ok(())
    }

    fn key(&self) -> &[u8] {
        self.cursor.key()
    }

    fn value(&self) -> &[u8] {
        self.cursor.value()
    }
}
