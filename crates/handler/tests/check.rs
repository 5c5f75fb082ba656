//! CHECK / ANALYZE / OPTIMIZE TABLE: `Session::check_table` passes a consistent table and
//! finds planted inconsistencies (a missing entry, a dangling entry, an entry whose key does
//! not match its row, a row that cannot be decoded), naming the index; `refresh_statistics` recounts rows; `compact`
//! keeps the data.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::{Result, SessionOptions};

/// Rows in these tests are "a|b": secondary key 1 is `a`, secondary key 2 is `b`.
/// A row without `|` cannot be decoded.
fn keys_of(_pk: &[u8], row: &[u8]) -> Result<Option<Vec<Vec<u8>>>> {
    if !row.contains(&b'|') {
        return Ok(None);
    }
    Ok(Some(
        row.split(|c| *c == b'|').map(<[u8]>::to_vec).collect(),
    ))
}

#[test]
fn check_table_passes_a_consistent_table_and_finds_planted_problems() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    // Another table first, so index ranges have neighbours on both sides.
    let other = engine
        .create_table(b"other", &[primary(), secondary("o", false)], 1)
        .unwrap();
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("ka", false), secondary("ub", true)],
            1,
        )
        .unwrap();
    let after = engine
        .create_table(b"after", &[primary(), secondary("z", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..50u8 {
        s.insert(&other, &[i], &[k(b"q")], b"q").unwrap();
        s.insert(&after, &[i], &[k(b"r")], b"r").unwrap();
    }
    s.insert(&t, b"1", &[k(b"x"), k(b"p")], b"x|p").unwrap();
    s.insert(&t, b"2", &[k(b"y"), k(b"q")], b"y|q").unwrap();
    s.insert(&t, b"3", &[k(b"x"), k(b"r")], b"x|r").unwrap();
    s.commit().unwrap();
    drop(s);

    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s.check_table(&t, &mut keys_of, 10).unwrap();
    assert!(r.is_ok(), "{r:?}");
    drop(s);
    // Also from table files, not only the memtable.
    db.flush().unwrap();
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s.check_table(&t, &mut keys_of, 10).unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!((r.rows, r.entries), (3, 6));
    drop(s);

    // Plant: the entry of row 2 in `ka` disappears; `ub` gets an entry for a row that does
    // not exist and one whose key is not the row's.
    let data = db.default_cf();
    db.delete_cf(&data, &raw_secondary_entry(&t, 1, b"y", b"2"))
        .unwrap();
    db.put_cf(&data, &raw_secondary_entry(&t, 2, b"s", b"9"), b"")
        .unwrap();
    db.put_cf(&data, &raw_secondary_entry(&t, 2, b"w", b"1"), b"")
        .unwrap();
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s.check_table(&t, &mut keys_of, 10).unwrap();
    assert_eq!(r.problem_count, 3, "{r:?}");
    let text: Vec<String> = r.problems.iter().map(ToString::to_string).collect();
    assert!(
        text[0].starts_with("index `ka`: the row with primary key 32 has no entry"),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|p| p.starts_with("index `ub`") && p.contains("which has no row")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|p| p.starts_with("index `ub`") && p.contains("whose row has key 70")),
        "{text:?}"
    );
    assert_eq!(r.problems[0].index, 1);
    // The cap keeps the count but not every message.
    let r = s.check_table(&t, &mut keys_of, 1).unwrap();
    assert_eq!((r.problem_count, r.problems.len()), (3, 1));
    // The neighbours are untouched and consistent.
    let mut one_key = |_: &[u8], row: &[u8]| Ok(Some(vec![row.to_vec()]));
    assert!(s.check_table(&other, &mut one_key, 10).unwrap().is_ok());
    assert!(s.check_table(&after, &mut one_key, 10).unwrap().is_ok());
    drop(s);
    // A row that cannot be decoded is a problem of the primary key, not an error.
    db.put_cf(&data, &raw_primary(&t, b"4"), b"garbage")
        .unwrap();
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s.check_table(&t, &mut keys_of, 10).unwrap();
    assert_eq!(r.problem_count, 4, "{r:?}");
    assert!(
        r.problems.iter().any(|p| p.index == 0
            && p.to_string()
                == "index `PRIMARY`: the row with primary key 34 cannot be decoded (7 bytes)"),
        "{r:?}"
    );
    drop(s);
    drop((other, t, after));
    close(db, engine);
}

#[test]
fn check_table_sees_the_sessions_own_writes_and_a_failing_callback_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[hidden(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let id = t.next_hidden_row_id().unwrap().to_be_bytes();
    s.insert(&t, &id, &[k(b"v")], b"v").unwrap();
    let r = s
        .check_table(&t, &mut |_, row| Ok(Some(vec![row.to_vec()])), 10)
        .unwrap();
    assert!(r.is_ok() && r.rows == 1 && r.entries == 1, "{r:?}");
    let e = s
        .check_table(
            &t,
            &mut |_, _| Err(riptide::Error::invalid_argument("no keys").into()),
            10,
        )
        .unwrap_err();
    assert!(e.to_string().contains("no keys"), "{e}");
    s.commit().unwrap();
    drop(s);
    drop(t);
    close(db, engine);
}

#[test]
fn analyze_recounts_rows_and_optimize_keeps_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..200u8 {
        s.insert(&t, &[i], &[k(&[i % 7])], &[i % 7]).unwrap();
    }
    s.commit().unwrap();
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..50u8 {
        s.delete(&t, &[i], &[k(&[i % 7])]).unwrap();
    }
    s.commit().unwrap();
    drop(s);
    // Rows written behind the estimate's back (as after a crash): ANALYZE finds them.
    db.put_cf(&db.default_cf(), &raw_primary(&t, &[250]), &[0])
        .unwrap();
    assert_eq!(t.refresh_statistics().unwrap(), 151);
    assert_eq!(t.row_estimate(), 151);
    db.delete_cf(&db.default_cf(), &raw_primary(&t, &[250]))
        .unwrap();
    t.compact().unwrap();
    assert_eq!(index_entries(&engine, &t, 0).len(), 150);
    assert_eq!(index_entries(&engine, &t, 1).len(), 150);
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s
        .check_table(&t, &mut |_, row| Ok(Some(vec![row.to_vec()])), 10)
        .unwrap();
    assert!(r.is_ok() && r.rows == 150, "{r:?}");
    drop(s);
    drop(t);
    close(db, engine);
}

/// A primary row key as FORMAT.md lays it out: index id + pk.
fn raw_primary(t: &riptide_handler::Table, pk: &[u8]) -> Vec<u8> {
    let mut k = t.index_prefix(0).unwrap().to_vec();
    k.extend_from_slice(pk);
    k
}

#[test]
fn check_table_after_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let other = engine
        .create_table(b"other", &[primary(), secondary("o", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..50u8 {
        s.insert(&other, &[0x80, i], &[k(b"q")], b"q").unwrap();
    }
    s.commit().unwrap();
    drop(s);
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("ka", false), secondary("ub", true)],
            1,
        )
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x"), k(b"p")], b"x|p").unwrap();
    s.insert(&t, b"2", &[k(b"y"), k(b"q")], b"y|q").unwrap();
    s.insert(&t, b"3", &[k(b"x"), k(b"r")], b"x|r").unwrap();
    s.commit().unwrap();
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.update(
        &t,
        b"1",
        &[k(b"x"), k(b"p")],
        b"1",
        &[k(b"z"), k(b"p")],
        b"z|p",
        None,
    )
    .unwrap();
    s.commit().unwrap();
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.delete(&t, b"3", &[k(b"x"), k(b"r")]).unwrap();
    s.commit().unwrap();
    drop(s);
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    let r = s.check_table(&t, &mut keys_of, 10).unwrap();
    assert!(r.is_ok(), "{r:?}");
    drop(s);
    drop((other, t));
    close(db, engine);
}

#[test]
fn index_stats_persist_until_the_indexes_change() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    assert_eq!(t.index_stats(), None);
    t.set_index_stats(vec![150, 150, 7]).unwrap();
    assert_eq!(t.index_stats(), Some(vec![150, 150, 7]));
    // Replaced whole by the next ANALYZE.
    t.set_index_stats(vec![151, 151, 8]).unwrap();
    drop(t);
    close(db, engine);

    // Persisted: a restart finds them.
    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"t").unwrap().unwrap();
    assert_eq!(t.index_stats(), Some(vec![151, 151, 8]));
    // Counters written later (the row estimate's lazy persist) keep them.
    t.refresh_statistics().unwrap();
    drop(t);
    close(db, engine);
    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"t").unwrap().unwrap();
    assert_eq!(t.index_stats(), Some(vec![151, 151, 8]));

    // An index dropped in place: the numbers describe other indexes, and are gone.
    let build = engine.begin_index_build(b"t", &[]).unwrap();
    let t2 = engine
        .commit_index_build(build, &[riptide_handler::IndexSlot::Existing(0)], b"v2")
        .unwrap();
    assert_eq!(t2.index_stats(), None);
    drop((t, t2));
    close(db, engine);
    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"t").unwrap().unwrap();
    assert_eq!(t.index_stats(), None);

    // TRUNCATE makes a table without them.
    t.set_index_stats(vec![1, 1]).unwrap();
    drop(t);
    let t = engine.truncate_table(b"t").unwrap();
    assert_eq!(t.index_stats(), None);
    drop(t);
    close(db, engine);
}
