//! `cargo xtask sysbench`, `cargo xtask tpcc` and `cargo xtask ibench`: the MariaDB-level
//! comparisons of Riptide, InnoDB and MyRocks (issues 7, 17 and 19). This module only
//! prepares: MariaDB and sysbench installed (`setup`), `target/plugin/ha_riptide.so` built
//! (`plugin`), and a plugin folder `target/<verb>/plugin` holding links to it and to
//! Debian's `ha_rocksdb.so`. The measurements themselves (one memory-capped server per
//! engine, the load, the workloads, report, chart) are the `riptide-sysbench` binary of
//! `benches/sysbench` (results in `target/sysbench-results/`), the `riptide-tpcc` binary of
//! `benches/tpcc` (results in `target/tpcc-results/`) and the `riptide-ibench` binary of `benches/ibench` (results in
//! `target/ibench-results/`), all on the server harness of `benches/harness`, whose crate
//! docs say exactly what each engine gets.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::{ci_tool, mariadb, root, run};

/// Debian's MyRocks plugin (package mariadb-plugin-rocksdb).
pub(crate) const ROCKSDB_SO: &str = "/usr/lib/mysql/plugin/ha_rocksdb.so";

/// Links `link` to `to` unless it already points there.
pub(crate) fn link(to: &Path, link: &Path) -> Result<()> {
    if fs::read_link(link).ok().as_deref() == Some(to) {
        return Ok(());
    }
    let _ = fs::remove_file(link);
    std::os::unix::fs::symlink(to, link)
        .with_context(|| format!("linking {} -> {}", link.display(), to.display()))
}

/// Prepares the servers (MariaDB, the plugin, `target/<verb>/plugin`) and runs the
/// benchmark binary of `package` with its work and result folders under `target/`.
fn capped_benchmark(
    verb: &str,
    package: &str,
    quick: bool,
    pgo: bool,
    args: Vec<String>,
) -> Result<()> {
    mariadb::setup()?;
    mariadb::plugin()?;
    let target = root().join("target");
    let riptide_so = if pgo {
        crate::pgo::plugin_pgo()?;
        crate::pgo::pgo_plugin_so()
    } else {
        target.join("plugin").join("ha_riptide.so")
    };
    let plugin_dir = target.join(verb).join("plugin");
    fs::create_dir_all(&plugin_dir)
        .with_context(|| format!("creating {}", plugin_dir.display()))?;
    link(&riptide_so, &plugin_dir.join("ha_riptide.so"))?;
    link(Path::new(ROCKSDB_SO), &plugin_dir.join("ha_rocksdb.so"))?;
    // The `ci` profile: the driver's own speed does not matter, and CI has built it in
    // that profile already.
    let mut c = ci_tool(package);
    c.arg("--plugin-dir")
        .arg(&plugin_dir)
        .arg("--work-dir")
        .arg(target.join(verb))
        .arg("--out-dir")
        .arg(target.join(format!("{verb}-results")));
    if quick {
        c.arg("--quick");
    }
    c.args(args);
    run(&format!("{verb} comparison ({package})"), c)
}

/// `cargo xtask sysbench [--quick] [--pgo] [-- riptide-sysbench args]`.
pub fn sysbench(quick: bool, pgo: bool, args: Vec<String>) -> Result<()> {
    capped_benchmark("sysbench", "riptide-sysbench", quick, pgo, args)
}

/// `cargo xtask tpcc [--quick] [--pgo] [-- riptide-tpcc args]`.
pub fn tpcc(quick: bool, pgo: bool, args: Vec<String>) -> Result<()> {
    capped_benchmark("tpcc", "riptide-tpcc", quick, pgo, args)
}

/// `cargo xtask ibench [--quick] [--pgo] [-- riptide-ibench args]`.
pub fn ibench(quick: bool, pgo: bool, args: Vec<String>) -> Result<()> {
    capped_benchmark("ibench", "riptide-ibench", quick, pgo, args)
}
