//! Tombstone coalescing at flush: a long run of deleted keys becomes one range tombstone
//! (so scans seek over it) only when the older data holds no other live key in the run's
//! range; keys that were never deleted stay readable, and snapshots taken before the deletes
//! still see every key.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use riptide::{Db, Options, ReadOptions, ValueKind};

fn key(i: u32) -> Vec<u8> {
    format!("row{i:06}").into_bytes()
}

fn open(dir: &std::path::Path) -> Db {
    // Large memtables: every flush below is explicit.
    Db::open(
        dir,
        Options::default()
            .write_buffer_size(64 << 20)
            .tombstone_coalesce_min_run(100),
    )
    .unwrap()
}

fn has_range_tombstone(db: &Db, k: &[u8]) -> bool {
    db.key_versions(&db.default_cf(), k)
        .unwrap()
        .iter()
        .any(|v| v.kind == ValueKind::RangeDelete)
}

#[test]
fn a_fully_deleted_run_becomes_a_range_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for i in 0..1000 {
        db.put(&key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    let before = db.snapshot();
    for i in 0..600 {
        db.delete(&key(i)).unwrap();
    }
    db.flush().unwrap();
    assert!(has_range_tombstone(&db, &key(300)), "the run was coalesced");
    assert!(
        !has_range_tombstone(&db, &key(700)),
        "nothing beyond the run"
    );
    let live = common::keys(&db, ReadOptions::default());
    assert_eq!(live.len(), 400);
    assert_eq!(live[0], key(600));
    // The snapshot from before the deletes still sees all 1000 keys.
    assert_eq!(
        common::keys(&db, ReadOptions::default().snapshot(&before)).len(),
        1000
    );
    assert_eq!(
        db.get_cf_opt(
            &db.default_cf(),
            &key(5),
            &ReadOptions::default().snapshot(&before)
        )
        .unwrap(),
        Some(b"v".to_vec())
    );
    // A key of the range written again after the flush is live.
    db.put(&key(10), b"again").unwrap();
    assert_eq!(db.get(&key(10)).unwrap(), Some(b"again".to_vec()));
    drop(before);
    db.close().unwrap();
    let db = open(dir.path());
    assert_eq!(common::keys(&db, ReadOptions::default()).len(), 401);
    assert_eq!(db.get(&key(11)).unwrap(), None);
}

#[test]
fn a_live_key_inside_the_run_prevents_coalescing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for i in 0..1000 {
        db.put(&key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    // Delete 0..600 except 250: in the memtable the deletes are still one consecutive run,
    // but key 250 is live in the older data.
    for i in (0..600).filter(|&i| i != 250) {
        db.delete(&key(i)).unwrap();
    }
    db.flush().unwrap();
    assert!(
        !has_range_tombstone(&db, &key(300)),
        "must not coalesce over a live key"
    );
    assert_eq!(db.get(&key(250)).unwrap(), Some(b"v".to_vec()));
    let live = common::keys(&db, ReadOptions::default());
    assert_eq!(live.len(), 401);
    assert_eq!(live[0], key(250));
}

#[test]
fn short_runs_and_runs_broken_by_puts_stay_point_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for i in 0..1000 {
        db.put(&key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    for i in 0..1000 {
        if i % 50 == 49 {
            db.put(&key(i), b"new").unwrap(); // breaks the run every 50 keys
        } else {
            db.delete(&key(i)).unwrap();
        }
    }
    db.flush().unwrap();
    assert!(!has_range_tombstone(&db, &key(10)));
    let live = common::keys(&db, ReadOptions::default());
    assert_eq!(live.len(), 20);
    assert!(
        live.iter()
            .all(|k| db.get(k).unwrap() == Some(b"new".to_vec()))
    );
}
