//! A scan that steps over many tombstones of the active memtable gets that memtable flushed
//! early (before it is full), and the flush turns the run of tombstones into a range
//! tombstone, so later scans seek over the deleted stretch.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use riptide::{Db, Options, ReadOptions, ValueKind};

fn key(i: u32) -> Vec<u8> {
    format!("q{i:08}").into_bytes()
}

fn first_live(db: &Db) -> Option<Vec<u8>> {
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    it.valid().then(|| it.key().to_vec())
}

#[test]
fn scans_over_many_tombstones_flush_the_memtable_early() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .write_buffer_size(8 << 20)
        .memtable_scan_flush_trigger(5_000)
        .tombstone_coalesce_min_run(100);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..40_000 {
        db.put(&key(i), &[b'v'; 40]).unwrap();
    }
    db.flush().unwrap();
    let flushes_before = db.statistics().flushes;
    // A queue's consumer: delete from the low end (the memtable stays far below 8 MiB).
    for i in 0..30_000 {
        db.delete(&key(i)).unwrap();
    }
    assert!(db.statistics().memtable_bytes < 8 << 20);
    // The scan steps over 30,000 tombstones and the 30,000 puts they delete.
    assert_eq!(first_live(&db), Some(key(30_000)));
    // The next write freezes the memtable; the flush coalesces its run of tombstones.
    db.put(&key(50_000), b"tail").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let s = db.statistics();
        if s.flushes > flushes_before && s.immutable_memtables == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "no early flush happened: {s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let versions = db.key_versions(&db.default_cf(), &key(100)).unwrap();
    assert!(
        versions
            .iter()
            .any(|v| v.kind == ValueKind::RangeDelete && v.source.starts_with("L")),
        "the flushed run became a range tombstone: {versions:?}"
    );
    assert_eq!(first_live(&db), Some(key(30_000)));
    assert_eq!(db.get(&key(29_999)).unwrap(), None);
    assert_eq!(db.get(&key(30_000)).unwrap(), Some(vec![b'v'; 40]));
}

#[test]
fn a_zero_trigger_never_flushes_early() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .write_buffer_size(8 << 20)
        // Only a full memtable may flush (no young-database early flushes).
        .young_space_bound(false)
        .memtable_scan_flush_trigger(0);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..20_000 {
        db.put(&key(i), b"v").unwrap();
    }
    for i in 0..20_000 {
        db.delete(&key(i)).unwrap();
    }
    assert_eq!(first_live(&db), None);
    db.put(&key(99_999), b"x").unwrap();
    assert_eq!(db.statistics().flushes, 0);
}
