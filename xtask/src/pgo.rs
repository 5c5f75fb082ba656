//! `cargo xtask plugin --pgo`: a profile-guided build of the plugin's Rust code (issue 18,
//! item 5; TidesDB ships such builds).
//!
//! 1. The C ABI library is built with `-Cprofile-generate` into its own target folder and
//!    linked as `target/pgo/gen/ha_riptide.so`.
//! 2. Training: `riptide-tpcc --quick` and `riptide-sysbench --quick`, Riptide only, on that
//!    plugin; each server writes its counters when it shuts down.
//! 3. `llvm-profdata merge` (one whose LLVM reads rustc's raw format: Debian 12's
//!    `llvm-19` does, and it is installed when none is found).
//! 4. The library is built again with `-Cprofile-use` and linked as
//!    `target/plugin-pgo/ha_riptide.so`. The normal `target/plugin/ha_riptide.so` is left
//!    alone: benchmark runs use the PGO build only where it measured better
//!    (benches/RESULTS.md says what it measured).
//!
//! Only the Rust code is profile-guided; the C++ shim and MariaDB are built as usual.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mariadb::{self, PluginBuild};
use crate::{cargo, root, run, sysbench};

/// The `llvm-profdata` binaries tried, newest first.
const PROFDATA: &[&str] = &[
    "llvm-profdata-22",
    "llvm-profdata-21",
    "llvm-profdata-20",
    "llvm-profdata-19",
    "llvm-profdata",
];

/// The Debian package that brings a `llvm-profdata` new enough for rustc's raw profiles.
const PROFDATA_PACKAGE: &str = "llvm-19";

fn pgo_dir() -> PathBuf {
    root().join("target").join("pgo")
}

/// The profile-guided plugin.
pub fn pgo_plugin_so() -> PathBuf {
    root()
        .join("target")
        .join("plugin-pgo")
        .join("ha_riptide.so")
}

/// Runs one benchmark binary in its `--quick` form on the instrumented plugin.
fn train(package: &str, plugin_dir: &Path, work: &Path) -> Result<()> {
    let mut c = cargo();
    c.args(["run", "--profile", "ci", "-p", package, "--"])
        .arg("--quick")
        .args(["--engines", "riptide"])
        .arg("--plugin-dir")
        .arg(plugin_dir)
        .arg("--work-dir")
        .arg(work.join(package))
        .arg("--out-dir")
        .arg(work.join(format!("{package}-results")));
    run(
        &format!("train: {package} --quick on the instrumented plugin"),
        c,
    )
}

/// Merges the raw profiles in `raw` into `merged` with the first `llvm-profdata` that can.
fn merge(raw: &Path, merged: &Path) -> Result<()> {
    let files: Vec<PathBuf> = fs::read_dir(raw)
        .with_context(|| format!("reading {}", raw.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "profraw"))
        .collect();
    if files.is_empty() {
        bail!(
            "training left no profile in {} (the instrumented servers write theirs when they \
             shut down; see their logs under {})",
            raw.display(),
            pgo_dir().join("train").display()
        );
    }
    let try_all = || {
        PROFDATA.iter().find(|tool| {
            let ok = Command::new(tool)
                .arg("merge")
                .arg("-o")
                .arg(merged)
                .args(&files)
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                eprintln!("pgo: merged {} raw profiles with {tool}", files.len());
            }
            ok
        })
    };
    if try_all().is_some() {
        return Ok(());
    }
    eprintln!("pgo: no llvm-profdata here reads rustc's profiles; installing {PROFDATA_PACKAGE}");
    mariadb::apt_update()?;
    mariadb::install_packages(&[PROFDATA_PACKAGE])?;
    if try_all().is_some() {
        return Ok(());
    }
    bail!(
        "none of {PROFDATA:?} could merge rustc's raw profiles in {} (rustc's LLVM may be newer \
         than every llvm-profdata Debian has)",
        raw.display()
    )
}

/// `cargo xtask plugin --pgo`.
pub fn plugin_pgo() -> Result<()> {
    let dir = pgo_dir();
    let raw = dir.join("raw");
    let _ = fs::remove_dir_all(&raw);
    fs::create_dir_all(&raw).with_context(|| format!("creating {}", raw.display()))?;
    let gen_dir = dir.join("gen");
    mariadb::build_plugin(&PluginBuild {
        rustflags: Some((
            format!("-Cprofile-generate={}", raw.display()),
            dir.join("target-generate"),
        )),
        so: Some(gen_dir.join("ha_riptide.so")),
        // The profiling runtime's start-up object (which writes the counters at exit) is
        // pulled in by this symbol; clang's driver passes it, g++ linking Rust code does not.
        link_args: vec!["-Wl,-u,__llvm_profile_runtime".to_string()],
    })?;

    let mut build = cargo();
    build.args([
        "build",
        "--profile",
        "ci",
        "-p",
        "riptide-tpcc",
        "-p",
        "riptide-sysbench",
    ]);
    run("build the benchmark drivers", build)?;
    let work = dir.join("train");
    let _ = fs::remove_dir_all(&work);
    train("riptide-tpcc", &gen_dir, &work)?;
    train("riptide-sysbench", &gen_dir, &work)?;

    // A new name each time: cargo decides what to rebuild by the flags' text, not by the
    // profile's content, so the same path would keep code built with an older profile.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for old in fs::read_dir(&dir)?.filter_map(|e| e.ok().map(|e| e.path())) {
        if old.extension().is_some_and(|x| x == "profdata") {
            let _ = fs::remove_file(old);
        }
    }
    let merged = dir.join(format!("merged-{stamp}.profdata"));
    merge(&raw, &merged)?;
    let so = pgo_plugin_so();
    mariadb::build_plugin(&PluginBuild {
        rustflags: Some((
            format!("-Cprofile-use={}", merged.display()),
            dir.join("target-use"),
        )),
        so: Some(so.clone()),
        link_args: Vec::new(),
    })?;
    let so_dir = so.parent().context("the PGO plugin has no folder")?;
    // MyRocks beside it, as in the benchmarks' plugin folders, so the folder serves as
    // `--plugin-dir` for a three-engine run.
    if Path::new(sysbench::ROCKSDB_SO).is_file() {
        sysbench::link(
            Path::new(sysbench::ROCKSDB_SO),
            &so_dir.join("ha_rocksdb.so"),
        )?;
    }
    eprintln!(
        "pgo: built {} (trained on TPC-C and sysbench --quick); compare it with the normal \
         build, e.g. `riptide-tpcc --plugin-dir {}` against `--plugin-dir {}`",
        so.display(),
        so_dir.display(),
        mariadb::plugin_dir().display()
    );
    Ok(())
}
