//! A live table that is missing, truncated or damaged makes open fail, naming the table.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_common::ErrorKind;
use riptide_compaction::{VersionEdit, VersionSet, table_file_name};
use util::{put, write_table};

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let n = vs.new_file_number();
    let t = write_table(dir.path(), n, &[put("a", 1, "x"), put("b", 1, "y")]);
    let path = t.path().to_path_buf();
    vs.apply(vec![VersionEdit::AddFile {
        cf: 0,
        level: 2,
        meta: t.meta.clone(),
    }])
    .unwrap();
    (dir, path)
}

#[test]
fn missing_live_table() {
    let (dir, path) = setup();
    std::fs::remove_file(&path).unwrap();
    let e = VersionSet::open(dir.path(), None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    let msg = e.to_string();
    assert!(msg.contains(&table_file_name(1)), "{msg}");
    assert!(msg.contains("missing"), "{msg}");
    assert!(msg.contains("level 2"), "{msg}");
}

#[test]
fn truncated_or_damaged_live_table() {
    let (dir, path) = setup();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let e = VersionSet::open(dir.path(), None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains(&table_file_name(1)), "{e}");

    // Same size, damaged footer.
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    let e = VersionSet::open(dir.path(), None, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains(&table_file_name(1)), "{e}");
}
