//! [`TxnIterator`]: a transaction's own writes merged over the database at its read point.
//!
//! Two ordered sources: a [`DbIterator`] (live keys of the database at the read point) and the
//! transaction's write buffer (puts and deletes). At equal keys the buffer wins; a buffered
//! delete hides the key. The buffer is consulted afresh at every step (by seeking after the
//! current key), so writes the transaction makes while iterating are seen, and the iterator
//! never holds the transaction's lock between calls.
//!
//! A *locking* iterator ([`crate::Transaction::iter_locking`]) reads at the newest sequence
//! number instead of the read point, and checks every step before it settles on a key (see
//! [`TxnIterator::lock_step`]): other transactions' uncommitted inserts in the walked range
//! (waited for), the gap lock over it (held, with the inserts recorded in its reservation
//! waited for), the row lock of the key it stops on (a wait or a newer commit means reading
//! again at the newest sequence number).
//!
//! A *skip-locked* iterator ([`crate::Transaction::iter_skip_locked`]) makes the same checks
//! without ever waiting: each lock it would wait for is tried instead, and a key whose lock
//! another transaction holds is stepped over (an uncommitted insert of another writer, an
//! insert recorded in the reservation, the candidate itself). Gap locks are taken as by a
//! waiting locking iterator: they never make the scan wait.
//!
//! A *stop key* ([`TxnIterator::set_stop`]) ends forward steps before a key, like an upper
//! bound the caller may move between steps (MariaDB's end of range). A locking iterator
//! does not lock the first key past it under read committed; with gap locks (repeatable
//! read, serializable) it still locks that key and the gap before it, InnoDB's next-key lock
//! on the first record past a range, and then ends there.

use std::collections::HashSet;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use riptide_common::{Result, SeqNo};
use riptide_txn::{GapLockId, LockMode};

use crate::cf::ColumnFamily;
use crate::iterator::DbIterator;
use crate::read_point::ReadPoint;
use crate::transaction::{Pending, TxnShared};

/// An owned range bound.
type OwnedBound = Bound<Vec<u8>>;

/// What a locking iterator holds and remembers.
pub(crate) struct ScanLock {
    mode: LockMode,
    /// The reserved, then partly held gap lock (none under read committed).
    gap: Option<GapLockId>,
    /// Other transactions that had written when the range was reserved and may hold
    /// uncommitted inserts in it; dropped once they end.
    writers: Vec<Arc<TxnShared>>,
    /// The range walked (and gap-locked) so far.
    hull: Option<(OwnedBound, OwnedBound)>,
    /// Keys of other transactions' inserts this scan already waited for (and locked), or,
    /// skipping locked rows, found locked and skipped.
    waited: HashSet<Vec<u8>>,
    /// `SKIP LOCKED`: try each lock instead of waiting for it, and step over locked keys.
    skip_locked: bool,
}

impl ScanLock {
    pub(crate) fn new(
        mode: LockMode,
        gap: Option<GapLockId>,
        writers: Vec<Arc<TxnShared>>,
        skip_locked: bool,
    ) -> ScanLock {
        ScanLock {
            mode,
            gap,
            writers,
            hull: None,
            waited: HashSet::new(),
            skip_locked,
        }
    }
}

/// What a step's check decided.
enum Verdict {
    /// The iterator may stay where it is.
    Done,
    /// Something may have changed: read again at the newest sequence number.
    Reread,
    /// Skipping locked rows: another transaction holds the candidate's lock; step over it.
    Skip,
}

/// Whether lower bound `a` is at or below lower bound `b`.
fn lower_le(a: &OwnedBound, b: &OwnedBound) -> bool {
    match (a, b) {
        (Bound::Unbounded, _) => true,
        (_, Bound::Unbounded) => false,
        (Bound::Included(x), Bound::Included(y))
        | (Bound::Excluded(x), Bound::Excluded(y))
        | (Bound::Included(x), Bound::Excluded(y)) => x <= y,
        (Bound::Excluded(x), Bound::Included(y)) => x < y,
    }
}

/// Whether upper bound `a` is at or below upper bound `b`.
fn upper_le(a: &OwnedBound, b: &OwnedBound) -> bool {
    match (a, b) {
        (_, Bound::Unbounded) => true,
        (Bound::Unbounded, _) => false,
        (Bound::Included(x), Bound::Included(y))
        | (Bound::Excluded(x), Bound::Excluded(y))
        | (Bound::Excluded(x), Bound::Included(y)) => x <= y,
        (Bound::Included(x), Bound::Excluded(y)) => x < y,
    }
}

/// The lower bound of the keys above upper bound `b` (`None`: there are none).
fn above(b: &OwnedBound) -> Option<OwnedBound> {
    match b {
        Bound::Included(k) => Some(Bound::Excluded(k.clone())),
        Bound::Excluded(k) => Some(Bound::Included(k.clone())),
        Bound::Unbounded => None,
    }
}

/// The upper bound of the keys below lower bound `b` (`None`: there are none).
fn below(b: &OwnedBound) -> Option<OwnedBound> {
    match b {
        Bound::Included(k) => Some(Bound::Excluded(k.clone())),
        Bound::Excluded(k) => Some(Bound::Included(k.clone())),
        Bound::Unbounded => None,
    }
}

/// Which way the iterator last moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// A cursor over one column family as a transaction sees it: its own writes over the
/// database at its read point, in key order, in both directions, within optional bounds.
/// Made by [`crate::Transaction::iter`].
pub struct TxnIterator {
    txn: Arc<TxnShared>,
    cf: ColumnFamily,
    db: DbIterator,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    valid: bool,
    key: Vec<u8>,
    value: Vec<u8>,
    direction: Direction,
    /// The current key comes from the transaction's own writes.
    from_buffer: bool,
    /// The sequence number `db` reads at.
    seqno: SeqNo,
    /// Present for a locking iterator.
    lock: Option<ScanLock>,
    /// Forward steps end before this key ([`TxnIterator::set_stop`]).
    stop: Option<Vec<u8>>,
}

impl std::fmt::Debug for TxnIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnIterator")
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

/// A buffered entry, copied out of the buffer.
type Buffered = Option<(Vec<u8>, Option<Vec<u8>>)>;

impl TxnIterator {
    /// The database iterator under the transaction's writes (tests).
    #[cfg(test)]
    pub(crate) fn db_iterator(&self) -> &DbIterator {
        &self.db
    }

    pub(crate) fn new(
        txn: Arc<TxnShared>,
        cf: ColumnFamily,
        point: ReadPoint,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Result<TxnIterator> {
        let db = crate::db::iter_at(&txn.db, &cf, point, lower.clone(), upper.clone())?;
        let seqno = db.snapshot_seqno();
        Ok(TxnIterator {
            txn,
            cf,
            db,
            lower,
            upper,
            valid: false,
            key: Vec::new(),
            value: Vec::new(),
            direction: Direction::Forward,
            from_buffer: false,
            seqno,
            lock: None,
            stop: None,
        })
    }

    /// A locking iterator reading at `point` (the newest when it was made).
    pub(crate) fn new_locking(
        txn: Arc<TxnShared>,
        cf: ColumnFamily,
        point: ReadPoint,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
        lock: ScanLock,
    ) -> Result<TxnIterator> {
        let gap = lock.gap;
        let made = TxnIterator::new(Arc::clone(&txn), cf, point, lower, upper);
        match made {
            Ok(mut it) => {
                it.lock = Some(lock);
                Ok(it)
            }
            Err(e) => {
                if let Some(gap) = gap {
                    txn.db.locks.finish_gap(gap);
                }
                Err(e)
            }
        }
    }

    /// Whether this is a locking iterator ([`crate::Transaction::iter_locking`]).
    pub fn is_locking(&self) -> bool {
        self.lock.is_some()
    }

    /// Sets (or with `None` clears) the stop key: from now on, a forward positioning
    /// ([`TxnIterator::seek_to_first`], [`TxnIterator::seek`], [`TxnIterator::next`]) that
    /// would settle on a key `>= stop` leaves the iterator not valid instead, as at the end
    /// of its bounds (seek again to go on). A locking iterator does not lock that key, unless
    /// it takes gap locks (repeatable read, serializable): then it locks it and the gap up to
    /// it as before (InnoDB's next-key lock past a range) and only then ends. Backward steps
    /// ignore the stop key.
    pub fn set_stop(&mut self, stop: Option<&[u8]>) {
        self.stop = stop.map(<[u8]>::to_vec);
    }

    /// Tells the database iterator underneath where the forward scans after the next
    /// positioning calls end, so tables read the blocks up to there at once (see
    /// [`DbIterator::set_readahead_limit`]). A hint about cost only, unlike
    /// [`TxnIterator::set_stop`].
    pub fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        self.db.set_readahead_limit(limit);
    }

    /// Whether `key` is at or past the stop key.
    fn past_stop(&self, key: &[u8]) -> bool {
        self.stop.as_deref().is_some_and(|s| key >= s)
    }

    /// After a forward positioning: ends there if the key is at or past the stop key.
    fn end_at_stop(&mut self) {
        if self.valid && self.past_stop(&self.key) {
            self.valid = false;
        }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. Empty when not valid.
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.key } else { &[] }
    }

    /// The current value. Empty when not valid.
    pub fn value(&self) -> &[u8] {
        if self.valid { &self.value } else { &[] }
    }

    fn in_bounds(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }

    /// The first buffered entry at or after (`inclusive`) / after `key`, within bounds (a
    /// `key` below the lower bound starts at the lower bound).
    fn buffer_forward(&self, key: Option<&[u8]>, inclusive: bool) -> Buffered {
        let st = self.txn.state.lock();
        let cf = self.cf.id();
        let start = match (key, self.lower.as_deref()) {
            (None, None) => None,
            (None, Some(l)) => Some((l, true)),
            (Some(k), Some(l)) if k < l => Some((l, true)),
            (Some(k), _) => Some((k, inclusive)),
        };
        let found = match start {
            None => st.buffer.first(cf),
            Some((k, true)) => st.buffer.seek_ge(cf, k),
            Some((k, false)) => st.buffer.next_after(cf, k),
        };
        found
            .filter(|(k, _)| self.in_bounds(k))
            .map(|(k, op)| (k.to_vec(), op.value().map(<[u8]>::to_vec)))
    }

    /// The last buffered entry at or before (`inclusive`) / before `key`, within bounds (a
    /// `key` at or above the upper bound starts just below the upper bound).
    fn buffer_backward(&self, key: Option<&[u8]>, inclusive: bool) -> Buffered {
        let st = self.txn.state.lock();
        let cf = self.cf.id();
        let start = match (key, self.upper.as_deref()) {
            (None, None) => None,
            (None, Some(u)) => Some((u, false)),
            (Some(k), Some(u)) if k >= u => Some((u, false)),
            (Some(k), _) => Some((k, inclusive)),
        };
        let found = match start {
            None => st.buffer.last(cf),
            Some((k, true)) => st.buffer.seek_le(cf, k),
            Some((k, false)) => st.buffer.prev_before(cf, k),
        };
        found
            .filter(|(k, _)| self.in_bounds(k))
            .map(|(k, op)| (k.to_vec(), op.value().map(<[u8]>::to_vec)))
    }

    /// From the database cursor's position and the buffer at or after `from`, settles on the
    /// first visible key going forward.
    fn settle_forward(&mut self, mut from: Option<Vec<u8>>, mut inclusive: bool) -> Result<()> {
        self.direction = Direction::Forward;
        loop {
            let buffered = self.buffer_forward(from.as_deref(), inclusive);
            let db_key = self.db.valid().then(|| self.db.key().to_vec());
            let take_buffer = match (&buffered, &db_key) {
                (None, None) => {
                    self.valid = false;
                    return Ok(());
                }
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((bk, _)), Some(dk)) => bk <= dk,
            };
            if !take_buffer {
                self.key = db_key.unwrap_or_default();
                self.value = self.db.value().to_vec();
                self.valid = true;
                self.from_buffer = false;
                return Ok(());
            }
            let Some((bk, value)) = buffered else {
                continue;
            };
            if db_key.as_deref() == Some(bk.as_slice()) {
                self.db.next()?;
            }
            match value {
                Some(v) => {
                    self.key = bk;
                    self.value = v;
                    self.valid = true;
                    self.from_buffer = true;
                    return Ok(());
                }
                None => {
                    // Deleted by this transaction: go on after it.
                    from = Some(bk);
                    inclusive = false;
                }
            }
        }
    }

    /// Like [`Self::settle_forward`], going backward from at or before `from`.
    fn settle_backward(&mut self, mut from: Option<Vec<u8>>, mut inclusive: bool) -> Result<()> {
        self.direction = Direction::Backward;
        loop {
            let buffered = self.buffer_backward(from.as_deref(), inclusive);
            let db_key = self.db.valid().then(|| self.db.key().to_vec());
            let take_buffer = match (&buffered, &db_key) {
                (None, None) => {
                    self.valid = false;
                    return Ok(());
                }
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((bk, _)), Some(dk)) => bk >= dk,
            };
            if !take_buffer {
                self.key = db_key.unwrap_or_default();
                self.value = self.db.value().to_vec();
                self.valid = true;
                self.from_buffer = false;
                return Ok(());
            }
            let Some((bk, value)) = buffered else {
                continue;
            };
            if db_key.as_deref() == Some(bk.as_slice()) {
                self.db.prev()?;
            }
            match value {
                Some(v) => {
                    self.key = bk;
                    self.value = v;
                    self.valid = true;
                    self.from_buffer = true;
                    return Ok(());
                }
                None => {
                    from = Some(bk);
                    inclusive = false;
                }
            }
        }
    }

    /// Positions on the first visible key.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.check_locking_seek()?;
        self.db.seek_to_first()?;
        let from = self.lower.clone();
        self.settle_forward(from.clone(), true)?;
        self.lock_step(from, true, true)?;
        self.end_at_stop();
        Ok(())
    }

    /// Positions on the last visible key.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.check_locking_seek()?;
        self.db.seek_to_last()?;
        self.settle_backward(None, true)?;
        self.lock_step(None, true, false)
    }

    /// Positions on the first visible key `>= target`.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.check_locking_seek()?;
        self.db.seek(target)?;
        let from = match self.lower.as_deref() {
            Some(l) if l > target => l.to_vec(),
            _ => target.to_vec(),
        };
        self.settle_forward(Some(from.clone()), true)?;
        self.lock_step(Some(from), true, true)?;
        self.end_at_stop();
        Ok(())
    }

    /// Positions on the last visible key `<= target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.check_locking_seek()?;
        self.db.seek_for_prev(target)?;
        let from = match self.upper.as_deref() {
            Some(u) if target >= u => None,
            _ => Some(target.to_vec()),
        };
        self.settle_backward(Some(target.to_vec()), true)?;
        self.lock_step(from, true, false)
    }

    /// Moves to the next visible key.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        self.check_locking()?;
        let current = std::mem::take(&mut self.key);
        if self.direction == Direction::Backward {
            self.db.seek(&current)?;
        }
        while self.db.valid() && self.db.key() <= &current[..] {
            self.db.next()?;
        }
        self.settle_forward(Some(current.clone()), false)?;
        self.lock_step(Some(current), false, true)?;
        self.end_at_stop();
        Ok(())
    }

    /// Moves to the previous visible key.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        self.check_locking()?;
        let current = std::mem::take(&mut self.key);
        if self.direction == Direction::Forward {
            self.db.seek_for_prev(&current)?;
        }
        while self.db.valid() && self.db.key() >= &current[..] {
            self.db.prev()?;
        }
        self.settle_backward(Some(current.clone()), false)?;
        self.lock_step(Some(current), false, false)
    }

    /// A locking iterator only moves while its transaction is active (its locks would
    /// outlive the transaction otherwise).
    fn check_locking(&self) -> Result<()> {
        if self.lock.is_some() {
            self.txn.check_active()?;
        }
        Ok(())
    }

    /// Before a seek of a locking iterator: reads at the newest sequence number from now on
    /// if anything was committed since it last read (a plain iterator keeps its read point).
    fn check_locking_seek(&mut self) -> Result<()> {
        self.check_locking()?;
        if self.lock.is_some() {
            let newest = self.txn.db.last_seqno.load(Ordering::Acquire);
            if newest != self.seqno {
                self.reopen()?;
            }
        }
        Ok(())
    }

    /// Replaces the database cursor by one reading at the newest sequence number (not
    /// positioned).
    fn reopen(&mut self) -> Result<()> {
        let mut db = crate::db::iter_at(
            &self.txn.db,
            &self.cf,
            ReadPoint::Newest,
            self.lower.clone(),
            self.upper.clone(),
        )?;
        db.set_readahead_limit(self.db.readahead_limit());
        self.db = db;
        self.seqno = self.db.snapshot_seqno();
        Ok(())
    }

    /// For a locking iterator, after a positioning from `from` (`inclusive`, going
    /// `forward`; `None`: from the end of the bounds) settled on a candidate: checks the
    /// step and reads again at the newest sequence number until nothing stands in the way.
    fn lock_step(
        &mut self,
        mut from: Option<Vec<u8>>,
        mut inclusive: bool,
        forward: bool,
    ) -> Result<()> {
        if self.lock.is_none() {
            return Ok(());
        }
        loop {
            match self.check_step(from.as_deref(), inclusive, forward)? {
                Verdict::Done => return Ok(()),
                Verdict::Skip => {
                    // Go on from after the skipped key: its range stays walked (gap-locked).
                    let skipped = std::mem::take(&mut self.key);
                    if forward && self.past_stop(&skipped) {
                        // Past the stop key: the positioning ends there (`end_at_stop`).
                        self.key = skipped;
                        return Ok(());
                    }
                    if forward {
                        while self.db.valid() && self.db.key() <= &skipped[..] {
                            self.db.next()?;
                        }
                        self.settle_forward(Some(skipped.clone()), false)?;
                    } else {
                        while self.db.valid() && self.db.key() >= &skipped[..] {
                            self.db.prev()?;
                        }
                        self.settle_backward(Some(skipped.clone()), false)?;
                    }
                    from = Some(skipped);
                    inclusive = false;
                }
                Verdict::Reread => {
                    self.reopen()?;
                    if forward {
                        match from.as_deref() {
                            None => self.db.seek_to_first()?,
                            Some(f) => {
                                self.db.seek(f)?;
                                while !inclusive && self.db.valid() && self.db.key() <= f {
                                    self.db.next()?;
                                }
                            }
                        }
                        self.settle_forward(from.clone(), inclusive)?;
                    } else {
                        match from.as_deref() {
                            None => self.db.seek_to_last()?,
                            Some(f) => {
                                self.db.seek_for_prev(f)?;
                                while !inclusive && self.db.valid() && self.db.key() >= f {
                                    self.db.prev()?;
                                }
                            }
                        }
                        self.settle_backward(from.clone(), inclusive)?;
                    }
                }
            }
        }
    }

    /// One check of a locking step (see the module documentation).
    fn check_step(
        &mut self,
        from: Option<&[u8]>,
        inclusive: bool,
        forward: bool,
    ) -> Result<Verdict> {
        let cand = self.valid.then(|| self.key.clone());
        let lower_end: OwnedBound = self.lower.clone().map_or(Bound::Unbounded, Bound::Included);
        let upper_end: OwnedBound = self.upper.clone().map_or(Bound::Unbounded, Bound::Excluded);
        let from_bound = |f: &[u8]| {
            if inclusive {
                Bound::Included(f.to_vec())
            } else {
                Bound::Excluded(f.to_vec())
            }
        };
        // The range this step walked, the candidate included.
        let (start, end) = if forward {
            (
                from.map_or(lower_end, from_bound),
                cand.clone().map_or(upper_end, Bound::Included),
            )
        } else {
            (
                cand.clone().map_or(lower_end, Bound::Included),
                from.map_or(upper_end, from_bound),
            )
        };
        // Past the stop key without gap locks: the step ends there, nothing to lock.
        let past_stop = forward && cand.as_deref().is_some_and(|k| self.past_stop(k));
        let Some(lock) = self.lock.as_mut() else {
            return Ok(Verdict::Done);
        };
        if past_stop && lock.gap.is_none() {
            return Ok(Verdict::Done);
        }
        let mode = lock.mode;
        let skip_locked = lock.skip_locked;
        if let Some(gap) = lock.gap {
            // 1. Uncommitted inserts of earlier writers, between `from` and the candidate,
            //    outside what this scan already holds (an insert there waits for this scan,
            //    which must not wait for it in turn).
            let mut pstart = start.clone();
            let mut pend = end.clone();
            if let Some(k) = &cand {
                if forward {
                    pend = Bound::Excluded(k.clone());
                } else {
                    pstart = Bound::Excluded(k.clone());
                }
            }
            let mut open = true;
            if let Some((hs, he)) = &lock.hull {
                if forward && lower_le(hs, &pstart) {
                    match above(he) {
                        Some(b) if lower_le(&pstart, &b) => pstart = b,
                        Some(_) => {}
                        None => open = false,
                    }
                } else if !forward && upper_le(&pend, he) {
                    match below(hs) {
                        Some(b) if upper_le(&b, &pend) => pend = b,
                        Some(_) => {}
                        None => open = false,
                    }
                }
            }
            if open && !lock.writers.is_empty() {
                let cf = self.cf.id();
                let mut nearest: Option<Vec<u8>> = None;
                let mut reread = false;
                let waited = &lock.waited;
                let skip = |k: &[u8]| waited.contains(k);
                lock.writers.retain(|w| {
                    match w.pending(
                        cf,
                        pstart.as_ref().map(Vec::as_slice),
                        pend.as_ref().map(Vec::as_slice),
                        forward,
                        &skip,
                    ) {
                        Pending::Committed => {
                            reread = true;
                            false
                        }
                        Pending::RolledBack => false,
                        Pending::Active(None) => true,
                        Pending::Active(Some(k)) => {
                            let closer = nearest
                                .as_ref()
                                .is_none_or(|n| if forward { k < *n } else { k > *n });
                            if closer {
                                nearest = Some(k);
                            }
                            true
                        }
                    }
                });
                if reread {
                    return Ok(Verdict::Reread);
                }
                if let Some(k) = nearest {
                    // An insert into a gap this transaction already holds (from an earlier
                    // scan: gap locks last until the end of the transaction) waits for this
                    // transaction: it is not in the database yet and cannot be before this
                    // one ends, so the scan goes on past it. Waiting for it would be a
                    // deadlock of this scan's own making (a SERIALIZABLE transaction reading
                    // a table twice while another session's insert waits).
                    if self.txn.db.locks.gap_holders(cf, &k).contains(&self.txn.id) {
                        if let Some(lock) = self.lock.as_mut() {
                            lock.waited.insert(k);
                        }
                        return Ok(Verdict::Reread);
                    }
                    // Skipping locked rows, an insert still locked by its writer is skipped
                    // (it is not in the database, so reading again just goes on past it).
                    self.lock_or_skip_row(&k, mode, skip_locked)?;
                    if let Some(lock) = self.lock.as_mut() {
                        lock.waited.insert(k);
                    }
                    return Ok(Verdict::Reread);
                }
            }
            // 2. Hold the walked range; inserts recorded in it meanwhile are waited for.
            let Some(lock) = self.lock.as_mut() else {
                return Ok(Verdict::Done);
            };
            let intruders = self.txn.db.locks.extend_gap(
                gap,
                start.as_ref().map(Vec::as_slice),
                end.as_ref().map(Vec::as_slice),
            );
            lock.hull = Some(match lock.hull.take() {
                None => (start, end),
                Some((hs, he)) => (
                    if lower_le(&hs, &start) { hs } else { start },
                    if upper_le(&he, &end) { end } else { he },
                ),
            });
            let intruders: Vec<Vec<u8>> = intruders
                .into_iter()
                .map(|(k, _)| k)
                .filter(|k| Some(k) != cand.as_ref() && !lock.waited.contains(k))
                .collect();
            if !intruders.is_empty() {
                // (The gap lock forgot them: after a failed wait the iterator is not to be
                // used any further, as after any failed step.)
                for k in intruders {
                    self.lock_or_skip_row(&k, mode, skip_locked)?;
                    if let Some(lock) = self.lock.as_mut() {
                        lock.waited.insert(k);
                    }
                }
                return Ok(Verdict::Reread);
            }
        }
        // 3. The row lock of the candidate (this transaction's own writes are locked already).
        if let Some(k) = cand
            && !self.from_buffer
        {
            let waited = if skip_locked {
                if !self.try_lock_row(&k, mode)? {
                    return Ok(Verdict::Skip);
                }
                false
            } else {
                self.lock_row(&k, mode)?
            };
            let newer = self.txn.db.last_seqno.load(Ordering::Acquire) != self.seqno
                && self.cf.data.view().newer_version(&k, self.seqno)?.is_some();
            if waited || newer {
                return Ok(Verdict::Reread);
            }
        }
        Ok(Verdict::Done)
    }

    /// Locks `key` in `mode` for the transaction; returns whether it waited.
    fn lock_row(&self, key: &[u8], mode: LockMode) -> Result<bool> {
        let mut st = self.txn.state.lock();
        self.txn.protect(&mut st, &self.cf, key, mode, false)
    }

    /// Locks `key` in `mode` for the transaction if that is possible without waiting;
    /// returns whether it holds the lock now.
    fn try_lock_row(&self, key: &[u8], mode: LockMode) -> Result<bool> {
        let mut st = self.txn.state.lock();
        Ok(self
            .txn
            .protect_no_wait(&mut st, &self.cf, key, mode)?
            .is_some())
    }

    /// Locks `key` (another transaction's insert the scan met): waiting for it, or, when
    /// skipping locked rows, only if that is possible without waiting.
    fn lock_or_skip_row(&self, key: &[u8], mode: LockMode, skip_locked: bool) -> Result<()> {
        if skip_locked {
            self.try_lock_row(key, mode)?;
        } else {
            self.lock_row(key, mode)?;
        }
        Ok(())
    }
}

impl Drop for TxnIterator {
    fn drop(&mut self) {
        // Only what was walked stays locked.
        if let Some(gap) = self.lock.as_ref().and_then(|l| l.gap) {
            self.txn.db.locks.finish_gap(gap);
        }
    }
}
