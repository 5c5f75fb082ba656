//! Range deletes: range tombstones in memtables, seen by every read path, then persisted by
//! flush, carried down by compaction (dropping what they cover) and kept across reopen.
//!
//! Most databases here never flush (huge write buffers), to test the memtable read paths;
//! the tests at the end flush, compact and reopen.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::Arc;

use common::keys;
use riptide::{ColumnFamily, Db, ErrorKind, Options, ReadOptions, SyncMode, WriteBatch};
use riptide_common::ValueKind;

fn memtable_only() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(256 << 20)
        .db_write_buffer_size(1 << 30)
}

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), memtable_only()).unwrap();
    (dir, db)
}

fn k(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

fn v(i: u32, round: u32) -> Vec<u8> {
    format!("v{i}.{round}").into_bytes()
}

fn delete_range(db: &Db, start: &[u8], end: &[u8]) {
    db.delete_range(start, end).unwrap();
}

fn keys_rev(db: &Db, opts: ReadOptions<'_>) -> Vec<Vec<u8>> {
    let mut it = db.iter(opts).unwrap();
    it.seek_to_last().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.prev().unwrap();
    }
    out.reverse();
    out
}

fn ks(range: impl IntoIterator<Item = u32>) -> Vec<Vec<u8>> {
    range.into_iter().map(k).collect()
}

#[test]
fn public_api_writes_range_deletes() {
    let (_dir, db) = open();
    db.put(b"a", b"1").unwrap();
    db.put(b"c", b"3").unwrap();
    let seq = db.latest_seqno();
    db.delete_range(b"a", b"b").unwrap();
    assert_eq!(db.latest_seqno(), seq + 1);
    db.delete_range_cf(&db.default_cf(), b"a", b"a").unwrap();
    let mut b = WriteBatch::new();
    b.put(b"b", b"2").delete_range(b"c", b"z");
    assert_eq!(b.range_delete_count(), 1);
    db.write(b).unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get(b"c").unwrap(), None);
    db.close().unwrap();
}

#[test]
fn hides_older_versions_but_not_newer_ones() {
    let (_dir, db) = open();
    for i in 0..10 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    db.put(&k(3), &v(3, 1)).unwrap(); // two versions of k3, both older
    delete_range(&db, &k(2), &k(6));
    db.put(&k(4), &v(4, 2)).unwrap(); // newer than the tombstone
    for i in 0..10 {
        let expected = match i {
            2 | 3 | 5 => None,
            4 => Some(v(4, 2)),
            _ => Some(v(i, 0)),
        };
        assert_eq!(db.get(&k(i)).unwrap(), expected, "key {i}");
    }
    let live = ks([0, 1, 4, 6, 7, 8, 9]);
    assert_eq!(keys(&db, ReadOptions::default()), live);
    assert_eq!(keys_rev(&db, ReadOptions::default()), live);
    // The tombstone shows in the debugging view.
    let versions = db.key_versions(&db.default_cf(), &k(3)).unwrap();
    assert!(
        versions
            .iter()
            .any(|v| format!("{:?}", v.kind) == "RangeDelete" && v.source.contains("range")),
        "{versions:?}"
    );
    db.close().unwrap();
}

#[test]
fn snapshot_taken_before_the_delete_still_sees_the_data() {
    let (_dir, db) = open();
    for i in 0..20 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    let before = db.snapshot();
    delete_range(&db, &k(5), &k(15));
    let after = db.snapshot();
    db.put(&k(7), &v(7, 1)).unwrap();
    let cf = db.default_cf();
    for i in 0..20 {
        let at_before = db
            .get_cf_opt(&cf, &k(i), &ReadOptions::default().snapshot(&before))
            .unwrap();
        assert_eq!(at_before, Some(v(i, 0)), "key {i} at the old snapshot");
        let at_after = db
            .get_cf_opt(&cf, &k(i), &ReadOptions::default().snapshot(&after))
            .unwrap();
        let deleted = (5..15).contains(&i);
        assert_eq!(
            at_after,
            (!deleted).then(|| v(i, 0)),
            "key {i} at the new snapshot"
        );
    }
    assert_eq!(
        keys(&db, ReadOptions::default().snapshot(&before)),
        ks(0..20)
    );
    assert_eq!(
        keys_rev(&db, ReadOptions::default().snapshot(&before)),
        ks(0..20)
    );
    let after_keys = ks((0..5).chain(15..20));
    assert_eq!(
        keys(&db, ReadOptions::default().snapshot(&after)),
        after_keys
    );
    assert_eq!(
        keys_rev(&db, ReadOptions::default().snapshot(&after)),
        after_keys
    );
    let now = ks((0..5).chain([7]).chain(15..20));
    assert_eq!(keys(&db, ReadOptions::default()), now);
    assert_eq!(keys_rev(&db, ReadOptions::default()), now);
    drop((before, after));
    db.close().unwrap();
}

#[test]
fn overlapping_ranges_with_writes_between() {
    let (_dir, db) = open();
    let mut model = std::collections::BTreeMap::new();
    let mut put = |db: &Db, i: u32, round: u32| {
        db.put(&k(i), &v(i, round)).unwrap();
        model.insert(k(i), v(i, round));
    };
    for i in 0..100 {
        put(&db, i, 0);
    }
    delete_range(&db, &k(10), &k(40));
    for i in (0..100).step_by(3) {
        put(&db, i, 1);
    }
    delete_range(&db, &k(30), &k(60)); // overlaps the first and the round-1 puts
    delete_range(&db, &k(20), &k(35)); // nested in both
    delete_range(&db, &k(50), &k(51)); // a single key
    for i in (0..100).step_by(7) {
        put(&db, i, 2);
    }
    delete_range(&db, &k(90), &k(200)); // past the last key
    let mut expected = std::collections::BTreeMap::new();
    for i in 0..100u32 {
        // The newest write to each key decides.
        let last_put = if i % 7 == 0 {
            2
        } else if i % 3 == 0 {
            1
        } else {
            0
        };
        let deleted_after = |round: u32| -> bool {
            // Range deletes in write order with the round they follow.
            let ranges: [(u32, u32, u32); 5] = [
                (10, 40, 0),
                (30, 60, 1),
                (20, 35, 1),
                (50, 51, 1),
                (90, 200, 2),
            ];
            ranges
                .iter()
                .any(|&(a, b, after)| after >= round && (a..b).contains(&i))
        };
        if !deleted_after(last_put) {
            expected.insert(k(i), v(i, last_put));
        }
    }
    drop(model);
    for i in 0..100 {
        assert_eq!(
            db.get(&k(i)).unwrap().as_ref(),
            expected.get(&k(i)),
            "key {i}"
        );
    }
    let exp_keys: Vec<_> = expected.keys().cloned().collect();
    assert_eq!(keys(&db, ReadOptions::default()), exp_keys);
    assert_eq!(keys_rev(&db, ReadOptions::default()), exp_keys);
    db.close().unwrap();
}

#[test]
fn put_inside_a_deleted_range_is_live() {
    let (_dir, db) = open();
    for i in 0..10 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    delete_range(&db, &k(0), &k(10));
    assert_eq!(keys(&db, ReadOptions::default()), Vec::<Vec<u8>>::new());
    db.put(&k(5), &v(5, 1)).unwrap();
    db.delete(&k(6)).unwrap();
    assert_eq!(db.get(&k(5)).unwrap(), Some(v(5, 1)));
    assert_eq!(db.get(&k(4)).unwrap(), None);
    assert_eq!(db.get(&k(6)).unwrap(), None);
    assert_eq!(keys(&db, ReadOptions::default()), ks([5]));
    assert_eq!(keys_rev(&db, ReadOptions::default()), ks([5]));
    // Deleting it again hides the new version too.
    delete_range(&db, &k(5), &k(6));
    assert_eq!(db.get(&k(5)).unwrap(), None);
    db.put(&k(5), &v(5, 2)).unwrap();
    assert_eq!(db.get(&k(5)).unwrap(), Some(v(5, 2)));
    db.close().unwrap();
}

#[test]
fn order_inside_one_batch_decides() {
    let (_dir, db) = open();
    let mut b = WriteBatch::new();
    b.put(b"a1", b"x")
        .put(b"a2", b"x")
        .delete_range(b"a", b"b") // after a1, a2: deletes them
        .put(b"a3", b"y"); // after the range delete: live
    db.write(b).unwrap();
    assert_eq!(db.get(b"a1").unwrap(), None);
    assert_eq!(db.get(b"a2").unwrap(), None);
    assert_eq!(db.get(b"a3").unwrap(), Some(b"y".to_vec()));
    assert_eq!(keys(&db, ReadOptions::default()), vec![b"a3".to_vec()]);
    db.close().unwrap();
}

#[test]
fn bounds_seeks_and_direction_changes_across_a_deleted_span() {
    let (_dir, db) = open();
    for i in 0..1000 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    // Drop a big span (the skip-with-seek path: nothing is newer than the tombstone)...
    delete_range(&db, &k(100), &k(900));
    let live: Vec<u32> = (0..100).chain(900..1000).collect();
    assert_eq!(keys(&db, ReadOptions::default()), ks(live.clone()));
    assert_eq!(keys_rev(&db, ReadOptions::default()), ks(live.clone()));

    let check_bounds = |db: &Db, live: &[u32]| {
        for (lo, hi) in [
            (50, 950),
            (100, 900),
            (150, 850),
            (0, 500),
            (500, 1000),
            (99, 901),
        ] {
            let opts = || ReadOptions::default().lower_bound(k(lo)).upper_bound(k(hi));
            let expected: Vec<u32> = live
                .iter()
                .copied()
                .filter(|&i| i >= lo && i < hi)
                .collect();
            assert_eq!(keys(db, opts()), ks(expected.clone()), "[{lo}, {hi})");
            assert_eq!(keys_rev(db, opts()), ks(expected), "[{lo}, {hi}) reverse");
        }
        let mut it = db.iter(ReadOptions::default()).unwrap();
        // seek into the span lands after it; seek_for_prev lands before it.
        it.seek(&k(500)).unwrap();
        let after_500 = live.iter().copied().find(|&i| i >= 500);
        assert_eq!(it.valid().then(|| it.key().to_vec()), after_500.map(k));
        it.prev().unwrap();
        let before_500 = live.iter().copied().rev().find(|&i| i < 500);
        assert_eq!(it.valid().then(|| it.key().to_vec()), before_500.map(k));
        it.next().unwrap();
        assert_eq!(it.valid().then(|| it.key().to_vec()), after_500.map(k));
        it.seek_for_prev(&k(500)).unwrap();
        let at_or_before_500 = live.iter().copied().rev().find(|&i| i <= 500);
        assert_eq!(
            it.valid().then(|| it.key().to_vec()),
            at_or_before_500.map(k)
        );
        it.next().unwrap();
        let next = live.iter().copied().find(|&i| i > 500);
        assert_eq!(it.valid().then(|| it.key().to_vec()), next.map(k));
        assert_eq!(it.value(), next.map(|i| v(i, 0)).unwrap_or_default());
    };
    check_bounds(&db, &live);

    // ...then write a few keys inside it: now the span must be stepped through.
    for i in [100, 450, 500, 899] {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    let mut live2 = live.clone();
    live2.extend([100, 450, 500, 899]);
    live2.sort_unstable();
    assert_eq!(keys(&db, ReadOptions::default()), ks(live2.clone()));
    assert_eq!(keys_rev(&db, ReadOptions::default()), ks(live2.clone()));
    check_bounds(&db, &live2);
    db.close().unwrap();
}

#[test]
fn empty_range_is_a_no_op_and_inverted_range_is_invalid() {
    let (_dir, db) = open();
    db.put(b"m", b"1").unwrap();
    let seq = db.latest_seqno();
    delete_range(&db, b"m", b"m");
    assert_eq!(db.get(b"m").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.latest_seqno(), seq, "an empty range writes nothing");
    let e = db.delete_range(b"z", b"a").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let mut b = WriteBatch::new();
    b.put(b"n", b"2").delete_range(b"z", b"a");
    let e = db.write(b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(db.get(b"n").unwrap(), None, "the whole batch was refused");
    assert_eq!(db.latest_seqno(), seq);
    // The empty range deletes nothing, not even its start key.
    delete_range(&db, b"", b"");
    assert_eq!(keys(&db, ReadOptions::default()), vec![b"m".to_vec()]);
    // A range from the empty key covers it.
    db.put(b"", b"e").unwrap();
    delete_range(&db, b"", b"m");
    assert_eq!(db.get(b"").unwrap(), None);
    assert_eq!(db.get(b"m").unwrap(), Some(b"1".to_vec()));
    db.close().unwrap();
}

#[test]
fn column_families_are_independent() {
    let (_dir, db) = open();
    let other: ColumnFamily = db.create_cf("other").unwrap();
    for i in 0..10 {
        db.put(&k(i), &v(i, 0)).unwrap();
        db.put_cf(&other, &k(i), &v(i, 0)).unwrap();
    }
    db.delete_range_cf(&other, &k(0), &k(5)).unwrap();
    let mut b = WriteBatch::new();
    b.delete_range_cf(&other, &k(8), &k(20));
    db.write(b).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), ks(0..10));
    let mut it = db.iter_cf(&other, ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key().to_vec());
        it.next().unwrap();
    }
    assert_eq!(seen, ks(5..8));
    assert_eq!(db.get_cf(&other, &k(2)).unwrap(), None);
    assert_eq!(db.get(&k(2)).unwrap(), Some(v(2, 0)));
    db.close().unwrap();
}

#[test]
fn readers_race_with_range_deletes() {
    let (_dir, db) = open();
    let db = Arc::new(db);
    for i in 0..2000 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    let snap = db.snapshot();
    std::thread::scope(|s| {
        let writer = Arc::clone(&db);
        s.spawn(move || {
            for round in 0..200u32 {
                let start = (round * 37) % 1990;
                writer.delete_range(&k(start), &k(start + 10)).unwrap();
                writer.put(&k(start + 3), &v(start + 3, round + 1)).unwrap();
            }
        });
        for _ in 0..2 {
            let db = Arc::clone(&db);
            let snap = &snap;
            s.spawn(move || {
                for _ in 0..20 {
                    // The old snapshot never changes.
                    assert_eq!(keys(&db, ReadOptions::default().snapshot(snap)).len(), 2000);
                    // A fresh iterator sees a sorted, duplicate-free view.
                    let now = keys(&db, ReadOptions::default());
                    assert!(now.windows(2).all(|w| w[0] < w[1]));
                }
            });
        }
    });
    drop(snap);
    Arc::into_inner(db).unwrap().close().unwrap();
}

/// Reopen replays the WAL through `Memtable::insert`, which puts each range delete back into
/// its memtable's range-tombstone store, then flushes the replayed memtables: the tombstones
/// go to the new L0 table's range-deletion block.
#[test]
fn range_deletes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), memtable_only()).unwrap();
        for i in 0..10 {
            db.put(&k(i), &v(i, 0)).unwrap();
        }
        delete_range(&db, &k(2), &k(8));
        db.put(&k(5), &v(5, 1)).unwrap();
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), memtable_only()).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), ks([0, 1, 5, 8, 9]));
    assert_eq!(db.get(&k(3)).unwrap(), None);
    assert_eq!(db.get(&k(5)).unwrap(), Some(v(5, 1)));
    db.close().unwrap();
}

/// Small memtables and levels, so data moves down the tree.
fn small_tree() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(16 << 10)
        .l0_compaction_trigger(2)
        .target_file_size(16 << 10)
        .block_size(1024)
        .max_bytes_for_level_base(64 << 10)
        .num_levels(4)
        .max_subcompactions(2)
}

fn range_delete_versions(db: &Db, key: &[u8]) -> usize {
    db.key_versions(&db.default_cf(), key)
        .unwrap()
        .iter()
        .filter(|v| v.kind == ValueKind::RangeDelete)
        .count()
}

#[test]
fn a_memtable_holding_only_a_range_delete_is_flushed() {
    let dir = tempfile::tempdir().unwrap();
    // Both flushes stay in L0 (no young-database placement or merging).
    let db = Db::open(dir.path(), small_tree().young_space_bound(false)).unwrap();
    for i in 0..10 {
        db.put(&k(i), &v(i, 0)).unwrap();
    }
    db.flush().unwrap();
    delete_range(&db, &k(3), &k(7));
    db.flush().unwrap();
    // The tombstone now lives in an L0 table of its own.
    let versions = db.key_versions(&db.default_cf(), &k(4)).unwrap();
    assert!(
        versions
            .iter()
            .any(|v| v.kind == ValueKind::RangeDelete && v.source.starts_with("L0 table")),
        "{versions:?}"
    );
    assert_eq!(db.statistics().levels[0].files, 2);
    assert_eq!(keys(&db, ReadOptions::default()), ks([0, 1, 2, 7, 8, 9]));
    assert_eq!(
        keys_rev(&db, ReadOptions::default()),
        ks([0, 1, 2, 7, 8, 9])
    );
    assert_eq!(db.get(&k(3)).unwrap(), None);
    assert_eq!(db.get(&k(7)).unwrap(), Some(v(7, 0)));
    db.close().unwrap();
    let db = Db::open(dir.path(), small_tree()).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), ks([0, 1, 2, 7, 8, 9]));
    db.close().unwrap();
}

/// A big range delete, then `compact_range`: with a snapshot taken before the delete alive,
/// everything stays readable through it across flushes and compactions; once it is released,
/// compacting leaves neither a covered entry nor a tombstone on disk; and a reopen changes
/// nothing.
#[test]
fn big_range_delete_then_compact_range_leaves_nothing_covered() {
    const N: u32 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_tree()).unwrap();
    for round in 0..2 {
        for i in 0..N {
            if round == 0 || i % 3 == 0 {
                db.put(&k(i), &v(i, round)).unwrap();
            }
        }
    }
    db.flush().unwrap();
    let expected_old: Vec<(Vec<u8>, Vec<u8>)> = (0..N)
        .map(|i| (k(i), v(i, if i % 3 == 0 { 1 } else { 0 })))
        .collect();
    let entries = |db: &Db, opts: ReadOptions<'_>| -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut it = db.iter(opts).unwrap();
        it.seek_to_first().unwrap();
        let mut out = Vec::new();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next().unwrap();
        }
        out
    };
    let before = db.snapshot();
    delete_range(&db, &k(1_000), &k(19_000));
    // Some writes inside the range after the delete: they stay.
    for i in (5_000..6_000).step_by(100) {
        db.put(&k(i), &v(i, 9)).unwrap();
    }
    let live: Vec<u32> = (0..1_000)
        .chain((5_000..6_000).step_by(100))
        .chain(19_000..N)
        .collect();
    let check_now = |db: &Db| {
        assert_eq!(keys(db, ReadOptions::default()), ks(live.iter().copied()));
        assert_eq!(db.get(&k(1_000)).unwrap(), None);
        assert_eq!(db.get(&k(5_100)).unwrap(), Some(v(5_100, 9)));
        assert_eq!(db.get(&k(18_999)).unwrap(), None);
        assert_eq!(db.get(&k(19_000)).unwrap(), Some(v(19_000, 0)));
    };
    check_now(&db);
    let check_before = |db: &Db| {
        let opts = || ReadOptions::default().snapshot(&before);
        assert_eq!(entries(db, opts()), expected_old);
        for i in [0, 1_000, 3_333, 5_100, 18_999, 19_000] {
            let want = expected_old[i as usize].1.clone();
            assert_eq!(
                db.get_cf_opt(&db.default_cf(), &k(i), &opts()).unwrap(),
                Some(want),
                "key {i} at the old snapshot"
            );
        }
    };
    check_before(&db);
    db.flush().unwrap();
    check_now(&db);
    check_before(&db);
    db.compact_range(&db.default_cf(), None).unwrap();
    check_now(&db);
    check_before(&db);
    // The snapshot needs the covered data and so the tombstone.
    assert!(range_delete_versions(&db, &k(2_000)) > 0);
    assert!(db.key_versions(&db.default_cf(), &k(2_000)).unwrap().len() >= 2);
    drop(before);

    db.compact_range(&db.default_cf(), None).unwrap();
    check_now(&db);
    let stats = db.statistics();
    let files: usize = stats.levels.iter().map(|l| l.files).sum();
    assert!(files > 0);
    assert!(stats.compactions > 0);
    assert!(
        stats.compaction_range_deleted > 0,
        "compaction dropped nothing under the range delete: {stats}"
    );
    for i in (1_000..19_000).step_by(37).chain([5_100, 5_101, 18_999]) {
        let versions = db.key_versions(&db.default_cf(), &k(i)).unwrap();
        let live = (5_000..6_000).contains(&i) && i % 100 == 0;
        if live {
            assert_eq!(versions.len(), 1, "key {i}: {versions:?}");
            assert_eq!(versions[0].kind, ValueKind::Put, "key {i}: {versions:?}");
        } else {
            assert!(versions.is_empty(), "key {i}: {versions:?}");
        }
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), small_tree()).unwrap();
    check_now(&db);
    assert_eq!(range_delete_versions(&db, &k(2_000)), 0);
    db.close().unwrap();
}

/// Range deletes written while data keeps flowing through flushes and compactions (several
/// levels, subcompactions): reads always match a model, across a reopen too.
#[test]
fn range_deletes_under_background_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_tree()).unwrap();
    let mut model = std::collections::BTreeMap::new();
    for round in 0..6u32 {
        for i in 0..3_000u32 {
            let i = (i * 7 + round * 13) % 3_000;
            db.put(&k(i), &v(i, round)).unwrap();
            model.insert(k(i), v(i, round));
        }
        let start = (round * 419) % 2_500;
        let end = start + 100 + round * 50;
        delete_range(&db, &k(start), &k(end));
        model.retain(|key, _| !(key.as_slice() >= k(start).as_slice() && key < &k(end)));
        if round % 2 == 1 {
            db.flush().unwrap();
        }
        let expected: Vec<Vec<u8>> = model.keys().cloned().collect();
        assert_eq!(keys(&db, ReadOptions::default()), expected, "round {round}");
    }
    let expected: Vec<Vec<u8>> = model.keys().cloned().collect();
    assert_eq!(keys_rev(&db, ReadOptions::default()), expected);
    db.close().unwrap();
    let db = Db::open(dir.path(), small_tree()).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), expected);
    for i in (0..3_000).step_by(11) {
        assert_eq!(db.get(&k(i)).unwrap().as_ref(), model.get(&k(i)), "key {i}");
    }
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), expected);
    db.close().unwrap();
}
