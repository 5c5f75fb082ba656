//! `cargo xtask crash --mariadb`: the crash test of Riptide inside MariaDB
//! (tools/mariadb-crash, docs/TESTING.md). Builds the plugin and the test driver, copies
//! the plugin to a folder of its own (a rebuild of target/plugin during the run cannot
//! change the server under test), and runs `riptide-mariadb-crash` on target/mariadb-crash:
//! its own data directory, socket and error log, no TCP. Never touches target/mariadb.

use anyhow::Result;

use crate::{ci_tool, mariadb, root, run};

/// How long the test runs.
pub enum Length {
    /// This many rounds (load, SIGKILL, recovery, verification, clean restart).
    Rounds(u64),
    /// Rounds until this many minutes have passed.
    Minutes(f64),
}

/// Runs the MariaDB crash test (plugin build included). With `fail_on_deadlock` a deadlock
/// error fails the run (`--fail-on-deadlock`; what `cargo xtask test` does: connections
/// never write the same rows, so a deadlock is a lock the engine took on a row the statement
/// did not need); without, deadlocks are counted and shown in the summary.
pub fn crash_mariadb(length: Length, seed: Option<u64>, fail_on_deadlock: bool) -> Result<()> {
    let plugin_copy = mariadb::plugin_copy("mariadb-crash-plugin")?;
    let target = root().join("target");
    let mut c = ci_tool("riptide-mariadb-crash");
    c.args(["--plugin-maturity", mariadb::PLUGIN_MATURITY, "--dir"])
        .arg(target.join("mariadb-crash"))
        .arg("--plugin-dir")
        .arg(&plugin_copy);
    match length {
        Length::Rounds(n) => c.args(["--rounds", &n.to_string()]),
        Length::Minutes(m) => c.args(["--minutes", &m.to_string()]),
    };
    if let Some(seed) = seed {
        c.args(["--seed", &seed.to_string()]);
    }
    if fail_on_deadlock {
        c.arg("--fail-on-deadlock");
    }
    run("MariaDB crash test", c)
}
