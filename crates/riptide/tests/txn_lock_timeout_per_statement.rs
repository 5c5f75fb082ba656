#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Transaction::set_lock_timeout` (MariaDB's `NOWAIT` / `WAIT n` for one statement) changes
//! the limit of every later wait of the transaction: point locking reads, writes, locking
//! iterators, inserts into a locked gap, and an optimistic commit's locks. Zero fails at
//! once; a wait begun before keeps its limit.

use std::thread;
use std::time::{Duration, Instant};

use riptide::{
    Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, Transaction,
    TransactionOptions,
};

const LONG: Duration = Duration::from_secs(60);

fn open() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

fn txn(db: &Db) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .current_reads(true)
            .lock_timeout(LONG),
    )
    .unwrap()
}

/// Asserts `r` failed with `TimedOut` and returns the message.
fn timed_out<T: std::fmt::Debug>(r: riptide::Result<T>) -> String {
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    err.to_string()
}

#[test]
fn every_wait_path_reads_the_current_timeout() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    for k in [b"a", b"b", b"c"] {
        db.put(k, b"v").unwrap();
    }
    let holder = txn(&db);
    holder.put(&cf, b"b", b"held").unwrap();
    let t = txn(&db);
    assert_eq!(t.lock_timeout(), LONG);

    // NOWAIT: every path fails at once.
    t.set_lock_timeout(Duration::ZERO);
    assert_eq!(t.lock_timeout(), Duration::ZERO);
    let started = Instant::now();
    assert!(timed_out(t.get_for_update(&cf, b"b", true)).contains("timeout 0"));
    timed_out(t.get_for_update(&cf, b"b", false));
    timed_out(t.put(&cf, b"b", b"x"));
    timed_out(t.delete(&cf, b"b"));
    let mut it = t.iter_locking(&cf, ReadOptions::default(), false).unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"a");
    timed_out(it.next());
    drop(it);
    assert!(started.elapsed() < Duration::from_secs(5));

    // WAIT 1 (here 150 ms): the waits last that long, then time out.
    t.set_lock_timeout(Duration::from_millis(150));
    let started = Instant::now();
    let msg = timed_out(t.get_for_update(&cf, b"b", true));
    assert!(msg.contains("limit 150ms"), "{msg}");
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert!(started.elapsed() < LONG / 2);

    // Back to the session's limit: the wait lasts until the holder commits.
    t.set_lock_timeout(LONG);
    let waits = db.lock_statistics().waits;
    thread::scope(|s| {
        let w = s.spawn(|| t.get_for_update(&cf, b"b", true));
        let started = Instant::now();
        while db.lock_statistics().waits == waits {
            assert!(started.elapsed() < LONG, "the wait never began");
            thread::sleep(Duration::from_millis(1));
        }
        holder.commit().unwrap();
        assert_eq!(w.join().unwrap().unwrap(), Some(b"held".to_vec()));
    });
}

#[test]
fn an_insert_into_a_locked_gap_uses_the_current_timeout() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    for k in [b"k10", b"k20"] {
        db.put(k, b"v").unwrap();
    }
    let scanner = txn(&db);
    let mut it = scanner
        .iter_locking(&cf, ReadOptions::default(), false)
        .unwrap();
    it.seek_to_first().unwrap();
    while it.valid() {
        it.next().unwrap();
    }
    drop(it);
    let inserter = txn(&db);
    inserter.set_lock_timeout(Duration::ZERO);
    let started = Instant::now();
    let msg = timed_out(inserter.insert(&cf, b"k15", b"new"));
    assert!(msg.contains("gap locked by"), "{msg}");
    assert!(started.elapsed() < Duration::from_secs(5));
    inserter.set_lock_timeout(Duration::from_millis(100));
    let started = Instant::now();
    timed_out(inserter.insert(&cf, b"k15", b"new"));
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[test]
fn an_optimistic_commit_uses_the_current_timeout() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let holder = txn(&db);
    holder.put(&cf, b"k", b"held").unwrap();
    let opt = db
        .begin_transaction(
            TransactionOptions::default()
                .concurrency(Concurrency::Optimistic)
                .lock_timeout(LONG),
        )
        .unwrap();
    opt.put(&cf, b"k", b"optimistic").unwrap();
    opt.set_lock_timeout(Duration::ZERO);
    let started = Instant::now();
    timed_out(opt.commit());
    assert!(started.elapsed() < Duration::from_secs(5));
    holder.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"held".to_vec()));
}
