//! A file removed by a version edit is deleted only once the last version or iterator using
//! it is gone.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_common::InternalIterator;
use riptide_compaction::{VersionEdit, VersionSet};
use util::{put, write_table};

#[test]
fn deleted_after_last_reader_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let n = vs.new_file_number();
    let t = write_table(dir.path(), n, &[put("a", 1, "x"), put("b", 2, "y")]);
    let path = t.path().to_path_buf();
    let meta = t.meta.clone();
    drop(t);
    vs.apply(vec![VersionEdit::AddFile {
        cf: 0,
        level: 0,
        meta,
    }])
    .unwrap();

    // A reader pins the version, another an iterator over the table.
    let old_version = vs.current();
    let mut it = old_version.files(0, 0)[0].iter();
    it.seek_to_first().unwrap();

    vs.apply(vec![VersionEdit::DeleteFile {
        cf: 0,
        level: 0,
        number: n,
    }])
    .unwrap();
    assert!(vs.current().files(0, 0).is_empty());
    assert!(old_version.files(0, 0)[0].is_obsolete());
    assert!(path.exists(), "still used by the old version");

    drop(old_version);
    assert!(path.exists(), "still used by the iterator");
    assert!(it.valid());
    it.next().unwrap();
    assert_eq!(riptide_common::key::user_key(it.key()), b"b");

    drop(it);
    assert!(!path.exists(), "deleted with the last reference");
}

#[test]
fn dropping_a_column_family_obsoletes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    vs.apply(vec![VersionEdit::AddCf {
        id: 1,
        name: "x".into(),
    }])
    .unwrap();
    let n = vs.new_file_number();
    let t = write_table(dir.path(), n, &[put("a", 1, "x")]);
    let path = t.path().to_path_buf();
    vs.apply_with_tables(
        vec![VersionEdit::AddFile {
            cf: 1,
            level: 3,
            meta: t.meta.clone(),
        }],
        &[t],
    )
    .unwrap();
    vs.apply(vec![VersionEdit::DropCf { id: 1 }]).unwrap();
    assert!(!path.exists());
}
