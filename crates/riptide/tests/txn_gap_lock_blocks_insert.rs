#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Under repeatable read, a locking scan gap-locks the range it walked: another
//! transaction's insert of a new key into it waits and times out, an insert outside it does
//! not wait, and once the scanning transaction commits the insert goes through.

use std::time::{Duration, Instant};

use riptide::{Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

#[test]
fn an_insert_into_a_scanned_gap_waits_and_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    for k in [b"k10", b"k20", b"k30"] {
        db.put(k, b"v").unwrap();
    }
    let opts = TransactionOptions::default()
        .isolation(IsolationLevel::RepeatableRead)
        .current_reads(true)
        .lock_timeout(Duration::from_millis(300));
    let scanner = db.begin_transaction(opts.clone()).unwrap();
    // SELECT ... WHERE k BETWEEN k10 AND k20 FOR UPDATE: seek, read k10, k20, stop at k30.
    let mut it = scanner
        .iter_locking(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek(b"k10").unwrap();
    let mut seen = Vec::new();
    while it.valid() && it.key() <= b"k20".as_slice() {
        seen.push(it.key().to_vec());
        it.next().unwrap();
    }
    assert_eq!(seen, vec![b"k10".to_vec(), b"k20".to_vec()]);
    assert_eq!(it.key(), b"k30", "the scan stopped on the next row");
    drop(it);

    let inserter = db.begin_transaction(opts).unwrap();
    let before = db.lock_statistics();
    let started = Instant::now();
    let err = inserter.insert(&cf, b"k15", b"new").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(err.to_string().contains("gap locked by"), "{err}");
    let after = db.lock_statistics();
    assert_eq!(after.insert_waits, before.insert_waits + 1);
    assert_eq!(after.gap_locks, 1);
    // Nothing of the failed insert remains in the transaction.
    assert_eq!(inserter.get(&cf, b"k15").unwrap(), None);
    assert_eq!(inserter.write_count(), 0);
    // Up to the row the scan stopped on (InnoDB's next-key lock) ...
    let err = inserter.insert(&cf, b"k25", b"new").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    // ... but not past it, nor before where it started.
    inserter.insert(&cf, b"k35", b"new").unwrap();
    inserter.insert(&cf, b"k05", b"new").unwrap();
    scanner.commit().unwrap();
    assert_eq!(db.lock_statistics().gap_locks, 0);
    inserter.insert(&cf, b"k15", b"new").unwrap();
    inserter.commit().unwrap();
    assert_eq!(db.get(b"k15").unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get(b"k35").unwrap(), Some(b"new".to_vec()));
}
