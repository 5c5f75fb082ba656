//! Fault injection: short writes (part of the data written, then `ENOSPC`).
//!
//! A short WAL append fails that write and leaves a torn record at the end of the segment
//! (or, with space reserved ahead of the records, a torn record or torn reservation followed
//! by zeros); reopening (with or without a crash) cuts the torn tail and keeps every
//! acknowledged write, and the failed one is gone (a strict prefix of a record never passes
//! its checksum). A short write of a new segment's header (the WAL rotating) fails the
//! rotation, and reopening ignores the torn segment. A short table write fails the flush;
//! nothing acknowledged is lost.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod fault_common;

use std::path::Path;
use std::time::{Duration, Instant};

use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{Db, ErrorKind, Options};

use fault_common::key;

fn options(fs: &FaultFs) -> Options {
    fault_common::options(fs, 8 << 10)
}

fn value(i: u32) -> Vec<u8> {
    fault_common::value(i, 'w', 50)
}

/// Ends `db` after a WAL fault, by a crash that drops everything not fsynced or by a close
/// (which reports the earlier failure; the torn bytes stay in the file), reopens it with
/// `opts` (on the file system left) and checks keys `0..acked` all kept their values.
fn reopen_after_wal_fault(
    db: Db,
    fs: FaultFs,
    crash: bool,
    acked: u32,
    seed: u64,
    opts: Options,
) -> (Db, FaultFs) {
    let dir = Path::new("/db");
    let fs = if crash {
        let after = fs.crash();
        drop(db);
        after
    } else {
        assert!(db.close().is_err());
        fs
    };
    let db = Db::open(dir, opts.file_system(fs.as_dyn())).unwrap();
    for i in 0..acked {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i)),
            "seed {seed} key {i}"
        );
    }
    (db, fs)
}

/// How the short write of [`a_short_wal_append_is_cut_off_at_reopen`] lands.
#[derive(Debug, Clone, Copy)]
enum ShortWal {
    /// Records are appended (no space reserved): the record's append is cut short.
    Append,
    /// Records go into zeros reserved ahead of them: the reservation is cut short.
    Reservation,
    /// Records go into zeros reserved ahead of them: the record written over them is cut
    /// short (part of a record, then zeros).
    RecordInReservation,
}

#[test]
fn a_short_wal_append_is_cut_off_at_reopen() {
    let cases = [(1u64, false), (2, true), (3, false), (4, true)];
    for how in [
        ShortWal::Append,
        ShortWal::Reservation,
        ShortWal::RecordInReservation,
    ] {
        for (seed, crash) in cases {
            let dir = Path::new("/db");
            let fs = FaultFs::new(seed);
            let opts = match how {
                ShortWal::Append => options(&fs).wal_preallocate_bytes(0),
                ShortWal::Reservation | ShortWal::RecordInReservation => options(&fs),
            };
            let db = Db::open(dir, opts.clone()).unwrap();
            for i in 0..300 {
                db.put(&key(i), &value(i)).unwrap();
            }
            // A fresh memtable in a fresh segment: the next put appends a record and cannot
            // rotate the WAL (which would tear the new segment's header instead, the case
            // of the next test). With reserved space, its first write reserves the zeros.
            db.flush().unwrap();
            if let ShortWal::RecordInReservation = how {
                // This put reserves the segment's first zeros (written a page at a time), so
                // the next one only writes its record over them.
                db.put(&key(299), &value(299)).unwrap();
            }
            fs.add_rule(
                FaultRule::new(FsOp::Append, Fault::ShortWrite)
                    .on_files_ending_with(".log")
                    .times(1),
            );
            let expected = match how {
                ShortWal::Append | ShortWal::RecordInReservation => "record at offset",
                ShortWal::Reservation => "bytes of zeros at offset 32",
            };
            let e = db.put(&key(300), &value(300)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Io, "{how:?} {e}");
            let msg = e.to_string();
            assert!(msg.contains(expected), "{how:?} {msg}");
            assert!(msg.contains("short write"), "{how:?} {msg}");
            assert_eq!(
                db.put(&key(301), &value(301)).unwrap_err().kind(),
                ErrorKind::Closed
            );
            let (db, _fs) = reopen_after_wal_fault(db, fs, crash, 300, seed, opts);
            assert_eq!(
                db.get(&key(300)).unwrap(),
                None,
                "{how:?} seed {seed}: torn write"
            );
            assert_eq!(
                db.get(&key(301)).unwrap(),
                None,
                "{how:?} seed {seed}: refused write"
            );
            db.put(&key(300), b"again").unwrap();
            db.close().unwrap();
        }
    }
}

#[test]
fn a_short_segment_header_fails_the_rotation_and_reopen_ignores_it() {
    for (seed, crash) in [(5u64, false), (6, true)] {
        let dir = Path::new("/db");
        let fs = FaultFs::new(seed);
        let db = Db::open(dir, options(&fs)).unwrap();
        for i in 0..50 {
            db.put(&key(i), &value(i)).unwrap();
        }
        fs.add_rule(
            FaultRule::new(FsOp::Append, Fault::ShortWrite)
                .on_files_ending_with(".log")
                .times(1),
        );
        // The flush rotates the WAL: the new segment's header is the next append.
        let e = db.flush().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
        let msg = e.to_string();
        assert!(msg.contains("write header of WAL segment /db/"), "{msg}");
        assert!(msg.contains("short write"), "{msg}");
        assert_eq!(
            db.put(&key(50), &value(50)).unwrap_err().kind(),
            ErrorKind::Closed
        );
        let opts = options(&fs);
        let (db, fs) = reopen_after_wal_fault(db, fs, crash, 50, seed, opts);
        assert_eq!(
            db.get(&key(50)).unwrap(),
            None,
            "seed {seed}: refused write"
        );
        db.put(&key(50), b"again").unwrap();
        db.close().unwrap();
        let db = Db::open(dir, options(&fs)).unwrap();
        assert_eq!(db.get(&key(50)).unwrap(), Some(b"again".to_vec()));
        db.close().unwrap();
    }
}

#[test]
fn a_short_table_write_fails_the_flush_and_loses_nothing() {
    let dir = Path::new("/db");
    let fs = FaultFs::new(9);
    let db = Db::open(dir, options(&fs)).unwrap();
    fs.add_rule(
        FaultRule::new(FsOp::Append, Fault::ShortWrite)
            .on_files_ending_with(".sst")
            .after(5)
            .times(1),
    );
    let mut acked = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    let refusal = loop {
        match db.put(&key(acked), &value(acked)) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        assert!(Instant::now() < deadline, "no write was refused");
    };
    assert_eq!(refusal.kind(), ErrorKind::Closed, "{refusal}");
    let msg = refusal.to_string();
    assert!(msg.contains("flush"), "{msg}");
    assert!(msg.contains("write table /db/"), "{msg}");
    assert!(msg.contains("short write"), "{msg}");
    for i in 0..acked {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    let fs = fs.crash();
    drop(db);
    let db = Db::open(dir, options(&fs)).unwrap();
    for i in 0..acked {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i)),
            "key {i} after crash"
        );
    }
    assert_eq!(db.get(&key(acked)).unwrap(), None);
    db.close().unwrap();
}
