//! The committed header `include/riptide.h` is what cbindgen generates from the current
//! source. After changing the ABI, regenerate it with
//! `RIPTIDE_BLESS=1 cargo test -p riptide-capi --test header_is_fresh` or
//! `cargo test -p riptide-capi -- --ignored regenerate_header`.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    crate_dir().join("include").join("riptide.h")
}

/// The header cbindgen generates from the crate's source, in memory.
fn generate() -> String {
    let config =
        cbindgen::Config::from_file(crate_dir().join("cbindgen.toml")).expect("read cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir())
        .with_config(config)
        .generate()
        .expect("cbindgen failed to generate the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the generated header is UTF-8")
}

fn write_header(text: &str) {
    std::fs::create_dir_all(header_path().parent().unwrap()).unwrap();
    std::fs::write(header_path(), text).unwrap();
}

#[test]
fn header_is_fresh() {
    let fresh = generate();
    if std::env::var("RIPTIDE_BLESS").is_ok_and(|v| v == "1") {
        write_header(&fresh);
        return;
    }
    let committed = std::fs::read_to_string(header_path()).unwrap_or_default();
    if committed != fresh {
        let first_diff = committed
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || "one is a prefix of the other".to_string(),
                |i| format!("first difference at line {}", i + 1),
            );
        panic!(
            "{} is stale ({first_diff}): run `cargo test -p riptide-capi -- --ignored \
             regenerate_header` (or set RIPTIDE_BLESS=1) and commit the result",
            header_path().display()
        );
    }
}

/// Rewrites the committed header from the source.
#[test]
#[ignore = "rewrites include/riptide.h; run on purpose after an ABI change"]
fn regenerate_header() {
    write_header(&generate());
}
