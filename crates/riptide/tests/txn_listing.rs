#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! `Db::transactions` and `Db::lock_table`: what `information_schema.RIPTIDE_TRX` and
//! `RIPTIDE_LOCKS` show. Every open transaction is listed with its owner, isolation level,
//! state, snapshot, write set and row locks; an ended one is gone; a waiting lock request is
//! listed with the transaction that blocks it.

use std::thread;
use std::time::{Duration, Instant};

use riptide::{
    Concurrency, Db, IsolationLevel, LockKind, LockMode, Options, SyncMode, TransactionOptions,
    TransactionState, Xid,
};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

#[test]
fn open_transactions_are_listed_until_they_end() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    assert!(db.transactions().is_empty());

    let t1 = db
        .begin_transaction(TransactionOptions::default().owner(42))
        .unwrap();
    t1.put(&cf, b"x", b"10").unwrap();
    t1.put(&cf, b"y", b"20").unwrap();
    assert_eq!(
        t1.get_for_update(&cf, b"a", true).unwrap(),
        Some(b"1".to_vec())
    );
    let t2 = db
        .begin_transaction(
            TransactionOptions::default()
                .isolation(IsolationLevel::ReadCommitted)
                .concurrency(Concurrency::Optimistic)
                .owner(7),
        )
        .unwrap();
    thread::sleep(Duration::from_millis(5));

    let list = db.transactions();
    assert_eq!(list.len(), 2, "{list:?}");
    let (i1, i2) = (&list[0], &list[1]);
    assert_eq!((i1.id, i1.owner), (t1.id(), 42));
    assert_eq!(i1.isolation, IsolationLevel::RepeatableRead);
    assert_eq!(i1.concurrency, Concurrency::Pessimistic);
    assert_eq!(i1.state, TransactionState::Active);
    assert!(i1.age >= Duration::from_millis(5), "{i1:?}");
    assert!(i1.snapshot.is_some(), "a read took the snapshot: {i1:?}");
    assert_eq!(i1.writes, Some(2));
    assert!(i1.write_set_bytes.unwrap() > 0);
    // The two written keys and the one read for update.
    assert_eq!(i1.row_locks, Some(3));
    assert_eq!((i2.id, i2.owner), (t2.id(), 7));
    assert_eq!(i2.isolation, IsolationLevel::ReadCommitted);
    assert_eq!(i2.concurrency, Concurrency::Optimistic);
    assert_eq!(
        (i2.snapshot, i2.writes, i2.row_locks),
        (None, Some(0), Some(0))
    );

    t1.commit().unwrap();
    let list = db.transactions();
    assert_eq!(list.iter().map(|t| t.id).collect::<Vec<_>>(), vec![t2.id()]);
    drop(t2);
    assert!(db.transactions().is_empty());

    // A prepared transaction is listed as such while its handle is held.
    let t3 = db.begin_transaction(TransactionOptions::default()).unwrap();
    t3.put(&cf, b"z", b"30").unwrap();
    t3.prepare(&Xid::from_name("x3").unwrap()).unwrap();
    let list = db.transactions();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].state, TransactionState::Prepared);
    t3.rollback().unwrap();
    assert!(db.transactions().is_empty());
}

#[test]
fn a_waiting_lock_request_names_its_blocker() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    db.put(b"row", b"1").unwrap();
    let holder = db.begin_transaction(TransactionOptions::default()).unwrap();
    holder.put(&cf, b"row", b"2").unwrap();
    let held = db.lock_table(100);
    assert_eq!(held.locks.len(), 1, "{held:?}");
    let l = &held.locks[0];
    assert_eq!(
        (l.txn, l.kind, l.cf),
        (holder.id(), LockKind::Row(LockMode::Exclusive), cf.id())
    );
    assert_eq!(l.key(), Some(b"row".as_slice()));
    assert_eq!(l.waiting, None);

    let waiter_id = std::sync::OnceLock::new();
    thread::scope(|s| {
        let w = s.spawn(|| {
            let t = db
                .begin_transaction(
                    TransactionOptions::default().lock_timeout(Duration::from_secs(30)),
                )
                .unwrap();
            waiter_id.set(t.id()).unwrap();
            let v = t.get_for_update(&cf, b"row", true).unwrap();
            t.commit().unwrap();
            v
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        let waiting = loop {
            let t = db.lock_table(100);
            if let Some(l) = t.locks.iter().find(|l| l.waiting.is_some()) {
                break l.clone();
            }
            assert!(Instant::now() < deadline, "no waiting request: {t:?}");
            thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(Some(&waiting.txn), waiter_id.get());
        assert_eq!(waiting.blocked_by, vec![holder.id()]);
        assert_eq!(waiting.key(), Some(b"row".as_slice()));
        // The waiter is an open transaction too, with no lock granted yet.
        let list = db.transactions();
        let w_info = list.iter().find(|t| t.id == waiting.txn).unwrap();
        assert_eq!(w_info.row_locks, Some(0));

        holder.commit().unwrap();
        assert_eq!(w.join().unwrap(), Some(b"2".to_vec()));
    });
    assert!(db.lock_table(100).locks.is_empty());
    assert!(db.transactions().is_empty());
}
