//! `cargo xtask sqlcheck`: the randomized differential SQL tester (tools/sqlcheck,
//! docs/TESTING.md). Builds the plugin and the tester, then runs `riptide-sqlcheck` on
//! target/sqlcheck: its own mariadbd (data directory, socket, error log; no TCP) with the
//! plugin copied to target/sqlcheck-plugin first (a rebuild of target/plugin during the run
//! cannot change the server under test). Never touches target/mariadb.

use anyhow::Result;

use crate::{ci_tool, mariadb, root, run};

/// How long the tester runs.
pub enum Length {
    /// Its default (5,000 statements and their schedules).
    Default,
    /// This many minutes.
    Minutes(f64),
    /// This many statements.
    Statements(u64),
}

/// Runs the tester (plugin build included) with `extra` arguments for `riptide-sqlcheck`.
pub fn sqlcheck(length: Length, seed: Option<u64>, extra: Vec<String>) -> Result<()> {
    mariadb::plugin()?;
    let target = root().join("target");
    let mut c = ci_tool("riptide-sqlcheck");
    c.args(["--plugin-maturity", mariadb::PLUGIN_MATURITY, "--dir"])
        .arg(target.join("sqlcheck"))
        .arg("--plugin")
        .arg(mariadb::plugin_dir().join("ha_riptide.so"));
    match length {
        Length::Default => {}
        Length::Minutes(m) => {
            c.args(["--minutes", &m.to_string()]);
        }
        Length::Statements(n) => {
            c.args(["--statements", &n.to_string()]);
        }
    }
    if let Some(seed) = seed {
        c.args(["--seed", &seed.to_string()]);
    }
    c.args(extra);
    run("differential SQL test (RIPTIDE vs InnoDB)", c)
}
