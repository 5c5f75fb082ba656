#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! A locking scan (`Transaction::iter_locking`) reads the newest committed rows, not the
//! transaction's snapshot: a row committed after the snapshot is seen (and locked), while a
//! plain iterator of the same transaction still reads the snapshot.

use std::time::Duration;

use riptide::{
    Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions, TxnIterator,
};

fn collect_forward(it: &mut TxnIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

fn collect_backward(it: &mut TxnIterator) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    it.seek_to_last().unwrap();
    while it.valid() {
        out.push(it.key().to_vec());
        it.prev().unwrap();
    }
    out
}

#[test]
fn a_locking_scan_sees_a_row_committed_after_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"c", b"old").unwrap();
    let opts = || {
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .current_reads(true)
            .lock_timeout(Duration::from_millis(200))
    };
    let txn = db.begin_transaction(opts()).unwrap();
    // The snapshot: a=1, c=old.
    assert_eq!(txn.get(&cf, b"a").unwrap(), Some(b"1".to_vec()));

    // Committed after the snapshot: a new row, an update, a delete.
    db.put(b"b", b"2").unwrap();
    db.put(b"c", b"new").unwrap();
    db.delete(b"a").unwrap();

    let mut plain = txn.iter(&cf, ReadOptions::default()).unwrap();
    assert!(!plain.is_locking());
    assert_eq!(
        collect_forward(&mut plain),
        vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"c".to_vec(), b"old".to_vec())
        ],
        "a plain iterator reads the snapshot"
    );

    let mut locking = txn
        .iter_locking(&cf, ReadOptions::default(), false)
        .unwrap();
    assert!(locking.is_locking());
    assert_eq!(
        collect_forward(&mut locking),
        vec![
            (b"b".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"new".to_vec())
        ],
        "a locking iterator reads the newest committed rows"
    );
    assert_eq!(
        collect_backward(&mut locking),
        vec![b"c".to_vec(), b"b".to_vec()]
    );

    // The rows it returned are share-locked: another transaction cannot update them.
    let other = db.begin_transaction(opts()).unwrap();
    let err = other.put(&cf, b"b", b"x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    drop(locking);
    drop(plain);
    txn.commit().unwrap();
    other.put(&cf, b"b", b"x").unwrap();
    other.commit().unwrap();
    assert_eq!(db.get(b"b").unwrap(), Some(b"x".to_vec()));
}
