//! A large transaction: hundreds of thousands of rows in one transaction, in both concurrency
//! modes, with the write buffer's memory within its documented bound, its own writes visible
//! to its iterator before commit, and every row visible after it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Concurrency, Db, Options, ReadOptions, TransactionOptions};

/// Rows per transaction; `RIPTIDE_LARGE_TXN_ROWS` overrides it for a run by hand.
fn rows() -> u64 {
    std::env::var("RIPTIDE_LARGE_TXN_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}
const VALUE_LEN: usize = 40;

fn run(concurrency: Concurrency) {
    let rows = rows();
    let dir = tempfile::tempdir().unwrap();
    // Small memtables: the commit lands in a memtable far over its size, which must be fine.
    let db = Db::open(dir.path(), Options::default().write_buffer_size(1 << 20)).unwrap();
    let cf = db.default_cf();
    let txn = db
        .begin_transaction(TransactionOptions::default().concurrency(concurrency))
        .unwrap();
    let value = vec![b'v'; VALUE_LEN];
    for i in 0..rows {
        txn.put(&cf, format!("row{i:08}").as_bytes(), &value)
            .unwrap();
    }
    assert_eq!(txn.write_count() as u64, rows);
    // The documented bound: key + value + ENTRY_OVERHEAD_BYTES per row written (no savepoint
    // is open, so no undo records), plus the lock records of a pessimistic transaction.
    let per_row = 11 + VALUE_LEN + riptide_txn_overhead();
    let locks = if concurrency == Concurrency::Pessimistic {
        rows as usize * (11 + riptide_txn_overhead())
    } else {
        0
    };
    let mem = txn.approximate_memory();
    assert!(
        mem <= rows as usize * per_row + locks,
        "{mem} bytes for {rows} rows is over the documented bound"
    );
    assert!(
        mem >= rows as usize * (11 + VALUE_LEN),
        "{mem} bytes cannot hold the rows"
    );

    let mut it = txn.iter(&cf, ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut seen = 0u64;
    while it.valid() {
        seen += 1;
        it.next().unwrap();
    }
    assert_eq!(seen, rows, "the transaction's iterator sees its own rows");
    drop(it);
    assert_eq!(
        db.get(b"row00000000").unwrap(),
        None,
        "nothing visible before commit"
    );
    txn.commit().unwrap();

    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut committed = 0u64;
    while it.valid() {
        committed += 1;
        it.next().unwrap();
    }
    assert_eq!(committed, rows);
    db.close().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(
        db.get(format!("row{:08}", rows - 1).as_bytes()).unwrap(),
        Some(value)
    );
}

fn riptide_txn_overhead() -> usize {
    riptide_txn::ENTRY_OVERHEAD_BYTES
}

#[test]
fn large_optimistic_transaction() {
    run(Concurrency::Optimistic);
}

#[test]
fn large_pessimistic_transaction() {
    run(Concurrency::Pessimistic);
}
