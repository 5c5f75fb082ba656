//! [`WriteBatch`]: writes applied atomically, possibly across column families.

use riptide_common::range_del::check_range;
use riptide_common::write_batch::WriteBatch as RawBatch;
use riptide_common::{CfId, Error, Result};

use crate::cf::ColumnFamily;

/// A group of writes that [`crate::Db::write`] applies atomically: after a crash either all
/// of them are there or none. Entries apply in order, so a later write to a key wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub(crate) raw: RawBatch,
    /// Range deletes requested, empty ones included.
    range_deletes: usize,
    /// Why the batch cannot be written (the first inverted range), if so.
    invalid: Option<String>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> &mut Self {
        self.raw.put(key, value);
        self
    }

    /// Deletes `key` in the default column family.
    pub fn delete(&mut self, key: &[u8]) -> &mut Self {
        self.raw.delete(key);
        self
    }

    /// Single-deletes `key` in the default column family (see [`crate::Db::single_delete`]).
    pub fn single_delete(&mut self, key: &[u8]) -> &mut Self {
        self.raw.single_delete(key);
        self
    }

    /// Deletes every key `k` with `start <= k < end` in the default column family (see
    /// [`crate::Db::delete_range`]).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) -> &mut Self {
        self.delete_range_in(riptide_common::DEFAULT_CF_ID, start, end)
    }

    /// Deletes every key `k` with `start <= k < end` in `cf`: one range tombstone, whatever
    /// the number of keys. An empty range (`start == end`) deletes nothing; an inverted one
    /// (`start > end`) makes [`crate::Db::write`] fail with `InvalidArgument`. The tombstone
    /// is persisted like any write (WAL, then flush and compaction carry it in the tables'
    /// range-deletion blocks until it has deleted what it covers).
    pub fn delete_range_cf(&mut self, cf: &ColumnFamily, start: &[u8], end: &[u8]) -> &mut Self {
        self.delete_range_in(cf.id(), start, end)
    }

    fn delete_range_in(&mut self, cf: CfId, start: &[u8], end: &[u8]) -> &mut Self {
        self.range_deletes = self.range_deletes.saturating_add(1);
        match check_range(start, end) {
            Ok(true) => self.raw.delete_range_cf(cf, start, end),
            Ok(false) => {}
            Err(e) => {
                if self.invalid.is_none() {
                    self.invalid = Some(e.context().to_string());
                }
            }
        }
        self
    }

    /// Number of range deletes requested (empty ones included).
    pub fn range_delete_count(&self) -> usize {
        self.range_deletes
    }

    /// Whether [`crate::Db::write`] may apply this batch as far as range deletes go:
    /// `InvalidArgument` for an inverted range.
    pub(crate) fn check_range_deletes(&self) -> Result<()> {
        if self.range_deletes == 0 {
            return Ok(());
        }
        match &self.invalid {
            Some(why) => Err(Error::invalid_argument(why.clone())),
            None => Ok(()),
        }
    }

    /// Sets `key` to `value` in `cf`.
    pub fn put_cf(&mut self, cf: &ColumnFamily, key: &[u8], value: &[u8]) -> &mut Self {
        self.raw.put_cf(cf.id(), key, value);
        self
    }

    /// Deletes `key` in `cf`.
    pub fn delete_cf(&mut self, cf: &ColumnFamily, key: &[u8]) -> &mut Self {
        self.raw.delete_cf(cf.id(), key);
        self
    }

    /// Single-deletes `key` in `cf`.
    pub fn single_delete_cf(&mut self, cf: &ColumnFamily, key: &[u8]) -> &mut Self {
        self.raw.single_delete_cf(cf.id(), key);
        self
    }

    /// Number of writes in the batch.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// True when the batch holds no write.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Removes every write.
    pub fn clear(&mut self) {
        self.raw.clear();
        self.range_deletes = 0;
        self.invalid = None;
    }

    /// Encoded size in bytes (what the WAL record will hold).
    pub fn size_in_bytes(&self) -> usize {
        self.raw.size_in_bytes()
    }
}
