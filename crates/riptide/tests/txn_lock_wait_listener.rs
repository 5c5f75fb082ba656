#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The lock wait listener (`Db::set_lock_wait_listener`; MariaDB's parallel replication
//! hears of waits through it): a row lock wait reports the owners of the waiter and of its
//! blocker, transactions without an owner are left out, and a host that acts on the report
//! (here: rolls the blocker back, as the server retries a later transaction) ends a wait
//! that no deadlock detector could see.

use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use riptide::{Db, IsolationLevel, LockWaitListener, Options, SyncMode, TransactionOptions};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

fn begin(db: &Db, owner: u64) -> riptide::Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .owner(owner)
            .lock_timeout(LONG),
    )
    .unwrap()
}

#[test]
fn a_wait_reports_owners_and_the_host_can_end_it_by_rolling_the_blocker_back() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let (tx, rx) = mpsc::channel::<(u64, Vec<u64>)>();
    let tx = Mutex::new(tx);
    let listener: LockWaitListener = Arc::new(move |waiter, blockers: &[u64]| {
        tx.lock()
            .unwrap()
            .send((waiter, blockers.to_vec()))
            .unwrap();
    });
    db.set_lock_wait_listener(Some(listener));

    // The later transaction (owner 22) took the row first; the earlier one (owner 11) must
    // commit first, so it would wait for ever if 22 waited for it outside the engine.
    let later = begin(&db, 22);
    later.put(&cf, b"row", b"later").unwrap();
    let earlier = begin(&db, 11);
    thread::scope(|s| {
        let waiting = s.spawn(|| {
            earlier.put(&cf, b"row", b"earlier")?;
            earlier.commit()
        });
        let (waiter, blockers) = rx.recv_timeout(LONG).expect("the wait was reported");
        assert_eq!((waiter, blockers), (11, vec![22]));
        // What the server does with the report: the later transaction goes.
        later.rollback().unwrap();
        waiting.join().unwrap().unwrap();
    });
    assert_eq!(db.get(b"row").unwrap().as_deref(), Some(&b"earlier"[..]));
}

#[test]
fn transactions_without_an_owner_are_left_out() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let calls = Arc::new(Mutex::new(Vec::<(u64, Vec<u64>)>::new()));
    let sink = Arc::clone(&calls);
    db.set_lock_wait_listener(Some(Arc::new(move |w, b: &[u64]| {
        sink.lock().unwrap().push((w, b.to_vec()))
    })));
    let short = Duration::from_millis(30);

    // The blocker has no owner: nobody to name, no call.
    let anonymous = begin(&db, 0);
    anonymous.put(&cf, b"a", b"1").unwrap();
    let owned = begin(&db, 7);
    owned.set_lock_timeout(short);
    assert!(owned.put(&cf, b"a", b"2").is_err());
    // The waiter has no owner: no call either.
    owned.put(&cf, b"b", b"1").unwrap();
    let waiter = begin(&db, 0);
    waiter.set_lock_timeout(short);
    assert!(waiter.put(&cf, b"b", b"2").is_err());
    assert!(
        calls.lock().unwrap().is_empty(),
        "{:?}",
        calls.lock().unwrap()
    );

    // Both owned: one call; after the listener is removed, none.
    let second = begin(&db, 8);
    second.set_lock_timeout(short);
    assert!(second.put(&cf, b"b", b"3").is_err());
    assert_eq!(*calls.lock().unwrap(), vec![(8, vec![7])]);
    db.set_lock_wait_listener(None);
    assert!(second.put(&cf, b"b", b"4").is_err());
    assert_eq!(calls.lock().unwrap().len(), 1);
}
