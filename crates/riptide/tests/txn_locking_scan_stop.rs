#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! A locking scan with a stop key (`TxnIterator::set_stop`, MariaDB's end of range) ends
//! before the first key past it. Under read committed it does not lock that key, so another
//! transaction can write it at once; under repeatable read it still takes the next-key lock
//! on it (InnoDB's), and the write waits.

use std::time::Duration;

use riptide::{Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

fn opts(isolation: IsolationLevel) -> TransactionOptions {
    TransactionOptions::default()
        .isolation(isolation)
        .current_reads(true)
        .lock_timeout(Duration::from_millis(100))
}

#[test]
fn a_locking_scan_ends_at_its_stop_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    for k in [&b"a"[..], b"b", b"c", b"d"] {
        db.put(k, b"v").unwrap();
    }
    for isolation in [
        IsolationLevel::ReadCommitted,
        IsolationLevel::RepeatableRead,
    ] {
        let scanner = db.begin_transaction(opts(isolation)).unwrap();
        let mut it = scanner
            .iter_locking(&cf, ReadOptions::default(), true)
            .unwrap();
        // Up to and including "b": the stop is just past it.
        it.set_stop(Some(b"b\0"));
        it.seek(b"a").unwrap();
        let mut seen = Vec::new();
        while it.valid() {
            seen.push(it.key().to_vec());
            it.next().unwrap();
        }
        assert_eq!(seen, vec![b"a".to_vec(), b"b".to_vec()], "{isolation:?}");
        // A seek past the stop ends at once.
        it.seek(b"c").unwrap();
        assert!(!it.valid());

        let other = db.begin_transaction(opts(isolation)).unwrap();
        let err = other.put(&cf, b"b", b"x").unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::TimedOut,
            "{isolation:?}: the rows read are locked"
        );
        let past = other.put(&cf, b"c", b"x");
        match isolation {
            IsolationLevel::ReadCommitted => past.unwrap(),
            _ => assert_eq!(
                past.unwrap_err().kind(),
                ErrorKind::TimedOut,
                "next-key lock"
            ),
        }
        // Never reached: unlocked at every level.
        other.put(&cf, b"d", b"x").unwrap();
        other.rollback().unwrap();

        // Cleared: the scan goes on past it, backward steps ignore it.
        it.set_stop(None);
        it.seek(b"c").unwrap();
        assert_eq!(it.key(), b"c");
        it.set_stop(Some(b"a"));
        it.prev().unwrap();
        assert_eq!(it.key(), b"b");
        drop(it);
        scanner.rollback().unwrap();
    }
}

#[test]
fn a_plain_iterator_ends_at_its_stop_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"c", b"3").unwrap();
    let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
    txn.put(&cf, b"b", b"2").unwrap();
    let mut it = txn.iter(&cf, ReadOptions::default()).unwrap();
    it.set_stop(Some(b"c"));
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"a");
    it.next().unwrap();
    assert_eq!(it.key(), b"b", "the transaction's own write");
    it.next().unwrap();
    assert!(!it.valid());
    drop(it);
    txn.rollback().unwrap();
}
