//! Two-session schedules: the same interleaving of two connections' steps runs once on the
//! RIPTIDE table and once on the InnoDB table (each from the same fresh contents), and every
//! step's outcome is compared, including whether it blocked on a lock.
//!
//! Each session runs on a thread of its own; the driver hands a step to its session and
//! waits for the answer. A step still running after `block` (default 200 ms) is *blocked*
//! when it waits for a lock, which the engine's gauge of lock waits tells
//! (`Riptide_lock_waiting`, `Innodb_row_lock_current_waits`): then the driver goes on with
//! the other session. A step that merely runs slowly (a busy machine) is waited for, so
//! the order of the steps does not depend on the machine's load. A blocked step's answer
//! is collected before its session's next step (or at the end), and right after a step of
//! the other session that let it go on; the lock wait timeouts are 2 s on both engines, so
//! a step blocked for good ends with 1205.
//!
//! The shapes are those where InnoDB's answer is well-defined (one of them per schedule,
//! `Kind::C*`): session A runs one transaction; session B runs autocommit statements that
//! each touch one row by primary or unique key (B holds no lock between its steps, so A never
//! waits for B, and no deadlock can happen); A's writes are point writes of existing rows
//! (no gap locks) or inserts of keys only A uses; A's locking reads are point reads of
//! existing rows or whole-table scans, and under SERIALIZABLE its plain reads are too. A's
//! non-locking reads are anything (snapshots under REPEATABLE READ). See docs/TESTING.md.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use riptide_mariadb_server::Server;

use crate::exec::{self, Outcome};
use crate::kinds::{Enabled, Kind};
use crate::schema::{CONC_TABLE, conc_ddl};
use crate::session::session_opts;
use crate::values::quote;

/// One step: a statement of session A (0) or B (1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// 0 = A, 1 = B.
    pub session: usize,
    /// The statement.
    pub sql: String,
    /// Its number in the generated schedule (kept through reduction, for messages).
    pub id: usize,
}

/// A generated schedule.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Its shape.
    pub kind: Kind,
    /// The isolation level of both sessions.
    pub level: &'static str,
    /// The rows the table starts with (INSERT statements).
    pub setup: Vec<String>,
    /// The interleaved steps.
    pub steps: Vec<Step>,
}

/// What one step did on one engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepOutcome {
    /// The server's answer.
    pub outcome: Outcome,
    /// It was still running after the blocking threshold (waited for a lock).
    pub blocked: bool,
}

/// The session names.
pub const NAMES: [&str; 2] = ["A", "B"];

/// Session setup statements (per session, before the steps).
pub fn session_init(level: &str) -> Vec<String> {
    vec![
        format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"),
        "SET SESSION innodb_lock_wait_timeout = 2".into(),
        "SET SESSION riptide_lock_wait_timeout = 2".into(),
    ]
}

struct Builder<'a> {
    rng: &'a mut StdRng,
    steps: Vec<Step>,
    level: &'static str,
}

const ROWS: i64 = 8;

impl Builder<'_> {
    fn a(&mut self, sql: impl Into<String>) {
        let id = self.steps.len();
        self.steps.push(Step {
            session: 0,
            sql: sql.into(),
            id,
        });
    }
    fn b(&mut self, sql: impl Into<String>) {
        let id = self.steps.len();
        self.steps.push(Step {
            session: 1,
            sql: sql.into(),
            id,
        });
    }
    fn serializable(&self) -> bool {
        self.level == "SERIALIZABLE"
    }
    fn pct(&mut self, p: u32) -> bool {
        self.rng.random_range(0..100) < p
    }
    /// An existing row id (1 ..= ROWS).
    fn row(&mut self) -> i64 {
        self.rng.random_range(1..=ROWS)
    }
    fn letter(id: i64) -> String {
        char::from(b'a' + (id.clamp(1, 26) as u8 - 1)).to_string()
    }
    /// A read by A. Under SERIALIZABLE (locking) only a point read of an existing row or a
    /// whole-table scan.
    fn a_read(&mut self, avoid: Option<i64>) -> String {
        let mut x = self.row();
        if Some(x) == avoid {
            x = x % ROWS + 1;
        }
        if self.serializable() {
            // Locking reads: by primary key (InnoDB locks the record alone) or the whole
            // table (every record and every gap). Not by the UNIQUE secondary key: InnoDB
            // also locks the gap before the record there, so another session's insert of a
            // neighbouring value waits, which no other engine need copy.
            return if self.pct(60) {
                format!("SELECT * FROM {CONC_TABLE} WHERE id = {x}")
            } else {
                format!("SELECT * FROM {CONC_TABLE} ORDER BY id")
            };
        }
        match self.rng.random_range(0..9) {
            0 => format!("SELECT * FROM {CONC_TABLE} WHERE id = {x}"),
            1 => format!("SELECT * FROM {CONC_TABLE} WHERE u = {}", x * 10),
            2 => format!(
                "SELECT * FROM {CONC_TABLE} WHERE k = {} ORDER BY id",
                self.rng.random_range(0..3)
            ),
            3 => format!(
                "SELECT id, u FROM {CONC_TABLE} WHERE u BETWEEN {} AND {} ORDER BY id",
                x * 10,
                x * 10 + 30
            ),
            4 => format!("SELECT COUNT(*), SUM(v) FROM {CONC_TABLE}"),
            5 => format!("SELECT id, s FROM {CONC_TABLE} FORCE INDEX (cs) ORDER BY s, id"),
            6 => format!("SELECT * FROM {CONC_TABLE} FORCE INDEX (ck) WHERE k >= 0 ORDER BY id"),
            7 => format!("SELECT id, u FROM {CONC_TABLE} FORCE INDEX (cu) WHERE u > 0 ORDER BY id"),
            _ => format!("SELECT * FROM {CONC_TABLE} ORDER BY id"),
        }
    }
    fn full(&self) -> String {
        format!("SELECT * FROM {CONC_TABLE} ORDER BY id")
    }
    /// An autocommit write by B to row `x` (by primary or unique key).
    fn b_write(&mut self, x: i64, j: i64) -> String {
        match self.rng.random_range(0..6) {
            0 | 1 => format!("UPDATE {CONC_TABLE} SET v = v + 1 WHERE id = {x}"),
            2 => format!("UPDATE {CONC_TABLE} SET v = v + 100 WHERE u = {}", x * 10),
            3 => format!("DELETE FROM {CONC_TABLE} WHERE id = {x}"),
            4 => format!(
                "UPDATE {CONC_TABLE} SET k = k + 1, u = {} WHERE id = {x}",
                2100 + j
            ),
            _ => format!(
                "INSERT INTO {CONC_TABLE} VALUES ({}, {}, {}, 0, {})",
                200 + j,
                2000 + j,
                j % 3,
                quote(&format!("b{j}"))
            ),
        }
    }
    /// A point write by A to its row `x`.
    fn a_write(&mut self, x: i64) -> String {
        match self.rng.random_range(0..4) {
            0 | 1 => format!("UPDATE {CONC_TABLE} SET v = v * 2 + 10 WHERE id = {x}"),
            2 => format!("UPDATE {CONC_TABLE} SET v = v + 7 WHERE u = {}", x * 10),
            _ => format!("UPDATE {CONC_TABLE} SET k = k + 3 WHERE id = {x}"),
        }
    }
    fn begin(&mut self) {
        let b = if self.level != "READ COMMITTED" && self.pct(25) {
            "START TRANSACTION WITH CONSISTENT SNAPSHOT"
        } else {
            "BEGIN"
        };
        self.a(b);
    }
    fn end(&mut self) {
        let e = if self.pct(70) { "COMMIT" } else { "ROLLBACK" };
        self.a(e);
    }
    /// A value for `s` equal to letter `x`'s row in `utf8mb4_general_nopad_ci` (the same or
    /// the other case). Not a look-alike ('a ', 'a\0': different values under NO PAD):
    /// InnoDB's duplicate check of such a value locks its equal-looking neighbour, so its
    /// insert waits for a row it does not collide with.
    fn s_like(&mut self, x: i64) -> String {
        let l = Self::letter(x);
        if self.pct(50) {
            quote(&l.to_uppercase())
        } else {
            quote(&l)
        }
    }
}

/// A random schedule of one of the enabled shapes, or None if none is enabled.
pub fn generate(rng: &mut StdRng, on: &Enabled) -> Option<Schedule> {
    let shapes = on.of_group("concurrency");
    let total: u32 = shapes.iter().map(|k| k.weight()).sum();
    if total == 0 {
        return None;
    }
    let mut levels = Vec::new();
    if on.has(Kind::IsoReadCommitted) {
        levels.push("READ COMMITTED");
    }
    if on.has(Kind::IsoRepeatableRead) {
        levels.push("REPEATABLE READ");
    }
    if on.has(Kind::IsoSerializable) {
        levels.push("SERIALIZABLE");
    }
    let level = *levels.choose(rng)?;
    let mut x = rng.random_range(0..total);
    let mut kind = *shapes.first()?;
    for k in &shapes {
        if x < k.weight() {
            kind = *k;
            break;
        }
        x -= k.weight();
    }
    let setup = vec![format!(
        "INSERT INTO {CONC_TABLE} VALUES {}",
        (1..=ROWS)
            .map(|i| format!("({i}, {}, {}, 0, '{}')", i * 10, i % 3, Builder::letter(i)))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let mut b = Builder {
        rng,
        steps: Vec::new(),
        level,
    };
    match kind {
        Kind::CSnapshotRead => {
            b.begin();
            if b.pct(70) {
                let r = b.a_read(None);
                b.a(r);
            }
            let n = if b.serializable() {
                1
            } else {
                b.rng.random_range(1..=3)
            };
            let mut b_rows = Vec::new();
            for j in 0..n {
                let x = b.row();
                b_rows.push(x);
                let w = b.b_write(x, j);
                b.b(w);
            }
            for _ in 0..b.rng.random_range(1..=2) {
                let r = b.a_read(None);
                b.a(r);
            }
            if b.pct(40) {
                // Under SERIALIZABLE, B's write is waiting for A's shared lock on its row; if
                // A then wrote that row, InnoDB would queue A's upgrade behind B's request
                // and pick B as a deadlock victim, where RIPTIDE grants the upgrade and B
                // goes on waiting: lock queue internals, not compared. A writes another row.
                let mut x = b.row();
                while b.serializable() && b_rows.contains(&x) {
                    x = b.row();
                }
                let w = b.a_write(x);
                b.a(w);
                let f = b.full();
                b.a(f);
            }
            b.end();
            let f = b.full();
            b.a(f);
        }
        Kind::CUpdateCommitted => {
            let x = b.row();
            b.begin();
            let r = b.a_read(if b.serializable() { Some(x) } else { None });
            if !(b.serializable() && r.contains("ORDER BY id") && !r.contains("WHERE")) {
                b.a(r);
            }
            let w = match b.rng.random_range(0..5) {
                0 => format!("DELETE FROM {CONC_TABLE} WHERE id = {x}"),
                1 => format!("UPDATE {CONC_TABLE} SET u = u + 1, v = v + 1 WHERE id = {x}"),
                2 => format!("UPDATE {CONC_TABLE} SET k = k + 1 WHERE id = {x}"),
                _ => format!("UPDATE {CONC_TABLE} SET v = v + 1 WHERE id = {x}"),
            };
            b.b(w);
            let w = b.a_write(x);
            b.a(w);
            b.a(format!("SELECT * FROM {CONC_TABLE} WHERE id = {x}"));
            if !b.serializable() {
                for _ in 0..2 {
                    let r = b.a_read(None);
                    b.a(r);
                }
            }
            let f = b.full();
            b.a(f);
            b.end();
            let f = b.full();
            b.a(f);
        }
        Kind::CDeleteInsert => {
            let x = b.row();
            if b.pct(60) {
                // A deletes (uncommitted), B inserts the same unique value: waits for A.
                b.begin();
                if b.pct(40) {
                    let r = b.a_read(Some(x));
                    b.a(r);
                }
                match b.rng.random_range(0..4) {
                    0 => b.a(format!("DELETE FROM {CONC_TABLE} WHERE id = {x}")),
                    1 => b.a(format!("DELETE FROM {CONC_TABLE} WHERE u = {}", x * 10)),
                    // The unique values leave the row by an UPDATE instead.
                    2 => b.a(format!(
                        "UPDATE {CONC_TABLE} SET u = {}, s = 'm{x}' WHERE id = {x}",
                        1100 + x
                    )),
                    _ => b.a(format!(
                        "UPDATE {CONC_TABLE} SET id = {} WHERE id = {x}",
                        110 + x
                    )),
                }
                let ins = match b.rng.random_range(0..3) {
                    0 => format!("INSERT INTO {CONC_TABLE} VALUES ({x}, 2001, 1, 5, 'q1')"),
                    1 => format!(
                        "INSERT INTO {CONC_TABLE} VALUES (201, {}, 1, 5, 'q2')",
                        x * 10
                    ),
                    _ => {
                        let s = b.s_like(x);
                        format!("INSERT INTO {CONC_TABLE} VALUES (202, 2002, 1, 5, {s})")
                    }
                };
                b.b(ins);
                b.end();
                let f = b.full();
                b.b(f);
            } else {
                // B deletes (committed) after A's snapshot; A inserts the same unique value.
                b.begin();
                let r = b.a_read(Some(x));
                if !b.serializable() || r.contains("WHERE") {
                    b.a(r);
                }
                b.b(format!("DELETE FROM {CONC_TABLE} WHERE id = {x}"));
                let ins = match b.rng.random_range(0..3) {
                    0 => format!("INSERT INTO {CONC_TABLE} VALUES ({x}, 1001, 2, 9, 'p1')"),
                    1 => format!(
                        "INSERT INTO {CONC_TABLE} VALUES (101, {}, 2, 9, 'p2')",
                        x * 10
                    ),
                    _ => {
                        let s = b.s_like(x);
                        format!("INSERT INTO {CONC_TABLE} VALUES (102, 1002, 2, 9, {s})")
                    }
                };
                b.a(ins);
                let f = b.full();
                b.a(f);
                b.a(format!("SELECT * FROM {CONC_TABLE} WHERE u = {}", x * 10));
                b.end();
                let f = b.full();
                b.a(f);
            }
        }
        Kind::CInsertInsert => {
            let j = b.rng.random_range(0..5);
            b.begin();
            b.a(format!(
                "INSERT INTO {CONC_TABLE} VALUES ({}, {}, 1, 1, 'a{j}')",
                100 + j,
                1000 + j
            ));
            let ins = match b.rng.random_range(0..3) {
                0 => format!(
                    "INSERT INTO {CONC_TABLE} VALUES ({}, 2000, 2, 2, 'z1')",
                    100 + j
                ),
                1 => format!(
                    "INSERT INTO {CONC_TABLE} VALUES (200, {}, 2, 2, 'z2')",
                    1000 + j
                ),
                _ => format!("INSERT INTO {CONC_TABLE} VALUES (201, 2001, 2, 2, 'A{j}')"),
            };
            b.b(ins);
            b.end();
            let f = b.full();
            b.b(f);
        }
        Kind::CWriteWait => {
            let x = b.row();
            b.begin();
            let w = if b.pct(25) {
                format!("DELETE FROM {CONC_TABLE} WHERE id = {x}")
            } else {
                b.a_write(x)
            };
            b.a(w);
            let w = b.b_write(x, 0);
            let w = if w.starts_with("INSERT") {
                format!("UPDATE {CONC_TABLE} SET v = v + 1 WHERE id = {x}")
            } else {
                w
            };
            b.b(w);
            b.end();
            let f = b.full();
            b.b(f);
        }
        Kind::CLockingRead => {
            let x = b.row();
            b.begin();
            let whole = b.pct(30);
            let lock = if b.serializable() && b.pct(40) {
                ""
            } else if b.pct(60) {
                " FOR UPDATE"
            } else {
                " LOCK IN SHARE MODE"
            };
            if whole {
                b.a(format!("SELECT * FROM {CONC_TABLE} ORDER BY id{lock}"));
            } else {
                b.a(format!("SELECT * FROM {CONC_TABLE} WHERE id = {x}{lock}"));
            }
            let step = match b.rng.random_range(0..5) {
                0 => format!("SELECT * FROM {CONC_TABLE} WHERE id = {x} FOR UPDATE"),
                1 => format!("SELECT * FROM {CONC_TABLE} WHERE id = {x} LOCK IN SHARE MODE"),
                2 => format!("SELECT * FROM {CONC_TABLE} WHERE id = {x}"),
                3 if whole => format!("INSERT INTO {CONC_TABLE} VALUES (203, 2003, 0, 0, 'w')"),
                _ => b.b_write(x, 4),
            };
            b.b(step);
            b.end();
            let f = b.full();
            b.b(f);
        }
        Kind::CNowait => {
            let x = b.row();
            b.begin();
            if b.pct(50) {
                let w = b.a_write(x);
                b.a(w);
            } else {
                b.a(format!(
                    "SELECT * FROM {CONC_TABLE} WHERE id = {x} FOR UPDATE"
                ));
            }
            let step = if b.pct(70) {
                format!("SELECT * FROM {CONC_TABLE} WHERE id = {x} FOR UPDATE NOWAIT")
            } else {
                format!("SELECT * FROM {CONC_TABLE} WHERE id = {x} LOCK IN SHARE MODE NOWAIT")
            };
            b.b(step);
            b.end();
            let f = b.full();
            b.b(f);
        }
        Kind::CSkipLocked => {
            b.begin();
            for _ in 0..b.rng.random_range(1..=2) {
                let x = b.row();
                match b.rng.random_range(0..4) {
                    0 => {
                        let w = b.a_write(x);
                        b.a(w);
                    }
                    1 => b.a(format!(
                        "SELECT * FROM {CONC_TABLE} WHERE id = {x} FOR UPDATE"
                    )),
                    2 => b.a(format!(
                        "SELECT * FROM {CONC_TABLE} WHERE id = {x} LOCK IN SHARE MODE"
                    )),
                    _ => b.a(format!("DELETE FROM {CONC_TABLE} WHERE id = {x}")),
                }
            }
            if b.pct(30) {
                b.a(format!(
                    "INSERT INTO {CONC_TABLE} VALUES (105, 1005, 1, 1, 'a5')"
                ));
            }
            let lock = if b.pct(60) {
                "FOR UPDATE"
            } else {
                "LOCK IN SHARE MODE"
            };
            if b.pct(50) {
                b.b(format!(
                    "SELECT * FROM {CONC_TABLE} ORDER BY id {lock} SKIP LOCKED"
                ));
            } else {
                b.b(format!(
                    "SELECT * FROM {CONC_TABLE} WHERE id BETWEEN 2 AND 6 ORDER BY id {lock} SKIP LOCKED"
                ));
            }
            b.end();
            let f = b.full();
            b.b(f);
        }
        _ => return None,
    }
    let steps = b.steps;
    Some(Schedule {
        kind,
        level,
        setup,
        steps,
    })
}

/// One session's thread: runs the statements it is sent, answers with their outcomes.
struct Session {
    tx: Sender<String>,
    rx: Receiver<Outcome>,
    handle: Option<JoinHandle<()>>,
    conn_id: u32,
}

impl Session {
    fn start(server: &Server, db: &str, init: &[String]) -> Result<Session> {
        let mut conn = server.connect_with(session_opts(server, db))?;
        for s in init {
            conn.query_drop(s).with_context(|| format!("`{s}`"))?;
        }
        let conn_id = conn.connection_id();
        let (tx, rx_cmd) = mpsc::channel::<String>();
        let (tx_res, rx) = mpsc::channel::<Outcome>();
        let handle = thread::Builder::new()
            .name(format!("session-{conn_id}"))
            .spawn(move || {
                while let Ok(sql) = rx_cmd.recv() {
                    let o = exec::run(&mut conn, &sql);
                    if tx_res.send(o).is_err() {
                        break;
                    }
                }
            })
            .context("spawning a session thread")?;
        Ok(Session {
            tx,
            rx,
            handle: Some(handle),
            conn_id,
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Closing the channel ends the thread once its statement is done.
        let (tx, _) = mpsc::channel();
        drop(std::mem::replace(&mut self.tx, tx));
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Runs `sched` (only `steps`, a subset of its steps, in order) on database `db` from a
/// fresh table. `block`: how long a step may run before it counts as blocked.
pub fn run(
    server: &Server,
    db: &str,
    sched: &Schedule,
    steps: &[Step],
    block: Duration,
) -> Result<(Vec<StepOutcome>, String)> {
    let mut admin = server.connect_with(session_opts(server, db))?;
    admin.query_drop(format!("DROP TABLE IF EXISTS {CONC_TABLE}"))?;
    let engine = if db == crate::schema::RIP_DB {
        "RIPTIDE"
    } else {
        "InnoDB"
    };
    admin.query_drop(conc_ddl(engine))?;
    for s in &sched.setup {
        admin
            .query_drop(s)
            .with_context(|| format!("schedule setup `{s}`"))?;
    }
    // The engine's gauge of lock waits in progress (global: only this schedule's two
    // sessions run while it runs).
    let gauge = if engine == "RIPTIDE" {
        "Riptide_lock_waiting"
    } else {
        "Innodb_row_lock_current_waits"
    };
    let waiting = move |admin: &mut mysql::Conn| -> u64 {
        admin
            .query_first::<(String, String), _>(format!("SHOW GLOBAL STATUS LIKE '{gauge}'"))
            .ok()
            .flatten()
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0)
    };
    let init = session_init(sched.level);
    let sessions = [
        Session::start(server, db, &init)?,
        Session::start(server, db, &init)?,
    ];
    // Long enough for a lock wait timeout (2 s) and a slow moment.
    let long = Duration::from_secs(15);
    let mut out: Vec<Option<StepOutcome>> = vec![None; steps.len()];
    let mut pending: [Option<usize>; 2] = [None, None];
    let mut hung = false;
    let collect = |s: &Session, out: &mut Vec<Option<StepOutcome>>, p: usize| -> bool {
        let o = match s.rx.recv_timeout(long) {
            Ok(o) => o,
            Err(_) => Outcome::Lost(format!("no answer after {} s", long.as_secs())),
        };
        let lost = matches!(o, Outcome::Lost(_));
        if let Some(slot) = out.get_mut(p) {
            *slot = Some(StepOutcome {
                outcome: o,
                blocked: true,
            });
        }
        lost
    };
    for (i, step) in steps.iter().enumerate() {
        let Some(s) = sessions.get(step.session) else {
            continue;
        };
        if let Some(p) = pending.get_mut(step.session).and_then(Option::take) {
            hung |= collect(s, &mut out, p);
        }
        if hung {
            break;
        }
        if s.tx.send(step.sql.clone()).is_err() {
            break;
        }
        // The other session's blocked step, if any, counts in the gauge: this one is blocked
        // when the gauge shows more waits than that.
        let others_blocked = pending
            .iter()
            .enumerate()
            .filter(|&(k, p)| k != step.session && p.is_some())
            .count() as u64;
        let sent = Instant::now();
        let mut gone = false;
        loop {
            match s.rx.recv_timeout(block) {
                Ok(o) => {
                    if let Some(slot) = out.get_mut(i) {
                        *slot = Some(StepOutcome {
                            outcome: o,
                            blocked: false,
                        });
                    }
                    break;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if waiting(&mut admin) > others_blocked || sent.elapsed() >= long {
                        if let Some(slot) = pending.get_mut(step.session) {
                            *slot = Some(i);
                        }
                        break;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    gone = true;
                    break;
                }
            }
        }
        if gone {
            break;
        }
        // A step this one unblocked (a COMMIT, a ROLLBACK) finishes now, before the next
        // step: else the next step would race with it.
        if out.get(i).is_some_and(Option::is_some) {
            for (k, other) in sessions.iter().enumerate() {
                if k == step.session {
                    continue;
                }
                let Some(p) = pending.get(k).copied().flatten() else {
                    continue;
                };
                // It finishes now unless it still waits for a lock (then it stays pending);
                // a slow one is waited for.
                let since = Instant::now();
                loop {
                    match other.rx.recv_timeout(block) {
                        Ok(o) => {
                            if let Some(slot) = out.get_mut(p) {
                                *slot = Some(StepOutcome {
                                    outcome: o,
                                    blocked: true,
                                });
                            }
                            if let Some(slot) = pending.get_mut(k) {
                                *slot = None;
                            }
                            break;
                        }
                        Err(RecvTimeoutError::Timeout)
                            if waiting(&mut admin) == 0 && since.elapsed() < long => {}
                        Err(_) => break,
                    }
                }
            }
        }
    }
    for (k, s) in sessions.iter().enumerate() {
        if let Some(p) = pending.get_mut(k).and_then(Option::take) {
            hung |= collect(s, &mut out, p);
        }
    }
    if hung {
        // A step that never answered: end it, so the session thread can finish.
        for s in &sessions {
            let _ = admin.query_drop(format!("KILL {}", s.conn_id));
        }
    }
    drop(sessions);
    // The table must be consistent afterwards (every index agrees with the rows).
    let check: Vec<(String, String, String, String)> = admin
        .query(format!("CHECK TABLE {CONC_TABLE}"))
        .unwrap_or_default();
    let check = check
        .iter()
        .map(|r| format!("{} {}", r.2, r.3))
        .collect::<Vec<_>>()
        .join("; ");
    Ok((
        out.into_iter()
            .map(|o| {
                o.unwrap_or(StepOutcome {
                    outcome: Outcome::Lost("not run".into()),
                    blocked: false,
                })
            })
            .collect(),
        check,
    ))
}

/// The first step whose outcomes differ (by position in the list), or None.
pub fn first_difference(a: &[StepOutcome], b: &[StepOutcome]) -> Option<usize> {
    a.iter().zip(b.iter()).position(|(x, y)| {
        x.blocked != y.blocked || !exec::same(&x.outcome, &y.outcome, true, false)
    })
}
