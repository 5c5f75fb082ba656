//! A session's lock waits: interrupted from another thread (`KILL QUERY`) promptly, with
//! the session keeping its locks and going on once re-armed; limited per statement with
//! `set_lock_timeout` (`NOWAIT`, `WAIT n`); and `SKIP LOCKED` reads through a secondary
//! index and by primary key that step over rows other sessions hold.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::*;
use riptide::{ErrorKind, LockedRead};
use riptide_handler::{HandlerEngine, Isolation, RowLock, Session, SessionOptions, Table};

const LONG: Duration = Duration::from_secs(60);
const PROMPT: Duration = Duration::from_millis(500);

fn session(engine: &HandlerEngine) -> Session {
    engine
        .begin_session(SessionOptions {
            lock_timeout: LONG,
            ..SessionOptions::default()
        })
        .unwrap()
}

/// A table `t` (primary key, secondary index `s`) with rows 1..=4, secondary key = pk.
fn table(engine: &HandlerEngine) -> std::sync::Arc<Table> {
    let t = engine
        .create_table(b"./db/t", &[primary(), secondary("s", false)], 0)
        .unwrap();
    let mut s = session(engine);
    for pk in [b"1", b"2", b"3", b"4"] {
        s.insert(&t, pk, &[k(pk)], b"row").unwrap();
    }
    s.commit().unwrap();
    t
}

#[test]
fn a_waiting_session_is_interrupted_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table(&engine);
    let holder = session(&engine);
    holder.get_row(&t, b"2", RowLock::Exclusive).unwrap();
    let waiter = session(&engine);
    waiter.get_row(&t, b"1", RowLock::Exclusive).unwrap();
    let handle = waiter.interrupt_handle();
    let waits = db.lock_statistics().waits;
    let (r, took) = thread::scope(|s| {
        let w = s.spawn(|| {
            let r = waiter.get_row(&t, b"2", RowLock::Exclusive);
            (r, Instant::now())
        });
        while db.lock_statistics().waits == waits {
            thread::sleep(Duration::from_millis(1));
        }
        let fired = Instant::now();
        handle.interrupt();
        let (r, at) = w.join().unwrap();
        (r, at.saturating_duration_since(fired))
    });
    let err = r.unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::Interrupted), "{err}");
    assert!(took < PROMPT, "returned {took:?} after the interrupt");
    assert!(waiter.is_interrupted());
    // It keeps its lock on row 1.
    let probe = session(&engine);
    probe.set_lock_timeout(Duration::ZERO);
    let e = probe.get_row(&t, b"1", RowLock::Shared).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TimedOut), "{e}");
    // Re-armed at the next statement, it waits normally and gets the row.
    waiter.clear_interrupt();
    thread::scope(|s| {
        let w = s.spawn(|| waiter.get_row(&t, b"2", RowLock::Exclusive));
        thread::sleep(Duration::from_millis(20));
        drop(holder);
        assert_eq!(w.join().unwrap().unwrap(), Some(b"row".to_vec()));
    });
    drop((waiter, probe, t));
    close(db, engine);
}

#[test]
fn nowait_and_wait_n_apply_to_one_statement() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table(&engine);
    let holder = session(&engine);
    holder.get_row(&t, b"2", RowLock::Exclusive).unwrap();
    holder.lock_value(&t, 1, b"v").unwrap();
    let s = session(&engine);
    assert_eq!(s.lock_timeout(), LONG);
    // SELECT ... FOR UPDATE NOWAIT
    s.set_lock_timeout(Duration::ZERO);
    let started = Instant::now();
    for r in [
        s.get_row(&t, b"2", RowLock::Exclusive).map(|_| ()),
        s.lock_value(&t, 1, b"v"),
    ] {
        assert_eq!(r.unwrap_err().kind(), Some(ErrorKind::TimedOut));
    }
    let mut it = s.iter_locking(&t, 0, RowLock::Exclusive).unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.next().unwrap_err().kind(), ErrorKind::TimedOut);
    drop(it);
    assert!(started.elapsed() < Duration::from_secs(5));
    // ... WAIT 1 (here 100 ms)
    s.set_lock_timeout(Duration::from_millis(100));
    let started = Instant::now();
    let e = s.get_row(&t, b"2", RowLock::Shared).unwrap_err();
    assert_eq!(e.kind(), Some(ErrorKind::TimedOut));
    assert!(started.elapsed() >= Duration::from_millis(100));
    drop((holder, s, t));
    close(db, engine);
}

/// Reads every row of `t` the way the MariaDB handler does for `SELECT ... FOR UPDATE SKIP
/// LOCKED` through index `n`: a skip-locked scan of the index, then the row by primary key
/// without waiting.
fn skip_locked_rows(s: &Session, t: &Table, n: usize) -> Vec<Vec<u8>> {
    let mut it = s.iter_skip_locked(t, n, RowLock::Exclusive).unwrap();
    it.seek_to_first().unwrap();
    let mut pks = Vec::new();
    while it.valid() {
        let pk = if n == 0 {
            it.key()[4..].to_vec()
        } else {
            riptide_handler::decode_secondary_entry(it.key())
                .unwrap()
                .1
                .to_vec()
        };
        match s.get_row_skip_locked(t, &pk, RowLock::Exclusive).unwrap() {
            LockedRead::Value(Some(_)) => pks.push(pk),
            LockedRead::Value(None) => panic!("entry without a row"),
            LockedRead::LockedByOther => {}
        }
        it.next().unwrap();
    }
    pks
}

#[test]
fn skip_locked_reads_step_over_rows_other_sessions_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table(&engine);
    // Another session holds row 2 (by primary key only: its index entry is free).
    let holder = session(&engine);
    holder.get_row(&t, b"2", RowLock::Exclusive).unwrap();
    // ... and has an uncommitted insert of row 5.
    let mut writer = session(&engine);
    writer.insert(&t, b"5", &[k(b"5")], b"row").unwrap();

    let started = Instant::now();
    let s = session(&engine);
    let rows = skip_locked_rows(&s, &t, 1);
    assert_eq!(rows, vec![b"1".to_vec(), b"3".to_vec(), b"4".to_vec()]);
    drop(s);
    let s = session(&engine);
    assert_eq!(
        skip_locked_rows(&s, &t, 0),
        vec![b"1".to_vec(), b"3".to_vec(), b"4".to_vec()]
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(db.lock_statistics().waits, 0, "nothing waited");
    // A shared read of a row the holder holds exclusively is skipped too.
    assert_eq!(
        s.get_row_skip_locked(&t, b"2", RowLock::Shared).unwrap(),
        LockedRead::LockedByOther
    );
    // A plain read is not a locking read at all.
    assert_eq!(
        s.get_row_skip_locked(&t, b"2", RowLock::None).unwrap(),
        LockedRead::Value(Some(b"row".to_vec()))
    );
    drop(s);
    writer.commit().unwrap();
    drop(holder);
    let s = engine
        .begin_session(SessionOptions {
            isolation: Isolation::ReadCommitted,
            ..SessionOptions::default()
        })
        .unwrap();
    assert_eq!(skip_locked_rows(&s, &t, 1).len(), 5);
    drop((s, writer, t));
    close(db, engine);
}
