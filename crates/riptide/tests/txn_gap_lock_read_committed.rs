#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Under read committed a locking scan takes no gap locks (as InnoDB): an insert into the
//! range it read does not wait; the rows it read are still row-locked.

use std::time::Duration;

use riptide::{Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

#[test]
fn read_committed_locking_scans_do_not_block_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"c", b"3").unwrap();
    let opts = TransactionOptions::default()
        .isolation(IsolationLevel::ReadCommitted)
        .current_reads(true)
        .lock_timeout(Duration::from_millis(100));
    let scanner = db.begin_transaction(opts.clone()).unwrap();
    let mut it = scanner
        .iter_locking(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key().to_vec());
        it.next().unwrap();
    }
    assert_eq!(seen, vec![b"a".to_vec(), b"c".to_vec()]);
    assert_eq!(db.lock_statistics().gap_locks, 0);

    let inserter = db.begin_transaction(opts).unwrap();
    inserter.insert(&cf, b"b", b"2").unwrap();
    inserter.insert(&cf, b"z", b"26").unwrap();
    // The rows themselves are locked.
    let err = inserter.put(&cf, b"c", b"x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut);
    inserter.commit().unwrap();
    // The scanner's next scan sees the committed insert (read committed).
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"a");
    it.next().unwrap();
    assert_eq!(it.key(), b"b");
    drop(it);
    scanner.commit().unwrap();
}
