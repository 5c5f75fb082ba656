//! DDL during the load, killed with everything else: in-place index builds and drops (sorted
//! and ingested), instant ADD and DROP COLUMN (the row layout in the data dictionary), a
//! copying `ALTER TABLE ... FORCE`, an UPDATE of every row between them, and bulk loads
//! (`riptide_bulk_load`) into a table of its own: into the empty table and then appended
//! above its keys (both ingested at COMMIT), then among its keys (written the ordinary way
//! at COMMIT), each its own transaction. One connection runs
//! them in a fixed cycle on tables no other connection touches. After the restart
//! ([`verify_ddl`]) the table's definition must be the one after the last acknowledged step,
//! or after the step in flight; its rows must be the expected ones through the primary key
//! and through every index it has; CHECK TABLE must pass; and the bulk-loaded table must
//! hold all or none of the rows of each load (all once its COMMIT was acknowledged).
//! Meanwhile another connection writes rows of its own into the table
//! ([`crate::ddl_writer`]); the checks here read the table's own rows (`id <= ROWS`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mysql::Conn;
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::ddl_writer::{WriterState, verify_writer};
use crate::worker::Shared;

/// Rows of the DDL table (`id` 1..=ROWS).
pub const ROWS: i64 = 2000;

/// The DDL table and its rows: `a = id * 37 % 1000`, `b = 'b<id>'`.
pub fn schema() -> Vec<String> {
    let mut sql = vec![
        "CREATE TABLE ddl_t (id INT NOT NULL PRIMARY KEY, a INT NOT NULL, \
         b VARCHAR(20) NOT NULL) ENGINE=RIPTIDE"
            .to_string(),
    ];
    let values: Vec<String> = (1..=ROWS)
        .map(|id| format!("({id}, {}, 'b{id}')", id * 37 % 1000))
        .collect();
    sql.push(format!("INSERT INTO ddl_t VALUES {}", values.join(", ")));
    sql
}

/// What a step changes in the table's definition or rows.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Shape {
    /// Index `ka (a)`.
    ka: bool,
    /// Unique index `ub (b)`.
    ub: bool,
    /// Column `c INT NOT NULL DEFAULT 7`.
    c: bool,
    /// Column `d VARCHAR(10) DEFAULT 'dd'`, first.
    d: bool,
    /// Every `a` raised by 1000.
    shifted: bool,
}

/// One step: its statement (the bulk load: several) and the change it makes.
type Step = (&'static str, fn(&mut Shape));

/// The cycle of steps. The table is back to its first shape after each cycle.
const STEPS: &[Step] = &[
    (
        "ALTER TABLE ddl_t ADD INDEX ka (a), ALGORITHM=INPLACE",
        |s| s.ka = true,
    ),
    (
        "ALTER TABLE ddl_t ADD COLUMN c INT NOT NULL DEFAULT 7, ALGORITHM=INSTANT",
        |s| s.c = true,
    ),
    ("UPDATE ddl_t SET a = a + 1000", |s| s.shifted = true),
    (
        "ALTER TABLE ddl_t ADD UNIQUE KEY ub (b), ALGORITHM=INPLACE",
        |s| s.ub = true,
    ),
    (
        "ALTER TABLE ddl_t ADD COLUMN d VARCHAR(10) DEFAULT 'dd' FIRST, ALGORITHM=INSTANT",
        |s| s.d = true,
    ),
    ("ALTER TABLE ddl_t DROP INDEX ka, ALGORITHM=INPLACE", |s| {
        s.ka = false
    }),
    ("ALTER TABLE ddl_t DROP COLUMN c, ALGORITHM=INSTANT", |s| {
        s.c = false
    }),
    ("UPDATE ddl_t SET a = a - 1000", |s| s.shifted = false),
    ("ALTER TABLE ddl_t DROP INDEX ub, ALGORITHM=INPLACE", |s| {
        s.ub = false
    }),
    ("ALTER TABLE ddl_t DROP COLUMN d, ALGORITHM=INSTANT", |s| {
        s.d = false
    }),
    ("ALTER TABLE ddl_t FORCE", |_| {}),
    (BULK, |_| {}),
];

/// The bulk-load step's marker in [`STEPS`].
const BULK: &str = "bulk load";

/// The shape after `done` steps from the start.
fn shape_after(done: u64) -> Shape {
    let mut s = Shape::default();
    let n = STEPS.len() as u64;
    for i in 0..done % n {
        if let Some((_, apply)) = STEPS.get(i as usize) {
            apply(&mut s);
        }
    }
    s
}

/// The DDL connection's progress, carried over rounds.
#[derive(Clone, Debug, Default)]
pub struct DdlState {
    /// Steps acknowledged.
    pub done: u64,
    /// The step after `done` was sent but not answered when the server died.
    pub in_flight: bool,
    /// The bulk loads of the current `ddl_bulk` whose COMMIT was acknowledged (0 to
    /// [`BULK_PARTS`]): the table must hold all of their rows, none of the later ones' but
    /// the load in flight's, which it holds all or none of.
    pub bulk_parts: usize,
    /// Bulk loads acknowledged over the run.
    pub bulk_loads: u64,
}

/// Runs the cycle from `state` until the server is killed; returns the state, and the error
/// of a statement that failed before the kill.
pub fn run(
    mut conn: Conn,
    mut state: DdlState,
    shared: Arc<Shared>,
    seed: u64,
    binlog: bool,
) -> (DdlState, Option<String>) {
    let mut rng = StdRng::seed_from_u64(seed);
    state.in_flight = false;
    while !shared.killing.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(rng.random_range(0..40)));
        if shared.killing.load(Ordering::SeqCst) {
            break;
        }
        let Some(&(sql, _)) = STEPS.get((state.done % STEPS.len() as u64) as usize) else {
            break;
        };
        state.in_flight = true;
        let result = if sql == BULK {
            bulk_load(&mut conn, &mut state, binlog)
        } else {
            conn.query_drop(sql).with_context(|| format!("`{sql}`"))
        };
        match result {
            Ok(()) => {
                state.done += 1;
                state.in_flight = false;
            }
            Err(_) if shared.killing.load(Ordering::SeqCst) => break,
            Err(e) => {
                let failure = format!("DDL step {}: {e:#}", state.done);
                return (state, Some(failure));
            }
        }
    }
    (state, None)
}

/// The bulk loads into `ddl_bulk`, each `ddl_t`'s rows with its id offset and `a` offset:
/// into the empty table; appended above every key of both indexes (ingested); appended
/// above the primary keys only, its `a` values among the table's (written the ordinary
/// way at commit); appended above both again, by two autocommit INSERTs that form one load
/// held across them and ended by `SET riptide_bulk_load = 0` (the last part: see
/// [`bulk_load`]).
const BULK_PARTS: [(i64, i64); 4] = [
    (0, 0),
    (1_000_000, 10_000_000),
    (2_000_000, 0),
    (3_000_000, 20_000_000),
];

/// A new table `ddl_bulk` filled from `ddl_t` by the [`BULK_PARTS`] loads, each one
/// bulk-loaded transaction. Skipped in rounds with the binary log: a bulk load refuses the
/// two-phase commit the binlog asks for.
fn bulk_load(conn: &mut Conn, state: &mut DdlState, binlog: bool) -> Result<()> {
    if binlog {
        return Ok(());
    }
    state.bulk_parts = 0;
    for sql in [
        "DROP TABLE IF EXISTS ddl_bulk",
        "CREATE TABLE ddl_bulk (id INT NOT NULL PRIMARY KEY, a INT NOT NULL, \
         b VARCHAR(20) NOT NULL, KEY ka (a)) ENGINE=RIPTIDE",
        "SET SESSION riptide_bulk_load = 1",
    ] {
        conn.query_drop(sql).with_context(|| format!("`{sql}`"))?;
    }
    for (n, (id_offset, a_offset)) in BULK_PARTS.iter().enumerate() {
        let select =
            format!("SELECT id + {id_offset}, a + {a_offset}, b FROM ddl_t WHERE id <= {ROWS}");
        let statements = if n + 1 < BULK_PARTS.len() {
            // One transaction: acknowledged by its COMMIT.
            vec![
                "BEGIN".to_string(),
                format!("INSERT INTO ddl_bulk {select}"),
                "COMMIT".to_string(),
            ]
        } else {
            // Autocommit statements: the load is held past each, invisible, and written
            // (all of it or nothing) when the variable returns to 0, which acknowledges it.
            vec![
                format!("INSERT INTO ddl_bulk {select} AND id % 2 = 0"),
                format!("INSERT INTO ddl_bulk {select} AND id % 2 = 1"),
                "SET SESSION riptide_bulk_load = 0".to_string(),
            ]
        };
        for sql in &statements {
            conn.query_drop(sql).with_context(|| format!("`{sql}`"))?;
        }
        state.bulk_parts = n + 1;
        state.bulk_loads += 1;
    }
    conn.query_drop("SET SESSION riptide_bulk_load = 0")?;
    Ok(())
}

/// The table's shape as the server has it.
fn read_shape(conn: &mut Conn) -> Result<Shape> {
    let columns: Vec<String> = conn.query(
        "SELECT COLUMN_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ddl_t'",
    )?;
    let indexes: Vec<String> = conn.query(
        "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ddl_t'",
    )?;
    let sum_a: Option<i64> = conn.query_first(format!(
        "SELECT CAST(SUM(a) AS SIGNED) FROM ddl_t WHERE id <= {ROWS}"
    ))?;
    Ok(Shape {
        ka: indexes.iter().any(|i| i == "ka"),
        ub: indexes.iter().any(|i| i == "ub"),
        c: columns.iter().any(|c| c == "c"),
        d: columns.iter().any(|c| c == "d"),
        shifted: sum_a.unwrap_or_default() > ROWS * 1000,
    })
}

/// The sums every read of the DDL table must give, for shape `s`.
fn want_sums(s: Shape) -> (i64, i64, i64) {
    let ids = ROWS * (ROWS + 1) / 2;
    let a: i64 =
        (1..=ROWS).map(|id| id * 37 % 1000).sum::<i64>() + if s.shifted { ROWS * 1000 } else { 0 };
    let b: i64 = (1..=ROWS).map(|id| format!("b{id}").len() as i64).sum();
    (ids, a, b)
}

/// Checks the DDL tables after a restart, and settles the step in flight (`state.done`
/// moves past it if it took effect) and the writer's statement in flight. Returns the rows
/// compared.
pub fn verify_ddl(conn: &mut Conn, state: &mut DdlState, writer: &mut WriterState) -> Result<u64> {
    let got = read_shape(conn)?;
    let before = shape_after(state.done);
    let after = shape_after(state.done + 1);
    if got != before && state.in_flight && got == after {
        state.done += 1;
    } else if got != before {
        bail!(
            "ddl_t after {} acknowledged DDL steps{}: the server has {got:?}, expected {before:?}{}",
            state.done,
            if state.in_flight {
                " and one in flight"
            } else {
                ""
            },
            if state.in_flight {
                format!(" or {after:?}")
            } else {
                String::new()
            }
        );
    }
    state.in_flight = false;
    let (ids, a, b) = want_sums(got);
    let mut rows = 0;
    let mut reads = vec![("the primary key", "PRIMARY", "id > 0")];
    if got.ka {
        reads.push(("index ka", "ka", "a >= 0"));
    }
    if got.ub {
        reads.push(("index ub", "ub", "b >= ''"));
    }
    for (what, index, cond) in reads {
        let extra = match (got.c, got.d) {
            (true, true) => ", CAST(SUM(c) AS SIGNED), CAST(SUM(d = 'dd') AS SIGNED)",
            (true, false) => ", CAST(SUM(c) AS SIGNED), 0",
            (false, true) => ", 0, CAST(SUM(d = 'dd') AS SIGNED)",
            (false, false) => ", 0, 0",
        };
        let sql = format!(
            "SELECT COUNT(*), CAST(SUM(id) AS SIGNED), CAST(SUM(a) AS SIGNED), \
             CAST(SUM(LENGTH(b)) AS SIGNED){extra} FROM ddl_t FORCE INDEX ({index}) \
             WHERE {cond} AND id <= {ROWS}"
        );
        let row: Option<(i64, i64, i64, i64, i64, i64)> = conn.query_first(&sql)?;
        let want = (
            ROWS,
            ids,
            a,
            b,
            if got.c { 7 * ROWS } else { 0 },
            if got.d { ROWS } else { 0 },
        );
        if row != Some(want) {
            bail!("ddl_t through {what} ({got:?}): {row:?}, expected {want:?} (`{sql}`)");
        }
        rows += ROWS as u64;
    }
    let mut indexes = Vec::new();
    if got.ka {
        // The writer's rows go below 0 when the table's `a` is shifted back under them.
        indexes.push(("ka", "a > -2000000000"));
    }
    if got.ub {
        indexes.push(("ub", "b >= ''"));
    }
    rows += verify_writer(conn, writer, &indexes)?;
    check_table(conn, "ddl_t")?;

    let exists: Option<i64> = conn.query_first(
        "SELECT COUNT(*) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'ddl_bulk'",
    )?;
    if exists.unwrap_or_default() == 0 {
        if state.bulk_parts > 0 {
            bail!(
                "ddl_bulk is gone although {} of its bulk loads were acknowledged",
                state.bulk_parts
            );
        }
        return Ok(rows);
    }
    let (ids, a, b) = want_sums(Shape::default());
    for (part, &(id_offset, a_offset)) in BULK_PARTS.iter().enumerate() {
        let acknowledged = part < state.bulk_parts;
        // The load after the last acknowledged one may have been in flight at the kill.
        let maybe = part == state.bulk_parts;
        let full = (ROWS, ids + ROWS * id_offset, a + ROWS * a_offset, b);
        let ids_of_part = format!("id BETWEEN {id_offset} AND {}", id_offset + 999_999);
        let through_ka = if a_offset > 0 {
            format!("a BETWEEN {a_offset} AND {}", a_offset + 9_999_999)
        } else {
            format!("a < 10000000 AND {ids_of_part}")
        };
        for (index, cond) in [("PRIMARY", ids_of_part.clone()), ("ka", through_ka)] {
            let sql = format!(
                "SELECT COUNT(*), CAST(IFNULL(SUM(id), 0) AS SIGNED), \
                 CAST(IFNULL(SUM(a), 0) AS SIGNED), CAST(IFNULL(SUM(LENGTH(b)), 0) AS SIGNED) \
                 FROM ddl_bulk FORCE INDEX ({index}) WHERE {cond}"
            );
            let row: (i64, i64, i64, i64) = conn.query_first(&sql)?.unwrap_or_default();
            let ok = row == full && (acknowledged || maybe) || row == (0, 0, 0, 0) && !acknowledged;
            if !ok {
                bail!(
                    "ddl_bulk load {part} through {index}: {row:?}, expected {}",
                    if acknowledged {
                        format!("{full:?} (its COMMIT was acknowledged)")
                    } else if maybe {
                        format!("{full:?} or no row (in flight at the kill)")
                    } else {
                        "no row (never sent)".to_string()
                    }
                );
            }
            rows += row.0 as u64;
        }
    }
    check_table(conn, "ddl_bulk")?;
    Ok(rows)
}

/// CHECK TABLE `table` must say OK.
fn check_table(conn: &mut Conn, table: &str) -> Result<()> {
    let rows: Vec<(String, String, String, String)> = conn.query(format!("CHECK TABLE {table}"))?;
    if !rows.iter().any(|r| r.2 == "status" && r.3 == "OK") {
        bail!("CHECK TABLE {table}: {rows:?}");
    }
    Ok(())
}
