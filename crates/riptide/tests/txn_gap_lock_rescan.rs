#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
//! A transaction that scans a range again, while another transaction's insert into the gap
//! it locked on the first scan waits for it, reads the range again without that insert and
//! without waiting for it (found by tools/sqlcheck: a SERIALIZABLE `SELECT * FROM t` run
//! twice got ER_LOCK_DEADLOCK where InnoDB reads the same rows and the insert goes on
//! waiting).

use std::sync::Arc;
use std::time::{Duration, Instant};

use riptide::{Db, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions};

fn scan(txn: &riptide::Transaction, cf: &riptide::ColumnFamily) -> Vec<Vec<u8>> {
    let mut it = txn.iter_locking(cf, ReadOptions::default(), false).unwrap();
    it.seek_to_first().unwrap();
    let mut keys = Vec::new();
    while it.valid() {
        keys.push(it.key().to_vec());
        it.next().unwrap();
    }
    keys
}

#[test]
fn a_second_scan_does_not_wait_for_an_insert_its_gap_lock_holds_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap());
    let cf = db.default_cf();
    for k in [b"k10", b"k20", b"k30"] {
        db.put(k, b"v").unwrap();
    }
    let opts = TransactionOptions::default()
        .isolation(IsolationLevel::RepeatableRead)
        .current_reads(true)
        .lock_timeout(Duration::from_secs(5));
    let reader = db.begin_transaction(opts.clone()).unwrap();
    let first = scan(&reader, &cf);
    assert_eq!(first.len(), 3);

    let (db2, opts2) = (Arc::clone(&db), opts.clone());
    let inserter = std::thread::spawn(move || {
        let txn = db2.begin_transaction(opts2).unwrap();
        let started = Instant::now();
        txn.insert(&db2.default_cf(), b"k15", b"new").unwrap();
        let waited = started.elapsed();
        txn.commit().unwrap();
        waited
    });
    // Let the insert reach its wait on the reader's gap lock.
    let deadline = Instant::now() + Duration::from_secs(5);
    while db.lock_statistics().insert_waits == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        db.lock_statistics().insert_waits,
        1,
        "the insert did not wait"
    );

    let started = Instant::now();
    let second = scan(&reader, &cf);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the second scan waited {:?}",
        started.elapsed()
    );
    assert_eq!(second, first, "the waiting insert is not in the range yet");
    assert_eq!(db.lock_statistics().deadlocks, 0);
    std::thread::sleep(Duration::from_millis(200));
    reader.commit().unwrap();
    let waited = inserter.join().unwrap();
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert_eq!(db.get(b"k15").unwrap(), Some(b"new".to_vec()));
}
