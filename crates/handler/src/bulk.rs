//! Bulk load (`SET SESSION riptide_bulk_load=1`, MyRocks' `rocksdb_bulk_load`): the rows a
//! transaction inserts into a table go to an external sort instead of the transaction's
//! write set, and at commit they become table files ingested straight into the deepest
//! level they fit ([`riptide::Db::ingest_writer`]): no WAL, no memtable, no compaction
//! through the levels above, no lock or unique-check read per row, and memory bounded by
//! the engine's `sort_buffer_size` whatever the size of the load.
//!
//! - **Which tables.** A table takes the bulk path in a transaction when its first insert
//!   in that transaction comes with bulk load on, the transaction wrote nothing else to it
//!   before, and it is not one whose uniqueness the server checks by reading it
//!   ([`Table::forbid_bulk_load`]: long unique keys, `WITHOUT OVERLAPS`). The table may
//!   hold rows already.
//! - **Big appends are ingested, the rest is written the ordinary way.** At commit, each
//!   index's loaded entries span a key range (first to last). When a table's loaded
//!   entries come to at least the engine's `ingest_min_bytes` (1 MiB by default: many
//!   small files in the last level would cost more than they save) and every such range
//!   of the table is *vacant* (no memtable or table file holds an entry in it, not even a deleted
//!   one: [`riptide::Db::range_is_vacant`]), the table's entries are ingested: an empty
//!   table, or rows appended in key order (sysbench's fill, the insert benchmark, a TPC-C
//!   load per warehouse). Otherwise the table's rows are *replayed*: written at commit
//!   through the ordinary path ([`BulkSink`]), with its locks and unique checks, as if bulk
//!   load had been off. Turning bulk load on never makes a load fail that would succeed
//!   without it; it only makes appends cheaper.
//! - **Unique keys** (the primary key and unique secondary keys without NULL parts) of an
//!   ingested table are checked among the loaded rows when the sorted entries are merged
//!   at commit: a value held twice fails the commit with the duplicate-key error, and
//!   nothing of the load is written. A vacant range holds no other row to clash with.
//! - **Other writers.** Ordinary inserts (and updates that give a row a new primary key or
//!   a new unique value) take a shared *write lock* on their table
//!   ([`crate::format::write_lock_key`]) until their transaction ends. At commit, before it
//!   looks at the spans, the loading transaction takes the write lock of every table of
//!   the load exclusive (in table id order): it waits for the writers that could have an
//!   uncommitted row in a span to end (their rows are then in the memtable, where the look
//!   sees them), keeps new ones out until it ends (then they see the loaded rows), and
//!   commits before or after another load into the same table, never in between. So the
//!   spans do not change between the look and the ingest; should the ingest still find a
//!   key in a range (a writer that bypasses the lock), it refuses with `Busy` and nothing
//!   of the load is written. The lock is held while the commit sorts and writes the
//!   files: ordinary inserts into those tables wait that long. Locking reads' gap locks do
//!   not stop a bulk load (phantoms are possible under REPEATABLE READ for a concurrent
//!   locking scan of the range).
//! - **Visibility.** The loaded rows are not visible to anyone, the loading transaction
//!   included, until it commits; then all at once. Every later insert of the transaction
//!   into a table in the load joins the load, even with bulk load turned off meanwhile (an
//!   ordinary insert would not see the loaded rows). An UPDATE or DELETE of the table in the
//!   same transaction does not see them either.
//! - **The transaction's own writes.** A span that holds a key the transaction wrote the
//!   ordinary way (an UPDATE that moved a row there, before or after the load) is not
//!   vacant either: the table is replayed, so the loaded rows meet those writes' keys in
//!   the unique checks instead of being written over at commit.
//! - **Atomicity.** The ingest comes first at commit, then the transaction's ordinary
//!   writes (replayed rows included). A failure of the ingest or of a replayed row rolls
//!   back everything; a failure of the ordinary commit after the ingest (an I/O error, or
//!   a crash between the two) would leave the ingested rows in without the ordinary
//!   writes. A statement that fails inside a multi-statement
//!   transaction after adding bulk rows cannot take them back alone: the transaction is
//!   then refused at commit (and rolled back).
//! - **Online index builds** ([`crate::HandlerEngine::capture_build_changes`]): while one
//!   runs on a table, its new rows do not take the bulk path (an ingest would bypass the
//!   build's record of changed rows), and a load that took rows of the table before the
//!   build began is refused at its commit (`Busy`), writing nothing.
//! - **Not supported** with two-phase commit (XA, or the binary log's): `prepare` refuses a
//!   transaction holding bulk rows.
//! - **A load across transactions** ([`HeldBulkLoad`]): a load can be taken out of a
//!   transaction before it commits ([`crate::Session::detach_bulk_load`]) and go on in the
//!   next one ([`crate::Session::attach_bulk_load`]); its rows stay invisible until the
//!   transaction that holds it last commits. The MariaDB plugin does this for autocommit
//!   statements (MyRocks' `rocksdb_bulk_load` across statements): a loader that sends one
//!   INSERT per transaction (sysbench's fill, `mysqlimport`) makes one load, which ends when
//!   `riptide_bulk_load` returns to 0, at the connection's next statement of another kind,
//!   or when the connection closes. No metadata lock keeps other connections' DDL off a
//!   table between those statements: a commit that finds a table of the load dropped or
//!   replaced since (DROP, ALTER, TRUNCATE; a RENAME keeps the table) fails and writes
//!   nothing of the load.

use std::sync::Arc;

use riptide::sort::ExternalSorter;
use riptide::{Error, IngestWriter};

use crate::error::Result;
use crate::format::{
    KeyRepeat, decode_secondary_entry, entry_index_id, index_key_range, prefix_successor,
};
use crate::session::duplicate;
use crate::table::{Store, Table};

/// What a bulk load's commit needs from the transaction: the locks and the ordinary writes
/// (implemented by [`crate::Session`]).
pub(crate) trait BulkSink {
    /// Whether the transaction wrote a key in `[start, end)` the ordinary way (an update
    /// that moved a row there, say): the loaded rows must then be checked against it.
    fn writes_in_range(&self, start: &[u8], end: &[u8]) -> Result<bool>;
    /// Takes `table`'s write lock exclusive, until the transaction ends (see the module
    /// documentation, "Other writers").
    fn lock_for_ingest(&mut self, table: &Arc<Table>) -> Result<()>;
    /// Writes a loaded row the ordinary way: `pk_entry` is its primary key entry (index id
    /// and primary key), `row` its value; checks and locks as an insert does.
    fn replay_row(&mut self, table: &Arc<Table>, pk_entry: &[u8], row: &[u8]) -> Result<()>;
    /// Writes a loaded row's entry of secondary index `n` the ordinary way, with the unique
    /// check unless the key has a NULL part (`has_null`). Entries come in index id order,
    /// not row by row (usually after every row, the primary key having the table's lowest
    /// id); the unique checks see the transaction's own writes either way.
    fn replay_entry(
        &mut self,
        table: &Arc<Table>,
        n: usize,
        entry: &[u8],
        has_null: bool,
    ) -> Result<()>;
}

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
    /// Bytes of its entries (keys and values) in the load.
    bytes: u64,
    /// Whether the commit ingests its entries (every index's span vacant, and at least
    /// [`riptide::Db::ingest_min_bytes`] of them) or replays them.
    ingest: bool,
}

/// The first and last entry a load added to one index.
#[derive(Debug)]
struct Span {
    index_id: u32,
    first: Vec<u8>,
    last: Vec<u8>,
}

impl Span {
    fn widen(&mut self, entry: &[u8]) {
        if entry < self.first.as_slice() {
            self.first.clear();
            self.first.extend_from_slice(entry);
        } else if entry > self.last.as_slice() {
            self.last.clear();
            self.last.extend_from_slice(entry);
        }
    }
}

/// A transaction's bulk load: see the module documentation.
#[derive(Debug)]
pub(crate) struct BulkLoad {
    sorter: ExternalSorter,
    tables: Vec<BulkTable>,
    /// The key span of each index the load added entries to.
    spans: Vec<Span>,
    /// Tables that take the ordinary path in this transaction (by id).
    declined: Vec<u32>,
    /// Rows loaded so far (what a savepoint remembers: rows after it cannot be taken back).
    rows_total: u64,
    /// Bytes added since the last row was counted (see [`BulkLoad::count_row`]).
    row_bytes: u64,
    /// Why the commit must fail, once a statement holding bulk rows was rolled back.
    broken: Option<String>,
}

/// A bulk load between transactions: taken out of one before it commits
/// ([`crate::Session::detach_bulk_load`]) and given to the next
/// ([`crate::Session::attach_bulk_load`]); see the module documentation. Dropping it
/// discards its rows.
#[derive(Debug)]
pub struct HeldBulkLoad(pub(crate) BulkLoad);

impl HeldBulkLoad {
    /// Rows the load holds.
    pub fn rows(&self) -> u64 {
        self.0.rows_total
    }
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
    /// Rows of tables whose entries were not vacant, written the ordinary way at commit.
    pub replayed_rows: u64,
}

impl BulkLoad {
    pub(crate) fn new(store: &Store) -> BulkLoad {
        BulkLoad {
            sorter: store.db.external_sorter(),
            tables: Vec::new(),
            spans: Vec::new(),
            declined: Vec::new(),
            rows_total: 0,
            row_bytes: 0,
            broken: None,
        }
    }

    /// Whether rows of `table` take the bulk path: decided at the table's first insert in
    /// the transaction (`wrote_before`: the transaction already wrote to it the ordinary
    /// way).
    pub(crate) fn accepts(&mut self, table: &Arc<Table>, wrote_before: bool) -> bool {
        let id = table.id();
        if self.tables.iter().any(|t| t.table.id() == id) {
            return true;
        }
        if self.declined.contains(&id) {
            return false;
        }
        let accepted = !wrote_before && !table.bulk_load_forbidden();
        if accepted {
            self.tables.push(BulkTable {
                table: Arc::clone(table),
                rows: 0,
                bytes: 0,
                ingest: false,
            });
        } else {
            self.declined.push(id);
        }
        accepted
    }

    /// Ends the load's part in the transaction it was added in: which tables took the
    /// ordinary path there is that transaction's matter, not the next one's.
    pub(crate) fn detached(mut self) -> HeldBulkLoad {
        self.declined.clear();
        HeldBulkLoad(self)
    }

    /// Whether `table` is in the load.
    pub(crate) fn holds(&self, table: &Table) -> bool {
        self.tables.iter().any(|t| t.table.id() == table.id())
    }

    /// Adds one entry of a row of `table` (accepted before).
    pub(crate) fn add(&mut self, entry: &[u8], value: &[u8]) -> Result<()> {
        let id = entry_index_id(entry).ok_or_else(|| malformed(entry))?;
        match self.spans.iter_mut().find(|s| s.index_id == id) {
            Some(span) => span.widen(entry),
            None => self.spans.push(Span {
                index_id: id,
                first: entry.to_vec(),
                last: entry.to_vec(),
            }),
        }
        self.row_bytes += (entry.len() + value.len()) as u64;
        Ok(self.sorter.add(entry, value)?)
    }

    /// Counts one row of `table` loaded.
    pub(crate) fn count_row(&mut self, table: &Arc<Table>) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.table.id() == table.id()) {
            t.rows += 1;
            t.bytes += self.row_bytes;
        }
        self.row_bytes = 0;
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

    /// Whether every index span of `table` is vacant, in the database and in the
    /// transaction's own writes: the table's entries can be ingested.
    fn spans_vacant(&self, store: &Store, sink: &dyn BulkSink, table: &Table) -> Result<bool> {
        for n in 0..table.index_count() {
            let index = table.index(n)?;
            let Some(span) = self.spans.iter().find(|s| s.index_id == index.id) else {
                continue;
            };
            let (start, end) = if n > 0 && index.unique {
                // A unique value clashes with an entry of the same value and any primary
                // key: the range covers every entry of the first to the last value.
                let value_prefix = |entry: &[u8]| -> Result<Vec<u8>> {
                    let (key, _) = decode_secondary_entry(entry).ok_or_else(|| malformed(entry))?;
                    Ok(entry
                        .get(..4 + key.len())
                        .ok_or_else(|| malformed(entry))?
                        .to_vec())
                };
                let start = value_prefix(&span.first)?;
                let last = value_prefix(&span.last)?;
                let end = prefix_successor(&last).unwrap_or_else(|| index_key_range(index.id).1);
                (start, end)
            } else {
                // Primary keys and non-unique entries clash only with the same entry.
                let mut end = span.last.clone();
                end.push(0);
                (span.first.clone(), end)
            };
            if sink.writes_in_range(&start, &end)?
                || !store.db.range_is_vacant(&store.data, &start, &end)?
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Writes the load: ingests the tables whose index spans are vacant, after checking
    /// their unique keys among the loaded rows, and replays the others through `sink` (see
    /// the module documentation). Returns the rows per table (for the row estimates) and
    /// what was written. Nothing is ingested on an error (replayed rows are in the
    /// transaction, which the caller then rolls back).
    pub(crate) fn commit(
        mut self,
        store: &Store,
        sink: &mut dyn BulkSink,
    ) -> Result<(TableRows, BulkOutcome)> {
        if let Some(why) = self.broken.take() {
            return Err(Error::invalid_argument(format!("commit refused: {why}")).into());
        }
        // Every table's write lock, exclusive, in one order (two loads into the same tables
        // do not deadlock): ordinary writers that could have an uncommitted row in a span
        // end first, new ones wait for this transaction, and another load into a table
        // commits before or after this one, never in between. What the spans hold now
        // stays so until the ingest, so the choice below is final.
        self.tables.sort_by_key(|t| t.table.id());
        for bt in &self.tables {
            sink.lock_for_ingest(&bt.table)?;
        }
        // A load held across transactions had no metadata lock between them: a table
        // dropped or replaced since must not take rows of its old definition.
        if let Some(bt) = self.tables.iter().find(|t| t.table.is_dropped()) {
            return Err(Error::invalid_argument(format!(
                "bulk load refused: table id {} was dropped or changed (DROP, ALTER or \
                 TRUNCATE) while the load held {} of its rows; nothing of the load is \
                 written",
                bt.table.id(),
                bt.rows
            ))
            .into());
        }
        // An online index build of a table began while the load held rows of it: they
        // would bypass the build's record of changed rows (rows inserted after the build
        // began go the ordinary way, Session::bulk_accepts).
        if let Some(bt) = self.tables.iter().find(|t| t.table.is_capturing_changes()) {
            return Err(Error::busy(format!(
                "bulk load refused: an online index build (ALTER TABLE ... LOCK=NONE) of \
                 table id {} began while the load held {} of its rows; nothing of the load is \
                 written",
                bt.table.id(),
                bt.rows
            ))
            .into());
        }
        // A small load is written the ordinary way: its own files in the last level would
        // cost more than they save.
        let min_bytes = store.db.ingest_min_bytes();
        let ingest = self
            .tables
            .iter()
            .map(|t| {
                if t.bytes < min_bytes {
                    return Ok(false);
                }
                self.spans_vacant(store, &*sink, &t.table)
            })
            .collect::<Result<Vec<bool>>>()?;
        for (t, ingest) in self.tables.iter_mut().zip(ingest) {
            t.ingest = ingest;
        }
        let mut sorted = self.sorter.finish()?;
        let mut ingest: Option<IngestWriter> = None;
        let mut replayed_rows = 0u64;
        // The index the current entries belong to: its table, its position and whether it
        // is unique; the previous key of a unique index.
        let mut current: Option<(u32, usize, usize, bool)> = None;
        let mut previous = KeyRepeat::default();
        while let Some((entry, value)) = sorted.next()? {
            let id = entry_index_id(entry).ok_or_else(|| malformed(entry))?;
            if current.is_none_or(|(c, ..)| c != id) {
                current = Some(find_index(&self.tables, id).ok_or_else(|| malformed(entry))?);
                previous.reset();
                if let Some(w) = ingest.as_mut() {
                    w.new_range()?;
                }
            }
            let Some((_, t, n, unique)) = current else {
                return Err(malformed(entry).into());
            };
            let bulk_table = self.tables.get(t).ok_or_else(|| malformed(entry))?;
            let table = &bulk_table.table;
            if !bulk_table.ingest {
                if n == 0 {
                    sink.replay_row(table, entry, value)?;
                    replayed_rows += 1;
                } else {
                    sink.replay_entry(table, n, entry, value.first() == Some(&KEY_HAS_NULL))?;
                }
                continue;
            }
            let writer = match ingest.as_mut() {
                Some(w) => w,
                None => ingest.insert(store.db.ingest_writer(&store.data)?),
            };
            if n == 0 {
                // A primary key entry (index id + primary key): two equal ones are two rows
                // with one primary key.
                if previous.repeats(entry) {
                    return Err(duplicate(table, 0));
                }
                writer.add(entry, value)?;
                continue;
            }
            if unique && value.first() == Some(&KEY_WITHOUT_NULL) {
                let (key, _) = decode_secondary_entry(entry).ok_or_else(|| malformed(entry))?;
                if previous.repeats(key) {
                    return Err(duplicate(table, n));
                }
            }
            writer.add(entry, b"")?;
        }
        let mut outcome = BulkOutcome {
            replayed_rows,
            ..BulkOutcome::default()
        };
        if let Some(writer) = ingest {
            let done = writer.finish()?;
            outcome.entries = done.entries;
            outcome.bytes = done.bytes;
        }
        outcome.rows = self
            .tables
            .iter()
            .filter(|t| t.ingest)
            .map(|t| t.rows.max(0) as u64)
            .sum();
        let deltas = self.tables.into_iter().map(|t| (t.table, t.rows)).collect();
        Ok((deltas, outcome))
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
