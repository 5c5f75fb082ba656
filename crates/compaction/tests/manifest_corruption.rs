//! Torn or damaged manifests are Corruption errors naming the file and an offset; an unknown
//! format version is refused as NotSupported.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_common::ErrorKind;
use riptide_compaction::edit::{ManifestState, VersionEdit};
use riptide_compaction::manifest::{encode_state, load, manifest_path, store};
use util::fake_meta;

fn state() -> ManifestState {
    ManifestState::new_database()
        .apply_edits(&[
            VersionEdit::AddFile {
                cf: 0,
                level: 0,
                meta: fake_meta(3, "a", "m", 30),
            },
            VersionEdit::AddFile {
                cf: 0,
                level: 2,
                meta: fake_meta(4, "k", "q", 20),
            },
        ])
        .unwrap()
}

#[test]
fn every_truncation_is_corruption_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = encode_state(&state());
    let path = manifest_path(dir.path());
    for len in 0..bytes.len() {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption, "len {len}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&path.display().to_string()),
            "len {len}: {msg}"
        );
        assert!(msg.contains("offset"), "len {len}: {msg}");
    }
}

#[test]
fn a_flipped_payload_byte_names_the_record_offset() {
    let dir = tempfile::tempdir().unwrap();
    store(&riptide_common::fs::RealFs, dir.path(), &state()).unwrap();
    let path = manifest_path(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // Header is 20 bytes; the STATE record starts there; its payload starts at 20 + 5.
    bytes[20 + 5] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(
        e.to_string()
            .contains("record at offset 20: checksum mismatch"),
        "{e}"
    );
}

#[test]
fn trailing_garbage_and_bad_magic_are_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest_path(dir.path());
    let mut bytes = encode_state(&state());
    bytes.push(0);
    std::fs::write(&path, &bytes).unwrap();
    let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("after the end record"), "{e}");

    std::fs::write(&path, b"hello, this is not a manifest at all").unwrap();
    let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("bad magic at offset 0"), "{e}");
}

#[test]
fn unknown_version_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = manifest_path(dir.path());
    let mut bytes = encode_state(&state());
    // A newer writer: version 3 with a header checksum that matches it.
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    let sum = riptide_common::checksum::checksum(&bytes[..12]);
    bytes[12..20].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("format version 3"), "{e}");

    // The same version bytes without a matching checksum are damage, not a newer format.
    bytes[8..12].copy_from_slice(&0u32.to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let e = load(&riptide_common::fs::RealFs, dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
}
