//! Damaged files give the documented error (or, for a torn WAL tail, a clean recovery of a
//! prefix), never a panic and never wrong data.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::fs;
use std::path::{Path, PathBuf};

use riptide::{Db, ErrorKind, Options, ReadOptions, RecoveryMode, SyncMode};

fn options() -> Options {
    Options::default().sync_mode(SyncMode::Full)
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 50) as usize)).into_bytes()
}

fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// Writes `n` keys, leaving them in the WAL only (no flush).
fn db_with_wal_only(n: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.close().unwrap();
    dir
}

/// Writes `n` keys and flushes them into a table.
fn db_with_table(n: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    dir
}

/// Opens and reads everything; returns the keys read, or the first error.
fn open_and_read_all(dir: &Path, opts: Options) -> riptide::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let db = Db::open(dir, opts)?;
    let mut it = db.iter(ReadOptions::default())?;
    it.seek_to_first()?;
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next()?;
    }
    for i in 0..out.len() as u32 {
        db.get(&key(i))?;
    }
    Ok(out)
}

fn assert_prefix(entries: &[(Vec<u8>, Vec<u8>)], max: u32) {
    assert!(entries.len() as u32 <= max);
    for (i, (k, v)) in entries.iter().enumerate() {
        assert_eq!(k, &key(i as u32));
        assert_eq!(
            v,
            &value(i as u32),
            "value of {:?} is wrong",
            String::from_utf8_lossy(k)
        );
    }
}

/// The largest of `files` (the WAL segment holding the writes).
fn largest(files: &[PathBuf]) -> &PathBuf {
    files
        .iter()
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap()
}

/// A copy of a database directory, to damage without touching the original.
fn copy_dir(dir: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        fs::copy(&p, copy.path().join(p.file_name().unwrap())).unwrap();
    }
    copy
}

fn flip(path: &Path, offset: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset] ^= 0x5A;
    fs::write(path, bytes).unwrap();
}

#[test]
fn flipped_byte_in_the_middle_of_the_wal_is_corruption_naming_file_and_offset() {
    let dir = db_with_wal_only(200);
    let wal = files_with_ext(dir.path(), "log");
    let target = largest(&wal);
    let len = fs::metadata(target).unwrap().len() as usize;
    flip(target, len / 2);
    let err = open_and_read_all(dir.path(), options()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    let msg = err.to_string();
    let name = target.file_name().unwrap().to_str().unwrap();
    assert!(msg.contains(name), "error does not name the file: {msg}");
    assert!(
        msg.contains("offset"),
        "error does not give the offset: {msg}"
    );
}

#[test]
fn torn_wal_tail_recovers_a_prefix_cleanly() {
    let dir = db_with_wal_only(100);
    let wal = files_with_ext(dir.path(), "log");
    let target = largest(&wal);
    let len = fs::metadata(target).unwrap().len();
    let f = fs::OpenOptions::new().write(true).open(target).unwrap();
    f.set_len(len - 7).unwrap();
    drop(f);
    let entries = open_and_read_all(dir.path(), options()).unwrap();
    assert_eq!(entries.len(), 99, "exactly the torn last write is lost");
    assert_prefix(&entries, 100);
    // And the database keeps working and reopens cleanly.
    let entries = open_and_read_all(dir.path(), options()).unwrap();
    assert_eq!(entries.len(), 99);
}

#[test]
fn torn_wal_tail_is_an_error_under_absolute_consistency() {
    let dir = db_with_wal_only(20);
    let wal = files_with_ext(dir.path(), "log");
    let target = largest(&wal);
    let len = fs::metadata(target).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(target)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    let err = open_and_read_all(
        dir.path(),
        options().recovery_mode(RecoveryMode::AbsoluteConsistency),
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
}

#[test]
fn every_wal_truncation_recovers_a_prefix() {
    let dir = db_with_wal_only(30);
    let wal = files_with_ext(dir.path(), "log");
    let target = largest(&wal).clone();
    let original = fs::read(&target).unwrap();
    let mut last = usize::MAX;
    for cut in (0..original.len()).rev().step_by(13) {
        let copy = copy_dir(dir.path());
        let t = copy.path().join(target.file_name().unwrap());
        fs::write(&t, &original[..cut]).unwrap();
        match open_and_read_all(copy.path(), options()) {
            Ok(entries) => {
                assert_prefix(&entries, 30);
                assert!(entries.len() <= last, "a shorter log recovered more");
                last = entries.len();
            }
            // Cutting into the segment header leaves no way to know the file: refused.
            Err(e) => assert_eq!(e.kind(), ErrorKind::Corruption, "cut at {cut}: {e}"),
        }
    }
}

#[test]
fn flipped_bytes_in_a_table_never_panic_and_never_return_wrong_data() {
    let dir = db_with_table(300);
    let tables = files_with_ext(dir.path(), "sst");
    assert_eq!(tables.len(), 1);
    let table = &tables[0];
    let original = fs::read(table).unwrap();
    let mut errors = 0;
    for offset in (0..original.len()).step_by(17) {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x21;
        fs::write(table, &bytes).unwrap();
        match open_and_read_all(dir.path(), options()) {
            Ok(entries) => {
                // Only possible if the byte is not covered by a checksum; data must be intact.
                assert_eq!(entries.len(), 300, "flip at {offset} silently lost data");
                assert_prefix(&entries, 300);
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Corruption, "flip at {offset}: {e}");
                let name = table.file_name().unwrap().to_str().unwrap();
                assert!(e.to_string().contains(name), "flip at {offset}: {e}");
                errors += 1;
            }
        }
    }
    fs::write(table, &original).unwrap();
    assert!(errors > 0);
    assert_eq!(open_and_read_all(dir.path(), options()).unwrap().len(), 300);
}

#[test]
fn truncated_table_is_corruption() {
    let dir = db_with_table(300);
    let table = files_with_ext(dir.path(), "sst").remove(0);
    let len = fs::metadata(&table).unwrap().len();
    for cut in [0, 1, 20, len / 2, len - 1] {
        let copy = copy_dir(dir.path());
        let t = copy.path().join(table.file_name().unwrap());
        fs::OpenOptions::new()
            .write(true)
            .open(&t)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let err = open_and_read_all(copy.path(), options()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "cut at {cut}: {err}");
    }
}

#[test]
fn missing_table_is_reported_by_name() {
    let dir = db_with_table(50);
    let table = files_with_ext(dir.path(), "sst").remove(0);
    fs::remove_file(&table).unwrap();
    let err = open_and_read_all(dir.path(), options()).unwrap_err();
    let name = table.file_name().unwrap().to_str().unwrap();
    assert!(err.to_string().contains(name), "{err}");
}

#[test]
fn flipped_bytes_in_the_manifest_are_corruption() {
    let dir = db_with_table(50);
    let manifest = dir.path().join("MANIFEST");
    let original = fs::read(&manifest).unwrap();
    for offset in 0..original.len() {
        let mut bytes = original.clone();
        bytes[offset] ^= 0x01;
        fs::write(&manifest, &bytes).unwrap();
        let err = open_and_read_all(dir.path(), options()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "flip at {offset}: {err}");
        assert!(
            err.to_string().contains("MANIFEST"),
            "flip at {offset}: {err}"
        );
    }
    fs::write(&manifest, &original).unwrap();
    assert_eq!(open_and_read_all(dir.path(), options()).unwrap().len(), 50);
}

#[test]
fn truncated_manifest_is_corruption() {
    let dir = db_with_table(50);
    let manifest = dir.path().join("MANIFEST");
    let original = fs::read(&manifest).unwrap();
    for cut in 0..original.len() {
        fs::write(&manifest, &original[..cut]).unwrap();
        let err = open_and_read_all(dir.path(), options()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption, "cut at {cut}: {err}");
    }
}
