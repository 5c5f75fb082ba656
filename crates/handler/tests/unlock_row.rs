//! `Session::unlock_row` (InnoDB's `unlock_row`): under READ COMMITTED a row a locking read
//! returned and the statement did not want is unlocked again, its secondary index entry too,
//! but only when the lock was taken by this statement (since the given savepoint depth) and
//! the row was not written; under REPEATABLE READ nothing is released.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::time::Duration;

use common::*;
use riptide::ErrorKind;
use riptide_handler::{HandlerEngine, Isolation, RowLock, Session, SessionOptions, Table};

fn session(engine: &HandlerEngine, isolation: Isolation) -> Session {
    engine
        .begin_session(SessionOptions {
            isolation,
            lock_timeout: Duration::from_millis(100),
            ..SessionOptions::default()
        })
        .unwrap()
}

/// Whether another session can lock row `pk` at once (it then lets go of it again).
fn lockable(engine: &HandlerEngine, t: &Table, pk: u8) -> bool {
    let mut other = session(engine, Isolation::ReadCommitted);
    let outcome = other.get_row(t, &[pk], RowLock::Exclusive);
    other.rollback().unwrap();
    match outcome {
        Ok(_) => true,
        Err(e) if e.kind() == Some(ErrorKind::TimedOut) => false,
        Err(e) => panic!("{e}"),
    }
}

fn setup(engine: &HandlerEngine) -> std::sync::Arc<Table> {
    let t = engine
        .create_table(b"t", &[primary(), secondary("v", false)], 1)
        .unwrap();
    let mut s = session(engine, Isolation::RepeatableRead);
    for pk in 1u8..=5 {
        s.insert(&t, &[pk], &[k(&[pk * 10])], b"row").unwrap();
    }
    s.commit().unwrap();
    t
}

#[test]
fn read_committed_releases_what_the_statement_locked() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = setup(&engine);
    let mut s = session(&engine, Isolation::ReadCommitted);
    // Before the statement: a lock, and a written row.
    s.get_row(&t, &[1], RowLock::Exclusive).unwrap();
    s.update(&t, &[2], &[k(&[20])], &[2], &[k(&[20])], b"new", None)
        .unwrap();
    s.begin_statement().unwrap();
    for pk in [1u8, 2, 3] {
        s.get_row(&t, &[pk], RowLock::Exclusive).unwrap();
    }
    s.update(&t, &[4], &[k(&[40])], &[4], &[k(&[40])], b"new", None)
        .unwrap();
    assert!(!lockable(&engine, &t, 3));
    // Taken by this statement, not written: released.
    assert_eq!(s.unlock_row(&t, 0, None, &[3]).unwrap(), 1);
    assert!(lockable(&engine, &t, 3));
    // Held before the statement, written before it, written by it: kept.
    for pk in [1u8, 2, 4] {
        assert_eq!(s.unlock_row(&t, 0, None, &[pk]).unwrap(), 0, "{pk}");
        assert!(!lockable(&engine, &t, pk), "{pk}");
    }
    // With no statement open (autocommit: the transaction is the statement): any lock not
    // written.
    s.end_statement(true).unwrap();
    assert_eq!(s.unlock_row(&t, 0, None, &[1]).unwrap(), 1);
    assert!(lockable(&engine, &t, 1));
    s.rollback().unwrap();
    drop((s, t));
    close(db, engine);
}

#[test]
fn read_committed_releases_the_secondary_entry_too() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = setup(&engine);
    let s = session(&engine, Isolation::ReadCommitted);
    let before = db.lock_statistics().locked_keys;
    let mut it = s.iter_locking(&t, 1, RowLock::Exclusive).unwrap();
    it.seek_to_first().unwrap();
    let entry = it.key().to_vec();
    let (_, pk) = riptide_handler::decode_secondary_entry(&entry).unwrap();
    let pk = pk.to_vec();
    assert_eq!(pk, vec![1]);
    s.get_row(&t, &pk, RowLock::Exclusive).unwrap();
    drop(it);
    assert_eq!(db.lock_statistics().locked_keys, before + 2);
    // Not an entry of index 1.
    let err = s
        .unlock_row(&t, 1, Some(&[0xff, 0xff, 0xff, 0xff, 1]), &pk)
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidArgument), "{err}");
    assert_eq!(s.unlock_row(&t, 1, Some(&entry), &pk).unwrap(), 2);
    assert_eq!(db.lock_statistics().locked_keys, before);
    assert!(lockable(&engine, &t, 1));
    drop((s, t));
    close(db, engine);
}

#[test]
fn repeatable_read_keeps_every_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = setup(&engine);
    for isolation in [Isolation::RepeatableRead, Isolation::Serializable] {
        let mut s = session(&engine, isolation);
        s.get_row(&t, &[3], RowLock::Exclusive).unwrap();
        assert_eq!(s.unlock_row(&t, 0, None, &[3]).unwrap(), 0);
        assert!(!lockable(&engine, &t, 3), "{isolation:?}");
        s.rollback().unwrap();
    }
    drop(t);
    close(db, engine);
}
