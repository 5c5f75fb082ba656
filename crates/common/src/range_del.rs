//! Range tombstones: `delete_range(start, end)` hides every version of every user key in
//! `[start, end)` whose seqno is smaller than the tombstone's.
//!
//! A [`RangeTombstone`] is what a write batch entry of kind [`ValueKind::RangeDelete`] stores
//! (key = inclusive start, value = exclusive end; see [`crate::write_batch`]). Tombstones may
//! overlap each other arbitrarily. Readers do not look at them one by one: they build a
//! [`RangeTombstoneSet`] from every tombstone visible at their snapshot, which *fragments*
//! them into sorted, non-overlapping `[start, end)` pieces, each carrying the largest seqno of
//! the tombstones covering it (RocksDB's `FragmentedRangeTombstoneList`, reduced to one
//! snapshot). Then:
//!
//! - a point version `(key, seqno)` is deleted iff
//!   [`RangeTombstoneSet::max_covering_seqno`]`(key) > seqno` (binary search, O(log n));
//! - a sequential scan asks a [`RangeTombstoneCursor`] instead, O(1) amortized per step in
//!   either direction.
//!
//! Empty (`start == end`) and inverted (`start > end`) ranges delete nothing: the set ignores
//! them, and [`check_range`] tells the write path to refuse inverted ones.
//!
//! [`ValueKind::RangeDelete`]: crate::key::ValueKind::RangeDelete

use std::borrow::Borrow;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::key::{MAX_SEQNO, SeqNo, TRAILER_LEN, ValueKind, internal_key};

/// Trailer of a [`range_end_key`]: `(MAX_SEQNO << 8) | RangeDelete`.
const RANGE_END_TRAILER: u64 = (MAX_SEQNO << 8) | ValueKind::RangeDelete as u64;

/// The internal key `(end, MAX_SEQNO, RangeDelete)` that a table (or a file of a level) whose
/// range tombstones reach the exclusive end key `end` records as its largest key (RocksDB's
/// convention). It sorts before every real version of `end`, so the file's internal-key range
/// `[smallest, largest]` covers the tombstones and never overlaps a next file starting at
/// `end`. See [`is_range_end_key`].
pub fn range_end_key(end: &[u8]) -> Vec<u8> {
    internal_key(end, MAX_SEQNO, ValueKind::RangeDelete)
}

/// True when `ikey` is a [`range_end_key`]: as the largest key of a file, its user key is an
/// *exclusive* bound (the file holds nothing at that user key). No stored entry has this
/// trailer: range tombstones with seqno `MAX_SEQNO` are refused by table writers.
pub fn is_range_end_key(ikey: &[u8]) -> bool {
    ikey.len()
        .checked_sub(TRAILER_LEN)
        .and_then(|s| ikey.get(s..))
        .and_then(|t| <[u8; TRAILER_LEN]>::try_from(t).ok())
        .is_some_and(|t| u64::from_le_bytes(t) == RANGE_END_TRAILER)
}

/// One range deletion: every version of every user key in `[start, end)` with a seqno below
/// `seqno` is deleted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RangeTombstone {
    /// Inclusive start user key.
    pub start: Vec<u8>,
    /// Exclusive end user key.
    pub end: Vec<u8>,
    /// Sequence number of the deletion.
    pub seqno: SeqNo,
}

impl RangeTombstone {
    /// A tombstone for `[start, end)` at `seqno`.
    pub fn new(start: impl Into<Vec<u8>>, end: impl Into<Vec<u8>>, seqno: SeqNo) -> Self {
        RangeTombstone {
            start: start.into(),
            end: end.into(),
            seqno,
        }
    }

    /// True when the range holds no key (`start >= end`): such a tombstone deletes nothing.
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    /// True when `user_key` lies in `[start, end)` (whatever the seqno).
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.start.as_slice() <= user_key && user_key < self.end.as_slice()
    }

    /// True when this tombstone deletes the version `(user_key, seqno)` for a reader at
    /// `snapshot`: it is visible (`self.seqno <= snapshot`), newer than the version and covers
    /// the key.
    pub fn deletes(&self, user_key: &[u8], seqno: SeqNo, snapshot: SeqNo) -> bool {
        self.seqno <= snapshot && self.seqno > seqno && self.contains(user_key)
    }

    /// The internal key `(start, seqno, RangeDelete)` this tombstone is stored under.
    pub fn start_key(&self) -> Vec<u8> {
        internal_key(&self.start, self.seqno, ValueKind::RangeDelete)
    }

    /// This tombstone restricted to `[lower, upper)` (`None` bounds are open); `None` when
    /// nothing of it is left.
    pub fn clip(&self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Option<RangeTombstone> {
        let start = match lower {
            Some(l) if l > self.start.as_slice() => l,
            _ => self.start.as_slice(),
        };
        let end = match upper {
            Some(u) if u < self.end.as_slice() => u,
            _ => self.end.as_slice(),
        };
        (start < end).then(|| RangeTombstone::new(start, end, self.seqno))
    }

    /// Approximate heap plus inline bytes this tombstone occupies (for memory accounting).
    pub fn approximate_memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.start.len() + self.end.len()
    }
}

/// Validates the bounds of a range delete given to the write path: `Ok(true)` for a range
/// holding keys, `Ok(false)` for an empty one (`start == end`, a no-op), and `InvalidArgument`
/// when `start > end`.
pub fn check_range(start: &[u8], end: &[u8]) -> Result<bool> {
    match start.cmp(end) {
        std::cmp::Ordering::Less => Ok(true),
        std::cmp::Ordering::Equal => Ok(false),
        std::cmp::Ordering::Greater => Err(Error::invalid_argument(format!(
            "range delete start key {:?} is after its end key {:?}",
            String::from_utf8_lossy(start),
            String::from_utf8_lossy(end)
        ))),
    }
}

/// The range tombstones visible at one snapshot, fragmented into sorted, non-overlapping
/// pieces `[start, end)`, each with the largest seqno of the tombstones covering it. Adjacent
/// pieces with equal seqnos are merged; keys no tombstone covers have no piece.
///
/// Each piece is itself a [`RangeTombstone`], so a set's [`fragments`](Self::fragments) can be
/// fed to [`RangeTombstoneSet::new`] again, for example to combine the sets of several sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeTombstoneSet {
    fragments: Vec<RangeTombstone>,
    /// Largest seqno of any fragment (0 when empty).
    max_seqno: SeqNo,
}

impl RangeTombstoneSet {
    /// An empty set.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Fragments every tombstone of `tombstones` with `seqno <= snapshot` (empty and inverted
    /// ones are skipped). O(n log n) in the number of tombstones.
    pub fn new<I, T>(tombstones: I, snapshot: SeqNo) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Borrow<RangeTombstone>,
    {
        let owned: Vec<T> = tombstones
            .into_iter()
            .filter(|t| {
                let t = t.borrow();
                t.seqno <= snapshot && !t.is_empty()
            })
            .collect();
        let mut visible: Vec<&RangeTombstone> = owned.iter().map(Borrow::borrow).collect();
        if visible.is_empty() {
            return Self::empty();
        }
        visible.sort_unstable_by(|a, b| a.start.cmp(&b.start));
        let mut bounds: Vec<&[u8]> = visible
            .iter()
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();

        let mut fragments: Vec<RangeTombstone> = Vec::new();
        // Tombstones started so far, highest seqno on top; ended ones are popped lazily.
        let mut active: BinaryHeap<(SeqNo, &[u8])> = BinaryHeap::new();
        let mut next = visible.iter().peekable();
        for pair in bounds.windows(2) {
            let [lo, hi] = pair else { continue };
            while let Some(t) = next.next_if(|t| t.start.as_slice() <= *lo) {
                active.push((t.seqno, t.end.as_slice()));
            }
            while active.peek().is_some_and(|(_, end)| *end <= *lo) {
                active.pop();
            }
            let Some(&(seqno, _)) = active.peek() else {
                continue;
            };
            match fragments.last_mut() {
                Some(last) if last.seqno == seqno && last.end.as_slice() == *lo => {
                    last.end = hi.to_vec();
                }
                _ => fragments.push(RangeTombstone::new(*lo, *hi, seqno)),
            }
        }
        let max_seqno = fragments.iter().map(|f| f.seqno).max().unwrap_or(0);
        RangeTombstoneSet {
            fragments,
            max_seqno,
        }
    }

    /// True when no key is covered.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Number of fragments.
    pub fn len(&self) -> usize {
        self.fragments.len()
    }

    /// The fragments, sorted by start key, non-overlapping.
    pub fn fragments(&self) -> &[RangeTombstone] {
        &self.fragments
    }

    /// The largest seqno of any fragment; `None` when the set is empty.
    pub fn max_seqno(&self) -> Option<SeqNo> {
        (!self.is_empty()).then_some(self.max_seqno)
    }

    /// Index of the first fragment whose end is after `user_key` (the only one that can
    /// cover it); `len()` if none.
    fn position(&self, user_key: &[u8]) -> usize {
        self.fragments
            .partition_point(|f| f.end.as_slice() <= user_key)
    }

    /// The fragment covering `user_key`, if any. O(log n).
    pub fn covering(&self, user_key: &[u8]) -> Option<&RangeTombstone> {
        self.fragments
            .get(self.position(user_key))
            .filter(|f| f.start.as_slice() <= user_key)
    }

    /// The largest seqno of the tombstones covering `user_key`, if any: the version
    /// `(user_key, s)` is deleted iff this is `Some(t)` with `t > s`. O(log n).
    pub fn max_covering_seqno(&self, user_key: &[u8]) -> Option<SeqNo> {
        self.covering(user_key).map(|f| f.seqno)
    }

    /// True when the version `(user_key, seqno)` is deleted by a tombstone of this set.
    pub fn deletes(&self, user_key: &[u8], seqno: SeqNo) -> bool {
        self.max_covering_seqno(user_key).is_some_and(|t| t > seqno)
    }
}

/// How many fragments a cursor steps over one by one before it falls back to binary search.
const CURSOR_LINEAR_STEPS: usize = 4;

/// A position in a shared [`RangeTombstoneSet`] for sequential lookups: consecutive queries
/// with nearby keys (a scan, in either direction) cost O(1) amortized; a jump costs one binary
/// search. Answers are always exactly those of the set's own lookups.
#[derive(Debug, Clone)]
pub struct RangeTombstoneCursor {
    set: Arc<RangeTombstoneSet>,
    /// Always `set.position(k)` for the last key `k` looked up (0 before any lookup).
    idx: usize,
}

impl RangeTombstoneCursor {
    /// A cursor over `set`.
    pub fn new(set: Arc<RangeTombstoneSet>) -> Self {
        RangeTombstoneCursor { set, idx: 0 }
    }

    /// The set this cursor reads.
    pub fn set(&self) -> &Arc<RangeTombstoneSet> {
        &self.set
    }

    /// True when `idx` is the position of `user_key`: every fragment before it ends at or
    /// before the key, and the one at it (if any) ends after.
    fn is_position(&self, idx: usize, user_key: &[u8]) -> bool {
        let f = self.set.fragments();
        let before_ok = idx
            .checked_sub(1)
            .and_then(|i| f.get(i))
            .is_none_or(|p| p.end.as_slice() <= user_key);
        let at_ok = f.get(idx).is_none_or(|c| c.end.as_slice() > user_key);
        before_ok && at_ok
    }

    /// Moves to the position of `user_key`, stepping a few fragments from the current one
    /// before falling back to a binary search.
    fn reposition(&mut self, user_key: &[u8]) {
        if self.is_position(self.idx, user_key) {
            return;
        }
        let len = self.set.len();
        let forward = self
            .set
            .fragments()
            .get(self.idx)
            .is_some_and(|c| c.end.as_slice() <= user_key);
        for _ in 0..CURSOR_LINEAR_STEPS {
            let candidate = if forward {
                if self.idx >= len {
                    break;
                }
                self.idx + 1
            } else {
                match self.idx.checked_sub(1) {
                    Some(i) => i,
                    None => break,
                }
            };
            self.idx = candidate;
            if self.is_position(candidate, user_key) {
                return;
            }
        }
        self.idx = self.set.position(user_key);
    }

    /// The fragment covering `user_key`, if any (see [`RangeTombstoneSet::covering`]).
    pub fn covering(&mut self, user_key: &[u8]) -> Option<&RangeTombstone> {
        self.reposition(user_key);
        self.set
            .fragments()
            .get(self.idx)
            .filter(|f| f.start.as_slice() <= user_key)
    }

    /// Like [`covering`](Self::covering), but returns the index of the fragment in
    /// [`RangeTombstoneSet::fragments`].
    pub fn covering_index(&mut self, user_key: &[u8]) -> Option<usize> {
        let covered = self.covering(user_key).is_some();
        covered.then_some(self.idx)
    }

    /// The largest seqno of the tombstones covering `user_key` (see
    /// [`RangeTombstoneSet::max_covering_seqno`]).
    pub fn max_covering_seqno(&mut self, user_key: &[u8]) -> Option<SeqNo> {
        self.covering(user_key).map(|f| f.seqno)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(start: &str, end: &str, seqno: SeqNo) -> RangeTombstone {
        RangeTombstone::new(start.as_bytes(), end.as_bytes(), seqno)
    }

    /// The reference: the largest seqno of any visible tombstone containing the key.
    fn brute(ts: &[RangeTombstone], key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        ts.iter()
            .filter(|t| t.seqno <= snapshot && t.contains(key))
            .map(|t| t.seqno)
            .max()
    }

    #[test]
    fn fragments_overlapping_tombstones() {
        let ts = vec![
            t("a", "e", 5),
            t("c", "g", 7),
            t("f", "h", 3),
            t("x", "x", 9),
        ];
        let set = RangeTombstoneSet::new(&ts, 100);
        assert_eq!(
            set.fragments(),
            &[t("a", "c", 5), t("c", "g", 7), t("g", "h", 3)]
        );
        assert_eq!(set.max_seqno(), Some(7));
        assert_eq!(set.max_covering_seqno(b"a"), Some(5));
        assert_eq!(set.max_covering_seqno(b"b"), Some(5));
        assert_eq!(set.max_covering_seqno(b"c"), Some(7));
        assert_eq!(set.max_covering_seqno(b"g"), Some(3));
        assert_eq!(set.max_covering_seqno(b"h"), None);
        assert_eq!(set.max_covering_seqno(b""), None);
        assert!(set.deletes(b"d", 6));
        assert!(!set.deletes(b"d", 7));
        assert!(!set.deletes(b"d", 8));
        // At snapshot 6 the seqno-7 tombstone is invisible.
        let old = RangeTombstoneSet::new(&ts, 6);
        assert_eq!(old.fragments(), &[t("a", "e", 5), t("f", "h", 3)]);
        assert!(RangeTombstoneSet::new(&ts, 2).is_empty());
        assert_eq!(RangeTombstoneSet::new(&ts, 2).max_seqno(), None);
    }

    #[test]
    fn adjacent_equal_fragments_merge_and_empty_ranges_vanish() {
        let ts = vec![
            t("a", "b", 4),
            t("b", "c", 4),
            t("d", "c", 9),
            t("q", "q", 9),
        ];
        let set = RangeTombstoneSet::new(ts, 100);
        assert_eq!(set.fragments(), &[t("a", "c", 4)]);
    }

    #[test]
    fn check_range_classifies_bounds() {
        assert!(check_range(b"a", b"b").unwrap());
        assert!(!check_range(b"a", b"a").unwrap());
        let e = check_range(b"b", b"a").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
    }

    #[test]
    fn cursor_jumps_both_ways() {
        let ts: Vec<_> = (0..50u8)
            .map(|i| RangeTombstone::new(vec![i * 4], vec![i * 4 + 2], u64::from(i) + 1))
            .collect();
        let set = Arc::new(RangeTombstoneSet::new(&ts, u64::MAX));
        let mut c = RangeTombstoneCursor::new(Arc::clone(&set));
        for k in [0u8, 1, 2, 199, 3, 100, 101, 96, 5, 255, 0] {
            assert_eq!(
                c.max_covering_seqno(&[k]),
                set.max_covering_seqno(&[k]),
                "{k}"
            );
        }
    }

    fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..4, 0..3)
    }

    fn tombstones_strategy() -> impl Strategy<Value = Vec<RangeTombstone>> {
        prop::collection::vec((key_strategy(), key_strategy(), 0u64..20), 0..12).prop_map(|v| {
            v.into_iter()
                .map(|(s, e, q)| RangeTombstone::new(s, e, q))
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn set_and_cursor_match_brute_force(ts in tombstones_strategy(), snapshot in 0u64..22,
                                            queries in prop::collection::vec(key_strategy(), 1..40)) {
            let set = Arc::new(RangeTombstoneSet::new(&ts, snapshot));
            // Fragments are sorted, non-empty and disjoint.
            for w in set.fragments().windows(2) {
                prop_assert!(w[0].end <= w[1].start);
            }
            for f in set.fragments() {
                prop_assert!(f.start < f.end);
            }
            // Re-fragmenting the fragments changes nothing.
            prop_assert_eq!(&RangeTombstoneSet::new(set.fragments(), u64::MAX), &*set);
            let mut cursor = RangeTombstoneCursor::new(Arc::clone(&set));
            let mut sorted = queries.clone();
            sorted.sort();
            for q in queries.iter().chain(sorted.iter()).chain(sorted.iter().rev()) {
                let expected = brute(&ts, q, snapshot);
                prop_assert_eq!(set.max_covering_seqno(q), expected, "key {:?}", q);
                prop_assert_eq!(cursor.max_covering_seqno(q), expected, "cursor key {:?}", q);
            }
        }
    }
}
