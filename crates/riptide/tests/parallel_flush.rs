//! `Options::max_background_flushes`: that many flush threads run, several column families
//! written at once are flushed by them concurrently (one thread per column family at a time),
//! and nothing is lost or reordered, before or after a reopen.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::sync::Arc;

use riptide::{Db, Options, SyncMode};

const FAMILIES: usize = 4;
const KEYS: u32 = 3000;
/// Each key is written this many times, so a flush that reordered memtables would leave an
/// older value on top.
const VERSIONS: u32 = 3;

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(32 << 10)
        .max_background_flushes(3)
}

/// Names of this process's threads that start with `prefix`.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

fn value(cf: usize, key: u32, version: u32) -> Vec<u8> {
    let mut v = format!("cf{cf}-key{key}-v{version}-").into_bytes();
    v.resize(200, b'.');
    v
}

fn check(db: &Db, cfs: &[riptide::ColumnFamily]) {
    for (c, cf) in cfs.iter().enumerate() {
        for key in 0..KEYS {
            let got = db.get_cf(cf, &key.to_be_bytes()).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(&value(c, key, VERSIONS - 1)[..]),
                "column family {c}, key {key}"
            );
        }
    }
}

#[test]
fn several_flush_threads_flush_column_families_in_parallel_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let before = threads_named("riptide-flush");
    let db = Arc::new(Db::open(dir.path(), options()).unwrap());
    // A thread names itself once it runs: give them a moment.
    let start = std::time::Instant::now();
    while threads_named("riptide-flush") - before < 3 && start.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(threads_named("riptide-flush") - before, 3);

    let cfs: Vec<_> = (0..FAMILIES)
        .map(|c| db.create_cf(&format!("cf{c}")).unwrap())
        .collect();
    let writers: Vec<_> = cfs
        .iter()
        .cloned()
        .enumerate()
        .map(|(c, cf)| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for version in 0..VERSIONS {
                    for key in 0..KEYS {
                        db.put_cf(&cf, &key.to_be_bytes(), &value(c, key, version))
                            .unwrap();
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    check(&db, &cfs);
    db.flush().unwrap();
    check(&db, &cfs);
    // 4 x 3 x 3000 x ~200 bytes in 32 KiB memtables: well over a hundred flushes.
    let flushes = db.statistics().flushes;
    assert!(flushes > 100, "{flushes} flushes");

    drop(cfs);
    Arc::try_unwrap(db).ok().unwrap().close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cfs: Vec<_> = (0..FAMILIES)
        .map(|c| db.cf(&format!("cf{c}")).unwrap())
        .collect();
    check(&db, &cfs);
    db.close().unwrap();
}
