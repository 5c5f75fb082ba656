#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Interrupting a transaction's lock waits from another thread (MariaDB's `KILL QUERY`, a
//! shutdown): a waiting row lock, an insert into a locked gap and a locking iterator's wait
//! end with `Interrupted` promptly; the transaction keeps its earlier locks and goes on
//! once re-armed; an interrupt raised before the wait begins is honoured; the handle
//! outlives its transaction and the database harmlessly.

use std::thread;
use std::time::{Duration, Instant};

use riptide::{
    Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, Transaction, TransactionOptions,
};

/// Long enough that no correct wait in these tests ever reaches it.
const LONG: Duration = Duration::from_secs(60);

/// How soon an interrupted wait must return (generous for a loaded two-core machine: a
/// missed wake-up would show as the 60 s timeout).
const PROMPT: Duration = Duration::from_millis(500);

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

fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LONG, "gave up waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// Runs `wait` on another thread, interrupts `t` once the database counts one more lock
/// wait (`insert`: insert-intention wait), and returns the outcome with how long after
/// the interrupt it came back.
fn interrupt_wait<T: Send>(
    db: &Db,
    t: &Transaction,
    insert: bool,
    wait: impl FnOnce() -> riptide::Result<T> + Send,
) -> (riptide::Result<T>, Duration) {
    let before = db.lock_statistics();
    let handle = t.interrupt_handle();
    thread::scope(|s| {
        let waiter = s.spawn(move || {
            let r = wait();
            (r, Instant::now())
        });
        wait_until("the wait begins", || {
            let now = db.lock_statistics();
            if insert {
                now.insert_waits > before.insert_waits
            } else {
                now.waits > before.waits
            }
        });
        let fired = Instant::now();
        handle.interrupt();
        let (r, returned) = waiter.join().unwrap();
        (r, returned.saturating_duration_since(fired))
    })
}

#[test]
fn a_row_lock_wait_is_interrupted_and_the_transaction_goes_on() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    db.put(b"k", b"old").unwrap();
    let holder = txn(&db);
    holder.put(&cf, b"k", b"holder's").unwrap();
    let waiter = txn(&db);
    waiter.put(&cf, b"mine", b"1").unwrap();

    let (r, took) = interrupt_wait(&db, &waiter, false, || {
        waiter.get_for_update(&cf, b"k", true)
    });
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(
        took < PROMPT,
        "the interrupted wait returned {took:?} later"
    );
    eprintln!("row lock wait returned {took:?} after the interrupt");
    assert_eq!(db.lock_statistics().interrupts, 1);
    assert!(waiter.is_interrupted());

    // It keeps its earlier lock: another transaction cannot take it.
    let other = txn(&db);
    other.set_lock_timeout(Duration::ZERO);
    let e = other.get_for_update(&cf, b"mine", true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
    // Until re-armed, every wait fails at once; locks free at once are still granted.
    let e = waiter.put(&cf, b"k", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Interrupted, "{e}");
    waiter.put(&cf, b"free", b"2").unwrap();
    // Re-armed, it waits normally and gets the row as the holder left it.
    waiter.clear_interrupt();
    assert!(!waiter.is_interrupted());
    thread::scope(|s| {
        let w = s.spawn(|| waiter.get_for_update(&cf, b"k", true));
        wait_until("the waiter waits again", || db.lock_statistics().waits >= 2);
        holder.commit().unwrap();
        assert_eq!(w.join().unwrap().unwrap(), Some(b"holder's".to_vec()));
    });
    waiter.put(&cf, b"k", b"waiter's").unwrap();
    waiter.commit().unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"waiter's".to_vec()));
    assert_eq!(db.get(b"mine").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn an_interrupt_before_the_wait_begins_is_honoured() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    let holder = txn(&db);
    holder.put(&cf, b"k", b"1").unwrap();
    let waiter = txn(&db);
    // KILL QUERY arrives while the statement is between two waits.
    waiter.interrupt_handle().interrupt();
    let started = Instant::now();
    let err = waiter.delete(&cf, b"k").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(started.elapsed() < PROMPT);
    assert_eq!(db.lock_statistics().waits, 0, "it never waited");
    assert_eq!(waiter.write_count(), 0, "the failed write left nothing");
}

#[test]
fn an_insert_into_a_locked_gap_is_interrupted() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    for k in [b"k10", b"k20", b"k30"] {
        db.put(k, b"v").unwrap();
    }
    let scanner = txn(&db);
    let mut it = scanner
        .iter_locking(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    while it.valid() {
        it.next().unwrap();
    }
    drop(it);
    let inserter = txn(&db);
    let (r, took) = interrupt_wait(&db, &inserter, true, || {
        inserter.insert(&cf, b"k15", b"new")
    });
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(err.to_string().contains("gap locked by"), "{err}");
    assert!(
        took < PROMPT,
        "the interrupted insert returned {took:?} later"
    );
    eprintln!("insert-intention wait returned {took:?} after the interrupt");
    // Nothing of the failed insert remains; once re-armed and the gap is free, it goes in.
    assert_eq!(inserter.get(&cf, b"k15").unwrap(), None);
    assert_eq!(inserter.write_count(), 0);
    inserter.clear_interrupt();
    scanner.commit().unwrap();
    inserter.insert(&cf, b"k15", b"new").unwrap();
    inserter.commit().unwrap();
    assert_eq!(db.get(b"k15").unwrap(), Some(b"new".to_vec()));
}

#[test]
fn a_locking_iterator_wait_is_interrupted() {
    let (_dir, db) = open();
    let cf = db.default_cf();
    for k in [b"a", b"b", b"c"] {
        db.put(k, b"v").unwrap();
    }
    let holder = txn(&db);
    holder.put(&cf, b"b", b"held").unwrap();
    let scanner = txn(&db);
    let (r, took) = interrupt_wait(&db, &scanner, false, || {
        let mut it = scanner.iter_locking(&cf, ReadOptions::default(), true)?;
        it.seek_to_first()?;
        let first = it.key().to_vec();
        it.next()?;
        Ok(first)
    });
    let err = r.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Interrupted, "{err}");
    assert!(
        took < PROMPT,
        "the interrupted step returned {took:?} later"
    );
    // The scan's first row stays locked by it.
    let other = txn(&db);
    other.set_lock_timeout(Duration::ZERO);
    let e = other.get_for_update(&cf, b"a", true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimedOut, "{e}");
}

#[test]
fn the_handle_outlives_its_transaction_and_the_database() {
    let (dir, db) = open();
    let t = txn(&db);
    let handle = t.interrupt_handle();
    let copy = handle.clone();
    assert_eq!(handle.txn_id(), t.id());
    assert!(!handle.is_interrupted());
    t.commit().unwrap();
    drop(t);
    handle.interrupt();
    assert!(copy.is_interrupted());
    db.close().unwrap();
    // The directory is free again although a handle lives on.
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    copy.interrupt();
    drop(copy);
    drop(handle);
    let t = txn(&db);
    t.put(&db.default_cf(), b"k", b"v").unwrap();
    t.commit().unwrap();
}
