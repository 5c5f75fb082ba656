//! The iterator protocol shared by memtables, tables and merged views.
//!
//! Every source of entries (a memtable, an SSTable, a merge of several) implements
//! [`InternalIterator`] over *internal keys* (see [`crate::key`]), ordered by
//! [`crate::key::compare_internal_keys`]. It is a cursor in the style of RocksDB's
//! `InternalIterator`: position it with a seek, then step with `next`/`prev`; `key` and `value`
//! are only meaningful while `valid()` is true. Errors (I/O, corruption) are returned by the
//! positioning calls; after an error the iterator is invalid.

use crate::error::Result;

/// A bidirectional cursor over `(internal key, value)` entries in internal-key order.
pub trait InternalIterator: Send {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Positions on the first entry (invalid if there is none).
    fn seek_to_first(&mut self) -> Result<()>;
    /// Positions on the last entry (invalid if there is none).
    fn seek_to_last(&mut self) -> Result<()>;
    /// Positions on the first entry whose key is >= `target` (an encoded internal key).
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Positions on the last entry whose key is <= `target` (an encoded internal key).
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()>;
    /// Moves to the next entry. Only call while valid.
    fn next(&mut self) -> Result<()>;
    /// Moves to the previous entry. Only call while valid.
    fn prev(&mut self) -> Result<()>;
    /// The current entry's encoded internal key. Only meaningful while valid.
    fn key(&self) -> &[u8];
    /// The current entry's value. Only meaningful while valid.
    fn value(&self) -> &[u8];
    /// A hint for the forward scans that follow the next positioning calls: they will not
    /// go on to user keys at or past `limit` (`None`: no such end known). A source that
    /// reads from files may fetch the blocks up to there in one read; nothing else changes,
    /// an iterator still steps past the limit when asked. Sources that read nothing ignore
    /// it (the default).
    fn set_readahead_limit(&mut self, _limit: Option<&[u8]>) {}
}

impl<I: InternalIterator + ?Sized> InternalIterator for Box<I> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        (**self).seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        (**self).seek_for_prev(target)
    }
    fn next(&mut self) -> Result<()> {
        (**self).next()
    }
    fn prev(&mut self) -> Result<()> {
        (**self).prev()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        (**self).set_readahead_limit(limit)
    }
}

/// A boxed iterator, as held by merged views.
pub type BoxedIterator = Box<dyn InternalIterator>;

/// An iterator over a sorted in-memory vector of `(internal key, value)` pairs. Useful in tests
/// and as a reference implementation of the protocol.
#[derive(Debug, Clone, Default)]
pub struct VecIterator {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: Option<usize>,
}

impl VecIterator {
    /// Wraps entries; they are sorted by internal key here.
    pub fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        entries.sort_by(|a, b| crate::key::compare_internal_keys(&a.0, &b.0));
        VecIterator { entries, pos: None }
    }

    fn current(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        self.pos.and_then(|p| self.entries.get(p))
    }
}

impl InternalIterator for VecIterator {
    fn valid(&self) -> bool {
        self.current().is_some()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = (!self.entries.is_empty()).then_some(0);
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.pos = self.entries.len().checked_sub(1);
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self.entries.partition_point(|(k, _)| {
            crate::key::compare_internal_keys(k, target) == std::cmp::Ordering::Less
        });
        self.pos = (i < self.entries.len()).then_some(i);
        Ok(())
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let i = self.entries.partition_point(|(k, _)| {
            crate::key::compare_internal_keys(k, target) != std::cmp::Ordering::Greater
        });
        self.pos = i.checked_sub(1);
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        self.pos = self.pos.map(|p| p + 1).filter(|&p| p < self.entries.len());
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        self.pos = self.pos.and_then(|p| p.checked_sub(1));
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.current().map(|e| e.0.as_slice()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.current().map(|e| e.1.as_slice()).unwrap_or(&[])
    }
}
