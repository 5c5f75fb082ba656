#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Lock manager scenarios: compatibility, waiting, timeouts, re-entrancy, upgrades, fairness and
//! deadlock detection. Threads are synchronized with barriers and by polling the lock manager's
//! own state; assertions are on outcomes, never on durations.

use std::sync::{Arc, Barrier, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use riptide_common::ErrorKind;
use riptide_txn::{LockManager, LockManagerOptions, LockMode, TxnId};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

/// Polls `cond` until it holds; fails the test after a minute.
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn kind(r: &riptide_common::Result<()>) -> Option<ErrorKind> {
    r.as_ref().err().map(riptide_common::Error::kind)
}

#[test]
fn shared_locks_are_compatible() {
    let lm = LockManager::default();
    lm.lock(1, 0, b"k", LockMode::Shared, Duration::ZERO)
        .unwrap();
    lm.lock(2, 0, b"k", LockMode::Shared, Duration::ZERO)
        .unwrap();
    assert_eq!(
        lm.holders(0, b"k"),
        vec![(1, LockMode::Shared), (2, LockMode::Shared)]
    );
    let err = lm
        .lock(3, 0, b"k", LockMode::Exclusive, Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    // Same key bytes in another column family is another lock.
    lm.lock(3, 1, b"k", LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    assert_eq!(lm.stats().locked_keys, 2);
}

#[test]
fn exclusive_waits_for_shared_release() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    let (tx, rx) = mpsc::channel();
    let waiter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || {
            let r = lm.lock(2, 0, b"k", LockMode::Exclusive, LONG);
            tx.send(()).unwrap();
            r
        })
    };
    wait_until("txn 2 waits", || lm.stats().waits == 1);
    assert!(rx.try_recv().is_err(), "granted while txn 1 holds the key");
    // The gauge of waiting requests says so while the wait lasts.
    assert_eq!(lm.stats().waiting, 1);
    assert!(lm.unlock(1, 0, b"k"));
    waiter.join().unwrap().unwrap();
    assert_eq!(lm.holders(0, b"k"), vec![(2, LockMode::Exclusive)]);
    let stats = lm.stats();
    assert_eq!((stats.granted, stats.waits, stats.timeouts), (2, 1, 0));
    assert_eq!(stats.waiting, 0);
    assert_eq!(lm.waiting_txns(), 0);
}

#[test]
fn wait_times_out() {
    let lm = LockManager::default();
    lm.lock(1, 3, b"row\x00", LockMode::Exclusive, LONG)
        .unwrap();
    let err = lm
        .lock(
            2,
            3,
            b"row\x00",
            LockMode::Shared,
            Duration::from_millis(20),
        )
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    let msg = err.to_string();
    for part in [
        "lock wait timeout",
        "txn 2",
        "held by txn 1",
        "cf 3 key \"row\\x00\"",
    ] {
        assert!(msg.contains(part), "{msg:?} lacks {part:?}");
    }
    // A zero timeout fails at once, also with TimedOut.
    let err = lm
        .lock(2, 3, b"row\x00", LockMode::Exclusive, Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    assert!(err.to_string().contains("timeout 0"), "{err}");
    let stats = lm.stats();
    assert_eq!((stats.timeouts, stats.waits, stats.waiting), (2, 1, 0));
    assert_eq!(lm.holders(3, b"row\x00"), vec![(1, LockMode::Exclusive)]);
    assert_eq!(lm.waiting_txns(), 0);
}

#[test]
fn reentrant_and_upgrade_when_alone() {
    let lm = LockManager::default();
    lm.lock(1, 0, b"a", LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    lm.lock(1, 0, b"a", LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    lm.lock(1, 0, b"a", LockMode::Shared, Duration::ZERO)
        .unwrap();
    assert_eq!(lm.holders(0, b"a"), vec![(1, LockMode::Exclusive)]);

    lm.lock(1, 0, b"b", LockMode::Shared, Duration::ZERO)
        .unwrap();
    lm.lock(1, 0, b"b", LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    assert_eq!(lm.holders(0, b"b"), vec![(1, LockMode::Exclusive)]);

    // One unlock releases however many times the key was locked.
    assert!(lm.unlock(1, 0, b"a"));
    assert!(!lm.unlock(1, 0, b"a"));
    lm.lock(2, 0, b"a", LockMode::Exclusive, Duration::ZERO)
        .unwrap();
    assert_eq!(lm.unlock_all(1, [(0, b"a"), (0, b"b"), (0, b"c")]), 1);
    assert_eq!(lm.unlock_all(2, vec![(0, b"a".to_vec())]), 1);
    assert_eq!(lm.stats().locked_keys, 0);
}

#[test]
fn upgrade_waits_for_other_shared_holders() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    lm.lock(2, 0, b"k", LockMode::Shared, LONG).unwrap();
    let upgrader = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(1, 0, b"k", LockMode::Exclusive, LONG))
    };
    wait_until("txn 1 waits to upgrade", || lm.stats().waits == 1);
    assert!(lm.unlock(2, 0, b"k"));
    upgrader.join().unwrap().unwrap();
    assert_eq!(lm.holders(0, b"k"), vec![(1, LockMode::Exclusive)]);
}

/// Two inserts of the same new primary key: the lock table does not care that nobody ever
/// wrote the key, the second insert waits for the first.
#[test]
fn lock_on_never_written_key_blocks_second_exclusive() {
    let lm = Arc::new(LockManager::default());
    let pk = b"new primary key";
    lm.lock(1, 0, pk, LockMode::Exclusive, LONG).unwrap();
    let err = lm
        .lock(2, 0, pk, LockMode::Exclusive, Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    let second = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(2, 0, pk, LockMode::Exclusive, LONG))
    };
    wait_until("txn 2 waits", || lm.stats().waits == 1);
    assert_eq!(lm.holders(0, pk), vec![(1, LockMode::Exclusive)]);
    lm.unlock(1, 0, pk);
    second.join().unwrap().unwrap();
    assert_eq!(lm.holders(0, pk), vec![(2, LockMode::Exclusive)]);
}

/// A waiting exclusive request makes new shared requests queue behind it.
#[test]
fn waiting_writer_is_not_starved_by_new_readers() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    let writer = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(2, 0, b"k", LockMode::Exclusive, LONG))
    };
    wait_until("the writer waits", || lm.stats().waits == 1);
    let err = lm
        .lock(3, 0, b"k", LockMode::Shared, Duration::ZERO)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    let msg = err.to_string();
    assert!(
        msg.contains("key \"k\", queued behind the exclusive request of txn 2"),
        "{msg}"
    );
    // The existing shared holder is re-entrant regardless.
    lm.lock(1, 0, b"k", LockMode::Shared, Duration::ZERO)
        .unwrap();
    lm.unlock(1, 0, b"k");
    writer.join().unwrap().unwrap();
    assert_eq!(lm.holders(0, b"k"), vec![(2, LockMode::Exclusive)]);

    // A writer that gives up lets the queued readers in.
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    let writer = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(2, 0, b"k", LockMode::Exclusive, Duration::from_millis(50)))
    };
    wait_until("the writer waits", || lm.stats().waits == 1);
    let reader = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(3, 0, b"k", LockMode::Shared, LONG))
    };
    assert_eq!(
        writer.join().unwrap().unwrap_err().kind(),
        ErrorKind::TimedOut
    );
    reader.join().unwrap().unwrap();
    assert_eq!(
        lm.holders(0, b"k"),
        vec![(1, LockMode::Shared), (3, LockMode::Shared)]
    );
}

/// Each of `txns` already holds `held[i]` exclusively and then, all at once, asks for
/// `wanted[i]`. A transaction that loses to a deadlock releases what it holds; one that wins
/// releases both keys. Returns each transaction's outcome.
fn run_cycle(
    lm: &Arc<LockManager>,
    plan: Vec<(TxnId, &'static [u8], &'static [u8], LockMode)>,
) -> Vec<(TxnId, riptide_common::Result<()>)> {
    for &(txn, held, _, _) in &plan {
        lm.lock(txn, 0, held, LockMode::Exclusive, LONG).unwrap();
    }
    let barrier = Arc::new(Barrier::new(plan.len()));
    let handles: Vec<_> = plan
        .into_iter()
        .map(|(txn, held, wanted, mode)| {
            let lm = Arc::clone(lm);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let r = lm.lock(txn, 0, wanted, mode, LONG);
                lm.unlock_all(txn, [(0, held), (0, wanted)]);
                (txn, r)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn two_txn_deadlock_has_exactly_one_victim() {
    let lm = Arc::new(LockManager::default());
    let results = run_cycle(
        &lm,
        vec![
            (1, b"k1", b"k2", LockMode::Exclusive),
            (2, b"k2", b"k1", LockMode::Exclusive),
        ],
    );
    let victims: Vec<_> = results
        .iter()
        .filter(|(_, r)| kind(r) == Some(ErrorKind::Deadlock))
        .collect();
    assert_eq!(victims.len(), 1, "{results:?}");
    assert!(
        results.iter().any(|(_, r)| r.is_ok()),
        "the survivor must get its lock once the victim released: {results:?}"
    );
    let (victim, Err(err)) = victims[0] else {
        unreachable!()
    };
    let msg = err.to_string();
    let other = 3 - victim;
    for part in [
        format!("txn {victim} wants exclusive lock"),
        format!("txn {victim} -> txn {other} -> txn {victim}"),
        format!("txn {victim} is the victim"),
    ] {
        assert!(msg.contains(&part), "{msg:?} lacks {part:?}");
    }
    let stats = lm.stats();
    assert_eq!(
        (stats.deadlocks, stats.timeouts, stats.locked_keys),
        (1, 0, 0)
    );
    assert_eq!(lm.waiting_txns(), 0);
}

#[test]
fn three_txn_cycle_has_exactly_one_victim() {
    let lm = Arc::new(LockManager::default());
    let results = run_cycle(
        &lm,
        vec![
            (1, b"k1", b"k2", LockMode::Exclusive),
            (2, b"k2", b"k3", LockMode::Shared),
            (3, b"k3", b"k1", LockMode::Exclusive),
        ],
    );
    let deadlocks = results
        .iter()
        .filter(|(_, r)| kind(r) == Some(ErrorKind::Deadlock))
        .count();
    assert_eq!(deadlocks, 1, "{results:?}");
    assert_eq!(results.iter().filter(|(_, r)| r.is_ok()).count(), 2);
    assert_eq!(lm.stats().locked_keys, 0);
    assert_eq!(lm.waiting_txns(), 0);
}

#[test]
fn two_upgraders_deadlock() {
    let lm = Arc::new(LockManager::default());
    lm.lock(1, 0, b"k", LockMode::Shared, LONG).unwrap();
    lm.lock(2, 0, b"k", LockMode::Shared, LONG).unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = [1, 2]
        .into_iter()
        .map(|txn: TxnId| {
            let lm = Arc::clone(&lm);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let r = lm.lock(txn, 0, b"k", LockMode::Exclusive, LONG);
                if r.is_ok() {
                    assert_eq!(lm.holders(0, b"k"), vec![(txn, LockMode::Exclusive)]);
                }
                lm.unlock(txn, 0, b"k");
                kind(&r)
            })
        })
        .collect();
    let mut outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    outcomes.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(outcomes, vec![None, Some(ErrorKind::Deadlock)]);
}

#[test]
fn long_wait_chains_count_as_deadlocks() {
    let lm = Arc::new(LockManager::new(LockManagerOptions {
        max_deadlock_depth: 2,
        ..LockManagerOptions::default()
    }));
    for (txn, key) in [(2, b"k2"), (3, b"k3"), (4, b"k4")] {
        lm.lock(txn, 0, key, LockMode::Exclusive, LONG).unwrap();
    }
    // 3 waits for 4, then 2 waits for 3.
    let mut waiters = Vec::new();
    for (n, (txn, held, wanted)) in [(3, b"k3", b"k4"), (2, b"k2", b"k3")]
        .into_iter()
        .enumerate()
    {
        let lm_for_thread = Arc::clone(&lm);
        waiters.push(thread::spawn(move || {
            let r = lm_for_thread.lock(txn, 0, wanted, LockMode::Exclusive, LONG);
            lm_for_thread.unlock_all(txn, [(0, held), (0, wanted)]);
            r
        }));
        wait_until("the chain forms", || lm.waiting_txns() == n + 1);
    }
    // 1 -> 2 -> 3 -> 4 is longer than two transactions.
    let err = lm.lock(1, 0, b"k2", LockMode::Exclusive, LONG).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Deadlock);
    assert!(err.to_string().contains("longer than 2"), "{err}");
    lm.unlock(4, 0, b"k4");
    for w in waiters {
        w.join().unwrap().unwrap();
    }
    assert_eq!(lm.stats().locked_keys, 0);
}

#[test]
fn without_detection_deadlocks_time_out() {
    let lm = Arc::new(LockManager::new(LockManagerOptions {
        deadlock_detect: false,
        num_stripes: 1,
        ..LockManagerOptions::default()
    }));
    for (txn, key) in [(1, b"k1"), (2, b"k2")] {
        lm.lock(txn, 0, key, LockMode::Exclusive, LONG).unwrap();
    }
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = [(1, b"k1", b"k2"), (2, b"k2", b"k1")]
        .into_iter()
        .map(|(txn, held, wanted)| {
            let lm = Arc::clone(&lm);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let r = lm.lock(
                    txn,
                    0,
                    wanted,
                    LockMode::Exclusive,
                    Duration::from_millis(100),
                );
                lm.unlock_all(txn, [(0, held), (0, wanted)]);
                kind(&r)
            })
        })
        .collect();
    let outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        outcomes.contains(&Some(ErrorKind::TimedOut)),
        "{outcomes:?}"
    );
    assert!(
        !outcomes.contains(&Some(ErrorKind::Deadlock)),
        "{outcomes:?}"
    );
    assert_eq!(lm.stats().deadlocks, 0);
    assert_eq!(lm.waiting_txns(), 0);
}

/// `unlock_all` releases many keys grouped by stripe (two chunks of keys sorted by stripe):
/// every key goes, the keys of other transactions and keys not held stay as they were, and a
/// waiter on any of the released keys is woken.
#[test]
fn unlock_all_releases_in_batches_and_wakes_waiters() {
    let lm = Arc::new(LockManager::new(LockManagerOptions {
        num_stripes: 4,
        ..LockManagerOptions::default()
    }));
    let keys: Vec<Vec<u8>> = (0u32..5000).map(|i| i.to_be_bytes().to_vec()).collect();
    for k in &keys {
        lm.lock(1, 0, k, LockMode::Exclusive, Duration::ZERO)
            .unwrap();
    }
    lm.lock(2, 1, b"other", LockMode::Shared, Duration::ZERO)
        .unwrap();
    let last = keys.last().unwrap().clone();
    let waiter = {
        let lm = Arc::clone(&lm);
        let last = last.clone();
        thread::spawn(move || lm.lock(3, 0, &last, LockMode::Exclusive, LONG))
    };
    wait_until("txn 3 waits", || lm.stats().waits == 1);
    // Keys txn 1 does not hold (another column family, never locked) are skipped.
    let released = lm.unlock_all(
        1,
        keys.iter()
            .map(|k| (0, k.as_slice()))
            .chain([(1, &b"other"[..]), (0, &b"never"[..])]),
    );
    assert_eq!(released, keys.len());
    waiter.join().unwrap().unwrap();
    assert_eq!(lm.holders(0, &last), vec![(3, LockMode::Exclusive)]);
    assert_eq!(lm.holders(1, b"other"), vec![(2, LockMode::Shared)]);
    assert_eq!(lm.holders(0, &keys[0]), vec![]);
    assert_eq!(lm.stats().locked_keys, 2);
    // The table gave its memory back and still works.
    for k in &keys[..keys.len() - 1] {
        lm.lock(4, 0, k, LockMode::Shared, Duration::ZERO).unwrap();
    }
    assert_eq!(lm.stats().locked_keys, 2 + keys.len() as u64 - 1);
}
