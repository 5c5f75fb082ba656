//! `Table::estimate_range` (what `records_in_range` asks) on a table shaped like the MariaDB
//! crash test's t3: primary key (g, n), UNIQUE (v), KEY kn (n, v). The estimate of a prefix of
//! kn (`n = 5`) counts the committed entries in every part of the LSM (tables below, memtable
//! above), after rows moved into and out of the range and were deleted, and not another
//! session's uncommitted rows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;

use common::*;
use riptide_handler::SessionOptions;

/// The primary key of row (g, n): g then n, as the shim's memcomparable encoding orders them.
fn pk(g: u8, n: u8) -> Vec<u8> {
    vec![b'g', g, n]
}

/// The kn entry of a row: (n, v).
fn kn(n: u8, v: u8) -> Vec<u8> {
    vec![n, v]
}

/// The committed rows the estimate must count: (g, n) -> v.
type Model = BTreeMap<(u8, u8), u8>;

fn count_n(m: &Model, n: u8) -> u64 {
    m.keys().filter(|(_, rn)| *rn == n).count() as u64
}

#[test]
fn prefix_estimate_counts_committed_entries_in_tables_and_memtable() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t3",
            &[primary(), secondary("uv", true), secondary("kn", false)],
            1,
        )
        .unwrap();
    let mut m = Model::new();

    // 120 rows, n = g % 15: 8 per n value, then flushed into a table.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for g in 0..120u8 {
        let (n, v) = (g % 15, g);
        s.insert(&t, &pk(g, n), &[k(&[v]), k(&kn(n, v))], b"row")
            .unwrap();
        m.insert((g, n), v);
    }
    s.commit().unwrap();
    drop(s);
    db.flush().unwrap();
    // The range of n = 5: from the encoded prefix [5] to its successor [6], as the shim asks.
    assert_eq!(t.estimate_range(2, &[5], Some(&[6]), 1000).unwrap(), 8);

    // In the memtable, over the table: rows move from n = 7 to n = 5 (their primary key and
    // kn entry change), some n = 5 rows are deleted, others are rewritten in place.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for g in (7..120u8).step_by(15).take(5) {
        let v = m.remove(&(g, 7)).unwrap();
        s.update(
            &t,
            &pk(g, 7),
            &[k(&[v]), k(&kn(7, v))],
            &pk(g, 5),
            &[k(&[v]), k(&kn(5, v))],
            b"moved",
            None,
        )
        .unwrap();
        m.insert((g, 5), v);
    }
    for g in [5u8, 20] {
        let v = m.remove(&(g, 5)).unwrap();
        s.delete(&t, &pk(g, 5), &[k(&[v]), k(&kn(5, v))]).unwrap();
    }
    let v = m[&(35, 5)];
    s.update(
        &t,
        &pk(35, 5),
        &[k(&[v]), k(&kn(5, v))],
        &pk(35, 5),
        &[k(&[v]), k(&kn(5, v))],
        b"rewritten",
        None,
    )
    .unwrap();
    s.commit().unwrap();
    drop(s);
    let want = count_n(&m, 5);
    assert_eq!(want, 8 + 5 - 2);
    assert_eq!(t.estimate_range(2, &[5], Some(&[6]), 1000).unwrap(), want);
    assert_eq!(t.estimate_range(2, &[7], Some(&[8]), 1000).unwrap(), 8 - 5);

    // Another session's uncommitted rows with n = 5 are not counted.
    let mut other = engine.begin_session(SessionOptions::default()).unwrap();
    for g in 200..210u8 {
        other
            .insert(&t, &pk(g, 5), &[k(&[g]), k(&kn(5, g))], b"open")
            .unwrap();
    }
    assert_eq!(t.estimate_range(2, &[5], Some(&[6]), 1000).unwrap(), want);
    other.rollback().unwrap();
    drop(other);

    // The same after a flush (memtable and table merged by the iterator) and a compaction.
    db.flush().unwrap();
    assert_eq!(t.estimate_range(2, &[5], Some(&[6]), 1000).unwrap(), want);
    t.compact().unwrap();
    assert_eq!(t.estimate_range(2, &[5], Some(&[6]), 1000).unwrap(), want);

    // A full primary key (one row) and a prefix of it (g = 35: one row, n = 5).
    assert_eq!(
        t.estimate_range(0, &pk(35, 5), Some(&pk(35, 6)), 1000)
            .unwrap(),
        1
    );
    assert_eq!(
        t.estimate_range(0, &[b'g', 35], Some(&[b'g', 36]), 1000)
            .unwrap(),
        1
    );
    // At the limit: at least the limit (the approximation, which leans high), and here at
    // least a quarter of the row estimate.
    assert_eq!(t.row_estimate(), m.len() as u64);
    let at_limit = t.estimate_range(2, &[], None, 10).unwrap();
    assert!(
        at_limit >= 10 && at_limit >= t.row_estimate() / 4,
        "{at_limit}"
    );
    drop(t);
    close(db, engine);
}

/// Ranges past the limit are estimated from the tables' index blocks (no iterator, so the
/// optimizer's calls stay cheap) to within a fraction; smaller ones are still counted exactly.
#[test]
fn large_ranges_are_approximated_and_small_ones_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("kn", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..6000u32 {
        let g = i.to_be_bytes();
        let n = [u8::from(i % 3 != 0)];
        s.insert(&t, &g, &[k(&[n[0], g[2], g[3]])], &[0u8; 60])
            .unwrap();
    }
    s.commit().unwrap();
    drop(s);
    db.flush().unwrap();
    // n = 0: 2000 entries, n = 1: 4000; far past a limit of 256.
    let near = |got: u64, want: u64| {
        assert!(
            got.abs_diff(want) <= want / 4,
            "estimate {got}, expected about {want}"
        );
    };
    near(t.estimate_range(1, &[0], Some(&[1]), 256).unwrap(), 2000);
    near(t.estimate_range(1, &[1], Some(&[2]), 256).unwrap(), 4000);
    near(t.estimate_range(1, &[], None, 256).unwrap(), 6000);
    near(
        t.estimate_range(0, &[], Some(&1500u32.to_be_bytes()), 256)
            .unwrap(),
        1500,
    );
    // Small ranges: exact, in the table and in the memtable above it.
    assert_eq!(
        t.estimate_range(0, &10u32.to_be_bytes(), Some(&30u32.to_be_bytes()), 256)
            .unwrap(),
        20
    );
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..7u32 {
        s.insert(&t, &(10_000 + i).to_be_bytes(), &[k(&[2, 0, 0])], b"")
            .unwrap();
    }
    s.commit().unwrap();
    drop(s);
    assert_eq!(t.estimate_range(1, &[2], None, 256).unwrap(), 7);
    drop(t);
    close(db, engine);
}

/// A range of one row whose key ends a data block in every table (six L0 tables holding
/// the same rows) is put at a whole block per table by the index blocks, past the limit; the
/// estimate's lower bound says it may hold nothing, so it is counted: 1 for every row. (The
/// MariaDB crash test's `DELETE ... WHERE b = ..` on an empty range was put at 339 of 405
/// rows this way, and MariaDB scanned and locked the whole table.)
#[test]
fn a_small_range_across_block_boundaries_of_many_tables_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let opts = riptide::Options::default()
        .l0_compaction_trigger(64)
        .l0_slowdown_trigger(100)
        .l0_stop_trigger(120)
        .young_space_bound(false);
    let db = std::sync::Arc::new(riptide::Db::open(dir.path(), opts).unwrap());
    let engine = riptide_handler::HandlerEngine::open(std::sync::Arc::clone(&db)).unwrap();
    let t = engine
        .create_table(b"t", &[primary(), secondary("kb", false)], 1)
        .unwrap();
    let rows = 3000u32;
    for round in 0..6u8 {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        for i in 0..rows {
            let key = i.to_be_bytes();
            if round == 0 {
                s.insert(&t, &key, &[k(&key)], &[round; 16]).unwrap();
            } else {
                s.update(&t, &key, &[k(&key)], &key, &[k(&key)], &[round; 16], None)
                    .unwrap();
            }
        }
        s.commit().unwrap();
        drop(s);
        db.flush().unwrap();
    }
    let l0 = db.statistics().levels[0].files;
    assert!(l0 >= 6, "the test needs six L0 tables: {l0}");
    for n in 0..2 {
        let wrong: Vec<(u32, u64)> = (0..rows)
            .map(|i| {
                let e = t
                    .estimate_range(n, &i.to_be_bytes(), Some(&(i + 1).to_be_bytes()), 256)
                    .unwrap();
                (i, e)
            })
            .filter(|&(_, e)| e != 1)
            .collect();
        assert!(
            wrong.is_empty(),
            "index {n}: rows put at more than 1: {wrong:?}"
        );
    }
    drop(t);
    close(db, engine);
}

/// Block cache lookups (hits and misses, every block kind) made so far.
fn block_lookups(db: &riptide::Db) -> u64 {
    let s = db.statistics();
    s.block_cache_hits + s.block_cache_misses
}

/// Fills table `name` with `rows` rows of 400-byte values (keys 0, 1, ...) and flushes.
fn big_rows_table(
    db: &riptide::Db,
    engine: &riptide_handler::HandlerEngine,
    name: &[u8],
    rows: u32,
) -> std::sync::Arc<riptide_handler::Table> {
    let t = engine.create_table(name, &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..rows {
        s.insert(&t, &i.to_be_bytes(), &[], &[7u8; 400]).unwrap();
    }
    s.commit().unwrap();
    drop(s);
    db.flush().unwrap();
    t
}

/// A range that covers whole data blocks and is a small share of its table (200 rows of
/// 20,000, about 20 blocks of 4 KiB) is answered from the index blocks, without reading
/// its entries, to within a block per table; the same range in a table of 12,000 rows,
/// where it is more than 1/64 of the rows, is still counted exactly.
#[test]
fn a_range_that_is_a_small_share_of_a_big_table_is_estimated_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let lo = 10_000u32.to_be_bytes();
    let hi = 10_200u32.to_be_bytes();

    let big = big_rows_table(&db, &engine, b"big", 20_000);
    let before = block_lookups(&db);
    let got = big.estimate_range(0, &lo, Some(&hi), 256).unwrap();
    let lookups = block_lookups(&db) - before;
    assert!(
        got.abs_diff(200) <= 50,
        "estimate {got}, expected about 200"
    );
    // The approximation reads an index block and one data block per table; counting would
    // have looked up each of the range's ~20 data blocks.
    assert!(lookups <= 8, "{lookups} block lookups for an estimate");

    let small = big_rows_table(&db, &engine, b"small", 12_000);
    assert_eq!(small.row_estimate(), 12_000);
    assert_eq!(small.estimate_range(0, &lo, Some(&hi), 256).unwrap(), 200);
    drop((big, small));
    close(db, engine);
}
