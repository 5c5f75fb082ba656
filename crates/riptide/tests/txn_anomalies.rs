//! The anomalies each isolation level allows, as promised by the module documentation of
//! `riptide::transaction`: dirty reads, non-repeatable reads, lost updates (with
//! `get_for_update` and with a plain `get`), write skew, phantoms and Fekete's read-only
//! anomaly. Every test runs over the six (isolation level, concurrency) combinations.
//!
//! Steps are ordered with threads and the lock manager's wait counter (a transaction is known
//! to be blocked once `lock_statistics().waits` went up), never by sleeping for a guessed
//! time. Lock timeouts are generous except in the pessimistic serializable write-skew case,
//! where a short one is the safety net if deadlock detection does not resolve the wait.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Barrier;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use riptide::{
    ColumnFamily, Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions, Result,
    SyncMode, Transaction, TransactionOptions,
};

const LEVELS: [IsolationLevel; 3] = [
    IsolationLevel::ReadCommitted,
    IsolationLevel::RepeatableRead,
    IsolationLevel::Serializable,
];
const MODES: [Concurrency; 2] = [Concurrency::Optimistic, Concurrency::Pessimistic];

/// Every lock wait in these tests is ended by a commit, rollback or deadlock the test orders;
/// this only bounds a hang if the engine misbehaves.
const LONG: Duration = Duration::from_secs(30);

fn cases() -> Vec<(IsolationLevel, Concurrency)> {
    LEVELS
        .iter()
        .flat_map(|&l| MODES.iter().map(move |&m| (l, m)))
        .collect()
}

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

fn begin_with(db: &Db, level: IsolationLevel, mode: Concurrency, timeout: Duration) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(level)
            .concurrency(mode)
            .lock_timeout(timeout),
    )
    .unwrap()
}

fn begin(db: &Db, level: IsolationLevel, mode: Concurrency) -> Transaction {
    begin_with(db, level, mode, LONG)
}

fn num(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
}

fn parse(v: Option<Vec<u8>>) -> i64 {
    let v = v.expect("the value is present");
    String::from_utf8(v).unwrap().parse().unwrap()
}

fn db_num(db: &Db, key: &[u8]) -> i64 {
    parse(db.get(key).unwrap())
}

/// Reads an integer through a transaction.
fn txn_num(txn: &Transaction, cf: &ColumnFamily, key: &[u8]) -> Result<i64> {
    Ok(parse(txn.get(cf, key)?))
}

/// Waits until the lock manager has seen more than `before` lock waits: a transaction another
/// thread runs is then blocked on a row lock (the counter is updated under the lock table's
/// mutex, which the waiter releases only when it sleeps).
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

/// Every (key, value) a transaction's iterator sees between `lower` and `upper`.
fn scan(
    txn: &Transaction,
    cf: &ColumnFamily,
    lower: &[u8],
    upper: &[u8],
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = txn
        .iter(
            cf,
            ReadOptions::default()
                .lower_bound(lower.to_vec())
                .upper_bound(upper.to_vec()),
        )
        .unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

fn serializable_pessimistic(level: IsolationLevel, mode: Concurrency) -> bool {
    level == IsolationLevel::Serializable && mode == Concurrency::Pessimistic
}

/// Dirty read: never, at any level. Uncommitted puts, inserts and deletes of another
/// transaction are invisible to point reads and scans, before and after it rolls back. (A
/// serializable pessimistic `get` share-locks the row, so it waits for the writer to finish
/// rather than read around it.)
#[test]
fn dirty_reads_never_happen() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"x", b"committed").unwrap();
        db.put(b"d", b"committed").unwrap();

        let writer = begin(&db, level, mode);
        writer.put(&cf, b"x", b"dirty").unwrap();
        writer.put(&cf, b"n", b"dirty").unwrap();
        writer.delete(&cf, b"d").unwrap();
        assert_eq!(
            writer.get(&cf, b"x").unwrap(),
            Some(b"dirty".to_vec()),
            "{ctx}"
        );

        let reader = begin(&db, level, mode);
        let committed = vec![
            (b"d".to_vec(), b"committed".to_vec()),
            (b"x".to_vec(), b"committed".to_vec()),
        ];
        assert_eq!(scan(&reader, &cf, b"a", b"z"), committed, "{ctx}: scan");
        assert_eq!(db.get(b"x").unwrap(), Some(b"committed".to_vec()), "{ctx}");
        assert_eq!(db.get(b"n").unwrap(), None, "{ctx}");

        let reads = |t: &Transaction| -> Vec<Option<Vec<u8>>> {
            [b"x", b"n", b"d"]
                .iter()
                .map(|k| t.get(&cf, *k).unwrap())
                .collect()
        };
        let got = if serializable_pessimistic(level, mode) {
            let waits = db.lock_statistics().waits;
            std::thread::scope(|s| {
                let h = s.spawn(|| reads(&reader));
                wait_for_lock_wait(&db, waits);
                writer.rollback().unwrap();
                h.join().unwrap()
            })
        } else {
            let got = reads(&reader);
            writer.rollback().unwrap();
            got
        };
        assert_eq!(
            got,
            vec![
                Some(b"committed".to_vec()),
                None,
                Some(b"committed".to_vec())
            ],
            "{ctx}: point reads saw uncommitted data"
        );
        assert_eq!(
            scan(&reader, &cf, b"a", b"z"),
            committed,
            "{ctx}: scan after rollback"
        );
        reader.commit().unwrap();
        assert_eq!(db.get(b"x").unwrap(), Some(b"committed".to_vec()), "{ctx}");
        assert_eq!(db.get(b"n").unwrap(), None, "{ctx}");
    }
}

/// Non-repeatable read: read committed allows it (the second read sees the value another
/// transaction committed in between); repeatable read and serializable read their snapshot
/// both times. Under serializable pessimistic the reader's shared lock makes the writer wait
/// until the reader commits.
#[test]
fn non_repeatable_reads_only_under_read_committed() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"x", &num(1)).unwrap();
        db.put(b"y", &num(1)).unwrap();

        let t1 = begin(&db, level, mode);
        assert_eq!(txn_num(&t1, &cf, b"x").unwrap(), 1, "{ctx}");
        assert_eq!(txn_num(&t1, &cf, b"y").unwrap(), 1, "{ctx}");
        let t2 = begin(&db, level, mode);

        let (second_x, second_y) = if serializable_pessimistic(level, mode) {
            let waits = db.lock_statistics().waits;
            std::thread::scope(|s| {
                let h = s.spawn(|| {
                    t2.put(&cf, b"x", &num(2))?;
                    t2.delete(&cf, b"y")?;
                    t2.commit()
                });
                wait_for_lock_wait(&db, waits);
                let second = (
                    t1.get(&cf, b"x").unwrap().map(|v| parse(Some(v))),
                    t1.get(&cf, b"y").unwrap().map(|v| parse(Some(v))),
                );
                t1.commit().unwrap();
                h.join().unwrap().unwrap();
                second
            })
        } else {
            t2.put(&cf, b"x", &num(2)).unwrap();
            t2.delete(&cf, b"y").unwrap();
            t2.commit().unwrap();
            let second = (
                t1.get(&cf, b"x").unwrap().map(|v| parse(Some(v))),
                t1.get(&cf, b"y").unwrap().map(|v| parse(Some(v))),
            );
            t1.commit().unwrap();
            second
        };
        if level == IsolationLevel::ReadCommitted {
            assert_eq!(
                (second_x, second_y),
                (Some(2), None),
                "{ctx}: read committed sees the newest commit"
            );
        } else {
            assert_eq!(
                (second_x, second_y),
                (Some(1), Some(1)),
                "{ctx}: a snapshot read changed within the transaction"
            );
        }
        assert_eq!(db_num(&db, b"x"), 2, "{ctx}");
        assert_eq!(db.get(b"y").unwrap(), None, "{ctx}");
    }
}

/// Lost update with `get_for_update`: prevented at every level. Pessimistic: the second
/// reader waits for the first to commit, then reads the new value: under read committed
/// because it reads the newest data, under repeatable read and serializable because the
/// `get_for_update` is its first operation, so its snapshot is taken when the lock is granted
/// (`txn_current_reads.rs` has the case of a snapshot taken earlier, which fails with
/// `Conflict`). Optimistic: the second commit fails with `Conflict`.
///
/// Read committed pessimistic has a test of its own (`..._read_committed_pessimistic`).
#[test]
fn lost_update_with_get_for_update_is_prevented_at_every_level() {
    for (level, mode) in cases() {
        if (level, mode) == (IsolationLevel::ReadCommitted, Concurrency::Pessimistic) {
            continue;
        }
        lost_update_with_get_for_update(level, mode);
    }
}

/// The read committed pessimistic case of the test above: the second `get_for_update` waits
/// for the first transaction's lock and must then read the value it committed. It reads the
/// value from before its wait instead (the read point is taken before the lock wait), so
/// both transactions commit an increment of 0.
#[test]
fn lost_update_with_get_for_update_is_prevented_read_committed_pessimistic() {
    lost_update_with_get_for_update(IsolationLevel::ReadCommitted, Concurrency::Pessimistic);
}

fn lost_update_with_get_for_update(level: IsolationLevel, mode: Concurrency) {
    let ctx = format!("{level:?}/{mode:?}");
    let (_dir, db) = open();
    let cf = db.default_cf();
    db.put(b"x", &num(0)).unwrap();

    let t1 = begin(&db, level, mode);
    let t2 = begin(&db, level, mode);
    let a = parse(t1.get_for_update(&cf, b"x", true).unwrap());
    assert_eq!(a, 0, "{ctx}");
    let second = if mode == Concurrency::Pessimistic {
        let waits = db.lock_statistics().waits;
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let b = parse(t2.get_for_update(&cf, b"x", true)?);
                t2.put(&cf, b"x", &num(b + 1))?;
                t2.commit()
            });
            wait_for_lock_wait(&db, waits);
            t1.put(&cf, b"x", &num(a + 1)).unwrap();
            t1.commit().unwrap();
            h.join().unwrap()
        })
    } else {
        let b = parse(t2.get_for_update(&cf, b"x", true).unwrap());
        assert_eq!(b, 0, "{ctx}");
        t1.put(&cf, b"x", &num(a + 1)).unwrap();
        t1.commit().unwrap();
        t2.put(&cf, b"x", &num(b + 1)).unwrap();
        t2.commit()
    };
    let value = db_num(&db, b"x");
    match &second {
        Ok(()) => assert_eq!(value, 2, "{ctx}: both committed but an increment was lost"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Conflict, "{ctx}: {e}");
            assert_eq!(value, 1, "{ctx}");
        }
    }
    // What the documentation promises per combination: pessimistic waits and then reads the
    // newer value; optimistic makes the second fail.
    let expect_ok = mode == Concurrency::Pessimistic;
    assert_eq!(second.is_ok(), expect_ok, "{ctx}: {second:?}");
}

/// Lost update with a plain `get`: read committed allows it (both commit, one increment is
/// lost); repeatable read and serializable make the second writer fail. Where: optimistic at
/// commit (`Conflict`), pessimistic repeatable read at the `put` (lock, then the snapshot
/// check: `Conflict`), pessimistic serializable also at the `put`, but as `Deadlock`: both
/// readers hold shared locks and the second upgrade closes the cycle.
#[test]
fn lost_update_with_plain_get_only_under_read_committed() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"x", &num(0)).unwrap();

        let t1 = begin(&db, level, mode);
        let t2 = begin(&db, level, mode);
        let a = txn_num(&t1, &cf, b"x").unwrap();
        let b = txn_num(&t2, &cf, b"x").unwrap();
        assert_eq!((a, b), (0, 0), "{ctx}");

        if serializable_pessimistic(level, mode) {
            let waits = db.lock_statistics().waits;
            std::thread::scope(|s| {
                let h = s.spawn(|| {
                    t1.put(&cf, b"x", &num(a + 1))?;
                    t1.commit()
                });
                wait_for_lock_wait(&db, waits);
                let err = t2.put(&cf, b"x", &num(b + 1)).unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Deadlock, "{ctx}: {err}");
                t2.rollback().unwrap();
                h.join().unwrap().unwrap();
            });
            assert_eq!(db_num(&db, b"x"), 1, "{ctx}");
            continue;
        }

        t1.put(&cf, b"x", &num(a + 1)).unwrap();
        t1.commit().unwrap();
        let put = t2.put(&cf, b"x", &num(b + 1));
        match (level, mode) {
            (IsolationLevel::ReadCommitted, _) => {
                put.unwrap();
                t2.commit().unwrap();
                assert_eq!(
                    db_num(&db, b"x"),
                    1,
                    "{ctx}: the lost update read committed allows"
                );
            }
            (_, Concurrency::Pessimistic) => {
                let err = put.unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx}: {err}");
                t2.rollback().unwrap();
                assert_eq!(db_num(&db, b"x"), 1, "{ctx}");
            }
            (_, Concurrency::Optimistic) => {
                put.unwrap();
                let err = t2.commit().unwrap_err();
                assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx}: {err}");
                assert_eq!(db_num(&db, b"x"), 1, "{ctx}");
            }
        }
    }
}

/// Write skew: two doctors on call (x = y = 1); each transaction reads both and takes itself
/// off call if the other is on. Read committed and repeatable read let both commit (nobody is
/// on call: the anomaly). Serializable prevents it: optimistic, the second commit fails with
/// `Conflict` (the key it read changed); pessimistic, the shared locks make the two upgrades
/// wait for each other, and one fails with `Deadlock` (or, as a safety net with the short
/// lock timeout, `TimedOut`; `Conflict` if it got the lock after the other committed).
#[test]
fn write_skew_is_prevented_only_by_serializable() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"x", &num(1)).unwrap();
        db.put(b"y", &num(1)).unwrap();

        if serializable_pessimistic(level, mode) {
            let barrier = Barrier::new(2);
            let go_off_call = |me: &'static [u8]| -> Result<()> {
                let t = begin_with(&db, level, mode, Duration::from_millis(200));
                let run = || -> Result<()> {
                    let on_call = txn_num(&t, &cf, b"x")? + txn_num(&t, &cf, b"y")?;
                    barrier.wait();
                    if on_call >= 2 {
                        t.put(&cf, me, &num(0))?;
                    }
                    t.commit()
                };
                let r = run();
                if r.is_err() {
                    // Let the other one go on (a no-op if commit already ended it).
                    let _ = t.rollback();
                }
                r
            };
            let (r1, r2) = std::thread::scope(|s| {
                let h1 = s.spawn(|| go_off_call(b"x"));
                let h2 = s.spawn(|| go_off_call(b"y"));
                (h1.join().unwrap(), h2.join().unwrap())
            });
            assert!(
                r1.is_err() || r2.is_err(),
                "{ctx}: both transactions of the write skew committed"
            );
            for e in [&r1, &r2].into_iter().filter_map(|r| r.as_ref().err()) {
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::Deadlock | ErrorKind::TimedOut | ErrorKind::Conflict
                    ),
                    "{ctx}: unexpected error {e}"
                );
            }
            assert!(db_num(&db, b"x") + db_num(&db, b"y") >= 1, "{ctx}");
            continue;
        }

        let t1 = begin(&db, level, mode);
        let t2 = begin(&db, level, mode);
        let s1 = txn_num(&t1, &cf, b"x").unwrap() + txn_num(&t1, &cf, b"y").unwrap();
        let s2 = txn_num(&t2, &cf, b"x").unwrap() + txn_num(&t2, &cf, b"y").unwrap();
        assert_eq!((s1, s2), (2, 2), "{ctx}");
        t1.put(&cf, b"x", &num(0)).unwrap();
        t2.put(&cf, b"y", &num(0)).unwrap();
        t1.commit().unwrap();
        let second = t2.commit();
        let total = db_num(&db, b"x") + db_num(&db, b"y");
        if level == IsolationLevel::Serializable {
            let err = second.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{ctx}: {err}");
            assert_eq!(total, 1, "{ctx}");
        } else {
            second.unwrap();
            assert_eq!(total, 0, "{ctx}: the write skew snapshot isolation allows");
        }
    }
}

/// Phantoms: scans are neither validated nor locked at any level. A scan repeated after
/// another transaction inserted into its range sees the new row under read committed, and
/// not under the snapshot levels; in every case a transaction that wrote something based on
/// its scan commits (serializable too: it only protects point reads).
#[test]
fn phantoms_are_not_prevented_at_any_level() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"row/1", b"a").unwrap();
        db.put(b"row/2", b"b").unwrap();

        let t1 = begin(&db, level, mode);
        assert_eq!(scan(&t1, &cf, b"row/", b"row0").len(), 2, "{ctx}");
        let t2 = begin(&db, level, mode);
        t2.put(&cf, b"row/3", b"c").unwrap();
        t2.commit().unwrap();
        let rescanned = scan(&t1, &cf, b"row/", b"row0").len();
        let expected = if level == IsolationLevel::ReadCommitted {
            3
        } else {
            2
        };
        assert_eq!(rescanned, expected, "{ctx}");
        t1.put(&cf, b"count", &num(rescanned as i64)).unwrap();
        t1.commit().unwrap();
        assert_eq!(db_num(&db, b"count"), expected as i64, "{ctx}");
    }
}

/// What happened to each transaction of the read-only anomaly, and what the read-only one saw.
#[derive(Debug)]
struct FeketeOutcome {
    deposit: Result<()>,
    withdraw: Result<()>,
    report: Result<(i64, i64)>,
    checking: i64,
    savings: i64,
}

impl FeketeOutcome {
    /// Whether some serial order of the committed transactions gives the same report and the
    /// same final balances.
    fn is_serializable(&self) -> bool {
        // 0 = deposit, 1 = withdraw, 2 = report.
        let committed = [
            self.deposit.is_ok(),
            self.withdraw.is_ok(),
            self.report.is_ok(),
        ];
        let orders: [[usize; 3]; 6] = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        orders.iter().any(|order| {
            let (mut x, mut y) = (0i64, 0i64);
            let mut report = None;
            for &t in order.iter().filter(|&&t| committed[t]) {
                match t {
                    0 => y += 20,
                    1 => x -= if x + y - 10 < 0 { 11 } else { 10 },
                    _ => report = Some((x, y)),
                }
            }
            (x, y) == (self.checking, self.savings) && report == self.report.as_ref().ok().copied()
        })
    }
}

/// Fekete, O'Neil and O'Neil's read-only transaction anomaly (SIGMOD Record 2004). Checking
/// `x` and savings `y` start at 0. The withdrawal (10 from checking, 1 more as a penalty if it
/// overdraws the total) reads both; the deposit (20 to savings) reads and writes `y` and
/// commits; the read-only report reads both (0, 20) and commits; the withdrawal, which saw no
/// deposit, charges the penalty (x = -11) and commits. No serial order explains it: the
/// report puts the deposit before the withdrawal, the penalty puts it after.
///
/// - Read committed, repeatable read (both modes): all three commit (the anomaly).
/// - Serializable optimistic: the report and the deposit commit; the withdrawal fails at
///   commit with `Conflict` (it read `y`, which the deposit changed).
/// - Serializable pessimistic: the schedule cannot run as written. The deposit's write of
///   `y` waits for the withdrawal's shared lock; the report's read of `y` queues behind that
///   exclusive request; the withdrawal's write of `x` waits for the report's shared lock on
///   `x`, closing a cycle: the withdrawal fails with `Deadlock`. The deposit then commits and
///   the report, whose snapshot predates it, fails with `Conflict` when it gets its lock.
///
/// Every combination is also checked against the serial orders of what committed.
#[test]
fn read_only_anomaly() {
    for (level, mode) in cases() {
        let ctx = format!("{level:?}/{mode:?}");
        let (_dir, db) = open();
        let cf = db.default_cf();
        db.put(b"x", &num(0)).unwrap();
        db.put(b"y", &num(0)).unwrap();

        let withdraw = begin(&db, level, mode);
        let deposit = begin(&db, level, mode);
        let report = begin(&db, level, mode);
        let wx = txn_num(&withdraw, &cf, b"x").unwrap();
        let wy = txn_num(&withdraw, &cf, b"y").unwrap();
        let penalty = if wx + wy - 10 < 0 { 1 } else { 0 };
        let run_deposit = || -> Result<()> {
            let y = txn_num(&deposit, &cf, b"y")?;
            deposit.put(&cf, b"y", &num(y + 20))?;
            deposit.commit()
        };
        let run_report = || -> Result<(i64, i64)> {
            let seen = (txn_num(&report, &cf, b"x")?, txn_num(&report, &cf, b"y")?);
            report.commit()?;
            Ok(seen)
        };
        let run_withdraw = || -> Result<()> {
            withdraw.put(&cf, b"x", &num(wx - 10 - penalty))?;
            withdraw.commit()
        };

        let outcome = if serializable_pessimistic(level, mode) {
            std::thread::scope(|s| {
                let waits = db.lock_statistics().waits;
                let d = s.spawn(run_deposit);
                wait_for_lock_wait(&db, waits);
                let (done_tx, done_rx) = mpsc::channel();
                let r = s.spawn(move || {
                    let out = run_report();
                    done_tx.send(()).unwrap();
                    out
                });
                // The report either blocks (queued behind the deposit) or finishes.
                let deadline = Instant::now() + Duration::from_secs(60);
                while db.lock_statistics().waits <= waits + 1 && done_rx.try_recv().is_err() {
                    assert!(
                        Instant::now() < deadline,
                        "{ctx}: the report neither waits nor ends"
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
                let w = run_withdraw();
                if w.is_err() {
                    withdraw.rollback().unwrap();
                }
                let deposit = d.join().unwrap();
                let report = r.join().unwrap();
                FeketeOutcome {
                    deposit,
                    withdraw: w,
                    report,
                    checking: db_num(&db, b"x"),
                    savings: db_num(&db, b"y"),
                }
            })
        } else {
            let deposit = run_deposit();
            let report = run_report();
            let w = run_withdraw();
            FeketeOutcome {
                deposit,
                withdraw: w,
                report,
                checking: db_num(&db, b"x"),
                savings: db_num(&db, b"y"),
            }
        };

        match (level, mode) {
            (IsolationLevel::Serializable, Concurrency::Optimistic) => {
                assert!(
                    outcome.deposit.is_ok() && outcome.report.is_ok(),
                    "{ctx}: {outcome:?}"
                );
                let e = outcome.withdraw.as_ref().unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Conflict, "{ctx}: {e}");
                assert!(outcome.is_serializable(), "{ctx}: {outcome:?}");
            }
            (IsolationLevel::Serializable, Concurrency::Pessimistic) => {
                let failed = [
                    outcome.deposit.as_ref().err(),
                    outcome.withdraw.as_ref().err(),
                    outcome.report.as_ref().err(),
                ];
                for e in failed.iter().flatten() {
                    assert!(
                        matches!(
                            e.kind(),
                            ErrorKind::Deadlock | ErrorKind::Conflict | ErrorKind::TimedOut
                        ),
                        "{ctx}: {e}"
                    );
                }
                assert!(
                    outcome.is_serializable(),
                    "{ctx}: not serializable: {outcome:?}"
                );
            }
            _ => {
                assert!(
                    outcome.deposit.is_ok() && outcome.withdraw.is_ok(),
                    "{ctx}: {outcome:?}"
                );
                assert_eq!(
                    outcome.report.as_ref().ok(),
                    Some(&(0, 20)),
                    "{ctx}: {outcome:?}"
                );
                assert_eq!((outcome.checking, outcome.savings), (-11, 20), "{ctx}");
                assert!(
                    !outcome.is_serializable(),
                    "{ctx}: the schedule was expected to show the anomaly"
                );
            }
        }
    }
}
