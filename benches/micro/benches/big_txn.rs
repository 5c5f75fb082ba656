//! Big transactions (issue 15): the per-key cost of a pessimistic transaction that writes
//! many keys, at three levels, each with the write phase and the commit timed apart:
//!
//! - `lock_manager`: [`LockManager::lock`] of N fresh keys by one transaction, then
//!   [`LockManager::unlock_all`] (what a commit releases);
//! - `txn`: a pessimistic [`Transaction`] under a statement savepoint (as the MariaDB
//!   handler runs every statement) inserting N fresh 12-byte keys with 16-byte values,
//!   then the commit (batch, WAL write with sync off, memtable, lock release);
//! - `session`: the handler's [`Session::insert`] of N/2 rows of a table with a primary key
//!   and one non-unique secondary index (N keys: one row and one entry per row), inside a
//!   statement, then the commit: `INSERT ... SELECT` of N/2 rows without MariaDB.
//!
//! N is `RIPTIDE_BIG_TXN_KEYS` (default 1,000,000). Each sample is one transaction
//! (flat sampling, 10 samples); the throughput is keys per second.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use riptide::{Db, Options, TransactionOptions};
use riptide_handler::{HandlerEngine, IndexKind, IndexSpec, SecondaryKey, SessionOptions};
use riptide_txn::{LockManager, LockMode};

fn keys() -> u64 {
    std::env::var("RIPTIDE_BIG_TXN_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// A 12-byte key: a 4-byte prefix (an index id) and the big-endian number.
fn key(prefix: u32, n: u64) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..4].copy_from_slice(&prefix.to_be_bytes());
    k[4..].copy_from_slice(&n.to_be_bytes());
    k
}

fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(keys()));
    g
}

fn lock_manager(c: &mut Criterion) {
    let n = keys();
    let lm = LockManager::default();
    let mut txn = 0;
    let mut run = |timed_lock: bool| {
        txn += 1;
        let keys: Vec<[u8; 12]> = (0..n).map(|i| key(7, i)).collect();
        let start = Instant::now();
        for k in &keys {
            lm.lock(txn, 0, k, LockMode::Exclusive, Duration::ZERO)
                .expect("lock");
        }
        let locked = start.elapsed();
        let start = Instant::now();
        let released = lm.unlock_all(txn, keys.iter().map(|k| (0, k)));
        let unlocked = start.elapsed();
        assert_eq!(released as u64, n);
        if timed_lock { locked } else { unlocked }
    };
    let mut g = group(c, "big_txn/lock_manager");
    g.bench_function("lock", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(true)).sum())
    });
    g.bench_function("unlock_all", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(false)).sum())
    });
    g.finish();
}

fn txn(c: &mut Criterion) {
    let n = keys();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), Options::default()).expect("open");
    let cf = db.default_cf();
    let value = [0x5au8; 16];
    let mut next = 0u64;
    let mut run = |timed_writes: bool| {
        let t = db
            .begin_transaction(TransactionOptions::default().current_reads(true))
            .expect("begin");
        t.set_savepoint().expect("savepoint");
        let start = Instant::now();
        for _ in 0..n {
            next += 1;
            t.insert(&cf, &key(1, next), &value).expect("insert");
        }
        t.release_savepoint().expect("release");
        let writes = start.elapsed();
        let start = Instant::now();
        t.commit().expect("commit");
        let commit = start.elapsed();
        if timed_writes { writes } else { commit }
    };
    let mut g = group(c, "big_txn/txn");
    g.bench_function("insert", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(true)).sum())
    });
    g.bench_function("commit", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(false)).sum())
    });
    g.finish();
    drop(cf);
    db.close().expect("close");
}

fn session(c: &mut Criterion) {
    let rows = keys() / 2;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Arc::new(Db::open(dir.path(), Options::default()).expect("open"));
    let engine = HandlerEngine::open(Arc::clone(&db)).expect("engine");
    let spec = |kind, name: &str| IndexSpec {
        kind,
        unique: false,
        key_parts: 1,
        name: name.into(),
    };
    let table = engine
        .create_table(
            b"big",
            &[
                spec(IndexKind::Primary, "PRIMARY"),
                spec(IndexKind::Secondary, "a"),
            ],
            1,
        )
        .expect("create table");
    let mut next = 0u64;
    let mut run = |timed_inserts: bool| {
        let mut s = engine
            .begin_session(SessionOptions::default())
            .expect("session");
        s.begin_statement().expect("statement");
        let start = Instant::now();
        for _ in 0..rows {
            next += 1;
            // id INT, a = id % 1000 (5-byte memcomparable keys), row ~20 bytes.
            let mut pk = [0u8; 5];
            pk[0] = 1;
            pk[1..].copy_from_slice(&(next as u32).to_be_bytes());
            let mut a = [0u8; 5];
            a[0] = 1;
            a[1..].copy_from_slice(&((next % 1000) as u32).to_be_bytes());
            let row = format!("row{next:>17}");
            let sk = [SecondaryKey {
                key: &a,
                has_null: false,
            }];
            s.insert(&table, black_box(&pk), &sk, row.as_bytes())
                .expect("insert");
        }
        s.end_statement(true).expect("end statement");
        let inserts = start.elapsed();
        let start = Instant::now();
        s.commit().expect("commit");
        let commit = start.elapsed();
        if timed_inserts { inserts } else { commit }
    };
    let mut g = group(c, "big_txn/session");
    g.bench_function("insert", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(true)).sum())
    });
    g.bench_function("commit", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run(false)).sum())
    });
    g.finish();
    drop(table);
    engine.close().expect("close engine");
    drop(engine);
    if let Ok(db) = Arc::try_unwrap(db) {
        db.close().expect("close");
    }
}

criterion_group!(benches, lock_manager, txn, session);
criterion_main!(benches);
