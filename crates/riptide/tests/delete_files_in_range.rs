//! `Db::delete_files_in_range`: whole table files under a range delete leave the database at
//! once, without changing what any reader at or after the delete sees.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::path::Path;

use common::keys;
use riptide::{Db, OlderSnapshots, Options, ReadOptions, SyncMode};

/// Keys of two "tables": `a` (dropped by the tests) and `b` (kept).
fn key(table: char, i: u32) -> Vec<u8> {
    format!("{table}{i:06}").into_bytes()
}

const ROWS: u32 = 6_000;

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(256 << 10)
        .target_file_size(64 << 10)
}

/// A database whose two tables sit in the last level, in many files.
fn loaded(dir: &Path) -> Db {
    let db = Db::open(dir, options()).unwrap();
    for i in 0..ROWS {
        for t in ['a', 'b'] {
            db.put(&key(t, i), &[t as u8; 100]).unwrap();
        }
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert!(table_files(&db) > 10, "the load spans many files");
    db
}

fn table_files(db: &Db) -> usize {
    db.statistics().levels.iter().map(|l| l.files).sum()
}

fn sst_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

fn table(t: char, range: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    range.map(|i| key(t, i)).collect()
}

#[test]
fn a_dropped_range_leaves_its_files_and_the_rest_stays() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let files_before = table_files(&db);
    let bytes_before = sst_bytes(dir.path());
    db.delete_range(b"a", b"b").unwrap();

    let cf = db.default_cf();
    let deleted = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Keep)
        .unwrap();
    // Half the bytes are table a's; all of it goes but the file (at most one) that also
    // holds table b's first keys: at least 80% of a's half.
    assert!(
        deleted.bytes * 10 >= bytes_before / 2 * 8,
        "{deleted:?} of {files_before} files, {bytes_before} bytes"
    );
    assert_eq!(table_files(&db), files_before - deleted.files as usize);
    let stats = db.statistics();
    assert_eq!(stats.range_files_deleted, deleted.files);
    assert_eq!(stats.range_file_bytes_deleted, deleted.bytes);
    // The files are gone from the disk, not only from the version.
    assert!(
        sst_bytes(dir.path()) <= bytes_before - deleted.bytes,
        "{} bytes of tables on disk, {bytes_before} before, {} deleted",
        sst_bytes(dir.path()),
        deleted.bytes
    );
    assert_eq!(keys(&db, ReadOptions::default()), table('b', 0..ROWS));
    assert_eq!(db.get(&key('a', 17)).unwrap(), None);
    assert_eq!(db.get(&key('b', 17)).unwrap(), Some(vec![b'b'; 100]));

    // A second call finds nothing more; after a reopen the range stays deleted.
    assert_eq!(
        db.delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Keep)
            .unwrap()
            .files,
        0
    );
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(keys(&db, ReadOptions::default()), table('b', 0..ROWS));
    // Plus at most the L0 file the replayed WAL (the range delete) was flushed into.
    assert!(table_files(&db) <= files_before - deleted.files as usize + 1);
}

#[test]
fn nothing_goes_without_a_covering_range_delete() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let files = table_files(&db);
    let cf = db.default_cf();
    // No range delete at all.
    let d = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Ignore)
        .unwrap();
    assert_eq!(d.files, 0);
    // A range delete that leaves a gap: only the files wholly inside one part go.
    db.delete_range(&key('a', 0), &key('a', 2_000)).unwrap();
    db.delete_range(&key('a', 3_000), b"b").unwrap();
    db.delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Ignore)
        .unwrap();
    let mut want = table('a', 2_000..3_000);
    want.extend(table('b', 0..ROWS));
    assert_eq!(keys(&db, ReadOptions::default()), want);
    assert!(table_files(&db) < files);
}

#[test]
fn versions_newer_than_the_range_delete_stay() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    db.delete_range(b"a", b"b").unwrap();
    // The range delete in an L0 file of its own, then versions written after it in
    // another one (no tombstone in it: only its seqnos tell it apart from the old files).
    db.flush().unwrap();
    for i in (0..ROWS).step_by(100) {
        db.put(&key('a', i), b"new").unwrap();
    }
    db.flush().unwrap();
    let cf = db.default_cf();
    let d = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Keep)
        .unwrap();
    assert!(d.files > 0);
    let mut want: Vec<Vec<u8>> = (0..ROWS).step_by(100).map(|i| key('a', i)).collect();
    want.extend(table('b', 0..ROWS));
    assert_eq!(keys(&db, ReadOptions::default()), want);
    assert_eq!(db.get(&key('a', 100)).unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get(&key('a', 101)).unwrap(), None);
}

#[test]
fn an_older_snapshot_keeps_the_files_it_reads_unless_the_caller_waives_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let snap = db.snapshot();
    db.delete_range(b"a", b"b").unwrap();
    let cf = db.default_cf();
    let kept = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Keep)
        .unwrap();
    assert_eq!(kept.files, 0, "the snapshot still reads table a");
    let mut all = table('a', 0..ROWS);
    all.extend(table('b', 0..ROWS));
    assert_eq!(keys(&db, ReadOptions::default().snapshot(&snap)), all);

    // The caller says no snapshot reads the range again (a dropped table): the files go.
    let gone = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Ignore)
        .unwrap();
    assert!(gone.files > 0);
    assert_eq!(keys(&db, ReadOptions::default()), table('b', 0..ROWS));
}

#[test]
fn an_iterator_open_before_keeps_its_view_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let mut open = db.iter(ReadOptions::default()).unwrap();
    open.seek_to_first().unwrap();
    db.delete_range(b"a", b"b").unwrap();
    let cf = db.default_cf();
    // No snapshot is registered: the files go while the iterator still reads them.
    let gone = db
        .delete_files_in_range(&cf, b"a", b"b", OlderSnapshots::Keep)
        .unwrap();
    assert!(gone.files > 0);
    let mut seen = Vec::new();
    while open.valid() {
        seen.push(open.key().to_vec());
        open.next().unwrap();
    }
    let mut all = table('a', 0..ROWS);
    all.extend(table('b', 0..ROWS));
    assert_eq!(seen, all);
    drop(open);
    assert_eq!(keys(&db, ReadOptions::default()), table('b', 0..ROWS));
}

#[test]
fn a_power_loss_keeps_the_range_delete_whose_files_went() {
    use riptide::fs::FaultFs;
    // No sync at commit: the range delete is durable only because delete_files_in_range
    // syncs the WAL before the manifest forgets the files it covers.
    let opts = |fs: &FaultFs| options().file_system(fs.as_dyn());
    let dir = Path::new("/db");
    let fs = FaultFs::new(7);
    let db = Db::open(dir, opts(&fs)).unwrap();
    for i in 0..ROWS {
        for t in ['a', 'b'] {
            db.put(&key(t, i), &[t as u8; 100]).unwrap();
        }
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    db.delete_range(b"a", b"b").unwrap();
    let gone = db
        .delete_files_in_range(&db.default_cf(), b"a", b"b", OlderSnapshots::Keep)
        .unwrap();
    assert!(gone.files > 0);

    let fs = fs.crash();
    drop(db);
    let db = Db::open(dir, opts(&fs)).unwrap();
    // Table a stays deleted, also in the file it shares with table b.
    let left = keys(&db, ReadOptions::default());
    let of_a = left.iter().filter(|k| k.starts_with(b"a")).count();
    assert_eq!(of_a, 0, "{of_a} keys of the deleted range came back");
    assert!(left == table('b', 0..ROWS), "table b changed");
}
