//! Temporary tables: rows work like any table's, a rename carries the mark, and the next
//! open of the handler drops whatever temporary table the previous process left, with its
//! rows, while ordinary tables stay.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::SessionOptions;

#[test]
fn temporary_tables_do_not_outlive_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let keep = engine
        .create_table(b"./db/keep", &[primary(), secondary("k", false)], 1)
        .unwrap();
    let tmp = engine
        .create_temporary_table(b"/tmp/#sql-1", &[primary(), secondary("k", false)], 1)
        .unwrap();
    let renamed = engine
        .create_temporary_table(b"/tmp/#sql-2", &[primary()], 1)
        .unwrap();
    assert!(engine.is_temporary(b"/tmp/#sql-1").unwrap());
    assert!(!engine.is_temporary(b"./db/keep").unwrap());
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..20u8 {
        s.insert(&keep, &[i], &[k(&[i])], b"kept").unwrap();
        s.insert(&tmp, &[i], &[k(&[i])], b"temporary").unwrap();
        s.insert(&renamed, &[i], &[], b"temporary").unwrap();
    }
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &tmp, 1).len(), 20);
    let tmp_ids: Vec<u32> = tmp.def().indexes.iter().map(|i| i.id).collect();
    drop((s, tmp, renamed));
    engine.rename_table(b"/tmp/#sql-2", b"/tmp/#sql-3").unwrap();
    assert!(engine.is_temporary(b"/tmp/#sql-3").unwrap());
    assert!(!engine.is_temporary(b"/tmp/#sql-2").unwrap());
    drop(keep);
    close(db, engine);

    let (db, engine) = open(dir.path());
    assert_eq!(engine.table_names().unwrap(), vec![b"./db/keep".to_vec()]);
    assert!(engine.open_table(b"/tmp/#sql-1").unwrap().is_none());
    assert!(engine.open_table(b"/tmp/#sql-3").unwrap().is_none());
    assert!(!engine.is_temporary(b"/tmp/#sql-1").unwrap());
    // The dropped table's keys are gone from the data column family.
    for id in tmp_ids {
        assert!(
            raw_keys(&db, &db.default_cf(), &id.to_be_bytes()).is_empty(),
            "index {id}"
        );
    }
    let keep = engine
        .open_table(b"./db/keep")
        .unwrap()
        .expect("kept table");
    assert_eq!(index_entries(&engine, &keep, 1).len(), 20);
    drop(keep);
    close(db, engine);
}

#[test]
fn a_dropped_temporary_table_leaves_no_mark() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    engine
        .create_temporary_table(b"/tmp/#sql-9", &[primary()], 1)
        .unwrap();
    assert!(engine.drop_table(b"/tmp/#sql-9").unwrap());
    assert!(!engine.is_temporary(b"/tmp/#sql-9").unwrap());
    // An ordinary table created under a leftover temporary name is not marked.
    engine
        .create_temporary_table(b"./db/t", &[primary()], 1)
        .unwrap();
    engine.create_table(b"./db/t", &[primary()], 1).unwrap();
    assert!(!engine.is_temporary(b"./db/t").unwrap());
    close(db, engine);
    let (db, engine) = open(dir.path());
    assert!(engine.open_table(b"./db/t").unwrap().is_some());
    close(db, engine);
}

/// The target of an ALTER TABLE copy: marked temporary while rows are committed into it in
/// pieces (several sessions), it is dropped with every committed piece by the next open if
/// the mark is still there (the server died mid-copy); unmarked (the copy completed), it
/// stays with all its rows.
#[test]
fn a_table_marked_temporary_mid_copy_is_dropped_at_open_and_kept_once_unmarked() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let specs = [primary(), secondary("k", true)];
    let half = engine
        .create_table(b"./db/#sql-alter-1", &specs, 1)
        .unwrap();
    let done = engine
        .create_table(b"./db/#sql-alter-2", &specs, 1)
        .unwrap();
    assert!(!engine.is_temporary(b"./db/#sql-alter-1").unwrap());
    engine.mark_temporary(b"./db/#sql-alter-1", true).unwrap();
    engine.mark_temporary(b"./db/#sql-alter-2", true).unwrap();
    assert!(engine.is_temporary(b"./db/#sql-alter-1").unwrap());
    for piece in 0..3u8 {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        for i in 0..10u8 {
            let pk = [piece, i];
            s.insert(&half, &pk, &[k(&pk)], b"copied").unwrap();
            s.insert(&done, &pk, &[k(&pk)], b"copied").unwrap();
        }
        s.commit().unwrap();
    }
    engine.mark_temporary(b"./db/#sql-alter-2", false).unwrap();
    assert!(!engine.is_temporary(b"./db/#sql-alter-2").unwrap());
    let half_ids: Vec<u32> = half.def().indexes.iter().map(|i| i.id).collect();
    assert_eq!(index_entries(&engine, &half, 1).len(), 30);
    drop((half, done));
    let missing = engine.mark_temporary(b"./db/nothing", true).unwrap_err();
    assert_eq!(
        missing.kind(),
        Some(riptide::ErrorKind::NotFound),
        "{missing}"
    );
    close(db, engine);

    let (db, engine) = open(dir.path());
    assert!(engine.open_table(b"./db/#sql-alter-1").unwrap().is_none());
    assert!(!engine.is_temporary(b"./db/#sql-alter-1").unwrap());
    for id in half_ids {
        assert!(
            raw_keys(&db, &db.default_cf(), &id.to_be_bytes()).is_empty(),
            "index {id}"
        );
    }
    let done = engine
        .open_table(b"./db/#sql-alter-2")
        .unwrap()
        .expect("the completed copy stays");
    assert_eq!(index_entries(&engine, &done, 1).len(), 30);
    drop(done);
    close(db, engine);
}
