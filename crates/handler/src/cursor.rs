//! Handler-level cursors: MariaDB's index reads (`index_read_map`, `index_next`,
//! `index_next_same`, `index_prev`, `index_first`, `index_last`, `rnd_next`) over one index
//! of a table, in one key format.
//!
//! The caller speaks in *key tuples*: the memcomparable bytes of a (possibly partial) index
//! tuple, without the index id, exactly as it passes secondary keys to [`Session::insert`].
//! Everything else about the key layout stays here: index prefixes, successors, stop keys,
//! decoding secondary entries into (key tuple, primary key), and reading the row a secondary
//! entry points to. A step returns the row ([`CursorRow`]) in one call.
//!
//! A cursor is made per scan (it is cheap) and lives across transactions: the iterator
//! underneath belongs to the session it was made in, which drops it when its transaction
//! ends (commit, rollback, a statement or savepoint rollback); the cursor keeps its position
//! and, at its next step, makes a new iterator in the session it is given and goes on after
//! the entry it returned last (MariaDB's `HANDLER ... READ NEXT` in a later statement).

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;
use riptide::{Error, ErrorKind, LockedRead, TxnIterator};

use crate::error::Result;
use crate::format::{decode_secondary_entry, prefix_successor, primary_key, secondary_entry};
use crate::session::{RowLock, SecondaryKey, Session};
use crate::table::Table;

/// How a cursor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CursorMode {
    /// Plain reads of the session's snapshot (or, under READ COMMITTED, of the newest
    /// committed state at each statement).
    #[default]
    Snapshot,
    /// InnoDB's locking reads (`FOR UPDATE`, `LOCK IN SHARE MODE`, SERIALIZABLE reads, the
    /// source rows of writing statements): the newest committed entries merged with the
    /// session's own, each row locked in `lock`'s mode and, under REPEATABLE READ and
    /// SERIALIZABLE, the gaps walked (see [`Session::iter_locking`]). With `skip_locked`
    /// (`SKIP LOCKED`), rows another transaction holds are stepped over, never waited for.
    /// `lock` [`RowLock::None`] reads as [`CursorMode::Snapshot`].
    Locking {
        /// The row lock mode.
        lock: RowLock,
        /// Skip rows locked by others instead of waiting.
        skip_locked: bool,
    },
    /// A MariaDB long UNIQUE key's duplicate check (after [`Session::lock_value`]): the
    /// newest committed entries merged with the session's own, no gap locks, and the rows
    /// found read locked in `row_lock`'s mode (see [`Session::iter_current`]).
    Current {
        /// The lock the rows found are read with.
        row_lock: RowLock,
    },
}

impl CursorMode {
    /// The lock a row read through this cursor takes, and whether it skips locked rows.
    fn row_lock(self) -> (RowLock, bool) {
        match self {
            CursorMode::Snapshot => (RowLock::None, false),
            CursorMode::Locking { lock, skip_locked } => (lock, skip_locked),
            CursorMode::Current { row_lock } => (row_lock, false),
        }
    }

    /// Whether forward steps end at the range end (a locking read must not lock past it).
    fn stops_at_range_end(self) -> bool {
        matches!(self, CursorMode::Locking { lock, .. } if lock != RowLock::None)
    }
}

/// Where a positioning read starts, relative to a key tuple `t` (MariaDB's
/// `ha_rkey_function`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seek {
    /// The first entry at or after `t` (`HA_READ_KEY_EXACT`, `HA_READ_PREFIX`,
    /// `HA_READ_KEY_OR_NEXT`); forward.
    AtOrAfter,
    /// The first entry after every entry that starts with `t` (`HA_READ_AFTER_KEY`);
    /// forward.
    After,
    /// The last entry before every entry that starts with `t` (`HA_READ_BEFORE_KEY`);
    /// backward.
    Before,
    /// The last entry that starts with `t`, or else the last one before it
    /// (`HA_READ_KEY_OR_PREV`, `HA_READ_PREFIX_LAST`, `HA_READ_PREFIX_LAST_OR_PREV`);
    /// backward.
    AtOrBefore,
}

impl Seek {
    /// Whether the read then goes on forward.
    pub fn forward(self) -> bool {
        matches!(self, Seek::AtOrAfter | Seek::After)
    }
}

/// The row a cursor is on: views into the cursor, valid until its next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorRow<'a> {
    /// The primary key tuple (for a hidden primary key, the 8-byte row id): the row's
    /// reference, as [`Session::get_row`], [`Session::update`] and [`Session::delete`]
    /// take it.
    pub pk: &'a [u8],
    /// The secondary key tuple of the entry (empty on the primary key).
    pub key: &'a [u8],
    /// The row, or `None` when the cursor reads keys only ([`Cursor::set_keys_only`]).
    pub row: Option<&'a [u8]>,
}

/// An iterator and the session (by [`Session::id`]) it reads through.
pub(crate) struct Owned {
    session: u64,
    it: TxnIterator,
}

/// The iterator of a cursor, which the session that made it drops when its transaction
/// ends. A cursor may serve several sessions over its life (MariaDB hands a table's handler
/// to another connection between statements), one at a time.
pub(crate) struct IterSlot(Mutex<Option<Owned>>);

impl IterSlot {
    /// Drops the iterator, if any (the cursor's own thread).
    pub(crate) fn clear(&self) {
        self.0.lock().take();
    }

    /// Drops the iterator if session `session` made it. Never waits: a slot another thread
    /// holds is in use by another session (a session is used by one thread at a time, and
    /// a cursor replaces another session's iterator before it reads), so it holds nothing
    /// of `session`'s.
    pub(crate) fn release_from(&self, session: u64) {
        if let Some(mut g) = self.0.try_lock()
            && g.as_ref().is_some_and(|o| o.session == session)
        {
            g.take();
        }
    }
}

/// A cursor over index `n` of a table (0: the primary or hidden key, then the secondary
/// indexes): see the module documentation. Use it from one thread at a time, with sessions
/// of that thread.
pub struct Cursor {
    table: Arc<Table>,
    index: usize,
    /// The index's 4-byte id prefix.
    prefix: [u8; 4],
    mode: CursorMode,
    slot: Arc<IterSlot>,
    /// Where forward steps end ([`Cursor::set_range_end`]), as a full key; `None`: the end
    /// of the index.
    range_end: Option<Vec<u8>>,
    /// Keys the statement moved rows to while this cursor scans ([`Session::update`] with
    /// the cursor): not returned again (the Halloween problem).
    moved: HashSet<Vec<u8>>,
    /// The full key of the entry read last (or of a point read), empty before any.
    pos: Vec<u8>,
    /// The iterator is not on `pos` (a point read, or a new iterator): reposition before
    /// stepping.
    resync: bool,
    /// Return key tuples only, without reading rows ([`Cursor::set_keys_only`]).
    keys_only: bool,
    /// The current row's bytes and whether there is a current row.
    row: Vec<u8>,
    has_row: bool,
    /// Where the primary key and the secondary key tuple lie in `pos`.
    pk_at: (usize, usize),
    key_at: (usize, usize),
    /// The current row was locked by this cursor's read (so [`Cursor::unlock_current`] may
    /// release it).
    locked: bool,
}

impl std::fmt::Debug for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("table", &self.table.id())
            .field("index", &self.index)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Cursor {
    /// A cursor over index `n` of `table`, in [`CursorMode::Snapshot`], not positioned.
    /// `InvalidArgument` if the table has no index `n`.
    pub fn new(table: Arc<Table>, n: usize) -> Result<Cursor> {
        let prefix = table.index_prefix(n)?;
        Ok(Cursor {
            table,
            index: n,
            prefix,
            mode: CursorMode::Snapshot,
            slot: Arc::new(IterSlot(Mutex::new(None))),
            range_end: None,
            moved: HashSet::new(),
            pos: Vec::new(),
            resync: false,
            keys_only: false,
            row: Vec::new(),
            has_row: false,
            pk_at: (0, 0),
            key_at: (0, 0),
            locked: false,
        })
    }

    /// The table.
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    /// The index position.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The read mode.
    pub fn mode(&self) -> CursorMode {
        self.mode
    }

    /// Sets how the following reads read. A different mode drops the iterator (the next read
    /// makes one), forgets the rows the statement moved and ends a keys-only read
    /// ([`Cursor::set_keys_only`] is granted per mode).
    pub fn set_mode(&mut self, mode: CursorMode) {
        if mode != self.mode {
            self.mode = mode;
            self.slot.clear();
            self.moved.clear();
            self.keys_only = false;
            self.resync = true;
        }
    }

    /// Asks to return key tuples without reading rows (an index-only read whose columns the
    /// caller decodes from the tuples). Granted (true) only for a secondary index read in
    /// [`CursorMode::Snapshot`] by a session that has not written an entry of this index:
    /// once it has, an entry of its snapshot may point to a row it has since changed, so
    /// the caller must read rows and check them against their entries. It lasts until
    /// switched off, the mode changes or [`Cursor::reset`].
    pub fn set_keys_only(&mut self, session: &Session, want: bool) -> bool {
        self.keys_only = want
            && self.index > 0
            && self.mode == CursorMode::Snapshot
            && !session.wrote_index(&self.table, self.index);
        self.keys_only
    }

    /// Sets where forward steps of a locking read end (MariaDB's `end_range`): after every
    /// entry that starts with `tuple` (`inclusive`) or before the first one; `None`: at the
    /// end of the index. A locking read does not lock the first entry past it under READ
    /// COMMITTED (under REPEATABLE READ and SERIALIZABLE it is next-key locked, as InnoDB
    /// does). Every read, plain or locking, also takes it as its read-ahead limit: a forward
    /// read fetches the blocks of a level up to there at once (see
    /// [`riptide::DbIterator::set_readahead_limit`]); plain reads still step past it.
    pub fn set_range_end(&mut self, end: Option<(&[u8], bool)>) {
        self.range_end = end.and_then(|(tuple, inclusive)| {
            let key = self.full_key(tuple);
            if inclusive {
                prefix_successor(&key)
            } else {
                Some(key)
            }
        });
    }

    /// Ends the statement's use of the cursor: drops the iterator and forgets the moved rows,
    /// the range end and a keys-only read (MariaDB's `handler::reset`). The position stays.
    pub fn reset(&mut self) {
        self.slot.clear();
        self.moved.clear();
        self.range_end = None;
        self.keys_only = false;
        self.resync = true;
    }

    /// Drops the iterator (the position stays: the next step goes on after it).
    pub fn release(&mut self) {
        self.slot.clear();
        self.resync = true;
    }

    /// Positions on the entry `how` and `tuple` name and reads it. With `exact`, only an
    /// entry that starts with `tuple` counts (and a forward read ends after the entries
    /// that do). Returns whether a row was found ([`Cursor::row`]).
    pub fn seek(
        &mut self,
        session: &mut Session,
        tuple: &[u8],
        how: Seek,
        exact: bool,
    ) -> Result<bool> {
        let key = self.full_key(tuple);
        let successor = prefix_successor(&key);
        let stop = if how.forward() {
            self.forward_stop(if exact { successor.as_deref() } else { None })
        } else {
            None
        };
        let slot = Arc::clone(&self.slot);
        let mut guard = slot.0.lock();
        let it = self.iterator(session, &mut guard)?;
        it.set_stop(stop.as_deref());
        let ahead = if how.forward() {
            self.scan_end(if exact { successor.as_deref() } else { None })
        } else {
            None
        };
        it.set_readahead_limit(ahead);
        match how {
            Seek::AtOrAfter => it.seek(&key)?,
            Seek::After => match &successor {
                Some(s) => it.seek(s)?,
                // Every key of the index starts with `key`: nothing is after it.
                None => Self::park_at_end(it)?,
            },
            Seek::Before => {
                it.seek_for_prev(&key)?;
                if it.valid() && it.key().starts_with(&key) {
                    it.prev()?;
                }
            }
            // The last entry before the key's successor: one backward seek of every level
            // (a forward seek and a step back would seek each of them twice, the step
            // turning the merge around).
            Seek::AtOrBefore => match &successor {
                Some(s) => {
                    it.seek_for_prev(s)?;
                    if it.valid() && it.key() == s.as_slice() {
                        it.prev()?;
                    }
                }
                None => it.seek_to_last()?,
            },
        }
        self.resync = false;
        let found = self.settle(session, it, how.forward())?;
        Ok(found && (!exact || self.pos.starts_with(&key)))
    }

    /// Positions on the first entry of the index and reads it.
    pub fn first(&mut self, session: &mut Session) -> Result<bool> {
        let stop = self.forward_stop(None);
        let slot = Arc::clone(&self.slot);
        let mut guard = slot.0.lock();
        let it = self.iterator(session, &mut guard)?;
        it.set_stop(stop.as_deref());
        it.set_readahead_limit(self.range_end.as_deref());
        it.seek_to_first()?;
        self.resync = false;
        self.settle(session, it, true)
    }

    /// Positions on the last entry of the index and reads it.
    pub fn last(&mut self, session: &mut Session) -> Result<bool> {
        let slot = Arc::clone(&self.slot);
        let mut guard = slot.0.lock();
        let it = self.iterator(session, &mut guard)?;
        it.set_stop(None);
        it.set_readahead_limit(None);
        it.seek_to_last()?;
        self.resync = false;
        self.settle(session, it, false)
    }

    /// Steps forward and reads the next entry (the first one when not positioned yet). With
    /// `within`, only an entry that starts with that key tuple counts (false otherwise), and
    /// a locking read ends right after those entries (`index_next_same`).
    pub fn next(&mut self, session: &mut Session, within: Option<&[u8]>) -> Result<bool> {
        self.step_within(session, true, within)
    }

    /// Steps backward and reads the previous entry (the last one when not positioned yet).
    /// With `within`, only an entry that starts with that key tuple counts.
    pub fn prev(&mut self, session: &mut Session, within: Option<&[u8]>) -> Result<bool> {
        self.step_within(session, false, within)
    }

    fn step_within(
        &mut self,
        session: &mut Session,
        forward: bool,
        within: Option<&[u8]>,
    ) -> Result<bool> {
        let Some(tuple) = within else {
            return self.step(session, forward, None);
        };
        let key = self.full_key(tuple);
        let successor = if forward {
            prefix_successor(&key)
        } else {
            None
        };
        let found = self.step(session, forward, successor.as_deref())?;
        Ok(found && self.pos.starts_with(&key))
    }

    /// Reads the row with primary key `pk` (index 0 only), locking it as the mode says, and
    /// positions there: the next step goes on from that key whether or not the row exists.
    /// Returns whether it does.
    pub fn get(&mut self, session: &mut Session, pk: &[u8]) -> Result<bool> {
        if self.index != 0 {
            return Err(Error::invalid_argument(format!(
                "a point read through index {} of table id {}: only the primary key reads \
                 rows by primary key",
                self.index,
                self.table.id()
            ))
            .into());
        }
        self.pos.clear();
        self.pos.extend_from_slice(&self.prefix);
        self.pos.extend_from_slice(pk);
        self.resync = true;
        self.has_row = false;
        self.locked = false;
        let (lock, skip) = self.mode.row_lock();
        let Some(row) = read_row(session, &self.table, pk, lock, skip)? else {
            return Ok(false);
        };
        self.row = row;
        self.pk_at = (self.prefix.len(), self.pos.len());
        self.key_at = (self.prefix.len(), self.prefix.len());
        self.has_row = true;
        self.locked = lock != RowLock::None;
        Ok(true)
    }

    /// The row the cursor is on (`None` after a read that found nothing).
    pub fn row(&self) -> Option<CursorRow<'_>> {
        if !self.has_row {
            return None;
        }
        Some(CursorRow {
            pk: self.pos.get(self.pk_at.0..self.pk_at.1)?,
            key: self.pos.get(self.key_at.0..self.key_at.1)?,
            row: (!self.reads_keys_only()).then_some(self.row.as_slice()),
        })
    }

    /// MariaDB's `unlock_row` for the row the cursor is on: under READ COMMITTED, releases
    /// the locks this read took on it (its entry and its primary key) when the statement
    /// does not want the row ([`Session::unlock_row`] decides what may go). Nothing without
    /// a locked current row.
    pub fn unlock_current(&mut self, session: &Session) -> Result<()> {
        if !std::mem::take(&mut self.locked) || !self.has_row {
            return Ok(());
        }
        let pk = self.pos.get(self.pk_at.0..self.pk_at.1).unwrap_or_default();
        let entry = (self.index > 0).then_some(self.pos.as_slice());
        session.unlock_row(&self.table, self.index, entry, pk)?;
        Ok(())
    }

    /// Notes that the statement moved a row of this cursor's table from (`old_pk`,
    /// `old_keys`) to (`new_pk`, `new_keys`): when the row's entry in this index changed,
    /// the new entry is not returned by this scan (it may lie ahead of it).
    pub(crate) fn note_update(
        &mut self,
        table: &Table,
        old_pk: &[u8],
        old_keys: &[SecondaryKey<'_>],
        new_pk: &[u8],
        new_keys: &[SecondaryKey<'_>],
    ) -> Result<()> {
        if table.id() != self.table.id() {
            return Ok(());
        }
        let id = self.table.index(self.index)?.id;
        if self.index == 0 {
            if old_pk != new_pk {
                self.moved.insert(primary_key(id, new_pk));
            }
            return Ok(());
        }
        let n = self.index - 1;
        let (Some(old), Some(new)) = (old_keys.get(n), new_keys.get(n)) else {
            return Ok(());
        };
        if old_pk != new_pk || old.key != new.key {
            self.moved.insert(secondary_entry(id, new.key, new_pk)?);
        }
        Ok(())
    }

    /// Whether reads return key tuples only: granted, on a secondary index, in snapshot mode.
    fn reads_keys_only(&self) -> bool {
        self.keys_only && self.index > 0 && self.mode == CursorMode::Snapshot
    }

    /// Index prefix + `tuple`.
    fn full_key(&self, tuple: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.prefix.len() + tuple.len());
        k.extend_from_slice(&self.prefix);
        k.extend_from_slice(tuple);
        k
    }

    /// The stop key of a forward move in this mode: the smaller of the range end and
    /// `also` (`None`: no stop).
    fn forward_stop(&self, also: Option<&[u8]>) -> Option<Vec<u8>> {
        if !self.mode.stops_at_range_end() {
            return None;
        }
        self.scan_end(also).map(<[u8]>::to_vec)
    }

    /// Where a forward scan is known to end: the smaller of the range end and `also` (the
    /// end of an exact prefix), in any mode; `None` when neither is known.
    fn scan_end<'a>(&'a self, also: Option<&'a [u8]>) -> Option<&'a [u8]> {
        match (self.range_end.as_deref(), also) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The iterator in `guard`, made (in this cursor's mode) if there is none or another
    /// session made it.
    fn iterator<'g>(
        &mut self,
        session: &mut Session,
        guard: &'g mut Option<Owned>,
    ) -> Result<&'g mut TxnIterator> {
        if guard.as_ref().is_some_and(|o| o.session != session.id()) {
            *guard = None;
        }
        if guard.is_none() {
            let it = match self.mode {
                CursorMode::Snapshot => session.iter(&self.table, self.index)?,
                CursorMode::Locking {
                    lock,
                    skip_locked: false,
                } => session.iter_locking(&self.table, self.index, lock)?,
                CursorMode::Locking {
                    lock,
                    skip_locked: true,
                } => session.iter_skip_locked(&self.table, self.index, lock)?,
                CursorMode::Current { .. } => session.iter_current(&self.table, self.index)?,
            };
            session.track_cursor(&self.slot);
            self.resync = true;
            *guard = Some(Owned {
                session: session.id(),
                it,
            });
        }
        guard
            .as_mut()
            .map(|o| &mut o.it)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "cursor iterator vanished").into())
    }

    /// Leaves `it` not valid (past the last entry).
    fn park_at_end(it: &mut TxnIterator) -> Result<()> {
        it.seek_to_last()?;
        if it.valid() {
            it.next()?;
        }
        Ok(())
    }

    /// One step of a scan: repositions after `pos` when the iterator is new or elsewhere,
    /// else moves one entry; forward steps end at the range end (and at `also`).
    fn step(&mut self, session: &mut Session, forward: bool, also: Option<&[u8]>) -> Result<bool> {
        if self.pos.is_empty() {
            return if forward {
                self.first(session)
            } else {
                self.last(session)
            };
        }
        let stop = if forward {
            self.forward_stop(also)
        } else {
            None
        };
        let slot = Arc::clone(&self.slot);
        let mut guard = slot.0.lock();
        let it = self.iterator(session, &mut guard)?;
        it.set_stop(stop.as_deref());
        if self.resync {
            self.resync = false;
            it.set_readahead_limit(if forward { self.scan_end(also) } else { None });
            if forward {
                it.seek(&self.pos)?;
                if it.valid() && it.key() == self.pos.as_slice() {
                    it.next()?;
                }
            } else {
                it.seek_for_prev(&self.pos)?;
                if it.valid() && it.key() == self.pos.as_slice() {
                    it.prev()?;
                }
            }
        } else if forward {
            it.next()?;
        } else {
            it.prev()?;
        }
        self.settle(session, it, forward)
    }

    /// Reads the entry under `it`, moving on in the given direction past the rows this
    /// statement moved and past entries whose row is gone (deleted before a locking read
    /// could lock it, or locked by another session under `SKIP LOCKED`).
    fn settle(&mut self, session: &Session, it: &mut TxnIterator, forward: bool) -> Result<bool> {
        self.has_row = false;
        self.locked = false;
        let (lock, skip) = self.mode.row_lock();
        loop {
            if !it.valid() {
                return Ok(false);
            }
            let key = it.key();
            if !self.moved.is_empty() && self.moved.contains(key) {
                advance(it, forward)?;
                continue;
            }
            let p = self.prefix.len();
            if self.index == 0 {
                self.row.clear();
                self.row.extend_from_slice(it.value());
                self.pk_at = (p, key.len());
                self.key_at = (p, p);
                self.locked = lock != RowLock::None;
            } else {
                let Some((sk, pk)) = decode_secondary_entry(key) else {
                    return Err(Error::corruption(format!(
                        "a malformed entry of index #{} of table id {}: \"{}\"",
                        self.index,
                        self.table.id(),
                        key.escape_ascii()
                    ))
                    .into());
                };
                // Offsets of the two parts in the entry key (they are views of it).
                let key_start = p;
                let pk_start = key_start + sk.len();
                let pk_end = pk_start + pk.len();
                if !self.reads_keys_only() {
                    match read_row(session, &self.table, pk, lock, skip)? {
                        Some(row) => self.row = row,
                        None => {
                            advance(it, forward)?;
                            continue;
                        }
                    }
                    self.locked = lock != RowLock::None;
                }
                self.pk_at = (pk_start, pk_end);
                self.key_at = (key_start, pk_start);
            }
            self.pos.clear();
            self.pos.extend_from_slice(it.key());
            self.has_row = true;
            return Ok(true);
        }
    }
}

/// Moves `it` one entry in the given direction.
fn advance(it: &mut TxnIterator, forward: bool) -> Result<()> {
    if forward {
        it.next()?;
    } else {
        it.prev()?;
    }
    Ok(())
}

/// Reads the row `pk` of `table` through `session` with `lock`; under `skip` a row another
/// session holds reads as absent.
fn read_row(
    session: &Session,
    table: &Table,
    pk: &[u8],
    lock: RowLock,
    skip: bool,
) -> Result<Option<Vec<u8>>> {
    if !skip {
        return session.get_row(table, pk, lock);
    }
    Ok(match session.get_row_skip_locked(table, pk, lock)? {
        LockedRead::Value(v) => v,
        LockedRead::LockedByOther => None,
    })
}
