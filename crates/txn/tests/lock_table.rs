//! `LockManager::lock_table`: the locks held and the requests waiting, with who blocks whom,
//! for `information_schema.RIPTIDE_LOCKS`.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ops::Bound;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use riptide_txn::{LockInfo, LockKind, LockManager, LockMode};

const CF: u32 = 7;

/// Waits (up to 10 s) until `f` holds for the lock table, and returns that table's rows.
fn wait_for_table(lm: &LockManager, f: impl Fn(&[LockInfo]) -> bool) -> Vec<LockInfo> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = lm.lock_table(usize::MAX);
        assert!(!t.truncated);
        if f(&t.locks) {
            return t.locks;
        }
        assert!(
            Instant::now() < deadline,
            "lock table never got there: {t:?}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

fn row(locks: &[LockInfo], txn: u64, key: &[u8]) -> Option<LockInfo> {
    locks
        .iter()
        .find(|l| l.txn == txn && l.key() == Some(key) && matches!(l.kind, LockKind::Row(_)))
        .cloned()
}

#[test]
fn held_row_locks_and_a_waiting_request_with_its_blocker() {
    let lm = Arc::new(LockManager::default());
    let long = Duration::from_secs(30);
    lm.lock(1, CF, b"k1", LockMode::Exclusive, long).unwrap();
    lm.lock(1, CF, b"k2", LockMode::Shared, long).unwrap();
    lm.lock(2, CF, b"k2", LockMode::Shared, long).unwrap();

    let t = lm.lock_table(usize::MAX);
    assert_eq!(t.locks.len(), 3, "{t:?}");
    let k1 = row(&t.locks, 1, b"k1").unwrap();
    assert_eq!(k1.kind, LockKind::Row(LockMode::Exclusive));
    assert_eq!(k1.cf, CF);
    assert_eq!(k1.waiting, None);
    assert_eq!(k1.end, Bound::Included(b"k1".to_vec()));
    assert_eq!(
        row(&t.locks, 2, b"k2").unwrap().kind,
        LockKind::Row(LockMode::Shared)
    );

    // Transaction 3 waits for k1 (held by 1) and is shown waiting, blocked by 1.
    let waiter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(3, CF, b"k1", LockMode::Exclusive, long))
    };
    let locks = wait_for_table(&lm, |l| row(l, 3, b"k1").is_some());
    let w = row(&locks, 3, b"k1").unwrap();
    assert_eq!(w.kind, LockKind::Row(LockMode::Exclusive));
    assert!(w.waiting.is_some());
    assert_eq!(w.blocked_by, vec![1]);

    // A shared request on k2 by 4 queues behind no one (two shared holders): granted. An
    // exclusive one by 5 waits for both holders.
    lm.lock(4, CF, b"k2", LockMode::Shared, long).unwrap();
    let upgrader = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.lock(5, CF, b"k2", LockMode::Exclusive, long))
    };
    let locks = wait_for_table(&lm, |l| row(l, 5, b"k2").is_some());
    assert_eq!(row(&locks, 5, b"k2").unwrap().blocked_by, vec![1, 2, 4]);

    // Once granted, the request is a held lock and no longer waits.
    lm.unlock(1, CF, b"k1");
    waiter.join().unwrap().unwrap();
    let locks = wait_for_table(&lm, |l| row(l, 1, b"k1").is_none());
    let k1 = row(&locks, 3, b"k1").unwrap();
    assert_eq!(k1.waiting, None);
    assert!(k1.blocked_by.is_empty());
    for t in [1, 2, 4] {
        lm.unlock(t, CF, b"k2");
    }
    upgrader.join().unwrap().unwrap();
    let locks = wait_for_table(&lm, |l| l.iter().all(|x| x.waiting.is_none()));
    assert_eq!(locks.len(), 2, "{locks:?}");

    // A request that times out leaves no trace.
    let err = lm
        .lock(6, CF, b"k1", LockMode::Shared, Duration::from_millis(20))
        .unwrap_err();
    assert!(err.to_string().contains("timeout"), "{err}");
    assert_eq!(lm.lock_table(usize::MAX).locks.len(), 2);
}

#[test]
fn gap_locks_and_waiting_inserts() {
    let lm = Arc::new(LockManager::default());
    lm.lock_gap(
        10,
        CF,
        Bound::Included(b"a".as_slice()),
        Bound::Excluded(b"m".as_slice()),
    );
    let t = lm.lock_table(usize::MAX);
    assert_eq!(t.locks.len(), 1);
    let g = &t.locks[0];
    assert_eq!((g.txn, g.kind), (10, LockKind::Gap));
    assert_eq!(g.start, Bound::Included(b"a".to_vec()));
    assert_eq!(g.end, Bound::Excluded(b"m".to_vec()));

    let inserter = {
        let lm = Arc::clone(&lm);
        thread::spawn(move || lm.insert_intention(11, CF, b"c", Duration::from_secs(30)))
    };
    let locks = wait_for_table(&lm, |l| l.iter().any(|x| x.txn == 11));
    let i = locks.iter().find(|x| x.txn == 11).unwrap();
    assert_eq!(i.kind, LockKind::InsertIntention);
    assert_eq!(i.key(), Some(b"c".as_slice()));
    assert!(i.waiting.is_some());
    assert_eq!(i.blocked_by, vec![10]);

    lm.unlock_gaps(10);
    inserter.join().unwrap().unwrap();
    assert!(lm.lock_table(usize::MAX).locks.is_empty());
}

#[test]
fn a_limit_truncates_the_table() {
    let lm = LockManager::default();
    for k in 0..50u32 {
        lm.lock(1, CF, &k.to_be_bytes(), LockMode::Exclusive, Duration::ZERO)
            .unwrap();
    }
    let t = lm.lock_table(20);
    assert_eq!(t.locks.len(), 20);
    assert!(t.truncated);
    let t = lm.lock_table(50);
    assert_eq!(t.locks.len(), 50);
    assert!(!t.truncated);
}
