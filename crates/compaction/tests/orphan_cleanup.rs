//! Tables left by a crash mid-flush or mid-compaction (not in the manifest) are deleted on
//! open, and their numbers are not handed out again before that.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{VersionEdit, VersionSet, table_file_path};
use util::{put, write_table};

#[test]
fn orphans_are_removed_and_numbers_skip_past_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let live = vs.new_file_number();
    let t = write_table(dir.path(), live, &[put("a", 1, "x")]);
    vs.apply(vec![VersionEdit::AddFile {
        cf: 0,
        level: 0,
        meta: t.meta.clone(),
    }])
    .unwrap();
    drop(t);
    // Crash: a flush wrote a table and a WAL segment got a number, nothing was recorded.
    let orphan = vs.new_file_number();
    let wal = vs.new_file_number();
    drop(write_table(dir.path(), orphan, &[put("b", 2, "y")]));
    std::fs::write(dir.path().join(format!("{wal:06}.log")), b"wal").unwrap();
    std::fs::write(dir.path().join("LOCK"), b"").unwrap();
    drop(vs);

    let vs = VersionSet::open(dir.path(), None, false).unwrap();
    assert!(
        !table_file_path(dir.path(), orphan).exists(),
        "orphan deleted"
    );
    assert!(
        table_file_path(dir.path(), live).exists(),
        "live table kept"
    );
    assert!(
        dir.path().join(format!("{wal:06}.log")).exists(),
        "other files untouched"
    );
    assert!(dir.path().join("LOCK").exists());
    assert!(
        vs.new_file_number() > wal,
        "no number seen on disk is reused"
    );
    assert_eq!(vs.current().files(0, 0).len(), 1);
}
