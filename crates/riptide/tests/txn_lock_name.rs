#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `Transaction::lock_name`: a lock on a key nobody writes. Shared holders share it; an
//! exclusive request waits for them (up to the lock timeout) and keeps later shared ones
//! waiting until its transaction ends; a holder asking again is not blocked by itself; it
//! reads nothing, so a name "changed since the snapshot" cannot exist; optimistic
//! transactions lock nothing.

use std::thread;
use std::time::Duration;

use riptide::{
    Concurrency, Db, ErrorKind, IsolationLevel, Options, SyncMode, Transaction, TransactionOptions,
};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

fn txn(db: &Db, timeout: Duration) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .lock_timeout(timeout),
    )
    .unwrap()
}

#[test]
fn shared_holders_share_and_an_exclusive_request_waits_for_them() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let a = txn(&db, Duration::from_secs(30));
    let b = txn(&db, Duration::from_secs(30));
    a.lock_name(&cf, b"name", false).unwrap();
    b.lock_name(&cf, b"name", false).unwrap();
    // Again, and weaker than held: nothing to wait for.
    a.lock_name(&cf, b"name", false).unwrap();

    let x = txn(&db, Duration::from_millis(100));
    let err = x.lock_name(&cf, b"name", true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");

    // An exclusive request granted once both shared holders end.
    let x = txn(&db, Duration::from_secs(30));
    thread::scope(|s| {
        let waiter = s.spawn(|| x.lock_name(&cf, b"name", true));
        thread::sleep(Duration::from_millis(200));
        assert!(!waiter.is_finished());
        a.commit().unwrap();
        thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "b still holds it");
        b.rollback().unwrap();
        waiter.join().unwrap().unwrap();
    });
    // Held until x ends: a shared request now waits.
    let c = txn(&db, Duration::from_millis(100));
    let err = c.lock_name(&cf, b"name", false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    x.commit().unwrap();
    let c = txn(&db, Duration::from_millis(100));
    c.lock_name(&cf, b"name", false).unwrap();
    // The name was never written.
    assert_eq!(db.get(b"name").unwrap(), None);
}

#[test]
fn a_name_written_after_the_snapshot_is_no_conflict_and_optimistic_locks_nothing() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let t = txn(&db, Duration::from_secs(30));
    assert_eq!(t.get(&cf, b"other").unwrap(), None);
    db.put(b"name", b"v").unwrap();
    t.lock_name(&cf, b"name", true).unwrap();
    t.commit().unwrap();

    let o = db
        .begin_transaction(TransactionOptions::default().concurrency(Concurrency::Optimistic))
        .unwrap();
    o.lock_name(&cf, b"name", true).unwrap();
    let p = txn(&db, Duration::from_millis(100));
    p.lock_name(&cf, b"name", true).unwrap();
}
