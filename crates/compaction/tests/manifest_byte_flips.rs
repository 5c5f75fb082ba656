//! Flipping any bit pattern in any byte of a small manifest never panics and never decodes
//! to a state.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::path::Path;

use riptide_compaction::edit::{ManifestState, VersionEdit};
use riptide_compaction::manifest::{decode_state, encode_state};
use util::fake_meta;

#[test]
fn every_byte_flip_is_an_error() {
    let state = ManifestState::new_database()
        .apply_edits(&[
            VersionEdit::AddCf {
                id: 1,
                name: "cf".into(),
            },
            VersionEdit::AddFile {
                cf: 1,
                level: 1,
                meta: fake_meta(3, "a", "m", 30),
            },
            VersionEdit::SetLogNumber {
                cf: 0,
                log_number: 2,
            },
        ])
        .unwrap();
    let bytes = encode_state(&state);
    let path = Path::new("/db/MANIFEST");
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x10, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= mask;
            let r = decode_state(&b, path);
            assert!(
                r.is_err(),
                "flip {mask:#x} at {i} decoded to {:?}",
                r.unwrap()
            );
            let msg = r.unwrap_err().to_string();
            assert!(msg.contains("/db/MANIFEST"), "{msg}");
        }
    }
}
