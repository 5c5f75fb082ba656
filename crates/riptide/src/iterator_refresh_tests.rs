//! Long forward scans at a registered snapshot move to the column family's newest view
//! ([`crate::iterator::DbIterator`]'s refresh) and still return exactly what the snapshot
//! saw, while other writers overwrite, delete and range-delete the keys and their memtables
//! are flushed and compacted under the scan.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;

use crate::transaction::{IsolationLevel, TransactionOptions};
use crate::{Db, Options, ReadOptions, SyncMode};

const KEYS: usize = 6_000;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// A database with small memtables (many flushes) holding `KEYS` keys, some of them in the
/// active memtable.
fn filled(dir: &std::path::Path) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>) {
    let db = Db::open(
        dir,
        Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(64 << 10),
    )
    .unwrap();
    let mut model = BTreeMap::new();
    for i in 0..KEYS {
        let v = format!("old-{i}-{}", "x".repeat(40)).into_bytes();
        db.put(&key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    (db, model)
}

/// Overwrites every key, deletes every seventh and range-deletes a stretch, then flushes
/// and compacts: every memtable and table the scan started on is replaced.
fn rewrite_everything(db: &Db) {
    for i in 0..KEYS {
        if i % 7 == 0 {
            db.delete(&key(i)).unwrap();
        } else {
            db.put(&key(i), format!("new-{i}").as_bytes()).unwrap();
        }
    }
    db.delete_range(&key(4_000), &key(4_500)).unwrap();
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
}

#[test]
fn a_scan_at_a_snapshot_moves_to_new_views_and_sees_only_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = filled(dir.path());
    let snap = db.snapshot();
    let mut it = db.iter(ReadOptions::default().snapshot(&snap)).unwrap();
    it.seek_to_first().unwrap();
    let mut seen = BTreeMap::new();
    for _ in 0..100 {
        seen.insert(it.key().to_vec(), it.value().to_vec());
        it.next().unwrap();
    }
    rewrite_everything(&db);
    assert!(!it.on_current_view(), "the scan still reads its first view");
    while it.valid() {
        seen.insert(it.key().to_vec(), it.value().to_vec());
        it.next().unwrap();
        if seen.len() == 3_000 {
            // 1,024 steps after the rewrite at most: the scan looked and moved.
            assert!(it.on_current_view(), "no refresh after {} keys", seen.len());
            // Writes after the refresh are not seen either.
            db.put(&key(5_999), b"newer").unwrap();
            db.delete(&key(5_998)).unwrap();
            db.flush().unwrap();
        }
    }
    assert_eq!(seen, model);
    drop(it);
    drop(snap);
}

#[test]
fn a_scan_whose_snapshot_was_released_keeps_its_view() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = filled(dir.path());
    let snap = db.snapshot();
    let mut it = db.iter(ReadOptions::default().snapshot(&snap)).unwrap();
    it.seek_to_first().unwrap();
    // Released before the first refresh: nothing keeps its versions in newer views, so the
    // scan must stay on the view it pinned.
    drop(snap);
    rewrite_everything(&db);
    let mut seen = BTreeMap::new();
    while it.valid() {
        seen.insert(it.key().to_vec(), it.value().to_vec());
        it.next().unwrap();
    }
    assert!(!it.on_current_view());
    assert_eq!(seen, model);
}

#[test]
fn a_repeatable_read_transaction_scan_refreshes_and_a_read_committed_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (db, model) = filled(dir.path());
    let cf = db.default_cf();
    for (isolation, refreshes) in [
        (IsolationLevel::RepeatableRead, true),
        (IsolationLevel::ReadCommitted, false),
    ] {
        let txn = db
            .begin_transaction(TransactionOptions::default().isolation(isolation))
            .unwrap();
        let mut it = txn.iter(&cf, ReadOptions::default()).unwrap();
        it.seek_to_first().unwrap();
        rewrite_everything(&db);
        let mut n = 0;
        while it.valid() && n < 2_000 {
            n += 1;
            it.next().unwrap();
        }
        assert_eq!(
            it.db_iterator().on_current_view(),
            refreshes,
            "{isolation:?}"
        );
        if refreshes {
            // What the snapshot saw: the old value of the 2,001st key.
            let k = key(2_000);
            assert_eq!(it.key(), &k[..]);
            assert_eq!(it.value(), &model[&k][..]);
        }
        drop(it);
        txn.rollback().unwrap();
    }
}
