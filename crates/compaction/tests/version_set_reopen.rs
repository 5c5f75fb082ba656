//! Edits applied through a VersionSet survive reopening; a failed apply changes nothing.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::Arc;

use riptide_common::ErrorKind;
use riptide_compaction::manifest::MANIFEST_TMP_FILE_NAME;
use riptide_compaction::{VersionEdit, VersionSet};
use util::{put, read_tables, write_table};

#[test]
fn apply_then_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let e = VersionSet::open(dir.path(), None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);

    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    assert_eq!(vs.state().column_families.len(), 1);
    let n1 = vs.new_file_number();
    let n2 = vs.new_file_number();
    assert_ne!(n1, n2);
    let t1 = write_table(dir.path(), n1, &[put("a", 1, "a1"), put("c", 2, "c2")]);
    let t2 = write_table(dir.path(), n2, &[put("b", 3, "b3")]);
    let v = vs
        .apply_with_tables(
            vec![
                VersionEdit::AddFile {
                    cf: 0,
                    level: 0,
                    meta: t1.meta.clone(),
                },
                VersionEdit::AddFile {
                    cf: 0,
                    level: 0,
                    meta: t2.meta.clone(),
                },
                VersionEdit::AddCf {
                    id: 1,
                    name: "other".into(),
                },
                VersionEdit::SetLogNumber {
                    cf: 0,
                    log_number: 9,
                },
            ],
            &[Arc::clone(&t1)],
        )
        .unwrap();
    // The passed handle is reused; the other one was opened.
    assert!(Arc::ptr_eq(&v.files(0, 0)[1], &t1));
    assert_eq!(v.files(0, 0)[0].number(), n2, "L0 newest first");
    assert_eq!(vs.state().last_seqno, 3, "raised to cover the files");
    let state = vs.state().clone();
    drop((v, t1, t2));
    drop(vs);

    let vs = VersionSet::open(dir.path(), None, false).unwrap();
    assert_eq!(vs.state(), &state);
    let v = vs.current();
    assert_eq!(v.levels(0).len(), 7);
    assert_eq!(v.files(0, 0).len(), 2);
    assert!(v.cf(1).is_some());
    let entries = read_tables(v.files(0, 0));
    assert_eq!(entries.len(), 3);
    // Numbers handed out before are never handed out again.
    assert!(vs.new_file_number() > n2);
}

#[test]
fn failed_apply_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let before_state = vs.state().clone();
    let before = vs.current();

    // Invalid edit: refused before anything is written.
    let e = vs
        .apply(vec![VersionEdit::DeleteFile {
            cf: 0,
            level: 0,
            number: 42,
        }])
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // Persist failure: MANIFEST.tmp cannot be created.
    let n = vs.new_file_number();
    let t = write_table(dir.path(), n, &[put("a", 1, "x")]);
    std::fs::create_dir(dir.path().join(MANIFEST_TMP_FILE_NAME)).unwrap();
    let e = vs
        .apply_with_tables(
            vec![VersionEdit::AddFile {
                cf: 0,
                level: 0,
                meta: t.meta.clone(),
            }],
            &[Arc::clone(&t)],
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert_eq!(vs.state(), &before_state);
    assert!(Arc::ptr_eq(&vs.current(), &before));
    assert!(!t.is_obsolete());

    std::fs::remove_dir(dir.path().join(MANIFEST_TMP_FILE_NAME)).unwrap();
    let v = vs
        .apply_with_tables(
            vec![VersionEdit::AddFile {
                cf: 0,
                level: 0,
                meta: t.meta.clone(),
            }],
            &[Arc::clone(&t)],
        )
        .unwrap();
    assert_eq!(v.files(0, 0).len(), 1);
}
