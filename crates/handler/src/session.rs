//! A session: one engine transaction per connection, with statement savepoints, and the row
//! operations that keep the primary key and every secondary index in step.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use riptide::{
    Concurrency, Error, InterruptHandle, IsolationLevel, LockedRead, ReadOptions, Transaction,
    TransactionOptions, TxnIterator,
};

use crate::bulk::{BulkLoad, BulkOutcome, BulkSink, HeldBulkLoad, KEY_HAS_NULL, KEY_WITHOUT_NULL};
use crate::cursor::{Cursor, IterSlot};
use crate::error::{HandlerError, Result};
use crate::format::{
    IndexKind, MAX_PK_LEN, be32, decode_secondary_entry, lock_key, prefix_successor, primary_key,
    secondary_entry, write_lock_key,
};
use crate::table::{Store, Table};

/// MariaDB's isolation levels, mapped onto Riptide's: READ UNCOMMITTED and READ COMMITTED
/// run as read committed; REPEATABLE READ and SERIALIZABLE as repeatable read (snapshot at
/// the first read). What makes SERIALIZABLE stronger is the caller's: as InnoDB, its reads
/// inside a transaction are locking reads ([`RowLock::Shared`], [`Session::iter_locking`]),
/// which gap-lock the ranges they scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// `READ UNCOMMITTED` (runs as read committed: Riptide never shows uncommitted rows).
    ReadUncommitted,
    /// `READ COMMITTED`.
    ReadCommitted,
    /// `REPEATABLE READ`, MariaDB's default.
    #[default]
    RepeatableRead,
    /// `SERIALIZABLE` (runs as repeatable read with locking reads, see above).
    Serializable,
}

impl Isolation {
    /// The Riptide level this maps to.
    pub fn engine_level(self) -> IsolationLevel {
        match self {
            Isolation::ReadUncommitted | Isolation::ReadCommitted => IsolationLevel::ReadCommitted,
            Isolation::RepeatableRead | Isolation::Serializable => IsolationLevel::RepeatableRead,
        }
    }
}

/// Options of a session.
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// Isolation level. Default repeatable read.
    pub isolation: Isolation,
    /// Row lock wait limit. Default 50 s (`innodb_lock_wait_timeout`).
    pub lock_timeout: Duration,
    /// Take the read snapshot when the session begins instead of at its first read
    /// (`START TRANSACTION WITH CONSISTENT SNAPSHOT`; only meaningful under repeatable
    /// read). Default false.
    pub snapshot_at_begin: bool,
    /// Who runs the session (MariaDB: the connection id), shown with its transaction and
    /// locks ([`riptide::Db::transactions`], [`HandlerEngine::lock_table`](crate::HandlerEngine::lock_table)).
    /// Default 0 (none).
    pub owner: u64,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            isolation: Isolation::RepeatableRead,
            lock_timeout: Duration::from_secs(50),
            snapshot_at_begin: false,
            owner: 0,
        }
    }
}

/// How a row read is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowLock {
    /// A plain (snapshot) read.
    #[default]
    None,
    /// `LOCK IN SHARE MODE`.
    Shared,
    /// `FOR UPDATE`, and the reads of writing statements.
    Exclusive,
}

/// One secondary key of a row, as the caller encoded it (memcomparable, and prefix-free
/// within its index: MariaDB's fixed-length sort keys are).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecondaryKey<'a> {
    /// The key bytes (no index id, no primary key).
    pub key: &'a [u8],
    /// Whether a key part is NULL: such a key never conflicts in a unique index.
    pub has_null: bool,
}

/// What this session last did to a secondary entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Own {
    Put,
    SingleDeleted,
}

/// Lengths of the undo logs when a savepoint was set, and the savepoint's name.
#[derive(Debug, Clone, Copy)]
struct Mark {
    undo: usize,
    deltas: usize,
    /// Rows of the bulk load when it was set.
    bulk_rows: u64,
    /// An SQL savepoint's id ([`Session::set_named_savepoint`]); `None` for a statement's
    /// or an unnamed one.
    name: Option<u64>,
}

/// A connection's transaction. Row operations run inside it; `begin_statement` /
/// `end_statement` make each statement atomic on its own (a failing statement rolls back
/// only itself). Use it from one thread at a time.
pub struct Session {
    store: Arc<Store>,
    txn: Transaction,
    /// Entries of UNIQUE secondary indexes this transaction wrote, with the last operation
    /// (what the unique checks need to know; entries of other indexes are not kept).
    own: BTreeMap<Vec<u8>, Own>,
    /// Undo log of `own` (key, previous state), cut back by savepoint rollbacks; kept only
    /// while a savepoint is open.
    undo: Vec<(Vec<u8>, Option<Own>)>,
    /// The secondary indexes (by index id) this transaction wrote an entry of, each with the
    /// savepoint depth it was first written at (see [`Session::wrote_index`]).
    written: Vec<(u32, usize)>,
    /// Row count changes, applied to the tables at commit (consecutive changes of one table
    /// within one savepoint are summed).
    deltas: Vec<(Arc<Table>, i64)>,
    marks: Vec<Mark>,
    /// Savepoint depth of the open statement, if any.
    statement: Option<usize>,
    isolation: Isolation,
    /// The iterators of the cursors that read through this session: dropped when the
    /// transaction ends or rolls back to a savepoint (see [`Cursor`]).
    cursors: Vec<Weak<IterSlot>>,
    /// This session's number (unique in the process): tags the iterators it made.
    id: u64,
    /// Whether inserts may take the bulk path ([`Session::set_bulk_load`]).
    bulk_enabled: bool,
    /// The transaction's bulk load, once a row took that path.
    bulk: Option<BulkLoad>,
    /// Tables whose write lock this transaction holds shared (by id; see [`crate::bulk`]).
    write_locked: Vec<u32>,
}

/// The next session number.
static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

impl Drop for Session {
    fn drop(&mut self) {
        self.drop_cursor_iterators();
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("txn", &self.txn)
            .field("savepoints", &self.marks.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn begin(store: Arc<Store>, opts: SessionOptions) -> Result<Session> {
        let txn = store.db.begin_transaction(
            TransactionOptions::default()
                .isolation(opts.isolation.engine_level())
                .concurrency(Concurrency::Pessimistic)
                .lock_timeout(opts.lock_timeout)
                .snapshot_at_begin(opts.snapshot_at_begin)
                .owner(opts.owner)
                // InnoDB's semantics: locking reads and writes see the newest committed row
                // once their lock is granted (an UPDATE that waited updates the row as the
                // other transaction left it); plain SELECTs read the snapshot.
                .current_reads(true),
        )?;
        Ok(Session {
            store,
            txn,
            own: BTreeMap::new(),
            undo: Vec::new(),
            written: Vec::new(),
            deltas: Vec::new(),
            marks: Vec::new(),
            statement: None,
            isolation: opts.isolation,
            cursors: Vec::new(),
            id: NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed),
            bulk_enabled: false,
            bulk: None,
            write_locked: Vec::new(),
        })
    }

    /// Sets who runs the session (see [`SessionOptions::owner`]).
    pub fn set_owner(&self, owner: u64) {
        self.txn.set_owner(owner);
    }

    /// Whether the commit waits for the WAL sync in full sync mode (default `true`; see
    /// [`Transaction::set_commit_sync`]): MariaDB turns it off for the commit that follows
    /// two-phase commit with its binary log, which holds the outcome durably already.
    pub fn set_commit_sync(&self, sync: bool) {
        self.txn.set_commit_sync(sync);
    }

    /// Whether the session has taken its read snapshot (at begin with
    /// [`SessionOptions::snapshot_at_begin`], else at its first read under repeatable read).
    pub fn has_snapshot(&self) -> bool {
        self.txn.snapshot_seqno().is_some()
    }

    /// The column family holding rows and index entries.
    pub(crate) fn store_data(&self) -> riptide::ColumnFamily {
        self.store.data.clone()
    }

    /// The engine transaction underneath (for iterators and raw reads).
    pub fn transaction(&self) -> &Transaction {
        &self.txn
    }

    /// A handle another thread uses to interrupt this session's lock waits (MariaDB's `KILL
    /// QUERY`, a shutdown): the current wait fails with `Interrupted` promptly, and so does
    /// every later wait until [`Session::clear_interrupt`]. The session stays usable, as
    /// after a lock wait timeout. The handle is `Send + Sync` and harmless to use after the
    /// session is gone (see `riptide::InterruptHandle`).
    pub fn interrupt_handle(&self) -> InterruptHandle {
        self.txn.interrupt_handle()
    }

    /// Re-arms the session after an interrupt (MariaDB: at the start of each statement): its
    /// lock waits wait normally again.
    pub fn clear_interrupt(&self) {
        self.txn.clear_interrupt();
    }

    /// Whether the session's lock waits are interrupted and not re-armed since.
    pub fn is_interrupted(&self) -> bool {
        self.txn.is_interrupted()
    }

    /// Sets the limit of the session's lock waits from now on (every row lock, unique check,
    /// insert into a locked gap and locking iterator step), replacing
    /// [`SessionOptions::lock_timeout`] until changed again: MariaDB's `SELECT ... NOWAIT`
    /// (zero: fail with `TimedOut` at once when a lock is held) and `WAIT n` for one
    /// statement. A wait already in progress keeps its limit.
    pub fn set_lock_timeout(&self, timeout: Duration) {
        self.txn.set_lock_timeout(timeout);
    }

    /// The current limit of the session's lock waits.
    pub fn lock_timeout(&self) -> Duration {
        self.txn.lock_timeout()
    }

    /// Turns bulk load on or off for the inserts from now on (MariaDB: the session variable
    /// `riptide_bulk_load`, read at each statement's start): see [`crate::bulk`]. Rows
    /// already loaded stay in the load until the transaction ends, and so do later inserts
    /// into a table already in it.
    pub fn set_bulk_load(&mut self, on: bool) {
        self.bulk_enabled = on;
    }

    /// Takes the transaction's bulk load out of it (`None` if it holds no loaded row), to go
    /// on in a later transaction ([`Session::attach_bulk_load`]): this transaction then
    /// commits or rolls back without it. See [`crate::bulk`].
    pub fn detach_bulk_load(&mut self) -> Option<HeldBulkLoad> {
        self.bulk
            .take()
            .filter(BulkLoad::has_rows)
            .map(BulkLoad::detached)
    }

    /// Gives this transaction a load taken out of an earlier one: its inserts into the
    /// load's tables join it, and its commit writes the whole load (all or nothing, with
    /// this transaction's writes). Refused if this transaction has a load with rows of its
    /// own.
    pub fn attach_bulk_load(&mut self, held: HeldBulkLoad) -> Result<()> {
        if self.bulk.as_ref().is_some_and(BulkLoad::has_rows) {
            return Err(Error::invalid_argument(
                "the transaction already holds a bulk load: a held one cannot join it",
            )
            .into());
        }
        self.bulk = Some(held.0);
        Ok(())
    }

    /// Rows the transaction's bulk load holds (0 without one): they are written at commit.
    pub fn bulk_rows(&self) -> u64 {
        self.bulk.as_ref().map_or(0, BulkLoad::rows_total)
    }

    /// Pushes an unnamed savepoint.
    pub fn set_savepoint(&mut self) -> Result<()> {
        self.push_mark(None)
    }

    fn push_mark(&mut self, name: Option<u64>) -> Result<()> {
        self.txn.set_savepoint()?;
        self.marks.push(Mark {
            undo: self.undo.len(),
            deltas: self.deltas.len(),
            bulk_rows: self.bulk.as_ref().map_or(0, BulkLoad::rows_total),
            name,
        });
        Ok(())
    }

    /// SQL `SAVEPOINT`: pushes a savepoint named `id` (the caller's number for it; MariaDB
    /// keeps one per savepoint name).
    pub fn set_named_savepoint(&mut self, id: u64) -> Result<()> {
        self.push_mark(Some(id))
    }

    /// Where savepoint `id` is in the stack (the newest of that id).
    fn named_position(&self, id: u64) -> Option<usize> {
        self.marks.iter().rposition(|m| m.name == Some(id))
    }

    /// SQL `ROLLBACK TO SAVEPOINT`: undoes everything since savepoint `id` (and removes the
    /// savepoints set after it), keeping `id` itself. Returns false (and does nothing) if
    /// no open savepoint has that id.
    pub fn rollback_to_named_savepoint(&mut self, id: u64) -> Result<bool> {
        let Some(at) = self.named_position(id) else {
            return Ok(false);
        };
        while self.marks.len() > at {
            self.rollback_to_savepoint()?;
        }
        self.push_mark(Some(id))?;
        Ok(true)
    }

    /// SQL `RELEASE SAVEPOINT`, and MariaDB's release of an older savepoint of a name a new
    /// `SAVEPOINT` reuses: forgets savepoint `id`, keeping its writes and the savepoints set
    /// after it (InnoDB's `trx_release_savepoint_for_mysql`). Returns false if no open
    /// savepoint has that id.
    pub fn release_named_savepoint(&mut self, id: u64) -> Result<bool> {
        let Some(at) = self.named_position(id) else {
            return Ok(false);
        };
        if at + 1 == self.marks.len() {
            self.release_savepoint()?;
        } else {
            self.release_savepoint_at(at)?;
        }
        Ok(true)
    }

    /// Undoes everything since the newest savepoint and removes it. `NotFound` if none.
    /// The iterators of the session's cursors are dropped (their locks may be gone).
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        self.drop_cursor_iterators();
        self.txn.rollback_to_savepoint()?;
        let depth = self.marks.len();
        let Some(m) = self.marks.pop() else {
            return Ok(());
        };
        self.written.retain(|&(_, at)| at < depth);
        while self.undo.len() > m.undo {
            if let Some((k, prev)) = self.undo.pop() {
                match prev {
                    Some(op) => self.own.insert(k, op),
                    None => self.own.remove(&k),
                };
            }
        }
        self.deltas.truncate(m.deltas);
        if let Some(bulk) = &mut self.bulk {
            bulk.rolled_back_to(m.bulk_rows);
        }
        self.fix_statement();
        Ok(())
    }

    /// Forgets the newest savepoint, keeping its writes. `NotFound` if none.
    pub fn release_savepoint(&mut self) -> Result<()> {
        self.txn.release_savepoint()?;
        let depth = self.marks.len();
        if self.marks.pop().is_some() {
            // What was written under it now belongs to the enclosing savepoint.
            for (_, at) in &mut self.written {
                *at = (*at).min(depth - 1);
            }
        }
        if self.marks.is_empty() {
            self.undo.clear();
        }
        self.fix_statement();
        Ok(())
    }

    /// Forgets the savepoint at `index` (0: the oldest open one), keeping its writes and the
    /// savepoints set after it (MariaDB: a `SAVEPOINT` that reuses a name releases the older
    /// savepoint of that name only). `NotFound` if fewer than `index + 1` are open.
    pub fn release_savepoint_at(&mut self, index: usize) -> Result<()> {
        self.txn.release_savepoint_at(index)?;
        if index < self.marks.len() {
            self.marks.remove(index);
        }
        // Savepoint `index` made the depth `index + 1`: what was written deeper is one
        // savepoint less deep now.
        for (_, at) in &mut self.written {
            if *at > index {
                *at -= 1;
            }
        }
        self.statement = match self.statement {
            Some(d) if d == index + 1 => None,
            Some(d) if d > index + 1 => Some(d - 1),
            other => other,
        };
        if self.marks.is_empty() {
            self.undo.clear();
        }
        Ok(())
    }

    /// Whether this transaction has put or deleted an entry of secondary index `n` (`n` >= 1)
    /// of `table` (and not rolled it back). While it has not, the entries of the index it
    /// reads agree with the rows it reads; once it has, an entry of its snapshot can point to
    /// a row it has since changed, so a reader must check each row against its entry.
    pub fn wrote_index(&self, table: &Table, n: usize) -> bool {
        if n == 0 {
            return false;
        }
        let Ok(index) = table.index(n) else {
            return false;
        };
        self.written.iter().any(|&(id, _)| id == index.id)
    }

    /// Number of savepoints set and not yet released or rolled back.
    pub fn savepoint_depth(&self) -> usize {
        self.marks.len()
    }

    /// Begins a statement inside a multi-statement transaction: pushes its savepoint, so
    /// that [`Session::end_statement`] can undo the statement alone. A no-op while a
    /// statement is open (MariaDB begins the statement once per table it locks). In
    /// autocommit no statement is begun: the transaction is the statement.
    pub fn begin_statement(&mut self) -> Result<()> {
        if self.statement.is_some() {
            return Ok(());
        }
        self.set_savepoint()?;
        self.statement = Some(self.marks.len());
        Ok(())
    }

    /// Ends the open statement: keeps its writes (`success`) or undoes them, leaving the
    /// rest of the transaction alone. No-op when no statement is open.
    pub fn end_statement(&mut self, success: bool) -> Result<()> {
        let Some(depth) = self.statement else {
            return Ok(());
        };
        while self.marks.len() > depth {
            self.release_savepoint()?;
        }
        if self.marks.len() == depth {
            if success {
                self.release_savepoint()?;
            } else {
                self.rollback_to_savepoint()?;
            }
        }
        self.statement = None;
        Ok(())
    }

    /// Whether a statement is open.
    pub fn in_statement(&self) -> bool {
        self.statement.is_some()
    }

    /// The savepoint depth the open statement began at (0 without one): its locks are the
    /// ones taken since.
    fn statement_depth(&self) -> usize {
        self.statement.unwrap_or(0)
    }

    /// Notes the iterator of a cursor reading through this session, to drop it when the
    /// transaction ends.
    pub(crate) fn track_cursor(&mut self, slot: &Arc<IterSlot>) {
        if self.cursors.iter().any(|w| w.as_ptr() == Arc::as_ptr(slot)) {
            return;
        }
        if self.cursors.len() >= 16 {
            self.cursors.retain(|w| w.strong_count() > 0);
        }
        self.cursors.push(Arc::downgrade(slot));
    }

    /// Drops the iterators this session made for cursors (before the transaction ends or
    /// rolls back: an iterator must not outlive what it reads). A cursor another session
    /// reads with now is left alone.
    fn drop_cursor_iterators(&mut self) {
        for w in self.cursors.drain(..) {
            if let Some(slot) = w.upgrade() {
                slot.release_from(self.id);
            }
        }
    }

    /// The session's number, unique in the process.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    fn fix_statement(&mut self) {
        if self.statement.is_some_and(|d| d > self.marks.len()) {
            self.statement = None;
        }
    }

    /// Commits: one atomic batch for every table and index; then the row estimates take this
    /// transaction's changes. The session is finished either way.
    pub fn commit(&mut self) -> Result<()> {
        self.commit_with_outcome().map(|_| ())
    }

    /// [`Session::commit`], returning what its bulk load ingested (all zero without one).
    /// The bulk load's rows are checked and ingested first; if that fails, the whole
    /// transaction is rolled back and the error returned.
    pub fn commit_with_outcome(&mut self) -> Result<BulkOutcome> {
        self.drop_cursor_iterators();
        let mut bulk_outcome = BulkOutcome::default();
        if let Some(bulk) = self.bulk.take().filter(BulkLoad::has_rows) {
            let store = Arc::clone(&self.store);
            match bulk.commit(&store, self) {
                Ok((deltas, outcome)) => {
                    self.deltas.extend(deltas);
                    bulk_outcome = outcome;
                }
                Err(e) => {
                    let _ = self.txn.rollback();
                    self.clear();
                    return Err(e);
                }
            }
        }
        let outcome = self.txn.commit();
        if outcome.is_ok() {
            let mut sums: Vec<(Arc<Table>, i64)> = Vec::new();
            for (t, d) in self.deltas.drain(..) {
                match sums.iter_mut().find(|(s, _)| Arc::ptr_eq(s, &t)) {
                    Some((_, sum)) => *sum = sum.saturating_add(d),
                    None => sums.push((t, d)),
                }
            }
            for (t, d) in sums {
                if d != 0 {
                    t.add_rows(d);
                }
            }
        }
        self.clear();
        outcome?;
        Ok(bulk_outcome)
    }

    /// Two-phase commit, phase one (`XA PREPARE`, or the server's internal two-phase commit
    /// with the binary log): makes the writes durable under `xid` without making them
    /// visible; the locks stay held. Then [`Session::commit`] or [`Session::rollback`]
    /// finishes it; a session dropped while prepared leaves it prepared, to be finished by
    /// xid ([`riptide::Db::commit_prepared`] / [`riptide::Db::rollback_prepared`]), also
    /// after a restart ([`riptide::Db::prepared_transactions`] lists it). An open statement
    /// ends first, keeping its writes. After a failure the transaction is rolled back.
    pub fn prepare(&mut self, xid: &riptide::Xid) -> Result<()> {
        if self.bulk.as_ref().is_some_and(BulkLoad::has_rows) {
            return Err(Error::not_supported(
                "a transaction holding a bulk load (riptide_bulk_load) cannot be prepared: \
                 two-phase commit (XA, or the binary log's) is not supported with bulk load",
            )
            .into());
        }
        self.drop_cursor_iterators();
        self.end_statement(true)?;
        Ok(self.txn.prepare(xid)?)
    }

    /// Rolls back everything (a transaction that lost a conflict is already rolled back:
    /// that is not an error here).
    pub fn rollback(&mut self) -> Result<()> {
        self.drop_cursor_iterators();
        let outcome = self.txn.rollback();
        self.clear();
        match outcome {
            Err(e) if e.kind() == riptide::ErrorKind::InvalidArgument => Ok(()),
            other => Ok(other?),
        }
    }

    fn clear(&mut self) {
        self.bulk = None;
        self.write_locked.clear();
        self.own.clear();
        self.undo.clear();
        self.written.clear();
        self.deltas.clear();
        self.marks.clear();
        self.statement = None;
    }

    /// Inserts a row of a table without a primary key: a new hidden row id (never handed out
    /// before, also across crashes) is its primary key; returns it (8 bytes, the row's
    /// reference). Otherwise as [`Session::insert`].
    pub fn insert_hidden(
        &mut self,
        table: &Arc<Table>,
        keys: &[SecondaryKey<'_>],
        row: &[u8],
    ) -> Result<[u8; 8]> {
        if !table.has_hidden_pk() {
            return Err(Error::invalid_argument(format!(
                "table id {} has a primary key: insert the row under it",
                table.id()
            ))
            .into());
        }
        let id = table.next_hidden_row_id()?.to_be_bytes();
        self.insert(table, &id, keys, row)?;
        Ok(id)
    }

    /// Inserts a row: `pk` is the primary key (or the 8-byte big-endian hidden row id from
    /// [`Table::next_hidden_row_id`]), `keys` one per secondary index in order. Fails with
    /// [`HandlerError::Duplicate`] naming the index if the primary key or a unique secondary
    /// key (without NULL parts) exists; two concurrent inserts of one value serialize on a
    /// lock and the second gets the duplicate error.
    pub fn insert(
        &mut self,
        table: &Arc<Table>,
        pk: &[u8],
        keys: &[SecondaryKey<'_>],
        row: &[u8],
    ) -> Result<()> {
        check_key_count(table, keys)?;
        check_pk_len(table, pk)?;
        // A table in the load stays in it for the whole transaction, bulk load on or off:
        // an ordinary insert next to loaded rows would not see them (its unique checks) and
        // would be committed over them.
        let loading = self.bulk.as_ref().is_some_and(|b| b.holds(table));
        if loading || (self.bulk_enabled && self.bulk_accepts(table)?) {
            return self.bulk_insert(table, pk, keys, row);
        }
        table.capture().note(pk);
        let pk_key = primary_key(table.primary().id, pk);
        self.lock_new_primary_key(table, &pk_key)?;
        for (i, k) in keys.iter().enumerate() {
            if table.index(i + 1)?.unique && !k.has_null {
                self.check_unique(table, i + 1, k.key, None)?;
            }
        }
        self.insert_primary_entry(&pk_key, row)?;
        for (i, k) in keys.iter().enumerate() {
            let index = table.index(i + 1)?;
            let e = secondary_entry(index.id, k.key, pk)?;
            self.put_entry(index.id, index.unique, e)?;
        }
        self.add_delta(table, 1);
        Ok(())
    }

    /// Before a new row of `table` with primary key entry `pk_entry` (index id and primary
    /// key): takes the table's write lock shared and the row's lock exclusive, and fails with
    /// the duplicate-key error if the primary key holds a row (a hidden key never does). For
    /// [`Session::insert`] and a bulk load's replayed rows.
    fn lock_new_primary_key(&mut self, table: &Arc<Table>, pk_entry: &[u8]) -> Result<()> {
        self.lock_for_writes(table)?;
        let data = self.store.data.clone();
        if table.primary().kind == IndexKind::Primary
            && self.txn.get_for_update(&data, pk_entry, true)?.is_some()
        {
            return Err(duplicate(table, 0));
        }
        Ok(())
    }

    /// Writes a new row's primary key entry (after [`Session::lock_new_primary_key`] and the
    /// unique checks). A new key: waits while another transaction's locking scan holds the
    /// gap (InnoDB's insert intention).
    fn insert_primary_entry(&mut self, pk_entry: &[u8], row: &[u8]) -> Result<()> {
        let data = self.store.data.clone();
        Ok(self.txn.insert(&data, pk_entry, row)?)
    }

    /// Whether `table`'s rows take the bulk path in this transaction (see [`crate::bulk`]).
    fn bulk_accepts(&mut self, table: &Arc<Table>) -> Result<bool> {
        // An online index build records the rows writers change; an ingest would bypass
        // that record, so the rows go the ordinary way while it runs.
        if table.is_capturing_changes() {
            return Ok(false);
        }
        let wrote_before = self.deltas.iter().any(|(t, _)| Arc::ptr_eq(t, table))
            || (1..table.index_count()).any(|n| self.wrote_index(table, n));
        let store = Arc::clone(&self.store);
        let bulk = self.bulk.get_or_insert_with(|| BulkLoad::new(&store));
        Ok(bulk.accepts(table, wrote_before))
    }

    /// Takes `table`'s write lock shared, once per transaction: before a write that gives
    /// the table a new primary key or a new unique value, which a bulk load's ingest into
    /// the same range must not miss (see [`crate::bulk`]).
    fn lock_for_writes(&mut self, table: &Table) -> Result<()> {
        if self.write_locked.contains(&table.id()) {
            return Ok(());
        }
        self.txn
            .lock_name(&self.store.dd, &write_lock_key(table.id()), false)?;
        self.write_locked.push(table.id());
        Ok(())
    }

    /// Adds a row to the bulk load: its primary key entry and its secondary entries (each
    /// with whether its key has a NULL part), to be checked and ingested at commit.
    fn bulk_insert(
        &mut self,
        table: &Arc<Table>,
        pk: &[u8],
        keys: &[SecondaryKey<'_>],
        row: &[u8],
    ) -> Result<()> {
        let Some(bulk) = self.bulk.as_mut() else {
            return Err(Error::invalid_argument("bulk insert without a bulk load").into());
        };
        bulk.add(&primary_key(table.primary().id, pk), row)?;
        for (i, k) in keys.iter().enumerate() {
            let index = table.index(i + 1)?;
            let null = if k.has_null {
                KEY_HAS_NULL
            } else {
                KEY_WITHOUT_NULL
            };
            bulk.add(&secondary_entry(index.id, k.key, pk)?, &[null])?;
        }
        bulk.count_row(table);
        Ok(())
    }

    /// Updates a row from (`old_pk`, `old_keys`) to (`new_pk`, `new_keys`, `row`). Secondary
    /// entries that do not change are not rewritten; changed ones are single-deleted and put
    /// anew. Unique checks run for a changed primary key and changed unique keys. `scan` is
    /// the cursor the statement reads the table with, if any: when the row's entry in its
    /// index moves, the scan does not meet the row again (the Halloween problem).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        table: &Arc<Table>,
        old_pk: &[u8],
        old_keys: &[SecondaryKey<'_>],
        new_pk: &[u8],
        new_keys: &[SecondaryKey<'_>],
        row: &[u8],
        scan: Option<&mut Cursor>,
    ) -> Result<()> {
        check_key_count(table, old_keys)?;
        check_key_count(table, new_keys)?;
        check_pk_len(table, old_pk)?;
        check_pk_len(table, new_pk)?;
        let data = self.store.data.clone();
        let pid = table.primary().id;
        let old_key = primary_key(pid, old_pk);
        let new_key = primary_key(pid, new_pk);
        let moved = old_pk != new_pk;
        table.capture().note(old_pk);
        if moved {
            table.capture().note(new_pk);
        }
        let new_unique = old_keys
            .iter()
            .zip(new_keys)
            .enumerate()
            .any(|(i, (o, n))| o.key != n.key && table.index(i + 1).is_ok_and(|x| x.unique));
        if moved || new_unique {
            self.lock_for_writes(table)?;
        }
        if moved
            && table.primary().kind == IndexKind::Primary
            && self.txn.get_for_update(&data, &new_key, true)?.is_some()
        {
            return Err(duplicate(table, 0));
        }
        // A unique value the row keeps while its primary key changes moves to a new entry:
        // it is checked (and its value locked) like a new one, so that another
        // transaction's insert of the value waits for this one and then sees the moved row.
        for (i, (o, n)) in old_keys.iter().zip(new_keys).enumerate() {
            if table.index(i + 1)?.unique && !n.has_null && (o.key != n.key || moved) {
                self.check_unique(table, i + 1, n.key, Some(old_pk))?;
            }
        }
        // The row as this update found it (a current read) may be newer than the snapshot
        // (another transaction changed it after this one's first read): the entries it kept
        // were then committed after the snapshot, and reads of this transaction through those
        // indexes would not find the row. Such entries are written again (single delete, then
        // put: each put still meets its own single delete), so this transaction sees them,
        // as InnoDB finds the row through the newer entry. Only with an unchanged entry and a
        // snapshot: one version lookup.
        let unchanged = !moved && old_keys.iter().zip(new_keys).any(|(o, n)| o.key == n.key);
        let adopt = unchanged && self.txn.changed_since_snapshot(&data, &old_key)?;
        if moved {
            self.txn.delete(&data, &old_key)?;
            self.txn.insert(&data, &new_key, row)?;
        } else {
            self.txn.put(&data, &new_key, row)?;
        }
        for (i, (o, n)) in old_keys.iter().zip(new_keys).enumerate() {
            let index = table.index(i + 1)?;
            let old_e = secondary_entry(index.id, o.key, old_pk)?;
            let new_e = secondary_entry(index.id, n.key, new_pk)?;
            if old_e != new_e {
                self.delete_entry(index.id, index.unique, old_e)?;
                self.put_entry(index.id, index.unique, new_e)?;
            } else if adopt {
                self.delete_entry(index.id, index.unique, old_e)?;
                self.reput_entry(index.id, index.unique, new_e)?;
            }
        }
        if let Some(cursor) = scan {
            cursor.note_update(table, old_pk, old_keys, new_pk, new_keys)?;
        }
        Ok(())
    }

    /// Deletes the row `pk` whose secondary keys are `keys`.
    pub fn delete(
        &mut self,
        table: &Arc<Table>,
        pk: &[u8],
        keys: &[SecondaryKey<'_>],
    ) -> Result<()> {
        check_key_count(table, keys)?;
        check_pk_len(table, pk)?;
        table.capture().note(pk);
        let data = self.store.data.clone();
        self.txn
            .delete(&data, &primary_key(table.primary().id, pk))?;
        for (i, k) in keys.iter().enumerate() {
            let index = table.index(i + 1)?;
            let e = secondary_entry(index.id, k.key, pk)?;
            self.delete_entry(index.id, index.unique, e)?;
        }
        self.add_delta(table, -1);
        Ok(())
    }

    /// Reads the row with primary key `pk` as this transaction sees it, locking it as asked.
    pub fn get_row(&self, table: &Table, pk: &[u8], lock: RowLock) -> Result<Option<Vec<u8>>> {
        let key = primary_key(table.primary().id, pk);
        let data = &self.store.data;
        Ok(match lock {
            RowLock::None => self.txn.get(data, &key)?,
            RowLock::Shared => self.txn.get_for_update(data, &key, false)?,
            RowLock::Exclusive => self.txn.get_for_update(data, &key, true)?,
        })
    }

    /// [`Session::get_row`] for `SKIP LOCKED`: never waits. With a [`RowLock::Shared`] or
    /// [`RowLock::Exclusive`] lock, a row whose lock another session holds in a conflicting
    /// mode (or, for shared, has queued an exclusive request on) is reported as
    /// [`LockedRead::LockedByOther`], nothing locked or read, so the caller skips it; any
    /// other row is locked and read as `get_row` does ([`LockedRead::Value`], `None` when
    /// absent). [`RowLock::None`] is a plain read.
    pub fn get_row_skip_locked(
        &self,
        table: &Table,
        pk: &[u8],
        lock: RowLock,
    ) -> Result<LockedRead> {
        let key = primary_key(table.primary().id, pk);
        let data = &self.store.data;
        Ok(match lock {
            RowLock::None => LockedRead::Value(self.txn.get(data, &key)?),
            RowLock::Shared => self.txn.get_for_update_skip_locked(data, &key, false)?,
            RowLock::Exclusive => self.txn.get_for_update_skip_locked(data, &key, true)?,
        })
    }

    /// An iterator over index `n` of `table` as this transaction sees it (keys carry the
    /// 4-byte index id; primary entries hold the row, secondary entries are empty: decode
    /// the pk with [`crate::decode_secondary_entry`]).
    pub fn iter(&self, table: &Table, n: usize) -> Result<TxnIterator> {
        Ok(self.txn.iter(&self.store.data, index_bounds(table, n)?)?)
    }

    /// An iterator over index `n` of `table` at the newest committed state merged with
    /// this transaction's writes, whatever the snapshot, taking no lock (see
    /// `riptide::Transaction::iter_current`). With [`Session::lock_value`] first, it is the
    /// duplicate check of a MariaDB long UNIQUE key: the lock makes a concurrent writer of
    /// the value wait, this read then sees what it committed.
    pub fn iter_current(&self, table: &Table, n: usize) -> Result<TxnIterator> {
        Ok(self
            .txn
            .iter_current(&self.store.data, index_bounds(table, n)?)?)
    }

    /// Locks the value `key` of secondary index `n` (`n` >= 1) exclusively until the
    /// transaction ends, as a unique check does (the same lock-only key in the dictionary
    /// column family), without looking for rows: waits while another transaction holds it
    /// (`TimedOut`, `Deadlock` as a row lock). MariaDB checks long UNIQUE keys itself
    /// (an index read of the key's hash); the handler takes this lock before that read so
    /// that two transactions checking one value run one after the other.
    pub fn lock_value(&self, table: &Table, n: usize, key: &[u8]) -> Result<()> {
        if n == 0 || n > table.secondary_count() {
            return Err(Error::invalid_argument(format!(
                "lock value: table id {} has no secondary index {n}",
                table.id()
            ))
            .into());
        }
        let id = table.index(n)?.id;
        self.txn
            .get_for_update(&self.store.dd, &lock_key(id, key), true)?;
        Ok(())
    }

    /// A locking iterator over index `n` of `table` (InnoDB's locking reads: `FOR UPDATE`,
    /// `LOCK IN SHARE MODE`, SERIALIZABLE reads, the source scans of `INSERT ... SELECT`,
    /// `UPDATE`, `DELETE`): reads the newest committed entries merged with this
    /// transaction's own, locks each entry it stops on (`lock`; [`RowLock::None`] gives the
    /// plain [`Session::iter`]) and, under REPEATABLE READ and SERIALIZABLE, the gaps it
    /// walks, so other sessions' inserts there wait (see `riptide::Transaction::iter_locking`).
    pub fn iter_locking(&self, table: &Table, n: usize, lock: RowLock) -> Result<TxnIterator> {
        let exclusive = match lock {
            RowLock::None => return self.iter(table, n),
            RowLock::Shared => false,
            RowLock::Exclusive => true,
        };
        Ok(self
            .txn
            .iter_locking(&self.store.data, index_bounds(table, n)?, exclusive)?)
    }

    /// [`Session::iter_locking`] for `SELECT ... FOR UPDATE SKIP LOCKED` / `LOCK IN SHARE MODE
    /// SKIP LOCKED`: never waits. Entries whose lock another session holds in a conflicting
    /// mode, and other sessions' uncommitted inserts, are stepped over; the entries it stops
    /// on are locked in `lock`'s mode. Under REPEATABLE READ and SERIALIZABLE it gap-locks
    /// the range it walks like a waiting locking read (gap locks never make the scan wait:
    /// they make other sessions' inserts there wait), skipped entries and the gaps around
    /// them included; under READ COMMITTED it locks no gap (see
    /// `riptide::Transaction::iter_skip_locked`). Read the rows of a secondary index's
    /// entries with [`Session::get_row_skip_locked`], so that reading the row does not wait
    /// either. [`RowLock::None`] gives the plain [`Session::iter`].
    pub fn iter_skip_locked(&self, table: &Table, n: usize, lock: RowLock) -> Result<TxnIterator> {
        let exclusive = match lock {
            RowLock::None => return self.iter(table, n),
            RowLock::Shared => false,
            RowLock::Exclusive => true,
        };
        Ok(self
            .txn
            .iter_skip_locked(&self.store.data, index_bounds(table, n)?, exclusive)?)
    }

    /// InnoDB's `unlock_row`: under READ COMMITTED and READ UNCOMMITTED, releases the row
    /// locks of a row a locking read returned and the statement then did not want (the
    /// WHERE clause rejected it, or it lies past the end of the range): the lock on the
    /// primary key `pk` of `table` and, when the row was reached through secondary index `n`
    /// (> 0), the lock on its index entry `entry` (the full key as the iterator returned
    /// it, index id included). A lock goes only if the open statement took it (with no
    /// statement open, as in autocommit, where the transaction is the statement: any lock)
    /// and the transaction has not written that key: a lock the transaction held before the
    /// statement, or on a row it wrote, stays. Under REPEATABLE READ and SERIALIZABLE
    /// nothing is released (the locks protect what the transaction read). Returns how many
    /// locks were released. `InvalidArgument` if `entry` is not a key of index `n`.
    pub fn unlock_row(
        &self,
        table: &Table,
        n: usize,
        entry: Option<&[u8]>,
        pk: &[u8],
    ) -> Result<usize> {
        let since = self.statement_depth();
        let entry = match entry {
            Some(e) if n > 0 => {
                let prefix = table.index_prefix(n)?;
                if !e.starts_with(&prefix) {
                    return Err(Error::invalid_argument(format!(
                        "unlock row: the entry is not a key of index {n} of table id {}",
                        table.id()
                    ))
                    .into());
                }
                Some(e)
            }
            _ => None,
        };
        if self.isolation.engine_level() != IsolationLevel::ReadCommitted {
            return Ok(0);
        }
        let data = &self.store.data;
        let mut released = 0;
        let pk_key = primary_key(table.primary().id, pk);
        for key in entry.into_iter().chain([pk_key.as_slice()]) {
            if self.txn.release_lock(data, key, since)? {
                released += 1;
            }
        }
        Ok(released)
    }

    /// Refuses a second row with secondary key `key` in unique index `n` (rows whose pk is
    /// `exclude` are the row being updated). Locks the value first (a lock-only key in the
    /// dictionary column family), then looks at the newest committed entries merged with
    /// this transaction's own: a concurrent insert of the value waits for the lock and then
    /// sees the first one's committed entry.
    fn check_unique(
        &mut self,
        table: &Table,
        n: usize,
        key: &[u8],
        exclude: Option<&[u8]>,
    ) -> Result<()> {
        let id = table.index(n)?.id;
        self.txn
            .get_for_update(&self.store.dd, &lock_key(id, key), true)?;
        let mut prefix = be32(id).to_vec();
        prefix.extend_from_slice(key);
        let matches = |entry: &[u8]| {
            decode_secondary_entry(entry)
                .is_some_and(|(sk, pk)| sk == key && exclude.is_none_or(|x| x != pk))
        };
        let mut opts = ReadOptions::default().lower_bound(prefix.clone());
        if let Some(hi) = prefix_successor(&prefix) {
            opts = opts.upper_bound(hi);
        }
        let mut committed = Vec::new();
        {
            let mut it = self.store.db.iter_cf(&self.store.data, opts)?;
            it.seek(&prefix)?;
            while it.valid() && it.key().starts_with(&prefix) {
                let k = it.key();
                let gone = self.own.get(k) == Some(&Own::SingleDeleted);
                if !gone && matches(k) {
                    committed.push(k.to_vec());
                }
                it.next()?;
            }
        }
        // A committed entry may belong to a row another transaction is deleting (or moving
        // to another value) right now: wait for that transaction's lock on the entry, then
        // look again at what is committed (InnoDB waits on the lock of the delete-marked
        // record). The shared lock stays until the end of the transaction, as InnoDB's lock
        // on a duplicate it found.
        for k in committed {
            if self
                .txn
                .get_for_update(&self.store.data, &k, false)?
                .is_some()
            {
                return Err(duplicate(table, n));
            }
        }
        for (k, op) in self.own.range(prefix.clone()..) {
            if !k.starts_with(&prefix) {
                break;
            }
            if *op == Own::Put && matches(k) {
                return Err(duplicate(table, n));
            }
        }
        Ok(())
    }

    /// Notes a write of an entry of index `index_id`: in `written`, and for a unique index
    /// in `own` (with an undo record while a savepoint is open).
    fn record(&mut self, index_id: u32, unique: bool, entry: Vec<u8>, op: Own) {
        if !self.written.iter().any(|&(id, _)| id == index_id) {
            self.written.push((index_id, self.marks.len()));
        }
        if !unique {
            return;
        }
        if self.marks.is_empty() {
            self.own.insert(entry, op);
        } else {
            let prev = self.own.insert(entry.clone(), op);
            self.undo.push((entry, prev));
        }
    }

    /// Adds `d` to the row count change of `table`, in the last delta when it is the same
    /// table's and was made since the newest savepoint.
    fn add_delta(&mut self, table: &Arc<Table>, d: i64) {
        let floor = self.marks.last().map_or(0, |m| m.deltas);
        if self.deltas.len() > floor
            && let Some((t, sum)) = self.deltas.last_mut()
            && Arc::ptr_eq(t, table)
        {
            *sum = sum.saturating_add(d);
            return;
        }
        self.deltas.push((Arc::clone(table), d));
    }

    /// Puts a secondary entry. Every entry is put once and single-deleted once; an entry
    /// this transaction single-deleted and now puts again (a key moved away and back) is
    /// fine: the transaction commits both the single delete and the put, in that order
    /// (`riptide_txn::BufferedOp::PutAfterDelete`), so each put still meets its own single
    /// delete.
    fn put_entry(&mut self, index_id: u32, unique: bool, entry: Vec<u8>) -> Result<()> {
        // Entries are unique keys (index id, secondary key, primary key): each put is an
        // insert, which waits for gap locks of locking scans over this index.
        self.txn.insert(&self.store.data, &entry, b"")?;
        self.record(index_id, unique, entry, Own::Put);
        Ok(())
    }

    /// Puts again an entry of index `index_id` this transaction has just single-deleted (an
    /// entry committed after its snapshot that it makes its own, see [`Session::update`]): a
    /// put, not an insert, since the entry exists and no insert intention applies.
    fn reput_entry(&mut self, index_id: u32, unique: bool, entry: Vec<u8>) -> Result<()> {
        self.txn.put(&self.store.data, &entry, b"")?;
        self.record(index_id, unique, entry, Own::Put);
        Ok(())
    }

    /// Single-deletes a secondary entry of index `index_id`.
    /// The entry is present: every caller deletes an entry of the current version of a row
    /// this transaction has locked (rows are locked before they change, and a row's entries
    /// are committed with it), so no other transaction can delete the entry first, and the
    /// commit needs no lookup of it (`Transaction::single_delete_present`; an entry this
    /// transaction wrote itself is checked as before).
    fn delete_entry(&mut self, index_id: u32, unique: bool, entry: Vec<u8>) -> Result<()> {
        self.txn.single_delete_present(&self.store.data, &entry)?;
        self.record(index_id, unique, entry, Own::SingleDeleted);
        Ok(())
    }
}

/// Read options bounding an iterator to the keys of index `n` of `table`.
fn index_bounds(table: &Table, n: usize) -> Result<ReadOptions<'static>> {
    let prefix = table.index_prefix(n)?;
    let mut opts = ReadOptions::default().lower_bound(prefix.to_vec());
    if let Some(hi) = prefix_successor(&prefix) {
        opts = opts.upper_bound(hi);
    }
    Ok(opts)
}

fn check_key_count(table: &Table, keys: &[SecondaryKey<'_>]) -> Result<()> {
    if keys.len() == table.secondary_count() {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "table id {} has {} secondary indexes, {} keys were given",
        table.id(),
        table.secondary_count(),
        keys.len()
    ))
    .into())
}

/// Refuses a primary key that a secondary entry of `table` cannot hold (its length is
/// stored in 2 bytes), before anything is written: a write that failed half way would leave
/// a row without its entries. MariaDB's keys are at most 3072 bytes, so only C ABI callers
/// meet this.
fn check_pk_len(table: &Table, pk: &[u8]) -> Result<()> {
    if pk.len() <= MAX_PK_LEN || table.secondary_count() == 0 {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "table id {}: a primary key of {} bytes is longer than {MAX_PK_LEN}, the longest its \
         secondary index entries can hold",
        table.id(),
        pk.len()
    ))
    .into())
}

/// The ordinary writes a bulk load's commit makes: see [`crate::bulk`].
impl BulkSink for Session {
    fn writes_in_range(&self, start: &[u8], end: &[u8]) -> Result<bool> {
        Ok(self.txn.writes_in_range(&self.store.data, start, end)?)
    }

    fn lock_for_ingest(&mut self, table: &Arc<Table>) -> Result<()> {
        self.txn
            .lock_name(&self.store.dd, &write_lock_key(table.id()), true)?;
        Ok(())
    }

    fn replay_row(&mut self, table: &Arc<Table>, pk_entry: &[u8], row: &[u8]) -> Result<()> {
        self.lock_new_primary_key(table, pk_entry)?;
        self.insert_primary_entry(pk_entry, row)
    }

    fn replay_entry(
        &mut self,
        table: &Arc<Table>,
        n: usize,
        entry: &[u8],
        has_null: bool,
    ) -> Result<()> {
        let index = table.index(n)?;
        if index.unique && !has_null {
            let (key, _) = decode_secondary_entry(entry).ok_or_else(|| {
                Error::corruption(format!("bulk load: malformed entry {entry:02x?}"))
            })?;
            self.check_unique(table, n, key, None)?;
        }
        self.put_entry(index.id, index.unique, entry.to_vec())
    }
}

pub(crate) fn duplicate(table: &Table, n: usize) -> HandlerError {
    HandlerError::Duplicate {
        index: n,
        name: table.index(n).map(|ix| ix.name.clone()).unwrap_or_default(),
        table_id: table.id(),
    }
}
