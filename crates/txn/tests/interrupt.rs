#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Interrupting lock waits (`KILL QUERY`, shutdown): a row-lock wait and an insert-intention
//! wait end with `Interrupted` soon after `LockManager::interrupt`, an interrupt raised before
//! the wait begins is honoured at once, the requester keeps what it held, other waiters are
//! not disturbed, a cleared flag waits normally again; and `try_lock` never waits.

use std::ops::Bound;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use riptide_common::ErrorKind;
use riptide_txn::{Interrupt, LockManager, LockMode};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

/// How soon an interrupted wait must return (generous for a loaded two-core machine; a
/// missed wake-up would show as the 60 s timeout).
const PROMPT: Duration = Duration::from_secs(1);

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_row_lock_wait_is_interrupted_promptly_and_keeps_earlier_locks() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"held", LockMode::Exclusive, LONG).unwrap();
    lm.lock(2, 0, b"mine", LockMode::Exclusive, LONG).unwrap();
    let flag = Arc::new(Interrupt::new());
    let waiter = {
        let (lm, flag) = (Arc::clone(&lm), Arc::clone(&flag));
        thread::spawn(move || {
            let r = lm.lock_interruptible(2, 0, b"held", LockMode::Exclusive, LONG, Some(&flag));
            (r, Instant::now())
        })
    };
    wait_until("txn 2 waits", || lm.stats().waits == 1);
    let fired = Instant::now();
    lm.interrupt(&flag);
    let (r, returned) = waiter.join().unwrap();
    let took = returned.saturating_duration_since(fired);
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(err.to_string().contains("held by txn 1"), "{err}");
    assert!(took < PROMPT, "interrupted wait returned after {took:?}");
    eprintln!("row lock wait returned {took:?} after the interrupt");
    // Nothing changed for txn 2: it still holds what it held, and not the contested key.
    assert_eq!(lm.holders(0, b"mine"), vec![(2, LockMode::Exclusive)]);
    assert_eq!(lm.holders(0, b"held"), vec![(1, LockMode::Exclusive)]);
    assert_eq!(lm.waiting_txns(), 0);
    assert_eq!(lm.stats().interrupts, 1);

    // The flag stays raised: the next wait fails at once, without waiting.
    let err = lm
        .lock_interruptible(2, 0, b"held", LockMode::Shared, LONG, Some(&flag))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted);
    assert!(err.to_string().contains("before it began"), "{err}");
    // ...but a lock grantable at once is granted: only waits are interrupted.
    assert!(
        !lm.lock_interruptible(2, 0, b"free", LockMode::Exclusive, LONG, Some(&flag))
            .unwrap()
    );

    // Cleared, the transaction waits normally again, and gets the lock when it is released.
    flag.clear();
    let waiter = {
        let (lm, flag) = (Arc::clone(&lm), Arc::clone(&flag));
        thread::spawn(move || {
            lm.lock_interruptible(2, 0, b"held", LockMode::Exclusive, LONG, Some(&flag))
        })
    };
    wait_until("txn 2 waits again", || lm.stats().waits == 2);
    assert!(lm.unlock(1, 0, b"held"));
    assert!(waiter.join().unwrap().unwrap(), "granted after a wait");
    assert_eq!(lm.holders(0, b"held"), vec![(2, LockMode::Exclusive)]);
}

#[test]
fn an_interrupt_before_the_wait_is_not_lost() {
    let lm = LockManager::default();
    lm.lock(1, 0, b"k", LockMode::Exclusive, LONG).unwrap();
    let flag = Interrupt::new();
    // Raised while nobody waits (the statement was killed between two waits).
    lm.interrupt(&flag);
    let started = Instant::now();
    let err = lm
        .lock_interruptible(2, 0, b"k", LockMode::Exclusive, LONG, Some(&flag))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted);
    assert!(started.elapsed() < PROMPT);
    // No wait was counted, and zero-timeout requests report the interrupt too.
    assert_eq!(lm.stats().waits, 0);
    let err = lm
        .lock_interruptible(2, 0, b"k", LockMode::Shared, Duration::ZERO, Some(&flag))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted);
}

#[test]
fn an_interrupt_ends_only_the_waits_given_that_flag() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Exclusive, LONG).unwrap();
    let mine = Arc::new(Interrupt::new());
    let other = Arc::new(Interrupt::new());
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    for (txn, flag) in [(2, Arc::clone(&mine)), (3, Arc::clone(&other))] {
        let (lm, tx) = (Arc::clone(&lm), tx.clone());
        threads.push(thread::spawn(move || {
            let r = lm.lock_interruptible(txn, 0, b"k", LockMode::Shared, LONG, Some(&flag));
            tx.send((txn, r.map_err(|e| e.kind()))).unwrap();
        }));
    }
    wait_until("both wait", || lm.stats().waits == 2);
    lm.interrupt(&mine);
    let (txn, r) = rx.recv_timeout(LONG).unwrap();
    assert_eq!((txn, r), (2, Err(ErrorKind::Interrupted)));
    // Txn 3 went back to waiting; it gets the lock once txn 1 lets go.
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    assert!(lm.unlock(1, 0, b"k"));
    let (txn, r) = rx.recv_timeout(LONG).unwrap();
    assert_eq!((txn, r), (3, Ok(true)));
    for t in threads {
        t.join().unwrap();
    }
    assert!(!other.is_set() && mine.is_set());
}

#[test]
fn an_insert_intention_wait_is_interrupted() {
    let lm = Arc::new(LockManager::default());
    lm.lock_gap(1, 0, Bound::Included(b"a"), Bound::Excluded(b"m"));
    let flag = Arc::new(Interrupt::new());
    let waiter = {
        let (lm, flag) = (Arc::clone(&lm), Arc::clone(&flag));
        thread::spawn(move || {
            let r = lm.insert_intention_interruptible(2, 0, b"c", LONG, Some(&flag));
            (r, Instant::now())
        })
    };
    wait_until("the insert waits", || lm.stats().insert_waits == 1);
    let fired = Instant::now();
    lm.interrupt(&flag);
    let (r, returned) = waiter.join().unwrap();
    let took = returned.saturating_duration_since(fired);
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(err.to_string().contains("gap locked by txn 1"), "{err}");
    assert!(took < PROMPT, "interrupted insert returned after {took:?}");
    eprintln!("insert-intention wait returned {took:?} after the interrupt");
    assert_eq!(lm.waiting_txns(), 0);
    // Still raised: the next insert into the gap fails at once; outside it, no wait at all.
    let err = lm
        .insert_intention_interruptible(2, 0, b"d", LONG, Some(&flag))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted);
    lm.insert_intention_interruptible(2, 0, b"z", LONG, Some(&flag))
        .unwrap();
    flag.clear();
    lm.unlock_gaps(1);
    lm.insert_intention_interruptible(2, 0, b"c", LONG, Some(&flag))
        .unwrap();
    assert_eq!(lm.stats().interrupts, 2);
}

#[test]
fn try_lock_grants_or_reports_without_waiting() {
    let lm = LockManager::default();
    assert!(lm.try_lock(1, 0, b"k", LockMode::Shared).unwrap());
    // Shared holders do not conflict; re-entrant requests are granted.
    assert!(lm.try_lock(2, 0, b"k", LockMode::Shared).unwrap());
    assert!(lm.try_lock(1, 0, b"k", LockMode::Shared).unwrap());
    // An exclusive request conflicts with the other shared holder: reported, nothing changed.
    assert!(!lm.try_lock(1, 0, b"k", LockMode::Exclusive).unwrap());
    assert_eq!(
        lm.holders(0, b"k"),
        vec![(1, LockMode::Shared), (2, LockMode::Shared)]
    );
    assert!(lm.unlock(2, 0, b"k"));
    // Now the upgrade is possible at once.
    assert!(lm.try_lock(1, 0, b"k", LockMode::Exclusive).unwrap());
    assert!(!lm.try_lock(3, 0, b"k", LockMode::Shared).unwrap());
    let stats = lm.stats();
    assert_eq!((stats.waits, stats.timeouts), (0, 0));
    assert!(lm.unlock(1, 0, b"k"));
    assert_eq!(lm.stats().locked_keys, 0);
}
