//! The data dictionary: CREATE / DROP / RENAME / TRUNCATE, persistence across reopen, and
//! DROP + CREATE of one name never showing old rows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::{IndexKind, SessionOptions};

#[test]
fn the_dictionary_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"./db/t",
            &[primary(), secondary("k", false), secondary("u", true)],
            5,
        )
        .unwrap();
    let def = t.def().clone();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"a"), k(b"x")], b"row1").unwrap();
    s.commit().unwrap();
    drop((t, s));
    close(db, engine);

    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"./db/t").unwrap().expect("table");
    assert_eq!(t.def(), &def);
    assert_eq!(t.index(2).unwrap().name, "u");
    assert!(t.index(2).unwrap().unique);
    assert_eq!(t.index(0).unwrap().kind, IndexKind::Primary);
    assert_eq!(t.autoinc_next(), 5);
    assert_eq!(t.row_estimate(), 1);
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![(b"a".to_vec(), b"1".to_vec())]
    );
    assert_eq!(engine.table_names().unwrap(), vec![b"./db/t".to_vec()]);
    assert!(engine.open_table(b"./db/none").unwrap().is_none());
    drop(t);
    close(db, engine);
}

#[test]
fn drop_and_create_of_one_name_never_sees_old_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("k", false)], 1)
        .unwrap();
    let old_ids: Vec<u32> = t.def().indexes.iter().map(|i| i.id).collect();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..50u8 {
        s.insert(&t, &[i], &[k(&[i % 3])], b"old").unwrap();
    }
    s.commit().unwrap();
    assert!(engine.drop_table(b"t").unwrap());
    assert!(!engine.drop_table(b"t").unwrap());
    let t2 = engine
        .create_table(b"t", &[primary(), secondary("k", false)], 1)
        .unwrap();
    for ix in &t2.def().indexes {
        assert!(!old_ids.contains(&ix.id), "index id {} reused", ix.id);
    }
    assert!(index_entries(&engine, &t2, 0).is_empty());
    assert!(index_entries(&engine, &t2, 1).is_empty());
    assert_eq!(t2.row_estimate(), 0);
    // The old keys are gone from the database, not just unreachable.
    let mut it = db.iter(riptide::ReadOptions::default()).unwrap();
    it.seek_to_first().unwrap();
    assert!(!it.valid(), "old rows left behind: {:?}", it.key());
    drop(it);
    drop((t, t2, s));
    close(db, engine);
}

#[test]
fn rename_and_truncate() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"a", &[hidden(), secondary("k", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let id = t.next_hidden_row_id().unwrap().to_be_bytes();
    s.insert(&t, &id, &[k(b"v")], b"row").unwrap();
    s.commit().unwrap();
    engine.create_table(b"b", &[primary()], 1).unwrap();
    let e = engine.rename_table(b"a", b"b").unwrap_err();
    assert_eq!(e.kind(), Some(riptide::ErrorKind::Busy));
    let e = engine.rename_table(b"zz", b"c").unwrap_err();
    assert_eq!(e.kind(), Some(riptide::ErrorKind::NotFound));
    engine.rename_table(b"a", b"c").unwrap();
    assert!(engine.open_table(b"a").unwrap().is_none());
    let c = engine.open_table(b"c").unwrap().unwrap();
    assert_eq!(c.id(), t.id());
    assert_eq!(index_entries(&engine, &c, 1).len(), 1);
    let c2 = engine.truncate_table(b"c").unwrap();
    assert_ne!(c2.def().indexes[0].id, c.def().indexes[0].id);
    assert!(index_entries(&engine, &c2, 0).is_empty());
    assert!(index_entries(&engine, &c2, 1).is_empty());
    drop((t, c, c2, s));
    close(db, engine);
    let (db, engine) = open(dir.path());
    let c = engine.open_table(b"c").unwrap().unwrap();
    assert!(index_entries(&engine, &c, 0).is_empty());
    let mut names = engine.table_names().unwrap();
    names.sort();
    assert_eq!(names, vec![b"b".to_vec(), b"c".to_vec()]);
    drop(c);
    close(db, engine);
}

#[test]
fn bad_definitions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    assert!(engine.create_table(b"t", &[], 1).is_err());
    assert!(
        engine
            .create_table(b"t", &[secondary("k", false)], 1)
            .is_err()
    );
    assert!(
        engine
            .create_table(b"t", &[primary(), primary()], 1)
            .is_err()
    );
    assert!(engine.create_table(b"", &[primary()], 1).is_err());
    close(db, engine);
}

/// The caller's key format is recorded at CREATE, survives a reopen and a rename, and a
/// table created before the caller set one reads 0.
#[test]
fn tables_keep_the_key_format_they_were_created_with() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let old = engine.create_table(b"./db/old", &[primary()], 1).unwrap();
    assert_eq!(old.key_format(), 0);
    engine.set_key_format(2).unwrap();
    let new = engine.create_table(b"./db/new", &[primary()], 1).unwrap();
    assert_eq!(new.key_format(), 2);
    assert!(engine.set_key_format(128).is_err());
    drop((old, new));
    engine.rename_table(b"./db/new", b"./db/renamed").unwrap();
    close(db, engine);

    let (db, engine) = open(dir.path());
    let old = engine.open_table(b"./db/old").unwrap().expect("table");
    let renamed = engine.open_table(b"./db/renamed").unwrap().expect("table");
    assert_eq!((old.key_format(), renamed.key_format()), (0, 2));
    drop((old, renamed));
    close(db, engine);
}

/// The table files of the default column family (where rows live).
fn data_files(db: &riptide::Db) -> u64 {
    db.statistics().levels.iter().map(|l| l.files as u64).sum()
}

#[test]
fn dropped_and_truncated_tables_free_their_files_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let opts = riptide::Options::default()
        .write_buffer_size(256 << 10)
        .target_file_size(64 << 10);
    let db = std::sync::Arc::new(riptide::Db::open(dir.path(), opts).unwrap());
    let engine = riptide_handler::HandlerEngine::open(std::sync::Arc::clone(&db)).unwrap();
    let mut tables = Vec::new();
    for name in [&b"gone"[..], b"emptied", b"kept"] {
        let t = engine
            .create_table(name, &[primary(), secondary("k", false)], 1)
            .unwrap();
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        for i in 0..3_000u32 {
            let pk = i.to_be_bytes();
            s.insert(&t, &pk, &[k(&(i % 7).to_be_bytes())], &[b'r'; 200])
                .unwrap();
        }
        s.commit().unwrap();
        tables.push(t);
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    let before = data_files(&db);
    assert!(before > 20, "{before} files");

    assert!(engine.drop_table(b"gone").unwrap());
    let after_drop = data_files(&db);
    let freed = db.statistics().range_files_deleted;
    assert!(freed >= 5, "{freed} of {before} files freed by the drop");
    assert_eq!(after_drop, before - freed);
    engine.truncate_table(b"emptied").unwrap();
    let freed_too = db.statistics().range_files_deleted - freed;
    assert!(freed_too >= 5, "{freed_too} files freed by the truncate");
    assert_eq!(data_files(&db), after_drop - freed_too);

    // The kept table reads whole; the others are empty.
    let kept = engine.open_table(b"kept").unwrap().expect("kept");
    assert_eq!(index_entries(&engine, &kept, 0).len(), 3_000);
    assert_eq!(index_entries(&engine, &kept, 1).len(), 3_000);
    let emptied = engine.open_table(b"emptied").unwrap().expect("emptied");
    assert!(index_entries(&engine, &emptied, 0).is_empty());
    drop((tables, kept, emptied));
    close(db, engine);
}
