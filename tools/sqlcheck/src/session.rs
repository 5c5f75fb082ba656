//! The two connections of the single-session stream (one per database) and the fresh
//! schema every run and every replay starts from.

use std::time::Duration;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};
use riptide_mariadb_server::Server;

use crate::exec::{self, Outcome};
use crate::generate::Stmt;
use crate::schema::{CONC_TABLE, INNO_DB, RIP_DB, Table, conc_ddl};

/// Longest a statement may run (`max_statement_time`): a statement that never ends fails
/// with error 1969 instead of stalling the run.
pub const STATEMENT_SECONDS: u64 = 20;

/// The optimizer switches every session starts with: the defaults without rowid filters.
/// RIPTIDE offers no rowid filter (`HA_DO_RANGE_FILTER_PUSHDOWN`), and with one MariaDB
/// 10.11.18 answers wrong on InnoDB: a BNLH join (`join_cache_level` 3 and up) whose
/// inner table is read `hash_ALL|filter` loses matches (docs/TESTING.md).
pub const OPTIMIZER_DEFAULT: &str = "default,rowid_filter=off";

/// Connection options: database `db`, utf8mb4, no `CLIENT_FOUND_ROWS` (affected rows are
/// changed rows; the info string gives the matched ones).
pub fn session_opts(server: &Server, db: &str) -> OptsBuilder {
    server
        .opts(Some(db))
        .read_timeout(Some(Duration::from_secs(STATEMENT_SECONDS + 60)))
        .init(vec![
            "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci".to_string(),
            format!("SET SESSION max_statement_time = {STATEMENT_SECONDS}"),
            format!("SET SESSION optimizer_switch = '{OPTIMIZER_DEFAULT}'"),
        ])
}

/// Drops and recreates both databases with every table (`tables` and the schedules'
/// table) in their engine.
pub fn fresh_schema(server: &Server, tables: &[Table]) -> Result<()> {
    let mut conn = server.connect_with(server.opts(None))?;
    // A connection still holding a table's metadata lock makes DROP DATABASE fail after
    // this long instead of waiting for a day.
    conn.query_drop("SET SESSION lock_wait_timeout = 30")?;
    for (db, engine) in [(RIP_DB, "RIPTIDE"), (INNO_DB, "InnoDB")] {
        conn.query_drop(format!("DROP DATABASE IF EXISTS {db}"))
            .with_context(|| format!("dropping database {db}"))?;
        conn.query_drop(format!("CREATE DATABASE {db} CHARACTER SET utf8mb4"))?;
        conn.query_drop(format!("USE {db}"))?;
        for t in tables {
            let ddl = t.ddl(engine);
            conn.query_drop(&ddl).with_context(|| format!("`{ddl}`"))?;
        }
        conn.query_drop(conc_ddl(engine))
            .with_context(|| format!("creating {db}.{CONC_TABLE}"))?;
    }
    Ok(())
}

/// One connection to each database.
pub struct Pair {
    /// To the RIPTIDE tables.
    pub rip: Conn,
    /// To the InnoDB tables.
    pub inno: Conn,
}

impl Pair {
    /// Connects to both databases.
    pub fn connect(server: &Server) -> Result<Pair> {
        Ok(Pair {
            rip: server.connect_with(session_opts(server, RIP_DB))?,
            inno: server.connect_with(session_opts(server, INNO_DB))?,
        })
    }

    /// Runs `s` on both (RIPTIDE first).
    pub fn run(&mut self, s: &Stmt) -> (Outcome, Outcome) {
        let a = exec::run(&mut self.rip, &s.sql);
        let b = exec::run(&mut self.inno, &s.sql);
        (a, b)
    }
}
