//! The phases, each run by one worker per client (own table, own connection) while a
//! sampler counts the rows (or queries) done in every second.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use indicatif::ProgressBar;
use mysql::prelude::Queryable as _;
use mysql::{Conn, OptsBuilder};

use crate::rows::{RowMaker, add_indexes, table};

/// Server error numbers a writer retries (and counts): deadlock, lock wait timeout. One
/// table per client makes them unexpected; they are counted, not hidden.
const RETRIED: [u16; 2] = [1213, 1205];

/// Rows the background writer of the query phases inserts (and deletes) per tick, and
/// ticks per second: 100 rows/s per table.
const WRITER_ROWS_PER_TICK: u64 = 10;
const WRITER_TICKS_PER_SECOND: u64 = 10;

/// Point queries pick keys at least this far above the oldest row, so the background
/// writer's deletes (100 a second) cannot remove the row between the pick and the query.
const POINT_MARGIN: u64 = 1_000;

/// Where to connect.
#[derive(Clone, Debug)]
pub struct Target {
    /// The server's UNIX socket.
    pub socket: std::path::PathBuf,
    /// The benchmark's database.
    pub database: String,
}

impl Target {
    /// A new connection, REPEATABLE READ, autocommit on.
    pub fn connect(&self) -> Result<Conn> {
        let opts = OptsBuilder::new()
            .socket(Some(self.socket.to_string_lossy().into_owned()))
            .user(Some("root"))
            .db_name(Some(self.database.clone()))
            .prefer_socket(true)
            .read_timeout(Some(Duration::from_secs(7200)))
            .write_timeout(Some(Duration::from_secs(7200)));
        let mut conn = Conn::new(opts)
            .with_context(|| format!("connecting to the server on {}", self.socket.display()))?;
        conn.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            .context("setting REPEATABLE READ")?;
        Ok(conn)
    }
}

/// The rows of each client's table: ids `lo..hi` exist (`lo` is the oldest row, `hi` the
/// next id to insert). Only the table's writer moves them; readers load them.
pub struct Tables {
    bounds: Vec<(AtomicU64, AtomicU64)>,
}

impl Tables {
    /// `clients` empty tables (ids start at 1).
    pub fn new(clients: usize) -> Tables {
        Tables {
            bounds: (0..clients)
                .map(|_| (AtomicU64::new(1), AtomicU64::new(1)))
                .collect(),
        }
    }

    fn bounds(&self, c: usize) -> Result<&(AtomicU64, AtomicU64)> {
        self.bounds
            .get(c)
            .ok_or_else(|| anyhow!("no table for client {c}"))
    }

    /// The ids of client `c`'s table, `lo..hi`.
    pub fn range(&self, c: usize) -> Result<std::ops::Range<u64>> {
        let (lo, hi) = self.bounds(c)?;
        Ok(lo.load(Ordering::Acquire)..hi.load(Ordering::Acquire))
    }

    /// Rows in all tables.
    pub fn rows(&self) -> u64 {
        self.bounds
            .iter()
            .map(|(lo, hi)| hi.load(Ordering::Acquire) - lo.load(Ordering::Acquire))
            .sum()
    }
}

/// What one phase did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Rows inserted (write phases, l.x: rows indexed) or queries answered.
    pub ops: u64,
    /// Wall time of the phase.
    pub seconds: f64,
    /// Rows or queries done in each whole second of the phase.
    pub per_second: Vec<f64>,
    /// Transactions retried after a deadlock or lock wait timeout.
    pub retries: u64,
    /// Rows the background writers inserted (query phases).
    pub background_rows: u64,
}

/// Counts done operations; a sampler turns them into a per-second series.
struct Progress {
    done: AtomicU64,
    retries: AtomicU64,
    stop: AtomicBool,
}

/// Runs `work(client)` on `clients` threads (and `background(client)` on as many more, which
/// must return once `stop` is set) with a sampler; returns the outcome once every worker
/// returned. The first error of any thread is the phase's error.
fn run<W, B>(
    label: &str,
    clients: usize,
    pb: &ProgressBar,
    work: W,
    background: Option<B>,
) -> Result<Outcome>
where
    W: Fn(usize, &Progress) -> Result<()> + Sync,
    B: Fn(usize, &Progress) -> Result<u64> + Sync,
{
    let progress = Progress {
        done: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    };
    let workers_done = AtomicBool::new(false);
    let started = Instant::now();
    let (per_second, results, background_rows) = std::thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut series = Vec::new();
            let mut last = 0;
            let mut next = started + Duration::from_secs(1);
            while !workers_done.load(Ordering::Acquire) {
                let now = Instant::now();
                if now >= next {
                    let done = progress.done.load(Ordering::Relaxed);
                    series.push((done - last) as f64);
                    pb.set_message(format!("{label}: {} done, {}/s", done, done - last));
                    last = done;
                    next += Duration::from_secs(1);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            series
        });
        let bg: Vec<_> = match &background {
            Some(b) => (0..clients)
                .map(|c| {
                    let p = &progress;
                    s.spawn(move || b(c, p))
                })
                .collect(),
            None => Vec::new(),
        };
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let (w, p) = (&work, &progress);
                s.spawn(move || w(c, p))
            })
            .collect();
        let mut results: Vec<Result<()>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a worker panicked")))
            })
            .collect();
        progress.stop.store(true, Ordering::Release);
        let mut background_rows = 0;
        for h in bg {
            match h.join() {
                Ok(Ok(n)) => background_rows += n,
                Ok(Err(e)) => results.push(Err(e)),
                Err(_) => results.push(Err(anyhow!("a background writer panicked"))),
            }
        }
        workers_done.store(true, Ordering::Release);
        let series = sampler.join().unwrap_or_default();
        (series, results, background_rows)
    });
    let seconds = started.elapsed().as_secs_f64();
    for r in results {
        r.with_context(|| format!("phase {label}"))?;
    }
    Ok(Outcome {
        ops: progress.done.load(Ordering::Relaxed),
        seconds,
        per_second,
        retries: progress.retries.load(Ordering::Relaxed),
        background_rows,
    })
}

/// Runs `txn` (statements of one transaction) on `conn`, retrying after a deadlock or lock
/// wait timeout (counted in `progress`).
fn transaction(conn: &mut Conn, progress: &Progress, statements: &[String]) -> Result<()> {
    loop {
        let attempt = (|| -> std::result::Result<(), mysql::Error> {
            conn.query_drop("BEGIN")?;
            for sql in statements {
                conn.query_drop(sql)?;
            }
            conn.query_drop("COMMIT")
        })();
        match attempt {
            Ok(()) => return Ok(()),
            Err(mysql::Error::MySqlError(e)) if RETRIED.contains(&e.code) => {
                let _ = conn.query_drop("ROLLBACK");
                progress.retries.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                let first = statements.first().map_or("", |s| s.get(..80).unwrap_or(s));
                return Err(e).with_context(|| format!("transaction starting `{first}`..."));
            }
        }
    }
}

/// The parameters every phase needs.
pub struct Ctx<'a> {
    pub target: &'a Target,
    pub clients: usize,
    pub seed: u64,
    pub tables: &'a Tables,
    pub pb: &'a ProgressBar,
}

/// l.i0: each client inserts `rows` rows into its table in primary-key order, `batch` rows
/// per statement, one statement per transaction.
pub fn load(ctx: &Ctx<'_>, rows: u64, batch: u64) -> Result<Outcome> {
    run(
        "l.i0",
        ctx.clients,
        ctx.pb,
        |c, p| {
            let mut conn = ctx.target.connect()?;
            let mut maker = RowMaker::new(ctx.seed, c);
            let (_, hi) = ctx.tables.bounds(c)?;
            let name = table(c);
            let mut next = hi.load(Ordering::Acquire);
            let end = next + rows;
            while next < end {
                let n = batch.min(end - next);
                transaction(&mut conn, p, &[maker.insert(&name, next, n)])?;
                next += n;
                hi.store(next, Ordering::Release);
                p.done.fetch_add(n, Ordering::Relaxed);
            }
            Ok(())
        },
        None::<fn(usize, &Progress) -> Result<u64>>,
    )
}

/// l.x: each client adds the three secondary indexes to its table (one `ALTER TABLE`), all
/// clients at once. `ops` counts the rows indexed.
pub fn create_indexes(ctx: &Ctx<'_>) -> Result<Outcome> {
    run(
        "l.x",
        ctx.clients,
        ctx.pb,
        |c, p| {
            let mut conn = ctx.target.connect()?;
            conn.query_drop(add_indexes(c))
                .with_context(|| format!("adding the secondary indexes of {}", table(c)))?;
            let r = ctx.tables.range(c)?;
            p.done.fetch_add(r.end - r.start, Ordering::Relaxed);
            Ok(())
        },
        None::<fn(usize, &Progress) -> Result<u64>>,
    )
}

/// One transaction that inserts `n` rows at the new end of client `c`'s table and deletes
/// the `n` oldest: the table keeps its size.
fn insert_and_delete(
    ctx: &Ctx<'_>,
    conn: &mut Conn,
    maker: &mut RowMaker,
    c: usize,
    n: u64,
    p: &Progress,
) -> Result<()> {
    let (lo, hi) = ctx.tables.bounds(c)?;
    let (low, high) = (lo.load(Ordering::Acquire), hi.load(Ordering::Acquire));
    let name = table(c);
    let delete = format!(
        "DELETE FROM {name} WHERE transactionid >= {low} AND transactionid < {}",
        low + n
    );
    transaction(conn, p, &[maker.insert(&name, high, n), delete])?;
    hi.store(high + n, Ordering::Release);
    lo.store(low + n, Ordering::Release);
    Ok(())
}

/// l.i1 and l.i2: for `seconds`, each client runs transactions that insert `batch` rows and
/// delete as many (the oldest). `ops` counts the rows inserted.
pub fn insert_delete(ctx: &Ctx<'_>, label: &str, batch: u64, seconds: u64) -> Result<Outcome> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    run(
        label,
        ctx.clients,
        ctx.pb,
        |c, p| {
            let mut conn = ctx.target.connect()?;
            let mut maker = RowMaker::new(ctx.seed ^ 0x11, c);
            while Instant::now() < deadline {
                insert_and_delete(ctx, &mut conn, &mut maker, c, batch, p)?;
                p.done.fetch_add(batch, Ordering::Relaxed);
            }
            Ok(())
        },
        None::<fn(usize, &Progress) -> Result<u64>>,
    )
}

/// Which queries a query phase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queries {
    /// qr: ten entries of a secondary index from a random start (covering).
    Range,
    /// qp: one row by primary key.
    Point,
}

/// qr100 and qp100: for `seconds`, each client queries its table as fast as it can while a
/// background writer per table inserts 100 rows a second (and deletes as many). `ops` counts
/// the queries. A point query that misses a row that exists fails the phase.
pub fn query(ctx: &Ctx<'_>, label: &str, kind: Queries, seconds: u64) -> Result<Outcome> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    run(
        label,
        ctx.clients,
        ctx.pb,
        |c, p| {
            let mut conn = ctx.target.connect()?;
            let mut maker = RowMaker::new(ctx.seed ^ 0x22, c);
            let name = table(c);
            while Instant::now() < deadline {
                match kind {
                    Queries::Range => {
                        let sql = maker.range_query(&name);
                        let rows: Vec<mysql::Row> =
                            conn.query(&sql).with_context(|| format!("`{sql}`"))?;
                        if rows.len() > 10 {
                            bail!("`{sql}` returned {} rows", rows.len());
                        }
                    }
                    Queries::Point => {
                        let r = ctx.tables.range(c)?;
                        let id = maker.pick((r.start + POINT_MARGIN).min(r.end)..r.end);
                        let sql = format!("SELECT data FROM {name} WHERE transactionid = {id}");
                        let found: Option<Option<String>> =
                            conn.query_first(&sql).with_context(|| format!("`{sql}`"))?;
                        if found.is_none() && ctx.tables.range(c)?.contains(&id) {
                            bail!("`{sql}` found no row, but row {id} exists (a wrong result)");
                        }
                    }
                }
                p.done.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        },
        Some(|c: usize, p: &Progress| -> Result<u64> {
            let mut conn = ctx.target.connect()?;
            let mut maker = RowMaker::new(ctx.seed ^ 0x33, c);
            let tick = Duration::from_secs(1) / WRITER_TICKS_PER_SECOND as u32;
            let mut next = Instant::now();
            let mut rows = 0;
            while !p.stop.load(Ordering::Acquire) {
                insert_and_delete(ctx, &mut conn, &mut maker, c, WRITER_ROWS_PER_TICK, p)?;
                rows += WRITER_ROWS_PER_TICK;
                next += tick;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            Ok(rows)
        }),
    )
}
