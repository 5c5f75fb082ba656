//! One connection's load: random transactions on its own partition, each recorded in the
//! ledger table inside the same transaction, until the server is killed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Row, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::model::{Cell, Expect, LedgerRow, Part, Stmt, next_stmt};

/// MariaDB's duplicate-key errors (`ER_DUP_ENTRY`, `ER_DUP_ENTRY_WITH_KEY_NAME`).
const DUP_CODES: &[u16] = &[1062, 1586];
/// `ER_LOCK_DEADLOCK`: the server rolled the whole transaction back.
const DEADLOCK: u16 = 1213;

/// Counters of one connection's load (added up over connections and rounds).
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    /// Transactions whose COMMIT returned OK.
    pub committed: u64,
    /// Transactions ended by ROLLBACK on purpose.
    pub rolled_back: u64,
    /// Transactions cut by the kill before their COMMIT was sent (must be absent).
    pub cut: u64,
    /// Transactions that also wrote to the InnoDB ledger (two engines: two-phase commit).
    pub two_engine: u64,
    /// Statements run (data statements, reads, savepoints, ledger inserts).
    pub statements: u64,
    /// Duplicate-key failures, each predicted by the model.
    pub dup_errors: u64,
    /// Reads whose rows were compared with the model.
    pub reads: u64,
    /// ROLLBACK TO SAVEPOINT executed.
    pub savepoint_rollbacks: u64,
    /// Slowest acknowledged COMMIT.
    pub max_commit: Duration,
    /// Transactions the server rolled back with a deadlock error (then checked absent).
    pub deadlocks: u64,
    /// The first of those, with its statements.
    pub deadlock_example: Option<String>,
}

impl LoadStats {
    /// Adds `o` to these counters.
    pub fn add(&mut self, o: &LoadStats) {
        self.committed += o.committed;
        self.rolled_back += o.rolled_back;
        self.cut += o.cut;
        self.two_engine += o.two_engine;
        self.statements += o.statements;
        self.dup_errors += o.dup_errors;
        self.reads += o.reads;
        self.savepoint_rollbacks += o.savepoint_rollbacks;
        self.max_commit = self.max_commit.max(o.max_commit);
        self.deadlocks += o.deadlocks;
        if self.deadlock_example.is_none() {
            self.deadlock_example.clone_from(&o.deadlock_example);
        }
    }
}

/// The transaction whose COMMIT was sent but not answered when the server died: after the
/// restart it must be entirely there (ledger row and every effect) or not at all.
#[derive(Clone, Debug)]
pub struct InDoubt {
    /// Its ledger id.
    pub txn: i64,
    /// The partition as it is if the transaction committed.
    pub after: Part,
    /// It also wrote to the InnoDB ledger (a two-engine, two-phase commit).
    pub two_engine: bool,
}

/// State shared by the driver and every connection of a round.
pub struct Shared {
    /// Set by the driver just before it kills the server: errors are expected from then on.
    pub killing: AtomicBool,
    /// The next transaction id (ids are unique over the whole run).
    pub next_txn: AtomicI64,
    /// Per connection: milliseconds since `epoch` when its current statement started
    /// (0: none in flight), so the driver can tell a hang from a slow moment.
    pub in_flight_since: Vec<AtomicU64>,
    /// The start of the round.
    pub epoch: Instant,
}

/// What a connection hands back at the end of a round.
pub struct LoadOutcome {
    /// The partition as committed (acknowledged COMMITs only).
    pub part: Part,
    /// The transaction in doubt, if the kill hit its COMMIT.
    pub in_doubt: Option<InDoubt>,
    /// Counters.
    pub stats: LoadStats,
    /// A discrepancy or unexpected error (the test fails).
    pub failure: Option<String>,
}

/// How a statement ended.
enum Outcome {
    Affected(u64),
    Rows(Vec<Vec<Cell>>),
    Dup,
}

/// Why a connection stopped.
enum Stop {
    /// The server went away (expected once the driver is killing it).
    Gone,
    /// A deadlock error: the server rolled the transaction back (the message says where).
    Deadlock(String),
    /// A real failure.
    Failed(String),
}

fn cell(v: &Value) -> Cell {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

/// A result row as text cells.
pub fn cells(row: Row) -> Vec<Cell> {
    row.unwrap().iter().map(cell).collect()
}

/// One connection of the load.
pub struct Worker {
    /// Its index: it owns partition `w`.
    pub w: usize,
    /// The round (written to the ledger).
    pub round: i64,
    /// Its random source (seeded from the round's seed).
    pub rng: StdRng,
    /// Its connection.
    pub conn: Conn,
    /// The shared round state.
    pub shared: Arc<Shared>,
    /// Counters.
    pub stats: LoadStats,
    /// Chance that a transaction also writes the InnoDB ledger.
    pub two_engine: f64,
    /// The current transaction and its isolation level (for messages).
    pub current: String,
    /// The statements the current transaction ran so far, with their outcomes.
    pub history: Vec<String>,
    /// Take a deadlock error as a rolled-back transaction (else it fails the test).
    pub allow_deadlocks: bool,
}

impl Worker {
    /// A worker for partition `w` of round `round`; `two_engine` is the chance that a
    /// transaction also writes the InnoDB ledger.
    pub fn new(
        w: usize,
        round: i64,
        seed: u64,
        conn: Conn,
        shared: Arc<Shared>,
        two_engine: f64,
    ) -> Worker {
        Worker {
            allow_deadlocks: true,
            history: Vec::new(),
            current: String::new(),
            two_engine,
            w,
            round,
            rng: StdRng::seed_from_u64(seed ^ (w as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            conn,
            shared,
            stats: LoadStats::default(),
        }
    }

    fn mark(&self, start: bool) {
        if let Some(slot) = self.shared.in_flight_since.get(self.w) {
            let v = if start {
                self.shared.epoch.elapsed().as_millis() as u64 + 1
            } else {
                0
            };
            slot.store(v, Ordering::Relaxed);
        }
    }

    /// Runs one statement; `Err` when the connection is gone or the server failed it
    /// without a duplicate-key error.
    fn exec(&mut self, sql: &str, reads: bool) -> Result<Outcome, Stop> {
        self.stats.statements += 1;
        self.mark(true);
        let result = if reads {
            self.conn
                .query::<Row, _>(sql)
                .map(|rows| Outcome::Rows(rows.into_iter().map(cells).collect()))
        } else {
            self.conn
                .query_drop(sql)
                .map(|()| Outcome::Affected(self.conn.affected_rows()))
        };
        self.mark(false);
        self.history.push(format!(
            "{} -> {}",
            abbreviate(sql),
            match &result {
                Ok(Outcome::Affected(n)) => format!("{n} affected"),
                Ok(Outcome::Rows(r)) => format!("{} rows", r.len()),
                Ok(Outcome::Dup) => "duplicate".into(),
                Err(e) => e.to_string(),
            }
        ));
        match result {
            Ok(o) => Ok(o),
            Err(mysql::Error::MySqlError(e)) if DUP_CODES.contains(&e.code) => Ok(Outcome::Dup),
            Err(mysql::Error::MySqlError(e))
                if e.code == DEADLOCK
                    && self.allow_deadlocks
                    && !self.shared.killing.load(Ordering::SeqCst) =>
            {
                Err(Stop::Deadlock(format!(
                    "connection {} (round {}, {}): `{}`: {e}\n  the transaction:\n    {}",
                    self.w,
                    self.round,
                    self.current,
                    abbreviate(sql),
                    self.history.join("\n    ")
                )))
            }
            Err(e) => {
                if self.shared.killing.load(Ordering::SeqCst) {
                    Err(Stop::Gone)
                } else {
                    Err(Stop::Failed(format!(
                        "unexpected error: connection {} (round {}, {}): `{}`: {e}\n  \
                         the transaction so far:\n    {}",
                        self.w,
                        self.round,
                        self.current,
                        abbreviate(sql),
                        self.history.join("\n    ")
                    )))
                }
            }
        }
    }

    /// Runs `stmt` and checks its outcome against the prediction.
    fn run_checked(&mut self, stmt: &Stmt) -> Result<(), Stop> {
        let reads = matches!(stmt.expect, Expect::Rows(_));
        let got = self.exec(&stmt.sql, reads)?;
        let ok = match (&stmt.expect, &got) {
            (Expect::Affected(want), Outcome::Affected(n)) => want == n,
            (Expect::Dup, Outcome::Dup) => {
                self.stats.dup_errors += 1;
                true
            }
            (Expect::Rows(want), Outcome::Rows(rows)) => {
                self.stats.reads += 1;
                want == rows
            }
            _ => false,
        };
        if ok {
            return Ok(());
        }
        let got = match got {
            Outcome::Affected(n) => format!("{n} rows affected"),
            Outcome::Dup => "a duplicate-key error".into(),
            Outcome::Rows(r) => format!("rows {r:?}"),
        };
        Err(Stop::Failed(format!(
            "connection {} (round {}, {}): `{}` gave {got}, expected {:?}\n  \
             the transaction so far:\n    {}",
            self.w,
            self.round,
            self.current,
            abbreviate(&stmt.sql),
            stmt.expect,
            self.history.join("\n    ")
        )))
    }

    /// Runs transactions until the connection fails. `part` is the committed partition.
    pub fn run(mut self, mut part: Part) -> LoadOutcome {
        let mut in_doubt = None;
        let failure = loop {
            match self.transaction(&mut part, &mut in_doubt) {
                Ok(()) => {}
                Err(Stop::Gone) => {
                    if in_doubt.is_none() {
                        self.stats.cut += 1;
                    }
                    break None;
                }
                Err(Stop::Deadlock(msg)) => {
                    // Rolled back by the server, COMMIT included: nothing is in doubt, and
                    // the verification checks that none of it is there.
                    in_doubt = None;
                    self.stats.deadlocks += 1;
                    if self.stats.deadlock_example.is_none() {
                        self.stats.deadlock_example = Some(msg);
                    }
                    match self.exec("ROLLBACK", false) {
                        Ok(_) => {}
                        Err(Stop::Gone) => break None,
                        Err(Stop::Failed(f) | Stop::Deadlock(f)) => break Some(f),
                    }
                }
                Err(Stop::Failed(f)) => break Some(f),
            }
        };
        LoadOutcome {
            part,
            in_doubt,
            stats: self.stats,
            failure,
        }
    }

    /// One transaction: BEGIN, 1-8 random statements (with savepoints, failing statements
    /// and reads), the ledger row, COMMIT (or ROLLBACK).
    fn transaction(&mut self, part: &mut Part, in_doubt: &mut Option<InDoubt>) -> Result<(), Stop> {
        let txn = self.shared.next_txn.fetch_add(1, Ordering::SeqCst);
        let level = if self.rng.random_bool(0.5) {
            "REPEATABLE READ"
        } else {
            "READ COMMITTED"
        };
        self.current = format!("transaction {txn}, {level}");
        self.history.clear();
        self.exec(&format!("SET TRANSACTION ISOLATION LEVEL {level}"), false)?;
        self.exec("BEGIN", false)?;
        let mut work = part.clone();
        let mut savepoint: Option<Part> = None;
        let n = self.rng.random_range(1..=8);
        let ledger_at = self.rng.random_range(0..=n);
        let two_engine = self.rng.random_bool(self.two_engine);
        for i in 0..=n {
            if i == ledger_at {
                self.ledger_insert(txn, &mut work, two_engine, n)?;
            }
            if i == n {
                break;
            }
            if savepoint.is_none() && self.rng.random_bool(0.1) {
                self.exec("SAVEPOINT sp", false)?;
                savepoint = Some(work.clone());
            } else if let Some(saved) = &savepoint
                && self.rng.random_bool(0.15)
            {
                if self.rng.random_bool(0.6) {
                    self.exec("ROLLBACK TO SAVEPOINT sp", false)?;
                    work = saved.clone();
                    self.stats.savepoint_rollbacks += 1;
                } else {
                    self.exec("RELEASE SAVEPOINT sp", false)?;
                    savepoint = None;
                }
            }
            let stmt = next_stmt(&mut self.rng, self.w, &mut work);
            self.run_checked(&stmt)?;
        }
        // A ROLLBACK TO SAVEPOINT may have taken the ledger row back out: put it back.
        if !work.ledger.contains_key(&txn) || (two_engine && !work.ledger_inno.contains(&txn)) {
            self.ledger_insert(txn, &mut work, two_engine, n)?;
        }
        if self.rng.random_bool(0.12) {
            self.exec("ROLLBACK", false)?;
            self.stats.rolled_back += 1;
            return Ok(());
        }
        *in_doubt = Some(InDoubt {
            txn,
            after: work.clone(),
            two_engine,
        });
        let start = Instant::now();
        match self.exec("COMMIT", false) {
            Ok(_) => {
                *in_doubt = None;
                *part = work;
                self.stats.committed += 1;
                if two_engine {
                    self.stats.two_engine += 1;
                }
                self.stats.max_commit = self.stats.max_commit.max(start.elapsed());
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Inserts the ledger row (and the InnoDB ledger row) of `txn` where missing.
    fn ledger_insert(
        &mut self,
        txn: i64,
        work: &mut Part,
        two_engine: bool,
        stmts: i64,
    ) -> Result<(), Stop> {
        if let std::collections::btree_map::Entry::Vacant(slot) = work.ledger.entry(txn) {
            let sql = format!(
                "INSERT INTO ledger (txn, conn, round, stmts) VALUES ({txn}, {}, {}, {stmts})",
                self.w, self.round
            );
            self.run_checked(&Stmt {
                sql,
                expect: Expect::Affected(1),
            })?;
            slot.insert(LedgerRow {
                round: self.round,
                stmts,
            });
        }
        if two_engine && !work.ledger_inno.contains(&txn) {
            let sql = format!(
                "INSERT INTO ledger_inno (txn, conn) VALUES ({txn}, {})",
                self.w
            );
            self.run_checked(&Stmt {
                sql,
                expect: Expect::Affected(1),
            })?;
            work.ledger_inno.insert(txn);
        }
        Ok(())
    }
}

/// The first 200 characters of a statement, for messages.
pub fn abbreviate(sql: &str) -> String {
    if sql.len() <= 200 {
        return sql.to_string();
    }
    let mut end = 200;
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", sql.get(..end).unwrap_or(sql))
}
