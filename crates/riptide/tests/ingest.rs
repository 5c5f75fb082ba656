//! `Db::ingest_writer`: sorted new keys written as table files straight into the deepest
//! level they fit, visible at once when the ingest finishes, durable without the WAL, and
//! refused when the range already holds older keys.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;

use riptide::{Db, ErrorKind, Options, ReadOptions, SyncMode};

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(256 << 10)
        .target_file_size(64 << 10)
}

fn key(table: char, i: u32) -> Vec<u8> {
    format!("{table}{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat(60)).into_bytes()
}

fn sst_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".sst")
        })
        .count()
}

/// Ingests `table`'s keys `0..n` and returns what the ingest did.
fn ingest(db: &Db, table: char, n: u32) -> riptide::Ingested {
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    for i in 0..n {
        w.add(&key(table, i), &value(i)).unwrap();
    }
    w.finish().unwrap()
}

fn all_keys(db: &Db) -> Vec<Vec<u8>> {
    let mut it = db.iter(ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

#[test]
fn an_ingest_into_an_empty_database_goes_to_the_last_level_in_many_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let done = ingest(&db, 'k', 5_000);
    let stats = db.statistics();
    let last = stats.levels.len() - 1;
    assert_eq!(done.level, last, "{done:?}");
    assert!(done.files > 3, "split at the target file size: {done:?}");
    assert_eq!(done.entries, 5_000);
    assert_eq!(stats.levels[last].files as u64, done.files);
    assert_eq!(stats.ingested_files, done.files);
    assert_eq!(stats.ingested_bytes, done.bytes);
    assert_eq!(stats.keys_written, 0, "nothing went through the memtable");
    for i in [0, 1, 2_500, 4_999] {
        assert_eq!(db.get(&key('k', i)).unwrap(), Some(value(i)));
    }
    assert_eq!(db.get(&key('k', 5_000)).unwrap(), None);
    assert_eq!(all_keys(&db).len(), 5_000);
}

#[test]
fn keys_are_visible_only_after_finish_and_never_to_older_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(b"a", b"before").unwrap();
    let before = db.snapshot();
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    let during = db.snapshot();
    for i in 0..100 {
        w.add(&key('k', i), &value(i)).unwrap();
    }
    assert_eq!(db.get(&key('k', 1)).unwrap(), None, "not before finish");
    let done = w.finish().unwrap();
    assert!(done.seqno > before.seqno());
    assert_eq!(db.get(&key('k', 1)).unwrap(), Some(value(1)));
    for snap in [&before, &during] {
        let got = db
            .get_cf_opt(
                &db.default_cf(),
                &key('k', 1),
                &ReadOptions::default().snapshot(snap),
            )
            .unwrap();
        assert_eq!(
            got, None,
            "a snapshot taken before finish sees nothing of the ingest"
        );
    }
}

#[test]
fn an_ingest_is_durable_without_the_wal_and_later_writes_stay_newer() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.put(b"a", b"1").unwrap();
        ingest(&db, 'k', 2_000);
        db.put(&key('k', 7), b"overwritten").unwrap();
        db.delete(&key('k', 8)).unwrap();
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(&key('k', 6)).unwrap(), Some(value(6)));
    assert_eq!(db.get(&key('k', 7)).unwrap(), Some(b"overwritten".to_vec()));
    assert_eq!(db.get(&key('k', 8)).unwrap(), None);
    // A write after reopening still gets a number above the ingest's.
    db.put(&key('k', 9), b"after reopen").unwrap();
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_eq!(
        db.get(&key('k', 9)).unwrap(),
        Some(b"after reopen".to_vec())
    );
    assert_eq!(db.get(&key('k', 7)).unwrap(), Some(b"overwritten".to_vec()));
    assert_eq!(db.get(&key('k', 8)).unwrap(), None);
    assert_eq!(all_keys(&db).len(), 1 + 2_000 - 1);
}

#[test]
fn an_ingest_between_existing_tables_lands_above_a_file_that_spans_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    // One last-level file holding "a..." and "z...": its range spans "k...".
    db.put(&key('a', 0), b"a").unwrap();
    db.put(&key('z', 0), b"z").unwrap();
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    let last = db.statistics().levels.len() - 1;
    assert_eq!(db.statistics().levels[last].files, 1);
    let done = ingest(&db, 'k', 3_000);
    assert!(done.level < last && done.level > 0, "{done:?}");
    // Next to it, a range no file spans goes to the last level.
    let other = ingest(&db, 'z', 0);
    assert_eq!(other.files, 0, "an empty ingest adds nothing");
    let after = {
        let mut w = db.ingest_writer(&db.default_cf()).unwrap();
        w.add(b"zz", b"last").unwrap();
        w.finish().unwrap()
    };
    assert_eq!(after.level, last, "{after:?}");
    assert_eq!(all_keys(&db).len(), 2 + 3_000 + 1);
    // Compaction through every level keeps every key.
    for i in 0..500 {
        db.put(&key('b', i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_eq!(all_keys(&db).len(), 2 + 3_000 + 1 + 500);
    assert_eq!(db.get(&key('k', 2_999)).unwrap(), Some(value(2_999)));
}

#[test]
fn a_range_holding_older_keys_is_refused_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    // In the memtable.
    db.put(&key('k', 50), b"old").unwrap();
    let files = sst_files(dir.path());
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    for i in 0..3_000 {
        w.add(&key('k', i), &value(i)).unwrap();
    }
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    assert!(err.to_string().contains("unflushed write"), "{err}");
    assert_eq!(sst_files(dir.path()), files, "the ingest's files are gone");
    assert_eq!(db.get(&key('k', 1)).unwrap(), None);
    assert_eq!(db.get(&key('k', 50)).unwrap(), Some(b"old".to_vec()));
    // In a table.
    db.flush().unwrap();
    let files = sst_files(dir.path());
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    for i in 0..3_000 {
        w.add(&key('k', i), &value(i)).unwrap();
    }
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    assert!(err.to_string().contains("table"), "{err}");
    assert_eq!(sst_files(dir.path()), files);
    // A writer dropped without finishing leaves nothing either.
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    for i in 0..3_000 {
        w.add(&key('m', i), &value(i)).unwrap();
    }
    drop(w);
    assert_eq!(sst_files(dir.path()), files);
    assert_eq!(db.get(&key('m', 1)).unwrap(), None);
}

#[test]
fn a_write_into_the_range_while_the_writer_is_open_refuses_the_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    db.put(&key('k', 5), b"meanwhile").unwrap();
    for i in 0..100 {
        w.add(&key('k', i), &value(i)).unwrap();
    }
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    assert_eq!(db.get(&key('k', 5)).unwrap(), Some(b"meanwhile".to_vec()));
    assert_eq!(db.get(&key('k', 6)).unwrap(), None);
}

#[test]
fn writes_outside_the_range_while_the_writer_is_open_stay_older_than_the_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    for i in 0..200 {
        db.put(&key('a', i), b"meanwhile").unwrap();
    }
    let during = db.snapshot();
    for i in 0..100 {
        w.add(&key('k', i), &value(i)).unwrap();
    }
    let done = w.finish().unwrap();
    assert!(during.seqno() < done.seqno);
    assert_eq!(
        db.latest_seqno(),
        done.seqno,
        "the ingest's number is published"
    );
    db.put(&key('k', 5), b"newer").unwrap();
    assert!(
        db.latest_seqno() > done.seqno,
        "later writes number above it"
    );
    assert_eq!(db.get(&key('k', 5)).unwrap(), Some(b"newer".to_vec()));
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_eq!(db.get(&key('k', 5)).unwrap(), Some(b"newer".to_vec()));
    assert_eq!(db.get(&key('k', 6)).unwrap(), Some(value(6)));
    assert_eq!(db.get(&key('a', 6)).unwrap(), Some(b"meanwhile".to_vec()));
    let at_during = db
        .get_cf_opt(
            &db.default_cf(),
            &key('k', 6),
            &ReadOptions::default().snapshot(&during),
        )
        .unwrap();
    assert_eq!(at_during, None);
}

#[test]
fn keys_out_of_order_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    w.add(b"b", b"1").unwrap();
    for bad in [&b"b"[..], b"a"] {
        let err = w.add(bad, b"2").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.to_string().contains("strictly ascending"), "{err}");
    }
}

#[test]
fn the_external_sorter_feeds_an_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options().sort_buffer_size(1 << 20)).unwrap();
    let mut sorter = db.external_sorter();
    let n = 40_000u32;
    for i in 0..n {
        let shuffled = (u64::from(i) * 35_761 % u64::from(n)) as u32;
        sorter.add(&key('s', shuffled), &value(shuffled)).unwrap();
    }
    let mut sorted = sorter.finish().unwrap();
    assert!(sorted.stats().runs_written > 1, "{:?}", sorted.stats());
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    while let Some((k, v)) = sorted.next().unwrap() {
        w.add(k, v).unwrap();
    }
    let done = w.finish().unwrap();
    assert_eq!(done.entries, u64::from(n));
    let keys = all_keys(&db);
    assert_eq!(keys.len(), n as usize);
    assert_eq!(keys[123], key('s', 123));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp") || n.ends_with(".run"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "the sort leaves no file: {leftovers:?}"
    );
}

#[test]
fn files_of_an_ingest_that_never_installed_are_gone_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.put(b"a", b"1").unwrap();
        let mut w = db.ingest_writer(&db.default_cf()).unwrap();
        for i in 0..3_000 {
            w.add(&key('k', i), &value(i)).unwrap();
        }
        // What a crash before the install leaves: table files no manifest names.
        std::mem::forget(w);
        db.close().unwrap();
    }
    assert!(sst_files(dir.path()) > 1);
    let db = Db::open(dir.path(), options()).unwrap();
    let listed: usize = db.statistics().levels.iter().map(|l| l.files).sum();
    assert_eq!(
        sst_files(dir.path()),
        listed,
        "orphan tables are deleted at open"
    );
    assert_eq!(db.get(&key('k', 1)).unwrap(), None);
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    // The range is free for a new ingest.
    ingest(&db, 'k', 10);
    assert_eq!(db.get(&key('k', 1)).unwrap(), Some(value(1)));
}

#[test]
fn two_ingests_open_at_once_both_install_whichever_finishes_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for first_finishes in ['a', 'b'] {
        let table = |t: char| {
            if first_finishes == 'a' {
                t
            } else {
                (t as u8 + 2) as char
            }
        };
        let mut a = db.ingest_writer(&db.default_cf()).unwrap();
        db.put(b"0-between", b"x").unwrap();
        let mut b = db.ingest_writer(&db.default_cf()).unwrap();
        for i in 0..500 {
            a.add(&key(table('m'), i), &value(i)).unwrap();
            b.add(&key(table('n'), i), &value(i)).unwrap();
        }
        let (one, two) = if first_finishes == 'a' {
            (a, b)
        } else {
            (b, a)
        };
        let first = one.finish().unwrap();
        let second = two.finish().unwrap();
        assert!(db.latest_seqno() >= first.seqno.max(second.seqno));
        db.put(&key(table('m'), 3), b"newer").unwrap();
        assert_eq!(
            db.get(&key(table('m'), 3)).unwrap(),
            Some(b"newer".to_vec())
        );
        assert_eq!(db.get(&key(table('n'), 499)).unwrap(), Some(value(499)));
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_eq!(all_keys(&db).len(), 1 + 4 * 500);
    assert_eq!(db.get(&key('m', 3)).unwrap(), Some(b"newer".to_vec()));
    assert_eq!(db.get(&key('o', 3)).unwrap(), Some(b"newer".to_vec()));
}

#[test]
fn ranges_with_a_key_between_them_are_placed_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put(&key('m', 0), b"between").unwrap();
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    let fill = |w: &mut riptide::IngestWriter, t: char| {
        for i in 0..300 {
            w.add(&key(t, i), &value(i)).unwrap();
        }
    };
    // One range from k to n holds the key m: refused.
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    fill(&mut w, 'k');
    fill(&mut w, 'n');
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy, "{err}");
    // Two ranges, k and n, each free: both go to the last level.
    let mut w = db.ingest_writer(&db.default_cf()).unwrap();
    fill(&mut w, 'k');
    w.new_range().unwrap();
    w.new_range().unwrap();
    fill(&mut w, 'n');
    let done = w.finish().unwrap();
    let last = db.statistics().levels.len() - 1;
    assert_eq!(done.level, last);
    assert_eq!(db.statistics().levels[last].files as u64, done.files + 1);
    assert_eq!(all_keys(&db).len(), 601);
    assert_eq!(db.get(&key('m', 0)).unwrap(), Some(b"between".to_vec()));
}
