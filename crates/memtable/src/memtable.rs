//! [`Memtable`]: a concurrent skiplist of internal keys plus the bookkeeping the engine needs,
//! and the memtable's range tombstones, kept apart from the point entries.

use std::cell::RefCell;
use std::cmp::Ordering as CmpOrdering;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use riptide_common::key::{
    MAX_SEQNO, compare_internal_keys, encode_internal_key, parse_internal_key, seek_key, seqno_of,
    user_key,
};
use riptide_common::range_del::{RangeTombstone, RangeTombstoneSet};
use riptide_common::{SeqNo, ValueKind};

use crate::filter::KeyFilter;
use crate::iter::MemtableIterator;
use crate::range_tombstones::RangeTombstoneStore;
use crate::skiplist::{Cursor, SkipList};

/// The version of a key found by [`Memtable::get`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemtableValue {
    /// Sequence number of the version.
    pub seqno: SeqNo,
    /// What the version is (a put, a tombstone...).
    pub kind: ValueKind,
    /// Its value (empty for tombstones).
    pub value: Vec<u8>,
}

/// An in-memory, ordered table of internal keys. `Send + Sync`: inserts may come from many
/// threads at once while others read. Memory is freed only when the memtable is dropped.
///
/// Range tombstones ([`ValueKind::RangeDelete`] entries) are not point entries: they live in a
/// separate store (see [`Memtable::range_tombstones`]) and never appear in [`Memtable::iter`]
/// or [`Memtable::get`]. Readers combine both (the engine's `get` and iterator do).
pub struct Memtable {
    id: u64,
    list: Arc<SkipList>,
    range_dels: RangeTombstoneStore,
    /// Smallest seqno inserted; `u64::MAX` while empty.
    min_seqno: AtomicU64,
    /// Largest seqno inserted plus one; 0 while empty.
    max_seqno_plus_one: AtomicU64,
    /// Point deletes (deletes and single deletes) inserted.
    deletes: AtomicU64,
    /// A reader asked for this memtable to be flushed early (see
    /// [`Memtable::request_flush`]).
    flush_requested: AtomicBool,
    /// Bloom filter over the point entries' user keys, if the memtable was made with one.
    /// (Lookups it answers are not counted: a shared counter bumped by every point read
    /// would cost more cache-line traffic than the skipped search saves on two cores.)
    filter: Option<KeyFilter>,
}

impl std::fmt::Debug for Memtable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memtable")
            .field("id", &self.id)
            .field("len", &self.len())
            .field("range_tombstones", &self.range_dels.len())
            .field("memory_usage", &self.approximate_memory_usage())
            .field("min_seqno", &self.min_seqno())
            .field("max_seqno", &self.max_seqno())
            .field("filter", &self.filter)
            .finish()
    }
}

/// Keys up to this size are encoded in a reusable per-thread buffer; larger ones in a fresh
/// vector (so that one huge key does not pin a huge buffer to the thread).
const SCRATCH_LIMIT: usize = 4096;

/// Calls `f` with the encoded internal key `(user_key, seqno, kind)`.
fn with_internal_key<R>(
    user_key: &[u8],
    seqno: SeqNo,
    kind: ValueKind,
    f: impl FnOnce(&[u8]) -> R,
) -> R {
    thread_local! {
        static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let mut f = Some(f);
    if user_key.len() <= SCRATCH_LIMIT {
        let done = SCRATCH.try_with(|cell| {
            let mut buf = cell.try_borrow_mut().ok()?;
            buf.clear();
            encode_internal_key(&mut buf, user_key, seqno, kind);
            f.take().map(|f| f(&buf))
        });
        if let Ok(Some(r)) = done {
            return r;
        }
    }
    // Large key, thread shutting down, or (impossible) re-entrance: use a fresh buffer.
    let mut buf = Vec::new();
    encode_internal_key(&mut buf, user_key, seqno, kind);
    match f.take() {
        Some(f) => f(&buf),
        // `f` is only taken by the scratch path, which then returned.
        None => std::process::abort(),
    }
}

impl Memtable {
    /// An empty memtable. `id` is an opaque tag chosen by the caller (the engine uses the number
    /// of the WAL segment that logs the memtable's writes).
    pub fn new(id: u64) -> Self {
        Self::with_key_filter(id, 0)
    }

    /// An empty memtable with a bloom filter of about `filter_bytes` bytes over its point
    /// entries' user keys (none for 0): [`Memtable::get`] of a key the filter rules out
    /// returns without searching the skiplist. Size it for the entries expected (16 bits per
    /// key gives about 1% false positives; more entries than planned only raise that rate).
    pub fn with_key_filter(id: u64, filter_bytes: usize) -> Self {
        Memtable {
            id,
            list: Arc::new(SkipList::new()),
            range_dels: RangeTombstoneStore::default(),
            min_seqno: AtomicU64::new(u64::MAX),
            max_seqno_plus_one: AtomicU64::new(0),
            deletes: AtomicU64::new(0),
            flush_requested: AtomicBool::new(false),
            filter: KeyFilter::with_size(filter_bytes),
        }
    }

    /// The tag given to [`Memtable::new`].
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Inserts one version of `user_key`. Safe to call from many threads at once; concurrent
    /// readers see the entry as soon as this returns (or earlier), never half of it.
    ///
    /// `seqno` is stored modulo 2^56 like in every internal key (see
    /// [`riptide_common::key::MAX_SEQNO`]). Returns false, changing nothing, if the very same
    /// internal key (user key, seqno and kind) is already present; the engine never does that
    /// since seqnos are unique.
    ///
    /// A [`ValueKind::RangeDelete`] entry (`user_key` = inclusive start, `value` = exclusive
    /// end, as in a write batch) goes to the range-tombstone store instead, exactly like
    /// [`Memtable::insert_range_tombstone`]: so the write path and WAL replay, which both
    /// insert batch entries through this method, need no special case.
    pub fn insert(&self, user_key: &[u8], seqno: SeqNo, kind: ValueKind, value: &[u8]) -> bool {
        if kind == ValueKind::RangeDelete {
            return self.insert_range_tombstone(user_key, value, seqno);
        }
        // The key's filter bits go in before the node is linked (see the filter's docs).
        if let Some(filter) = &self.filter {
            filter.insert(user_key);
        }
        let inserted = with_internal_key(user_key, seqno, kind, |key| self.list.insert(key, value));
        if inserted {
            self.note_seqno(seqno);
            if matches!(kind, ValueKind::Delete | ValueKind::SingleDelete) {
                self.deletes.fetch_add(1, Ordering::Relaxed);
            }
        }
        inserted
    }

    /// Point deletes (deletes and single deletes) inserted so far.
    pub fn delete_count(&self) -> u64 {
        self.deletes.load(Ordering::Relaxed)
    }

    /// Asks the engine to freeze and flush this memtable before it is full: a reader found
    /// scans stepping over many of its tombstones, which a flush turns into a range tombstone
    /// that scans seek over. The write path acts on it (see [`Memtable::flush_requested`]).
    pub fn request_flush(&self) {
        self.flush_requested.store(true, Ordering::Relaxed);
    }

    /// Whether [`Memtable::request_flush`] was called.
    pub fn flush_requested(&self) -> bool {
        self.flush_requested.load(Ordering::Relaxed)
    }

    fn note_seqno(&self, seqno: SeqNo) {
        let seqno = seqno & MAX_SEQNO;
        self.min_seqno.fetch_min(seqno, Ordering::Relaxed);
        self.max_seqno_plus_one
            .fetch_max(seqno + 1, Ordering::Relaxed);
    }

    /// Inserts the range tombstone `[start, end)` at `seqno`: it deletes every version with a
    /// smaller seqno of every key in the range, in this memtable and in every older source.
    /// Safe to call concurrently with other inserts and with readers. An empty or inverted
    /// range (`start >= end`) deletes nothing and is not stored: returns false.
    pub fn insert_range_tombstone(&self, start: &[u8], end: &[u8], seqno: SeqNo) -> bool {
        if start >= end {
            return false;
        }
        let seqno = seqno & MAX_SEQNO;
        self.range_dels
            .insert(RangeTombstone::new(start, end, seqno));
        self.note_seqno(seqno);
        true
    }

    /// Every range tombstone of this memtable, in insertion order (they may overlap). This is
    /// what a flush must persist next to the point entries of [`Memtable::iter`].
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        self.range_dels.to_vec()
    }

    /// Number of range tombstones. Lock-free.
    pub fn range_tombstone_count(&self) -> usize {
        self.range_dels.len()
    }

    /// True when the memtable holds at least one range tombstone. Lock-free: readers test it
    /// first and skip every range-tombstone step when it is false.
    pub fn has_range_tombstones(&self) -> bool {
        self.range_tombstone_count() != 0
    }

    /// The range tombstones visible at `snapshot` (seqno <= `snapshot`), fragmented. When every
    /// tombstone is visible (the usual case) this is a cached set shared by all readers, built
    /// once per change.
    pub fn range_tombstone_set(&self, snapshot: SeqNo) -> Arc<RangeTombstoneSet> {
        self.range_dels.set_at(snapshot)
    }

    /// The largest seqno `<= snapshot` of this memtable's range tombstones covering
    /// `user_key`, if any: a version `(user_key, s)` from this or any older source is deleted
    /// when this is `Some(t)` with `t > s`.
    pub fn max_covering_seqno(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        self.range_dels.max_covering_seqno(user_key, snapshot)
    }

    /// The newest version of `user_key` with a seqno `<= snapshot` (it may be a tombstone);
    /// `None` if there is none. Point entries only: range tombstones are not versions of their
    /// start key; ask [`Memtable::max_covering_seqno`] whether one deletes the version found.
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Option<MemtableValue> {
        self.get_with(user_key, snapshot, |seqno, kind, value| MemtableValue {
            seqno,
            kind,
            value: value.to_vec(),
        })
    }

    /// Like [`Memtable::get`], but hands the version to `f` without copying its value.
    pub fn get_with<R>(
        &self,
        key: &[u8],
        snapshot: SeqNo,
        f: impl FnOnce(SeqNo, ValueKind, &[u8]) -> R,
    ) -> Option<R> {
        if !self.may_contain(key) {
            return None;
        }
        // Entries before the target: smaller user keys, and versions of `key` newer than the
        // snapshot (they sort first). This is `compare(entry, seek_key(key, snapshot)) == Less`
        // without building the seek key.
        let (entry_key, value) = self.list.first_not_before(|k| match user_key(k).cmp(key) {
            CmpOrdering::Less => true,
            CmpOrdering::Equal => seqno_of(k) > snapshot,
            CmpOrdering::Greater => false,
        })?;
        let parsed = parse_internal_key(entry_key).ok()?;
        (parsed.user_key == key).then(|| f(parsed.seqno, parsed.kind, value))
    }

    /// False only if no point entry of `user_key` was ever inserted (the filter rules it
    /// out); always true without a filter.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.filter.as_ref().is_none_or(|f| f.may_contain(user_key))
    }

    /// Bytes of the key filter (0 without one). Not part of
    /// [`Memtable::approximate_memory_usage`], which measures the entries and decides when
    /// the memtable is full; part of [`Memtable::allocated_memory`].
    pub fn filter_memory(&self) -> usize {
        self.filter.as_ref().map_or(0, KeyFilter::memory_size)
    }

    /// A bidirectional iterator over every entry, in internal-key order. It keeps the memtable
    /// alive and sees entries inserted after it was made (there is no snapshot isolation at this
    /// level: callers filter by seqno).
    pub fn iter(self: &Arc<Self>) -> MemtableIterator {
        MemtableIterator::new(Arc::clone(self), Cursor::new(Arc::clone(&self.list)))
    }

    /// About how many point entries (every version and tombstone) have a user key from
    /// `lower` (inclusive) to `upper` (exclusive; `None`: the end), estimated from the
    /// skiplist's upper levels without visiting the entries (see
    /// `SkipList::estimate_count_between`: the range's nodes counted at the highest level
    /// holding 128 or more of them, so off by under a tenth typically, and exact for a range
    /// of fewer than 128 entries). For ranges too large to count.
    pub fn estimate_entries(&self, lower: &[u8], upper: Option<&[u8]>) -> u64 {
        let lower = seek_key(lower, MAX_SEQNO);
        let upper = upper.map(|u| seek_key(u, MAX_SEQNO));
        self.list.estimate_count_between(
            |k| compare_internal_keys(k, &lower) == CmpOrdering::Less,
            |k| {
                upper
                    .as_ref()
                    .is_none_or(|u| compare_internal_keys(k, u) == CmpOrdering::Less)
            },
        )
    }

    /// Bytes of arena memory the entries occupy (node headers, links, keys, values, padding
    /// and the unused tails of full arena chunks), plus the bytes of the range tombstones.
    /// Grows monotonically; use it to decide when to switch memtables.
    pub fn approximate_memory_usage(&self) -> usize {
        self.list
            .memory_usage()
            .saturating_add(self.range_dels.memory_usage())
    }

    /// Bytes the memtable's arena reserved from the system allocator (whole chunks, so up to
    /// one chunk, 1 MiB, more than [`Memtable::approximate_memory_usage`]; most of a fresh
    /// chunk is not yet backed by physical memory), plus its key filter.
    pub fn allocated_memory(&self) -> usize {
        self.list
            .memory_reserved()
            .saturating_add(self.filter_memory())
    }

    /// Number of point entries (range tombstones not included: see
    /// [`Memtable::range_tombstone_count`]).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when there is neither a point entry nor a range tombstone.
    pub fn is_empty(&self) -> bool {
        self.len() == 0 && !self.has_range_tombstones()
    }

    /// Smallest seqno inserted (point entry or range tombstone), if any.
    pub fn min_seqno(&self) -> Option<SeqNo> {
        let s = self.min_seqno.load(Ordering::Relaxed);
        (s != u64::MAX).then_some(s)
    }

    /// Largest seqno inserted (point entry or range tombstone), if any.
    pub fn max_seqno(&self) -> Option<SeqNo> {
        self.max_seqno_plus_one
            .load(Ordering::Relaxed)
            .checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_estimates_follow_the_entries_without_visiting_them() {
        let m = Memtable::new(1);
        let n = 100_000u64;
        for i in 0..n {
            m.insert(format!("k{i:06}").as_bytes(), i + 1, ValueKind::Put, b"v");
        }
        // Two versions of the keys of one stretch: every version counts.
        for i in 50_000..60_000u64 {
            m.insert(format!("k{i:06}").as_bytes(), n + i, ValueKind::Put, b"w");
        }
        let key = |i: u64| format!("k{i:06}").into_bytes();
        for (lo, hi, want) in [
            (0, Some(n), n + 10_000),
            (10_000, Some(20_000), 10_000),
            (50_000, Some(60_000), 20_000),
            (0, None, n + 10_000),
            (90_000, None, 10_000),
            (30_000, Some(35_000), 5_000),
            (70_000, Some(72_000), 2_000),
        ] {
            // Random heights: a range is counted at a level holding 128 to 512 of its
            // nodes, so each estimate is off by under a tenth (one standard deviation); a
            // third is more than five of them.
            let upper = hi.map(key);
            let got = m.estimate_entries(&key(lo), upper.as_deref());
            let ratio = got as f64 / want as f64;
            assert!(
                (0.67..1.5).contains(&ratio),
                "[{lo}, {hi:?}): {got} for {want}"
            );
        }
        // Over many ranges of 5,000 entries, the error is a few percent on average (the
        // difference of two walks to the bounds, counting each level's nodes, was off by
        // about a quarter, and MariaDB's plans flipped with it).
        let squares: f64 = (0..40u64)
            .map(|r| {
                let lo = r * 2_000;
                let got = m.estimate_entries(&key(lo), Some(&key(lo + 5_000)));
                // Every version counts: the keys from 50,000 to 60,000 have two.
                let want: u64 = (lo..lo + 5_000)
                    .map(|i| 1 + u64::from((50_000..60_000).contains(&i)))
                    .sum();
                (got as f64 / want as f64 - 1.0).powi(2)
            })
            .sum();
        let rms = (squares / 40.0).sqrt();
        assert!(rms < 0.12, "root mean square error {rms}");
        // Fewer than 128 entries: counted exactly at level 0.
        assert_eq!(m.estimate_entries(&key(500), Some(&key(600))), 100);
        // An empty range, and one below every key.
        assert!(m.estimate_entries(&key(5), Some(&key(5))) == 0);
        assert!(m.estimate_entries(b"a", Some(b"b")) == 0);
    }

    #[test]
    fn memtable_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Memtable>();
        check::<MemtableIterator>();
    }

    #[test]
    fn get_finds_newest_visible_version() {
        let m = Memtable::new(7);
        assert_eq!(m.id(), 7);
        assert!(m.is_empty());
        assert_eq!(m.min_seqno(), None);
        assert_eq!(m.max_seqno(), None);
        assert!(m.insert(b"a", 1, ValueKind::Put, b"a1"));
        assert!(m.insert(b"a", 3, ValueKind::Delete, b""));
        assert!(m.insert(b"a", 5, ValueKind::Put, b"a5"));
        assert!(m.insert(b"b", 2, ValueKind::Put, b"b2"));
        assert!(!m.insert(b"b", 2, ValueKind::Put, b"other"));
        assert_eq!(m.len(), 4);
        assert_eq!(m.min_seqno(), Some(1));
        assert_eq!(m.max_seqno(), Some(5));
        assert_eq!(m.get(b"a", 0), None);
        assert_eq!(m.get(b"a", 2).map(|v| v.value), Some(b"a1".to_vec()));
        assert_eq!(m.get(b"a", 4).map(|v| v.kind), Some(ValueKind::Delete));
        assert_eq!(m.get(b"a", u64::MAX).map(|v| v.seqno), Some(5));
        assert_eq!(m.get(b"b", 9).map(|v| v.value), Some(b"b2".to_vec()));
        assert_eq!(m.get(b"", 9), None);
        assert_eq!(m.get(b"ab", 9), None);
        assert_eq!(m.get(b"c", 9), None);
        assert_eq!(m.get_with(b"a", 9, |_, _, v| v.len()), Some(2));
    }

    #[test]
    fn the_key_filter_answers_absent_keys_without_a_search() {
        let m = Memtable::with_key_filter(1, 64 << 10);
        assert!(m.filter_memory() >= 64 << 10);
        assert!(m.allocated_memory() >= m.filter_memory());
        for i in 0u32..1000 {
            assert!(m.insert(&i.to_be_bytes(), u64::from(i) + 1, ValueKind::Put, b"v"));
        }
        for i in 0u32..1000 {
            assert_eq!(
                m.get(&i.to_be_bytes(), MAX_SEQNO).map(|v| v.seqno),
                Some(u64::from(i) + 1)
            );
        }
        let absent = (1000u32..11_000)
            .filter(|i| m.get(&i.to_be_bytes(), MAX_SEQNO).is_none())
            .count();
        assert_eq!(absent, 10_000);
        // 1,000 keys in 64 KiB: hardly any false positive, so hardly any search.
        let ruled_out = (1000u32..11_000)
            .filter(|i| !m.may_contain(&i.to_be_bytes()))
            .count();
        assert!(ruled_out > 9_900, "{ruled_out} of 10,000 ruled out");
        // Range tombstones are not point entries: the filter does not hide them.
        assert!(m.insert(b"r", 5000, ValueKind::RangeDelete, b"s"));
        assert_eq!(m.max_covering_seqno(b"r\x01", MAX_SEQNO), Some(5000));
        // Without a filter nothing is skipped.
        let plain = Memtable::new(2);
        assert!(plain.get(b"x", MAX_SEQNO).is_none());
        assert!(plain.may_contain(b"x"));
        assert_eq!(plain.filter_memory(), 0);
    }

    #[test]
    fn huge_keys_bypass_the_scratch_buffer() {
        let m = Memtable::new(0);
        let k = vec![9u8; SCRATCH_LIMIT * 3];
        assert!(m.insert(&k, 1, ValueKind::Put, b"v"));
        assert_eq!(m.get(&k, 1).map(|v| v.value), Some(b"v".to_vec()));
    }
}
