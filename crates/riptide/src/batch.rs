//! [`WriteBatch`]: writes applied atomically, possibly across column families.

use riptide_common::write_batch::WriteBatch as RawBatch;

use crate::cf::ColumnFamily;

/// A group of writes that [`crate::Db::write`] applies atomically: after a crash either all
/// of them are there or none. Entries apply in order, so a later write to a key wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub(crate) raw: RawBatch,
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
    }

    /// Encoded size in bytes (what the WAL record will hold).
    pub fn size_in_bytes(&self) -> usize {
        self.raw.size_in_bytes()
    }
}
