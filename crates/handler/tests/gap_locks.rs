//! Locking scans of a session (`Session::iter_locking`) gap-lock what they walk under
//! REPEATABLE READ and SERIALIZABLE: another session's insert of a new primary key or of a
//! secondary entry into that range waits and times out, and nothing of the failed insert is
//! left; under READ COMMITTED nothing waits. Inserts outside the walked range do not wait.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::time::Duration;

use common::*;
use riptide::ErrorKind;
use riptide_handler::{Isolation, RowLock, Session, SessionOptions, Table};

fn session(engine: &riptide_handler::HandlerEngine, isolation: Isolation) -> Session {
    engine
        .begin_session(SessionOptions {
            isolation,
            lock_timeout: Duration::from_millis(150),
            ..SessionOptions::default()
        })
        .unwrap()
}

/// Walks index `n` of `t` from its start through the entry for which `stop` holds.
fn scan_until(s: &Session, t: &Table, n: usize, stop: impl Fn(&[u8]) -> bool) {
    let mut it = s.iter_locking(t, n, RowLock::Shared).unwrap();
    it.seek_to_first().unwrap();
    while it.valid() && !stop(it.key()) {
        it.next().unwrap();
    }
    assert!(it.valid(), "the scan ran off the end");
}

#[test]
fn inserts_into_a_scanned_range_wait() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("v", false)], 1)
        .unwrap();
    let mut setup = session(&engine, Isolation::RepeatableRead);
    for (pk, v) in [(10u8, 1u8), (20, 2), (30, 3)] {
        setup.insert(&t, &[pk], &[k(&[v])], b"row").unwrap();
    }
    setup.commit().unwrap();

    for isolation in [Isolation::RepeatableRead, Isolation::Serializable] {
        let mut scanner = session(&engine, isolation);
        // Primary key up to 20 (primary keys end with the pk byte), secondary up to v = 2
        // (entries end with key, pk and the pk's 2-byte length).
        scan_until(&scanner, &t, 0, |key| key.last() == Some(&20));
        scan_until(&scanner, &t, 1, |key| key.ends_with(&[2, 20, 0, 1]));
        let mut other = session(&engine, isolation);
        let err = other.insert(&t, &[15], &[k(&[9])], b"new").unwrap_err();
        assert_eq!(err.kind(), Some(ErrorKind::TimedOut), "{err}");
        // Nothing of the failed insert stays behind (the primary key went in first).
        assert_eq!(other.get_row(&t, &[15], RowLock::None).unwrap(), None);
        // A new pk past the walked range, but a secondary key inside the walked range.
        let err = other.insert(&t, &[40], &[k(&[1])], b"new").unwrap_err();
        assert_eq!(err.kind(), Some(ErrorKind::TimedOut), "{err}");
        // Past both walked ranges: no wait.
        other.insert(&t, &[41], &[k(&[7])], b"new").unwrap();
        other.rollback().unwrap();
        scanner.commit().unwrap();
    }

    // READ COMMITTED: no gap locks.
    let mut scanner = session(&engine, Isolation::ReadCommitted);
    scan_until(&scanner, &t, 0, |key| key.last() == Some(&20));
    let mut other = session(&engine, Isolation::ReadCommitted);
    other.insert(&t, &[15], &[k(&[1])], b"new").unwrap();
    other.commit().unwrap();
    scanner.commit().unwrap();
    assert_eq!(db.lock_statistics().gap_locks, 0);
    drop((scanner, other, setup, t));
    close(db, engine);
}
