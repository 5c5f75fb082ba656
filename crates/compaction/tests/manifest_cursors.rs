//! Manifest version 2: round-robin compaction cursors are stored and read back, version 1
//! manifests (without cursors) stay readable, and a cursor record in a version 1 file or for
//! an unknown column family is corruption.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::Path;

use riptide_common::ErrorKind;
use riptide_compaction::edit::{CfState, ManifestState, VersionEdit};
use riptide_compaction::manifest::{decode_state, encode_state};

fn state() -> ManifestState {
    let st = ManifestState {
        next_file_number: 10,
        last_seqno: 5,
        next_cf_id: 2,
        column_families: vec![CfState::new(0, "default"), CfState::new(1, "logs")],
    };
    st.apply_edits(&[
        VersionEdit::SetCompactCursor {
            cf: 1,
            level: 3,
            key: b"m".to_vec(),
        },
        VersionEdit::SetCompactCursor {
            cf: 0,
            level: 1,
            key: b"k\x00z".to_vec(),
        },
    ])
    .unwrap()
}

/// Rewrites the header to `version` with a matching checksum.
fn set_version(bytes: &mut [u8], version: u32) {
    bytes[8..12].copy_from_slice(&version.to_le_bytes());
    let sum = riptide_common::checksum::checksum(&bytes[..12]);
    bytes[12..20].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn cursors_round_trip() {
    let st = state();
    let back = decode_state(&encode_state(&st), Path::new("MANIFEST")).unwrap();
    assert_eq!(back, st);
    assert_eq!(back.column_families[1].compact_cursors[&3], b"m".to_vec());
    assert_eq!(
        back.column_families[0].compact_cursors[&1],
        b"k\x00z".to_vec()
    );
}

#[test]
fn version_1_without_cursors_is_read() {
    let mut st = state();
    for cf in &mut st.column_families {
        cf.compact_cursors.clear();
    }
    let mut bytes = encode_state(&st);
    set_version(&mut bytes, 1);
    assert_eq!(decode_state(&bytes, Path::new("MANIFEST")).unwrap(), st);
}

#[test]
fn a_cursor_record_in_version_1_is_corruption() {
    let mut bytes = encode_state(&state());
    set_version(&mut bytes, 1);
    let e = decode_state(&bytes, Path::new("MANIFEST")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("kind 5"), "{e}");
}

#[test]
fn a_cursor_beyond_the_levels_is_refused() {
    let mut st = state();
    let e = st
        .apply_edits(&[VersionEdit::SetCompactCursor {
            cf: 9,
            level: 1,
            key: b"x".to_vec(),
        }])
        .unwrap_err();
    assert_ne!(e.kind(), ErrorKind::Io, "{e}");
    st.column_families[0]
        .compact_cursors
        .insert(40, b"x".to_vec());
    let e = decode_state(&encode_state(&st), Path::new("MANIFEST")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");
    assert!(e.to_string().contains("level 40"), "{e}");
}
