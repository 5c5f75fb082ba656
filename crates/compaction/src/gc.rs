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
//! Range-delete entries (reserved) are copied unchanged and do not take part.

use riptide_common::key::parse_internal_key;
use riptide_common::{InternalIterator, Result, SeqNo, ValueKind};

/// What a garbage-collecting copy read and kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Entries read from the input.
    pub entries_in: u64,
    /// Entries passed on to the output.
    pub entries_out: u64,
}

/// The stripe of `seqno`: the index of the oldest snapshot that sees it (`snapshots.len()`
/// for the present). `snapshots` is sorted ascending.
fn stripe_of(snapshots: &[SeqNo], seqno: SeqNo) -> usize {
    snapshots.partition_point(|&s| s < seqno)
}

/// Copies every entry of `input` (from its first) that the rule above keeps to `emit`, in
/// order. `snapshots` must be sorted ascending; `bottommost` says no older data for these keys
/// exists below the output.
pub fn copy_with_gc(
    input: &mut dyn InternalIterator,
    snapshots: &[SeqNo],
    bottommost: bool,
    mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<GcStats> {
    let mut stats = GcStats::default();
    let mut cur_user_key: Option<Vec<u8>> = None;
    // Stripe of the previous (newer) version of the current user key, kept or not.
    let mut prev_stripe: Option<usize> = None;
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
        }
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
            if input.valid() {
                let n = parse_internal_key(input.key())?;
                if cur_user_key.as_deref() == Some(n.user_key)
                    && n.kind == ValueKind::Put
                    && stripe_of(snapshots, n.seqno) == stripe
                {
                    // The single delete meets its put: both go.
                    stats.entries_in += 1;
                    prev_stripe = before;
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
}
