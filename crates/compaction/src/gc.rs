//! Garbage collection of old versions while a flush or compaction copies entries.
//!
//! The rule is RocksDB's. Snapshots cut the sequence-number line into *stripes*: two versions
//! are in the same stripe when no snapshot `s` has `older.seqno <= s < newer.seqno` (the
//! present is an implicit snapshot at +inf). No reader can tell apart two versions of a key in
//! the same stripe, so for each user key, walking its versions newest first:
//!
//! * a version is dropped when the previous (newer) version of the key is in the same stripe,
//!   except a single delete (see below);
//! * at the bottommost level, a tombstone that every snapshot sees (it is in the oldest stripe)
//!   is dropped together with everything older;
//! * a single delete whose next older version is a put in the same stripe is dropped together
//!   with that put; older versions are then judged as if the pair never existed. This relies
//!   on the single-delete contract (RocksDB's): the key was put exactly once since its
//!   previous single delete and never plainly deleted. A history such as put, delete, put,
//!   single delete breaks it: a flush may drop the delete (shadowed by the second put), and a
//!   later merge of the single delete with that put would then expose the first put.
//!   For the same reason a single delete hidden by a newer put is *kept* (put 1, single
//!   delete 2, put 3, single delete 4: once 4 cancels 3, single delete 2 must still hide
//!   put 1, which may be in a lower level or kept at the bottom for an old snapshot); it goes
//!   when it meets its own put, or at the bottom once every snapshot sees it, together with
//!   everything older.
//!
//! Range tombstones (see [`RangeDelAggregator`]) follow the same stripe rule:
//!
//! * a point version `(k, s)` is dropped when a range tombstone of the inputs covering `k`
//!   with a seqno above `s` lies in the same stripe as `s` (no snapshot can see the version
//!   without seeing the tombstone). A tombstone in a newer stripe does not drop it: the
//!   snapshots between still read it;
//! * the tombstones themselves are written to the output, fragmented per stripe: within one
//!   stripe only the newest tombstone covering a key matters, so each stripe keeps the
//!   fragments of its own tombstones, each with the largest seqno covering it;
//! * at the bottommost level the tombstones of the oldest stripe (every snapshot sees them)
//!   are dropped, after they have dropped every version they cover (all in the same stripe
//!   and, the level being bottommost, all in this compaction).
//!
//! Range-delete *point entries* (only in version-1 tables, which never held any in practice)
//! are copied unchanged and do not take part.

use std::sync::Arc;

use riptide_common::key::parse_internal_key;
use riptide_common::range_del::{RangeTombstone, RangeTombstoneCursor, RangeTombstoneSet};
use riptide_common::{InternalIterator, Result, SeqNo, ValueKind};

/// What a garbage-collecting copy read and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Entries read from the input.
    pub entries_in: u64,
    /// Entries passed on to the output.
    pub entries_out: u64,
    /// Point versions dropped because a range tombstone of their stripe covers them.
    pub range_deleted: u64,
}

/// The range tombstones of one flush or compaction, fragmented separately in each snapshot
/// stripe (RocksDB's `CompactionRangeDelAggregator`): it answers whether a point version is
/// deleted by a tombstone of its own stripe, and which tombstones the output must keep.
#[derive(Debug, Clone)]
pub struct RangeDelAggregator {
    /// Sorted ascending.
    snapshots: Vec<SeqNo>,
    /// `stripes[i]`: fragments of the tombstones whose seqno is in stripe `i` (see
    /// `stripe_of`), with a cursor for sequential lookups; `None` when that stripe has none.
    stripes: Vec<Option<RangeTombstoneCursor>>,
    /// Number of input tombstones (empty ones excluded).
    input_count: u64,
}

impl RangeDelAggregator {
    /// Fragments `tombstones` per stripe of `snapshots` (sorted ascending). Empty tombstones
    /// are ignored.
    pub fn new<I>(tombstones: I, snapshots: &[SeqNo]) -> Self
    where
        I: IntoIterator<Item = RangeTombstone>,
    {
        let mut per_stripe: Vec<Vec<RangeTombstone>> = vec![Vec::new(); snapshots.len() + 1];
        let mut input_count = 0u64;
        for t in tombstones.into_iter().filter(|t| !t.is_empty()) {
            input_count += 1;
            if let Some(v) = per_stripe.get_mut(stripe_of(snapshots, t.seqno)) {
                v.push(t);
            }
        }
        let stripes = per_stripe
            .into_iter()
            .map(|ts| {
                (!ts.is_empty()).then(|| {
                    RangeTombstoneCursor::new(Arc::new(RangeTombstoneSet::new(ts, SeqNo::MAX)))
                })
            })
            .collect();
        RangeDelAggregator {
            snapshots: snapshots.to_vec(),
            stripes,
            input_count,
        }
    }

    /// No tombstones at all.
    pub fn empty(snapshots: &[SeqNo]) -> Self {
        Self::new(std::iter::empty(), snapshots)
    }

    /// True when there is no tombstone.
    pub fn is_empty(&self) -> bool {
        self.input_count == 0
    }

    /// Number of (non-empty) tombstones given to [`RangeDelAggregator::new`].
    pub fn input_count(&self) -> u64 {
        self.input_count
    }

    /// True when a tombstone in the same stripe as `seqno` covers `user_key` with a larger
    /// seqno: no reader can see the version `(user_key, seqno)`. Cheap for ascending keys.
    pub fn deletes(&mut self, user_key: &[u8], seqno: SeqNo) -> bool {
        let stripe = stripe_of(&self.snapshots, seqno);
        self.stripes
            .get_mut(stripe)
            .and_then(Option::as_mut)
            .and_then(|c| c.max_covering_seqno(user_key))
            .is_some_and(|t| t > seqno)
    }

    /// The tombstones the output must keep, sorted by start key: every stripe's fragments,
    /// except the oldest stripe's when `bottommost` (they deleted all they cover here, and
    /// nothing older exists below).
    pub fn output_tombstones(&self, bottommost: bool) -> Vec<RangeTombstone> {
        let mut out: Vec<RangeTombstone> = self
            .stripes
            .iter()
            .enumerate()
            .filter(|(i, _)| !(bottommost && *i == 0))
            .filter_map(|(_, c)| c.as_ref())
            .flat_map(|c| c.set().fragments().iter().cloned())
            .collect();
        out.sort_by(|a, b| a.start.cmp(&b.start).then(b.seqno.cmp(&a.seqno)));
        out
    }
}

/// The stripe of `seqno`: the index of the oldest snapshot that sees it (`snapshots.len()`
/// for the present). `snapshots` is sorted ascending.
fn stripe_of(snapshots: &[SeqNo], seqno: SeqNo) -> usize {
    snapshots.partition_point(|&s| s < seqno)
}

/// Copies every entry of `input` (from its first) that the rule above keeps to `emit`, in
/// order. `snapshots` must be sorted ascending; `bottommost` says no older data for these keys
/// exists below the output. No range tombstones: see [`copy_with_gc_and_range_dels`].
pub fn copy_with_gc(
    input: &mut dyn InternalIterator,
    snapshots: &[SeqNo],
    bottommost: bool,
    emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<GcStats> {
    let mut none = RangeDelAggregator::empty(snapshots);
    copy_with_gc_and_range_dels(input, snapshots, bottommost, &mut none, emit)
}

/// [`copy_with_gc`] that also drops the point versions the range tombstones of `range_dels`
/// delete in their stripe (built with the same `snapshots`). The tombstones themselves are
/// not emitted: write [`RangeDelAggregator::output_tombstones`] to the output.
pub fn copy_with_gc_and_range_dels(
    input: &mut dyn InternalIterator,
    snapshots: &[SeqNo],
    bottommost: bool,
    range_dels: &mut RangeDelAggregator,
    mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<GcStats> {
    let check_range_dels = !range_dels.is_empty();
    let mut stats = GcStats::default();
    let mut cur_user_key: Option<Vec<u8>> = None;
    // Stripe of the previous (newer) version of the current user key, kept or not.
    let mut prev_stripe: Option<usize> = None;
    // Sequence number of the previous version of the current user key, kept or not.
    let mut prev_seqno: Option<SeqNo> = None;
    // Set after a bottommost tombstone: every older version of the key goes.
    let mut drop_rest = false;
    let mut pending_key = Vec::new();
    let mut pending_value = Vec::new();

    input.seek_to_first()?;
    while input.valid() {
        stats.entries_in += 1;
        let p = parse_internal_key(input.key())?;
        if p.kind == ValueKind::RangeDelete {
            emit(input.key(), input.value())?;
            stats.entries_out += 1;
            input.next()?;
            continue;
        }
        if cur_user_key.as_deref() != Some(p.user_key) {
            cur_user_key = Some(p.user_key.to_vec());
            prev_stripe = None;
            drop_rest = false;
        } else if prev_seqno == Some(p.seqno) {
            // An exact copy of the version just seen: a progressive compaction that stopped
            // after installing some slices (a crash, an error) left the shallower input's
            // version and its merged copy below; merging both meets it twice. Whatever the
            // first copy's fate, the second adds nothing (a single delete must not be kept
            // twice: the output would hold one key twice).
            input.next()?;
            continue;
        }
        prev_seqno = Some(p.seqno);
        let stripe = stripe_of(snapshots, p.seqno);
        let before = prev_stripe;
        prev_stripe = Some(stripe);
        // A single delete hidden by a newer version is kept: if that newer put is later
        // cancelled by its own single delete, this one must still be there to hide the
        // older put it deletes (in a lower level, or kept here for a snapshot). It goes when
        // it cancels with its own put, or at the bottom once every snapshot sees it.
        let keep_hidden_single_delete = p.kind == ValueKind::SingleDelete;
        let shadowed = before == Some(stripe) && !keep_hidden_single_delete;
        if drop_rest || shadowed {
            input.next()?;
            continue;
        }
        // Deleted by a range tombstone no snapshot can see it without: every older version
        // in this stripe is covered too, older stripes are judged on their own.
        if check_range_dels && range_dels.deletes(p.user_key, p.seqno) {
            stats.range_deleted += 1;
            input.next()?;
            continue;
        }
        if bottommost && p.kind.is_tombstone() && stripe == 0 {
            drop_rest = true;
            input.next()?;
            continue;
        }
        if p.kind == ValueKind::SingleDelete {
            pending_key.clear();
            pending_key.extend_from_slice(input.key());
            pending_value.clear();
            pending_value.extend_from_slice(input.value());
            input.next()?;
            // Copies of this single delete (see above) stand between it and its put.
            while input.valid() {
                let n = parse_internal_key(input.key())?;
                if cur_user_key.as_deref() != Some(n.user_key) || Some(n.seqno) != prev_seqno {
                    break;
                }
                stats.entries_in += 1;
                input.next()?;
            }
            if input.valid() {
                let n = parse_internal_key(input.key())?;
                if cur_user_key.as_deref() == Some(n.user_key)
                    && n.kind == ValueKind::Put
                    && stripe_of(snapshots, n.seqno) == stripe
                {
                    // The single delete meets its put: both go.
                    stats.entries_in += 1;
                    prev_stripe = before;
                    prev_seqno = Some(n.seqno);
                    input.next()?;
                    continue;
                }
            }
            emit(&pending_key, &pending_value)?;
            stats.entries_out += 1;
            continue;
        }
        emit(input.key(), input.value())?;
        stats.entries_out += 1;
        input.next()?;
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::iter::VecIterator;
    use riptide_common::key::internal_key;
    use riptide_common::range_del::RangeTombstone;

    use ValueKind::{Delete as D, Put as P, SingleDelete as S};

    fn run(entries: &[(&str, SeqNo, ValueKind)], snaps: &[SeqNo], bottom: bool) -> Vec<String> {
        let v = entries
            .iter()
            .map(|(k, s, kind)| (internal_key(k.as_bytes(), *s, *kind), Vec::new()))
            .collect();
        let mut it = VecIterator::new(v);
        let mut out = Vec::new();
        copy_with_gc(&mut it, snaps, bottom, |k, _| {
            let p = parse_internal_key(k)?;
            let c = match p.kind {
                D => 'D',
                P => 'P',
                S => 'S',
                ValueKind::RangeDelete => 'R',
            };
            out.push(format!(
                "{}{}{c}",
                String::from_utf8_lossy(p.user_key),
                p.seqno
            ));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn shadowed_versions_dropped_unless_a_snapshot_separates_them() {
        let e = [("a", 9, P), ("a", 7, P), ("a", 3, P), ("b", 2, P)];
        assert_eq!(run(&e, &[], false), ["a9P", "b2P"]);
        assert_eq!(run(&e, &[7], false), ["a9P", "a7P", "b2P"]);
        assert_eq!(run(&e, &[3, 8], false), ["a9P", "a7P", "a3P", "b2P"]);
        assert_eq!(run(&e, &[4, 5, 6], false), ["a9P", "a3P", "b2P"]);
    }

    #[test]
    fn tombstones_dropped_only_at_the_bottom() {
        let e = [("a", 9, D), ("a", 7, P), ("b", 2, P)];
        assert_eq!(run(&e, &[], false), ["a9D", "b2P"]);
        assert_eq!(run(&e, &[], true), ["b2P"]);
        // A snapshot at 8 still sees a7: keep both.
        assert_eq!(run(&e, &[8], true), ["a9D", "a7P", "b2P"]);
        // A snapshot at 9 sees the delete: nothing older is visible to anyone.
        assert_eq!(run(&e, &[9], true), ["b2P"]);
    }

    #[test]
    fn single_delete_cancels_its_put() {
        let e = [("a", 9, S), ("a", 7, P), ("a", 5, D), ("a", 4, P)];
        assert_eq!(run(&e, &[], false), ["a5D"]);
        assert_eq!(run(&e, &[8], false), ["a9S", "a7P"]);
        assert_eq!(run(&e, &[6], false), ["a5D"]);
        assert_eq!(run(&e, &[4], false), ["a5D", "a4P"]);
        let e = [("a", 9, S), ("a", 7, P)];
        assert_eq!(run(&e, &[], false), Vec::<String>::new());
        // Single delete meeting a delete: behaves as a tombstone.
        let e = [("a", 9, S), ("a", 7, D), ("b", 1, S)];
        assert_eq!(run(&e, &[], false), ["a9S", "b1S"]);
        assert_eq!(run(&e, &[], true), Vec::<String>::new());
    }

    #[test]
    fn exact_copies_of_a_version_are_dropped() {
        // What an interrupted progressive compaction leaves: the same versions in a
        // shallower input and in the installed slice below it.
        let e = [
            ("a", 9, P),
            ("a", 9, P),
            ("a", 7, P),
            ("b", 5, D),
            ("b", 5, D),
        ];
        assert_eq!(run(&e, &[], false), ["a9P", "b5D"]);
        assert_eq!(run(&e, &[8], false), ["a9P", "a7P", "b5D"]);
        assert_eq!(run(&e, &[], true), ["a9P"]);
        // A single delete kept (snapshot between it and its put) or alone: once.
        let e = [("a", 9, S), ("a", 9, S), ("a", 7, P), ("a", 7, P)];
        assert_eq!(run(&e, &[8], false), ["a9S", "a7P"]);
        let e = [("a", 9, S), ("a", 9, S), ("b", 3, S), ("b", 3, S)];
        assert_eq!(run(&e, &[], false), ["a9S", "b3S"]);
        // Copies of a single delete and of its put: they still cancel.
        let e = [
            ("a", 9, S),
            ("a", 9, S),
            ("a", 7, P),
            ("a", 7, P),
            ("a", 4, D),
        ];
        assert_eq!(run(&e, &[], false), ["a4D"]);
        assert_eq!(run(&e, &[8], false), ["a9S", "a7P"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// Copying any versions (as an interrupted progressive compaction leaves them, in
        /// two inputs of the next merge) changes nothing in the output.
        #[test]
        fn copies_change_nothing(
            input in history(),
            copies in proptest::collection::vec(proptest::bool::ANY, 30),
            snaps in proptest::collection::btree_set(0u64..32, 0..4),
            bottom: bool,
        ) {
            let snaps: Vec<SeqNo> = snaps.into_iter().collect();
            let mut doubled = Vec::new();
            for (i, e) in input.iter().enumerate() {
                doubled.push(e.clone());
                if copies.get(i).copied().unwrap_or(false) {
                    doubled.push(e.clone());
                }
            }
            // The iterator order: user key ascending, then seqno descending (copies adjacent).
            let order = |v: &mut Vec<(Vec<u8>, SeqNo, ValueKind, Vec<u8>)>| {
                v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            };
            let mut single = input.clone();
            order(&mut single);
            order(&mut doubled);
            proptest::prop_assert_eq!(gc(&doubled, &snaps, bottom), gc(&single, &snaps, bottom));
        }
    }

    /// What a read at `snap` sees for `key` in a list of `(key, seqno, kind, value)`.
    fn read<'a>(
        entries: &'a [(Vec<u8>, SeqNo, ValueKind, Vec<u8>)],
        key: &[u8],
        snap: SeqNo,
    ) -> Option<&'a (Vec<u8>, SeqNo, ValueKind, Vec<u8>)> {
        entries
            .iter()
            .filter(|e| e.0 == key && e.1 <= snap)
            .max_by_key(|e| e.1)
    }

    /// Histories that keep the single-delete contract: at most one put since the last
    /// tombstone before each single delete.
    fn history()
    -> impl proptest::strategy::Strategy<Value = Vec<(Vec<u8>, SeqNo, ValueKind, Vec<u8>)>> {
        use proptest::prelude::*;
        prop::collection::vec((0u8..3, 0u8..10), 0..30).prop_map(|ops| {
            // Per key: puts since the last single delete, and whether a delete came since.
            let mut since_sd = [(0u32, false); 3];
            let mut out = Vec::new();
            for (i, (k, op)) in ops.into_iter().enumerate() {
                let seq = i as SeqNo + 1;
                let slot = &mut since_sd[usize::from(k)];
                let kind = match op {
                    0 => D,
                    1..=4 if slot.0 <= 1 && !slot.1 => S,
                    _ => P,
                };
                match kind {
                    P => slot.0 += 1,
                    S => *slot = (0, false),
                    _ => slot.1 = true,
                }
                out.push((vec![b'a' + k], seq, kind, format!("v{seq}").into_bytes()));
            }
            out
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        #[test]
        fn every_snapshot_reads_the_same(
            input in history(),
            snaps in proptest::collection::btree_set(0u64..32, 0..4),
            bottom: bool,
        ) {
            let snaps: Vec<SeqNo> = snaps.into_iter().collect();
            let mut it = VecIterator::new(
                input.iter().map(|(k, s, kind, v)| (internal_key(k, *s, *kind), v.clone())).collect(),
            );
            let mut output = Vec::new();
            let stats = copy_with_gc(&mut it, &snaps, bottom, |k, v| {
                let p = parse_internal_key(k)?;
                output.push((p.user_key.to_vec(), p.seqno, p.kind, v.to_vec()));
                Ok(())
            }).unwrap();
            proptest::prop_assert_eq!(stats.entries_in, input.len() as u64);
            proptest::prop_assert_eq!(stats.entries_out, output.len() as u64);
            let mut reads: Vec<SeqNo> = snaps.clone();
            reads.push(SeqNo::MAX);
            for key in [b"a", b"b", b"c"] {
                for &s in &reads {
                    let before = read(&input, key, s);
                    let after = read(&output, key, s);
                    let value = |e: Option<&(Vec<u8>, SeqNo, ValueKind, Vec<u8>)>| {
                        e.filter(|e| e.2 == P).map(|e| e.3.clone())
                    };
                    proptest::prop_assert_eq!(value(before), value(after), "key {:?} at {}", key, s);
                    if !bottom {
                        // Above the bottom a delete must stay visible as a tombstone: older
                        // data may lie below.
                        if before.is_some_and(|e| e.2 == D) {
                            proptest::prop_assert!(after.is_some_and(|e| e.2.is_tombstone()));
                        }
                        if before.is_none() {
                            proptest::prop_assert!(after.is_none());
                        }
                    }
                }
            }
            // Only the newest version of each stripe can survive, except a single delete
            // kept under a newer version.
            for w in output.windows(2) {
                if let [a, b] = w && a.0 == b.0 && b.2 != S {
                    proptest::prop_assert_ne!(stripe_of(&snaps, a.1), stripe_of(&snaps, b.1));
                }
            }
            if bottom && snaps.is_empty() {
                proptest::prop_assert!(output.iter().all(|e| e.2 == P));
            }
        }
    }

    /// GCs `entries` (sorted newest first per key by the iterator) into a new list.
    fn gc(
        entries: &[(Vec<u8>, SeqNo, ValueKind, Vec<u8>)],
        snaps: &[SeqNo],
        bottom: bool,
    ) -> Vec<(Vec<u8>, SeqNo, ValueKind, Vec<u8>)> {
        let mut it = VecIterator::new(
            entries
                .iter()
                .map(|(k, s, kind, v)| (internal_key(k, *s, *kind), v.clone()))
                .collect(),
        );
        let mut out = Vec::new();
        copy_with_gc(&mut it, snaps, bottom, |k, v| {
            let p = parse_internal_key(k)?;
            out.push((p.user_key.to_vec(), p.seqno, p.kind, v.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// As in the engine: the history is split into an older part (a lower level) and a
        /// newer part (a flushed memtable); the newer part is collected alone, then both are
        /// merged and collected (not bottommost), then everything at the bottom. After each
        /// step every snapshot reads what it read before.
        #[test]
        fn reads_survive_gc_in_several_passes(
            input in history(),
            split in 0usize..40,
            split2 in 0usize..40,
            snaps in proptest::collection::btree_set(0u64..32, 0..4),
        ) {
            let snaps: Vec<SeqNo> = snaps.into_iter().collect();
            let (a, b) = (split.min(split2).min(input.len()), split.max(split2).min(input.len()));
            let lower: Vec<_> = input[..a].to_vec();
            let middle: Vec<_> = input[a..b].to_vec();
            let upper: Vec<_> = input[b..].to_vec();
            let check = |state: &[(Vec<u8>, SeqNo, ValueKind, Vec<u8>)], step: &str| {
                let mut reads = snaps.clone();
                reads.push(SeqNo::MAX);
                for key in [b"a", b"b", b"c"] {
                    for &s in &reads {
                        let value = |e: Option<&(Vec<u8>, SeqNo, ValueKind, Vec<u8>)>| {
                            e.filter(|e| e.2 == P).map(|e| e.3.clone())
                        };
                        proptest::prop_assert_eq!(
                            value(read(&input, key, s)),
                            value(read(state, key, s)),
                            "{}: key {:?} at {}", step, key, s
                        );
                    }
                }
                Ok(())
            };
            // Flush the middle, then the upper part, each alone.
            let middle = gc(&middle, &snaps, false);
            let upper = gc(&upper, &snaps, false);
            check(&[lower.clone(), middle.clone(), upper.clone()].concat(), "after flushes")?;
            // Merge the two flushed parts (L0 into L0-ish), not bottommost.
            let merged = gc(&[middle, upper].concat(), &snaps, false);
            check(&[lower.clone(), merged.clone()].concat(), "after merging the newer parts")?;
            // Everything at the bottom.
            let all = gc(&[lower, merged].concat(), &snaps, true);
            check(&all, "after the bottommost merge")?;
        }

        /// Another order: the older parts reach the bottom first, then the newest part is
        /// flushed and merged down onto them (a bottom merge followed by a later one).
        #[test]
        fn reads_survive_a_bottom_merge_then_a_later_merge(
            input in history(),
            split in 0usize..40,
            split2 in 0usize..40,
            snaps in proptest::collection::btree_set(0u64..32, 0..4),
            later_snaps in proptest::collection::btree_set(0u64..32, 0..4),
        ) {
            let snaps: Vec<SeqNo> = snaps.into_iter().collect();
            // Snapshots released between the merges: the later merge sees a subset.
            let later: Vec<SeqNo> = later_snaps.into_iter().filter(|s| snaps.contains(s)).collect();
            let (a, b) = (split.min(split2).min(input.len()), split.max(split2).min(input.len()));
            let lower: Vec<_> = input[..a].to_vec();
            let middle: Vec<_> = input[a..b].to_vec();
            let upper: Vec<_> = input[b..].to_vec();
            let check = |state: &[(Vec<u8>, SeqNo, ValueKind, Vec<u8>)], reads: &[SeqNo], step: &str| {
                let mut reads = reads.to_vec();
                reads.push(SeqNo::MAX);
                for key in [b"a", b"b", b"c"] {
                    for &s in &reads {
                        let value = |e: Option<&(Vec<u8>, SeqNo, ValueKind, Vec<u8>)>| {
                            e.filter(|e| e.2 == P).map(|e| e.3.clone())
                        };
                        proptest::prop_assert_eq!(
                            value(read(&input, key, s)),
                            value(read(state, key, s)),
                            "{}: key {:?} at {}", step, key, s
                        );
                    }
                }
                Ok(())
            };
            let middle = gc(&middle, &snaps, false);
            let base = gc(&[lower, middle].concat(), &snaps, true);
            let upper = gc(&upper, &snaps, false);
            check(&[base.clone(), upper.clone()].concat(), &snaps, "after the first bottom merge")?;
            let all = gc(&[base, upper].concat(), &later, true);
            check(&all, &later, "after the later bottom merge")?;
        }
    }

    // ---- Range tombstones ----

    type Point = (Vec<u8>, SeqNo, ValueKind, Vec<u8>);

    /// A run of a flush or compaction: its point entries and its range tombstones.
    #[derive(Debug, Clone, Default)]
    struct Run {
        points: Vec<Point>,
        ranges: Vec<RangeTombstone>,
    }

    /// What a reader at `snap` gets for `key` from every point and tombstone of `runs`: the
    /// value of the newest visible put unless a visible newer range tombstone covers it.
    fn read_with_ranges(runs: &[Run], key: &[u8], snap: SeqNo) -> Option<Vec<u8>> {
        let newest = runs
            .iter()
            .flat_map(|r| r.points.iter())
            .filter(|e| e.0 == key && e.1 <= snap)
            .max_by_key(|e| e.1)?;
        let covered = runs
            .iter()
            .flat_map(|r| r.ranges.iter())
            .any(|t| t.seqno <= snap && t.seqno > newest.1 && t.contains(key));
        (!covered && newest.2 == P).then(|| newest.3.clone())
    }

    /// GCs `runs` merged into one, as a flush or compaction does.
    fn gc_runs(runs: &[Run], snaps: &[SeqNo], bottom: bool) -> (Run, GcStats) {
        let ranges: Vec<RangeTombstone> = runs.iter().flat_map(|r| r.ranges.clone()).collect();
        let mut agg = RangeDelAggregator::new(ranges, snaps);
        let mut it = VecIterator::new(
            runs.iter()
                .flat_map(|r| r.points.iter())
                .map(|(k, s, kind, v)| (internal_key(k, *s, *kind), v.clone()))
                .collect(),
        );
        let mut points = Vec::new();
        let stats = copy_with_gc_and_range_dels(&mut it, snaps, bottom, &mut agg, |k, v| {
            let p = parse_internal_key(k)?;
            points.push((p.user_key.to_vec(), p.seqno, p.kind, v.to_vec()));
            Ok(())
        })
        .unwrap();
        let ranges = agg.output_tombstones(bottom);
        (Run { points, ranges }, stats)
    }

    /// Histories over five keys with puts, deletes, single deletes (keeping the contract; a
    /// range delete counts as a delete of what it covers) and range deletes.
    fn history_with_ranges() -> impl proptest::strategy::Strategy<Value = Vec<(SeqNo, Run)>> {
        use proptest::prelude::*;
        prop::collection::vec((0u8..5, 0u8..12, 0u8..4), 0..40).prop_map(|ops| {
            let mut since_sd = [(0u32, false); 5];
            let mut out = Vec::new();
            for (i, (k, op, len)) in ops.into_iter().enumerate() {
                let seq = i as SeqNo + 1;
                let mut run = Run::default();
                if op >= 10 {
                    let end = (k + len).min(5);
                    for slot in since_sd
                        .iter_mut()
                        .take(usize::from(end))
                        .skip(usize::from(k))
                    {
                        slot.1 = true;
                    }
                    run.ranges
                        .push(RangeTombstone::new(vec![b'a' + k], vec![b'a' + end], seq));
                } else {
                    let slot = &mut since_sd[usize::from(k)];
                    let kind = match op {
                        0 => D,
                        1..=4 if slot.0 <= 1 && !slot.1 => S,
                        _ => P,
                    };
                    match kind {
                        P => slot.0 += 1,
                        S => *slot = (0, false),
                        _ => slot.1 = true,
                    }
                    run.points
                        .push((vec![b'a' + k], seq, kind, format!("v{seq}").into_bytes()));
                }
                out.push((seq, run));
            }
            out
        })
    }

    fn concat(ops: &[(SeqNo, Run)]) -> Run {
        let mut r = Run::default();
        for (_, op) in ops {
            r.points.extend(op.points.iter().cloned());
            r.ranges.extend(op.ranges.iter().cloned());
        }
        r
    }

    #[test]
    fn range_tombstones_drop_what_they_cover_in_their_stripe() {
        let t = |s: &str, e: &str, q| RangeTombstone::new(s.as_bytes(), e.as_bytes(), q);
        let run = Run {
            points: vec![
                (b"a".to_vec(), 3, P, b"x".to_vec()),
                (b"b".to_vec(), 9, P, b"y".to_vec()),
                (b"b".to_vec(), 4, P, b"z".to_vec()),
                (b"c".to_vec(), 2, D, Vec::new()),
                (b"d".to_vec(), 1, P, b"w".to_vec()),
            ],
            ranges: vec![t("a", "d", 5)],
        };
        let keys = |r: &Run| -> Vec<String> {
            r.points
                .iter()
                .map(|p| format!("{}{}", String::from_utf8_lossy(&p.0), p.1))
                .collect()
        };
        // No snapshot: a3, b4, c2 go; b9 (newer) and d1 (outside) stay; the tombstone stays.
        let (out, stats) = gc_runs(std::slice::from_ref(&run), &[], false);
        assert_eq!(keys(&out), ["b9", "d1"]);
        assert_eq!(out.ranges, vec![t("a", "d", 5)]);
        assert_eq!(stats.range_deleted, 2, "b4 is shadowed by b9 first");
        // At the bottom the tombstone goes too.
        let (out, _) = gc_runs(std::slice::from_ref(&run), &[], true);
        assert_eq!(keys(&out), ["b9", "d1"]);
        assert!(out.ranges.is_empty());
        // A snapshot at 3 sees a3 and c2 (stripe 0) but not the tombstone (stripe 1): b4 is
        // in the tombstone's stripe and goes; a3 stays (b9 and b4 are in different stripes).
        let (out, _) = gc_runs(std::slice::from_ref(&run), &[3], true);
        assert_eq!(keys(&out), ["a3", "b9", "d1"]);
        assert_eq!(out.ranges, vec![t("a", "d", 5)]);
        // Overlapping tombstones of one stripe are fragmented to the newest.
        let run2 = Run {
            points: Vec::new(),
            ranges: vec![t("a", "c", 5), t("b", "e", 7), t("x", "y", 2)],
        };
        let (out, _) = gc_runs(std::slice::from_ref(&run2), &[], false);
        assert_eq!(
            out.ranges,
            vec![t("a", "b", 5), t("b", "e", 7), t("x", "y", 2)]
        );
        // ... but kept apart when a snapshot separates them.
        let (out, _) = gc_runs(std::slice::from_ref(&run2), &[6], false);
        assert_eq!(
            out.ranges,
            vec![t("a", "c", 5), t("b", "e", 7), t("x", "y", 2)]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// `reads_survive_gc_in_several_passes` with range tombstones: the history is split
        /// into an older part (a lower level), a middle and a newer part (flushed memtables);
        /// each newer part is flushed alone, both are merged (not bottommost), then everything
        /// is merged at the bottom. After each step every snapshot reads what it read before.
        #[test]
        fn reads_with_range_tombstones_survive_gc_in_several_passes(
            input in history_with_ranges(),
            split in 0usize..45,
            split2 in 0usize..45,
            snaps in proptest::collection::btree_set(0u64..42, 0..4),
            later_snaps in proptest::collection::btree_set(0u64..42, 0..4),
        ) {
            let snaps: Vec<SeqNo> = snaps.into_iter().collect();
            let later: Vec<SeqNo> = later_snaps.into_iter().filter(|s| snaps.contains(s)).collect();
            let (a, b) = (split.min(split2).min(input.len()), split.max(split2).min(input.len()));
            let all = concat(&input);
            let lower = concat(&input[..a]);
            let middle = concat(&input[a..b]);
            let upper = concat(&input[b..]);
            let check = |state: &[Run], reads: &[SeqNo], step: &str| {
                let mut reads = reads.to_vec();
                reads.push(SeqNo::MAX);
                for key in [b"a", b"b", b"c", b"d", b"e"] {
                    for &s in &reads {
                        proptest::prop_assert_eq!(
                            read_with_ranges(std::slice::from_ref(&all), key, s),
                            read_with_ranges(state, key, s),
                            "{}: key {:?} at {}", step, key, s
                        );
                    }
                }
                Ok(())
            };
            let (middle, _) = gc_runs(&[middle], &snaps, false);
            let (upper, _) = gc_runs(&[upper], &snaps, false);
            check(&[lower.clone(), middle.clone(), upper.clone()], &snaps, "after flushes")?;
            let (merged, _) = gc_runs(&[middle.clone(), upper.clone()], &snaps, false);
            check(&[lower.clone(), merged.clone()], &snaps, "after merging the newer parts")?;
            let (bottom, _) = gc_runs(&[lower.clone(), merged], &snaps, true);
            check(std::slice::from_ref(&bottom), &snaps, "after the bottommost merge")?;
            if snaps.is_empty() {
                // Nothing but live puts survive a bottommost merge without snapshots.
                proptest::prop_assert!(bottom.ranges.is_empty());
                proptest::prop_assert!(bottom.points.iter().all(|p| p.2 == P));
            }
            // Another order: the older parts reach the bottom first, then the newest part is
            // merged onto them, with some snapshots released in between.
            let (base, _) = gc_runs(&[lower, middle], &snaps, true);
            check(&[base.clone(), upper.clone()], &snaps, "after the first bottom merge")?;
            let (last, _) = gc_runs(&[base, upper], &later, true);
            check(std::slice::from_ref(&last), &later, "after the later bottom merge")?;
        }
    }
}
