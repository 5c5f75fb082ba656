#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Transaction::iter_current` reads the newest committed data merged with the
//! transaction's own writes, whatever its snapshot, and locks nothing: another transaction
//! can still write what it read.

use std::time::Duration;

use riptide::{Db, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

fn keys(it: &mut riptide::TxnIterator) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

#[test]
fn a_current_iterator_sees_commits_after_the_snapshot_and_own_writes_without_locking() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    let opts = || {
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .current_reads(true)
            .lock_timeout(Duration::from_millis(200))
    };
    let txn = db.begin_transaction(opts()).unwrap();
    assert_eq!(txn.get(&cf, b"a").unwrap(), Some(b"1".to_vec()));
    txn.put(&cf, b"own", b"x").unwrap();

    // Committed after the snapshot.
    db.put(b"b", b"2").unwrap();
    db.delete(b"a").unwrap();

    let mut plain = txn.iter(&cf, ReadOptions::default()).unwrap();
    assert_eq!(keys(&mut plain), vec![b"a".to_vec(), b"own".to_vec()]);
    let mut current = txn.iter_current(&cf, ReadOptions::default()).unwrap();
    assert!(!current.is_locking());
    assert_eq!(
        keys(&mut current),
        vec![b"b".to_vec(), b"own".to_vec()],
        "newest committed rows plus the transaction's own"
    );
    drop(current);

    // Nothing was locked: another transaction writes the rows it read and commits.
    let other = db.begin_transaction(opts()).unwrap();
    other.put(&cf, b"b", b"3").unwrap();
    other.commit().unwrap();
    txn.rollback().unwrap();
    assert!(txn.iter_current(&cf, ReadOptions::default()).is_err());
}
