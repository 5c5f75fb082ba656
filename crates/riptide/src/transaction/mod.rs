//! Transactions: read-your-own-writes over a snapshot, optimistic or pessimistic concurrency
//! control, savepoints and two-phase commit.
//!
//! A [`Transaction`] buffers its writes in a [`WriteBuffer`] (nothing reaches the database
//! before commit) and reads through it: its own writes first, then the database at its read
//! point. Commit writes the buffer as one atomic batch through the normal write path (WAL,
//! group commit, memtable).
//!
//! # Isolation levels
//!
//! | level | reads see | write-write conflicts | read validation |
//! |---|---|---|---|
//! | [`IsolationLevel::ReadCommitted`] | the newest committed data at each read | yes (see below) | none |
//! | [`IsolationLevel::RepeatableRead`] | one snapshot, taken at the first operation (after its lock wait, if it waited; or at begin with [`TransactionOptions::snapshot_at_begin`]) | yes, against the snapshot (none with [`TransactionOptions::current_reads`]) | keys read with `get_for_update` |
//! | [`IsolationLevel::Serializable`] | the snapshot, as repeatable read | yes, against the snapshot | every key read with `get` or `get_for_update` |
//!
//! Anomalies each level allows (each is a test in `tests/txn_anomalies.rs`):
//!
//! - *Dirty read* (seeing uncommitted writes of another transaction): never, at any level.
//! - *Non-repeatable read* (a key read twice gives two committed values): allowed by read
//!   committed; not by repeatable read or serializable.
//! - *Lost update* (two read-modify-writes of one key, both commit): prevented at every level
//!   when the read is a `get_for_update`; with a plain `get`, read committed allows it,
//!   repeatable read and serializable prevent it (the write conflicts with the newer commit).
//! - *Write skew* (two transactions read an overlapping set, write disjoint keys, both commit):
//!   allowed by read committed and repeatable read (snapshot isolation); prevented by
//!   serializable for point reads, because every key read is validated (optimistic) or
//!   share-locked (pessimistic).
//! - *Phantoms*: range scans through [`Transaction::iter`] are not validated or locked at any
//!   level (there are no gap or predicate locks), so a scan repeated after another
//!   transaction's commit may see a new key under read committed, and a serializable
//!   transaction is only serializable with respect to the keys it read by point lookups.
//!
//! # Concurrency control
//!
//! - [`Concurrency::Optimistic`]: no locks while the transaction runs. Every key written (and
//!   read for update, and under serializable every key read) is remembered with the sequence
//!   number it was read at (the snapshot, or under read committed the newest sequence number
//!   when it was first touched). Commit takes short exclusive locks on those keys in key
//!   order, fails with [`ErrorKind::Conflict`] if any of them has a
//!   newer version, writes, and releases the locks.
//! - [`Concurrency::Pessimistic`]: every write and `get_for_update` takes an exclusive row lock
//!   (under serializable, `get` takes a shared one) and holds it until commit or rollback.
//!   Waits end after [`TransactionOptions::lock_timeout`] with `TimedOut`; a wait that would
//!   close a cycle fails at once with `Deadlock` (the requester is the victim). Locks on keys
//!   that do not exist are ordinary locks, so two inserts of one new key serialize. Under
//!   repeatable read and serializable, locking a key that has a version newer than the
//!   snapshot fails with `Conflict` (first committer wins, as in snapshot isolation), unless
//!   the transaction uses [`TransactionOptions::current_reads`] (InnoDB's behaviour, what the
//!   MariaDB handler uses): then locking reads and writes work on the newest committed
//!   version once their lock is granted, and only plain reads use the snapshot.
//!
//! A delete of a key the transaction did not read, when the key is already deleted by a newer
//! commit, is not a conflict: deleting an absent key changes nothing, in either order. Two
//! transactions deleting the same row therefore both commit.
//!
//! Writes made with [`Db::put`](crate::Db::put) and friends outside transactions take no row
//! locks; they are still seen by optimistic validation.
//!
//! # Memory and size
//!
//! Nothing is capped: a transaction may hold any number of writes, and all of them stay in
//! memory until commit. [`Transaction::approximate_memory`] reports the write buffer's own
//! accounting: key + value + [`riptide_txn::ENTRY_OVERHEAD_BYTES`] (48) per key written, plus
//! key + 48 per row lock of a pessimistic transaction. The process needs more than that at the
//! peak, because the same rows also pass through the lock manager (one entry per locked key;
//! an optimistic transaction locks its written keys during commit), the encoded commit batch,
//! the WAL write and the memtable. Measured with `tests/txn_large.rs` and
//! `RIPTIDE_LARGE_TXN_ROWS=2000000` (2,000,000 rows of an 11-byte key and a 40-byte value):
//! peak RSS 1.38 GB optimistic and 1.29 GB pessimistic, about 650 bytes per row, against
//! 55 MB for the same test with 10 rows. Budget about 13 times the rows' raw size for very
//! large transactions of small rows, and split bulk loads into several transactions when that
//! is too much. The encoded commit batch is one WAL record, so one commit must stay under
//! 4 GiB; a larger one fails with `InvalidArgument` and the database is unchanged.
//!
//! A transaction keeps the database's shared state alive, not the open handle: after
//! [`Db::close`](crate::Db::close) its operations fail with `Closed`.

mod iter;
pub(crate) mod two_phase;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::Mutex;
use riptide_common::key::MAX_SEQNO;
use riptide_common::write_batch::WriteBatch as RawBatch;
use riptide_common::{CfId, Error, ErrorKind, Result, SeqNo};
use riptide_txn::{BufferedOp, KeyFmt, LockMode, TrackedKeys, TxnId, WriteBuffer, Xid};

use crate::cf::ColumnFamily;
use crate::db::DbInner;
use crate::options::ReadOptions;
use crate::snapshot::Snapshot;

pub use iter::TxnIterator;
pub(crate) use two_phase::PreparedTxns;

/// How much of other transactions' work a transaction sees. See the module documentation for
/// the anomalies each level allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IsolationLevel {
    /// Each read sees the newest committed data.
    ReadCommitted,
    /// All reads see one snapshot (snapshot isolation). The default, as in InnoDB.
    #[default]
    RepeatableRead,
    /// Snapshot reads, and every key read is validated at commit (optimistic) or share-locked
    /// (pessimistic). Range scans are not protected (no phantom protection).
    Serializable,
}

/// How write conflicts are detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Concurrency {
    /// Validate at commit; fail with `Conflict` if someone committed a tracked key first.
    Optimistic,
    /// Lock rows as they are written or read for update; wait, time out or fail on deadlock.
    /// The default (what MariaDB needs).
    #[default]
    Pessimistic,
}

/// Options of one transaction.
#[derive(Debug, Clone)]
pub struct TransactionOptions {
    pub(crate) isolation: IsolationLevel,
    pub(crate) concurrency: Concurrency,
    pub(crate) lock_timeout: Duration,
    pub(crate) snapshot_at_begin: bool,
    pub(crate) current_reads: bool,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            isolation: IsolationLevel::RepeatableRead,
            concurrency: Concurrency::Pessimistic,
            lock_timeout: Duration::from_secs(50),
            snapshot_at_begin: false,
            current_reads: false,
        }
    }
}

impl TransactionOptions {
    /// The isolation level. Default [`IsolationLevel::RepeatableRead`].
    pub fn isolation(mut self, level: IsolationLevel) -> Self {
        self.isolation = level;
        self
    }

    /// Optimistic or pessimistic. Default [`Concurrency::Pessimistic`].
    pub fn concurrency(mut self, c: Concurrency) -> Self {
        self.concurrency = c;
        self
    }

    /// How long a row-lock wait may last before it fails with `TimedOut`. Default 50 s
    /// (InnoDB's `innodb_lock_wait_timeout`; RocksDB's `lock_timeout` is 1 s). Zero: fail at
    /// once if the lock is held.
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Take the snapshot when the transaction begins instead of at its first operation
    /// (`START TRANSACTION WITH CONSISTENT SNAPSHOT`). Default false.
    pub fn snapshot_at_begin(mut self, yes: bool) -> Self {
        self.snapshot_at_begin = yes;
        self
    }

    /// InnoDB's *current reads* (pessimistic transactions only; default false): locking
    /// reads (`get_for_update`, and `get` under serializable) and writes work on the newest
    /// committed version of their key. Once the row lock is granted they see what the lock's
    /// previous holder committed, instead of failing with `Conflict` because the key changed
    /// after the snapshot. Plain reads (`get`, iterators) still read the snapshot. This is
    /// what MariaDB users expect: an `UPDATE` that waited for a row lock updates the row as
    /// the other transaction left it. Off, a transaction is snapshot isolation with first
    /// committer wins (RocksDB's `TransactionDB`).
    pub fn current_reads(mut self, yes: bool) -> Self {
        self.current_reads = yes;
        self
    }
}

/// Where a transaction is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    Active,
    Prepared(Xid),
    Committed,
    RolledBack,
}

/// The mutable state of a transaction.
struct TxnState {
    phase: Phase,
    snapshot: Option<Snapshot>,
    buffer: WriteBuffer,
    tracked: TrackedKeys,
    /// Keys whose value this transaction read under protection (`get_for_update`, or any
    /// `get` under serializable): a newer delete of them is a conflict even for a delete.
    protected_reads: BTreeSet<(CfId, Vec<u8>)>,
}

/// What a [`Transaction`] and its iterators share.
pub(crate) struct TxnShared {
    db: Arc<DbInner>,
    id: TxnId,
    opts: TransactionOptions,
    state: Mutex<TxnState>,
}

/// A transaction: see the module documentation. Every method takes `&self`; a transaction
/// may be used from several threads, one call at a time per transaction being the sensible
/// use. Dropping an unfinished transaction rolls it back (a prepared one stays prepared, to
/// be finished by [`crate::Db::commit_prepared`] or [`crate::Db::rollback_prepared`]).
pub struct Transaction {
    shared: Arc<TxnShared>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("id", &self.shared.id)
            .field("options", &self.shared.opts)
            .finish_non_exhaustive()
    }
}

fn finished(phase: &Phase, id: TxnId) -> Error {
    let what = match phase {
        Phase::Active => "active",
        Phase::Prepared(_) => "prepared (finish it with commit or rollback)",
        Phase::Committed => "committed",
        Phase::RolledBack => "rolled back",
    };
    Error::invalid_argument(format!("transaction {id} is already {what}"))
}

impl Transaction {
    pub(crate) fn begin(db: Arc<DbInner>, opts: TransactionOptions) -> Result<Transaction> {
        db.check_writable()?;
        let id = db.next_txn_id.fetch_add(1, Ordering::Relaxed);
        let snapshot = opts.snapshot_at_begin.then(|| db.take_snapshot());
        Ok(Transaction {
            shared: Arc::new(TxnShared {
                db,
                id,
                opts,
                state: Mutex::new(TxnState {
                    phase: Phase::Active,
                    snapshot,
                    buffer: WriteBuffer::new(),
                    tracked: TrackedKeys::new(),
                    protected_reads: BTreeSet::new(),
                }),
            }),
        })
    }

    /// This transaction's id (unique within one open database; also its lock owner id).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The sequence number of this transaction's snapshot, if it has taken one.
    pub fn snapshot_seqno(&self) -> Option<SeqNo> {
        self.shared
            .state
            .lock()
            .snapshot
            .as_ref()
            .map(Snapshot::seqno)
    }

    /// Bytes held by the write buffer (keys, values, undo records and lock records, plus
    /// [`riptide_txn::ENTRY_OVERHEAD_BYTES`] per entry).
    pub fn approximate_memory(&self) -> usize {
        self.shared.state.lock().buffer.approximate_bytes()
    }

    /// Number of distinct keys written.
    pub fn write_count(&self) -> usize {
        self.shared.state.lock().buffer.len()
    }

    /// Reads `key` in `cf`: this transaction's own write if it made one, else the database at
    /// the transaction's read point. Under serializable, the key is validated at commit
    /// (optimistic) or share-locked (pessimistic).
    pub fn get(&self, cf: &ColumnFamily, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let serializable = self.shared.opts.isolation == IsolationLevel::Serializable;
        self.read(cf, key, serializable.then_some(LockMode::Shared))
    }

    /// Reads `key` in `cf` and protects it against concurrent writers until this transaction
    /// ends: an exclusive (`exclusive`) or shared row lock when pessimistic, validation at
    /// commit when optimistic (`SELECT ... FOR UPDATE` / `LOCK IN SHARE MODE`).
    pub fn get_for_update(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        exclusive: bool,
    ) -> Result<Option<Vec<u8>>> {
        let mode = if exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        self.read(cf, key, Some(mode))
    }

    /// Sets `key` to `value` in `cf`.
    pub fn put(&self, cf: &ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        self.write(cf, key, |b| b.put(cf.id(), key, value), false)
    }

    /// Deletes `key` from `cf`.
    pub fn delete(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.write(cf, key, |b| b.delete(cf.id(), key), true)
    }

    /// Single-deletes `key` from `cf` (see [`crate::Db::single_delete`] for the contract).
    pub fn single_delete(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.write(cf, key, |b| b.single_delete(cf.id(), key), true)
    }

    /// An iterator over `cf` that merges this transaction's writes over the database at the
    /// transaction's read point, within `opts`' bounds (`opts.snapshot` is ignored). It sees
    /// writes this transaction makes while it is open. Scans are not validated or locked.
    pub fn iter(&self, cf: &ColumnFamily, opts: ReadOptions<'_>) -> Result<TxnIterator> {
        let seqno = {
            let mut st = self.shared.state.lock();
            self.check_active(&st)?;
            self.read_seqno(&mut st)
        };
        TxnIterator::new(
            Arc::clone(&self.shared),
            cf.clone(),
            seqno,
            opts.lower_bound,
            opts.upper_bound,
        )
    }

    /// Marks a savepoint. Savepoints nest.
    pub fn set_savepoint(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        st.buffer.set_savepoint();
        Ok(())
    }

    /// Undoes every write since the newest savepoint and removes it. Row locks taken after it
    /// (and not held before it) are released. Keys tracked for optimistic validation stay
    /// tracked (this can only cause a conflict, never hide one). `NotFound` if there is no
    /// savepoint.
    pub fn rollback_to_savepoint(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        let released = st.buffer.rollback_to_savepoint()?;
        self.shared
            .db
            .locks
            .unlock_all(self.shared.id, released.iter().map(|k| (k.cf(), k.key())));
        Ok(())
    }

    /// Forgets the newest savepoint, keeping its writes. `NotFound` if there is none.
    pub fn release_savepoint(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        st.buffer.pop_savepoint()
    }

    /// Commits: validates (optimistic), writes every buffered write as one atomic batch and
    /// releases the locks. After a `Conflict` the transaction is rolled back. A prepared
    /// transaction is committed by its xid marker.
    pub fn commit(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        let outcome = match st.phase.clone() {
            Phase::Active => self.commit_active(&mut st),
            Phase::Prepared(xid) => self.shared.db.finish_prepared(&xid, true),
            other => return Err(finished(&other, self.shared.id)),
        };
        self.end(
            &mut st,
            if outcome.is_ok() {
                Phase::Committed
            } else {
                Phase::RolledBack
            },
        );
        outcome
    }

    /// Rolls back: forgets every buffered write and releases the locks. A prepared
    /// transaction is rolled back durably.
    pub fn rollback(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        let outcome = match st.phase.clone() {
            Phase::Active => Ok(()),
            Phase::Prepared(xid) => self.shared.db.finish_prepared(&xid, false),
            other => return Err(finished(&other, self.shared.id)),
        };
        self.end(&mut st, Phase::RolledBack);
        outcome
    }

    /// Two-phase commit, phase one: validates like commit, then makes the writes durable in
    /// the WAL under `xid` without making them visible. The locks stay held. After a crash,
    /// [`crate::Db::prepared_transactions`] lists `xid` until
    /// [`crate::Db::commit_prepared`] or [`crate::Db::rollback_prepared`] finishes it; in this
    /// process, [`Transaction::commit`] or [`Transaction::rollback`] does.
    pub fn prepare(&self, xid: &Xid) -> Result<()> {
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        let locked = match self.lock_for_commit(&st) {
            Ok(locked) => locked,
            Err(e) => {
                self.end(&mut st, Phase::RolledBack);
                return Err(e);
            }
        };
        // The commit locks of an optimistic transaction stay held while it is prepared (its
        // writes are decided but not visible): `end` releases them with the others.
        for (cf, key) in &locked {
            st.buffer.record_lock(*cf, key, LockMode::Exclusive);
        }
        let outcome = self.validate(&st).and_then(|()| {
            let batch = self.build_batch(&st)?;
            self.shared.db.prepare_batch(xid, batch)
        });
        match outcome {
            Ok(()) => {
                st.phase = Phase::Prepared(xid.clone());
                Ok(())
            }
            Err(e) => {
                self.end(&mut st, Phase::RolledBack);
                Err(e)
            }
        }
    }

    fn check_active(&self, st: &TxnState) -> Result<()> {
        match &st.phase {
            Phase::Active => Ok(()),
            other => Err(finished(other, self.shared.id)),
        }
    }

    /// The sequence number reads see now: the snapshot (taken now if needed) under
    /// repeatable read and serializable, the newest committed under read committed.
    /// True when locking reads and writes are current reads (see
    /// [`TransactionOptions::current_reads`]).
    fn current_reads(&self) -> bool {
        self.shared.opts.current_reads && self.shared.opts.concurrency == Concurrency::Pessimistic
    }

    fn read_seqno(&self, st: &mut TxnState) -> SeqNo {
        match self.shared.opts.isolation {
            IsolationLevel::ReadCommitted => self.shared.db.last_seqno.load(Ordering::Acquire),
            IsolationLevel::RepeatableRead | IsolationLevel::Serializable => st
                .snapshot
                .get_or_insert_with(|| self.shared.db.take_snapshot())
                .seqno(),
        }
    }

    fn read(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        lock: Option<LockMode>,
    ) -> Result<Option<Vec<u8>>> {
        crate::db::check_live(cf)?;
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        if let Some(mode) = lock {
            self.protect(&mut st, cf, key, mode, false)?;
            st.protected_reads.insert((cf.id(), key.to_vec()));
        }
        // After the lock wait (read committed must see what the lock holder committed), and
        // after tracking (an optimistic key is tracked at or before the point it is read at,
        // so a commit in between is a conflict, never a missed one). A current read sees the
        // newest committed version: the lock it holds keeps it from changing.
        let seqno = if lock.is_some() && self.current_reads() {
            self.shared.db.last_seqno.load(Ordering::Acquire)
        } else {
            self.read_seqno(&mut st)
        };
        if let Some(op) = st.buffer.get(cf.id(), key) {
            return Ok(op.value().map(<[u8]>::to_vec));
        }
        drop(st);
        self.shared.db.counted_get(&cf.data.view(), key, seqno)
    }

    fn write(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        apply: impl FnOnce(&mut WriteBuffer),
        is_delete: bool,
    ) -> Result<()> {
        self.shared.db.check_writable()?;
        crate::db::check_live(cf)?;
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        self.protect(&mut st, cf, key, LockMode::Exclusive, is_delete)?;
        apply(&mut st.buffer);
        Ok(())
    }

    /// Locks (pessimistic) or tracks (optimistic) `key` for `mode`. A pessimistic lock under
    /// a snapshot fails with `Conflict` if the key changed after the snapshot (unless this is
    /// a blind delete of a key a newer commit already deleted).
    fn protect(
        &self,
        st: &mut TxnState,
        cf: &ColumnFamily,
        key: &[u8],
        mode: LockMode,
        blind_delete: bool,
    ) -> Result<()> {
        match self.shared.opts.concurrency {
            Concurrency::Optimistic => {
                // Validated against the read point: a key is never tracked after it was read.
                let seqno = self.read_seqno(st);
                st.tracked.track(cf.id(), key, seqno);
                Ok(())
            }
            Concurrency::Pessimistic => {
                if st
                    .buffer
                    .lock_mode(cf.id(), key)
                    .is_some_and(|held| held >= mode)
                {
                    return Ok(());
                }
                self.shared.db.locks.lock(
                    self.shared.id,
                    cf.id(),
                    key,
                    mode,
                    self.shared.opts.lock_timeout,
                )?;
                st.buffer.record_lock(cf.id(), key, mode);
                // Current reads work on whatever the key now holds: no snapshot to conflict
                // with (and none taken here, so a transaction whose first step waited for a
                // lock reads what the lock's holder committed).
                if self.shared.opts.isolation == IsolationLevel::ReadCommitted
                    || self.shared.opts.current_reads
                {
                    return Ok(());
                }
                let seqno = self.read_seqno(st);
                if let Some(newer) = cf.data.view().newer_version(key, seqno)?
                    && !(blind_delete && newer.deleted)
                {
                    return Err(conflict(cf, key, seqno));
                }
                Ok(())
            }
        }
    }

    /// Takes short exclusive locks on every tracked key, in key order (optimistic only).
    fn lock_for_commit(&self, st: &TxnState) -> Result<Vec<(CfId, Vec<u8>)>> {
        if self.shared.opts.concurrency != Concurrency::Optimistic {
            return Ok(Vec::new());
        }
        let mut locked = Vec::with_capacity(st.tracked.len());
        for (cf, key, _) in st.tracked.iter() {
            if let Err(e) = self.shared.db.locks.lock(
                self.shared.id,
                cf,
                key,
                LockMode::Exclusive,
                self.shared.opts.lock_timeout,
            ) {
                self.unlock_keys(&locked);
                return Err(e);
            }
            locked.push((cf, key.to_vec()));
        }
        Ok(locked)
    }

    fn unlock_keys(&self, keys: &[(CfId, Vec<u8>)]) {
        self.shared.db.locks.unlock_all(
            self.shared.id,
            keys.iter().map(|(cf, k)| (*cf, k.as_slice())),
        );
    }

    /// Optimistic validation: no tracked key may have a version newer than the sequence
    /// number it was tracked at (blind deletes of keys already deleted excepted).
    fn validate(&self, st: &TxnState) -> Result<()> {
        if self.shared.opts.concurrency != Concurrency::Optimistic {
            return Ok(());
        }
        let cfs = self.shared.db.cfs.read();
        for (cf_id, key, seqno) in st.tracked.iter() {
            let Some(cf) = cfs.get(&cf_id) else {
                return Err(Error::not_found(format!(
                    "column family id {cf_id} was dropped during the transaction"
                )));
            };
            let Some(newer) = cf.view().newer_version(key, seqno)? else {
                continue;
            };
            let blind_delete = st.buffer.get(cf_id, key).is_some_and(BufferedOp::is_delete)
                && !st.protected_reads.contains(&(cf_id, key.to_vec()));
            if !(blind_delete && newer.deleted) {
                let handle = ColumnFamily {
                    data: Arc::clone(cf),
                };
                return Err(conflict(&handle, key, seqno));
            }
        }
        Ok(())
    }

    /// The commit batch: every buffered write, in key order. A single delete of a key that
    /// is already absent is dropped: it changes nothing, and a second single delete after
    /// another transaction's would break the single-delete contract. (The key is locked by
    /// this transaction here, so it cannot reappear before the batch is written.)
    fn build_batch(&self, st: &TxnState) -> Result<RawBatch> {
        let mut batch = RawBatch::new();
        let cfs = self.shared.db.cfs.read();
        for (cf, key, op) in st.buffer.iter_all() {
            match op {
                BufferedOp::Put(v) => batch.put_cf(cf, key, v),
                BufferedOp::PutAfterDelete { value, single } => {
                    // The deletion first (it gets the smaller sequence number), then the put.
                    if *single {
                        let absent = match cfs.get(&cf) {
                            Some(data) => data.view().get(key, MAX_SEQNO)?.is_none(),
                            None => false,
                        };
                        if !absent {
                            batch.single_delete_cf(cf, key);
                        }
                    } else {
                        batch.delete_cf(cf, key);
                    }
                    batch.put_cf(cf, key, value);
                }
                BufferedOp::Delete => batch.delete_cf(cf, key),
                BufferedOp::SingleDelete => {
                    let absent = match cfs.get(&cf) {
                        Some(data) => data.view().get(key, MAX_SEQNO)?.is_none(),
                        None => false,
                    };
                    if !absent {
                        batch.single_delete_cf(cf, key);
                    }
                }
            }
        }
        Ok(batch)
    }

    fn commit_active(&self, st: &mut TxnState) -> Result<()> {
        if st.buffer.is_empty() {
            return Ok(());
        }
        let locked = self.lock_for_commit(st)?;
        let result = self
            .validate(st)
            .and_then(|()| self.build_batch(st))
            .and_then(|batch| self.shared.db.write_raw(batch));
        self.unlock_keys(&locked);
        result
    }

    /// Ends the transaction: releases its locks and snapshot, frees its buffer.
    fn end(&self, st: &mut TxnState, phase: Phase) {
        let keys: Vec<(CfId, Vec<u8>)> = st
            .buffer
            .locked_keys()
            .map(|(cf, k, _)| (cf, k.to_vec()))
            .collect();
        self.unlock_keys(&keys);
        st.buffer.clear();
        st.tracked.clear();
        st.protected_reads.clear();
        st.snapshot = None;
        st.phase = phase;
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        let mut st = self.shared.state.lock();
        match st.phase {
            Phase::Active => self.end(&mut st, Phase::RolledBack),
            Phase::Prepared(ref xid) => {
                // Stays prepared in the WAL, to be finished by xid. Its write locks stay held
                // (handed to the prepared-transaction registry, which releases them when it
                // is finished); locks of keys it only read are released now.
                let xid = xid.clone();
                let logged = self.shared.db.prepared.keys_of(&xid);
                let not_logged: Vec<(CfId, Vec<u8>)> = st
                    .buffer
                    .locked_keys()
                    .map(|(cf, k, _)| (cf, k.to_vec()))
                    .filter(|key| !logged.contains(key))
                    .collect();
                self.unlock_keys(&not_logged);
                self.shared.db.prepared.set_owner(&xid, self.shared.id);
            }
            Phase::Committed | Phase::RolledBack => {}
        }
    }
}

fn conflict(cf: &ColumnFamily, key: &[u8], seqno: SeqNo) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!(
            "write conflict on {} (column family {:?}): another transaction committed a newer \
             version after this transaction's read point (sequence number {seqno}); roll back \
             and retry",
            KeyFmt { cf: cf.id(), key },
            cf.name()
        ),
    )
}
