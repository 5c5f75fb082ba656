//! Compaction garbage collection against a model: snapshots keep versions, tombstones go only
//! at the bottom, a single delete cancels its put, shadowed versions are dropped.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use riptide_common::{SeqNo, ValueKind};
use riptide_compaction::{CompactionOptions, TableHandle, compact};
use riptide_sstable::TableOptions;
use util::{Entry, del, names, put, read_tables, sdel, write_table};

/// Output file numbers, never reused within the test binary.
static NEXT: AtomicU64 = AtomicU64::new(100);

fn run(
    dir: &Path,
    inputs: Vec<Arc<TableHandle>>,
    snapshots: &[SeqNo],
    bottommost: bool,
) -> Vec<Entry> {
    let topts = TableOptions::default();
    let opts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir,
        table_options: &topts,
        cache: None,
        snapshots,
        bottommost,
        target_file_size: 1 << 20,
    };
    let out = compact(inputs, &opts, || NEXT.fetch_add(1, Ordering::Relaxed)).unwrap();
    assert_eq!(
        out.stats.entries_out as usize,
        read_tables(&out.new_files).len()
    );
    read_tables(&out.new_files)
}

/// Newest table first: `[newer, older]`.
fn two_tables(dir: &Path, newer: &[Entry], older: &[Entry]) -> Vec<Arc<TableHandle>> {
    vec![write_table(dir, 2, newer), write_table(dir, 1, older)]
}

#[test]
fn shadowed_versions_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let t = two_tables(
        dir.path(),
        &[put("a", 9, "a9"), put("b", 8, "b8")],
        &[put("a", 3, "a3"), put("c", 1, "c1")],
    );
    let out = run(dir.path(), t, &[], false);
    assert_eq!(names(&out), ["a9P", "b8P", "c1P"]);
    assert_eq!(out[0].3, b"a9");
}

#[test]
fn snapshots_keep_versions() {
    let dir = tempfile::tempdir().unwrap();
    let t = two_tables(
        dir.path(),
        &[put("a", 9, "a9"), put("a", 7, "a7")],
        &[put("a", 3, "a3"), put("a", 2, "a2")],
    );
    // Snapshot 5 sees a3, snapshot 7 sees a7; a2 is shadowed by a3 for everyone.
    let out = run(dir.path(), t, &[5, 7], false);
    assert_eq!(names(&out), ["a9P", "a7P", "a3P"]);
}

#[test]
fn tombstones_dropped_only_at_the_bottom() {
    let dir = tempfile::tempdir().unwrap();
    let newer = [del("a", 9), put("b", 8, "b8")];
    let older = [put("a", 3, "a3")];
    let t = two_tables(dir.path(), &newer, &older);
    assert_eq!(
        names(&run(dir.path(), t.clone(), &[], false)),
        ["a9D", "b8P"]
    );
    assert_eq!(names(&run(dir.path(), t.clone(), &[], true)), ["b8P"]);
    // A snapshot that still sees a3 keeps both, even at the bottom.
    assert_eq!(
        names(&run(dir.path(), t, &[5], true)),
        ["a9D", "a3P", "b8P"]
    );
}

#[test]
fn single_delete_cancels_its_put() {
    let dir = tempfile::tempdir().unwrap();
    let t = two_tables(
        dir.path(),
        &[sdel("a", 9), put("b", 8, "b8")],
        &[put("a", 3, "a3"), sdel("b", 2)],
    );
    // a9 cancels a3. b2 is hidden by b8 but kept above the bottom level: if b8 is later
    // cancelled by its own single delete, b2 must still hide whatever put it deleted.
    assert_eq!(
        names(&run(dir.path(), t.clone(), &[], false)),
        ["b8P", "b2S"]
    );
    assert_eq!(names(&run(dir.path(), t.clone(), &[], true)), ["b8P"]);
    // A snapshot between them keeps both.
    assert_eq!(
        names(&run(dir.path(), t, &[4], false)),
        ["a9S", "a3P", "b8P", "b2S"]
    );
}

/// What a read at `snap` sees for `key`.
fn read(entries: &[Entry], key: &[u8], snap: SeqNo) -> Option<Entry> {
    entries
        .iter()
        .filter(|e| e.0 == key && e.1 <= snap)
        .max_by_key(|e| e.1)
        .cloned()
}

/// Random histories keeping the single-delete contract, spread over up to three tables.
fn history() -> impl Strategy<Value = Vec<(Entry, usize)>> {
    prop::collection::vec((0u8..3, 0u8..4, 0usize..3), 1..25).prop_map(|ops| {
        // Per key: puts since the last single delete, and whether a delete came since
        // (RocksDB's contract: one put since the previous single delete, no deletes).
        let mut since_sd = [(0u32, false); 3];
        ops.into_iter()
            .enumerate()
            .map(|(i, (k, op, table))| {
                let seq = i as SeqNo + 1;
                let slot = &mut since_sd[usize::from(k)];
                let kind = match op {
                    0 => ValueKind::Delete,
                    1 if slot.0 <= 1 && !slot.1 => ValueKind::SingleDelete,
                    _ => ValueKind::Put,
                };
                match kind {
                    ValueKind::Put => slot.0 += 1,
                    ValueKind::SingleDelete => *slot = (0, false),
                    _ => slot.1 = true,
                }
                let e = (vec![b'a' + k], seq, kind, format!("v{seq}").into_bytes());
                (e, table)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn reads_at_every_snapshot_are_unchanged(
        hist in history(),
        snaps in prop::collection::btree_set(0u64..26, 0..3),
        bottom: bool,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let snaps: Vec<SeqNo> = snaps.into_iter().collect();
        let input: Vec<Entry> = hist.iter().map(|(e, _)| e.clone()).collect();
        let mut tables = Vec::new();
        for t in 0..3 {
            let part: Vec<Entry> =
                hist.iter().filter(|(_, i)| *i == t).map(|(e, _)| e.clone()).collect();
            if !part.is_empty() {
                tables.push(write_table(dir.path(), t as u64 + 1, &part));
            }
        }
        let out = run(dir.path(), tables, &snaps, bottom);
        let mut reads = snaps.clone();
        reads.push(SeqNo::MAX);
        for key in [b"a", b"b", b"c"] {
            for &s in &reads {
                let before = read(&input, key, s);
                let after = read(&out, key, s);
                let value = |e: &Option<Entry>| {
                    e.as_ref().filter(|e| e.2 == ValueKind::Put).map(|e| e.3.clone())
                };
                prop_assert_eq!(value(&before), value(&after), "{:?} at {}", key, s);
                if !bottom {
                    if before.as_ref().is_some_and(|e| e.2 == ValueKind::Delete) {
                        prop_assert!(after.as_ref().is_some_and(|e| e.2.is_tombstone()));
                    }
                    if before.is_none() {
                        prop_assert!(after.is_none());
                    }
                }
            }
        }
        // At most one version per key per snapshot stripe, except a single delete kept
        // under a newer version.
        let stripe = |s: SeqNo| snaps.partition_point(|&x| x < s);
        for w in out.windows(2) {
            if w[0].0 == w[1].0 && w[1].2 != ValueKind::SingleDelete {
                prop_assert_ne!(stripe(w[0].1), stripe(w[1].1));
            }
        }
    }
}
