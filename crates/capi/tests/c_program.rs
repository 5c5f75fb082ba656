//! Compiles `tests/c/smoke.c` against the committed header and the static library cargo
//! built for this test run (`libriptide_capi.a`), runs it on a temporary directory, and checks
//! its exit status and output. A missing C compiler fails the test: the C ABI is not tested
//! otherwise.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// The static library built alongside this test. Cargo builds every crate type of the
/// library when a test depends on it and leaves `libriptide_capi-<hash>.a` in `deps/`, next
/// to this executable (only `cargo build` copies it up as `libriptide_capi.a`); the newest
/// one is this build's.
fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    let deps = exe.parent().expect("the test executable's directory");
    let mut candidates: Vec<(SystemTime, PathBuf)> = Vec::new();
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_lib = name == "libriptide_capi.a"
                || (name.starts_with("libriptide_capi-") && name.ends_with(".a"));
            if is_lib {
                let modified = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                candidates.push((modified, entry.path()));
            }
        }
    }
    candidates.sort();
    candidates.pop().map(|(_, p)| p).unwrap_or_else(|| {
        panic!(
            "no libriptide_capi*.a in {} or its parent: the staticlib crate type was not built",
            deps.display()
        )
    })
}

/// The C compiler: `$CC`, or `cc`. Fails the test, with instructions, if there is none.
fn c_compiler() -> String {
    compiler("CC", "cc")
}

/// The compiler named by `$var`, or `default`. Fails the test if it does not run.
fn compiler(var: &str, default: &str) -> String {
    let cc = std::env::var(var).unwrap_or_else(|_| default.to_string());
    match Command::new(&cc).arg("--version").output() {
        Ok(out) if out.status.success() => cc,
        Ok(out) => panic!(
            "compiler `{cc}` does not work ({}): install one (`apt-get install gcc g++`) \
             or set {var}",
            out.status
        ),
        Err(e) => panic!(
            "no compiler `{cc}` ({e}): the C ABI tests need one; install it \
             (`apt-get install gcc g++`) or set {var}"
        ),
    }
}

#[test]
fn c_smoke_program_passes() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = static_lib();
    let cc = c_compiler();
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("smoke");

    let compile = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg(crate_dir.join("tests").join("c").join("smoke.c"))
        .arg("-I")
        .arg(crate_dir.join("include"))
        // Link the exact archive (its name carries a hash), then the system libraries the
        // Rust standard library needs.
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C compiler");
    assert!(
        compile.status.success(),
        "compiling smoke.c against {} failed ({}):\n{}{}",
        lib.display(),
        compile.status,
        String::from_utf8_lossy(&compile.stdout),
        String::from_utf8_lossy(&compile.stderr)
    );

    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let run = Command::new(&exe).arg(&data).output().expect("run smoke");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "smoke failed ({}):\n--- stdout\n{stdout}--- stderr\n{stderr}",
        run.status
    );
    for line in [
        "option tables: ok",
        "put/get/delete: ok",
        "forward: key1 key2 key3 key4",
        "backward: key4 key3 key2 key1",
        "bounded: key2 key3",
        "batch: ok",
        "snapshot: ok",
        "column families: ok",
        "transaction commit: ok",
        "transaction rollback: ok",
        "conflict: RIPTIDE_CONFLICT: conflict: ",
        "two-phase commit: ok",
        "checkpoint: ok",
        "  expected RIPTIDE_CLOSED: closed: ",
        "error paths: ok",
        "reopen: ok",
        "smoke: all checks passed",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(line)),
            "smoke's output lacks a line starting with {line:?}:\n{stdout}"
        );
    }
    assert!(
        stdout.starts_with(&format!(
            "riptide {}, ABI {}\n",
            env!("CARGO_PKG_VERSION"),
            riptide_capi::RIPTIDE_ABI_VERSION
        )),
        "{stdout}"
    );
}

#[test]
fn header_compiles_and_links_as_cxx() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = static_lib();
    let cxx = compiler("CXX", "c++");
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("header_check");
    let compile = Command::new(&cxx)
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(crate_dir.join("tests").join("c").join("header_check.cc"))
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the C++ compiler");
    assert!(
        compile.status.success(),
        "compiling header_check.cc failed ({}):\n{}{}",
        compile.status,
        String::from_utf8_lossy(&compile.stdout),
        String::from_utf8_lossy(&compile.stderr)
    );
    let run = Command::new(&exe).status().expect("run header_check");
    assert!(run.success(), "header_check exited with {run}");
}
