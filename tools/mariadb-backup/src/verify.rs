//! A checkpoint restored in a second server and checked against the writers' ledger: CHECK
//! TABLE passes; money is neither made nor lost (no transfer by half); each connection's
//! ledger is exactly its first k transfers, with k at least what was acknowledged before the
//! checkpoint began and at most what was sent before it ended; replaying the ledger gives
//! every account's balance; every secondary index holds exactly its table's rows; the XA
//! transaction prepared before the checkpoint is listed by `XA RECOVER`, invisible, and
//! commits by its xid.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use mysql::prelude::Queryable;
use riptide_mariadb_server::Server;

use crate::load::{ACCOUNTS, DB, OPENING_BALANCE, XA_ID};

/// What each connection's ledger in a checkpoint may hold: from `lo` to `hi` transfers.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Acknowledged before the checkpoint began: must be in it.
    pub lo: u64,
    /// Sent before it ended: nothing later can be in it.
    pub hi: u64,
}

/// One checkpoint to verify.
pub struct Checkpoint {
    /// Its directory.
    pub dir: PathBuf,
    /// Per connection.
    pub bounds: Vec<Bounds>,
}

/// What a verified checkpoint held.
pub struct Verified {
    /// Transfers in it (all connections).
    pub transfers: u64,
    /// How many of them were not yet acknowledged when it began.
    pub in_flight: u64,
    /// How long the restored server took to start (recovery of the checkpoint's WAL).
    pub start: std::time::Duration,
}

/// Copies the data directory `from` to `to`, leaving out `skip` (the engine's own folder).
fn copy_datadir(from: &Path, to: &Path, skip: &str) -> Result<()> {
    fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for e in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let e = e?;
        let name = e.file_name();
        if name == skip {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        if e.file_type()?.is_dir() {
            copy_datadir(&src, &dst, skip)?;
        } else {
            fs::copy(&src, &dst)
                .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

/// Starts a server on a copy of `datadir` (the stopped primary's: its table definitions,
/// the `mysql` schema) with the checkpoint as its Riptide directory, checks it, stops it and
/// removes the copy.
pub fn verify(
    cp: &Checkpoint,
    datadir: &Path,
    restore_dir: &Path,
    plugin_dir: &Path,
    maturity: &str,
    args: &[String],
) -> Result<Verified> {
    let _ = fs::remove_dir_all(restore_dir);
    let mut server = Server::new(restore_dir, plugin_dir, maturity)?;
    copy_datadir(datadir, &server.datadir(), "#riptide")?;
    let mut a = args.to_vec();
    a.push(format!("--riptide-data-dir={}", cp.dir.display()));
    let start = server
        .start(&a)
        .with_context(|| format!("starting a server on {}", cp.dir.display()))?;
    let outcome = check(&server, cp);
    server.shutdown()?;
    let verified = outcome.with_context(|| format!("checkpoint {}", cp.dir.display()))?;
    let _ = fs::remove_dir_all(restore_dir);
    Ok(Verified { start, ..verified })
}

fn check(server: &Server, cp: &Checkpoint) -> Result<Verified> {
    let mut c = server.connect(Some(DB))?;
    for table in ["accounts", "ledger"] {
        let rows: Vec<(String, String, String, String)> =
            c.query(format!("CHECK TABLE {table}"))?;
        for (t, _, kind, text) in rows {
            if kind == "status" && text != "OK" || kind == "error" {
                bail!("CHECK TABLE {t}: {kind}: {text}");
            }
        }
    }
    let (n, total): (i64, i64) = c
        .query_first("SELECT COUNT(*), CAST(SUM(balance) AS SIGNED) FROM accounts")?
        .context("no row")?;
    if n != ACCOUNTS || total != ACCOUNTS * OPENING_BALANCE {
        bail!(
            "{n} accounts holding {total} (expected {ACCOUNTS} holding {}): a transfer by half",
            ACCOUNTS * OPENING_BALANCE
        );
    }
    let mut transfers = 0u64;
    let mut in_flight = 0u64;
    for (conn, b) in cp.bounds.iter().enumerate() {
        let (count, first, last): (u64, u64, u64) = c
            .exec_first(
                "SELECT COUNT(*), COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM ledger \
                 WHERE conn = ?",
                (conn,),
            )?
            .context("no row")?;
        if count != last || (count > 0 && first != 1) {
            bail!(
                "connection {conn}: {count} transfers numbered {first}..{last}: not a prefix of \
                 its transfers"
            );
        }
        if last < b.lo || last > b.hi {
            bail!(
                "connection {conn}: its first {last} transfers are in the checkpoint, but {} were \
                 acknowledged before it began and {} sent before it ended",
                b.lo,
                b.hi
            );
        }
        transfers += last;
        in_flight += last - b.lo;
    }
    let wrong: Vec<(i64, i64, i64)> = c.query(format!(
        "SELECT a.id, a.balance, {OPENING_BALANCE} - COALESCE(o.amount, 0) + \
         COALESCE(i.amount, 0) AS replayed FROM accounts a \
         LEFT JOIN (SELECT from_id, CAST(SUM(amount) AS SIGNED) AS amount FROM ledger \
                    GROUP BY from_id) o ON o.from_id = a.id \
         LEFT JOIN (SELECT to_id, CAST(SUM(amount) AS SIGNED) AS amount FROM ledger \
                    GROUP BY to_id) i ON i.to_id = a.id \
         HAVING a.balance <> replayed LIMIT 5"
    ))?;
    if !wrong.is_empty() {
        bail!("balances that the ledger does not explain (id, balance, replayed): {wrong:?}");
    }
    for (table, index, cols, range) in [
        (
            "accounts",
            "by_balance",
            "id, ',', balance",
            "balance > -1000000000000",
        ),
        (
            "ledger",
            "by_from",
            "conn, ',', seq, ',', from_id",
            "from_id >= 0",
        ),
    ] {
        let digest = |c: &mut mysql::Conn, idx: &str| -> Result<(i64, i64)> {
            c.query_first(format!(
                "SELECT COUNT(*), CAST(BIT_XOR(CRC32(CONCAT({cols}))) AS SIGNED) FROM {table} \
                 FORCE INDEX ({idx}) WHERE {range}"
            ))?
            .context("no row")
        };
        let by_index = digest(&mut c, index)?;
        let by_pk = digest(&mut c, "PRIMARY")?;
        if by_index != by_pk {
            bail!(
                "{table}: index {index} holds {by_index:?} (rows, digest), the primary key \
                 {by_pk:?}"
            );
        }
    }
    check_prepared_xa(&mut c)?;
    Ok(Verified {
        transfers,
        in_flight,
        start: std::time::Duration::ZERO,
    })
}

/// The XA transaction the primary left prepared (`load::prepare_xa`): listed by `XA
/// RECOVER`, its row not visible, then visible once `XA COMMIT` finishes it here.
fn check_prepared_xa(c: &mut mysql::Conn) -> Result<()> {
    let listed: Vec<(i64, i64, i64, String)> = c.query("XA RECOVER")?;
    if !listed
        .iter()
        .any(|(format, _, _, data)| *format == 1 && data == XA_ID)
    {
        bail!("XA RECOVER does not list the prepared transaction '{XA_ID}': {listed:?}");
    }
    let visible: i64 = c
        .query_first("SELECT COUNT(*) FROM xa_marker")?
        .context("no row")?;
    if visible != 0 {
        bail!("the row of the prepared transaction '{XA_ID}' is visible before XA COMMIT");
    }
    c.query_drop(format!("XA COMMIT '{XA_ID}'"))
        .with_context(|| format!("XA COMMIT '{XA_ID}' in the restored server"))?;
    let visible: i64 = c
        .query_first("SELECT COUNT(*) FROM xa_marker")?
        .context("no row")?;
    if visible != 1 {
        bail!("after XA COMMIT '{XA_ID}' the table holds {visible} rows, expected its 1");
    }
    Ok(())
}
