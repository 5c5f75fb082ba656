//! The indexed write set of one transaction: what it wrote, readable back in key order
//! (read-your-own-writes), with nested savepoints and the list of row locks it took.
//!
//! # Savepoints
//!
//! Each savepoint keeps an undo log: the first time a key is written after the savepoint, the
//! key's previous state (`None` if the buffer had no entry for it) is saved. Rolling back
//! restores those states, so it costs O(keys touched since the savepoint), never a copy of the
//! whole buffer. Releasing a savepoint ([`WriteBuffer::pop_savepoint`]) merges its undo log into
//! the enclosing one, keeping the enclosing savepoint's older record where both have one.
//!
//! Each savepoint also lists the lock keys first recorded after it, which
//! [`WriteBuffer::rollback_to_savepoint`] hands back so the transaction can release them.
//!
//! A savepoint set while the buffer holds no entry and no lock, and inside no other kind of
//! savepoint, is a *base* savepoint (the savepoint of a transaction's first statement, as
//! MariaDB sets one around every statement): rolling back to it empties the buffer and hands
//! back every lock, so it keeps neither an undo log nor a lock list, and writes under it cost
//! nothing extra. A big first statement (`INSERT ... SELECT`) then holds each key once in
//! the entries and once in the lock set, not four times.
//!
//! # Memory accounting
//!
//! [`WriteBuffer::approximate_bytes`] counts every key copy the buffer holds: each entry, each
//! undo record and each lock record (in the lock set and in a savepoint's lock list) costs its
//! key length, plus its value length if it holds a put, plus [`ENTRY_OVERHEAD_BYTES`].

use std::collections::btree_map;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::mem;
use std::ops::Bound;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry as TableEntry;
use riptide_common::{CfId, Error, Result};

use crate::lock_manager::{LockKey, LockMode};

/// What [`WriteBuffer::approximate_bytes`] adds per entry, undo record or lock record on top of
/// the key and value bytes: an estimate of the map node, vector header and tag.
pub const ENTRY_OVERHEAD_BYTES: usize = 48;

/// The latest write of a transaction to one key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BufferedOp {
    /// The key was set to this value.
    Put(Vec<u8>),
    /// The key was deleted.
    Delete,
    /// The key was deleted with a single-delete (the caller promises it was written at most
    /// once since the last delete).
    SingleDelete,
    /// As [`BufferedOp::SingleDelete`], and the caller also vouched that the key's newest
    /// committed version is a put that no other transaction can delete meanwhile (it holds
    /// the lock that guards the key, e.g. the row lock of a secondary-index entry), and the
    /// buffer held nothing for the key before: the commit writes the single delete without
    /// looking the key up. See [`WriteBuffer::single_delete_present`].
    SingleDeletePresent,
    /// The key was deleted (with a single delete when `single`) and then set to `value`
    /// within this transaction. The commit must write the deletion before the put: a put
    /// alone would stack a second put on the old one, and a later single delete would then
    /// bring the old one back.
    PutAfterDelete {
        /// The value written after the deletion.
        value: Vec<u8>,
        /// The deletion was a single delete.
        single: bool,
    },
}

impl BufferedOp {
    /// The value of a [`BufferedOp::Put`], `None` for deletions.
    pub fn value(&self) -> Option<&[u8]> {
        match self {
            BufferedOp::Put(v) | BufferedOp::PutAfterDelete { value: v, .. } => Some(v),
            BufferedOp::Delete | BufferedOp::SingleDelete | BufferedOp::SingleDeletePresent => None,
        }
    }

    /// `op` written over `prev`: a put over a deletion (or over a put that followed one)
    /// remembers the deletion (see [`BufferedOp::PutAfterDelete`]).
    /// A present single delete over any write of this transaction is the checked kind
    /// (see [`WriteBuffer::single_delete_present`]).
    fn over(op: BufferedOp, prev: Option<&BufferedOp>) -> BufferedOp {
        let value = match op {
            BufferedOp::Put(value) => value,
            BufferedOp::SingleDeletePresent if prev.is_some() => return BufferedOp::SingleDelete,
            other => return other,
        };
        match prev {
            Some(BufferedOp::Delete) => BufferedOp::PutAfterDelete {
                value,
                single: false,
            },
            Some(BufferedOp::SingleDelete | BufferedOp::SingleDeletePresent) => {
                BufferedOp::PutAfterDelete {
                    value,
                    single: true,
                }
            }
            Some(BufferedOp::PutAfterDelete { single, .. }) => BufferedOp::PutAfterDelete {
                value,
                single: *single,
            },
            Some(BufferedOp::Put(_)) | None => BufferedOp::Put(value),
        }
    }

    /// Whether this is a deletion of either kind.
    pub fn is_delete(&self) -> bool {
        self.value().is_none()
    }

    fn value_len(&self) -> usize {
        self.value().map_or(0, <[u8]>::len)
    }
}

/// The cost of one record holding `key` and, optionally, `op`.
fn record_bytes(key: &[u8], op: Option<&BufferedOp>) -> usize {
    key.len() + op.map_or(0, BufferedOp::value_len) + ENTRY_OVERHEAD_BYTES
}

/// `key -> previous state`, per column family.
type UndoLog = HashMap<CfId, HashMap<Vec<u8>, Option<BufferedOp>, KeyHashing>>;

/// Hashes a key of the undo log with one xxh3 call (as lock records are hashed) instead of
/// the standard library's SipHash: every first write of a key in a statement records its
/// undo, and SipHash was 8% of the handler's row insert in a TPC-C load (perf, 2026-11-29).
/// `Vec<u8>` hashes as its length, then its bytes in one `write`.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    fn write_usize(&mut self, n: usize) {
        self.0 ^= n as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The [`BuildHasher`](std::hash::BuildHasher) of the undo log's key maps.
type KeyHashing = BuildHasherDefault<KeyHasher>;

/// One open savepoint.
#[derive(Debug, Default)]
struct Savepoint {
    /// A base savepoint (see the module documentation): `undo` and `locks` stay empty.
    base: bool,
    /// The state of each key before its first write after this savepoint.
    undo: UndoLog,
    /// Keys whose lock was first recorded after this savepoint, in recording order.
    locks: Vec<LockKey>,
}

/// One recorded row lock.
#[derive(Debug)]
struct LockRecord {
    /// [`lock_hash`] of (`cf`, `key`).
    hash: u64,
    cf: CfId,
    key: Box<[u8]>,
    mode: LockMode,
}

/// The hash of a lock record's key (xxh3, seeded with the column family).
fn lock_hash(cf: CfId, key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(key, u64::from(cf))
}

/// The write set of one transaction, ordered by `(column family, key)`.
///
/// Entries live in one ordered map per column family (equivalent to one map keyed by
/// `(cf, key)`, but searchable with a borrowed key). The last write to a key wins.
#[derive(Debug, Default)]
pub struct WriteBuffer {
    entries: BTreeMap<CfId, BTreeMap<Vec<u8>, BufferedOp>>,
    savepoints: Vec<Savepoint>,
    locks: HashTable<LockRecord>,
    bytes: usize,
}

impl WriteBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `key = value` in `cf`. Returns whether the buffer had no entry for the key
    /// before.
    pub fn put(&mut self, cf: CfId, key: &[u8], value: &[u8]) -> bool {
        self.write(cf, key, BufferedOp::Put(value.to_vec()))
    }

    /// Records a deletion of `key` in `cf`. Returns whether the buffer had no entry for the
    /// key before.
    pub fn delete(&mut self, cf: CfId, key: &[u8]) -> bool {
        self.write(cf, key, BufferedOp::Delete)
    }

    /// Records a single-delete of `key` in `cf`. Returns whether the buffer had no entry for
    /// the key before.
    pub fn single_delete(&mut self, cf: CfId, key: &[u8]) -> bool {
        self.write(cf, key, BufferedOp::SingleDelete)
    }

    /// Records a single-delete of `key` in `cf` whose caller vouches that the key's newest
    /// committed version is a put nobody else can delete before this buffer commits: a
    /// [`BufferedOp::SingleDeletePresent`], which the commit writes without a lookup. If the
    /// buffer already holds a write of the key, that write decides what is committed (a put
    /// of this transaction's own, for one), so a plain [`BufferedOp::SingleDelete`] is
    /// recorded instead. Returns whether the buffer had no entry for the key before.
    pub fn single_delete_present(&mut self, cf: CfId, key: &[u8]) -> bool {
        self.write(cf, key, BufferedOp::SingleDeletePresent)
    }

    /// Replaces the entry of `key` with `op`, saving its previous state in the innermost
    /// savepoint's undo log if this is the key's first write since that savepoint (a base
    /// savepoint keeps none). One search of the entries. Returns whether the key had no entry.
    fn write(&mut self, cf: CfId, key: &[u8], op: BufferedOp) -> bool {
        let added = op.value_len();
        let map = self.entries.entry(cf).or_default();
        let prev = match map.entry(key.to_vec()) {
            btree_map::Entry::Occupied(mut slot) => {
                let op = BufferedOp::over(op, Some(slot.get()));
                let prev = mem::replace(slot.get_mut(), op);
                self.bytes = self.bytes.saturating_sub(prev.value_len()) + added;
                Some(prev)
            }
            btree_map::Entry::Vacant(slot) => {
                slot.insert(op);
                self.bytes += key.len() + added + ENTRY_OVERHEAD_BYTES;
                None
            }
        };
        let fresh = prev.is_none();
        if let Some(savepoint) = self.savepoints.last_mut()
            && !savepoint.base
        {
            let undo = savepoint.undo.entry(cf).or_default();
            if !undo.contains_key(key) {
                self.bytes += record_bytes(key, prev.as_ref());
                undo.insert(key.to_vec(), prev);
            }
        }
        fresh
    }

    /// Undoes the last write to `key` in `cf`, which must have been the key's first write
    /// (the buffer had no entry for it before): the entry goes, and so does the undo record
    /// that write left in the innermost savepoint. For a write that turned out not to be
    /// allowed (an insert that timed out waiting for a gap lock). Returns whether there was
    /// an entry; a key the buffer held before that write must not be passed (the undo record
    /// would be lost).
    pub fn forget_fresh(&mut self, cf: CfId, key: &[u8]) -> bool {
        let Some(op) = self.entries.get_mut(&cf).and_then(|m| m.remove(key)) else {
            return false;
        };
        self.bytes = self
            .bytes
            .saturating_sub(key.len() + op.value_len() + ENTRY_OVERHEAD_BYTES);
        if let Some(savepoint) = self.savepoints.last_mut()
            && !savepoint.base
            && let Some(undo) = savepoint.undo.get_mut(&cf)
            && let Some(None) = undo.get(key)
        {
            undo.remove(key);
            self.bytes = self.bytes.saturating_sub(record_bytes(key, None));
        }
        true
    }

    /// The latest write to `key` in `cf`, if any.
    pub fn get(&self, cf: CfId, key: &[u8]) -> Option<&BufferedOp> {
        self.entries.get(&cf).and_then(|m| m.get(key))
    }

    /// The entries of `cf` between `lower` and `upper`, in key order; iterate from either end.
    /// Bounds that describe an empty range (`lower` above `upper`, or equal and not both
    /// included) yield nothing.
    pub fn range<'a>(
        &'a self,
        cf: CfId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> impl DoubleEndedIterator<Item = (&'a [u8], &'a BufferedOp)> + 'a {
        let range = self
            .entries
            .get(&cf)
            .filter(|_| bounds_nonempty(lower, upper))
            .map(|m| m.range::<[u8], _>((lower, upper)));
        range
            .into_iter()
            .flatten()
            .map(|(k, op)| (k.as_slice(), op))
    }

    /// The first entry of `cf` with a key `>= key`.
    pub fn seek_ge(&self, cf: CfId, key: &[u8]) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Included(key), Bound::Unbounded)
            .next()
    }

    /// The first entry of `cf` with a key `> key` (the entry after `key`).
    pub fn next_after(&self, cf: CfId, key: &[u8]) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Excluded(key), Bound::Unbounded)
            .next()
    }

    /// The last entry of `cf` with a key `<= key`.
    pub fn seek_le(&self, cf: CfId, key: &[u8]) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Unbounded, Bound::Included(key))
            .next_back()
    }

    /// The last entry of `cf` with a key `< key` (the entry before `key`).
    pub fn prev_before(&self, cf: CfId, key: &[u8]) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Unbounded, Bound::Excluded(key))
            .next_back()
    }

    /// The entry of `cf` with the smallest key.
    pub fn first(&self, cf: CfId) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Unbounded, Bound::Unbounded).next()
    }

    /// The entry of `cf` with the largest key.
    pub fn last(&self, cf: CfId) -> Option<(&[u8], &BufferedOp)> {
        self.range(cf, Bound::Unbounded, Bound::Unbounded)
            .next_back()
    }

    /// Every entry in `(column family, key)` order, for building the commit batch.
    pub fn iter_all(&self) -> impl Iterator<Item = (CfId, &[u8], &BufferedOp)> + '_ {
        self.entries
            .iter()
            .flat_map(|(&cf, m)| m.iter().map(move |(k, op)| (cf, k.as_slice(), op)))
    }

    /// The number of keys with an entry.
    pub fn len(&self) -> usize {
        self.entries.values().map(BTreeMap::len).sum()
    }

    /// Whether no key has an entry.
    pub fn is_empty(&self) -> bool {
        self.entries.values().all(BTreeMap::is_empty)
    }

    /// The approximate memory held: entries, undo records and lock records (see the module
    /// documentation for the formula).
    pub fn approximate_bytes(&self) -> usize {
        self.bytes
    }

    /// Discards every entry, savepoint and lock record (after commit or rollback, once the
    /// locks were released).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.savepoints.clear();
        // A new table: `clear` would keep the capacity of the biggest transaction.
        self.locks = HashTable::new();
        self.bytes = 0;
    }

    /// Opens a savepoint, nested inside any open ones. It is a base savepoint (see the module
    /// documentation) when the buffer holds no entry and no lock and every open savepoint is
    /// a base savepoint.
    pub fn set_savepoint(&mut self) {
        let base = self.entries.values().all(BTreeMap::is_empty)
            && self.locks.is_empty()
            && self.savepoints.iter().all(|s| s.base);
        self.savepoints.push(Savepoint {
            base,
            ..Savepoint::default()
        });
    }

    /// How many savepoints are open.
    pub fn savepoint_depth(&self) -> usize {
        self.savepoints.len()
    }

    /// Undoes every write made since the innermost savepoint and removes that savepoint.
    ///
    /// Returns the lock keys first recorded since the savepoint; they are no longer in the lock
    /// set ([`WriteBuffer::locked_keys`]), so the caller must release them all
    /// ([`LockManager::unlock_all`](crate::LockManager::unlock_all)). Locks recorded before the
    /// savepoint stay, in their current mode: an upgrade from shared to exclusive made after the
    /// savepoint is not undone (holding too strong a lock is safe).
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::NotFound`] if no savepoint is open; nothing changes.
    pub fn rollback_to_savepoint(&mut self) -> Result<Vec<LockKey>> {
        let savepoint = self.savepoints.pop().ok_or_else(|| {
            Error::not_found("rollback to savepoint: no savepoint is open in this transaction")
        })?;
        if savepoint.base {
            // The buffer was empty, and every enclosing savepoint is a base one: nothing to
            // keep, every lock to release.
            let locks = mem::take(&mut self.locks);
            let released = locks
                .into_iter()
                .map(|r| LockKey::new(r.cf, &r.key))
                .collect();
            // The enclosing savepoints (base ones too) hold no records.
            self.entries.clear();
            self.bytes = 0;
            return Ok(released);
        }
        for (cf, undo) in savepoint.undo {
            let map = self.entries.entry(cf).or_default();
            for (key, prev) in undo {
                let mut freed = record_bytes(&key, prev.as_ref());
                if let Some(current) = map.remove(&key) {
                    freed += record_bytes(&key, Some(&current));
                }
                self.bytes = self.bytes.saturating_sub(freed);
                if let Some(prev) = prev {
                    self.bytes += record_bytes(&key, Some(&prev));
                    map.insert(key, prev);
                }
            }
            if map.is_empty() {
                self.entries.remove(&cf);
            }
        }
        for lock in &savepoint.locks {
            // Its record in the savepoint list and in the lock set.
            let mut freed = record_bytes(lock.key(), None);
            if self.remove_lock(lock.cf(), lock.key()) {
                freed += record_bytes(lock.key(), None);
            }
            self.bytes = self.bytes.saturating_sub(freed);
        }
        Ok(savepoint.locks)
    }

    /// Releases the innermost savepoint without undoing anything: its writes and locks now
    /// belong to the enclosing savepoint (or to the transaction, if it was the outermost).
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::NotFound`] if no savepoint is open.
    pub fn pop_savepoint(&mut self) -> Result<()> {
        let Some(innermost) = self.savepoints.len().checked_sub(1) else {
            return Err(Error::not_found(
                "release savepoint: no savepoint is open in this transaction",
            ));
        };
        self.remove_savepoint(innermost)
    }

    /// Releases the savepoint at `index` (0: the outermost) without undoing anything and
    /// leaves the savepoints set after it as they are: what was written after it and before
    /// the next one now belongs to the enclosing savepoint (or to the transaction).
    /// [`WriteBuffer::pop_savepoint`] is this for the innermost. (MariaDB: a `SAVEPOINT`
    /// that reuses a name releases the older savepoint of that name only.)
    ///
    /// # Errors
    ///
    /// [`riptide_common::ErrorKind::NotFound`] if fewer than `index + 1` savepoints are open.
    pub fn remove_savepoint(&mut self, index: usize) -> Result<()> {
        if index >= self.savepoints.len() {
            return Err(Error::not_found(format!(
                "release savepoint: savepoint #{index} is not open ({} are)",
                self.savepoints.len()
            )));
        }
        let savepoint = self.savepoints.remove(index);
        let mut freed = 0;
        let enclosing = index
            .checked_sub(1)
            .and_then(|i| self.savepoints.get_mut(i));
        match enclosing {
            // A base savepoint keeps no records: those of the inner one go (an inner
            // savepoint of a base one may be an ordinary one).
            Some(outer) if !outer.base => {
                for (cf, undo) in savepoint.undo {
                    let outer_undo = outer.undo.entry(cf).or_default();
                    for (key, prev) in undo {
                        // The enclosing savepoint's record, if any, is older: keep it.
                        match outer_undo.entry(key) {
                            Entry::Occupied(older) => {
                                freed += record_bytes(older.key(), prev.as_ref());
                            }
                            Entry::Vacant(slot) => {
                                slot.insert(prev);
                            }
                        }
                    }
                }
                outer.locks.extend(savepoint.locks);
            }
            _ => {
                let undo = savepoint.undo.values().flat_map(HashMap::iter);
                freed += undo
                    .map(|(key, prev)| record_bytes(key, prev.as_ref()))
                    .sum::<usize>();
                freed += savepoint
                    .locks
                    .iter()
                    .map(|l| record_bytes(l.key(), None))
                    .sum::<usize>();
            }
        }
        self.bytes = self.bytes.saturating_sub(freed);
        Ok(())
    }

    /// Records that the transaction holds a lock on `key` of `cf` in `mode`. Returns `true` if
    /// the key was not locked before (it is then listed in the innermost savepoint); if it was,
    /// the recorded mode is raised to `mode` when stronger and `false` is returned.
    pub fn record_lock(&mut self, cf: CfId, key: &[u8], mode: LockMode) -> bool {
        let hash = lock_hash(cf, key);
        match self.locks.entry(
            hash,
            |r| r.hash == hash && r.cf == cf && *r.key == *key,
            |r| r.hash,
        ) {
            TableEntry::Occupied(mut held) => {
                let held = &mut held.get_mut().mode;
                *held = (*held).max(mode);
                return false;
            }
            TableEntry::Vacant(slot) => {
                slot.insert(LockRecord {
                    hash,
                    cf,
                    key: key.into(),
                    mode,
                });
            }
        }
        self.bytes += record_bytes(key, None);
        if let Some(savepoint) = self.savepoints.last_mut()
            && !savepoint.base
        {
            savepoint.locks.push(LockKey::new(cf, key));
            self.bytes += record_bytes(key, None);
        }
        true
    }

    /// Removes the lock record of `key` of `cf`; returns whether there was one.
    fn remove_lock(&mut self, cf: CfId, key: &[u8]) -> bool {
        let hash = lock_hash(cf, key);
        match self
            .locks
            .find_entry(hash, |r| r.hash == hash && r.cf == cf && *r.key == *key)
        {
            Ok(record) => {
                record.remove();
                true
            }
            Err(_) => false,
        }
    }

    /// Forgets the lock record of `key` of `cf` so that the caller can release the lock
    /// early ([`LockManager::unlock`](crate::LockManager::unlock)), InnoDB's `unlock_row` for
    /// a row a READ COMMITTED statement read and did not want. Only a lock first recorded
    /// *since savepoint depth `since`* goes: with `since == 0`, any lock of the transaction;
    /// with `since == k`, a lock first recorded after the `k`-th savepoint (counted from the
    /// outermost, 1-based) was set, i.e. one listed by `savepoints[k - 1..]`. A key the
    /// buffer has an entry for (the transaction wrote it) keeps its lock. Returns whether
    /// the record was forgotten.
    pub fn forget_lock_since(&mut self, cf: CfId, key: &[u8], since: usize) -> bool {
        if self.get(cf, key).is_some() || self.lock_mode(cf, key).is_none() {
            return false;
        }
        // Where the key is listed: searched from the innermost savepoint and the newest
        // record (the row just read is usually the last lock recorded).
        let first = since.saturating_sub(1);
        let listed = self
            .savepoints
            .iter()
            .enumerate()
            .skip(first)
            .rev()
            .find_map(|(s, sp)| {
                sp.locks
                    .iter()
                    .rposition(|l| l.cf() == cf && l.key() == key)
                    .map(|i| (s, i))
            });
        match listed {
            Some((s, i)) => {
                if let Some(sp) = self.savepoints.get_mut(s) {
                    sp.locks.remove(i);
                    self.bytes = self.bytes.saturating_sub(record_bytes(key, None));
                }
            }
            // Not listed: recorded before the `since`-th savepoint (or with no savepoint
            // open), unless that savepoint is a base one, which lists nothing and was set
            // before any lock.
            None if since > 0 && !self.savepoints.get(first).is_some_and(|s| s.base) => {
                return false;
            }
            None => {}
        }
        if self.remove_lock(cf, key) {
            self.bytes = self.bytes.saturating_sub(record_bytes(key, None));
        }
        true
    }

    /// The mode in which the transaction recorded a lock on `key` of `cf`, if it did.
    pub fn lock_mode(&self, cf: CfId, key: &[u8]) -> Option<LockMode> {
        let hash = lock_hash(cf, key);
        self.locks
            .find(hash, |r| r.hash == hash && r.cf == cf && *r.key == *key)
            .map(|r| r.mode)
    }

    /// Every recorded lock (in no particular order), to release at commit or rollback.
    pub fn locked_keys(&self) -> impl Iterator<Item = (CfId, &[u8], LockMode)> + '_ {
        self.locks.iter().map(|r| (r.cf, &*r.key, r.mode))
    }

    /// How many locks are recorded.
    pub fn num_locked_keys(&self) -> usize {
        self.locks.len()
    }
}

/// Whether `(lower, upper)` is a range `BTreeMap::range` accepts and that can hold a key
/// (`BTreeMap::range` panics on `lower > upper` and on equal excluded bounds).
fn bounds_nonempty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Included(l), Bound::Included(u)) => l <= u,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(u))
        | (Bound::Excluded(l), Bound::Included(u)) => l < u,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(it: impl Iterator<Item = (impl AsRef<[u8]>, impl Sized)>) -> Vec<Vec<u8>> {
        it.map(|(k, _)| k.as_ref().to_vec()).collect()
    }

    #[test]
    fn a_present_single_delete_is_vouched_only_for_a_key_not_written_before() {
        let mut b = WriteBuffer::new();
        assert!(b.single_delete_present(0, b"a"));
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::SingleDeletePresent));
        // A put over it still remembers the deletion before it.
        b.put(0, b"a", b"v");
        assert_eq!(
            b.get(0, b"a"),
            Some(&BufferedOp::PutAfterDelete {
                value: b"v".to_vec(),
                single: true
            })
        );
        // Over this transaction's own write, the single delete is the checked kind.
        assert!(!b.single_delete_present(0, b"a"));
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::SingleDelete));
        b.put(0, b"n", b"new");
        b.single_delete_present(0, b"n");
        assert_eq!(b.get(0, b"n"), Some(&BufferedOp::SingleDelete));
    }

    #[test]
    fn last_write_wins_and_reads_back() {
        let mut b = WriteBuffer::new();
        b.put(0, b"k", b"v1");
        b.put(0, b"k", b"v2");
        assert_eq!(b.get(0, b"k"), Some(&BufferedOp::Put(b"v2".to_vec())));
        b.delete(0, b"k");
        assert_eq!(b.get(0, b"k"), Some(&BufferedOp::Delete));
        b.single_delete(1, b"k");
        assert_eq!(b.get(1, b"k"), Some(&BufferedOp::SingleDelete));
        assert_eq!(b.get(2, b"k"), None);
        assert_eq!(b.len(), 2);
        assert_eq!(b.approximate_bytes(), 2 * (1 + ENTRY_OVERHEAD_BYTES));
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.approximate_bytes(), 0);
    }

    #[test]
    fn forgetting_a_fresh_write_leaves_no_trace() {
        let mut b = WriteBuffer::new();
        b.put(0, b"a", b"1");
        let before = b.approximate_bytes();
        b.set_savepoint();
        b.put(0, b"k", b"value");
        assert!(b.forget_fresh(0, b"k"));
        assert_eq!(b.get(0, b"k"), None);
        assert!(!b.forget_fresh(0, b"k"));
        assert_eq!(
            b.approximate_bytes(),
            before,
            "entry and undo record both gone"
        );
        // The savepoint still works for what came before and after.
        b.put(0, b"a", b"2");
        b.rollback_to_savepoint().unwrap();
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"1".to_vec())));
        assert_eq!(b.len(), 1);
        assert_eq!(b.approximate_bytes(), before);
    }

    #[test]
    fn seeks_and_ranges_both_directions() {
        let mut b = WriteBuffer::new();
        for k in [b"b", b"d", b"f"] {
            b.put(1, k, b"v");
        }
        b.put(0, b"z", b"other cf");
        b.put(2, b"a", b"other cf");
        let k = |e: Option<(&[u8], &BufferedOp)>| e.map(|(k, _)| k.to_vec());
        assert_eq!(k(b.seek_ge(1, b"c")), Some(b"d".to_vec()));
        assert_eq!(k(b.seek_ge(1, b"d")), Some(b"d".to_vec()));
        assert_eq!(k(b.next_after(1, b"d")), Some(b"f".to_vec()));
        assert_eq!(k(b.next_after(1, b"f")), None);
        assert_eq!(k(b.seek_le(1, b"e")), Some(b"d".to_vec()));
        assert_eq!(k(b.seek_le(1, b"d")), Some(b"d".to_vec()));
        assert_eq!(k(b.prev_before(1, b"d")), Some(b"b".to_vec()));
        assert_eq!(k(b.prev_before(1, b"b")), None);
        assert_eq!(k(b.first(1)), Some(b"b".to_vec()));
        assert_eq!(k(b.last(1)), Some(b"f".to_vec()));
        assert_eq!(k(b.first(3)), None);

        let r = b.range(1, Bound::Included(b"c"), Bound::Excluded(b"f"));
        assert_eq!(keys(r), vec![b"d".to_vec()]);
        let r = b.range(1, Bound::Unbounded, Bound::Unbounded).rev();
        assert_eq!(keys(r), vec![b"f".to_vec(), b"d".to_vec(), b"b".to_vec()]);
        // Empty or inverted bounds yield nothing instead of panicking.
        assert_eq!(
            b.range(1, Bound::Excluded(b"d"), Bound::Excluded(b"d"))
                .count(),
            0
        );
        assert_eq!(
            b.range(1, Bound::Included(b"f"), Bound::Included(b"b"))
                .count(),
            0
        );
        assert_eq!(
            b.range(1, Bound::Included(b"d"), Bound::Included(b"d"))
                .count(),
            1
        );

        let all: Vec<(CfId, Vec<u8>)> = b.iter_all().map(|(cf, k, _)| (cf, k.to_vec())).collect();
        assert_eq!(
            all,
            vec![
                (0, b"z".to_vec()),
                (1, b"b".to_vec()),
                (1, b"d".to_vec()),
                (1, b"f".to_vec()),
                (2, b"a".to_vec()),
            ]
        );
    }

    #[test]
    fn savepoints_nest_and_roll_back() {
        let mut b = WriteBuffer::new();
        b.put(0, b"a", b"1");
        let base_bytes = b.approximate_bytes();
        b.set_savepoint();
        b.put(0, b"a", b"2");
        b.put(0, b"b", b"2");
        b.set_savepoint();
        b.delete(0, b"a");
        b.put(0, b"c", b"3");
        assert_eq!(b.savepoint_depth(), 2);
        assert!(b.rollback_to_savepoint().is_ok());
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"2".to_vec())));
        assert_eq!(b.get(0, b"c"), None);
        assert!(b.rollback_to_savepoint().is_ok());
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"1".to_vec())));
        assert_eq!(b.get(0, b"b"), None);
        assert_eq!(b.len(), 1);
        assert_eq!(b.approximate_bytes(), base_bytes);
        let err = b.rollback_to_savepoint().map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), riptide_common::ErrorKind::NotFound);
        assert_eq!(
            b.pop_savepoint().unwrap_err().kind(),
            riptide_common::ErrorKind::NotFound
        );
    }

    #[test]
    fn released_savepoint_merges_into_enclosing() {
        let mut b = WriteBuffer::new();
        b.put(0, b"a", b"0");
        b.set_savepoint();
        b.put(0, b"a", b"1");
        b.set_savepoint();
        b.put(0, b"a", b"2");
        b.put(0, b"b", b"2");
        assert!(b.pop_savepoint().is_ok());
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"2".to_vec())));
        assert!(b.rollback_to_savepoint().is_ok());
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"0".to_vec())));
        assert_eq!(b.get(0, b"b"), None);
        assert_eq!(b.approximate_bytes(), 1 + 1 + ENTRY_OVERHEAD_BYTES);
    }

    #[test]
    fn locks_since_savepoint_are_returned() {
        let mut b = WriteBuffer::new();
        assert!(b.record_lock(0, b"a", LockMode::Shared));
        b.set_savepoint();
        assert!(!b.record_lock(0, b"a", LockMode::Exclusive));
        assert!(b.record_lock(0, b"b", LockMode::Exclusive));
        b.set_savepoint();
        assert!(b.record_lock(1, b"c", LockMode::Shared));
        assert!(b.pop_savepoint().is_ok());
        let released = b.rollback_to_savepoint().unwrap();
        assert_eq!(released, vec![LockKey::new(0, b"b"), LockKey::new(1, b"c")]);
        // The upgrade made after the savepoint stays.
        assert_eq!(b.lock_mode(0, b"a"), Some(LockMode::Exclusive));
        assert_eq!(b.lock_mode(0, b"b"), None);
        assert_eq!(b.num_locked_keys(), 1);
        assert_eq!(b.approximate_bytes(), 1 + ENTRY_OVERHEAD_BYTES);
        let all: Vec<_> = b.locked_keys().collect();
        assert_eq!(all, vec![(0, &b"a"[..], LockMode::Exclusive)]);
    }

    #[test]
    fn forget_lock_since_keeps_older_and_written_keys() {
        let mut b = WriteBuffer::new();
        assert!(b.record_lock(0, b"old", LockMode::Exclusive));
        b.set_savepoint();
        assert!(b.record_lock(0, b"new", LockMode::Exclusive));
        assert!(b.record_lock(0, b"w", LockMode::Exclusive));
        b.put(0, b"w", b"v");
        // A lock held before the savepoint stays, also when re-recorded after it.
        assert!(!b.record_lock(0, b"old", LockMode::Exclusive));
        assert!(!b.forget_lock_since(0, b"old", 1));
        // A written key stays.
        assert!(!b.forget_lock_since(0, b"w", 1));
        // Not locked at all.
        assert!(!b.forget_lock_since(0, b"none", 1));
        // A savepoint depth deeper than the stack lists nothing.
        assert!(!b.forget_lock_since(0, b"new", 2));
        assert!(b.forget_lock_since(0, b"new", 1));
        assert_eq!(b.lock_mode(0, b"new"), None);
        assert!(!b.forget_lock_since(0, b"new", 1));
        // A forgotten lock is no longer handed back by a rollback.
        let released = b.rollback_to_savepoint().unwrap();
        assert_eq!(released, vec![LockKey::new(0, b"w")]);
        // Depth 0: any lock of the transaction, also one recorded with no savepoint open.
        assert!(b.forget_lock_since(0, b"old", 0));
        assert_eq!(b.num_locked_keys(), 0);
        assert_eq!(b.approximate_bytes(), 0);
    }

    #[test]
    fn base_savepoints_keep_no_records_and_roll_back_to_empty() {
        let mut b = WriteBuffer::new();
        b.set_savepoint();
        assert!(b.put(0, b"a", b"1"));
        assert!(!b.put(0, b"a", b"2"));
        assert!(b.record_lock(0, b"a", LockMode::Exclusive));
        assert!(b.record_lock(1, b"r", LockMode::Shared));
        // Entries and lock set only: no undo record, no savepoint lock list.
        assert_eq!(
            b.approximate_bytes(),
            (1 + 1 + ENTRY_OVERHEAD_BYTES) + 2 * (1 + ENTRY_OVERHEAD_BYTES)
        );
        // A savepoint inside it, set on a non-empty buffer, is an ordinary one.
        b.set_savepoint();
        b.put(0, b"a", b"3");
        b.put(0, b"b", b"3");
        assert!(b.record_lock(0, b"b", LockMode::Exclusive));
        let released = b.rollback_to_savepoint().unwrap();
        assert_eq!(released, vec![LockKey::new(0, b"b")]);
        assert_eq!(b.get(0, b"a"), Some(&BufferedOp::Put(b"2".to_vec())));
        // Released into the base savepoint, its records go.
        b.set_savepoint();
        b.put(0, b"c", b"4");
        assert!(b.pop_savepoint().is_ok());
        assert_eq!(
            b.approximate_bytes(),
            2 * (1 + 1 + ENTRY_OVERHEAD_BYTES) + 2 * (1 + ENTRY_OVERHEAD_BYTES)
        );
        let mut released = b.rollback_to_savepoint().unwrap();
        released.sort();
        assert_eq!(released, vec![LockKey::new(0, b"a"), LockKey::new(1, b"r")]);
        assert!(b.is_empty());
        assert_eq!(b.num_locked_keys(), 0);
        assert_eq!(b.approximate_bytes(), 0);
        assert_eq!(b.savepoint_depth(), 0);
    }

    #[test]
    fn base_savepoints_nest_and_forget_locks() {
        let mut b = WriteBuffer::new();
        b.set_savepoint();
        b.set_savepoint();
        assert!(b.record_lock(0, b"k", LockMode::Exclusive));
        // Recorded after both base savepoints: depth 1 and 2 may forget it.
        assert!(b.forget_lock_since(0, b"k", 1));
        assert!(b.record_lock(0, b"k", LockMode::Exclusive));
        b.put(0, b"w", b"v");
        assert_eq!(
            b.rollback_to_savepoint().unwrap(),
            vec![LockKey::new(0, b"k")]
        );
        // The outer base savepoint is still open.
        assert_eq!(b.savepoint_depth(), 1);
        assert!(b.is_empty());
        b.put(0, b"x", b"v");
        assert!(b.rollback_to_savepoint().is_ok());
        assert!(b.is_empty());

        // A savepoint set on an empty buffer inside an ordinary savepoint is not a base one:
        // the ordinary one still undoes what was written under it.
        b.clear();
        assert!(b.record_lock(0, b"l", LockMode::Shared));
        b.set_savepoint();
        assert!(b.forget_lock_since(0, b"l", 0));
        b.set_savepoint();
        b.put(0, b"n", b"1");
        assert!(b.pop_savepoint().is_ok());
        assert!(b.rollback_to_savepoint().is_ok());
        assert_eq!(b.get(0, b"n"), None);
        assert_eq!(b.approximate_bytes(), 0);
    }

    #[test]
    fn forget_lock_since_finds_locks_of_released_inner_savepoints() {
        let mut b = WriteBuffer::new();
        b.set_savepoint();
        b.set_savepoint();
        assert!(b.record_lock(3, b"k", LockMode::Shared));
        assert!(b.pop_savepoint().is_ok());
        assert!(b.forget_lock_since(3, b"k", 1));
        assert_eq!(b.num_locked_keys(), 0);
        assert_eq!(b.approximate_bytes(), 0);
        assert_eq!(b.rollback_to_savepoint().unwrap(), Vec::<LockKey>::new());
    }
}
