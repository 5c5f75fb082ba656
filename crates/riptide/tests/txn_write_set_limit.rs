//! `Options::max_txn_write_set_bytes`: once a transaction's write set holds more than the
//! limit, its next write fails with `LimitExceeded`, writes nothing and is counted; the write
//! set passes the limit by at most one write; the transaction stays usable (a savepoint
//! rollback frees room, a commit keeps what was written before), in both concurrency modes.
//! 0 means no limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Concurrency, Db, ErrorKind, Options, TransactionOptions};

const LIMIT: u64 = 64 << 10;

fn key(i: u32) -> Vec<u8> {
    format!("row{i:06}").into_bytes()
}

fn run(concurrency: Concurrency) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options::default().max_txn_write_set_bytes(LIMIT),
    )
    .unwrap();
    let cf = db.default_cf();
    let opts = TransactionOptions::default().concurrency(concurrency);
    let value = vec![b'v'; 500];

    let txn = db.begin_transaction(opts.clone()).unwrap();
    let mut written = 0u32;
    let err = loop {
        match txn.put(&cf, &key(written), &value) {
            Ok(()) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 10_000, "the limit never applied");
    };
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("is over max_txn_write_set_bytes = 65536"),
        "{msg}"
    );
    assert!(msg.contains(&format!("({written} keys)")), "{msg}");
    assert!(msg.contains("a write of 509 bytes was refused"), "{msg}");
    assert!(msg.len() <= 200, "{} bytes: {msg}", msg.len());
    // The write set passed the limit with its last accepted write, by less than one write
    // (the entry, its lock record, no undo: no savepoint is open); the refused one was not
    // made.
    assert!(written > 50, "{written}");
    let held = txn.approximate_memory() as u64;
    assert!(held > LIMIT && held <= LIMIT + 2 * (509 + 48), "{held}");
    assert_eq!(txn.write_count(), written as usize);
    assert_eq!(db.statistics().txn_write_set_limit_hits, 1);
    // Deletions are refused too, and nothing grows.
    let e = txn.delete(&cf, &key(0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    assert_eq!(db.statistics().txn_write_set_limit_hits, 2);
    assert_eq!(txn.approximate_memory() as u64, held);

    // Still usable: reads, and the commit keeps what was accepted.
    assert_eq!(txn.get(&cf, &key(0)).unwrap(), Some(value.clone()));
    txn.commit().unwrap();
    assert_eq!(db.get(&key(written - 1)).unwrap(), Some(value.clone()));
    assert_eq!(db.get(&key(written)).unwrap(), None);

    // A savepoint rollback frees the room its writes took.
    let txn = db.begin_transaction(opts).unwrap();
    txn.set_savepoint().unwrap();
    let mut n = 0u32;
    while txn.put(&cf, &key(100_000 + n), &value).is_ok() {
        n += 1;
    }
    txn.rollback_to_savepoint().unwrap();
    txn.put(&cf, b"after-rollback", b"fits").unwrap();
    txn.commit().unwrap();
    assert_eq!(db.get(b"after-rollback").unwrap(), Some(b"fits".to_vec()));
    assert_eq!(db.get(&key(100_000)).unwrap(), None);
}

#[test]
fn pessimistic_writes_past_the_limit_fail_and_do_nothing() {
    run(Concurrency::Pessimistic);
}

#[test]
fn optimistic_writes_past_the_limit_fail_and_do_nothing() {
    run(Concurrency::Optimistic);
}

#[test]
fn zero_means_no_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let cf = db.default_cf();
    let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
    let value = vec![b'v'; 500];
    for i in 0..2_000 {
        txn.put(&cf, &key(i), &value).unwrap();
    }
    assert!(txn.approximate_memory() as u64 > 16 * LIMIT);
    txn.commit().unwrap();
    assert_eq!(db.statistics().txn_write_set_limit_hits, 0);
}
