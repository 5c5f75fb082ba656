//! `TransactionOptions::current_reads` (InnoDB's current reads, what the MariaDB handler
//! uses): a locking read or write that waited for a row lock works on what the lock holder
//! committed instead of failing with `Conflict`; plain reads keep the snapshot. Without the
//! option, repeatable read stays snapshot isolation (first committer wins).
//!
//! Waits are ordered by the lock manager's wait counter, never by sleeping a guessed time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use riptide::{Db, ErrorKind, IsolationLevel, Options, SyncMode, Transaction, TransactionOptions};

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

fn txn(db: &Db, current: bool) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .lock_timeout(Duration::from_secs(30))
            .current_reads(current),
    )
    .unwrap()
}

/// Waits until the lock manager has counted more than `before` waits.
fn wait_for_waiter(db: &Db, before: u64) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while db.lock_statistics().waits <= before {
        assert!(
            Instant::now() < deadline,
            "the other transaction never waited"
        );
        std::thread::yield_now();
    }
}

#[test]
fn a_locking_read_that_waited_sees_the_holders_commit() {
    let (_d, db) = open();
    let cf = db.default_cf();
    db.put(b"row", b"1").unwrap();
    let holder = txn(&db, true);
    holder.put(&cf, b"row", b"2").unwrap();
    // The waiter's snapshot is taken before the holder commits.
    let waiter = txn(&db, true);
    assert_eq!(waiter.get(&cf, b"other").unwrap(), None);
    let waits = db.lock_statistics().waits;
    std::thread::scope(|s| {
        let h = s.spawn(|| waiter.get_for_update(&cf, b"row", true));
        wait_for_waiter(&db, waits);
        holder.commit().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), Some(b"2".to_vec()));
    });
    // The plain read still sees the snapshot; the write works on the current row.
    assert_eq!(waiter.get(&cf, b"row").unwrap(), Some(b"1".to_vec()));
    waiter.put(&cf, b"row", b"20").unwrap();
    waiter.commit().unwrap();
    assert_eq!(db.get(b"row").unwrap(), Some(b"20".to_vec()));
}

#[test]
fn a_write_after_a_newer_commit_is_no_conflict_with_current_reads() {
    let (_d, db) = open();
    let cf = db.default_cf();
    db.put(b"row", b"1").unwrap();
    let t = txn(&db, true);
    assert_eq!(t.get(&cf, b"row").unwrap(), Some(b"1".to_vec()));
    db.put(b"row", b"2").unwrap();
    // The key changed after the snapshot: a current read sees the change, the write goes on.
    assert_eq!(
        t.get_for_update(&cf, b"row", true).unwrap(),
        Some(b"2".to_vec())
    );
    t.delete(&cf, b"row").unwrap();
    t.commit().unwrap();
    assert_eq!(db.get(b"row").unwrap(), None);
}

#[test]
fn without_current_reads_the_first_committer_wins() {
    let (_d, db) = open();
    let cf = db.default_cf();
    db.put(b"row", b"1").unwrap();
    let t = txn(&db, false);
    assert_eq!(t.get(&cf, b"row").unwrap(), Some(b"1".to_vec()));
    db.put(b"row", b"2").unwrap();
    let err = t.get_for_update(&cf, b"row", true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
    t.rollback().unwrap();
    let t = txn(&db, false);
    assert_eq!(t.get(&cf, b"row").unwrap(), Some(b"2".to_vec()));
    db.put(b"row", b"3").unwrap();
    let err = t.put(&cf, b"row", b"4").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict, "{err}");
}

#[test]
fn a_first_step_that_waited_reads_the_holders_commit_even_without_current_reads() {
    // The snapshot is taken at the first operation, which is when the lock is granted.
    let (_d, db) = open();
    let cf = db.default_cf();
    db.put(b"row", b"1").unwrap();
    let holder = txn(&db, false);
    holder.put(&cf, b"row", b"2").unwrap();
    let waiter = txn(&db, false);
    let waits = db.lock_statistics().waits;
    std::thread::scope(|s| {
        let h = s.spawn(|| waiter.get_for_update(&cf, b"row", true));
        wait_for_waiter(&db, waits);
        holder.commit().unwrap();
        assert_eq!(h.join().unwrap().unwrap(), Some(b"2".to_vec()));
    });
    waiter.put(&cf, b"row", b"3").unwrap();
    waiter.commit().unwrap();
    assert_eq!(db.get(b"row").unwrap(), Some(b"3".to_vec()));
}

#[test]
fn current_reads_still_serialize_read_modify_writes() {
    // Two transactions increment one counter 200 times each with get_for_update: no lost
    // update, no conflict error.
    let (_d, db) = open();
    let cf = db.default_cf();
    db.put(b"n", b"0").unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..200 {
                    let t = txn(&db, true);
                    let n: u64 =
                        String::from_utf8(t.get_for_update(&cf, b"n", true).unwrap().unwrap())
                            .unwrap()
                            .parse()
                            .unwrap();
                    t.put(&cf, b"n", (n + 1).to_string().as_bytes()).unwrap();
                    t.commit().unwrap();
                }
            });
        }
    });
    assert_eq!(db.get(b"n").unwrap(), Some(b"400".to_vec()));
}
