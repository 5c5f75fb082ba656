//! DDL respects prepared transactions (`XA PREPARE`, then a disconnect): while one holds a
//! write to a table, `HandlerEngine::wait_for_prepared` times out naming the table and the
//! xid (InnoDB: the DDL waits and fails with a lock wait timeout), whether the transaction
//! was prepared in this process or recovered after a reopen; once it is committed or
//! rolled back by xid the wait returns at once. Other tables and unknown ones never wait.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use riptide::{ErrorKind, Xid};
use riptide_handler::{HandlerEngine, SessionOptions};

/// Inserts row `pk` into `name` in a session prepared under `xid`, then drops the session
/// (the client disconnected): the transaction stays prepared.
fn prepare_insert(engine: &HandlerEngine, name: &[u8], pk: &[u8], xid: &Xid) {
    let t = engine.open_table(name).unwrap().unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, pk, &[k(pk)], b"row").unwrap();
    s.prepare(xid).unwrap();
}

fn assert_times_out(engine: &HandlerEngine, name: &[u8], xid: &Xid, timeout: Duration) {
    let started = Instant::now();
    let err = engine.wait_for_prepared(name, timeout).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::TimedOut), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&String::from_utf8_lossy(name).into_owned()),
        "{msg}"
    );
    assert!(msg.contains(&xid.to_string()), "{msg}");
    assert!(started.elapsed() >= timeout);
    assert!(started.elapsed() < timeout + Duration::from_secs(5));
}

#[test]
fn ddl_waits_for_a_prepared_transaction_until_it_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    for name in [b"./db/x", b"./db/y"] {
        engine
            .create_table(name, &[primary(), secondary("s", false)], 0)
            .unwrap();
    }
    let xid = Xid::new(1, b"xa-x", b"").unwrap();
    prepare_insert(&engine, b"./db/x", b"1", &xid);

    assert_times_out(&engine, b"./db/x", &xid, Duration::from_millis(100));
    // Zero: one look.
    assert_times_out(&engine, b"./db/x", &xid, Duration::ZERO);
    // Another table, or none at all, has nothing to wait for.
    engine.wait_for_prepared(b"./db/y", Duration::ZERO).unwrap();
    engine
        .wait_for_prepared(b"./db/missing", Duration::ZERO)
        .unwrap();

    // XA COMMIT: the wait returns at once, and the row is there.
    db.commit_prepared(&xid).unwrap();
    let started = Instant::now();
    engine
        .wait_for_prepared(b"./db/x", Duration::from_secs(30))
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let t = engine.open_table(b"./db/x").unwrap().unwrap();
    assert_eq!(index_entries(&engine, &t, 0).len(), 1);

    // XA ROLLBACK, while a waiter is waiting: it returns as soon as the rollback is done.
    let xid2 = Xid::new(1, b"xa-x2", b"").unwrap();
    prepare_insert(&engine, b"./db/x", b"2", &xid2);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| engine.wait_for_prepared(b"./db/x", Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(50));
        db.rollback_prepared(&xid2).unwrap();
        waiter.join().unwrap().unwrap();
    });
    // TRUNCATE may go ahead now.
    engine.truncate_table(b"./db/x").unwrap();
    drop(t);
    close(db, engine);
}

#[test]
fn a_recovered_prepared_transaction_makes_ddl_wait_too() {
    let dir = tempfile::tempdir().unwrap();
    let xid = Xid::new(7, b"xa-recovered", b"b").unwrap();
    {
        let (db, engine) = open(dir.path());
        engine
            .create_table(b"./db/x", &[primary(), secondary("s", false)], 0)
            .unwrap();
        prepare_insert(&engine, b"./db/x", b"1", &xid);
        close(db, engine);
    }
    let (db, engine) = open(dir.path());
    assert_eq!(db.prepared_transactions(), vec![xid.clone()]);
    assert_times_out(&engine, b"./db/x", &xid, Duration::from_millis(50));
    db.rollback_prepared(&xid).unwrap();
    engine.wait_for_prepared(b"./db/x", Duration::ZERO).unwrap();
    engine.drop_table(b"./db/x").unwrap();
    close(db, engine);
}
