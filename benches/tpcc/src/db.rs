//! Client connections to the server under test.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use mysql::prelude::Queryable as _;
use mysql::{Conn, OptsBuilder, Statement};

/// The server error numbers a terminal retries (and counts): a deadlock, a lock wait
/// timeout.
pub const ER_LOCK_DEADLOCK: u16 = 1213;
/// See [`ER_LOCK_DEADLOCK`].
pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;

/// Where to connect: the server's socket, as root, to one database.
#[derive(Clone, Debug)]
pub struct Target {
    /// The server's UNIX socket.
    pub socket: PathBuf,
    /// The database (None: none selected).
    pub database: Option<String>,
}

impl Target {
    /// A target on `socket` with database `database`.
    pub fn new(socket: &Path, database: Option<&str>) -> Target {
        Target {
            socket: socket.to_path_buf(),
            database: database.map(str::to_string),
        }
    }

    /// A new connection, REPEATABLE READ, autocommit on.
    pub fn connect(&self) -> Result<Conn> {
        let opts = OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy().into_owned()))
            .user(Some("root"))
            .db_name(self.database.as_deref())
            .prefer_socket(true)
            .stmt_cache_size(Some(64))
            // Long enough for a consistency check's scans of a large database.
            .read_timeout(Some(Duration::from_secs(3600)))
            .write_timeout(Some(Duration::from_secs(3600)));
        let mut conn = Conn::new(opts)
            .with_context(|| format!("connecting to the server on {}", self.socket.display()))?;
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .context("setting REPEATABLE READ")?;
        Ok(conn)
    }
}

/// The server's error number, if `e` is an error the server returned.
pub fn server_code(e: &mysql::Error) -> Option<u16> {
    match e {
        mysql::Error::MySqlError(se) => Some(se.code),
        _ => None,
    }
}

/// Prepares `sql` on `conn`; the error names the statement.
pub fn prepare(conn: &mut Conn, sql: &str) -> Result<Statement> {
    conn.prep(sql).with_context(|| format!("preparing `{sql}`"))
}
