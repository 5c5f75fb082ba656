//! Fault injection: reads that return corrupted bytes (the file itself is intact).
//!
//! A point read or a scan that meets one fails with a `Corruption` error naming the table
//! file and the block offset, never a panic and never a wrong answer; nothing bad is cached,
//! so the next read succeeds. A compaction that meets one fails, the database turns
//! read-only, and a reopen finds every write. One during WAL replay at open is not taken
//! for a torn tail: the open fails naming the segment and offset, truncating nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod fault_common;

use std::path::Path;

use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{Db, ErrorKind, Options, ReadOptions};

use fault_common::key;

fn options(fs: &FaultFs) -> Options {
    fault_common::options(fs, 16 << 10)
        .l0_compaction_trigger(1000)
        .l0_slowdown_trigger(1000)
        .l0_stop_trigger(1000)
}

fn value(i: u32) -> Vec<u8> {
    fault_common::value(i, 'r', 50)
}

const KEYS: u32 = 2000;

/// A database of `KEYS` keys in tables only, reopened so that its block cache is cold.
fn populated(fs: &FaultFs, dir: &Path) -> Db {
    let db = Db::open(dir, options(fs)).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    Db::open(dir, options(fs)).unwrap()
}

fn assert_names_a_table_block(e: &riptide::Error) {
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("table /db/"), "{msg}");
    assert!(msg.contains(".sst"), "{msg}");
    assert!(msg.contains("block at offset"), "{msg}");
}

/// A compaction reads data blocks and, when it opens what it wrote, footers: which of the
/// reads the fault hits depends on the background threads' timing, so the error names a
/// block or the footer, always with the table file and the offset.
fn assert_names_a_table_offset(e: &riptide::Error) {
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("table /db/"), "{msg}");
    assert!(msg.contains(".sst"), "{msg}");
    assert!(
        msg.contains("block at offset") || msg.contains("footer near offset"),
        "{msg}"
    );
}

#[test]
fn a_corrupted_read_is_a_checksum_error_naming_the_table() {
    let dir = Path::new("/db");
    let fs = FaultFs::new(5);
    let db = populated(&fs, dir);

    fs.add_rule(
        FaultRule::new(FsOp::Read, Fault::CorruptRead)
            .on_files_ending_with(".sst")
            .times(1),
    );
    let e = db.get(&key(1234)).unwrap_err();
    assert_names_a_table_block(&e);
    assert_eq!(fs.injected_faults(), 1);
    // The damage was in transit: nothing was cached, the same read now succeeds, and the
    // database is still writable (a read error is the reader's, not the database's).
    assert_eq!(db.get(&key(1234)).unwrap(), Some(value(1234)));
    db.put(b"still", b"writable").unwrap();

    // A scan meets one too: an error from a positioning call, not a short or wrong scan.
    fs.add_rule(
        FaultRule::new(FsOp::Read, Fault::CorruptRead)
            .on_files_ending_with(".sst")
            .after(3)
            .times(1),
    );
    let mut it = db.iter(ReadOptions::default()).unwrap();
    let mut seen = 0u32;
    let err = match it.seek_to_first() {
        Err(e) => Some(e),
        Ok(()) => loop {
            if !it.valid() {
                break None;
            }
            assert_eq!(it.key(), key(seen).as_slice(), "scan out of step");
            assert_eq!(it.value(), value(seen).as_slice());
            seen += 1;
            if let Err(e) = it.next() {
                break Some(e);
            }
        },
    };
    let e = err.expect("the corrupted read went unnoticed");
    assert_names_a_table_block(&e);
    assert!(seen < KEYS, "{seen}");
    drop(it);
    db.close().unwrap();
}

#[test]
fn a_corrupted_read_in_a_compaction_makes_the_database_read_only() {
    let dir = Path::new("/db");
    let fs = FaultFs::new(6);
    let db = populated(&fs, dir);
    fs.add_rule(
        FaultRule::new(FsOp::Read, Fault::CorruptRead)
            .on_files_ending_with(".sst")
            .after(10)
            .times(1),
    );
    let e = db.compact_range(&db.default_cf(), None).unwrap_err();
    assert_names_a_table_offset(&e);
    let e = db.put(b"refused", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
    // Reads go on.
    for i in (0..KEYS).step_by(7) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    let fs = fs.crash();
    drop(db);
    let db = Db::open(dir, options(&fs)).unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    for i in 0..KEYS {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert_eq!(db.get(b"refused").unwrap(), None);
    db.close().unwrap();
}

/// A corrupted read of the last WAL record while the open replays the log. The record
/// then looks like a torn tail, but the bytes on disk are fine: recovery must re-read
/// before it truncates, fail the open naming the segment and the offset, and leave the
/// record for the next open. (Without the re-read, the acknowledged record was cut off.)
#[test]
fn a_corrupted_read_of_the_last_wal_record_at_open_loses_nothing() {
    let dir = Path::new("/db");
    let big = vec![b'b'; 32 << 10];
    let mut refused = 0;
    for seed in 0..8 {
        let fs = FaultFs::new(seed);
        // A large write buffer: both records stay in the WAL (no flush, no rotation). No
        // zeros reserved ahead of the records, so the segment ends with the last record (a
        // flip in reserved zeros is cut off with them; tests in crates/wal cover those).
        let opts = |fs: &FaultFs| fault_common::options(fs, 1 << 20).wal_preallocate_bytes(0);
        let db = Db::open(dir, opts(&fs)).unwrap();
        db.put(b"first", b"small").unwrap();
        // The last record is nearly all of the segment, so the flipped byte lands in it
        // for most seeds.
        db.put(b"last", &big).unwrap();
        let fs = fs.crash();
        drop(db);

        fs.add_rule(
            FaultRule::new(FsOp::Read, Fault::CorruptRead)
                .on_files_ending_with(".log")
                .times(1),
        );
        match Db::open(dir, opts(&fs)) {
            Ok(db) => {
                // Only if the flip hit something that is not cut off as a torn tail.
                assert_eq!(
                    db.get(b"last").unwrap().as_deref(),
                    Some(&big[..]),
                    "seed {seed}"
                );
                db.close().unwrap();
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("/db/000"), "seed {seed}: {msg}");
                assert!(msg.contains(".log"), "seed {seed}: {msg}");
                if msg.contains("not confirmed") {
                    assert_eq!(e.kind(), ErrorKind::Io, "seed {seed}: {msg}");
                    assert!(msg.contains("at offset "), "seed {seed}: {msg}");
                    refused += 1;
                }
            }
        }
        assert_eq!(fs.injected_faults(), 1, "seed {seed}");
        fs.clear_rules();
        let db = Db::open(dir, opts(&fs)).unwrap();
        assert_eq!(
            db.get(b"first").unwrap().as_deref(),
            Some(&b"small"[..]),
            "seed {seed}"
        );
        assert_eq!(
            db.get(b"last").unwrap().as_deref(),
            Some(&big[..]),
            "seed {seed}"
        );
        db.close().unwrap();
    }
    assert!(
        refused >= 4,
        "the flip hit the last record in only {refused} of 8 seeds"
    );
}
