//! Bulk load (`SET SESSION riptide_bulk_load=1`, MyRocks' `rocksdb_bulk_load`): the rows a
//! transaction inserts into an empty table go to an external sort instead of the
//! transaction's write set, and at commit they become table files ingested straight into
//! the deepest level ([`riptide::Db::ingest_writer`]): no WAL, no memtable, no compaction
//! through the levels above, no lock or unique-check read per row, and memory bounded by
//! the engine's `sort_buffer_size` whatever the size of the load.
//!
//! - **Which tables.** A table takes the bulk path in a transaction when its first insert
//!   in that transaction comes with bulk load on, the transaction wrote nothing else to it
//!   before, and every one of its indexes is *vacant*: no memtable or table file holds an
//!   entry of it, not even a deleted one ([`riptide::Db::range_is_vacant`]), and the table
//!   is not one whose uniqueness the server checks by reading it ([`Table::forbid_bulk_load`]:
//!   long unique keys, `WITHOUT OVERLAPS`). Otherwise its rows take the ordinary path, as
//!   without bulk load.
//! - **Unique keys** (the primary key and unique secondary keys without NULL parts) are
//!   checked among the loaded rows when the sorted entries are merged at commit: a value
//!   held twice fails the commit with the duplicate-key error, and nothing of the load is
//!   written. Another transaction writing into the table meanwhile makes the ingest refuse
//!   the table's range: the commit fails with `Busy` and nothing of the load is written.
//! - **Visibility.** The loaded rows are not visible to anyone, the loading transaction
//!   included, until it commits; then all at once. Every later insert of the transaction
//!   into a table in the load joins the load, even with bulk load turned off meanwhile (an
//!   ordinary insert would not see the loaded rows). An UPDATE or DELETE of the table in the
//!   same transaction does not see them either.
//! - **Atomicity.** The ingest comes first at commit, then the transaction's ordinary
//!   writes. A failure of the ingest rolls back everything; a failure of the ordinary
//!   commit after it (an I/O error) would leave the loaded rows in. A statement that fails
//!   inside a multi-statement transaction after adding bulk rows cannot take them back
//!   alone: the transaction is then refused at commit (and rolled back).
//! - **Not supported** with two-phase commit (XA, or the binary log's): `prepare` refuses a
//!   transaction holding bulk rows.

use std::sync::Arc;

use riptide::sort::ExternalSorter;
use riptide::{Error, IngestWriter};

use crate::error::Result;
use crate::format::{KeyRepeat, decode_secondary_entry, entry_index_id, index_key_range};
use crate::session::duplicate;
use crate::table::{Store, Table};

/// Value byte of a secondary entry in the sort: the key has a NULL part (never a
/// duplicate) or not.
pub(crate) const KEY_HAS_NULL: u8 = 1;
/// See [`KEY_HAS_NULL`].
pub(crate) const KEY_WITHOUT_NULL: u8 = 0;

/// Rows loaded per table, for the row estimates.
pub(crate) type TableRows = Vec<(Arc<Table>, i64)>;

/// One table loaded in bulk by a transaction.
#[derive(Debug)]
struct BulkTable {
    table: Arc<Table>,
    rows: i64,
}

/// A transaction's bulk load: see the module documentation.
#[derive(Debug)]
pub(crate) struct BulkLoad {
    sorter: ExternalSorter,
    tables: Vec<BulkTable>,
    /// Tables that take the ordinary path in this transaction (by id).
    declined: Vec<u32>,
    /// Rows loaded so far (what a savepoint remembers: rows after it cannot be taken back).
    rows_total: u64,
    /// Why the commit must fail, once a statement holding bulk rows was rolled back.
    broken: Option<String>,
}

/// What a bulk load's commit ingested.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkOutcome {
    /// Rows loaded.
    pub rows: u64,
    /// Entries ingested (rows and their secondary entries).
    pub entries: u64,
    /// Bytes of table files ingested.
    pub bytes: u64,
}

impl BulkLoad {
    pub(crate) fn new(store: &Store) -> BulkLoad {
        BulkLoad {
            sorter: store.db.external_sorter(),
            tables: Vec::new(),
            declined: Vec::new(),
            rows_total: 0,
            broken: None,
        }
    }

    /// Whether rows of `table` take the bulk path: decided at the table's first insert in
    /// the transaction (`wrote_before`: the transaction already wrote to it the ordinary
    /// way).
    pub(crate) fn accepts(
        &mut self,
        store: &Store,
        table: &Arc<Table>,
        wrote_before: bool,
    ) -> Result<bool> {
        let id = table.id();
        if self.tables.iter().any(|t| t.table.id() == id) {
            return Ok(true);
        }
        if self.declined.contains(&id) {
            return Ok(false);
        }
        let mut vacant = !wrote_before && !table.bulk_load_forbidden();
        for n in 0..table.index_count() {
            if !vacant {
                break;
            }
            let (lo, hi) = index_key_range(table.index(n)?.id);
            vacant = store.db.range_is_vacant(&store.data, &lo, &hi)?;
        }
        if vacant {
            self.tables.push(BulkTable {
                table: Arc::clone(table),
                rows: 0,
            });
        } else {
            self.declined.push(id);
        }
        Ok(vacant)
    }

    /// Whether `table` is in the load.
    pub(crate) fn holds(&self, table: &Table) -> bool {
        self.tables.iter().any(|t| t.table.id() == table.id())
    }

    /// Adds one entry of a row of `table` (accepted before).
    pub(crate) fn add(&mut self, entry: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.sorter.add(entry, value)?)
    }

    /// Counts one row of `table` loaded.
    pub(crate) fn count_row(&mut self, table: &Arc<Table>) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.table.id() == table.id()) {
            t.rows += 1;
        }
        self.rows_total += 1;
    }

    /// Rows loaded so far (a savepoint records it).
    pub(crate) fn rows_total(&self) -> u64 {
        self.rows_total
    }

    /// Whether any row was loaded.
    pub(crate) fn has_rows(&self) -> bool {
        self.sorter.entries() > 0
    }

    /// The transaction rolled back to a savepoint taken when `rows_at_mark` rows were
    /// loaded: rows loaded since cannot be taken back alone, so the transaction can no
    /// longer commit.
    pub(crate) fn rolled_back_to(&mut self, rows_at_mark: u64) {
        if self.rows_total > rows_at_mark && self.broken.is_none() {
            self.broken = Some(format!(
                "a statement or savepoint that added {} rows to a bulk load \
                 (riptide_bulk_load) was rolled back, and a bulk load cannot take rows back \
                 alone: roll back the whole transaction",
                self.rows_total - rows_at_mark
            ));
        }
    }

    /// Checks the loaded rows for duplicates and ingests them; returns the rows per table
    /// (for the row estimates) and what was written. Nothing is written on an error.
    pub(crate) fn commit(self, store: &Store) -> Result<(TableRows, BulkOutcome)> {
        if let Some(why) = self.broken {
            return Err(Error::invalid_argument(format!("commit refused: {why}")).into());
        }
        let mut sorted = self.sorter.finish()?;
        let mut ingest: IngestWriter = store.db.ingest_writer(&store.data)?;
        // The index the current entries belong to: its table, its position and whether it
        // is unique; the previous key of a unique index.
        let mut current: Option<(u32, usize, usize, bool)> = None;
        let mut previous = KeyRepeat::default();
        while let Some((entry, value)) = sorted.next()? {
            let id = entry_index_id(entry).ok_or_else(|| malformed(entry))?;
            if current.is_none_or(|(c, ..)| c != id) {
                current = Some(find_index(&self.tables, id).ok_or_else(|| malformed(entry))?);
                previous.reset();
                ingest.new_range()?;
            }
            let Some((_, t, n, unique)) = current else {
                return Err(malformed(entry).into());
            };
            let table = &self.tables.get(t).ok_or_else(|| malformed(entry))?.table;
            if n == 0 {
                // A primary key entry (index id + primary key): two equal ones are two rows
                // with one primary key.
                if previous.repeats(entry) {
                    return Err(duplicate(table, 0));
                }
                ingest.add(entry, value)?;
                continue;
            }
            if unique && value.first() == Some(&KEY_WITHOUT_NULL) {
                let (key, _) = decode_secondary_entry(entry).ok_or_else(|| malformed(entry))?;
                if previous.repeats(key) {
                    return Err(duplicate(table, n));
                }
            }
            ingest.add(entry, b"")?;
        }
        let done = ingest.finish()?;
        let rows: u64 = self.tables.iter().map(|t| t.rows.max(0) as u64).sum();
        let deltas = self.tables.into_iter().map(|t| (t.table, t.rows)).collect();
        Ok((
            deltas,
            BulkOutcome {
                rows,
                entries: done.entries,
                bytes: done.bytes,
            },
        ))
    }
}

/// The table (position in `tables`), index position and uniqueness of index `id`.
fn find_index(tables: &[BulkTable], id: u32) -> Option<(u32, usize, usize, bool)> {
    tables.iter().enumerate().find_map(|(t, bt)| {
        (0..bt.table.index_count()).find_map(|n| {
            let ix = bt.table.index(n).ok()?;
            (ix.id == id).then_some((id, t, n, ix.unique))
        })
    })
}

fn malformed(entry: &[u8]) -> Error {
    Error::corruption(format!(
        "bulk load: sorted entry {entry:02x?} is malformed or of no table of the load"
    ))
}
