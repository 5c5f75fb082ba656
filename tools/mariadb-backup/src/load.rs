//! The write load: money moved between accounts by several connections, each transfer one
//! transaction that updates two rows of `accounts` (whose balance has a secondary index)
//! and appends a row to `ledger` numbered per connection. A checkpoint is right only if it
//! holds, for every connection, exactly its first k transfers, all of each: the ledger says
//! which (see `verify`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide_mariadb_server::Server;

/// The database of the test's tables.
pub const DB: &str = "backup";

/// Accounts, each starting with [`OPENING_BALANCE`].
pub const ACCOUNTS: i64 = 2_000;

/// What every account holds at the start.
pub const OPENING_BALANCE: i64 = 1_000;

/// Creates the tables and the opening balances.
pub fn create(server: &Server) -> Result<()> {
    let mut c = server.connect(None)?;
    c.query_drop(format!("CREATE DATABASE {DB}"))?;
    c.query_drop(format!(
        "CREATE TABLE {DB}.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL, \
         KEY by_balance (balance)) ENGINE=RIPTIDE"
    ))?;
    c.query_drop(format!(
        "CREATE TABLE {DB}.ledger (conn INT NOT NULL, seq BIGINT NOT NULL, from_id INT NOT NULL, \
         to_id INT NOT NULL, amount INT NOT NULL, PRIMARY KEY (conn, seq), KEY by_from (from_id)) \
         ENGINE=RIPTIDE"
    ))?;
    c.query_drop(format!(
        "CREATE TABLE {DB}.xa_marker (id INT PRIMARY KEY, note VARCHAR(32) NOT NULL) \
         ENGINE=RIPTIDE"
    ))?;
    let rows: Vec<String> = (0..ACCOUNTS)
        .map(|i| format!("({i}, {OPENING_BALANCE})"))
        .collect();
    c.query_drop(format!(
        "INSERT INTO {DB}.accounts VALUES {}",
        rows.join(",")
    ))?;
    Ok(())
}

/// What one writer has done, as the checkpoints read it.
#[derive(Default)]
pub struct Progress {
    /// The highest transfer whose COMMIT returned success.
    pub acknowledged: AtomicU64,
    /// The highest transfer whose COMMIT was sent (acknowledged or not yet).
    pub committing: AtomicU64,
    /// Deadlocks and lock wait timeouts retried.
    pub retries: AtomicU64,
}

/// Runs transfers on connection `conn` until `stop`; returns when stopped or failed.
pub fn writer(
    server: &Server,
    conn: u64,
    seed: u64,
    progress: Arc<Progress>,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let mut c = server.connect(Some(DB))?;
    c.query_drop("SET SESSION riptide_lock_wait_timeout = 5")?;
    let mut rng = StdRng::seed_from_u64(seed ^ conn.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut seq = 0u64;
    while !stop.load(Ordering::Relaxed) {
        seq += 1;
        let from = rng.random_range(0..ACCOUNTS);
        let to = (from + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
        let amount: i64 = rng.random_range(1..=50);
        loop {
            match transfer(&mut c, conn, seq, from, to, amount, &progress) {
                Ok(()) => break,
                Err(e) if retryable(&e) => {
                    let _ = c.query_drop("ROLLBACK");
                    progress.retries.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("writer {conn}, transfer {seq}"));
                }
            }
        }
        progress.acknowledged.store(seq, Ordering::SeqCst);
    }
    Ok(())
}

/// One transfer, committed.
fn transfer(
    c: &mut mysql::Conn,
    conn: u64,
    seq: u64,
    from: i64,
    to: i64,
    amount: i64,
    progress: &Progress,
) -> Result<(), mysql::Error> {
    c.query_drop("BEGIN")?;
    c.exec_drop(
        "UPDATE accounts SET balance = balance - ? WHERE id = ?",
        (amount, from),
    )?;
    c.exec_drop(
        "UPDATE accounts SET balance = balance + ? WHERE id = ?",
        (amount, to),
    )?;
    c.exec_drop(
        "INSERT INTO ledger VALUES (?, ?, ?, ?, ?)",
        (conn, seq, from, to, amount),
    )?;
    progress.committing.store(seq, Ordering::SeqCst);
    c.query_drop("COMMIT")
}

/// Deadlock (1213) or lock wait timeout (1205): rolled back, tried again.
fn retryable(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(m) if m.code == 1213 || m.code == 1205)
}

/// Fails when the writers retried (deadlocks, lock wait timeouts) more often than they
/// completed transfers: a retry storm means the load measures nothing.
pub fn check_retries(progress: &[Arc<Progress>]) -> Result<()> {
    let done: u64 = progress
        .iter()
        .map(|p| p.acknowledged.load(Ordering::SeqCst))
        .sum();
    let retries: u64 = progress
        .iter()
        .map(|p| p.retries.load(Ordering::SeqCst))
        .sum();
    if done > 0 && retries > done {
        bail!("{retries} retries for {done} transfers: the load is mostly lock waits");
    }
    Ok(())
}

/// The XA transaction every checkpoint holds prepared: [`prepare_xa`] leaves it so on the
/// primary before the first checkpoint; a restored server must list it in `XA RECOVER`,
/// keep its row invisible, and commit it by its xid.
pub const XA_ID: &str = "riptide-backup-xa";

/// Prepares [`XA_ID`] on the primary (one row in `xa_marker`) and leaves it prepared; the
/// returned connection holds it until dropped (the transaction stays prepared after that
/// too, as MariaDB keeps an XA PREPAREd transaction of a closed connection).
pub fn prepare_xa(server: &Server) -> Result<mysql::Conn> {
    let mut c = server.connect(Some(DB))?;
    c.query_drop(format!("XA START '{XA_ID}'"))?;
    c.query_drop("INSERT INTO xa_marker VALUES (1, 'prepared before the checkpoints')")?;
    c.query_drop(format!("XA END '{XA_ID}'"))?;
    c.query_drop(format!("XA PREPARE '{XA_ID}'"))?;
    Ok(c)
}
