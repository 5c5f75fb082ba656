//! A database iterator told where its scan ends (`DbIterator::set_readahead_limit`) reads a
//! range of several blocks of a table in one file read; without the hint it reads the block
//! it lands in alone and the rest with a second read. Counted with a file system that counts
//! the reads of the files it opens (`riptide::fs::CountingFs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;

use riptide::fs::{CountingFs, real};
use riptide::{Db, Options, ReadOptions, SyncMode};

fn key(i: u64) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

/// Table-file reads of one range scan of `[from, to)` at a fresh database iterator (on a
/// reopened database, after a first seek elsewhere has loaded the table's index and
/// filter), with or without the range's end as the read-ahead limit.
fn reads_of_one_range(dir: &Path, from: u64, to: u64, hint: bool) -> u64 {
    let fs = Arc::new(CountingFs::new(real()));
    let db = Db::open(dir, Options::default().file_system(fs.clone())).unwrap();
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek(&key(10)).unwrap();
    assert!(it.valid());
    let before = fs.reads();
    if hint {
        it.set_readahead_limit(Some(&key(to)));
    }
    it.seek(&key(from)).unwrap();
    for i in from..to {
        assert_eq!(it.key(), key(i).as_slice());
        it.next().unwrap();
    }
    fs.reads() - before
}

#[test]
fn a_range_scan_told_its_end_reads_its_blocks_at_once() {
    let dir = tempfile::tempdir().unwrap();
    {
        let opts = Options::default()
            .sync_mode(SyncMode::None)
            .target_file_size(64 << 20);
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..20_000u64 {
            db.put(&key(i), &[b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.compact_range(&db.default_cf(), None).unwrap();
        let files: usize = db.statistics().levels.iter().map(|l| l.files).sum();
        assert!(files <= 2, "{:?}", db.statistics().levels);
    }
    // 100 rows of ~120 bytes: about three 4 KiB blocks, inside the first of the (at most
    // two, 1 MiB each) tables.
    let (from, to) = (2_000, 2_100);
    let plain = reads_of_one_range(dir.path(), from, to, false);
    let told = reads_of_one_range(dir.path(), from, to, true);
    assert_eq!(
        plain, 2,
        "the landing block alone, then a read-ahead window"
    );
    assert_eq!(told, 1, "the whole range in one read");
}
