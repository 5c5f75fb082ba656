//! The handler engine: the data dictionary (CREATE, DROP, RENAME, TRUNCATE, open) and the
//! factory of sessions.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use riptide::{ColumnFamily, Db, Error, ErrorKind, OlderSnapshots, ReadOptions, WriteBatch};

use crate::error::Result;
use crate::format::{
    self, DD_CF_NAME, FIRST_ID, IndexDef, IndexKind, IndexSpec, NEXT_ID_KEY, StoredCounters,
    TableDef, VERSION_KEY, counters_key, definition_version_key, index_key_range, prefix_successor,
    table_key, temporary_key,
};
use crate::session::{Session, SessionOptions};
use crate::table::{Store, Table, load_counters};

/// How often [`HandlerEngine::wait_for_prepared`] looks again.
const PREPARED_POLL: Duration = Duration::from_millis(10);

/// MariaDB handler semantics over one Riptide database: see the crate documentation.
/// Thread-safe; share it by reference or `Arc`.
pub struct HandlerEngine {
    store: Arc<Store>,
    /// Serialises DDL (id allocation and dictionary entries).
    ddl: Mutex<()>,
    /// Open tables by name.
    tables: Mutex<HashMap<Vec<u8>, Arc<Table>>>,
    /// The caller's key format, recorded in every table created from now on.
    key_format: AtomicU8,
}

impl std::fmt::Debug for HandlerEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerEngine").finish_non_exhaustive()
    }
}

pub(crate) fn name_str(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

impl HandlerEngine {
    /// Opens the handler layer on `db`: creates the dictionary column family
    /// (`__riptide_dd`) and its version record on first use, checks the version otherwise,
    /// and migrates legacy taint records, if any (FORMAT.md, "Legacy taint records"). Data
    /// lives in the default column family.
    pub fn open(db: Arc<Db>) -> Result<HandlerEngine> {
        let dd = match db.cf(DD_CF_NAME) {
            Some(cf) => cf,
            None => db.create_cf(DD_CF_NAME)?,
        };
        match db.get_cf(&dd, VERSION_KEY)? {
            Some(v) => format::check_version(&v)?,
            None => db.put_cf(&dd, VERSION_KEY, &format::version_value())?,
        }
        let data = db.default_cf();
        migrate_legacy_taints(&db, &dd, &data)?;
        let engine = HandlerEngine {
            store: Arc::new(Store { db, dd, data }),
            ddl: Mutex::new(()),
            tables: Mutex::new(HashMap::new()),
            key_format: AtomicU8::new(0),
        };
        engine.drop_leftover_temporaries()?;
        engine.drop_unfinished_builds()?;
        Ok(engine)
    }

    /// Sets the version of the caller's key encoding that every table created from now on
    /// records ([`TableDef::key_format`], [`Table::key_format`]; default 0). The handler
    /// treats keys as bytes; a caller that changes how it encodes key parts bumps its number,
    /// and reads each table with the encoding it was created with (the MariaDB plugin:
    /// `plugin-shim/ha_riptide.cc`, `KEY_FORMAT_*`). `InvalidArgument` above
    /// [`crate::MAX_KEY_FORMAT`].
    pub fn set_key_format(&self, format: u8) -> Result<()> {
        if format > crate::MAX_KEY_FORMAT {
            return Err(Error::invalid_argument(format!(
                "key format {format} is above {}",
                crate::MAX_KEY_FORMAT
            ))
            .into());
        }
        self.key_format.store(format, Ordering::Relaxed);
        Ok(())
    }

    /// The database underneath.
    pub fn db(&self) -> &Arc<Db> {
        &self.store.db
    }

    /// The id of the data dictionary's column family (`__riptide_dd`).
    pub(crate) fn dictionary_cf_id(&self) -> u32 {
        self.store.dd.id()
    }

    /// Creates table `name` with `indexes` (index 0: [`IndexKind::Primary`] or
    /// [`IndexKind::HiddenPk`]; the others [`IndexKind::Secondary`]) and auto-increment
    /// start `autoinc_start` (0 or 1: start at 1). Allocates fresh index ids (never reused,
    /// so a table created again under an old name never sees old rows) and writes the
    /// dictionary in one batch. A leftover entry under `name` (a crash between this write and
    /// the server's own metadata) is dropped in the same batch.
    pub fn create_table(
        &self,
        name: &[u8],
        indexes: &[IndexSpec],
        autoinc_start: u64,
    ) -> Result<Arc<Table>> {
        self.create(name, indexes, autoinc_start, false)
    }

    /// Creates a temporary table (`CREATE TEMPORARY TABLE`): as [`HandlerEngine::create_table`],
    /// and in the same batch a marker (`P` + name) that makes the next [`HandlerEngine::open`]
    /// drop it with its rows, so a temporary table never outlives the server process that
    /// created it (the server forgets its temporary tables at a crash or restart). Its rows
    /// are transactional like any table's.
    pub fn create_temporary_table(
        &self,
        name: &[u8],
        indexes: &[IndexSpec],
        autoinc_start: u64,
    ) -> Result<Arc<Table>> {
        self.create(name, indexes, autoinc_start, true)
    }

    fn create(
        &self,
        name: &[u8],
        indexes: &[IndexSpec],
        autoinc_start: u64,
        temporary: bool,
    ) -> Result<Arc<Table>> {
        check_specs(name, indexes)?;
        let _ddl = self.ddl.lock();
        let mut batch = WriteBatch::new();
        let replaced = self.read_def(name)?;
        if let Some(old) = &replaced {
            self.drop_into(&mut batch, old);
        }
        let table = self.create_into(&mut batch, name, indexes, autoinc_start, Vec::new())?;
        if temporary {
            batch.put_cf(&self.store.dd, &temporary_key(name), b"");
        } else {
            batch.delete_cf(&self.store.dd, &temporary_key(name));
        }
        batch.delete_cf(&self.store.dd, &definition_version_key(name));
        self.store.db.write(batch)?;
        if let Some(old) = &replaced {
            self.free_dropped_files(old);
        }
        let table = Arc::new(table);
        self.replace_cached(name, Some(Arc::clone(&table)));
        Ok(table)
    }

    /// Drops table `name`: one range delete per index prefix, the counters and the
    /// dictionary entry, in one batch. Returns whether the table existed.
    pub fn drop_table(&self, name: &[u8]) -> Result<bool> {
        let _ddl = self.ddl.lock();
        let Some(def) = self.read_def(name)? else {
            self.replace_cached(name, None);
            return Ok(false);
        };
        let mut batch = WriteBatch::new();
        self.drop_into(&mut batch, &def);
        batch.delete_cf(&self.store.dd, &table_key(name));
        batch.delete_cf(&self.store.dd, &temporary_key(name));
        batch.delete_cf(&self.store.dd, &definition_version_key(name));
        self.store.db.write(batch)?;
        self.free_dropped_files(&def);
        self.replace_cached(name, None);
        Ok(true)
    }

    /// Whether `name` is a temporary table (created by
    /// [`HandlerEngine::create_temporary_table`] and not dropped since).
    pub fn is_temporary(&self, name: &[u8]) -> Result<bool> {
        Ok(self
            .store
            .db
            .get_cf(&self.store.dd, &temporary_key(name))?
            .is_some())
    }

    /// Marks table `name` temporary (`temporary`: the next [`HandlerEngine::open`] drops it
    /// with its rows, as a table made by [`HandlerEngine::create_temporary_table`]) or
    /// removes the mark. The plugin marks the target table of an ALTER TABLE copy while rows
    /// are copied into it in several commits, so a crash mid-copy leaves no half-filled
    /// table behind, and unmarks it once the copy is complete. `NotFound` if the table does
    /// not exist. The mark is written (to the WAL) before anything the caller writes after
    /// this returns, so any row that survives a crash finds the mark in place.
    pub fn mark_temporary(&self, name: &[u8], temporary: bool) -> Result<()> {
        let _ddl = self.ddl.lock();
        if self.read_def(name)?.is_none() {
            return Err(Error::not_found(format!(
                "mark table {} {}: the table does not exist",
                name_str(name),
                if temporary { "temporary" } else { "permanent" }
            ))
            .into());
        }
        let key = temporary_key(name);
        if temporary {
            self.store.db.put_cf(&self.store.dd, &key, b"")?;
        } else {
            self.store.db.delete_cf(&self.store.dd, &key)?;
        }
        Ok(())
    }

    /// Drops every table still marked temporary: left by a server that crashed or was shut
    /// down with temporary tables open. Runs at open, before any session exists.
    fn drop_leftover_temporaries(&self) -> Result<()> {
        let prefix = temporary_key(b"");
        let mut opts = ReadOptions::default().lower_bound(prefix.clone());
        if let Some(hi) = prefix_successor(&prefix) {
            opts = opts.upper_bound(hi);
        }
        let mut names = Vec::new();
        {
            let mut it = self.store.db.iter_cf(&self.store.dd, opts)?;
            it.seek(&prefix)?;
            while it.valid() {
                if let Some(n) = it.key().get(1..) {
                    names.push(n.to_vec());
                }
                it.next()?;
            }
        }
        for name in names {
            if self.drop_table(&name)? {
                log::info!("dropped leftover temporary table {}", name_str(&name));
            } else {
                self.store
                    .db
                    .delete_cf(&self.store.dd, &temporary_key(&name))?;
            }
        }
        Ok(())
    }

    /// Renames table `from` to `to`. `NotFound` if `from` does not exist, `Busy` if `to`
    /// does. Ids, rows and counters stay.
    pub fn rename_table(&self, from: &[u8], to: &[u8]) -> Result<()> {
        let _ddl = self.ddl.lock();
        let Some(def) = self.read_def(from)? else {
            return Err(
                Error::not_found(format!("table {} does not exist", name_str(from))).into(),
            );
        };
        if self.read_def(to)?.is_some() {
            return Err(Error::busy(format!("table {} already exists", name_str(to))).into());
        }
        let mut batch = WriteBatch::new();
        batch.put_cf(&self.store.dd, &table_key(to), &format::encode_table(&def)?);
        batch.delete_cf(&self.store.dd, &table_key(from));
        if self.is_temporary(from)? {
            batch.delete_cf(&self.store.dd, &temporary_key(from));
            batch.put_cf(&self.store.dd, &temporary_key(to), b"");
        }
        // The definition's version moves with it (MariaDB renames the `.frm` too).
        let (from_version, to_version) = (definition_version_key(from), definition_version_key(to));
        match self.store.db.get_cf(&self.store.dd, &from_version)? {
            Some(v) => {
                batch.delete_cf(&self.store.dd, &from_version);
                batch.put_cf(&self.store.dd, &to_version, &v);
            }
            None => {
                batch.delete_cf(&self.store.dd, &to_version);
            }
        }
        self.store.db.write(batch)?;
        let mut tables = self.tables.lock();
        if let Some(t) = tables.remove(from) {
            tables.insert(to.to_vec(), t);
        }
        Ok(())
    }

    /// Empties table `name`: new index ids (the old keys go with one range delete each, in
    /// the same batch), auto-increment back to 1, row estimate 0; the caller data stays.
    /// `NotFound` if it does not exist.
    pub fn truncate_table(&self, name: &[u8]) -> Result<Arc<Table>> {
        let _ddl = self.ddl.lock();
        let Some(old) = self.read_def(name)? else {
            return Err(
                Error::not_found(format!("table {} does not exist", name_str(name))).into(),
            );
        };
        let specs: Vec<IndexSpec> = old
            .indexes
            .iter()
            .map(|ix| IndexSpec {
                kind: ix.kind,
                unique: ix.unique,
                key_parts: ix.key_parts,
                name: ix.name.clone(),
            })
            .collect();
        let mut batch = WriteBatch::new();
        self.drop_into(&mut batch, &old);
        // The caller's data goes with the table: handlers open on it still read and write
        // rows the way it describes.
        let table = self.create_into(&mut batch, name, &specs, 1, old.caller_data.clone())?;
        self.store.db.write(batch)?;
        self.free_dropped_files(&old);
        let table = Arc::new(table);
        self.replace_cached(name, Some(Arc::clone(&table)));
        Ok(table)
    }

    /// Waits until no outstanding prepared transaction (two-phase commit: `XA PREPARE`, or
    /// the server's internal prepare, in this process or recovered from the WAL after a
    /// restart) holds a write to a key of any index of table `name`; fails with `TimedOut`
    /// after `timeout`, naming the table, the index and the xid (zero: look once). Call it
    /// before a DDL that range-deletes or replaces the table's keys (`TRUNCATE`, `DROP`,
    /// `RENAME`, a copying `ALTER TABLE`): a prepared transaction's rows are not in the
    /// database yet, so its later commit would write them into a table that is gone or
    /// emptied, where they are lost, while `XA COMMIT` reports success. InnoDB makes such
    /// DDL wait for the transaction's locks and fail with a lock wait timeout (MariaDB error
    /// 1205); this is the same check. A table that is not in the dictionary has nothing to
    /// wait for: `Ok` (the DDL itself reports it missing). Looks every 10 ms. The caller
    /// keeps new transactions from writing the table meanwhile (MariaDB: the DDL's exclusive
    /// metadata lock), or one could prepare right after this returns.
    pub fn wait_for_prepared(&self, name: &[u8], timeout: Duration) -> Result<()> {
        let Some(def) = self.read_def(name)? else {
            return Ok(());
        };
        let ranges: Vec<(usize, Vec<u8>, Vec<u8>)> = def
            .indexes
            .iter()
            .enumerate()
            .map(|(i, ix)| {
                let (lo, hi) = index_key_range(ix.id);
                (i, lo, hi)
            })
            .collect();
        let started = Instant::now();
        let deadline = started.checked_add(timeout);
        loop {
            let holder = ranges.iter().find_map(|(i, lo, hi)| {
                self.store
                    .db
                    .prepared_write_in_range(&self.store.data, lo, Some(hi))
                    .map(|(xid, key)| (*i, xid, key))
            });
            let Some((i, xid, key)) = holder else {
                return Ok(());
            };
            let now = Instant::now();
            let left = match deadline {
                Some(d) if now >= d => {
                    let index = def.indexes.get(i).map_or("", |ix| ix.name.as_str());
                    return Err(Error::new(
                        ErrorKind::TimedOut,
                        format!(
                            "lock wait timeout after {}ms (limit {}ms): table {} is written \
                             by prepared transaction {xid} (index #{i} `{index}`, key \
                             \"{}\"); finish it with XA COMMIT or XA ROLLBACK first",
                            started.elapsed().as_millis(),
                            timeout.as_millis(),
                            name_str(name),
                            key.escape_ascii()
                        ),
                    )
                    .into());
                }
                Some(d) => d - now,
                None => PREPARED_POLL,
            };
            std::thread::sleep(PREPARED_POLL.min(left));
        }
    }

    /// Opens table `name` (shared with every other opener); `None` if the dictionary has no
    /// such table.
    pub fn open_table(&self, name: &[u8]) -> Result<Option<Arc<Table>>> {
        if let Some(t) = self.tables.lock().get(name) {
            return Ok(Some(Arc::clone(t)));
        }
        let _ddl = self.ddl.lock();
        if let Some(t) = self.tables.lock().get(name) {
            return Ok(Some(Arc::clone(t)));
        }
        let Some(def) = self.read_def(name)? else {
            return Ok(None);
        };
        let counters = load_counters(&self.store, def.table_id)?;
        let table = Arc::new(Table::new(Arc::clone(&self.store), def, counters)?);
        self.tables.lock().insert(name.to_vec(), Arc::clone(&table));
        Ok(Some(table))
    }

    /// The names of every table in the dictionary, in byte order.
    pub fn table_names(&self) -> Result<Vec<Vec<u8>>> {
        let prefix = table_key(b"");
        let mut opts = ReadOptions::default().lower_bound(prefix.clone());
        if let Some(hi) = prefix_successor(&prefix) {
            opts = opts.upper_bound(hi);
        }
        let mut it = self.store.db.iter_cf(&self.store.dd, opts)?;
        it.seek(&prefix)?;
        let mut names = Vec::new();
        while it.valid() {
            if let Some(n) = it.key().get(1..) {
                names.push(n.to_vec());
            }
            it.next()?;
        }
        Ok(names)
    }

    /// Begins a session: one transaction with statement savepoints (see [`Session`]).
    pub fn begin_session(&self, opts: SessionOptions) -> Result<Session> {
        Session::begin(Arc::clone(&self.store), opts)
    }

    /// Persists the exact counters of every open table (so a clean restart continues
    /// auto-increment and row ids without a gap). Call before closing the database.
    pub fn close(&self) -> Result<()> {
        let tables: Vec<Arc<Table>> = self.tables.lock().values().cloned().collect();
        let mut first_error = None;
        for t in tables {
            if let Err(e) = t.persist_exact() {
                log::error!("table id {}: persisting counters: {e}", t.id());
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The database and its column families.
    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Serialises DDL: held while a dictionary entry is read and rewritten.
    pub(crate) fn ddl_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.ddl.lock()
    }

    pub(crate) fn read_def(&self, name: &[u8]) -> Result<Option<TableDef>> {
        match self.store.db.get_cf(&self.store.dd, &table_key(name))? {
            Some(v) => Ok(Some(format::decode_table(&v, &name_str(name))?)),
            None => Ok(None),
        }
    }

    /// Adds to `batch` the allocation of ids and the entries of a new table, which keeps
    /// `caller_data` ([`TableDef::caller_data`]).
    fn create_into(
        &self,
        batch: &mut WriteBatch,
        name: &[u8],
        specs: &[IndexSpec],
        autoinc_start: u64,
        caller_data: Vec<u8>,
    ) -> Result<Table> {
        let next = match self.store.db.get_cf(&self.store.dd, NEXT_ID_KEY)? {
            Some(v) => format::decode_next_id(&v)?,
            None => FIRST_ID,
        };
        let needed = u32::try_from(specs.len().saturating_add(1)).unwrap_or(u32::MAX);
        let after = next
            .checked_add(needed)
            .ok_or_else(|| Error::invalid_argument("index ids are exhausted (2^32)"))?;
        let table_id = next;
        let indexes: Vec<IndexDef> = specs
            .iter()
            .zip(next.saturating_add(1)..)
            .map(|(s, id)| IndexDef {
                id,
                kind: s.kind,
                unique: s.unique || s.kind == IndexKind::Primary,
                key_parts: s.key_parts,
                name: s.name.clone(),
            })
            .collect();
        let def = TableDef {
            table_id,
            key_format: self.key_format.load(Ordering::Relaxed),
            indexes,
            caller_data,
        };
        let stored = StoredCounters {
            autoinc_ceiling: autoinc_start.max(1),
            rowid_ceiling: 1,
            rows: 0,
            index_stats: None,
        };
        batch.put_cf(&self.store.dd, NEXT_ID_KEY, &format::encode_next_id(after));
        batch.put_cf(
            &self.store.dd,
            &table_key(name),
            &format::encode_table(&def)?,
        );
        batch.put_cf(
            &self.store.dd,
            &counters_key(table_id),
            &format::encode_counters(&stored),
        );
        Table::new(Arc::clone(&self.store), def, stored)
    }

    /// Adds to `batch` the deletion of a table's keys and counters (not its name entry).
    fn drop_into(&self, batch: &mut WriteBatch, def: &TableDef) {
        for ix in &def.indexes {
            let (lo, hi) = index_key_range(ix.id);
            batch.delete_range_cf(&self.store.data, &lo, &hi);
        }
        batch.delete_cf(&self.store.dd, &counters_key(def.table_id));
    }

    /// After the batch of [`Self::drop_into`] is written: removes at once the table files
    /// that hold nothing but the dropped table's keys (`Db::delete_files_in_range`, as
    /// MyRocks does on a drop), instead of leaving their bytes on disk until compaction
    /// reaches them (an `ALTER TABLE` copy otherwise left the old copy's size taken). The
    /// index ids of a dropped table are never read again (the server's metadata lock keeps
    /// every session off the table while it is dropped, and new tables get new ids), so the
    /// snapshots older than the drop do not keep the files. The drop has happened either
    /// way: a failure here is logged, and compaction frees the space later.
    fn free_dropped_files(&self, def: &TableDef) {
        self.free_index_files(def.table_id, &def.indexes);
    }

    /// [`Self::free_dropped_files`] for some indexes of table `table_id`.
    pub(crate) fn free_index_files(&self, table_id: u32, indexes: &[IndexDef]) {
        for ix in indexes {
            let (lo, hi) = index_key_range(ix.id);
            if let Err(e) = self.store.db.delete_files_in_range(
                &self.store.data,
                &lo,
                &hi,
                OlderSnapshots::Ignore,
            ) {
                log::warn!(
                    "table id {table_id} index id {}: freeing the dropped index's files: {e}",
                    ix.id
                );
            }
        }
    }

    pub(crate) fn replace_cached(&self, name: &[u8], table: Option<Arc<Table>>) {
        let mut tables = self.tables.lock();
        if let Some(old) = tables.remove(name) {
            old.mark_dropped();
        }
        if let Some(t) = table {
            tables.insert(name.to_vec(), t);
        }
    }
}

/// Migrates legacy taint records (`X` + secondary entry key). Older builds wrote them while
/// the transaction layer dropped a deletion followed by a put: such an entry may have been
/// put twice with no delete in between, which a single delete cannot undo. In one batch,
/// each is rewritten as a plain delete (covering every older put) followed by one put of
/// its current value if it exists, and its record is deleted; from then on the entry is
/// single-deleted like any other. Runs before any session exists; a crash before the batch
/// is written leaves the records for the next open.
fn migrate_legacy_taints(db: &Db, dd: &ColumnFamily, data: &ColumnFamily) -> Result<()> {
    let all = format::legacy_taint_prefix();
    let mut opts = ReadOptions::default().lower_bound(all.clone());
    if let Some(hi) = prefix_successor(&all) {
        opts = opts.upper_bound(hi);
    }
    let mut batch = WriteBatch::new();
    let mut count = 0usize;
    let mut it = db.iter_cf(dd, opts)?;
    it.seek(&all)?;
    while it.valid() {
        let key = it.key();
        if let Some(entry) = format::legacy_taint_entry(key) {
            batch.delete_cf(data, entry);
            if let Some(v) = db.get_cf(data, entry)? {
                batch.put_cf(data, entry, &v);
            }
            count += 1;
        }
        batch.delete_cf(dd, key);
        it.next()?;
    }
    drop(it);
    if count > 0 {
        db.write(batch)?;
        log::info!("migrated {count} legacy taint records (secondary entries put twice)");
    }
    Ok(())
}

fn check_specs(name: &[u8], specs: &[IndexSpec]) -> Result<()> {
    let bad = |why: String| -> crate::error::HandlerError {
        Error::invalid_argument(format!("create table {}: {why}", name_str(name))).into()
    };
    if name.is_empty() {
        return Err(bad("empty name".into()));
    }
    let Some((first, rest)) = specs.split_first() else {
        return Err(bad("no index (give a primary or hidden primary key)".into()));
    };
    if first.kind == IndexKind::Secondary {
        return Err(bad(
            "index #0 must be the primary or hidden primary key".into()
        ));
    }
    if let Some(i) = rest.iter().position(|s| s.kind != IndexKind::Secondary) {
        return Err(bad(format!("index #{} must be secondary", i + 1)));
    }
    if specs.len() > usize::from(u16::MAX) {
        return Err(bad("too many indexes".into()));
    }
    Ok(())
}
