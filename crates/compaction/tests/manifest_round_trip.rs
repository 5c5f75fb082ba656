//! A state with several column families and files survives store and load unchanged.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::edit::{ManifestState, VersionEdit};
use riptide_compaction::manifest::{decode_state, encode_state, load, store};
use util::fake_meta;

fn sample_state() -> ManifestState {
    ManifestState::new_database()
        .apply_edits(&[
            VersionEdit::AddCf {
                id: 1,
                name: "users".into(),
            },
            VersionEdit::AddCf {
                id: 5,
                name: "ünïcode".into(),
            },
            VersionEdit::AddFile {
                cf: 0,
                level: 0,
                meta: fake_meta(3, "a", "m", 30),
            },
            VersionEdit::AddFile {
                cf: 0,
                level: 0,
                meta: fake_meta(4, "b", "z", 40),
            },
            VersionEdit::AddFile {
                cf: 0,
                level: 1,
                meta: fake_meta(7, "n", "p", 10),
            },
            VersionEdit::AddFile {
                cf: 0,
                level: 1,
                meta: fake_meta(6, "a", "c", 10),
            },
            VersionEdit::AddFile {
                cf: 5,
                level: 9,
                meta: fake_meta(8, "", "\u{ff}", 12),
            },
            VersionEdit::SetLogNumber {
                cf: 1,
                log_number: 17,
            },
            VersionEdit::SetNextFileNumber(100),
            VersionEdit::SetLastSeqno(1234),
        ])
        .unwrap()
}

#[test]
fn store_then_load_gives_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        load(&riptide_common::fs::RealFs, dir.path()).unwrap(),
        None,
        "no manifest means a new database"
    );
    let state = sample_state();
    store(&riptide_common::fs::RealFs, dir.path(), &state).unwrap();
    let loaded = load(&riptide_common::fs::RealFs, dir.path())
        .unwrap()
        .unwrap();
    assert_eq!(loaded, state);
    assert_eq!(loaded.next_file_number, 100);
    assert_eq!(loaded.last_seqno, 1234);
    assert_eq!(loaded.next_cf_id, 6);
    assert_eq!(loaded.cf(1).unwrap().log_number, 17);
    assert_eq!(loaded.cf(5).unwrap().levels.len(), 10);
    let l0: Vec<u64> = loaded.cf(0).unwrap().levels[0]
        .iter()
        .map(|f| f.number)
        .collect();
    assert_eq!(l0, [4, 3], "L0 newest first");
    let l1: Vec<u64> = loaded.cf(0).unwrap().levels[1]
        .iter()
        .map(|f| f.number)
        .collect();
    assert_eq!(l1, [6, 7], "L1 by smallest key");

    // Replacing works and is deterministic.
    let next = state.apply_edits(&[VersionEdit::DropCf { id: 1 }]).unwrap();
    store(&riptide_common::fs::RealFs, dir.path(), &next).unwrap();
    assert_eq!(
        load(&riptide_common::fs::RealFs, dir.path())
            .unwrap()
            .unwrap(),
        next
    );
    let bytes = encode_state(&next);
    assert_eq!(bytes, encode_state(&next));
    assert_eq!(
        decode_state(&bytes, std::path::Path::new("x")).unwrap(),
        next
    );
    assert!(!dir.path().join("MANIFEST.tmp").exists());
}

#[test]
fn new_database_round_trips() {
    let s = ManifestState::new_database();
    let b = encode_state(&s);
    assert_eq!(&b[..8], b"RIPTMANI");
    assert_eq!(decode_state(&b, std::path::Path::new("M")).unwrap(), s);
}
