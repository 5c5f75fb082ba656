//! The round-robin compaction cursor of each level survives a restart (it is stored in the
//! manifest with the job that moved it), so compaction resumes where it left off instead of
//! starting again at the beginning of every level.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use riptide::{Db, Options};

fn options() -> Options {
    Options::default()
        .write_buffer_size(64 << 10)
        .target_file_size(64 << 10)
        .max_bytes_for_level_base(256 << 10)
        .level_size_ratio(4.0)
        .l0_compaction_trigger(2)
}

#[test]
fn cursors_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..20_000u64 {
        let k = format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        db.put(k.as_bytes(), &[b'v'; 40]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    db.close().unwrap();
    // Reopened with no writes and everything compacted, nothing moves a cursor any more:
    // what is read now came from the manifest.
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    let before: Vec<Option<Vec<u8>>> = (0..8).map(|l| db.compaction_cursor(&cf, l)).collect();
    assert!(
        before.iter().any(Option::is_some),
        "size-triggered compactions should have moved and persisted some cursor"
    );
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    let after: Vec<Option<Vec<u8>>> = (0..8).map(|l| db.compaction_cursor(&cf, l)).collect();
    assert_eq!(before, after);
}
