//! `CHECK TABLE`: the secondary indexes against the rows, as one session sees them.
//!
//! The handler treats keys as opaque bytes, so it cannot derive a row's secondary keys by
//! itself: the caller (the plugin, which knows MariaDB's record format) computes them from a
//! row's bytes through a callback, exactly as it does for an insert.

use std::fmt;

use riptide::Error;

use crate::error::Result;
use crate::format::{decode_secondary_entry, primary_key, secondary_entry};
use crate::session::Session;
use crate::table::Table;

/// What [`Session::check_table`] asks the caller for each row: given its primary key and
/// row bytes, the row's secondary keys, one per secondary index, in order (exactly what the
/// caller passes to [`Session::insert`] for that row); `None` if the row bytes cannot be
/// decoded (a problem reported against the primary key, not an error).
pub type KeysOf<'a> = dyn FnMut(&[u8], &[u8]) -> Result<Option<Vec<Vec<u8>>>> + 'a;

/// One inconsistency found by [`Session::check_table`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// Position of the index concerned (1.. are the secondary indexes).
    pub index: usize,
    /// The index's name as given at CREATE.
    pub index_name: String,
    /// What is wrong, with the primary key (hex) concerned.
    pub what: String,
}

impl fmt::Display for CheckProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "index `{}`: {}", self.index_name, self.what)
    }
}

/// What [`Session::check_table`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Rows read from the primary (or hidden) key.
    pub rows: u64,
    /// Secondary entries read, over every secondary index.
    pub entries: u64,
    /// Number of inconsistencies (may exceed `problems.len()`, which is capped).
    pub problem_count: u64,
    /// The first inconsistencies found (at most the cap given to `check_table`).
    pub problems: Vec<CheckProblem>,
}

impl CheckReport {
    /// Whether every row has its entries and every entry its row.
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn add(&mut self, table: &Table, index: usize, what: String, cap: usize) {
        self.problem_count += 1;
        if self.problems.len() < cap {
            self.problems.push(CheckProblem {
                index,
                index_name: table
                    .index(index)
                    .map(|ix| ix.name.clone())
                    .unwrap_or_default(),
                what,
            });
        }
    }
}

/// Lowercase hex of a key, shortened past 64 bytes (for messages).
fn hex(b: &[u8]) -> String {
    let mut s: String = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    if b.len() > 64 {
        s.push_str("...");
    }
    s
}

impl Session {
    /// Verifies `table` as this session sees it (its snapshot and its own writes):
    /// every row has, in every secondary index, the entry `keys_of(pk, row)` says it must
    /// have, and every secondary entry is well formed and points to an existing row whose
    /// key for that index is the entry's key. `keys_of` returns one key per secondary index,
    /// in order (what the caller passes to [`Session::insert`]); a row it cannot decode is a
    /// problem of index 0. At most `max_problems` problems are kept in the report (all are
    /// counted). An engine or callback failure is an error; inconsistencies are not.
    pub fn check_table(
        &self,
        table: &Table,
        keys_of: &mut KeysOf<'_>,
        max_problems: usize,
    ) -> Result<CheckReport> {
        let mut report = CheckReport::default();
        let n_sec = table.secondary_count();
        let data = self.store_data();
        let pid = table.primary().id;
        // Rows -> entries.
        let mut it = self.iter(table, 0)?;
        it.seek_to_first()?;
        while it.valid() {
            report.rows += 1;
            let pk = it.key().get(4..).unwrap_or_default().to_vec();
            let Some(keys) = keys_of(&pk, it.value())? else {
                report.add(
                    table,
                    0,
                    format!(
                        "the row with primary key {} cannot be decoded ({} bytes)",
                        hex(&pk),
                        it.value().len()
                    ),
                    max_problems,
                );
                it.next()?;
                continue;
            };
            if keys.len() != n_sec {
                return Err(Error::invalid_argument(format!(
                    "check of table id {}: {} secondary keys computed for a row, the table \
                     has {n_sec} secondary indexes",
                    table.id(),
                    keys.len()
                ))
                .into());
            }
            for (i, key) in keys.iter().enumerate() {
                let entry = secondary_entry(table.index(i + 1)?.id, key, &pk)?;
                if self.transaction().get(&data, &entry)?.is_none() {
                    report.add(
                        table,
                        i + 1,
                        format!(
                            "the row with primary key {} has no entry (key {})",
                            hex(&pk),
                            hex(key)
                        ),
                        max_problems,
                    );
                }
            }
            it.next()?;
        }
        drop(it);
        // Entries -> rows.
        for n in 1..=n_sec {
            let mut it = self.iter(table, n)?;
            it.seek_to_first()?;
            while it.valid() {
                report.entries += 1;
                let Some((sk, pk)) = decode_secondary_entry(it.key()) else {
                    report.add(
                        table,
                        n,
                        format!("malformed entry {}", hex(it.key())),
                        max_problems,
                    );
                    it.next()?;
                    continue;
                };
                match self.transaction().get(&data, &primary_key(pid, pk))? {
                    None => report.add(
                        table,
                        n,
                        format!(
                            "the entry with key {} points to primary key {}, which has no row",
                            hex(sk),
                            hex(pk)
                        ),
                        max_problems,
                    ),
                    Some(row) => {
                        // An undecodable row was reported by the first pass.
                        let keys = keys_of(pk, &row)?.unwrap_or_default();
                        if !keys.is_empty() && keys.get(n - 1).map(Vec::as_slice) != Some(sk) {
                            report.add(
                                table,
                                n,
                                format!(
                                    "the entry with key {} points to primary key {}, whose \
                                     row has key {}",
                                    hex(sk),
                                    hex(pk),
                                    keys.get(n - 1).map(|k| hex(k)).unwrap_or_default()
                                ),
                                max_problems,
                            );
                        }
                    }
                }
                it.next()?;
            }
        }
        Ok(report)
    }
}
