//! The primary and the replica: their options, the replication channel between them (GTID,
//! `MASTER_USE_GTID=slave_pos`, over TCP on 127.0.0.1), the replica's status, and waiting
//! for the replica to apply what the primary has.

use std::collections::BTreeMap;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use mysql::prelude::Queryable;
use mysql::{Conn, Row};
use riptide_mariadb_server::{Server, free_tcp_port};

/// The user the replica connects as.
const REPL_USER: &str = "repl";
const REPL_PASSWORD: &str = "repl";

/// The engine of the test's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// ENGINE=RIPTIDE, the replica's GTID position in `mysql.gtid_slave_pos_RIPTIDE`.
    Riptide,
    /// ENGINE=InnoDB (the comparison), the GTID position in `mysql.gtid_slave_pos`.
    Innodb,
}

impl Engine {
    /// The name for output and folders.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Riptide => "riptide",
            Engine::Innodb => "innodb",
        }
    }

    /// What `ENGINE=` takes.
    pub fn table_engine(self) -> &'static str {
        match self {
            Engine::Riptide => "RIPTIDE",
            Engine::Innodb => "InnoDB",
        }
    }
}

/// `slave_parallel_mode` of the replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ParallelMode {
    /// Every transaction in parallel, the conflicting ones rolled back and retried (what
    /// the test is for: it needs the engine to report lock waits to the server).
    Optimistic,
    /// Only transactions that group-committed together on the primary, in parallel.
    Conservative,
    /// As optimistic, also transactions the primary marked as having waited.
    Aggressive,
}

impl ParallelMode {
    /// The server's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            ParallelMode::Optimistic => "optimistic",
            ParallelMode::Conservative => "conservative",
            ParallelMode::Aggressive => "aggressive",
        }
    }
}

/// Options both servers share: durable commits in both engines and the binary log.
fn common_args() -> Vec<String> {
    [
        "--riptide=FORCE",
        "--riptide-sync-mode=full",
        // Small memtables: flushes and compactions run during the load and the kills.
        "--riptide-write-buffer-size=4194304",
        "--riptide-db-write-buffer-size=16777216",
        "--innodb-buffer-pool-size=64M",
        "--innodb-flush-log-at-trx-commit=1",
        "--max-connections=64",
        "--skip-name-resolve",
        "--binlog-format=ROW",
        "--sync-binlog=1",
    ]
    .map(String::from)
    .to_vec()
}

/// The primary's options.
fn primary_args() -> Vec<String> {
    let mut a = common_args();
    a.extend(["--log-bin=primary-bin", "--server-id=1"].map(String::from));
    a
}

/// The replica's options: parallel apply on 4 threads in `mode`, its GTID position kept in
/// a table of the engine the transaction writes (`gtid_pos_auto_engines`), so the position
/// commits with the data; its own binary log with what it applies.
fn replica_args(engine: Engine, mode: ParallelMode) -> Vec<String> {
    let mut a = common_args();
    a.extend(
        [
            "--log-bin=replica-bin",
            "--server-id=2",
            "--log-slave-updates=ON",
            "--slave-parallel-threads=4",
            "--relay-log=replica-relay",
            "--relay-log-recovery=1",
            "--slave-net-timeout=10",
        ]
        .map(String::from),
    );
    a.push(format!("--gtid-pos-auto-engines={}", engine.table_engine()));
    a.push(format!("--slave-parallel-mode={}", mode.name()));
    a
}

/// What `SHOW SLAVE STATUS` says.
#[derive(Clone, Debug, Default)]
pub struct SlaveStatus {
    /// `Slave_IO_Running` (Yes, No, Connecting).
    pub io_running: String,
    /// `Slave_SQL_Running`.
    pub sql_running: String,
    /// `Last_IO_Errno: Last_IO_Error`.
    pub last_io_error: String,
    /// `Last_SQL_Errno: Last_SQL_Error`.
    pub last_sql_error: String,
    /// `Gtid_IO_Pos`: the GTIDs the IO thread has fetched.
    pub gtid_io_pos: String,
}

impl SlaveStatus {
    /// The fields a failure report shows.
    pub fn describe(&self) -> String {
        format!(
            "Slave_IO_Running: {}, Slave_SQL_Running: {}, Last_IO_Error: {}, Last_SQL_Error: {}, \
             Gtid_IO_Pos: {}",
            self.io_running,
            self.sql_running,
            or_none(&self.last_io_error),
            or_none(&self.last_sql_error),
            self.gtid_io_pos
        )
    }
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

/// A GTID position: per replication domain, the server id and sequence number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidPos(pub BTreeMap<u32, (u32, u64)>);

impl GtidPos {
    /// Parses `0-1-123,1-2-5` (empty: no GTID yet).
    pub fn parse(s: &str) -> Result<GtidPos> {
        let mut m = BTreeMap::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let f: Vec<&str> = part.split('-').collect();
            let [d, srv, seq] = f.as_slice() else {
                bail!("malformed GTID {part:?} in {s:?}");
            };
            let parsed = (|| -> Option<(u32, u32, u64)> {
                Some((d.parse().ok()?, srv.parse().ok()?, seq.parse().ok()?))
            })();
            let Some((d, srv, seq)) = parsed else {
                bail!("malformed GTID {part:?} in {s:?}");
            };
            m.insert(d, (srv, seq));
        }
        Ok(GtidPos(m))
    }

    /// True when this position has every GTID of `other` (per domain, a sequence number at
    /// least as high).
    pub fn covers(&self, other: &GtidPos) -> bool {
        other
            .0
            .iter()
            .all(|(d, (_, seq))| self.0.get(d).is_some_and(|(_, s)| s >= seq))
    }

    /// The sequence numbers summed over the domains: a count of transactions (the primary
    /// writes domain 0 only, so differences of this are transactions).
    pub fn total(&self) -> u64 {
        self.0.values().map(|(_, s)| *s).sum()
    }
}

impl std::fmt::Display for GtidPos {
    /// `0-1-123,1-2-5`, as the server writes it (`(none)` when empty).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(none)");
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(d, (srv, seq))| format!("{d}-{srv}-{seq}"))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// The two servers.
pub struct Pair {
    /// The primary: `--log-bin`, the load writes here.
    pub primary: Server,
    /// The replica.
    pub replica: Server,
    engine: Engine,
    mode: ParallelMode,
}

impl Pair {
    /// Makes both data directories under `dir` (`primary/`, `replica/`), gives each a free
    /// TCP port on 127.0.0.1, starts both, creates the replication user on the primary (not
    /// binlogged), and points the replica at the primary and starts it.
    pub fn setup(
        dir: &Path,
        plugin_dir: &Path,
        maturity: &str,
        engine: Engine,
        mode: ParallelMode,
    ) -> Result<Pair> {
        let mut primary = Server::new(&dir.join("primary"), plugin_dir, maturity)?;
        let mut replica = Server::new(&dir.join("replica"), plugin_dir, maturity)?;
        primary.install().context("installing the primary")?;
        replica.install().context("installing the replica")?;
        primary.set_tcp_port(Some(free_tcp_port()?));
        replica.set_tcp_port(Some(free_tcp_port()?));
        let mut pair = Pair {
            primary,
            replica,
            engine,
            mode,
        };
        pair.start_primary().context("starting the primary")?;
        pair.start_replica().context("starting the replica")?;
        let mut p = pair.primary.connect(None)?;
        p.query_drop("SET SESSION sql_log_bin = 0")?;
        p.query_drop(format!(
            "CREATE USER '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASSWORD}'"
        ))?;
        p.query_drop(format!(
            "GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"
        ))?;
        let port = pair
            .primary
            .tcp_port()
            .context("internal: the primary has no TCP port")?;
        let mut r = pair.replica.connect(None)?;
        r.query_drop(format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, \
             MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASSWORD}', \
             MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos"
        ))
        .context("CHANGE MASTER TO on the replica")?;
        r.query_drop("START SLAVE")
            .context("START SLAVE on the replica")?;
        pair.wait_running(Duration::from_secs(60))?;
        Ok(pair)
    }

    /// The engine of the test's tables.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Starts (or restarts after a kill: crash recovery) the primary; returns how long
    /// until it answered.
    pub fn start_primary(&mut self) -> Result<Duration> {
        let took = self.primary.start(&primary_args())?;
        let mut c = self.primary.connect(None)?;
        let row: Option<(String, u8, u32)> =
            c.query_first("SELECT @@riptide_sync_mode, @@log_bin, @@server_id")?;
        match row {
            Some((mode, 1, 1)) if mode.eq_ignore_ascii_case("full") => Ok(took),
            other => bail!(
                "the primary runs with (riptide_sync_mode, log_bin, server_id) = {other:?}, \
                 expected (FULL, 1, 1)"
            ),
        }
    }

    /// Starts (or restarts after a kill) the replica; returns how long until it answered.
    /// Its replication threads start by themselves (no `--skip-slave-start`).
    pub fn start_replica(&mut self) -> Result<Duration> {
        let took = self.replica.start(&replica_args(self.engine, self.mode))?;
        let mut c = self.replica.connect(None)?;
        let row: Option<(String, String, u32, String)> = c.query_first(
            "SELECT @@riptide_sync_mode, @@gtid_pos_auto_engines, @@slave_parallel_threads, \
             @@slave_parallel_mode",
        )?;
        match row {
            Some((sync, engines, 4, mode))
                if sync.eq_ignore_ascii_case("full")
                    && engines.eq_ignore_ascii_case(self.engine.table_engine())
                    && mode.eq_ignore_ascii_case(self.mode.name()) =>
            {
                Ok(took)
            }
            other => bail!(
                "the replica runs with (riptide_sync_mode, gtid_pos_auto_engines, \
                 slave_parallel_threads, slave_parallel_mode) = {other:?}, expected (FULL, {}, \
                 4, {})",
                self.engine.table_engine(),
                self.mode.name()
            ),
        }
    }

    /// Waits until both replication threads of the replica run (`Yes`); fails at once when
    /// one stopped with an error, or after `timeout`.
    pub fn wait_running(&self, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        let mut c = self.replica.connect(None)?;
        loop {
            let s = slave_status(&mut c)?;
            if s.io_running == "Yes" && s.sql_running == "Yes" {
                return Ok(());
            }
            if s.sql_running == "No" && !s.last_sql_error.is_empty()
                || s.io_running == "No" && !s.last_io_error.is_empty()
            {
                bail!("the replica's replication stopped: {}", s.describe());
            }
            if start.elapsed() > timeout {
                bail!(
                    "the replica's replication threads did not both run within {} s: {}",
                    timeout.as_secs(),
                    s.describe()
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// The primary's `@@gtid_binlog_pos`.
    pub fn primary_pos(&self) -> Result<GtidPos> {
        let mut c = self.primary.connect(None)?;
        let pos: Option<String> = c.query_first("SELECT @@gtid_binlog_pos")?;
        GtidPos::parse(&pos.unwrap_or_default())
    }

    /// The replica's `@@gtid_slave_pos`.
    pub fn replica_pos(&self) -> Result<GtidPos> {
        let mut c = self.replica.connect(None)?;
        replica_pos(&mut c)
    }

    /// Waits until the replica has applied `target` (`@@gtid_slave_pos` covers it); fails
    /// as soon as a replication thread stopped with an error, when the position has not
    /// moved for `stall` (with what the replica's transactions wait for: [`diagnose`]), or
    /// after `timeout`, with the replica's status. Returns how long it took.
    pub fn wait_applied(
        &self,
        target: &GtidPos,
        timeout: Duration,
        stall: Duration,
    ) -> Result<Duration> {
        let start = Instant::now();
        let mut c = self.replica.connect(None)?;
        let mut polls = 0u64;
        let mut last = (GtidPos::default(), Instant::now());
        loop {
            let pos = replica_pos(&mut c)?;
            if pos.covers(target) {
                return Ok(start.elapsed());
            }
            if pos != last.0 {
                last = (pos.clone(), Instant::now());
            }
            polls += 1;
            let stalled = last.1.elapsed() > stall;
            if polls.is_multiple_of(25) || start.elapsed() > timeout || stalled {
                let s = slave_status(&mut c)?;
                if s.sql_running == "No" || s.io_running == "No" {
                    bail!(
                        "the replica stopped replicating at gtid_slave_pos {pos} (the primary \
                         is at {target}): {}",
                        s.describe()
                    );
                }
                if stalled {
                    bail!(
                        "the replica made no progress for {} s at gtid_slave_pos {pos} (the \
                         primary is at {target}; {}):\n{}",
                        stall.as_secs(),
                        s.describe(),
                        diagnose(&mut c, self.engine)
                    );
                }
                if start.elapsed() > timeout {
                    bail!(
                        "the replica did not catch up within {} s: gtid_slave_pos {pos}, the \
                         primary's gtid_binlog_pos {target}; {}",
                        timeout.as_secs(),
                        s.describe()
                    );
                }
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the replica's IO thread has fetched `target` (`Gtid_IO_Pos`).
    pub fn wait_fetched(&self, target: &GtidPos, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        let mut c = self.replica.connect(None)?;
        loop {
            let s = slave_status(&mut c)?;
            if GtidPos::parse(&s.gtid_io_pos)?.covers(target) {
                return Ok(());
            }
            if s.io_running == "No" || start.elapsed() > timeout {
                bail!(
                    "the replica's IO thread did not fetch {target} within {} s: {}",
                    timeout.as_secs(),
                    s.describe()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (up to `timeout`) for the replica's `mysql.gtid_slave_pos_RIPTIDE` (the server
    /// creates it when it first applies a transaction on a RIPTIDE table, and names it
    /// after the engine's plugin name, in its case) and checks that it is a RIPTIDE table
    /// holding the position.
    pub fn check_riptide_gtid_table(&self, timeout: Duration) -> Result<()> {
        let start = Instant::now();
        let mut c = self.replica.connect(None)?;
        let name = loop {
            let table: Option<(String, String)> = c.query_first(
                "SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = \
                 'mysql' AND LOWER(TABLE_NAME) = 'gtid_slave_pos_riptide'",
            )?;
            match table {
                Some((name, e)) if e.eq_ignore_ascii_case("RIPTIDE") => break name,
                Some((name, e)) => bail!("mysql.{name} on the replica has ENGINE={e}"),
                None if start.elapsed() > timeout => bail!(
                    "the replica has no mysql.gtid_slave_pos_RIPTIDE {} s after applying \
                     RIPTIDE transactions (gtid_pos_auto_engines=RIPTIDE): its GTID position \
                     is not committed with the data",
                    timeout.as_secs()
                ),
                None => thread::sleep(Duration::from_millis(100)),
            }
        };
        let rows: Option<u64> = c.query_first(format!("SELECT COUNT(*) FROM mysql.`{name}`"))?;
        if rows.unwrap_or(0) == 0 {
            bail!("mysql.{name} on the replica is empty");
        }
        Ok(())
    }
}

/// What the replica's replication threads and engine transactions are doing, for a stall
/// report: the replication threads of `SHOW PROCESSLIST` and, for RIPTIDE, every open
/// engine transaction (`information_schema.RIPTIDE_TRX`) with its connection's state. When
/// an apply thread waits for a row lock held by an apply thread that is itself waiting for
/// the earlier transaction to commit, says so: that is a deadlock only the engine can
/// report to the server (`thd_rpl_deadlock_check`, which RIPTIDE and InnoDB call on every
/// lock wait, and which makes the server roll back and retry the later transaction), so
/// seeing it means the report went missing.
pub fn diagnose(c: &mut Conn, engine: Engine) -> String {
    let mut out = Vec::new();
    type Proc = (u64, String, Option<String>, Option<String>, Option<String>);
    let procs: Vec<Proc> = c
        .query(
            "SELECT ID, USER, COMMAND, STATE, LEFT(INFO, 120) FROM information_schema.PROCESSLIST \
             WHERE USER = 'system user' ORDER BY ID",
        )
        .unwrap_or_default();
    out.push("  replication threads (id, command, state, statement):".to_string());
    for (id, _, cmd, state, info) in &procs {
        out.push(format!(
            "    {id} {} | {} | {}",
            cmd.as_deref().unwrap_or(""),
            state.as_deref().unwrap_or(""),
            info.as_deref().unwrap_or("")
        ));
    }
    if engine != Engine::Riptide {
        return out.join("\n");
    }
    type Trx = (u64, Option<u64>, String, Option<u64>, Option<String>);
    let trx: Vec<Trx> = c
        .query(
            "SELECT TRANSACTION_ID, THREAD_ID, STATE, LOCK_WAIT_MS, BLOCKING_TRANSACTIONS \
             FROM information_schema.RIPTIDE_TRX ORDER BY TRANSACTION_ID",
        )
        .unwrap_or_default();
    out.push("  RIPTIDE transactions (id, thread, state, lock wait ms, blocked by):".to_string());
    for (id, thread, state, wait, blockers) in &trx {
        out.push(format!(
            "    {id} thread {} {state} {} {}",
            thread.map_or("-".into(), |t| t.to_string()),
            wait.map_or(String::new(), |w| format!("{w} ms")),
            blockers.as_deref().unwrap_or("")
        ));
    }
    let waiting_for_prior = |thread: Option<u64>| {
        procs.iter().any(|(id, _, _, state, _)| {
            Some(*id) == thread
                && state
                    .as_deref()
                    .is_some_and(|s| s.contains("Waiting for prior transaction to commit"))
        })
    };
    for (id, thread, state, wait, blockers) in &trx {
        let is_apply_thread = procs.iter().any(|p| Some(p.0) == *thread);
        if state != "LOCK WAIT" || !is_apply_thread {
            continue;
        }
        for b in blockers
            .as_deref()
            .unwrap_or("")
            .split(',')
            .filter_map(|b| b.trim().parse::<u64>().ok())
        {
            if let Some((_, bthread, bstate, _, _)) = trx.iter().find(|t| t.0 == b)
                && waiting_for_prior(*bthread)
            {
                out.push(format!(
                    "  DEADLOCK of parallel replication: RIPTIDE transaction {id} (apply thread \
                     {}) has waited {} ms for a row lock held by transaction {b} (apply thread \
                     {}, {bstate}), which waits for the earlier transactions to commit first. \
                     The server did not roll the later transaction back: the engine's report \
                     of the lock wait (thd_rpl_deadlock_check, plugin-shim/transactions.cc) \
                     did not reach it or was not acted on. The earlier one times out \
                     (riptide_lock_wait_timeout) and is retried into the same wait, until \
                     slave_transaction_retries is spent and the replica stops.",
                    thread.map_or("-".into(), |t| t.to_string()),
                    wait.unwrap_or(0),
                    bthread.map_or("-".into(), |t| t.to_string()),
                ));
            }
        }
    }
    out.join("\n")
}

fn replica_pos(c: &mut Conn) -> Result<GtidPos> {
    let pos: Option<String> = c
        .query_first("SELECT @@gtid_slave_pos")
        .context("reading the replica's @@gtid_slave_pos")?;
    GtidPos::parse(&pos.unwrap_or_default())
}

fn slave_status(c: &mut Conn) -> Result<SlaveStatus> {
    let row: Option<Row> = c
        .query_first("SHOW SLAVE STATUS")
        .context("SHOW SLAVE STATUS on the replica")?;
    let Some(row) = row else {
        bail!("SHOW SLAVE STATUS on the replica is empty: no replication configured");
    };
    let field = |name: &str| -> String {
        row.get_opt::<Option<String>, _>(name)
            .and_then(Result::ok)
            .flatten()
            .unwrap_or_default()
    };
    let error = |errno: &str, text: &str| -> String {
        let n = field(errno);
        let t = field(text);
        if (n.is_empty() || n == "0") && t.is_empty() {
            String::new()
        } else {
            format!("{n}: {t}")
        }
    };
    Ok(SlaveStatus {
        io_running: field("Slave_IO_Running"),
        sql_running: field("Slave_SQL_Running"),
        last_io_error: error("Last_IO_Errno", "Last_IO_Error"),
        last_sql_error: error("Last_SQL_Errno", "Last_SQL_Error"),
        gtid_io_pos: field("Gtid_IO_Pos"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_positions_parse_and_compare() -> Result<()> {
        let a = GtidPos::parse("0-1-120")?;
        let b = GtidPos::parse("0-1-118,1-2-5")?;
        assert!(!a.covers(&b));
        assert!(b.covers(&GtidPos::parse("0-1-118")?));
        assert!(a.covers(&GtidPos::parse("")?));
        assert!(!GtidPos::parse("")?.covers(&a));
        assert_eq!(b.total(), 123);
        assert!(GtidPos::parse("0-1").is_err());
        assert!(GtidPos::parse("x-1-2").is_err());
        Ok(())
    }
}
