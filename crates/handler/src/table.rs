//! An open table: its definition, and the counters that live beside it (auto-increment,
//! hidden row ids, row count estimate), reserved and persisted in the data dictionary.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use parking_lot::Mutex;
use riptide::{ColumnFamily, Db, ReadOptions};

use crate::capture::ChangeCapture;
use crate::error::Result;
use crate::format::{
    self, IndexDef, IndexKind, IndexStats, StoredCounters, TableDef, be32, counters_key,
    encode_counters, index_key_range, prefix_successor,
};

/// How many auto-increment values one dictionary write reserves beyond what is asked.
pub const AUTOINC_RESERVE: u64 = 1000;
/// How many hidden row ids one dictionary write reserves.
pub const ROWID_RESERVE: u64 = 10_000;

/// [`Table::estimate_range`]: entries that must lie in data blocks wholly inside a range
/// before its estimate may stand without a count.
pub const ESTIMATE_FLOOR: u64 = 16;
/// [`Table::estimate_range`]: a range estimated at no more than this fraction (1/N) of the
/// table's rows may stand without a count.
pub const ESTIMATE_SHARE: u64 = 64;

/// What the engine, its tables and its sessions share.
pub(crate) struct Store {
    pub(crate) db: Arc<Db>,
    pub(crate) dd: ColumnFamily,
    pub(crate) data: ColumnFamily,
}

/// The in-memory side of a table's counters.
#[derive(Debug)]
struct Counters {
    autoinc_next: u64,
    autoinc_ceiling: u64,
    rowid_next: u64,
    rowid_ceiling: u64,
    rows_persisted: i64,
    /// Set by DROP / TRUNCATE: the counters record is gone and must not come back.
    dropped: bool,
    /// The caller's index statistics ([`Table::set_index_stats`]), persisted with the
    /// counters.
    index_stats: Option<IndexStats>,
}

/// An open table. Shared (`Arc`) by every handler and session that uses it; all methods take
/// `&self` and are thread-safe.
pub struct Table {
    store: Arc<Store>,
    def: TableDef,
    primary: IndexDef,
    counters: Mutex<Counters>,
    rows: AtomicI64,
    /// Set by [`Table::forbid_bulk_load`].
    bulk_forbidden: AtomicBool,
    /// The rows changed while an index of the table is built online ([`crate::capture`]).
    capture: ChangeCapture,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("def", &self.def)
            .finish_non_exhaustive()
    }
}

impl Table {
    pub(crate) fn new(store: Arc<Store>, def: TableDef, stored: StoredCounters) -> Result<Table> {
        let rows = i64::try_from(stored.rows).unwrap_or(i64::MAX);
        let primary = def.indexes.first().cloned().ok_or_else(|| {
            riptide::Error::corruption(format!("table id {} has no index", def.table_id))
        })?;
        // Statistics of another set of indexes (stored before an in-place ADD or DROP
        // INDEX) describe nothing that exists now.
        let index_ids: Vec<u32> = def.indexes.iter().map(|i| i.id).collect();
        let index_stats = stored.index_stats.filter(|s| s.index_ids == index_ids);
        Ok(Table {
            store,
            def,
            primary,
            counters: Mutex::new(Counters {
                autoinc_next: stored.autoinc_ceiling.max(1),
                autoinc_ceiling: stored.autoinc_ceiling.max(1),
                rowid_next: stored.rowid_ceiling.max(1),
                rowid_ceiling: stored.rowid_ceiling.max(1),
                rows_persisted: rows,
                dropped: false,
                index_stats,
            }),
            rows: AtomicI64::new(rows),
            bulk_forbidden: AtomicBool::new(false),
            capture: ChangeCapture::default(),
        })
    }

    /// The table's definition (id and indexes).
    pub fn def(&self) -> &TableDef {
        &self.def
    }

    /// The version of the caller's key encoding the table was created with
    /// ([`crate::HandlerEngine::set_key_format`]; 0 before it was recorded).
    pub fn key_format(&self) -> u8 {
        self.def.key_format
    }

    /// The bytes the caller keeps with the table ([`TableDef::caller_data`]; empty: none).
    pub fn caller_data(&self) -> &[u8] {
        &self.def.caller_data
    }

    /// The table's id.
    pub fn id(&self) -> u32 {
        self.def.table_id
    }

    /// Number of indexes, the primary (or hidden) key included.
    pub fn index_count(&self) -> usize {
        self.def.indexes.len()
    }

    /// Number of secondary indexes (index positions 1..).
    pub fn secondary_count(&self) -> usize {
        self.def.indexes.len().saturating_sub(1)
    }

    /// Whether the table has a hidden primary key (the caller allocates row ids with
    /// [`Table::next_hidden_row_id`]).
    pub fn has_hidden_pk(&self) -> bool {
        self.primary().kind == IndexKind::HiddenPk
    }

    /// Index `n` (0 is the primary key).
    pub fn index(&self, n: usize) -> Result<&IndexDef> {
        self.def.indexes.get(n).ok_or_else(|| {
            riptide::Error::invalid_argument(format!(
                "table id {} has {} indexes, not index #{n}",
                self.def.table_id,
                self.def.indexes.len()
            ))
            .into()
        })
    }

    pub(crate) fn primary(&self) -> &IndexDef {
        &self.primary
    }

    /// The 4-byte key prefix of index `n`.
    pub fn index_prefix(&self, n: usize) -> Result<[u8; 4]> {
        Ok(be32(self.index(n)?.id))
    }

    /// The next auto-increment value that [`Table::reserve_autoinc`] would start from (what
    /// `SHOW CREATE TABLE` reports as `AUTO_INCREMENT=`).
    pub fn autoinc_next(&self) -> u64 {
        self.counters.lock().autoinc_next
    }

    /// Reserves `count` auto-increment values (at least 1) spaced by `increment`, the first
    /// being congruent to `offset` (MariaDB's `auto_increment_offset` / `_increment`), and
    /// returns the first. Values are never handed out twice, also across crashes: the
    /// dictionary records a ceiling before any value below it is returned (see FORMAT.md).
    ///
    /// The first value is InnoDB's (`ha_innobase::get_auto_increment`), which is the
    /// server's own `compute_next_insert_id` rounding: `((next - 1) + increment - offset) /
    /// increment * increment + offset`. With `offset > increment` that formula still holds
    /// (MariaDB documents the offset as "ignored" then, but both the server and InnoDB use
    /// it as is); only when it would wrap below the counter does the value fall back to the
    /// next one congruent to `offset % increment`.
    pub fn reserve_autoinc(&self, count: u64, offset: u64, increment: u64) -> Result<u64> {
        let mut c = self.counters.lock();
        let inc = increment.max(1);
        let mut first = c.autoinc_next.max(1);
        if inc > 1 {
            let rounded = (first - 1)
                .wrapping_add(inc)
                .wrapping_sub(offset)
                .checked_div(inc)
                .unwrap_or(0)
                .wrapping_mul(inc)
                .wrapping_add(offset);
            first = if rounded >= first {
                rounded
            } else {
                let off = offset % inc;
                let base = first - first % inc;
                let v = base.saturating_add(off);
                if v >= first { v } else { v.saturating_add(inc) }
            };
        }
        let end = first.saturating_add(count.max(1).saturating_mul(inc));
        if end > c.autoinc_ceiling {
            c.autoinc_ceiling = end.saturating_add(AUTOINC_RESERVE);
            self.persist_locked(&mut c)?;
        }
        c.autoinc_next = end;
        Ok(first)
    }

    /// Keeps the next auto-increment value at most `max + 1`, where `max` is the largest
    /// value the column holds (InnoDB's behaviour): a reservation past it (an insert that
    /// then fails with "Out of range") must not move `AUTO_INCREMENT=` beyond the column's
    /// range. Values above `max` were never stored, so none is handed out twice.
    pub fn cap_autoinc(&self, max: u64) {
        let mut c = self.counters.lock();
        c.autoinc_next = c.autoinc_next.min(max.saturating_add(1));
    }

    /// Records that `value` was stored in the auto-increment column (an explicit value): the
    /// next reserved value is above it.
    pub fn observe_autoinc(&self, value: u64) -> Result<()> {
        let mut c = self.counters.lock();
        if value < c.autoinc_next {
            return Ok(());
        }
        let next = value.saturating_add(1);
        if next > c.autoinc_ceiling {
            c.autoinc_ceiling = next.saturating_add(AUTOINC_RESERVE);
            self.persist_locked(&mut c)?;
        }
        c.autoinc_next = next;
        Ok(())
    }

    /// A new hidden row id (for tables without a primary key): never handed out before,
    /// also across crashes. Encode it as 8 bytes big-endian for the pk.
    pub fn next_hidden_row_id(&self) -> Result<u64> {
        let mut c = self.counters.lock();
        let id = c.rowid_next;
        let next = id.saturating_add(1);
        if next > c.rowid_ceiling {
            c.rowid_ceiling = next.saturating_add(ROWID_RESERVE);
            self.persist_locked(&mut c)?;
        }
        c.rowid_next = next;
        Ok(id)
    }

    /// Keeps this table's inserts off the bulk-load path ([`crate::bulk`]) for good: the
    /// MariaDB plugin calls it for a table whose uniqueness the server checks itself by
    /// reading the table (long unique keys over BLOBs, `WITHOUT OVERLAPS` keys), which would
    /// not see rows waiting in a bulk load.
    pub fn forbid_bulk_load(&self) {
        self.bulk_forbidden.store(true, Ordering::Relaxed);
    }

    /// Whether [`Table::forbid_bulk_load`] was called.
    pub fn bulk_load_forbidden(&self) -> bool {
        self.bulk_forbidden.load(Ordering::Relaxed)
    }

    /// The row count estimate: the committed inserts minus deletes (maintained by sessions
    /// at commit, persisted lazily, so it may lag after a crash), never negative.
    pub fn row_estimate(&self) -> u64 {
        u64::try_from(self.rows.load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// Adds a committed delta to the row estimate, persisting it once it drifted by 10% (at
    /// least 100 rows) from the stored value. A failure to persist is only logged.
    pub(crate) fn add_rows(&self, delta: i64) {
        let now = self
            .rows
            .fetch_add(delta, Ordering::Relaxed)
            .saturating_add(delta);
        if now < 0 {
            self.rows.store(0, Ordering::Relaxed);
        }
        let Some(mut c) = self.counters.try_lock() else {
            return;
        };
        let drift = now.saturating_sub(c.rows_persisted).unsigned_abs();
        if drift >= (now.unsigned_abs() / 10).max(100)
            && let Err(e) = self.persist_locked(&mut c)
        {
            log::warn!(
                "table id {}: persisting the row estimate: {e}",
                self.def.table_id
            );
        }
    }

    /// Estimates the keys of index `n` from `lower` (inclusive) to `upper` (exclusive;
    /// `None`: the end of the index), both relative to the index (no id prefix). For
    /// `records_in_range`, which the optimizer calls for every range of every candidate index
    /// of a statement, so it must be cheap:
    ///
    /// * first [`riptide::Db::approximate_entries_cf`]: the tables' share from their index
    ///   blocks (and one data block per table for the entry density) plus the memtables'
    ///   entries counted up to `limit`. A range it surely puts at `limit` or more (its lower
    ///   bound, [`riptide::EntryEstimate::at_least`]) is answered with the estimate (every
    ///   version and tombstone counts, so it leans high);
    /// * any other range is counted exactly in the newest committed state, up to `limit`
    ///   (then the larger of the count and the estimate), so small ranges, where the choice
    ///   between indexes and a table scan is made, keep exact figures. The estimate alone
    ///   puts a range of a few keys that crosses a data block boundary at a whole block per
    ///   table: an empty range of a secondary index, whose deleted entries end blocks in four
    ///   tables, was put at 339 of a table's 405 rows, and MariaDB chose a table scan whose
    ///   locking read then waited on every other connection's rows.
    ///
    /// Counting every range up to 1,000 keys with an iterator took a fifth of the server's
    /// CPU in TPC-C (benches/RESULTS.md, issue 17).
    pub fn estimate_range(
        &self,
        n: usize,
        lower: &[u8],
        upper: Option<&[u8]>,
        limit: u64,
    ) -> Result<u64> {
        let prefix = self.index_prefix(n)?;
        let mut lo = prefix.to_vec();
        lo.extend_from_slice(lower);
        let hi = match upper {
            Some(u) => {
                let mut h = prefix.to_vec();
                h.extend_from_slice(u);
                Some(h)
            }
            None => prefix_successor(&prefix),
        };
        if hi.as_ref().is_some_and(|h| *h <= lo) {
            return Ok(0);
        }
        let limit = limit.max(1);
        let approx =
            self.store
                .db
                .approximate_entries_cf(&self.store.data, &lo, hi.as_deref(), limit)?;
        let mut opts = ReadOptions::default().lower_bound(lo.clone());
        if let Some(h) = hi {
            opts = opts.upper_bound(h);
        }
        if approx.at_least >= limit || self.estimate_suffices(approx) {
            return Ok(approx.about);
        }
        let mut it = self.store.db.iter_cf(&self.store.data, opts)?;
        it.seek(&lo)?;
        let mut count = 0u64;
        while it.valid() && it.key().starts_with(&prefix) {
            count += 1;
            if count >= limit {
                return Ok(count.max(approx.about));
            }
            it.next()?;
        }
        Ok(count)
    }

    /// True when the index blocks' estimate of a range is good enough without a count: the
    /// range covers whole data blocks ([`ESTIMATE_FLOOR`] entries or more surely inside it,
    /// so it is no range of a few keys that one block boundary could inflate to a block per
    /// table) and is at most 1/[`ESTIMATE_SHARE`] of the table's rows by the estimate, which
    /// leans high. Such a range is a small part of the table whatever its exact count, so
    /// the optimizer's choice between it and a scan does not turn on it; counting it read
    /// and merged every entry of it first (a quarter of the server's CPU in sysbench's
    /// `oltp_read_only`, whose ranges are 100 rows: benches/RESULTS.md, 2026-11-29).
    fn estimate_suffices(&self, approx: riptide::EntryEstimate) -> bool {
        approx.at_least >= ESTIMATE_FLOOR
            && approx.about.saturating_mul(ESTIMATE_SHARE) <= self.row_estimate()
    }

    /// [`Table::estimate_range`] between key tuples of index `n` (MariaDB's
    /// `records_in_range`): from `lower` (`(tuple, after)`: the first entry at or, with
    /// `after`, past every entry that starts with `tuple`; `None`: the start of the index)
    /// to `upper` (`(tuple, inclusive)`: up to and, with `inclusive`, including the entries
    /// that start with `tuple`; `None`: the end of the index).
    pub fn estimate_tuple_range(
        &self,
        n: usize,
        lower: Option<(&[u8], bool)>,
        upper: Option<(&[u8], bool)>,
        limit: u64,
    ) -> Result<u64> {
        // An index the table lacks is refused whatever the bounds.
        self.index(n)?;
        // Bounds relative to the index: a successor that does not exist (a tuple of 0xff
        // bytes only) is the end of the index.
        let lo = match lower {
            None => Vec::new(),
            Some((t, false)) => t.to_vec(),
            Some((t, true)) => match prefix_successor(t) {
                Some(s) => s,
                None => return Ok(0),
            },
        };
        let hi = match upper {
            None => None,
            Some((t, false)) => Some(t.to_vec()),
            Some((t, true)) => prefix_successor(t),
        };
        self.estimate_range(n, &lo, hi.as_deref(), limit)
    }

    /// Up to `count` key tuples of index `n` (relative to the index: no id prefix), in
    /// order, spread evenly over the bytes the index holds in table files
    /// ([`riptide::Db::sample_keys_cf`]): where `ANALYZE TABLE` reads a few entries each to
    /// estimate the index's distinct values without reading it all. A tuple is a data block
    /// boundary, not necessarily an entry: seek to it and read on. Entries only in the
    /// memtables give no tuples.
    pub fn sample_index(&self, n: usize, count: usize) -> Result<Vec<Vec<u8>>> {
        let prefix = self.index_prefix(n)?;
        let upper = prefix_successor(&prefix);
        let keys =
            self.store
                .db
                .sample_keys_cf(&self.store.data, &prefix, upper.as_deref(), count)?;
        Ok(keys
            .into_iter()
            .filter_map(|k| k.strip_prefix(prefix.as_slice()).map(<[u8]>::to_vec))
            .collect())
    }

    /// `ANALYZE TABLE`: counts the rows of the primary (or hidden) key in the newest
    /// committed state, makes that the row estimate and persists it. Returns the count.
    pub fn refresh_statistics(&self) -> Result<u64> {
        let prefix = self.index_prefix(0)?;
        let mut opts = ReadOptions::default().lower_bound(prefix.to_vec());
        if let Some(hi) = prefix_successor(&prefix) {
            opts = opts.upper_bound(hi);
        }
        let mut it = self.store.db.iter_cf(&self.store.data, opts)?;
        it.seek(&prefix)?;
        let mut count = 0u64;
        while it.valid() && it.key().starts_with(&prefix) {
            count += 1;
            it.next()?;
        }
        drop(it);
        self.rows
            .store(i64::try_from(count).unwrap_or(i64::MAX), Ordering::Relaxed);
        let mut c = self.counters.lock();
        self.persist_locked(&mut c)?;
        Ok(count)
    }

    /// Stores the caller's numbers about the table's indexes (the MariaDB plugin: `ANALYZE
    /// TABLE`'s distinct key prefixes) with the table's counters, persisted now, replacing
    /// earlier ones. [`Table::index_stats`] returns them until the indexes change (an
    /// in-place ADD or DROP INDEX makes them stale: they are dropped when the table is
    /// opened with other indexes), the table is truncated, or they are replaced.
    pub fn set_index_stats(&self, values: Vec<u64>) -> Result<()> {
        let mut c = self.counters.lock();
        c.index_stats = Some(IndexStats {
            index_ids: self.def.indexes.iter().map(|i| i.id).collect(),
            values,
        });
        self.persist_locked(&mut c)
    }

    /// The numbers [`Table::set_index_stats`] stored for the table's current indexes, if
    /// any.
    pub fn index_stats(&self) -> Option<Vec<u64>> {
        self.counters
            .lock()
            .index_stats
            .as_ref()
            .map(|s| s.values.clone())
    }

    /// About how many bytes of table files hold index `n`'s keys, per level of the engine
    /// (`[0]` is L0; [`riptide::Db::approximate_bytes_by_level_cf`]; what the memtables
    /// hold is not counted).
    pub fn index_bytes_by_level(&self, n: usize) -> Result<Vec<u64>> {
        let (lo, hi) = index_key_range(self.index(n)?.id);
        Ok(self
            .store
            .db
            .approximate_bytes_by_level_cf(&self.store.data, &lo, Some(&hi))?)
    }

    /// `OPTIMIZE TABLE`: flushes and compacts the key range of every index of the table to
    /// the last level (`Db::compact_range`), dropping deleted rows, shadowed versions and
    /// tombstones no snapshot needs.
    pub fn compact(&self) -> Result<()> {
        for n in 0..self.index_count() {
            let (lo, hi) = index_key_range(self.index(n)?.id);
            self.store
                .db
                .compact_range(&self.store.data, Some((&lo[..], &hi[..])))?;
        }
        Ok(())
    }

    /// Writes the counters record with the exact next values (what a clean shutdown does, so
    /// a restart does not skip the reserved range).
    pub fn persist_exact(&self) -> Result<()> {
        let mut c = self.counters.lock();
        c.autoinc_ceiling = c.autoinc_next;
        c.rowid_ceiling = c.rowid_next;
        self.persist_locked(&mut c)
    }

    /// Marks the table dropped: its counters record is never written again.
    pub(crate) fn mark_dropped(&self) {
        self.counters.lock().dropped = true;
    }

    /// The record of rows changed during an online index build ([`crate::capture`]).
    pub(crate) fn capture(&self) -> &ChangeCapture {
        &self.capture
    }

    /// Whether an online index build of this table is recording its writers' changes: a
    /// bulk load does not take the table's rows then ([`crate::bulk`]).
    pub fn is_capturing_changes(&self) -> bool {
        self.capture.is_on()
    }

    /// Whether this handle is stale: the table was dropped, or replaced by a DDL statement
    /// (ALTER, TRUNCATE; a RENAME keeps it) since it was opened.
    pub fn is_dropped(&self) -> bool {
        self.counters.lock().dropped
    }

    fn persist_locked(&self, c: &mut Counters) -> Result<()> {
        if c.dropped {
            return Ok(());
        }
        let rows = self.rows.load(Ordering::Relaxed);
        let stored = StoredCounters {
            autoinc_ceiling: c.autoinc_ceiling,
            rowid_ceiling: c.rowid_ceiling,
            rows: u64::try_from(rows).unwrap_or(0),
            index_stats: c.index_stats.clone(),
        };
        self.store.db.put_cf(
            &self.store.dd,
            &counters_key(self.def.table_id),
            &encode_counters(&stored),
        )?;
        c.rows_persisted = rows;
        Ok(())
    }
}

/// Reads a table's counters record (defaults when absent).
pub(crate) fn load_counters(store: &Store, table_id: u32) -> Result<StoredCounters> {
    Ok(match store.db.get_cf(&store.dd, &counters_key(table_id))? {
        Some(v) => format::decode_counters(&v, table_id)?,
        None => StoredCounters::default(),
    })
}
