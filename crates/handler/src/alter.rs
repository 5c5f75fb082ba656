//! In-place index changes: the `ALTER TABLE ... ADD INDEX / DROP INDEX, ALGORITHM=INPLACE`
//! of the MariaDB plugin, instead of copying the whole table.
//!
//! 1. [`HandlerEngine::begin_index_build`] allocates the new indexes' ids and records each as
//!    being built (`B` + id, FORMAT.md); a build left by a crash is range-deleted at the next
//!    open ([`HandlerEngine::drop_unfinished_builds`]).
//! 2. The caller reads every row once, at a snapshot, and hands each new index's entry to
//!    [`IndexBuild::add`]. Writers are kept out meanwhile (MariaDB's `LOCK=SHARED`), or, for
//!    an *online* build of non-unique indexes (`LOCK=NONE`), they go on and the table
//!    records the rows they change ([`HandlerEngine::capture_build_changes`], before the
//!    snapshot; [`crate::capture`]). Entries go to
//!    an external sort ([`riptide::Db::external_sorter`]: memory bounded by the engine's
//!    `sort_buffer_size`, sorted runs spilled to temporary files).
//! 3. [`IndexBuild::finish`] merges the sort into one stream in key order and, for a unique
//!    index, finds two rows with one value in passing (keys with a NULL part excepted):
//!    [`BuildCheck::Duplicate`] names one of them, and nothing was written. Otherwise the
//!    stream becomes table files ingested straight into the deepest level they fit
//!    ([`riptide::Db::ingest_writer`]): no WAL, no memtable, no compaction through the
//!    levels above. Nothing reads them until the definition names their index.
//! 4. An online build, once writers are kept out again: [`IndexBuild::take_changed_rows`]
//!    gives the changed rows' primary keys; the caller reads each at the snapshot and as it
//!    is now, and [`IndexBuild::apply_change`] writes the difference of the new indexes'
//!    keys (tombstones and entries above the ingested files).
//! 5. [`HandlerEngine::commit_index_build`] writes, in one batch: the new definition
//!    (existing indexes kept with their ids, dropped ones gone, new ones added, in the
//!    caller's order), one range delete per dropped index, the end of the build records and
//!    the caller's version of the definition (`D` + name, what MariaDB's crash recovery of
//!    an in-place ALTER asks through `riptide_handler_check_version`).
//!    [`HandlerEngine::abort_index_build`] instead range-deletes what the build wrote.

use std::sync::Arc;

use riptide::sort::ExternalSorter;
use riptide::{Error, WriteBatch};

use crate::bulk::BulkSink;
use crate::capture::CaptureError;
use crate::engine::{HandlerEngine, name_str};
use crate::error::Result;
use crate::format::{
    self, IndexDef, IndexKind, IndexSpec, KeyRepeat, NEXT_ID_KEY, TableDef, build_key,
    build_prefix, decode_secondary_entry, definition_version_key, entry_index_id, index_key_range,
    prefix_successor, secondary_entry, table_key,
};
use crate::session::SessionOptions;
use crate::table::{Store, Table, load_counters};
use riptide::ReadOptions;

/// A secondary index to add in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIndex {
    /// Its definition (kind [`IndexKind::Secondary`]).
    pub spec: IndexSpec,
    /// For a unique index, the offsets in the key (as given to [`IndexBuild::add`]) of the
    /// NULL-indicator bytes of its nullable parts: a key whose byte there is 0 has a NULL
    /// part and never conflicts. The caller's keys of one index must all have one length.
    pub null_offsets: Vec<usize>,
}

/// Where an index of the changed table comes from, in the caller's new order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexSlot {
    /// The index at this position of the table's current definition (kept with its id and
    /// entries).
    Existing(usize),
    /// The build's new index at this position (of [`HandlerEngine::begin_index_build`]).
    New(usize),
}

/// What [`IndexBuild::finish`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildCheck {
    /// Every new unique index holds each value (without NULL parts) at most once.
    Unique,
    /// New index `index` (its position in the build) holds a value twice; `pk` is the
    /// primary key of one of the rows.
    Duplicate {
        /// The new index's position in the build.
        index: usize,
        /// The primary key of a row holding the duplicate value.
        pk: Vec<u8>,
    },
}

/// An in-place index build in progress: see the module documentation. Dropping it without
/// [`HandlerEngine::commit_index_build`] or [`HandlerEngine::abort_index_build`] leaves its
/// entries to the next open, which removes them.
pub struct IndexBuild {
    store: Arc<Store>,
    name: Vec<u8>,
    /// The table's definition when the build began.
    base: TableDef,
    /// The new indexes, with their ids.
    new: Vec<IndexDef>,
    null_offsets: Vec<Vec<usize>>,
    /// The entries, on their way to key order; `None` once [`IndexBuild::finish`] took it.
    sorter: Option<ExternalSorter>,
    entries: u64,
    /// What the ingest of [`IndexBuild::finish`] wrote.
    ingested: Option<riptide::Ingested>,
    /// The caller data the commit records ([`IndexBuild::set_caller_data`]); `None` keeps
    /// the table's.
    caller_data: Option<Vec<u8>>,
    /// An online build: the table whose writers' changes are recorded
    /// ([`HandlerEngine::capture_build_changes`]); the record stops when the build ends.
    captured: Option<Arc<Table>>,
    /// The changed rows' primary keys, taken by [`IndexBuild::take_changed_rows`].
    changed: Vec<Vec<u8>>,
    /// Entries of the new indexes written by [`IndexBuild::apply_change`], not yet written.
    pending: WriteBatch,
    pending_bytes: usize,
}

/// [`IndexBuild::apply_change`] writes its entries in batches of about this many bytes.
const APPLY_BATCH_BYTES: usize = 4 << 20;

impl Drop for IndexBuild {
    fn drop(&mut self) {
        if let Some(table) = self.captured.take() {
            table.capture().stop();
        }
    }
}

impl std::fmt::Debug for IndexBuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBuild")
            .field("table", &name_str(&self.name))
            .field("new", &self.new)
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

impl IndexBuild {
    /// The id of the table the build is for.
    pub fn table_id(&self) -> u32 {
        self.base.table_id
    }

    /// The new indexes (their ids allocated).
    pub fn new_indexes(&self) -> &[IndexDef] {
        &self.new
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// What [`IndexBuild::finish`] ingested (the level, files and bytes), once it has.
    pub fn ingested(&self) -> Option<&riptide::Ingested> {
        self.ingested.as_ref()
    }

    /// Makes the commit record `data` as the table's caller data ([`TableDef::caller_data`]),
    /// in the same batch as the index change (the MariaDB plugin: the row layout after an
    /// instant column change, which may add or drop no index at all).
    pub fn set_caller_data(&mut self, data: &[u8]) {
        self.caller_data = Some(data.to_vec());
    }

    /// Adds the entry of one row to new index `n`: its key `key` (the bytes the caller
    /// would pass as that index's [`crate::SecondaryKey`]) and the row's primary key `pk`.
    pub fn add(&mut self, n: usize, key: &[u8], pk: &[u8]) -> Result<()> {
        let index = self.new.get(n).ok_or_else(|| {
            Error::invalid_argument(format!(
                "index build of table {}: new index #{n} does not exist (the build adds {})",
                name_str(&self.name),
                self.new.len()
            ))
        })?;
        let entry = secondary_entry(index.id, key, pk)?;
        let sorter = self.sorter.as_mut().ok_or_else(|| {
            Error::invalid_argument(format!(
                "index build of table {}: entry added after the build finished",
                name_str(&self.name)
            ))
        })?;
        sorter.add(&entry, b"")?;
        self.entries += 1;
        Ok(())
    }

    /// Puts the entries in key order, checks every new unique index for a value held twice
    /// (nothing is written if one is), then ingests the entries as table files. Called
    /// once; `InvalidArgument` the second time.
    pub fn finish(&mut self) -> Result<BuildCheck> {
        let sorter = self.sorter.take().ok_or_else(|| {
            Error::invalid_argument(format!(
                "index build of table {}: finished twice",
                name_str(&self.name)
            ))
        })?;
        let mut sorted = sorter.finish()?;
        let mut ingest = self.store.db.ingest_writer(&self.store.data)?;
        // The new index the current entries belong to (ids ascend with the sort), and the
        // key of the previous entry of a unique one without a NULL part.
        let mut index: Option<(usize, u32)> = None;
        let mut previous = KeyRepeat::default();
        while let Some((entry, _)) = sorted.next()? {
            let id = entry_index_id(entry).ok_or_else(|| self.malformed(entry))?;
            if index.is_none_or(|(_, current)| current != id) {
                let n = self
                    .new
                    .iter()
                    .position(|ix| ix.id == id)
                    .ok_or_else(|| self.malformed(entry))?;
                index = Some((n, id));
                previous.reset();
                // Each index's entries are checked and placed on their own.
                ingest.new_range()?;
            }
            let Some((n, _)) = index else {
                return Err(self.malformed(entry).into());
            };
            if self.new.get(n).is_some_and(|ix| ix.unique) {
                let (key, pk) =
                    decode_secondary_entry(entry).ok_or_else(|| self.malformed(entry))?;
                let offsets = self.null_offsets.get(n).map_or(&[][..], Vec::as_slice);
                let has_null = offsets.iter().any(|&o| key.get(o) == Some(&0));
                if has_null {
                    previous.reset();
                } else if previous.repeats(key) {
                    // The ingest's files go as `ingest` drops.
                    return Ok(BuildCheck::Duplicate {
                        index: n,
                        pk: pk.to_vec(),
                    });
                }
            }
            ingest.add(entry, b"")?;
        }
        self.ingested = Some(ingest.finish()?);
        Ok(BuildCheck::Unique)
    }

    /// An online build, after [`IndexBuild::finish`] and once the table's writers are kept
    /// out (MariaDB's exclusive metadata lock of the ALTER's commit): takes the primary keys
    /// of the rows changed since the capture began, in ascending order, and returns how many
    /// (each is then [`IndexBuild::changed_row`]). For each, the caller reads the row at the
    /// snapshot the build read and as it is now, and passes the new indexes' keys of both to
    /// [`IndexBuild::apply_change`]. `InvalidArgument` if the build is not online;
    /// `NotSupported` if more rows changed than the capture holds
    /// ([`crate::capture::CAPTURE_MAX_BYTES`]).
    pub fn take_changed_rows(&mut self) -> Result<usize> {
        let table = self.captured.as_ref().ok_or_else(|| {
            Error::invalid_argument(format!(
                "index build of table {}: not an online build (no changes were recorded)",
                name_str(&self.name)
            ))
        })?;
        self.changed = table.capture().take().map_err(|e| match e {
            CaptureError::NotStarted => Error::invalid_argument(format!(
                "index build of table {}: the change capture is not on",
                name_str(&self.name)
            )),
            CaptureError::Overflowed { keys } => Error::not_supported(format!(
                "online index build of table {}: more rows changed during the build than \
                 its record of changed rows holds ({} MiB of primary keys, {keys} rows \
                 recorded); run the ALTER TABLE again with LOCK=SHARED, or when fewer \
                 writes go on",
                name_str(&self.name),
                crate::capture::CAPTURE_MAX_BYTES >> 20
            )),
        })?;
        Ok(self.changed.len())
    }

    /// The primary key of changed row `i` of [`IndexBuild::take_changed_rows`].
    pub fn changed_row(&self, i: usize) -> Option<&[u8]> {
        self.changed.get(i).map(Vec::as_slice)
    }

    /// Brings new index `n`'s entry of the row with primary key `pk` from `old` (its key
    /// when the build read the row; `None`: no row then) to `new` (its key now; `None`: no
    /// row now). Equal keys write nothing. Only after [`IndexBuild::finish`] (which needs
    /// the new indexes' ranges empty); the entries are written before the commit's batch.
    pub fn apply_change(
        &mut self,
        n: usize,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
        pk: &[u8],
    ) -> Result<()> {
        if self.sorter.is_some() {
            return Err(Error::invalid_argument(format!(
                "index build of table {}: a change applied before the build finished",
                name_str(&self.name)
            ))
            .into());
        }
        let id = self
            .new
            .get(n)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "index build of table {}: new index #{n} does not exist (the build adds \
                     {})",
                    name_str(&self.name),
                    self.new.len()
                ))
            })?
            .id;
        if old == new {
            return Ok(());
        }
        if let Some(key) = old {
            let entry = secondary_entry(id, key, pk)?;
            self.pending_bytes += entry.len();
            self.pending.delete_cf(&self.store.data, &entry);
        }
        if let Some(key) = new {
            let entry = secondary_entry(id, key, pk)?;
            self.pending_bytes += entry.len();
            self.pending.put_cf(&self.store.data, &entry, b"");
        }
        if self.pending_bytes >= APPLY_BATCH_BYTES {
            self.write_pending()?;
        }
        Ok(())
    }

    /// Writes the entries [`IndexBuild::apply_change`] gathered (nothing reads the new
    /// indexes before the commit; a crash leaves them to the next open, which removes them).
    fn write_pending(&mut self) -> Result<()> {
        if self.pending_bytes > 0 {
            let batch = std::mem::take(&mut self.pending);
            self.pending_bytes = 0;
            self.store.db.write(batch)?;
        }
        Ok(())
    }

    fn malformed(&self, entry: &[u8]) -> Error {
        Error::corruption(format!(
            "index build of table {}: sorted entry {:02x?} is malformed",
            name_str(&self.name),
            entry
        ))
    }
}

impl HandlerEngine {
    /// Begins adding the secondary indexes `new` to table `name` in place: allocates their
    /// ids and records the build, so that a crash before
    /// [`HandlerEngine::commit_index_build`] leaves no entry behind. An empty `new` (a change
    /// that only drops indexes) records nothing. `NotFound` if the table does not exist.
    pub fn begin_index_build(&self, name: &[u8], new: &[NewIndex]) -> Result<IndexBuild> {
        let store = Arc::clone(self.store());
        let _ddl = self.ddl_lock();
        let base = self.read_def(name)?.ok_or_else(|| {
            Error::not_found(format!(
                "index build: table {} does not exist",
                name_str(name)
            ))
        })?;
        for ix in new {
            if ix.spec.kind != IndexKind::Secondary {
                return Err(Error::invalid_argument(format!(
                    "index build of table {}: index `{}` is not a secondary index (an in-place \
                     build adds secondary indexes only)",
                    name_str(name),
                    ix.spec.name
                ))
                .into());
            }
        }
        let mut batch = WriteBatch::new();
        let mut defs = Vec::with_capacity(new.len());
        if !new.is_empty() {
            let next = match store.db.get_cf(&store.dd, NEXT_ID_KEY)? {
                Some(v) => format::decode_next_id(&v)?,
                None => format::FIRST_ID,
            };
            let count = u32::try_from(new.len()).unwrap_or(u32::MAX);
            let after = next
                .checked_add(count)
                .ok_or_else(|| Error::invalid_argument("index ids are exhausted (2^32)"))?;
            for (ix, id) in new.iter().zip(next..) {
                defs.push(IndexDef {
                    id,
                    kind: IndexKind::Secondary,
                    unique: ix.spec.unique,
                    key_parts: ix.spec.key_parts,
                    name: ix.spec.name.clone(),
                });
                batch.put_cf(&store.dd, &build_key(id), name);
            }
            batch.put_cf(&store.dd, NEXT_ID_KEY, &format::encode_next_id(after));
            store.db.write(batch)?;
        }
        let sorter = store.db.external_sorter();
        Ok(IndexBuild {
            store,
            name: name.to_vec(),
            base,
            new: defs,
            null_offsets: new.iter().map(|ix| ix.null_offsets.clone()).collect(),
            sorter: Some(sorter),
            entries: 0,
            ingested: None,
            caller_data: None,
            captured: None,
            changed: Vec::new(),
            pending: WriteBatch::new(),
            pending_bytes: 0,
        })
    }

    /// Makes `build` online: from now on, the primary keys of the rows writers change in the
    /// table are recorded ([`crate::capture`]), so that the build can read the rows at a
    /// snapshot while writes go on, and bring the new indexes up to date at the end
    /// ([`IndexBuild::take_changed_rows`]). Call it while no transaction has written the
    /// table (MariaDB: the exclusive metadata lock of the ALTER's prepare), before the
    /// build's snapshot. It waits for a bulk load committing into the table to finish (the
    /// table's write lock); a bulk load that holds rows of the table is refused at its
    /// commit while the build runs. `NotSupported` for a build that adds a unique index
    /// (writers would have to check the new index; build it with writers kept out);
    /// `Busy` if the table changed since the build began.
    pub fn capture_build_changes(&self, build: &mut IndexBuild) -> Result<()> {
        if let Some(ix) = build.new.iter().find(|ix| ix.unique) {
            return Err(Error::not_supported(format!(
                "online index build of table {}: unique index `{}` cannot be built while \
                 writers go on (LOCK=SHARED builds it)",
                name_str(&build.name),
                ix.name
            ))
            .into());
        }
        let table = self.open_table(&build.name)?.ok_or_else(|| {
            Error::not_found(format!(
                "online index build: table {} does not exist",
                name_str(&build.name)
            ))
        })?;
        if table.def() != &build.base {
            return Err(Error::busy(format!(
                "online index build of table {}: the table's definition changed since the \
                 build began",
                name_str(&build.name)
            ))
            .into());
        }
        // A bulk load's commit holds the write lock exclusive from its check of the capture
        // to its ingest: the capture begins before or after all of it.
        let mut locker = self.begin_session(SessionOptions::default())?;
        locker.lock_for_ingest(&table)?;
        table.capture().start();
        locker.rollback()?;
        build.captured = Some(table);
        Ok(())
    }

    /// Ends `build` by making it the table's definition: the indexes in `order` (each an
    /// existing index of the table's definition when the build began, or one of the
    /// build's), in that order; the existing indexes `order` leaves out are dropped (their
    /// entries range-deleted). `version` (empty: none) is recorded as the definition's
    /// version ([`HandlerEngine::definition_version`]). Everything in one batch. Returns the
    /// table as it is now. Index 0 (the primary key) must stay first; every new index must
    /// be placed; `Busy` if the table's definition changed since the build began. If the
    /// change is refused or its batch cannot be written, the build is aborted (its entries
    /// removed) and the table stays as it was.
    pub fn commit_index_build(
        &self,
        build: IndexBuild,
        order: &[IndexSlot],
        version: &[u8],
    ) -> Result<Arc<Table>> {
        let _ddl = self.ddl_lock();
        let mut build = build;
        let written = build
            .write_pending()
            .and_then(|()| self.write_index_change(&build, order, version));
        let (def, dropped) = match written {
            Ok(done) => done,
            Err(e) => {
                if let Err(undo) = self.discard_indexes(build.base.table_id, &build.new) {
                    log::warn!(
                        "in-place index change of table {}: removing the build's entries \
                         after a failed commit: {undo} (the next open removes them)",
                        name_str(&build.name)
                    );
                }
                return Err(e);
            }
        };
        self.free_index_files(def.table_id, &dropped);
        let store = self.store();
        let counters = load_counters(store, def.table_id)?;
        let table = Arc::new(Table::new(Arc::clone(store), def, counters)?);
        self.replace_cached(&build.name, Some(Arc::clone(&table)));
        Ok(table)
    }

    /// Checks `order` against the table and writes the batch of
    /// [`Self::commit_index_build`]; returns the new definition and the dropped indexes.
    fn write_index_change(
        &self,
        build: &IndexBuild,
        order: &[IndexSlot],
        version: &[u8],
    ) -> Result<(TableDef, Vec<IndexDef>)> {
        let name = build.name.as_slice();
        let what = || format!("in-place index change of table {}", name_str(name));
        let current = self.read_def(name)?;
        if current.as_ref() != Some(&build.base) {
            return Err(Error::busy(format!(
                "{}: the table's definition changed while its indexes were built",
                what()
            ))
            .into());
        }
        let base = &build.base;
        let mut indexes: Vec<IndexDef> = Vec::with_capacity(order.len());
        let mut kept = vec![false; base.indexes.len()];
        let mut placed = vec![false; build.new.len()];
        for slot in order {
            let (def, seen) = match *slot {
                IndexSlot::Existing(i) => (base.indexes.get(i), kept.get_mut(i)),
                IndexSlot::New(i) => (build.new.get(i), placed.get_mut(i)),
            };
            match (def, seen) {
                (Some(def), Some(seen)) if !*seen => {
                    *seen = true;
                    indexes.push(def.clone());
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "{}: index slot {slot:?} does not exist or is given twice",
                        what()
                    ))
                    .into());
                }
            }
        }
        if indexes.first().map(|ix| ix.id) != base.indexes.first().map(|ix| ix.id)
            || indexes
                .iter()
                .skip(1)
                .any(|ix| ix.kind != IndexKind::Secondary)
            || placed.contains(&false)
        {
            return Err(Error::invalid_argument(format!(
                "{}: the primary key must stay first, only secondary indexes follow it, and \
                 every new index must be placed ({order:?})",
                what()
            ))
            .into());
        }
        let dropped: Vec<IndexDef> = base
            .indexes
            .iter()
            .zip(&kept)
            .filter(|(_, k)| !**k)
            .map(|(ix, _)| ix.clone())
            .collect();
        let def = TableDef {
            table_id: base.table_id,
            key_format: base.key_format,
            indexes,
            caller_data: build
                .caller_data
                .clone()
                .unwrap_or_else(|| base.caller_data.clone()),
        };
        let store = self.store();
        let mut batch = WriteBatch::new();
        batch.put_cf(&store.dd, &table_key(name), &format::encode_table(&def)?);
        for ix in &dropped {
            let (lo, hi) = index_key_range(ix.id);
            batch.delete_range_cf(&store.data, &lo, &hi);
        }
        for ix in &build.new {
            batch.delete_cf(&store.dd, &build_key(ix.id));
        }
        let version_key = definition_version_key(name);
        if version.is_empty() {
            batch.delete_cf(&store.dd, &version_key);
        } else {
            batch.put_cf(&store.dd, &version_key, version);
        }
        store.db.write(batch)?;
        Ok((def, dropped))
    }

    /// Ends `build` without changing the table: its entries are range-deleted and its
    /// records removed, in one batch.
    pub fn abort_index_build(&self, build: IndexBuild) -> Result<()> {
        let _ddl = self.ddl_lock();
        self.discard_indexes(build.base.table_id, &build.new)
    }

    /// Range-deletes the entries of `indexes` (of table `table_id`) and their build records.
    fn discard_indexes(&self, table_id: u32, indexes: &[IndexDef]) -> Result<()> {
        if indexes.is_empty() {
            return Ok(());
        }
        let store = self.store();
        let mut batch = WriteBatch::new();
        for ix in indexes {
            let (lo, hi) = index_key_range(ix.id);
            batch.delete_range_cf(&store.data, &lo, &hi);
            batch.delete_cf(&store.dd, &build_key(ix.id));
        }
        store.db.write(batch)?;
        self.free_index_files(table_id, indexes);
        Ok(())
    }

    /// Removes the entries of every index build a crash interrupted (its `B` record is
    /// still there). Runs at open, before any session exists.
    pub(crate) fn drop_unfinished_builds(&self) -> Result<()> {
        let store = self.store();
        let prefix = build_prefix();
        let mut opts = ReadOptions::default().lower_bound(prefix.clone());
        if let Some(hi) = prefix_successor(&prefix) {
            opts = opts.upper_bound(hi);
        }
        let mut unfinished = Vec::new();
        {
            let mut it = store.db.iter_cf(&store.dd, opts)?;
            it.seek(&prefix)?;
            while it.valid() {
                let id = it
                    .key()
                    .get(1..5)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map(u32::from_be_bytes)
                    .ok_or_else(|| {
                        Error::corruption(format!(
                            "data dictionary: index build record {:02x?} is malformed",
                            it.key()
                        ))
                    })?;
                unfinished.push((id, it.value().to_vec()));
                it.next()?;
            }
        }
        for (id, table) in &unfinished {
            log::info!(
                "dropping index id {id} of table {}: its in-place build did not finish",
                name_str(table)
            );
        }
        let indexes: Vec<IndexDef> = unfinished
            .into_iter()
            .map(|(id, table)| IndexDef {
                id,
                kind: IndexKind::Secondary,
                unique: false,
                key_parts: 0,
                name: name_str(&table),
            })
            .collect();
        self.discard_indexes(0, &indexes)
    }

    /// The caller's version of table `name`'s definition, recorded by the last
    /// [`HandlerEngine::commit_index_build`] (`None`: none recorded since the table was
    /// created, renamed or truncated).
    pub fn definition_version(&self, name: &[u8]) -> Result<Option<Vec<u8>>> {
        let store = self.store();
        Ok(store.db.get_cf(&store.dd, &definition_version_key(name))?)
    }
}
