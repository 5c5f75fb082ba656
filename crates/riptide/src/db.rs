//! [`Db`]: the engine facade. Opening and recovery, the write path (group commit -> WAL ->
//! memtables), reads, column families, flush, statistics and close.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex, RwLock};
use riptide_common::fs::FileSystem;
use riptide_common::write_batch::{BatchMarker, WriteBatch as RawBatch};
use riptide_common::{CfId, DEFAULT_CF_ID, Error, ErrorKind, IoResultExt, Result, SeqNo};
use riptide_compaction::{CompactionRegistry, VersionEdit, VersionSet};
use riptide_memtable::Memtable;
use riptide_sstable::{BlockCache, EntryEstimate};
use riptide_txn::{LockManager, LockManagerOptions, Xid};
use riptide_wal::{GroupCommit, Wal};

use crate::batch::WriteBatch;
use crate::cf::{CfData, CfView, ColumnFamily, KeyVersion};
use crate::checkpoint::{CheckpointInfo, WalPins};
use crate::delete_files::{DeletedFiles, OlderSnapshots};
use crate::ingest::IngestWriter;
use crate::iterator::DbIterator;
use crate::lock::DirLock;
use crate::option_table::OptionValue;
use crate::options::{Options, ReadOptions};
use crate::read_point::ReadPoint;
use crate::snapshot::{Snapshot, SnapshotList};
use crate::stats::{Counters, LevelStats, Statistics};
use crate::transaction::{PreparedTxns, Transaction, TransactionOptions};
use crate::write_controller::{Pressure, WriteState, decide, delay_for};

/// Name of the default column family, which always exists.
pub const DEFAULT_CF_NAME: &str = "default";

/// The largest key plus value one write may carry: the table format's limit on one entry
/// (`riptide_sstable::writer::MAX_ENTRY_SIZE`, 1 GiB) less the 8-byte trailer the engine
/// adds to every key. A larger write is refused with `InvalidArgument` when it is made
/// (`Db::put`, `Db::write`, `Transaction::put`...), never later by a flush.
pub const MAX_KEY_VALUE_LEN: usize =
    riptide_sstable::writer::MAX_ENTRY_SIZE - riptide_common::key::TRAILER_LEN;

/// The largest encoded write batch: one WAL record's payload.
const MAX_BATCH_LEN: usize = riptide_wal::MAX_PAYLOAD_LEN;

/// Refuses a key and value whose entry the table format could not store
/// ([`MAX_KEY_VALUE_LEN`]), naming the sizes and the key's first bytes.
pub(crate) fn check_entry_size(key: &[u8], value: &[u8]) -> Result<()> {
    let len = key.len().saturating_add(value.len());
    if len <= MAX_KEY_VALUE_LEN {
        return Ok(());
    }
    let shown = key.get(..key.len().min(16)).unwrap_or_default();
    Err(Error::invalid_argument(format!(
        "a write of a {}-byte key and a {}-byte value ({len} bytes) is larger than the \
         {MAX_KEY_VALUE_LEN}-byte limit of one entry (key starts {shown:02x?})",
        key.len(),
        value.len()
    )))
}

/// How often a waiting writer or `flush()` re-checks progress even without a wake-up.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// State shared with the background worker.
#[derive(Debug, Default)]
pub(crate) struct BgState {
    /// A memtable may be waiting for flush.
    pub(crate) pending_flush: bool,
    /// A compaction may be due.
    pub(crate) pending_compaction: bool,
    /// The worker should exit.
    pub(crate) shutdown: bool,
    /// The first background failure; the database is read-only from then on.
    pub(crate) error: Option<Error>,
    /// Flush threads started so far (numbered from 0); those numbered at or above
    /// `max_background_flushes` wait until it is raised again.
    pub(crate) flush_threads: usize,
    /// Compaction threads started so far, likewise against `max_background_compactions`.
    pub(crate) compaction_threads: usize,
}

/// A batch in the group-commit queue, with whether its writer wants the WAL synced before
/// it returns (in [`SyncMode::Full`](crate::SyncMode::Full); a group syncs if any member
/// wants it).
pub(crate) struct Queued {
    batch: RawBatch,
    sync: bool,
}

/// Everything shared by the `Db` handle, its background worker and in-flight writers.
pub(crate) struct DbInner {
    pub(crate) path: PathBuf,
    /// The options the engine runs with: read through [`DbInner::options`] where they are
    /// used, replaced whole by [`Db::set_option`] (only the options
    /// [`OptionSpec::is_dynamic`](crate::OptionSpec::is_dynamic) names change).
    options: ArcSwap<Options>,
    /// Held by [`Db::set_option`] while it replaces `options`.
    option_change: Mutex<()>,
    pub(crate) wal: Wal,
    pub(crate) commit_queue: GroupCommit<Queued>,
    /// Held by the group-commit leader while it writes, and by anyone who swaps memtables.
    pub(crate) write_lock: Mutex<()>,
    pub(crate) versions: Mutex<VersionSet>,
    pub(crate) cfs: RwLock<BTreeMap<CfId, Arc<CfData>>>,
    /// The default column family (never dropped), kept apart so reads need no map lookup.
    pub(crate) default_cf: Arc<CfData>,
    /// The last sequence number whose write is fully applied and visible.
    pub(crate) last_seqno: AtomicU64,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) cache: Arc<BlockCache>,
    pub(crate) counters: Counters,
    /// Running compactions, shared by the compaction threads and `compact_range`.
    pub(crate) registry: CompactionRegistry,
    pub(crate) bg: Mutex<BgState>,
    pub(crate) bg_cv: Condvar,
    pub(crate) closed: AtomicBool,
    /// Row locks of pessimistic transactions (and commit locks of optimistic ones). Shared
    /// with the transactions' interrupt handles, which may outlive the database.
    pub(crate) locks: Arc<LockManager>,
    /// The next transaction id (also the owner id of row locks).
    pub(crate) next_txn_id: AtomicU64,
    /// Pessimistic transactions that have written, for locking scans to find their
    /// uncommitted inserts.
    pub(crate) writers: crate::transaction::Writers,
    /// Every open transaction, for [`Db::transactions`].
    /// Shared with the lock manager's wait observer ([`Db::set_lock_wait_listener`]).
    pub(crate) live: Arc<crate::transaction::live::Live>,
    /// Running and recent flushes and compactions, for [`Db::background_jobs`].
    pub(crate) jobs: crate::jobs::BackgroundJobs,
    /// Prepared (two-phase) transactions not finished yet.
    pub(crate) prepared: PreparedTxns,
    /// WAL bytes written (since open) when each segment created since open began: how much
    /// WAL a memtable of that segment holds back ([`Options::max_total_wal_size`]).
    pub(crate) segment_start_bytes: Mutex<BTreeMap<u64, u64>>,
    /// [`DbInner::enforce_wal_bound`]'s fast path: while the WAL has written at most this
    /// many bytes since open, no column family can hold back more than the bound. Reset to
    /// 0 (check next time) by every segment rotation; read and written under `write_lock`.
    wal_bound_check_at: AtomicU64,
    /// WAL segments checkpoints in progress still copy: obsolete segments are removed only
    /// below the lowest (see [`crate::checkpoint`]).
    pub(crate) wal_pins: WalPins,
    /// The directory lock; released by close even if transactions still hold this state.
    dir_lock: Mutex<Option<DirLock>>,
}

/// An open Riptide database. Share it between threads with `Arc<Db>`; every method takes
/// `&self`. Dropping it closes it (use [`Db::close`] to see the error, if any).
///
/// ```
/// # fn main() -> riptide::Result<()> {
/// let dir = tempfile::tempdir().unwrap();
/// let db = riptide::Db::open(dir.path(), riptide::Options::default())?;
/// db.put(b"hello", b"world")?;
/// assert_eq!(db.get(b"hello")?, Some(b"world".to_vec()));
/// db.close()?;
/// # Ok(()) }
/// ```
pub struct Db {
    inner: Arc<DbInner>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Opens (or, with `create_if_missing`, creates) the database in directory `path`:
    /// takes the directory lock, loads the manifest, replays the WAL into memtables, flushes
    /// them to tables, and starts the background worker.
    ///
    /// Fails with `Busy` if another process (or `Db`) has it open, `Corruption` naming the
    /// file and offset if stored data is damaged beyond what the recovery mode tolerates.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let inner = Arc::new(crate::recovery::open(path.as_ref(), options)?);
        for cf in &inner.versions.lock().state().column_families {
            for (level, key) in &cf.compact_cursors {
                inner
                    .registry
                    .seed_round_robin_cursor(cf.id, *level, key.clone());
            }
        }
        crate::background::refresh_pending_compaction_bytes(
            &inner,
            &inner.versions.lock().current(),
        );
        let db = Db {
            workers: Mutex::new(Vec::new()),
            inner: Arc::clone(&inner),
        };
        // If a thread fails to start, dropping `db` stops the ones that did.
        crate::background::start(&inner, &mut db.workers.lock())?;
        db.inner.schedule_background();
        Ok(db)
    }

    /// The directory of this database.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The sequence number of the newest visible write.
    pub fn latest_seqno(&self) -> SeqNo {
        self.inner.last_seqno.load(Ordering::Acquire)
    }

    /// Sets `key` to `value` in the default column family.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        check_entry_size(key, value)?;
        let mut b = RawBatch::new();
        b.put(key, value);
        self.inner.write_raw(b)
    }

    /// Deletes `key` from the default column family (a no-op if absent).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let mut b = RawBatch::new();
        b.delete(key);
        self.inner.write_raw(b)
    }

    /// Deletes `key` from the default column family with a *single delete*: a tombstone
    /// that cancels out with the put it meets in compaction, leaving nothing behind, so
    /// delete-heavy workloads do not leave tombstones for scans to walk.
    ///
    /// The contract (RocksDB's `SingleDelete`): since the previous single delete of `key` (or
    /// ever), `key` was put exactly once and never deleted with [`Db::delete`]. The MariaDB
    /// handler keeps it for secondary index entries (put on insert, single-deleted on delete).
    /// If it is broken, reads of `key` are undefined: an older value may reappear.
    pub fn single_delete(&self, key: &[u8]) -> Result<()> {
        let mut b = RawBatch::new();
        b.single_delete(key);
        self.inner.write_raw(b)
    }

    /// Reads the newest value of `key` in the default column family.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(&self.default_cf(), key, &ReadOptions::default())
    }

    /// Sets `key` to `value` in `cf`.
    pub fn put_cf(&self, cf: &ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        check_entry_size(key, value)?;
        let mut b = RawBatch::new();
        b.put_cf(cf.id(), key, value);
        self.inner.write_raw(b)
    }

    /// Deletes `key` from `cf`.
    pub fn delete_cf(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        let mut b = RawBatch::new();
        b.delete_cf(cf.id(), key);
        self.inner.write_raw(b)
    }

    /// Single-deletes `key` from `cf` (see [`Db::single_delete`]).
    pub fn single_delete_cf(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        let mut b = RawBatch::new();
        b.single_delete_cf(cf.id(), key);
        self.inner.write_raw(b)
    }

    /// Reads the newest value of `key` in `cf`.
    pub fn get_cf(&self, cf: &ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_cf_opt(cf, key, &ReadOptions::default())
    }

    /// Reads `key` in `cf` with options (for example at a snapshot).
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        opts: &ReadOptions<'_>,
    ) -> Result<Option<Vec<u8>>> {
        self.inner.check_open()?;
        check_live(cf)?;
        let (view, snapshot) = ReadPoint::of(opts.snapshot).view(&self.inner, cf);
        self.inner
            .counted_get(&view, key, snapshot)
            .map_err(|e| e.with_context(format!("get in column family {:?}", cf.name())))
    }

    /// Every stored version of `key` in `cf`, in every memtable and table, newest source
    /// first (versions not yet removed by compaction; a debugging aid like RocksDB's
    /// `GetAllKeyVersions`).
    pub fn key_versions(&self, cf: &ColumnFamily, key: &[u8]) -> Result<Vec<KeyVersion>> {
        self.inner.check_open()?;
        check_live(cf)?;
        cf.data.view().key_versions(key)
    }

    /// Applies every write of `batch` atomically. Fails with `InvalidArgument` if a range
    /// delete in it has `start > end`.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        batch.check_range_deletes()?;
        self.inner.write_raw(batch.raw)
    }

    /// Deletes every key `k` with `start <= k < end` from the default column family with one
    /// range tombstone (see [`Db::delete_range_cf`]).
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        self.delete_range_cf(&self.default_cf(), start, end)
    }

    /// Deletes every key `k` with `start <= k < end` from `cf` with one *range tombstone*: it
    /// hides every version written before it of every key in the range, from `get`, iterators
    /// and later snapshots (snapshots taken before still see the keys), in O(1) for the caller
    /// whatever the number of keys (dropping a table or an index is one call over its key
    /// prefix). Keys written after it in the range are live. An empty range (`start == end`)
    /// deletes nothing; `start > end` fails with `InvalidArgument`.
    ///
    /// The tombstone is durable like any write (WAL, then flushed into tables); compaction
    /// drops the versions it covers, and drops the tombstone itself at the bottom level once
    /// no snapshot needs it.
    pub fn delete_range_cf(&self, cf: &ColumnFamily, start: &[u8], end: &[u8]) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range_cf(cf, start, end);
        self.write(b)
    }

    /// Takes a snapshot of the current state. Reads through it see exactly what was
    /// committed before this call, for as long as it lives.
    pub fn snapshot(&self) -> Snapshot {
        self.inner.take_snapshot()
    }

    /// An iterator over the default column family.
    pub fn iter(&self, opts: ReadOptions<'_>) -> Result<DbIterator> {
        self.iter_cf(&self.default_cf(), opts)
    }

    /// An iterator over `cf`, at the options' snapshot (or now) and within their bounds.
    pub fn iter_cf(&self, cf: &ColumnFamily, opts: ReadOptions<'_>) -> Result<DbIterator> {
        self.inner.check_open()?;
        check_live(cf)?;
        let point = ReadPoint::of(opts.snapshot);
        let (view, snapshot) = point.view(&self.inner, cf);
        let merged =
            view.merged_iter_within(opts.lower_bound.as_deref(), opts.upper_bound.as_deref());
        let it = DbIterator::new(view, merged, snapshot, opts.lower_bound, opts.upper_bound)?
            .with_scan_flush_trigger(self.inner.options().memtable_scan_flush_trigger);
        Ok(refreshing(&self.inner, cf, point, it))
    }

    /// About how many entries (every version and tombstone) of `cf` lie from `lower`
    /// (inclusive) to `upper` (exclusive; `None`: the end): the tables' share estimated from
    /// their index blocks at the resolution of a data block (RocksDB's approximate sizes; one
    /// data block per table is sampled for the entry density), plus the memtables' entries,
    /// counted while the lower bound ([`EntryEstimate::at_least`], which leaves out each
    /// table's first block of the range) is below `memtable_limit` (so a range the tables
    /// surely put at the limit or more is not walked in the memtables, and no walk goes past
    /// the limit) and estimated beyond that from the memtables' skiplists (RocksDB's
    /// `EstimateCount`), into `about` only. Cheap next to an iterator over the range; for query planning, not for
    /// answers. A range of a few keys that crosses a block boundary in a table is put at a
    /// whole block by `about`: decide on `at_least` whether a range is large.
    pub fn approximate_entries_cf(
        &self,
        cf: &ColumnFamily,
        lower: &[u8],
        upper: Option<&[u8]>,
        memtable_limit: u64,
    ) -> Result<EntryEstimate> {
        self.inner.check_open()?;
        check_live(cf)?;
        cf.data
            .view()
            .approximate_entries(lower, upper, memtable_limit)
    }

    /// About how many bytes of table files (on disk: flushed and compacted data, every
    /// version and tombstone) hold keys of `cf` from `lower` (inclusive) to `upper`
    /// (exclusive; `None`: the end), per level (`[0]` is L0; as many entries as the column
    /// family has levels). Files wholly inside the range count whole; a file that straddles
    /// a bound is cut at the data block the bound falls in (RocksDB's approximate sizes).
    /// Reads index blocks only; memtables are not counted.
    pub fn approximate_bytes_by_level_cf(
        &self,
        cf: &ColumnFamily,
        lower: &[u8],
        upper: Option<&[u8]>,
    ) -> Result<Vec<u64>> {
        self.inner.check_open()?;
        check_live(cf)?;
        cf.data.view().approximate_bytes_by_level(lower, upper)
    }

    /// Up to `n` distinct user keys of `cf` in [`lower`, `upper`) (`None`: no end), in order,
    /// spread evenly over the bytes of table files in the range: positions to sample a
    /// large range from (`ANALYZE TABLE`'s index statistics) without reading it all. The
    /// keys are data block boundaries taken from the tables' index blocks, so they need not
    /// be keys that exist; a seek to each lands at about `1/n` steps through the range's
    /// data. Reads index blocks only; the memtables are not sampled, so a range held only
    /// by them gives no keys.
    pub fn sample_keys_cf(
        &self,
        cf: &ColumnFamily,
        lower: &[u8],
        upper: Option<&[u8]>,
        n: usize,
    ) -> Result<Vec<Vec<u8>>> {
        self.inner.check_open()?;
        check_live(cf)?;
        cf.data.view().sample_keys(lower, upper, n)
    }

    /// Begins a transaction (see [`crate::transaction`] for isolation levels, optimistic and
    /// pessimistic concurrency, savepoints and two-phase commit).
    ///
    /// ```
    /// # fn main() -> riptide::Result<()> {
    /// use riptide::{Db, Options, TransactionOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Db::open(dir.path(), Options::default())?;
    /// let cf = db.default_cf();
    /// let txn = db.begin_transaction(TransactionOptions::default())?;
    /// txn.put(&cf, b"k", b"v")?;
    /// assert_eq!(txn.get(&cf, b"k")?, Some(b"v".to_vec())); // its own write
    /// assert_eq!(db.get(b"k")?, None); // not visible before commit
    /// txn.commit()?;
    /// assert_eq!(db.get(b"k")?, Some(b"v".to_vec()));
    /// # Ok(()) }
    /// ```
    pub fn begin_transaction(&self, opts: TransactionOptions) -> Result<Transaction> {
        Transaction::begin(Arc::clone(&self.inner), opts)
    }

    /// The xids of every prepared transaction not finished yet: those recovered from the WAL
    /// at open (after a crash between prepare and commit) and those prepared since.
    pub fn prepared_transactions(&self) -> Vec<Xid> {
        self.inner.prepared.xids()
    }

    /// Whether an outstanding prepared transaction (prepared in this process, or recovered
    /// from the WAL after a restart, and not committed or rolled back yet) wrote a key of
    /// `cf` in [`lower`, `upper`) (`None`: no upper bound): its xid and the first such key
    /// in its batch, for the first such transaction in xid order. A prepared transaction's
    /// writes are not in the database yet, so a range delete or a replaced key space
    /// there (a DDL such as `TRUNCATE`) would lose them at its commit: DDL waits until this
    /// returns `None` (see the `riptide-handler` crate's `wait_for_prepared`). Scans the
    /// prepared batches: meant for DDL, not per-row work.
    pub fn prepared_write_in_range(
        &self,
        cf: &ColumnFamily,
        lower: &[u8],
        upper: Option<&[u8]>,
    ) -> Option<(Xid, Vec<u8>)> {
        self.inner.prepared.writer_in_range(cf.id(), lower, upper)
    }

    /// Makes every write acknowledged so far durable: `fdatasync` of the current WAL segment
    /// (earlier ones were synced when they were closed). Needed after commits made with
    /// [`Transaction::set_commit_sync`]`(false)` or in a sync mode other than full; MariaDB's
    /// binary log asks for it (`commit_checkpoint_request`) before it forgets the
    /// transactions of a log file.
    ///
    /// # Errors
    ///
    /// `Io` if the sync fails (the WAL, and so the database, is read-only from then on);
    /// `Closed` after such a failure or once the database is closed.
    pub fn sync_wal(&self) -> Result<()> {
        self.inner.check_writable()?;
        let res = self.inner.wal.sync();
        if let Err(e) = &res {
            self.inner.note_wal_failure(e);
        }
        res
    }

    /// Commits the prepared transaction `xid` (for example one recovered after a crash).
    /// `NotFound` if no transaction is prepared under `xid`.
    pub fn commit_prepared(&self, xid: &Xid) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.finish_prepared(xid, true, true)
    }

    /// Rolls back the prepared transaction `xid`. `NotFound` if none is prepared under it.
    pub fn rollback_prepared(&self, xid: &Xid) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.finish_prepared(xid, false, true)
    }

    /// The round-robin compaction cursor of `level` of `cf` (the largest user key of the last
    /// file a size-triggered compaction picked there), if any. For tests and diagnostics.
    pub fn compaction_cursor(&self, cf: &ColumnFamily, level: usize) -> Option<Vec<u8>> {
        self.inner.registry.round_robin_cursor(cf.id(), level)
    }

    /// Row-lock statistics (waits, timeouts, deadlocks) of transactions.
    pub fn lock_statistics(&self) -> riptide_txn::LockManagerStats {
        self.inner.locks.stats()
    }

    /// The row and gap locks held now and the lock requests waiting, with who blocks each
    /// waiting one, at most `limit` of them (see [`riptide_txn::lock_table`]: not one atomic
    /// picture while transactions run). Lock owners are [`Transaction::id`]s.
    pub fn lock_table(&self, limit: usize) -> riptide_txn::LockTable {
        self.inner.locks.lock_table(limit)
    }

    /// Installs `listener`, told of every lock wait of a pessimistic transaction: called as
    /// `listener(waiter, blockers)` with the owners ([`Transaction::set_owner`](crate::Transaction::set_owner)) of the
    /// transaction about to wait for a row lock (or to insert into a locked gap) and of the
    /// transactions it waits for, when the wait begins and again whenever it goes on behind
    /// a different set. Transactions without an owner are left out (no call when the waiter
    /// or every blocker has none). `None` removes it.
    ///
    /// MariaDB's parallel replication needs this (`thd_rpl_deadlock_check`): a replica
    /// commits in the primary's order, so a wait of an earlier transaction for a later one
    /// is a deadlock the engine cannot see; told of it, the server retries the later one.
    ///
    /// The listener runs on the waiting thread while the lock manager's mutex for the key is
    /// held, so every blocker it names is still open while it runs (a host may use what it
    /// keeps for that owner). It must be quick and must not use this database: no
    /// transaction, no lock, no wait for another transaction. A panic in it is ignored.
    pub fn set_lock_wait_listener(&self, listener: Option<crate::LockWaitListener>) {
        let Some(listener) = listener else {
            self.inner.locks.set_wait_observer(None);
            return;
        };
        let live = Arc::clone(&self.inner.live);
        let observer: riptide_txn::WaitObserver = Arc::new(move |waiter, blockers| {
            let waiter = live.owner_of(waiter);
            if waiter == 0 {
                return;
            }
            let owners: Vec<u64> = blockers
                .iter()
                .map(|&b| live.owner_of(b))
                .filter(|&o| o != 0 && o != waiter)
                .collect();
            if !owners.is_empty() {
                listener(waiter, &owners);
            }
        });
        self.inner.locks.set_wait_observer(Some(observer));
    }

    /// The open transactions (active, or prepared with their handle still held), by id,
    /// with their age, isolation level, snapshot, write set and row locks (see
    /// [`TransactionInfo`](crate::TransactionInfo)).
    pub fn transactions(&self) -> Vec<crate::TransactionInfo> {
        self.inner.live.list()
    }

    /// The flushes and compactions running now (oldest first), then the last
    /// [`RECENT_JOBS`](crate::jobs::RECENT_JOBS) finished (newest first), with their
    /// levels, files, bytes, state and timing (see [`JobInfo`](crate::JobInfo)).
    pub fn background_jobs(&self) -> Vec<crate::JobInfo> {
        self.inner.jobs.list()
    }

    /// The default column family.
    pub fn default_cf(&self) -> ColumnFamily {
        ColumnFamily {
            data: Arc::clone(&self.inner.default_cf),
        }
    }

    /// The column family called `name`, if it exists.
    pub fn cf(&self, name: &str) -> Option<ColumnFamily> {
        self.inner
            .cfs
            .read()
            .values()
            .find(|d| d.name == name)
            .map(|d| ColumnFamily {
                data: Arc::clone(d),
            })
    }

    /// Names of every column family, default first.
    pub fn list_cfs(&self) -> Vec<String> {
        self.inner
            .cfs
            .read()
            .values()
            .map(|d| d.name.clone())
            .collect()
    }

    /// Creates a column family. Fails with `Busy` if the name is taken.
    pub fn create_cf(&self, name: &str) -> Result<ColumnFamily> {
        self.inner.check_writable()?;
        if name.is_empty() {
            return Err(Error::invalid_argument("column family name is empty"));
        }
        let _w = self.inner.write_lock.lock();
        if self.cf(name).is_some() {
            return Err(Error::busy(format!(
                "column family {name:?} already exists"
            )));
        }
        let mut vs = self.inner.versions.lock();
        let id = vs.state().next_cf_id;
        let segment = self.inner.wal.current_segment();
        let version = vs.apply(vec![
            VersionEdit::AddCf {
                id,
                name: name.to_string(),
            },
            VersionEdit::SetLogNumber {
                cf: id,
                log_number: segment,
            },
        ])?;
        let data = CfData::new(
            id,
            name.to_string(),
            CfView {
                cf_id: id,
                mem: Arc::new(self.inner.options().new_memtable(segment)),
                imms: Vec::new(),
                version: Arc::clone(&version),
            },
        );
        self.inner.cfs.write().insert(id, Arc::clone(&data));
        self.inner.install_version(&version);
        Ok(ColumnFamily { data })
    }

    /// Drops a column family: its data becomes unreachable at once and its files are deleted
    /// when no iterator uses them. The default column family cannot be dropped.
    pub fn drop_cf(&self, cf: &ColumnFamily) -> Result<()> {
        self.inner.check_writable()?;
        if cf.id() == DEFAULT_CF_ID {
            return Err(Error::invalid_argument(
                "the default column family cannot be dropped",
            ));
        }
        check_live(cf)?;
        let _w = self.inner.write_lock.lock();
        let mut vs = self.inner.versions.lock();
        let version = vs.apply(vec![VersionEdit::DropCf { id: cf.id() }])?;
        cf.data.dropped.store(true, Ordering::Release);
        self.inner.cfs.write().remove(&cf.id());
        self.inner.install_version(&version);
        Ok(())
    }

    /// Flushes every column family's memtable to a table and waits until done, so the WAL
    /// is no longer needed for what was written before the call.
    pub fn flush(&self) -> Result<()> {
        self.inner.check_writable()?;
        let mut waiting = Vec::new();
        {
            let _w = self.inner.write_lock.lock();
            let cfs: Vec<_> = self.inner.cfs.read().values().cloned().collect();
            for cf in cfs {
                if !cf.view().mem.is_empty() {
                    let frozen = self.inner.switch_memtable(&cf)?;
                    waiting.push((cf, frozen));
                }
            }
        }
        self.inner.schedule_background();
        let mut bg = self.inner.bg.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(e.clone().with_context("flush failed in the background"));
            }
            waiting.retain(|(cf, m)| {
                !cf.is_dropped() && cf.view().imms.iter().any(|x| Arc::ptr_eq(x, m))
            });
            if waiting.is_empty() {
                return Ok(());
            }
            self.inner.bg_cv.wait_for(&mut bg, WAIT_SLICE);
        }
    }

    /// Flushes `cf` and compacts every table overlapping the user-key range `[start, end]`
    /// (everything for `None`) down to the last level, dropping what no snapshot needs:
    /// shadowed versions, deleted keys and their tombstones. Runs in the calling thread
    /// alongside background compactions (RocksDB `CompactRange`).
    pub fn compact_range(&self, cf: &ColumnFamily, range: Option<(&[u8], &[u8])>) -> Result<()> {
        check_live(cf)?;
        self.flush()?;
        self.inner.check_writable()?;
        crate::background::compact_range(&self.inner, &cf.data, range)
    }

    /// Removes from `cf` every table file whose keys all lie in `[start, end)` and whose
    /// every version a range delete already written deletes (RocksDB's
    /// `DeleteFilesInRange`, which MyRocks calls when it drops a table or an index). The
    /// bytes of a range delete otherwise stay on disk until compaction has merged the
    /// tombstone down through every level that holds them, which for the last level may
    /// take as long as the database lives; this frees them at once, without reading them.
    ///
    /// Unlike RocksDB's, it never changes what a reader at or after the range delete sees: a
    /// file goes only when a tombstone newer than its newest version covers its whole key
    /// range (files that hold range tombstones themselves, and files a running compaction
    /// reads, stay). What it does about live snapshots older than that tombstone is
    /// `older`'s choice: [`OlderSnapshots::Keep`] keeps every file such a snapshot may read.
    /// Files reached by neither stay for compaction, which drops their covered versions as
    /// before. The WAL is synced first, so a crash never loses a range delete whose files
    /// are gone. Reads and iterators already open keep their view and its files until they
    /// finish.
    ///
    /// Returns the files and bytes removed (also counted in
    /// [`Statistics::range_files_deleted`] and [`Statistics::range_file_bytes_deleted`]).
    pub fn delete_files_in_range(
        &self,
        cf: &ColumnFamily,
        start: &[u8],
        end: &[u8],
        older: OlderSnapshots,
    ) -> Result<DeletedFiles> {
        check_live(cf)?;
        self.inner.check_writable()?;
        if start >= end {
            return Ok(DeletedFiles::default());
        }
        crate::delete_files::run(&self.inner, &cf.data, start, end, older)
    }

    /// A writer that ingests strictly ascending new keys of `cf` as table files straight
    /// into the deepest level they fit, without the WAL, the memtable or compaction through
    /// the levels above (RocksDB's `IngestExternalFile`; what an index build or a bulk load
    /// wants). The keys become visible, all at once, when [`IngestWriter::finish`] returns;
    /// they are durable then too. Snapshots taken before this call never see them, nor
    /// do snapshots taken while the writer is open, unless another ingest finished first.
    ///
    /// The ingested range (first to last key) must hold no key when `finish` runs: it
    /// checks that (memtables and tables) and refuses the ingest with `Busy` otherwise, so
    /// nothing the ingest would hide or sit below is lost. Writes into the range after
    /// `finish` are newer than the ingest.
    pub fn ingest_writer(&self, cf: &ColumnFamily) -> Result<IngestWriter> {
        IngestWriter::new(&self.inner, cf)
    }

    /// Whether no memtable and no table of `cf` holds an entry of any kind (a value, a
    /// deleted key's tombstone, any older version) with a key in `[start, end)`: a range an
    /// [`IngestWriter`] could fill now without being refused. Range deletes covering the
    /// range do not count. A seek per memtable and per table whose key range overlaps.
    pub fn range_is_vacant(&self, cf: &ColumnFamily, start: &[u8], end: &[u8]) -> Result<bool> {
        check_live(cf)?;
        self.inner.check_open()?;
        crate::ingest::range_is_vacant(&cf.data, start, end)
    }

    /// [`Options::ingest_min_bytes`]: the smallest load worth ingesting.
    pub fn ingest_min_bytes(&self) -> u64 {
        self.inner.options().ingest_min_bytes
    }

    /// An external sorter whose runs go to temporary files in the database directory and
    /// whose memory is [`Options::sort_buffer_size`]: to put keys in order before
    /// [`Db::ingest_writer`].
    pub fn external_sorter(&self) -> crate::sort::ExternalSorter {
        crate::sort::ExternalSorter::new(&self.inner.path, self.inner.options().sort_buffer_size)
    }

    /// Makes a *checkpoint* of the database in the new directory `dir`: a consistent copy
    /// taken while the database keeps working (RocksDB's `Checkpoint`, MyRocks'
    /// `rocksdb_create_checkpoint`). [`Db::open`] on `dir` gives the database as it was at
    /// one sequence number ([`CheckpointInfo::seqno`]): every write and transaction commit
    /// acknowledged before this call is in it, no write batch or commit is in it by half,
    /// and transactions prepared (two-phase commit) at that point are listed by
    /// [`Db::prepared_transactions`] there, to commit or roll back.
    ///
    /// `dir` must not exist and its parent must (`InvalidArgument`, `NotFound`). The
    /// checkpoint is written into `<dir>.checkpoint-tmp` and renamed to `dir` once complete
    /// and synced; on any error nothing is left at `dir` (`Busy` if that staging directory
    /// exists already: another checkpoint to `dir` is running, or a crash interrupted one).
    ///
    /// Table files are hard-linked (copied only where the file system cannot link them, as
    /// across file systems), so a checkpoint beside the database costs little space until
    /// compaction replaces the files it shares; the WAL segments the database still needs
    /// are copied (the last one up to the checkpoint's sequence number), and a manifest
    /// describing exactly the checkpoint's tables is written. No memtable is flushed: the
    /// WAL copy carries their rows. Writers are held off only while the sequence number,
    /// the WAL's end and the version are captured ([`CheckpointInfo::writer_stall`]);
    /// reads never are. Works on a database that went read-only after a background error;
    /// `Closed` after close.
    ///
    /// Not included: anything outside the engine (a MariaDB server's own files).
    pub fn create_checkpoint(&self, dir: impl AsRef<Path>) -> Result<CheckpointInfo> {
        crate::checkpoint::create(&self.inner, dir.as_ref())
    }

    /// The value option `name` (a name of [`Options::TABLE`]) has in the running engine.
    /// `InvalidArgument` if there is no such option.
    pub fn option_value(&self, name: &str) -> Result<OptionValue> {
        let spec = Options::known_option(name)?;
        Ok(spec.get(&self.inner.options()))
    }

    /// Sets option `name` of the running engine to the value `text` reads as (see
    /// [`OptionType`](crate::OptionType)), as [`Options::set_by_name`] would before open.
    ///
    /// Only options whose [`OptionSpec::is_dynamic`](crate::OptionSpec::is_dynamic) is true
    /// change at run time: those the engine reads where it uses them (compaction triggers
    /// and sizes, back-pressure limits, the format of tables written from now on, the
    /// write-set limit), the block cache's size (a smaller one evicts at once) and the
    /// WAL's sync mode and interval (a switch to `full` also syncs what was written
    /// before). Others (thread counts, the number of levels, the WAL's other settings)
    /// fail with `NotSupported` and change only when the database is opened again. A value the
    /// engine could not run with (`l0_compaction_trigger` above `l0_stop_trigger`) fails
    /// with `InvalidArgument`, and nothing changes. Background threads look at the new
    /// value at once (a lower trigger can start a compaction).
    pub fn set_option(&self, name: &str, text: &str) -> Result<()> {
        let spec = Options::known_option(name)?;
        if !spec.is_dynamic() {
            return Err(Error::not_supported(format!(
                "option `{name}` is fixed while the database is open; set it before Db::open"
            )));
        }
        let inner = &self.inner;
        // One writer at a time, so two changes of different options both stay.
        let _serial = inner.option_change.lock();
        let changed = spec.set(Options::clone(&inner.options()), text)?;
        changed.validate()?;
        // The parts that hold their own copy take the new value first: a failure there
        // leaves the options as they were.
        match name {
            "block_cache_size" => inner.cache.set_capacity(changed.block_cache_size),
            "sync_mode" | "sync_interval_ms" => inner.wal.set_sync_mode(changed.sync_mode)?,
            _ => {}
        }
        let threads = (
            changed.max_background_flushes,
            changed.max_background_compactions,
        );
        inner.options.store(Arc::new(changed));
        // More threads than ever started: start the missing ones (fewer: the threads
        // numbered beyond the new count finish their job and wait, see `background`).
        crate::background::grow(inner, threads.0, threads.1, &mut self.workers.lock())?;
        // Let the compaction threads re-check what is due under the new values.
        inner.bg.lock().pending_compaction = true;
        inner.bg_cv.notify_all();
        Ok(())
    }

    /// A snapshot of the engine's statistics.
    pub fn statistics(&self) -> Statistics {
        self.inner.statistics()
    }

    /// Closes the database: waits for the write in progress, stops background work (a flush
    /// in progress finishes), syncs the WAL and releases the directory lock. Writes acknowledged
    /// before `close` are durable per the sync mode; later calls on other handles fail with
    /// `Closed`.
    pub fn close(self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&self) -> Result<()> {
        if self.inner.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // Wait for a leader that is writing right now.
        drop(self.inner.write_lock.lock());
        {
            let mut bg = self.inner.bg.lock();
            bg.shutdown = true;
            self.inner.bg_cv.notify_all();
        }
        for handle in std::mem::take(&mut *self.workers.lock()) {
            if handle.join().is_err() {
                log::error!("a riptide background thread panicked");
            }
        }
        let closed = self.inner.wal.close();
        // Transactions may outlive the handle (they share its state); the directory is free
        // for the next open once the handle is closed.
        drop(self.inner.dir_lock.lock().take());
        closed
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            log::error!("closing database {}: {e}", self.inner.path.display());
        }
    }
}

pub(crate) fn check_live(cf: &ColumnFamily) -> Result<()> {
    if cf.data.is_dropped() {
        return Err(Error::not_found(format!(
            "column family {:?} was dropped",
            cf.name()
        )));
    }
    Ok(())
}

impl DbInner {
    /// The options as they are now (a change by [`Db::set_option`] shows in the next call).
    pub(crate) fn options(&self) -> arc_swap::Guard<Arc<Options>> {
        self.options.load()
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        path: PathBuf,
        options: Options,
        wal: Wal,
        versions: VersionSet,
        cfs: BTreeMap<CfId, Arc<CfData>>,
        default_cf: Arc<CfData>,
        last_seqno: SeqNo,
        cache: Arc<BlockCache>,
        lock: DirLock,
    ) -> DbInner {
        DbInner {
            path,
            options: ArcSwap::from_pointee(options),
            option_change: Mutex::new(()),
            wal,
            commit_queue: GroupCommit::new(),
            write_lock: Mutex::new(()),
            versions: Mutex::new(versions),
            cfs: RwLock::new(cfs),
            default_cf,
            last_seqno: AtomicU64::new(last_seqno),
            snapshots: Arc::new(SnapshotList::default()),
            cache,
            counters: Counters::default(),
            registry: CompactionRegistry::new(),
            bg: Mutex::new(BgState::default()),
            bg_cv: Condvar::new(),
            closed: AtomicBool::new(false),
            locks: Arc::new(LockManager::new(LockManagerOptions::default())),
            next_txn_id: AtomicU64::new(1),
            writers: crate::transaction::Writers::default(),
            live: Arc::default(),
            jobs: crate::jobs::BackgroundJobs::default(),
            prepared: PreparedTxns::default(),
            segment_start_bytes: Mutex::new(BTreeMap::new()),
            wal_bound_check_at: AtomicU64::new(0),
            wal_pins: WalPins::default(),
            dir_lock: Mutex::new(Some(lock)),
        }
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::closed(format!(
                "database {} is closed",
                self.path.display()
            )));
        }
        Ok(())
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_open()?;
        if let Some(e) = &self.bg.lock().error {
            return Err(Error::closed(format!(
                "database {} is read-only after a background error: {e}",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// A point read of `key` at `snapshot` in `view`, counted in the statistics (gets and the
    /// data blocks they consulted).
    pub(crate) fn counted_get(
        &self,
        view: &CfView,
        key: &[u8],
        snapshot: SeqNo,
    ) -> Result<Option<Vec<u8>>> {
        Counters::add(&self.counters.gets, 1);
        let blocks_before = riptide_sstable::data_blocks_read_by_gets();
        let bloom_before = riptide_sstable::bloom_checks_by_gets();
        let found = view.get(key, snapshot);
        let blocks = riptide_sstable::data_blocks_read_by_gets().wrapping_sub(blocks_before);
        Counters::add(&self.counters.get_data_blocks, blocks);
        let bloom = riptide_sstable::bloom_checks_by_gets().since(bloom_before);
        if bloom.checked > 0 {
            Counters::add(&self.counters.bloom_filter_checks, bloom.checked);
            Counters::add(&self.counters.bloom_filter_useful, bloom.useful);
        }
        found
    }

    /// Registers a snapshot of the current state.
    pub(crate) fn take_snapshot(&self) -> Snapshot {
        // The number is read under the list's lock: a flush or compaction that read the
        // list before this registration took its inputs before the number was read, so they
        // hold nothing newer and whatever it drops was shadowed for this snapshot too.
        self.snapshots
            .register_current(|| self.last_seqno.load(Ordering::Acquire))
    }

    /// Wakes the background worker.
    pub(crate) fn schedule_background(&self) {
        let mut bg = self.bg.lock();
        bg.pending_flush = true;
        bg.pending_compaction = true;
        self.bg_cv.notify_all();
    }

    /// Commits one batch through the group-commit queue. Sizes are checked here, before
    /// anything is logged: a write the WAL or the table format could not carry is refused
    /// with `InvalidArgument`, and never reaches the WAL (where it would make every later
    /// flush, and the next open, fail).
    pub(crate) fn write_raw(&self, batch: RawBatch) -> Result<()> {
        self.write_raw_with(batch, true)
    }

    /// [`DbInner::write_raw`]; without `sync` the batch is not synced even in
    /// [`SyncMode::Full`](crate::SyncMode::Full) (unless another member of its commit group wants a sync): the
    /// commit of a transaction whose durability MariaDB's binary log already holds
    /// ([`crate::Transaction::set_commit_sync`]).
    pub(crate) fn write_raw_with(&self, batch: RawBatch, sync: bool) -> Result<()> {
        self.check_writable()?;
        if batch.is_empty() && batch.marker().is_none() {
            return Ok(());
        }
        if batch.data().len() > MAX_BATCH_LEN {
            return Err(Error::invalid_argument(format!(
                "a write batch of {} bytes is larger than the WAL's record limit of \
                 {MAX_BATCH_LEN} bytes; split it",
                batch.data().len()
            )));
        }
        {
            let cfs = self.cfs.read();
            for entry in batch.iter() {
                let entry = entry?;
                if !cfs.contains_key(&entry.cf) {
                    return Err(Error::not_found(format!(
                        "column family id {} does not exist (was it dropped?)",
                        entry.cf
                    )));
                }
                check_entry_size(entry.key, entry.value)?;
            }
        }
        self.commit_queue
            .submit(Queued { batch, sync }, |group| self.commit_group(group))
    }

    /// Records an I/O failure of the WAL as the background error, so that every later write
    /// (and `check_writable`) says why the database is read-only. The WAL itself already
    /// refuses every later append; nothing acknowledged is affected.
    pub(crate) fn note_wal_failure(&self, e: &Error) {
        if e.kind() != ErrorKind::Io {
            return;
        }
        let mut bg = self.bg.lock();
        if bg.error.is_none() {
            log::error!(
                "WAL write failed on {}, database is now read-only: {e}",
                self.path.display()
            );
            bg.error = Some(e.clone().with_context("WAL write"));
        }
        self.bg_cv.notify_all();
    }

    /// The group-commit leader's work: make room, number, log, apply, publish. An I/O error
    /// (the WAL's) makes the database read-only (see [`Self::note_wal_failure`]).
    fn commit_group(&self, group: &mut [Queued]) -> Result<()> {
        let res = self.commit_group_inner(group);
        if let Err(e) = &res {
            self.note_wal_failure(e);
        }
        res
    }

    fn commit_group_inner(&self, group: &mut [Queued]) -> Result<()> {
        let sync = group.iter().any(|q| q.sync);
        let _w = self.write_lock.lock();
        self.check_writable()?;
        // Column families are only created or dropped under `write_lock`, so this map is
        // stable for the whole group.
        let cfs = self.cfs.read();
        let group_bytes: u64 = group.iter().map(|q| q.batch.size_in_bytes() as u64).sum();
        self.apply_back_pressure(&cfs, group_bytes)?;
        for cf in cfs.values() {
            let mem = cf.view().mem.approximate_memory_usage();
            let full = mem >= self.options().memtable_limit(cf.table_bytes());
            // A scan asked for an early flush (tombstones it keeps stepping over); not for
            // tiny memtables, so scans cannot turn every write into a flush.
            let asked =
                mem >= self.options().write_buffer_size / 8 && cf.view().mem.flush_requested();
            if full || asked {
                self.switch_memtable(cf)?;
            }
        }
        self.enforce_write_buffer_budget(&cfs)?;
        self.enforce_wal_bound(&cfs)?;

        let first = self.last_seqno.load(Ordering::Acquire) + 1;
        let mut next = first;
        for b in group.iter_mut().map(|q| &mut q.batch) {
            if is_prepare(b) {
                // Prepared writes get their sequence numbers when they commit.
                continue;
            }
            b.set_seqno(next);
            next += b.len() as u64;
        }
        let marked = group.iter().any(|q| q.batch.marker().is_some());
        // Each batch fits a WAL record (write_raw); merged, they might not.
        let oversized = group
            .iter()
            .map(|q| q.batch.data().len())
            .fold(0usize, usize::saturating_add)
            > MAX_BATCH_LEN;
        match &*group {
            [single] => self.wal.append_all(&[single.batch.data()], sync)?,
            many if marked || oversized => {
                // Two-phase-commit records each keep their own marker, and a group too large
                // for one record is logged batch by batch: one WAL record each (each batch
                // has its own sequence numbers already), synced together. Written in
                // groups under the record limit, so no single write is unbounded.
                let mut payloads: Vec<&[u8]> = Vec::with_capacity(many.len());
                let mut bytes = 0usize;
                for b in many.iter().map(|q| &q.batch) {
                    if !payloads.is_empty() && bytes.saturating_add(b.data().len()) > MAX_BATCH_LEN
                    {
                        self.wal.append_all(&payloads, sync)?;
                        payloads.clear();
                        bytes = 0;
                    }
                    payloads.push(b.data());
                    bytes = bytes.saturating_add(b.data().len());
                }
                self.wal.append_all(&payloads, sync)?;
            }
            many => {
                let mut merged = RawBatch::new();
                for q in many {
                    merged.append(&q.batch);
                }
                merged.set_seqno(first);
                self.wal.append_all(&[merged.data()], sync)?;
            }
        }
        if marked {
            for q in group.iter() {
                self.prepared.note_logged(&q.batch);
            }
        }

        // Most groups write one column family: remember the last memtable looked up.
        let mut last: Option<(CfId, Arc<Memtable>)> = None;
        let mut user_bytes = 0u64;
        for b in group.iter().map(|q| &q.batch).filter(|b| !is_prepare(b)) {
            for (seqno, entry) in (b.seqno()..).zip(b.iter()) {
                let entry = entry?;
                let mem = match &last {
                    Some((id, mem)) if *id == entry.cf => Some(mem),
                    _ => {
                        last = cfs
                            .get(&entry.cf)
                            .map(|cf| (entry.cf, Arc::clone(&cf.view().mem)));
                        last.as_ref().map(|(_, mem)| mem)
                    }
                };
                if let Some(mem) = mem {
                    mem.insert(entry.key, seqno, entry.kind, entry.value);
                }
                user_bytes += (entry.key.len() + entry.value.len()) as u64;
            }
        }
        self.last_seqno.store(next - 1, Ordering::Release);
        Counters::add(&self.counters.keys_written, next - first);
        Counters::add(&self.counters.user_bytes_written, user_bytes);
        Counters::add(&self.counters.write_groups, 1);
        Ok(())
    }

    /// Waits on the background condition until `ready()` (re-checked at every wake-up and
    /// at least every [`WAIT_SLICE`]), recording the wait as a stop (`stop`) or a slowdown.
    /// Fails if the database closes or background work fails meanwhile.
    fn wait_for_background(&self, stop: bool, ready: impl Fn() -> bool) -> Result<()> {
        if ready() {
            return Ok(());
        }
        let start = Instant::now();
        let mut bg = self.bg.lock();
        let mut kick = true;
        let outcome = loop {
            if ready() {
                break Ok(());
            }
            if let Some(e) = &bg.error {
                break Err(Error::closed(format!(
                    "database is read-only after a background error: {e}"
                )));
            }
            if bg.shutdown || self.closed.load(Ordering::Acquire) {
                break Err(Error::closed("database closed while a write waited"));
            }
            // Kick the background threads when the wait starts and after every silent
            // slice, not after every wake-up: a wake-up means background work progressed
            // (and will notify again when it does more), and kicking an idle flush thread at
            // every one is a busy loop with it.
            if kick {
                bg.pending_flush = true;
                bg.pending_compaction = true;
                self.bg_cv.notify_all();
            }
            kick = self.bg_cv.wait_for(&mut bg, WAIT_SLICE).timed_out();
        };
        drop(bg);
        let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.counters.record_wait(stop, micros);
        outcome
    }

    /// The back-pressure state now, from every column family's view.
    fn write_state(&self, cfs: &BTreeMap<CfId, Arc<CfData>>) -> WriteState {
        let pressures: Vec<Pressure> = cfs
            .values()
            .map(|cf| {
                let view = cf.view();
                let active_full = view.mem.approximate_memory_usage()
                    >= self.options().memtable_limit(cf.table_bytes());
                let max = self.options().max_immutable_memtables;
                Pressure {
                    l0_files: view.levels().first().map_or(0, Vec::len),
                    pending_compaction_bytes: cf.pending_compaction_bytes(),
                    // A full frozen queue only stops writes once the active memtable must
                    // be frozen too; until then it only slows them.
                    immutable_memtables: if active_full {
                        view.imms.len()
                    } else {
                        view.imms.len().min(max.saturating_sub(1))
                    },
                }
            })
            .collect();
        decide(&self.options().thresholds(), &pressures)
    }

    /// Slows or stops this write group as back-pressure demands (see `write_controller`).
    fn apply_back_pressure(&self, cfs: &BTreeMap<CfId, Arc<CfData>>, bytes: u64) -> Result<()> {
        match self.write_state(cfs) {
            WriteState::Normal => Ok(()),
            WriteState::Delayed { bytes_per_sec, .. } => {
                let delay = delay_for(bytes, bytes_per_sec);
                std::thread::sleep(delay);
                self.counters
                    .record_wait(false, u64::try_from(delay.as_micros()).unwrap_or(u64::MAX));
                Ok(())
            }
            WriteState::Stopped { cause } => {
                log::debug!("writes stopped: {cause}");
                self.wait_for_background(true, || {
                    !matches!(self.write_state(cfs), WriteState::Stopped { .. })
                })
            }
        }
    }

    /// Keeps all memtables together within `db_write_buffer_size`: when frozen memtables
    /// alone fill it, waits for flushes (a stop); when the total reaches it, freezes the
    /// largest active memtable. Memory stays within the budget plus one write group. (Tiny
    /// memtables frozen while flushes lag are bounded by `max_immutable_memtables`.)
    fn enforce_write_buffer_budget(&self, cfs: &BTreeMap<CfId, Arc<CfData>>) -> Result<()> {
        let budget = self.options().db_write_buffer_size;
        let frozen_total = || -> usize {
            cfs.values()
                .map(|cf| {
                    cf.view()
                        .imms
                        .iter()
                        .map(|m| m.approximate_memory_usage())
                        .sum::<usize>()
                })
                .sum()
        };
        if frozen_total() >= budget {
            self.wait_for_background(true, || frozen_total() < budget)?;
        }
        let mut total = frozen_total();
        let mut largest: Option<(&Arc<CfData>, usize)> = None;
        for cf in cfs.values() {
            let active = cf.view().mem.approximate_memory_usage();
            total += active;
            if largest.is_none_or(|(_, size)| active > size) {
                largest = Some((cf, active));
            }
        }
        if total >= budget
            && let Some((cf, active)) = largest
            && active > 0
        {
            self.switch_memtable(cf)?;
        }
        Ok(())
    }

    /// Flushes the column families whose active memtable holds back more WAL than
    /// [`Options::max_total_wal_size`]: a column family written rarely (a dictionary, say)
    /// would otherwise pin every segment since its first unflushed write. Caller holds
    /// `write_lock`.
    ///
    /// The common case is one atomic load and a compare: the slow path computes the WAL
    /// byte count at which the first column family could start pinning (its memtable's
    /// segment start plus the bound; a memtable of the current segment cannot pin before a
    /// rotation, and rotations reset it), and until the WAL gets there nothing is looked at.
    fn enforce_wal_bound(&self, cfs: &BTreeMap<CfId, Arc<CfData>>) -> Result<()> {
        let written = self.wal.bytes_written();
        if written <= self.wal_bound_check_at.load(Ordering::Relaxed) {
            return Ok(());
        }
        let bound = self.options().wal_bound();
        let current = self.wal.current_segment();
        let mut check_at = u64::MAX;
        let pinning: Vec<&Arc<CfData>> = {
            let starts = self.segment_start_bytes.lock();
            cfs.values()
                .filter(|cf| {
                    let mem = &cf.view().mem;
                    if mem.id() >= current {
                        return false;
                    }
                    // Segments from before this open started at 0 bytes written.
                    let start = starts.range(..=mem.id()).next_back().map_or(0, |(_, b)| *b);
                    let limit = start.saturating_add(bound);
                    if mem.is_empty() || written <= limit {
                        // Not now; maybe once the WAL passes `limit` (empty memtables
                        // too: a write may land in one without a rotation).
                        check_at = check_at.min(limit);
                        return false;
                    }
                    true
                })
                .collect()
        };
        if pinning.is_empty() {
            self.wal_bound_check_at.store(check_at, Ordering::Relaxed);
        }
        // Each switch rotates the WAL, which resets the fast path.
        for cf in pinning {
            self.switch_memtable(cf)?;
        }
        Ok(())
    }

    /// Freezes `cf`'s active memtable and starts a new one in a new WAL segment. Waits
    /// (counted as a stall) while the frozen queue is full. Caller holds `write_lock`.
    /// Returns the frozen memtable.
    pub(crate) fn switch_memtable(&self, cf: &Arc<CfData>) -> Result<Arc<Memtable>> {
        let max = self.options().max_immutable_memtables;
        if cf.view().imms.len() >= max {
            // The last resort: the frozen queue is full, so this memtable cannot be frozen
            // until a flush finishes.
            self.wait_for_background(true, || cf.view().imms.len() < max)?;
        }
        let segment = self
            .wal
            .rotate()
            .inspect_err(|e| self.note_wal_failure(e))?;
        // Memtables now older than the current segment may pin WAL: check at the next group.
        self.wal_bound_check_at.store(0, Ordering::Relaxed);
        {
            let mut starts = self.segment_start_bytes.lock();
            starts.insert(segment, self.wal.stats().bytes_written);
            // Only segments a memtable can still belong to matter.
            let oldest = self
                .cfs
                .read_recursive()
                .values()
                .map(|c| {
                    let v = c.view();
                    v.imms.last().map_or_else(|| v.mem.id(), |m| m.id())
                })
                .min()
                .unwrap_or(segment);
            starts.retain(|s, _| *s + 1 >= oldest);
        }
        // Prepare records must outlive the segment they were logged in.
        self.relog_prepared()
            .inspect_err(|e| self.note_wal_failure(e))?;
        let frozen = Arc::clone(&cf.view().mem);
        cf.update_view(|v| CfView {
            cf_id: v.cf_id,
            mem: Arc::new(self.options().new_memtable(segment)),
            imms: std::iter::once(Arc::clone(&v.mem))
                .chain(v.imms.iter().cloned())
                .collect(),
            version: Arc::clone(&v.version),
        });
        // Idle column families move to the new segment too, so they never pin old ones.
        // (`read_recursive`: the group-commit leader calls this holding a read guard.)
        for other in self.cfs.read_recursive().values() {
            let view = other.view();
            if other.id != cf.id && view.mem.is_empty() && view.mem.id() < segment {
                other.update_view(|v| CfView {
                    cf_id: v.cf_id,
                    mem: Arc::new(self.options().new_memtable(segment)),
                    imms: v.imms.clone(),
                    version: Arc::clone(&v.version),
                });
            }
        }
        self.schedule_background();
        Ok(frozen)
    }

    /// Makes `version` the version every column family's view reads. Caller holds the
    /// version-set lock, so versions are installed in the order they were made.
    pub(crate) fn install_version(&self, version: &Arc<riptide_compaction::Version>) {
        for cf in self.cfs.read().values() {
            cf.update_view(|v| CfView {
                cf_id: v.cf_id,
                mem: Arc::clone(&v.mem),
                imms: v.imms.clone(),
                version: Arc::clone(version),
            });
        }
    }

    pub(crate) fn statistics(&self) -> Statistics {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let wal = self.wal.stats();
        let cache = self.cache.stats();
        let tables = self
            .versions
            .lock()
            .table_cache()
            .map(|tc| tc.stats())
            .unwrap_or_default();
        let mut memtable_bytes = 0u64;
        let mut immutable_memtables = 0u64;
        let mut levels: Vec<LevelStats> = Vec::new();
        let mut pending_compaction_bytes = 0u64;
        for cf in self.cfs.read().values() {
            let view = cf.view();
            memtable_bytes += view.mem.approximate_memory_usage() as u64;
            for m in &view.imms {
                memtable_bytes += m.approximate_memory_usage() as u64;
                immutable_memtables += 1;
            }
            let lopts = self.options().level_options();
            let targets = riptide_compaction::level_targets(&view.version, cf.id, &lopts);
            let scores =
                riptide_compaction::compaction_scores(&view.version, cf.id, &lopts, &self.registry);
            pending_compaction_bytes += cf.pending_compaction_bytes();
            for (i, level) in view.levels().iter().enumerate() {
                if levels.len() <= i {
                    levels.resize_with(i + 1, LevelStats::default);
                }
                if let Some(l) = levels.get_mut(i) {
                    l.level = i;
                    l.files += level.len();
                    l.bytes += level.iter().map(|h| h.meta.file_size).sum::<u64>();
                    if i > 0 && i >= targets.base_level {
                        l.target_bytes += targets.target(i);
                    }
                    l.score = l.score.max(scores.get(i).copied().unwrap_or(0.0));
                }
            }
        }
        Statistics {
            keys_written: get(&c.keys_written),
            user_bytes_written: get(&c.user_bytes_written),
            write_groups: get(&c.write_groups),
            wal_bytes_written: wal.bytes_written,
            wal_syncs: wal.syncs,
            gets: get(&c.gets),
            get_data_blocks: get(&c.get_data_blocks),
            bloom_filter_checks: get(&c.bloom_filter_checks),
            bloom_filter_useful: get(&c.bloom_filter_useful),
            flushes: get(&c.flushes),
            flush_bytes_written: get(&c.flush_bytes_written),
            compactions: get(&c.compactions),
            compaction_bytes_read: get(&c.compaction_bytes_read),
            compaction_bytes_written: get(&c.compaction_bytes_written),
            memtable_bytes,
            immutable_memtables,
            compaction_tombstones_dropped: get(&c.compaction_tombstones_dropped),
            compaction_range_deleted: get(&c.compaction_range_deleted),
            compaction_files_moved: get(&c.compaction_files_moved),
            compaction_files_kept: get(&c.compaction_files_kept),
            range_files_deleted: get(&c.range_files_deleted),
            ingested_files: get(&c.ingested_files),
            ingested_bytes: get(&c.ingested_bytes),
            range_file_bytes_deleted: get(&c.range_file_bytes_deleted),
            pending_compaction_bytes,
            running_compactions: self.registry.running_jobs() as u64,
            block_cache_hits: cache.hits,
            block_cache_misses: cache.misses,
            open_table_files: tables.live_tables,
            table_opens: tables.opens,
            block_cache_usage: cache.usage_bytes,
            block_cache_capacity: cache.capacity_bytes,
            data_block_hits: cache.data.hits,
            data_block_misses: cache.data.misses,
            index_block_hits: cache.index.hits,
            index_block_misses: cache.index.misses,
            filter_block_hits: cache.filter.hits,
            filter_block_misses: cache.filter.misses,
            write_slowdowns: get(&c.write_slowdowns),
            write_slowdown_micros: get(&c.write_slowdown_micros),
            write_stops: get(&c.write_stops),
            write_stop_micros: get(&c.write_stop_micros),
            longest_write_wait_micros: get(&c.longest_write_wait_micros),
            flush_idle_wakeups: get(&c.flush_idle_wakeups),
            txn_write_set_limit_hits: get(&c.txn_write_set_limit_hits),
            live_snapshots: self.snapshots.count() as u64,
            levels,
            locks: self.locks.stats(),
        }
    }
}

/// True for a batch holding the prepared (not yet committed) writes of a transaction.
fn is_prepare(batch: &RawBatch) -> bool {
    matches!(batch.marker(), Some((BatchMarker::Prepare, _)))
}

/// An iterator over `cf` at `point` within bounds (for transactions); its sequence number is
/// [`DbIterator::snapshot_seqno`].
pub(crate) fn iter_at(
    db: &DbInner,
    cf: &ColumnFamily,
    point: ReadPoint,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> Result<DbIterator> {
    db.check_open()?;
    check_live(cf)?;
    let (view, seqno) = point.view(db, cf);
    let merged = view.merged_iter_within(lower.as_deref(), upper.as_deref());
    let it = DbIterator::new(view, merged, seqno, lower, upper)?
        .with_scan_flush_trigger(db.options().memtable_scan_flush_trigger);
    Ok(refreshing(db, cf, point, it))
}

/// `it`, made to move to newer views during a long scan when it reads at a registered
/// snapshot (see `DbIterator::with_refresh`).
fn refreshing(db: &DbInner, cf: &ColumnFamily, point: ReadPoint, it: DbIterator) -> DbIterator {
    match point {
        ReadPoint::Snapshot(_) => it.with_refresh(Arc::clone(&cf.data), Arc::clone(&db.snapshots)),
        ReadPoint::Newest => it,
    }
}

/// Creates `path` if allowed, or says it is missing.
pub(crate) fn prepare_dir(fs: &dyn FileSystem, path: &Path, create_if_missing: bool) -> Result<()> {
    match fs.metadata(path) {
        Ok(m) if m.is_dir => return Ok(()),
        Ok(_) => {
            return Err(Error::invalid_argument(format!(
                "database path {} exists and is not a directory",
                path.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io_at("stat database directory", path, e)),
    }
    if !create_if_missing {
        return Err(Error::not_found(format!(
            "database directory {} does not exist (create_if_missing is off)",
            path.display()
        )));
    }
    fs.create_dir_all(path)
        .at("create database directory", path)
}
