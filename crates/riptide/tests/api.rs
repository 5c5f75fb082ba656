//! The facade's behaviour, one scenario per test: column families, snapshots, iterator
//! bounds, single delete, the directory lock, close, statistics, background flush.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;

use riptide::{Db, ErrorKind, Options, ReadOptions, SyncMode, WriteBatch};

fn small() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(16 * 1024)
        .l0_compaction_trigger(2)
}

fn collect(db: &Db, opts: ReadOptions<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter(opts).unwrap();
    it.seek_to_first().unwrap();
    let mut v = Vec::new();
    while it.valid() {
        v.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    v
}

#[test]
fn second_open_of_one_directory_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let err = Db::open(dir.path(), small()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    db.close().unwrap();
    Db::open(dir.path(), small()).unwrap().close().unwrap();
}

#[test]
fn missing_directory_without_create_if_missing_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let err = Db::open(dir.path().join("nope"), small().create_if_missing(false)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    Db::open(dir.path().join("db"), small())
        .unwrap()
        .close()
        .unwrap();
    let err = Db::open(dir.path().join("db"), small().error_if_exists(true)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}

#[test]
fn column_families_are_separate_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let a = db.create_cf("a").unwrap();
        let b = db.create_cf("b").unwrap();
        assert_eq!(db.create_cf("a").unwrap_err().kind(), ErrorKind::Busy);
        let mut batch = WriteBatch::new();
        batch
            .put_cf(&a, b"k", b"in a")
            .put_cf(&b, b"k", b"in b")
            .put(b"k", b"in default");
        db.write(batch).unwrap();
        assert_eq!(db.get_cf(&a, b"k").unwrap(), Some(b"in a".to_vec()));
        assert_eq!(db.get_cf(&b, b"k").unwrap(), Some(b"in b".to_vec()));
        assert_eq!(db.get(b"k").unwrap(), Some(b"in default".to_vec()));
        assert_eq!(db.list_cfs(), vec!["default", "a", "b"]);
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.list_cfs(), vec!["default", "a", "b"]);
    let a = db.cf("a").unwrap();
    assert_eq!(db.get_cf(&a, b"k").unwrap(), Some(b"in a".to_vec()));
    db.drop_cf(&a).unwrap();
    assert_eq!(db.get_cf(&a, b"k").unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(
        db.put_cf(&a, b"x", b"y").unwrap_err().kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        db.drop_cf(&db.default_cf()).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    db.close().unwrap();
    // Drop then create of the same name never sees the old rows.
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.list_cfs(), vec!["default", "b"]);
    let a2 = db.create_cf("a").unwrap();
    assert_eq!(db.get_cf(&a2, b"k").unwrap(), None);
    db.close().unwrap();
}

#[test]
fn dropped_column_family_data_is_gone_after_flush_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let cf = db.create_cf("t").unwrap();
    for i in 0..2000u32 {
        db.put_cf(&cf, &i.to_be_bytes(), &[7u8; 50]).unwrap();
    }
    db.flush().unwrap();
    db.drop_cf(&cf).unwrap();
    let cf = db.create_cf("t").unwrap();
    assert_eq!(db.get_cf(&cf, &5u32.to_be_bytes()).unwrap(), None);
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let cf = db.cf("t").unwrap();
    assert_eq!(db.get_cf(&cf, &5u32.to_be_bytes()).unwrap(), None);
    db.close().unwrap();
}

#[test]
fn snapshot_sees_the_past_across_flush_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for i in 0..500u32 {
        db.put(&i.to_be_bytes(), b"old").unwrap();
    }
    let snap = db.snapshot();
    for round in 0..6 {
        for i in 0..500u32 {
            if i % 3 == 0 {
                db.delete(&i.to_be_bytes()).unwrap();
            } else {
                db.put(&i.to_be_bytes(), format!("new{round}").as_bytes())
                    .unwrap();
            }
        }
        db.flush().unwrap();
    }
    assert!(db.statistics().compactions > 0, "compaction never ran");
    let at = ReadOptions::default().snapshot(&snap);
    let old = collect(&db, at);
    assert_eq!(old.len(), 500);
    assert!(old.iter().all(|(_, v)| v == b"old"));
    let now = collect(&db, ReadOptions::default());
    assert_eq!(now.len(), 500 - 167);
    assert!(now.iter().all(|(_, v)| v == b"new5"));
    drop(snap);
    db.close().unwrap();
}

#[test]
fn iterator_bounds_and_directions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for k in [b"a", b"b", b"c", b"d", b"e"] {
        db.put(k, k).unwrap();
    }
    db.delete(b"c").unwrap();
    let opts = || {
        ReadOptions::default()
            .lower_bound(b"b".to_vec())
            .upper_bound(b"e".to_vec())
    };
    let keys: Vec<_> = collect(&db, opts()).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![b"b".to_vec(), b"d".to_vec()]);
    let mut it = db.iter(opts()).unwrap();
    it.seek_to_last().unwrap();
    assert_eq!(it.key(), b"d");
    it.prev().unwrap();
    assert_eq!(it.key(), b"b");
    it.prev().unwrap();
    assert!(!it.valid());
    it.seek(b"a").unwrap();
    assert_eq!(it.key(), b"b");
    it.seek_for_prev(b"c").unwrap();
    assert_eq!(it.key(), b"b");
    it.seek_for_prev(b"z").unwrap();
    assert_eq!(it.key(), b"d");
    it.next().unwrap();
    assert!(!it.valid());
    db.close().unwrap();
}

#[test]
fn iterator_is_stable_while_writes_and_flushes_continue() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for i in 0..1000u32 {
        db.put(&i.to_be_bytes(), b"v1").unwrap();
    }
    let mut it = db.iter(ReadOptions::default()).unwrap();
    for i in 0..1000u32 {
        db.put(&i.to_be_bytes(), b"v2").unwrap();
        db.put(&(i + 5000).to_be_bytes(), b"extra").unwrap();
    }
    db.flush().unwrap();
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.value(), b"v1");
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, 1000);
    drop(it);
    db.close().unwrap();
}

#[test]
fn single_delete_removes_a_key_put_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for i in 0..3000u32 {
        db.put(&i.to_be_bytes(), &[1u8; 40]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..3000u32 {
        db.single_delete(&i.to_be_bytes()).unwrap();
    }
    assert_eq!(db.get(&7u32.to_be_bytes()).unwrap(), None);
    db.flush().unwrap();
    assert_eq!(collect(&db, ReadOptions::default()).len(), 0);
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(collect(&db, ReadOptions::default()).len(), 0);
    db.close().unwrap();
}

#[test]
fn close_releases_the_lock_and_keeps_unflushed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    drop(db); // dropping closes too
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.get(b"k").unwrap(), Some(b"v".to_vec()));
    db.close().unwrap();
}

#[test]
fn statistics_count_writes_flushes_and_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for i in 0..5000u32 {
        db.put(&i.to_be_bytes(), &[3u8; 100]).unwrap();
    }
    db.flush().unwrap();
    for i in 0..5000u32 {
        assert!(db.get(&i.to_be_bytes()).unwrap().is_some());
    }
    let s = db.statistics();
    assert_eq!(s.keys_written, 5000);
    assert_eq!(s.user_bytes_written, 5000 * 104);
    assert!(s.wal_bytes_written >= s.user_bytes_written);
    assert!(s.flushes >= 1);
    assert!(s.flush_bytes_written > 0);
    assert_eq!(s.gets, 5000);
    assert!(s.block_cache_hits + s.block_cache_misses > 0);
    assert!(s.levels.iter().map(|l| l.files).sum::<usize>() >= 1);
    assert!(s.space_amplification() >= 1.0, "{s}");
    assert!(s.write_amplification() > 1.0, "{s}");
    // Index and filter blocks go through the block cache, counted per kind.
    assert!(s.index_block_hits + s.index_block_misses > 0, "{s}");
    assert!(s.filter_block_hits + s.filter_block_misses > 0, "{s}");
    assert!(s.data_block_hits + s.data_block_misses > 0, "{s}");
    assert_eq!(
        s.block_cache_hits + s.block_cache_misses,
        s.data_block_hits
            + s.data_block_misses
            + s.index_block_hits
            + s.index_block_misses
            + s.filter_block_hits
            + s.filter_block_misses
    );
    assert!(s.block_cache_usage <= s.block_cache_capacity);
    let text = s.to_string();
    assert!(text.contains("amplification: write"), "{text}");
    assert!(text.contains("score"), "{text}");
    db.close().unwrap();
}

#[test]
fn many_threads_write_concurrently_and_group_commit_batches_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), Options::default().sync_mode(SyncMode::Full)).unwrap());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for i in 0..200u32 {
                    db.put(format!("{t}-{i}").as_bytes(), &i.to_le_bytes())
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = db.statistics();
    assert_eq!(s.keys_written, 1600);
    // Eight fsync-bound writers queue behind each leader: fewer groups than writes (about
    // 330 groups for 1,600 writes measured here).
    assert!(
        s.write_groups < s.keys_written,
        "group commit never batched: {} groups for {} writes",
        s.write_groups,
        s.keys_written
    );
    for t in 0..8u32 {
        for i in 0..200u32 {
            assert_eq!(
                db.get(format!("{t}-{i}").as_bytes()).unwrap(),
                Some(i.to_le_bytes().to_vec())
            );
        }
    }
    Arc::try_unwrap(db).unwrap().close().unwrap();
}

#[test]
fn large_values_round_trip_through_flush() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let big = vec![0xABu8; 3 << 20];
    db.put(b"big", &big).unwrap();
    db.put(b"empty", b"").unwrap();
    db.put(b"", b"empty key").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(b"big").unwrap(), Some(big));
    assert_eq!(db.get(b"empty").unwrap(), Some(Vec::new()));
    assert_eq!(db.get(b"").unwrap(), Some(b"empty key".to_vec()));
    db.close().unwrap();
}

#[test]
fn dropping_a_column_family_while_its_flush_or_compaction_runs_keeps_the_database_writable() {
    let dir = tempfile::tempdir().unwrap();
    let opts = small()
        .l0_compaction_trigger(2)
        .max_bytes_for_level_base(32 * 1024);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for round in 0..30u32 {
        let cf = db.create_cf(&format!("t{round}")).unwrap();
        for i in 0..600u32 {
            db.put_cf(&cf, &i.to_be_bytes(), &[round as u8; 64])
                .unwrap();
        }
        // Background flushes and compactions of `cf` are usually still running here.
        db.drop_cf(&cf).unwrap();
        db.put(&round.to_be_bytes(), b"still writable").unwrap();
    }
    db.flush().unwrap();
    for round in 0..30u32 {
        assert_eq!(
            db.get(&round.to_be_bytes()).unwrap(),
            Some(b"still writable".to_vec())
        );
    }
    assert_eq!(db.list_cfs(), vec!["default"]);
    db.close().unwrap();
    // Nothing of the dropped families survives a reopen, and no file of theirs is left.
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.list_cfs(), vec!["default"]);
    let tables = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sst")
        })
        .count();
    let s = db.statistics();
    let live: usize = s.levels.iter().map(|l| l.files).sum();
    assert_eq!(tables, live, "table files on disk that no level holds");
    db.close().unwrap();
}
