//! `max_open_files` bounds the table files kept open; reads stay correct as tables are
//! evicted and reopened.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use riptide::{Db, Options, ReadOptions, SyncMode};

/// Table files of `dir` this process has open, from /proc/self/fd.
fn open_tables(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir) && target.extension().is_some_and(|x| x == "sst"))
        .count()
}

#[test]
fn open_table_files_stay_within_max_open_files() {
    let dir = tempfile::tempdir().unwrap();
    let dir_path = dir.path().canonicalize().unwrap();
    // Many L0 tables and no compaction, so every get probes them all (the young-database
    // rules would move the first tables down and merge the rest).
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .young_space_bound(false)
        .write_buffer_size(16 * 1024)
        .l0_compaction_trigger(1000)
        .l0_slowdown_trigger(1000)
        .l0_stop_trigger(2000)
        .max_open_files(4);
    let db = Db::open(&dir_path, opts.clone()).unwrap();
    for i in 0..3000u32 {
        db.put(&i.to_be_bytes(), &[i as u8; 100]).unwrap();
    }
    db.flush().unwrap();
    let tables = db.statistics().levels[0].files;
    assert!(
        tables >= 15,
        "only {tables} tables: the test needs more than the bound"
    );

    for i in 0..3000u32 {
        assert_eq!(
            db.get(&i.to_be_bytes()).unwrap(),
            Some(vec![i as u8; 100]),
            "key {i}"
        );
    }
    let open = open_tables(&dir_path);
    assert!(
        open <= 4,
        "{open} table files open with max_open_files 4 ({tables} tables)"
    );
    let s = db.statistics();
    assert!(s.open_table_files <= 4, "{s}");
    assert!(
        s.table_opens > tables as u64,
        "tables were never reopened: {s}"
    );

    // An iterator holds the tables it reads (like RocksDB's); they close when it drops.
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, 3000);
    drop(it);
    assert!(open_tables(&dir_path) <= 4);
    db.close().unwrap();

    // Reopening checks every table once and keeps at most the bound open.
    let db = Db::open(&dir_path, opts).unwrap();
    assert!(open_tables(&dir_path) <= 4);
    assert_eq!(db.get(&7u32.to_be_bytes()).unwrap(), Some(vec![7u8; 100]));
    db.close().unwrap();
}
