#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! A locking scan sees the transaction's own uncommitted writes (puts, updates, deletes)
//! merged over the newest committed rows, in both directions, and never waits for its own
//! gap locks when it inserts into the range it scanned.

use std::time::Duration;

use riptide::{Db, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

#[test]
fn a_locking_scan_sees_its_own_uncommitted_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    db.put(b"d", b"4").unwrap();
    let txn = db
        .begin_transaction(
            TransactionOptions::default()
                .isolation(IsolationLevel::Serializable)
                .current_reads(true)
                .lock_timeout(Duration::from_millis(100)),
        )
        .unwrap();
    assert_eq!(txn.get(&cf, b"a").unwrap(), Some(b"1".to_vec()));
    txn.insert(&cf, b"c", b"mine").unwrap();
    txn.put(&cf, b"d", b"changed").unwrap();
    txn.delete(&cf, b"b").unwrap();
    // Committed by someone else after the snapshot.
    db.put(b"e", b"5").unwrap();

    let mut it = txn
        .iter_locking(&cf, ReadOptions::default(), false)
        .unwrap();
    let mut seen = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    let expected = vec![
        (b"a".to_vec(), b"1".to_vec()),
        (b"c".to_vec(), b"mine".to_vec()),
        (b"d".to_vec(), b"changed".to_vec()),
        (b"e".to_vec(), b"5".to_vec()),
    ];
    assert_eq!(seen, expected);
    let mut back = Vec::new();
    it.seek_to_last().unwrap();
    while it.valid() {
        back.push(it.key().to_vec());
        it.prev().unwrap();
    }
    assert_eq!(
        back,
        vec![b"e".to_vec(), b"d".to_vec(), b"c".to_vec(), b"a".to_vec()]
    );
    // A write made while the iterator is open is seen at the next step.
    it.seek(b"c").unwrap();
    txn.insert(&cf, b"cc", b"later").unwrap();
    it.next().unwrap();
    assert_eq!(it.key(), b"cc");
    drop(it);
    // Its own gap locks do not stop its inserts.
    txn.insert(&cf, b"f", b"6").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"cc").unwrap(), Some(b"later".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), None);
    assert_eq!(db.lock_statistics().gap_locks, 0);
}
