//! Bulk load (`Session::set_bulk_load`, `riptide_bulk_load` in MariaDB): rows inserted into
//! an empty table are sorted on the side and ingested at commit; duplicates among them fail
//! the commit with nothing written; a table that holds anything takes the ordinary path; a
//! rolled-back statement holding loaded rows makes the commit refuse; prepare refuses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::{HandlerError, SessionOptions};

/// Row `pk`: secondary `a` (non-unique) = `pk % 7`, unique `u` = `pk` (NULL for every
/// 10th row).
fn insert_row(
    s: &mut riptide_handler::Session,
    t: &std::sync::Arc<riptide_handler::Table>,
    pk: u32,
) -> Result<(), HandlerError> {
    let a = [(pk % 7) as u8];
    let u = pk.to_be_bytes();
    let ukey = if pk.is_multiple_of(10) {
        null_key(&[0, 0, 0, 0])
    } else {
        k(&u)
    };
    s.insert(
        t,
        &pk.to_be_bytes(),
        &[k(&a), ukey],
        format!("row{pk}").as_bytes(),
    )
}

#[test]
fn a_load_into_an_empty_table_is_ingested_at_commit_and_unseen_before() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("u", true)],
            1,
        )
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    // Not in primary-key order: the sort puts them in order.
    for i in 0..20_000u32 {
        insert_row(&mut s, &t, (i * 7_919) % 20_000).unwrap();
    }
    assert_eq!(
        s.get_row(&t, &5u32.to_be_bytes(), Default::default())
            .unwrap(),
        None
    );
    let written = db.statistics().keys_written;
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!(outcome.rows, 20_000);
    assert_eq!(outcome.entries, 60_000);
    assert!(db.statistics().ingested_files > 0);
    assert_eq!(t.row_estimate(), 20_000);
    assert!(
        db.statistics().keys_written - written < 10,
        "nothing row by row"
    );
    assert_eq!(index_entries(&engine, &t, 0).len(), 20_000);
    let a = index_entries(&engine, &t, 1);
    assert_eq!(a.len(), 20_000);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(index_entries(&engine, &t, 2).len(), 20_000);
    drop(s);
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    assert_eq!(
        s.get_row(&t, &5u32.to_be_bytes(), Default::default())
            .unwrap(),
        Some(b"row5".to_vec())
    );
    drop(s);
    // Ordinary writes afterwards see the loaded keys.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let err = insert_row(&mut s, &t, 17).unwrap_err();
    assert_eq!(err.duplicate_index(), Some(0));
    drop((s, t));
    close(db, engine);
}

#[test]
fn duplicates_among_loaded_rows_fail_the_commit_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("u", true)],
            1,
        )
        .unwrap();
    let files = db.statistics().ingested_files;
    // The primary key twice.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [1u32, 2, 3, 2] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(0));
    // A unique key twice (rows 31 and 99); NULLs (rows 10 and 20) never conflict.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [10u32, 20, 31] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    s.insert(
        &t,
        &99u32.to_be_bytes(),
        &[k(&[1]), k(&31u32.to_be_bytes())],
        b"x",
    )
    .unwrap();
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(2));
    assert_eq!(db.statistics().ingested_files, files, "nothing ingested");
    assert!(index_entries(&engine, &t, 0).is_empty());
    // NULLs alone: accepted.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [10u32, 20, 30] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &t, 2).len(), 3);
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_table_holding_rows_takes_the_ordinary_path() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("u", true)],
            1,
        )
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    insert_row(&mut s, &t, 1).unwrap();
    s.commit().unwrap();
    let files = db.statistics().ingested_files;
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    insert_row(&mut s, &t, 2).unwrap();
    // Seen at once, and a duplicate is refused at its row.
    assert!(
        s.get_row(&t, &2u32.to_be_bytes(), Default::default())
            .unwrap()
            .is_some()
    );
    assert_eq!(
        insert_row(&mut s, &t, 1).unwrap_err().duplicate_index(),
        Some(0)
    );
    s.commit().unwrap();
    assert_eq!(db.statistics().ingested_files, files);
    assert_eq!(index_entries(&engine, &t, 0).len(), 2);
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_rolled_back_statement_holding_loaded_rows_makes_the_commit_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.begin_statement().unwrap();
    s.insert(&t, &1u32.to_be_bytes(), &[], b"a").unwrap();
    s.end_statement(true).unwrap();
    s.begin_statement().unwrap();
    s.insert(&t, &2u32.to_be_bytes(), &[], b"b").unwrap();
    s.end_statement(false).unwrap();
    let err = s.commit().unwrap_err();
    assert!(err.to_string().contains("cannot take rows back"), "{err}");
    assert!(index_entries(&engine, &t, 0).is_empty());
    // A statement rolled back before any loaded row is harmless.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.begin_statement().unwrap();
    s.end_statement(false).unwrap();
    s.begin_statement().unwrap();
    s.insert(&t, &3u32.to_be_bytes(), &[], b"c").unwrap();
    s.end_statement(true).unwrap();
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &t, 0).len(), 1);
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_transaction_holding_a_bulk_load_cannot_be_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.insert(&t, &1u32.to_be_bytes(), &[], b"a").unwrap();
    let xid = riptide::Xid::new(1, b"g", b"b").unwrap();
    let err = s.prepare(&xid).unwrap_err();
    assert!(err.to_string().contains("cannot be prepared"), "{err}");
    s.rollback().unwrap();
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop((s, t));
    close(db, engine);
}

#[test]
fn an_insert_after_bulk_load_is_turned_off_still_joins_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.insert(&t, &1u32.to_be_bytes(), &[], b"loaded").unwrap();
    s.set_bulk_load(false);
    // The same key again: found at commit, not written over the loaded row.
    s.insert(&t, &1u32.to_be_bytes(), &[], b"ordinary").unwrap();
    assert_eq!(s.bulk_rows(), 2);
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(0));
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop((s, t));
    close(db, engine);
}
