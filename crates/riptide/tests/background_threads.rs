//! `max_background_compactions` and `max_background_flushes` change while the database is
//! open: raising one starts the missing threads (seen by name in `/proc/self/task`), lowering
//! it parks the threads beyond it, raising it again wakes them without starting more, and
//! flushes and compactions go on throughout. One test in its own file: it counts the
//! process's threads, which other tests' databases would add to.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use riptide::{Db, OptionValue, Options};

/// Threads of this process whose name starts with `prefix` (a new thread names itself once
/// it runs, so this waits up to a few seconds for the count to settle at `expected`).
fn threads_named(prefix: &str, expected: usize) -> usize {
    let count = || {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|name| name.starts_with(prefix))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = count();
        if n == expected || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn l0_files(db: &Db) -> usize {
    db.statistics().levels.first().map_or(0, |l| l.files)
}

/// Writes three overlapping tables and waits until compaction took L0 below two tables.
fn write_and_compact(db: &Db, round: u32) {
    for table in 0..3u32 {
        for i in 0..300u32 {
            db.put(
                format!("k{i:04}").as_bytes(),
                format!("v{round}-{table}").as_bytes(),
            )
            .unwrap();
        }
        db.flush().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while l0_files(db) >= 2 {
        assert!(Instant::now() < deadline, "no compaction in round {round}");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        db.get(b"k0123").unwrap().as_deref(),
        Some(format!("v{round}-2").as_bytes())
    );
}

#[test]
fn thread_counts_change_while_open() {
    if !std::path::Path::new("/proc/self/task").is_dir() {
        return; // Thread names are read from Linux's /proc.
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .max_background_compactions(1)
        .max_background_flushes(1)
        .l0_compaction_trigger(2)
        .young_space_bound(false);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(threads_named("riptide-compact", 1), 1);
    assert_eq!(threads_named("riptide-flush", 1), 1);
    write_and_compact(&db, 0);

    db.set_option("max_background_compactions", "3").unwrap();
    db.set_option("max_background_flushes", "2").unwrap();
    assert_eq!(threads_named("riptide-compact", 3), 3);
    assert_eq!(threads_named("riptide-flush", 2), 2);
    assert_eq!(
        db.option_value("max_background_compactions").unwrap(),
        OptionValue::Unsigned(3)
    );
    write_and_compact(&db, 1);

    // Lowered: the threads stay (parked), compaction goes on with the first one.
    db.set_option("max_background_compactions", "1").unwrap();
    db.set_option("max_background_flushes", "1").unwrap();
    assert_eq!(threads_named("riptide-compact", 3), 3);
    write_and_compact(&db, 2);

    // Raised again up to what ran before: no new thread.
    db.set_option("max_background_compactions", "2").unwrap();
    assert_eq!(threads_named("riptide-compact", 3), 3);
    write_and_compact(&db, 3);

    // Out of bounds: refused, unchanged.
    assert!(db.set_option("max_background_compactions", "0").is_err());
    assert_eq!(
        db.option_value("max_background_compactions").unwrap(),
        OptionValue::Unsigned(2)
    );
    db.close().unwrap();
    assert_eq!(threads_named("riptide-compact", 0), 0);
    assert_eq!(threads_named("riptide-flush", 0), 0);
}
