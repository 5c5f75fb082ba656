//! A crash between writing MANIFEST.tmp and renaming it keeps the old state; the leftover is
//! removed on load.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::edit::{ManifestState, VersionEdit};
use riptide_compaction::manifest::{MANIFEST_TMP_FILE_NAME, encode_state, load, store};
use util::fake_meta;

#[test]
fn leftover_tmp_is_ignored_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let old = ManifestState::new_database()
        .apply_edits(&[VersionEdit::AddFile {
            cf: 0,
            level: 0,
            meta: fake_meta(2, "a", "b", 5),
        }])
        .unwrap();
    store(&riptide_common::fs::RealFs, dir.path(), &old).unwrap();
    let tmp = dir.path().join(MANIFEST_TMP_FILE_NAME);

    // A complete new state that was never renamed into place.
    let new = old.apply_edits(&[VersionEdit::SetLastSeqno(99)]).unwrap();
    std::fs::write(&tmp, encode_state(&new)).unwrap();
    assert_eq!(
        load(&riptide_common::fs::RealFs, dir.path())
            .unwrap()
            .unwrap(),
        old
    );
    assert!(!tmp.exists());

    // A torn one.
    let torn = encode_state(&new);
    std::fs::write(&tmp, &torn[..torn.len() / 2]).unwrap();
    assert_eq!(
        load(&riptide_common::fs::RealFs, dir.path())
            .unwrap()
            .unwrap(),
        old
    );
    assert!(!tmp.exists());
}

#[test]
fn failed_store_keeps_the_old_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let old = ManifestState::new_database();
    store(&riptide_common::fs::RealFs, dir.path(), &old).unwrap();
    // A directory in the way makes creating MANIFEST.tmp fail.
    std::fs::create_dir(dir.path().join(MANIFEST_TMP_FILE_NAME)).unwrap();
    let new = old.apply_edits(&[VersionEdit::SetLastSeqno(7)]).unwrap();
    assert!(store(&riptide_common::fs::RealFs, dir.path(), &new).is_err());
    std::fs::remove_dir(dir.path().join(MANIFEST_TMP_FILE_NAME)).unwrap();
    assert_eq!(
        load(&riptide_common::fs::RealFs, dir.path())
            .unwrap()
            .unwrap(),
        old
    );
}
