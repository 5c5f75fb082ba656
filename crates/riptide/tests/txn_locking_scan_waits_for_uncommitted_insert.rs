#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! A locking scan under repeatable read meets another transaction's uncommitted insert (made
//! before the scan started, or ahead of it while it runs): it waits for that transaction's
//! row lock (timing out while it stays open), and once it commits, reads the row.

use std::time::{Duration, Instant};

use riptide::{
    Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, Transaction, TransactionOptions,
};

fn txn(db: &Db, timeout: Duration) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .current_reads(true)
            .lock_timeout(timeout),
    )
    .unwrap()
}

fn scan(t: &Transaction, db: &Db) -> riptide::Result<Vec<Vec<u8>>> {
    let mut it = t.iter_locking(&db.default_cf(), ReadOptions::default(), false)?;
    let mut out = Vec::new();
    it.seek_to_first()?;
    while it.valid() {
        out.push(it.key().to_vec());
        it.next()?;
    }
    Ok(out)
}

#[test]
fn a_locking_scan_waits_for_an_uncommitted_insert() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();

    // The storage_engine trx.level_repeatable_read case: the scanner's snapshot is older
    // than another transaction's uncommitted inserts.
    let scanner = txn(&db, Duration::from_millis(200));
    assert_eq!(scanner.get(&cf, b"a").unwrap(), Some(b"1".to_vec()));
    let writer = txn(&db, Duration::from_secs(30));
    writer.insert(&cf, b"b", b"2").unwrap();
    let started = Instant::now();
    let err = scan(&scanner, &db).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    assert!(started.elapsed() >= Duration::from_millis(200));
    writer.commit().unwrap();
    assert_eq!(
        scan(&scanner, &db).unwrap(),
        vec![b"a".to_vec(), b"b".to_vec()]
    );
    // The plain snapshot read is unchanged.
    assert_eq!(scanner.get(&cf, b"b").unwrap(), None);
    scanner.commit().unwrap();

    // An insert ahead of a running scan goes ahead (the scan has not reached it), and the
    // scan waits for it when it gets there; here the inserter commits while the scan waits.
    let scanner = txn(&db, Duration::from_secs(30));
    let mut it = scanner
        .iter_locking(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"a");
    let writer = txn(&db, Duration::from_millis(200));
    writer.insert(&cf, b"ab", b"ahead").unwrap();
    // Behind the scan (inside the walked range): waits and times out.
    let err = writer.insert(&cf, b"a", b"again").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    let waits = db.lock_statistics().waits;
    std::thread::scope(|s| {
        let committer = s.spawn(|| {
            let deadline = Instant::now() + Duration::from_secs(30);
            while db.lock_statistics().waits <= waits {
                assert!(Instant::now() < deadline, "the scan never waited");
                std::thread::yield_now();
            }
            writer.commit().unwrap();
        });
        it.next().unwrap();
        committer.join().unwrap();
    });
    assert_eq!(it.key(), b"ab");
    assert_eq!(it.value(), b"ahead");
    it.next().unwrap();
    assert_eq!(it.key(), b"b");
    drop(it);
    scanner.commit().unwrap();
}
