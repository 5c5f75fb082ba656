//! The write load on the primary, in the manner of sysbench's `oltp_write_only`: several
//! connections run small transactions on three `sbtest` tables (primary key, a secondary
//! index on `k` and a composite one on `(grp, k)`), on a table of 16 hot counters (so that
//! transactions applied in parallel on the replica conflict), and every transaction appends
//! one row to `ledger`, numbered per connection. A connection retries a transaction that
//! lost a deadlock or a lock wait under the same number, so after any crash each
//! connection's ledger must be exactly its transactions 1..k, with k at least the last one
//! acknowledged and at most the last one whose COMMIT was sent ([`check_ledger`]).

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::pair::Engine;

/// The database of the test's tables.
pub const DB: &str = "repl";

/// The `sbtest` tables (`sbtest1` ..).
pub const SBTEST_TABLES: u32 = 3;

/// Rows of the hot `counters` table.
pub const COUNTERS: u32 = 16;

/// Every table of the test, in the order they are checked.
pub fn tables() -> Vec<String> {
    (1..=SBTEST_TABLES)
        .map(|t| format!("sbtest{t}"))
        .chain(["counters".to_string(), "ledger".to_string()])
        .collect()
}

/// Creates the database, the tables with `engine` and `rows` rows in each `sbtest` table
/// (on the primary: the statements replicate).
pub fn create(c: &mut Conn, engine: Engine, rows: u32, seed: u64) -> Result<()> {
    let e = engine.table_engine();
    c.query_drop(format!("CREATE DATABASE {DB}"))
        .context("CREATE DATABASE")?;
    for t in 1..=SBTEST_TABLES {
        c.query_drop(format!(
            "CREATE TABLE {DB}.sbtest{t} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, \
             grp SMALLINT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, \
             KEY k_1 (k), KEY grp_k (grp, k)) ENGINE={e}"
        ))
        .with_context(|| format!("creating sbtest{t}"))?;
    }
    c.query_drop(format!(
        "CREATE TABLE {DB}.counters (id INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL, \
         last_conn INT NOT NULL, KEY by_n (n)) ENGINE={e}"
    ))
    .context("creating counters")?;
    c.query_drop(format!(
        "CREATE TABLE {DB}.ledger (conn INT NOT NULL, seq BIGINT NOT NULL, kind TINYINT NOT NULL, \
         tbl TINYINT NOT NULL, row_id INT NOT NULL, PRIMARY KEY (conn, seq), \
         KEY by_row (tbl, row_id)) ENGINE={e}"
    ))
    .context("creating ledger")?;
    let mut rng = StdRng::seed_from_u64(seed);
    for t in 1..=SBTEST_TABLES {
        let mut id = 1u32;
        while id <= rows {
            let end = (id + 499).min(rows);
            let values: Vec<String> = (id..=end).map(|i| row_values(&mut rng, i)).collect();
            c.query_drop(format!(
                "INSERT INTO {DB}.sbtest{t} VALUES {}",
                values.join(",")
            ))
            .with_context(|| format!("loading sbtest{t}"))?;
            id = end + 1;
        }
    }
    let counters: Vec<String> = (0..COUNTERS).map(|i| format!("({i}, 0, -1)")).collect();
    c.query_drop(format!(
        "INSERT INTO {DB}.counters VALUES {}",
        counters.join(",")
    ))
    .context("loading counters")?;
    Ok(())
}

/// `(id, k, grp, 'c', 'pad')` of a new row.
fn row_values(rng: &mut StdRng, id: u32) -> String {
    format!(
        "({id}, {}, {}, '{}', '{}')",
        rng.random_range(0..1_000_000),
        rng.random_range(0..100),
        digits(rng, 11, 10),
        digits(rng, 5, 10)
    )
}

/// sysbench's `c`/`pad` values: `groups` groups of `len` digits joined by '-'.
fn digits(rng: &mut StdRng, len: usize, groups: usize) -> String {
    let mut s = String::with_capacity(groups * (len + 1));
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..len {
            s.push(char::from(b'0' + rng.random_range(0..10u8)));
        }
    }
    s
}

/// What one connection has done, kept across its restarts and the primary's.
#[derive(Default)]
pub struct Progress {
    /// The highest transaction whose COMMIT returned success.
    pub acknowledged: AtomicU64,
    /// The highest transaction whose COMMIT was sent (acknowledged or not yet).
    pub committing: AtomicU64,
}

/// Figures of the load.
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    /// Transactions acknowledged.
    pub committed: u64,
    /// Transactions rolled back by a deadlock or lock wait timeout and run again.
    pub retries: u64,
    /// Statements sent (COMMIT included).
    pub statements: u64,
    /// Connections cut by a kill of the primary.
    pub cut: u64,
    /// The slowest COMMIT.
    pub max_commit: Duration,
}

impl LoadStats {
    /// Adds `o`'s figures.
    pub fn add(&mut self, o: &LoadStats) {
        self.committed += o.committed;
        self.retries += o.retries;
        self.statements += o.statements;
        self.cut += o.cut;
        self.max_commit = self.max_commit.max(o.max_commit);
    }
}

/// The connections writing on the primary.
pub struct Load {
    stop: Arc<AtomicBool>,
    killing: Arc<AtomicBool>,
    workers: Vec<JoinHandle<Result<LoadStats>>>,
}

impl Load {
    /// Starts one connection per `progress` entry on the server `opts` connects to, each
    /// continuing after its last acknowledged transaction. `seed` seeds each connection's
    /// choices (with its number).
    pub fn start(
        opts: &OptsBuilder,
        engine: Engine,
        progress: &[Arc<Progress>],
        rows: u32,
        seed: u64,
    ) -> Result<Load> {
        let stop = Arc::new(AtomicBool::new(false));
        let killing = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for (w, p) in progress.iter().enumerate() {
            let worker = Worker {
                conn_no: w as u32,
                engine,
                rows,
                rng: StdRng::seed_from_u64(
                    seed ^ (w as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                progress: Arc::clone(p),
                stop: Arc::clone(&stop),
                killing: Arc::clone(&killing),
                stats: LoadStats::default(),
            };
            let opts = opts.clone();
            workers.push(
                thread::Builder::new()
                    .name(format!("writer-{w}"))
                    .spawn(move || worker.run(opts))
                    .context("spawning a writer thread")?,
            );
        }
        Ok(Load {
            stop,
            killing,
            workers,
        })
    }

    /// Says the primary is about to be killed: from now on a failed statement ends its
    /// connection's load quietly instead of failing the test.
    pub fn killing(&self) {
        self.killing.store(true, Ordering::SeqCst);
    }

    /// True when a connection has ended (it failed, or the primary is gone).
    pub fn any_finished(&self) -> bool {
        self.workers.iter().any(JoinHandle::is_finished)
    }

    /// Stops the connections after their current transaction and returns their figures;
    /// fails with the first connection's failure.
    pub fn finish(self) -> Result<LoadStats> {
        self.stop.store(true, Ordering::SeqCst);
        let mut stats = LoadStats::default();
        let mut failure = None;
        for w in self.workers {
            match w.join().map_err(|_| anyhow!("a writer thread panicked"))? {
                Ok(s) => stats.add(&s),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(stats),
        }
    }
}

/// The kinds of transaction (the ledger's `kind`).
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// sysbench's oltp_write_only: UPDATE of the indexed `k`, UPDATE of the non-indexed `c`,
    /// DELETE and INSERT of the same row.
    WriteOnly = 0,
    /// A range UPDATE of `k` over 10 rows and an UPDATE of `grp` (composite index).
    Range = 1,
    /// DELETE of 5 consecutive rows and a multi-row INSERT putting them back.
    Replace = 2,
    /// An increment of one of the hot counters and an UPDATE of `c`.
    Hot = 3,
    /// UPDATEs of `k` in two tables.
    Cross = 4,
}

struct Worker {
    conn_no: u32,
    engine: Engine,
    rows: u32,
    rng: StdRng,
    progress: Arc<Progress>,
    stop: Arc<AtomicBool>,
    killing: Arc<AtomicBool>,
    stats: LoadStats,
}

/// How a transaction ended, when it did not commit.
enum Failed {
    /// Deadlock or lock wait timeout: rolled back, to run again.
    Retry,
    /// Any other error (the connection is gone when the primary is being killed).
    Error(String),
}

impl Worker {
    fn run(mut self, opts: OptsBuilder) -> Result<LoadStats> {
        let mut c = match Conn::new(opts.db_name(Some(DB))) {
            Ok(c) => c,
            Err(_) if self.killing.load(Ordering::SeqCst) => {
                self.stats.cut += 1;
                return Ok(self.stats);
            }
            Err(e) => {
                return Err(anyhow!(e))
                    .with_context(|| format!("writer {}: connecting", self.conn_no));
            }
        };
        let timeout = match self.engine {
            Engine::Riptide => "riptide_lock_wait_timeout",
            Engine::Innodb => "innodb_lock_wait_timeout",
        };
        c.query_drop(format!("SET SESSION {timeout} = 10"))
            .with_context(|| format!("writer {}: SET {timeout}", self.conn_no))?;
        while !self.stop.load(Ordering::SeqCst) {
            let seq = self.progress.acknowledged.load(Ordering::SeqCst) + 1;
            let (kind, tbl, row_id, stmts) = self.transaction();
            let ledger = format!(
                "INSERT INTO ledger VALUES ({}, {seq}, {}, {tbl}, {row_id})",
                self.conn_no, kind as u8
            );
            loop {
                match self.attempt(&mut c, &stmts, &ledger, seq) {
                    Ok(()) => break,
                    Err(Failed::Retry) => {
                        self.stats.retries += 1;
                        if self.killing.load(Ordering::SeqCst) {
                            self.stats.cut += 1;
                            return Ok(self.stats);
                        }
                        thread::sleep(Duration::from_millis(1));
                    }
                    Err(Failed::Error(_)) if self.killing.load(Ordering::SeqCst) => {
                        self.stats.cut += 1;
                        return Ok(self.stats);
                    }
                    Err(Failed::Error(e)) => {
                        bail!(
                            "writer {}, transaction {seq} ({kind:?}): {e}\n  the transaction:\n    {}",
                            self.conn_no,
                            stmts
                                .iter()
                                .chain(std::iter::once(&ledger))
                                .map(|s| abbreviate(s))
                                .collect::<Vec<_>>()
                                .join("\n    ")
                        );
                    }
                }
            }
            self.progress.acknowledged.store(seq, Ordering::SeqCst);
            self.stats.committed += 1;
        }
        Ok(self.stats)
    }

    /// One try of a transaction: BEGIN, its statements, the ledger row, COMMIT.
    fn attempt(
        &mut self,
        c: &mut Conn,
        stmts: &[String],
        ledger: &str,
        seq: u64,
    ) -> Result<(), Failed> {
        let run = |c: &mut Conn, sql: &str, stats: &mut LoadStats| -> Result<(), Failed> {
            stats.statements += 1;
            c.query_drop(sql).map_err(|e| match e {
                mysql::Error::MySqlError(m) if m.code == 1213 || m.code == 1205 => Failed::Retry,
                e => Failed::Error(format!("`{}`: {e}", abbreviate(sql))),
            })
        };
        let body = (|| {
            run(c, "BEGIN", &mut self.stats)?;
            for s in stmts {
                run(c, s, &mut self.stats)?;
            }
            run(c, ledger, &mut self.stats)
        })();
        if let Err(f) = body {
            if matches!(f, Failed::Retry) {
                // The engine rolled the transaction back (a deadlock) or only the statement
                // (a lock wait timeout): end it either way.
                if let Err(e) = c.query_drop("ROLLBACK") {
                    return Err(Failed::Error(format!("ROLLBACK after a lock error: {e}")));
                }
            }
            return Err(f);
        }
        self.progress.committing.store(seq, Ordering::SeqCst);
        let started = Instant::now();
        run(c, "COMMIT", &mut self.stats)?;
        self.stats.max_commit = self.stats.max_commit.max(started.elapsed());
        Ok(())
    }

    /// The next transaction: its kind, the table and row its ledger row names, and its
    /// statements (without BEGIN, the ledger row and COMMIT).
    fn transaction(&mut self) -> (Kind, u32, u32, Vec<String>) {
        let rng = &mut self.rng;
        let rows = self.rows.max(10);
        let t = rng.random_range(1..=SBTEST_TABLES);
        let id = rng.random_range(1..=rows);
        let c = digits(rng, 11, 10);
        let roll = rng.random_range(0..100);
        if roll < 40 {
            let row = row_values(rng, id);
            let stmts = vec![
                format!("UPDATE sbtest{t} SET k = k + 1 WHERE id = {id}"),
                format!("UPDATE sbtest{t} SET c = '{c}' WHERE id = {id}"),
                format!("DELETE FROM sbtest{t} WHERE id = {id}"),
                format!("INSERT INTO sbtest{t} VALUES {row}"),
            ];
            (Kind::WriteOnly, t, id, stmts)
        } else if roll < 55 {
            let a = rng.random_range(1..=rows - 9);
            let other = rng.random_range(1..=rows);
            let grp = rng.random_range(0..100);
            let stmts = vec![
                format!(
                    "UPDATE sbtest{t} SET k = k + 1 WHERE id BETWEEN {a} AND {}",
                    a + 9
                ),
                format!("UPDATE sbtest{t} SET grp = {grp} WHERE id = {other}"),
            ];
            (Kind::Range, t, a, stmts)
        } else if roll < 70 {
            let a = rng.random_range(1..=rows - 4);
            let values: Vec<String> = (a..a + 5).map(|i| row_values(rng, i)).collect();
            let stmts = vec![
                format!("DELETE FROM sbtest{t} WHERE id BETWEEN {a} AND {}", a + 4),
                format!("INSERT INTO sbtest{t} VALUES {}", values.join(",")),
            ];
            (Kind::Replace, t, a, stmts)
        } else if roll < 85 {
            let h = rng.random_range(0..COUNTERS);
            let stmts = vec![
                format!(
                    "UPDATE counters SET n = n + 1, last_conn = {} WHERE id = {h}",
                    self.conn_no
                ),
                format!("UPDATE sbtest{t} SET c = '{c}' WHERE id = {id}"),
            ];
            (Kind::Hot, 0, h, stmts)
        } else {
            let t2 = t % SBTEST_TABLES + 1;
            let id2 = rng.random_range(1..=rows);
            let stmts = vec![
                format!("UPDATE sbtest{t} SET k = k - 1 WHERE id = {id}"),
                format!("UPDATE sbtest{t2} SET k = k + 1 WHERE id = {id2}"),
            ];
            (Kind::Cross, t, id, stmts)
        }
    }
}

/// The first 100 characters of a statement.
fn abbreviate(sql: &str) -> String {
    let mut s = String::new();
    for (i, ch) in sql.chars().enumerate() {
        if i == 100 {
            s.push_str("...");
            break;
        }
        s.push(ch);
    }
    s
}

/// Checks every connection's ledger on a server (after a kill of the primary, or at the end
/// of a round): it must hold exactly that connection's transactions 1..k, with
/// `acknowledged <= k <= committing`. Then sets both to k (the transaction in doubt is
/// decided) and returns how many transactions in doubt were found committed.
pub fn check_ledger(c: &mut Conn, progress: &[Arc<Progress>], server: &str) -> Result<u64> {
    let found: Vec<(u32, u64, u64)> = c
        .query(format!(
            "SELECT conn, COUNT(*), CAST(MAX(seq) AS UNSIGNED) FROM {DB}.ledger GROUP BY conn"
        ))
        .with_context(|| format!("reading the ledger on the {server}"))?;
    let mut in_doubt_committed = 0;
    let mut report = String::new();
    for (w, p) in progress.iter().enumerate() {
        let (count, max) = found
            .iter()
            .find(|(conn, _, _)| *conn as usize == w)
            .map_or((0, 0), |(_, n, m)| (*n, *m));
        let acked = p.acknowledged.load(Ordering::SeqCst);
        let sent = p.committing.load(Ordering::SeqCst);
        if count != max {
            let _ = writeln!(
                report,
                "connection {w}: {count} ledger rows but the highest is {max}: transactions \
                 missing in the middle"
            );
        }
        if max < acked {
            let _ = writeln!(
                report,
                "connection {w}: transactions {}..={acked} were acknowledged but are missing \
                 (the ledger ends at {max})",
                max + 1
            );
        }
        if max > sent {
            let _ = writeln!(
                report,
                "connection {w}: the ledger goes to {max} but only {sent} COMMITs were sent"
            );
        }
        if report.is_empty() {
            in_doubt_committed += u64::from(max > acked);
            p.acknowledged.store(max, Ordering::SeqCst);
            p.committing.store(max, Ordering::SeqCst);
        }
    }
    if let Some((conn, _, _)) = found
        .iter()
        .find(|(conn, _, _)| *conn as usize >= progress.len())
    {
        let _ = writeln!(report, "ledger rows of a connection {conn} that never ran");
    }
    if !report.is_empty() {
        bail!("the {server}'s ledger disagrees with what the load was told:\n{report}");
    }
    Ok(in_doubt_committed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_have_the_column_widths() {
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(digits(&mut rng, 11, 10).len(), 119);
        assert_eq!(digits(&mut rng, 5, 10).len(), 59);
        let v = row_values(&mut rng, 7);
        assert!(v.starts_with("(7, "));
    }

    #[test]
    fn statements_stay_in_the_key_range() {
        let mut w = Worker {
            conn_no: 0,
            engine: Engine::Riptide,
            rows: 10,
            rng: StdRng::seed_from_u64(3),
            progress: Arc::default(),
            stop: Arc::default(),
            killing: Arc::default(),
            stats: LoadStats::default(),
        };
        for _ in 0..1000 {
            let (kind, tbl, row, stmts) = w.transaction();
            match kind {
                Kind::Hot => assert!(tbl == 0 && row < COUNTERS),
                _ => assert!((1..=SBTEST_TABLES).contains(&tbl) && (1..=10).contains(&row)),
            }
            assert!(!stmts.is_empty());
        }
    }
}
