//! The range tombstones of one memtable, kept apart from its point entries.
//!
//! Range deletes are rare next to point writes (dropping a table or an index), so a plain
//! vector behind a reader-writer lock is enough; an atomic count lets every reader skip the lock
//! when there is none (the common case). Lookups go through a fragmented
//! [`RangeTombstoneSet`] of *all* the tombstones, built lazily and cached until the next
//! insert; it answers for every snapshot at or above the newest tombstone's seqno (the normal
//! case: a read at the latest seqno). Older snapshots fall back to a linear scan (point
//! lookups) or build their own set (iterators).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;
use riptide_common::SeqNo;
use riptide_common::range_del::{RangeTombstone, RangeTombstoneSet};

#[derive(Debug, Default)]
struct Inner {
    /// In insertion order.
    tombstones: Vec<RangeTombstone>,
    /// Largest seqno in `tombstones` (0 while empty).
    max_seqno: SeqNo,
    /// Fragments of every tombstone in `tombstones`; `None` after an insert, until needed.
    all: Option<Arc<RangeTombstoneSet>>,
}

/// Range tombstones of one memtable. `Send + Sync`; inserts may race with each other and with
/// readers.
#[derive(Debug, Default)]
pub(crate) struct RangeTombstoneStore {
    inner: RwLock<Inner>,
    /// Number of tombstones, incremented (Release) after each is pushed.
    count: AtomicUsize,
    /// Bytes the tombstones occupy (see [`RangeTombstone::approximate_memory`]).
    bytes: AtomicUsize,
}

impl RangeTombstoneStore {
    /// Adds `tombstone` (the caller has already dropped empty ones).
    pub(crate) fn insert(&self, tombstone: RangeTombstone) {
        let bytes = tombstone.approximate_memory();
        {
            let mut inner = self.inner.write();
            inner.max_seqno = inner.max_seqno.max(tombstone.seqno);
            inner.tombstones.push(tombstone);
            inner.all = None;
        }
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Release);
    }

    /// Number of tombstones; lock-free.
    pub(crate) fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Bytes the tombstones occupy.
    pub(crate) fn memory_usage(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// A copy of every tombstone, in insertion order.
    pub(crate) fn to_vec(&self) -> Vec<RangeTombstone> {
        self.inner.read().tombstones.clone()
    }

    /// The cached fragments of every tombstone if they are exactly the set visible at
    /// `snapshot` (every tombstone has a seqno <= `snapshot`), building them if needed.
    fn all_if_visible(&self, snapshot: SeqNo) -> Option<Arc<RangeTombstoneSet>> {
        {
            let inner = self.inner.read();
            if inner.max_seqno > snapshot {
                return None;
            }
            if let Some(all) = &inner.all {
                return Some(Arc::clone(all));
            }
        }
        let mut inner = self.inner.write();
        if inner.max_seqno > snapshot {
            return None;
        }
        let all = match &inner.all {
            Some(all) => Arc::clone(all),
            None => {
                let all = Arc::new(RangeTombstoneSet::new(&inner.tombstones, SeqNo::MAX));
                inner.all = Some(Arc::clone(&all));
                all
            }
        };
        Some(all)
    }

    /// The tombstones visible at `snapshot`, fragmented. Shares the cached set when possible.
    pub(crate) fn set_at(&self, snapshot: SeqNo) -> Arc<RangeTombstoneSet> {
        if self.len() == 0 {
            return Arc::new(RangeTombstoneSet::empty());
        }
        if let Some(all) = self.all_if_visible(snapshot) {
            return all;
        }
        Arc::new(RangeTombstoneSet::new(
            &self.inner.read().tombstones,
            snapshot,
        ))
    }

    /// The largest seqno `<= snapshot` of the tombstones covering `user_key`.
    pub(crate) fn max_covering_seqno(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        if self.len() == 0 {
            return None;
        }
        if let Some(all) = self.all_if_visible(snapshot) {
            return all.max_covering_seqno(user_key);
        }
        self.inner
            .read()
            .tombstones
            .iter()
            .filter(|t| t.seqno <= snapshot && t.contains(user_key))
            .map(|t| t.seqno)
            .max()
    }
}
