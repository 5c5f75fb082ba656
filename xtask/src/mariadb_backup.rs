//! `cargo xtask backup-test`: the online backup test of Riptide inside MariaDB
//! (tools/mariadb-backup, docs/TESTING.md). Builds the plugin and the test driver, copies
//! the plugin to a folder of its own (a rebuild of target/plugin during the run cannot
//! change the servers under test), and runs `riptide-mariadb-backup` on
//! target/mariadb-backup: checkpoints taken under a write load, each started in a second
//! server and verified against the writers' ledger. Never touches target/mariadb.

use anyhow::Result;

use crate::{ci_tool, mariadb, root, run};

/// Runs the backup test (plugin build included): `checkpoints` checkpoints, one every
/// `interval_ms` of load.
pub fn backup_test(checkpoints: u32, interval_ms: u64, seed: Option<u64>) -> Result<()> {
    let plugin_copy = mariadb::plugin_copy("mariadb-backup-plugin")?;
    let target = root().join("target");
    let mut c = ci_tool("riptide-mariadb-backup");
    c.args([
        "--plugin-maturity",
        mariadb::PLUGIN_MATURITY,
        "--checkpoints",
        &checkpoints.to_string(),
        "--interval-ms",
        &interval_ms.to_string(),
        "--dir",
    ])
    .arg(target.join("mariadb-backup"))
    .arg("--plugin-dir")
    .arg(&plugin_copy);
    if let Some(seed) = seed {
        c.args(["--seed", &seed.to_string()]);
    }
    run("MariaDB backup test", c)
}
