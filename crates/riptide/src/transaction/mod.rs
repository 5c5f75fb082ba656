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
//!   level, so a scan repeated after another transaction's commit may see a new key under
//!   read committed, and a serializable transaction that scans that way is only serializable
//!   with respect to the keys it read by point lookups. A pessimistic transaction prevents
//!   them with *locking scans* ([`Transaction::iter_locking`], InnoDB's locking reads):
//!   under repeatable read and serializable they gap-lock the ranges they walk, and inserts
//!   of other transactions made with [`Transaction::insert`] wait for those gap locks
//!   (InnoDB's insert intention). Plain [`Transaction::put`]s and optimistic transactions do
//!   not check gap locks.
//!
//! # Locking scans and gap locks
//!
//! A locking scan reads the newest committed data merged with the transaction's own writes
//! (not the snapshot), locks every row it stops on, and, except under read committed, holds
//! a gap lock on the range it walked until the transaction ends (not released by a savepoint
//! rollback, as in InnoDB). It must also see inserts that other transactions have made but
//! not committed, as InnoDB's scan meets them in its pages: pessimistic transactions register
//! at their first write in `DbInner::writers`, and a scan looks at the buffers of the
//! writers registered when it started, waiting for the row lock of an uncommitted insert in
//! the part it walks. The protocol that makes this race-free:
//!
//! - the scan *reserves* its range in the lock manager first, then lists the writers, then
//!   reads at the newest sequence number;
//! - an insert writes its own buffer first, then checks the gap locks (one atomic load while
//!   there are none);
//! - an insert into the reserved part ahead of the scan goes ahead and is recorded; one into
//!   the part the scan holds waits.
//!
//! So an insert the scan's reads miss was either in a listed writer's buffer (the scan finds
//! it, or sees that writer commit and reads again) or recorded in the reservation (the scan
//! gets it back when it holds that part). The cost of a locking step with other writers
//! about is one look at each listed writer's buffer; with none, a few atomic loads.
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
//!   Waits end after the transaction's lock timeout with `TimedOut` (see "Lock waits"
//!   below); a wait that would close a cycle fails at once with `Deadlock` (the requester
//!   is the victim). Locks on keys
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
//! # Lock waits: timeouts, interrupts, skip locked
//!
//! Every lock wait of a transaction (a row lock of a read, a write or a locking iterator,
//! an insert intention, an optimistic commit's locks) reads the transaction's *current*
//! lock timeout when it begins: [`TransactionOptions::lock_timeout`], until
//! [`Transaction::set_lock_timeout`] changes it (MariaDB's `NOWAIT` / `WAIT n` for one
//! statement). Zero means "do not wait": a lock that is not free fails with `TimedOut` at
//! once.
//!
//! Another thread can end the waits early through an [`InterruptHandle`]
//! ([`Transaction::interrupt_handle`]; MariaDB's `KILL QUERY`, a shutdown). The current
//! wait fails with [`ErrorKind::Interrupted`] within a wake-up, and so does every later
//! wait, without waiting, until the owner calls [`Transaction::clear_interrupt`]: an
//! interrupt that arrives just before a wait begins is not lost. Like a timeout, an
//! interrupted wait leaves the transaction usable: it keeps the locks it held, and the
//! request that failed changed nothing (an interrupted step of a locking iterator ends that
//! iterator's usefulness, as any failed step: make a new one). Requests granted without
//! waiting never look at the flag, so it costs nothing on the lock fast path.
//!
//! `SKIP LOCKED` never waits: [`Transaction::get_for_update_skip_locked`] reports a key
//! locked by another transaction as [`LockedRead::LockedByOther`] instead of waiting, and
//! [`Transaction::iter_skip_locked`] steps over such keys (and over other transactions'
//! uncommitted inserts), locking the rest as a locking iterator does, gaps included.
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
pub(crate) mod live;
pub(crate) mod two_phase;

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use riptide_common::key::MAX_SEQNO;
use riptide_common::write_batch::WriteBatch as RawBatch;
use riptide_common::{CfId, Error, ErrorKind, Result, SeqNo};
use riptide_txn::{
    BufferedOp, Interrupt, KeyFmt, LockManager, LockMode, TrackedKeys, TxnId, WriteBuffer, Xid,
};

use crate::cf::ColumnFamily;
use crate::db::DbInner;
use crate::options::ReadOptions;
use crate::read_point::ReadPoint;
use crate::snapshot::Snapshot;
use crate::stats::Counters;

pub use iter::TxnIterator;
pub use live::{TransactionInfo, TransactionState};
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
    /// (pessimistic). Range scans are protected only when they are locking scans
    /// ([`Transaction::iter_locking`], gap locks).
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
    pub(crate) owner: u64,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            isolation: IsolationLevel::RepeatableRead,
            concurrency: Concurrency::Pessimistic,
            lock_timeout: Duration::from_secs(50),
            snapshot_at_begin: false,
            current_reads: false,
            owner: 0,
        }
    }
}

impl TransactionOptions {
    /// Who runs the transaction, as the caller numbers it (MariaDB: the connection id),
    /// shown by [`Db::transactions`](crate::Db::transactions). Default 0 (none).
    pub fn owner(mut self, owner: u64) -> Self {
        self.owner = owner;
        self
    }

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

/// What a locking read that does not wait found ([`Transaction::get_for_update_skip_locked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockedRead {
    /// The key is locked now (or was already) and reads as this: `None` when absent.
    Value(Option<Vec<u8>>),
    /// Another transaction holds the key's lock in a conflicting mode (or, for a shared
    /// read, has queued an exclusive request on it): nothing was locked or read (`SKIP
    /// LOCKED` skips the row).
    LockedByOther,
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
    /// Keys whose value this (optimistic) transaction read under protection
    /// (`get_for_update`, or any `get` under serializable): a newer delete of them is a
    /// conflict even for a delete. Pessimistic transactions do not fill it (their locks
    /// protect those keys).
    protected_reads: BTreeSet<(CfId, Vec<u8>)>,
    /// Registered in `DbInner::writers` (a pessimistic transaction that has written).
    registered: bool,
    /// Took gap locks (released at the end).
    gap_locks: bool,
    /// Whether the commit waits for the WAL sync in full sync mode
    /// ([`Transaction::set_commit_sync`]).
    commit_sync: bool,
}

/// What another transaction has not committed yet in a key range, as a locking scan sees it.
pub(crate) enum Pending {
    /// Still active (or prepared): its first (forward) or last uncommitted put in the range.
    Active(Option<Vec<u8>>),
    /// Committed since: its writes are in the database now.
    Committed,
    /// Rolled back: it wrote nothing.
    RolledBack,
}

/// The pessimistic transactions that have written and not ended, so that a locking scan can
/// find the keys they inserted but have not committed (InnoDB finds them in its pages, with
/// their implicit locks). A transaction registers at its first write and leaves at its
/// end: two short critical sections per writing transaction, on one of
/// [`WRITER_SHARDS`] mutexes chosen by transaction id; a locking scan visits them all once.
pub(crate) struct Writers {
    shards: [Mutex<HashMap<TxnId, Weak<TxnShared>>>; WRITER_SHARDS],
}

/// How many mutexes [`Writers`] spreads its transactions over.
const WRITER_SHARDS: usize = 16;

impl Default for Writers {
    fn default() -> Self {
        Writers {
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }
}

impl Writers {
    fn shard(&self, id: TxnId) -> &Mutex<HashMap<TxnId, Weak<TxnShared>>> {
        // The remainder is below the shard count, so it fits in usize.
        let i = (id % WRITER_SHARDS as u64) as usize;
        // `i < WRITER_SHARDS`: always in bounds; the first shard is never used otherwise.
        self.shards.get(i).unwrap_or(&self.shards[0])
    }

    fn register(&self, txn: &Arc<TxnShared>) {
        self.shard(txn.id)
            .lock()
            .insert(txn.id, Arc::downgrade(txn));
    }

    fn deregister(&self, id: TxnId) {
        self.shard(id).lock().remove(&id);
    }

    /// The live writers other than `me`.
    pub(crate) fn others(&self, me: TxnId) -> Vec<Arc<TxnShared>> {
        let mut out = Vec::new();
        for shard in &self.shards {
            out.extend(
                shard
                    .lock()
                    .iter()
                    .filter(|&(&id, _)| id != me)
                    .filter_map(|(_, w)| w.upgrade()),
            );
        }
        out
    }
}

/// What a [`Transaction`] and its iterators share.
pub(crate) struct TxnShared {
    db: Arc<DbInner>,
    id: TxnId,
    opts: TransactionOptions,
    /// The current lock wait limit in nanoseconds (saturated), read by every wait:
    /// [`TransactionOptions::lock_timeout`] until [`Transaction::set_lock_timeout`].
    lock_timeout_nanos: AtomicU64,
    /// Raised by [`InterruptHandle::interrupt`]; every lock wait of this transaction looks
    /// at it.
    interrupt: Arc<Interrupt>,
    state: Mutex<TxnState>,
    /// When it began ([`TransactionInfo::age`]).
    started: std::time::Instant,
    /// [`TransactionOptions::owner`], or what [`Transaction::set_owner`] set since.
    owner: AtomicU64,
}

/// A duration as saturated nanoseconds (584 years: a limit that large waits forever).
fn saturating_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Ends the lock waits of one transaction from another thread: MariaDB's `KILL QUERY` of a
/// statement waiting for a row lock, or a server shutdown. Made by
/// [`Transaction::interrupt_handle`]; cheap to clone, `Send + Sync`, and harmless to keep
/// and use after its transaction (or the database) is gone: it holds only the interrupt
/// flag and the lock table, not the transaction nor the open database.
///
/// [`InterruptHandle::interrupt`] makes the transaction's current lock wait, if any, fail
/// promptly (microseconds, a wake-up away) with [`ErrorKind::Interrupted`], and every later
/// one fail at once, until the transaction's owner calls [`Transaction::clear_interrupt`]
/// (MariaDB: at the start of the next statement). An interrupted wait leaves the transaction
/// usable, as a timeout does: it keeps the locks it held, and the failed request changed
/// nothing. Requests that are granted without waiting never look at the flag.
#[derive(Clone)]
pub struct InterruptHandle {
    flag: Arc<Interrupt>,
    locks: Arc<LockManager>,
    txn: TxnId,
}

impl std::fmt::Debug for InterruptHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterruptHandle")
            .field("txn", &self.txn)
            .field("interrupted", &self.flag.is_set())
            .finish()
    }
}

impl InterruptHandle {
    /// Interrupts the transaction's current and later lock waits (see the type's
    /// documentation). Callable from any thread, any number of times; wakes every waiting
    /// lock request of the database briefly (the others go back to waiting), so it is for
    /// rare events, not a fast path.
    pub fn interrupt(&self) {
        self.locks.interrupt(&self.flag);
    }

    /// Whether the transaction's waits are interrupted (raised and not cleared since).
    pub fn is_interrupted(&self) -> bool {
        self.flag.is_set()
    }

    /// The id of the transaction this handle interrupts.
    pub fn txn_id(&self) -> u64 {
        self.txn
    }
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

impl TxnShared {
    /// The sequence number reads see now: the snapshot (taken now if needed) under
    /// repeatable read and serializable, the newest committed under read committed.
    fn read_seqno(&self, st: &mut TxnState) -> SeqNo {
        match self.opts.isolation {
            IsolationLevel::ReadCommitted => self.db.last_seqno.load(Ordering::Acquire),
            IsolationLevel::RepeatableRead | IsolationLevel::Serializable => st
                .snapshot
                .get_or_insert_with(|| self.db.take_snapshot())
                .seqno(),
        }
    }

    /// Where reads look from now ([`ReadPoint`] orders the view and the number): the
    /// snapshot (registered now if needed) under repeatable read and serializable, the newest
    /// committed under read committed.
    fn read_point(&self, st: &mut TxnState) -> ReadPoint {
        match self.opts.isolation {
            IsolationLevel::ReadCommitted => ReadPoint::Newest,
            IsolationLevel::RepeatableRead | IsolationLevel::Serializable => {
                ReadPoint::Snapshot(self.read_seqno(st))
            }
        }
    }

    /// The lock wait limit of this transaction's waits from now on.
    fn lock_timeout(&self) -> Duration {
        Duration::from_nanos(self.lock_timeout_nanos.load(Ordering::Relaxed))
    }

    /// Locks (pessimistic) or tracks (optimistic) `key` for `mode`; returns whether a lock
    /// wait happened (the key may have changed meanwhile). A pessimistic lock under a
    /// snapshot fails with `Conflict` if the key changed after the snapshot (unless this is a
    /// blind delete of a key a newer commit already deleted, or current reads are on). The
    /// state is unlocked while waiting for the lock: locking scans of other transactions
    /// may look at this transaction's buffer meanwhile. The wait lasts up to the current
    /// lock timeout and ends early with `Interrupted` when the transaction is interrupted.
    fn protect(
        &self,
        st: &mut MutexGuard<'_, TxnState>,
        cf: &ColumnFamily,
        key: &[u8],
        mode: LockMode,
        blind_delete: bool,
    ) -> Result<bool> {
        match self.protect_with(st, cf, key, mode, blind_delete, true)? {
            Some(waited) => Ok(waited),
            None => Err(Error::new(
                ErrorKind::Internal,
                format!(
                    "txn {}: a waiting lock request on {} reported a lock held by another \
                     transaction",
                    self.id,
                    KeyFmt { cf: cf.id(), key }
                ),
            )),
        }
    }

    /// [`TxnShared::protect`] without any wait (`SKIP LOCKED`): `None`, changing nothing,
    /// when another transaction holds `key` in a conflicting mode (or has queued an
    /// exclusive request on it, for a shared `mode`); `Some(false)` once held. Optimistic
    /// transactions only track the key.
    fn protect_no_wait(
        &self,
        st: &mut MutexGuard<'_, TxnState>,
        cf: &ColumnFamily,
        key: &[u8],
        mode: LockMode,
    ) -> Result<Option<bool>> {
        self.protect_with(st, cf, key, mode, false, false)
    }

    /// The body of [`TxnShared::protect`] (`wait`) and [`TxnShared::protect_no_wait`].
    fn protect_with(
        &self,
        st: &mut MutexGuard<'_, TxnState>,
        cf: &ColumnFamily,
        key: &[u8],
        mode: LockMode,
        blind_delete: bool,
        wait: bool,
    ) -> Result<Option<bool>> {
        match self.opts.concurrency {
            Concurrency::Optimistic => {
                // Validated against the read point: a key is never tracked after it was read.
                let seqno = self.read_seqno(st);
                st.tracked.track(cf.id(), key, seqno);
                Ok(Some(false))
            }
            Concurrency::Pessimistic => {
                if st
                    .buffer
                    .lock_mode(cf.id(), key)
                    .is_some_and(|held| held >= mode)
                {
                    return Ok(Some(false));
                }
                let waited = if wait {
                    let timeout = self.lock_timeout();
                    MutexGuard::unlocked(st, || {
                        self.db.locks.lock_interruptible(
                            self.id,
                            cf.id(),
                            key,
                            mode,
                            timeout,
                            Some(&self.interrupt),
                        )
                    })?
                } else {
                    if !self.db.locks.try_lock(self.id, cf.id(), key, mode)? {
                        return Ok(None);
                    }
                    false
                };
                if st.phase != Phase::Active {
                    // Ended by another thread while this one waited (misuse): give it back.
                    self.db.locks.unlock(self.id, cf.id(), key);
                    return Err(finished(&st.phase, self.id));
                }
                st.buffer.record_lock(cf.id(), key, mode);
                // Current reads work on whatever the key now holds: no snapshot to conflict
                // with (and none taken here, so a transaction whose first step waited for a
                // lock reads what the lock's holder committed).
                if self.opts.isolation == IsolationLevel::ReadCommitted || self.opts.current_reads {
                    return Ok(Some(waited));
                }
                let seqno = self.read_seqno(st);
                if let Some(newer) = cf.data.view().newer_version(key, seqno)?
                    && !(blind_delete && newer.deleted)
                {
                    return Err(conflict(cf, key, seqno));
                }
                Ok(Some(waited))
            }
        }
    }

    /// The first (`forward`) or last uncommitted put of this transaction in `cf` between
    /// `lower` and `upper` whose key `skip` does not reject, for a locking scan of another
    /// transaction; or that this transaction has ended.
    fn pending(
        &self,
        cf: CfId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        forward: bool,
        skip: &dyn Fn(&[u8]) -> bool,
    ) -> Pending {
        let st = self.state.lock();
        match st.phase {
            Phase::Committed => Pending::Committed,
            Phase::RolledBack => Pending::RolledBack,
            Phase::Active | Phase::Prepared(_) => {
                let mut puts = st
                    .buffer
                    .range(cf, lower, upper)
                    .filter(|(k, op)| !op.is_delete() && !skip(k));
                let found = if forward {
                    puts.next()
                } else {
                    puts.next_back()
                };
                Pending::Active(found.map(|(k, _)| k.to_vec()))
            }
        }
    }

    /// Fails unless the transaction is active.
    fn check_active(&self) -> Result<()> {
        let st = self.state.lock();
        match &st.phase {
            Phase::Active => Ok(()),
            other => Err(finished(other, self.id)),
        }
    }
}

impl Transaction {
    pub(crate) fn begin(db: Arc<DbInner>, opts: TransactionOptions) -> Result<Transaction> {
        db.check_writable()?;
        let id = db.next_txn_id.fetch_add(1, Ordering::Relaxed);
        let snapshot = opts.snapshot_at_begin.then(|| db.take_snapshot());
        let owner = opts.owner;
        let txn = Transaction {
            shared: Arc::new(TxnShared {
                db,
                id,
                lock_timeout_nanos: AtomicU64::new(saturating_nanos(opts.lock_timeout)),
                opts,
                interrupt: Arc::new(Interrupt::new()),
                state: Mutex::new(TxnState {
                    phase: Phase::Active,
                    snapshot,
                    buffer: WriteBuffer::new(),
                    tracked: TrackedKeys::new(),
                    protected_reads: BTreeSet::new(),
                    registered: false,
                    gap_locks: false,
                    commit_sync: true,
                }),
                started: std::time::Instant::now(),
                owner: AtomicU64::new(owner),
            }),
        };
        txn.shared.db.live.register(&txn.shared);
        Ok(txn)
    }

    /// This transaction's id (unique within one open database; also its lock owner id).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// Sets who runs the transaction (see [`TransactionOptions::owner`]), as
    /// [`Db::transactions`](crate::Db::transactions) shows it from now on.
    pub fn set_owner(&self, owner: u64) {
        self.shared.owner.store(owner, Ordering::Relaxed);
    }

    /// A handle another thread can use to interrupt this transaction's lock waits (see
    /// [`InterruptHandle`]). Every handle of one transaction shares one flag.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        InterruptHandle {
            flag: Arc::clone(&self.shared.interrupt),
            locks: Arc::clone(&self.shared.db.locks),
            txn: self.shared.id,
        }
    }

    /// Re-arms the transaction after an interrupt: its lock waits wait normally again. The
    /// interrupt stays in force until this is called, so an interrupt that arrives before a
    /// wait begins is not lost (MariaDB: call it at the start of each statement).
    pub fn clear_interrupt(&self) {
        self.shared.interrupt.clear();
    }

    /// Whether the transaction's lock waits are interrupted (see [`InterruptHandle`]).
    pub fn is_interrupted(&self) -> bool {
        self.shared.interrupt.is_set()
    }

    /// Sets the limit of this transaction's lock waits from now on (every wait: row locks of
    /// reads, writes and locking iterators, insert intentions, an optimistic commit's locks),
    /// in place of [`TransactionOptions::lock_timeout`] (MariaDB's `NOWAIT` and `WAIT n`
    /// for one statement, `innodb_lock_wait_timeout` changed in a session). Zero: a lock
    /// that is not available at once fails with `TimedOut` without waiting. A wait already
    /// in progress keeps the limit it started with.
    pub fn set_lock_timeout(&self, timeout: Duration) {
        self.shared
            .lock_timeout_nanos
            .store(saturating_nanos(timeout), Ordering::Relaxed);
    }

    /// The current limit of this transaction's lock waits (see
    /// [`Transaction::set_lock_timeout`]).
    pub fn lock_timeout(&self) -> Duration {
        self.shared.lock_timeout()
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

    /// Whether another transaction committed a write of `key` in `cf` after this transaction's
    /// snapshot (false without a snapshot: read committed, or nothing read yet). A current
    /// read (locking read, or a write under [`TransactionOptions::current_reads`]) works on
    /// such a newer version; this tells the caller that its snapshot reads of related keys
    /// (the MariaDB handler's secondary index entries of the row) do not show that version.
    pub fn changed_since_snapshot(&self, cf: &ColumnFamily, key: &[u8]) -> Result<bool> {
        crate::db::check_live(cf)?;
        let Some(seqno) = self.snapshot_seqno() else {
            return Ok(false);
        };
        Ok(cf.data.view().newer_version(key, seqno)?.is_some())
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

    /// Whether this transaction has written (put or deleted) a key of `cf` in
    /// `[start, end)` that it has not committed yet.
    pub fn writes_in_range(&self, cf: &ColumnFamily, start: &[u8], end: &[u8]) -> Result<bool> {
        let st = self.shared.state.lock();
        self.check_active(&st)?;
        Ok(st
            .buffer
            .range(cf.id(), Bound::Included(start), Bound::Excluded(end))
            .next()
            .is_some())
    }

    /// Takes a lock on `name` in `cf`, a key nobody writes: a lock that guards something
    /// other than a row (the MariaDB handler: a table against bulk loads, see its `bulk`
    /// module). Exclusive (`exclusive`) or shared, held until this transaction ends, with
    /// the same waits, timeout, interrupt and deadlock detection as a row lock. Unlike
    /// [`Transaction::get_for_update`] it reads nothing and never reports a conflict with
    /// the snapshot (`name` is never written). Optimistic transactions lock nothing.
    pub fn lock_name(&self, cf: &ColumnFamily, name: &[u8], exclusive: bool) -> Result<()> {
        crate::db::check_live(cf)?;
        if self.shared.opts.concurrency != Concurrency::Pessimistic {
            return Ok(());
        }
        let mode = if exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        if st
            .buffer
            .lock_mode(cf.id(), name)
            .is_some_and(|held| held >= mode)
        {
            return Ok(());
        }
        let timeout = self.shared.lock_timeout();
        MutexGuard::unlocked(&mut st, || {
            self.shared.db.locks.lock_interruptible(
                self.shared.id,
                cf.id(),
                name,
                mode,
                timeout,
                Some(&self.shared.interrupt),
            )
        })?;
        if st.phase != Phase::Active {
            // Ended by another thread while this one waited (misuse): give it back.
            self.shared.db.locks.unlock(self.shared.id, cf.id(), name);
            return Err(finished(&st.phase, self.shared.id));
        }
        st.buffer.record_lock(cf.id(), name, mode);
        Ok(())
    }

    /// [`Transaction::get_for_update`] that never waits (`SELECT ... FOR UPDATE SKIP LOCKED`,
    /// the row read behind a skip-locked index scan): when another transaction holds the
    /// key's lock in a conflicting mode, or (for a shared read) has queued an exclusive
    /// request on it, returns [`LockedRead::LockedByOther`] and neither locks nor reads
    /// anything; otherwise locks and reads as `get_for_update` does. Neither a timeout nor
    /// an interrupt applies (nothing waits). Optimistic transactions lock nothing: always a
    /// value.
    pub fn get_for_update_skip_locked(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        exclusive: bool,
    ) -> Result<LockedRead> {
        let mode = if exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        self.read_with(cf, key, Some(mode), false)
    }

    /// Sets `key` to `value` in `cf`.
    pub fn put(&self, cf: &ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        crate::db::check_entry_size(key, value)?;
        self.write(cf, key, value.len(), |b| b.put(cf.id(), key, value), false)
    }

    /// Sets `key` to `value` in `cf`, where the caller expects `key` to be new (an `INSERT`).
    /// Under pessimistic concurrency this is InnoDB's *insert intention*: if another
    /// transaction holds a gap lock covering `key` (a locking scan under repeatable read or
    /// serializable walked over it, see [`Transaction::iter_locking`]), the insert waits for
    /// that transaction to end, up to [`TransactionOptions::lock_timeout`], with deadlock
    /// detection. When it fails (`TimedOut`, `Deadlock`) nothing was written. Otherwise the
    /// same as [`Transaction::put`] (which never waits for gap locks, and optimistic
    /// transactions ignore them). A key this transaction already wrote does not wait again.
    pub fn insert(&self, cf: &ColumnFamily, key: &[u8], value: &[u8]) -> Result<()> {
        crate::db::check_entry_size(key, value)?;
        let apply = |b: &mut WriteBuffer| b.put(cf.id(), key, value);
        self.write_with(cf, key, value.len(), apply, false, true)
    }

    /// Deletes `key` from `cf`.
    pub fn delete(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.write(cf, key, 0, |b| b.delete(cf.id(), key), true)
    }

    /// Single-deletes `key` from `cf` (see [`crate::Db::single_delete`] for the contract).
    /// The commit looks the key up and leaves the single delete out if the key is absent by
    /// then (another transaction single-deleted it first: two single deletes over one put
    /// would break the contract).
    pub fn single_delete(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.write(cf, key, 0, |b| b.single_delete(cf.id(), key), true)
    }

    /// As [`Transaction::single_delete`], for a key the caller knows is present: its newest
    /// committed version is a put, and nothing but this transaction can delete it before
    /// this transaction ends (the caller holds the lock that guards it; the MariaDB handler:
    /// the row lock of a secondary-index entry's row, whose current version it read). The
    /// commit then writes the single delete without looking the key up, which beyond memory
    /// is a disk read per deleted entry (`oltp_delete`, the insert benchmark's deletes). If
    /// this transaction already wrote the key, the single delete is checked as
    /// [`Transaction::single_delete`]'s. A caller whose key is in fact absent breaks the
    /// single-delete contract.
    pub fn single_delete_present(&self, cf: &ColumnFamily, key: &[u8]) -> Result<()> {
        self.write(cf, key, 0, |b| b.single_delete_present(cf.id(), key), true)
    }

    /// An iterator over `cf` that merges this transaction's writes over the database at the
    /// transaction's read point, within `opts`' bounds (`opts.snapshot` is ignored). It sees
    /// writes this transaction makes while it is open. Scans are not validated or locked (see
    /// [`Transaction::iter_locking`] for InnoDB's locking reads).
    pub fn iter(&self, cf: &ColumnFamily, opts: ReadOptions<'_>) -> Result<TxnIterator> {
        let point = {
            let mut st = self.shared.state.lock();
            self.check_active(&st)?;
            self.shared.read_point(&mut st)
        };
        TxnIterator::new(
            Arc::clone(&self.shared),
            cf.clone(),
            point,
            opts.lower_bound,
            opts.upper_bound,
        )
    }

    /// Like [`Transaction::iter`], but over the newest committed data (merged with this
    /// transaction's writes) whatever the snapshot, read as of this call, and without taking
    /// any lock. For a check after a lock that serialises the writers of what it looks for
    /// (the MariaDB handler's long UNIQUE keys: the server's duplicate check locks the hash
    /// value, then reads with this): under repeatable read the snapshot would miss what the
    /// lock's previous holder committed. `opts.snapshot` is ignored.
    pub fn iter_current(&self, cf: &ColumnFamily, opts: ReadOptions<'_>) -> Result<TxnIterator> {
        {
            let st = self.shared.state.lock();
            self.check_active(&st)?;
        }
        TxnIterator::new(
            Arc::clone(&self.shared),
            cf.clone(),
            ReadPoint::Newest,
            opts.lower_bound,
            opts.upper_bound,
        )
    }

    /// A *locking* iterator (pessimistic transactions only): InnoDB's locking reads
    /// (`SELECT ... FOR UPDATE` / `LOCK IN SHARE MODE`, serializable reads, the source scans of
    /// `INSERT ... SELECT`, `UPDATE` and `DELETE`). Unlike [`Transaction::iter`] it reads the
    /// newest committed data (merged with this transaction's own writes), whatever the
    /// snapshot, and locks what it reads:
    ///
    /// - every row it stops on gets a row lock (`exclusive` or shared), waiting like
    ///   [`Transaction::get_for_update`]; a row that changed meanwhile is read again;
    /// - under repeatable read and serializable, the key range it walks, gaps included, up to
    ///   and including the last row it stopped on (to the end of `opts`' bounds when it ran
    ///   off the end) is gap-locked until the transaction ends: inserts of other transactions
    ///   into it ([`Transaction::insert`]) wait. It also waits for rows other transactions
    ///   inserted there and have not committed yet (their row locks), then reads them if they
    ///   committed. Under read committed no gap is locked and uncommitted inserts are not
    ///   waited for (InnoDB takes no gap locks there either);
    /// - while it is open, its whole range (`opts`' bounds) is *reserved*: inserts ahead of it
    ///   by other transactions go ahead but are recorded, and the iterator waits for them when
    ///   it gets there. Dropping the iterator keeps only what it walked.
    ///
    /// Under repeatable read without [`TransactionOptions::current_reads`], a row with a
    /// version newer than the snapshot fails with `Conflict` once locked (first committer
    /// wins), as point locking reads do. Every step fails with `InvalidArgument` once the
    /// transaction has ended. After a failed step (a lock wait that timed out or would
    /// deadlock) drop the iterator and make a new one to retry: it may have let go of inserts
    /// it still had to wait for.
    pub fn iter_locking(
        &self,
        cf: &ColumnFamily,
        opts: ReadOptions<'_>,
        exclusive: bool,
    ) -> Result<TxnIterator> {
        self.iter_locking_with(cf, opts, exclusive, false)
    }

    /// A *skip-locked* locking iterator (`SELECT ... FOR UPDATE SKIP LOCKED`, `LOCK IN SHARE
    /// MODE SKIP LOCKED`): as [`Transaction::iter_locking`], but it never waits. A row whose
    /// lock another transaction holds in a conflicting mode (or, for shared locks, has queued
    /// an exclusive request on) is stepped over, unlocked and unread, as if it were not
    /// there; so is an insert another transaction has not committed yet. The rows it stops
    /// on are locked as usual. Gaps (repeatable read and serializable) are locked exactly as
    /// by a normal locking iterator, since gap locks never make the scan itself wait: the
    /// walked range, skipped rows and the gaps before them included, is gap-locked until the
    /// transaction ends (InnoDB locks next-key ranges of the rows it returns and nothing for
    /// a row it skips, so this holds a little more: inserts right before a skipped row wait
    /// too). Under read committed no gap is locked. A row past the stop key that another
    /// transaction holds ends the scan there, as the stop key does. Lock timeouts and
    /// interrupts do not apply (nothing waits).
    pub fn iter_skip_locked(
        &self,
        cf: &ColumnFamily,
        opts: ReadOptions<'_>,
        exclusive: bool,
    ) -> Result<TxnIterator> {
        self.iter_locking_with(cf, opts, exclusive, true)
    }

    /// The body of [`Transaction::iter_locking`] and [`Transaction::iter_skip_locked`].
    fn iter_locking_with(
        &self,
        cf: &ColumnFamily,
        opts: ReadOptions<'_>,
        exclusive: bool,
        skip_locked: bool,
    ) -> Result<TxnIterator> {
        crate::db::check_live(cf)?;
        if self.shared.opts.concurrency != Concurrency::Pessimistic {
            return Err(Error::invalid_argument(format!(
                "transaction {}: locking iterators need a pessimistic transaction",
                self.shared.id
            )));
        }
        let mode = if exclusive {
            LockMode::Exclusive
        } else {
            LockMode::Shared
        };
        let lower = opts.lower_bound;
        let upper = opts.upper_bound;
        let gap = {
            let mut st = self.shared.state.lock();
            self.check_active(&st)?;
            if self.shared.opts.isolation == IsolationLevel::ReadCommitted {
                None
            } else {
                st.gap_locks = true;
                Some(self.shared.db.locks.reserve_gap(
                    self.shared.id,
                    cf.id(),
                    lower.as_deref().map_or(Bound::Unbounded, Bound::Included),
                    upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
                ))
            }
        };
        // After the reservation (every insert from now on into the range is recorded or
        // waits), the writers that may have inserted before it, then the newest sequence
        // number: an insert this scan's reads miss is either pending in one of these writers
        // (and found there) or recorded in the reservation.
        let writers = if gap.is_some() {
            self.shared.db.writers.others(self.shared.id)
        } else {
            Vec::new()
        };
        TxnIterator::new_locking(
            Arc::clone(&self.shared),
            cf.clone(),
            ReadPoint::Newest,
            lower,
            upper,
            iter::ScanLock::new(mode, gap, writers, skip_locked),
        )
    }

    /// Releases this transaction's row lock on `key` of `cf` before the transaction ends,
    /// if it was first taken since savepoint depth `since` (0: at any time in the
    /// transaction; `k`: after the `k`-th open savepoint, counted from the outermost, was
    /// set) and the transaction has not written `key`. This is InnoDB's `unlock_row`: a READ
    /// COMMITTED statement lets go of a row it locked and then found it did not want
    /// (the caller decides when that is safe; gap locks are never released early). Returns
    /// whether a lock was released. Optimistic transactions hold no locks: `false`.
    pub fn release_lock(&self, cf: &ColumnFamily, key: &[u8], since: usize) -> Result<bool> {
        if self.shared.opts.concurrency != Concurrency::Pessimistic {
            return Ok(false);
        }
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        if !st.buffer.forget_lock_since(cf.id(), key, since) {
            return Ok(false);
        }
        Ok(self.shared.db.locks.unlock(self.shared.id, cf.id(), key))
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

    /// Forgets the savepoint at `index` (0: the oldest open one), keeping its writes and the
    /// savepoints set after it: a later rollback to one of those undoes what it did, a
    /// rollback to an earlier one undoes everything since that one. `NotFound` if fewer than
    /// `index + 1` savepoints are open.
    pub fn release_savepoint_at(&self, index: usize) -> Result<()> {
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        st.buffer.remove_savepoint(index)
    }

    /// Commits: validates (optimistic), writes every buffered write as one atomic batch and
    /// releases the locks. After a `Conflict` the transaction is rolled back. A prepared
    /// transaction is committed by its xid marker.
    pub fn commit(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        let outcome = match st.phase.clone() {
            Phase::Active => self.commit_active(&mut st),
            Phase::Prepared(xid) => self.shared.db.finish_prepared(&xid, true, st.commit_sync),
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

    /// Whether [`Transaction::commit`] waits for the WAL sync in [`SyncMode::Full`](crate::SyncMode::Full)
    /// (default `true`). With `false` its commit record is written but not synced before
    /// commit returns: the next sync (another commit, [`crate::Db::sync_wal`], a WAL
    /// rotation) makes it durable; a process crash loses nothing, a power loss may lose the
    /// commit. Meant for the commit of a prepared transaction whose outcome another log
    /// already holds durably (MariaDB's binary log after two-phase commit: recovery commits
    /// it again by its xid), which saves one `fdatasync` per transaction, as InnoDB and
    /// MyRocks do there. Other sync modes are not affected.
    pub fn set_commit_sync(&self, sync: bool) {
        self.shared.state.lock().commit_sync = sync;
    }

    /// Rolls back: forgets every buffered write and releases the locks. A prepared
    /// transaction is rolled back durably.
    pub fn rollback(&self) -> Result<()> {
        let mut st = self.shared.state.lock();
        let outcome = match st.phase.clone() {
            Phase::Active => Ok(()),
            Phase::Prepared(xid) => self.shared.db.finish_prepared(&xid, false, true),
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

    fn read(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        lock: Option<LockMode>,
    ) -> Result<Option<Vec<u8>>> {
        match self.read_with(cf, key, lock, true)? {
            LockedRead::Value(v) => Ok(v),
            LockedRead::LockedByOther => Err(Error::new(
                ErrorKind::Internal,
                format!(
                    "txn {}: a waiting read of {} reported a lock held by another transaction",
                    self.shared.id,
                    KeyFmt { cf: cf.id(), key }
                ),
            )),
        }
    }

    /// A read, locking `key` first if `lock` says so: waiting for it (`wait`), or reporting
    /// [`LockedRead::LockedByOther`] when it is not available at once.
    fn read_with(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        lock: Option<LockMode>,
        wait: bool,
    ) -> Result<LockedRead> {
        crate::db::check_live(cf)?;
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        if let Some(mode) = lock {
            if wait {
                self.shared.protect(&mut st, cf, key, mode, false)?;
            } else if self
                .shared
                .protect_no_wait(&mut st, cf, key, mode)?
                .is_none()
            {
                return Ok(LockedRead::LockedByOther);
            }
            // Only optimistic validation looks at them.
            if self.shared.opts.concurrency == Concurrency::Optimistic {
                st.protected_reads.insert((cf.id(), key.to_vec()));
            }
        }
        // After the lock wait (read committed must see what the lock holder committed), and
        // after tracking (an optimistic key is tracked at or before the point it is read at,
        // so a commit in between is a conflict, never a missed one). A current read sees the
        // newest committed version: the lock it holds keeps it from changing. `ReadPoint`
        // orders the view and the number (a snapshot is registered before the view).
        let point = if lock.is_some() && self.current_reads() {
            ReadPoint::Newest
        } else {
            self.shared.read_point(&mut st)
        };
        let (view, seqno) = point.view(&self.shared.db, cf);
        if let Some(op) = st.buffer.get(cf.id(), key) {
            return Ok(LockedRead::Value(op.value().map(<[u8]>::to_vec)));
        }
        drop(st);
        Ok(LockedRead::Value(
            self.shared.db.counted_get(&view, key, seqno)?,
        ))
    }

    fn write(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        value_len: usize,
        apply: impl FnOnce(&mut WriteBuffer) -> bool,
        is_delete: bool,
    ) -> Result<()> {
        self.write_with(cf, key, value_len, apply, is_delete, false)
    }

    /// A write; `insert`: with the insert-intention check (see [`Transaction::insert`]).
    /// `apply` writes to the buffer and says whether the buffer had no entry for `key`;
    /// `value_len` is the length of the value it writes (0 for a deletion), for the
    /// write-set limit ([`crate::Options::max_txn_write_set_bytes`]).
    fn write_with(
        &self,
        cf: &ColumnFamily,
        key: &[u8],
        value_len: usize,
        apply: impl FnOnce(&mut WriteBuffer) -> bool,
        is_delete: bool,
        insert: bool,
    ) -> Result<()> {
        self.shared.db.check_writable()?;
        crate::db::check_live(cf)?;
        let mut st = self.shared.state.lock();
        self.check_active(&st)?;
        self.check_write_set_limit(&st, key.len().saturating_add(value_len))?;
        self.shared
            .protect(&mut st, cf, key, LockMode::Exclusive, is_delete)?;
        let pessimistic = self.shared.opts.concurrency == Concurrency::Pessimistic;
        if pessimistic && !st.registered {
            self.shared.db.writers.register(&self.shared);
            st.registered = true;
        }
        let fresh = apply(&mut st.buffer) && insert && pessimistic;
        // The insert intention comes after the write is in the buffer: a locking scan
        // reserves its range, then looks at the writers' buffers; an insert writes its
        // buffer, then looks at the gap locks. Each step is under a mutex, so one of the two
        // sees the other (and this load is the fast path while no gap lock exists).
        if fresh && self.shared.db.locks.has_gap_locks() {
            let timeout = self.shared.lock_timeout();
            let shared = &self.shared;
            // Not holding the state while waiting: a scan may look at this buffer meanwhile.
            let outcome = MutexGuard::unlocked(&mut st, || {
                shared.db.locks.insert_intention_interruptible(
                    shared.id,
                    cf.id(),
                    key,
                    timeout,
                    Some(&shared.interrupt),
                )
            });
            if let Err(e) = outcome {
                st.buffer.forget_fresh(cf.id(), key);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Fails with `LimitExceeded` when the write set already holds more than
    /// [`crate::Options::max_txn_write_set_bytes`] (not 0), counting it: the write about to
    /// be made (`entry_bytes` of key and value) is refused. Checked before the write, so the
    /// write set passes the limit by at most the last write it accepted (its entry, lock and
    /// undo records).
    fn check_write_set_limit(&self, st: &TxnState, entry_bytes: usize) -> Result<()> {
        let limit = self.shared.db.options().max_txn_write_set_bytes;
        if limit == 0 {
            return Ok(());
        }
        let held = st.buffer.approximate_bytes();
        if u64::try_from(held).unwrap_or(u64::MAX) <= limit {
            return Ok(());
        }
        Counters::add(&self.shared.db.counters.txn_write_set_limit_hits, 1);
        Err(Error::new(
            ErrorKind::LimitExceeded,
            // Short enough for MariaDB's "Got error N '%-.200s' from RIPTIDE" with its
            // "limit exceeded: " prefix.
            format!(
                "write set of {held} bytes ({} keys) is over max_txn_write_set_bytes = \
                 {limit}; a write of {entry_bytes} bytes was refused: commit smaller \
                 transactions or raise the limit",
                st.buffer.len()
            ),
        ))
    }

    /// Takes short exclusive locks on every tracked key, in key order (optimistic only).
    fn lock_for_commit(&self, st: &TxnState) -> Result<Vec<(CfId, Vec<u8>)>> {
        if self.shared.opts.concurrency != Concurrency::Optimistic {
            return Ok(Vec::new());
        }
        let mut locked = Vec::with_capacity(st.tracked.len());
        let timeout = self.shared.lock_timeout();
        for (cf, key, _) in st.tracked.iter() {
            if let Err(e) = self.shared.db.locks.lock_interruptible(
                self.shared.id,
                cf,
                key,
                LockMode::Exclusive,
                timeout,
                Some(&self.shared.interrupt),
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
                BufferedOp::SingleDeletePresent => batch.single_delete_cf(cf, key),
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
            .and_then(|batch| self.shared.db.write_raw_with(batch, st.commit_sync));
        self.unlock_keys(&locked);
        result
    }

    /// Ends the transaction: releases its locks and snapshot, frees its buffer.
    fn end(&self, st: &mut TxnState, phase: Phase) {
        self.shared.db.locks.unlock_all(
            self.shared.id,
            st.buffer.locked_keys().map(|(cf, k, _)| (cf, k)),
        );
        if st.gap_locks {
            self.shared.db.locks.unlock_gaps(self.shared.id);
            st.gap_locks = false;
        }
        st.phase = phase;
        self.shared.db.live.deregister(self.shared.id);
        if st.registered {
            self.shared.db.writers.deregister(self.shared.id);
            st.registered = false;
        }
        st.buffer.clear();
        st.tracked.clear();
        st.protected_reads.clear();
        st.snapshot = None;
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
                if st.gap_locks {
                    self.shared.db.locks.unlock_gaps(self.shared.id);
                    st.gap_locks = false;
                }
                if st.registered {
                    // Its buffer goes with this handle: locking scans can no longer see
                    // its uncommitted inserts (see docs/ENGINE.md).
                    self.shared.db.writers.deregister(self.shared.id);
                    st.registered = false;
                }
                self.shared.db.prepared.set_owner(&xid, self.shared.id);
                self.shared.db.live.deregister(self.shared.id);
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
