//! A young database (small next to its write buffer) keeps its disk use close to its data:
//! the first flush goes straight to the base level in small tables, memtables flush at a
//! quarter of the tables' bytes, L0 merges down at a quarter of the tree, and tables that
//! overlap nothing below move down without being rewritten (`Options::young_space_bound`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use riptide::{Db, Options, Statistics, SyncMode};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:012}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    let mut v = vec![b'v'; 100];
    v[..8].copy_from_slice(&i.to_le_bytes());
    v
}

/// Waits until no compaction runs and none is due (scores below 1), or fails.
fn settle(db: &Db) -> Statistics {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = db.statistics();
        let due = s.levels.iter().any(|l| l.score >= 1.0);
        if s.running_compactions == 0 && s.immutable_memtables == 0 && !due {
            return s;
        }
        assert!(Instant::now() < deadline, "compaction never settled: {s}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tables(s: &Statistics) -> usize {
    s.levels.iter().map(|l| l.files).sum()
}

#[test]
fn the_first_flush_goes_to_the_base_level_in_small_tables() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default().sync_mode(SyncMode::None);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    // ~5 MiB of entries (~7 MiB of memtable): under the first memtable's limit
    // (64 MiB / 8), so one explicit flush.
    let n = 45_000;
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    let s = db.statistics();
    assert_eq!(s.flushes, 1, "{s}");
    assert_eq!(s.levels[0].files, 0, "nothing for L0: {s}");
    let last = s.levels.last().unwrap();
    assert!(last.files >= 2, "small tables (about 2 MiB each): {s}");
    assert!(last.bytes > 4 << 20, "{s}");
    assert_eq!(
        s.compactions, 0,
        "placed by the flush, not a compaction: {s}"
    );
    for i in (0..n).step_by(97) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(tables(&db.statistics()), last.files);
    for i in (0..n).step_by(89) {
        assert_eq!(
            db.get(&key(i)).unwrap(),
            Some(value(i)),
            "key {i} after reopen"
        );
    }
}

#[test]
fn sequential_tables_move_down_without_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(1 << 20);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    // Ascending keys, flushed in batches: every new table lies above everything below it.
    let per_flush = 4_000;
    let rounds = 12;
    for r in 0..rounds {
        for i in r * per_flush..(r + 1) * per_flush {
            db.put(&key(i), &value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    let s = settle(&db);
    assert!(s.compaction_files_moved > 0, "no table moved down: {s}");
    assert!(
        s.compaction_bytes_written < s.flush_bytes_written / 2,
        "ascending tables were rewritten, not moved: {s}"
    );
    let n = rounds * per_flush;
    for i in (0..n).step_by(53) {
        assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let mut it = db.iter(riptide::ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut count = 0u64;
    while it.valid() {
        assert_eq!(it.key(), key(count).as_slice());
        count += 1;
        it.next().unwrap();
    }
    assert_eq!(count, n);
}

#[test]
fn young_memtables_flush_at_a_share_of_the_tables_unless_turned_off() {
    // 1 MiB write buffer: the first memtable of an empty database flushes at 128 KiB.
    let written = |young: bool| -> Statistics {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(1 << 20)
            .young_space_bound(young);
        let db = Db::open(dir.path(), opts).unwrap();
        // ~600 KiB of entries.
        for i in 0..5_000 {
            db.put(&key(i), &value(i)).unwrap();
        }
        let s = settle(&db);
        for i in (0..5_000).step_by(31) {
            assert_eq!(db.get(&key(i)).unwrap(), Some(value(i)), "key {i}");
        }
        s
    };
    let young = written(true);
    assert!(young.flushes >= 2, "young: {young}");
    let off = written(false);
    assert_eq!(off.flushes, 0, "off: only a full memtable flushes: {off}");
}

#[test]
fn random_writes_keep_l0_within_its_fraction_of_the_tree() {
    // Random keys over a young tree: once compaction settles, L0 holds less than its
    // fraction (a quarter) of the levels below.
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(2 << 20);
    let db = Db::open(dir.path(), opts).unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        db.put(&key(x % 1_000_000_000), &value(x)).unwrap();
    }
    let s = settle(&db);
    let l0 = s.levels[0].bytes;
    let below: u64 = s.levels.iter().skip(1).map(|l| l.bytes).sum();
    assert!(below > 0, "{s}");
    assert!(
        (l0 as f64) < 0.25 * below as f64,
        "L0 holds {l0} bytes over {below} below: {s}"
    );
}
