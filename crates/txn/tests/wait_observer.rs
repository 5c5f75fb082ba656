#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! The wait observer (what MariaDB's parallel replication hears of through
//! `thd_rpl_deadlock_check`): a row lock wait and an insert-intention wait report the
//! waiter and its blockers before they sleep, a new set of blockers is reported again, a
//! request granted at once reports nothing, and no blocker can release the key while the
//! observer runs.

use std::ops::Bound;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use riptide_txn::{LockManager, LockMode, TxnId, WaitObserver};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

type Seen = Arc<Mutex<Vec<(TxnId, Vec<TxnId>)>>>;

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// A lock manager whose observer records every report.
fn observed() -> (Arc<LockManager>, Seen) {
    let lm = Arc::new(LockManager::default());
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    let observer: WaitObserver = Arc::new(move |waiter, blockers: &[TxnId]| {
        sink.lock().unwrap().push((waiter, blockers.to_vec()));
    });
    lm.set_wait_observer(Some(observer));
    (lm, seen)
}

#[test]
fn a_row_lock_wait_reports_its_blockers_and_each_new_set() {
    let (lm, seen) = observed();
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    lm.lock(2, 0, b"k", LockMode::Shared, LONG).unwrap();
    // Granted at once: nothing to report.
    lm.lock(3, 0, b"other", LockMode::Exclusive, LONG).unwrap();
    assert!(seen.lock().unwrap().is_empty());

    let writer = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(9, 0, b"k", LockMode::Exclusive, LONG))
    };
    wait_until("the writer reports", || !seen.lock().unwrap().is_empty());
    assert_eq!(*seen.lock().unwrap(), vec![(9, vec![1, 2])]);
    // One blocker goes: the wait goes on behind the other, and says so.
    lm.unlock(1, 0, b"k");
    wait_until("the new set is reported", || {
        seen.lock().unwrap().len() == 2
    });
    lm.unlock(2, 0, b"k");
    writer.join().unwrap().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(9, vec![1, 2]), (9, vec![2])]);
}

#[test]
fn an_insert_into_a_locked_gap_reports_the_gap_holder() {
    let (lm, seen) = observed();
    lm.lock_gap(4, 0, Bound::Unbounded, Bound::Unbounded);
    let inserter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.insert_intention(5, 0, b"k", LONG))
    };
    wait_until("the insert reports", || !seen.lock().unwrap().is_empty());
    lm.unlock_gaps(4);
    inserter.join().unwrap().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(5, vec![4])]);
}

#[test]
fn a_blocker_cannot_release_the_key_while_the_observer_runs() {
    let lm = Arc::new(LockManager::default());
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let report_end: Arc<Mutex<Option<Instant>>> = Arc::default();
    {
        let report_end = Arc::clone(&report_end);
        let entered_tx = Mutex::new(entered_tx);
        lm.set_wait_observer(Some(Arc::new(move |_, _: &[TxnId]| {
            entered_tx.lock().unwrap().send(()).unwrap();
            thread::sleep(Duration::from_millis(100));
            *report_end.lock().unwrap() = Some(Instant::now());
        })));
    }
    lm.lock(1, 0, b"k", LockMode::Exclusive, LONG).unwrap();
    let waiter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(2, 0, b"k", LockMode::Exclusive, LONG))
    };
    entered_rx.recv_timeout(LONG).unwrap();
    // The observer is running: the release must wait until it returns.
    assert!(lm.unlock(1, 0, b"k"));
    let released = Instant::now();
    waiter.join().unwrap().unwrap();
    let report_end = report_end.lock().unwrap().expect("the report finished");
    assert!(
        released >= report_end,
        "the blocker released its lock during the report"
    );
}

#[test]
fn removing_the_observer_stops_reports() {
    let (lm, seen) = observed();
    lm.set_wait_observer(None);
    lm.lock(1, 0, b"k", LockMode::Exclusive, LONG).unwrap();
    let r = lm.lock(2, 0, b"k", LockMode::Exclusive, Duration::from_millis(20));
    assert!(r.is_err());
    assert!(seen.lock().unwrap().is_empty());
}
