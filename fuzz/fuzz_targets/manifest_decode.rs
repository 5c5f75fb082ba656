//! `manifest_decode`: `riptide_compaction::manifest::decode_state` on arbitrary bytes.
//!
//! Input: `mode: u8`, then the manifest bytes. Mode bit 0 set: before decoding, the header
//! checksum and every record checksum that the record framing lets us find are recomputed, so
//! the fuzzer gets past the checksums into the record decoding and the state validation
//! (random bytes almost never carry a valid xxh3). Errors are expected; panics are bugs. A
//! state that decodes must validate, and must encode and decode back to itself.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use riptide_compaction::manifest::{decode_state, encode_state};
use riptide_fuzz::fix_manifest_checksums;

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        let m = riptide_fuzz::engine_files().manifest;
        vec![
            ("engine".into(), riptide_fuzz::with_prefix(&[0], &m)),
            ("engine-fixed".into(), riptide_fuzz::with_prefix(&[1], &m)),
        ]
    }),
    |data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.to_vec();
    if mode & 1 == 1 {
        fix_manifest_checksums(&mut bytes);
    }
    let path = Path::new("fuzz/MANIFEST");
    let Ok(state) = decode_state(&bytes, path) else {
        return;
    };
    if let Err(m) = state.validate() {
        panic!("decode_state returned a state that does not validate: {m}");
    }
    let encoded = encode_state(&state);
    let again = decode_state(&encoded, path).expect("an encoded state decodes");
    assert_eq!(again, state, "state changed through encode + decode");
    assert_eq!(encode_state(&again), encoded, "encoding is not stable");
    let _ = state.live_files().count();
    let _ = state.min_log_number();
}
);
