//! A writer on the DDL table while the DDL connection reshapes it ([`crate::ddl`]): online
//! index builds (`ADD INDEX ... ALGORITHM=INPLACE`, `LOCK=NONE` by default) must take in
//! the rows written during the build, instant column changes must not lose them, and all of
//! it must survive the kill.
//!
//! The writer owns the rows whose `id` is above [`WRITER_IDS`] (the DDL table's own rows are
//! `1..=ROWS`): autocommit statements that insert a new row (`b = 'w<id>'`, unique, so the
//! unique index `ub` can be built over them), delete one, or change its `a` (the column the
//! index `ka` is on). It records which rows it was told are there. After the restart
//! ([`verify_writer`]) the rows above [`WRITER_IDS`] must be those, give or take the one
//! statement in flight at the kill, and every index the table has must hold exactly those
//! rows with the same `a` as the primary key.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mysql::Conn;
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::worker::Shared;

/// The writer's rows have ids above this.
pub const WRITER_IDS: i64 = 1_000_000;

/// About how many rows the writer keeps: beyond it, it deletes more than it inserts.
const KEEP_ROWS: usize = 300;

/// Errors after which an autocommit statement had no effect and is simply given up: a
/// deadlock (`ER_LOCK_DEADLOCK`), a lock wait timeout (`ER_LOCK_WAIT_TIMEOUT`), a table
/// definition changed under the statement (`ER_TABLE_DEF_CHANGED`).
const GIVE_UP: [u16; 3] = [1213, 1205, 1412];

/// One writer statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriterOp {
    /// `INSERT` of a new row with this id.
    Insert(i64),
    /// `DELETE` of this row.
    Delete(i64),
    /// `UPDATE` of this row's `a`.
    Update(i64),
}

/// The writer's progress, carried over rounds.
#[derive(Clone, Debug, Default)]
pub struct WriterState {
    /// Rows acknowledged present: inserted, and not deleted since.
    pub present: BTreeSet<i64>,
    /// The last id used (0: none yet).
    pub last_id: i64,
    /// The statement sent but not answered when the server died.
    pub in_flight: Option<WriterOp>,
    /// Statements acknowledged over the run.
    pub acknowledged: u64,
    /// Statements given up after a deadlock, a lock wait timeout or a changed definition.
    pub given_up: u64,
}

/// Writes until the server is killed; returns the state, and the error of a statement that
/// failed before the kill.
pub fn run(
    mut conn: Conn,
    mut state: WriterState,
    shared: Arc<Shared>,
    seed: u64,
) -> (WriterState, Option<String>) {
    let mut rng = StdRng::seed_from_u64(seed);
    state.in_flight = None;
    while !shared.killing.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(rng.random_range(0..5)));
        let existing = (!state.present.is_empty()).then(|| {
            let n = rng.random_range(0..state.present.len());
            state.present.iter().nth(n).copied().unwrap_or_default()
        });
        let op = match existing {
            Some(id) if state.present.len() > KEEP_ROWS || rng.random_bool(0.3) => {
                WriterOp::Delete(id)
            }
            Some(id) if rng.random_bool(0.4) => WriterOp::Update(id),
            _ => WriterOp::Insert(state.last_id.max(WRITER_IDS) + 1),
        };
        let sql = match op {
            WriterOp::Insert(id) => {
                format!(
                    "INSERT INTO ddl_t (id, a, b) VALUES ({id}, {}, 'w{id}')",
                    id % 997
                )
            }
            WriterOp::Delete(id) => format!("DELETE FROM ddl_t WHERE id = {id}"),
            WriterOp::Update(id) => format!("UPDATE ddl_t SET a = a + 1 WHERE id = {id}"),
        };
        if let WriterOp::Insert(id) = op {
            state.last_id = id;
        }
        state.in_flight = Some(op);
        match conn.query_drop(&sql) {
            Ok(()) => {
                state.in_flight = None;
                state.acknowledged += 1;
                match op {
                    WriterOp::Insert(id) => {
                        state.present.insert(id);
                    }
                    WriterOp::Delete(id) => {
                        state.present.remove(&id);
                    }
                    WriterOp::Update(_) => {}
                }
            }
            Err(_) if shared.killing.load(Ordering::SeqCst) => break,
            Err(mysql::Error::MySqlError(e)) if GIVE_UP.contains(&e.code) => {
                state.in_flight = None;
                state.given_up += 1;
            }
            Err(e) => {
                let failure = format!("DDL table writer, `{sql}`: {e:#}");
                return (state, Some(failure));
            }
        }
    }
    (state, None)
}

/// Checks the writer's rows after a restart and settles the statement in flight. `indexes`
/// are the secondary indexes the table has now, each with a condition that reads all of it.
/// Returns the rows compared.
pub fn verify_writer(
    conn: &mut Conn,
    state: &mut WriterState,
    indexes: &[(&str, &str)],
) -> Result<u64> {
    let ids: Vec<i64> = conn
        .query(format!(
            "SELECT id FROM ddl_t FORCE INDEX (PRIMARY) WHERE id > {WRITER_IDS} ORDER BY id"
        ))
        .context("reading the writer's rows")?;
    let got: BTreeSet<i64> = ids.into_iter().collect();
    let (may_appear, may_vanish) = match state.in_flight {
        Some(WriterOp::Insert(id)) => (Some(id), None),
        Some(WriterOp::Delete(id)) => (None, Some(id)),
        Some(WriterOp::Update(_)) | None => (None, None),
    };
    let missing: Vec<i64> = state
        .present
        .iter()
        .filter(|id| !got.contains(id) && Some(**id) != may_vanish)
        .copied()
        .collect();
    let extra: Vec<i64> = got
        .iter()
        .filter(|id| !state.present.contains(id) && Some(**id) != may_appear)
        .copied()
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        bail!(
            "ddl_t's writer rows: {} acknowledged present are missing (first {:?}), {} never \
             acknowledged are there (first {:?}); in flight at the kill: {:?}",
            missing.len(),
            missing.first(),
            extra.len(),
            extra.first(),
            state.in_flight
        );
    }
    state.present = got;
    state.in_flight = None;

    let sums = |conn: &mut Conn, index: &str, cond: &str| -> Result<(i64, i64, i64)> {
        let sql = format!(
            "SELECT COUNT(*), CAST(IFNULL(SUM(id), 0) AS SIGNED), \
             CAST(IFNULL(SUM(a), 0) AS SIGNED) FROM ddl_t FORCE INDEX ({index}) \
             WHERE {cond} AND id > {WRITER_IDS}"
        );
        Ok(conn
            .query_first(&sql)
            .with_context(|| format!("`{sql}`"))?
            .unwrap_or_default())
    };
    let primary = sums(conn, "PRIMARY", "id > 0")?;
    if primary.0 != state.present.len() as i64 {
        bail!(
            "ddl_t's writer rows: {} through the primary key, {} read by id",
            primary.0,
            state.present.len()
        );
    }
    for (index, cond) in indexes {
        let through = sums(conn, index, cond)?;
        if through != primary {
            bail!(
                "ddl_t's writer rows through index {index} (count, sum of id, sum of a): \
                 {through:?}, through the primary key {primary:?}"
            );
        }
    }
    Ok(state.present.len() as u64)
}
