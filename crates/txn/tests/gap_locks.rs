#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Gap locks and the insert-intention check: gap locks never conflict with each other, an
//! insert into another transaction's held gap waits (and times out, or is granted when the
//! gap is released), a cycle through a row lock and a gap lock is a deadlock, and a scan's
//! reservation records inserts ahead of it instead of blocking them.

use std::ops::Bound;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use riptide_common::ErrorKind;
use riptide_txn::{LockManager, LockMode};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn range<'a>(lo: &'a [u8], hi: &'a [u8]) -> (Bound<&'a [u8]>, Bound<&'a [u8]>) {
    (Bound::Included(lo), Bound::Excluded(hi))
}

#[test]
fn gap_locks_never_conflict_with_each_other() {
    let lm = LockManager::default();
    assert!(!lm.has_gap_locks());
    let (lo, hi) = range(b"b", b"m");
    lm.lock_gap(1, 0, lo, hi);
    lm.lock_gap(2, 0, lo, hi);
    lm.lock_gap(3, 0, Bound::Unbounded, Bound::Unbounded);
    assert!(lm.has_gap_locks());
    assert_eq!(lm.gap_holders(0, b"c"), vec![1, 2, 3]);
    assert_eq!(lm.gap_holders(0, b"m"), vec![3]);
    assert_eq!(lm.stats().gap_locks, 3);
    // A holder's own gap does not stop its insert, but the other holders' gaps do (InnoDB's
    // insert intention waits for every other transaction's gap lock on the gap).
    let err = lm.insert_intention(1, 0, b"c", Duration::ZERO).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(err.to_string().contains("txns 2, 3"), "{err}");
    assert_eq!(lm.unlock_gaps(2), 1);
    assert_eq!(lm.unlock_gaps(3), 1);
    lm.insert_intention(1, 0, b"c", Duration::ZERO).unwrap();
    assert_eq!(lm.unlock_gaps(1), 1);
    assert!(!lm.has_gap_locks());
}

#[test]
fn insert_into_another_transactions_gap_times_out() {
    let lm = LockManager::default();
    let (lo, hi) = range(b"b", b"m");
    lm.lock_gap(1, 0, lo, hi);
    // Outside the range, or in another column family: no wait.
    lm.insert_intention(2, 0, b"a", Duration::ZERO).unwrap();
    lm.insert_intention(2, 0, b"m", Duration::ZERO).unwrap();
    lm.insert_intention(2, 7, b"c", Duration::ZERO).unwrap();
    let started = Instant::now();
    let err = lm
        .insert_intention(2, 0, b"c", Duration::from_millis(100))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert!(err.to_string().contains("gap locked by txn 1"), "{err}");
    let stats = lm.stats();
    assert_eq!((stats.insert_waits, stats.timeouts), (1, 1));
    assert_eq!(lm.waiting_txns(), 0);
}

#[test]
fn insert_waits_until_the_gap_is_released() {
    let lm = Arc::new(LockManager::default());
    lm.lock_gap(1, 0, Bound::Unbounded, Bound::Unbounded);
    let (tx, rx) = mpsc::channel();
    let inserter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || {
            let r = lm.insert_intention(2, 0, b"k", LONG);
            tx.send(()).unwrap();
            r
        })
    };
    wait_until("the insert waits", || lm.waiting_txns() == 1);
    assert!(rx.try_recv().is_err(), "the insert did not wait");
    wait_until("the gauge counts the insert", || lm.stats().waiting == 1);
    lm.unlock_gaps(1);
    inserter.join().unwrap().unwrap();
    assert_eq!(lm.waiting_txns(), 0);
    assert_eq!(lm.stats().waiting, 0);
}

#[test]
fn a_cycle_through_a_gap_and_a_row_lock_is_a_deadlock() {
    let lm = Arc::new(LockManager::default());
    // txn 1 scanned the range (gap lock); txn 2 locked row "x".
    lm.lock_gap(1, 0, Bound::Included(b"a"), Bound::Excluded(b"m"));
    lm.lock(2, 0, b"x", LockMode::Exclusive, LONG).unwrap();
    // txn 2 inserts into txn 1's gap: waits.
    let inserter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.insert_intention(2, 0, b"c", LONG))
    };
    wait_until("the insert waits", || lm.waiting_txns() == 1);
    // txn 1 now wants row "x": waiting would close the cycle, txn 1 is the victim.
    let err = lm.lock(1, 0, b"x", LockMode::Shared, LONG).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Deadlock);
    assert!(err.to_string().contains("txn 1 is the victim"), "{err}");
    // The victim rolls back: its gap goes, the insert proceeds.
    lm.unlock_gaps(1);
    inserter.join().unwrap().unwrap();

    // The other way round: txn 3 waits for row "y" held by txn 4, then txn 4 inserts into
    // txn 3's gap: the inserter closes the cycle and is the victim.
    lm.lock_gap(3, 0, Bound::Included(b"a"), Bound::Excluded(b"m"));
    lm.lock(4, 0, b"y", LockMode::Exclusive, LONG).unwrap();
    let reader = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(3, 0, b"y", LockMode::Shared, LONG))
    };
    wait_until("the row lock waits", || lm.waiting_txns() == 1);
    let err = lm.insert_intention(4, 0, b"d", LONG).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Deadlock);
    assert!(err.to_string().contains("into a gap"), "{err}");
    lm.unlock(4, 0, b"y");
    reader.join().unwrap().unwrap();
    assert!(lm.stats().deadlocks >= 2);
}

#[test]
fn a_reservation_records_inserts_ahead_of_the_scan() {
    let lm = Arc::new(LockManager::default());
    let id = lm.reserve_gap(1, 0, Bound::Included(b"a"), Bound::Excluded(b"z"));
    assert!(lm.has_gap_locks());
    // Nothing held yet: inserts go ahead and are recorded.
    lm.insert_intention(2, 0, b"c", Duration::ZERO).unwrap();
    lm.insert_intention(3, 0, b"q", Duration::ZERO).unwrap();
    lm.insert_intention(2, 0, b"z", Duration::ZERO).unwrap(); // outside
    assert!(lm.gap_holders(0, b"c").is_empty());
    // The scan walks [a, d]: it gets the insert at "c" back, and now holds it.
    let mut got = lm.extend_gap(id, Bound::Included(b"a"), Bound::Included(b"d"));
    got.sort();
    assert_eq!(got, vec![(b"c".to_vec(), 2)]);
    assert_eq!(lm.gap_holders(0, b"c"), vec![1]);
    let err = lm.insert_intention(4, 0, b"b", Duration::ZERO).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    // Walking on over "q" hands "q" back; extending again does not repeat anything.
    assert_eq!(
        lm.extend_gap(id, Bound::Excluded(b"d"), Bound::Included(b"r")),
        vec![(b"q".to_vec(), 3)]
    );
    assert!(
        lm.extend_gap(id, Bound::Included(b"a"), Bound::Included(b"r"))
            .is_empty()
    );
    // An insert past the walked part waits for no one until the scan gets there.
    lm.insert_intention(4, 0, b"s", Duration::ZERO).unwrap();
    // The scan stops: the rest of the reservation is let go, the walked part stays held.
    lm.finish_gap(id);
    assert_eq!(
        lm.extend_gap(id, Bound::Included(b"a"), Bound::Excluded(b"z")),
        vec![],
        "a finished reservation records nothing more"
    );
    assert!(lm.gap_holders(0, b"s").is_empty());
    assert_eq!(lm.gap_holders(0, b"r"), vec![1]);
    lm.insert_intention(5, 0, b"t", Duration::ZERO).unwrap();
    assert_eq!(lm.unlock_gaps(1), 1);
    assert!(!lm.has_gap_locks());
}

#[test]
fn finishing_an_unwalked_reservation_removes_it() {
    let lm = LockManager::default();
    let id = lm.reserve_gap(1, 0, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(lm.stats().gap_locks, 1);
    lm.finish_gap(id);
    assert_eq!(lm.stats().gap_locks, 0);
    assert!(!lm.has_gap_locks());
    assert_eq!(lm.unlock_gaps(1), 0);
}

#[test]
fn finishing_a_reservation_wakes_inserts_into_the_released_part() {
    let lm = Arc::new(LockManager::default());
    let id = lm.reserve_gap(1, 0, Bound::Unbounded, Bound::Unbounded);
    // The whole range walked: an insert waits.
    lm.extend_gap(id, Bound::Unbounded, Bound::Unbounded);
    let inserter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.insert_intention(2, 0, b"k", LONG))
    };
    wait_until("the insert waits", || lm.waiting_txns() == 1);
    // Savepoint rollbacks do not touch gap locks; only the end of the transaction does.
    lm.finish_gap(id);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(lm.waiting_txns(), 1, "finish keeps what was walked");
    lm.unlock_gaps(1);
    inserter.join().unwrap().unwrap();
}
