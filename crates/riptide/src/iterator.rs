//! [`DbIterator`]: the user's ordered view of one column family at one snapshot.
//!
//! It wraps a merge of every source (memtables, tables) and turns internal entries into user
//! entries: versions newer than the snapshot are invisible, only the newest visible version
//! of each key counts, and a key whose newest visible version is a tombstone does not exist.
//! The current entry is copied out, so moving the merged cursor never invalidates it.
//!
//! Range tombstones: the iterator fragments every range tombstone visible at its snapshot
//! (memtables and tables alike; a table's are pinned in memory, see
//! [`riptide_sstable::Table::range_tombstone_set`]) into one [`RangeTombstoneSet`] when it is
//! made (none: no range-tombstone work at all) and
//! walks it with a [`RangeTombstoneCursor`] in step with the merged cursor. The newest visible
//! version of a key is deleted when a fragment covering the key has a larger seqno. When no
//! source can hold a version newer than that fragment inside it (see
//! [`CfView::may_hold_newer_in_range`]), the whole fragment is skipped with one seek instead
//! of stepping over every covered entry: a dropped table costs one seek per scan, not one step
//! per row. Otherwise the covered entries are stepped over one by one (correct, just slower).
//! TODO(range deletes, later): RocksDB also skips when only *some* sources are older than the
//! tombstone, by seeking those children alone; that needs a per-child seek in
//! `MergingIterator`.

use std::sync::Arc;

use riptide_common::key::{MAX_SEQNO, parse_internal_key, seek_key};
use riptide_common::merge::MergingIterator;
use riptide_common::range_del::{RangeTombstoneCursor, RangeTombstoneSet};
use riptide_common::{InternalIterator, Result, SeqNo, ValueKind};

use crate::cf::{CfData, CfView};
use crate::snapshot::{Snapshot, SnapshotList};

/// Forward steps between two looks for a newer view of the column family (one read lock and
/// one pointer comparison per look).
const REFRESH_CHECK_EVERY: u32 = 1024;

/// Which way the merged cursor last moved relative to the current entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// The merged cursor sits on the current entry's newest visible version.
    Forward,
    /// The merged cursor sits before every version of the current entry.
    Backward,
}

/// Where a backward search starts.
enum BackwardStart {
    /// Just below every version of this user key.
    Before(Vec<u8>),
    /// At the end (below the upper bound, if any).
    End,
    /// Where the merged cursor already is.
    Here,
}

/// What a covered key tells the iterator to do.
enum Covered {
    /// Not deleted by a range tombstone.
    No,
    /// Deleted; step over it.
    Step,
    /// Deleted, and so is every visible version in this fragment `[start, end)`: seek past.
    Skip { start: Vec<u8>, end: Vec<u8> },
}

/// The iterator's range tombstones: the fragmented set, a cursor in it and, for the fragment
/// last asked about, whether it may be skipped with a seek.
struct RangeDels {
    cursor: RangeTombstoneCursor,
    /// `(fragment index, skippable)` for the last covering fragment.
    skippable: Option<(usize, bool)>,
}

impl RangeDels {
    /// Whether the version `(user_key, seqno)` is deleted, and how to get past it.
    fn check(&mut self, view: &CfView, snapshot: SeqNo, user_key: &[u8], seqno: SeqNo) -> Covered {
        let Some(idx) = self.cursor.covering_index(user_key) else {
            return Covered::No;
        };
        let set = Arc::clone(self.cursor.set());
        let Some(fragment) = set.fragments().get(idx) else {
            return Covered::No;
        };
        if fragment.seqno <= seqno {
            return Covered::No;
        }
        let skippable = match self.skippable {
            Some((i, s)) if i == idx => s,
            _ => {
                // An error while checking only costs the skip (stepping is always correct).
                let s = !view
                    .may_hold_newer_in_range(
                        &fragment.start,
                        &fragment.end,
                        fragment.seqno,
                        snapshot,
                    )
                    .unwrap_or(true);
                self.skippable = Some((idx, s));
                s
            }
        };
        if skippable {
            Covered::Skip {
                start: fragment.start.clone(),
                end: fragment.end.clone(),
            }
        } else {
            Covered::Step
        }
    }
}

/// Moves a long forward scan at a registered snapshot to the column family's newest view.
///
/// An iterator holds the view it was made with: its memtables and its tables' files. A scan
/// that runs for long while others write (an `ALTER TABLE` copy, a dump) would keep every
/// memtable flushed meanwhile in memory, and every table compacted away on disk: measured in
/// MariaDB, four concurrent `CREATE INDEX` copies held 150 MiB of flushed memtables beyond the
/// 64 MiB of memtables the budget allows. Every [`REFRESH_CHECK_EVERY`] forward steps the
/// iterator looks at the column family's view and, if a newer one was installed, rebuilds its
/// merged cursor on it at the same sequence number and repositions after the current key
/// (RocksDB's `auto_refresh_iterator_with_snapshot`). That is only right while the snapshot
/// stays registered, so that flushes and compactions keep what it sees: the iterator takes
/// its own registration at its first refresh, if the number is still registered then
/// ([`SnapshotList::register_if_live`]); if not, it never refreshes. Iterators reading the
/// newest data (no registered snapshot: read committed, locking reads) do not refresh.
struct Refresher {
    cf: Arc<CfData>,
    snapshots: Arc<SnapshotList>,
    /// This iterator's own registration of its snapshot, from its first refresh on.
    registration: Option<Snapshot>,
    /// Forward steps since the last look.
    steps: u32,
}

/// A cursor over the live keys of one column family as of one snapshot, in key order, in
/// either direction, within optional bounds. Holds the memtables and tables it reads, so it
/// stays consistent while writes, flushes and compactions go on; a long forward scan at a
/// registered snapshot moves to newer memtables and tables as they are installed (see
/// [`Refresher`]).
///
/// Position it with [`seek_to_first`](Self::seek_to_first), [`seek`](Self::seek),
/// [`seek_for_prev`](Self::seek_for_prev) or [`seek_to_last`](Self::seek_to_last), then read
/// [`key`](Self::key) and [`value`](Self::value) while [`valid`](Self::valid) is true and
/// step with [`next`](Self::next) / [`prev`](Self::prev).
pub struct DbIterator {
    merged: MergingIterator,
    snapshot: SeqNo,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    valid: bool,
    direction: Direction,
    key: Vec<u8>,
    value: Vec<u8>,
    /// `None` when no range tombstone is visible (no extra work per step).
    range_dels: Option<RangeDels>,
    view: Arc<CfView>,
    /// Entries one forward positioning may step over before the active memtable is asked
    /// to flush early (0: never; see `Options::memtable_scan_flush_trigger`).
    scan_flush_trigger: u64,
    /// Set for an iterator at a registered snapshot (see [`Refresher`]).
    refresher: Option<Refresher>,
    /// Where the caller's forward scans end ([`DbIterator::set_readahead_limit`]).
    readahead_limit: Option<Vec<u8>>,
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("snapshot", &self.snapshot)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

impl DbIterator {
    pub(crate) fn new(
        view: Arc<CfView>,
        merged: MergingIterator,
        snapshot: SeqNo,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Result<Self> {
        // `snapshot` was loaded before this call, so every range tombstone at or below it is
        // already in its memtable.
        let range_dels = view.range_tombstone_set(snapshot)?.map(Self::range_dels);
        Ok(DbIterator {
            merged,
            snapshot,
            lower,
            upper,
            valid: false,
            direction: Direction::Forward,
            key: Vec::new(),
            value: Vec::new(),
            range_dels,
            view,
            scan_flush_trigger: 0,
            refresher: None,
            readahead_limit: None,
        })
    }

    /// Tells the iterator that the forward scans after the next positioning calls end
    /// before user key `limit` (`None`: not known), so the tables read the blocks up to
    /// there at once when the first one is not cached (see
    /// [`InternalIterator::set_readahead_limit`]). A hint about cost only: the iterator
    /// still steps on past it if asked. A wide limit makes positioning reads read more, so
    /// give only an end the scan is expected to reach (a range's end).
    pub fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        if self.readahead_limit.as_deref() == limit {
            return;
        }
        self.readahead_limit = limit.map(<[u8]>::to_vec);
        self.merged.set_readahead_limit(limit);
    }

    /// The read-ahead limit last set ([`DbIterator::set_readahead_limit`]).
    pub(crate) fn readahead_limit(&self) -> Option<&[u8]> {
        self.readahead_limit.as_deref()
    }

    /// Lets the iterator move to newer views of `cf` during a long forward scan (see
    /// [`Refresher`]). Only for an iterator whose sequence number is a snapshot registered
    /// in `snapshots` when the iterator was made.
    pub(crate) fn with_refresh(mut self, cf: Arc<CfData>, snapshots: Arc<SnapshotList>) -> Self {
        self.refresher = Some(Refresher {
            cf,
            snapshots,
            registration: None,
            steps: 0,
        });
        self
    }

    /// Counts a forward step and, every [`REFRESH_CHECK_EVERY`] of them, moves the merged
    /// cursor to the column family's newest view if one was installed since (unpositioned:
    /// the caller seeks). Returns whether it did. A failure to read the new view's range
    /// tombstones leaves the iterator on its old view, which stays correct.
    fn refresh_if_due(&mut self) -> bool {
        let Some(r) = self.refresher.as_mut() else {
            return false;
        };
        r.steps += 1;
        if r.steps < REFRESH_CHECK_EVERY {
            return false;
        }
        r.steps = 0;
        let view = r.cf.view();
        if Arc::ptr_eq(&view, &self.view) {
            return false;
        }
        if r.registration.is_none() {
            match r.snapshots.register_if_live(self.snapshot) {
                Some(reg) => r.registration = Some(reg),
                None => {
                    self.refresher = None;
                    return false;
                }
            }
        }
        let Ok(set) = view.range_tombstone_set(self.snapshot) else {
            return false;
        };
        self.range_dels = set.map(Self::range_dels);
        self.merged = view.merged_iter_within(self.lower.as_deref(), self.upper.as_deref());
        self.merged
            .set_readahead_limit(self.readahead_limit.as_deref());
        self.view = view;
        true
    }

    /// True when the iterator reads through the column family's current view (tests).
    #[cfg(test)]
    pub(crate) fn on_current_view(&self) -> bool {
        self.refresher
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(&r.cf.view(), &self.view))
    }

    /// Sets the number of hidden entries (tombstones and the versions they hide) one forward
    /// positioning may step over before the memtable it reads is asked to flush early, when
    /// that memtable holds at least half as many deletes. 0 disables it.
    pub(crate) fn with_scan_flush_trigger(mut self, entries: u64) -> Self {
        self.scan_flush_trigger = entries;
        self
    }

    /// After a positioning that stepped over `skipped` hidden entries: if that is too many
    /// and the active memtable holds many deletes, asks for it to be flushed (the flush
    /// turns its runs of tombstones into range tombstones that later scans seek over).
    fn note_skipped(&self, skipped: u64) {
        let trigger = self.scan_flush_trigger;
        if trigger > 0 && skipped >= trigger && self.view.mem.delete_count() >= trigger / 2 {
            self.view.mem.request_flush();
        }
    }

    fn range_dels(set: Arc<RangeTombstoneSet>) -> RangeDels {
        RangeDels {
            cursor: RangeTombstoneCursor::new(set),
            skippable: None,
        }
    }

    /// Whether the version `(user_key, seqno)` (visible at the snapshot) is deleted by a range
    /// tombstone, and how to get past it.
    fn covered(&mut self, user_key: &[u8], seqno: SeqNo) -> Covered {
        match &mut self.range_dels {
            None => Covered::No,
            Some(r) => r.check(&self.view, self.snapshot, user_key, seqno),
        }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. Empty when not valid.
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.key } else { &[] }
    }

    /// The current value. Empty when not valid.
    pub fn value(&self) -> &[u8] {
        if self.valid { &self.value } else { &[] }
    }

    /// The sequence number this iterator reads at.
    pub fn snapshot_seqno(&self) -> SeqNo {
        self.snapshot
    }

    fn above_upper(&self, user_key: &[u8]) -> bool {
        self.upper.as_deref().is_some_and(|u| user_key >= u)
    }

    fn below_lower(&self, user_key: &[u8]) -> bool {
        self.lower.as_deref().is_some_and(|l| user_key < l)
    }

    /// From the merged cursor's position, finds the first user key whose newest visible
    /// version is a put, skipping every version of `skip` (if given). Forward only.
    fn find_next_visible(&mut self, skip: Option<Vec<u8>>) -> Result<()> {
        let mut skipped = 0u64;
        let r = self.find_next_visible_counting(skip, &mut skipped);
        self.note_skipped(skipped);
        r
    }

    /// [`Self::find_next_visible`], counting the entries stepped over in `skipped`.
    fn find_next_visible_counting(
        &mut self,
        skip: Option<Vec<u8>>,
        skipped: &mut u64,
    ) -> Result<()> {
        self.valid = false;
        self.direction = Direction::Forward;
        // The user key whose older versions are skipped; one buffer reused for every key
        // stepped over (a scan over a run of tombstones allocates nothing per tombstone).
        let mut skipping = skip.is_some();
        let mut skip_key = skip.unwrap_or_default();
        while self.merged.valid() {
            let ikey = parse_internal_key(self.merged.key())?;
            if self.above_upper(ikey.user_key) {
                return Ok(());
            }
            let shadowed = skipping && skip_key.as_slice() == ikey.user_key;
            if ikey.seqno > self.snapshot || shadowed {
                *skipped += 1;
                self.merged.next()?;
                continue;
            }
            // The newest visible version of this key: is it under a newer range tombstone?
            if self.range_dels.is_some() {
                let (kind, seqno, user_key) = (ikey.kind, ikey.seqno, ikey.user_key.to_vec());
                match self.covered(&user_key, seqno) {
                    Covered::No => {}
                    Covered::Step => {
                        // Every older version of the key is covered too.
                        skip_key = user_key;
                        skipping = true;
                        *skipped += 1;
                        self.merged.next()?;
                        continue;
                    }
                    Covered::Skip { end, .. } => {
                        self.merged.seek(&seek_key(&end, self.snapshot))?;
                        skipping = false;
                        continue;
                    }
                }
                if kind == ValueKind::Put {
                    self.key = user_key;
                    self.value.clear();
                    self.value.extend_from_slice(self.merged.value());
                    self.valid = true;
                    return Ok(());
                }
                skip_key = user_key;
                skipping = true;
                *skipped += 1;
                self.merged.next()?;
                continue;
            }
            match ikey.kind {
                ValueKind::Put => {
                    self.key.clear();
                    self.key.extend_from_slice(ikey.user_key);
                    self.value.clear();
                    self.value.extend_from_slice(self.merged.value());
                    self.valid = true;
                    return Ok(());
                }
                ValueKind::Delete | ValueKind::SingleDelete | ValueKind::RangeDelete => {
                    skip_key.clear();
                    skip_key.extend_from_slice(ikey.user_key);
                    skipping = true;
                    *skipped += 1;
                    self.merged.next()?;
                }
            }
        }
        Ok(())
    }

    /// Positions on the last user key before `start` whose newest visible version is a put.
    fn find_prev_visible(&mut self, start: BackwardStart) -> Result<()> {
        self.valid = false;
        self.direction = Direction::Backward;
        match start {
            // Land on the oldest version of the greatest user key < `k`.
            BackwardStart::Before(k) => self.merged.seek_for_prev(&seek_key(&k, MAX_SEQNO))?,
            BackwardStart::End => match self.upper.clone() {
                Some(u) => self.merged.seek_for_prev(&seek_key(&u, MAX_SEQNO))?,
                None => self.merged.seek_to_last()?,
            },
            BackwardStart::Here => {}
        }
        // Walk backward one user key at a time; versions of a key come oldest first.
        while self.merged.valid() {
            let current_user_key = parse_internal_key(self.merged.key())?.user_key.to_vec();
            if self.below_lower(&current_user_key) {
                return Ok(());
            }
            let mut newest_visible: Option<(ValueKind, SeqNo, Vec<u8>)> = None;
            while self.merged.valid() {
                let ikey = parse_internal_key(self.merged.key())?;
                if ikey.user_key != current_user_key.as_slice() {
                    break;
                }
                if ikey.seqno <= self.snapshot {
                    let value = match ikey.kind {
                        ValueKind::Put => self.merged.value().to_vec(),
                        _ => Vec::new(),
                    };
                    newest_visible = Some((ikey.kind, ikey.seqno, value));
                }
                self.merged.prev()?;
            }
            if let Some((_, seqno, _)) = &newest_visible {
                match self.covered(&current_user_key, *seqno) {
                    Covered::No => {}
                    Covered::Step => continue,
                    Covered::Skip { start, .. } => {
                        // Every key of the fragment below this one is deleted too: land on the
                        // oldest version of the greatest key before it.
                        if start < current_user_key {
                            self.merged.seek_for_prev(&seek_key(&start, MAX_SEQNO))?;
                        }
                        continue;
                    }
                }
            }
            if let Some((ValueKind::Put, _, value)) = newest_visible {
                if self.above_upper(&current_user_key) {
                    continue;
                }
                self.key = current_user_key;
                self.value = value;
                self.valid = true;
                return Ok(());
            }
        }
        Ok(())
    }

    /// Positions on the first live key (at or above the lower bound).
    pub fn seek_to_first(&mut self) -> Result<()> {
        match self.lower.clone() {
            Some(l) => self.seek(&l),
            None => {
                self.merged.seek_to_first()?;
                self.find_next_visible(None)
            }
        }
    }

    /// Positions on the last live key (below the upper bound).
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.find_prev_visible(BackwardStart::End)
    }

    /// Positions on the first live key >= `target` (clamped to the bounds).
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        let target = match self.lower.as_deref() {
            Some(l) if target < l => l.to_vec(),
            _ => target.to_vec(),
        };
        self.merged.seek(&seek_key(&target, self.snapshot))?;
        self.find_next_visible(None)
    }

    /// Positions on the last live key <= `target` (clamped to the bounds).
    pub fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        if self.above_upper(target) {
            return self.find_prev_visible(BackwardStart::End);
        }
        if self.below_lower(target) {
            // Nothing at or below `target` is within the bounds.
            self.valid = false;
            self.direction = Direction::Backward;
            return Ok(());
        }
        // Is `target` itself live?
        self.merged.seek(&seek_key(target, self.snapshot))?;
        self.find_next_visible(None)?;
        if self.valid && self.key == target {
            return Ok(());
        }
        self.find_prev_visible(BackwardStart::Before(target.to_vec()))
    }

    /// Moves to the next live key. Does nothing when not valid.
    // A cursor step (as in RocksDB's iterator), not `Iterator::next`: it can fail.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let current = std::mem::take(&mut self.key);
        let refreshed = self.direction == Direction::Forward && self.refresh_if_due();
        if refreshed || self.direction == Direction::Backward {
            self.merged.seek(&seek_key(&current, self.snapshot))?;
        }
        self.find_next_visible(Some(current))
    }

    /// Moves to the previous live key. Does nothing when not valid.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let start = match self.direction {
            // The merged cursor already sits on the oldest version of the previous key.
            Direction::Backward => BackwardStart::Here,
            Direction::Forward => BackwardStart::Before(std::mem::take(&mut self.key)),
        };
        self.find_prev_visible(start)
    }
}

#[cfg(test)]
mod tests {
    //! Several memtables (active + frozen) with range tombstones: the engine flushes frozen
    //! memtables soon after they freeze, so `get` and the iterator over several memtables are
    //! checked here on hand-made views.
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use riptide_compaction::Version;
    use riptide_memtable::Memtable;

    use super::*;

    #[derive(Debug, Clone)]
    enum W {
        Put(u8),
        Delete(u8),
        DeleteRange(u8, u8),
    }

    fn key(k: u8) -> Vec<u8> {
        vec![b'k', k]
    }

    fn w() -> impl Strategy<Value = W> {
        prop_oneof![
            6 => (0u8..16).prop_map(W::Put),
            2 => (0u8..16).prop_map(W::Delete),
            2 => (0u8..17, 0u8..6).prop_map(|(a, n)| W::DeleteRange(a, a.saturating_add(n))),
        ]
    }

    /// The reference answer for `k` at `snapshot`.
    fn expected(writes: &[(SeqNo, W)], k: u8, snapshot: SeqNo) -> Option<Vec<u8>> {
        let mut newest: Option<(SeqNo, bool)> = None;
        let mut tomb: Option<SeqNo> = None;
        for (s, w) in writes.iter().filter(|(s, _)| *s <= snapshot) {
            match w {
                W::Put(x) if *x == k => newest = Some((*s, true)),
                W::Delete(x) if *x == k => newest = Some((*s, false)),
                W::DeleteRange(a, b) if (*a..*b).contains(&k) => tomb = Some(*s),
                _ => {}
            }
        }
        match newest {
            Some((s, true)) if tomb.is_none_or(|t| t < s) => Some(format!("{k}@{s}").into_bytes()),
            _ => None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn several_memtables_match_brute_force(
            writes in prop::collection::vec(w(), 1..60),
            cuts in (0usize..60, 0usize..60),
            snapshots in prop::collection::vec(0u64..64, 1..6),
        ) {
            // Three memtables, oldest first, each taking a run of consecutive seqnos.
            let (c1, c2) = (cuts.0.min(cuts.1), cuts.0.max(cuts.1));
            let mems: Vec<Arc<Memtable>> = (0..3).map(|i| Arc::new(Memtable::new(i))).collect();
            let writes: Vec<(SeqNo, W)> = writes
                .into_iter()
                .enumerate()
                .map(|(i, w)| (i as SeqNo + 1, w))
                .collect();
            for (i, (s, w)) in writes.iter().enumerate() {
                let m = &mems[if i < c1 { 0 } else if i < c2 { 1 } else { 2 }];
                match w {
                    W::Put(k) => m.insert(&key(*k), *s, ValueKind::Put, format!("{k}@{s}").as_bytes()),
                    W::Delete(k) => m.insert(&key(*k), *s, ValueKind::Delete, b""),
                    W::DeleteRange(a, b) => m.insert(&key(*a), *s, ValueKind::RangeDelete, &key(*b)),
                };
            }
            let view = Arc::new(CfView {
                cf_id: 0,
                mem: Arc::clone(&mems[2]),
                imms: vec![Arc::clone(&mems[1]), Arc::clone(&mems[0])],
                version: Arc::new(Version::default()),
            });
            for snapshot in snapshots {
                let mut model = BTreeMap::new();
                for k in 0u8..18 {
                    let e = expected(&writes, k, snapshot);
                    prop_assert_eq!(view.get(&key(k), snapshot).unwrap(), e.clone(), "get {} at {}", k, snapshot);
                    if let Some(v) = e {
                        model.insert(key(k), v);
                    }
                }
                let model: Vec<_> = model.into_iter().collect();
                let mut it = DbIterator::new(Arc::clone(&view), view.merged_iter(), snapshot, None, None).unwrap();
                let mut fwd = Vec::new();
                it.seek_to_first().unwrap();
                while it.valid() {
                    fwd.push((it.key().to_vec(), it.value().to_vec()));
                    it.next().unwrap();
                }
                prop_assert_eq!(&fwd, &model, "forward at {}", snapshot);
                let mut bwd = Vec::new();
                it.seek_to_last().unwrap();
                while it.valid() {
                    bwd.push((it.key().to_vec(), it.value().to_vec()));
                    it.prev().unwrap();
                }
                bwd.reverse();
                prop_assert_eq!(&bwd, &model, "backward at {}", snapshot);
            }
        }
    }
}
