//! The initial database of TPC-C clause 4.3.3.1, loaded in parallel over warehouses.
//!
//! One job loads the 100,000 items, one job per warehouse loads its row, its 100,000
//! stock rows, its 10 districts, and per district 3,000 customers with one history row
//! each, 3,000 orders (customers in a random permutation, carrier and delivery date set
//! for orders below 2,101) with 5 to 15 lines each, and 900 new orders (2,101 to 3,000).
//! A few loader threads take jobs in turn, each on its own connection. Rows go in as
//! multi-row `INSERT`s of [`ROWS_PER_INSERT`] rows, committed every [`ROWS_PER_COMMIT`]
//! rows: moderate transactions, as tpcc-mysql and HammerDB load. A bulk load (Riptide's
//! `riptide_bulk_load=1`) commits once per job instead: each job's rows fill key ranges of
//! their own in every index (all of them begin with the warehouse), so the engine ingests
//! them as sorted files, and one commit per job keeps those files few and large.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use anyhow::{Context as _, Result, anyhow};
use indicatif::ProgressBar;
use mysql::Conn;
use mysql::prelude::Queryable as _;

use crate::db::Target;
use crate::random::{A_C_LAST, Constants, Rand, cents_text, last_name};
use crate::schema::{CUSTOMERS, DISTRICTS, FIRST_UNDELIVERED, ITEMS, ORDERS, TABLES};

/// Rows per `INSERT` statement.
pub const ROWS_PER_INSERT: usize = 500;
/// Rows per transaction (about).
pub const ROWS_PER_COMMIT: usize = 5_000;

/// The tables' positions in [`TABLES`].
#[derive(Clone, Copy)]
enum T {
    Warehouse = 0,
    District = 1,
    Customer = 2,
    History = 3,
    NewOrders = 4,
    Orders = 5,
    OrderLine = 6,
    Item = 7,
    Stock = 8,
}

/// Buffers rows per table into multi-row INSERTs and commits every [`ROWS_PER_COMMIT`] (in
/// bulk: at the end of each job).
struct Writer<'a> {
    conn: Conn,
    pb: &'a ProgressBar,
    values: [String; 9],
    rows: [usize; 9],
    since_commit: usize,
    /// Rows per transaction: [`ROWS_PER_COMMIT`], or unbounded (one per job) in bulk.
    commit_every: usize,
}

impl<'a> Writer<'a> {
    fn new(target: &Target, pb: &'a ProgressBar, bulk: bool) -> Result<Writer<'a>> {
        let mut conn = target.connect()?;
        conn.query_drop("SET autocommit=0")?;
        if bulk {
            conn.query_drop("SET SESSION riptide_bulk_load=1")
                .context("turning on riptide_bulk_load for the load")?;
        }
        Ok(Writer {
            conn,
            pb,
            values: Default::default(),
            rows: [0; 9],
            since_commit: 0,
            commit_every: if bulk { usize::MAX } else { ROWS_PER_COMMIT },
        })
    }

    /// Adds one row (`values` without the parentheses) to table `t`.
    fn row(&mut self, t: T, values: &str) -> Result<()> {
        let i = t as usize;
        if let (Some(buf), Some(n)) = (self.values.get_mut(i), self.rows.get_mut(i)) {
            if !buf.is_empty() {
                buf.push(',');
            }
            buf.push('(');
            buf.push_str(values);
            buf.push(')');
            *n += 1;
            if *n >= ROWS_PER_INSERT {
                self.flush(i)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self, i: usize) -> Result<()> {
        let (Some(buf), Some(n), Some(table)) =
            (self.values.get_mut(i), self.rows.get_mut(i), TABLES.get(i))
        else {
            return Ok(());
        };
        if *n == 0 {
            return Ok(());
        }
        let rows = *n;
        let sql = format!("INSERT INTO {table} VALUES {buf}");
        buf.clear();
        *n = 0;
        self.conn
            .query_drop(&sql)
            .with_context(|| format!("inserting {rows} rows into {table}"))?;
        self.pb.inc(rows as u64);
        self.since_commit += rows;
        if self.since_commit >= self.commit_every {
            self.commit()?;
        }
        Ok(())
    }

    /// Sends every buffered row and commits.
    fn finish(&mut self) -> Result<()> {
        for i in 0..TABLES.len() {
            self.flush(i)?;
        }
        self.commit()
    }

    fn commit(&mut self) -> Result<()> {
        self.conn
            .query_drop("COMMIT")
            .context("COMMIT of the load")?;
        self.since_commit = 0;
        Ok(())
    }
}

/// Street 1, street 2, city, state, zip as SQL values.
fn address(r: &mut Rand) -> String {
    format!(
        "'{}','{}','{}','{}','{}'",
        r.astring(10, 20),
        r.astring(10, 20),
        r.astring(10, 20),
        r.astring(2, 2),
        r.zip()
    )
}

fn load_items(w: &mut Writer<'_>, r: &mut Rand) -> Result<()> {
    let mut row = String::new();
    for i in 1..=ITEMS {
        row.clear();
        let _ = write!(
            row,
            "{i},{},'{}',{},'{}'",
            r.uniform(1, 10_000),
            r.astring(14, 24),
            r.cents(100, 10_000),
            r.data_with_original()
        );
        w.row(T::Item, &row)?;
    }
    w.finish()
}

fn load_warehouse(w: &mut Writer<'_>, r: &mut Rand, w_id: u64, c: &Constants) -> Result<()> {
    let mut row = format!(
        "{w_id},'{}',{},{},300000.00",
        r.astring(6, 10),
        address(r),
        r.fraction4(0, 2000)
    );
    w.row(T::Warehouse, &row)?;
    for i in 1..=ITEMS {
        row.clear();
        let _ = write!(row, "{i},{w_id},{}", r.uniform(10, 100));
        for _ in 0..10 {
            let _ = write!(row, ",'{}'", r.astring(24, 24));
        }
        let _ = write!(row, ",0,0,0,'{}'", r.data_with_original());
        w.row(T::Stock, &row)?;
    }
    for d_id in 1..=DISTRICTS {
        row.clear();
        let _ = write!(
            row,
            "{d_id},{w_id},'{}',{},{},30000.00,{}",
            r.astring(6, 10),
            address(r),
            r.fraction4(0, 2000),
            ORDERS + 1
        );
        w.row(T::District, &row)?;
        load_district(w, r, w_id, d_id, c)?;
    }
    w.finish()
}

fn load_district(
    w: &mut Writer<'_>,
    r: &mut Rand,
    w_id: u64,
    d_id: u64,
    c: &Constants,
) -> Result<()> {
    let mut row = String::new();
    for c_id in 1..=CUSTOMERS {
        let last = if c_id <= 1000 {
            last_name(c_id - 1)
        } else {
            last_name(r.nurand(A_C_LAST, 0, 999, c.c_last))
        };
        row.clear();
        let _ = write!(
            row,
            "{c_id},{d_id},{w_id},'{}','OE','{last}',{},'{}',NOW(),'{}',50000.00,{},-10.00,\
             10.00,1,0,'{}'",
            r.astring(8, 16),
            address(r),
            r.nstring(16, 16),
            if r.percent(10) { "BC" } else { "GC" },
            r.fraction4(0, 5000),
            r.astring(300, 500)
        );
        w.row(T::Customer, &row)?;
        row.clear();
        let _ = write!(
            row,
            "{c_id},{d_id},{w_id},{d_id},{w_id},NOW(),10.00,'{}'",
            r.astring(12, 24)
        );
        w.row(T::History, &row)?;
    }
    let customers = r.permutation(CUSTOMERS);
    for (o_id, c_id) in (1..=ORDERS).zip(customers) {
        let delivered = o_id < FIRST_UNDELIVERED;
        let lines = r.uniform(5, 15);
        row.clear();
        let carrier = if delivered {
            r.uniform(1, 10).to_string()
        } else {
            "NULL".to_string()
        };
        let _ = write!(row, "{o_id},{d_id},{w_id},{c_id},NOW(),{carrier},{lines},1");
        w.row(T::Orders, &row)?;
        for number in 1..=lines {
            row.clear();
            let (date, amount) = if delivered {
                ("NOW()", "0.00".to_string())
            } else {
                ("NULL", cents_text(r.uniform(1, 999_999) as i64))
            };
            let _ = write!(
                row,
                "{o_id},{d_id},{w_id},{number},{},{w_id},{date},5,{amount},'{}'",
                r.uniform(1, ITEMS),
                r.astring(24, 24)
            );
            w.row(T::OrderLine, &row)?;
        }
        if !delivered {
            row.clear();
            let _ = write!(row, "{o_id},{d_id},{w_id}");
            w.row(T::NewOrders, &row)?;
        }
    }
    Ok(())
}

/// Loads items and `warehouses` warehouses on `threads` connections (each job's data from
/// its own seed derived from `seed`), counting rows on `pb`; in `bulk` (Riptide only), with
/// `riptide_bulk_load=1` and one transaction per job. C_LAST of the load is
/// `constants.c_last`.
pub fn load(
    target: &Target,
    bulk: bool,
    warehouses: u64,
    threads: usize,
    seed: u64,
    constants: &Constants,
    pb: &ProgressBar,
) -> Result<()> {
    let next_job = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let jobs = warehouses + 1;
    let threads = threads.clamp(1, jobs as usize);
    thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    let mut w = Writer::new(target, pb, bulk)?;
                    loop {
                        let job = next_job.fetch_add(1, Ordering::Relaxed);
                        if job >= jobs || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let mut r = Rand::new(seed ^ (job.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
                        let done = if job == 0 {
                            load_items(&mut w, &mut r).context("loading the items")
                        } else {
                            load_warehouse(&mut w, &mut r, job, constants)
                                .with_context(|| format!("loading warehouse {job}"))
                        };
                        if done.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        done?;
                    }
                })
            })
            .collect();
        let mut first_error = None;
        for worker in workers {
            let outcome = worker
                .join()
                .unwrap_or_else(|_| Err(anyhow!("a loader thread panicked")));
            if let Err(e) = outcome {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    })
}
