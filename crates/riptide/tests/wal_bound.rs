//! A column family written once and then left alone must not keep every WAL segment since:
//! once its memtable holds back more than `max_total_wal_size` bytes of WAL, it is flushed
//! and the old segments go. (Seen in MariaDB: the dictionary column family pinned 200 MiB of
//! WAL after a benchmark.)
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use riptide::{Db, Options, SyncMode};

/// The bytes of the WAL segments in `dir`. Background work may delete a segment between the
/// listing and its `stat`: such a segment counts as gone.
fn wal_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| match e {
            Ok(e) => Some(e),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => panic!("listing {}: {err}", dir.display()),
        })
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .filter_map(|e| match e.metadata() {
            Ok(m) => Some(m.len()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => panic!("stat {}: {err}", e.path().display()),
        })
        .sum()
}

fn options(bound: u64) -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(64 << 10)
        .db_write_buffer_size(256 << 10)
        .max_total_wal_size(bound)
}

/// Writes 8 MiB to the default column family after one write to `rare`; returns the WAL
/// bytes left on disk once background work has settled (or after 20 s).
fn run(dir: &Path, bound: u64) -> u64 {
    let db = Db::open(dir, options(bound)).unwrap();
    let rare = db.create_cf("rare").unwrap();
    db.put_cf(&rare, b"only", b"once").unwrap();
    let value = vec![7u8; 1000];
    for i in 0..8192u32 {
        db.put(&i.to_be_bytes(), &value).unwrap();
    }
    // Give the background flushes up to 20 s to finish and delete what they free (no
    // `Db::flush`: it would flush `rare` too).
    let start = std::time::Instant::now();
    let mut left = wal_bytes(dir);
    while left >= 3 << 20 && start.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        left = wal_bytes(dir);
    }
    db.close().unwrap();
    left
}

#[test]
fn a_rarely_written_column_family_does_not_pin_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let left = run(dir.path(), 1 << 20);
    assert!(
        left < 3 << 20,
        "{left} bytes of WAL left after 8 MiB of writes with a 1 MiB bound"
    );
    // The rare write survived its early flush.
    let db = Db::open(dir.path(), options(1 << 20)).unwrap();
    let rare = db.cf("rare").expect("column family");
    assert_eq!(db.get_cf(&rare, b"only").unwrap(), Some(b"once".to_vec()));
    assert_eq!(
        db.get(&8191u32.to_be_bytes()).unwrap(),
        Some(vec![7u8; 1000])
    );
    db.close().unwrap();
}
