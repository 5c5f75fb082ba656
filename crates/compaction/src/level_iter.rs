//! [`LevelIterator`]: one cursor over a sorted run of tables (a level below L0), opening
//! only the table it is on.
//!
//! The tables of a level hold disjoint, ordered key ranges, so a position in the run is a
//! table and a position in it. A seek picks the one table that may hold the target by
//! binary search over the tables' key ranges and seeks only there; steps move into the next
//! (or previous) table when one runs out. A merge over the level then does one table seek per
//! level instead of one per table (RocksDB's `LevelIterator`): an index spread over a hundred
//! tables of a level costs one child, not a hundred, and each seek reads at most one data
//! block of the level.

use std::sync::Arc;

use riptide_common::key::user_key;
use riptide_common::{InternalIterator, Result};

use crate::table_handle::{HandleIterator, TableHandle};

/// An [`InternalIterator`] over the union of tables whose key ranges are disjoint and given
/// in ascending order (one level's run, as `Version` keeps it), in internal-key order.
///
/// The iterator of the table it is on is kept, and reused when a seek lands in the same
/// table again.
pub struct LevelIterator {
    tables: Vec<Arc<TableHandle>>,
    /// The table the cursor is in (an index into `tables`) and its iterator.
    current: Option<(usize, HandleIterator)>,
    /// The read-ahead limit given to every table iterator it opens
    /// ([`InternalIterator::set_readahead_limit`]).
    readahead_limit: Option<Vec<u8>>,
}

impl std::fmt::Debug for LevelIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelIterator")
            .field("tables", &self.tables.len())
            .field("current", &self.current.as_ref().map(|(i, _)| *i))
            .finish()
    }
}

impl LevelIterator {
    /// A cursor over `tables`, which must hold disjoint key ranges in ascending order.
    /// Unpositioned until a seek; opens no table until then.
    pub fn new(tables: Vec<Arc<TableHandle>>) -> Self {
        LevelIterator {
            tables,
            current: None,
            readahead_limit: None,
        }
    }

    /// The iterator of table `index`, reusing the one the cursor holds when it is that
    /// table's. `None` past either end of the run.
    fn table_iter(&mut self, index: usize) -> Option<&mut HandleIterator> {
        if self.current.as_ref().is_none_or(|(i, _)| *i != index) {
            let handle = self.tables.get(index)?;
            let mut it = handle.iter();
            it.set_readahead_limit(self.readahead_limit.as_deref());
            self.current = Some((index, it));
        }
        self.current.as_mut().map(|(_, it)| it)
    }

    /// Leaves the cursor invalid (past the end of the run); drops the table iterator.
    fn clear(&mut self) {
        self.current = None;
    }

    /// Runs `op` on table `index`'s iterator; on an error the cursor is left invalid.
    fn position(
        &mut self,
        index: usize,
        op: impl FnOnce(&mut HandleIterator) -> Result<()>,
    ) -> Result<bool> {
        let Some(it) = self.table_iter(index) else {
            self.clear();
            return Ok(false);
        };
        if let Err(e) = op(it) {
            self.clear();
            return Err(e);
        }
        Ok(it.valid())
    }

    /// From table `index` on, the first entry of the first table that has one.
    fn first_from(&mut self, mut index: usize) -> Result<()> {
        while index < self.tables.len() {
            if self.position(index, |it| it.seek_to_first())? {
                return Ok(());
            }
            index += 1;
        }
        self.clear();
        Ok(())
    }

    /// From table `index` down, the last entry of the last table that has one.
    fn last_from(&mut self, index: Option<usize>) -> Result<()> {
        let mut next = index;
        while let Some(index) = next {
            if self.position(index, |it| it.seek_to_last())? {
                return Ok(());
            }
            next = index.checked_sub(1);
        }
        self.clear();
        Ok(())
    }

    fn current_index(&self) -> Option<usize> {
        self.current.as_ref().map(|(i, _)| *i)
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|(_, it)| it.valid())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.first_from(0)
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.last_from(self.tables.len().checked_sub(1))
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        // Every table before the first one not ending before the target's user key holds
        // only smaller keys (user keys below the target's).
        let uk = user_key(target);
        let first = self.tables.partition_point(|h| h.meta.ends_before(uk));
        if self.position(first, |it| it.seek(target))? {
            return Ok(());
        }
        // Nothing >= target in that table: the answer is the next table's first entry.
        self.first_from(first + 1)
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        // Every table from the first one starting past the target's user key on holds only
        // larger keys.
        let uk = user_key(target);
        let past = self
            .tables
            .partition_point(|h| h.meta.smallest_user_key() <= uk);
        let Some(last) = past.checked_sub(1) else {
            self.clear();
            return Ok(());
        };
        if self.position(last, |it| it.seek_for_prev(target))? {
            return Ok(());
        }
        self.last_from(last.checked_sub(1))
    }

    fn next(&mut self) -> Result<()> {
        let Some(index) = self.current_index() else {
            return Ok(());
        };
        if self.position(index, |it| it.next())? {
            return Ok(());
        }
        self.first_from(index + 1)
    }

    fn prev(&mut self) -> Result<()> {
        let Some(index) = self.current_index() else {
            return Ok(());
        };
        if self.position(index, |it| it.prev())? {
            return Ok(());
        }
        self.last_from(index.checked_sub(1))
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, it)| it.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, it)| it.value())
    }

    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        if self.readahead_limit.as_deref() == limit {
            return;
        }
        self.readahead_limit = limit.map(<[u8]>::to_vec);
        if let Some((_, it)) = self.current.as_mut() {
            it.set_readahead_limit(limit);
        }
    }
}
