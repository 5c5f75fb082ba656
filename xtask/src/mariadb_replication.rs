//! `cargo xtask replication`: the crash-safe replication test of Riptide inside MariaDB
//! (tools/mariadb-replication, docs/TESTING.md). Builds the plugin and the test driver,
//! copies the plugin to a folder of its own (a rebuild of target/plugin during the run
//! cannot change the servers under test), and runs `riptide-mariadb-replication` on
//! target/mariadb-replication: a primary and a parallel GTID replica (TCP on 127.0.0.1
//! only) under a write load, kill -9 of each in turn, the replica checked equal to the
//! primary after every round. Never touches target/mariadb.

use anyhow::Result;

use crate::{ci_tool, mariadb, root, run};

/// Runs the replication test (plugin build included): `rounds` rounds of `round_seconds`
/// of load on each engine of `engines` (`riptide`, `innodb`; empty: the tool's default,
/// RIPTIDE), then the apply-rate phase of `apply_seconds`; `args` go to the tool as they are.
pub fn replication(
    rounds: u32,
    seed: Option<u64>,
    engines: &[String],
    round_seconds: f64,
    apply_seconds: f64,
    args: Vec<String>,
) -> Result<()> {
    let plugin_copy = mariadb::plugin_copy("mariadb-replication-plugin")?;
    let target = root().join("target");
    let mut c = ci_tool("riptide-mariadb-replication");
    c.args([
        "--plugin-maturity",
        mariadb::PLUGIN_MATURITY,
        "--rounds",
        &rounds.to_string(),
        "--round-seconds",
        &round_seconds.to_string(),
        "--apply-seconds",
        &apply_seconds.to_string(),
        "--dir",
    ])
    .arg(target.join("mariadb-replication"))
    .arg("--plugin-dir")
    .arg(&plugin_copy);
    if !engines.is_empty() {
        c.args(["--engines", &engines.join(",")]);
    }
    if let Some(seed) = seed {
        c.args(["--seed", &seed.to_string()]);
    }
    c.args(args);
    run("MariaDB replication test", c)
}
