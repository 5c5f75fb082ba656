//! `cargo xtask sysbench`: the MariaDB-level comparison of Riptide, InnoDB and MyRocks with
//! sysbench (issue 7). This module only prepares: MariaDB and sysbench installed (`setup`),
//! `target/plugin/ha_riptide.so` built (`plugin`), and a plugin folder
//! `target/sysbench/plugin` holding links to it and to Debian's `ha_rocksdb.so`. The
//! measurement itself (one memory-capped server per engine, sysbench, report, chart) is the
//! `riptide-sysbench` binary of `benches/sysbench`, whose crate docs say exactly what each
//! engine gets; results go to `target/sysbench-results/`.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::{cargo, mariadb, root, run};

/// Debian's MyRocks plugin (package mariadb-plugin-rocksdb).
const ROCKSDB_SO: &str = "/usr/lib/mysql/plugin/ha_rocksdb.so";

/// Links `link` to `to` unless it already points there.
fn link(to: &Path, link: &Path) -> Result<()> {
    if fs::read_link(link).ok().as_deref() == Some(to) {
        return Ok(());
    }
    let _ = fs::remove_file(link);
    std::os::unix::fs::symlink(to, link)
        .with_context(|| format!("linking {} -> {}", link.display(), to.display()))
}

/// `cargo xtask sysbench [--quick] [-- riptide-sysbench args]`.
pub fn sysbench(quick: bool, args: Vec<String>) -> Result<()> {
    mariadb::setup()?;
    mariadb::plugin()?;
    let target = root().join("target");
    let plugin_dir = target.join("sysbench").join("plugin");
    fs::create_dir_all(&plugin_dir)
        .with_context(|| format!("creating {}", plugin_dir.display()))?;
    link(
        &target.join("plugin").join("ha_riptide.so"),
        &plugin_dir.join("ha_riptide.so"),
    )?;
    link(Path::new(ROCKSDB_SO), &plugin_dir.join("ha_rocksdb.so"))?;
    let mut c = cargo();
    // The `ci` profile: the driver's own speed does not matter, and CI has built its
    // dependencies in that profile already.
    c.args(["run", "--profile", "ci", "-p", "riptide-sysbench", "--"])
        .arg("--plugin-dir")
        .arg(&plugin_dir)
        .arg("--work-dir")
        .arg(target.join("sysbench"))
        .arg("--out-dir")
        .arg(target.join("sysbench-results"));
    if quick {
        c.arg("--quick");
    }
    c.args(args);
    run("sysbench comparison (riptide-sysbench)", c)
}
