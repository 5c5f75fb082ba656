//! The replica against the primary, once it has applied everything: for every table,
//! `CHECKSUM TABLE` and the row count are equal on both, and `CHECK TABLE` passes on both.

use anyhow::{Context as _, Result, bail};
use mysql::Conn;
use mysql::prelude::Queryable;

use crate::load::{DB, tables};

/// What one comparison looked at.
#[derive(Clone, Copy, Debug, Default)]
pub struct Compared {
    /// Tables compared.
    pub tables: u64,
    /// Rows on each side (summed over the tables).
    pub rows: u64,
}

/// One table's figures on one server.
#[derive(Debug, PartialEq, Eq)]
struct Figures {
    checksum: Option<u64>,
    rows: u64,
}

fn figures(c: &mut Conn, table: &str, server: &str) -> Result<Figures> {
    let sum: Option<(String, Option<u64>)> = c
        .query_first(format!("CHECKSUM TABLE {DB}.{table}"))
        .with_context(|| format!("CHECKSUM TABLE {table} on the {server}"))?;
    let rows: Option<u64> = c
        .query_first(format!("SELECT COUNT(*) FROM {DB}.{table}"))
        .with_context(|| format!("counting the rows of {table} on the {server}"))?;
    Ok(Figures {
        checksum: sum.and_then(|(_, s)| s),
        rows: rows.unwrap_or(0),
    })
}

fn check_table(c: &mut Conn, table: &str, server: &str) -> Result<()> {
    let rows: Vec<(String, String, String, String)> = c
        .query(format!("CHECK TABLE {DB}.{table}"))
        .with_context(|| format!("CHECK TABLE {table} on the {server}"))?;
    for (t, _, kind, text) in rows {
        if kind == "status" && text != "OK" || kind == "error" {
            bail!("CHECK TABLE {t} on the {server}: {kind}: {text}");
        }
    }
    Ok(())
}

/// Compares every table of the test on the two servers (neither may be written meanwhile).
/// Fails naming the table and both values at the first difference.
pub fn compare(primary: &mut Conn, replica: &mut Conn) -> Result<Compared> {
    let mut done = Compared::default();
    let mut differences = Vec::new();
    for table in tables() {
        let p = figures(primary, &table, "primary")?;
        let r = figures(replica, &table, "replica")?;
        if p.checksum.is_none() || r.checksum.is_none() {
            bail!(
                "CHECKSUM TABLE {table} gave NULL (primary {:?}, replica {:?}): the table is \
                 missing",
                p.checksum,
                r.checksum
            );
        }
        if p.rows != r.rows {
            differences.push(format!(
                "{table}: {} rows on the primary, {} on the replica",
                p.rows, r.rows
            ));
        }
        if p.checksum != r.checksum {
            differences.push(format!(
                "{table}: CHECKSUM TABLE {} on the primary, {} on the replica",
                p.checksum.unwrap_or_default(),
                r.checksum.unwrap_or_default()
            ));
        }
        check_table(replica, &table, "replica")?;
        check_table(primary, &table, "primary")?;
        done.tables += 1;
        done.rows += p.rows;
    }
    if !differences.is_empty() {
        bail!(
            "the replica differs from the primary:\n  {}",
            differences.join("\n  ")
        );
    }
    Ok(done)
}
