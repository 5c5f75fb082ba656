//! Transaction cases other engines got wrong, one scenario per test: update against a
//! concurrent delete, two inserts of one new key, identical blind deletes, delete after
//! `get_for_update`, savepoints (state and locks), deadlocks, lock wait timeouts, dropped
//! transactions, and rows removed by a range delete (a `DROP`).
//!
//! Steps are ordered with threads and the lock manager's wait counter (a transaction is known
//! to be blocked once `lock_statistics().waits` went up), never by sleeping for a guessed
//! time.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Barrier;
use std::time::{Duration, Instant};

use riptide::{
    ColumnFamily, Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions, Result,
    SyncMode, Transaction, TransactionOptions,
};

/// Every lock wait these tests order is ended by a commit or rollback, never by the clock;
/// this only bounds a hang if the engine misbehaves.
const LONG: Duration = Duration::from_secs(30);

const MODES: [Concurrency; 2] = [Concurrency::Optimistic, Concurrency::Pessimistic];

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(64 * 1024),
    )
    .unwrap();
    (dir, db)
}

fn opts(level: IsolationLevel, mode: Concurrency) -> TransactionOptions {
    TransactionOptions::default()
        .isolation(level)
        .concurrency(mode)
        .lock_timeout(LONG)
}

fn begin(db: &Db, level: IsolationLevel, mode: Concurrency) -> Transaction {
    db.begin_transaction(opts(level, mode)).unwrap()
}

/// A pessimistic repeatable-read transaction that never waits for a lock: the probe of
/// whether a row is locked.
fn probe(db: &Db) -> Transaction {
    db.begin_transaction(
        opts(IsolationLevel::RepeatableRead, Concurrency::Pessimistic).lock_timeout(Duration::ZERO),
    )
    .unwrap()
}

/// Whether `key` can be locked exclusively right now by another transaction.
fn lockable(db: &Db, key: &[u8]) -> bool {
    let cf = db.default_cf();
    let p = probe(db);
    let r = p.get_for_update(&cf, key, true);
    p.rollback().unwrap();
    match r {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::TimedOut => false,
        Err(e) => panic!("probing the lock on {key:?}: {e}"),
    }
}

/// Waits until the lock manager has seen more than `before` lock waits: a transaction another
/// thread runs is then blocked on a row lock.
fn wait_for_lock_wait(db: &Db, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.lock_statistics().waits <= before {
        assert!(
            Instant::now() < deadline,
            "no transaction started waiting for a row lock"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs `blocked` on another thread, waits until it blocks on a row lock, runs `unblock` and
/// returns what `blocked` returned.
fn while_blocked<T: Send>(
    db: &Db,
    blocked: impl FnOnce() -> T + Send,
    unblock: impl FnOnce(),
) -> T {
    let waits = db.lock_statistics().waits;
    std::thread::scope(|s| {
        let h = s.spawn(blocked);
        wait_for_lock_wait(db, waits);
        unblock();
        h.join().unwrap()
    })
}

fn scan(txn: &Transaction, cf: &ColumnFamily, opts: ReadOptions<'_>) -> Rows {
    let mut it = txn.iter(cf, opts).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

fn kv(k: &str, v: &str) -> (Vec<u8>, Vec<u8>) {
    (k.as_bytes().to_vec(), v.as_bytes().to_vec())
}

/// An update and a delete of one row by two concurrent repeatable-read transactions: the
/// second to reach the row fails with `Conflict`, whichever order, in both modes. (A delete
/// of a key the transaction did not read is only exempt when the newer version is itself a
/// delete; here it is a put.)
#[test]
fn update_against_concurrent_delete_conflicts() {
    let rr = IsolationLevel::RepeatableRead;
    for mode in MODES {
        for delete_first in [true, false] {
            let ctx = format!("{mode:?}, delete first: {delete_first}");
            let (_dir, db) = open();
            let cf = db.default_cf();
            db.put(b"row", b"v0").unwrap();
            let updater = db
                .begin_transaction(opts(rr, mode).snapshot_at_begin(true))
                .unwrap();
            let deleter = db
                .begin_transaction(opts(rr, mode).snapshot_at_begin(true))
                .unwrap();
            let (first, second): (&Transaction, &Transaction) = if delete_first {
                (&deleter, &updater)
            } else {
                (&updater, &deleter)
            };
            let write = |t: &Transaction, delete: bool| -> Result<()> {
                if delete {
                    t.delete(&cf, b"row")
                } else {
                    t.put(&cf, b"row", b"v1")
                }
            };
            write(first, delete_first).unwrap();
            let outcome = match mode {
                Concurrency::Optimistic => {
                    write(second, !delete_first).unwrap();
                    first.commit().unwrap();
                    second.commit()
                }
                Concurrency::Pessimistic => {
                    // The second waits for the first's row lock, then finds a version newer
                    // than its snapshot.
                    let r = while_blocked(
                        &db,
                        || write(second, !delete_first),
                        || first.commit().unwrap(),
                    );
                    r.and_then(|()| second.commit())
                }
            };
            let err = outcome.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx}: {err}");
            let expected = if delete_first {
                None
            } else {
                Some(b"v1".to_vec())
            };
            assert_eq!(db.get(b"row").unwrap(), expected, "{ctx}");
        }
    }
}

/// Two transactions insert the same new key. Optimistic: the second commit fails with
/// `Conflict`. Pessimistic: the second `put` waits for the first's lock on the absent key;
/// after the first commits it fails with `Conflict` under repeatable read (the key now has a
/// version newer than its snapshot) and overwrites under read committed; with a tiny lock
/// timeout it fails with `TimedOut` while the first holds the lock.
#[test]
fn two_inserts_of_one_new_key() {
    let rr = IsolationLevel::RepeatableRead;
    // Optimistic.
    {
        let (_dir, db) = open();
        let cf = db.default_cf();
        let t1 = begin(&db, rr, Concurrency::Optimistic);
        let t2 = begin(&db, rr, Concurrency::Optimistic);
        assert_eq!(t1.get(&cf, b"pk").unwrap(), None);
        assert_eq!(t2.get(&cf, b"pk").unwrap(), None);
        t1.put(&cf, b"pk", b"one").unwrap();
        t2.put(&cf, b"pk", b"two").unwrap();
        t1.commit().unwrap();
        let err = t2.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
        assert_eq!(db.get(b"pk").unwrap(), Some(b"one".to_vec()));
    }
    // Pessimistic, repeatable read and read committed: the second waits.
    for level in [rr, IsolationLevel::ReadCommitted] {
        let (_dir, db) = open();
        let cf = db.default_cf();
        let t1 = begin(&db, level, Concurrency::Pessimistic);
        let t2 = db
            .begin_transaction(opts(level, Concurrency::Pessimistic).snapshot_at_begin(true))
            .unwrap();
        t1.put(&cf, b"pk", b"one").unwrap();
        let second = while_blocked(&db, || t2.put(&cf, b"pk", b"two"), || t1.commit().unwrap());
        if level == rr {
            let err = second.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
            t2.rollback().unwrap();
            assert_eq!(db.get(b"pk").unwrap(), Some(b"one".to_vec()));
        } else {
            second.unwrap();
            t2.commit().unwrap();
            assert_eq!(db.get(b"pk").unwrap(), Some(b"two".to_vec()));
        }
    }
    // Pessimistic with a tiny lock timeout: the lock on the absent key is held.
    {
        let (_dir, db) = open();
        let cf = db.default_cf();
        let t1 = begin(&db, rr, Concurrency::Pessimistic);
        t1.put(&cf, b"pk", b"one").unwrap();
        for timeout in [Duration::ZERO, Duration::from_millis(20)] {
            let t2 = db
                .begin_transaction(opts(rr, Concurrency::Pessimistic).lock_timeout(timeout))
                .unwrap();
            let err = t2.put(&cf, b"pk", b"two").unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::TimedOut,
                "timeout {timeout:?}: {err}"
            );
            t2.rollback().unwrap();
        }
        t1.commit().unwrap();
        assert_eq!(db.get(b"pk").unwrap(), Some(b"one".to_vec()));
    }
}

/// Two transactions delete the same existing row without reading it: no conflict, in either
/// mode, under repeatable read and read committed; both commit and the row is gone.
/// (Pessimistic: the second delete waits for the first's lock, then finds the newer version is
/// a delete.)
#[test]
fn identical_blind_deletes_do_not_conflict() {
    for level in [
        IsolationLevel::RepeatableRead,
        IsolationLevel::ReadCommitted,
    ] {
        for mode in MODES {
            let ctx = format!("{level:?}/{mode:?}");
            let (_dir, db) = open();
            let cf = db.default_cf();
            db.put(b"row", b"v").unwrap();
            db.put(b"other", b"v").unwrap();
            // Both begin (and take their snapshots) while the row exists.
            let t1 = db
                .begin_transaction(opts(level, mode).snapshot_at_begin(true))
                .unwrap();
            let t2 = db
                .begin_transaction(opts(level, mode).snapshot_at_begin(true))
                .unwrap();
            t1.delete(&cf, b"row").unwrap();
            match mode {
                Concurrency::Optimistic => {
                    t2.delete(&cf, b"row").unwrap();
                    t1.commit().unwrap();
                }
                Concurrency::Pessimistic => {
                    while_blocked(&db, || t2.delete(&cf, b"row"), || t1.commit().unwrap()).unwrap();
                }
            }
            t2.put(&cf, b"other", b"w").unwrap();
            t2.commit().unwrap();
            assert_eq!(db.get(b"row").unwrap(), None, "{ctx}");
            assert_eq!(db.get(b"other").unwrap(), Some(b"w".to_vec()), "{ctx}");
        }
    }
}

/// A delete of a row the transaction read with `get_for_update` is not blind: if another
/// transaction deleted the row meanwhile, it conflicts (repeatable read, optimistic). So does
/// a delete after a plain `get` under serializable, which validates every key read.
#[test]
fn delete_after_get_for_update_conflicts_with_a_concurrent_delete() {
    for (level, for_update) in [
        (IsolationLevel::RepeatableRead, true),
        (IsolationLevel::Serializable, false),
    ] {
        let ctx = format!("{level:?}, get_for_update: {for_update}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"row", b"v").unwrap();
        let t1 = begin(&db, level, Concurrency::Optimistic);
        let t2 = begin(&db, level, Concurrency::Optimistic);
        let read = if for_update {
            t1.get_for_update(&cf, b"row", true).unwrap()
        } else {
            t1.get(&cf, b"row").unwrap()
        };
        assert_eq!(read, Some(b"v".to_vec()), "{ctx}");
        t2.delete(&cf, b"row").unwrap();
        t2.commit().unwrap();
        t1.delete(&cf, b"row").unwrap();
        let err = t1.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx}: {err}");
        assert_eq!(db.get(b"row").unwrap(), None, "{ctx}");
    }
}

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// The state a transaction sees: point reads of every key of interest, and a full scan.
fn view(txn: &Transaction, cf: &ColumnFamily) -> (Vec<Option<Vec<u8>>>, Rows) {
    let gets = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|k| txn.get(cf, k.as_bytes()).unwrap())
        .collect();
    (gets, scan(txn, cf, ReadOptions::default()))
}

/// Rolling back to a savepoint restores exactly the state before it (point reads, scans, an
/// iterator opened before the rollback, the write count), through nested savepoints;
/// releasing a savepoint keeps its writes; with no savepoint left, `NotFound`.
#[test]
fn rollback_to_savepoint_restores_the_state_before_it() {
    for mode in MODES {
        let (_dir, db) = open();
        let cf = db.default_cf();
        for k in ["a", "b", "c"] {
            db.put(k.as_bytes(), b"1").unwrap();
        }
        let txn = begin(&db, IsolationLevel::RepeatableRead, mode);
        txn.put(&cf, b"a", b"2").unwrap();
        txn.delete(&cf, b"b").unwrap();
        let state0 = view(&txn, &cf);
        assert_eq!(state0.1, vec![kv("a", "2"), kv("c", "1")], "{mode:?}");
        let count0 = txn.write_count();

        txn.set_savepoint().unwrap();
        txn.put(&cf, b"c", b"3").unwrap();
        txn.put(&cf, b"d", b"4").unwrap();
        txn.delete(&cf, b"a").unwrap();
        let state1 = view(&txn, &cf);
        assert_eq!(state1.1, vec![kv("c", "3"), kv("d", "4")], "{mode:?}");
        let count1 = txn.write_count();

        txn.set_savepoint().unwrap();
        txn.put(&cf, b"e", b"5").unwrap();
        txn.put(&cf, b"c", b"33").unwrap();
        txn.put(&cf, b"b", b"again").unwrap();
        txn.single_delete(&cf, b"d").unwrap();
        assert_eq!(
            view(&txn, &cf).1,
            vec![kv("b", "again"), kv("c", "33"), kv("e", "5")],
            "{mode:?}"
        );
        let mut it = txn.iter(&cf, ReadOptions::default()).unwrap();
        it.seek_to_last().unwrap();
        assert_eq!(it.key(), b"e");

        txn.rollback_to_savepoint().unwrap();
        assert_eq!(view(&txn, &cf), state1, "{mode:?}: inner rollback");
        assert_eq!(txn.write_count(), count1, "{mode:?}");
        // The iterator opened before the rollback sees the restored state after a re-seek.
        it.seek_to_last().unwrap();
        assert_eq!((it.key(), it.value()), (&b"d"[..], &b"4"[..]), "{mode:?}");
        it.seek_to_first().unwrap();
        assert_eq!((it.key(), it.value()), (&b"c"[..], &b"3"[..]), "{mode:?}");

        txn.rollback_to_savepoint().unwrap();
        assert_eq!(view(&txn, &cf), state0, "{mode:?}: outer rollback");
        assert_eq!(txn.write_count(), count0, "{mode:?}");

        let err = txn.rollback_to_savepoint().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{mode:?}: {err}");
        let err = txn.release_savepoint().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{mode:?}: {err}");

        // Released savepoints keep their writes; rolling back to an outer one undoes them.
        txn.set_savepoint().unwrap();
        txn.put(&cf, b"d", b"kept").unwrap();
        txn.set_savepoint().unwrap();
        txn.put(&cf, b"e", b"kept").unwrap();
        txn.release_savepoint().unwrap();
        assert_eq!(txn.get(&cf, b"e").unwrap(), Some(b"kept".to_vec()));
        txn.rollback_to_savepoint().unwrap();
        assert_eq!(
            view(&txn, &cf),
            state0,
            "{mode:?}: rollback over a released one"
        );

        txn.set_savepoint().unwrap();
        txn.put(&cf, b"d", b"final").unwrap();
        txn.release_savepoint().unwrap();
        txn.commit().unwrap();
        let snap = db.snapshot();
        let mut it = db.iter(ReadOptions::default().snapshot(&snap)).unwrap();
        it.seek_to_first().unwrap();
        let mut got = Vec::new();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next().unwrap();
        }
        assert_eq!(
            got,
            vec![kv("a", "2"), kv("c", "1"), kv("d", "final")],
            "{mode:?}: committed state"
        );
    }
}

/// Rolling back to a savepoint releases the row locks taken after it and keeps the ones
/// taken before it, including one taken before and written again after.
#[test]
fn rollback_to_savepoint_releases_only_the_locks_taken_after_it() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    db.put(b"read", b"1").unwrap();
    let txn = begin(
        &db,
        IsolationLevel::RepeatableRead,
        Concurrency::Pessimistic,
    );
    txn.put(&cf, b"before", b"1").unwrap();
    txn.put(&cf, b"both", b"1").unwrap();
    txn.set_savepoint().unwrap();
    txn.put(&cf, b"after", b"2").unwrap();
    txn.delete(&cf, b"after-delete").unwrap();
    txn.get_for_update(&cf, b"read", true).unwrap();
    txn.put(&cf, b"both", b"2").unwrap();
    for k in ["before", "both", "after", "after-delete", "read"] {
        assert!(!lockable(&db, k.as_bytes()), "{k} should be locked");
    }

    txn.rollback_to_savepoint().unwrap();
    for k in ["after", "after-delete", "read"] {
        assert!(
            lockable(&db, k.as_bytes()),
            "{k} was locked after the savepoint"
        );
    }
    for k in ["before", "both"] {
        assert!(
            !lockable(&db, k.as_bytes()),
            "{k} was locked before the savepoint"
        );
    }
    assert_eq!(txn.get(&cf, b"both").unwrap(), Some(b"1".to_vec()));
    txn.commit().unwrap();
    for k in ["before", "both"] {
        assert!(lockable(&db, k.as_bytes()), "{k} still locked after commit");
    }
    assert_eq!(db.get(b"both").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"after").unwrap(), None);
}

/// Two pessimistic transactions lock a and b, then each asks for the other's row at the same
/// moment: exactly one fails with `Deadlock` (the one that closes the cycle); once it rolls
/// back, the other gets its lock and commits.
#[test]
fn deadlock_between_two_pessimistic_transactions_has_exactly_one_victim() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let deadlocks_before = db.lock_statistics().deadlocks;
    let barrier = Barrier::new(2);
    let run = |mine: &[u8], theirs: &[u8]| -> Result<()> {
        let t = begin(
            &db,
            IsolationLevel::RepeatableRead,
            Concurrency::Pessimistic,
        );
        t.put(&cf, mine, b"mine").unwrap();
        barrier.wait();
        match t.put(&cf, theirs, mine) {
            Ok(()) => t.commit(),
            Err(e) => {
                t.rollback().unwrap();
                Err(e)
            }
        }
    };
    let results = std::thread::scope(|s| {
        let h1 = s.spawn(|| run(b"a", b"b"));
        let h2 = s.spawn(|| run(b"b", b"a"));
        [h1.join().unwrap(), h2.join().unwrap()]
    });
    let errors: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(errors.len(), 1, "{results:?}");
    assert_eq!(errors[0].kind(), ErrorKind::Deadlock, "{}", errors[0]);
    assert_eq!(db.lock_statistics().deadlocks, deadlocks_before + 1);
    // The survivor wrote both rows; the victim's first write was rolled back.
    let (a, b) = if results[0].is_ok() {
        (&b"mine"[..], &b"a"[..])
    } else {
        (&b"b"[..], &b"mine"[..])
    };
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(a));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(b));
}

/// A lock wait ends after the lock timeout with `TimedOut`; the transaction stays usable and
/// commits its other writes.
#[test]
fn lock_wait_timeout() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let timeouts_before = db.lock_statistics().timeouts;
    let holder = begin(
        &db,
        IsolationLevel::RepeatableRead,
        Concurrency::Pessimistic,
    );
    holder.put(&cf, b"k", b"holder").unwrap();
    let waiter = db
        .begin_transaction(
            opts(IsolationLevel::RepeatableRead, Concurrency::Pessimistic)
                .lock_timeout(Duration::from_millis(50)),
        )
        .unwrap();
    let err = waiter.put(&cf, b"k", b"waiter").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    let err = waiter.get_for_update(&cf, b"k", false).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert_eq!(db.lock_statistics().timeouts, timeouts_before + 2);
    waiter.put(&cf, b"other", b"waiter").unwrap();
    waiter.commit().unwrap();
    holder.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"holder".to_vec()));
    assert_eq!(db.get(b"other").unwrap(), Some(b"waiter".to_vec()));
}

/// A transaction dropped without commit or rollback writes nothing and releases its locks.
#[test]
fn dropped_transaction_releases_its_locks_and_writes_nothing() {
    for mode in MODES {
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"read", b"1").unwrap();
        {
            let txn = begin(&db, IsolationLevel::RepeatableRead, mode);
            txn.put(&cf, b"new", b"x").unwrap();
            txn.delete(&cf, b"read").unwrap();
            txn.get_for_update(&cf, b"gfu", true).unwrap();
            if mode == Concurrency::Pessimistic {
                assert!(!lockable(&db, b"new"));
            }
        }
        for k in ["new", "read", "gfu"] {
            assert!(lockable(&db, k.as_bytes()), "{mode:?}: {k} still locked");
        }
        assert_eq!(db.get(b"new").unwrap(), None, "{mode:?}");
        assert_eq!(db.get(b"read").unwrap(), Some(b"1".to_vec()), "{mode:?}");
        assert_eq!(db.lock_statistics().locked_keys, 0, "{mode:?}");
    }
}

/// A `DROP TABLE` done as a range delete: rows a transaction committed and then a range
/// delete removed are invisible to new transactions (point reads and scans, before and after
/// a flush); a transaction whose snapshot predates the range delete still sees them, and its
/// update of one of them (read for update before the drop) conflicts.
#[test]
fn rows_removed_by_a_range_delete_are_gone_for_new_transactions() {
    for mode in MODES {
        let (_dir, db) = open();
        let cf = db.default_cf();
        let table = |i: u32| format!("t1/{i:04}").into_bytes();
        let txn = begin(&db, IsolationLevel::RepeatableRead, mode);
        for i in 0..100 {
            txn.put(&cf, &table(i), b"row").unwrap();
        }
        txn.put(&cf, b"t2/0000", b"kept").unwrap();
        txn.commit().unwrap();

        let old = db
            .begin_transaction(
                opts(IsolationLevel::RepeatableRead, Concurrency::Optimistic)
                    .snapshot_at_begin(true),
            )
            .unwrap();
        assert_eq!(
            old.get_for_update(&cf, &table(7), true).unwrap(),
            Some(b"row".to_vec())
        );
        db.delete_range(b"t1/", b"t10").unwrap();

        let table_scan = ReadOptions::default().lower_bound("t1/").upper_bound("t10");
        for flushed in [false, true] {
            let ctx = format!("{mode:?}, flushed: {flushed}");
            let fresh = begin(&db, IsolationLevel::RepeatableRead, mode);
            for i in [0, 7, 50, 99] {
                assert_eq!(fresh.get(&cf, &table(i)).unwrap(), None, "{ctx}");
            }
            assert_eq!(scan(&fresh, &cf, table_scan.clone()), vec![], "{ctx}");
            assert_eq!(
                scan(&fresh, &cf, ReadOptions::default()),
                vec![kv("t2/0000", "kept")],
                "{ctx}"
            );
            // Re-creating the table: only the new row is there.
            fresh.put(&cf, &table(3), b"new").unwrap();
            assert_eq!(
                scan(&fresh, &cf, table_scan.clone()),
                vec![(table(3), b"new".to_vec())],
                "{ctx}"
            );
            fresh.rollback().unwrap();
            db.flush().unwrap();
        }

        assert_eq!(scan(&old, &cf, table_scan.clone()).len(), 100, "{mode:?}");
        old.put(&cf, &table(7), b"updated").unwrap();
        let err = old.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{mode:?}: {err}");
        assert_eq!(db.get(&table(7)).unwrap(), None, "{mode:?}");
    }
}

/// A single delete and a put of one key in one transaction (a secondary-index entry moved
/// away and back) reach the database as both writes, so a later single delete removes the
/// key for good: with the put alone, two puts would be stacked and the single delete would
/// cancel only the newer one, bringing the old value back after compaction.
#[test]
fn single_delete_then_put_in_one_transaction_keeps_the_single_delete_contract() {
    let dir = tempfile::tempdir().unwrap();
    let db = riptide::Db::open(dir.path(), riptide::Options::default()).unwrap();
    let cf = db.default_cf();
    db.put(b"idx", b"old").unwrap();
    db.flush().unwrap();
    let txn = db
        .begin_transaction(riptide::TransactionOptions::default())
        .unwrap();
    txn.single_delete(&cf, b"idx").unwrap();
    txn.put(&cf, b"idx", b"new").unwrap();
    assert_eq!(txn.get(&cf, b"idx").unwrap(), Some(b"new".to_vec()));
    txn.commit().unwrap();
    assert_eq!(db.get(b"idx").unwrap(), Some(b"new".to_vec()));
    db.single_delete(b"idx").unwrap();
    assert_eq!(db.get(b"idx").unwrap(), None);
    db.flush().unwrap();
    db.compact_range(&cf, None).unwrap();
    assert_eq!(db.get(b"idx").unwrap(), None, "the old value came back");
}

/// `single_delete_present` (a key the caller vouches is present: the MariaDB handler's
/// secondary entries of a locked row) commits its single delete without looking the key up,
/// where `single_delete` reads it (beyond memory a disk read per deleted index entry: the
/// insert benchmark's deletes spent 62% of the server's CPU there). Counted with the bloom
/// filter checks point reads make on this thread: the keys sit in a table file.
#[test]
fn single_delete_present_commits_without_a_lookup_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let db = riptide::Db::open(dir.path(), riptide::Options::default()).unwrap();
    let cf = db.default_cf();
    for i in 0..100u32 {
        db.put(format!("e{i:03}").as_bytes(), b"").unwrap();
    }
    db.flush().unwrap();
    let commit_checks = |present: bool, keys: std::ops::Range<u32>| {
        let txn = db
            .begin_transaction(riptide::TransactionOptions::default())
            .unwrap();
        for i in keys {
            let k = format!("e{i:03}");
            if present {
                txn.single_delete_present(&cf, k.as_bytes()).unwrap();
            } else {
                txn.single_delete(&cf, k.as_bytes()).unwrap();
            }
        }
        let before = riptide_sstable::bloom_checks_by_gets();
        txn.commit().unwrap();
        riptide_sstable::bloom_checks_by_gets()
            .since(before)
            .checked
    };
    assert_eq!(commit_checks(true, 0..50), 0, "a lookup at commit");
    assert_eq!(
        commit_checks(false, 50..100),
        50,
        "the checked form looks each key up"
    );
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("e{i:03}").as_bytes()).unwrap(),
            None,
            "e{i:03}"
        );
    }
    db.compact_range(&cf, None).unwrap();
    for i in 0..100u32 {
        assert_eq!(
            db.get(format!("e{i:03}").as_bytes()).unwrap(),
            None,
            "e{i:03}"
        );
    }
}

/// A key this transaction wrote itself is not vouched for by the caller's lock: after a put
/// of a new key, `single_delete_present` is checked like `single_delete` (the key is absent
/// from the database, so nothing is written), and the key's later put / single-delete
/// cycles keep the contract through compaction.
#[test]
fn single_delete_present_after_an_own_put_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = riptide::Db::open(dir.path(), riptide::Options::default()).unwrap();
    let cf = db.default_cf();
    // An old put / single-delete pair of the key, in a table file that spans it.
    db.put(b"a", b"").unwrap();
    db.put(b"idx", b"v0").unwrap();
    db.single_delete(b"idx").unwrap();
    db.put(b"z", b"").unwrap();
    db.flush().unwrap();
    let txn = db
        .begin_transaction(riptide::TransactionOptions::default())
        .unwrap();
    txn.put(&cf, b"idx", b"mine").unwrap();
    txn.single_delete_present(&cf, b"idx").unwrap();
    let before = riptide_sstable::bloom_checks_by_gets();
    txn.commit().unwrap();
    assert_eq!(
        riptide_sstable::bloom_checks_by_gets()
            .since(before)
            .checked,
        1,
        "the single delete after the transaction's own put was not checked"
    );
    assert_eq!(db.get(b"idx").unwrap(), None);
    // A blind single delete here would be a second one over the old pair's put.
    db.flush().unwrap();
    db.compact_range(&cf, None).unwrap();
    assert_eq!(db.get(b"idx").unwrap(), None, "the old value came back");
    db.put(b"idx", b"v1").unwrap();
    let txn = db
        .begin_transaction(riptide::TransactionOptions::default())
        .unwrap();
    txn.single_delete_present(&cf, b"idx").unwrap();
    txn.commit().unwrap();
    db.flush().unwrap();
    db.compact_range(&cf, None).unwrap();
    assert_eq!(db.get(b"idx").unwrap(), None, "a value came back");
}
