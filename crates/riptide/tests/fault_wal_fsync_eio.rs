//! Fault injection: `EIO` from the fsync of a WAL segment.
//!
//! The write whose fsync failed returns an I/O error naming the segment; the database turns
//! read-only (every later write fails with `Closed` saying what failed), reads go on, and
//! after a simulated power loss (`FaultFs::crash`) and a reopen every acknowledged write is
//! there. The failed write may or may not be; the database accepts writes again.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod fault_common;

use std::path::Path;

use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{Db, ErrorKind, Options};

use fault_common::key;

fn options(fs: &FaultFs) -> Options {
    fault_common::options(fs, 16 << 10)
}

fn value(i: u32) -> Vec<u8> {
    fault_common::value(i, 'v', 40)
}

#[test]
fn eio_on_wal_fsync_fails_the_write_and_loses_nothing_acknowledged() {
    let dir = Path::new("/db");
    let fs = FaultFs::new(11);
    let db = Db::open(dir, options(&fs)).unwrap();
    // Enough to rotate the WAL and flush a few memtables first.
    for i in 0..1000 {
        db.put(&key(i), &value(i)).unwrap();
    }
    fs.add_rule(
        FaultRule::new(FsOp::Sync, Fault::Eio)
            .on_files_ending_with(".log")
            .times(1),
    );
    let e = db.put(&key(1000), &value(1000)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("fdatasync WAL segment /db/"), "{msg}");
    assert!(msg.contains(".log"), "{msg}");
    assert!(msg.contains("injected EIO"), "{msg}");
    assert_eq!(fs.injected_faults(), 1);

    // Read-only from now on, with the reason; no more fsync faults are armed, so a later
    // write that went through would be a bug.
    for i in 1001..1005 {
        let e = db.put(&key(i), &value(i)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
        let msg = e.to_string();
        assert!(msg.contains("read-only"), "{msg}");
        assert!(msg.contains("fdatasync WAL segment"), "{msg}");
    }
    let e = db.flush().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e}");

    // Reads keep working, and the failed write is not visible.
    for i in 0..1000 {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    assert_eq!(db.get(&key(1000)).unwrap(), None);

    let fs = fs.crash();
    drop(db);
    let db = Db::open(dir, options(&fs)).unwrap();
    for i in 0..1000 {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i)),
            "key {i} after crash"
        );
    }
    // The failed write may or may not have reached the disk; the refused ones did not.
    let failed = db.get(&key(1000)).unwrap();
    assert!(
        failed.is_none() || failed == Some(value(1000)),
        "{failed:?}"
    );
    for i in 1001..1005 {
        assert_eq!(db.get(&key(i)).unwrap(), None, "refused key {i}");
    }
    db.put(b"after", b"reopen").unwrap();
    db.close().unwrap();
    let db = Db::open(dir, options(&fs)).unwrap();
    assert_eq!(db.get(b"after").unwrap(), Some(b"reopen".to_vec()));
    db.close().unwrap();
}
